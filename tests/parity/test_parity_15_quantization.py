"""PyTorch parity · module 15 (quantization).

``torch.quantize_per_tensor`` / ``torch.quantize_per_channel`` and ``dequantize`` (integer
representations equal element for element, dequantized values equal), the error checks, and
``torch.ao.quantization``'s observers (``min_val``/``max_val`` after several batches and the
scales and zero points of ``calculate_qparams``). The quantized Linear is checked against the
same computation done with torch's quantized tensors (``dequantize(q_x) @ dequantize(q_w).T +
b``) and against torch's own dynamic quantized Linear within a few quantization steps (its x86
kernel uses the reduced activation range [0, 127], ours the full [0, 255]).

NOTE on ties: torch's per-tensor 8-bit path computes ``x * (1/s) + z`` with a fused
multiply-add, its per-channel path with two roundings; the two differ only for values within
one float32 ulp of a rounding tie. Random inputs never land there; the exact-tie tests use
power-of-two scales, where every path is exact.
"""

from __future__ import annotations

import warnings
import zlib

import numpy as np
import pytest
import torch
import torch.ao.quantization as tq
import torch.nn.functional as TF

import tinytorch_ref as tt
from tinytorch_ref import quantization as Q

pytestmark = [pytest.mark.parity,
              pytest.mark.filterwarnings("ignore:.*quantiz.*:UserWarning"),
              pytest.mark.filterwarnings("ignore:.*deprecated.*")]

DTYPES = {"qint8": (Q.qint8, torch.qint8), "quint8": (Q.quint8, torch.quint8)}
SCHEMES = {Q.per_tensor_affine: torch.per_tensor_affine,
           Q.per_tensor_symmetric: torch.per_tensor_symmetric,
           Q.per_channel_affine: torch.per_channel_affine,
           Q.per_channel_symmetric: torch.per_channel_symmetric}


def _rng(*key: object) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _zero_point(rng: np.random.Generator, dtype: str) -> int:
    return int(rng.integers(-20, 20)) if dtype == "qint8" else int(rng.integers(0, 256))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("trial", range(6))
def test_quantize_per_tensor_and_dequantize(dtype, trial):
    rng = _rng("per-tensor", dtype, trial)
    ours_dt, torch_dt = DTYPES[dtype]
    scale = float(rng.uniform(1e-3, 0.5))
    zp = _zero_point(rng, dtype)
    x = (rng.standard_normal((7, 33)) * scale * 80).astype(np.float32)
    q = Q.quantize_per_tensor(tt.Tensor(x), scale, zp, ours_dt)
    t = torch.quantize_per_tensor(torch.from_numpy(x), scale, zp, torch_dt)
    np.testing.assert_array_equal(q.int_repr().numpy(), t.int_repr().numpy())
    assert q.int_repr().numpy().dtype == t.int_repr().numpy().dtype
    assert (q.q_scale(), q.q_zero_point()) == (t.q_scale(), t.q_zero_point())
    np.testing.assert_array_equal(q.dequantize().numpy(), t.dequantize().numpy())


@pytest.mark.parametrize("dtype", DTYPES)
def test_round_half_to_even_on_exact_ties_and_saturation(dtype):
    ours_dt, torch_dt = DTYPES[dtype]
    for scale in (1.0, 0.5, 0.125):
        for zp in ((-3, 0, 1, 4) if dtype == "qint8" else (0, 1, 128, 255)):
            x = ((np.arange(-300, 300) + 0.5) * scale).astype(np.float32)
            q = Q.quantize_per_tensor(tt.Tensor(x), scale, zp, ours_dt).int_repr().numpy()
            t = torch.quantize_per_tensor(torch.from_numpy(x), scale, zp, torch_dt)
            np.testing.assert_array_equal(q, t.int_repr().numpy(), err_msg=f"{scale} {zp}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,axis", [((6, 9), 0), ((6, 9), 1), ((2, 5, 3, 3), 1),
                                        ((4, 3, 7), 2)])
def test_quantize_per_channel_and_dequantize(dtype, shape, axis):
    rng = _rng("per-channel", dtype, shape, axis)
    ours_dt, torch_dt = DTYPES[dtype]
    c = shape[axis]
    scales = rng.uniform(1e-3, 0.3, c)
    zps = np.array([_zero_point(rng, dtype) for _ in range(c)])
    x = (rng.standard_normal(shape) * 10).astype(np.float32)
    q = Q.quantize_per_channel(tt.Tensor(x), scales, zps, axis, ours_dt)
    t = torch.quantize_per_channel(torch.from_numpy(x), torch.from_numpy(scales),
                                   torch.from_numpy(zps), axis, torch_dt)
    np.testing.assert_array_equal(q.int_repr().numpy(), t.int_repr().numpy())
    np.testing.assert_array_equal(q.q_per_channel_scales().numpy(),
                                  t.q_per_channel_scales().numpy())
    np.testing.assert_array_equal(q.q_per_channel_zero_points().numpy(),
                                  t.q_per_channel_zero_points().numpy())
    assert q.q_per_channel_axis() == t.q_per_channel_axis()
    np.testing.assert_array_equal(q.dequantize().numpy(), t.dequantize().numpy())


def test_per_channel_exact_ties():
    scales = np.array([1.0, 0.5, 0.25, 0.125])
    zps = np.array([0, 1, -1, 3])
    x = np.stack([((np.arange(-200, 200) + 0.5) * s).astype(np.float32) for s in scales])
    q = Q.quantize_per_channel(tt.Tensor(x), scales, zps, 0, Q.qint8).int_repr().numpy()
    t = torch.quantize_per_channel(torch.from_numpy(x), torch.from_numpy(scales),
                                   torch.from_numpy(zps), 0, torch.qint8)
    np.testing.assert_array_equal(q, t.int_repr().numpy())


def _both_raise(ours, theirs) -> None:
    with pytest.raises(RuntimeError):
        theirs()
    with pytest.raises(RuntimeError):
        ours()


def test_errors_match_torch():
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    _both_raise(lambda: Q.quantize_per_tensor(tt.Tensor(x), 0.1, 200, Q.qint8),
                lambda: torch.quantize_per_tensor(torch.from_numpy(x), 0.1, 200, torch.qint8))
    _both_raise(lambda: Q.quantize_per_tensor(tt.Tensor(x), 0.1, -1, Q.quint8),
                lambda: torch.quantize_per_tensor(torch.from_numpy(x), 0.1, -1, torch.quint8))
    ints = np.arange(4)
    _both_raise(lambda: Q.quantize_per_tensor(tt.Tensor(ints), 0.1, 0, Q.qint8),
                lambda: torch.quantize_per_tensor(torch.from_numpy(ints), 0.1, 0, torch.qint8))
    s2, z2 = np.array([0.1, 0.2]), np.array([0, 0])
    _both_raise(lambda: Q.quantize_per_channel(tt.Tensor(x), s2, z2, 0, Q.qint8),
                lambda: torch.quantize_per_channel(torch.from_numpy(x), torch.from_numpy(s2),
                                                   torch.from_numpy(z2), 0, torch.qint8))
    s3, z3 = np.array([0.1, 0.2, 0.3]), np.array([0, 0, 0])
    for axis in (2, -1):
        _both_raise(lambda a=axis: Q.quantize_per_channel(tt.Tensor(x), s3, z3, a, Q.qint8),
                    lambda a=axis: torch.quantize_per_channel(
                        torch.from_numpy(x), torch.from_numpy(s3), torch.from_numpy(z3), a,
                        torch.qint8))


OBSERVERS = [
    ("minmax-affine-quint8", dict(), dict()),
    ("minmax-affine-qint8", dict(dtype="qint8"), dict()),
    ("minmax-symmetric-qint8", dict(dtype="qint8", qscheme=Q.per_tensor_symmetric), dict()),
    ("minmax-symmetric-quint8", dict(qscheme=Q.per_tensor_symmetric), dict()),
    ("minmax-reduce-range", dict(reduce_range=True), dict()),
    ("minmax-custom-range", dict(quant_min=0, quant_max=127), dict()),
    ("minmax-custom-symmetric", dict(qscheme=Q.per_tensor_symmetric, quant_min=0,
                                     quant_max=127), dict()),
]


def _kwargs(kw: dict, which: int) -> dict:
    out = {}
    for k, v in kw.items():
        if k == "dtype":
            out[k] = DTYPES[v][which]
        elif k == "qscheme":
            out[k] = v if which == 0 else SCHEMES[v]
        else:
            out[k] = v
    return out


def _compare_observer(ours, theirs, batches) -> None:
    for x in batches:
        assert ours(tt.Tensor(x)) is not None
        theirs(torch.from_numpy(x))
        np.testing.assert_array_equal(ours.min_val.numpy(), theirs.min_val.numpy())
        np.testing.assert_array_equal(ours.max_val.numpy(), theirs.max_val.numpy())
    s, z = ours.calculate_qparams()
    ts, tz = theirs.calculate_qparams()
    np.testing.assert_array_equal(s, ts.numpy())
    np.testing.assert_array_equal(z, tz.numpy().astype(np.int64))


@pytest.mark.parametrize("name,kw,_", OBSERVERS, ids=[o[0] for o in OBSERVERS])
def test_minmax_observer(name, kw, _):
    rng = _rng("minmax", name)
    batches = [(rng.standard_normal((4, 5)) * rng.uniform(0.1, 3) + rng.uniform(-1, 1))
               .astype(np.float32) for _ in range(4)]
    batches.append(np.abs(batches[0]))
    _compare_observer(Q.MinMaxObserver(**_kwargs(kw, 0)),
                      tq.MinMaxObserver(**_kwargs(kw, 1)), batches)


@pytest.mark.parametrize("c", [0.01, 0.2, 1.0])
def test_moving_average_observer(c):
    rng = _rng("moving", c)
    batches = [(rng.standard_normal(20) * (1 + i)).astype(np.float32) for i in range(6)]
    for kw in (dict(), dict(dtype="qint8", qscheme=Q.per_tensor_symmetric)):
        _compare_observer(Q.MovingAverageMinMaxObserver(averaging_constant=c, **_kwargs(kw, 0)),
                          tq.MovingAverageMinMaxObserver(averaging_constant=c,
                                                         **_kwargs(kw, 1)), batches)


@pytest.mark.parametrize("shape,axis", [((6, 8), 0), ((3, 4, 2, 2), 1), ((2, 3, 5), 2)])
@pytest.mark.parametrize("qscheme", [Q.per_channel_affine, Q.per_channel_symmetric])
@pytest.mark.parametrize("dtype", DTYPES)
def test_per_channel_observer(shape, axis, qscheme, dtype):
    rng = _rng("per-channel-observer", shape, axis, qscheme, dtype)
    batches = [(rng.standard_normal(shape) * rng.uniform(0.1, 3)).astype(np.float32)
               for _ in range(3)]
    batches[1][(slice(None),) * axis + (0,)] = 0.0   # one channel all zero in one batch
    kw = dict(dtype=dtype, qscheme=qscheme)
    _compare_observer(Q.PerChannelMinMaxObserver(ch_axis=axis, **_kwargs(kw, 0)),
                      tq.PerChannelMinMaxObserver(ch_axis=axis, **_kwargs(kw, 1)), batches)


def test_observer_without_data_and_all_zero_data():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s, z = Q.MinMaxObserver().calculate_qparams()
        ts, tz = tq.MinMaxObserver().calculate_qparams()
    np.testing.assert_array_equal(s, ts.numpy())
    np.testing.assert_array_equal(z, tz.numpy())
    zeros = np.zeros((3, 3), dtype=np.float32)
    _compare_observer(Q.MinMaxObserver(), tq.MinMaxObserver(), [zeros])


def _torch_weight_q(w: np.ndarray, per_channel: bool) -> torch.Tensor:
    if per_channel:
        obs = tq.PerChannelMinMaxObserver(dtype=torch.qint8, qscheme=torch.per_channel_symmetric)
        obs(torch.from_numpy(w))
        s, z = obs.calculate_qparams()
        return torch.quantize_per_channel(torch.from_numpy(w), s.double(), z, 0, torch.qint8)
    obs = tq.MinMaxObserver(dtype=torch.qint8, qscheme=torch.per_tensor_symmetric)
    obs(torch.from_numpy(w))
    s, z = obs.calculate_qparams()
    return torch.quantize_per_tensor(torch.from_numpy(w), float(s), int(z), torch.qint8)


@pytest.mark.parametrize("per_channel", [True, False])
@pytest.mark.parametrize("static", [True, False])
def test_quantized_linear_equals_torch_quantized_arithmetic(per_channel, static):
    rng = _rng("qlinear", per_channel, static)
    tt.manual_seed(3)
    lin = tt.nn.Linear(24, 7)
    lin.weight.data[2] *= 8.0
    x = (rng.standard_normal((9, 24)) + 0.3).astype(np.float32)
    calib = (rng.standard_normal((32, 24)) * 1.2).astype(np.float32)
    weight_obs = (Q.PerChannelMinMaxObserver.with_args(dtype=Q.qint8,
                                                       qscheme=Q.per_channel_symmetric)
                  if per_channel else
                  Q.MinMaxObserver.with_args(dtype=Q.qint8, qscheme=Q.per_tensor_symmetric))
    act = tq.MinMaxObserver(dtype=torch.quint8)
    act(torch.from_numpy(calib if static else x))
    s, z = act.calculate_qparams()
    q = Q.QuantizedLinear.from_float(lin, weight_observer=weight_obs,
                                     input_qparams=(float(s), int(z)) if static else None)
    tw = _torch_weight_q(lin.weight.numpy(), per_channel)
    np.testing.assert_array_equal(q.qweight.numpy(), tw.int_repr().numpy())
    tx = torch.quantize_per_tensor(torch.from_numpy(x), float(s), int(z), torch.quint8)
    expected = TF.linear(tx.dequantize().double(), tw.dequantize().double(),
                         torch.from_numpy(lin.bias.numpy()).double()).numpy()
    np.testing.assert_allclose(q(tt.Tensor(x)).numpy(), expected, rtol=1e-5, atol=1e-5)


def test_quantize_dynamic_model_close_to_torch_dynamic_quantization():
    rng = _rng("dynamic-model")
    tt.manual_seed(0)
    ours = tt.nn.Sequential(tt.nn.Linear(32, 48), tt.nn.ReLU(), tt.nn.Linear(48, 10))
    theirs = torch.nn.Sequential(torch.nn.Linear(32, 48), torch.nn.ReLU(),
                                 torch.nn.Linear(48, 10))
    with torch.no_grad():
        for i in (0, 2):
            theirs[i].weight.copy_(torch.from_numpy(ours[i].weight.numpy()))
            theirs[i].bias.copy_(torch.from_numpy(ours[i].bias.numpy()))
    x = rng.standard_normal((16, 32)).astype(np.float32)
    torch.backends.quantized.engine = "fbgemm" if "fbgemm" in \
        torch.backends.quantized.supported_engines else "qnnpack"
    tq_model = tq.quantize_dynamic(theirs, {torch.nn.Linear}, dtype=torch.qint8)
    q_model = Q.quantize_dynamic(ours)
    with torch.no_grad():
        ref = theirs(torch.from_numpy(x)).numpy()
        theirs_q = tq_model(torch.from_numpy(x)).numpy()
    ours_q = q_model(tt.Tensor(x)).numpy()
    spread = float(np.abs(ref).max())
    # both within INT8 noise of the float model, and of each other
    assert np.abs(ours_q - ref).max() < 0.02 * spread
    assert np.abs(ours_q - theirs_q).max() < 0.03 * spread
    for i in (0, 2):
        np.testing.assert_array_equal(q_model[i].qweight.numpy(),
                                      tq_model[i].weight().int_repr().numpy())


@pytest.mark.parametrize("stride,padding", [(1, 0), (2, 1), ((2, 1), (0, 2))])
@pytest.mark.parametrize("per_channel", [True, False])
def test_quantized_conv2d_equals_torch_quantized_arithmetic(stride, padding, per_channel):
    rng = _rng("qconv", stride, padding, per_channel)
    tt.manual_seed(5)
    conv = tt.nn.Conv2d(3, 5, 3, stride=stride, padding=padding)
    x = rng.standard_normal((2, 3, 8, 7)).astype(np.float32)
    weight_obs = (Q.PerChannelMinMaxObserver.with_args(dtype=Q.qint8,
                                                       qscheme=Q.per_channel_symmetric)
                  if per_channel else
                  Q.MinMaxObserver.with_args(dtype=Q.qint8, qscheme=Q.per_tensor_symmetric))
    act = tq.MinMaxObserver(dtype=torch.quint8)
    act(torch.from_numpy(x))
    s, z = act.calculate_qparams()
    q = Q.QuantizedConv2d.from_float(conv, weight_observer=weight_obs,
                                     input_qparams=(float(s), int(z)))
    w = conv.weight.numpy()
    if per_channel:
        wobs = tq.PerChannelMinMaxObserver(dtype=torch.qint8, qscheme=torch.per_channel_symmetric)
        wobs(torch.from_numpy(w))
        ws, wz = wobs.calculate_qparams()
        tw = torch.quantize_per_channel(torch.from_numpy(w), ws.double(), wz, 0, torch.qint8)
    else:
        tw = _torch_weight_q(w, per_channel=False)
    np.testing.assert_array_equal(q.qweight.numpy(), tw.int_repr().numpy())
    tx = torch.quantize_per_tensor(torch.from_numpy(x), float(s), int(z), torch.quint8)
    expected = TF.conv2d(tx.dequantize().double(), tw.dequantize().double(),
                         torch.from_numpy(conv.bias.numpy()).double(), stride=stride,
                         padding=padding).numpy()
    np.testing.assert_allclose(q(tt.Tensor(x)).numpy(), expected, rtol=1e-5, atol=1e-5)
