from otter.test_files import test_case

OK_FORMAT = False

name = "softmax_and_masks"
points = 0

@test_case(points=None, hidden=False)
def test_safe_softmax_forward_and_backward(_SafeSoftmaxFn, Tensor, np):
    x = np.array([[1.0, 2.0, 3.0], [1000.0, 0.0, -1000.0], [-np.inf, -np.inf, -np.inf]], dtype=np.float32)
    t = Tensor(x, requires_grad=True)
    p = _SafeSoftmaxFn.apply(t)
    got = p.numpy()
    assert got.dtype == np.float32, f'float32 in, float32 out; got {got.dtype}'
    assert np.allclose(got[0], [0.09003057, 0.24472847, 0.66524096]), f'softmax([1, 2, 3]) is [0.090, 0.245, 0.665], got {got[0]}'
    assert np.allclose(got[1], [1.0, 0.0, 0.0]) and (not np.isnan(got).any()), f'subtract the row maximum so exp never overflows; got {got[1]}'
    assert np.array_equal(got[2], [0.0, 0.0, 0.0]), f'a fully masked row (all -inf) gives zeros, not NaN; got {got[2]}'
    (p * Tensor(np.array([[1.0, 0.0, 0.0]] * 3, dtype=np.float32))).sum().backward()
    g = t.grad.numpy()
    expected = got[0] * (np.array([1.0, 0.0, 0.0]) - got[0, 0])
    assert np.allclose(g[0], expected, atol=1e-06), f'dL/dx = P * (G - rowsum(G * P)): expected {expected.round(4)}, got {g[0].round(4)}'
    assert np.array_equal(g[2], [0.0, 0.0, 0.0]), f'a fully masked row gets no gradient: expected [0, 0, 0], got {g[2].round(4).tolist()}'

@test_case(points=None, hidden=False)
def test_mask_to_bias_conventions(mask_to_bias, Tensor, np):
    causal = mask_to_bias(None, True, 2, 4, np.float32)
    assert causal is not None and causal.shape == (2, 4) and (causal.dtype == np.float32), f"is_causal gives a (query_len, key_len) = (2, 4) bias in the scores' dtype float32, got {(None if causal is None else (causal.shape, causal.dtype))}"
    assert np.array_equal(causal, [[0, -np.inf, -np.inf, -np.inf], [0, 0, -np.inf, -np.inf]]), f'is_causal is the top-left lower triangle (key j <= query i); got {causal.tolist()}'
    b = mask_to_bias(Tensor(np.array([[True, False, True]])), False, 1, 3, np.float32)
    assert np.array_equal(b, [[0, -np.inf, 0]]), f'a boolean attn_mask: True takes part (0), False is removed (-inf); got {b}'
    f = mask_to_bias(np.array([[0.5, -1.0]]), False, 1, 2, np.float32)
    assert f.dtype == np.float32 and np.allclose(f, [[0.5, -1.0]]), f"a float attn_mask is added as it is (cast to the scores' dtype): expected [[0.5, -1.0]] float32, got {np.asarray(f).tolist()} {f.dtype}"
    got = mask_to_bias(None, False, 3, 3, np.float32)
    assert got is None, f'no mask: return None (nothing to add), got {type(got).__name__}'
    try:
        mask_to_bias(np.ones((2, 2), dtype=bool), True, 2, 2, np.float32)
    except RuntimeError:
        pass
    else:
        raise AssertionError('attn_mask together with is_causal=True must raise RuntimeError')

