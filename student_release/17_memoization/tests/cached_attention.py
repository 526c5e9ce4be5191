from otter.test_files import test_case

OK_FORMAT = False

name = "cached_attention"
points = 0

@test_case(points=None, hidden=False)
def test_cached_causal_mask_sees_the_past_and_itself(cached_causal_mask, np):
    mask = cached_causal_mask(2, 3)
    assert mask.shape == (2, 5) and mask.dtype == bool, f'(query_len, past + query_len) booleans; got {mask.shape} {mask.dtype}'
    assert mask.astype(int).tolist() == [[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]], f'query i (position past + i) sees keys j <= past + i; got {mask.astype(int).tolist()}'
    got = np.asarray(cached_causal_mask(4, 0))
    assert np.array_equal(got, np.tril(np.ones((4, 4), bool))), f'with nothing cached the mask is the ordinary causal (lower-triangular) mask, got {got.astype(int).tolist()}'
    got = np.asarray(cached_causal_mask(1, 6))
    assert got.shape == (1, 7) and bool(got.all()), f'one new token after 6 cached ones sees all 7 keys; got {got.astype(int).tolist()}'

@test_case(points=None, hidden=False)
def test_cached_attention_matches_full_causal_attention(KVCache, cached_attention, MultiheadAttention, Tensor, manual_seed, np):
    manual_seed(3)
    mha = MultiheadAttention(12, 3, batch_first=True)
    rng = np.random.default_rng(1)
    x = Tensor(rng.standard_normal((2, 7, 12)).astype(np.float32))
    full, _ = mha(x, x, x, attn_mask=np.triu(np.ones((7, 7), bool), 1), need_weights=False)
    cache = KVCache(2, 7, 3, 4)
    first = cached_attention(cache, mha, x[:, :4])
    assert first.shape == (2, 4, 12) and cache.size == 4, f'a prompt of 4: output (B, 4, C) and 4 cached positions; got {first.shape}, size {cache.size}'
    assert first.shape == full.numpy()[:, :4].shape and np.allclose(first.numpy(), full.numpy()[:, :4], atol=1e-05), f'the prompt through an empty cache must equal causal attention on the prompt: expected shape {full.numpy()[:, :4].shape}, got {first.shape}' + (f', max error {np.abs(first.numpy() - full.numpy()[:, :4]).max():.3g}' if first.shape == full.numpy()[:, :4].shape else '')
    steps = [cache(mha, x[:, t:t + 1]).numpy() for t in range(4, 7)]
    got = np.concatenate(steps, axis=1)
    err = float(np.abs(got - full.numpy()[:, 4:]).max())
    assert np.allclose(got, full.numpy()[:, 4:], atol=1e-05), f'one token at a time over the cached keys must equal full causal attention; max error {err:.3g} (wrong mask, or the new key not appended before attending?)'

