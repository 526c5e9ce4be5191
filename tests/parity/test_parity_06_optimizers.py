"""PyTorch parity for module 06: optimizer trajectories over several steps, every option."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tinytorch_ref import Tensor, optim

SHAPES = [(3, 4), (4,), (2, 2, 2)]
STEPS = 8


def _trajectories(make_ours, make_theirs, seed: int = 0, param_groups: bool = False):
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    ours = [Tensor(a.copy(), requires_grad=True) for a in init]
    theirs = [torch.tensor(a.copy(), requires_grad=True) for a in init]
    if param_groups:
        opt_o = make_ours([{"params": ours[:2]}, {"params": ours[2:], "lr": 0.003}])
        opt_t = make_theirs([{"params": theirs[:2]}, {"params": theirs[2:], "lr": 0.003}])
    else:
        opt_o, opt_t = make_ours(ours), make_theirs(theirs)
    for _ in range(STEPS):
        opt_o.zero_grad()
        opt_t.zero_grad()
        # loss = sum(p**4/4 - p*c): gradient depends on p, so trajectories diverge on bugs
        sum(((p ** 4) * 0.25 - p * 0.5).sum() for p in ours).backward()
        sum(((p ** 4) * 0.25 - p * 0.5).sum() for p in theirs).backward()
        opt_o.step()
        opt_t.step()
        for a, b in zip(ours, theirs, strict=True):
            np.testing.assert_allclose(a.data, b.detach().numpy(), rtol=1e-5, atol=1e-6)
    return opt_o, opt_t


SGD_OPTIONS = [
    {}, {"momentum": 0.9}, {"momentum": 0.9, "dampening": 0.5},
    {"momentum": 0.9, "nesterov": True}, {"weight_decay": 0.1},
    {"momentum": 0.8, "dampening": 0.2, "weight_decay": 0.05},
    {"momentum": 0.9, "nesterov": True, "weight_decay": 0.01},
]


@pytest.mark.parametrize("kw", SGD_OPTIONS, ids=lambda kw: ",".join(kw) or "plain")
def test_sgd_trajectory_matches_torch(kw):
    _trajectories(lambda p: optim.SGD(p, lr=0.01, **kw),
                  lambda p: torch.optim.SGD(p, lr=0.01, **kw))


@pytest.mark.parametrize("kw", [{}, {"weight_decay": 0.1}, {"betas": (0.8, 0.99), "eps": 1e-6},
                                {"lr": 0.05, "weight_decay": 0.01}], ids=str)
def test_adam_trajectory_matches_torch(kw):
    kw = {"lr": 0.01, **kw}
    _trajectories(lambda p: optim.Adam(p, **kw), lambda p: torch.optim.Adam(p, **kw))


@pytest.mark.parametrize("kw", [{}, {"weight_decay": 0.1}, {"lr": 0.05, "betas": (0.8, 0.95)},
                                {"weight_decay": 0.0}], ids=str)
def test_adamw_trajectory_matches_torch(kw):
    kw = {"lr": 0.01, **kw}
    _trajectories(lambda p: optim.AdamW(p, **kw), lambda p: torch.optim.AdamW(p, **kw))


def test_param_groups_match_torch():
    _trajectories(lambda g: optim.Adam(g, lr=0.01), lambda g: torch.optim.Adam(g, lr=0.01),
                  param_groups=True)
    _trajectories(lambda g: optim.SGD(g, lr=0.01, momentum=0.9),
                  lambda g: torch.optim.SGD(g, lr=0.01, momentum=0.9), param_groups=True)


def test_defaults_match_torch():
    p = [Tensor(np.zeros(1, dtype=np.float32), requires_grad=True)]
    t = [torch.zeros(1, requires_grad=True)]
    for ours, theirs in [(optim.Adam(p), torch.optim.Adam(t)),
                         (optim.AdamW(p), torch.optim.AdamW(t))]:
        for key in ("lr", "betas", "eps", "weight_decay"):
            assert ours.param_groups[0][key] == theirs.param_groups[0][key], key


def test_state_memory_is_zero_one_two_times_the_parameters():
    opt_o, opt_t = _trajectories(lambda p: optim.Adam(p, lr=0.01),
                                 lambda p: torch.optim.Adam(p, lr=0.01))
    n_bytes = sum(int(np.prod(s)) * 4 for s in SHAPES)
    assert opt_o.state_bytes() == 2 * n_bytes
    torch_bytes = sum(v.numel() * v.element_size() for s in opt_t.state.values()
                      for k, v in s.items() if k != "step")
    assert opt_o.state_bytes() == torch_bytes
    opt_o, _ = _trajectories(lambda p: optim.SGD(p, lr=0.01, momentum=0.9),
                             lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.9))
    assert opt_o.state_bytes() == n_bytes
