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
    assert p.grad is None, f'zero_grad() sets .grad to None by default, as PyTorch does; got {p.grad!r}: None (not zeros) lets step() skip parameters the last backward did not reach'
    opt.step()
    assert np.allclose(p.data, [0.95, -2.05]), f'after zero_grad() p.grad is None and step() must skip p: expected p to stay [0.95, -2.05], got {p.data}: parameters without a gradient (frozen, or unused in this forward pass) must not move'

@test_case(points=None, hidden=False)
def test_sgd_momentum_first_step_copies_gradient(SGD, Tensor, np):
    p = Tensor([1.0], requires_grad=True)
    p.grad = Tensor([0.5])
    opt = SGD([p], lr=0.1, momentum=0.9)
    opt.step()
    assert np.allclose(p.data, [0.95]), f'step 1 with momentum: expected p = 1 - 0.1 * 0.5 = 0.95, got {p.data}: the first buffer is the gradient itself (not 0.1 * grad), as in PyTorch'
    opt.step()
    assert np.allclose(p.data, [0.855]), f'step 2: buffer = 0.9 * 0.5 + 0.5 = 0.95, so expected p = 0.95 - 0.095 = 0.855, got {p.data}: the buffer must carry over between steps'
    assert 'momentum_buffer' in opt.state.get(p, {}), f"expected the buffer in optimizer.state[p]['momentum_buffer'] (PyTorch's key), got keys {sorted(opt.state.get(p, {}))}: state_dict() and checkpoints (module 07) save it from there"

