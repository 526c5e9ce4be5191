"""PyTorch parity · module 16 (compression).

Pruning masks against ``torch.nn.utils.prune`` (``l1_unstructured`` once and repeatedly,
``global_unstructured`` once and repeatedly, ``ln_structured`` for several norms and dims,
the amount rules and their errors), the masked layer's forward and gradients against a torch
module pruned the same way, ``kl_div`` values and gradients (input and target, every
reduction, ``log_target`` both ways) and the distillation loss written with torch's functions.
Weights are drawn from a normal distribution, so magnitudes never tie (torch's ``topk``
leaves the order of ties undefined).
"""

from __future__ import annotations

import warnings
import zlib

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
import torch.nn.utils.prune as tprune

import tinytorch_ref as tt
from tinytorch_ref import compression as C
from tinytorch_ref.nn.utils import prune

pytestmark = pytest.mark.parity


def _rng(*key: object) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _pair(rng: np.random.Generator, n_in: int, n_out: int) -> tuple:
    ours = tt.nn.Linear(n_in, n_out)
    ours.weight.data[...] = rng.standard_normal((n_out, n_in)).astype(np.float32)
    ours.bias.data[...] = rng.standard_normal(n_out).astype(np.float32)
    theirs = torch.nn.Linear(n_in, n_out)
    with torch.no_grad():
        theirs.weight.copy_(torch.from_numpy(ours.weight.numpy()))
        theirs.bias.copy_(torch.from_numpy(ours.bias.numpy()))
    return C.MaskedLinear.from_linear(ours), theirs


AMOUNTS = [0.0, 0.3, 0.5, 0.77, 1.0, 0, 7, 20]


@pytest.mark.parametrize("amount", AMOUNTS, ids=repr)
@pytest.mark.parametrize("name", ["weight", "bias"])
def test_l1_unstructured_once_and_again(amount, name):
    rng = _rng("l1", amount, name)
    ours, theirs = _pair(rng, 7, 5)
    size = getattr(theirs, name).numel()
    if isinstance(amount, int) and amount > size:
        with pytest.raises(ValueError):
            tprune.l1_unstructured(theirs, name, amount)
        with pytest.raises(ValueError):
            prune.l1_unstructured(ours, name, amount)
        return
    tprune.l1_unstructured(theirs, name, amount)
    prune.l1_unstructured(ours, name, amount)
    mask = getattr(ours, f"{name}_mask").numpy()
    np.testing.assert_array_equal(mask, getattr(theirs, f"{name}_mask").numpy())
    second = 0.4 if isinstance(amount, float) else 2
    if int(mask.sum()) >= (second if isinstance(second, int) else 0):
        tprune.l1_unstructured(theirs, name, second)
        prune.l1_unstructured(ours, name, second)
        np.testing.assert_array_equal(getattr(ours, f"{name}_mask").numpy(),
                                      getattr(theirs, f"{name}_mask").numpy())


@pytest.mark.parametrize("amount", [0.2, 0.5, 0.9, 13])
def test_global_unstructured_once_and_again(amount):
    rng = _rng("global", amount)
    pairs = [_pair(rng, 6, 4), _pair(rng, 4, 9), _pair(rng, 9, 3)]
    for layer, _ in pairs[1:2]:          # one layer at a larger scale: global != local
        layer.weight.data *= 3.0
    for (ours, theirs) in pairs[1:2]:
        with torch.no_grad():
            theirs.weight.copy_(torch.from_numpy(ours.weight.numpy()))
    for _round in range(2):
        tprune.global_unstructured([(t, "weight") for _, t in pairs],
                                   pruning_method=tprune.L1Unstructured, amount=amount)
        prune.global_unstructured([(o, "weight") for o, _ in pairs], amount)
        for ours, theirs in pairs:
            np.testing.assert_array_equal(ours.weight_mask.numpy(), theirs.weight_mask.numpy())


@pytest.mark.parametrize("n", [1, 2, 3, float("inf"), float("-inf")], ids=str)
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("amount", [0.25, 0.5, 2])
def test_ln_structured_masks(n, dim, amount):
    rng = _rng("ln", n, dim, amount)
    ours, theirs = _pair(rng, 6, 5)
    tprune.ln_structured(theirs, "weight", amount=amount, n=n, dim=dim)
    prune.ln_structured(ours, "weight", amount, n, dim)
    np.testing.assert_array_equal(ours.weight_mask.numpy(), theirs.weight_mask.numpy())


@pytest.mark.parametrize("shape,dim", [((4, 3, 2, 2), 0), ((4, 3, 2, 2), 1), ((3, 5, 4), 2)])
def test_ln_structured_mask_on_conv_shaped_tensors(shape, dim):
    rng = _rng("ln-conv", shape, dim)
    w = rng.standard_normal(shape).astype(np.float32)
    method = tprune.LnStructured(amount=0.5, n=2, dim=dim)
    expected = method.compute_mask(torch.from_numpy(w), torch.ones(shape)).numpy()
    np.testing.assert_array_equal(C.ln_structured_mask(w, 0.5, 2, dim), expected)


def test_amount_errors_match_torch():
    for amount, err in [(1.5, ValueError), (-1, ValueError), (-0.2, ValueError),
                        ("0.5", TypeError)]:
        ours, theirs = _pair(_rng("errors", repr(amount)), 3, 2)
        with pytest.raises(err):
            tprune.l1_unstructured(theirs, "weight", amount)
        with pytest.raises(err):
            prune.l1_unstructured(ours, "weight", amount)


def test_masked_layer_forward_and_gradients_match_a_pruned_torch_layer():
    rng = _rng("masked-forward")
    ours, theirs = _pair(rng, 8, 6)
    tprune.l1_unstructured(theirs, "weight", 0.6)
    tprune.l1_unstructured(theirs, "bias", 2)
    prune.l1_unstructured(ours, "weight", 0.6)
    prune.l1_unstructured(ours, "bias", 2)
    x = rng.standard_normal((5, 8)).astype(np.float32)
    a, b = tt.Tensor(x.copy(), requires_grad=True), torch.tensor(x, requires_grad=True)
    ya, yb = ours(a), theirs(b)
    np.testing.assert_allclose(ya.numpy(), yb.detach().numpy(), rtol=1e-5, atol=1e-6)
    w = rng.standard_normal((5, 6)).astype(np.float32)
    (ya * tt.Tensor(w)).sum().backward()
    (yb * torch.from_numpy(w)).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight_orig.grad.numpy(),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours.bias.grad.numpy(), theirs.bias_orig.grad.numpy(),
                               rtol=1e-5, atol=1e-6)
    tprune.remove(theirs, "weight")
    prune.remove(ours, "weight")
    np.testing.assert_array_equal(ours.weight.numpy(), theirs.weight.detach().numpy())
    assert prune.is_pruned(tt.nn.Sequential(ours)) and tprune.is_pruned(theirs)


REDUCTIONS = ["none", "sum", "mean", "batchmean"]


def _probs(rng: np.random.Generator, shape: tuple[int, ...], zeros: bool = False) -> np.ndarray:
    p = rng.random(shape) + 0.05
    if zeros:
        p[rng.random(shape) < 0.3] = 0.0
    return p / p.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("log_target", [False, True])
@pytest.mark.parametrize("shape", [(4, 5), (2, 3, 4), (6,)], ids=str)
def test_kl_div_values_and_both_gradients(reduction, log_target, shape):
    rng = _rng("kl", reduction, log_target, shape)
    x = np.log(_probs(rng, shape))
    t = np.log(_probs(rng, shape)) if log_target else _probs(rng, shape)
    a, ta = tt.Tensor(x.copy(), requires_grad=True), tt.Tensor(t.copy(), requires_grad=True)
    b, tb = torch.tensor(x, requires_grad=True), torch.tensor(t, requires_grad=True)
    la = C.kl_div(a, ta, reduction=reduction, log_target=log_target)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lb = TF.kl_div(b, tb, reduction=reduction, log_target=log_target)
    assert tuple(la.shape) == tuple(lb.shape)
    np.testing.assert_allclose(la.numpy(), lb.detach().numpy(), rtol=1e-12, atol=1e-14)
    up = rng.standard_normal(tuple(lb.shape))
    (la * tt.Tensor(up)).sum().backward()
    (lb * torch.tensor(up)).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ta.grad.numpy(), tb.grad.numpy(), rtol=1e-12, atol=1e-14)


def test_kl_div_zero_targets_float32_and_module_form():
    rng = _rng("kl-zeros")
    x = np.log(_probs(rng, (5, 6))).astype(np.float32)
    t = _probs(rng, (5, 6), zeros=True).astype(np.float32)
    a = tt.Tensor(x.copy(), requires_grad=True)
    b = torch.tensor(x, requires_grad=True)
    la = tt.nn.KLDivLoss(reduction="batchmean")(a, tt.Tensor(t))
    lb = torch.nn.KLDivLoss(reduction="batchmean")(b, torch.from_numpy(t))
    assert la.dtype == np.float32
    np.testing.assert_allclose(la.numpy(), lb.detach().numpy(), rtol=1e-6)
    la.backward()
    lb.backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-6, atol=1e-8)
    scalar = C.kl_div(tt.Tensor(np.float64(-0.7)), tt.Tensor(np.float64(0.3)),
                      reduction="batchmean")
    np.testing.assert_allclose(scalar.numpy(), TF.kl_div(torch.tensor(-0.7, dtype=torch.float64),
                                                         torch.tensor(0.3, dtype=torch.float64),
                                                         reduction="batchmean").numpy())


@pytest.mark.parametrize("temperature,alpha", [(1.0, 0.5), (2.0, 0.3), (4.0, 0.9), (8.0, 1.0),
                                               (3.0, 0.0)])
def test_distillation_loss_matches_torch_composition(temperature, alpha):
    rng = _rng("distill", temperature, alpha)
    s = rng.standard_normal((7, 10))
    t = rng.standard_normal((7, 10)) * 3
    y = rng.integers(0, 10, 7)
    a, ta = tt.Tensor(s.copy(), requires_grad=True), tt.Tensor(t.copy(), requires_grad=True)
    b, tb = torch.tensor(s, requires_grad=True), torch.tensor(t, requires_grad=True)
    la = C.distillation_loss(a, ta, tt.Tensor(y), temperature=temperature, alpha=alpha)
    soft = TF.kl_div(TF.log_softmax(b / temperature, dim=1),
                     TF.softmax(tb.detach() / temperature, dim=1),
                     reduction="batchmean") * temperature ** 2
    lb = alpha * soft + (1 - alpha) * TF.cross_entropy(b, torch.from_numpy(y))
    np.testing.assert_allclose(la.numpy(), lb.detach().numpy(), rtol=1e-10, atol=1e-12)
    la.backward()
    lb.backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-12)
    assert ta.grad is None and tb.grad is None


def test_masked_conv2d_forward_and_gradients_match_a_pruned_torch_conv():
    rng = _rng("masked-conv")
    tt.manual_seed(4)
    conv = tt.nn.Conv2d(3, 6, 3, stride=2, padding=1)
    theirs = torch.nn.Conv2d(3, 6, 3, stride=2, padding=1)
    with torch.no_grad():
        theirs.weight.copy_(torch.from_numpy(conv.weight.numpy()))
        theirs.bias.copy_(torch.from_numpy(conv.bias.numpy()))
    ours = C.MaskedConv2d.from_conv(conv)
    tprune.ln_structured(theirs, "weight", amount=0.5, n=1, dim=0)
    tprune.l1_unstructured(theirs, "weight", amount=0.25)
    prune.ln_structured(ours, "weight", 0.5, 1, 0)
    prune.l1_unstructured(ours, "weight", 0.25)
    np.testing.assert_array_equal(ours.weight_mask.numpy(), theirs.weight_mask.numpy())
    x = rng.standard_normal((2, 3, 7, 7)).astype(np.float32)
    a, b = tt.Tensor(x.copy(), requires_grad=True), torch.tensor(x, requires_grad=True)
    ya, yb = ours(a), theirs(b)
    np.testing.assert_allclose(ya.numpy(), yb.detach().numpy(), rtol=1e-5, atol=1e-5)
    up = rng.standard_normal(tuple(yb.shape)).astype(np.float32)
    (ya * tt.Tensor(up)).sum().backward()
    (yb * torch.from_numpy(up)).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight_orig.grad.numpy(),
                               rtol=1e-5, atol=1e-5)


def test_global_pruning_across_conv_and_linear_layers():
    rng = _rng("global-cnn")
    tt.manual_seed(6)
    ours = tt.nn.Sequential(tt.nn.Conv2d(1, 4, 3), tt.nn.ReLU(), tt.nn.Flatten(),
                            tt.nn.Linear(4 * 4 * 4, 5))
    theirs = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                                 torch.nn.Linear(4 * 4 * 4, 5))
    with torch.no_grad():
        for i in (0, 3):
            theirs[i].weight.copy_(torch.from_numpy(ours[i].weight.numpy()))
            theirs[i].bias.copy_(torch.from_numpy(ours[i].bias.numpy()))
    pruned = prune.prune_model(ours, 0.7)
    tprune.global_unstructured([(theirs[0], "weight"), (theirs[3], "weight")],
                               pruning_method=tprune.L1Unstructured, amount=0.7)
    for i in (0, 3):
        np.testing.assert_array_equal(pruned[i].weight_mask.numpy(),
                                      theirs[i].weight_mask.numpy())
    x = rng.standard_normal((3, 1, 6, 6)).astype(np.float32)
    with torch.no_grad():
        expected = theirs(torch.from_numpy(x)).numpy()
    with tt.no_grad():
        np.testing.assert_allclose(pruned(tt.Tensor(x)).numpy(), expected, rtol=1e-5, atol=1e-5)
