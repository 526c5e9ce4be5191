from otter.test_files import test_case

OK_FORMAT = False

name = "frontier"
points = 0

@test_case(points=None, hidden=False)
def test_dominates_needs_better_somewhere_and_worse_nowhere(dominates):
    base = {'accuracy': 0.97, 'latency_ms': 1.0, 'bytes': 400.0}
    for key, worse in (('accuracy', 0.96), ('latency_ms', 2.0), ('bytes', 800.0)):
        other = dict(base, **{key: worse})
        assert dominates(base, other) is True, f'{base} is better in {key} and equal elsewhere: it dominates {other}; got {dominates(base, other)}'
        assert dominates(other, base) is False, f'{other} is worse in {key}: it cannot dominate'
    same = dominates(base, dict(base))
    assert same is False, f'equal entries do not dominate each other (neither is strictly better); got {same!r}'
    trade = dict(base, accuracy=0.99, bytes=900.0)
    both = (dominates(base, trade), dominates(trade, base))
    assert both == (False, False), f'better accuracy but more bytes is a trade-off: neither dominates; got dominates(base, trade), dominates(trade, base) = {both}'

@test_case(points=None, hidden=False)
def test_pareto_front_keeps_every_undominated_entry(pareto_front):
    base = {'accuracy': 0.97, 'latency_ms': 1.0, 'bytes': 400.0}
    trade = dict(base, accuracy=0.99, bytes=900.0)
    entries = [base, dict(base, latency_ms=3.0), trade, dict(base)]
    got = pareto_front(entries)
    assert got == [0, 2, 3], f'front of [base, slower base, trade-off, copy of base] is [0, 2, 3], got {got}'
    empty = pareto_front([])
    assert empty == [], f'the front of no entries is empty, got {empty!r}'
    chain = [dict(base, bytes=float(b)) for b in (300, 200, 100)]
    got = pareto_front(chain)
    assert got == [2], f'each entry is smaller than the one before and equal elsewhere: only the last (index 2) is on the front; got {got}'

