from otter.test_files import test_case

OK_FORMAT = False

name = "cross_entropy"
points = 0

@test_case(points=None, hidden=False)
def test_cross_entropy_values(cross_entropy, nll_loss, Tensor, np):
    logits = Tensor([[2.0, 1.0, 0.1], [0.5, 2.5, 0.3]])
    y = Tensor(np.array([0, 2]))
    loss = cross_entropy(logits, y)
    assert loss.shape == (), f"reduction='mean' gives a 0-d tensor, got shape {loss.shape}"
    assert np.isclose(loss.item(), 1.4185, atol=0.0001), f'mean of -log softmax(z)[y] over the batch is 1.4185, got {loss.item():.4f}'
    per = cross_entropy(logits, y, reduction='none').numpy()
    assert np.allclose(per, [0.41703, 2.41998], atol=0.0001), f'per-sample losses are wrong: {per}'
    total = cross_entropy(logits, y, reduction='sum').item()
    assert np.isclose(total, per.sum(), atol=0.0001), f"reduction='sum' adds the per-sample losses: expected {per.sum():.5f}, got {total}"
    logp = Tensor([[-0.5, -1.0], [-2.0, -0.1]])
    got = nll_loss(logp, Tensor(np.array([0, 1]))).item()
    assert np.isclose(got, 0.3), f'nll_loss averages -logp[i, y_i]: (0.5 + 0.1) / 2 = 0.3, got {got}'

@test_case(points=None, hidden=False)
def test_cross_entropy_is_stable(cross_entropy, Tensor, np):
    logits = Tensor([[1000.0, -1000.0], [-1000.0, 1000.0]])
    loss = cross_entropy(logits, Tensor(np.array([1, 1])), reduction='none').numpy()
    assert np.isfinite(loss).all(), f'cross_entropy of logits +-1000 must be finite, got {loss}: log(softmax) underflows to log(0); use log_softmax'
    assert np.allclose(loss, [2000.0, 0.0]), f'a confident wrong answer costs 2000 here, got {loss}'
    masked = Tensor([[0.0, 0.0, -np.inf]])
    with np.errstate(invalid='ignore'):
        got = cross_entropy(masked, Tensor(np.array([0]))).item()
    assert np.isclose(got, np.log(2)), f'with class 2 masked out (logit -inf) the loss of two equal logits is log 2 = 0.6931, got {got}: -inf * 0 is NaN, so use _picked_loss(logp, coef, dim), not logp * coef'

