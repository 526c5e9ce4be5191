from otter.test_files import test_case

OK_FORMAT = False

name = "distillation"
points = 0

@test_case(points=None, hidden=False)
def test_kl_div_values_reductions_and_gradients(kl_div, Tensor, np):
    p = np.array([[0.5, 0.5, 0.0], [0.7, 0.2, 0.1]])
    q = np.array([[0.25, 0.25, 0.5], [0.6, 0.3, 0.1]])
    x = Tensor(np.log(q), requires_grad=True)
    terms = np.where(p > 0, p * np.log(np.where(p > 0, p, 1) / q), 0)
    none = kl_div(x, Tensor(p), reduction='none')
    assert none.shape == (2, 3) and np.allclose(none.numpy(), terms), f'element-wise target * (log target - input), 0 where target is 0: expected {terms.round(4).tolist()}, got {np.round(none.numpy(), 4).tolist()}'
    got = [kl_div(x, Tensor(p), reduction=r).item() for r in ('sum', 'mean', 'batchmean')]
    want = [terms.sum(), terms.sum() / 6, terms.sum() / 2]
    assert np.allclose(got, want), f'sum, mean (over all 6 elements), batchmean (over the 2 rows): expected {np.round(want, 4).tolist()}, got {np.round(got, 4).tolist()}'
    logp = Tensor(np.log([[0.7, 0.2, 0.1]]), requires_grad=True)
    as_log = kl_div(x[1:], logp, reduction='sum', log_target=True)
    summed = as_log.item()
    assert np.isclose(summed, terms[1].sum()), f'log_target=True takes log-probabilities: exp(target) * (target - input) sums to {terms[1].sum():.5f}, got {summed:.5f}'
    kl_div(x, Tensor(p), reduction='sum').backward()
    assert np.allclose(x.grad.numpy(), -p), f'd/dinput of the summed loss is -target, got {np.round(x.grad.numpy(), 4).tolist()}'
    as_log.backward()
    grad_target = logp.grad.numpy()
    want_target = [0.7, 0.2, 0.1] * (np.log([0.7, 0.2, 0.1]) - np.log([0.6, 0.3, 0.1]) + 1)
    assert np.allclose(grad_target, want_target), f'd/dtarget with log_target: exp(target) * (target - input + 1) = {np.round(want_target, 4).tolist()}, got {np.round(grad_target, 4).tolist()}'

@test_case(points=None, hidden=False)
def test_distillation_loss_mixes_soft_and_hard_terms(distillation_loss, kl_div, log_softmax, cross_entropy, Tensor, np):
    rng = np.random.default_rng(0)
    s = Tensor(rng.standard_normal((4, 5)), requires_grad=True)
    t = Tensor(rng.standard_normal((4, 5)) * 3, requires_grad=True)
    y = Tensor(np.array([0, 3, 1, 4]))
    loss = distillation_loss(s, t, y, temperature=2.0, alpha=0.7)
    soft = kl_div(log_softmax(s / 2.0, dim=1), log_softmax(t / 2.0, dim=1), reduction='batchmean', log_target=True).item() * 4.0
    hard = cross_entropy(s, y).item()
    assert np.isclose(loss.item(), 0.7 * soft + 0.3 * hard), f'alpha * T^2 * KL (batchmean) + (1 - alpha) * CE: expected {0.7 * soft + 0.3 * hard:.5f}, got {loss.item():.5f}'
    loss.backward()
    assert s.grad is not None and t.grad is None, f"the student gets a gradient, the teacher none: detach the teacher's logits; got s.grad {type(s.grad).__name__}, t.grad {type(t.grad).__name__}"
    same = distillation_loss(s, s, y, temperature=3.0, alpha=1.0)
    assert np.isclose(same.item(), 0.0, atol=1e-07), f'a student equal to its teacher has no soft loss, got {same.item()}'

