from otter.test_files import test_case

OK_FORMAT = False

name = "loop"
points = 0

@test_case(points=None, hidden=False)
def test_early_stopping_patience(EarlyStopping):
    es = EarlyStopping(patience=2)
    got = [es.step(v) for v in [1.0, 0.9, 0.95, 0.91]]
    assert got == [False, False, False, True], f'patience 2: two checks without beating 0.9 stop training; got {got}'
    es = EarlyStopping(patience=1, min_delta=0.1)
    got = [es.step(v) for v in [1.0, 0.95]]
    assert got == [False, True], f'with min_delta 0.1, a drop of 0.05 is not an improvement (only < 0.9 is), so patience 1 stops at once; got {got}'

@test_case(points=None, hidden=False)
def test_checkpoint_roundtrip_restores_optimizer_state(save_checkpoint, load_checkpoint, Adam, Tensor, np):
    import tempfile
    from pathlib import Path

    class Tiny:

        def __init__(self):
            self.w = Tensor(np.ones(3, dtype=np.float32), requires_grad=True)

        def state_dict(self):
            return {'w': self.w}

        def load_state_dict(self, sd):
            self.w.data[...] = sd['w'].data
    m = Tiny()
    opt = Adam([m.w], lr=0.1)
    m.w.grad = Tensor(np.ones(3, dtype=np.float32))
    opt.step()
    path = Path(tempfile.mkdtemp()) / 'ckpt.npz'
    save_checkpoint(path, m, opt, epoch=4)
    m2 = Tiny()
    opt2 = Adam([m2.w], lr=0.5)
    epoch = load_checkpoint(path, m2, opt2)
    assert epoch == 4, f'load_checkpoint must return the saved epoch 4 as an int, got {epoch!r}'
    assert np.allclose(m2.w.data, m.w.data), f"the model's parameters must be restored: expected w = {m.w.data}, got {m2.w.data}; pass {{name: Tensor}} for every 'model/<name>' key to model.load_state_dict"
    assert opt2.param_groups[0]['lr'] == 0.1, f"the saved lr 0.1 must replace the new optimizer's 0.5, got {opt2.param_groups[0]['lr']}: restore every 'optim/group/<j>/<key>'; a scheduled LR lives only there"
    restored = opt2.state.get(m2.w, {})
    assert restored.get('step') == 1 and np.allclose(restored.get('exp_avg', np.nan), opt.state[m.w]['exp_avg']), f"Adam's state must be restored: expected step 1 and exp_avg {opt.state[m.w]['exp_avg']}, got step {restored.get('step')!r} and exp_avg {restored.get('exp_avg')!r}; without them resuming restarts bias correction"
    pickled = []
    with np.load(path, allow_pickle=False) as data:
        for k in data.files:
            try:
                data[k]
            except ValueError:
                pickled.append(k)
    assert pickled == [], f'expected plain numeric arrays only, got object arrays under {pickled}: an object array needs pickle, which can run arbitrary code when the file is loaded'

@test_case(points=None, hidden=False)
def test_trainer_steps_accumulates_and_evaluates(Trainer, SGD, Tensor, np):

    class Line:

        def __init__(self):
            self.w = Tensor(np.array([[0.5], [-0.5], [0.25]], dtype=np.float32), requires_grad=True)
            self.mode = 'new'

        def __call__(self, x):
            return (x @ self.w).reshape(-1)

        def parameters(self):
            return [self.w]

        def train(self):
            self.mode = 'train'
            return self

        def eval(self):
            self.mode = 'eval'
            return self

    def mse(out, target):
        return ((out - target) ** 2).mean()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((10, 3)).astype(np.float32)
    y = (x @ np.array([1.0, 2.0, -1.0], dtype=np.float32)).astype(np.float32)
    m = Line()
    first = float(mse(m(Tensor(x)), Tensor(y)).item())
    loss = Trainer(m, mse, SGD(m.parameters(), lr=0.0)).train_epoch(x, y, batch_size=10)
    assert m.mode == 'train', f'train_epoch must call model.train() first; the model is {m.mode}'
    assert abs(loss - first) < 1e-05, f"one batch of all 10 examples with lr 0: the epoch loss is that batch's mean loss {first:.6f}, got {loss!r}"
    big, small = (Line(), Line())
    Trainer(big, mse, SGD(big.parameters(), lr=0.1)).train_epoch(x, y, batch_size=8, rng=np.random.default_rng(1))
    Trainer(small, mse, SGD(small.parameters(), lr=0.1), accumulation_steps=4).train_epoch(x, y, batch_size=2, rng=np.random.default_rng(1))
    assert np.allclose(small.w.numpy(), big.w.numpy(), atol=1e-05), f'batch_size=2 with accumulation_steps=4 must take the same two steps as batch_size=8 (groups of 8 and 2 examples): expected w {big.w.numpy().ravel()}, got {small.w.numpy().ravel()}. zero_grad once per group, weight each loss by len(xb) / (examples in the group), step after the group'
    w_before = big.w.numpy().copy()
    res = Trainer(big, mse, SGD(big.parameters(), lr=1.0), logits=False).evaluate(x, y, batch_size=3)
    expected = float(mse(big(Tensor(x)), Tensor(y)).item())
    assert isinstance(res, dict) and set(res) == {'loss', 'accuracy'}, f"evaluate returns {{'loss': ..., 'accuracy': ...}}, got {res!r}"
    assert abs(res['loss'] - expected) < 0.0001, f"evaluate's loss is the mean over all 10 examples ({expected:.5f}), got {res['loss']!r}: weight each batch (3, 3, 3, 1) by its size"
    assert big.mode == 'eval' and np.array_equal(big.w.numpy(), w_before), f"evaluate must call model.eval() and leave the weights alone: expected mode 'eval' and w {w_before.ravel()}, got mode {big.mode!r} and w {big.w.numpy().ravel()} (no step, no zero_grad: evaluating must not train)"

