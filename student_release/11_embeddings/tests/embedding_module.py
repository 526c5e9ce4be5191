from otter.test_files import test_case

OK_FORMAT = False

name = "embedding_module"
points = 0

@test_case(points=None, hidden=False)
def test_embedding_module_init(Embedding, manual_seed, np):
    manual_seed(0)
    emb = Embedding(2000, 8)
    w = emb.weight.numpy()
    assert w.shape == (2000, 8) and w.dtype == np.float32, f'weight is (num_embeddings, embedding_dim) float32, got {w.shape} {w.dtype}'
    assert emb.weight.requires_grad, f'the table is a Parameter (requires_grad=True), got requires_grad={emb.weight.requires_grad}: otherwise the optimizer never updates it'
    assert abs(float(w.mean())) < 0.05 and 0.95 < float(w.std()) < 1.05, f'PyTorch initialises embeddings with N(0, 1); got mean {w.mean():.3f}, std {w.std():.3f}'
    names = [n for n, _ in emb.named_parameters()]
    assert names == ['weight'], f"the table is registered as the parameter 'weight' (PyTorch's name), got {names}: state_dict keys and checkpoints use it"

@test_case(points=None, hidden=False)
def test_embedding_module_padding_and_forward(Embedding, Tensor, np):
    emb = Embedding(6, 3, padding_idx=-2)
    assert emb.padding_idx == 4, f'padding_idx=-2 with 6 rows is stored as 4, got {emb.padding_idx}'
    assert np.array_equal(emb.weight.numpy()[4], [0.0, 0.0, 0.0]), f'the padding row starts at zero, got {emb.weight.numpy()[4].round(3).tolist()}'
    out = emb(Tensor(np.array([[4, 1], [1, 0]])))
    assert out.shape == (2, 2, 3) and np.array_equal(out.numpy()[1, 0], emb.weight.numpy()[1]), f'forward looks up rows of self.weight: expected shape (2, 2, 3) with out[1, 0] = weight[1], got shape {out.shape}'
    out.sum().backward()
    assert np.array_equal(emb.weight.grad.numpy()[4], [0.0, 0.0, 0.0]), f'the module passes its padding_idx on: the padding row gets no gradient, got {emb.weight.grad.numpy()[4].tolist()}'
    try:
        Embedding(6, 3, padding_idx=6)
    except ValueError:
        pass
    else:
        raise AssertionError('padding_idx=6 is not a row of a 6-row table: raise ValueError')

