"""PyTorch parity · module 13 (transformers): LayerNorm / layer_norm (every affine variant, one
and two normalised dims, eps), the tanh GELU, and the MLP, the pre-norm block and the whole GPT
built from torch.nn primitives with copied weights, forward and backward, against torch 2.13.
Greedy generation gives the same tokens as a greedy loop over the torch model."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest
import torch
from op_catalogue_sequence import SEQUENCE_OPS
from torch import nn

import tinytorch_ref as tt
from tinytorch_ref import transformers as T

pytestmark = pytest.mark.parity
torch.set_num_threads(1)


def _check_grads(ours: dict, theirs: dict, rtol: float, atol: float) -> None:
    assert set(ours) == set(theirs)
    for name in ours:
        a, b = ours[name], theirs[name]
        assert a is not None, f"{name}: no gradient"
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=f"gradient of {name}")


@pytest.mark.parametrize("op", [op for op in SEQUENCE_OPS if op.theirs is not None
                                and op.name.startswith(("layer_norm", "gelu_tanh"))],
                         ids=lambda op: op.name)
def test_catalogue_forward_and_backward_match_torch(op):
    rng = np.random.default_rng(len(op.name))
    arrays = [rng.standard_normal(s).astype(np.float32) * 2 + 0.5 for s in op.shapes]
    ours = [tt.Tensor(a.copy(), requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    ya, yb = op.ours(*ours), op.torch_fn()(*theirs)
    assert ya.dtype == np.float32
    np.testing.assert_allclose(ya.numpy(), yb.detach().numpy(), rtol=1e-5, atol=1e-5)
    g = rng.standard_normal(tuple(yb.shape)).astype(np.float32)
    (ya * tt.Tensor(g)).sum().backward()
    (yb * torch.from_numpy(g)).sum().backward()
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-5,
                                   err_msg=f"gradient of input {i}")


@pytest.mark.parametrize("shape, normalized", [((4, 6), 6), ((2, 3, 8), (8,)),
                                               ((2, 3, 4, 5), (4, 5)), ((5,), 5),
                                               ((2, 2, 3), (2, 2, 3))])
@pytest.mark.parametrize("affine, bias", [(True, True), (True, False), (False, False)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layer_norm_module_matches_torch(shape, normalized, affine, bias, dtype):
    rng = np.random.default_rng(sum(shape) + 10 * affine + bias)
    eps = 1e-3 if dtype == np.float64 else 1e-5
    ours = tt.nn.LayerNorm(normalized, eps=eps, elementwise_affine=affine, bias=bias)
    theirs = nn.LayerNorm(normalized, eps=eps, elementwise_affine=affine, bias=bias)
    if dtype == np.float64:
        theirs = theirs.double()
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    for (_, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters(), strict=True):
        values = rng.standard_normal(p.shape)
        p.data = values.astype(dtype)
        with torch.no_grad():
            q.copy_(torch.from_numpy(values))
    x = rng.standard_normal(shape).astype(dtype) * 3 + 1
    x[..., 0:1] *= 1e-3  # nearly constant entries
    xa, xb = tt.Tensor(x.copy(), requires_grad=True), torch.tensor(x, requires_grad=True)
    ya, yb = ours(xa), theirs(xb)
    assert ya.dtype == dtype
    rtol, atol = (1e-10, 1e-12) if dtype == np.float64 else (1e-5, 1e-5)
    np.testing.assert_allclose(ya.numpy(), yb.detach().numpy(), rtol=rtol, atol=atol)
    g = rng.standard_normal(shape).astype(dtype)
    (ya * tt.Tensor(g)).sum().backward()
    (yb * torch.from_numpy(g)).sum().backward()
    np.testing.assert_allclose(xa.grad.numpy(), xb.grad.numpy(), rtol=rtol * 10, atol=atol * 10)
    for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters(), strict=True):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=rtol * 10,
                                   atol=atol * 10, err_msg=name)


def test_layer_norm_errors_like_torch():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(RuntimeError, match="normalized_shape"):
        tt.nn.functional.layer_norm(tt.Tensor(x), (4,))
    with pytest.raises(RuntimeError, match="normalized_shape"):
        torch.nn.functional.layer_norm(torch.from_numpy(x), (4,))
    with pytest.raises(TypeError, match="normalized_shape"):  # the function wants a tuple
        tt.nn.functional.layer_norm(tt.Tensor(x), 3)
    with pytest.raises(TypeError, match="normalized_shape"):
        torch.nn.functional.layer_norm(torch.from_numpy(x), 3)
    for kwargs in ({}, {"elementwise_affine": False}, {"bias": False}, {"eps": 1e-3}):
        assert repr(tt.nn.LayerNorm(4, **kwargs)) == repr(nn.LayerNorm(4, **kwargs))


# ----------------------------------------------------------------------------- torch models
class TorchBlock(nn.Module):
    """The same pre-norm block from torch.nn primitives (parameter names match ours)."""

    def __init__(self, d: int, h: int) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, h, batch_first=True)
        self.ln_2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(OrderedDict(fc=nn.Linear(d, 4 * d),
                                             gelu=nn.GELU(approximate="tanh"),
                                             proj=nn.Linear(4 * d, d)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t = x.shape[1]
        h = self.ln_1(x)
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        a, _ = self.attn(h, h, h, attn_mask=mask, need_weights=False, is_causal=True)
        x = x + a
        return x + self.mlp(self.ln_2(x))


class TorchGPT(nn.Module):
    """GPT from torch.nn primitives: nn.Embedding for tokens and positions, the blocks, ln_f and
    a bias-free head (state_dict keys equal ours)."""

    def __init__(self, v: int, ctx: int, d: int, n: int, h: int) -> None:
        super().__init__()
        self.tok_emb = nn.Embedding(v, d)
        self.pos_emb = nn.Embedding(ctx, d)
        self.blocks = nn.Sequential(*[TorchBlock(d, h) for _ in range(n)])
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, v, bias=False)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        x = self.tok_emb(idx) + self.pos_emb(torch.arange(idx.shape[1]))
        return self.head(self.ln_f(self.blocks(x)))


def _copy_into_torch(ours, theirs, dtype, rng, scale=0.3) -> None:
    """Random values (non-zero biases) into our parameters, and the same into torch's."""
    state = {}
    for name, p in ours.named_parameters():
        values = rng.standard_normal(p.shape) * scale
        if name.endswith("weight") and p.ndim == 1:
            values = 1.0 + values
        p.data = values.astype(dtype)
        state[name] = torch.from_numpy(p.data.copy())
    if dtype == np.float64:
        theirs.double()
    missing, unexpected = theirs.load_state_dict(state, strict=True)
    assert not missing and not unexpected


def _our_grads(module) -> dict:
    return {n: (None if p.grad is None else p.grad.numpy()) for n, p in module.named_parameters()}


def _their_grads(module) -> dict:
    return {n: p.grad.numpy() for n, p in module.named_parameters()}


TOL = {np.float32: (2e-4, 2e-5), np.float64: (1e-9, 1e-11)}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_mlp_matches_torch(dtype):
    rng = np.random.default_rng(1)
    ours = T.MLP(8)
    theirs = nn.Sequential(OrderedDict(fc=nn.Linear(8, 32), gelu=nn.GELU(approximate="tanh"),
                                       proj=nn.Linear(32, 8)))
    _copy_into_torch(ours, theirs, dtype, rng)
    _outputs_and_gradients_match(ours, theirs, (3, 5, 8), dtype, rng)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("d, h, t", [(8, 2, 5), (12, 3, 1), (16, 4, 9)])
def test_block_matches_torch(dtype, d, h, t):
    rng = np.random.default_rng(d + h + t)
    ours, theirs = T.TransformerBlock(d, h), TorchBlock(d, h)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    _copy_into_torch(ours, theirs, dtype, rng)
    _outputs_and_gradients_match(ours, theirs, (2, t, d), dtype, rng)


def _outputs_and_gradients_match(ours, theirs, shape, dtype, rng) -> None:
    """Both modules on one random input of ``shape``: equal outputs, and after a backward of
    one random output gradient, equal input and parameter gradients."""
    x = rng.standard_normal(shape).astype(dtype)
    xa, xb = tt.Tensor(x.copy(), requires_grad=True), torch.tensor(x, requires_grad=True)
    ya, yb = ours(xa), theirs(xb)
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(ya.numpy(), yb.detach().numpy(), rtol=rtol, atol=atol)
    g = rng.standard_normal(x.shape).astype(dtype)
    (ya * tt.Tensor(g)).sum().backward()
    (yb * torch.from_numpy(g)).sum().backward()
    np.testing.assert_allclose(xa.grad.numpy(), xb.grad.numpy(), rtol=rtol, atol=atol)
    _check_grads(_our_grads(ours), _their_grads(theirs), rtol, atol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gpt_logits_loss_and_every_gradient_match_torch(dtype):
    rng = np.random.default_rng(7)
    v, ctx, d, n, h = 65, 16, 32, 2, 4
    tt.manual_seed(0)
    ours, theirs = T.GPT(v, ctx, d, n, h), TorchGPT(v, ctx, d, n, h)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    _copy_into_torch(ours, theirs, dtype, rng)
    idx = rng.integers(0, v, size=(4, ctx))
    target = rng.integers(0, v, size=(4, ctx))
    la, lb = ours(tt.Tensor(idx)), theirs(torch.from_numpy(idx))
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(la.numpy(), lb.detach().numpy(), rtol=rtol, atol=atol)
    loss_a = tt.nn.functional.cross_entropy(la.reshape(-1, v), tt.Tensor(target.reshape(-1)))
    loss_b = torch.nn.functional.cross_entropy(lb.reshape(-1, v),
                                               torch.from_numpy(target.reshape(-1)))
    np.testing.assert_allclose(float(loss_a.item()), float(loss_b.item()), rtol=rtol)
    loss_a.backward()
    loss_b.backward()
    _check_grads(_our_grads(ours), _their_grads(theirs), rtol * 5, atol)
    short = rng.integers(0, v, size=(2, 5))
    np.testing.assert_allclose(ours(short).numpy(), theirs(torch.from_numpy(short)).detach().numpy(),
                               rtol=rtol, atol=atol)


def test_gpt_initialisation_statistics_match_nanogpt_recipe():
    """GPT-2's init as nanoGPT applies it (std 0.02, residual projections 0.02/sqrt(2L))."""
    tt.manual_seed(3)
    n_layers = 3
    gpt = T.GPT(500, 128, 64, n_layers, 4)
    params = dict(gpt.named_parameters())
    for name, p in params.items():
        a = p.numpy()
        if p.ndim == 2:
            want = 0.02 / np.sqrt(2 * n_layers) if name.endswith(
                ("out_proj.weight", "mlp.proj.weight")) else 0.02
            assert abs(a.std() - want) < 0.1 * want, (name, a.std(), want)
            assert abs(a.mean()) < 0.1 * want, name
        elif name.endswith("bias"):
            assert not a.any(), name
        else:
            assert np.array_equal(a, np.ones_like(a)), name


def test_greedy_generation_matches_a_torch_greedy_loop():
    rng = np.random.default_rng(11)
    v, ctx, d, n, h = 20, 6, 16, 2, 2
    ours, theirs = T.GPT(v, ctx, d, n, h), TorchGPT(v, ctx, d, n, h)
    _copy_into_torch(ours, theirs, np.float64, rng, scale=0.6)
    prompt = rng.integers(0, v, size=(3, 4))
    out = ours.generate(tt.Tensor(prompt), max_new_tokens=10, top_k=1).numpy()
    seq = torch.from_numpy(prompt)
    with torch.no_grad():
        for _ in range(10):
            logits = theirs(seq[:, -ctx:])[:, -1, :]
            seq = torch.cat([seq, logits.argmax(-1, keepdim=True)], dim=1)
    np.testing.assert_array_equal(out, seq.numpy())
