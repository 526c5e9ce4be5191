from otter.test_files import test_case

OK_FORMAT = False

name = "collate"
points = 0

@test_case(points=None, hidden=False)
def test_collate_stacks_pairs_into_a_list_of_tensors(default_collate, Tensor, np):
    samples = [(Tensor(np.full((1, 2, 2), i, dtype=np.float32)), i) for i in range(3)]
    out = default_collate(samples)
    assert isinstance(out, list) and len(out) == 2, f"a batch of (x, y) tuples becomes a list [X, Y] (PyTorch's rule), got {type(out).__name__}"
    xb, yb = out
    assert isinstance(xb, Tensor) and xb.shape == (3, 1, 2, 2) and (xb.dtype == np.float32), f"three (1, 2, 2) float32 images stack to a (3, 1, 2, 2) float32 Tensor, got {getattr(xb, 'shape', type(xb).__name__)}"
    top = float(xb.data[2].max())
    assert top == 2.0, f'sample i must land at batch position i: row 2 should hold 2.0, got {top}'
    assert isinstance(yb, Tensor) and yb.tolist() == [0, 1, 2] and (yb.dtype == np.int64), f'Python int labels become an int64 Tensor (what CrossEntropyLoss expects), got {yb!r}'

@test_case(points=None, hidden=False)
def test_collate_numbers_arrays_and_dicts(default_collate, Tensor, np):
    out = default_collate([{'img': np.zeros((2, 2), np.uint8), 'w': 0.5, 'id': 'a'}, {'img': np.ones((2, 2), np.uint8), 'w': 1.5, 'id': 'b'}])
    assert isinstance(out, dict) and set(out) == {'img', 'w', 'id'}, f'a dict sample gives a dict of collated fields, got {type(out).__name__}'
    assert isinstance(out['img'], Tensor) and out['img'].shape == (2, 2, 2) and (out['img'].dtype == np.uint8), f"got {type(out['img']).__name__} {getattr(out['img'], 'shape', '')} {getattr(out['img'], 'dtype', '')}: NumPy arrays are stacked into a Tensor that keeps their dtype (uint8 stays uint8: converting to float is a transform's job, not collate's)"
    assert out['w'].dtype == np.float64 and out['w'].tolist() == [0.5, 1.5], f"Python floats become a float64 Tensor (as in PyTorch), got {out['w']!r}"
    assert out['id'] == ['a', 'b'], f"strings are returned as the list, unchanged: expected ['a', 'b'], got {out['id']!r}"
    try:
        default_collate([Tensor(np.zeros(3)), Tensor(np.zeros(4))])
    except RuntimeError:
        pass
    else:
        raise AssertionError('tensors of different shapes cannot be stacked: raise RuntimeError')

