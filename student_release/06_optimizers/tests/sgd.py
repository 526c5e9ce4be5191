from otter.test_files import test_case

OK_FORMAT = False

name = "sgd"
points = 0

@test_case(points=None, hidden=False)
def test_sgd_plain_and_zero_grad(SGD, Tensor, np):
    p = Tensor([1.0, -2.0], requires_grad=True)
    p.grad = Tensor([0.5, 0.5])
    opt = SGD([p], lr=0.1)
    opt.step()
    assert np.allclose(p.data, [0.95, -2.05]), f'p - lr * grad = [0.95, -2.05], got {p.data}: the basic update is wrong'
    assert p.data.dtype == np.float32, f'the parameter became {p.data.dtype}: cast the update back with astype(p.data.dtype) (or use p.data -= ...), or every later layer silently runs in float64 at twice the memory'
    opt.zero_grad()
    assert p.grad is None, 'zero_grad() sets .grad to None by default, as PyTorch does'
    opt.step()
    assert np.allclose(p.data, [0.95, -2.05]), 'after zero_grad() p.grad is None and step() must skip p: parameters without a gradient (frozen, or unused in this forward pass) must not move'

@test_case(points=None, hidden=False)
def test_sgd_momentum_first_step_copies_gradient(SGD, Tensor, np):
    p = Tensor([1.0], requires_grad=True)
    p.grad = Tensor([0.5])
    opt = SGD([p], lr=0.1, momentum=0.9)
    opt.step()
    assert np.allclose(p.data, [0.95]), 'step 1 with momentum: buffer = grad (not 0.1 * grad), so p = 1 - 0.1 * 0.5 = 0.95'
    opt.step()
    assert np.allclose(p.data, [0.855]), 'step 2: buffer = 0.9 * 0.5 + 0.5 = 0.95, p = 0.95 - 0.095 = 0.855'
    assert 'momentum_buffer' in opt.state.get(p, {}), "keep the buffer in optimizer.state[p]['momentum_buffer'] (PyTorch's key): state_dict() and checkpoints (module 07) save it from there"

