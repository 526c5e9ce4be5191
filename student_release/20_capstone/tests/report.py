from otter.test_files import test_case

OK_FORMAT = False

name = "report"
points = 0

@test_case(points=None, hidden=False)
def test_olympics_report_measures_and_gates(olympics_report, optimize, validate_report, Linear, ReLU, Sequential, Tensor, manual_seed, no_grad, np):
    rng = np.random.default_rng(1)
    centers = rng.standard_normal((3, 16)).astype(np.float32) * 2
    y = rng.integers(0, 3, 300)
    x = (centers[y] + 1.5 * rng.standard_normal((300, 16))).astype(np.float32)
    manual_seed(1)
    model = Sequential(Linear(16, 32), ReLU(), Linear(32, 3))
    q = optimize(model, x, y, amount=0.0, finetune_epochs=0, calibration=64)
    report = olympics_report(model, q, x, y, max_accuracy_drop=0.05, runs=2, queries=8, system='check')
    validate_report(report)
    results = report['results']
    kinds = [r['scenario'] for r in results]
    assert kinds == ['SingleStream', 'SingleStream'], f"two single-stream results, the baseline's then the optimised model's; got {kinds}"
    with no_grad():
        own = [float(np.mean(m(Tensor(x)).data.argmax(axis=1) == y)) for m in (model, q)]
    got = [r['accuracy'] for r in results]
    assert np.allclose(got, own, rtol=0, atol=1e-12), f"each accuracy is run_scenario's measurement of that model, baseline first: expected {own}, got {got}"
    targets = [r['accuracy_target'] for r in results]
    assert np.allclose(targets, own[0] - 0.05, rtol=0, atol=1e-12), f"one target for both, the baseline's accuracy {own[0]:.4f} minus the allowed drop 0.05 = {own[0] - 0.05:.4f}; got {targets}"
    shape = [(r['runs'], r['latency_ms']['count']) for r in results]
    assert shape == [(2, 16), (2, 16)], f'pass runs=2 and queries=8 on to run_scenario: (runs, latencies) = (2, 16) each; got {shape}'
    assert report['system']['name'] == 'check', f"the report's system name is the `system` argument 'check'; got {report['system']['name']!r}"

