from otter.test_files import test_case

OK_FORMAT = False

name = "gpt"
points = 0

@test_case(points=None, hidden=False)
def test_gpt_parameters_and_initialisation(GPT, np):
    gpt = GPT(vocab_size=11, context_length=7, d_model=8, n_layers=2, n_heads=2)
    shapes = dict(((n, p.shape) for n, p in gpt.named_parameters()))
    names = list(shapes)
    assert names[:2] == ['tok_emb.weight', 'pos_emb.weight'] and names[-3:] == ['ln_f.weight', 'ln_f.bias', 'head.weight'], f'tok_emb, pos_emb, blocks, ln_f, head (no head bias); got {names[:2]} ... {names[-3:]}'
    got = [shapes.get(k) for k in ('tok_emb.weight', 'pos_emb.weight', 'head.weight')]
    assert got == [(11, 8), (7, 8), (11, 8)], f'tok_emb (V, C), pos_emb (context, C), head (V, C): expected [(11, 8), (7, 8), (11, 8)], got {got}'
    blocks = sorted({k.split('.')[1] for k in shapes if k.startswith('blocks.')})
    assert blocks == ['0', '1'], f'n_layers=2 TransformerBlocks in a Sequential named blocks, got blocks {blocks}'
    big = GPT(vocab_size=50, context_length=64, d_model=64, n_layers=2, n_heads=4)
    params = dict(big.named_parameters())
    std = float(params['tok_emb.weight'].numpy().std())
    assert 0.015 < std < 0.025, f'matrices start at N(0, 0.02^2); tok_emb has std {std:.4f}'
    small = float(params['blocks.0.mlp.proj.weight'].numpy().std())
    assert 0.008 < small < 0.012, f'residual projections use 0.02 / sqrt(2 * n_layers) = 0.01; got std {small:.4f}'
    biases = [float(np.abs(params[k].numpy()).max()) for k in ('blocks.0.attn.in_proj_bias', 'blocks.0.mlp.fc.bias')]
    assert biases == [0.0, 0.0], f'every bias starts at zero, got max |b| {biases}'
    lnw = params['ln_f.weight'].numpy()
    assert np.array_equal(lnw, np.ones(64)), f'LayerNorms start at one, got ln_f.weight from {lnw.min():.3g} to {lnw.max():.3g}'

@test_case(points=None, hidden=False)
def test_gpt_forward_is_causal_and_uses_positions(GPT, Tensor, np):
    gpt = GPT(vocab_size=13, context_length=6, d_model=16, n_layers=2, n_heads=4)
    rng = np.random.default_rng(6)
    idx = rng.integers(0, 13, size=(3, 6))
    logits = gpt(Tensor(idx))
    assert logits.shape == (3, 6, 13) and logits.dtype == np.float32, f'(B, T) ids -> (B, T, V) float32 logits; got {logits.shape} {logits.dtype}'
    short = gpt(idx[:, :4]).shape
    assert short == (3, 4, 13), f'T may be shorter than context_length: expected (3, 4, 13), got {short}'
    changed = idx.copy()
    changed[:, 3:] = (changed[:, 3:] + 1) % 13
    a, b = (logits.numpy(), gpt(Tensor(changed)).numpy())
    assert np.allclose(a[:, :3], b[:, :3], atol=1e-06), f'logits of positions 0-2 must not depend on tokens 3-5 (causal blocks), but changed by up to {np.abs(a[:, :3] - b[:, :3]).max():.3g}'
    same = np.full((1, 6), 4)
    rows = gpt(Tensor(same)).numpy()[0]
    assert not np.allclose(rows[0], rows[5], atol=1e-05), f'the same token at positions 0 and 5 must give different logits (they differ by at most {np.abs(rows[0] - rows[5]).max():.3g}): add pos_emb'
    try:
        gpt(Tensor(rng.integers(0, 13, size=(1, 7))))
    except ValueError:
        pass
    else:
        raise AssertionError('7 tokens with context_length 6 must raise ValueError')
    loss_grad = Tensor(rng.standard_normal((3, 6, 13)).astype(np.float32))
    (logits * loss_grad).sum().backward()
    missing = [n for n, p in gpt.named_parameters() if p.grad is None]
    assert missing == [], f'every parameter must receive a gradient; missing: {missing}'

