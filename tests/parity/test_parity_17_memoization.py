"""PyTorch parity · module 17 (memoization): attention through the KV cache (a prompt, then one
or a few tokens at a time) against torch.nn.MultiheadAttention over the whole causal sequence;
the cached GPT's logits against the module-13 torch twin's full forward pass; cached greedy
generation, inside and past the context window, against a greedy loop over the torch model;
the cache's bytes against torch buffers of torchtune's shape.

Module 17 adds no differentiable operation: the cache stores arrays (keys and values enter
attention as constants, as in torchtune's inference cache), so there is no backward to compare;
the new positions' path (projections, attention, out_proj) is module 12's, checked there.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from test_parity_13_transformers import TorchGPT, _copy_into_torch

import tinytorch_ref as tt
from tinytorch_ref import memoization as M
from tinytorch_ref import transformers as T

pytestmark = pytest.mark.parity
torch.set_num_threads(1)
TOL = {np.float32: (2e-5, 2e-6), np.float64: (1e-10, 1e-12)}


def _pair_mha(e: int, h: int, dtype, rng) -> tuple[tt.nn.MultiheadAttention,
                                                    torch.nn.MultiheadAttention]:
    ours = tt.nn.MultiheadAttention(e, h, batch_first=True)
    theirs = torch.nn.MultiheadAttention(e, h, batch_first=True)
    state = {}
    for name, p in ours.named_parameters():
        p.data = (rng.standard_normal(p.shape) * 0.4).astype(dtype)
        state[name] = torch.from_numpy(p.data.copy())
    if dtype == np.float64:
        theirs.double()
    theirs.load_state_dict(state, strict=True)
    return ours, theirs


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("chunks", [(5, 1, 1, 1), (1, 1, 1, 1, 1, 1), (3, 2, 1, 3), (8,)])
def test_cached_attention_equals_torch_causal_attention(dtype, chunks):
    rng = np.random.default_rng(sum(chunks))
    e, h, b, t = 12, 3, 2, sum(chunks)
    ours, theirs = _pair_mha(e, h, dtype, rng)
    x = rng.standard_normal((b, t, e)).astype(dtype)
    cache = M.KVCache(b, t, h, e // h, dtype=dtype)
    parts, start = [], 0
    for s in chunks:
        parts.append(cache(ours, tt.Tensor(x[:, start:start + s])).numpy())
        start += s
    mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
    xt = torch.from_numpy(x)
    with torch.no_grad():
        want, _ = theirs(xt, xt, xt, attn_mask=mask, need_weights=False, is_causal=True)
    got = np.concatenate(parts, axis=1)
    assert got.dtype == dtype
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(got, want.numpy(), rtol=rtol * 10, atol=atol * 10)
    # The cached keys are torch's projected keys, head by head.
    with torch.no_grad():
        k = torch.nn.functional.linear(xt, theirs.in_proj_weight[e:2 * e],
                                       theirs.in_proj_bias[e:2 * e])
    k = k.reshape(b, t, h, e // h).transpose(1, 2).numpy()
    np.testing.assert_allclose(cache.k_cache[:, :, :t], k, rtol=rtol * 10, atol=atol * 10)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_incremental_gpt_logits_equal_the_torch_full_forward(dtype):
    rng = np.random.default_rng(5)
    v, ctx, d, n, h = 17, 9, 16, 2, 4
    ours, theirs = T.GPT(v, ctx, d, n, h), TorchGPT(v, ctx, d, n, h)
    _copy_into_torch(ours, theirs, dtype, rng, scale=0.4)
    idx = rng.integers(0, v, size=(3, ctx))
    cache = M.GPTCache(ours, 3)
    parts = [ours(idx[:, :4], cache=cache).numpy()]
    parts += [ours(idx[:, i:i + 1], cache=cache).numpy() for i in range(4, ctx)]
    with torch.no_grad():
        want = theirs(torch.from_numpy(idx)).numpy()
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(np.concatenate(parts, axis=1), want, rtol=rtol * 50,
                               atol=atol * 50)


def test_cached_greedy_generation_matches_a_torch_greedy_loop_past_the_context():
    rng = np.random.default_rng(12)
    v, ctx, d, n, h = 20, 7, 16, 2, 2
    ours, theirs = T.GPT(v, ctx, d, n, h), TorchGPT(v, ctx, d, n, h)
    _copy_into_torch(ours, theirs, np.float64, rng, scale=0.6)
    prompt = rng.integers(0, v, size=(3, 3))
    cached = M.CachedGPT(ours)
    out = cached.generate(tt.Tensor(prompt), max_new_tokens=12, top_k=1).numpy()
    seq = torch.from_numpy(prompt)
    with torch.no_grad():
        for _ in range(12):
            logits = theirs(seq[:, -ctx:])[:, -1, :]
            seq = torch.cat([seq, logits.argmax(-1, keepdim=True)], dim=1)
    np.testing.assert_array_equal(out, seq.numpy())


@pytest.mark.parametrize("dtype, torch_dtype", [(np.float32, torch.float32),
                                                (np.float64, torch.float64),
                                                (np.float16, torch.float16)])
def test_cache_bytes_equal_torch_buffers_of_torchtunes_shape(dtype, torch_dtype):
    layers, b, h, t, hs = 3, 2, 4, 11, 8
    buffers = [torch.zeros((b, h, t, hs), dtype=torch_dtype) for _ in range(2 * layers)]
    want = sum(x.element_size() * x.numel() for x in buffers)
    assert M.kv_cache_bytes(layers, b, h, t, hs, dtype) == want
    assert M.KVCache(b, t, h, hs, dtype).nbytes * layers == want
