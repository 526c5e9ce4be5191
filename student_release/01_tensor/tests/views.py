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
        raise AssertionError('view of a non-contiguous tensor must raise RuntimeError')
    p = Tensor(np.zeros((2, 3, 4, 5))).permute(0, 2, 3, 1)
    assert p.shape == (2, 4, 5, 3), 'permute(0, 2, 3, 1) turns NCHW into NHWC'

