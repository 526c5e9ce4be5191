from otter.test_files import test_case

OK_FORMAT = False

name = "pointwise"
points = 0

@test_case(points=None, hidden=False)
def test_sigmoid_is_stable(sigmoid, Tensor, np):
    with np.errstate(over='raise', invalid='raise'):
        out = sigmoid(Tensor([-1000.0, -100.0, 0.0, 100.0, 1000.0])).numpy()
    assert not np.isnan(out).any(), f'sigmoid returned NaN: {out}; exp overflowed (branch on the sign)'
    assert np.allclose(out, [0.0, 0.0, 0.5, 1.0, 1.0]), f'sigmoid of large |x| is wrong: {out}'
    assert out[1] > 0, f'sigmoid(-100) = 3.7e-44 is tiny but positive, got {out[1]}: for x < 0 use exp(x) / (1 + exp(x))'
    at_two = sigmoid(Tensor([2.0])).item()
    assert abs(at_two - 0.880797) < 1e-06, f'sigmoid(2) = 1 / (1 + exp(-2)) = 0.880797, got {at_two}'

@test_case(points=None, hidden=False)
def test_tanh_values(tanh, Tensor, np):
    out = tanh(Tensor([-1000.0, 0.0, 1.0])).numpy()
    assert np.allclose(out, [-1.0, 0.0, 0.7615942]), f'tanh is wrong: {out}'

