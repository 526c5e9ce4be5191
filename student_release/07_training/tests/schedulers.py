from otter.test_files import test_case

OK_FORMAT = False

name = "schedulers"
points = 0

@test_case(points=None, hidden=False)
def test_step_lr_decays_at_the_right_epoch(StepLR, SGD, Tensor, np):
    opt = SGD([Tensor([0.0], requires_grad=True)], lr=1.0)
    sched = StepLR(opt, step_size=3, gamma=0.1)
    seen = [sched.get_last_lr()[0]]
    for _ in range(6):
        sched.step()
        seen.append(opt.param_groups[0]['lr'])
    assert np.allclose(seen, [1, 1, 1, 0.1, 0.1, 0.1, 0.01]), f'StepLR(step_size=3) must decay after epochs 3 and 6, got {seen}: an off-by-one shifts every later learning rate'

@test_case(points=None, hidden=False)
def test_cosine_and_linear_warmup(CosineAnnealingLR, LinearLR, SGD, Tensor, np):
    opt = SGD([Tensor([0.0], requires_grad=True)], lr=1.0)
    cos = CosineAnnealingLR(opt, T_max=4)
    lrs = [cos.get_last_lr()[0]]
    for _ in range(4):
        cos.step()
        lrs.append(cos.get_last_lr()[0])
    assert np.allclose(lrs, [1.0, 0.853553, 0.5, 0.146447, 0.0], atol=1e-05), f"cosine from 1 to 0 over 4 epochs should give [1, 0.854, 0.5, 0.146, 0], got {lrs}: check that you use last_epoch / T_max (not T_max + 1) and base_lrs, not group['lr']"
    opt2 = SGD([Tensor([0.0], requires_grad=True)], lr=1.0)
    warm = LinearLR(opt2, start_factor=0.25, total_iters=3)
    lrs = [warm.get_last_lr()[0]]
    for _ in range(4):
        warm.step()
        lrs.append(warm.get_last_lr()[0])
    assert np.allclose(lrs, [0.25, 0.5, 0.75, 1.0, 1.0]), f'warm-up from 25% to 100% in 3 steps, then constant, should give [0.25, 0.5, 0.75, 1, 1]; got {lrs}: cap last_epoch at total_iters'
    opt3 = SGD([Tensor([0.0], requires_grad=True)], lr=1.0)
    flat = LinearLR(opt3, start_factor=0.25, total_iters=0)
    flat.step()
    assert np.isclose(flat.get_last_lr()[0], 0.25), f'LinearLR with total_iters=0 has no ramp: PyTorch keeps start_factor (0.25), got {flat.get_last_lr()[0]} (and never divide by total_iters = 0)'

