from otter.test_files import test_case

OK_FORMAT = False

name = "score"
points = 0

@test_case(points=None, hidden=False)
def test_olympics_score_gates_then_rewards(olympics_score):
    base = {'accuracy': 0.97, 'latency_ms': 1.0, 'bytes': 400.0}
    own = olympics_score(dict(base), base)
    assert abs(own - 1.0) < 1e-12, f'the baseline scores exactly 1 against itself, got {own!r}'
    got = olympics_score({'accuracy': 0.965, 'latency_ms': 2.0, 'bytes': 100.0}, base)
    assert abs(got - 2 ** 0.5) < 1e-12, f'2x slower and 4x smaller: sqrt(0.5 * 4) = 1.4142, got {got}'
    edge = olympics_score({'accuracy': 0.96, 'latency_ms': 1.0, 'bytes': 100.0}, base)
    assert abs(edge - 2.0) < 1e-12, f'accuracy exactly one point lower is allowed (0.97 - 0.01): expected 2.0, got {edge}'
    low = {'accuracy': 0.13, 'latency_ms': 1.0, 'bytes': 1.0}
    edge_low = olympics_score(dict(low, accuracy=0.12), low)
    assert edge_low == 1.0, f'0.13 - 0.01 is 0.12000000000000001 in floating point: an accuracy of exactly 0.12 is at the bound and must pass (compare with the 1e-9 tolerance); got {edge_low!r}'
    gated = olympics_score({'accuracy': 0.95, 'latency_ms': 0.1, 'bytes': 1.0}, base)
    assert gated == 0.0, f'two points lower fails the gate: the score is 0 however fast and small; got {gated!r}'
    try:
        olympics_score({'accuracy': 0.97, 'latency_ms': 0.0, 'bytes': 1.0}, base)
    except ValueError:
        pass
    else:
        raise AssertionError('a latency of 0 ms is not a measurement: raise ValueError')

@test_case(points=None, hidden=False)
def test_leaderboard_has_four_named_columns(leaderboard):
    base = {'accuracy': 0.97, 'latency_ms': 1.0, 'bytes': 400.0}
    board = leaderboard({'accuracy': 0.965, 'latency_ms': 2.0, 'bytes': 1024.0}, dict(base, bytes=4096.0))
    names = [e['name'] for e in board]
    assert names == ['Olympics score', 'Accuracy (%)', 'Speed-up', 'Size (KB)'], f'expected the four entries Olympics score, Accuracy (%), Speed-up, Size (KB) in that order; got {names}'
    assert [e['order'] for e in board] == ['desc', 'desc', 'desc', 'asc'], f'higher score/accuracy/speed-up first, lower size first; got {board}'
    values = [e['value'] for e in board]
    assert values == [1.4142, 96.5, 0.5, 1.0], f'expected [score rounded to 4 places, accuracy x 100, baseline latency / latency, bytes / 1024] = [1.4142, 96.5, 0.5, 1.0]; got {values}'
    fast = leaderboard({'accuracy': 0.97, 'latency_ms': 0.3, 'bytes': 400.0}, base)[2]['value']
    assert fast == 3.3333, f'1.0 ms / 0.3 ms = 3.3333 (4 decimals); got {fast}'

