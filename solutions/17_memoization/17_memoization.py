# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Module 17 · Memoization (KV cache)
#
# Your GPT of module 13 writes one token per step, and every step runs the whole model over
# the whole text so far, although only the last position is new. The keys and values of the
# earlier positions come out the same every time: recomputing them is pure waste. **Memoization**
# — remembering the result of a computation for inputs seen before — removes it. For a
# transformer the memo is the **KV cache**: each attention layer keeps the keys and values of
# the positions it has already seen, and a new token only computes its own and attends over
# the stored ones. It is what makes every production language model fast enough to talk to.
# In this module you build it on top of modules 12 and 13 *without changing them* (module 13's
# blocks already accept a `cache`), prove that it produces exactly the tokens of the uncached
# `generate`, compute its memory, and measure its speed-up against the sequence length.
#
# ## Learning objectives
#
# By the end of this module you can:
#
# 1. explain why autoregressive generation repeats work, and count it: `O(T)` positions per
#    step through the projections and MLPs, `O(T²)` attention scores;
# 2. build a preallocated per-layer **`KVCache`** (torchtune's names: `k_cache`, `v_cache`,
#    `update`, `reset`, `size`) and compute its memory,
#    `2 · layers · B · heads · T · head_dim · bytes`;
# 3. attend from new positions over cached keys with the right **mask and positions**, reusing
#    module 12's projections and module 11's position `offset`;
# 4. wrap a GPT in a **prefix-keyed cache** (`CachedGPT`) that generates *exactly* the tokens
#    of the uncached path — greedy and sampled — and handles the context-window crop;
# 5. **measure** the speed-up against the number of new tokens and the batch size, and explain
#    the shape of the curve with the per-step cost model (Amdahl's law).
#
# ## How to work through this notebook
#
# Fill in every function that raises `NotImplementedError` (docstrings give what / APPROACH /
# EXAMPLE / HINT) and run each `grader.check(...)`. Cells starting with `#| export` become
# `tinytorch/memoization.py` (`python export.py 17`). Modules 01–14 are imported from your
# package (module 14's `compare` times the experiment).

# %%
import numpy as np

from tinytorch.profiling import compare  # module 14: paired timing for the experiment

# %% [markdown]
# ## 1. Where generation wastes its time
#
# `GPT.generate` (module 13) feeds the whole window at every step and keeps only the logits of
# its last position:
#
# ```
#   step 1:  forward([t0 t1 t2])          -> logits of t2's position -> sample t3
#   step 2:  forward([t0 t1 t2 t3])       -> logits of t3's position -> sample t4
#   step 3:  forward([t0 t1 t2 t3 t4])    -> ...
#            ^^^^^^^^^^^^ recomputed at every step, with the same result every time
# ```
#
# Why the same result? Attention is **causal**: position `i` only looks at positions `≤ i`, so
# nothing a later token does changes the hidden state of an earlier position — in any layer.
# In particular each layer's keys `k_i = W_k · x_i` and values `v_i = W_v · x_i` of the old
# positions are fixed once computed. A new position needs from the past *only those keys and
# values*:
#
# ```
#   new token at position p:       q_p, k_p, v_p = projections of x_p        (B, h, 1, hs) each
#   keys of positions 0..p:        K = [k_0 ... k_{p-1} | k_p]               (B, h, p+1, hs)
#                                       \___ cached ___/  new
#   attention output:              softmax(q_p Kᵀ / √hs) V                   (B, h, 1, hs)
# ```
#
# **Cost per step** for a window of `T` tokens, model width `C`, `L` layers:
#
# | | uncached step | cached step |
# |---|---|---|
# | projections + MLP (`~12C²` multiply-adds per position and layer) | `T` positions | 1 position |
# | attention scores and weighted sum | `T × T` per head | `1 × T` per head |
# | memory read | the weights | the weights + the cache (`2·L·T·C` numbers per sequence) |
#
# Over `n` new tokens the uncached path processes `~n²/2` positions, the cached one `n`. That
# is the arithmetic. Whether the *time* follows it depends on what else a step costs — the
# experiment in section 6 measures it.

# %% [markdown]
# ## 2. The cache of one layer
#
# One attention layer's cache holds two arrays, **preallocated** once at their largest size so
# that a step never allocates or copies the past:
#
# ```
#   k_cache, v_cache:   (B, h, T_max, hs)      zeros at first; size = 0
#
#   update(k, v) with k, v of (B, h, S, hs):   write them at positions size .. size+S-1
#                                              size += S
#                                              return k_cache[:, :, :size], v_cache[:, :, :size]
#
#   positions:   0   1   2   3   4   5   ...   T_max-1
#   k_cache:   [k0  k1  k2 | .   .   .   ...   .      ]     size = 3
#                            ^ the next update writes here
# ```
#
# The names are torchtune's (`torchtune.modules.KVCache(batch_size, max_seq_len, num_kv_heads,
# head_dim, dtype)`), the PyTorch library for language models. Two more operations:
# `reset()` empties the cache (`size = 0`: the old numbers are simply overwritten later) and
# `crop(n)` keeps only the first `n` positions (Hugging Face's `DynamicCache.crop`), which you
# need when a cached prefix stops matching.
#
# **Memory.** Two arrays per layer, so for a model of `L` layers:
#
# $$\text{bytes} = 2 \cdot L \cdot B \cdot h \cdot T \cdot h_s \cdot \text{bytes per number}
#   = 2 \cdot L \cdot B \cdot T \cdot C \cdot \text{bytes per number}$$
#
# It grows linearly with the batch and the sequence length, and it does not depend on how the
# width is split into heads.

# %%
#| export
"""Module 17 · Memoization (KV cache) — depends on: tensor, layers, attention, transformers;
used by: benchmarking and the 2018 milestone.

``KVCache`` (one attention layer's keys and values, preallocated; torchtune's names) plugs into
module 13's ``TransformerBlock(x, cache)``; ``GPTCache`` holds one per block for
``GPT.forward(idx, cache)``; ``CachedGPT`` wraps a GPT in a cache keyed by the token prefix and
generates exactly the tokens of ``GPT.generate``. ``kv_cache_bytes`` is the memory formula.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tinytorch.attention import MultiheadAttention, _ScaledDotProductAttentionFn
from tinytorch.layers import Linear, Module, _LinearFn
from tinytorch.tensor import Context, Tensor, manual_seed  # noqa: F401 - for the examples
from tinytorch.transformers import GPT


def kv_cache_bytes(n_layers: int, batch_size: int, num_heads: int, seq_len: int,
                   head_dim: int, dtype: Any = np.float32) -> int:
    """Bytes of a KV cache: ``2 · n_layers · batch_size · num_heads · seq_len · head_dim ·
    itemsize`` (keys and values of every layer, head and position).

    Args:
        n_layers: attention layers (one cache each).
        batch_size: sequences generated together (``B``).
        num_heads: heads per layer (``h``); head_dim: numbers per head (``hs``).
        seq_len: positions stored (``T``).
        dtype: the cache's NumPy dtype (float32: 4 bytes a number).

    Returns:
        A Python ``int``.

    APPROACH: ``np.dtype(dtype).itemsize`` is the number of bytes of one number; multiply it
    with the 2 (keys and values) and the five sizes; return ``int(...)``.

    EXAMPLE:
        >>> kv_cache_bytes(n_layers=2, batch_size=1, num_heads=4, seq_len=160, head_dim=16)
        163840
        >>> kv_cache_bytes(2, 1, 4, 160, 16, np.float64)
        327680

    HINT: the benchmark GPT (2 layers, C = 64, context 160) needs 160 kB per sequence — GPT-2
    small at its 1,024 positions needs 2·12·1024·768·4 B ≈ 75 MB per sequence.
    """
    # BEGIN SOLUTION NO PROMPT
    itemsize = np.dtype(dtype).itemsize
    return int(2 * n_layers * batch_size * num_heads * seq_len * head_dim * itemsize)
    # END SOLUTION
    raise NotImplementedError("module 17: implement kv_cache_bytes (see its docstring)")  # STUB


def _as_array(x: Any) -> np.ndarray:
    return x.data if isinstance(x, Tensor) else np.asarray(x)


class KVCache:
    """The keys and values of one attention layer, in preallocated arrays (torchtune's API).

    Args:
        batch_size: ``B``; max_seq_len: ``T_max``, the most positions it can hold;
        num_kv_heads: ``h``; head_dim: ``hs``; dtype: of the arrays (float32 by default).

    Attributes:
        k_cache, v_cache: ``(B, h, T_max, hs)`` arrays; positions ``0 .. size - 1`` are filled.
        size: how many positions are filled.

    Called as ``cache(attn, h)`` it is module 13's per-layer plug-in: the attention output of
    the new positions ``h (B, T_new, C)`` over everything cached (section 3).
    """

    def __init__(self, batch_size: int, max_seq_len: int, num_kv_heads: int, head_dim: int,
                 dtype: Any = np.float32) -> None:
        """Store the sizes and allocate both arrays once, empty (``size = 0``).

        APPROACH:
            1. Store ``batch_size``, ``max_seq_len``, ``num_kv_heads``, ``head_dim`` as
               attributes of those names.
            2. ``shape = (batch_size, num_kv_heads, max_seq_len, head_dim)``;
               ``self.k_cache = np.zeros(shape, dtype=dtype)``, the same for ``v_cache``.
            3. ``self.size = 0``.

        EXAMPLE:
            >>> cache = KVCache(batch_size=2, max_seq_len=16, num_kv_heads=4, head_dim=8)
            >>> cache.k_cache.shape, cache.v_cache.dtype, cache.size
            ((2, 4, 16, 8), dtype('float32'), 0)

        HINT: two separate arrays — ``v_cache = k_cache`` would make keys and values one
        buffer, and every value written would overwrite the key of the same position.
        """
        # BEGIN SOLUTION NO PROMPT
        self.batch_size = batch_size
        self.max_seq_len = max_seq_len
        self.num_kv_heads = num_kv_heads
        self.head_dim = head_dim
        shape = (batch_size, num_kv_heads, max_seq_len, head_dim)
        self.k_cache = np.zeros(shape, dtype=dtype)
        self.v_cache = np.zeros(shape, dtype=dtype)
        self.size = 0
        # END SOLUTION
        raise NotImplementedError("module 17: implement KVCache.__init__ (see its docstring)")  # STUB

    @property
    def nbytes(self) -> int:
        """Bytes held by the two arrays (provided)."""
        return int(self.k_cache.nbytes + self.v_cache.nbytes)

    def update(self, k_val: Any, v_val: Any) -> tuple[Tensor, Tensor]:
        """Append the keys and values of ``S`` new positions; return everything cached.

        Args:
            k_val, v_val: Tensors (or arrays) of shape ``(B, h, S, hs)`` — the cache's ``B``,
                ``h`` and ``hs``, any ``S >= 1``.

        Returns:
            ``(keys, values)``: Tensors of shape ``(B, h, size, hs)`` (the new ``size``), views
            of ``k_cache[:, :, :size]`` and ``v_cache[:, :, :size]`` (no copy).

        Raises:
            ValueError: a shape that does not fit (the message names it and the expected
                ``(B, h, S, hs)``), or ``size + S > max_seq_len`` (the cache is full).

        APPROACH:
            1. ``k, v = _as_array(k_val), _as_array(v_val)`` (given: a Tensor's ``.data``).
            2. Check ``k.shape == v.shape``, ``k.ndim == 4`` and ``(B, h, hs)`` =
               ``(k.shape[0], k.shape[1], k.shape[3])`` against the cache's; raise
               ``ValueError`` otherwise.
            3. ``start, stop = self.size, self.size + k.shape[2]``; ``stop > max_seq_len``:
               raise ``ValueError`` naming both numbers.
            4. ``self.k_cache[:, :, start:stop] = k`` (the same for ``v``); ``self.size = stop``.
            5. Return ``Tensor(self.k_cache[:, :, :stop]), Tensor(self.v_cache[:, :, :stop])``.

        EXAMPLE:
            >>> cache = KVCache(1, 8, 2, 4)
            >>> keys, values = cache.update(np.ones((1, 2, 3, 4)), np.zeros((1, 2, 3, 4)))
            >>> keys.shape, cache.size
            ((1, 2, 3, 4), 3)
            >>> keys, values = cache.update(np.full((1, 2, 1, 4), 2.0), np.ones((1, 2, 1, 4)))
            >>> keys.shape, keys.numpy()[0, 0, :, 0].tolist(), cache.size
            ((1, 2, 4, 4), [1.0, 1.0, 1.0, 2.0], 4)

        HINT: slicing a NumPy array makes a view, so the returned keys cost nothing; they stay
        valid until the cache is cropped and written over. The cache's dtype wins when you
        assign into it (float64 keys into a float32 cache are rounded to float32). The cache
        holds plain arrays: gradients do not flow into cached keys — it is an inference tool,
        and ``generate`` runs under ``no_grad``.
        """
        # BEGIN SOLUTION NO PROMPT
        k, v = _as_array(k_val), _as_array(v_val)
        expected = (self.batch_size, self.num_kv_heads, self.head_dim)
        if k.shape != v.shape or k.ndim != 4 or (k.shape[0], k.shape[1], k.shape[3]) != expected:
            raise ValueError(f"KVCache.update: keys {k.shape} and values {v.shape} must both be "
                             f"(B, h, S, hs) = ({expected[0]}, {expected[1]}, S, {expected[2]})")
        start, stop = self.size, self.size + k.shape[2]
        if stop > self.max_seq_len:
            raise ValueError(f"KVCache.update: {stop} positions do not fit, the cache holds "
                             f"max_seq_len={self.max_seq_len}")
        self.k_cache[:, :, start:stop] = k
        self.v_cache[:, :, start:stop] = v
        self.size = stop
        return Tensor(self.k_cache[:, :, :stop]), Tensor(self.v_cache[:, :, :stop])
        # END SOLUTION
        raise NotImplementedError("module 17: implement KVCache.update (see its docstring)")  # STUB

    def reset(self) -> None:
        """Forget every position (provided): ``size = 0``; later updates overwrite the arrays.

        (torchtune also zeroes the buffers; nothing here reads past ``size``, so we skip it.)
        """
        self.size = 0

    def crop(self, length: int) -> None:
        """Keep only the first ``length`` positions (Hugging Face's ``DynamicCache.crop``).

        Raises:
            ValueError: ``length`` is negative or more than ``size`` (a cache cannot grow by
                cropping).

        APPROACH: check ``0 <= length <= self.size`` (else ``ValueError`` naming both);
        ``self.size = length``.

        EXAMPLE:
            >>> cache = KVCache(1, 8, 1, 2); _ = cache.update(np.ones((1, 1, 5, 2)), np.ones((1, 1, 5, 2)))
            >>> cache.crop(2); cache.size
            2

        HINT: nothing is erased: positions ``length ..`` are written over by the next update.
        """
        # BEGIN SOLUTION NO PROMPT
        if not 0 <= length <= self.size:
            raise ValueError(f"KVCache.crop: length {length} must be between 0 and the cached "
                             f"size {self.size}")
        self.size = length
        # END SOLUTION
        raise NotImplementedError("module 17: implement KVCache.crop (see its docstring)")  # STUB

    def __call__(self, attn: MultiheadAttention, h: Tensor) -> Tensor:
        """Module 13's per-layer plug-in (provided): ``cached_attention(self, attn, h)``."""
        return cached_attention(self, attn, h)

    def __repr__(self) -> str:
        return (f"KVCache(batch_size={self.batch_size}, max_seq_len={self.max_seq_len}, "
                f"num_kv_heads={self.num_kv_heads}, head_dim={self.head_dim}, "
                f"dtype={self.k_cache.dtype}, size={self.size})")

# %% [raw]
# # BEGIN QUESTION
# name: kv_cache
# points: 0

# %% [markdown]
# ### Check: one layer's cache — allocation, appends, crop, memory

# %% [raw]
# # BEGIN TESTS

# %%
def test_kv_cache_bytes_is_the_formula(kv_cache_bytes, np):
    got = kv_cache_bytes(2, 3, 4, 5, 6)
    assert got == 2 * 2 * 3 * 4 * 5 * 6 * 4, (
        f"2 (keys and values) x layers x B x heads x T x head_dim x 4 bytes for float32 = "
        f"{2 * 2 * 3 * 4 * 5 * 6 * 4}, got {got}")
    got = kv_cache_bytes(1, 2, 3, 6, 4, np.float64)
    assert got == 2 * 1 * 2 * 3 * 6 * 4 * 8, (
        f"a float64 cache takes 8 bytes a number: expected {2 * 2 * 3 * 6 * 4 * 8}, got {got}")
    assert isinstance(got, int), f"a Python int, got {type(got).__name__}"


# %%
def test_kv_cache_allocates_two_empty_arrays(KVCache, kv_cache_bytes, np):
    cache = KVCache(batch_size=2, max_seq_len=6, num_kv_heads=3, head_dim=4)
    assert cache.k_cache.shape == (2, 3, 6, 4) and cache.v_cache.shape == (2, 3, 6, 4), (
        f"k_cache and v_cache are (B, h, T_max, hs) = (2, 3, 6, 4); got {cache.k_cache.shape}")
    assert cache.k_cache.dtype == np.float32 and cache.size == 0, (
        f"float32 by default and empty at first; got {cache.k_cache.dtype}, size {cache.size}")
    assert cache.k_cache is not cache.v_cache and not np.shares_memory(
        cache.k_cache, cache.v_cache), (
        f"keys and values need two separate arrays, got the same buffer "
        f"(id {id(cache.k_cache)} twice): writing values would overwrite keys")
    got = (cache.batch_size, cache.max_seq_len, cache.num_kv_heads, cache.head_dim)
    assert got == (2, 6, 3, 4), (
        f"the sizes are kept as attributes (update checks against them); got {got}")
    wide = KVCache(1, 5, 2, 3, dtype=np.float64)
    assert wide.v_cache.dtype == np.float64, (
        f"dtype= sets both arrays' dtype: expected float64, got {wide.v_cache.dtype}")
    assert kv_cache_bytes(1, 2, 3, 6, 4) == cache.nbytes, (
        f"the formula must match the arrays: {kv_cache_bytes(1, 2, 3, 6, 4)} vs {cache.nbytes}")


# %%
def test_kv_cache_update_appends_views(KVCache, np):
    cache = KVCache(batch_size=2, max_seq_len=6, num_kv_heads=3, head_dim=4)
    rng = np.random.default_rng(0)
    k1, v1 = rng.standard_normal((2, 3, 4, 4)), rng.standard_normal((2, 3, 4, 4))
    keys, values = cache.update(k1, v1)
    assert keys.shape == (2, 3, 4, 4) and cache.size == 4, (
        f"4 positions in: keys (2, 3, 4, 4) and size 4; got {keys.shape}, size {cache.size}")
    k2, v2 = rng.standard_normal((2, 3, 1, 4)), rng.standard_normal((2, 3, 1, 4))
    keys, values = cache.update(k2, v2)
    want = np.concatenate([k1, k2], axis=2).astype(np.float32)
    assert keys.shape == (2, 3, 5, 4) and np.allclose(keys.numpy(), want), (
        f"a second update appends after the first: keys must be the 5 positions in order, "
        f"shape (2, 3, 5, 4); got shape {keys.shape}"
        + (f", max error {np.abs(keys.numpy() - want).max():.3g}"
           if keys.shape == want.shape else ""))
    vwant = np.concatenate([v1, v2], axis=2)
    assert values.shape == vwant.shape and np.allclose(values.numpy(), vwant), (
        f"values are appended exactly like keys (into v_cache): expected shape {vwant.shape}, "
        f"got {values.shape}" + (f", max error {np.abs(values.numpy() - vwant).max():.3g}"
                                 if values.shape == vwant.shape else ""))
    assert np.shares_memory(keys.numpy(), cache.k_cache), (
        f"expected a view of k_cache[:, :, :size], got a copy (base "
        f"{type(keys.numpy().base).__name__}): copying the past at every step makes "
        "generation quadratic again")
    for bad in [(np.ones((2, 3, 2, 4)), np.ones((2, 3, 2, 4))),  # 5 + 2 > 6 positions
                (np.ones((2, 2, 1, 4)), np.ones((2, 2, 1, 4)))]:  # wrong number of heads
        try:
            cache.update(*bad)
        except ValueError:
            pass
        else:
            raise AssertionError(f"update with keys {bad[0].shape} into a (2, 3, 6, 4) cache of "
                                 "size 5 must raise ValueError")
    assert cache.size == 5, f"a refused update changes nothing: size 5, got {cache.size}"


# %%
def test_kv_cache_crop_keeps_a_prefix(KVCache, np):
    cache = KVCache(batch_size=1, max_seq_len=6, num_kv_heads=2, head_dim=3)
    rng = np.random.default_rng(1)
    k1 = rng.standard_normal((1, 2, 5, 3))
    cache.update(k1, k1)
    cache.crop(2)
    assert cache.size == 2, f"crop(2) keeps 2 positions; size is {cache.size}"
    k2 = rng.standard_normal((1, 2, 1, 3))
    keys, _ = cache.update(k2, k2)
    assert keys.shape == (1, 2, 3, 3) and np.allclose(keys.numpy()[:, :, 2], k2[:, :, 0]), (
        f"after crop(2) the next update writes at position 2: expected 3 positions with the new "
        f"key last, got {keys.shape[2]} positions")
    kept = float(np.abs(keys.numpy()[:, :, :2] - k1[:, :, :2]).max())
    assert kept < 1e-6, (
        f"crop keeps the first positions as they were: positions 0 and 1 changed by up to "
        f"{kept:.3g}")
    for bad in (4, -1):
        try:
            cache.crop(bad)
        except ValueError:
            pass
        else:
            raise AssertionError(f"crop({bad}) of a cache holding 3 positions must raise "
                                 "ValueError (a cache cannot grow by cropping)")
    cache.crop(0)
    assert cache.size == 0, f"crop(0) empties the cache; size is {cache.size}"

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 3. Attention against the cache
#
# Module 13's `TransformerBlock.forward(x, cache)` calls `cache(self.attn, h)` with the block's
# `MultiheadAttention` and the normalised new positions `h (B, T_new, C)`, and expects the
# attention output `(B, T_new, C)`. Your `KVCache.__call__` does what
# `MultiheadAttention.forward` does, except that the keys and values come from the cache:
#
# ```
#   h (B, T_new, C)
#     │ attn._in_projection(h, h, h, packed=True)     one matmul with the packed weight
#     ▼
#   q, k, v (B, T_new, C) ── split_heads ──► (B, h, T_new, hs) each
#                                   │ k, v
#                                   ▼
#                       keys, values = self.update(k, v)         (B, h, past + T_new, hs)
#                                   │
#   scaled_dot_product_attention(q, keys, values, attn_mask)     (B, h, T_new, hs)
#     │ merge_heads, attn.out_proj
#     ▼
#   (B, T_new, C)
# ```
#
# You write it as the function `cached_attention(cache, attn, h)`; `KVCache.__call__` (given)
# calls it.
#
# **The mask.** Query `i` of the new block sits at absolute position `past + i`; it may see
# every key `j ≤ past + i` — all the cached ones and the new ones up to itself:
#
# ```
#   past = 3, T_new = 2       keys:  0  1  2 | 3  4
#   query 0 (position 3)             ✓  ✓  ✓ | ✓  ✗
#   query 1 (position 4)             ✓  ✓  ✓ | ✓  ✓
# ```
#
# With `past = 0` this is the ordinary causal mask (a prompt, "prefill"); with `T_new = 1` every
# key is allowed (one generated token, "decode"). `scaled_dot_product_attention` takes a boolean
# mask with **True = may attend** (module 12's convention for SDPA, the opposite of
# `MultiheadAttention`'s). Note what the `(T_new, past + T_new)` mask is not: `is_causal=True`
# would build a square top-left triangle, right only when `past = 0`.
#
# **The positions.** The new tokens' position embeddings must be those of positions
# `past ..`, not `0 ..`: module 13's `GPT.forward` reads `cache.offset` and passes it to module
# 11's positional embedding. Your cache only has to report how many positions it holds.
#
# **Speed: inference skips the graph.** A generated token runs a few dozen operations on rows of
# 64 numbers. Each `Tensor` operation pays a few microseconds of Python bookkeeping — argument
# checks, a new `Tensor`, a `Context`, a recorded node — and for a one-token step that
# bookkeeping costs more than the arithmetic. The cache is an inference tool: nothing trains
# through it (keys and values are stored arrays), so `cached_attention` records no graph and
# works on the arrays themselves. It runs the very code the tensor operations would run, by
# calling the `forward` of module 03's `_LinearFn` and of module 12's
# `_ScaledDotProductAttentionFn` directly on arrays (as module 12's attention calls its softmax's
# `forward`), and cuts the packed projection into the heads of q, k and v with one reshape and
# one transpose: `(B, T, 3C) -> (B, T, 3, h, hs) -> (3, B, h, T, hs)`. One new query may see
# every cached key and itself, so decoding needs no mask at all. Section 6's experiment
# measures the cache's speed-up; PyTorch's inference engines go further and compile the step.

# %%
#| export
def cached_causal_mask(query_len: int, past_len: int) -> np.ndarray:
    """Which keys each new query may see: ``(query_len, past_len + query_len)`` booleans,
    True where key ``j <= past_len + i`` for query ``i`` (SDPA's "may attend" convention).

    APPROACH: ``np.arange(past_len + query_len)[None, :] <= (past_len +
    np.arange(query_len))[:, None]`` — a row of key positions against a column of query
    positions, compared by broadcasting.

    EXAMPLE:
        >>> cached_causal_mask(2, 3).astype(int)
        array([[1, 1, 1, 1, 0],
               [1, 1, 1, 1, 1]])
        >>> cached_causal_mask(3, 0).astype(int)
        array([[1, 0, 0],
               [1, 1, 0],
               [1, 1, 1]])

    HINT: a query always sees itself (``j = past + i``): use ``<=``, not ``<``.
    """
    # BEGIN SOLUTION NO PROMPT
    keys = np.arange(past_len + query_len)[None, :]  # (1, S)
    queries = past_len + np.arange(query_len)[:, None]  # (L, 1): absolute positions
    return keys <= queries  # (L, S)
    # END SOLUTION
    raise NotImplementedError("module 17: implement cached_causal_mask (see its docstring)")  # STUB


def _data(t: Tensor | None) -> np.ndarray | None:
    """A Tensor's array, or None for None (provided: an optional bias)."""
    return None if t is None else t.data


def cached_attention(cache: KVCache, attn: MultiheadAttention, h: Tensor) -> Tensor:
    """Attention of the new positions ``h (B, T_new, C)`` over every position in ``cache`` and
    themselves; appends their keys and values to ``cache``. Returns ``(B, T_new, C)``.

    ``KVCache.__call__`` is this function: module 13's ``TransformerBlock.forward(x, cache)``
    calls ``cache(self.attn, h)`` with its ``MultiheadAttention`` (``batch_first=True``).

    APPROACH (on arrays, no graph: see the speed note above):
        1. ``x = h.data``; ``b, t, c = x.shape``; ``heads = attn.num_heads``;
           ``hs = c // heads``; ``_data(t)`` (given) is a Tensor's array, or None for None.
        2. ``qkv = _LinearFn.forward(Context(), x, attn.in_proj_weight.data,
           _data(attn.in_proj_bias))`` — ``(B, T_new, 3C)``, module 03's one product.
        3. ``q, k, v = qkv.reshape(b, t, 3, heads, hs).transpose(2, 0, 3, 1, 4)`` — each
           ``(B, h, T_new, hs)``: ``split_heads`` of all three at once.
        4. ``past = cache.size``; ``keys, values = cache.update(k, v)`` -> ``(B, h, past +
           T_new, hs)`` Tensors (their ``.data`` are views of the cache).
        5. ``bias = None`` when ``t == 1`` (one new query may see every key, itself
           included), else the additive form of ``cached_causal_mask(t, past)``:
           ``np.where(allowed, 0.0, -np.inf).astype(x.dtype)`` (0 where a key may be seen,
           ``-inf`` where not, as module 12's ``mask_to_bias``); dropout
           ``p = attn.dropout if attn.training else 0.0``.
        6. ``out = _ScaledDotProductAttentionFn.forward(Context(), q, keys.data,
           values.data, bias=bias, scale=1.0 / math.sqrt(hs), dropout_p=p)`` —
           ``(B, h, T_new, hs)``.
        7. ``merged = out.transpose(0, 2, 1, 3).reshape(b, t, c)`` (``merge_heads``); when
           ``type(attn.out_proj) is Linear``, return ``Tensor(_LinearFn.forward(Context(),
           merged, attn.out_proj.weight.data, _data(attn.out_proj.bias)))`` —
           ``(B, T_new, C)``; any other projection (module 20 swaps in INT8 layers that have
           no ``weight``) runs as itself: ``attn.out_proj(Tensor(merged))``.

    EXAMPLE:
        >>> manual_seed(0); mha = MultiheadAttention(8, 2, batch_first=True)
        >>> x = Tensor(np.random.default_rng(0).standard_normal((1, 5, 8)).astype(np.float32))
        >>> cache = KVCache(1, 5, 2, 4)
        >>> parts = [cache(mha, x[:, :3]), cache(mha, x[:, 3:4]), cache(mha, x[:, 4:5])]
        >>> full, _ = mha(x, x, x, attn_mask=np.triu(np.ones((5, 5), bool), 1))
        >>> bool(np.allclose(np.concatenate([p.numpy() for p in parts], 1), full.numpy(), atol=1e-6))
        True

    HINT: update the cache *before* attending: a new position must see its own key. The
    same code with tensor operations (``attn._in_projection(h, h, h, True)``, ``split_heads``,
    ``scaled_dot_product_attention``, ``merge_heads``, ``attn.out_proj``) gives the same
    numbers, several times slower per token. Generation adds one token per step, so step 5's
    ``None`` is the common case: no mask to build or add.
    """
    # BEGIN SOLUTION NO PROMPT
    x = h.data
    b, t, c = x.shape
    heads = attn.num_heads
    hs = c // heads
    qkv = _LinearFn.forward(Context(), x, attn.in_proj_weight.data,
                            _data(attn.in_proj_bias))  # (B, T_new, 3C)
    q, k, v = qkv.reshape(b, t, 3, heads, hs).transpose(2, 0, 3, 1, 4)  # (B, h, T_new, hs)
    past = cache.size
    keys, values = cache.update(k, v)  # (B, h, past + T_new, hs)
    allowed = None if t == 1 else cached_causal_mask(t, past)  # (T_new, past + T_new)
    bias = None if allowed is None else np.where(allowed, 0.0, -np.inf).astype(x.dtype)
    p = attn.dropout if attn.training else 0.0
    out = _ScaledDotProductAttentionFn.forward(Context(), q, keys.data, values.data, bias=bias,
                                               scale=1.0 / math.sqrt(hs), dropout_p=p)
    merged = out.transpose(0, 2, 1, 3).reshape(b, t, c)  # (B, T_new, C)
    if type(attn.out_proj) is not Linear:  # a replaced projection (module 20's INT8 layers)
        return attn.out_proj(Tensor(merged))
    return Tensor(_LinearFn.forward(Context(), merged, attn.out_proj.weight.data,
                                    _data(attn.out_proj.bias)))
    # END SOLUTION
    raise NotImplementedError("module 17: implement cached_attention (see its docstring)")  # STUB

# %% [raw]
# # BEGIN QUESTION
# name: cached_attention
# points: 0

# %% [markdown]
# ### Check: a prompt, then one token at a time, equals full causal attention

# %% [raw]
# # BEGIN TESTS

# %%
def test_cached_causal_mask_sees_the_past_and_itself(cached_causal_mask, np):
    mask = cached_causal_mask(2, 3)
    assert mask.shape == (2, 5) and mask.dtype == bool, (
        f"(query_len, past + query_len) booleans; got {mask.shape} {mask.dtype}")
    assert mask.astype(int).tolist() == [[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]], (
        f"query i (position past + i) sees keys j <= past + i; got {mask.astype(int).tolist()}")
    got = np.asarray(cached_causal_mask(4, 0))
    assert np.array_equal(got, np.tril(np.ones((4, 4), bool))), (
        f"with nothing cached the mask is the ordinary causal (lower-triangular) mask, got "
        f"{got.astype(int).tolist()}")
    got = np.asarray(cached_causal_mask(1, 6))
    assert got.shape == (1, 7) and bool(got.all()), (
        f"one new token after 6 cached ones sees all 7 keys; got {got.astype(int).tolist()}")


# %%
def test_cached_attention_matches_full_causal_attention(KVCache, cached_attention,
                                                        MultiheadAttention, Tensor,
                                                        manual_seed, np):
    manual_seed(3)
    mha = MultiheadAttention(12, 3, batch_first=True)
    rng = np.random.default_rng(1)
    x = Tensor(rng.standard_normal((2, 7, 12)).astype(np.float32))
    full, _ = mha(x, x, x, attn_mask=np.triu(np.ones((7, 7), bool), 1), need_weights=False)
    cache = KVCache(2, 7, 3, 4)
    first = cached_attention(cache, mha, x[:, :4])
    assert first.shape == (2, 4, 12) and cache.size == 4, (
        f"a prompt of 4: output (B, 4, C) and 4 cached positions; got {first.shape}, size "
        f"{cache.size}")
    assert first.shape == full.numpy()[:, :4].shape and np.allclose(
        first.numpy(), full.numpy()[:, :4], atol=1e-5), (
        f"the prompt through an empty cache must equal causal attention on the prompt: "
        f"expected shape {full.numpy()[:, :4].shape}, got {first.shape}"
        + (f", max error {np.abs(first.numpy() - full.numpy()[:, :4]).max():.3g}"
           if first.shape == full.numpy()[:, :4].shape else ""))
    steps = [cache(mha, x[:, t:t + 1]).numpy() for t in range(4, 7)]
    got = np.concatenate(steps, axis=1)
    err = float(np.abs(got - full.numpy()[:, 4:]).max())
    assert np.allclose(got, full.numpy()[:, 4:], atol=1e-5), (
        f"one token at a time over the cached keys must equal full causal attention; max error "
        f"{err:.3g} (wrong mask, or the new key not appended before attending?)")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 4. A cache for the whole model
#
# A GPT has one attention layer per block, so its cache is a list of `KVCache`s, one per block,
# all of the same size. Module 13's `GPT.forward(idx, cache)` asks two things of it:
#
# * `cache.offset` — the positions already stored (the new tokens start there: module 11's
#   `offset`, and the check `offset + T ≤ context_length`);
# * `cache.layers[i]` — block `i`'s `KVCache`, which the block calls as `cache(attn, h)`.
#
# ```
#   GPTCache(model, batch_size)
#     layers[0]: KVCache (B, h, T_max, hs)   <- blocks[0].attn
#     layers[1]: KVCache (B, h, T_max, hs)   <- blocks[1].attn
#     offset = layers[0].size                (every layer holds the same positions)
# ```
#
# `T_max` defaults to the model's `context_length` (a forward pass can never hold more) and the
# dtype to the model's (a float64 model gets a float64 cache).

# %%
#| export
class GPTCache:
    """One ``KVCache`` per block of a GPT: the ``cache`` of ``GPT.forward(idx, cache)``.

    Args:
        model: a module-13 ``GPT`` (``n_layers``, ``n_heads``, ``d_model``,
            ``context_length``, and its parameters' dtype are read from it).
        batch_size: sequences generated together.
        max_seq_len: positions per layer (the model's ``context_length`` when None).
        dtype: of the arrays (the dtype of ``model.tok_emb.weight`` when None).

    Attributes:
        layers: ``n_layers`` ``KVCache``s; batch_size, max_seq_len: as given (resolved).
    """

    def __init__(self, model: GPT, batch_size: int, max_seq_len: int | None = None,
                 dtype: Any = None) -> None:
        """Allocate one ``KVCache(batch_size, max_seq_len, n_heads, head_dim, dtype)`` per block.

        APPROACH:
            1. Resolve the defaults: ``max_seq_len = model.context_length`` and ``dtype =
               model.tok_emb.weight.dtype`` when they are None.
            2. ``head_dim = model.d_model // model.n_heads``.
            3. Store ``self.batch_size`` and ``self.max_seq_len``; ``self.layers = [KVCache(
               ...) for _ in range(model.n_layers)]``.

        EXAMPLE:
            >>> gpt = GPT(vocab_size=65, context_length=160, d_model=64, n_layers=2, n_heads=4)
            >>> cache = GPTCache(gpt, batch_size=1)
            >>> len(cache.layers), cache.layers[0].k_cache.shape, cache.offset, cache.nbytes
            (2, (1, 4, 160, 16), 0, 163840)

        HINT: a list comprehension makes ``n_layers`` *different* caches;
        ``[KVCache(...)] * n`` would make one cache shared by every block.
        """
        # BEGIN SOLUTION NO PROMPT
        if max_seq_len is None:
            max_seq_len = model.context_length
        if dtype is None:
            dtype = model.tok_emb.weight.dtype
        head_dim = model.d_model // model.n_heads
        self.batch_size = batch_size
        self.max_seq_len = max_seq_len
        self.layers = [KVCache(batch_size, max_seq_len, model.n_heads, head_dim, dtype)
                       for _ in range(model.n_layers)]
        # END SOLUTION
        raise NotImplementedError("module 17: implement GPTCache.__init__ (see its docstring)")  # STUB

    @property
    def offset(self) -> int:
        """Positions stored (provided): what ``GPT.forward`` adds to the new positions."""
        return self.layers[0].size

    @property
    def nbytes(self) -> int:
        """Bytes of every layer's keys and values (provided)."""
        return sum(layer.nbytes for layer in self.layers)

    def reset(self) -> None:
        """Empty every layer (provided)."""
        for layer in self.layers:
            layer.reset()

    def crop(self, length: int) -> None:
        """Keep the first ``length`` positions of every layer (provided)."""
        for layer in self.layers:
            layer.crop(length)

# %% [raw]
# # BEGIN QUESTION
# name: gpt_cache
# points: 0

# %% [markdown]
# ### Check: the whole GPT, one token at a time, equals the full forward pass

# %% [raw]
# # BEGIN TESTS

# %%
def test_gpt_cache_layers_memory_and_incremental_logits(GPTCache, GPT, kv_cache_bytes,
                                                        manual_seed, np):
    manual_seed(4)
    gpt = GPT(vocab_size=19, context_length=10, d_model=12, n_layers=3, n_heads=3)
    cache = GPTCache(gpt, batch_size=2)
    distinct = len({id(c) for c in cache.layers})
    assert len(cache.layers) == 3 and distinct == 3, (
        f"one separate KVCache per block: expected 3 distinct caches, got {len(cache.layers)} "
        f"({distinct} distinct)")
    assert cache.layers[1].k_cache.shape == (2, 3, 10, 4) and cache.offset == 0, (
        f"(B, heads, context_length, d_model // heads); got {cache.layers[1].k_cache.shape}")
    assert cache.nbytes == kv_cache_bytes(3, 2, 3, 10, 4), (
        f"arrays hold {cache.nbytes} bytes, the formula says {kv_cache_bytes(3, 2, 3, 10, 4)}")
    small = GPTCache(gpt, 1, max_seq_len=6, dtype=np.float64).layers[0].k_cache
    assert small.shape == (1, 3, 6, 4) and small.dtype == np.float64, (
        f"max_seq_len and dtype may be given: expected (1, 3, 6, 4) float64, got "
        f"{small.shape} {small.dtype}")
    idx = np.random.default_rng(2).integers(0, 19, size=(2, 9))
    full = gpt(idx).numpy()
    parts = [gpt(idx[:, :5], cache=cache).numpy()]
    assert cache.offset == 5, f"after a prompt of 5 the cache holds 5 positions: {cache.offset}"
    parts += [gpt(idx[:, t:t + 1], cache=cache).numpy() for t in range(5, 9)]
    got = np.concatenate(parts, axis=1)
    err = float(np.abs(got - full).max())
    assert np.allclose(got, full, atol=1e-4), (
        f"prompt + 4 single tokens through the cache must give the full forward's logits; max "
        f"error {err:.3g} (positions? every layer its own cache?)")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 5. Cached generation: a memo keyed by the token prefix
#
# A memo is only correct if the cached result belongs to the *same input*. What does a cached
# key depend on? Position `i`'s keys and values in every layer depend on the tokens at
# positions `0..i` of the window the model sees — nothing else (causal attention, absolute
# positions). So the memo is keyed by the **token prefix**: if the new window starts with the
# tokens already cached, those positions can be reused and only the rest must run.
#
# `CachedGPT(model)` is a model wrapper with the same `forward(idx)` as the GPT, except that it
# returns the logits of the positions it *computed*:
#
# ```
#   cached tokens:   [t0 t1 t2 t3]                   (what the cache holds, positions 0..3)
#   window idx:      [t0 t1 t2 t3 t4]                common prefix 4
#                    \___ reuse ___/ run: t4          forward(idx[:, 4:], cache) -> (B, 1, V)
# ```
#
# Generation then needs no new loop at all: `GPT.generate` (module 13) calls `self.forward` on
# the window at every step and samples from the last position's logits, so running *that same
# function* on a `CachedGPT` gives the same sampling code, the same random draws — the same
# tokens — with the cache doing the work (`CachedGPT.generate` is provided).
#
# **The context window.** Once the text is longer than `context_length`, `generate` feeds
# only the last `context_length` tokens: every token moves one position to the left, so its
# position embedding — and every key and value after it — changes. No prefix matches, and the
# policy follows from the memo's key: **recompute the cropped window** in one pass (a prefill
# of `context_length` positions) — exactly what the uncached path computes, so the tokens stay
# identical; the cache saves nothing past the context. (A *sliding* cache that keeps the old
# keys would be cheaper but wrong here: its keys carry the positions they were computed at.
# Models with relative positions — RoPE, ALiBi — can slide; question 1 asks why.)
#
# Two details. The longest common prefix may cover the whole window (the same window twice):
# the last position is then recomputed anyway, because its logits are the result. And a cache
# must never outlive the weights it was computed with: `generate` starts from an empty cache.

# %%
#| export
def common_prefix_length(cached: np.ndarray, idx: np.ndarray) -> int:
    """How many leading positions two ``(B, T)`` token arrays share, in every row.

    Args:
        cached: ``(B, n)`` token ids (what a cache holds); idx: ``(B', T)`` token ids.

    Returns:
        The largest ``m <= min(n, T)`` with ``cached[:, :m] == idx[:, :m]`` for all rows; 0 when
        the batch sizes differ.

    APPROACH:
        1. Different ``shape[0]``: return 0.
        2. ``m = min(cached.shape[1], idx.shape[1])``; ``same = cached[:, :m] == idx[:, :m]``
           — ``(B, m)``.
        3. ``same.all()``: return ``m`` (the common case, one check); else the first column
           where some row differs: ``int(np.argmin(same.all(axis=0)))``.

    EXAMPLE:
        >>> common_prefix_length(np.array([[1, 2, 3]]), np.array([[1, 2, 3, 4]]))
        3
        >>> common_prefix_length(np.array([[1, 2, 3], [4, 5, 6]]), np.array([[1, 2, 9], [4, 7, 6]]))
        1

    HINT: one row that differs breaks the prefix for the whole batch: the cache stores one
    length for all rows.
    """
    # BEGIN SOLUTION NO PROMPT
    if cached.shape[0] != idx.shape[0]:
        return 0
    m = min(cached.shape[1], idx.shape[1])
    same = cached[:, :m] == idx[:, :m]  # (B, m)
    if same.all():  # the usual case in generation: the whole memo is a prefix
        return m
    return int(np.argmin(same.all(axis=0)))  # the first column where some row differs
    # END SOLUTION
    raise NotImplementedError("module 17: implement common_prefix_length (see its docstring)")  # STUB


class CachedGPT(Module):
    """A GPT behind a KV cache keyed by the token prefix: ``generate`` gives exactly the tokens
    of ``model.generate``, computing each position once while the text fits the context.

    Args:
        model: a module-13 ``GPT`` (its parameters are this module's: ``eval()`` reaches it).

    Attributes:
        model; cache: the ``GPTCache`` (None until the first forward); tokens: the ``(B, n)``
        token ids whose keys and values the cache holds; positions_computed: how many
        positions ``forward`` has run through the model, summed over every call (the work).
    """

    def __init__(self, model: GPT) -> None:
        super().__init__()
        self.model = model
        self.vocab_size = model.vocab_size
        self.context_length = model.context_length
        self.reset()

    def reset(self) -> None:
        """Drop the cache and the work counter (provided)."""
        self.cache: GPTCache | None = None
        self.tokens = np.zeros((0, 0), dtype=np.int64)
        self.positions_computed = 0

    def forward(self, idx: Any) -> Tensor:
        """Logits ``(B, T - keep, V)`` of the positions of ``idx (B, T)`` not found in the cache.

        ``keep`` is the common prefix of ``idx`` and the cached tokens, at most ``T - 1``; the
        cache is cropped to it and the rest runs through ``model(idx[:, keep:], cache=...)``.
        The last row of the result is always the logits of the last position of ``idx``.

        Raises:
            ValueError: ``idx`` is not 2-D or has no positions (and whatever ``GPT.forward``
                raises, e.g. more than ``context_length`` positions).

        APPROACH:
            1. ``ids = _as_array(idx).astype(np.int64)``; check it is 2-D with ``T >= 1``.
            2. No cache yet, or ``self.cache.batch_size != B``: ``self.cache = GPTCache(
               self.model, B)`` and ``self.tokens = ids[:, :0]`` (nothing cached).
            3. ``keep = min(common_prefix_length(self.tokens, ids), T - 1)``;
               ``self.cache.crop(keep)``; ``self.tokens = ids[:, :keep]``.
            4. ``logits = self.model(ids[:, keep:], cache=self.cache)``; then
               ``self.tokens = ids`` (``astype`` in step 1 copied it: later changes to the
               caller's array cannot reach the memo) and ``self.positions_computed += T -
               keep``.
            5. Return ``logits``.

        EXAMPLE:
            >>> manual_seed(0); cached = CachedGPT(GPT(10, 8, 16, 2, 2))
            >>> cached(np.array([[1, 2, 3]])).shape, cached.cache.offset
            ((1, 3, 10), 3)
            >>> cached(np.array([[1, 2, 3, 4]])).shape, cached.cache.offset, cached.positions_computed
            ((1, 1, 10), 4, 4)

        HINT: set ``self.tokens`` to the kept prefix *before* running the model: if the model
        raises (a window too long), the memo still describes what the cache holds.
        """
        # BEGIN SOLUTION NO PROMPT
        ids = _as_array(idx).astype(np.int64)
        if ids.ndim != 2 or ids.shape[1] == 0:
            raise ValueError(f"CachedGPT expects token ids of shape (B, T) with T >= 1, got "
                             f"{ids.shape}")
        b, t = ids.shape
        if self.cache is None or self.cache.batch_size != b:
            self.cache = GPTCache(self.model, b)
            self.tokens = ids[:, :0]
        keep = min(common_prefix_length(self.tokens, ids), t - 1)
        self.cache.crop(keep)
        self.tokens = ids[:, :keep]
        logits = self.model(ids[:, keep:], cache=self.cache)  # (B, T - keep, V)
        self.tokens = ids  # astype above made it a copy: the caller's array is not kept
        self.positions_computed += t - keep
        return logits
        # END SOLUTION
        raise NotImplementedError("module 17: implement CachedGPT.forward (see its docstring)")  # STUB

    def generate(self, idx: Any, max_new_tokens: int, temperature: float = 1.0,
                 top_k: int | None = None) -> Tensor:
        """``GPT.generate`` of module 13 run on this object, from an empty cache (provided).

        The loop, the sampling and the random draws are module 13's own code; only
        ``self.forward`` differs — it reuses the cached prefix.

        Example:
            >>> manual_seed(0); gpt = GPT(10, 8, 16, 2, 2); prompt = np.array([[1, 2, 3]])
            >>> bool(np.array_equal(CachedGPT(gpt).generate(prompt, 8, top_k=1).numpy(),
            ...                     gpt.generate(prompt, 8, top_k=1).numpy()))
            True
        """
        self.reset()  # a cache from an earlier call may belong to other weights
        return GPT.generate(self, idx, max_new_tokens, temperature, top_k)

    def extra_repr(self) -> str:
        return f"offset={0 if self.cache is None else self.cache.offset}"

# %% [raw]
# # BEGIN QUESTION
# name: cached_generation
# points: 0

# %% [markdown]
# ### Check: the same tokens as `GPT.generate`, inside and past the context window

# %% [raw]
# # BEGIN TESTS

# %%
def test_common_prefix_and_cached_forward(common_prefix_length, CachedGPT, GPT, manual_seed,
                                          np):
    a = np.array([[1, 2, 3, 4], [5, 6, 7, 8]])
    for other, want in [(np.array([[1, 2, 3, 4, 9], [5, 6, 7, 8, 9]]), 4),
                        (np.array([[1, 2, 0, 4], [5, 6, 7, 8]]), 2),
                        (np.array([[1, 2], [5, 0]]), 1), (np.array([[1, 2, 3, 4]]), 0)]:
        got = common_prefix_length(a, other)
        assert got == want, f"common prefix of {a.tolist()} and {other.tolist()}: {want}, got {got}"
    manual_seed(5)
    gpt = GPT(vocab_size=11, context_length=8, d_model=8, n_layers=2, n_heads=2)
    cached = CachedGPT(gpt)
    idx = np.random.default_rng(3).integers(0, 11, size=(2, 6))
    out = cached(idx[:, :4])
    assert out.shape == (2, 4, 11) and cached.cache.offset == 4, (
        f"an empty cache runs the whole window: (2, 4, 11) and offset 4; got {out.shape}")
    out = cached(idx[:, :5])
    assert out.shape == (2, 1, 11) and cached.positions_computed == 5, (
        f"a window extending the cached tokens runs only the new position; got {out.shape}, "
        f"{cached.positions_computed} positions computed (expected 5)")
    ref = gpt(idx[:, :5]).numpy()[:, -1]
    assert np.allclose(out.numpy()[:, -1], ref, atol=1e-5), (
        f"the new position's logits must equal the full forward's last row: max error "
        f"{np.abs(out.numpy()[:, -1] - ref).max():.3g}")
    changed = idx[:, :5].copy()
    changed[:, 2] = (changed[:, 2] + 1) % 11
    out = cached(changed)
    assert out.shape == (2, 3, 11) and cached.cache.offset == 5, (
        f"a window that differs at position 2 keeps 2 positions and recomputes 3; got "
        f"{out.shape}, offset {cached.cache.offset}")
    ref = gpt(changed).numpy()[:, -1]
    assert np.allclose(out.numpy()[:, -1], ref, atol=1e-5), (
        f"after a mismatch the cache must be cropped, not reused: logits differ from the "
        f"model's by up to {np.abs(out.numpy()[:, -1] - ref).max():.3g}")
    again = cached(changed)
    assert again.shape == (2, 1, 11), (
        f"the same window twice recomputes only its last position: expected shape (2, 1, 11), "
        f"got {again.shape}")


# %%
def test_cached_generation_gives_the_same_tokens(CachedGPT, GPT, manual_seed, np):
    manual_seed(6)
    gpt = GPT(vocab_size=13, context_length=12, d_model=16, n_layers=2, n_heads=4)
    rng = np.random.default_rng(4)
    for p in gpt.parameters():
        p.data[...] += rng.standard_normal(p.shape).astype(np.float32) * 0.5
    prompt = rng.integers(0, 13, size=(2, 3))
    cached = CachedGPT(gpt)
    want = gpt.generate(prompt, 8, top_k=1).numpy()
    got = cached.generate(prompt, 8, top_k=1).numpy()
    assert np.array_equal(got, want), (
        f"greedy decoding with the cache must give the uncached tokens:\n{want}\ngot\n{got}")
    assert cached.positions_computed == 3 + 8 - 1, (
        f"inside the context each position runs once: 3 + 8 - 1 = 10 positions, got "
        f"{cached.positions_computed}")
    manual_seed(7)
    want = gpt.generate(prompt, 20, temperature=1.5, top_k=5).numpy()
    manual_seed(7)
    got = cached.generate(prompt, 20, temperature=1.5, top_k=5).numpy()
    assert np.array_equal(got, want), (
        "sampling with the same seed must give the same tokens, also past context_length 12 "
        f"(23 tokens):\n{want}\ngot\n{got}")
    sizes = [layer.size for layer in cached.cache.layers]
    assert all(s <= 12 for s in sizes), (
        f"the cache never holds more than context_length = 12 positions, got sizes {sizes}")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 6. Systems experiment: the speed-up against the sequence length
#
# The cost model of section 1 predicts the number of positions each path runs: `n(n+1)/2 +
# …` uncached, `n` cached. Time is another matter: every step of either path also pays a
# fixed cost — dozens of framework operations, each a few microseconds of Python, whatever the
# size of its arrays — and Amdahl's law says the speed-up can never exceed
#
# $$\text{speed-up} = \frac{\text{fixed} + \text{work}_\text{uncached}}
#                          {\text{fixed} + \text{work}_\text{cached}}
#                   < \frac{\text{fixed} + \text{work}_\text{uncached}}{\text{fixed}}$$
#
# Measure it for the benchmark GPT (V = 65, C = 64, 2 layers, 4 heads, context 160): 16 to
# 128 new tokens after a 1-token prompt, one sequence and a batch of 8, uncached and cached
# **alternating in pairs** with module 14's `compare` (the ratio is `uncached / cached`, the
# median of the pairs). Greedy decoding (`top_k=1`) keeps both paths on the same tokens.

# %%
manual_seed(0)
bench = GPT(vocab_size=65, context_length=160, d_model=64, n_layers=2, n_heads=4).eval()
bench_cached = CachedGPT(bench)
print(f"{'batch':>5} {'new':>5} {'uncached ms':>12} {'cached ms':>10} {'speed-up':>9} "
      f"{'positions uncached':>19} {'cached':>7}")
speedups = {}
for batch in (1, 8):
    start = np.zeros((batch, 1), dtype=np.int64)
    for new in (16, 32, 64, 128):
        result = compare(lambda: bench.generate(start, new, top_k=1),
                         lambda: bench_cached.generate(start, new, top_k=1),
                         warmup=1, repeats=5)
        speedups[batch, new] = result.ratio
        uncached_positions = sum(range(1, new + 1))  # window lengths 1, 2, ..., new
        print(f"{batch:>5} {new:>5} {result.a.median / 1e6:>12.1f} {result.b.median / 1e6:>10.1f} "
              f"{result.ratio:>8.1f}x {uncached_positions:>19} {bench_cached.positions_computed:>7}")
# Expected shape: the cached path runs `new` positions, the uncached one new(new+1)/2, yet the
# measured speed-up is far below that ratio and grows with `new`: each cached step still pays
# the fixed cost of a few dozen framework operations (Python and NumPy call overhead), which
# with one sequence is most of the step (section 3's speed note trims it: the cached attention
# runs on arrays). A batch of 8 multiplies the uncached work by 8 and leaves the fixed cost
# alone, so its speed-up is several times larger. At 128 tokens, on the CPU clock: one
# sequence between 2x and 4.5x (3.2x on the course's 2-core server), eight sequences between
# 5x and 14x (between 8x and 14x there); your numbers depend on the machine, the shape does not.
# (Five pairs are too few for an interval of the median: the table shows medians, not claims.)

# %% [markdown]
# **Memory against the model.** The price of the speed-up is memory that grows with the batch
# and the length. Compare the cache of a full context with the parameters, and check the
# formula against the arrays:

# %%
for label, config, batch in [("benchmark GPT", (65, 160, 64, 2, 4), 8),
                             ("GPT-2 small", (50257, 1024, 768, 12, 12), 8)]:
    vocab, context, width, layers, heads = config
    cache_b = kv_cache_bytes(layers, batch, heads, context, width // heads)
    params_b = 4 * (2 * vocab * width + context * width + layers * (12 * width ** 2 + 13 * width)
                    + 2 * width)
    print(f"{label:<14} cache for batch {batch} x {context} positions: {cache_b / 1e6:8.2f} MB, "
          f"{params_b / 4e6:5.1f} M parameters {params_b / 1e6:8.1f} MB, ratio "
          f"{cache_b / params_b:5.2f}")
assert GPTCache(bench, 8).nbytes == kv_cache_bytes(2, 8, 4, 160, 16)
# Expected: for the small benchmark GPT the cache of 8 full sequences is 2.76 times its
# weights; for GPT-2 small, 8 sequences of 1,024 tokens need 604 MB, 0.93 times its 652 MB of
# weights (163 M parameters, counted as module 13 builds it: the head untied from the token
# embedding; the published 124 M ties them). Serving many long sequences at once is bound by
# cache memory, not by the weights.

# %% [markdown]
# ## 7. ML systems thinking (graded by hand)

# %% [raw]
# # BEGIN QUESTION
# name: written_context_policy
# manual: true
# points: 5

# %% [markdown]
# **Q1 · The context window.** Your `CachedGPT` recomputes the whole window once the text is
# longer than `context_length`. Explain, with what a cached key depends on, why keeping the old
# keys and dropping only the oldest one (a "sliding" cache) would produce different tokens from
# `GPT.generate` for this GPT. What changes with rotary (RoPE) or ALiBi positions, and what
# cheaper policy would you choose for a long chat if exact equality with the uncached path is
# not required?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# A key in layer 1 or above depends on the token, on its *absolute position* (the learned
# `pos_emb` row added at the input) and on every earlier token of the window. After a crop every
# token moves one position to the left and the first token of the old window disappears, so
# each cached key was computed with the wrong position embedding and a context that no longer
# exists; `GPT.generate` recomputes them with the new ones, so a sliding cache attends over
# different keys and its logits (and soon its tokens) differ. With RoPE a key is rotated by its
# position and the score `q·k` depends only on the *difference* of positions; ALiBi adds a bias
# that also depends only on the distance. Shifting every position by one leaves those scores
# unchanged, so keys can stay in a ring buffer (layer ≥ 1 keys still saw the dropped tokens:
# StreamingLLM-style caches accept that approximation). Without exactness: crop to half the
# context when full and refill (one prefill every `context/2` tokens instead of every token),
# or keep a few "sink" tokens plus a sliding window.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_cache_memory
# manual: true
# points: 5

# %% [markdown]
# **Q2 · Memory.** From your table: how many bytes does one token cost in the cache of the
# benchmark GPT and of GPT-2 small? How many 1,024-token sequences fit beside GPT-2 small's
# weights in 16 GB? Multi-query and grouped-query attention (MQA, GQA) share keys and values
# between heads (`num_kv_heads < num_heads`, torchtune's argument): what do they save, and what
# would you change in `KVCache` and in the cached attention to support them?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# One token costs `2 · L · C · 4` bytes: 2·2·64·4 = 1 kB for the benchmark GPT, 2·12·768·4 =
# 74 kB for GPT-2 small, so a 1,024-token sequence needs 75.5 MB and (16 GB − 0.65 GB) /
# 75.5 MB ≈ 203 sequences fit beside its 652 MB of weights (163 M parameters, head untied as in
# module 13) — cache memory, not compute, limits the batch of a server. MQA/GQA store
# `num_kv_heads` heads instead of `num_heads`, dividing the cache (and the memory read per step)
# by `num_heads / num_kv_heads` (e.g. 8× for 32 query heads over 4 KV heads). The cache is
# already allocated per `num_kv_heads`; the projection would produce `num_kv_heads · hs` keys
# and values, and before attending each cached KV head is repeated (or broadcast) to the
# `num_heads / num_kv_heads` query heads of its group.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_speedup
# manual: true
# points: 5

# %% [markdown]
# **Q3 · The speed-up.** Explain the shape of your measured speed-ups with the cost model
# `step = fixed + work`: why do they grow with the number of new tokens, why is the batch of 8
# so much faster with the cache than one sequence, and what limits them? Using your numbers,
# estimate the fixed cost per step, and say which change to the framework would raise the
# one-sequence speed-up most.

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# The uncached step runs the whole window, so its work grows with the length (linear in the
# projections and MLPs, quadratic in attention) and the total over `n` tokens grows like `n²`;
# the cached step's work is almost constant (one position, plus a `1 × T` attention row), so the
# ratio grows with `n`. Both paths pay the same fixed cost per step — about 40 framework calls
# (embedding, layer norms, projections, reshapes, the MLP, the head) of a few microseconds of
# Python each — which for one sequence of width 64 is most of a cached step: the cached time
# divided by the number of steps is that fixed cost (a few hundred µs to a few ms). A batch of 8
# multiplies the uncached *work* by 8 but not the fixed cost, so the cached path gains much more.
# Amdahl: speed-up ≤ (fixed + uncached work) / fixed. To raise the one-sequence speed-up, cut the
# fixed cost: fewer, fused operations per block (one kernel for LayerNorm + projection, the
# attention of one query written directly on the arrays), no graph bookkeeping under `no_grad`
# — or batch several requests together, as servers do.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## Summary
#
# You found the waste in autoregressive generation — every step recomputing the keys and values
# of the past — and removed it with memoization: a preallocated per-layer `KVCache`, attention
# of new positions over cached keys with the right mask and positions, a `GPTCache` for module
# 13's `GPT.forward(idx, cache)`, and a `CachedGPT` whose cache is keyed by the token prefix, so
# module 13's own `generate` produces exactly the same tokens, also past the context window. You
# computed what the cache costs in memory and measured what it saves in time, and why the
# saving depends on the batch. Export with `python export.py 17`; module 19 benchmarks it like
# MLPerf does, and the 2018 milestone asks for a 5× faster generation of 128 tokens.
