from otter.test_files import test_case

OK_FORMAT = False

name = "im2col"
points = 0

@test_case(points=None, hidden=False)
def test_sliding_windows_is_a_view(sliding_windows, np):
    x = np.arange(2 * 3 * 5 * 6, dtype=np.float32).reshape(2, 3, 5, 6)
    win = sliding_windows(x, (3, 2), (2, 2))
    assert win.shape == (2, 3, 3, 2, 2, 3), f'(N, C, kh, kw, H_out, W_out) = (2, 3, 3, 2, 2, 3) for a 3x2 kernel, stride 2 on 5x6; got {win.shape}'
    assert np.shares_memory(win, x), f'expected a view of x, got a copy (win.base is {type(win.base).__name__}): build the windows with as_strided, or a large image is copied kh*kw times'
    got, want = (win[1, 2, 2, 1, 1, 2], x[1, 2, 1 * 2 + 2, 2 * 2 + 1])
    assert got == want, f'view[1, 2, 2, 1, 1, 2] must be x[1, 2, 1*2 + 2, 2*2 + 1] = {want}, got {got}: view[n, c, u, v, i, j] is x[n, c, i*sh + u, j*sw + v]; check the strides of the last two axes (the window moves by the stride)'
    dil = sliding_windows(x, (2, 2), (1, 2), (3, 2))
    assert dil.shape == (2, 3, 2, 2, 2, 2), f'dilation (3, 2) makes a 2x2 kernel span 4x3 pixels: H_out = 5 - 3 = 2, W_out = (6 - 3) // 2 + 1 = 2; expected (2, 3, 2, 2, 2, 2), got {dil.shape}'
    got, want = (dil[0, 1, 1, 1, 1, 1], x[0, 1, 1 + 1 * 3, 1 * 2 + 1 * 2])
    assert got == want, f'view[0, 1, 1, 1, 1, 1] must be x[0, 1, i*sh + u*dh, j*sw + v*dw] = x[0, 1, 4, 4] = {want}, got {got}: the window axes step by the dilation'

@test_case(points=None, hidden=False)
def test_im2col_columns_are_flattened_windows(im2col, np):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 5, 5)).astype(np.float32)
    cols = im2col(x, (3, 3), (1, 1))
    assert cols.shape == (2, 27, 9), f'(N, C*kh*kw, L) = (2, 27, 9), got {cols.shape}'
    i, j = (1, 2)
    want = x[1, :, i:i + 3, j:j + 3].reshape(-1)
    got = cols[1, :, i * 3 + j]
    assert np.array_equal(got, want), f'column i*W_out + j = 5 must be the window of output (1, 2) flattened in (c, u, v) order: expected {want[:4].round(3).tolist()}..., got {got[:4].round(3).tolist()}...; the weights are flattened the same way, so any other order mixes up the taps'

@test_case(points=None, hidden=False)
def test_col2im_counts_overlaps_and_is_the_adjoint(col2im, im2col, np):
    counts = col2im(np.ones((1, 4, 9), dtype=np.float32), (1, 1, 4, 4), (2, 2), (1, 1))[0, 0]
    assert counts[0, 0] == 1 and counts[1, 1] == 4 and (counts[0, 1] == 2), f'a corner pixel lies in 1 window of a 2x2 kernel, a central one in 4, an edge one in 2; col2im of ones gave {counts.tolist()}: add (+=) the overlapping windows'
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 2, 6, 5))
    c = rng.standard_normal((2, 2 * 3 * 2, 2 * 2))
    lhs = float(np.sum(im2col(x, (3, 2), (2, 3)) * c))
    rhs = float(np.sum(x * col2im(c, x.shape, (3, 2), (2, 3))))
    assert np.isclose(lhs, rhs), f'col2im is the adjoint of im2col: <im2col(x), c> must equal <x, col2im(c)>, got {lhs:.6f} vs {rhs:.6f} (stride 2x3, kernel 3x2)'

