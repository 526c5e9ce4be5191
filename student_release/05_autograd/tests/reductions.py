from otter.test_files import test_case

OK_FORMAT = False

name = "reductions"
points = 0

@test_case(points=None, hidden=False)
def test_reduction_and_view_formulas_directly(grad_sum, grad_mean, grad_max, grad_amax, grad_reshape, grad_transpose, grad_permute, grad_getitem, grad_contiguous, Tensor, np):

    def check(name, fn, y, g, expected, why):
        got = fn(g, y._node, y.data)
        got = got if isinstance(got, tuple) else (got,)
        assert len(got) == len(expected), f'{name}: expected {len(expected)} gradient(s), one per input, got {len(got)}: {why}'
        for i, (gi, ei) in enumerate(zip(got, expected)):
            gi = np.asarray(gi)
            shown = np.round(gi, 4).tolist() if gi.shape == ei.shape else f'shape {gi.shape}'
            assert gi.shape == ei.shape and np.allclose(gi, ei, rtol=1e-05, atol=1e-06), f'{name}, input {i}: expected {np.round(ei, 4).tolist()} (shape {ei.shape}), got {shown}: {why}'
    x = Tensor([[1.0, 5.0, 2.0], [7.0, 3.0, 4.0]], requires_grad=True)
    g2 = np.array([1.0, 10.0])
    g13 = np.array([[1.0, 2.0, 3.0]])
    check('x.sum(dim=1)', grad_sum, x.sum(dim=1), g2, [np.array([[1.0] * 3, [10.0] * 3])], "every element of a row gets that row's gradient: re-insert the summed axis, then broadcast to x's shape")
    check('x.mean(dim=0, keepdim=True)', grad_mean, x.mean(dim=0, keepdim=True), g13, [np.array([[0.5, 1.0, 1.5], [0.5, 1.0, 1.5]])], 'like sum, divided by the number of elements averaged (2 per column)')
    check('x.max(dim=1).values', grad_max, x.max(dim=1).values, g2, [np.array([[0.0, 1.0, 0.0], [10.0, 0.0, 0.0]])], "only the largest element of each row (node.saved['indices']) gets the gradient")
    check('x.amax(dim=1)', grad_amax, x.amax(dim=1), g2, [np.array([[0.0, 1.0, 0.0], [10.0, 0.0, 0.0]])], 'only the largest element of each row gets the gradient (shared evenly on ties)')
    g6 = np.arange(6.0)
    check('x.reshape(6)', grad_reshape, x.reshape(6), g6, [g6.reshape(2, 3)], "a reshape's backward reshapes the gradient back to x's shape")
    g32 = np.arange(6.0).reshape(3, 2)
    check('x.transpose(0, 1)', grad_transpose, x.transpose(0, 1), g32, [g32.T], "a transpose's backward is the same transpose")
    z = Tensor(np.arange(24.0).reshape(2, 3, 4), requires_grad=True)
    g423 = np.arange(24.0).reshape(4, 2, 3)
    check('z.permute(2, 0, 1)', grad_permute, z.permute(2, 0, 1), g423, [np.transpose(g423, (1, 2, 0))], 'undo a permute with the inverse permutation np.argsort(dims) = (1, 2, 0)')
    v = Tensor([1.0, 2.0, 3.0], requires_grad=True)
    check('v[[0, 0, 2]]', grad_getitem, v[np.array([0, 0, 2])], np.array([1.0, 10.0, 100.0]), [np.array([11.0, 0.0, 100.0])], 'v[0] is used twice, so it gets 1 + 10: scatter with np.add.at (g[idx] = grad keeps only the last)')
    t = x.transpose(0, 1)
    check('x.T.contiguous()', grad_contiguous, t.contiguous(), g32, [g32], 'contiguous only copies: it passes the gradient through unchanged')

