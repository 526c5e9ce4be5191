from otter.test_files import test_case

OK_FORMAT = False

name = "layer_norm"
points = 0

@test_case(points=None, hidden=False)
def test_layer_norm_forward_normalises_each_row(layer_norm, Tensor, np):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((2, 3, 4, 5)) * 3 + 2).astype(np.float32)
    w = rng.standard_normal((4, 5)).astype(np.float32)
    b = rng.standard_normal((4, 5)).astype(np.float32)
    y = layer_norm(Tensor(x), (4, 5), Tensor(w), Tensor(b), eps=1e-05)
    assert y.shape == x.shape and y.dtype == np.float32, f'same shape and dtype as the input: expected {x.shape} float32, got {y.shape} {y.dtype}'
    mu = x.mean(axis=(2, 3), keepdims=True)
    var = x.var(axis=(2, 3), keepdims=True)
    expected = (x - mu) / np.sqrt(var + 1e-05) * w + b
    assert np.allclose(y.numpy(), expected, atol=0.0001), f'normalized_shape (4, 5) normalises the last TWO dims together, with the biased variance (divide by N, not N - 1); first values {y.numpy().ravel()[:3]} vs {expected.ravel()[:3]}'
    plain = layer_norm(Tensor(x), (5,)).numpy()
    assert np.allclose(plain.mean(-1), 0.0, atol=1e-05) and np.allclose(plain.std(-1), 1.0, atol=0.001), f'without weight and bias every row of the output has mean 0 and standard deviation ~1; got means up to {np.abs(plain.mean(-1)).max():.3g}, deviations {plain.std(-1).min():.3f} to {plain.std(-1).max():.3f}'
    try:
        layer_norm(Tensor(x), (4,))
    except RuntimeError:
        pass
    else:
        raise AssertionError('normalized_shape (4,) does not match the last dim 5: RuntimeError')
    try:
        layer_norm(Tensor(x), 5)
    except TypeError:
        pass
    else:
        raise AssertionError('F.layer_norm takes normalized_shape as a tuple, as PyTorch does: an int (5) is a TypeError (nn.LayerNorm(5) accepts the int)')

@test_case(points=None, hidden=False)
def test_layer_norm_backward_matches_finite_differences(layer_norm, Tensor, gradcheck, np):
    rng = np.random.default_rng(1)
    x, w, b = (rng.standard_normal((3, 2, 4)), rng.standard_normal(4), rng.standard_normal(4))
    try:
        gradcheck(lambda a, c, d: layer_norm(a, (4,), c, d) * Tensor(np.arange(24.0).reshape(3, 2, 4)), [x, w, b], eps=1e-06, atol=1e-06, rtol=1e-05)
    except AssertionError as err:
        raise AssertionError(f'dL/dx, dL/dweight and dL/dbias must match central differences: {err}') from None
    t = Tensor(x.astype(np.float32), requires_grad=True)
    layer_norm(t, (4,)).sum().backward()
    assert t.grad is not None and np.allclose(t.grad.numpy(), 0.0, atol=1e-05), f'the gradient of sum(layer_norm(x)) is 0: every row of the output sums to 0 whatever x is; got values up to {(np.abs(t.grad.numpy()).max() if t.grad is not None else None)}'

@test_case(points=None, hidden=False)
def test_layer_norm_module(LayerNorm, Tensor, np):
    ln = LayerNorm(6)
    names = [n for n, _ in ln.named_parameters()]
    assert names == ['weight', 'bias'], f'parameters are weight then bias, got {names}'
    assert np.array_equal(ln.weight.numpy(), np.ones(6)) and (not ln.bias.numpy().any()), f'weight starts at ones and bias at zeros (the identity), got weight {ln.weight.numpy().round(3).tolist()} and bias {ln.bias.numpy().round(3).tolist()}'
    assert ln.weight.dtype == np.float32 and ln.normalized_shape == (6,), f'float32 parameters and normalized_shape (6,); got {ln.weight.dtype}, {ln.normalized_shape}'
    rng = np.random.default_rng(2)
    ln.weight.data[...] = rng.standard_normal(6)
    ln.bias.data[...] = rng.standard_normal(6)
    x = Tensor(rng.standard_normal((2, 3, 6)).astype(np.float32), requires_grad=True)
    y = ln(x)
    xn = (x.numpy() - x.numpy().mean(-1, keepdims=True)) / np.sqrt(x.numpy().var(-1, keepdims=True) + 1e-05)
    want = xn * ln.weight.numpy() + ln.bias.numpy()
    assert y.shape == want.shape and np.allclose(y.numpy(), want, atol=1e-05), f'LayerNorm(x) = x_hat * weight + bias, with x_hat normalised over the last dim: expected shape {want.shape}, got {y.shape}' + (f', max error {np.abs(y.numpy() - want).max():.3g}' if y.shape == want.shape else '')
    y.sum().backward()
    assert ln.weight.grad is not None and ln.bias.grad is not None, f'weight and bias must receive gradients, got weight.grad {type(ln.weight.grad).__name__} and bias.grad {type(ln.bias.grad).__name__}: pass the Parameters, not their .data'
    assert np.allclose(ln.bias.grad.numpy(), 6.0), f'dL/dbias of a sum over (2, 3) rows is 6 per feature, got {ln.bias.grad.numpy()}'
    bare = LayerNorm((2, 3), eps=0.001, elementwise_affine=False)
    assert bare.weight is None and bare.bias is None and (list(bare.parameters()) == []), f'elementwise_affine=False: weight and bias are None and there are no parameters, got {len(list(bare.parameters()))} parameter(s)'
    nob = LayerNorm(4, bias=False).bias
    assert nob is None, f'bias=False: no shift parameter, got {type(nob).__name__}'

