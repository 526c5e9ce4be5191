from otter.test_files import test_case

OK_FORMAT = False

name = "arithmetic"
points = 0

@test_case(points=None, hidden=False)
def test_broadcasting_arithmetic(Tensor, np):
    a = Tensor([[1.0], [2.0]])
    b = Tensor([10.0, 20.0, 30.0])
    s = a + b
    assert s.shape == (2, 3), f'(2, 1) + (3,) broadcasts to (2, 3), got {s.shape}'
    assert s.numpy().tolist() == [[11.0, 21.0, 31.0], [12.0, 22.0, 32.0]], 'wrong sums'
    assert (b - a).numpy()[1, 0] == 8.0, 'subtraction: 10 - 2 = 8'
    assert (a * b).numpy()[1, 2] == 60.0, 'multiplication: 2 * 30 = 60'
    assert (b / 10).numpy().tolist() == [1.0, 2.0, 3.0], 'division by a Python number'
    assert (2 * b).dtype == np.float32, 'a Python number must not turn float32 into float64'
    assert (-a).numpy()[0, 0] == -1.0, 'negation'
    assert (1 - b).numpy()[0] == -9.0, 'reflected subtraction: 1 - 10 = -9'

@test_case(points=None, hidden=False)
def test_elementwise_math(Tensor, np):
    x = Tensor([0.0, 1.0, 4.0])
    assert np.allclose((x ** 2).numpy(), [0.0, 1.0, 16.0]), 'x ** 2 squares each element'
    assert np.allclose(x.sqrt().numpy(), [0.0, 1.0, 2.0]), 'sqrt'
    assert np.allclose(x.exp().log().numpy(), x.numpy(), atol=1e-06), 'log(exp(x)) == x'
    assert np.allclose(Tensor([-2.0, 0.5]).clamp(min=0.0).numpy(), [0.0, 0.5]), 'clamp(min=0)'

