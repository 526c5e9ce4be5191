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

