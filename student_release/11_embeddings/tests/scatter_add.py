from otter.test_files import test_case

OK_FORMAT = False

name = "scatter_add"
points = 0

@test_case(points=None, hidden=False)
def test_repeated_indices_accumulate_gradients(embedding, Tensor, np):
    w = Tensor(np.ones((4, 2), dtype=np.float32), requires_grad=True)
    embedding(Tensor(np.array([1, 3, 1])), w).sum().backward()
    got = w.grad.numpy() if w.grad is not None else None
    assert got is not None and got.shape == (4, 2), f"the table's gradient has the table's shape (4, 2), got {(None if got is None else got.shape)}"
    assert np.array_equal(got, [[0, 0], [2, 2], [0, 0], [1, 1]]), f'id 1 is used twice, so row 1 gets 2 per element; rows 0 and 2 are unused (0). Got {got.tolist()}: use np.add.at, not g[idx] += rows (which adds a repeat only once)'

@test_case(points=None, hidden=False)
def test_padding_row_gets_no_gradient(embedding, Tensor, np):
    w = Tensor(np.ones((4, 2), dtype=np.float32), requires_grad=True)
    out = embedding(Tensor(np.array([[0, 2], [2, 3]])), w, padding_idx=2)
    assert np.array_equal(out.numpy()[0, 1], [1.0, 1.0]), f'the forward pass still reads the padding row as it is: expected [1.0, 1.0], got {out.numpy()[0, 1].tolist()} (padding_idx only stops its gradient)'
    out.sum().backward()
    got = w.grad.numpy()
    assert np.array_equal(got, [[1, 1], [0, 0], [0, 0], [1, 1]]), f'padding_idx=2 must get a zero gradient even though it is used twice; got {got.tolist()}'
    w.grad = None
    embedding(Tensor(np.array([3, 3])), w, padding_idx=-1).sum().backward()
    assert np.array_equal(w.grad.numpy()[3], [0.0, 0.0]), f'padding_idx=-1 means the last row (V - 1 = 3): it gets no gradient either, got {w.grad.numpy()[3].tolist()}'

