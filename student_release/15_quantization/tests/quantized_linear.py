from otter.test_files import test_case

OK_FORMAT = False

name = "quantized_linear"
points = 0

@test_case(points=None, hidden=False)
def test_quantized_linear_weights(QuantizedLinear, Linear, np):
    lin = Linear(3, 2)
    lin.weight.data[...] = [[1.0, -0.5, 0.25], [0.02, 0.01, -0.04]]
    lin.bias.data[...] = [0.5, -0.25]
    q = QuantizedLinear.from_float(lin)
    assert q.qweight.data.dtype == np.int8, f'weights are stored as int8, got {q.qweight.data.dtype}'
    assert q.qweight.data.tolist() == [[127, -64, 32], [64, 32, -128]], f'per-channel symmetric qint8: row 0 has scale 1/127.5, row 1 0.04/127.5; expected [[127, -64, 32], [64, 32, -128]], got {q.qweight.data.tolist()}'
    assert np.allclose(q.weight_scale.data, [1 / 127.5, 0.04 / 127.5]), f'one float32 scale per output row, got {q.weight_scale.data}'
    assert q.bias is not None and np.allclose(q.bias.data, [0.5, -0.25]), f"keep the float bias [0.5, -0.25] (it is added after the int8 product), got {getattr(q.bias, 'data', None)}"
    lin.bias.data[...] = 9.0
    assert np.allclose(q.bias.data, [0.5, -0.25]), f"the quantized layer must own a copy of the bias: setting the float layer's bias to 9 changed it to {q.bias.data}"

@test_case(points=None, hidden=False)
def test_quantized_linear_matches_float_layer(QuantizedLinear, Linear, Tensor, determine_qparams, quantize_per_tensor, quint8, manual_seed, no_grad, np):
    manual_seed(0)
    lin = Linear(16, 4)
    x = Tensor(np.random.default_rng(1).standard_normal((5, 16)).astype(np.float32))
    q = QuantizedLinear.from_float(lin)
    assert q.input_scale is None, f'from_float without input_qparams is dynamic (each batch picks its input scale): input_scale must be None, got {q.input_scale}'
    with no_grad():
        ref = lin(x).numpy()
    got = q(x)
    assert got.shape == (5, 4) and got.dtype == np.float32, f'(5, 16) in -> (5, 4) float32 out, got {got.shape} {got.dtype}'
    err = np.abs(got.numpy() - ref).max()
    assert err < 0.05, f'int8 weights and activations should stay within a few hundredths of the float layer here, max error {err:.3g}: check the zero point subtraction and the scales'
    s, z = determine_qparams(x.numpy().min(), x.numpy().max(), 0, 255)
    xq = quantize_per_tensor(x, float(s), int(z), quint8).dequantize().numpy().astype(np.float64)
    w = q.weight().dequantize().numpy().astype(np.float64)
    want = xq @ w.T + lin.bias.data
    off = np.abs(got.numpy() - want).max()
    assert np.allclose(got.numpy(), want, atol=0.0001), f"the output must equal dequantize(q_x) @ dequantize(q_w).T + b (up to float rounding), with q_x quantized per batch (quint8, the batch's min and max): int32 accumulation is exact, so any other difference is a bug; max difference {off:.3g}"

