from otter.test_files import test_case

OK_FORMAT = False

name = "conv2d"
points = 0

@test_case(points=None, hidden=False)
def test_conv2d_matches_the_loops(conv2d, conv2d_loops, Tensor, np):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 7, 6)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 2)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    for stride, padding in [(1, 0), (2, 1), ((2, 1), (0, 1))]:
        got = conv2d(Tensor(x), Tensor(w), Tensor(b), stride=stride, padding=padding).numpy()
        want = conv2d_loops(x, w, b, stride, padding)
        assert got.shape == want.shape, f'stride={stride}, padding={padding}: shape {got.shape}, loops give {want.shape}'
        assert np.allclose(got, want, atol=0.0001), f'stride={stride}, padding={padding}: im2col + matmul must equal the loop definition; largest difference {np.abs(got - want).max():.3g}'
        assert got.dtype == np.float32, f'float32 in, float32 out; got {got.dtype}'

@test_case(points=None, hidden=False)
def test_conv2d_dilation_groups_and_same_padding(conv2d, conv2d_loops, Tensor, np):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 4, 7, 6)).astype(np.float32)
    w = rng.standard_normal((6, 2, 3, 2)).astype(np.float32)
    got = conv2d(Tensor(x), Tensor(w), None, 2, 1, (2, 1), 2).numpy()
    want = conv2d_loops(x, w, None, 2, 1, (2, 1), 2)
    assert got.shape == want.shape and np.allclose(got, want, atol=0.0001), f'stride 2, padding 1, dilation (2, 1), groups 2: expected shape {want.shape}, got {got.shape}' + (f', largest difference {np.abs(got - want).max():.3g}' if got.shape == want.shape else '') + ': reshape cols to (N, G, K, L) and the weight to (G, O/G, K)'
    same = conv2d(Tensor(x), Tensor(w), None, 1, 'same', 1, 2).numpy()
    want = conv2d_loops(np.pad(x, ((0, 0), (0, 0), (1, 1), (0, 1))), w, None, 1, 0, 1, 2)
    assert same.shape == (2, 6, 7, 6) and np.allclose(same, want, atol=0.0001), f"padding='same' keeps 7x6 and pads a 3x2 kernel by (1, 1) rows and (0, 1) columns (the odd one at the right); got shape {same.shape}"

@test_case(points=None, hidden=False)
def test_conv2d_gradients_match_finite_differences(conv2d, gradcheck, np):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 2, 5, 4))
    w = rng.standard_normal((3, 2, 3, 2))
    b = rng.standard_normal(3)
    try:
        ok = gradcheck(lambda a, k, c: conv2d(a, k, c, stride=2, padding=1), [x, w, b])
    except AssertionError as err:
        raise AssertionError(f'conv2d backward disagrees with finite differences (stride 2, padding 1): {err}') from None
    assert ok, f'gradcheck returned {ok!r} instead of True'
    w = rng.standard_normal((4, 1, 2, 3))
    try:
        ok = gradcheck(lambda a, k, c: conv2d(a, k, c, padding=(1, 2), dilation=(2, 1), groups=2), [x, w, b[:1].repeat(4)])
    except AssertionError as err:
        raise AssertionError(f'conv2d backward disagrees with finite differences (dilation (2, 1), groups 2): {err}') from None
    assert ok, f'gradcheck returned {ok!r} instead of True'

@test_case(points=None, hidden=False)
def test_conv2d_layer_init_and_shapes(Conv2d, Tensor, manual_seed, np):
    manual_seed(0)
    conv = Conv2d(3, 8, kernel_size=3, padding=1)
    assert conv.weight.shape == (8, 3, 3, 3), f'weight is (out_channels, in_channels, kh, kw) = (8, 3, 3, 3), got {conv.weight.shape}'
    bound = 1 / np.sqrt(27)
    wmax = float(np.abs(conv.weight.numpy()).max())
    assert 0.8 * bound < wmax <= bound, f'init bound is 1/sqrt(fan_in) = 1/sqrt(3*3*3) = {bound:.3f}; max |w| is {wmax:.3f}'
    nobias = Conv2d(3, 8, 3, bias=False).bias
    assert nobias is None, f'bias=False sets bias to None, got {type(nobias).__name__}: a zero bias would still be trained and saved'
    out = conv(Tensor(np.ones((2, 3, 5, 5), dtype=np.float32)))
    assert out.shape == (2, 8, 5, 5), f'padding=1 keeps 5x5 for a 3x3 kernel, got {out.shape}'
    depthwise = Conv2d(4, 8, (3, 2), groups=4, dilation=2)
    assert depthwise.weight.shape == (8, 1, 3, 2), f'groups=4: each filter sees in_channels / groups = 1 channel, so the weight is (8, 1, 3, 2); got {depthwise.weight.shape}'
    wmax = float(np.abs(depthwise.weight.numpy()).max())
    assert wmax <= 1 / np.sqrt(6), f'fan_in of a grouped convolution is in_channels / groups * kh * kw = 6, so the bound is {1 / np.sqrt(6):.3f}; max |w| is {wmax:.3f}'

