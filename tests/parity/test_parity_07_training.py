"""PyTorch parity for module 07: LR schedulers and gradient clipping."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from tinytorch_ref import Tensor, optim
from tinytorch_ref.training import clip_grad_norm_

SCHEDULERS = [
    ("StepLR", {"step_size": 3, "gamma": 0.5}),
    ("StepLR", {"step_size": 1, "gamma": 0.9}),
    ("CosineAnnealingLR", {"T_max": 5, "eta_min": 0.001}),
    ("CosineAnnealingLR", {"T_max": 4}),
    ("LinearLR", {}),
    ("LinearLR", {"start_factor": 0.1, "total_iters": 4}),
    ("LinearLR", {"start_factor": 1.0, "end_factor": 0.2, "total_iters": 3}),
]


@pytest.mark.parametrize("name,kw", SCHEDULERS, ids=lambda x: x if isinstance(x, str) else
                         ",".join(f"{k}={v}" for k, v in x.items()))
def test_scheduler_matches_torch(name, kw):
    p_o = [Tensor(np.zeros(2, dtype=np.float32), requires_grad=True)]
    p_t = [torch.zeros(2, requires_grad=True)]
    opt_o = optim.SGD([{"params": p_o}, {"params": [Tensor(np.zeros(1), requires_grad=True)],
                                         "lr": 0.02}], lr=0.1)
    opt_t = torch.optim.SGD([{"params": p_t}, {"params": [torch.zeros(1, requires_grad=True)],
                                               "lr": 0.02}], lr=0.1)
    s_o = getattr(optim.lr_scheduler, name)(opt_o, **kw)
    s_t = getattr(torch.optim.lr_scheduler, name)(opt_t, **kw)
    for _ in range(12):
        np.testing.assert_allclose(s_o.get_last_lr(), s_t.get_last_lr(), rtol=1e-6, atol=1e-12)
        np.testing.assert_allclose([g["lr"] for g in opt_o.param_groups],
                                   [g["lr"] for g in opt_t.param_groups], rtol=1e-6, atol=1e-12)
        opt_o.step()
        opt_t.step()
        s_o.step()
        s_t.step()
    assert s_o.last_epoch == s_t.last_epoch


@pytest.mark.parametrize("max_norm,norm_type", [(1.0, 2.0), (100.0, 2.0), (0.5, math.inf)])
def test_clip_grad_norm_matches_torch(max_norm, norm_type):
    rng = np.random.default_rng(3)
    grads = [rng.standard_normal(s).astype(np.float32) * 3 for s in [(3, 4), (5,), (2, 2)]]
    ours = [Tensor(np.zeros_like(g), requires_grad=True) for g in grads]
    theirs = [torch.zeros(g.shape, requires_grad=True) for g in grads]
    for o, t, g in zip(ours, theirs, grads, strict=True):
        o.grad = Tensor(g.copy())
        t.grad = torch.tensor(g.copy())
    n_o = clip_grad_norm_(ours, max_norm, norm_type=norm_type)
    n_t = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type=norm_type)
    np.testing.assert_allclose(float(n_o.item()), float(n_t.item()), rtol=1e-5)
    for o, t in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-7)
