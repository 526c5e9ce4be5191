from otter.test_files import test_case

OK_FORMAT = False

name = "pooling"
points = 0

@test_case(points=None, hidden=False)
def test_max_pool_values_and_gradient(max_pool2d, Tensor, np):
    x = Tensor(np.array([[[[1, 3, 2, 0], [5, 4, 1, 1], [0, 2, 7, 6], [1, 0, 3, 4]]]], dtype=np.float32), requires_grad=True)
    out = max_pool2d(x, 2)
    assert out.shape == (1, 1, 2, 2), f'2x2 windows, stride 2 (default): (1, 1, 2, 2), got {out.shape}'
    assert out.numpy()[0, 0].tolist() == [[5.0, 2.0], [2.0, 7.0]], f'each output is the max of its 2x2 window: [[5, 2], [2, 7]], got {out.numpy()[0, 0].tolist()}'
    out.sum().backward()
    want = np.zeros((4, 4), dtype=np.float32)
    want[1, 0] = want[0, 2] = want[2, 1] = want[2, 2] = 1.0
    assert np.array_equal(x.grad.numpy()[0, 0], want), f"the gradient goes to each window's maximum only (the 5, the two 2s and the 7), nowhere else. Got {x.grad.numpy()[0, 0].tolist()}"

@test_case(points=None, hidden=False)
def test_max_pool_ties_pass_the_gradient_once(max_pool2d, Tensor, np):
    x = Tensor(np.zeros((1, 2, 4, 4), dtype=np.float32), requires_grad=True)
    max_pool2d(x, 2).sum().backward()
    total = float(x.grad.numpy().sum())
    assert total == 8.0, f'8 windows of four tied zeros pass on 8 gradients in total (one each, to the first zero), got {total}: give the gradient to the first maximum only'
    first = x.grad.numpy()[0, 0, :2, :2]
    assert first[0, 0] == 1.0 and first[0, 1] == 0.0, f"with a tie, the first entry in row-major order wins (as in PyTorch): expected the first window's gradient [[1, 0], [0, 0]], got {first.tolist()}"

@test_case(points=None, hidden=False)
def test_avg_pool_values_and_gradient(avg_pool2d, Tensor, np):
    x = Tensor(np.array([[[[1, 3, 2, 0], [5, 4, 1, 1], [0, 2, 7, 6], [1, 0, 3, 4]]]], dtype=np.float32), requires_grad=True)
    out = avg_pool2d(x, 2)
    assert np.allclose(out.numpy()[0, 0], [[3.25, 1.0], [0.75, 5.0]]), f'each output is the mean of its window; got {out.numpy()[0, 0].tolist()}'
    out.sum().backward()
    assert np.allclose(x.grad.numpy(), 0.25), f'every pixel of a 2x2 window receives 1/4 of its gradient, got {np.unique(x.grad.numpy()).tolist()}'
    y = Tensor(np.ones((1, 1, 4, 4), dtype=np.float32), requires_grad=True)
    avg_pool2d(y, 2, stride=1).sum().backward()
    assert np.isclose(y.grad.numpy()[0, 0, 1, 1], 1.0), f'with stride 1 windows overlap: an interior pixel lies in 4 windows and gets 4 x 1/4 = 1, got {y.grad.numpy()[0, 0, 1, 1]}'

