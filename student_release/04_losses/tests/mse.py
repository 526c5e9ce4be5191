from otter.test_files import test_case

OK_FORMAT = False

name = "mse"
points = 0

@test_case(points=None, hidden=False)
def test_mse_reductions(mse_loss, Tensor, np):
    pred, target = (Tensor([1.0, 2.0, 3.0, 4.0]), Tensor([1.5, 2.0, 1.0, 4.0]))
    mean = mse_loss(pred, target).item()
    assert np.isclose(mean, 1.0625), f'squared errors are [0.25, 0, 4, 0], their mean is 1.0625; got {mean}'
    total = mse_loss(pred, target, reduction='sum').item()
    assert np.isclose(total, 4.25), f"reduction='sum' adds them: 4.25; got {total}"
    none = mse_loss(pred, target, reduction='none')
    assert none.shape == (4,), f"reduction='none' keeps one loss per element: shape (4,), got {none.shape}"
    assert np.allclose(none.numpy(), [0.25, 0.0, 4.0, 0.0]), f'per-element squared errors (input - target)**2 are [0.25, 0, 4, 0]; got {none.numpy().tolist()}'
    got = mse_loss(pred, target).dtype
    assert got == np.float32, f'the loss stays float32, got {got} (a float64 loss would make float64 gradients in module 05)'
    try:
        mse_loss(pred, target, reduction='avg')
    except ValueError:
        pass
    else:
        raise AssertionError("reduction='avg' is a typo: raise ValueError instead of guessing")

