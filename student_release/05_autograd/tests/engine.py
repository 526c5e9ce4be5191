from otter.test_files import test_case

OK_FORMAT = False

name = "engine"
points = 0

@test_case(points=None, hidden=False)
def test_backward_fills_leaf_gradients(backward, Tensor, np):
    x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = Tensor([0.5], requires_grad=True)
    backward((x * x + b).sum())
    got = None if x.grad is None else x.grad.numpy().tolist()
    assert got == [2.0, 4.0, 6.0], f"backward((x * x + b).sum()) gives x.grad = 2x = [2, 4, 6] (x is used twice: the two uses add up), got {got}: every leaf's gradient is what the optimizer steps along"
    got_b = None if b.grad is None else (b.grad.shape, b.grad.numpy().tolist())
    assert got_b == ((1,), [3.0]), f"b of shape (1,) was broadcast over 3 elements, so b.grad is their sum, shape (1,) value [3]; got (shape, values) {got_b}: unbroadcast each input's gradient"
    backward((x * 2.0).sum())
    again = x.grad.numpy().tolist()
    assert again == [4.0, 6.0, 8.0], f'a second backward adds into .grad: [2, 4, 6] + [2, 2, 2] = [4, 6, 8], got {again}: leaf gradients accumulate, which is why training calls zero_grad()'
    assert x.grad.dtype == np.float32, f'float32 inputs keep float32 gradients, got {x.grad.dtype}: float64 doubles memory'

