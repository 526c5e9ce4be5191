from otter.test_files import test_case

OK_FORMAT = False

name = "sdpa"
points = 0

@test_case(points=None, hidden=False)
def test_sdpa_forward_matches_the_formula(scaled_dot_product_attention, Tensor, np):
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal(s).astype(np.float32) for s in [(2, 3, 8), (2, 5, 8), (2, 5, 4)])
    out = scaled_dot_product_attention(Tensor(q), Tensor(k), Tensor(v))
    assert out.shape == (2, 3, 4), f'(..., L, E) x (..., S, E) x (..., S, Ev) -> (2, 3, 4), got {out.shape}'
    assert out.dtype == np.float32, f'float32 stays float32, got {out.dtype} (use a Python float scale)'
    s = q @ k.transpose(0, 2, 1) / np.sqrt(8)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    assert out.shape == (p @ v).shape and np.allclose(out.numpy(), p @ v, atol=1e-05), f'softmax(Q K^T / sqrt(E)) V: expected shape {(p @ v).shape}, got {out.shape}' + (f', max error {np.abs(out.numpy() - p @ v).max():.3g}' if out.shape == (p @ v).shape else '') + '; check the scale 1/sqrt(E) and the softmax axis (-1, keys)'
    causal = scaled_dot_product_attention(Tensor(q), Tensor(k), Tensor(v), is_causal=True).numpy()
    assert np.allclose(causal[:, 0], v[:, 0], atol=1e-06), f'with is_causal the first query sees only the first key, so its output is v[0]; max error {np.abs(causal[:, 0] - v[:, 0]).max():.3g}'
    masked = scaled_dot_product_attention(Tensor(q), Tensor(k), Tensor(v), attn_mask=np.zeros((3, 5), dtype=bool)).numpy()
    assert np.array_equal(masked, np.zeros_like(masked)), f'a boolean mask that allows nothing gives zero rows (not NaN), got {int(np.isnan(masked).sum())} NaN and max |out| {np.nanmax(np.abs(masked)):.3g}'

@test_case(points=None, hidden=False)
def test_sdpa_backward_matches_finite_differences(scaled_dot_product_attention, gradcheck, np):
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal(s) for s in [(2, 3, 4), (4, 4), (2, 4, 5)])
    mask = np.array([[True, True, False, True]] * 3)
    for kwargs in ({}, {'is_causal': True}, {'attn_mask': mask}, {'scale': 0.3}):
        fn = lambda a, b, c: scaled_dot_product_attention(a, b, c, **kwargs)
        assert gradcheck(fn, [q, k, v], eps=1e-06, atol=1e-06, rtol=1e-05), f'gradients with {kwargs}'

