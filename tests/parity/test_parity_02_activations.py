"""PyTorch parity · module 02 (activations): forward values and gradients, float32, 1e-5 rel."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tinytorch_ref as tt
import tinytorch_ref.nn.functional as F

pytestmark = pytest.mark.parity
RTOL, ATOL = 1e-5, 1e-6

# (name, ours(x), torch(x), input scale)
CATALOGUE = [
    ("relu", F.relu, TF.relu, 3.0),
    ("sigmoid", F.sigmoid, torch.sigmoid, 6.0),
    ("tanh", F.tanh, torch.tanh, 3.0),
    ("gelu", F.gelu, TF.gelu, 3.0),
    ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"),
     lambda x: TF.gelu(x, approximate="tanh"), 3.0),
    ("softmax_last", lambda x: F.softmax(x, dim=-1), lambda x: TF.softmax(x, dim=-1), 5.0),
    ("softmax_dim0", lambda x: F.softmax(x, dim=0), lambda x: TF.softmax(x, dim=0), 5.0),
    ("log_softmax_last", lambda x: F.log_softmax(x, dim=-1),
     lambda x: TF.log_softmax(x, dim=-1), 5.0),
    ("log_softmax_dim1", lambda x: F.log_softmax(x, dim=1),
     lambda x: TF.log_softmax(x, dim=1), 5.0),
    ("ReLU", tt.nn.ReLU(), torch.nn.ReLU(), 3.0),
    ("Softmax", tt.nn.Softmax(dim=1), torch.nn.Softmax(dim=1), 3.0),
    ("LogSoftmax", tt.nn.LogSoftmax(dim=-1), torch.nn.LogSoftmax(dim=-1), 3.0),
    ("GELU", tt.nn.GELU(), torch.nn.GELU(), 3.0),
]
SHAPES = [(7,), (4, 5), (2, 3, 6), (3, 1, 4, 2)]


def _seed(*key: object) -> int:
    return zlib.crc32(repr(key).encode())


def _pair(rng, shape, scale):
    x = (rng.standard_normal(shape) * scale).astype(np.float32)
    return tt.Tensor(x.copy(), requires_grad=True), torch.tensor(x, requires_grad=True)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name,ours,theirs,scale", CATALOGUE, ids=[c[0] for c in CATALOGUE])
def test_forward_matches_torch(name, ours, theirs, scale, shape):
    if name in ("log_softmax_dim1", "Softmax") and len(shape) < 2:
        shape = (3, *shape)
    rng = np.random.default_rng(_seed(name, shape))
    a, b = _pair(rng, shape, scale)
    out = ours(a)
    assert out.dtype == np.float32, f"{name}: dtype {out.dtype}"
    np.testing.assert_allclose(out.numpy(), theirs(b).detach().numpy(), rtol=RTOL, atol=ATOL,
                               err_msg=f"{name} forward on {shape}")


@pytest.mark.parametrize("shape", SHAPES[1:], ids=str)
@pytest.mark.parametrize("name,ours,theirs,scale", CATALOGUE, ids=[c[0] for c in CATALOGUE])
def test_gradient_matches_torch(name, ours, theirs, scale, shape):
    rng = np.random.default_rng(_seed(name, shape, "grad"))
    a, b = _pair(rng, shape, scale)
    w = rng.standard_normal(shape).astype(np.float32)  # a random upstream gradient
    (ours(a) * tt.Tensor(w)).sum().backward()
    (theirs(b) * torch.tensor(w)).sum().backward()
    assert a.grad is not None, f"{name}: no gradient reached the input"
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=RTOL, atol=1e-5,
                               err_msg=f"{name} gradient on {shape}")


@pytest.mark.parametrize("name", ["sigmoid", "softmax_last", "log_softmax_last", "gelu"])
def test_extreme_inputs_match_torch(name):
    ours, theirs = {c[0]: (c[1], c[2]) for c in CATALOGUE}[name]
    x = np.array([[-1e4, -1000.0, -100.0, -20.0, 0.0, 20.0, 100.0, 1000.0, 1e4]], np.float32)
    np.testing.assert_allclose(ours(tt.Tensor(x)).numpy(), theirs(torch.tensor(x)).numpy(),
                               rtol=RTOL, atol=ATOL, err_msg=name)
