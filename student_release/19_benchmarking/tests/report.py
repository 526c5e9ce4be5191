from otter.test_files import test_case

OK_FORMAT = False

name = "report"
points = 0

@test_case(points=None, hidden=False)
def test_validate_report_names_the_field(validate_report, ReportError, save_report, load_report, json, tempfile, Path):

    def good():
        return {'schema': 'tinytorch-benchmark/1', 'system': {'name': 'laptop', 'python': '3.11', 'numpy': '2.4', 'machine': 'x'}, 'model': 'mlp', 'results': [{'scenario': 'SingleStream', 'status': 'VALID', 'metric': 'p90_latency_ms', 'value': 2.0, 'ci': [1.5, 2.5], 'confidence': 0.95, 'runs': 5, 'accuracy': 0.97, 'accuracy_target': 0.95, 'latency_ms': {'count': 100, 'mean': 1.5, 'p50': 1.4, 'p90': 2.0, 'p99': 3.0, 'min': 1.0, 'max': 4.0}}, {'scenario': 'Offline', 'status': 'INVALID', 'metric': 'samples_per_second', 'value': 900.0, 'ci': [850.0, 950.0], 'confidence': 0.95, 'runs': 3, 'accuracy': 0.5, 'accuracy_target': 0.95, 'latency_ms': None}], 'comparisons': [{'name': 'kv', 'ratio': 6.0, 'ci': [5.5, 6.5], 'confidence': 0.95, 'threshold': 5.0, 'pairs': 8, 'verdict': 'pass'}]}
    got = validate_report(good())
    assert got is None, f'a valid report returns None, got {got!r}'
    broken = [(lambda r: r.update(schema='tinytorch-benchmark/0'), 'schema'), (lambda r: r['system'].update(name=''), 'system.name'), (lambda r: r.pop('model'), 'model'), (lambda r: r.update(results=[]), 'results'), (lambda r: r['results'][0].update(scenario='Server'), 'results[0].scenario'), (lambda r: r['results'][1].update(metric='p90_latency_ms'), 'results[1].metric'), (lambda r: r['results'][0].update(value=True), 'results[0].value'), (lambda r: r['results'][0].update(ci=[2.1, 2.5]), 'results[0].ci'), (lambda r: r['results'][0].update(runs=1), 'results[0].runs'), (lambda r: r['results'][1].update(status='VALID'), 'results[1].status'), (lambda r: r['results'][0]['latency_ms'].update(p99=1.0), 'results[0].latency_ms'), (lambda r: r['results'][1].update(latency_ms={}), 'results[1].latency_ms'), (lambda r: r['comparisons'][0].update(verdict='inconclusive'), 'comparisons[0].verdict')]
    for breaks, field in broken:
        report = good()
        breaks(report)
        try:
            validate_report(report)
        except ReportError as err:
            assert err.field == field, f'the first problem is at {field}; got {err.field}: {err}'
        else:
            raise AssertionError(f'a report broken at {field} must raise ReportError')
    with tempfile.TemporaryDirectory() as tmp:
        saved = save_report(good(), Path(tmp) / 'report.json')
        loaded = load_report(saved)
        assert loaded == good(), f'save then load must give the report back; these keys differ: {sorted((k for k in good() if loaded.get(k) != good()[k]))}'
        (Path(tmp) / 'bad.json').write_text(json.dumps({**good(), 'model': ''}))
        try:
            load_report(Path(tmp) / 'bad.json')
        except ReportError as err:
            assert 'bad.json: model:' in str(err) and '\n' not in str(err), f'one line naming the file and the field; got {err}'
        else:
            raise AssertionError('load_report must refuse an invalid report')

@test_case(points=None, hidden=False)
def test_check_gate_recomputes_the_status(check_gate, ReportError):
    for acc, target, status in [(0.9, 0.95, 'INVALID'), (0.95, 0.95, 'VALID'), (0.97, 0.95, 'VALID')]:
        result = {'accuracy': acc, 'accuracy_target': target, 'status': status}
        got = check_gate(result, 'results[2]')
        assert got is None, f'accuracy {acc} vs target {target} is {status}: no error, got {got!r}'
        wrong = dict(result, status='VALID' if status == 'INVALID' else 'INVALID')
        try:
            check_gate(wrong, 'results[2]')
        except ReportError as err:
            assert err.field == 'results[2].status', f'the problem is on results[2].status, got {err.field}'
        else:
            raise AssertionError(f"accuracy {acc} vs target {target} must be {status}: a report saying {wrong['status']} must raise ReportError")
    try:
        check_gate({'accuracy': 0.5, 'accuracy_target': 0.9}, 'results[0]')
    except ReportError as err:
        assert err.field == 'results[0].status', f'a missing status is a problem, got {err}'
    else:
        raise AssertionError('a result without a status must raise ReportError')

@test_case(points=None, hidden=False)
def test_check_latency_orders_the_percentiles(check_latency, ReportError):

    def lat(**changes):
        return {'scenario': 'SingleStream', 'latency_ms': {'count': 100, 'mean': 1.5, 'p50': 1.4, 'p90': 2.0, 'p99': 3.0, 'min': 1.0, 'max': 4.0, **changes}}
    got = (check_latency(lat(), 'results[0]'), check_latency({'scenario': 'Offline', 'latency_ms': None}, 'results[1]'))
    assert got == (None, None), f'a good SingleStream block and an Offline null pass; got {got}'
    for result, field in [(lat(p99=1.9), 'results[0].latency_ms'), (lat(min=1.5), 'results[0].latency_ms'), (lat(count=0), 'results[0].latency_ms.count'), (lat(count=True), 'results[0].latency_ms.count'), (lat(p90=float('nan')), 'results[0].latency_ms.p90'), ({'scenario': 'SingleStream', 'latency_ms': None}, 'results[0].latency_ms'), ({'scenario': 'Offline', 'latency_ms': {}}, 'results[0].latency_ms')]:
        try:
            check_latency(result, 'results[0]')
        except ReportError as err:
            assert err.field == field, f'expected the problem on {field}, got {err.field}: {err}'
        else:
            raise AssertionError(f"{result['latency_ms']} for {result['scenario']} must raise ReportError on {field}")

@test_case(points=None, hidden=False)
def test_check_verdict_matches_the_interval(check_verdict, ReportError):
    for ci, verdict in [([5.0, 6.0], 'pass'), ([3.0, 4.9], 'fail'), ([4.0, 6.0], 'inconclusive'), ([4.0, float('inf')], 'inconclusive'), ([3.0, 5.0], 'inconclusive')]:
        good = {'ci': ci, 'threshold': 5.0, 'verdict': verdict}
        got = check_verdict(good, 'comparisons[0]')
        assert got is None, f'ci {ci} against threshold 5 is {verdict!r}: no error, got {got!r}'
        for other in ('pass', 'fail', 'inconclusive'):
            if other == verdict:
                continue
            try:
                check_verdict(dict(good, verdict=other), 'comparisons[0]')
            except ReportError as err:
                assert err.field == 'comparisons[0].verdict', f'the problem is on comparisons[0].verdict, got {err.field}'
            else:
                raise AssertionError(f'ci {ci} against threshold 5 is {verdict!r}; a report saying {other!r} must raise ReportError')

