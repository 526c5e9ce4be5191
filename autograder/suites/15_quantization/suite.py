"""Hidden suite · module 15 (quantization). Cases are probes; the trusted parent compares.

Inputs come from ``rng``: float tensors of random shapes and scales, scales and zero points
drawn inside each dtype's range, values placed exactly on rounding ties (``(k + 1/2) · s``
with a power-of-two ``s``, so the float32 arithmetic is exact) and far outside the grid (to
saturate). Probes return integer representations, dequantized values, observer buffers,
quantized layers' buffers and outputs, and exception names. Points sum to module 15's
``points`` (50).
"""

from __future__ import annotations

import importlib

import numpy as np

from autograder.suite import Suite, outcome

suite = Suite(module="15_quantization", version="2027.3")
case = suite.case
PER_TENSOR = suite.unit("quantize_per_tensor", "quantize_per_tensor")
PER_CHANNEL = suite.unit("quantize_per_channel", "quantize_per_channel")
DEQUANTIZE = suite.unit("QTensor.dequantize", "QTensor.dequantize", uses=(PER_TENSOR, PER_CHANNEL))
QPARAMS = suite.unit("determine_qparams", "determine_qparams")
MINMAX = suite.unit("MinMaxObserver", "MinMaxObserver.forward", uses=(QPARAMS,))
MOVING_AVERAGE = suite.unit("MovingAverageMinMaxObserver", "MovingAverageMinMaxObserver.forward",
                            uses=(QPARAMS,))
PER_CHANNEL_OBSERVER = suite.unit("PerChannelMinMaxObserver", "PerChannelMinMaxObserver.forward",
                                  uses=(QPARAMS,))
QUANTIZED_LINEAR = suite.unit("QuantizedLinear", "QuantizedLinear.from_float",
                              "QuantizedLinear.forward",
                              uses=(PER_TENSOR, DEQUANTIZE, PER_CHANNEL, QPARAMS, MINMAX,
                                    PER_CHANNEL_OBSERVER))
SWAP = suite.unit("swap_modules", "swap_modules", uses=(QUANTIZED_LINEAR,))
MODEL_BYTES = suite.unit("model_bytes", "model_bytes", uses=(QUANTIZED_LINEAR,))


def _q(tt):
    return importlib.import_module(f"{tt.__name__}.quantization")


def _layers(tt):
    return importlib.import_module(f"{tt.__name__}.layers")


def _f32(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def _ties(rng, n, scale):
    """Values exactly half-way between grid points (float32-exact for a power-of-two scale)."""
    k = rng.integers(-40, 40, n)
    return ((k + 0.5) * scale).astype(np.float32)


def _qt(qt):
    """A QTensor as plain data."""
    return {"int": np.asarray(qt.int_repr().data), "scheme": str(qt.qscheme())}


# ----------------------------------------------------------------------------- per tensor (10)
@case(unit=PER_TENSOR, points=4,
      hint="quantize_per_tensor: q = clamp(rint(x * (1/s) + z), qmin, qmax): x * (1/s) + z "
           "rounded to float32 once (in float64, then cast), round half to even, NaN to qmax, "
           "saturate before the cast, int8 for qint8 and uint8 for quint8.",
      stated={
          "quantize_per_tensor": (
              "A ``QTensor`` of the same shape, storage ``dtype.storage``.",
              "``x·inv + zero_point`` rounded **once** to float32",
              "``t = (x.astype(np.float64) * np.float64(inv) + zero_point).astype(np.float32)`` (the float64 product of two float32 numbers is exact), then ``q = np.rint(t)`` — round half to even.",
              "NaN becomes the top of the range, as in PyTorch: ``q = np.where(np.isnan(q), dtype.qmax, q)``.",
              "Clamp with ``np.clip(q, dtype.qmin, dtype.qmax)``, cast to ``dtype.storage`` and return ``QTensor(q, scale, zero_point, dtype)``.",
              "``astype(np.int8)`` *before* ``np.clip`` wraps 200 around to -56 — clamp first.",
          ),
          "QTensor": "Per-tensor (``axis is None``): one ``scale`` (float) and ``zero_point`` (int).",
      })
def quantize_per_tensor_values(tt, rng):
    m = _q(tt)
    out = []
    for dtype in (m.qint8, m.quint8):
        s = float(rng.uniform(0.01, 0.2))
        z = int(rng.integers(-10, 10)) if dtype is m.qint8 else int(rng.integers(60, 200))
        x = _f32(rng, int(rng.integers(2, 5)), int(rng.integers(3, 7)), scale=40 * s)
        q = m.quantize_per_tensor(tt.Tensor(x), s, z, dtype)
        out.append([_qt(q), float(q.q_scale()), int(q.q_zero_point())])
        pow2 = float(2.0 ** -int(rng.integers(2, 6)))
        ties = _ties(rng, 24, pow2)
        zt = 2 * int(rng.integers(-2, 2)) + 1 if dtype is m.qint8 else 2 * int(rng.integers(50, 70)) + 1
        out.append(_qt(m.quantize_per_tensor(tt.Tensor(ties), pow2, zt, dtype)))
        far = np.array([1e3, -1e3, 300 * s, -300 * s, np.nan, np.inf], dtype=np.float32)
        out.append(_qt(m.quantize_per_tensor(tt.Tensor(far), s, z, dtype)))
        near = (rng.integers(-80, 80, 24) * np.float32(0.1) / 2).astype(np.float32)
        out.append(_qt(m.quantize_per_tensor(tt.Tensor(near), 0.1, zt, dtype)))
    return out


@case(unit=PER_TENSOR, points=2,
      hint="quantize_per_tensor: a zero point outside [qmin, qmax], an integer or a float64 "
           "input: RuntimeError (as PyTorch); a scale of 0 or below is computed with, as PyTorch "
           "does (1/0 is inf: everything positive saturates).",
      stated={
          "quantize_per_tensor": (
              "RuntimeError: a zero point outside the dtype's range, or an input that is not float32 (as PyTorch).",
              "zero_point: the integer that stands for 0.0, inside ``[dtype.qmin, dtype.qmax]``.",
              "scale: the grid step (normally > 0; PyTorch computes with whatever it is given).",
              "``inv = np.float32(1.0) / np.float32(scale)`` (float32, once; a scale of 0 gives ``inf``",
          ),
      })
def quantize_per_tensor_refuses_bad_arguments(tt, rng):
    m = _q(tt)
    x = tt.Tensor(_f32(rng, 5))
    ints = tt.Tensor(rng.integers(-5, 5, 4))
    return [outcome(m.quantize_per_tensor, x, 0.1, int(rng.integers(128, 300)), m.qint8),
            outcome(m.quantize_per_tensor, x, 0.1, -int(rng.integers(1, 50)), m.quint8),
            outcome(m.quantize_per_tensor, ints, 0.1, 0, m.qint8),
            _qt(m.quantize_per_tensor(x, 0.0, 0, m.qint8)),
            _qt(m.quantize_per_tensor(x, -float(rng.uniform(0.05, 0.5)), 0, m.qint8)),
            outcome(m.quantize_per_tensor, tt.Tensor(_f32(rng, 3).astype(np.float64)), 0.1, 0,
                    m.qint8),
            outcome(m.quantize_per_tensor, x, 0.1, 127, m.qint8),
            # the same input accepted at a drawn scale and zero point (a value per variant)
            _qt(m.quantize_per_tensor(x, float(rng.uniform(0.005, 0.05)),
                                      int(rng.integers(-20, 20)), m.qint8))]


@case(unit=DEQUANTIZE, points=3,
      hint="dequantize: (q - z) * s in float32; subtract in float (uint8 - z wraps).",
      stated={
          "QTensor.dequantize": (
              "The real values the integers stand for: ``(q - zero_point) * scale``, float32.",
              "Per-tensor (``self.axis is None``): ``s = np.float32(self.scale)`` and ``z = np.float32(self.zero_point)``.",
              "``q - z`` on the raw ``uint8`` array wraps around below 0",
          ),
      })
def dequantize_per_tensor(tt, rng):
    m = _q(tt)
    out = []
    for dtype, z in ((m.qint8, int(rng.integers(-20, 20))), (m.quint8, int(rng.integers(1, 250)))):
        s = float(rng.uniform(0.005, 0.1))
        x = _f32(rng, int(rng.integers(3, 9)), 4, scale=60 * s)
        d = m.quantize_per_tensor(tt.Tensor(x), s, z, dtype).dequantize()
        out.append(np.asarray(d.data))
    return out


@case(unit=PER_TENSOR, points=1,
      hint="quantize_per_tensor: QTensor accessors: q_scale/q_zero_point per tensor; per-channel "
           "accessors refuse a per-tensor tensor (RuntimeError).",
      stated={
          "quantize_per_tensor": "A ``QTensor`` of the same shape, storage ``dtype.storage``.",
          "QTensor": "Per-tensor (``axis is None``): one ``scale`` (float) and ``zero_point`` (int).",
          "QTensor.nbytes": "Bytes of the integer storage (1 per element for 8-bit dtypes).",
      })
def qtensor_accessors_after_quantize(tt, rng):
    m = _q(tt)
    s, z = float(rng.uniform(0.01, 0.1)), int(rng.integers(0, 255))
    q = m.quantize_per_tensor(tt.Tensor(_f32(rng, 3, 2)), s, z, m.quint8)
    return [float(q.q_scale()), int(q.q_zero_point()), list(q.shape), int(q.nbytes),
            outcome(q.q_per_channel_scales)]


# ----------------------------------------------------------------------------- per channel (8)
@case(unit=PER_CHANNEL, points=4,
      hint="quantize_per_channel: per channel: scales and zero points reshaped to broadcast along "
           "`axis` (ones elsewhere); same rounding and clamping as per tensor.",
      stated={
          "quantize_per_channel": (
              "scales: ``(input.shape[axis],)`` positive floats (a Tensor, array or list).",
              '``z`` = the zero points as an int64 1-D array (``np.asarray(getattr(v, "data", v))``).',
              "``shape = [1] * x.ndim; shape[axis] = -1``; ``inv = np.float32(1.0) / s.astype(np.float32)`` reshaped to ``shape``, and the zero points (float32) reshaped the same way.",
              "``q = np.rint(x * inv + zf)`` (float32, in this order: PyTorch's per-channel kernel rounds twice)",
              "clamp to the dtype's range, cast, and return ``QTensor(q, s, z, dtype, axis=axis)``.",
          ),
          "QTensor": "one scale and zero point for each index along ``axis`` (float64 / int64 arrays), as in PyTorch.",
      })
def quantize_per_channel_values(tt, rng):
    m = _q(tt)
    out = []
    for shape, axis, dtype in (((5, 7), 0, m.qint8), ((3, 4, 2), 1, m.quint8),
                               ((2, 3, 6), 2, m.qint8), ((4, 4), 1, m.quint8)):
        c = shape[axis]
        scales = rng.uniform(0.01, 0.3, c)
        zps = (rng.integers(-5, 5, c) if dtype is m.qint8 else rng.integers(90, 160, c))
        x = _f32(rng, *shape, scale=15.0)
        sc = [float(v) for v in scales] if axis == 0 else tt.Tensor(scales)
        q = m.quantize_per_channel(tt.Tensor(x), sc, tt.Tensor(zps), axis, dtype)
        out.append([_qt(q), int(q.q_per_channel_axis()),
                    np.asarray(q.q_per_channel_zero_points().data, dtype=np.int64)])
    pow2 = np.array([0.25, 0.5, 0.125])
    ties = np.stack([_ties(rng, 10, float(p)) for p in pow2])
    out.append(_qt(m.quantize_per_channel(tt.Tensor(ties), pow2, np.array([1, 0, -1]), 0,
                                          m.qint8)))
    return out


@case(unit=DEQUANTIZE, points=2,
      hint="Per-channel dequantize: every element uses the scale and zero point of its index "
           "along the axis.",
      stated={
          "QTensor.dequantize": (
              "Per-channel tensors use, for every element, the scale and zero point of its index along ``self.axis``.",
              "PyTorch keeps per-channel scales in float64 and computes this product in float64: do the same (``q`` as float64 too) and cast the result to float32.",
          ),
      })
def dequantize_per_channel(tt, rng):
    m = _q(tt)
    out = []
    for shape, axis in (((6, 5), 0), ((2, 3, 4), 1), ((3, 5), 1)):
        c = shape[axis]
        scales = rng.uniform(0.01, 0.2, c)
        zps = rng.integers(0, 255, c)
        x = _f32(rng, *shape, scale=8.0)
        q = m.quantize_per_channel(tt.Tensor(x), scales, zps, axis, m.quint8)
        out.append(np.asarray(q.dequantize().data))
    return out


@case(unit=PER_CHANNEL, points=2,
      hint="quantize_per_channel checks: 0 <= axis < ndim, one scale and zero point per channel, "
           "zero points in range (RuntimeError); a scale of 0 is computed with (inf), NaN becomes "
           "0, as in PyTorch's per-channel kernel.",
      stated={
          "quantize_per_channel": (
              "RuntimeError: a bad ``axis``, a wrong number of scales or zero points, a zero point out of range, or an input that is not float32 (PyTorch's checks).",
              "axis: the channel dimension, ``0 <= axis < input.ndim``.",
              "Check ``0 <= axis < x.ndim`` and ``len(s) == len(z) == x.shape[axis]``; ``_check_zero_points(z, dtype, ...)``.",
              "A scale of 0 is not refused: its channel computes with ``inv = inf``, as PyTorch's kernel does.",
              "NaN to 0 (``np.where(np.isnan(q), 0, q)``, as that kernel does), clamp to the dtype's range",
          ),
      })
def quantize_per_channel_refuses_bad_arguments(tt, rng):
    m = _q(tt)
    x = tt.Tensor(_f32(rng, 3, 4))
    s3, z3 = rng.uniform(0.1, 0.2, 3), np.zeros(3, dtype=np.int64)
    return [outcome(m.quantize_per_channel, x, s3, z3, 0, m.qint8),
            outcome(m.quantize_per_channel, x, rng.uniform(0.1, 0.2, 4), np.zeros(4), 0,
                    m.qint8),
            outcome(m.quantize_per_channel, x, s3, np.zeros(2), 0, m.qint8),
            outcome(m.quantize_per_channel, x, s3, z3, 2, m.qint8),
            outcome(m.quantize_per_channel, x, s3, z3, -1, m.qint8),
            outcome(m.quantize_per_channel, x, s3, np.array([0, 300, 0]), 0, m.qint8),
            _qt(m.quantize_per_channel(x, np.array([0.1, 0.0, 0.1]), z3, 0, m.qint8)),
            _qt(m.quantize_per_channel(tt.Tensor(np.array([[np.nan, 1.0], [np.inf, -np.inf]],
                                                          np.float32)), s3[:2], z3[:2], 0,
                                       m.quint8)),
            _qt(m.quantize_per_channel(x, s3 / 20.0, z3, 0, m.qint8))]  # accepted: varies


# ----------------------------------------------------------------------------- calibration (13)
def _ranges(rng, c):
    lo = rng.uniform(-3, 1, c).astype(np.float32)
    hi = lo + rng.uniform(0, 4, c).astype(np.float32)
    hi[0] = lo[0]                         # a zero-width range
    lo[1], hi[1] = 0.5, 2.5               # all positive: widened to include 0
    lo[2], hi[2] = -4.0, -1.0             # all negative
    lo[3], hi[3] = 0.0, 0.0               # all zero: the eps floor
    return lo, hi


@case(unit=QPARAMS, points=3,
      hint="determine_qparams: affine: widen to include 0, s = (max - min) / (qmax - qmin), floor "
           "at eps, z = qmin - rint(min / s) clamped; float32 throughout.",
      stated={
          "determine_qparams": (
              "``(scale, zero_point)``: float32 and int64 arrays of ``min_val``'s shape.",
              "ValueError: ``min_val > max_val`` somewhere, or an unknown qscheme.",
              "``lo``/``hi`` = ``min_val``/``max_val`` as float32 arrays; refuse ``lo > hi``; ``min_neg = np.minimum(lo, 0)``, ``max_pos = np.maximum(hi, 0)``.",
              "Asymmetric: ``scale = (max_pos - min_neg) / np.float32(quant_max - quant_min)``.",
              "Both: ``scale = np.maximum(scale, np.float32(eps))`` (before the zero point!).",
              "Asymmetric zero point: ``quant_min - np.rint(min_neg / scale)`` as int64, clamped to ``[quant_min, quant_max]``.",
              "compute in float32 like PyTorch",
          ),
      })
def determine_qparams_affine(tt, rng):
    m = _q(tt)
    lo, hi = _ranges(rng, 7)
    out: list[object] = []
    for qmin, qmax in ((0, 255), (-128, 127), (0, 127), (-64, 63)):
        s, z = m.determine_qparams(lo, hi, qmin, qmax, m.per_channel_affine)
        out.append([np.asarray(s, dtype=np.float32), np.asarray(z, dtype=np.int64)])
    s, z = m.determine_qparams(float(lo[4]), float(hi[4]), 0, 255)
    out.append([float(s), int(z)])
    out.append(outcome(m.determine_qparams, np.float32(1.0), np.float32(0.5), 0, 255))
    return out


@case(unit=QPARAMS, points=2,
      hint="determine_qparams: symmetric: a = max(-min, max), s = a / ((qmax - qmin) / 2), z = 0 "
           "for a signed range, the middle (qmin + qmax + 1) // 2 for an unsigned one.",
      stated={
          "determine_qparams": (
              "Symmetric: ``max_pos = np.maximum(-min_neg, max_pos)``; ``scale = max_pos / np.float32((quant_max - quant_min) / 2)``; the zero point is ``0`` for a signed range (``quant_min < 0``), else ``(quant_min + quant_max + 1) // 2``.",
              "Both: ``scale = np.maximum(scale, np.float32(eps))`` (before the zero point!).",
              "qscheme: one of the four qschemes; ``*_symmetric`` selects the symmetric rule.",
          ),
      })
def determine_qparams_symmetric(tt, rng):
    m = _q(tt)
    lo, hi = _ranges(rng, 6)
    out = []
    for qmin, qmax in ((-128, 127), (0, 255), (-64, 63), (0, 100)):
        s, z = m.determine_qparams(lo, hi, qmin, qmax, m.per_tensor_symmetric)
        out.append([np.asarray(s, dtype=np.float32), np.asarray(z, dtype=np.int64)])
    return out


@case(unit=MINMAX, points=3,
      hint="MinMaxObserver.forward: running min/max over every batch (start at +-inf), in place; "
           "returns its input.",
      stated={
          "MinMaxObserver": "Buffers ``min_val`` (starts at +inf) and ``max_val`` (starts at -inf), float32, 0-d.",
          "MinMaxObserver.forward": (
              "Fold the range of ``x`` into ``min_val``/``max_val``; return ``x`` unchanged.",
              "``self.min_val.data[...] = np.minimum(data.min(), self.min_val.data)`` — in place, so the buffer object stays the same; the same with ``np.maximum`` for ``max_val``.",
              "Return ``x`` (the same object).",
          ),
          "ObserverBase.calculate_qparams": "``(scales, zero_points)`` from the observed range",
      })
def minmax_observer_running_range(tt, rng):
    m = _q(tt)
    out = []
    for kwargs in ({}, {"dtype": m.qint8, "qscheme": m.per_tensor_symmetric},
                   {"reduce_range": True}):
        obs = m.MinMaxObserver(**kwargs)
        trace = []
        for i in range(5):
            shape = (1,) if i == 2 else (int(rng.integers(2, 6)), 3)
            x = tt.Tensor(_f32(rng, *shape, scale=float(rng.uniform(0.5, 3))) + np.float32(i))
            same = obs(x) is x
            trace.append([bool(same), float(obs.min_val.data), float(obs.max_val.data)])
        s, z = obs.calculate_qparams()
        out.append([trace, np.asarray(s, dtype=np.float32), np.asarray(z, dtype=np.int64)])
    return out


@case(unit=MOVING_AVERAGE, points=2, rtol=1e-5, atol=1e-6,
      hint="MovingAverageMinMaxObserver: moving average: the first batch sets min/max; then min "
           "+= c * (batch_min - min), the same for max.",
      stated={
          "MovingAverageMinMaxObserver": "averaging_constant: ``c`` in ``min_val += c * (batch_min - min_val)``",
          "MovingAverageMinMaxObserver.forward": (
              "First batch (``min_val`` is +inf and ``max_val`` is -inf): store ``lo``, ``hi``.",
              "Later batches, with ``c = np.float32(self.averaging_constant)``: ``min_val + c * (lo - min_val)`` and ``max_val + c * (hi - max_val)``.",
          ),
      })
def moving_average_observer(tt, rng):
    m = _q(tt)
    out = []
    for c in (0.01, 0.3):
        obs = m.MovingAverageMinMaxObserver(averaging_constant=c)
        trace = []
        for i in range(5):
            x = _f32(rng, 1 if i == 3 else 8, scale=1.0 + 2 * i)
            obs(tt.Tensor(x))
            trace.append([float(obs.min_val.data), float(obs.max_val.data)])
        s, z = obs.calculate_qparams()
        out.append([trace, np.asarray(s, dtype=np.float32), np.asarray(z, dtype=np.int64)])
    return out


@case(unit=PER_CHANNEL_OBSERVER, points=3,
      hint="PerChannelMinMaxObserver: per-channel observer: reduce every axis except ch_axis; "
           "combine with the stored ranges after the first batch.",
      stated={
          "PerChannelMinMaxObserver": "Buffers ``min_val``/``max_val``: float32 ``(C,)``, empty until the first batch.",
          "PerChannelMinMaxObserver.forward": (
              "``rows = np.moveaxis(data, self.ch_axis, 0).reshape(data.shape[self.ch_axis], -1)`` — ``(C, everything else)``; ``lo, hi = rows.min(axis=1), rows.max(axis=1)``.",
              "If the buffers are still empty (size 0), they become ``lo``/``hi``; otherwise ``np.minimum(lo, min_val)`` / ``np.maximum(hi, max_val)``.",
              "reduce over every axis *except* ``ch_axis``",
          ),
      })
def per_channel_observer(tt, rng):
    m = _q(tt)
    out = []
    for shape, axis, scheme in (((4, 6), 0, "per_channel_affine"),
                                ((3, 5, 2, 2), 1, "per_channel_symmetric"),
                                ((2, 3, 4), 2, "per_channel_affine")):
        obs = m.PerChannelMinMaxObserver(ch_axis=axis, dtype=m.qint8, qscheme=scheme)
        trace = []
        for i in range(3):
            batch = tuple(1 if i == 1 and d != axis else n for d, n in enumerate(shape))
            obs(tt.Tensor(_f32(rng, *batch, scale=float(rng.uniform(0.5, 4)))))
            trace.append([np.asarray(obs.min_val.data, dtype=np.float32),
                          np.asarray(obs.max_val.data, dtype=np.float32)])
        s, z = obs.calculate_qparams()
        out.append([trace, np.asarray(s, dtype=np.float32), np.asarray(z, dtype=np.int64)])
    one = m.PerChannelMinMaxObserver(ch_axis=0)
    one(tt.Tensor(np.full((1, 1), rng.uniform(5, 10), np.float32)))  # one element, an extreme
    one(tt.Tensor(_f32(rng, 1, 3)))
    out.append([np.asarray(one.min_val.data), np.asarray(one.max_val.data)])
    return out


# ----------------------------------------------------------------------------- QuantizedLinear (10)
def _linear(tt, rng, n_in, n_out, bias=True):
    lin = _layers(tt).Linear(n_in, n_out, bias=bias)
    lin.weight.data[...] = _f32(rng, n_out, n_in, scale=0.3)
    if bias:
        lin.bias.data[...] = _f32(rng, n_out, scale=0.1)
    return lin


def _ql_state(q):
    return {"qweight": np.asarray(q.qweight.data), "scale": np.asarray(q.weight_scale.data),
            "zero_point": np.asarray(q.weight_zero_point.data),
            "bias": None if q.bias is None else np.asarray(q.bias.data),
            "input": None if q.input_scale is None else
            [np.asarray(q.input_scale.data), np.asarray(q.input_zero_point.data)]}


@case(unit=QUANTIZED_LINEAR, points=4,
      hint="from_float: observe the weight, quantize it per channel (default, symmetric qint8) or "
           "per tensor, store int8 weights, float32 scales, zero points in the weight's type, a "
           "copy of the bias, and the input qparams if given.",
      stated={
          "QuantizedLinear.from_float": (
              "weight_observer: a factory of the weight's observer; default ``PerChannelMinMaxObserver.with_args(dtype=qint8, qscheme=per_channel_symmetric)``.",
              "A new ``QuantizedLinear`` with the same ``in_features``/``out_features``.",
              'Per-channel observer (``obs.qscheme`` starts with ``"per_channel"``): ``qw = quantize_per_channel(mod.weight, scale, zp, 0, obs.dtype)``; otherwise ``quantize_per_tensor(mod.weight, float(scale[0]), int(zp[0]), obs.dtype)``.',
              "``q.qweight = qw.int_repr()``, ``q.weight_scale = Tensor(scale as float32)``, ``q.weight_zero_point = Tensor(zp as obs.dtype.storage)``, ``q.bias = Tensor(a copy of the bias)``.",
              "With ``input_qparams = (s, z)``: ``q.input_scale = Tensor(np.array([s], np.float32))`` and ``q.input_zero_point = Tensor(np.array([z], np.uint8))``.",
              "copy the bias (``mod.bias.data.copy()``)",
          ),
          "QuantizedLinear": "``input_zero_point`` uint8 ``(1,)`` for static quantization, None for dynamic.",
      })
def quantized_linear_from_float(tt, rng):
    m = _q(tt)
    lin = _linear(tt, rng, 7, 5)
    lin.weight.data[2] *= 20.0                 # one row with much larger weights
    per_channel = m.QuantizedLinear.from_float(lin)
    per_tensor = m.QuantizedLinear.from_float(
        lin, weight_observer=m.MinMaxObserver.with_args(dtype=m.qint8,
                                                        qscheme=m.per_tensor_symmetric))
    static = m.QuantizedLinear.from_float(_linear(tt, rng, 4, 3, bias=False),
                                          input_qparams=(0.05, 17))
    lin.bias.data[...] += 1.0  # the quantized copy keeps its own bias (compared as values)
    return [_ql_state(per_channel), _ql_state(per_tensor), _ql_state(static),
            np.asarray(per_channel.bias.data).copy(),
            [per_channel.in_features, per_channel.out_features]]


@case(unit=QUANTIZED_LINEAR, points=4,
      hint="forward (dynamic): quantize the batch with quint8 and its own min/max, subtract zero "
           "points in int32, integer matmul, then * (s_x * s_w) + bias.",
      stated={
          "QuantizedLinear.forward": (
              "dynamic (``input_scale`` is None) — ``s, z = determine_qparams(data.min(), data.max(), 0, 255)`` (as float / int).",
              "``qx = quantize_per_tensor(data, s, z, quint8).int_repr().data`` — uint8.",
              "``xi = qx.astype(np.int32) - z`` ``(*, in)``; ``wi = qweight`` as int32 minus ``weight_zero_point`` reshaped to ``(-1, 1)`` ``(out, in)``; ``acc = xi @ wi.T`` — ``(*, out)`` int32.",
              "``out = acc.astype(np.float32) * (np.float32(s) * weight_scale)`` — one scale per output column; add the bias if there is one; return ``Tensor(out)``.",
          ),
          "QuantizedLinear": "Shapes: input ``(*, in)`` float32 -> output ``(*, out)`` float32 (no autograd graph).",
      })
def quantized_linear_forward_dynamic(tt, rng):
    m = _q(tt)
    out = []
    for shape, n_out in (((6, 9), 4), ((2, 3, 9), 5), ((1, 9), 3)):
        lin = _linear(tt, rng, shape[-1], n_out, bias=n_out != 3)
        x = tt.Tensor(_f32(rng, *shape, scale=2.0) + np.float32(rng.uniform(-1, 1)))
        y = m.QuantizedLinear.from_float(lin)(x)
        out.append(np.asarray(y.data))
    lin = _linear(tt, rng, 5, 4)
    q = m.QuantizedLinear.from_float(lin, weight_observer=m.MinMaxObserver.with_args(
        dtype=m.qint8, qscheme=m.per_tensor_affine))
    out.append(np.asarray(q(tt.Tensor(np.abs(_f32(rng, 3, 5)))).data))
    return out


@case(unit=QUANTIZED_LINEAR, points=2,
      hint="forward (static): use the stored input_scale / input_zero_point; inputs outside the "
           "calibrated range saturate.",
      stated={
          "QuantizedLinear.forward": (
              "Input qparams: static — ``s = float(self.input_scale.data[0])``, ``z = int(self.input_zero_point.data[0])``",
              "``qx = quantize_per_tensor(data, s, z, quint8).int_repr().data`` — uint8.",
          ),
          "quantize_per_tensor": "Clamp with ``np.clip(q, dtype.qmin, dtype.qmax)``",
      })
def quantized_linear_forward_static(tt, rng):
    m = _q(tt)
    lin = _linear(tt, rng, 6, 4)
    s, z = float(rng.uniform(0.01, 0.03)), int(rng.integers(80, 170))
    q = m.QuantizedLinear.from_float(lin, input_qparams=(s, z))
    x = _f32(rng, 5, 6)
    x[0, 0], x[1, 1] = 100.0, -100.0
    return np.asarray(q(tt.Tensor(x)).data)


# ----------------------------------------------------------------------------- models (9)
def _model(tt, rng):
    layers = _layers(tt)
    act = importlib.import_module(f"{tt.__name__}.activations")
    return layers.Sequential(_linear(tt, rng, 8, 12), act.ReLU(),
                             layers.Sequential(_linear(tt, rng, 12, 6), act.ReLU()),
                             _linear(tt, rng, 6, 3))


@case(unit=SWAP, points=3,
      hint="swap_modules: replace each child whose exact type is mapped, in place (add_module "
           "keeps its position), recursing into the others; a mapped root is replaced too.",
      stated={
          "swap_modules": (
              "Replace, everywhere in the tree, each module whose exact type is a key of ``mapping``.",
              "The new root: ``mapping[type(module)](module)`` if the root itself matches, else ``module`` (with its descendants swapped).",
              "Otherwise, for each ``(name, child)`` in ``list(module._modules.items())`` that is not None: ``module.add_module(name, swap_modules(child, mapping))``.",
              "``add_module`` replaces the entry where it is.",
          ),
      })
def swap_modules_replaces_in_place(tt, rng):
    m = _q(tt)
    model = _model(tt, rng)
    x = tt.Tensor(_f32(rng, 4, 8))
    swapped = m.swap_modules(model, {_layers(tt).Linear: m.QuantizedLinear.from_float})
    names = [type(mod).__name__ for mod in swapped.modules()]
    keys = [name for name, _ in swapped.named_modules()]
    root = m.swap_modules(_linear(tt, rng, 3, 2), {_layers(tt).Linear: m.QuantizedLinear.from_float})
    return [names, keys, np.asarray(swapped(x).data), type(root).__name__]


@case(unit=MODEL_BYTES, points=2,
      hint="model_bytes: nbytes of every parameter and every buffer (int8 = 1 byte).",
      stated={
          "model_bytes": (
              "Bytes of a model's stored state: every parameter and every buffer.",
              "add ``p.data.nbytes`` for every ``p`` in ``model.parameters()`` and ``b.data.nbytes`` for every ``b`` in ``model.buffers()``; return an ``int``.",
              "an int8 weight is 1 byte, a float32 one 4.",
          ),
      })
def model_bytes_of_float_and_quantized(tt, rng):
    m = _q(tt)
    model = _model(tt, rng)
    per_tensor = m.quantize_model(model, per_channel=False)
    per_channel = m.quantize_model(model)
    obs = m.PerChannelMinMaxObserver()
    obs(tt.Tensor(_f32(rng, 5, 3)))
    # a second model of drawn sizes, so the byte counts differ per variant
    sizes = [int(v) for v in rng.integers(2, 40, size=3)]
    drawn = _layers(tt).Sequential(_linear(tt, rng, sizes[0], sizes[1]),
                                   _linear(tt, rng, sizes[1], sizes[2], bias=False))
    return [int(m.model_bytes(model)), int(m.model_bytes(per_tensor)),
            int(m.model_bytes(per_channel)), int(m.model_bytes(obs)),
            int(m.model_bytes(drawn)), int(m.model_bytes(m.quantize_model(drawn))),
            int(m.model_bytes(m.quantize_model(drawn, per_channel=False)))]


@case(unit=SWAP, points=4,
      standins=(PER_TENSOR, DEQUANTIZE, PER_CHANNEL, QPARAMS, MINMAX, MOVING_AVERAGE, PER_CHANNEL_OBSERVER, QUANTIZED_LINEAR),
      hint="swap_modules: quantize_model: dynamic without calibration data, static (observers on "
           "each Linear's input) with it; the float model is unchanged.",
      stated={
          "quantize_model": (
              "A quantized copy of ``model``: static when ``calibration_batches`` (Tensors or arrays of inputs) are given, dynamic otherwise",
              "The float model is left unchanged.",
          ),
          "swap_modules": (
              "Replace, everywhere in the tree, each module whose exact type is a key of ``mapping``.",
              "If ``type(module) in mapping``: return ``mapping[type(module)](module)`` (do not look inside a module you replace).",
              "``module.add_module(name, swap_modules(child, mapping))``",
          ),
      })
def quantize_model_dynamic_and_static(tt, rng):
    m = _q(tt)
    model = _model(tt, rng)
    x = tt.Tensor(_f32(rng, 7, 8))
    calibration = [_f32(rng, 10, 8) for _ in range(3)]
    dynamic = m.quantize_model(model)
    static = m.quantize_model(model, calibration)
    with tt.no_grad():
        float_out = np.asarray(model(x).data)
    inputs = [_ql_state(mod)["input"] for mod in static.modules()
              if type(mod).__name__ == "QuantizedLinear"]
    return [np.asarray(dynamic(x).data), np.asarray(static(x).data), inputs,
            [type(mod).__name__ for mod in model.modules()], float_out]
