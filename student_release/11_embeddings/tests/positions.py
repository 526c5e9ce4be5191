from otter.test_files import test_case

OK_FORMAT = False

name = "positions"
points = 0

@test_case(points=None, hidden=False)
def test_sinusoidal_table_values(sinusoidal_positional_encoding, np):
    p = sinusoidal_positional_encoding(50, 6).numpy()
    assert p.shape == (50, 6) and p.dtype == np.float32, f'(num_positions, embedding_dim) float32, got {p.shape} {p.dtype}'
    assert np.allclose(p[0], [0, 1, 0, 1, 0, 1]), f'position 0 is [0, 1, 0, 1, ...], got {p[0]}'
    w1 = 10000.0 ** (-2 / 6)
    expected = [np.sin(7.0), np.cos(7.0), np.sin(7 * w1), np.cos(7 * w1)]
    assert np.allclose(p[7, :4], expected, atol=1e-06), f'row 7 should start {np.round(expected, 4).tolist()}, got {p[7, :4].round(4).tolist()}: column 2i is sin(pos * 10000^(-2i/D)), column 2i+1 its cosine'
    odd = sinusoidal_positional_encoding(3, 5).numpy()
    want = np.sin(10000.0 ** (-4 / 5))
    assert odd.shape == (3, 5) and np.isclose(odd[1, 4], want), f'with an odd D the last column is a sine: expected shape (3, 5) and pe[1, 4] = {want:.5f}, got shape {odd.shape}' + (f' and {odd[1, 4]:.5f}' if odd.shape == (3, 5) else '')

@test_case(points=None, hidden=False)
def test_positional_modules_add_rows_from_offset(SinusoidalPositionalEncoding, LearnedPositionalEmbedding, Tensor, np):
    x = Tensor(np.ones((2, 3, 4), dtype=np.float32))
    enc = SinusoidalPositionalEncoding(4, max_len=10)
    out = enc(x, offset=2).numpy()
    assert out.shape == (2, 3, 4), f"the output has x's shape (2, 3, 4), got {out.shape}"
    assert np.allclose(out[1, 0], 1 + enc.pe.numpy()[2]), f'with offset=2 the first token gets row 2 of the table: expected {(1 + enc.pe.numpy()[2]).round(3).tolist()}, got {out[1, 0].round(3).tolist()}'
    pos = LearnedPositionalEmbedding(10, 4)
    assert pos.weight.shape == (10, 4), f'weight is (max_len, D), got {pos.weight.shape}'
    y = pos(x, offset=5)
    assert np.allclose(y.numpy()[0, 2], 1 + pos.weight.numpy()[7]), f'token 2 at offset 5 gets row 7 of the learned table: expected {(1 + pos.weight.numpy()[7]).round(3).tolist()}, got {y.numpy()[0, 2].round(3).tolist()}'
    y.sum().backward()
    used = np.abs(pos.weight.grad.numpy()).sum(axis=1) > 0
    assert used.tolist() == [False] * 5 + [True] * 3 + [False] * 2, f'only rows 5, 6, 7 were used, so only they get gradients; got {used.tolist()}'
    try:
        pos(x, offset=8)
    except ValueError:
        pass
    else:
        raise AssertionError('positions 8..10 do not exist in a max_len=10 table: ValueError')

