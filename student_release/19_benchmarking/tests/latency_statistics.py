from otter.test_files import test_case

OK_FORMAT = False

name = "latency_statistics"
points = 0

@test_case(points=None, hidden=False)
def test_latency_percentile_is_a_latency_some_query_had(latency_percentile, np):
    ms = [1.2, 1.0, 9.0, 1.1, 1.3, 1.4, 1.2, 2.0, 1.1, 1.3]
    got = [latency_percentile(ms, p) for p in (0, 50, 89.9, 90, 99)]
    assert got == [1.0, 1.3, 2.0, 9.0, 9.0], f'sorted[int(n * p / 100)] for p = 0, 50, 89.9, 90, 99 of 10 latencies: expected [1.0, 1.3, 2.0, 9.0, 9.0], got {got} (no interpolation: always a real latency)'
    hundred = list(range(100, 0, -1))
    assert latency_percentile(hundred, 29) == 30.0, f'p29 of 1..100 is sorted[29] = 30; got {latency_percentile(hundred, 29)} (compute n * p / 100, not n * (p / 100): 100 * 0.29 is 28.999...)'
    kind = type(latency_percentile(np.array([3, 1, 2]), 50)).__name__
    assert kind == 'float', f'expected a Python float, got {kind}: the report is JSON, and json cannot write NumPy numbers'
    for bad in ([], ms):
        try:
            latency_percentile(bad, 100 if bad else 50)
        except ValueError:
            pass
        else:
            raise AssertionError('no latencies, or percentile 100 (index n), must raise ValueError')

@test_case(points=None, hidden=False)
def test_latency_summary_has_the_report_keys(latency_summary):
    ms = [1.2, 1.0, 9.0, 1.1, 1.3, 1.4, 1.2, 2.0, 1.1, 1.3]
    summary = latency_summary(ms)
    want = {'count': 10, 'mean': 2.06, 'p50': 1.3, 'p90': 9.0, 'p99': 9.0, 'min': 1.0, 'max': 9.0}
    assert set(summary) == set(want), f'keys {sorted(want)}; got {sorted(summary)}'
    assert all((abs(summary[k] - want[k]) < 1e-12 for k in want)), f'expected {want}, got {summary}'
    kinds = (type(summary['count']).__name__, type(summary['p90']).__name__)
    assert kinds == ('int', 'float'), f'expected plain Python numbers (int count, float p90), got {kinds}: the report is JSON'
    try:
        latency_summary([])
    except ValueError:
        pass
    else:
        raise AssertionError('a run without latencies has no summary: raise ValueError')

