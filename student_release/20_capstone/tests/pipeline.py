from otter.test_files import test_case

OK_FORMAT = False

name = "pipeline"
points = 0

@test_case(points=None, hidden=False)
def test_optimize_prunes_tunes_and_quantizes_a_copy(optimize, QuantizedLinear, Linear, ReLU, Sequential, Tensor, no_grad, manual_seed, np):
    rng = np.random.default_rng(0)
    centers = rng.standard_normal((3, 16)).astype(np.float32) * 3
    y = rng.integers(0, 3, 600)
    x = (centers[y] + rng.standard_normal((600, 16))).astype(np.float32)
    manual_seed(0)
    model = Sequential(Linear(16, 32), ReLU(), Linear(32, 3))
    before = [p.data.copy() for p in model.parameters()]
    q = optimize(model, x, y, amount=0.5, finetune_epochs=5, lr=0.01, calibration=64)
    changed = [i for i, (b, p) in enumerate(zip(before, model.parameters())) if not np.array_equal(b, p.data)]
    assert not changed, f'optimize must leave the float model unchanged (prune_model and quantize_model copy); parameters {changed} of the float model changed'
    layers = [m for m in q.modules() if isinstance(m, QuantizedLinear)]
    assert len(layers) == 2, f'expected 2 QuantizedLinear layers, got {len(layers)}'
    zeros = sum((int((m.qweight.data == 0).sum()) for m in layers)) / (16 * 32 + 32 * 3)
    assert zeros >= 0.5, f'half the weights were pruned: at least 50% zero qweights, got {zeros:.2f}'
    with no_grad():
        with_scores = (q(Tensor(x)).numpy().argmax(axis=1) == y).mean()
    assert with_scores > 0.9, f'well-separated blobs, 5 epochs of fine-tuning: the pruned INT8 model should be >90% right, got {with_scores:.3f}'
    kinds = [type(m).__name__ for m in q.modules()]
    assert kinds == ['Sequential', 'BlasQuantizedLinear', 'Identity', 'BlasQuantizedLinear'], f"engine='blas' (the default) lowers the INT8 model with blas_engine; got {kinds}"
    slow = optimize(model, x, y, amount=0.5, finetune_epochs=5, lr=0.01, calibration=64, engine='int32')
    kinds = [type(m).__name__ for m in slow.modules()]
    assert kinds == ['Sequential', 'QuantizedLinear', 'ReLU', 'QuantizedLinear'], f"engine='int32' keeps module 15's layers as quantize_model made them; got {kinds}"
    with no_grad():
        same = np.array_equal(slow(Tensor(x)).data, q(Tensor(x)).data)
    assert same, f'the same seed gives the same pruned, fine-tuned model, and the two engines compute it bit for bit alike; largest difference {np.abs(slow(Tensor(x)).data - q(Tensor(x)).data).max()}'
    try:
        optimize(model, x, y, engine='float16')
    except ValueError:
        pass
    else:
        raise AssertionError('an unknown engine must raise ValueError')

@test_case(points=None, hidden=False)
def test_measure_entry_times_the_forward_pass(measure_entry, storage_bytes, Linear, ReLU, Module, Sequential, Tensor, manual_seed, np):
    rng = np.random.default_rng(0)
    centers = rng.standard_normal((3, 16)).astype(np.float32) * 3
    y = rng.integers(0, 3, 600)
    x = (centers[y] + rng.standard_normal((600, 16))).astype(np.float32)
    manual_seed(0)
    q = Sequential(Linear(16, 32), ReLU(), Linear(32, 3))
    expected_acc = float((q(Tensor(x)).numpy().argmax(axis=1) == y).mean())
    ticks = iter(range(1000))
    entry = measure_entry(q, x, y, repeats=5, timer=lambda: 0.002 * next(ticks))
    assert set(entry) == {'accuracy', 'latency_ms', 'bytes'}, f'keys: {sorted(entry)}'
    assert abs(entry['latency_ms'] - 2.0) < 1e-09, f"each timed run spans one 2 ms tick: the median is 2.0 ms, got {entry['latency_ms']}"
    assert abs(entry['accuracy'] - expected_acc) < 1e-12, f"accuracy is the share of argmax(model(x)) == y: expected {expected_acc:.4f}, got {entry['accuracy']}"
    readings = next(ticks)
    assert readings == 10, f'two clock readings per timed run, 5 runs: 10 readings, got {readings} (time the forward pass only, once per repeat)'
    assert entry['bytes'] == storage_bytes(q), f"bytes are storage_bytes(model) = {storage_bytes(q)}; got {entry['bytes']}"

    class Rows(Module):

        def __init__(self, inner):
            super().__init__()
            self.inner, self.rows = (inner, [])

        def forward(self, t):
            self.rows.append(t.shape[0])
            return self.inner(t)
    spy = Rows(q)
    entry = measure_entry(spy, x, y, repeats=3, timer=lambda: 0.002 * next(ticks), batch=32)
    assert spy.rows == [600, 32, 32, 32], f'one untimed pass over all 600 rows (the accuracy), then 3 timed queries of x[:32]; the model saw batches of {spy.rows}'
    assert abs(entry['accuracy'] - expected_acc) < 1e-12, f"with batch=32 the accuracy is still over all of x: expected {expected_acc:.4f}, got {entry['accuracy']}"

