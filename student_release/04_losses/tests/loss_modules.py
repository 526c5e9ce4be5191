from otter.test_files import test_case

OK_FORMAT = False

name = "loss_modules"
points = 0

@test_case(points=None, hidden=False)
def test_loss_modules(CrossEntropyLoss, MSELoss, BCEWithLogitsLoss, Tensor, np):
    logits = Tensor(np.zeros((4, 10), dtype=np.float32))
    y = Tensor(np.array([0, 3, 9, 5]))
    got = CrossEntropyLoss()(logits, y).item()
    assert np.isclose(got, np.log(10), atol=1e-05), f'uniform logits over 10 classes cost log(10) = 2.3026 (the loss of random guessing), got {got}'
    shape = CrossEntropyLoss(reduction='none')(logits, y).shape
    assert shape == (4,), f"reduction='none': one loss per sample, shape (4,), got {shape}"
    total = MSELoss(reduction='sum')(Tensor([1.0, 2.0]), Tensor([0.0, 0.0])).item()
    assert np.isclose(total, 5.0), f"MSELoss(reduction='sum') must pass its reduction on: 1² + 2² = 5, got {total}"
    got = BCEWithLogitsLoss()(Tensor([0.0]), Tensor([1.0])).item()
    assert np.isclose(got, np.log(2)), f'a logit of 0 is p = 0.5: the loss is log 2 = 0.6931, got {got}'

