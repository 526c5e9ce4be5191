from otter.test_files import test_case

OK_FORMAT = False

name = "conv_loops"
points = 0

@test_case(points=None, hidden=False)
def test_conv2d_loops_hand_computed(conv2d_loops, np):
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    k = np.array([[[[1.0, 0.0], [0.0, 1.0]]]], dtype=np.float32)
    out = conv2d_loops(x, k)
    assert out.shape == (1, 1, 3, 3), f'a 2x2 kernel on a 4x4 image gives 3x3 outputs (stride 1, no padding), got {out.shape}'
    assert np.allclose(out[0, 0, 0], [5.0, 7.0, 9.0]), f'out[0, 0] = x[0,0]*1 + x[1,1]*1 = 0 + 5 = 5, then 7, 9; got {out[0, 0, 0].tolist()}'
    assert out.dtype == np.float32, f"keep the input's dtype (float32), got {out.dtype}"

@test_case(points=None, hidden=False)
def test_conv2d_loops_stride_padding_bias(conv2d_loops, np):
    x = np.ones((2, 3, 5, 5), dtype=np.float32)
    w = np.ones((4, 3, 3, 3), dtype=np.float32)
    b = np.array([0.0, 1.0, 2.0, 3.0], dtype=np.float32)
    out = conv2d_loops(x, w, b, stride=2, padding=1)
    assert out.shape == (2, 4, 3, 3), f'(5 + 2*1 - 3) // 2 + 1 = 3 positions per axis: expected (2, 4, 3, 3), got {out.shape}'
    assert np.isclose(out[0, 0, 1, 1], 27.0), f'a window fully inside a ones image sums 3 channels x 9 = 27, got {out[0, 0, 1, 1]}'
    assert np.isclose(out[0, 0, 0, 0], 12.0), f'the corner window overlaps 2x2 real pixels (the rest is zero padding): 3 x 4 = 12, got {out[0, 0, 0, 0]}'
    assert np.isclose(out[1, 3, 1, 1], 30.0), f'filter 3 adds its bias 3.0 to every output: expected 30, got {out[1, 3, 1, 1]}'

@test_case(points=None, hidden=False)
def test_conv2d_loops_dilation_and_groups(conv2d_loops, np):
    x = np.arange(2 * 4 * 5 * 5, dtype=np.float64).reshape(2, 4, 5, 5)
    w = np.arange(6 * 2 * 2 * 2, dtype=np.float64).reshape(6, 2, 2, 2) / 10
    out = conv2d_loops(x, w, dilation=(2, 1), groups=2)
    assert out.shape == (2, 6, 3, 4), f'dilation 2 spreads a 2-row kernel over 3 rows: H_out = 5 - 2 = 3, W_out = 4; expected (2, 6, 3, 4), got {out.shape}'
    want = np.sum(x[1, 2:4, 1:4:2, 2:4] * w[4])
    assert np.isclose(out[1, 4, 1, 2], want), f'filter 4 is in group 4 // 3 = 1, so it reads channels 2 and 3, taps 2 rows apart: expected {want:.2f}, got {out[1, 4, 1, 2]:.2f}'

