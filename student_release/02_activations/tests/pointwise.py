from otter.test_files import test_case

OK_FORMAT = False

name = "pointwise"
points = 0

@test_case(points=None, hidden=False)
def test_relu_values(relu, Tensor, np):
    out = relu(Tensor([-2.0, -0.5, 0.0, 0.5, 3.0]))
    assert isinstance(out, Tensor), 'relu must return a Tensor (so autograd can track it)'
    assert out.numpy().tolist() == [0.0, 0.0, 0.0, 0.5, 3.0], f'relu keeps positives and zeroes negatives, got {out.numpy().tolist()}'
    assert out.dtype == np.float32, f'relu must keep float32, got {out.dtype}: a float64 result doubles the memory of every activation (use Tensor.clamp, not NumPy on .data)'

@test_case(points=None, hidden=False)
def test_sigmoid_is_stable(sigmoid, Tensor, np):
    with np.errstate(over='raise', invalid='raise'):
        out = sigmoid(Tensor([-1000.0, -100.0, 0.0, 100.0, 1000.0])).numpy()
    assert not np.isnan(out).any(), 'sigmoid returned NaN: exp overflowed (branch on the sign)'
    assert np.allclose(out, [0.0, 0.0, 0.5, 1.0, 1.0]), f'sigmoid of large |x| is wrong: {out}'
    assert out[1] > 0, 'sigmoid(-100) = 3.7e-44 is tiny but positive: use exp(x) / (1 + exp(x))'
    assert abs(sigmoid(Tensor([2.0])).item() - 0.880797) < 1e-06, 'sigmoid(2) = 0.880797'

@test_case(points=None, hidden=False)
def test_tanh_values(tanh, Tensor, np):
    out = tanh(Tensor([-1000.0, 0.0, 1.0])).numpy()
    assert np.allclose(out, [-1.0, 0.0, 0.7615942]), f'tanh is wrong: {out}'

