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
    sums = s.numpy().tolist()
    assert sums == [[11.0, 21.0, 31.0], [12.0, 22.0, 32.0]], f'[[1], [2]] + [10, 20, 30] is [[11, 21, 31], [12, 22, 32]], got {sums}: add the promoted arrays a and b and let NumPy broadcast'
    diff = (b - a).numpy().tolist()
    assert diff[1] == [8.0, 18.0, 28.0], f'b - a: row 1 is [10, 20, 30] - 2 = [8, 18, 28], got {diff[1]}: self minus other, in that order'
    prod = (a * b).numpy().tolist()
    assert prod[1] == [20.0, 40.0, 60.0], f'a * b: row 1 is 2 * [10, 20, 30] = [20, 40, 60], got {prod[1]}: * is element-wise, not a matrix product'
    quot = (b / 10).numpy().tolist()
    assert quot == [1.0, 2.0, 3.0], f'[10, 20, 30] / 10 is [1, 2, 3], got {quot}: a Python number divides every element'
    twice = 2 * b
    assert twice.dtype == np.float32, f'2 * a float32 tensor stays float32, got {twice.dtype}: a Python number must not double the memory and halve the speed of everything after it'
    neg = (-a).numpy().tolist()
    assert neg == [[-1.0], [-2.0]], f'-[[1], [2]] is [[-1], [-2]], got {neg}'
    rsub = (1 - b).numpy().tolist()
    assert rsub == [-9.0, -19.0, -29.0], f'1 - [10, 20, 30] is [-9, -19, -29], got {rsub}: __rsub__ calls _sub with the operands swapped, so 1 - x must not compute x - 1'

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
    sq = (x ** 2).numpy()
    assert np.allclose(sq, [0.0, 1.0, 16.0]), f'[0, 1, 4] ** 2 is [0, 1, 16], got {sq.tolist()}'
    root = x.sqrt().numpy()
    assert np.allclose(root, [0.0, 1.0, 2.0]), f'sqrt([0, 1, 4]) is [0, 1, 2], got {root.tolist()}'
    back = x.exp().log().numpy()
    assert np.allclose(back, x.numpy(), atol=1e-06), f'log(exp(x)) must give x = [0, 1, 4] back, got {back.tolist()}: exp and log are inverses (check that each calls the right NumPy function)'
    clamped = Tensor([-2.0, 0.5]).clamp(min=0.0).numpy()
    assert np.allclose(clamped, [0.0, 0.5]), f'[-2, 0.5].clamp(min=0) is [0, 0.5], got {clamped.tolist()}: values below min become min, the rest stay'
    mag = Tensor([-3, 2]).abs()
    assert mag.numpy().tolist() == [3, 2] and mag.dtype == np.int64, f'abs of int64 [-3, 2] is int64 [3, 2], got {mag.dtype} {mag.numpy().tolist()}'
    for name in ('exp', 'log', 'sqrt', 'tanh'):
        got = getattr(Tensor([1, 2]), name)()
        assert got.dtype == np.float32, f'{name} of an int64 tensor must be float32 as in PyTorch, got {got.dtype}: start from _float_data(self) (NumPy alone would give float64)'

