from otter.test_files import test_case

OK_FORMAT = False

name = "views"
points = 0

@test_case(points=None, hidden=False)
def test_strides_and_contiguity(Tensor, np):
    x = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert x.stride() == (3, 1), f'strides count elements, not bytes: expected (3, 1), got {x.stride()}'
    t = x.transpose(0, 1)
    assert t.shape == (3, 2), 'transpose(0, 1) swaps the two sizes'
    assert t.stride() == (1, 3), 'transpose swaps the strides too'
    assert np.shares_memory(t.data, x.data), 'transpose must be a view: no copy of the data'
    assert x.is_contiguous() and (not t.is_contiguous()), 'a transposed matrix is not contiguous'
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
        x[::-1]
    except ValueError:
        pass
    else:
        raise AssertionError('x[::-1] must raise ValueError: PyTorch refuses negative steps')

@test_case(points=None, hidden=False)
def test_reshape_and_view(Tensor, np):
    x = Tensor(np.arange(12, dtype=np.float32))
    r = x.reshape(3, -1)
    assert r.shape == (3, 4), '-1 infers the missing size: 12 / 3 = 4'
    assert np.shares_memory(r.data, x.data), 'reshaping a contiguous tensor should not copy'
    assert x.reshape((2, 6)).shape == (2, 6), 'reshape accepts a tuple too'
    try:
        x.reshape(5, 5)
    except RuntimeError:
        pass
    else:
        raise AssertionError('reshape to 25 elements from 12 must raise RuntimeError')
    try:
        x.reshape(3, 4).transpose(0, 1).view(12)
    except RuntimeError:
        pass
    else:
        raise AssertionError('view of a transposed matrix must raise RuntimeError: no single stride walks it in row-major order')
    part = Tensor(np.zeros((4, 6), dtype=np.float32))[:, :3]
    v = part.view(2, 2, 3)
    assert v.shape == (2, 2, 3) and np.shares_memory(v.data, part.data), f'x[:, :3] is not contiguous, but its strides (6, 1) allow the view (2, 2, 3) (strides (12, 6, 1)); got shape {v.shape}: do not refuse every non-contiguous tensor'
    p = Tensor(np.zeros((2, 3, 4, 5))).permute(0, 2, 3, 1)
    assert p.shape == (2, 4, 5, 3), 'permute(0, 2, 3, 1) turns NCHW into NHWC'

