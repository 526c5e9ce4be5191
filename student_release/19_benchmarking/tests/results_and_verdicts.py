from otter.test_files import test_case

OK_FORMAT = False

name = "results_and_verdicts"
points = 0

@test_case(points=None, hidden=False)
def test_run_scenario_gates_on_accuracy(run_scenario, np):

    class Clock:

        def __init__(self):
            self.now = 0.0

        def __call__(self):
            return self.now

        def sut(self, batch):
            self.now += 0.001 * len(batch)
            return np.eye(2)[np.zeros(len(batch), dtype=int)]
    clock = Clock()
    samples, labels = (np.zeros((8, 2)), np.array([0] * 7 + [1]))
    single = run_scenario(clock.sut, samples, labels, 'SingleStream', accuracy_target=0.85, runs=3, queries=10, warmup=2, timer=clock)
    assert single['status'] == 'VALID' and single['accuracy'] == 0.875, f"7 of 8 right = 0.875 >= target 0.85: VALID; got {single['status']}, {single['accuracy']}"
    assert single['metric'] == 'p90_latency_ms' and abs(single['value'] - 1.0) < 1e-09, f"each query takes 1 ms: p90 1.0 ms (times 1000: ms); got {single['metric']} {single['value']}"
    got = (single['latency_ms']['count'], single['runs'])
    assert got == (30, 3), f'latency_ms summarises all 3 x 10 timed queries (not the warm-up): expected count 30 and runs 3, got {got}'
    gated = run_scenario(clock.sut, samples, labels, 'Offline', accuracy_target=0.9, runs=2, batch_size=4, timer=clock)
    assert gated['status'] == 'INVALID' and gated['latency_ms'] is None, f"accuracy 0.875 < target 0.9: expected status INVALID and no latency summary (offline), got {gated['status']!r} and {gated['latency_ms']!r}"
    assert abs(gated['value'] - 1000.0) < 1e-06 and gated['ci'][0] <= gated['value'], f"1 ms per sample: 1000 samples/s; got {gated['value']}, interval {gated['ci']}"
    try:
        run_scenario(clock.sut, samples, labels, 'Server', accuracy_target=0.5)
    except ValueError:
        pass
    else:
        raise AssertionError('an unknown scenario must raise ValueError')

@test_case(points=None, hidden=False)
def test_speedup_verdict_decides_from_the_interval(speedup_verdict):
    fast = speedup_verdict([6.1, 5.8, 6.4, 5.9, 6.0, 6.2, 6.3, 5.7], threshold=5)
    assert fast['verdict'] == 'pass' and fast['pairs'] == 8, f'every plausible median is above 5: pass; got {fast}'
    slow = speedup_verdict([3.1, 2.8, 3.4, 2.9, 3.0, 3.2, 3.3, 2.7], 5)
    assert slow['verdict'] == 'fail', f"the whole interval below the threshold 5: expected 'fail', got {slow}"
    few = speedup_verdict([6.1, 5.8, 6.4, 5.9, 6.0], 5)
    assert few['verdict'] == 'inconclusive', f"5 pairs cannot bound a median at 95 %: expected 'inconclusive', got {few}"
    got = {k: fast[k] for k in ('ratio', 'ci', 'confidence', 'threshold')}
    want = {'ratio': 6.05, 'ci': [5.7, 6.4], 'confidence': 0.95, 'threshold': 5}
    assert got == want, f"the median ratio, median_ci's interval (module 14; [min, max] for 8 pairs), the confidence and the threshold: expected {want}, got {got}"

