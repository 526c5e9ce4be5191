from otter.test_files import test_case

OK_FORMAT = False

name = "views"
points = 0

@test_case(points=None, hidden=False)
def test_strides_and_contiguity(Tensor, np):
    x = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert x.stride() == (3, 1), f'strides count elements, not bytes: expected (3, 1), got {x.stride()}'
    t = x.transpose(0, 1)
    assert t.shape == (3, 2), f'transpose(0, 1) of a (2, 3) tensor swaps the two sizes to (3, 2), got shape {t.shape}: every x.T in a linear layer depends on it'
    assert t.stride() == (1, 3), f'transpose swaps the strides too: (3, 1) becomes (1, 3), got {t.stride()}: the strides are how a view finds its elements without copying'
    assert np.shares_memory(t.data, x.data), f'transpose must be a view of x, but its data (strides {t.data.strides} bytes) is a copy: a transpose should cost nothing, whatever the size of x'
    flags = (x.is_contiguous(), t.is_contiguous())
    assert flags == (True, False), f'a (2, 3) matrix is contiguous and its transpose (strides {t.stride()}) is not; is_contiguous() gave {flags[0]} and {flags[1]}: kernels copy non-contiguous inputs, so this decides when a copy happens'
    empty = Tensor(np.zeros((3, 0), dtype=np.float32)).transpose(0, 1)
    assert empty.is_contiguous(), f"a tensor with no elements is contiguous (nothing to lay out, PyTorch's convention), but is_contiguous() gave False for shape {empty.shape}, strides {empty.stride()}"

@test_case(points=None, hidden=False)
def test_indexing_like_pytorch(Tensor, np):
    x = Tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    row = x[1]
    assert row.shape == (3, 4) and np.shares_memory(row.data, x.data), f'x[1] selects a (3, 4) view of x; got shape {row.shape}: basic indexing never copies'
    assert x[:, 1:, ::2].shape == (2, 2, 2), f'x[:, 1:, ::2] has shape (2, 2, 2), got {x[:, 1:, ::2].shape}'
    idx = Tensor(np.array([0, 2]))
    got = x[0, :, idx]
    assert got.shape == (3, 2), f"x[0, :, idx] must have shape (3, 2) as in PyTorch (x[0] first, then [:, idx]), got {got.shape}: NumPy's rule puts idx's dimension first; apply integers first"
    assert got.numpy().tolist()[1] == [4.0, 6.0], f'x[0, :, [0, 2]] row 1 is [4, 6], got {got.numpy().tolist()[1]}'
    try:
        flipped = x[::-1]
    except ValueError:
        pass
    else:
        raise AssertionError(f'x[::-1] must raise ValueError (PyTorch refuses negative steps: use x.flip(0)), but returned shape {flipped.shape}')

@test_case(points=None, hidden=False)
def test_reshape_and_view(Tensor, np):
    x = Tensor(np.arange(12, dtype=np.float32))
    r = x.reshape(3, -1)
    assert r.shape == (3, 4), f'reshape(3, -1) of 12 elements infers the missing size 12 / 3 = 4, so (3, 4); got shape {r.shape}: -1 is how batch code reshapes without knowing the batch size'
    assert np.shares_memory(r.data, x.data), f'reshaping a contiguous tensor must give a view, but the (3, 4) result (strides {r.stride()}) is a copy: call self.data.reshape, which never copies when it can avoid it'
    r2 = x.reshape((2, 6))
    assert r2.shape == (2, 6), f'reshape((2, 6)) (one tuple) must work like reshape(2, 6), got shape {r2.shape}: x.reshape(other.shape) passes a tuple'
    try:
        bad = x.reshape(5, 5)
    except RuntimeError:
        pass
    else:
        raise AssertionError(f'reshape(5, 5) of 12 elements must raise RuntimeError (25 != 12), but returned shape {bad.shape}: a wrong element count is a bug to report, not to hide')
    try:
        flat = x.reshape(3, 4).transpose(0, 1).view(12)
    except RuntimeError:
        pass
    else:
        raise AssertionError(f'view(12) of a transposed (4, 3) matrix must raise RuntimeError: no single stride walks it in row-major order; got shape {flat.shape}, values {flat.numpy()[:4].tolist()}... (use reshape, which copies)')
    part = Tensor(np.zeros((4, 6), dtype=np.float32))[:, :3]
    v = part.view(2, 2, 3)
    assert v.shape == (2, 2, 3) and np.shares_memory(v.data, part.data), f'x[:, :3] is not contiguous, but its strides (6, 1) allow the view (2, 2, 3) (strides (12, 6, 1)); got shape {v.shape}: do not refuse every non-contiguous tensor'
    p = Tensor(np.zeros((2, 3, 4, 5))).permute(0, 2, 3, 1)
    assert p.shape == (2, 4, 5, 3), f'permute(0, 2, 3, 1) turns NCHW (2, 3, 4, 5) into NHWC (2, 4, 5, 3), got shape {p.shape}: dimension i of the result is dimension dims[i] of the input'

