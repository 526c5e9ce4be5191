from otter.test_files import test_case

OK_FORMAT = False

name = "matmul"
points = 0

@test_case(points=None, hidden=False)
def test_matmul_loops_and_broadcast(matmul_loops, matmul_broadcast, np):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((3, 5)), rng.standard_normal((5, 4)))
    got = matmul_loops(a, b)
    assert got.shape == (3, 4) and np.allclose(got, a @ b), f'C[i, j] = sum_p A[i, p] B[p, j]; max error {np.abs(got - a @ b).max():.3g}'
    a32, b32 = (a.astype(np.float32), b.astype(np.float32))
    got = matmul_broadcast(a32, b32)
    assert got.dtype == np.float32 and np.allclose(got, a32 @ b32, atol=1e-05), f'(m, k, 1) * (1, k, n) summed over k: dtype {got.dtype}, max error {np.abs(got - a32 @ b32).max():.3g}'
    try:
        matmul_broadcast(a, a)
    except ValueError:
        pass
    else:
        raise AssertionError('(3, 5) @ (3, 5) does not fit: raise ValueError')
    i8 = np.array([[100, 100], [3, -4]], np.int8)
    for fn in (matmul_loops, matmul_broadcast):
        got = fn(i8, np.array([[2, 1], [1, 1]], np.int8))
        assert got.dtype == np.int8 and got.tolist() == [[44, -56], [2, -1]], f"{fn.__name__}: int8 @ int8 is int8 and wraps around as PyTorch's does (300 -> 44, 200 -> -56); got {got.dtype} {got.tolist()}"

@test_case(points=None, hidden=False)
def test_matmul_blocked_any_size_any_block(matmul_blocked, matmul_broadcast, np):
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((7, 11)), rng.standard_normal((11, 5)))
    for bs in (1, 2, 3, 4, 16):
        got = matmul_blocked(a, b, block_size=bs)
        assert got.shape == (7, 5) and np.allclose(got, a @ b), f'block_size={bs}: the edge tiles are smaller when {bs} does not divide 7, 11 or 5; max error {np.abs(got - a @ b).max():.3g}'
    got = matmul_blocked(a, b, 3, kernel=matmul_broadcast)
    assert np.allclose(got, a @ b), f'with kernel=matmul_broadcast: expected a @ b, max error {np.abs(got - a @ b).max():.3g}: any tile kernel gives the same product, so call the kernel you were given'
    try:
        matmul_blocked(a, b, 0)
    except ValueError:
        pass
    else:
        raise AssertionError('block_size=0 has no tiles: raise ValueError')

