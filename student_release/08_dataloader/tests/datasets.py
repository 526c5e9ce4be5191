from otter.test_files import test_case

OK_FORMAT = False

name = "datasets"
points = 0

@test_case(points=None, hidden=False)
def test_tensor_dataset_rows_and_length(TensorDataset, Tensor, np):
    x = Tensor(np.arange(12, dtype=np.float32).reshape(4, 3))
    y = Tensor(np.array([3, 1, 4, 1]))
    ds = TensorDataset(x, y)
    assert len(ds) == 4, f'len() is the size of dimension 0 (4 samples), got {len(ds)}: the DataLoader uses it to know how many indices to draw'
    item = ds[2]
    assert isinstance(item, tuple) and len(item) == 2, f'ds[i] must be a tuple with one entry per tensor, got {type(item).__name__}'
    assert item[0].tolist() == [6.0, 7.0, 8.0] and item[1].tolist() == 4, f'ds[2] is (x[2], y[2]) = ([6, 7, 8], 4), got ({item[0].tolist()}, {item[1].tolist()})'
    last = ds[-1][1].tolist()
    assert last == 1, f'negative indices count from the end, like x[-1]: expected label 1, got {last}'

