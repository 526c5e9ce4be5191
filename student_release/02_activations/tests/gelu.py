from otter.test_files import test_case

OK_FORMAT = False

name = "gelu"
points = 0

@test_case(points=None, hidden=False)
def test_gelu_exact_and_tanh(gelu, Tensor, np):
    x = Tensor([-3.0, -1.0, 0.0, 1.0, 3.0])
    exact = gelu(x).numpy()
    assert np.allclose(exact, [-0.00404951, -0.15865526, 0.0, 0.8413447, 2.9959507], atol=1e-06), f'exact GELU is x * Phi(x); got {exact}'
    approx = gelu(x, approximate='tanh').numpy()
    assert np.allclose(approx, [-0.00363752, -0.15880801, 0.0, 0.841192, 2.9963627], atol=1e-06), f'the tanh approximation is 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))); got {approx}'
    assert exact.dtype == np.float32 and approx.dtype == np.float32, f'GELU must keep float32, got {exact.dtype} (exact) and {approx.dtype} (tanh): a float64 constant in the formula promotes the whole activation'
    try:
        gelu(x, approximate='fast')
    except ValueError:
        pass
    else:
        raise AssertionError("approximate='fast' is not a GELU variant: raise ValueError")

