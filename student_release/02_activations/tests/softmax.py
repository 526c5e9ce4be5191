from otter.test_files import test_case

OK_FORMAT = False

name = "softmax"
points = 0

@test_case(points=None, hidden=False)
def test_softmax_rows_are_distributions(softmax, Tensor, np):
    x = Tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
    p = softmax(x, dim=1).numpy()
    assert np.allclose(p.sum(axis=1), 1.0), f'each row must sum to 1 along dim=1, got {p.sum(1)}'
    assert np.allclose(p[0], [0.09003057, 0.24472847, 0.66524096]), f'softmax([1, 2, 3]) is [0.0900, 0.2447, 0.6652] = exp(x - 3) / sum(exp(x - 3)); got {p[0]}'
    assert np.allclose(p[1], 1 / 3), f'equal logits give equal probabilities 1/3, got {p[1]}'
    q = softmax(x, dim=0).numpy()
    assert np.allclose(q.sum(axis=0), 1.0), f'softmax(x, dim=0) must make each column sum to 1, got column sums {q.sum(axis=0)}: use the given dim in both the max and the sum (not a fixed axis)'

@test_case(points=None, hidden=False)
def test_softmax_survives_large_logits(softmax, Tensor, np):
    with np.errstate(over='raise', invalid='raise'):
        p = softmax(Tensor([[1000.0, 0.0, -1000.0]]), dim=-1).numpy()
    assert not np.isnan(p).any(), f"softmax([1000, 0, -1000]) gave NaN: {p}; subtract each row's max before exp"
    assert np.allclose(p, [[1.0, 0.0, 0.0]]), f'softmax([1000, 0, -1000]) is [1, 0, 0], got {p}'
    empty = softmax(Tensor(np.zeros((2, 0), dtype=np.float32)), dim=1)
    assert empty.shape == (2, 0), f'the softmax of rows with no entries is empty, shape (2, 0), got {empty.shape}: pass initial=-np.inf to the max (an empty row has no maximum)'

@test_case(points=None, hidden=False)
def test_log_softmax_is_stable(log_softmax, Tensor, np):
    out = log_softmax(Tensor([[0.0, -200.0], [1000.0, 1000.0]]), dim=1).numpy()
    assert np.isfinite(out).all(), f'log_softmax gave -inf or NaN: {np.round(out, 4).tolist()}; work in log space (x - m - log sum exp(x - m))'
    assert np.allclose(out, [[0.0, -200.0], [-0.6931472, -0.6931472]]), f'log_softmax([0, -200]) is [0, -200] and log_softmax([1000, 1000]) is [-log 2, -log 2] = [-0.6931, -0.6931]; got {out.tolist()}'
    assert out.dtype == np.float32, f'log_softmax must keep float32, got {out.dtype}: float64 doubles the memory of every activation'

