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

@test_case(points=None, hidden=False)
def test_pooling_dilation_ceil_mode_and_divisors(max_pool2d, avg_pool2d, Tensor, np):
    x = Tensor(np.arange(25, dtype=np.float32).reshape(1, 1, 5, 5), requires_grad=True)
    out = max_pool2d(x, 2, stride=2, dilation=2)
    assert out.numpy()[0, 0].tolist() == [[12.0, 14.0], [22.0, 24.0]], f'dilation 2: the window of output (0, 0) is pixels (0|2, 0|2), its max is 12; expected [[12, 14], [22, 24]], got {out.numpy()[0, 0].tolist()}'
    out.sum().backward()
    assert x.grad.numpy()[0, 0, 2, 2] == 1.0 and x.grad.numpy()[0, 0, 3, 3] == 0.0, f'the gradient goes back through the dilated taps to the winners (12 at (2, 2)); got {x.grad.numpy()[0, 0].tolist()}'
    ceil = max_pool2d(x, 2, stride=2, ceil_mode=True)
    assert ceil.shape == (1, 1, 3, 3) and ceil.numpy()[0, 0, 2, 2] == 24.0, f'ceil_mode rounds 5 / 2 up: a 3x3 output whose last window holds only pixel 24; got shape {ceil.shape}'
    avg = avg_pool2d(x, 2, stride=2, ceil_mode=True).numpy()[0, 0]
    assert np.isclose(avg[2, 2], 24.0) and np.isclose(avg[0, 2], 6.5), f'a window cut short by ceil_mode divides by the pixels it covers: (4 + 9) / 2 = 6.5 at (0, 2) and 24 at (2, 2); got {avg[0, 2]} and {avg[2, 2]}'
    ones = Tensor(np.ones((1, 1, 2, 2), dtype=np.float32))
    inc = avg_pool2d(ones, 2, stride=1, padding=1).numpy()[0, 0, 0, 0]
    exc = avg_pool2d(ones, 2, stride=1, padding=1, count_include_pad=False).numpy()[0, 0, 0, 0]
    assert np.isclose(inc, 0.25) and np.isclose(exc, 1.0), f'the corner window holds one real pixel and three of padding: 1/4 counting the padding (default), 1/1 with count_include_pad=False; got {inc} and {exc}'
    ints = avg_pool2d(Tensor(np.array([[[[-3, 0], [0, 0]]]], dtype=np.int64)), 2)
    assert ints.dtype == np.int64 and ints.numpy().item() == 0, f'the mean of integers is truncated towards zero (-3 / 4 -> 0) and stays int64; got {ints.numpy().item()} ({ints.dtype})'

