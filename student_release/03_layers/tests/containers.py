from otter.test_files import test_case

OK_FORMAT = False

name = "containers"
points = 0

@test_case(points=None, hidden=False)
def test_sequential_chains_and_names(Sequential, Linear, Dropout, Tensor, np):
    model = Sequential(Linear(4, 8), Dropout(0.1), Linear(8, 3)).eval()
    out = model(Tensor(np.ones((5, 4), dtype=np.float32)))
    assert out.shape == (5, 3), f'(5, 4) -> Linear(4, 8) -> Linear(8, 3) is (5, 3), not {out.shape}'
    names = [n for n, _ in model.named_parameters()]
    assert names == ['0.weight', '0.bias', '2.weight', '2.bias'], f"children of Sequential are named '0', '1', ...; got {names}"
    count = sum((p.numel() for p in model.parameters()))
    assert count == 4 * 8 + 8 + 8 * 3 + 3, f'the MLP has 4*8 + 8 + 8*3 + 3 = 67 parameters, parameters() gave {count}'

@test_case(points=None, hidden=False)
def test_dropout_train_and_eval(Dropout, Tensor, np, manual_seed):
    manual_seed(1)
    d = Dropout(p=0.25)
    x = Tensor(np.ones((200, 50), dtype=np.float32))
    y = d(x).numpy()
    dropped = float((y == 0).mean())
    assert 0.2 < dropped < 0.3, f'about 25% of elements should be zero in training: {dropped:.2f}'
    kept = y[y != 0]
    assert np.allclose(kept, 1 / 0.75), f'survivors are scaled by 1 / (1 - p) = {1 / 0.75:.4f}, got values from {kept.min():.4f} to {kept.max():.4f}: the expected activation must not change'
    d.eval()
    ev = d(x).numpy()
    assert np.array_equal(ev, x.numpy()), f'in eval mode dropout is the identity, but {int((ev != 1).sum())} of {ev.size} ones changed'
    try:
        Dropout(1.5)
    except ValueError:
        pass
    else:
        raise AssertionError('p = 1.5 is not a probability: raise ValueError')

@test_case(points=None, hidden=False)
def test_flatten(Flatten, Tensor, np):
    x = Tensor(np.zeros((2, 3, 4, 5), dtype=np.float32))
    assert Flatten()(x).shape == (2, 60), f'Flatten() keeps the batch dim and merges the rest: (2, 60), got {Flatten()(x).shape}'
    assert Flatten(0, 1)(x).shape == (6, 4, 5), f'Flatten(0, 1) merges the first two dims: (6, 4, 5), got {Flatten(0, 1)(x).shape}'
    assert Flatten(1, 2)(x).shape == (2, 12, 5), f'Flatten(1, 2) merges dims 1 and 2 (end_dim is inclusive): (2, 12, 5), got {Flatten(1, 2)(x).shape}'
    try:
        shape = Flatten(1, 4)(x).shape
    except IndexError:
        pass
    else:
        raise AssertionError(f'Flatten(1, 4) on a 4-D input must raise IndexError (dims go up to 3), but gave shape {shape}: never wrap a dim around')

