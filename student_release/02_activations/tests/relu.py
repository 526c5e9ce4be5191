from otter.test_files import test_case

OK_FORMAT = False

name = "relu"
points = 0

@test_case(points=None, hidden=False)
def test_relu_values(relu, Tensor, np):
    out = relu(Tensor([-2.0, -0.5, 0.0, 0.5, 3.0]))
    assert isinstance(out, Tensor), f'relu must return a Tensor (so autograd can track it), got {type(out).__name__}'
    assert out.numpy().tolist() == [0.0, 0.0, 0.0, 0.5, 3.0], f'relu keeps positives and zeroes negatives, got {out.numpy().tolist()}'
    assert out.dtype == np.float32, f"relu must keep float32, got {out.dtype}: a float64 result doubles the memory of every activation (np.maximum(x, 0) keeps the input's dtype)"

@test_case(points=None, hidden=False)
def test_relu_gradient_is_zero_at_zero(_ReLUFn, Context, np):
    ctx = Context()
    out = _ReLUFn.forward(ctx, np.array([-1.0, 0.0, 2.0], dtype=np.float32))
    assert out.tolist() == [0.0, 0.0, 2.0], f'relu([-1, 0, 2]) is [0, 0, 2], got {out.tolist()}'
    assert len(ctx.saved) == 1, f'forward must save one array (the output) with ctx.save_for_backward; ctx.saved holds {len(ctx.saved)}: the given backward reads it'
    grad, = _ReLUFn.backward(ctx, np.ones(3, dtype=np.float32))
    assert grad.tolist() == [0.0, 0.0, 1.0], f"relu's gradient is [0, 0, 1] at x = [-1, 0, 2] (0 at exactly 0, as in PyTorch), got {grad.tolist()}: save the output of np.maximum, not something else"

