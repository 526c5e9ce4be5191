from otter.test_files import test_case

OK_FORMAT = False

name = "kv_cache"
points = 0

@test_case(points=None, hidden=False)
def test_kv_cache_bytes_is_the_formula(kv_cache_bytes, np):
    got = kv_cache_bytes(2, 3, 4, 5, 6)
    assert got == 2 * 2 * 3 * 4 * 5 * 6 * 4, f'2 (keys and values) x layers x B x heads x T x head_dim x 4 bytes for float32 = {2 * 2 * 3 * 4 * 5 * 6 * 4}, got {got}'
    got = kv_cache_bytes(1, 2, 3, 6, 4, np.float64)
    assert got == 2 * 1 * 2 * 3 * 6 * 4 * 8, f'a float64 cache takes 8 bytes a number: expected {2 * 2 * 3 * 6 * 4 * 8}, got {got}'
    assert isinstance(got, int), f'a Python int, got {type(got).__name__}'

@test_case(points=None, hidden=False)
def test_kv_cache_allocates_two_empty_arrays(KVCache, kv_cache_bytes, np):
    cache = KVCache(batch_size=2, max_seq_len=6, num_kv_heads=3, head_dim=4)
    assert cache.k_cache.shape == (2, 3, 6, 4) and cache.v_cache.shape == (2, 3, 6, 4), f'k_cache and v_cache are (B, h, T_max, hs) = (2, 3, 6, 4); got {cache.k_cache.shape}'
    assert cache.k_cache.dtype == np.float32 and cache.size == 0, f'float32 by default and empty at first; got {cache.k_cache.dtype}, size {cache.size}'
    assert cache.k_cache is not cache.v_cache and (not np.shares_memory(cache.k_cache, cache.v_cache)), f'keys and values need two separate arrays, got the same buffer (id {id(cache.k_cache)} twice): writing values would overwrite keys'
    got = (cache.batch_size, cache.max_seq_len, cache.num_kv_heads, cache.head_dim)
    assert got == (2, 6, 3, 4), f'the sizes are kept as attributes (update checks against them); got {got}'
    wide = KVCache(1, 5, 2, 3, dtype=np.float64)
    assert wide.v_cache.dtype == np.float64, f"dtype= sets both arrays' dtype: expected float64, got {wide.v_cache.dtype}"
    assert kv_cache_bytes(1, 2, 3, 6, 4) == cache.nbytes, f'the formula must match the arrays: {kv_cache_bytes(1, 2, 3, 6, 4)} vs {cache.nbytes}'

@test_case(points=None, hidden=False)
def test_kv_cache_update_appends_views(KVCache, np):
    cache = KVCache(batch_size=2, max_seq_len=6, num_kv_heads=3, head_dim=4)
    rng = np.random.default_rng(0)
    k1, v1 = (rng.standard_normal((2, 3, 4, 4)), rng.standard_normal((2, 3, 4, 4)))
    keys, values = cache.update(k1, v1)
    assert keys.shape == (2, 3, 4, 4) and cache.size == 4, f'4 positions in: keys (2, 3, 4, 4) and size 4; got {keys.shape}, size {cache.size}'
    k2, v2 = (rng.standard_normal((2, 3, 1, 4)), rng.standard_normal((2, 3, 1, 4)))
    keys, values = cache.update(k2, v2)
    want = np.concatenate([k1, k2], axis=2).astype(np.float32)
    assert keys.shape == (2, 3, 5, 4) and np.allclose(keys.numpy(), want), f'a second update appends after the first: keys must be the 5 positions in order, shape (2, 3, 5, 4); got shape {keys.shape}' + (f', max error {np.abs(keys.numpy() - want).max():.3g}' if keys.shape == want.shape else '')
    vwant = np.concatenate([v1, v2], axis=2)
    assert values.shape == vwant.shape and np.allclose(values.numpy(), vwant), f'values are appended exactly like keys (into v_cache): expected shape {vwant.shape}, got {values.shape}' + (f', max error {np.abs(values.numpy() - vwant).max():.3g}' if values.shape == vwant.shape else '')
    assert np.shares_memory(keys.numpy(), cache.k_cache), f'expected a view of k_cache[:, :, :size], got a copy (base {type(keys.numpy().base).__name__}): copying the past at every step makes generation quadratic again'
    for bad in [(np.ones((2, 3, 2, 4)), np.ones((2, 3, 2, 4))), (np.ones((2, 2, 1, 4)), np.ones((2, 2, 1, 4)))]:
        try:
            cache.update(*bad)
        except ValueError:
            pass
        else:
            raise AssertionError(f'update with keys {bad[0].shape} into a (2, 3, 6, 4) cache of size 5 must raise ValueError')
    assert cache.size == 5, f'a refused update changes nothing: size 5, got {cache.size}'

@test_case(points=None, hidden=False)
def test_kv_cache_crop_keeps_a_prefix(KVCache, np):
    cache = KVCache(batch_size=1, max_seq_len=6, num_kv_heads=2, head_dim=3)
    rng = np.random.default_rng(1)
    k1 = rng.standard_normal((1, 2, 5, 3))
    cache.update(k1, k1)
    cache.crop(2)
    assert cache.size == 2, f'crop(2) keeps 2 positions; size is {cache.size}'
    k2 = rng.standard_normal((1, 2, 1, 3))
    keys, _ = cache.update(k2, k2)
    assert keys.shape == (1, 2, 3, 3) and np.allclose(keys.numpy()[:, :, 2], k2[:, :, 0]), f'after crop(2) the next update writes at position 2: expected 3 positions with the new key last, got {keys.shape[2]} positions'
    kept = float(np.abs(keys.numpy()[:, :, :2] - k1[:, :, :2]).max())
    assert kept < 1e-06, f'crop keeps the first positions as they were: positions 0 and 1 changed by up to {kept:.3g}'
    for bad in (4, -1):
        try:
            cache.crop(bad)
        except ValueError:
            pass
        else:
            raise AssertionError(f'crop({bad}) of a cache holding 3 positions must raise ValueError (a cache cannot grow by cropping)')
    cache.crop(0)
    assert cache.size == 0, f'crop(0) empties the cache; size is {cache.size}'

