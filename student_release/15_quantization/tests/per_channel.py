from otter.test_files import test_case

OK_FORMAT = False

name = "per_channel"
points = 0

@test_case(points=None, hidden=False)
def test_quantize_per_channel_uses_one_scale_per_row(quantize_per_channel, qint8, Tensor, np):
    w = Tensor([[0.1, -0.2, 0.05], [5.0, 10.0, -12.75]])
    q = quantize_per_channel(w, [0.01, 0.1], [0, 1], 0, qint8)
    got = q.int_repr().numpy()
    assert got.shape == (2, 3) and got.dtype == np.int8, f'same shape as the input, stored as int8; got {got.shape} {got.dtype}'
    assert got.tolist() == [[10, -20, 5], [51, 101, -126]], f'row 0 uses scale 0.01 (z 0), row 1 scale 0.1 (z 1; -127.5 + 1 = -126.5 rounds to even): expected [[10, -20, 5], [51, 101, -126]], got {got.tolist()} — with scales of shape (2,) instead of (2, 1) they broadcast along the columns'
    d = q.dequantize().numpy()
    assert np.allclose(d, [[0.1, -0.2, 0.05], [5.0, 10.0, -12.7]], atol=1e-06), f"dequantize must use each row's own scale and zero point, got {d.tolist()}"
    cols = quantize_per_channel(w, [0.1, 0.2, 0.5], [0, 0, 0], 1, qint8).int_repr().numpy()
    assert cols.tolist() == [[1, -1, 0], [50, 50, -26]], f'axis=1: one scale per column, expected [[1, -1, 0], [50, 50, -26]], got {cols.tolist()}'
    try:
        quantize_per_channel(w, [0.1, 0.2, 0.3], [0, 0, 0], 0, qint8)
    except RuntimeError:
        pass
    else:
        raise AssertionError('3 scales for 2 rows must raise a RuntimeError, as PyTorch does')

