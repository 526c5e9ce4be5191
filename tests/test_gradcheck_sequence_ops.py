"""Central-difference gradient checks in float64 for the sequence tier's new operations.

The catalogue is ``SEQUENCE_OPS`` in ``tests/op_catalogue_sequence.py`` (modules 11-13, shared
with the parity suites). Messages name the operation, the input and the element that disagree.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from op_catalogue import Op, make_inputs
from op_catalogue_sequence import IDS_REPEAT, SEQUENCE_OPS

from tinytorch_ref import Tensor
from tinytorch_ref.autograd import gradcheck
from tinytorch_ref.nn import functional as F


@pytest.fixture
def rng(request):
    return np.random.default_rng(zlib.crc32(request.node.name.encode()))


@pytest.mark.parametrize("op", SEQUENCE_OPS, ids=lambda op: op.name)
def test_gradient_matches_central_differences(op: Op, rng):
    inputs = make_inputs(op, rng)
    try:
        assert gradcheck(op.ours, inputs, eps=1e-6, atol=1e-6, rtol=1e-5)
    except AssertionError as err:
        raise AssertionError(f"{op.name}: {err}") from None


@pytest.mark.parametrize("op", SEQUENCE_OPS, ids=lambda op: op.name)
def test_float64_stays_float64_and_float32_stays_float32(op: Op, rng):
    for dtype in (np.float64, np.float32):
        leaves = [Tensor(a, requires_grad=True) for a in make_inputs(op, rng, dtype)]
        out = op.ours(*leaves)
        assert out.dtype == dtype, f"{op.name}: {np.dtype(dtype)} inputs give {out.dtype}"
        out.sum().backward()
        for i, t in enumerate(leaves):
            assert t.grad is not None, f"{op.name}: input {i} got no gradient"
            assert t.grad.shape == t.shape, f"{op.name}: input {i} grad shape {t.grad.shape}"
            assert t.grad.dtype == dtype, f"{op.name}: input {i} grad dtype {t.grad.dtype}"


def test_padding_row_gradient_is_zero_and_other_rows_match_finite_differences(rng):
    """With the padding row in use, PyTorch's gradient is deliberately not the derivative there:
    that row gets 0 while every other row gets the true (central-difference) gradient."""
    w = rng.standard_normal((5, 3))
    r = rng.standard_normal((2, 3, 3))

    def loss(table: np.ndarray, *, padding_idx: int | None) -> float:
        out = F.embedding(Tensor(IDS_REPEAT), Tensor(table), padding_idx=padding_idx)
        return float((out.numpy() * r).sum())

    t = Tensor(w.copy(), requires_grad=True)
    (F.embedding(Tensor(IDS_REPEAT), t, padding_idx=2) * Tensor(r)).sum().backward()
    eps = 1e-6
    numeric = np.zeros_like(w)
    for idx in np.ndindex(w.shape):
        plus, minus = w.copy(), w.copy()
        plus[idx] += eps
        minus[idx] -= eps
        numeric[idx] = (loss(plus, padding_idx=2) - loss(minus, padding_idx=2)) / (2 * eps)
    assert np.abs(numeric[2]).max() > 0.1, "the padding row is used: its true derivative is not 0"
    np.testing.assert_array_equal(t.grad.numpy()[2], 0.0)
    keep = [0, 1, 3, 4]
    np.testing.assert_allclose(t.grad.numpy()[keep], numeric[keep], rtol=1e-5, atol=1e-6)
