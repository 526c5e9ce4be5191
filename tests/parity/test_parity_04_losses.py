"""PyTorch parity · module 04 (losses): values and input gradients, every reduction."""

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
REDUCTIONS = ["mean", "sum", "none"]


def _rng(*key: object) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _check(ours_fn, theirs_fn, x, extra_ours=(), extra_theirs=(), **kw):
    a = tt.Tensor(x.copy(), requires_grad=True)
    b = torch.tensor(x, requires_grad=True)
    la, lb = ours_fn(a, *extra_ours, **kw), theirs_fn(b, *extra_theirs, **kw)
    assert tuple(la.shape) == tuple(lb.shape)
    np.testing.assert_allclose(la.numpy(), lb.detach().numpy(), rtol=RTOL, atol=ATOL)
    w = _rng("upstream", x.shape).standard_normal(tuple(lb.shape)).astype(np.float32)
    (la * tt.Tensor(w)).sum().backward()
    (lb * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=RTOL, atol=1e-6)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(5,), (4, 3), (2, 3, 4)], ids=str)
def test_mse(shape, reduction):
    rng = _rng("mse", shape, reduction)
    x, t = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))
    _check(F.mse_loss, TF.mse_loss, x, (tt.Tensor(t),), (torch.tensor(t),), reduction=reduction)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(6, 5), (2, 4, 3), (3, 4, 2, 2), (7,)], ids=str)
def test_cross_entropy_and_nll(shape, reduction):
    rng = _rng("ce", shape, reduction)
    x = (rng.standard_normal(shape) * 3).astype(np.float32)
    tshape = () if len(shape) == 1 else (shape[0], *shape[2:])
    t = rng.integers(0, shape[0] if len(shape) == 1 else shape[1], tshape)
    _check(F.cross_entropy, TF.cross_entropy, x, (tt.Tensor(t),), (torch.tensor(t),),
           reduction=reduction)
    logp = TF.log_softmax(torch.tensor(x), dim=0 if len(shape) == 1 else 1).numpy()
    _check(F.nll_loss, TF.nll_loss, logp, (tt.Tensor(t),), (torch.tensor(t),),
           reduction=reduction)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_options(reduction):
    rng = _rng("ce-options", reduction)
    x = (rng.standard_normal((8, 5)) * 2).astype(np.float32)
    t = rng.integers(0, 5, 8)
    t[[1, 4]] = -100
    w = rng.uniform(0.5, 2.0, 5).astype(np.float32)
    for kw in [dict(label_smoothing=0.1), dict(ignore_index=-100), dict(weight=True),
               dict(weight=True, label_smoothing=0.2)]:
        ours_kw, theirs_kw = dict(kw), dict(kw)
        if kw.get("weight"):
            ours_kw["weight"], theirs_kw["weight"] = tt.Tensor(w), torch.tensor(w)
        a = tt.Tensor(x.copy(), requires_grad=True)
        b = torch.tensor(x, requires_grad=True)
        la = F.cross_entropy(a, tt.Tensor(t), reduction=reduction, **ours_kw)
        lb = TF.cross_entropy(b, torch.tensor(t), reduction=reduction, **theirs_kw)
        np.testing.assert_allclose(la.numpy(), lb.detach().numpy(), rtol=RTOL, atol=ATOL,
                                   err_msg=str(kw))
        la.sum().backward()
        lb.sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=RTOL, atol=1e-6,
                                   err_msg=str(kw))


def test_cross_entropy_probability_targets():
    rng = _rng("ce-prob")
    x = rng.standard_normal((4, 6)).astype(np.float32)
    q = rng.random((4, 6)).astype(np.float32)
    q /= q.sum(axis=1, keepdims=True)
    _check(F.cross_entropy, TF.cross_entropy, x, (tt.Tensor(q),), (torch.tensor(q),),
           label_smoothing=0.1)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(6,), (3, 4)], ids=str)
def test_bce(shape, reduction):
    rng = _rng("bce", shape, reduction)
    p = rng.uniform(0.02, 0.98, shape).astype(np.float32)
    t = (rng.random(shape) > 0.5).astype(np.float32)
    _check(F.binary_cross_entropy, TF.binary_cross_entropy, p, (tt.Tensor(t),),
           (torch.tensor(t),), reduction=reduction)


def test_bce_clamps_like_torch():
    p = np.array([0.0, 1.0, 0.0, 1.0, 0.5], np.float32)
    t = np.array([1.0, 0.0, 0.0, 1.0, 1.0], np.float32)
    la = F.binary_cross_entropy(tt.Tensor(p), tt.Tensor(t), reduction="none")
    lb = TF.binary_cross_entropy(torch.tensor(p), torch.tensor(t), reduction="none")
    np.testing.assert_allclose(la.numpy(), lb.numpy(), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("pos_weight", [False, True])
def test_bce_with_logits(reduction, pos_weight):
    rng = _rng("bcel", reduction, pos_weight)
    x = (rng.standard_normal((5, 3)) * 4).astype(np.float32)
    x[0] = [60.0, -60.0, 0.5]
    t = (rng.random((5, 3)) > 0.5).astype(np.float32)
    pw = rng.uniform(0.5, 3.0, 3).astype(np.float32)
    kw_o = {"pos_weight": tt.Tensor(pw)} if pos_weight else {}
    kw_t = {"pos_weight": torch.tensor(pw)} if pos_weight else {}
    a = tt.Tensor(x.copy(), requires_grad=True)
    b = torch.tensor(x, requires_grad=True)
    la = F.binary_cross_entropy_with_logits(a, tt.Tensor(t), reduction=reduction, **kw_o)
    lb = TF.binary_cross_entropy_with_logits(b, torch.tensor(t), reduction=reduction, **kw_t)
    np.testing.assert_allclose(la.numpy(), lb.detach().numpy(), rtol=RTOL, atol=ATOL)
    la.sum().backward()
    lb.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=RTOL, atol=1e-6)


def test_loss_modules_match_torch():
    rng = _rng("modules")
    x = rng.standard_normal((4, 3)).astype(np.float32)
    t = rng.integers(0, 3, 4)
    f = (rng.random((4, 3)) > 0.5).astype(np.float32)
    pairs = [(tt.nn.CrossEntropyLoss(label_smoothing=0.05), torch.nn.CrossEntropyLoss(
        label_smoothing=0.05), t), (tt.nn.MSELoss(reduction="sum"),
                                    torch.nn.MSELoss(reduction="sum"), f),
             (tt.nn.BCEWithLogitsLoss(), torch.nn.BCEWithLogitsLoss(), f),
             (tt.nn.NLLLoss(), torch.nn.NLLLoss(), t)]
    for ours, theirs, target in pairs:
        np.testing.assert_allclose(ours(tt.Tensor(x), tt.Tensor(target)).numpy(),
                                   theirs(torch.tensor(x), torch.tensor(target)).numpy(),
                                   rtol=RTOL, atol=ATOL, err_msg=type(ours).__name__)
