from otter.test_files import test_case

OK_FORMAT = False

name = "modules"
points = 0

@test_case(points=None, hidden=False)
def test_modules_match_functions(ReLU, GELU, Softmax, LogSoftmax, Tensor, np):
    x = Tensor([[-1.0, 0.5, 2.0], [3.0, -4.0, 0.0]])
    assert np.allclose(ReLU()(x).numpy(), [[0.0, 0.5, 2.0], [3.0, 0.0, 0.0]]), f'ReLU()(x) must equal relu(x); got {ReLU()(x).numpy().tolist()}: fix relu first'
    got = GELU('tanh')(x).shape
    assert got == (2, 3), f'GELU is element-wise: it keeps the shape (2, 3), got {got}'
    p = Softmax(dim=0)(x).numpy()
    assert np.allclose(p.sum(axis=0), 1.0), f'Softmax(dim=0) must normalise along dim 0: column sums should be 1, got {p.sum(axis=0).round(4).tolist()} (pass dim on to softmax)'
    lp = LogSoftmax(dim=1)(x).numpy()
    rows = np.exp(lp).sum(axis=1)
    assert np.allclose(rows, 1.0), f'exp(LogSoftmax(dim=1)(x)) rows sum to 1, got {rows.round(4).tolist()}'

