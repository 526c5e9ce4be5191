from otter.test_files import test_case

OK_FORMAT = False

name = "reductions"
points = 0

@test_case(points=None, hidden=False)
def test_reductions(Tensor, np):
    x = Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert x.sum().item() == 21.0, 'sum() adds every element'
    assert x.sum(dim=0).numpy().tolist() == [5.0, 7.0, 9.0], 'sum(dim=0) adds down the columns'
    assert x.sum(dim=1, keepdim=True).shape == (2, 1), 'keepdim=True keeps a size-1 dimension'
    assert x.mean(dim=1).numpy().tolist() == [2.0, 5.0], 'mean(dim=1) averages each row'
    assert x.max().item() == 6.0, 'max() is the largest element'
    m = x.max(dim=1)
    assert m.values.numpy().tolist() == [3.0, 6.0], 'max(dim=1).values are the row maxima'
    assert m.indices.numpy().tolist() == [2, 2], 'max(dim=1).indices say where they are'
    count = Tensor([True, True, False]).sum()
    assert count.dtype == np.int64 and count.item() == 2, f'the sum of a bool mask counts its True values as int64 (2), got {count.dtype} {count.item()}'
    assert x.sum(dim=()).item() == 21.0, f'sum(dim=()) reduces every dimension in PyTorch (21.0), got {x.sum(dim=()).numpy()}'
    try:
        Tensor([1, 2]).mean()
    except RuntimeError:
        pass
    else:
        raise AssertionError('the mean of an int tensor must raise RuntimeError as in PyTorch (call .float() first)')

