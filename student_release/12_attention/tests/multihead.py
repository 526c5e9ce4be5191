from otter.test_files import test_case

OK_FORMAT = False

name = "multihead"
points = 0

@test_case(points=None, hidden=False)
def test_split_and_merge_heads(split_heads, merge_heads, Tensor, np):
    x = Tensor(np.arange(2 * 3 * 6, dtype=np.float32).reshape(2, 3, 6))
    h = split_heads(x, 2)
    assert h.shape == (2, 2, 3, 3), f'(N, T, E) = (2, 3, 6) with 2 heads is (2, 2, 3, 3), got {h.shape}'
    assert np.array_equal(h.numpy()[0, 1, 2], [15.0, 16.0, 17.0]), f'head 1 of time step 2 holds features 3..5 of x[0, 2] = [15, 16, 17]; got {h.numpy()[0, 1, 2].tolist()}: cut E into heads, then move the head axis'
    back = merge_heads(h)
    assert back.shape == (2, 3, 6) and np.array_equal(back.numpy(), x.numpy()), f'merge_heads(split_heads(x)) must give x (2, 3, 6) back, got shape {back.shape}' + ('' if back.shape != (2, 3, 6) else ' with the values in another order')

@test_case(points=None, hidden=False)
def test_multihead_parameters_and_init(MultiheadAttention, manual_seed, np):
    manual_seed(0)
    mha = MultiheadAttention(16, 4)
    names = [(n, tuple(p.shape)) for n, p in mha.named_parameters()]
    assert names == [('in_proj_weight', (48, 16)), ('in_proj_bias', (48,)), ('out_proj.weight', (16, 16)), ('out_proj.bias', (16,))], f"PyTorch's layout and order: in_proj_weight (3E, E), in_proj_bias, out_proj; got {names}"
    w = mha.in_proj_weight.numpy()
    bound = np.sqrt(6 / (16 + 48))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound, f'in_proj_weight is Xavier uniform with bound sqrt(6 / (E + 3E)) = {bound:.3f}; max |w| is {np.abs(w).max():.3f}'
    assert not mha.in_proj_bias.numpy().any() and (not mha.out_proj.bias.numpy().any()), f'in_proj_bias and out_proj.bias start at zero (PyTorch), got max |b| {np.abs(mha.in_proj_bias.numpy()).max():.3g} and {np.abs(mha.out_proj.bias.numpy()).max():.3g}'
    nob = MultiheadAttention(8, 2, bias=False).in_proj_bias
    assert nob is None, f'bias=False: no biases, got in_proj_bias {type(nob).__name__}'
    bf = MultiheadAttention(8, 2).batch_first
    assert bf is False, f"the default is PyTorch's, batch_first=False (inputs (L, N, E)); got {bf!r}"
    try:
        MultiheadAttention(10, 3)
    except ValueError:
        pass
    else:
        raise AssertionError('10 is not divisible by 3 heads: raise ValueError')

@test_case(points=None, hidden=False)
def test_multihead_forward_paths_and_masks(MultiheadAttention, Tensor, np):
    rng = np.random.default_rng(2)
    mha = MultiheadAttention(8, 2, batch_first=True)
    mha.in_proj_bias.data[...] = rng.standard_normal(24).astype(np.float32)
    x = Tensor(rng.standard_normal((3, 5, 8)).astype(np.float32))
    out, w = mha(x, x, x)
    assert out.shape == (3, 5, 8) and w.shape == (3, 5, 5), f'(N, L, E) in -> (N, L, E) out and (N, L, S) weights; got {out.shape}, {w.shape}'
    rows = w.numpy().sum(-1)
    assert np.allclose(rows, 1.0, atol=1e-05), f'averaged weights still sum to 1 per row, got row sums from {rows.min():.4f} to {rows.max():.4f}: average over heads, not sum'
    fused, none = mha(x, x, x, need_weights=False)
    assert none is None and np.allclose(fused.numpy(), out.numpy(), atol=1e-05), f'need_weights=False (fused) must give the same output, with None for the weights; got weights {type(none).__name__}, max output difference {np.abs(fused.numpy() - out.numpy()).max():.3g}'
    _, per_head = mha(x, x, x, average_attn_weights=False)
    assert per_head.shape == (3, 2, 5, 5), f'per-head weights are (N, h, L, S), got {per_head.shape}'
    pad = np.zeros((3, 5), dtype=bool)
    pad[:, 3:] = True
    _, wp = mha(x, x, x, key_padding_mask=pad)
    assert np.allclose(wp.numpy()[..., 3:], 0.0), f"key_padding_mask: True marks padding keys (they get weight 0), got weights up to {wp.numpy()[..., 3:].max():.3g} on keys 3 and 4 — the opposite of scaled_dot_product_attention's boolean masks"
    causal = np.triu(np.ones((5, 5), dtype=bool), k=1)
    _, wc = mha(x, x, x, attn_mask=causal)
    above = np.triu(wc.numpy()[0], k=1)
    assert np.allclose(above, 0.0), f'a boolean attn_mask is True where attention is NOT allowed in MultiheadAttention: weights above the diagonal should be 0, got up to {above.max():.3g}'
    seq = MultiheadAttention(8, 2, batch_first=False)
    seq.load_state_dict(mha.state_dict())
    out_t, _ = seq(x.transpose(0, 1), x.transpose(0, 1), x.transpose(0, 1))
    assert out_t.shape == (5, 3, 8) and np.allclose(out_t.numpy().transpose(1, 0, 2), out.numpy(), atol=1e-05), f'batch_first=False takes and returns (L, N, E) = (5, 3, 8), got {out_t.shape}'
    none = np.ones((5, 5), dtype=bool)
    none[1:, 0] = False
    o1, w1 = mha(x, x, x, attn_mask=none)
    o0, _ = mha(x, x, x, attn_mask=none, need_weights=False)
    assert np.isnan(o1.numpy()[:, 0]).all() and np.isnan(w1.numpy()[:, 0]).all() and (not np.isnan(o1.numpy()[:, 1:]).any()), f'need_weights=True: a query with no allowed key is NaN (a plain softmax of -inf, as in PyTorch), the others are not; got {int(np.isnan(o1.numpy()).sum())} NaN in the output'
    assert np.allclose(o0.numpy()[:, 0], mha.out_proj.bias.numpy()) and (not np.isnan(o0.numpy()).any()), f"need_weights=False (training, the fused path): that query's attention is zeros, so its output is out_proj's bias; got {o0.numpy()[0, 0, :3].round(3).tolist()}..."

@test_case(points=None, hidden=False)
def test_multihead_dropout_is_in_the_returned_weights(MultiheadAttention, Tensor, manual_seed, np):
    manual_seed(1)
    mha = MultiheadAttention(8, 2, dropout=0.5)
    x = Tensor(np.random.default_rng(3).standard_normal((4, 6, 8)).astype(np.float32))
    _, w = mha(x, x, x, average_attn_weights=False)
    dropped = float((w.numpy() == 0).mean())
    assert 0.35 < dropped < 0.65, f'in training mode with dropout=0.5 about half of the returned per-head weights are 0: the weights returned include dropout, as in PyTorch; {dropped:.2f} of them are 0'
    rows = float(w.numpy().sum(-1).mean())
    assert 0.8 < rows < 1.2, f'kept weights are scaled by 1 / (1 - p) = 2, so a row of the returned weights sums to about 1 on average; the average row sum is {rows:.3f}'
    mha.eval()
    a, we = mha(x, x, x)
    b, _ = mha(x, x, x, need_weights=False)
    assert (we.numpy() > 0).all(), f'eval() turns dropout off: no returned weight is 0 without masks, got {int((we.numpy() == 0).sum())} zeros'
    assert np.allclose(a.numpy(), b.numpy(), atol=1e-05), f'in eval() mode the explicit-weights path (need_weights=True) and the fused path (need_weights=False) give the same output; they differ by {np.abs(a.numpy() - b.numpy()).max():.3g}'

