from otter.test_files import test_case

OK_FORMAT = False

name = "profiler"
points = 0

@test_case(points=None, hidden=False)
def test_profiler_rows_and_hooks(Profiler, Sequential, Linear, ReLU, Tensor, np):
    ticks = iter(range(10 ** 6))
    model = Sequential(Linear(4, 8), ReLU(), Linear(8, 3))
    x = Tensor(np.ones((2, 4), np.float32))
    prof = Profiler(model, timer=lambda: next(ticks)).profile(x, warmup=1, repeats=3)
    rows = {r['name']: r for r in prof.rows()}
    assert list(rows) == ['', '0', '1', '2'], f'one row per module that ran; got {list(rows)}'
    got = {k: (r['flops'], r['calls'], r['output_shape']) for k, r in rows.items()}
    assert got == {'': (0, 1, (2, 3)), '0': (144, 1, (2, 8)), '1': (16, 1, (2, 8)), '2': (102, 1, (2, 3))}, f'(self FLOPs, calls, output shape) per module from the first timed pass; got {got}'
    assert prof.times['0'] == [1, 1, 1], f"3 timed passes; a leaf layer spans one tick (one reading in _before, one in _after); got {prof.times['0']}"
    assert prof.times[''] == [7, 7, 7], f"the model's hooks bracket its 3 children's 6 readings: 7 ticks per pass; got {prof.times['']}"
    assert rows['']['flops_total'] == 262 and rows['']['params_total'] == 67, "the model's row adds up its children's FLOPs and parameters"
    assert not model.__dict__.get('_forward_hooks') and (not model[0].__dict__.get('_forward_pre_hooks')), 'profile() must remove every hook it registered'
    out = model(x)
    assert out.shape == (2, 3), 'the model still works after profiling'

