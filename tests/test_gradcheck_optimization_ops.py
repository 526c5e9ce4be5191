"""Central-difference gradient checks in float64 for the optimization tier's new operations.

The catalogue is ``OPTIMIZATION_OPS`` in ``tests/op_catalogue_optimization.py`` (module 18's
fused bias + GELU, shared with the parity suite). Messages name the operation, the input and
the element that disagree.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from op_catalogue import Op, make_inputs
from op_catalogue_optimization import OPTIMIZATION_OPS

from tinytorch_ref import Tensor
from tinytorch_ref.autograd import gradcheck


@pytest.fixture
def rng(request):
    return np.random.default_rng(zlib.crc32(request.node.name.encode()))


@pytest.mark.parametrize("op", OPTIMIZATION_OPS, ids=lambda op: op.name)
def test_gradient_matches_central_differences(op: Op, rng):
    inputs = make_inputs(op, rng)
    try:
        assert gradcheck(op.ours, inputs, eps=1e-6, atol=1e-6, rtol=1e-5)
    except AssertionError as err:
        raise AssertionError(f"{op.name}: {err}") from None


@pytest.mark.parametrize("op", OPTIMIZATION_OPS, ids=lambda op: op.name)
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
