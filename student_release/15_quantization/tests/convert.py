from otter.test_files import test_case

OK_FORMAT = False

name = "convert"
points = 0

@test_case(points=None, hidden=False)
def test_swap_modules_keeps_the_order(swap_modules, QuantizedLinear, Linear, ReLU, Sequential, Tensor, manual_seed, np):
    manual_seed(0)
    model = Sequential(Linear(4, 8), ReLU(), Sequential(Linear(8, 3)))
    x = Tensor(np.random.default_rng(0).standard_normal((6, 4)).astype(np.float32))
    out = swap_modules(model, {Linear: QuantizedLinear.from_float})
    names = [type(m).__name__ for m in out.modules()]
    assert names == ['Sequential', 'QuantizedLinear', 'ReLU', 'Sequential', 'QuantizedLinear'], f'every Linear, also inside a nested Sequential, becomes a QuantizedLinear in its own place; got {names} (setattr moves a child to the end: use add_module)'
    y = out(x)
    assert y.shape == (6, 3), f'the swapped model still maps (6, 4) to (6, 3), got {y.shape}'
    lone = swap_modules(Linear(2, 2), {Linear: QuantizedLinear.from_float})
    assert type(lone).__name__ == 'QuantizedLinear', f'a matching root is replaced too (swap_modules(Linear(2, 2), ...) returns the replacement), got {type(lone).__name__}'

@test_case(points=None, hidden=False)
def test_model_bytes_counts_parameters_and_buffers(model_bytes, QuantizedLinear, Linear, Sequential, ReLU):
    model = Sequential(Linear(64, 64), ReLU(), Linear(64, 10))
    assert model_bytes(model) == 4 * (64 * 64 + 64 + 64 * 10 + 10), f'float32: 4 bytes per parameter = 19240, got {model_bytes(model)}'
    q = QuantizedLinear.from_float(Linear(64, 10))
    assert model_bytes(q) == 64 * 10 + 10 * 4 + 10 + 10 * 4, f'int8 weights (640 B) + 10 float32 scales (40 B) + 10 int8 zero points (10 B) + float32 bias (40 B) = 730, got {model_bytes(q)}: count buffers, in bytes'

