from otter.test_files import test_case

OK_FORMAT = False

name = "binary"
points = 0

@test_case(points=None, hidden=False)
def test_bce_clamps_log(binary_cross_entropy, Tensor, np):
    p, y = (Tensor([0.9, 0.2, 0.0, 1.0]), Tensor([1.0, 0.0, 1.0, 1.0]))
    per = binary_cross_entropy(p, y, reduction='none').numpy()
    assert np.isfinite(per).all(), f'log(0) must be clamped at -100, not left as -inf: got {per.tolist()}'
    assert np.allclose(per, [0.1053605, 0.2231435, 100.0, 0.0], atol=1e-05), f'-(y log p + (1 - y) log(1 - p)) per element, with logs clamped at -100; got {per}'
    got = binary_cross_entropy(p, y).item()
    assert np.isclose(got, per.mean()), f"reduction='mean' (the default) averages the per-element losses: expected {per.mean():.5f}, got {got}"

@test_case(points=None, hidden=False)
def test_bce_with_logits_is_stable(binary_cross_entropy_with_logits, Tensor, np):
    z, y = (Tensor([0.0, 1000.0, -1000.0, 2.0]), Tensor([1.0, 0.0, 1.0, 1.0]))
    with np.errstate(over='raise'):
        per = binary_cross_entropy_with_logits(z, y, reduction='none').numpy()
    assert np.isfinite(per).all(), f'exp overflowed, got {per.tolist()}: use log(1 + exp(-|z|)) + max(-z, 0)'
    assert np.allclose(per, [0.6931472, 1000.0, 1000.0, 0.126928], atol=1e-05), f'(1 - y) z + softplus(-z) per element; got {per}'
    pw = binary_cross_entropy_with_logits(z, y, reduction='none', pos_weight=Tensor([3.0]))
    assert np.isclose(pw.numpy()[3], 3 * 0.126928, atol=1e-05), f'pos_weight multiplies the loss of positive targets: expected 3 * 0.126928 = {3 * 0.126928:.6f}, got {pw.numpy()[3]:.6f}'

