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
    got = (rows['']['flops_total'], rows['']['params_total'])
    assert got == (262, 67), f"the model's row adds up its children's FLOPs and parameters: expected (262, 67), got {got}"
    left = (model.__dict__.get('_forward_hooks'), model[0].__dict__.get('_forward_pre_hooks'))
    assert not left[0] and (not left[1]), f'profile() must remove every hook it registered; still there: {left}'
    out = model(x)
    assert out.shape == (2, 3), f'the model still works after profiling: expected output (2, 3), got {out.shape}'

