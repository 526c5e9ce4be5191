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
def test_type_promotion(Tensor, result_type, np):
    cases = [((Tensor([1, 2]), 0.5), np.float32, 'int tensor * 0.5 is float32 (the default float)'), ((Tensor([1.0]), np.float64(2.0)), np.float32, 'a NumPy number does not widen float32 (numbers are weak)'), ((Tensor([1.0]), Tensor(2.0).double()), np.float32, 'a float64 0-d tensor does not widen a float32 tensor with dimensions'), ((Tensor([1.0]), Tensor([2.0]).double()), np.float64, 'float32 and float64 tensors with dimensions give float64'), ((Tensor(np.array([1], np.int8)), 300), np.int8, 'int8 + 300 stays int8 (it wraps)'), ((Tensor([True]), 2), np.int64, 'bool + an int number is int64'), ((Tensor([1, 2]), Tensor([1.0])), np.float32, 'int64 and float32 tensors give float32')]
    for args, want, why in cases:
        got = result_type(*args)
        assert got == want, f'result_type gave {got}, expected {np.dtype(want)}: {why}'
    half = Tensor([1, 2]) * 0.5
    assert half.dtype == np.float32 and half.numpy().tolist() == [0.5, 1.0], f'Tensor([1, 2]) * 0.5 is float32 [0.5, 1.0], got {half.dtype} {half.numpy().tolist()}'
    roots = Tensor([4, 9]) ** 0.5
    assert roots.dtype == np.float32 and roots.numpy().tolist() == [2.0, 3.0], f'Tensor([4, 9]) ** 0.5 is float32 [2.0, 3.0], got {roots.dtype} {roots.numpy().tolist()}: an int tensor to a float power must be computed in float'
    ratio = Tensor([1, 2]) / Tensor([2, 4])
    assert ratio.dtype == np.float32 and ratio.numpy().tolist() == [0.5, 0.5], f'int / int is float32 [0.5, 0.5] in PyTorch, got {ratio.dtype} {ratio.numpy().tolist()}'

@test_case(points=None, hidden=False)
def test_elementwise_math(Tensor, np):
    x = Tensor([0.0, 1.0, 4.0])
    assert np.allclose((x ** 2).numpy(), [0.0, 1.0, 16.0]), 'x ** 2 squares each element'
    assert np.allclose(x.sqrt().numpy(), [0.0, 1.0, 2.0]), 'sqrt'
    assert np.allclose(x.exp().log().numpy(), x.numpy(), atol=1e-06), 'log(exp(x)) == x'
    assert np.allclose(Tensor([-2.0, 0.5]).clamp(min=0.0).numpy(), [0.0, 0.5]), 'clamp(min=0)'
    mag = Tensor([-3, 2]).abs()
    assert mag.numpy().tolist() == [3, 2] and mag.dtype == np.int64, f'abs of int64 [-3, 2] is int64 [3, 2], got {mag.dtype} {mag.numpy().tolist()}'
    for name in ('exp', 'log', 'sqrt', 'tanh'):
        got = getattr(Tensor([1, 2]), name)()
        assert got.dtype == np.float32, f'{name} of an int64 tensor must be float32 as in PyTorch, got {got.dtype}: start from _float_data(self) (NumPy alone would give float64)'

