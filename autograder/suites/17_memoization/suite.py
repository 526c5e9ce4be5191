"""Hidden suite · module 17 (memoization). Cases are probes; the trusted parent compares.

Each case returns plain data computed with the package under test ``tt``; the expected value
is the same case run against tinytorch_ref. Every input (sizes, token ids, parameter values,
seeds, chunk lengths) comes from ``rng``. Models get random float64 parameters, set by name in
sorted order, so a case depends on the names and shapes of modules 12-13, not on how a model
drew its initial weights, and tolerances can be tight. No case times anything: the speed-up is
measured in the lesson and decided by the 2018 milestone in the parent. Points sum to module
17's ``points`` (50).
"""

from __future__ import annotations

import importlib

import numpy as np

from autograder.suite import Suite, outcome

suite = Suite(module="17_memoization", version="2027.2")
case = suite.case
BYTES = suite.unit("kv_cache_bytes", "kv_cache_bytes")
KV_INIT = suite.unit("KVCache.__init__", "KVCache.__init__")
# The course's update and crop use only the attributes the docstring pins (k_cache, v_cache,
# size), so they run on the student's own arrays; the course's __init__ never runs next to the
# student's methods (they may keep the arrays their own way: one buffer, two halves), so the
# update and crop cases run with the student's own __init__ (declared in the catalogue).
KV_UPDATE = suite.unit("KVCache.update", "KVCache.update")
KV_CROP = suite.unit("KVCache.crop", "KVCache.crop", uses=(KV_UPDATE,))
MASK = suite.unit("cached_causal_mask", "cached_causal_mask")
GPT_CACHE = suite.unit("GPTCache", "GPTCache.__init__", uses=(KV_INIT,))
ATTENTION = suite.unit("cached_attention", "cached_attention",
                       uses=(KV_INIT, KV_UPDATE, KV_CROP, MASK))
PREFIX = suite.unit("common_prefix_length", "common_prefix_length")
CACHED_GPT = suite.unit("CachedGPT", "CachedGPT.forward",
                        uses=(KV_INIT, KV_UPDATE, KV_CROP, MASK, GPT_CACHE, ATTENTION, PREFIX))
RTOL, ATOL = 1e-7, 1e-9  # float64 throughout: any summation order passes


def _m(tt):
    """The module file under test (``tt`` is the package: the student's or the reference)."""
    return importlib.import_module(f"{tt.__name__}.memoization")


def _tf(tt):
    return importlib.import_module(f"{tt.__name__}.transformers")


def _int(rng, low, high):
    return int(rng.integers(low, high + 1))


def _seed(tt, rng):
    tt.manual_seed(int(rng.integers(2**31)))


def _set_params(module, rng, scale=0.4):
    """Random float64 values for every parameter, by sorted name (LayerNorm scales near one)."""
    params = dict(module.named_parameters())
    for name in sorted(params):
        p = params[name]
        values = rng.standard_normal(p.shape) * scale
        if name.endswith("weight") and p.ndim == 1:
            values = 1.0 + values
        p.data = values.astype(np.float64)
    return module


def _gpt(tt, rng, *, context=None):
    """A small float64 GPT with random sizes and parameters, in eval mode."""
    _seed(tt, rng)
    heads = _int(rng, 1, 3)
    width = heads * _int(rng, 2, 4)
    vocab = _int(rng, 5, 12)
    context = _int(rng, 6, 10) if context is None else context
    model = _tf(tt).GPT(vocab, context, width, _int(rng, 1, 3), heads)
    return _set_params(model, rng).eval()


def _mha(tt, rng):
    _seed(tt, rng)
    heads = _int(rng, 1, 3)
    mha = tt.nn.MultiheadAttention(heads * _int(rng, 2, 4), heads, batch_first=True)
    return _set_params(mha, rng)


# ----------------------------------------------------------------------------- KVCache (17)
@case(unit=BYTES, points=3,
      hint="kv_cache_bytes: 2 (keys and values) x n_layers x batch x heads x seq_len x head_dim x "
           "the dtype's itemsize (np.dtype(dtype).itemsize), as a Python int.",
      stated={
          "kv_cache_bytes": (
              "Bytes of a KV cache: ``2 · n_layers · batch_size · num_heads · seq_len · head_dim · itemsize``",
              "dtype: the cache's NumPy dtype (float32: 4 bytes a number).",
              "A Python ``int``.",
              "``np.dtype(dtype).itemsize`` is the number of bytes of one number",
          ),
      })
def kv_cache_bytes_formula(tt, rng):
    m = _m(tt)
    out = []
    for dtype in (np.float32, np.float64, np.float16):
        sizes = [_int(rng, 1, 12) for _ in range(5)]
        out.append(m.kv_cache_bytes(*sizes, dtype))
    out.append(m.kv_cache_bytes(*[_int(rng, 1, 9) for _ in range(5)]))  # default float32
    return out


@case(unit=KV_INIT, points=3,
      hint="KVCache.__init__: store batch_size, max_seq_len, num_kv_heads and head_dim; k_cache "
           "and v_cache are two separate zero arrays of (B, h, T_max, hs) in the dtype (float32 "
           "by default); size starts at 0.",
      stated={
          "KVCache": (
              "num_kv_heads: ``h``; head_dim: ``hs``; dtype: of the arrays (float32 by default).",
              "k_cache, v_cache: ``(B, h, T_max, hs)`` arrays",
          ),
          "KVCache.__init__": (
              "Store ``batch_size``, ``max_seq_len``, ``num_kv_heads``, ``head_dim`` as attributes of those names.",
              "``shape = (batch_size, num_kv_heads, max_seq_len, head_dim)``; ``self.k_cache = np.zeros(shape, dtype=dtype)``, the same for ``v_cache``.",
              "``self.size = 0``.",
              "two separate arrays",
          ),
          "KVCache.nbytes": "Bytes held by the two arrays (provided).",
      })
def kv_cache_allocation(tt, rng):
    m = _m(tt)
    out = []
    for dtype in (None, np.float64):
        sizes = [_int(rng, 1, 5) for _ in range(4)]
        cache = m.KVCache(*sizes) if dtype is None else m.KVCache(*sizes, dtype=dtype)
        out.append([cache.k_cache.shape, cache.v_cache.shape, str(cache.k_cache.dtype),
                    str(cache.v_cache.dtype), cache.size, cache.batch_size, cache.max_seq_len,
                    cache.num_kv_heads, cache.head_dim, cache.nbytes,
                    bool(np.shares_memory(cache.k_cache, cache.v_cache)),
                    float(np.abs(cache.k_cache).sum() + np.abs(cache.v_cache).sum())])
    return out


@case(unit=KV_UPDATE, points=5, rtol=RTOL, atol=ATOL,
      hint="KVCache.update: write k and v at positions size .. size+S-1 of k_cache / v_cache (the "
           "third axis), advance size by S, and return Tensors of k_cache[:, :, :size] and "
           "v_cache[:, :, :size] (views, no copies); Tensors and arrays are both accepted.",
      stated={
          "KVCache.update": (
              "k_val, v_val: Tensors (or arrays) of shape ``(B, h, S, hs)``",
              "``(keys, values)``: Tensors of shape ``(B, h, size, hs)`` (the new ``size``), views of ``k_cache[:, :, :size]`` and ``v_cache[:, :, :size]`` (no copy).",
              "``self.k_cache[:, :, start:stop] = k`` (the same for ``v``); ``self.size = stop``.",
              "The cache's dtype wins when you assign into it (float64 keys into a float32 cache are rounded to float32).",
          ),
      })
def kv_cache_update_appends(tt, rng):
    m = _m(tt)
    b, h, d = _int(rng, 1, 3), _int(rng, 1, 3), _int(rng, 1, 4)
    chunks = [_int(rng, 1, 3) for _ in range(3)]
    cache = m.KVCache(b, sum(chunks) + _int(rng, 0, 2), h, d, dtype=np.float64)
    out = []
    for i, s in enumerate(chunks):
        k, v = rng.standard_normal((b, h, s, d)), rng.standard_normal((b, h, s, d))
        if i == 1:
            k, v = tt.Tensor(k), tt.Tensor(v)
        keys, values = cache.update(k, v)
        out.append([keys.numpy(), values.numpy(), cache.size,
                    bool(np.shares_memory(keys.numpy(), cache.k_cache)),
                    bool(np.shares_memory(values.numpy(), cache.v_cache))])
    small = m.KVCache(1, 4, 1, 2)  # float32 cache: float64 keys are stored as float32
    keys, _ = small.update(rng.standard_normal((1, 1, 2, 2)), rng.standard_normal((1, 1, 2, 2)))
    out.append([keys.numpy().astype(np.float64), str(keys.dtype)])
    return out


@case(unit=KV_UPDATE, points=3,
      hint="Refuse with ValueError: keys and values of different shapes, not 4-D, a batch / head "
           "count / head_dim other than the cache's, and more positions than max_seq_len; a "
           "refused update changes nothing.",
      stated={
          "KVCache.update": (
              "ValueError: a shape that does not fit (the message names it and the expected ``(B, h, S, hs)``), or ``size + S > max_seq_len`` (the cache is full).",
              "Check ``k.shape == v.shape``, ``k.ndim == 4`` and ``(B, h, hs)`` = ``(k.shape[0], k.shape[1], k.shape[3])`` against the cache's; raise ``ValueError`` otherwise.",
              "``start, stop = self.size, self.size + k.shape[2]``; ``stop > max_seq_len``: raise ``ValueError`` naming both numbers.",
              "``self.k_cache[:, :, start:stop] = k`` (the same for ``v``); ``self.size = stop``.",
          ),
      })
def kv_cache_update_refuses(tt, rng):
    m = _m(tt)
    b, h, t, d = _int(rng, 1, 3), _int(rng, 1, 3), _int(rng, 3, 6), _int(rng, 1, 4)
    cache = m.KVCache(b, t, h, d, dtype=np.float64)
    cache.update(rng.standard_normal((b, h, t - 1, d)), rng.standard_normal((b, h, t - 1, d)))

    def z(*shape):
        return rng.standard_normal(shape)

    results = [outcome(cache.update, z(b, h, 2, d), z(b, h, 2, d)),  # one too many
               outcome(cache.update, z(b + 1, h, 1, d), z(b + 1, h, 1, d)),
               outcome(cache.update, z(b, h + 1, 1, d), z(b, h + 1, 1, d)),
               outcome(cache.update, z(b, h, 1, d + 1), z(b, h, 1, d + 1)),
               outcome(cache.update, z(b, h, 1, d), z(b, h, 2, d)),
               outcome(cache.update, z(h, 1, d), z(h, 1, d))]
    state = [cache.size, cache.k_cache.copy(), cache.v_cache.copy()]  # nothing written
    last = outcome(cache.update, z(b, h, 1, d), z(b, h, 1, d))  # exactly fills it
    return [results, state, last, cache.size]


@case(unit=KV_CROP, points=3, rtol=RTOL, atol=ATOL,
      hint="crop(n) keeps the first n positions (size = n) for 0 <= n <= size and raises "
           "ValueError otherwise; the next update writes at position n; reset() empties the cache.",
      stated={
          "KVCache.crop": (
              "Keep only the first ``length`` positions",
              "ValueError: ``length`` is negative or more than ``size`` (a cache cannot grow by cropping).",
              "check ``0 <= length <= self.size`` (else ``ValueError`` naming both); ``self.size = length``.",
              "positions ``length ..`` are written over by the next update.",
          ),
          "KVCache.update": "``start, stop = self.size, self.size + k.shape[2]``",
          "KVCache.reset": "Forget every position (provided): ``size = 0``",
      })
def kv_cache_crop_and_reset(tt, rng):
    m = _m(tt)
    b, h, d = _int(rng, 1, 2), _int(rng, 1, 3), _int(rng, 1, 3)
    t = _int(rng, 4, 7)
    cache = m.KVCache(b, t + 2, h, d, dtype=np.float64)
    cache.update(rng.standard_normal((b, h, t, d)), rng.standard_normal((b, h, t, d)))
    n = _int(rng, 0, t - 1)
    cache.crop(n)
    size = cache.size
    keys, values = cache.update(rng.standard_normal((b, h, 2, d)), rng.standard_normal((b, h, 2, d)))
    errors = [outcome(cache.crop, cache.size + 1), outcome(cache.crop, -1),
              outcome(cache.crop, cache.size), outcome(cache.crop, 0), cache.size]
    cache.reset()
    return [size, keys.numpy(), values.numpy(), errors, cache.size]


# ----------------------------------------------------------------------------- attention (13)
@case(unit=MASK, points=4,
      hint="cached_causal_mask: (query_len, past_len + query_len) booleans: key j is allowed for "
           "query i when j <= past_len + i (absolute positions; a query sees itself).",
      stated={
          "cached_causal_mask": (
              "``(query_len, past_len + query_len)`` booleans, True where key ``j <= past_len + i`` for query ``i``",
              "a query always sees itself (``j = past + i``): use ``<=``, not ``<``.",
          ),
      })
def cached_causal_mask_values(tt, rng):
    m = _m(tt)
    out = []
    for query_len, past in [(1, _int(rng, 0, 40)), (_int(rng, 2, 24), 0),
                            (_int(rng, 2, 24), _int(rng, 1, 40)), (1, 0)]:
        mask = m.cached_causal_mask(query_len, past)
        out.append([np.asarray(mask).astype(np.int64), str(np.asarray(mask).dtype)])
    return out


@case(unit=ATTENTION, points=5, rtol=RTOL, atol=ATOL,
      hint="cached_attention: project h with attn._in_projection(h, h, h, True), split_heads "
           "each, append k and v to the cache, then scaled_dot_product_attention of q over the "
           "returned keys with cached_causal_mask(T_new, past); merge_heads and out_proj.",
      stated={
          "cached_attention": (
              "Attention of the new positions ``h (B, T_new, C)`` over every position in ``cache`` and themselves; appends their keys and values to ``cache``. Returns ``(B, T_new, C)``.",
              "``qkv = _LinearFn.forward(Context(), x, attn.in_proj_weight.data, _data(attn.in_proj_bias))``",
              "``q, k, v = qkv.reshape(b, t, 3, heads, hs).transpose(2, 0, 3, 1, 4)``",
              "``past = cache.size``; ``keys, values = cache.update(k, v)``",
              "else the additive form of ``cached_causal_mask(t, past)``",
              "``out = _ScaledDotProductAttentionFn.forward(Context(), q, keys.data, values.data, bias=bias, scale=1.0 / math.sqrt(hs), dropout_p=p)``",
              "``merged = out.transpose(0, 2, 1, 3).reshape(b, t, c)`` (``merge_heads``)",
          ),
          "KVCache.__call__": "Module 13's per-layer plug-in (provided): ``cached_attention(self, attn, h)``.",
      })
def cached_attention_prefill(tt, rng):
    m = _m(tt)
    mha = _mha(tt, rng)
    b, t = _int(rng, 1, 3), _int(rng, 2, 6)
    e, heads = mha.embed_dim, mha.num_heads
    cache = m.KVCache(b, t + _int(rng, 0, 3), heads, e // heads, dtype=np.float64)
    x = tt.Tensor(rng.standard_normal((b, t, e)))
    out = m.cached_attention(cache, mha, x)
    via_call = m.KVCache(b, t, heads, e // heads, dtype=np.float64)(mha, x)
    return [out.numpy(), cache.size, cache.k_cache[:, :, :t].copy(),
            cache.v_cache[:, :, :t].copy(), via_call.numpy()]


@case(unit=ATTENTION, points=4, rtol=RTOL, atol=ATOL,
      hint="cached_attention: new positions start at past = cache.size: their queries see every "
           "cached key and the new keys up to themselves (update the cache before attending; not "
           "is_causal, which is a square top-left triangle).",
      stated={
          "cached_attention": (
              "Attention of the new positions ``h (B, T_new, C)`` over every position in ``cache`` and themselves; appends their keys and values to ``cache``.",
              "``past = cache.size``; ``keys, values = cache.update(k, v)``",
              "``bias = None`` when ``t == 1`` (one new query may see every key, itself included), else the additive form of ``cached_causal_mask(t, past)``",
              "update the cache *before* attending: a new position must see its own key.",
          ),
      })
def cached_attention_decode_steps(tt, rng):
    m = _m(tt)
    mha = _mha(tt, rng)
    b = _int(rng, 1, 3)
    e, heads = mha.embed_dim, mha.num_heads
    chunks = [_int(rng, 1, 3)] + [1, _int(rng, 2, 3), 1]
    total = sum(chunks)
    cache = m.KVCache(b, total, heads, e // heads, dtype=np.float64)
    x = rng.standard_normal((b, total, e))
    outs, start = [], 0
    for s in chunks:
        outs.append(m.cached_attention(cache, mha, tt.Tensor(x[:, start:start + s])).numpy())
        start += s
    return [outs, cache.size]


# ----------------------------------------------------------------------------- GPTCache (8)
@case(unit=GPT_CACHE, points=4,
      hint="GPTCache: one KVCache(batch_size, max_seq_len, n_heads, d_model // n_heads, dtype) "
           "per block, separate objects; max_seq_len defaults to context_length and dtype to the "
           "dtype of model.tok_emb.weight; store batch_size and max_seq_len.",
      stated={
          "GPTCache": (
              "max_seq_len: positions per layer (the model's ``context_length`` when None).",
              "dtype: of the arrays (the dtype of ``model.tok_emb.weight`` when None).",
              "layers: ``n_layers`` ``KVCache``s; batch_size, max_seq_len: as given (resolved).",
          ),
          "GPTCache.__init__": (
              "Allocate one ``KVCache(batch_size, max_seq_len, n_heads, head_dim, dtype)`` per block.",
              "``head_dim = model.d_model // model.n_heads``.",
              "Store ``self.batch_size`` and ``self.max_seq_len``; ``self.layers = [KVCache( ...) for _ in range(model.n_layers)]``.",
              "a list comprehension makes ``n_layers`` *different* caches",
          ),
      })
def gpt_cache_structure(tt, rng):
    m = _m(tt)
    model = _gpt(tt, rng)
    b = _int(rng, 1, 16)
    cache = m.GPTCache(model, b)
    other = m.GPTCache(model, b + 1, max_seq_len=_int(rng, 2, 64), dtype=np.float32)
    return [len(cache.layers), len({id(c) for c in cache.layers}),
            [c.k_cache.shape for c in cache.layers], str(cache.layers[0].k_cache.dtype),
            cache.offset, cache.nbytes, cache.batch_size, cache.max_seq_len,
            [c.v_cache.shape for c in other.layers], str(other.layers[-1].v_cache.dtype),
            other.max_seq_len, other.nbytes]


@case(unit=ATTENTION, points=4, standins=(KV_INIT, KV_UPDATE, KV_CROP, MASK, GPT_CACHE), rtol=RTOL,
      atol=1e-8,
      hint="cached_attention: GPT.forward(idx, cache=GPTCache(...)) reads cache.offset and calls "
           "every block with its own layer cache: a prompt then single tokens must give the "
           "logits of the full forward pass.",
      stated={
          "cached_attention": (
              "Attention of the new positions ``h (B, T_new, C)`` over every position in ``cache`` and themselves",
              "module 13's ``TransformerBlock.forward(x, cache)`` calls ``cache(self.attn, h)``",
          ),
          "GPTCache": "One ``KVCache`` per block of a GPT: the ``cache`` of ``GPT.forward(idx, cache)``.",
      })
def gpt_cached_forward_matches_full(tt, rng):
    m = _m(tt)
    model = _gpt(tt, rng)
    b = _int(rng, 1, 3)
    t = model.context_length
    idx = rng.integers(0, model.vocab_size, size=(b, t))
    cache = m.GPTCache(model, b)
    p = _int(rng, 1, t - 2)
    parts, offsets = [model(idx[:, :p], cache=cache).numpy()], [cache.offset]
    for i in range(p, t):
        parts.append(model(idx[:, i:i + 1], cache=cache).numpy())
        offsets.append(cache.offset)
    return [np.concatenate(parts, axis=1), offsets]


# ----------------------------------------------------------------------------- CachedGPT (12)
@case(unit=PREFIX, points=3,
      hint="common_prefix_length: the largest m <= min of the two lengths with equal tokens in "
           "every row at positions 0..m-1 (np.all over axis 0, then the first False); 0 when the "
           "batch sizes differ.",
      stated={
          "common_prefix_length": (
              "The largest ``m <= min(n, T)`` with ``cached[:, :m] == idx[:, :m]`` for all rows; 0 when the batch sizes differ.",
              "``same.all()``: return ``m`` (the common case, one check); else the first column where some row differs: ``int(np.argmin(same.all(axis=0)))``.",
          ),
      })
def common_prefix_length_cases(tt, rng):
    m = _m(tt)
    b, n = _int(rng, 2, 4), _int(rng, 4, 16)
    a = rng.integers(0, 5, size=(b, n))
    out = []
    longer = np.concatenate([a, rng.integers(0, 5, size=(b, _int(rng, 1, 5)))], axis=1)
    out.append(m.common_prefix_length(a, longer))
    out.append(m.common_prefix_length(longer, a))
    for _ in range(6):
        j, row = _int(rng, 0, n - 1), _int(rng, 0, b - 1)
        other = a.copy()
        other[row, j] = (other[row, j] + 1) % 5
        out.append(m.common_prefix_length(a, other))
    out.append(m.common_prefix_length(a[:, :0], a))
    out.append(m.common_prefix_length(a[:1], a))
    return out


@case(unit=CACHED_GPT, points=4, rtol=RTOL, atol=1e-8,
      hint="CachedGPT: crop the cache to keep = min(common prefix, T - 1), remember the kept "
           "tokens, run model(idx[:, keep:], cache=...), then store the whole window and add T - "
           "keep to positions_computed; a new batch size needs a new GPTCache.",
      stated={
          "CachedGPT.forward": (
              "Logits ``(B, T - keep, V)`` of the positions of ``idx (B, T)`` not found in the cache.",
              "``keep`` is the common prefix of ``idx`` and the cached tokens, at most ``T - 1``; the cache is cropped to it and the rest runs through ``model(idx[:, keep:], cache=...)``.",
              "No cache yet, or ``self.cache.batch_size != B``: ``self.cache = GPTCache( self.model, B)`` and ``self.tokens = ids[:, :0]`` (nothing cached).",
              "``logits = self.model(ids[:, keep:], cache=self.cache)``; then ``self.tokens = ids``",
              "``self.positions_computed += T - keep``.",
          ),
          "CachedGPT": "positions_computed: how many positions ``forward`` has run through the model, summed over every call (the work).",
      })
def cached_gpt_forward_reuses_prefix(tt, rng):
    m = _m(tt)
    model = _gpt(tt, rng, context=_int(rng, 8, 10))
    b = _int(rng, 1, 3)
    seq = rng.integers(0, model.vocab_size, size=(b, model.context_length))
    cached = m.CachedGPT(model)
    changed = seq.copy()
    j = _int(rng, 1, 3)
    changed[:, j] = (changed[:, j] + 1) % model.vocab_size
    windows = [seq[:, :3], seq[:, :4], seq[:, :7], seq[:, :7], changed[:, :6],
               seq[:1, :5]]
    out = []
    for w in windows:
        logits = cached(w).numpy()
        out.append([logits.shape, logits[:, -1], cached.cache.offset, cached.cache.batch_size,
                    cached.positions_computed])
    return out


@case(unit=CACHED_GPT, points=5,
      hint="CachedGPT.generate runs GPT.generate on the wrapper: the tokens, greedy and sampled "
           "with the same seed, must be the uncached ones, also past context_length (recompute "
           "the cropped window); positions inside the context run once.",
      stated={
          "CachedGPT": "``generate`` gives exactly the tokens of ``model.generate``, computing each position once while the text fits the context.",
          "CachedGPT.generate": "The loop, the sampling and the random draws are module 13's own code; only ``self.forward`` differs — it reuses the cached prefix.",
          "CachedGPT.forward": "``keep`` is the common prefix of ``idx`` and the cached tokens, at most ``T - 1``",
      })
def cached_generate_same_tokens(tt, rng):
    m = _m(tt)
    model = _gpt(tt, rng)
    b, p = _int(rng, 1, 3), _int(rng, 1, 3)
    prompt = rng.integers(0, model.vocab_size, size=(b, p))
    cached = m.CachedGPT(model)
    inside = model.context_length - p
    greedy = cached.generate(prompt, inside, top_k=1).numpy()
    work = cached.positions_computed
    seed = int(rng.integers(2**31))
    tt.manual_seed(seed)
    sampled = cached.generate(tt.Tensor(prompt), model.context_length + 4,
                              temperature=float(rng.uniform(0.8, 2.0)),
                              top_k=_int(rng, 2, model.vocab_size)).numpy()
    return [greedy, work, sampled, max(c.size for c in cached.cache.layers)]
