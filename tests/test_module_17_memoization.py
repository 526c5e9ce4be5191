"""Instructor tests for module 17 beyond the hidden suite: the KV cache plugs into module 13
without rebinding anything; on the benchmark GPT (the 2018 milestone's model) cached
generation gives exactly the uncached tokens, greedy and sampled, for one sequence and a batch;
the context-window policy (recompute the cropped window) does the work the docs say; the cache's
memory matches the formula; generation records no graph. No test here times anything."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import tinytorch_ref as tt
from coursekit import paths
from tinytorch_ref import memoization as M
from tinytorch_ref import transformers as T

BENCH = dict(vocab_size=65, context_length=160, d_model=64, n_layers=2, n_heads=4)


def test_importing_the_cache_rebinds_nothing_in_earlier_modules():
    """STYLE item 17: later features plug in; module 12/13 classes are the same objects with the
    same attributes before and after module 17 is imported (in a fresh interpreter)."""
    code = (
        "import tinytorch_ref.attention as A, tinytorch_ref.transformers as T, "
        "tinytorch_ref.layers as L\n"
        "classes = [A.MultiheadAttention, T.GPT, T.TransformerBlock, T.MLP, L.Module]\n"
        "before = [dict(vars(c)) for c in classes]\n"
        "import tinytorch_ref.memoization\n"
        "after = [dict(vars(c)) for c in classes]\n"
        "assert before == after, [set(a.items()) ^ set(b.items()) "
        "for a, b in zip(before, after)]\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=paths.REPO_ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


@pytest.fixture(scope="module")
def bench_gpt():
    tt.manual_seed(0)
    return T.GPT(**BENCH).eval()


@pytest.mark.parametrize("batch", [1, 4])
def test_benchmark_gpt_greedy_tokens_are_identical_for_128_new_tokens(bench_gpt, batch):
    prompt = np.random.default_rng(batch).integers(0, 65, size=(batch, 1))
    cached = M.CachedGPT(bench_gpt)
    want = bench_gpt.generate(prompt, 128, top_k=1).numpy()
    got = cached.generate(prompt, 128, top_k=1).numpy()
    np.testing.assert_array_equal(got, want)
    assert cached.positions_computed == 1 + 128 - 1  # each position runs once


def test_benchmark_gpt_sampled_tokens_are_identical_with_the_same_seed(bench_gpt):
    prompt = np.random.default_rng(9).integers(0, 65, size=(3, 5))
    cached = M.CachedGPT(bench_gpt)
    for temperature, top_k in [(1.0, None), (0.7, 10), (1.8, 3)]:
        tt.manual_seed(42)
        want = bench_gpt.generate(prompt, 60, temperature=temperature, top_k=top_k).numpy()
        tt.manual_seed(42)
        got = cached.generate(prompt, 60, temperature=temperature, top_k=top_k).numpy()
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("prompt_len, new", [(2, 20), (7, 6), (9, 15)])
def test_past_the_context_each_step_recomputes_the_cropped_window(prompt_len, new):
    """The documented policy: inside the context a position runs once; once the text is longer
    than context_length, every step recomputes the whole (slid) window — exactly what the
    uncached path feeds, so the tokens stay identical."""
    tt.manual_seed(3)
    ctx = 8
    gpt = T.GPT(vocab_size=11, context_length=ctx, d_model=16, n_layers=2, n_heads=2).eval()
    prompt = np.random.default_rng(prompt_len).integers(0, 11, size=(2, prompt_len))
    cached = M.CachedGPT(gpt)
    tt.manual_seed(1)
    want = gpt.generate(prompt, new, temperature=1.3).numpy()
    tt.manual_seed(1)
    got = cached.generate(prompt, new, temperature=1.3).numpy()
    np.testing.assert_array_equal(got, want)
    expected = min(prompt_len, ctx)  # step 1: the (cropped) prompt
    for step in range(2, new + 1):
        length = prompt_len + step - 1  # tokens before this step's forward
        expected += 1 if length <= ctx else ctx
    assert cached.positions_computed == expected
    assert all(layer.size <= ctx for layer in cached.cache.layers)


def test_cache_memory_matches_the_formula_and_the_arrays(bench_gpt):
    cache = M.GPTCache(bench_gpt, 8)
    arrays = sum(c.k_cache.nbytes + c.v_cache.nbytes for c in cache.layers)
    assert cache.nbytes == arrays == M.kv_cache_bytes(2, 8, 4, 160, 16) == 2 * 2 * 8 * 160 * 64 * 4
    assert len({id(c.k_cache) for c in cache.layers} | {id(c.v_cache) for c in cache.layers}) == 4


def test_cached_generation_records_no_graph_and_leaves_no_gradients(bench_gpt):
    cached = M.CachedGPT(bench_gpt)
    out = cached.generate(tt.Tensor([[1, 2]]), 5, top_k=1)
    assert out._node is None and not out.requires_grad and tt.is_grad_enabled()
    assert all(p.grad is None for p in bench_gpt.parameters())


def test_float64_model_gets_a_float64_cache_and_identical_tokens():
    tt.manual_seed(4)
    gpt = T.GPT(vocab_size=9, context_length=10, d_model=8, n_layers=1, n_heads=2).eval()
    for p in gpt.parameters():
        p.data = p.data.astype(np.float64) * 20.0  # sharp logits
    cached = M.CachedGPT(gpt)
    prompt = np.array([[1, 2, 3]])
    np.testing.assert_array_equal(cached.generate(prompt, 12, top_k=1).numpy(),
                                  gpt.generate(prompt, 12, top_k=1).numpy())
    assert cached.cache.layers[0].k_cache.dtype == np.float64


def test_a_refused_window_leaves_the_memo_consistent():
    tt.manual_seed(5)
    gpt = T.GPT(vocab_size=9, context_length=6, d_model=8, n_layers=2, n_heads=2).eval()
    cached = M.CachedGPT(gpt)
    seq = np.array([[1, 2, 3, 4, 5, 6, 7]])
    cached(seq[:, :4])
    with pytest.raises(ValueError):
        cached(seq)  # 7 positions > context 6: GPT.forward refuses
    out = cached(seq[:, :5])  # the kept prefix is still valid
    np.testing.assert_allclose(out.numpy()[:, -1], gpt(seq[:, :5]).numpy()[:, -1], atol=1e-5)
    assert cached.cache.offset == 5
