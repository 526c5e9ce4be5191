from otter.test_files import test_case

OK_FORMAT = False

name = "confidence_intervals"
points = 0

@test_case(points=None, hidden=False)
def test_t_interval_over_repeated_runs(t_interval, np):
    mean, low, high = t_interval([10.0, 12.0, 11.0, 13.0, 9.0])
    half = 2.7764451 * np.sqrt(2.5) / np.sqrt(5)
    assert abs(mean - 11.0) < 1e-12 and abs(high - (11.0 + half)) < 1e-06 and (abs(low - (11.0 - half)) < 1e-06), f'mean 11 ± t(0.975, 4 df) · s / sqrt(5) = ± {half:.4f}; got ({mean}, {low}, {high}) (n - 1 degrees of freedom, ddof=1)'
    _, low90, high90 = t_interval([10.0, 12.0, 11.0, 13.0, 9.0], confidence=0.9)
    assert high90 - low90 < high - low, f'a 90 % interval is narrower than a 95 % one: got widths {high90 - low90:.4f} (90 %) and {high - low:.4f} (95 %); use the t quantile of (1 + confidence) / 2'
    for bad in ([1.0], [1.0, 2.0, 3.0]):
        try:
            t_interval(bad, confidence=0.95 if len(bad) == 1 else 1.0)
        except ValueError:
            pass
        else:
            raise AssertionError('one value, or confidence 1, must raise ValueError')

@test_case(points=None, hidden=False)
def test_bootstrap_ci_resamples_with_its_own_seed(bootstrap_ci, np):
    values = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0]
    low, high = bootstrap_ci(values, np.mean, seed=0)
    idx = np.random.default_rng(0).integers(0, 8, size=(1000, 8))
    want = np.percentile(np.asarray(values)[idx].mean(axis=1), [2.5, 97.5])
    assert np.allclose([low, high], want), f'resample with rng.integers(0, n, size=(n_resamples, n)), then the 2.5th and 97.5th percentiles of the means: expected {want.tolist()}, got {[low, high]}'
    again = bootstrap_ci(values, np.mean, seed=0)
    assert again == (low, high), f'the same seed must give the same interval: got {(low, high)}, then {again}; draw from np.random.default_rng(seed), never the global generator'
    narrow = bootstrap_ci(values, np.median, confidence=0.5, n_resamples=200, seed=3)
    assert narrow[0] <= float(np.median(values)) <= narrow[1], f'the interval of the median should contain the sample median; got {narrow}'

