from otter.test_files import test_case

OK_FORMAT = False

name = "matmul"
points = 0

@test_case(points=None, hidden=False)
def test_matmul(Tensor, np):
    a = Tensor([[1.0, 2.0], [3.0, 4.0]])
    b = Tensor([[5.0, 6.0], [7.0, 8.0]])
    assert (a @ b).numpy().tolist() == [[19.0, 22.0], [43.0, 50.0]], '2x2 matrix product'
    batch = Tensor(np.ones((8, 2, 3), dtype=np.float32))
    w = Tensor(np.ones((3, 5), dtype=np.float32))
    assert (batch @ w).shape == (8, 2, 5), '(8, 2, 3) @ (3, 5) -> (8, 2, 5)'
    try:
        Tensor(np.ones((2, 3))) @ Tensor(np.ones((4, 5)))
    except ValueError as err:
        assert '(2, 3)' in str(err) and '(4, 5)' in str(err), 'name both shapes in the error'
    else:
        raise AssertionError('(2, 3) @ (4, 5) must raise ValueError')
    try:
        Tensor(np.ones((2, 3))) @ Tensor(np.ones((3, 4), dtype=np.float32))
    except RuntimeError:
        pass
    else:
        raise AssertionError('float64 @ float32 must raise RuntimeError (matmul does not promote in PyTorch: a float64 input to float32 weights is a bug)')

