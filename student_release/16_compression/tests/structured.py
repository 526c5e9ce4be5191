from otter.test_files import test_case

OK_FORMAT = False

name = "structured"
points = 0

@test_case(points=None, hidden=False)
def test_ln_structured_mask_prunes_whole_slices(ln_structured_mask, np):
    w = np.array([[3.0, 4.0], [0.1, 0.1], [1.0, 1.0]], np.float32)
    m = ln_structured_mask(w, 1, n=2, dim=0)
    assert m.tolist() == [[1, 1], [0, 0], [1, 1]], f'rows have L2 norms 5, 0.14, 1.41: the smallest row goes; got {m.tolist()}'
    cols = ln_structured_mask(w, 0.5, n=1, dim=1)
    assert cols.tolist() == [[0, 1], [0, 1], [0, 1]], f'dim=1: columns have L1 norms 4.1 and 5.1, round(0.5 * 2) = 1 goes; got {cols.tolist()}'
    inf = ln_structured_mask(np.array([[0.1, 5.0], [2.0, 2.0]], np.float32), 1, n=np.inf, dim=0)
    assert inf.tolist() == [[1, 1], [0, 0]], f'n=inf ranks rows by their largest |w| (5 vs 2), got {inf.tolist()}'
    try:
        ln_structured_mask(np.ones(4, np.float32), 1)
    except ValueError:
        pass
    else:
        raise AssertionError('a 1-D tensor has no slices to prune: raise ValueError')

@test_case(points=None, hidden=False)
def test_shrink_linear_pair_keeps_the_function_of_kept_neurons(shrink_linear_pair, Linear, ReLU, Tensor, manual_seed, no_grad, np):
    manual_seed(0)
    a, b = (Linear(5, 4), Linear(4, 3))
    b.weight.data[:, 1] = 0.0
    a2, b2 = shrink_linear_pair(a, b, [3, 0, 2])
    assert (a2.weight.shape, a2.bias.shape, b2.weight.shape, b2.bias.shape) == ((3, 5), (3,), (3, 3), (3,)), f'3 kept neurons: weights (3, 5) and (3, 3), got {a2.weight.shape} and {b2.weight.shape}'
    src = a.weight.numpy()
    rows = [next((i for i in range(4) if np.allclose(r, src[i])), None) for r in a2.weight.numpy()]
    assert np.allclose(a2.weight.numpy(), src[[0, 2, 3]]), f'the first layer keeps rows 0, 2, 3 in their original order, got rows {rows} of a.weight (None: no row of it)'
    x = Tensor(np.random.default_rng(0).standard_normal((6, 5)).astype(np.float32))
    with no_grad():
        out, ref = (b2(ReLU()(a2(x))).numpy(), b(ReLU()(a(x))).numpy())
    assert np.allclose(out, ref, atol=1e-06), f'removing a neuron that feeds nothing must not change the output, max difference {np.abs(out - ref).max():.3g}: the next layer loses the matching *columns*'
    a2.weight.data[...] = 0
    assert not np.all(a.weight.data == 0), f'the new layers hold copies, not views: zeroing a2.weight left {np.count_nonzero(a.weight.data)} nonzero entries in the original a.weight'

