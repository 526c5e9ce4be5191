from otter.test_files import test_case

OK_FORMAT = False

name = "adam"
points = 0

@test_case(points=None, hidden=False)
def test_adam_first_step_is_bias_corrected(Adam, Tensor, np):
    p = Tensor([1.0, 1.0], requires_grad=True)
    p.grad = Tensor([3.0, -0.01])
    opt = Adam([p], lr=0.1)
    opt.step()
    assert np.allclose(p.data, [0.9, 1.1], atol=0.0001), f"Adam's first step moves each element by lr against its gradient's sign, got {p.data}; a step of about 0.03 means the moments are not bias-corrected"
    s = opt.state[p]
    got = {k: v if k == 'step' else np.shape(v) for k, v in s.items()}
    assert s.get('step') == 1 and np.shape(s.get('exp_avg')) == (2,) and (np.shape(s.get('exp_avg_sq')) == (2,)), f"optimizer.state[p] must hold 'step' = 1 and 'exp_avg'/'exp_avg_sq' arrays of shape (2,) after one step, got {got} (step, or shapes): bias correction needs the step count, and checkpoints save these keys"

@test_case(points=None, hidden=False)
def test_adamw_decays_weights_outside_the_moments(Adam, AdamW, Tensor, np):
    p = Tensor([2.0], requires_grad=True)
    p.grad = Tensor([0.0])
    AdamW([p], lr=0.1, weight_decay=0.5).step()
    assert np.allclose(p.data, [1.9]), f'AdamW with a zero gradient: expected p * (1 - lr * wd) = 2 * 0.95 = 1.9, got {p.data}: decoupled decay is applied directly to the weights, outside the moments'
    q = Tensor([2.0], requires_grad=True)
    q.grad = Tensor([0.0])
    Adam([q], lr=0.1, weight_decay=0.5).step()
    assert np.allclose(q.data, [1.9], atol=0.0001), f'Adam folds wd * p = 1.0 into the gradient, and its first step moves lr = 0.1: expected 1.9, got {q.data}; that is the L2 penalty AdamW was made to avoid'
    q.grad = Tensor([0.0])
    AdamW([q], lr=0.1, weight_decay=0.0).step()
    assert np.allclose(q.data, [1.9], atol=1e-06), f'zero gradient and no decay: expected no movement (1.9), got {q.data}: a zero gradient must give a zero Adam step (eps keeps 0 / 0 away)'

