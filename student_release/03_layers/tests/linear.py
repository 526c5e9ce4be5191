from otter.test_files import test_case

OK_FORMAT = False

name = "linear"
points = 0

@test_case(points=None, hidden=False)
def test_linear_shapes_and_init(Linear, Tensor, manual_seed, np):
    manual_seed(0)
    lin = Linear(16, 4)
    assert lin.weight.shape == (4, 16), f"weight is (out_features, in_features) = (4, 16), got {lin.weight.shape}: checkpoints and optimizers rely on PyTorch's layout"
    assert lin.bias.shape == (4,), f'bias has one entry per output: (4,), got {lin.bias.shape}'
    assert lin.weight.requires_grad, f'weights are Parameters (requires_grad=True), got requires_grad={lin.weight.requires_grad}: the optimizer would never see them'
    w = lin.weight.numpy()
    assert w.dtype == np.float32, f'parameters are float32, got {w.dtype}: float64 weights double memory and make every later layer run in float64'
    assert np.abs(w).max() <= 0.25 and np.abs(w).max() > 0.15, f'init bound is 1/sqrt(in_features) = 0.25 for in_features = 16, but max |w| is {np.abs(w).max():.3f}: draw from Uniform(-bound, bound) so activations keep their scale'
    nob = Linear(16, 4, bias=False).bias
    assert nob is None, f'bias=False sets bias to None, got {type(nob).__name__}'

@test_case(points=None, hidden=False)
def test_linear_forward(Linear, Tensor, np):
    lin = Linear(3, 2)
    lin.weight.data[...] = np.array([[1.0, 0.0, -1.0], [0.5, 0.5, 0.5]], dtype=np.float32)
    lin.bias.data[...] = np.array([0.0, 1.0], dtype=np.float32)
    out = lin(Tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]]))
    assert out.shape == (2, 2), f'(2, 3) -> (2, 2), got {out.shape}'
    assert np.allclose(out.numpy(), [[-2.0, 4.0], [0.0, 1.0]]), f'y = x @ W.T + b; got {out.numpy().tolist()}'
    got = lin(Tensor(np.ones((5, 7, 3), dtype=np.float32))).shape
    assert got == (5, 7, 2), f'Linear acts on the last dimension of any (*, in_features) input: (5, 7, 3) -> (5, 7, 2), got {got}'

