from otter.test_files import test_case

OK_FORMAT = False

name = "score"
points = 0

@test_case(points=None, hidden=False)
def test_score_and_leaderboard(olympics_score, leaderboard):
    base = {'accuracy': 0.97, 'latency_ms': 1.0, 'bytes': 400.0}
    assert abs(olympics_score(dict(base), base) - 1.0) < 1e-12, 'the baseline scores exactly 1'
    got = olympics_score({'accuracy': 0.965, 'latency_ms': 2.0, 'bytes': 100.0}, base)
    assert abs(got - 2 ** 0.5) < 1e-12, f'2x slower and 4x smaller: sqrt(0.5 * 4) = 1.4142, got {got}'
    edge = olympics_score({'accuracy': 0.96, 'latency_ms': 1.0, 'bytes': 100.0}, base)
    assert abs(edge - 2.0) < 1e-12, f'accuracy exactly one point lower is allowed (0.97 - 0.01): expected 2.0, got {edge}'
    low = {'accuracy': 0.13, 'latency_ms': 1.0, 'bytes': 1.0}
    assert olympics_score(dict(low, accuracy=0.12), low) == 1.0, '0.13 - 0.01 is 0.12000000000000001 in floating point: an accuracy of exactly 0.12 is at the bound and must pass (compare with the 1e-9 tolerance)'
    assert olympics_score({'accuracy': 0.95, 'latency_ms': 0.1, 'bytes': 1.0}, base) == 0.0, 'two points lower fails the gate: the score is 0 however fast and small'
    try:
        olympics_score({'accuracy': 0.97, 'latency_ms': 0.0, 'bytes': 1.0}, base)
    except ValueError:
        pass
    else:
        raise AssertionError('a latency of 0 ms is not a measurement: raise ValueError')
    board = leaderboard({'accuracy': 0.965, 'latency_ms': 2.0, 'bytes': 1024.0}, dict(base, bytes=4096.0))
    names = [e['name'] for e in board]
    assert names == ['Olympics score', 'Accuracy (%)', 'Latency (ms)', 'Size (KB)'], names
    assert [e['order'] for e in board] == ['desc', 'desc', 'asc', 'asc'], f'higher score/accuracy first, lower latency/size first; got {board}'
    assert [e['value'] for e in board] == [1.4142, 96.5, 2.0, 1.0], board

