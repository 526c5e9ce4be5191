from otter.test_files import test_case

OK_FORMAT = False

name = "cached_generation"
points = 0

@test_case(points=None, hidden=False)
def test_common_prefix_and_cached_forward(common_prefix_length, CachedGPT, GPT, manual_seed, np):
    a = np.array([[1, 2, 3, 4], [5, 6, 7, 8]])
    for other, want in [(np.array([[1, 2, 3, 4, 9], [5, 6, 7, 8, 9]]), 4), (np.array([[1, 2, 0, 4], [5, 6, 7, 8]]), 2), (np.array([[1, 2], [5, 0]]), 1), (np.array([[1, 2, 3, 4]]), 0)]:
        got = common_prefix_length(a, other)
        assert got == want, f'common prefix of {a.tolist()} and {other.tolist()}: {want}, got {got}'
    manual_seed(5)
    gpt = GPT(vocab_size=11, context_length=8, d_model=8, n_layers=2, n_heads=2)
    cached = CachedGPT(gpt)
    idx = np.random.default_rng(3).integers(0, 11, size=(2, 6))
    out = cached(idx[:, :4])
    assert out.shape == (2, 4, 11) and cached.cache.offset == 4, f'an empty cache runs the whole window: (2, 4, 11) and offset 4; got {out.shape}'
    out = cached(idx[:, :5])
    assert out.shape == (2, 1, 11) and cached.positions_computed == 5, f'a window extending the cached tokens runs only the new position; got {out.shape}, {cached.positions_computed} positions computed (expected 5)'
    ref = gpt(idx[:, :5]).numpy()[:, -1]
    assert np.allclose(out.numpy()[:, -1], ref, atol=1e-05), f"the new position's logits must equal the full forward's last row: max error {np.abs(out.numpy()[:, -1] - ref).max():.3g}"
    changed = idx[:, :5].copy()
    changed[:, 2] = (changed[:, 2] + 1) % 11
    out = cached(changed)
    assert out.shape == (2, 3, 11) and cached.cache.offset == 5, f'a window that differs at position 2 keeps 2 positions and recomputes 3; got {out.shape}, offset {cached.cache.offset}'
    ref = gpt(changed).numpy()[:, -1]
    assert np.allclose(out.numpy()[:, -1], ref, atol=1e-05), f"after a mismatch the cache must be cropped, not reused: logits differ from the model's by up to {np.abs(out.numpy()[:, -1] - ref).max():.3g}"
    again = cached(changed)
    assert again.shape == (2, 1, 11), f'the same window twice recomputes only its last position: expected shape (2, 1, 11), got {again.shape}'

@test_case(points=None, hidden=False)
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
    assert np.array_equal(got, want), f'greedy decoding with the cache must give the uncached tokens:\n{want}\ngot\n{got}'
    assert cached.positions_computed == 3 + 8 - 1, f'inside the context each position runs once: 3 + 8 - 1 = 10 positions, got {cached.positions_computed}'
    manual_seed(7)
    want = gpt.generate(prompt, 20, temperature=1.5, top_k=5).numpy()
    manual_seed(7)
    got = cached.generate(prompt, 20, temperature=1.5, top_k=5).numpy()
    assert np.array_equal(got, want), f'sampling with the same seed must give the same tokens, also past context_length 12 (23 tokens):\n{want}\ngot\n{got}'
    sizes = [layer.size for layer in cached.cache.layers]
    assert all((s <= 12 for s in sizes)), f'the cache never holds more than context_length = 12 positions, got sizes {sizes}'

