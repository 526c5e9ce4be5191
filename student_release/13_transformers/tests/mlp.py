from otter.test_files import test_case

OK_FORMAT = False

name = "mlp"
points = 0

@test_case(points=None, hidden=False)
def test_mlp_structure_and_forward(MLP, gelu_tanh, Tensor, np):
    mlp = MLP(6, hidden=10)
    shapes = [(n, p.shape) for n, p in mlp.named_parameters()]
    assert shapes == [('fc.weight', (10, 6)), ('fc.bias', (10,)), ('proj.weight', (6, 10)), ('proj.bias', (6,))], f'fc (hidden, C) then proj (C, hidden); got {shapes}'
    first = [p.shape for p in MLP(6).parameters()][0]
    assert first == (24, 6), f'hidden defaults to 4 * d_model: fc is (24, 6), got {first}'
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 6)).astype(np.float32)
    y = mlp(Tensor(x))
    assert y.shape == (2, 3, 6) and y.dtype == np.float32, f'(B, T, C) in, (B, T, C) float32 out; got {y.shape} {y.dtype}'
    h = x @ mlp.fc.weight.numpy().T + mlp.fc.bias.numpy()
    h = 0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h ** 3)))
    expected = h @ mlp.proj.weight.numpy().T + mlp.proj.bias.numpy()
    assert y.shape == expected.shape and np.allclose(y.numpy(), expected, atol=1e-05), f'MLP(x) = proj(gelu_tanh(fc(x))): expected shape {expected.shape}, got {y.shape}' + (f', max error {np.abs(y.numpy() - expected).max():.3g}' if y.shape == expected.shape else '') + '; check the order of the layers and the activation'
    t = Tensor(x, requires_grad=True)
    mlp(t).sum().backward()
    assert t.grad is not None and t.grad.shape == x.shape, f'the input must receive a gradient of shape {x.shape}, got {(None if t.grad is None else t.grad.shape)}'
    missing = [n for n, p in mlp.named_parameters() if p.grad is None]
    assert missing == [], f'every parameter gets a gradient; none reached {missing}'

