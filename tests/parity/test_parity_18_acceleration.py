"""PyTorch parity · module 18 (acceleration): the fused bias + tanh-GELU against
``torch.nn.functional.gelu(x + b, approximate="tanh")`` forward and backward (float32 and
float64), and every matrix product and its blocked forms against ``torch.matmul``
(torch 2.13)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from op_catalogue import make_inputs
from op_catalogue_optimization import OPTIMIZATION_OPS

import tinytorch_ref as tt
from tinytorch_ref import acceleration as A

pytestmark = pytest.mark.parity
torch.set_num_threads(1)


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-10), (np.float32, 2e-5)])
@pytest.mark.parametrize("op", OPTIMIZATION_OPS, ids=lambda op: op.name)
def test_bias_gelu_forward_and_backward_match_torch(op, dtype, tol):
    rng = np.random.default_rng(len(op.name))
    arrays = make_inputs(op, rng, dtype)
    ours = [tt.Tensor(a.copy(), requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    ya, yb = op.ours(*ours), op.torch_fn()(*theirs)
    np.testing.assert_allclose(ya.numpy(), yb.detach().numpy(), rtol=tol, atol=tol)
    g = rng.standard_normal(tuple(yb.shape)).astype(dtype)
    (ya * tt.Tensor(g)).sum().backward()
    (yb * torch.from_numpy(g)).sum().backward()
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=tol, atol=tol,
                                   err_msg=f"gradient of input {i}")


@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (7, 11, 5), (16, 16, 16), (13, 1, 9), (3, 20, 2)])
def test_every_matmul_matches_torch(m, k, n):
    rng = np.random.default_rng(m * 100 + k * 10 + n)
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    theirs = torch.matmul(torch.from_numpy(a), torch.from_numpy(b)).numpy()
    np.testing.assert_allclose(A.matmul_loops(a, b), theirs, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(A.matmul_broadcast(a, b), theirs, rtol=1e-12, atol=1e-12)
    for bs in (1, 2, 3, 5, 8, 64):
        np.testing.assert_allclose(A.matmul_blocked(a, b, bs), theirs, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(A.matmul_blocked(a, b, bs, kernel=A.matmul_broadcast), theirs,
                                   rtol=1e-12, atol=1e-12)
