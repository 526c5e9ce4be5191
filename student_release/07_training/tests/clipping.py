from otter.test_files import test_case

OK_FORMAT = False

name = "clipping"
points = 0

@test_case(points=None, hidden=False)
def test_clip_grad_norm_scales_all_parameters(clip_grad_norm_, Tensor, np):
    a = Tensor([0.0], requires_grad=True)
    a.grad = Tensor([3.0])
    b = Tensor([0.0, 0.0], requires_grad=True)
    b.grad = Tensor([0.0, 4.0])
    total = clip_grad_norm_([a, b], max_norm=1.0)
    assert abs(float(total.item()) - 5.0) < 1e-05, f'return the global norm BEFORE clipping: sqrt(3² + 4²) = 5 over all params, got {float(total.item())}; you log this number to watch for divergence'
    assert np.allclose(a.grad.numpy(), [0.6], atol=1e-05) and np.allclose(b.grad.numpy(), [0.0, 0.8], atol=1e-05), f'every gradient must be scaled by the same factor 1/5 so the update keeps its direction: expected [0.6] and [0, 0.8], got {a.grad.numpy()} and {b.grad.numpy()}'
    c = Tensor([0.0], requires_grad=True)
    c.grad = Tensor([0.5])
    clip_grad_norm_([c], max_norm=1.0)
    assert np.allclose(c.grad.numpy(), [0.5]), f'a norm (0.5) below max_norm (1.0) must not be changed, got {c.grad.numpy()}: clipping only ever shrinks gradients'
    d = Tensor([0.0, 0.0], requires_grad=True)
    d.grad = Tensor([3.0, -4.0])
    top = clip_grad_norm_([d], max_norm=1.0, norm_type=float('inf'))
    assert np.isclose(float(top.item()), 4.0), f'the inf-norm is the largest |gradient| (4), got {float(top.item())}: use _vector_norm'
    e = Tensor([0.0, 0.0], requires_grad=True)
    e.grad = Tensor([float('nan'), 1.0])
    with np.errstate(invalid='ignore'):
        clip_grad_norm_([a, e], max_norm=1.0)
    assert np.isnan(a.grad.numpy()).all() and np.isnan(e.grad.numpy()).all(), f'a NaN gradient makes the total NaN and, as in PyTorch, every gradient NaN (multiply by min(coef, 1) with np.minimum, no `if`); got {a.grad.numpy()} and {e.grad.numpy()}'

