from otter.test_files import test_case

OK_FORMAT = False

name = "block"
points = 0

@test_case(points=None, hidden=False)
def test_block_structure_and_residuals(TransformerBlock, Tensor, np):
    block = TransformerBlock(8, 2)
    names = [n for n, _ in block.named_parameters()]
    assert names[:2] == ['ln_1.weight', 'ln_1.bias'] and names[-2:] == ['mlp.proj.weight', 'mlp.proj.bias'], f'ln_1, attn, ln_2, mlp in this order; got {names}'
    assert block.attn.batch_first, f'MultiheadAttention with batch_first=True: inputs (B, T, C); got batch_first={block.attn.batch_first!r}'
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 5, 8)).astype(np.float32)
    y = block(Tensor(x))
    assert y.shape == (2, 5, 8) and y.dtype == np.float32, f'(B, T, C) out, got {y.shape}'
    for p in (block.attn.out_proj.weight, block.attn.out_proj.bias, block.mlp.proj.weight, block.mlp.proj.bias):
        p.data[...] = 0.0
    out0 = block(Tensor(x)).numpy()
    assert out0.shape == x.shape and np.allclose(out0, x), f'got shape {out0.shape}' + (f', max |out - x| {np.abs(out0 - x).max():.3g}' if out0.shape == x.shape else '') + ": with both branches' output layers at zero the block must return x itself: out = x + attn(ln_1(x)) then + mlp(ln_2(x)) — add to the stream x, not to ln(x)"

@test_case(points=None, hidden=False)
def test_block_is_causal_and_takes_a_cache(TransformerBlock, Tensor, np):
    rng = np.random.default_rng(5)
    block = TransformerBlock(8, 2)
    x = rng.standard_normal((1, 6, 8)).astype(np.float32)
    changed = x.copy()
    changed[0, 4:] = rng.standard_normal((2, 8))
    a, b = (block(Tensor(x)).numpy(), block(Tensor(changed)).numpy())
    assert np.allclose(a[0, :4], b[0, :4], atol=1e-06), f'positions 0-3 must not depend on later positions 4-5, but changed by up to {np.abs(a[0, :4] - b[0, :4]).max():.3g}: pass the causal mask (True above the diagonal) to the attention'
    assert not np.allclose(a[0, 4:], b[0, 4:]), f'positions 4-5 see their own (changed) inputs, but their outputs did not change (max difference {np.abs(a[0, 4:] - b[0, 4:]).max():.3g})'
    calls = []

    def fake_cache(attn, h):
        calls.append((attn, h.shape))
        return Tensor(np.zeros(h.shape, np.float32))
    out = block(Tensor(x), cache=fake_cache)
    assert calls == [(block.attn, (1, 6, 8))], f'with a cache the block calls cache(self.attn, h) once, with h = ln_1(x) of shape (1, 6, 8); got {len(calls)} call(s) with shapes {[c[1] for c in calls]}'
    mlp_only = Tensor(x) + block.mlp(block.ln_2(Tensor(x)))
    assert np.allclose(out.numpy(), mlp_only.numpy(), atol=1e-06), f"the cache's output replaces the attention output; the MLP half is unchanged: max error {np.abs(out.numpy() - mlp_only.numpy()).max():.3g}"

