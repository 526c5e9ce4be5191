from otter.test_files import test_case

OK_FORMAT = False

name = "mse"
points = 0

@test_case(points=None, hidden=False)
def test_mse_reductions(mse_loss, Tensor, np):
    pred, target = (Tensor([1.0, 2.0, 3.0, 4.0]), Tensor([1.5, 2.0, 1.0, 4.0]))
    assert np.isclose(mse_loss(pred, target).item(), 1.0625), 'mean of [0.25, 0, 4, 0] is 1.0625'
    assert np.isclose(mse_loss(pred, target, reduction='sum').item(), 4.25), 'sum is 4.25'
    none = mse_loss(pred, target, reduction='none')
    assert none.shape == (4,), "reduction='none' keeps one loss per element"
    assert np.allclose(none.numpy(), [0.25, 0.0, 4.0, 0.0]), 'per-element squared errors'
    assert mse_loss(pred, target).dtype == np.float32, 'the loss stays float32'
    try:
        mse_loss(pred, target, reduction='avg')
    except ValueError:
        pass
    else:
        raise AssertionError("reduction='avg' is a typo: raise ValueError instead of guessing")

