from otter.test_files import test_case

OK_FORMAT = False

name = "per_tensor"
points = 0

@test_case(points=None, hidden=False)
def test_quantize_per_tensor_rounds_half_to_even_and_saturates(quantize_per_tensor, qint8, quint8, Tensor, np):
    q = quantize_per_tensor(Tensor([0.05, 0.15, 0.25, -0.05, 20.0, -20.0]), 0.1, 0, qint8)
    got = q.int_repr().numpy()
    assert got.dtype == np.int8, f'qint8 is stored as int8, got {got.dtype}'
    assert got.tolist() == [0, 2, 2, 0, 127, -128], f'expected [0, 2, 2, 0, 127, -128], got {got.tolist()}: x/s = 0.5, 1.5, 2.5, -0.5 round half to even (np.rint), and 200 / -200 saturate at 127 / -128 (clip before the cast, or 200 wraps around)'
    u = quantize_per_tensor(Tensor([-1.0, 0.0, 0.26]), 0.1, 3, quint8)
    assert u.int_repr().numpy().tolist() == [0, 3, 6], f'quint8, scale 0.1, zero point 3: round(x / s + z) clamped to [0, 255] gives [0, 3, 6], got {u.int_repr().numpy().tolist()}'
    scale, zero_point = (q.q_scale(), u.q_zero_point())
    assert scale == 0.1 and zero_point == 3, f'keep scale and zero point in the QTensor (dequantize needs them): expected 0.1 and 3, got {scale} and {zero_point}'

@test_case(points=None, hidden=False)
def test_dequantize_per_tensor(quantize_per_tensor, quint8, Tensor, np):
    x = Tensor([-1.0, 0.0, 0.26, 30.0])
    d = quantize_per_tensor(x, 0.1, 3, quint8).dequantize()
    assert d.dtype == np.float32, f'dequantize gives float32, got {d.dtype}'
    assert np.allclose(d.numpy(), [-0.3, 0.0, 0.3, 25.2], atol=1e-06), f'(q - z) * s = [-0.3, 0, 0.3, 25.2], got {d.numpy().tolist()}: -1.0 saturates at q = 0, i.e. -0.3, and 30.0 at 255 = 25.2. A value near 25 instead of -0.3 means q - z wrapped around in uint8: convert to float32 first'
    rng = np.random.default_rng(0)
    y = Tensor(rng.uniform(-1, 1, 1000).astype(np.float32))
    err = np.abs(quantize_per_tensor(y, 0.01, 0, quint8).dequantize().numpy() - y.numpy())
    assert err[y.numpy() >= 0].max() <= 0.005 + 1e-06, f'inside the grid the error is at most half a step (s / 2 = 0.005), got {err[y.numpy() >= 0].max():.4f}'

