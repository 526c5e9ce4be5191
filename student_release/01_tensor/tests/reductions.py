from otter.test_files import test_case

OK_FORMAT = False

name = "reductions"
points = 0

@test_case(points=None, hidden=False)
def test_reductions(Tensor, np):
    x = Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    total = x.sum()
    assert total.shape == () and total.item() == 21.0, f'sum() of [[1, 2, 3], [4, 5, 6]] is the 0-d tensor 21.0, got shape {total.shape}, values {total.numpy().tolist()}: with no dim, reduce over every element'
    cols = x.sum(dim=0).numpy().tolist()
    assert cols == [5.0, 7.0, 9.0], f'sum(dim=0) adds down the columns: [5, 7, 9], got {cols}: dim names the dimension that disappears'
    kept = x.sum(dim=1, keepdim=True)
    assert kept.shape == (2, 1), f'sum(dim=1, keepdim=True) keeps the summed dimension with size 1: (2, 1), got {kept.shape}: x / x.sum(dim=1, keepdim=True) only broadcasts with it'
    means = x.mean(dim=1).numpy().tolist()
    assert means == [2.0, 5.0], f'mean(dim=1) averages each row: [2, 5], got {means}: losses and normalisation average over the right dimension'
    top = x.max()
    assert top.item() == 6.0, f'max() is the largest element, 6.0, got {top.numpy().tolist()}'
    m = x.max(dim=1)
    vals, idx = (m.values.numpy().tolist(), m.indices.numpy().tolist())
    assert vals == [3.0, 6.0], f'max(dim=1).values are the row maxima [3, 6], got {vals}: return MaxResult(values, indices), values first'
    assert idx == [2, 2] and m.indices.dtype == np.int64, f'max(dim=1).indices say where the maxima are: int64 [2, 2], got {m.indices.dtype} {idx}: argmax along the same dim gives the predicted class'
    count = Tensor([True, True, False]).sum()
    assert count.dtype == np.int64 and count.item() == 2, f'the sum of a bool mask counts its True values as int64 (2), got {count.dtype} {count.item()}'
    every = x.sum(dim=())
    assert every.item() == 21.0, f'sum(dim=()) reduces every dimension in PyTorch (21.0), got {every.numpy()}'
    try:
        bad = Tensor([1, 2]).mean()
    except RuntimeError:
        pass
    else:
        raise AssertionError(f'the mean of an int tensor must raise RuntimeError as in PyTorch (call .float() first), but returned {bad.dtype} {bad.numpy().tolist()}')

