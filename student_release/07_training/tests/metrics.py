from otter.test_files import test_case

OK_FORMAT = False

name = "metrics"
points = 0

@test_case(points=None, hidden=False)
def test_accuracy_from_logits_probabilities_and_labels(accuracy, np):
    logits = np.array([[0.1, 2.0], [3.0, 0.0], [0.2, 0.3], [1.0, -1.0]])
    got = accuracy(logits, np.array([1, 0, 0, 0]))
    assert got == 0.75, f'(N, C) scores: predict the arg-max class over the last dim; 3 of 4 are right, got {got}'
    got = accuracy(np.array([0.9, 0.2, 0.6]), np.array([1, 0, 0]), logits=False)
    assert got == 2 / 3, f'(N,) probabilities (logits=False): predict 1 when p > 0.5, so 2 of 3 are right; got {got}'
    got = accuracy(np.array([[0.3], [-2.0], [-0.1]]), np.array([1, 0, 0]), logits=True)
    assert got == 1.0, f'(N, 1) logits (logits=True): predict 1 when the logit is > 0 (probability > 0.5), so all 3 are right; got {got} — a 0.5 threshold on logits calls 0.3 class 0'
    try:
        accuracy(np.array([0.9, 0.2]), np.array([1, 0]))
    except ValueError:
        pass
    else:
        raise AssertionError('one float score per example without logits=True/False must raise ValueError: the threshold (0 or 0.5) cannot be guessed')
    kind = type(accuracy(logits, np.array([1, 0, 0, 0]))).__name__
    assert kind == 'float', f'expected a Python float, got {kind}: wrap the mean in float(...), so logs and JSON see a plain number'

