from otter.test_files import test_case

OK_FORMAT = False

name = "graph"
points = 0

@test_case(points=None, hidden=False)
def test_unbroadcast_sums_stretched_dims(unbroadcast, np):
    g = np.ones((4, 3), dtype=np.float32)
    out = unbroadcast(g, (3,))
    assert out.shape == (3,), f'a (3,) bias broadcast over 4 rows needs a (3,) gradient, got {out.shape}: sum away the extra leading dimension'
    assert np.allclose(out, 4.0), f'each bias element touched 4 outputs, so its gradient is 4, got {out.tolist()}: sum, not mean'
    kept = unbroadcast(np.ones((2, 4, 3)), (4, 1))
    assert kept.shape == (4, 1), f'(2, 4, 3) -> (4, 1) should keep the size-1 dim, got {kept.shape}'
    assert np.allclose(kept, 6.0), f'2 * 3 = 6 outputs per element of the (4, 1) input, got {kept.ravel().tolist()}'
    scalar = unbroadcast(np.ones((2, 3)), ()).shape
    assert scalar == (), f'a scalar input gets a scalar gradient, shape (), got {scalar}'

@test_case(points=None, hidden=False)
def test_topological_order_visits_each_tensor_once(topological_order, Tensor):
    a = Tensor([1.0, 2.0], requires_grad=True)
    b = a * 3.0
    c = b + a
    d = c * b
    order = topological_order(d)
    ids = [id(t) for t in order]
    names = {id(a): 'a', id(b): 'b', id(c): 'c', id(d): 'd'}
    shown = [names.get(i, '?') for i in ids]
    assert len(ids) == len(set(ids)), f'a tensor appears twice in the order {shown}: it would pass its gradient on twice'
    assert order[-1] is d, f'the root (the tensor you call backward on) must come last, got the order {shown}'
    pos = {id(t): i for i, t in enumerate(order)}
    assert all((k in pos for k in names)) and pos[id(a)] < pos[id(b)] < pos[id(c)] < pos[id(d)], f'expected a before b before c before d (every tensor after its inputs), got {shown}: otherwise the backward walk reads unfinished gradients'

