from otter.test_files import test_case

OK_FORMAT = False

name = "matmul"
points = 0

@test_case(points=None, hidden=False)
def test_matmul(Tensor, np):
    a = Tensor([[1.0, 2.0], [3.0, 4.0]])
    b = Tensor([[5.0, 6.0], [7.0, 8.0]])
    got = (a @ b).numpy().tolist()
    assert got == [[19.0, 22.0], [43.0, 50.0]], f'[[1, 2], [3, 4]] @ [[5, 6], [7, 8]] is [[19, 22], [43, 50]] (row times column), got {got}: use np.matmul, not the element-wise *'
    batch = Tensor(np.ones((8, 2, 3), dtype=np.float32))
    w = Tensor(np.ones((3, 5), dtype=np.float32))
    out = batch @ w
    assert out.shape == (8, 2, 5), f'(8, 2, 3) @ (3, 5) multiplies each of the 8 matrices by w: (8, 2, 5), got shape {out.shape}: np.dot pairs every batch with every batch; np.matmul broadcasts'
    try:
        wrong = Tensor(np.ones((2, 3))) @ Tensor(np.ones((4, 5)))
    except ValueError as err:
        assert '(2, 3)' in str(err) and '(4, 5)' in str(err), f'the error must name both shapes (2, 3) and (4, 5), it says {str(err)!r}: this is the error students meet most often, and the shapes are what they need to fix it'
    else:
        raise AssertionError(f'(2, 3) @ (4, 5) must raise ValueError (3 != 4), but returned shape {wrong.shape}')
    try:
        mixed = Tensor(np.ones((2, 3))) @ Tensor(np.ones((3, 4), dtype=np.float32))
    except RuntimeError:
        pass
    else:
        raise AssertionError(f'float64 @ float32 must raise RuntimeError (matmul does not promote in PyTorch: a float64 input to float32 weights is a bug), but returned a {mixed.dtype} tensor of shape {mixed.shape}')

