"""Central-difference gradient checks in float64 for every differentiable Tensor operation.

The catalogues (shared with the PyTorch parity suites): ``OPS`` (module 01's Tensor operations)
and ``FUNCTION_OPS`` (modules 02, 04, 09 and 16: activations, losses, convolution, pooling and
batch norm, ``kl_div`` and the distillation loss) in ``tests/op_catalogue.py``;
``SEQUENCE_OPS`` (modules 11-13) in ``tests/op_catalogue_sequence.py``; ``OPTIMIZATION_OPS``
(module 18's fused bias + GELU) in ``tests/op_catalogue_optimization.py``. Messages name the
operation, the input and the element that disagree. An op that silently changes the dtype
fails the dtype check and (its finite differences being float32 noise) the gradcheck.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from op_catalogue import FUNCTION_OPS, OPS, Op, make_inputs
from op_catalogue_optimization import OPTIMIZATION_OPS
from op_catalogue_sequence import IDS_REPEAT, SEQUENCE_OPS

from tinytorch_ref import Tensor
from tinytorch_ref.autograd import gradcheck
from tinytorch_ref.nn import functional as F

ALL_OPS = [*OPS, *FUNCTION_OPS, *SEQUENCE_OPS, *OPTIMIZATION_OPS]
#: FUNCTION_OPS close over float64 constants (targets, running statistics), so float32 inputs
#: promote to float64 as in PyTorch: only float64 is checked to be kept for them.
_FLOAT64_ONLY = {op.name for op in FUNCTION_OPS}


@pytest.fixture
def rng(request):
    return np.random.default_rng(zlib.crc32(request.node.name.encode()))


@pytest.mark.parametrize("op", ALL_OPS, ids=lambda op: op.name)
def test_gradient_matches_central_differences(op: Op, rng):
    inputs = make_inputs(op, rng)
    try:
        assert gradcheck(op.ours, inputs, eps=1e-6, atol=1e-6, rtol=1e-5)
    except AssertionError as err:
        raise AssertionError(f"{op.name}: {err}") from None


@pytest.mark.parametrize("op", ALL_OPS, ids=lambda op: op.name)
def test_float64_stays_float64_and_float32_stays_float32(op: Op, rng):
    for dtype in (np.float64,) if op.name in _FLOAT64_ONLY else (np.float64, np.float32):
        leaves = [Tensor(a, requires_grad=True) for a in make_inputs(op, rng, dtype)]
        out = op.ours(*leaves)
        assert out.dtype == dtype, f"{op.name}: {np.dtype(dtype)} inputs give {out.dtype}"
        out.sum().backward()
        for i, t in enumerate(leaves):
            assert t.grad is not None, f"{op.name}: input {i} got no gradient"
            assert t.grad.shape == t.shape, f"{op.name}: input {i} grad shape {t.grad.shape}"
            assert t.grad.dtype == dtype, f"{op.name}: input {i} grad dtype {t.grad.dtype}"


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


def test_fused_node_keeps_two_arrays_where_the_composition_keeps_many(rng):
    from tinytorch_ref.acceleration import bias_gelu
    from tinytorch_ref.activations import gelu
    from tinytorch_ref.profiling import graph_activation_bytes

    x = Tensor(rng.standard_normal((8, 16)).astype(np.float32), requires_grad=True)
    b = Tensor(rng.standard_normal(16).astype(np.float32), requires_grad=True)
    fused = graph_activation_bytes(bias_gelu(x, b))
    composed = graph_activation_bytes(gelu(x + b, approximate="tanh"))
    assert fused == 3 * 8 * 16 * 4  # h, t and the output
    assert composed > 2 * fused
