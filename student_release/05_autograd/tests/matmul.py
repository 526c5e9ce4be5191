from otter.test_files import test_case

OK_FORMAT = False

name = "matmul"
points = 0

@test_case(points=None, hidden=False)
def test_matmul_formula_directly(grad_matmul, Tensor, np):

    def check(name, fn, y, g, expected, why):
        got = fn(g, y._node, y.data)
        got = got if isinstance(got, tuple) else (got,)
        assert len(got) == len(expected), f'{name}: expected {len(expected)} gradient(s), one per input, got {len(got)}: {why}'
        for i, (gi, ei) in enumerate(zip(got, expected)):
            gi = np.asarray(gi)
            shown = np.round(gi, 4).tolist() if gi.shape == ei.shape else f'shape {gi.shape}'
            assert gi.shape == ei.shape and np.allclose(gi, ei, rtol=1e-05, atol=1e-06), f'{name}, input {i}: expected {np.round(ei, 4).tolist()} (shape {ei.shape}), got {shown}: {why}'
    rng = np.random.default_rng(0)
    a = Tensor(rng.standard_normal((2, 3)), requires_grad=True)
    b = Tensor(rng.standard_normal((3, 4)), requires_grad=True)
    g = rng.standard_normal((2, 4))
    A, B = (a.numpy(), b.numpy())
    check('(2, 3) @ (3, 4)', grad_matmul, a @ b, g, [g @ B.T, A.T @ g], 'dA = G @ Bᵀ (shape of A) and dB = Aᵀ @ G (shape of B)')
    p = Tensor(rng.standard_normal((5, 2, 3)), requires_grad=True)
    q = Tensor(rng.standard_normal((5, 3, 4)), requires_grad=True)
    g3 = rng.standard_normal((5, 2, 4))
    P, Q = (p.numpy(), q.numpy())
    check('(5, 2, 3) @ (5, 3, 4)', grad_matmul, p @ q, g3, [g3 @ np.swapaxes(Q, -1, -2), np.swapaxes(P, -1, -2) @ g3], 'batched: transpose only the last two axes (np.swapaxes(x, -1, -2); .T would reverse all three)')

