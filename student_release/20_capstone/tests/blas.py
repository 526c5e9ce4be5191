from otter.test_files import test_case

OK_FORMAT = False

name = "blas"
points = 0

@test_case(points=None, hidden=False)
def test_exact_in_float32_is_the_2_to_the_24_bound(exact_in_float32):
    got = [exact_in_float32(k) for k in (0, 64, 514, 515, 3072)]
    assert got == [True, True, True, False, False], f'514 products of 255 x 128 sum to 16,773,120 <= 2**24 (exact); 515 sum to 16,805,760 > 2**24; for terms 0, 64, 514, 515, 3072 expected [True, True, True, False, False], got {got}'
    small = exact_in_float32(3072, 255, 21)
    assert small is True, f'3072 * 255 * 21 = 16,450,560 <= 2**24: exact with weights of at most 21; got {small}'
    try:
        exact_in_float32(-1)
    except ValueError:
        pass
    else:
        raise AssertionError('a negative number of terms is a bug: raise ValueError')

@test_case(points=None, hidden=False)
def test_blas_fold_computes_the_constants_once(BlasQuantizedLinear, QuantizedLinear, Linear, manual_seed, np):
    manual_seed(2)
    lin = Linear(6, 4)
    q = QuantizedLinear.from_float(lin, input_qparams=(0.02, 3))
    layer = BlasQuantizedLinear.from_quantized(q)
    wi = q.qweight.data.astype(np.int32) - q.weight_zero_point.data.astype(np.int32)[:, None]
    wt = layer.weight_t
    assert isinstance(wt, np.ndarray) and wt.dtype == np.float32 and (wt.shape == (6, 4)), f"weight_t: the (in, out) = (6, 4) float32 weight integers; got {type(wt).__name__} {getattr(wt, 'dtype', None)} {getattr(wt, 'shape', None)}"
    assert np.array_equal(wt, wi.T.astype(np.float32)), f'weight_t = (qweight - weight_zero_point).T as float32; expected {wi.T[0].tolist()} in its first row, got {wt[0].tolist()}'
    s = np.float32(0.02)
    consts = (layer.inv_scale, layer.zero)
    assert consts == (np.float32(1.0) / s, np.float32(3.0)), f'inv_scale = float32(1) / float32(input_scale) and zero = float32(input_zero_point): expected {(np.float32(1.0) / s, np.float32(3.0))}, got {consts}'
    out_scale = np.asarray(layer.out_scale)
    assert out_scale.dtype == np.float32 and np.array_equal(out_scale, s * q.weight_scale.data), f'out_scale = float32(input_scale) * weight_scale, float32 (4,); got {out_scale.dtype} {out_scale.tolist()}'
    dynamic = QuantizedLinear.from_float(lin)
    try:
        BlasQuantizedLinear.from_quantized(dynamic)
    except ValueError:
        pass
    else:
        raise AssertionError('a dynamic layer (no input scale) cannot be folded: fold() must raise ValueError')
    manual_seed(8)
    wide = QuantizedLinear.from_float(Linear(600, 2), input_qparams=(0.01, 0))
    try:
        BlasQuantizedLinear.from_quantized(wide)
    except ValueError:
        pass
    else:
        raise AssertionError('600 inputs of up to 255 times weights of 127 can pass 2**24: fold() must refuse the layer with ValueError')

@test_case(points=None, hidden=False)
def test_blas_layer_is_module_15_bit_for_bit(BlasQuantizedLinear, QuantizedLinear, Linear, Tensor, manual_seed, np):
    rng = np.random.default_rng(7)
    manual_seed(7)
    lin = Linear(24, 9)
    calib = rng.random((64, 24), dtype=np.float32)
    q = QuantizedLinear.from_float(lin, input_qparams=(float(calib.max()) / 255.0, 0))
    x = Tensor((rng.standard_normal((5, 24)) * 2).astype(np.float32))
    x0 = x.data.copy()
    fast = BlasQuantizedLinear.from_quantized(q)
    got, want = (fast(x).data, q(x).data)
    assert got.dtype == np.float32 and got.shape == want.shape, f'expected float32 {want.shape}, got {got.dtype} {got.shape}'
    assert np.array_equal(got, want), f"BLAS on int8 values in float32 is exact here: the output must equal module 15's bit for bit; largest difference {np.abs(got - want).max()}: fold() and forward() must do module 15's float32 steps (1/s once, rint(x * inv + z), clip, then the scale)"
    relu = BlasQuantizedLinear.from_quantized(q, relu=True)(x).data
    assert np.array_equal(relu, np.maximum(want, 0.0)), f"relu=True must give max(module 15's output, 0), bit for bit; largest difference {np.abs(relu - np.maximum(want, 0.0)).max()}, smallest output {relu.min()}"
    mine, theirs = (fast.state_dict(), q.state_dict())
    assert sorted(mine) == sorted(theirs) and all((np.array_equal(mine[k], theirs[k]) for k in theirs)), f"the BLAS layer stores module 15's buffers, unchanged: fold() adds plain attributes, never buffers; state keys {sorted(mine)}"
    assert x.data.shape == x0.shape and np.array_equal(x.data, x0), f"forward must not write into its input x (quantize into a new array); x is now {x.data.shape}, largest change {(np.abs(x.data - x0).max() if x.data.shape == x0.shape else 'n/a')}"

@test_case(points=None, hidden=False)
def test_blas_engine_fuses_relu_and_keeps_names(blas_engine, BlasQuantizedLinear, Identity, quantize_model, Linear, ReLU, Sequential, Tensor, manual_seed, no_grad, np):
    rng = np.random.default_rng(3)
    manual_seed(3)
    model = Sequential(Linear(16, 12), ReLU(), Linear(12, 4))
    q = quantize_model(model, [rng.random((32, 16), dtype=np.float32)])
    x = Tensor(rng.random((10, 16), dtype=np.float32))
    with no_grad():
        want = q(x).data
        fused = blas_engine(q)
        got = fused(x).data
    kinds = [type(m).__name__ for m in fused.modules()]
    assert kinds == ['Sequential', 'BlasQuantizedLinear', 'Identity', 'BlasQuantizedLinear'], f'Linear+ReLU fuse into one BlasQuantizedLinear(relu=True) and the ReLU becomes an Identity; the last layer has no ReLU after it; got {kinds}'
    assert [fused[0].relu, fused[2].relu] == [True, False], f'relu flags: expected [True, False], got {[fused[0].relu, fused[2].relu]}'
    assert sorted(fused.state_dict()) == sorted(q.state_dict()), f'the lowered model keeps the layer names, so its state_dict has the same keys: expected {sorted(q.state_dict())}, got {sorted(fused.state_dict())}'
    assert got.shape == want.shape and np.array_equal(got, want), f"the lowered model gives module 15's outputs bit for bit; got shape {got.shape}, largest difference {(np.abs(got - want).max() if got.shape == want.shape else 'n/a')}"
    plain = [type(m).__name__ for m in blas_engine(q, fuse_relu=False).modules()]
    assert plain == ['Sequential', 'BlasQuantizedLinear', 'ReLU', 'BlasQuantizedLinear'], f'fuse_relu=False lowers the layers and keeps the ReLU; got {plain}'
    left = [type(m).__name__ for m in q.modules()]
    assert left == ['Sequential', 'QuantizedLinear', 'ReLU', 'QuantizedLinear'], f'blas_engine lowers a copy: the model passed in keeps its module-15 layers; it now holds {left}'

