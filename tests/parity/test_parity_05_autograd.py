"""PyTorch parity for module 05: forward values and gradients of every catalogued operation.

float32 inputs, a random upstream gradient, 1e-5 relative tolerance. Instructor CI installs
``torch==2.13.0`` (``make setup-dev``); these tests never skip.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
import torch
from op_catalogue import OPS, Op, make_inputs

from tinytorch_ref import Tensor

RTOL, ATOL = 1e-5, 1e-6


def _run_both(op: Op, rng: np.random.Generator):
    arrays = make_inputs(op, rng, np.float32)
    ours = [Tensor(a.copy(), requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a.copy(), requires_grad=True) for a in arrays]
    out_ours = op.ours(*ours)
    out_theirs = op.torch_fn()(*theirs)
    upstream = rng.standard_normal(out_ours.shape).astype(np.float32)
    out_ours.backward(Tensor(upstream))
    out_theirs.backward(torch.tensor(upstream).reshape(out_theirs.shape))
    return arrays, ours, theirs, out_ours, out_theirs


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_forward_and_gradients_match_torch(op: Op):
    rng = np.random.default_rng(zlib.crc32(op.name.encode()))
    _, ours, theirs, out_ours, out_theirs = _run_both(op, rng)
    np.testing.assert_allclose(out_ours.numpy(), out_theirs.detach().numpy(), rtol=RTOL,
                               atol=ATOL, err_msg=f"{op.name}: forward differs from torch")
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        assert a.grad is not None, f"{op.name}: input {i} got no gradient"
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=RTOL, atol=ATOL,
                                   err_msg=f"{op.name}: gradient of input {i} differs")


@pytest.mark.parametrize("shape_a,shape_b", [((4, 3), (3,)), ((2, 4, 1), (5,)),
                                             ((1, 3), (4, 1)), ((), (2, 3))])
def test_broadcast_gradients_match_torch(shape_a, shape_b):
    rng = np.random.default_rng(len(shape_a) * 10 + len(shape_b))
    a, b = (rng.standard_normal(s).astype(np.float32) for s in (shape_a, shape_b))
    x, y = Tensor(a, requires_grad=True), Tensor(b, requires_grad=True)
    tx, ty = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    ((x * y + x) / (y * y + 1.0)).sum().backward()
    ((tx * ty + tx) / (ty * ty + 1.0)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(y.grad.numpy(), ty.grad.numpy(), rtol=RTOL, atol=ATOL)


def test_accumulation_and_shared_use_match_torch():
    rng = np.random.default_rng(7)
    w = rng.standard_normal((3, 3)).astype(np.float32)
    h = rng.standard_normal((2, 3)).astype(np.float32)
    ours, theirs = Tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    for _ in range(2):
        ((Tensor(h) @ ours) @ ours).tanh().sum().backward()
        ((torch.tensor(h) @ theirs) @ theirs).tanh().sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=RTOL, atol=ATOL)


def test_non_scalar_backward_error_matches_torch():
    with pytest.raises(RuntimeError, match="scalar outputs") as ours:
        (Tensor([1.0, 2.0], requires_grad=True) * 2).backward()
    with pytest.raises(RuntimeError, match="scalar outputs") as theirs:
        (torch.tensor([1.0, 2.0], requires_grad=True) * 2).backward()
    assert "grad can be implicitly created only for scalar outputs" in str(ours.value)
    assert "grad can be implicitly created only for scalar outputs" in str(theirs.value)
