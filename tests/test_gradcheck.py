"""Central-difference gradient checks in float64 for every differentiable Tensor operation.

The catalogue lives in ``tests/op_catalogue.py`` (shared with the PyTorch parity suite):
``OPS`` (module 01's Tensor operations) and ``FUNCTION_OPS`` (modules 02, 04, 09 and 16:
activations, losses, convolution, pooling and batch norm, ``kl_div`` and the distillation
loss — ``Function`` subclasses or compositions). Messages name the operation, the input and
the element that disagree. Inputs are float64; an op that silently downcasts to float32
fails both the dtype check and (its finite differences being float32 noise) the gradcheck.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from op_catalogue import FUNCTION_OPS, OPS, Op, make_inputs

from tinytorch_ref import Tensor
from tinytorch_ref.autograd import gradcheck


@pytest.fixture
def rng(request):
    return np.random.default_rng(zlib.crc32(request.node.name.encode()))


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_gradient_matches_central_differences(op: Op, rng):
    inputs = make_inputs(op, rng)
    try:
        assert gradcheck(op.ours, inputs, eps=1e-6, atol=1e-6, rtol=1e-5)
    except AssertionError as err:
        raise AssertionError(f"{op.name}: {err}") from None


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_gradient_has_input_shape_and_dtype(op: Op, rng):
    leaves = [Tensor(a, requires_grad=True) for a in make_inputs(op, rng, np.float32)]
    op.ours(*leaves).sum().backward()
    for i, t in enumerate(leaves):
        assert t.grad is not None, f"{op.name}: input {i} got no gradient"
        assert t.grad.shape == t.shape, f"{op.name}: input {i} grad shape {t.grad.shape}"
        assert t.grad.dtype == np.float32, f"{op.name}: input {i} grad dtype {t.grad.dtype}"


@pytest.mark.parametrize("op", FUNCTION_OPS, ids=lambda op: op.name)
def test_function_gradient_matches_central_differences(op: Op, rng):
    inputs = make_inputs(op, rng)
    try:
        assert gradcheck(op.ours, inputs, eps=1e-6, atol=1e-6, rtol=1e-5)
    except AssertionError as err:
        raise AssertionError(f"{op.name}: {err}") from None


@pytest.mark.parametrize("op", FUNCTION_OPS, ids=lambda op: op.name)
def test_function_keeps_float64(op: Op, rng):
    leaves = [Tensor(a, requires_grad=True) for a in make_inputs(op, rng)]
    out = op.ours(*leaves)
    assert out.dtype == np.float64, f"{op.name}: float64 inputs give a {out.dtype} output"
    out.sum().backward()
    for i, t in enumerate(leaves):
        assert t.grad is not None, f"{op.name}: input {i} got no gradient"
        assert t.grad.shape == t.shape, f"{op.name}: input {i} grad shape {t.grad.shape}"
        assert t.grad.dtype == np.float64, f"{op.name}: input {i} grad dtype {t.grad.dtype}"


def test_gradcheck_reports_op_input_and_element():
    from tinytorch_ref.tensor import Function

    class WrongSquare(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, grad):
            (a,) = ctx.saved
            return (grad * a,)  # should be 2a

    with pytest.raises(AssertionError, match=r"input 0, element \(0,\)"):
        gradcheck(lambda a: WrongSquare.apply(a), [np.array([1.5, 2.0])])


def test_function_subclasses_bring_their_own_backward():
    from tinytorch_ref.tensor import Function

    class Square(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, grad):
            (a,) = ctx.saved
            return (2 * a * grad,)

    assert gradcheck(lambda a: Square.apply(a) * 3.0, [np.array([1.5, -2.0, 0.3])])


def test_full_max_ties_share_the_gradient():
    x = Tensor(np.array([1.0, 5.0, 5.0]), requires_grad=True)
    x.max().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.5, 0.5])


def test_deep_chain_does_not_hit_the_recursion_limit():
    x = Tensor(np.array([1.0]), requires_grad=True)
    y = x
    for _ in range(5000):
        y = y * 1.0
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0])


def test_no_grad_records_nothing_and_modules_01_04_are_unchanged():
    from tinytorch_ref import no_grad

    x = Tensor(np.ones(3), requires_grad=True)
    with no_grad():
        y = x * 2
    assert y._node is None and not y.requires_grad
