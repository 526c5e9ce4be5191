from otter.test_files import test_case

OK_FORMAT = False

name = "contract"
points = 0

@test_case(points=None, hidden=False)
def test_zero_grad_and_state_bytes_of_the_base_class(Optimizer, Tensor, np):
    a = Tensor([1.0, 2.0], requires_grad=True)
    b = Tensor(np.ones((2, 3), dtype=np.float32), requires_grad=True)
    opt = Optimizer([{'params': [a]}, {'params': [b], 'lr': 0.01}], {'lr': 0.1})
    a.grad, b.grad = (Tensor([0.5, 0.5]), Tensor(np.ones((2, 3), dtype=np.float32)))
    opt.zero_grad(set_to_none=False)
    kept = [None if p.grad is None else (p.grad.shape, p.grad.numpy().tolist()) for p in (a, b)]
    assert kept == [((2,), [0.0, 0.0]), ((2, 3), [[0.0] * 3] * 2)], f"zero_grad(set_to_none=False) keeps a gradient of zeros of each parameter's shape in every group; got (shape, values) {kept}: the next backward adds into them"
    opt.zero_grad()
    left = [None if p.grad is None else p.grad.numpy().tolist() for p in (a, b)]
    assert left == [None, None], f"zero_grad() sets .grad to None in every group (PyTorch's default); got {left}: a gradient left over is added to the next backward's, and the step goes the wrong way"
    before = opt.state_bytes()
    assert before == 0, f'an optimizer with no state (nothing in self.state yet) holds 0 bytes, got {before!r}'
    opt.state[b] = {'step': 3, 'exp_avg': np.zeros((2, 3), np.float32), 'exp_avg_sq': np.zeros((2, 3), np.float32)}
    got = opt.state_bytes()
    assert got == 48, f'two float32 (2, 3) buffers are 2 * 6 * 4 = 48 bytes (the int step counter is not counted), got {got!r}: this is the memory an optimizer adds on top of the model'

