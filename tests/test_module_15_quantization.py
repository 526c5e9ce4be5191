"""Module 15 (quantization): the reference against independent oracles, without torch.

* quantize/dequantize against a float64 re-implementation of the affine rule, with hypothesis
  scales, zero points and values (exact ties on power-of-two scales included);
* the round-trip error bound ``|x - dequantize(quantize(x))| <= s / 2`` inside the grid;
* ``QuantizedLinear``/``QuantizedConv2d`` equal float arithmetic on the dequantized operands
  (the int32 accumulation is exact), for every qscheme and static or dynamic inputs;
* model conversion: the float model is untouched, ``state_dict`` holds the int8 weights, the
  byte counts of the digits MLP are exact, and its INT8 accuracy on the real 8x8 digits stays
  within a point of the float model's.
"""

from __future__ import annotations

import numpy as np
import pytest
from digits_mlp import trained_digits_mlp
from hypothesis import given
from hypothesis import strategies as st

import tinytorch_ref as tt
from tinytorch_ref import quantization as Q


def _oracle_quantize(x: np.ndarray, scale: float, zp: int, qmin: int, qmax: int) -> np.ndarray:
    """The affine rule in float64 on a float32 reciprocal (exact for power-of-two scales)."""
    inv = np.float64(np.float32(1.0) / np.float32(scale))
    return np.clip(np.rint(x.astype(np.float64) * inv + zp), qmin, qmax).astype(np.int64)


@given(exponent=st.integers(-6, 2), zp=st.integers(-128, 127),
       ks=st.lists(st.integers(-400, 400), min_size=1, max_size=40))
def test_quantize_matches_the_affine_rule_on_exact_grids(exponent, zp, ks):
    scale = 2.0 ** exponent
    x = ((np.array(ks) + 0.5) * scale).astype(np.float32)   # ties and saturation
    got = Q.quantize_per_tensor(x, scale, zp, Q.qint8).int_repr().numpy().astype(np.int64)
    np.testing.assert_array_equal(got, _oracle_quantize(x, scale, zp, -128, 127))
    back = Q.quantize_per_tensor(x, scale, zp, Q.qint8).dequantize().numpy()
    np.testing.assert_array_equal(back, (got - zp) * np.float32(scale))


@given(scale=st.floats(1e-3, 1.0), zp=st.integers(0, 255), seed=st.integers(0, 2**16))
def test_round_trip_error_is_at_most_half_a_step_inside_the_grid(scale, zp, seed):
    rng = np.random.default_rng(seed)
    lo, hi = (0 - zp) * scale, (255 - zp) * scale
    x = rng.uniform(lo, hi, 200).astype(np.float32)
    q = Q.quantize_per_tensor(x, scale, zp, Q.quint8)
    err = np.abs(q.dequantize().numpy().astype(np.float64) - x)
    assert err.max() <= scale / 2 * (1 + 1e-5) + 1e-6


@pytest.mark.parametrize("weights", ["per_channel_symmetric", "per_tensor_symmetric",
                                     "per_tensor_affine", "per_channel_affine"])
@pytest.mark.parametrize("static", [False, True])
def test_quantized_linear_equals_dequantized_float_arithmetic(weights, static):
    rng = np.random.default_rng(len(weights) + static)
    lin = tt.nn.Linear(20, 6)
    lin.weight.data[...] = rng.standard_normal((6, 20)).astype(np.float32) * 0.4
    lin.weight.data[1] *= 10
    cls = Q.PerChannelMinMaxObserver if weights.startswith("per_channel") else Q.MinMaxObserver
    obs = cls.with_args(dtype=Q.qint8, qscheme=getattr(Q, weights))
    x = (rng.standard_normal((4, 3, 20)) * 2 + 0.5).astype(np.float32)    # (*, in) input
    qparams = (0.03, 120) if static else None
    q = Q.QuantizedLinear.from_float(lin, weight_observer=obs, input_qparams=qparams)
    if static:
        s, z = qparams
    else:
        s, z = Q.determine_qparams(x.min(), x.max(), 0, 255)
    xq = Q.quantize_per_tensor(x, float(s), int(z), Q.quint8).dequantize().numpy()
    expected = xq.astype(np.float64) @ q.weight().dequantize().numpy().T.astype(np.float64)
    np.testing.assert_allclose(q(tt.Tensor(x)).numpy(), expected + lin.bias.numpy(),
                               rtol=1e-5, atol=1e-5)
    assert q.qweight.numpy().dtype == np.int8
    assert q.per_channel == weights.startswith("per_channel")


@pytest.mark.parametrize("stride,padding", [(1, 0), (2, 1), ((1, 2), (2, 0))])
def test_quantized_conv2d_equals_dequantized_float_convolution(stride, padding):
    rng = np.random.default_rng(7)
    tt.manual_seed(1)
    conv = tt.nn.Conv2d(3, 4, (3, 2), stride=stride, padding=padding)
    x = rng.standard_normal((2, 3, 7, 6)).astype(np.float32)
    q = Q.QuantizedConv2d.from_float(conv)
    s, z = Q.determine_qparams(x.min(), x.max(), 0, 255)
    xq = Q.quantize_per_tensor(x, float(s), int(z), Q.quint8).dequantize()
    wq = q.qweight.numpy().astype(np.float32) * q.weight_scale.numpy().reshape(-1, 1, 1, 1)
    with tt.no_grad():
        expected = tt.nn.functional.conv2d(xq, tt.Tensor(wq), conv.bias, stride, padding)
    np.testing.assert_allclose(q(tt.Tensor(x)).numpy(), expected.numpy(), rtol=1e-5, atol=1e-5)
    unbatched = q(tt.Tensor(x[0])).numpy()
    assert unbatched.shape == expected.shape[1:]


def test_quantize_model_handles_a_cnn_and_leaves_the_float_model_alone():
    rng = np.random.default_rng(3)
    tt.manual_seed(2)
    model = tt.nn.Sequential(tt.nn.Conv2d(1, 4, 3, padding=1), tt.nn.ReLU(), tt.nn.MaxPool2d(2),
                             tt.nn.Flatten(), tt.nn.Linear(4 * 4 * 4, 10))
    before = {k: v.copy() for k, v in model.state_dict().items()}
    x = rng.standard_normal((5, 1, 8, 8)).astype(np.float32)
    q = Q.quantize_model(model, [x])
    assert [type(m).__name__ for m in q.modules()] == [
        "Sequential", "QuantizedConv2d", "ReLU", "MaxPool2d", "Flatten", "QuantizedLinear"]
    assert all(np.array_equal(before[k], v) for k, v in model.state_dict().items())
    state = q.state_dict()
    assert state["0.qweight"].dtype == np.int8 and state["4.qweight"].shape == (10, 64)
    with tt.no_grad():
        ref = model(tt.Tensor(x)).numpy()
    assert np.abs(q(tt.Tensor(x)).numpy() - ref).max() < 0.05 * np.abs(ref).max()
    # 9 weights per 1x3x3 filter carry a float32 scale, zero point and bias each: a tiny
    # conv layer quantizes to a smaller ratio than 4 (2760 -> 812 bytes)
    assert Q.model_bytes(model) == 2760 and Q.model_bytes(q) == 812


def test_digits_mlp_int8_bytes_and_accuracy():
    """The lesson's measurement, pinned: exact byte counts; the accuracy stays within a point."""
    trained = trained_digits_mlp(seed=0)
    model, train_x, accuracy = trained.model, trained.train_x, trained.accuracy
    calibration = [train_x[i:i + 32] for i in range(0, 256, 32)]
    sizes = {"float": Q.model_bytes(model),
             "dynamic per-tensor": Q.model_bytes(Q.quantize_model(model, per_channel=False)),
             "dynamic per-channel": Q.model_bytes(Q.quantize_model(model)),
             "static per-channel": Q.model_bytes(Q.quantize_model(model, calibration))}
    assert sizes == {"float": 19240, "dynamic per-tensor": 5042, "dynamic per-channel": 5402,
                     "static per-channel": 5412}
    base = accuracy(model)
    for per_channel in (False, True):
        for batches in (None, calibration):
            q = Q.quantize_model(model, batches, per_channel=per_channel)
            assert base - accuracy(q) <= 0.01, (per_channel, batches is not None)
