from otter.test_files import test_case

OK_FORMAT = False

name = "gpt_cache"
points = 0

@test_case(points=None, hidden=False)
def test_gpt_cache_layers_memory_and_incremental_logits(GPTCache, GPT, kv_cache_bytes, manual_seed, np):
    manual_seed(4)
    gpt = GPT(vocab_size=19, context_length=10, d_model=12, n_layers=3, n_heads=3)
    cache = GPTCache(gpt, batch_size=2)
    distinct = len({id(c) for c in cache.layers})
    assert len(cache.layers) == 3 and distinct == 3, f'one separate KVCache per block: expected 3 distinct caches, got {len(cache.layers)} ({distinct} distinct)'
    assert cache.layers[1].k_cache.shape == (2, 3, 10, 4) and cache.offset == 0, f'(B, heads, context_length, d_model // heads); got {cache.layers[1].k_cache.shape}'
    assert cache.nbytes == kv_cache_bytes(3, 2, 3, 10, 4), f'arrays hold {cache.nbytes} bytes, the formula says {kv_cache_bytes(3, 2, 3, 10, 4)}'
    small = GPTCache(gpt, 1, max_seq_len=6, dtype=np.float64).layers[0].k_cache
    assert small.shape == (1, 3, 6, 4) and small.dtype == np.float64, f'max_seq_len and dtype may be given: expected (1, 3, 6, 4) float64, got {small.shape} {small.dtype}'
    idx = np.random.default_rng(2).integers(0, 19, size=(2, 9))
    full = gpt(idx).numpy()
    parts = [gpt(idx[:, :5], cache=cache).numpy()]
    assert cache.offset == 5, f'after a prompt of 5 the cache holds 5 positions: {cache.offset}'
    parts += [gpt(idx[:, t:t + 1], cache=cache).numpy() for t in range(5, 9)]
    got = np.concatenate(parts, axis=1)
    err = float(np.abs(got - full).max())
    assert np.allclose(got, full, atol=0.0001), f"prompt + 4 single tokens through the cache must give the full forward's logits; max error {err:.3g} (positions? every layer its own cache?)"

