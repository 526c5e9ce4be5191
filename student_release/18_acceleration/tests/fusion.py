from otter.test_files import test_case

OK_FORMAT = False

name = "fusion"
points = 0

@test_case(points=None, hidden=False)
def test_bias_gelu_matches_the_composed_version(bias_gelu, gelu, Tensor, np):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 6)).astype(np.float32) * 3
    b = rng.standard_normal(6).astype(np.float32)
    fused = bias_gelu(Tensor(x), Tensor(b))
    composed = gelu(Tensor(x) + Tensor(b), approximate='tanh')
    assert fused.dtype == np.float32, f'float32 in, float32 out; got {fused.dtype}'
    assert np.allclose(fused.numpy(), composed.numpy(), atol=1e-05), f"fused must equal gelu(x + b, approximate='tanh'); max difference {np.abs(fused.numpy() - composed.numpy()).max():.3g}"

@test_case(points=None, hidden=False)
def test_bias_gelu_gradients(bias_gelu, gradcheck, Tensor, np):
    rng = np.random.default_rng(3)
    x, b = (rng.standard_normal((3, 2, 5)), rng.standard_normal(5))
    try:
        gradcheck(bias_gelu, [x, b], eps=1e-06, atol=1e-06, rtol=1e-05)
    except AssertionError as err:
        raise AssertionError(f'dL/dx and dL/dbias must match central differences (float64): {err}') from None
    xt, bt = (Tensor(x, requires_grad=True), Tensor(b, requires_grad=True))
    bias_gelu(xt, bt).sum().backward()
    assert bt.grad.shape == (5,) and xt.grad.shape == (3, 2, 5), f"expected gradients of shape (5,) for the bias and (3, 2, 5) for x, got {bt.grad.shape} and {xt.grad.shape}: the bias's gradient is summed over every leading axis, or the optimizer cannot subtract it"

