from otter.test_files import test_case

OK_FORMAT = False

name = "formulas"
points = 0

@test_case(points=None, hidden=False)
def test_elementwise_gradients_match_finite_differences(gradcheck, np):
    rng = np.random.default_rng(0)
    a = rng.uniform(0.5, 2.0, (2, 3))
    b = rng.uniform(0.5, 2.0, (2, 3))
    checks = {'add': lambda x, y: x + y, 'sub': lambda x, y: x - y, 'mul': lambda x, y: x * y, 'div': lambda x, y: x / y, 'pow': lambda x, y: x ** 3, 'exp': lambda x, y: x.exp(), 'log': lambda x, y: x.log(), 'sqrt': lambda x, y: x.sqrt(), 'tanh': lambda x, y: x.tanh(), 'neg': lambda x, y: -x}
    for name, f in checks.items():
        try:
            gradcheck(f, [a, b])
        except AssertionError as err:
            raise AssertionError(f'{name}: {err}. A wrong derivative here silently corrupts every model that uses this op') from None

@test_case(points=None, hidden=False)
def test_broadcast_gradient_is_reduced(Tensor, np):
    x = Tensor(np.ones((4, 3), dtype=np.float32), requires_grad=True)
    b = Tensor(np.zeros(3, dtype=np.float32), requires_grad=True)
    (x + b).sum().backward()
    assert b.grad is not None, f'b requires grad, so backward must fill b.grad, got {b.grad!r}'
    assert b.grad.shape == (3,), f"b.grad must have b's shape (3,), got {b.grad.shape}: unbroadcast the gradient, or the optimizer cannot subtract it from the bias"
    assert np.allclose(b.grad.numpy(), 4.0), f'each bias element was added to 4 rows, so its gradient is 4, got {b.grad.numpy().tolist()}'

@test_case(points=None, hidden=False)
def test_matmul_and_reduction_gradients(gradcheck, np):
    rng = np.random.default_rng(1)
    checks = [('matmul (2, 3) @ (3, 4)', lambda a, b: a @ b, [rng.standard_normal((2, 3)), rng.standard_normal((3, 4))], 'dA = G @ Bᵀ and dB = Aᵀ @ G; check the shapes'), ('batched matmul (5, 2, 3) @ (3, 4)', lambda a, b: a @ b, [rng.standard_normal((5, 2, 3)), rng.standard_normal((3, 4))], "swap only the last two axes (np.swapaxes, not .T); unbroadcast sums B's batch"), ('sum(dim=1)', lambda a: a.sum(dim=1), [rng.standard_normal((2, 3))], "re-insert the reduced axis (_expand_reduced), then broadcast to a's shape"), ('mean(dim=0, keepdim=True)', lambda a: a.mean(dim=0, keepdim=True), [rng.standard_normal((2, 3))], 'like sum, divided by the count a.size // out.size'), ('max(dim=1).values', lambda a: a.max(dim=1).values, [rng.standard_normal((3, 4))], "only the winning element (node.saved['indices']) gets the gradient"), ('transpose(0, 1).reshape(6)', lambda a: a.transpose(0, 1).reshape(6), [rng.standard_normal((2, 3))], "a view's backward is the inverse view"), ('permute(2, 0, 1).contiguous()', lambda a: a.permute(2, 0, 1).contiguous(), [rng.standard_normal((2, 3, 4))], 'undo a permute with the inverse permutation np.argsort(dims); contiguous passes grad'), ('amax(dim=1)', lambda a: a.amax(dim=1), [rng.standard_normal((3, 4))], 'the maximum of each row gets the gradient (shared evenly on ties)'), ('abs, clamp(-0.5, 0.5)', lambda a: a.abs() + a.clamp(min=-0.5, max=0.5), [rng.standard_normal((3, 4))], "abs' = sign(a); clamp passes grad only inside bounds")]
    for name, f, inputs, hint in checks:
        try:
            gradcheck(f, inputs)
        except AssertionError as err:
            raise AssertionError(f'{name}: {err}. Hint: {hint}') from None

@test_case(points=None, hidden=False)
def test_gradients_accumulate(Tensor, np):
    x = Tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    (x * x).sum().backward()
    assert np.allclose(x.grad.numpy(), [4.0, 8.0]), f'two backward calls must ADD their gradients (2x + 2x = [4, 8]), got {x.grad.numpy().tolist()}: .grad accumulates until zero_grad(), which gradient accumulation over micro-batches relies on'
    y = Tensor([3.0], requires_grad=True)
    (y * y + y).sum().backward()
    assert np.allclose(y.grad.numpy(), [7.0]), f'y is used three times: d(y*y + y)/dy = 2y + 1 = 7, got {y.grad.numpy().tolist()}; sum the gradient of every use'

@test_case(points=None, hidden=False)
def test_indexing_repeats_add_up(Tensor, np):
    x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
    x[np.array([0, 0, 2])].sum().backward()
    assert np.allclose(x.grad.numpy(), [2.0, 0.0, 1.0]), f'x[[0, 0, 2]] uses x[0] twice, so it gets gradient 2: expected [2, 0, 1], got {x.grad.numpy().tolist()}; use np.add.at, not g[idx] = grad'

@test_case(points=None, hidden=False)
def test_backward_errors_like_pytorch(Tensor, np):
    x = Tensor([1.0, 2.0], requires_grad=True)
    try:
        (x * 2).backward()
    except NotImplementedError:
        raise
    except RuntimeError as err:
        assert 'scalar' in str(err), f"backward() on shape (2,) without a gradient raised RuntimeError({str(err)!r}); say 'grad can be implicitly created only for scalar outputs', as PyTorch does, so a student who forgot .sum() on the loss learns why"
    else:
        raise AssertionError('backward() on a non-scalar without gradient must raise RuntimeError, as in PyTorch')
    y = x * 2
    y.backward(Tensor([1.0, 10.0]))
    seeded = x.grad.numpy()
    assert np.allclose(seeded, [2.0, 20.0]), f'y = 2x; y.backward([1, 10]) seeds dL/dy = [1, 10], so x.grad = [2, 20], got {seeded}'
    c = Tensor([1.0, 2.0])
    (x * c).sum().backward()
    assert c.grad is None, f'tensors without requires_grad get no gradient (it would only cost memory), got c.grad = {c.grad}'
    loss = (x * c).sum()
    loss.backward()
    try:
        loss.backward()
    except RuntimeError:
        pass
    else:
        raise AssertionError('a second backward through the same graph must raise RuntimeError (PyTorch frees the saved values): pass retain_graph to _vjp')
    kept = (x * c).sum()
    kept.backward(retain_graph=True)
    kept.backward()

@test_case(points=None, hidden=False)
def test_gradient_conventions_like_pytorch(Tensor, np):
    z = Tensor([0.0, 2.0], requires_grad=True)
    (z ** 0).sum().backward()
    assert z.grad.numpy().tolist() == [0.0, 0.0], f'x ** 0 is the constant 1: its gradient is 0 everywhere, also at x = 0 (PyTorch); got {z.grad.numpy().tolist()} — the power rule gives 0 * 0**-1 = nan there'
    m = Tensor([1.0, float('nan'), 3.0], requires_grad=True)
    with np.errstate(invalid='ignore'):
        m.abs().sum().backward()
    assert m.grad.numpy().tolist() == [1.0, 0.0, 1.0], f'the gradient of |x| at NaN is 0 in PyTorch (its sign of NaN is 0), got {m.grad.numpy().tolist()}: take np.sign of np.nan_to_num(a)'

