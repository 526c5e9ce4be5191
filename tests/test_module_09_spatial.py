"""Instructor tests for module 09 beyond the hidden suite: the given ``_input_grad_by_shifts``
(the stride-1 convolution's input gradient without ``col2im``) gives the same numbers as
``col2im`` of ``d cols`` for every kernel, dilation and padding, and the convolution's backward
takes it only where it applies."""

from __future__ import annotations

import numpy as np
import pytest

from tinytorch_ref import spatial as S
from tinytorch_ref.tensor import Context


def _by_col2im(grad, weight, x_pad_shape, dilation):
    n, o, ho, wo = grad.shape
    kh, kw = weight.shape[2:]
    dcols = np.matmul(weight.reshape(1, o, -1).transpose(0, 2, 1), grad.reshape(n, 1, o, -1))
    return S.col2im(dcols.reshape(n, -1, ho * wo), x_pad_shape, (kh, kw), (1, 1), dilation)


@pytest.mark.parametrize("x_shape, w_shape, padding, dilation", [
    ((2, 3, 7, 6), (4, 3, 3, 3), (1, 1), (1, 1)),
    ((1, 2, 9, 8), (3, 2, 2, 3), (0, 2), (1, 1)),
    ((2, 2, 7, 6), (3, 2, 3, 2), (2, 1), (2, 3)),
    ((3, 1, 5, 5), (2, 1, 5, 5), (2, 2), (1, 1)),
    ((1, 4, 4, 4), (5, 4, 1, 1), (0, 0), (1, 1)),
])
def test_the_shifted_planes_give_col2ims_numbers(x_shape, w_shape, padding, dilation):
    rng = np.random.default_rng(0)
    n, c, h, w = x_shape
    kh, kw = w_shape[2:]
    x_pad_shape = (n, c, h + 2 * padding[0], w + 2 * padding[1])
    ho = x_pad_shape[2] - dilation[0] * (kh - 1)
    wo = x_pad_shape[3] - dilation[1] * (kw - 1)
    grad = rng.standard_normal((n, w_shape[0], ho, wo)).astype(np.float32)
    weight = rng.standard_normal(w_shape).astype(np.float32)
    got = S._input_grad_by_shifts(grad, weight, x_pad_shape, dilation)
    assert got.shape == x_pad_shape and got.dtype == np.float32
    np.testing.assert_allclose(got, _by_col2im(grad, weight, x_pad_shape, dilation),
                               rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize("stride, groups, shifted", [(1, 1, True), (2, 1, False), (1, 2, False)])
def test_the_backward_shifts_only_at_stride_one_with_one_group(monkeypatch, stride, groups,
                                                               shifted):
    calls = []
    real = S._input_grad_by_shifts
    monkeypatch.setattr(S, "_input_grad_by_shifts", lambda *a: calls.append(1) or real(*a))
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 4, 6, 6)).astype(np.float32)
    weight = rng.standard_normal((4, 4 // groups, 3, 3)).astype(np.float32)
    ctx = Context()
    out = S._Conv2dFn.forward(ctx, x, weight, None, (stride, stride), (1, 1), (1, 1), groups)
    dx, _ = S._Conv2dFn.backward(ctx, np.ones_like(out))
    assert dx.shape == x.shape
    assert bool(calls) == shifted


def test_an_infinite_weight_takes_col2im_and_keeps_its_numbers():
    """``0 · inf`` is NaN: the shifted planes would add NaN from their zero corners where
    ``col2im`` adds nothing, so a non-finite weight takes ``col2im`` (here a valid convolution,
    which ``conv2d`` sends to ``_Conv2dFn`` whatever the weight)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 1, 5, 5)).astype(np.float32)
    weight = rng.standard_normal((1, 1, 3, 3)).astype(np.float32)
    weight[0, 0, 0, 1] = np.inf
    ctx = Context()
    out = S._Conv2dFn.forward(ctx, x, weight, None, (1, 1), (0, 0), (1, 1), 1)
    grad = np.ones_like(out)
    dx, _ = S._Conv2dFn.backward(ctx, grad)
    expected = _by_col2im(grad, weight, x.shape, (1, 1))
    np.testing.assert_array_equal(dx, expected)
    assert np.isfinite(dx[0, 0, :, 0]).all()  # column 0 never meets tap (0, 1)
    shifted = S._input_grad_by_shifts(grad, weight, x.shape, (1, 1))
    assert np.isnan(shifted[0, 0, 1:, 0]).all()  # what the shifted planes would have given
