# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Module 15 · Quantization
#
# Every weight of the networks you trained so far is a float32: 4 bytes. A trained network
# does not need that much precision. **Quantization** stores each weight as an 8-bit integer
# plus one shared float (the *scale*) per tensor or per output channel, so the model becomes
# about 4× smaller, reads 4× fewer bytes from memory per forward pass, and can use integer
# arithmetic, which CPUs, phones and accelerators run faster and with less energy than float
# arithmetic. The price is a small rounding error in every weight and activation. In this
# module you build PyTorch's INT8 quantization from the bottom up — the quantize/dequantize
# formulas, per-tensor and per-channel scales, the observers that choose them, a Linear layer
# that multiplies int8 by int8 into int32 — and then convert the digits MLP of the 1986
# milestone and **measure** how much smaller and how much less accurate it gets.
#
# ## Learning objectives
#
# 1. quantize and dequantize with PyTorch's **affine** rule
#    `q = clamp(round(x / scale + zero_point), qmin, qmax)`, with its exact conventions
#    (`qint8` in [-128, 127], `quint8` in [0, 255], round half to even), and bound the error;
# 2. explain **symmetric** vs **asymmetric** quantization and **per-tensor** vs
#    **per-channel** scales, and when each one wins;
# 3. **calibrate**: choose scale and zero point from observed ranges with PyTorch's observers
#    (`MinMaxObserver`, `MovingAverageMinMaxObserver`, `PerChannelMinMaxObserver`);
# 4. build a **quantized Linear**: int8 weights, int32 accumulation, one float rescale,
#    with activations quantized **dynamically** (per batch) or **statically** (calibrated);
# 5. convert a float model by **wrapping** its layers (never by editing earlier modules) and
#    **measure** its size in bytes and its accuracy drop on a real task.
#
# Fill in the functions that raise `NotImplementedError`; run the check after each section;
# `python export.py 15` writes `tinytorch/quantization.py`. The PyTorch names are also
# available where PyTorch keeps them: `tinytorch.quantize_per_tensor`, `tinytorch.qint8`, and
# `tinytorch.ao.quantization` (observers, `quantize_dynamic`, `prepare`, `convert`).
#
# **A note on PyTorch's versions.** These are the APIs of PyTorch's *eager-mode* quantization,
# which this module follows because its pieces are small and visible. PyTorch 2.13, the course's
# reference for parity, deprecates creating quantized tensors (`torch.quantize_per_tensor`,
# `torch.quantize_per_channel` and the `qint8`/`quint8`/`qint32` dtypes warn that they will be
# removed), and PyTorch's quantization work now lives in the separate **torchao** library,
# which quantizes ordinary tensors in place of a quantized dtype. The ideas — scales, zero
# points, observers, per-channel grids, int32 accumulation — are the same there.

# %%
import time

import numpy as np

from tinytorch.activations import ReLU
from tinytorch.layers import Linear, Sequential
from tinytorch.tensor import Tensor, manual_seed, no_grad

# %% [markdown]
# ## 1. Affine quantization: 256 points on the number line
#
# An 8-bit integer has 256 values. Quantization lays them out as an evenly spaced grid over
# the range of the data: the **scale** `s` is the grid spacing, and the **zero point** `z` is
# the integer that stands for the real number 0.
#
# ```
#   real x:   -1.0                 0.0                                   2.0
#              |--------------------|-------------------------------------|
#   quint8 q:  0         ...       z = 85          ...                  255
#
#   s = (2.0 - (-1.0)) / 255 = 0.01176        z = 0 - round(-1.0 / s) = 85
# ```
#
# PyTorch's two formulas (`torch.quantize_per_tensor` and `Tensor.dequantize`):
#
# $$q = \mathrm{clamp}\big(\mathrm{round}(x \cdot \tfrac{1}{s} + z),\ q_{min},\ q_{max}\big)
#   \qquad\qquad \hat x = s\,(q - z)$$
#
# | dtype | storage | range `[qmin, qmax]` | typical use |
# |---|---|---|---|
# | `qint8` | `int8` | [-128, 127] | weights (symmetric, `z = 0`) |
# | `quint8` | `uint8` | [0, 255] | activations (asymmetric, e.g. after a ReLU: all ≥ 0) |
#
# Four details decide whether you match PyTorch bit for bit:
#
# * the arithmetic is **float32**, and PyTorch multiplies by `1/s` (computed once, in float32)
#   instead of dividing by `s`; the zero point is added **before** rounding (it matters on
#   ties: `round(2.5 + 1) = 4`, but `round(2.5) + 1 = 3`);
# * `round` is **round half to even** (`np.rint`): `0.5 → 0`, `1.5 → 2`, `2.5 → 2`, `-0.5 → 0`
#   — not Python 2's "half away from zero", and not `np.floor(v + 0.5)`;
# * values outside the grid **saturate**: they are clamped to `qmin`/`qmax` (an int8 cast
#   without the clamp wraps 130 around to -126!);
# * `z` must itself lie in `[qmin, qmax]` (PyTorch raises a `RuntimeError` otherwise).
#
# **The error.** Inside the grid, rounding moves a value by at most half a step:
# `|x − x̂| ≤ s/2`. Outside it, the error is as large as the overshoot — which is why choosing
# the range (section 3) matters as much as the number of bits.
#
# A quantized tensor is just the integers plus the parameters needed to read them back. Ours,
# `QTensor`, holds them and offers PyTorch's accessors: `int_repr()`, `q_scale()`,
# `q_zero_point()`, `q_per_channel_scales()`, `dequantize()`.

# %%
#| export
"""Module 15 · Quantization — depends on: tensor, activations, layers, spatial; used by:
benchmarking, capstone, milestones.

INT8 quantization with PyTorch's conventions: quantized dtypes ``qint8``/``quint8``,
``quantize_per_tensor``/``quantize_per_channel`` and ``QTensor.dequantize``; observers that
calibrate scale and zero point (``MinMaxObserver``, ``MovingAverageMinMaxObserver``,
``PerChannelMinMaxObserver``); ``QuantizedLinear`` (int8 weights, int32 accumulation,
dynamic or static activation quantization) and ``QuantizedConv2d``; model conversion by
wrapping layers
(``quantize_dynamic``, ``prepare``, ``convert``, ``quantize_model``) and ``model_bytes``.
"""

from __future__ import annotations

import copy
import functools
import math
import warnings
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

import numpy as np

from tinytorch.activations import ReLU  # noqa: F401 - for checks
from tinytorch.layers import Linear, Module, Parameter, Sequential  # noqa: F401 - for checks
from tinytorch.spatial import PADDING_MODES, Conv2d, _conv_padding, _pair, im2col, out_size
from tinytorch.tensor import (  # noqa: F401 - manual_seed and no_grad for checks
    Context,
    Function,
    Tensor,
    manual_seed,
    no_grad,
)


class QDtype(NamedTuple):
    """A quantized dtype: its name, the NumPy storage type and the integer range."""

    name: str
    storage: type
    qmin: int
    qmax: int

    def __repr__(self) -> str:
        return f"tinytorch.{self.name}"


qint8 = QDtype("qint8", np.int8, -128, 127)
quint8 = QDtype("quint8", np.uint8, 0, 255)

per_tensor_affine = "per_tensor_affine"
per_tensor_symmetric = "per_tensor_symmetric"
per_channel_affine = "per_channel_affine"
per_channel_symmetric = "per_channel_symmetric"
QSCHEMES = (per_tensor_affine, per_tensor_symmetric, per_channel_affine, per_channel_symmetric)

#: ``torch.finfo(torch.float32).eps``: the smallest scale an observer returns.
FLOAT32_EPS = float(np.finfo(np.float32).eps)


def _as_float32(x: Any, what: str) -> np.ndarray:
    """The float values of a Tensor or array, as float32; integer input is refused."""
    data = x.data if isinstance(x, Tensor) else np.asarray(x)
    if data.dtype.kind != "f":
        raise RuntimeError(f"{what}: quantize only works on float tensors, got {data.dtype}")
    return data.astype(np.float32, copy=False)


def _float32_only(x: Any, what: str) -> np.ndarray:
    """The values of a float32 Tensor or array; any other dtype is refused, as
    ``torch.quantize_per_tensor`` refuses float64 ("Quantize only works on Float Tensor")."""
    data = x.data if isinstance(x, Tensor) else np.asarray(x)
    if data.dtype != np.float32:
        raise RuntimeError(f"{what}: quantize only works on float32 tensors, got {data.dtype} "
                           "(convert with .float() first)")
    return data


def _check_zero_points(zero_point: np.ndarray, dtype: QDtype, what: str) -> None:
    if np.any(zero_point < dtype.qmin) or np.any(zero_point > dtype.qmax):
        raise RuntimeError(f"{what}: zero_point {zero_point.tolist()} is out of the range "
                           f"[{dtype.qmin}, {dtype.qmax}] of {dtype.name}")


class QTensor:
    """A quantized tensor: integers plus the scale(s) and zero point(s) that read them back.

    Per-tensor (``axis is None``): one ``scale`` (float) and ``zero_point`` (int). Per-channel:
    one scale and zero point for each index along ``axis`` (float64 / int64 arrays), as in
    PyTorch. Made by :func:`quantize_per_tensor` and :func:`quantize_per_channel`.
    """

    def __init__(self, int_repr: np.ndarray, scale: Any, zero_point: Any, dtype: QDtype,
                 axis: int | None = None) -> None:
        self._int = np.asarray(int_repr, dtype=dtype.storage)
        self.dtype = dtype
        self.axis = axis
        if axis is None:
            self.scale: Any = float(scale)
            self.zero_point: Any = int(zero_point)
        else:
            self.scale = np.asarray(scale, dtype=np.float64).reshape(-1)
            self.zero_point = np.asarray(zero_point, dtype=np.int64).reshape(-1)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._int.shape)

    @property
    def ndim(self) -> int:
        return self._int.ndim

    def numel(self) -> int:
        return int(self._int.size)

    @property
    def nbytes(self) -> int:
        """Bytes of the integer storage (1 per element for 8-bit dtypes)."""
        return int(self._int.nbytes)

    def int_repr(self) -> Tensor:
        """The stored integers as a Tensor of the storage dtype (``int8``/``uint8``)."""
        return Tensor(self._int)

    def qscheme(self) -> str:
        return per_tensor_affine if self.axis is None else per_channel_affine

    def q_scale(self) -> float:
        if self.axis is not None:
            raise RuntimeError("q_scale: this is a per-channel tensor; use q_per_channel_scales")
        return self.scale

    def q_zero_point(self) -> int:
        if self.axis is not None:
            raise RuntimeError("q_zero_point: this is a per-channel tensor; use "
                               "q_per_channel_zero_points")
        return self.zero_point

    def q_per_channel_scales(self) -> Tensor:
        if self.axis is None:
            raise RuntimeError("q_per_channel_scales: this is a per-tensor tensor")
        return Tensor(self.scale)

    def q_per_channel_zero_points(self) -> Tensor:
        if self.axis is None:
            raise RuntimeError("q_per_channel_zero_points: this is a per-tensor tensor")
        return Tensor(self.zero_point)

    def q_per_channel_axis(self) -> int:
        if self.axis is None:
            raise RuntimeError("q_per_channel_axis: this is a per-tensor tensor")
        return self.axis

    def dequantize(self) -> Tensor:
        """The real values the integers stand for: ``(q - zero_point) * scale``, float32.

        Per-channel tensors use, for every element, the scale and zero point of its index
        along ``self.axis``.

        APPROACH:
            1. ``q = self._int.astype(np.float32)``.
            2. Per-tensor (``self.axis is None``): ``s = np.float32(self.scale)`` and
               ``z = np.float32(self.zero_point)``.
            3. Per-channel: reshape ``self.scale`` and ``self.zero_point`` to a shape of ones
               except ``-1`` at ``self.axis``, so they broadcast along that axis. PyTorch keeps
               per-channel scales in float64 and computes this product in float64: do the same
               (``q`` as float64 too) and cast the result to float32.
            4. Return ``Tensor((q - z) * s)`` (float32).

        EXAMPLE:
            >>> quantize_per_tensor(Tensor([-0.3, 0.0, 0.26, 30.0]), 0.1, 3, quint8).dequantize()
            tensor([-0.3,  0. ,  0.3, 25.2])

        HINT: subtract the zero point *before* multiplying, and do it in float32 (or int32):
        ``q - z`` on the raw ``uint8`` array wraps around below 0 (``2 - 3 = 255``).
        """
        # BEGIN SOLUTION NO PROMPT
        if self.axis is None:
            q = self._int.astype(np.float32)
            return Tensor((q - np.float32(self.zero_point)) * np.float32(self.scale))
        shape = [1] * self._int.ndim
        shape[self.axis] = -1
        s = self.scale.reshape(shape)                                  # float64
        z = self.zero_point.astype(np.float64).reshape(shape)
        return Tensor(((self._int.astype(np.float64) - z) * s).astype(np.float32))
        # END SOLUTION
        raise NotImplementedError("module 15: implement QTensor.dequantize (see its docstring)")  # STUB

    def __repr__(self) -> str:
        if self.axis is None:
            params = f"scale={self.scale:.6g}, zero_point={self.zero_point}"
        else:
            params = f"axis={self.axis}, scales={np.round(self.scale, 6).tolist()}"
        return (f"QTensor({np.array2string(self._int, separator=', ')}, dtype={self.dtype!r}, "
                f"{params})")


def quantize_per_tensor(input: Any, scale: float, zero_point: int,  # noqa: A002
                        dtype: QDtype) -> QTensor:
    """Quantize a float tensor with one scale and zero point (``torch.quantize_per_tensor``).

    Args:
        input: a float32 Tensor (or array) of any shape.
        scale: the grid step (normally > 0; PyTorch computes with whatever it is given).
        zero_point: the integer that stands for 0.0, inside ``[dtype.qmin, dtype.qmax]``.
        dtype: ``qint8`` or ``quint8``.

    Returns:
        A ``QTensor`` of the same shape, storage ``dtype.storage``.

    Raises:
        RuntimeError: a zero point outside the dtype's range, or an input that is not
            float32 (as PyTorch).

    APPROACH:
        1. ``x = _float32_only(input, "quantize_per_tensor")`` (given: refuses other dtypes);
           check the zero point with ``_check_zero_points(np.asarray(zero_point), dtype,
           "quantize_per_tensor")``.
        2. ``inv = np.float32(1.0) / np.float32(scale)`` (float32, once; a scale of 0 gives
           ``inf`` — wrap it in ``np.errstate(divide="ignore")``).
        3. ``x·inv + zero_point`` rounded **once** to float32, as the CPU's fused multiply-add
           does in PyTorch's kernel: ``t = (x.astype(np.float64) * np.float64(inv) +
           zero_point).astype(np.float32)`` (the float64 product of two float32 numbers is
           exact), then ``q = np.rint(t)`` — round half to even.
        4. NaN becomes the top of the range, as in PyTorch: ``q = np.where(np.isnan(q),
           dtype.qmax, q)``.
        5. Clamp with ``np.clip(q, dtype.qmin, dtype.qmax)``, cast to ``dtype.storage`` and
           return ``QTensor(q, scale, zero_point, dtype)``.

    EXAMPLE:
        >>> quantize_per_tensor(Tensor([0.05, 0.15, 0.25, 20.0, -20.0]), 0.1, 0, qint8).int_repr()
        tensor([   0,    2,    2,  127, -128])

    HINT: 0.05 / 0.1 = 0.5 rounds to 0 and 0.25 / 0.1 = 2.5 rounds to 2 (half to even);
    ``astype(np.int8)`` *before* ``np.clip`` wraps 200 around to -56 — clamp first. Rounding
    ``x·inv`` to float32 and then adding the zero point rounds twice: a value just above a
    tie can land on it (and go to the even neighbour) where PyTorch's one rounding does not.
    """
    # BEGIN SOLUTION NO PROMPT
    x = _float32_only(input, "quantize_per_tensor")
    _check_zero_points(np.asarray(zero_point), dtype, "quantize_per_tensor")
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        inv = np.float32(1.0) / np.float32(scale)
        t = (x.astype(np.float64) * np.float64(inv) + zero_point).astype(np.float32)
    q = np.rint(t)
    q = np.where(np.isnan(q), dtype.qmax, q)  # NaN -> the top of the range, as in PyTorch
    q = np.clip(q, dtype.qmin, dtype.qmax).astype(dtype.storage)
    return QTensor(q, scale, zero_point, dtype)
    # END SOLUTION
    raise NotImplementedError("module 15: implement quantize_per_tensor (see its docstring)")  # STUB


class _FakeQuantizeFn(Function):
    """Quantize and dequantize in one step, with the straight-through gradient (provided)."""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray, *, scale: float, zero_point: int,
                quant_min: int, quant_max: int) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            inv = x.dtype.type(np.float32(1.0) / np.float32(scale))
            q = np.rint(x * inv) + zero_point  # rounds, then adds the zero point (PyTorch)
        ctx.inside = (q >= quant_min) & (q <= quant_max)  # NaN is outside: no gradient
        q = np.clip(np.where(np.isnan(q), quant_min, q), quant_min, quant_max)
        return ((q - zero_point) * x.dtype.type(np.float32(scale))).astype(x.dtype)

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray]:
        return (grad * ctx.inside,)


def fake_quantize_per_tensor_affine(input: Tensor, scale: float, zero_point: int,  # noqa: A002
                                    quant_min: int, quant_max: int) -> Tensor:
    """``torch.fake_quantize_per_tensor_affine`` (provided): the float value the integer grid
    gives back, ``(clamp(rint(x / scale) + zero_point, quant_min, quant_max) - zero_point) ·
    scale``, with the gradient passed straight through inside the range (0 outside it): the
    building block of quantization-aware training.

    Example:
        >>> fake_quantize_per_tensor_affine(Tensor([0.05, 0.14, 9.0]), 0.1, 0, 0, 15)
        tensor([0. , 0.1, 1.5])
    """
    if quant_min > quant_max:
        raise RuntimeError("`quant_min` should be less than or equal to `quant_max`.")
    if not quant_min <= zero_point <= quant_max:
        raise RuntimeError("`zero_point` must be between `quant_min` and `quant_max`.")
    if input.dtype.kind != "f":
        raise RuntimeError(f"fake_quantize_per_tensor_affine: a float input is needed, got "
                           f"{input.dtype}")
    return _FakeQuantizeFn.apply(input, scale=scale, zero_point=int(zero_point),
                                 quant_min=int(quant_min), quant_max=int(quant_max))


def quantization_error(x: Any, q: QTensor) -> float:
    """Root-mean-square difference between ``x`` and ``q.dequantize()`` (a diagnostic)."""
    diff = np.asarray(getattr(x, "data", x), dtype=np.float64) - q.dequantize().data
    return float(math.sqrt(float(np.mean(diff * diff)))) if diff.size else 0.0


# %% [raw]
# # BEGIN QUESTION
# name: per_tensor
# points: 0

# %% [markdown]
# ### Check: quantize and dequantize

# %% [raw]
# # BEGIN TESTS

# %%
def test_quantize_per_tensor_rounds_half_to_even_and_saturates(quantize_per_tensor, qint8, quint8,
                                                               Tensor, np):
    q = quantize_per_tensor(Tensor([0.05, 0.15, 0.25, -0.05, 20.0, -20.0]), 0.1, 0, qint8)
    got = q.int_repr().numpy()
    assert got.dtype == np.int8, f"qint8 is stored as int8, got {got.dtype}"
    assert got.tolist() == [0, 2, 2, 0, 127, -128], (
        f"expected [0, 2, 2, 0, 127, -128], got {got.tolist()}: x/s = 0.5, 1.5, 2.5, -0.5 round "
        "half to even (np.rint), and 200 / -200 saturate at 127 / -128 (clip before the cast, "
        "or 200 wraps around)")
    u = quantize_per_tensor(Tensor([-1.0, 0.0, 0.26]), 0.1, 3, quint8)
    assert u.int_repr().numpy().tolist() == [0, 3, 6], (
        f"quint8, scale 0.1, zero point 3: round(x / s + z) clamped to [0, 255] gives [0, 3, 6], "
        f"got {u.int_repr().numpy().tolist()}")
    scale, zero_point = q.q_scale(), u.q_zero_point()
    assert scale == 0.1 and zero_point == 3, (
        f"keep scale and zero point in the QTensor (dequantize needs them): expected 0.1 and 3, "
        f"got {scale} and {zero_point}")

# %%
def test_dequantize_per_tensor(quantize_per_tensor, quint8, Tensor, np):
    x = Tensor([-1.0, 0.0, 0.26, 30.0])
    d = quantize_per_tensor(x, 0.1, 3, quint8).dequantize()
    assert d.dtype == np.float32, f"dequantize gives float32, got {d.dtype}"
    assert np.allclose(d.numpy(), [-0.3, 0.0, 0.3, 25.2], atol=1e-6), (
        f"(q - z) * s = [-0.3, 0, 0.3, 25.2], got {d.numpy().tolist()}: -1.0 saturates at q = 0, "
        "i.e. -0.3, and 30.0 at 255 = 25.2. A value near 25 instead of -0.3 means q - z wrapped "
        "around in uint8: convert to float32 first")
    rng = np.random.default_rng(0)
    y = Tensor(rng.uniform(-1, 1, 1000).astype(np.float32))
    err = np.abs(quantize_per_tensor(y, 0.01, 0, quint8).dequantize().numpy() - y.numpy())
    assert err[y.numpy() >= 0].max() <= 0.005 + 1e-6, (
        "inside the grid the error is at most half a step (s / 2 = 0.005), got "
        f"{err[y.numpy() >= 0].max():.4f}")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 2. Per-channel quantization
#
# One scale for a whole weight matrix is set by its largest entry. If one output neuron has
# weights ten times larger than the others, the grid is ten times too coarse for every other
# row: most of their weights land on a handful of integers.
#
# ```
#   weight (out=3, in=3)       per-tensor: one s = max|W| / 127.5 = 2.10 / 127.5 ≈ 0.0165
#   row 0:  0.02 -0.01  0.03   → q = [1, -1, 2]: a handful of levels for the whole row!
#   row 1:  0.01  0.02 -0.02   → q = [1, 1, -1]: the same few
#   row 2:  1.90 -2.10  0.80   → q = [115, -128, 49]: the full range [-128, 127]
#
#   per-channel (axis=0): s_i = max|W[i]| / 127.5   → row 0: q = [85, -42, 127]: every row
#                                                     spans the whole grid
# ```
#
# `torch.quantize_per_channel(input, scales, zero_points, axis, dtype)` gives every index
# along `axis` its own scale and zero point — for a Linear's `weight (out, in)`, `axis=0`:
# one per output neuron. The cost is one extra float per row (a few percent of the weights'
# bytes), and it is free at run time: the row's scale multiplies that output column once,
# after the integer matmul (section 4). PyTorch checks that there is one scale per channel
# and that `axis` is a valid, non-negative dimension.

# %%
#| export
def quantize_per_channel(input: Any, scales: Any, zero_points: Any, axis: int,  # noqa: A002
                         dtype: QDtype) -> QTensor:
    """Quantize with one scale and zero point per index along ``axis``
    (``torch.quantize_per_channel``).

    Args:
        input: a float Tensor (or array), e.g. a Linear weight ``(out, in)``.
        scales: ``(input.shape[axis],)`` positive floats (a Tensor, array or list). A
            scale of 0 is not refused: its channel computes with ``inv = inf``, as
            PyTorch's kernel does.
        zero_points: ``(input.shape[axis],)`` integers inside the dtype's range.
        axis: the channel dimension, ``0 <= axis < input.ndim``.
        dtype: ``qint8`` or ``quint8``.

    Returns:
        A per-channel ``QTensor`` (``axis`` set) of the same shape.

    Raises:
        RuntimeError: a bad ``axis``, a wrong number of scales or zero points, a zero point
            out of range, or an input that is not float32 (PyTorch's checks).

    APPROACH:
        1. ``x = _float32_only(input, ...)``; ``s`` = the scales as a float64 1-D array, ``z`` =
           the zero points as an int64 1-D array (``np.asarray(getattr(v, "data", v))``).
        2. Check ``0 <= axis < x.ndim`` and ``len(s) == len(z) == x.shape[axis]``;
           ``_check_zero_points(z, dtype, ...)``.
        3. ``shape = [1] * x.ndim; shape[axis] = -1``; ``inv = np.float32(1.0) /
           s.astype(np.float32)`` reshaped to ``shape``, and the zero points (float32)
           reshaped the same way.
        4. ``q = np.rint(x * inv + zf)`` (float32, in this order: PyTorch's per-channel kernel
           rounds twice), NaN to 0 (``np.where(np.isnan(q), 0, q)``, as that kernel does),
           clamp to the dtype's range, cast, and return
           ``QTensor(q, s, z, dtype, axis=axis)``.

    EXAMPLE:
        >>> w = Tensor([[0.1, -0.2], [5.0, 10.0]])
        >>> quantize_per_channel(w, [0.01, 0.1], [0, 0], 0, qint8).int_repr().numpy()
        array([[ 10, -20],
               [ 50, 100]], dtype=int8)

    HINT: it is ``quantize_per_tensor`` with arrays that broadcast: row ``i`` of a
    ``(out, in)`` weight uses ``scales[i]``, so with ``axis=0`` the scales need shape
    ``(out, 1)``, not ``(out,)`` (which would broadcast along the *columns*).
    """
    # BEGIN SOLUTION NO PROMPT
    x = _float32_only(input, "quantize_per_channel")
    s = np.asarray(getattr(scales, "data", scales), dtype=np.float64).reshape(-1)
    z = np.asarray(getattr(zero_points, "data", zero_points), dtype=np.int64).reshape(-1)
    if not 0 <= axis < x.ndim:
        raise RuntimeError(f"quantize_per_channel: channel axis {axis} is out of range "
                           f"[0, {x.ndim})")
    if len(s) != x.shape[axis] or len(z) != x.shape[axis]:
        raise RuntimeError(f"quantize_per_channel: expected {x.shape[axis]} scales and zero "
                           f"points (dimension {axis}), got {len(s)} and {len(z)}")
    _check_zero_points(z, dtype, "quantize_per_channel")
    shape = [1] * x.ndim
    shape[axis] = -1
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        inv = (np.float32(1.0) / s.astype(np.float32)).reshape(shape)
        q = np.rint(x * inv + z.astype(np.float32).reshape(shape))
    q = np.where(np.isnan(q), 0, q)  # PyTorch's per-channel kernel turns NaN into 0
    q = np.clip(q, dtype.qmin, dtype.qmax).astype(dtype.storage)
    return QTensor(q, s, z, dtype, axis=axis)
    # END SOLUTION
    raise NotImplementedError(  # STUB
        "module 15: implement quantize_per_channel (see its docstring)")  # STUB


# %% [raw]
# # BEGIN QUESTION
# name: per_channel
# points: 0

# %% [markdown]
# ### Check: per-channel quantization

# %% [raw]
# # BEGIN TESTS

# %%
def test_quantize_per_channel_uses_one_scale_per_row(quantize_per_channel, qint8, Tensor, np):
    w = Tensor([[0.1, -0.2, 0.05], [5.0, 10.0, -12.75]])
    q = quantize_per_channel(w, [0.01, 0.1], [0, 1], 0, qint8)
    got = q.int_repr().numpy()
    assert got.shape == (2, 3) and got.dtype == np.int8, (
        f"same shape as the input, stored as int8; got {got.shape} {got.dtype}")
    assert got.tolist() == [[10, -20, 5], [51, 101, -126]], (
        f"row 0 uses scale 0.01 (z 0), row 1 scale 0.1 (z 1; -127.5 + 1 = -126.5 rounds to "
        f"even): expected [[10, -20, 5], [51, 101, -126]], got {got.tolist()} — with scales "
        "of shape (2,) instead of (2, 1) they broadcast along the columns")
    d = q.dequantize().numpy()
    assert np.allclose(d, [[0.1, -0.2, 0.05], [5.0, 10.0, -12.7]], atol=1e-6), (
        f"dequantize must use each row's own scale and zero point, got {d.tolist()}")
    cols = quantize_per_channel(w, [0.1, 0.2, 0.5], [0, 0, 0], 1, qint8).int_repr().numpy()
    assert cols.tolist() == [[1, -1, 0], [50, 50, -26]], (
        f"axis=1: one scale per column, expected [[1, -1, 0], [50, 50, -26]], got {cols.tolist()}")
    try:
        quantize_per_channel(w, [0.1, 0.2, 0.3], [0, 0, 0], 0, qint8)
    except RuntimeError:
        pass
    else:
        raise AssertionError("3 scales for 2 rows must raise a RuntimeError, as PyTorch does")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# First the diagram's matrix, then a weight matrix with one neuron whose weights are 20× larger:
# with one scale, that row sets the grid for all of them. (`quantization_error`, given, is the
# root-mean-square difference between a tensor and its dequantized version.)

# %%
diagram = np.array([[0.02, -0.01, 0.03], [0.01, 0.02, -0.02], [1.90, -2.10, 0.80]], np.float32)
maxima = np.abs(diagram).max(axis=1)
print("per-tensor q:", quantize_per_tensor(diagram, float(maxima.max() / 127.5), 0,
                                           qint8).int_repr().numpy().tolist())
print("per-channel q:", quantize_per_channel(diagram, maxima / 127.5, np.zeros(3, np.int64), 0,
                                             qint8).int_repr().numpy().tolist())

demo_rng = np.random.default_rng(0)
weight = demo_rng.standard_normal((8, 64)).astype(np.float32) * np.float32(0.05)  # (out, in)
weight[3] *= np.float32(20.0)
row_max = np.abs(weight).max(axis=1)                                             # (out,)
per_tensor = quantize_per_tensor(weight, float(row_max.max() / 127.5), 0, qint8)
per_channel = quantize_per_channel(weight, row_max / 127.5, np.zeros(8, np.int64), 0, qint8)
for name, q in (("per-tensor", per_tensor), ("per-channel", per_channel)):
    levels = [len(np.unique(q.int_repr().numpy()[i])) for i in (0, 3)]
    print(f"{name:12s} RMS error {quantization_error(weight, q):.5f}; distinct integers in "
          f"row 0: {levels[0]:3d}, in row 3: {levels[1]:3d}")
ratio = quantization_error(weight, per_tensor) / quantization_error(weight, per_channel)
print(f"per-channel error is {ratio:.1f}x smaller")
# Expected: the per-channel error is 2.8x smaller; per-tensor, row 0's 64 weights land on 9
# integers, per-channel on 53, about as many as the large row 3 (54).

# %% [markdown]
# ## 3. Calibration: choosing scale and zero point
#
# The grid must cover the values that occur — but not much more, or the steps get coarse.
# For weights we know every value; for activations we **observe** batches of real inputs
# (calibration) and record their range. PyTorch's observers turn a range `[min, max]` into
# `(scale, zero_point)`; first the range is widened to contain 0, so that 0.0 (padding, ReLU
# outputs, pruned weights) is represented exactly:
#
# ```
#   min⁻ = min(min, 0)      max⁺ = max(max, 0)
#
#   asymmetric (affine):   s = (max⁺ − min⁻) / (qmax − qmin)
#                          z = qmin − round(min⁻ / s)         clamped to [qmin, qmax]
#
#   symmetric:             a = max(−min⁻, max⁺)
#                          s = a / ((qmax − qmin) / 2)         = a / 127.5 for 8 bits
#                          z = 0 (qint8)  or  128 (quint8: the middle of [0, 255])
#
#   both:                  s = max(s, eps)     eps = float32 machine epsilon ≈ 1.19e-7
# ```
#
# **Symmetric** grids waste half the range on data that is all positive (ReLU outputs) but
# make `z = 0`, which simplifies the integer matmul; they are the usual choice for weights.
# **Asymmetric** grids fit skewed ranges such as activations. The `eps` floor keeps an
# all-zero tensor from getting scale 0 (and a division by zero).
#
# Observers are modules with two buffers, `min_val` and `max_val`, updated by `forward(x)`,
# which returns `x` unchanged so an observer can sit inside a model:
#
# | observer | update on each batch |
# |---|---|
# | `MinMaxObserver` | `min_val = min(min_val, x.min())`, `max_val = max(max_val, x.max())` (starting at ±∞) |
# | `MovingAverageMinMaxObserver(averaging_constant=c)` | first batch: its min/max; then `min_val += c · (x.min() − min_val)` (same for max): one outlier batch moves the range only a little |
# | `PerChannelMinMaxObserver(ch_axis=0)` | one min and max **per index along `ch_axis`** (reduce every other axis), combined with the earlier ones like `MinMaxObserver` |
#
# `calculate_qparams()` (given) turns the buffers into `(scales, zero_points)` arrays of shape
# `(1,)` (per-tensor) or `(C,)` (per-channel) with your `determine_qparams`. The quantized range
# is `[qmin, qmax]` of the dtype, or `reduce_range=True`'s half range ([0, 127] for `quint8`,
# [-64, 63] for `qint8`, which PyTorch uses on x86 to avoid an overflow in one SIMD
# instruction), or your own `quant_min`/`quant_max`.

# %%
#| export
def determine_qparams(min_val: Any, max_val: Any, quant_min: int, quant_max: int,
                      qscheme: str = per_tensor_affine,
                      eps: float = FLOAT32_EPS) -> tuple[np.ndarray, np.ndarray]:
    """Scale(s) and zero point(s) for observed ranges, with PyTorch's observer rules.

    Args:
        min_val, max_val: the observed minimum and maximum, scalars or ``(C,)`` arrays
            (one per channel), ``min_val <= max_val``.
        quant_min, quant_max: the integer range, e.g. -128, 127 for qint8.
        qscheme: one of the four qschemes; ``*_symmetric`` selects the symmetric rule.
        eps: the smallest scale returned.

    Returns:
        ``(scale, zero_point)``: float32 and int64 arrays of ``min_val``'s shape.

    Raises:
        ValueError: ``min_val > max_val`` somewhere, or an unknown qscheme.

    APPROACH:
        1. ``lo``/``hi`` = ``min_val``/``max_val`` as float32 arrays; refuse ``lo > hi``;
           ``min_neg = np.minimum(lo, 0)``, ``max_pos = np.maximum(hi, 0)``.
        2. Symmetric: ``max_pos = np.maximum(-min_neg, max_pos)``;
           ``scale = max_pos / np.float32((quant_max - quant_min) / 2)``; the zero point is
           ``0`` for a signed range (``quant_min < 0``), else
           ``(quant_min + quant_max + 1) // 2``.
        3. Asymmetric: ``scale = (max_pos - min_neg) / np.float32(quant_max - quant_min)``.
        4. Both: ``scale = np.maximum(scale, np.float32(eps))`` (before the zero point!).
        5. Asymmetric zero point: ``quant_min - np.rint(min_neg / scale)`` as int64, clamped
           to ``[quant_min, quant_max]``.

    EXAMPLE:
        >>> s, z = determine_qparams(-1.0, 2.0, 0, 255)
        >>> round(float(s), 6), int(z)
        (0.011765, 85)
        >>> s, z = determine_qparams(-1.0, 2.0, -128, 127, per_tensor_symmetric)
        >>> round(float(s), 6), int(z)
        (0.015686, 0)

    HINT: compute in float32 like PyTorch (``np.float32`` constants, not Python floats mixed
    with float64 arrays). A range that does not contain 0 is widened first: ``[2, 5]`` is
    treated as ``[0, 5]`` — so ``z = qmin`` and 0.0 stays exactly representable.
    """
    # BEGIN SOLUTION NO PROMPT
    if qscheme not in QSCHEMES:
        raise ValueError(f"determine_qparams: unknown qscheme {qscheme!r}")
    lo = np.asarray(min_val, dtype=np.float32)
    hi = np.asarray(max_val, dtype=np.float32)
    if np.any(lo > hi):
        raise ValueError(f"determine_qparams: min_val {lo.tolist()} > max_val {hi.tolist()}")
    min_neg = np.minimum(lo, np.float32(0))
    max_pos = np.maximum(hi, np.float32(0))
    if qscheme in (per_tensor_symmetric, per_channel_symmetric):
        max_pos = np.maximum(-min_neg, max_pos)
        scale = max_pos / np.float32((quant_max - quant_min) / 2)
        scale = np.maximum(scale, np.float32(eps))
        middle = 0 if quant_min < 0 else (quant_min + quant_max + 1) // 2
        zero_point = np.full(scale.shape, middle, dtype=np.int64)
    else:
        scale = (max_pos - min_neg) / np.float32(quant_max - quant_min)
        scale = np.maximum(scale, np.float32(eps))
        zero_point = quant_min - np.rint(min_neg / scale).astype(np.int64)
        zero_point = np.clip(zero_point, quant_min, quant_max)
    return scale.astype(np.float32), zero_point.astype(np.int64)
    # END SOLUTION
    raise NotImplementedError(  # STUB
        "module 15: implement determine_qparams (see its docstring)")  # STUB


def _qmin_qmax(dtype: QDtype, reduce_range: bool, quant_min: int | None,
               quant_max: int | None) -> tuple[int, int]:
    """The integer range an observer uses (``torch.ao.quantization.utils.calculate_qmin_qmax``)."""
    if quant_min is not None and quant_max is not None:
        if not quant_min <= 0 <= quant_max:
            raise ValueError("the quantization range must include 0")
        if quant_min >= quant_max:
            raise ValueError("quant_min must be strictly less than quant_max")
        if dtype is qint8 and quant_max - quant_min + 1 > 256:  # PyTorch checks qint8 only
            raise ValueError("the quantization range must not exceed 256 values")
        return (quant_min // 2, quant_max // 2) if reduce_range else (quant_min, quant_max)
    if reduce_range:
        return (-64, 63) if dtype is qint8 else (0, 127)
    return dtype.qmin, dtype.qmax


class ObserverBase(Module):
    """What every observer shares (provided): the dtype, qscheme and integer range, and
    ``calculate_qparams``. Subclasses define ``forward(x)`` (record, then return ``x``).

    Args:
        dtype: ``quint8`` (default, activations) or ``qint8`` (weights).
        qscheme: one of the four qschemes.
        reduce_range: use half the integer range (PyTorch's x86 setting).
        quant_min, quant_max: a custom integer range (both or neither).
        eps: the smallest scale returned.
    """

    _per_channel = False

    def __init__(self, dtype: QDtype = quint8, qscheme: str = per_tensor_affine,
                 reduce_range: bool = False, quant_min: int | None = None,
                 quant_max: int | None = None, eps: float = FLOAT32_EPS) -> None:
        super().__init__()
        if qscheme not in QSCHEMES:
            raise ValueError(f"unknown qscheme {qscheme!r}; use one of {QSCHEMES}")
        if qscheme.startswith("per_channel") != self._per_channel:
            kind = "per-channel" if self._per_channel else "per-tensor"
            raise NotImplementedError(f"{type(self).__name__} only supports {kind} qschemes")
        if dtype not in (qint8, quint8):
            raise ValueError(f"observers support qint8 and quint8, got {dtype!r}")
        if reduce_range and dtype is quint8 and "symmetric" in qscheme:
            raise ValueError("Cannot reduce range for symmetric quantization for quint8")
        self.dtype = dtype
        self.qscheme = qscheme
        self.reduce_range = reduce_range
        self.eps = eps
        self.has_customized_qrange = quant_min is not None and quant_max is not None
        self.quant_min, self.quant_max = _qmin_qmax(dtype, reduce_range, quant_min, quant_max)

    @classmethod
    def with_args(cls, **kwargs: Any) -> Callable[[], ObserverBase]:
        """A factory making this observer with ``kwargs`` (``Observer.with_args`` in PyTorch)."""
        return functools.partial(cls, **kwargs)

    def calculate_qparams(self) -> tuple[np.ndarray, np.ndarray]:
        """``(scales, zero_points)`` from the observed range, ``(1,)`` or ``(C,)``: float32
        scales; zero points int32 for the affine qschemes and int64 for the symmetric ones
        (PyTorch's dtypes). Before any observation: scale 1.0 and zero point 0 (int64), with a
        warning."""
        lo, hi = self.min_val.data, self.max_val.data
        if lo.size == 0 or (np.all(lo == np.inf) and np.all(hi == -np.inf)):
            warnings.warn("must run observer before calling calculate_qparams; returning "
                          "default values", stacklevel=2)
            return np.ones(1, dtype=np.float32), np.zeros(1, dtype=np.int64)
        scale, zero_point = determine_qparams(lo, hi, self.quant_min, self.quant_max,
                                              self.qscheme, self.eps)
        if "symmetric" in self.qscheme:  # PyTorch: 0 for qint8, the middle for quint8
            middle = (self.quant_min + self.quant_max) // 2 if self.has_customized_qrange else 128
            zero_point = np.full_like(zero_point, middle if self.dtype is quint8 else 0)
        if "affine" in self.qscheme:
            zero_point = zero_point.astype(np.int32)
        return scale.reshape(-1), zero_point.reshape(-1)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val.data}, max_val={self.max_val.data}"


class MinMaxObserver(ObserverBase):
    """Running minimum and maximum of everything seen (``torch.ao.quantization.MinMaxObserver``).

    Buffers ``min_val`` (starts at +inf) and ``max_val`` (starts at -inf), float32, 0-d.
    """

    def __init__(self, dtype: QDtype = quint8, qscheme: str = per_tensor_affine,
                 reduce_range: bool = False, quant_min: int | None = None,
                 quant_max: int | None = None, eps: float = FLOAT32_EPS) -> None:
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, eps)
        self.register_buffer("min_val", Tensor(np.array(np.inf, dtype=np.float32)))
        self.register_buffer("max_val", Tensor(np.array(-np.inf, dtype=np.float32)))

    def forward(self, x: Any) -> Any:
        """Fold the range of ``x`` into ``min_val``/``max_val``; return ``x`` unchanged.

        APPROACH:
            1. ``data`` = the values of ``x`` (``x.data`` for a Tensor) as float32; if it is
               empty, return ``x`` (nothing to learn).
            2. ``self.min_val.data[...] = np.minimum(data.min(), self.min_val.data)`` — in
               place, so the buffer object stays the same; the same with ``np.maximum`` for
               ``max_val``.
            3. Return ``x`` (the same object).

        EXAMPLE:
            >>> obs = MinMaxObserver(); _ = obs(Tensor([1.0, 3.0])); _ = obs(Tensor([-2.0, 2.0]))
            >>> float(obs.min_val.data), float(obs.max_val.data)
            (-2.0, 3.0)

        HINT: compare with the *stored* values, not only the current batch: replacing them
        forgets every earlier batch. Assigning ``self.min_val = ...`` works too (it updates the
        buffer), as long as you keep a float32 0-d array.
        """
        # BEGIN SOLUTION NO PROMPT
        data = (x.data if isinstance(x, Tensor) else np.asarray(x)).astype(np.float32,
                                                                           copy=False)
        if data.size == 0:
            return x
        self.min_val.data[...] = np.minimum(data.min(), self.min_val.data)
        self.max_val.data[...] = np.maximum(data.max(), self.max_val.data)
        return x
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 15: implement MinMaxObserver.forward (see its docstring)")  # STUB


class MovingAverageMinMaxObserver(MinMaxObserver):
    """Exponential moving average of each batch's min and max
    (``torch.ao.quantization.MovingAverageMinMaxObserver``).

    Args:
        averaging_constant: ``c`` in ``min_val += c * (batch_min - min_val)``; 0.01 by default.
        (the rest as :class:`MinMaxObserver`)
    """

    def __init__(self, averaging_constant: float = 0.01, dtype: QDtype = quint8,
                 qscheme: str = per_tensor_affine, reduce_range: bool = False,
                 quant_min: int | None = None, quant_max: int | None = None,
                 eps: float = FLOAT32_EPS) -> None:
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, eps)
        self.averaging_constant = averaging_constant

    def forward(self, x: Any) -> Any:
        """Move the stored range towards this batch's range; return ``x`` unchanged.

        APPROACH:
            1. ``data`` as float32 (return ``x`` if it is empty); ``lo, hi = data.min(),
               data.max()``.
            2. First batch (``min_val`` is +inf and ``max_val`` is -inf): store ``lo``, ``hi``.
            3. Later batches, with ``c = np.float32(self.averaging_constant)``:
               ``min_val + c * (lo - min_val)`` and ``max_val + c * (hi - max_val)``.
            4. Write both in place (``.data[...] = ...``) and return ``x``.

        EXAMPLE:
            >>> obs = MovingAverageMinMaxObserver(averaging_constant=0.5)
            >>> _ = obs(Tensor([0.0, 4.0])); _ = obs(Tensor([-2.0, 2.0]))
            >>> float(obs.min_val.data), float(obs.max_val.data)
            (-1.0, 3.0)

        HINT: without the first-batch case the average starts from ±inf and stays infinite
        (``inf + c * (lo - inf)`` is ``nan`` or ``inf``).
        """
        # BEGIN SOLUTION NO PROMPT
        data = (x.data if isinstance(x, Tensor) else np.asarray(x)).astype(np.float32,
                                                                           copy=False)
        if data.size == 0:
            return x
        lo, hi = data.min(), data.max()
        old_lo, old_hi = self.min_val.data, self.max_val.data
        if old_lo == np.inf and old_hi == -np.inf:
            new_lo, new_hi = lo, hi
        else:
            c = np.float32(self.averaging_constant)
            new_lo = old_lo + c * (lo - old_lo)
            new_hi = old_hi + c * (hi - old_hi)
        self.min_val.data[...] = new_lo
        self.max_val.data[...] = new_hi
        return x
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 15: implement MovingAverageMinMaxObserver.forward (see its docstring)")  # STUB


class PerChannelMinMaxObserver(ObserverBase):
    """Running min and max per index along ``ch_axis``
    (``torch.ao.quantization.PerChannelMinMaxObserver``).

    Args:
        ch_axis: the channel dimension (0: output neurons of a Linear weight).
        qscheme: ``per_channel_affine`` (default) or ``per_channel_symmetric``.
        (the rest as :class:`MinMaxObserver`)

    Buffers ``min_val``/``max_val``: float32 ``(C,)``, empty until the first batch.
    """

    _per_channel = True

    def __init__(self, ch_axis: int = 0, dtype: QDtype = quint8,
                 qscheme: str = per_channel_affine, reduce_range: bool = False,
                 quant_min: int | None = None, quant_max: int | None = None,
                 eps: float = FLOAT32_EPS) -> None:
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, eps)
        self.ch_axis = ch_axis
        self.register_buffer("min_val", Tensor(np.zeros(0, dtype=np.float32)))
        self.register_buffer("max_val", Tensor(np.zeros(0, dtype=np.float32)))

    def forward(self, x: Any) -> Any:
        """Fold the per-channel ranges of ``x`` into ``min_val``/``max_val``; return ``x``.

        APPROACH:
            1. ``data`` as float32 (return ``x`` if empty).
            2. ``rows = np.moveaxis(data, self.ch_axis, 0).reshape(data.shape[self.ch_axis],
               -1)`` — ``(C, everything else)``; ``lo, hi = rows.min(axis=1),
               rows.max(axis=1)``.
            3. If the buffers are still empty (size 0), they become ``lo``/``hi``; otherwise
               ``np.minimum(lo, min_val)`` / ``np.maximum(hi, max_val)``.
            4. Store new float32 arrays (``self.min_val = Tensor(...)``; their shape changes
               the first time) and return ``x``.

        EXAMPLE:
            >>> obs = PerChannelMinMaxObserver(ch_axis=0)
            >>> _ = obs(Tensor([[1.0, -2.0], [0.5, 4.0]]))
            >>> obs.min_val.data.tolist(), obs.max_val.data.tolist()
            ([-2.0, 0.5], [1.0, 4.0])

        HINT: reduce over every axis *except* ``ch_axis``; ``ch_axis=1`` of a ``(N, C, H, W)``
        activation gives ``C`` ranges, one per channel.
        """
        # BEGIN SOLUTION NO PROMPT
        data = (x.data if isinstance(x, Tensor) else np.asarray(x)).astype(np.float32,
                                                                           copy=False)
        if data.size == 0:
            return x
        rows = np.moveaxis(data, self.ch_axis, 0).reshape(data.shape[self.ch_axis], -1)
        lo, hi = rows.min(axis=1), rows.max(axis=1)
        if self.min_val.data.size != 0:
            lo = np.minimum(lo, self.min_val.data)
            hi = np.maximum(hi, self.max_val.data)
        self.min_val = Tensor(lo.astype(np.float32))
        self.max_val = Tensor(hi.astype(np.float32))
        return x
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 15: implement PerChannelMinMaxObserver.forward (see its docstring)")  # STUB


# %% [raw]
# # BEGIN QUESTION
# name: observers
# points: 0

# %% [markdown]
# ### Check: calibration

# %% [raw]
# # BEGIN TESTS

# %%
def test_determine_qparams_affine_and_symmetric(determine_qparams, per_tensor_symmetric, np):
    s, z = determine_qparams(-1.0, 2.0, 0, 255)
    assert np.isclose(float(s), 3.0 / 255) and int(z) == 85, (
        f"asymmetric [-1, 2] on [0, 255]: s = 3 / 255 = 0.01176, z = 0 - round(-1 / s) = 85; "
        f"got s = {float(s):.6g}, z = {int(z)}")
    s, z = determine_qparams(2.0, 5.0, 0, 255)
    assert np.isclose(float(s), 5.0 / 255) and int(z) == 0, (
        f"[2, 5] is widened to [0, 5] so that 0.0 stays exact: s = 5 / 255, z = 0; "
        f"got s = {float(s):.6g}, z = {int(z)}")
    s, z = determine_qparams(-1.0, 2.0, -128, 127, per_tensor_symmetric)
    assert np.isclose(float(s), 2.0 / 127.5) and int(z) == 0, (
        f"symmetric qint8: s = max(|min|, |max|) / 127.5 = 2 / 127.5, z = 0; got s = "
        f"{float(s):.6g}, z = {int(z)}")
    s, z = determine_qparams(np.zeros(2), np.zeros(2), -128, 127)
    assert s.shape == (2,) and np.all(s > 0), (
        f"an all-zero range still needs a positive scale (eps), got {s}")

# %%
def test_observers_track_ranges(MinMaxObserver, MovingAverageMinMaxObserver,
                                PerChannelMinMaxObserver, Tensor, np):
    obs = MinMaxObserver()
    x = Tensor([1.0, 3.0])
    returned = obs(x)
    assert returned is x, (
        f"an observer only records the range and returns its input itself (it sits between "
        f"layers), got a {type(returned).__name__} that is not x")
    obs(Tensor([-2.0, 2.0]))
    assert (float(obs.min_val.data), float(obs.max_val.data)) == (-2.0, 3.0), (
        f"MinMaxObserver keeps the running min and max: expected (-2, 3), got "
        f"({float(obs.min_val.data)}, {float(obs.max_val.data)})")
    scale, zp = obs.calculate_qparams()
    assert np.allclose(scale, [5.0 / 255]) and zp.tolist() == [102], (
        f"[-2, 3] on quint8: scale 5/255, zero point 102; got {scale}, {zp}")
    avg = MovingAverageMinMaxObserver(averaging_constant=0.5)
    avg(Tensor([0.0, 4.0]))
    avg(Tensor([-2.0, 2.0]))
    assert (float(avg.min_val.data), float(avg.max_val.data)) == (-1.0, 3.0), (
        f"moving average with c = 0.5: first batch [0, 4], then 0 + 0.5 * (-2 - 0) = -1 and "
        f"4 + 0.5 * (2 - 4) = 3; got ({float(avg.min_val.data)}, {float(avg.max_val.data)})")
    pc = PerChannelMinMaxObserver(ch_axis=1)
    pc(Tensor(np.array([[1.0, -2.0, 0.0], [3.0, 5.0, -1.0]])))
    pc(Tensor(np.array([[-4.0, 0.0, 0.5]])))
    assert pc.min_val.data.tolist() == [-4.0, -2.0, -1.0] and \
        pc.max_val.data.tolist() == [3.0, 5.0, 0.5], (
            f"per channel along axis 1: min [-4, -2, -1], max [3, 5, 0.5]; got "
            f"{pc.min_val.data.tolist()}, {pc.max_val.data.tolist()}")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 4. A quantized Linear: int8 × int8 → int32
#
# A Linear layer computes `y = x Wᵀ + b`. Replace `x` and `W` by their quantized versions,
# `x ≈ s_x (q_x − z_x)` and `W[j] ≈ s_w[j] (q_w[j] − z_w[j])` (per output channel `j`):
#
# $$y_{nj} \approx s_x\, s_{w,j} \sum_k (q_{x,nk} - z_x)(q_{w,jk} - z_{w,j}) + b_j$$
#
# The sum is **all integers**: 8-bit × 8-bit products added in a **32-bit accumulator**, then
# one float multiply per output (the two scales) and the float bias. That is what INT8
# hardware does (x86 VNNI, ARM dot-product instructions, tensor cores):
#
# ```
#   x (N, in) float32 ──quantize (s_x, z_x)──► q_x (N, in) uint8 ─┐
#                                                                  ├─ int32 matmul ─► acc (N, out) int32
#   W (out, in) int8, stored once, with s_w (out,), z_w (out,) ───┘                      │
#                                                y = acc · (s_x · s_w) + b   ◄────────────┘  (N, out) float32
# ```
#
# Why int32? One product of two 8-bit values needs 16 bits; adding `in` of them needs
# `log₂(in)` more. With `|q_x − z_x| ≤ 255` and `|q_w − z_w| ≤ 255`, a 32-bit accumulator
# holds sums of up to `2³¹ / 255² ≈ 33,000` products — every layer in this course.
#
# **Where does `s_x` come from?**
#
# * **dynamic quantization** (`torch.ao.quantization.quantize_dynamic`, used for LSTMs and
#   transformers on CPU): compute `min`/`max` of *each incoming batch* and choose
#   `(s_x, z_x)` on the fly with `quint8` and the asymmetric rule. Nothing to calibrate; a
#   little work per call. PyTorch's x86 kernel uses the reduced range [0, 127] here (an
#   overflow work-around of one instruction); our int32 NumPy arithmetic has no such limit,
#   so we use the full [0, 255].
# * **static quantization**: run calibration batches through the float model, let an
#   observer record the layer's input range, and freeze `(s_x, z_x)` — no per-call range
#   computation, but inputs outside the calibrated range saturate.
#
# Our `QuantizedLinear` does either: dynamic when `input_scale` is None, static otherwise.
# Its stored state — the int8 weight, the float32 scales, the zero points (in the weight's
# own 8-bit type, as ONNX stores them) and the float32 bias — is registered as **buffers**,
# so `state_dict()` saves it and `model_bytes` (section 5) counts it. It is an inference
# layer: the output is a new Tensor with no graph (training a quantized model goes through
# "fake quantization", a float simulation, beyond this module).

# %%
#| export
class QuantizedLinear(Module):
    """A Linear layer with int8 weights and int32 accumulation
    (``torch.ao.nn.quantized.dynamic.Linear``; static when ``input_scale`` is set).

    Args:
        in_features, out_features, bias: as :class:`Linear`.
        dtype: the weight dtype (``qint8``).

    Buffers:
        ``qweight`` ``(out, in)`` in the weight's storage type; ``weight_scale`` float32 and
        ``weight_zero_point`` (storage type), both ``(out,)`` per-channel or ``(1,)``
        per-tensor; ``bias`` float32 ``(out,)`` or None; ``input_scale`` float32 ``(1,)`` and
        ``input_zero_point`` uint8 ``(1,)`` for static quantization, None for dynamic.

    Shapes: input ``(*, in)`` float32 -> output ``(*, out)`` float32 (no autograd graph).
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 dtype: QDtype = qint8) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight_dtype = dtype
        self.per_channel = False
        self.register_buffer("qweight", Tensor(np.zeros((out_features, in_features),
                                                        dtype=dtype.storage)))
        self.register_buffer("weight_scale", Tensor(np.ones(1, dtype=np.float32)))
        self.register_buffer("weight_zero_point", Tensor(np.zeros(1, dtype=dtype.storage)))
        self.register_buffer("bias", Tensor(np.zeros(out_features, dtype=np.float32))
                             if bias else None)
        self.register_buffer("input_scale", None)
        self.register_buffer("input_zero_point", None)

    def weight(self) -> QTensor:
        """The stored weight as a QTensor (``torch``'s quantized ``Linear.weight()``)."""
        if self.per_channel:
            return QTensor(self.qweight.data, self.weight_scale.data,
                           self.weight_zero_point.data, self.weight_dtype, axis=0)
        return QTensor(self.qweight.data, self.weight_scale.data[0],
                       self.weight_zero_point.data[0], self.weight_dtype)

    @classmethod
    def from_float(cls, mod: Linear, weight_observer: Callable[[], ObserverBase] | None = None,
                   input_qparams: tuple[Any, Any] | None = None) -> QuantizedLinear:
        """Quantize a float ``Linear``: observe its weight, quantize it, keep the bias.

        Args:
            mod: the float layer (left unchanged).
            weight_observer: a factory of the weight's observer; default
                ``PerChannelMinMaxObserver.with_args(dtype=qint8,
                qscheme=per_channel_symmetric)``.
            input_qparams: ``(scale, zero_point)`` of the input (static quantization,
                e.g. from a calibrated observer's ``calculate_qparams()``), or None (dynamic).

        Returns:
            A new ``QuantizedLinear`` with the same ``in_features``/``out_features``.

        APPROACH:
            1. ``obs = (weight_observer or the default)()``; ``obs(mod.weight)``;
               ``scale, zp = obs.calculate_qparams()``.
            2. Per-channel observer (``obs.qscheme`` starts with ``"per_channel"``):
               ``qw = quantize_per_channel(mod.weight, scale, zp, 0, obs.dtype)``; otherwise
               ``quantize_per_tensor(mod.weight, float(scale[0]), int(zp[0]), obs.dtype)``.
            3. ``q = cls(mod.in_features, mod.out_features, mod.bias is not None, obs.dtype)``;
               set ``q.per_channel``, and the buffers: ``q.qweight = qw.int_repr()``,
               ``q.weight_scale = Tensor(scale as float32)``, ``q.weight_zero_point =
               Tensor(zp as obs.dtype.storage)``, ``q.bias = Tensor(a copy of the bias)``.
            4. With ``input_qparams = (s, z)``: ``q.input_scale = Tensor(np.array([s],
               np.float32))`` and ``q.input_zero_point = Tensor(np.array([z], np.uint8))``.

        EXAMPLE:
            >>> lin = Linear(2, 2); lin.weight.data[...] = [[1.0, -0.5], [0.02, 0.01]]
            >>> q = QuantizedLinear.from_float(lin)
            >>> q.qweight.data.tolist(), [round(float(s), 6) for s in q.weight_scale.data]
            ([[127, -64], [127, 64]], [0.007843, 0.000157])

        HINT: copy the bias (``mod.bias.data.copy()``): sharing the array would let later
        training of the float model change the quantized one. Assigning ``q.qweight = ...``
        updates the registered buffer (module 03's ``__setattr__``).
        """
        # BEGIN SOLUTION NO PROMPT
        make = weight_observer or PerChannelMinMaxObserver.with_args(
            dtype=qint8, qscheme=per_channel_symmetric)
        obs = make()
        obs(mod.weight)
        scale, zp = obs.calculate_qparams()
        per_channel = obs.qscheme.startswith("per_channel")
        if per_channel:
            qw = quantize_per_channel(mod.weight, scale, zp, 0, obs.dtype)
        else:
            qw = quantize_per_tensor(mod.weight, float(scale[0]), int(zp[0]), obs.dtype)
        q = cls(mod.in_features, mod.out_features, mod.bias is not None, obs.dtype)
        q.per_channel = per_channel
        q.qweight = qw.int_repr()
        q.weight_scale = Tensor(np.asarray(scale, dtype=np.float32))
        q.weight_zero_point = Tensor(np.asarray(zp).astype(obs.dtype.storage))
        if mod.bias is not None:
            q.bias = Tensor(mod.bias.data.astype(np.float32, copy=True))
        if input_qparams is not None:
            s, z = input_qparams
            q.input_scale = Tensor(np.asarray(s, dtype=np.float32).reshape(1))
            q.input_zero_point = Tensor(np.asarray(z).astype(np.uint8).reshape(1))
        return q
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 15: implement QuantizedLinear.from_float (see its docstring)")  # STUB

    def forward(self, x: Tensor) -> Tensor:
        """``y = x Wᵀ + b`` with int8 operands and an int32 accumulator.

        APPROACH:
            1. ``data`` = ``x.data`` as float32 ``(*, in)``.
            2. Input qparams: static — ``s = float(self.input_scale.data[0])``,
               ``z = int(self.input_zero_point.data[0])``; dynamic (``input_scale`` is None) —
               ``s, z = determine_qparams(data.min(), data.max(), 0, 255)`` (as float / int).
            3. ``qx = quantize_per_tensor(data, s, z, quint8).int_repr().data`` — uint8.
            4. ``xi = qx.astype(np.int32) - z`` ``(*, in)``; ``wi = qweight`` as int32 minus
               ``weight_zero_point`` reshaped to ``(-1, 1)`` ``(out, in)``;
               ``acc = xi @ wi.T`` — ``(*, out)`` int32.
            5. ``out = acc.astype(np.float32) * (np.float32(s) * weight_scale)`` — one scale per
               output column; add the bias if there is one; return ``Tensor(out)``.

        EXAMPLE: for ``lin`` of the ``from_float`` example (bias ``b``) and ``x = [[1.0, 2.0]]``:
        ``q(x)`` is within about 1% of ``lin(x)`` — ``[[0.0 + b0, 0.04 + b1]]``.

        HINT: do the subtraction and the matmul in int32: ``uint8 - z`` or ``int8 @ int8``
        wrap around at 8 bits. Scaling by ``s_x · s_w[j]`` happens once, *after* the sum —
        that is the whole trick.
        """
        # BEGIN SOLUTION NO PROMPT
        data = x.data.astype(np.float32, copy=False)                      # (*, in)
        if self.input_scale is None:
            scale, zp = determine_qparams(data.min(), data.max(), quint8.qmin, quint8.qmax)
            s, z = float(scale), int(zp)
        else:
            s = float(self.input_scale.data[0])
            z = int(self.input_zero_point.data[0])
        qx = quantize_per_tensor(data, s, z, quint8).int_repr().data      # (*, in) uint8
        xi = qx.astype(np.int32) - np.int32(z)                            # (*, in) int32
        wz = self.weight_zero_point.data.astype(np.int32).reshape(-1, 1)
        wi = self.qweight.data.astype(np.int32) - wz                      # (out, in) int32
        acc = xi @ wi.T                                                   # (*, out) int32
        out = acc.astype(np.float32) * (np.float32(s) * self.weight_scale.data)
        if self.bias is not None:
            out = out + self.bias.data
        return Tensor(out)
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 15: implement QuantizedLinear.forward (see its docstring)")  # STUB

    def extra_repr(self) -> str:
        mode = "dynamic" if self.input_scale is None else "static"
        scheme = "per_channel" if self.per_channel else "per_tensor"
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"dtype={self.weight_dtype!r}, qscheme={scheme}, activations={mode}")


# %% [raw]
# # BEGIN QUESTION
# name: quantized_linear
# points: 0

# %% [markdown]
# ### Check: the quantized Linear

# %% [raw]
# # BEGIN TESTS

# %%
def test_quantized_linear_weights(QuantizedLinear, Linear, np):
    lin = Linear(3, 2)
    lin.weight.data[...] = [[1.0, -0.5, 0.25], [0.02, 0.01, -0.04]]
    lin.bias.data[...] = [0.5, -0.25]
    q = QuantizedLinear.from_float(lin)
    assert q.qweight.data.dtype == np.int8, f"weights are stored as int8, got {q.qweight.data.dtype}"
    assert q.qweight.data.tolist() == [[127, -64, 32], [64, 32, -128]], (
        "per-channel symmetric qint8: row 0 has scale 1/127.5, row 1 0.04/127.5; expected "
        f"[[127, -64, 32], [64, 32, -128]], got {q.qweight.data.tolist()}")
    assert np.allclose(q.weight_scale.data, [1 / 127.5, 0.04 / 127.5]), (
        f"one float32 scale per output row, got {q.weight_scale.data}")
    assert q.bias is not None and np.allclose(q.bias.data, [0.5, -0.25]), (
        f"keep the float bias [0.5, -0.25] (it is added after the int8 product), got "
        f"{getattr(q.bias, 'data', None)}")
    lin.bias.data[...] = 9.0
    assert np.allclose(q.bias.data, [0.5, -0.25]), (
        f"the quantized layer must own a copy of the bias: setting the float layer's bias to 9 "
        f"changed it to {q.bias.data}")

# %%
def test_quantized_linear_matches_float_layer(QuantizedLinear, Linear, Tensor, determine_qparams,
                                              quantize_per_tensor, quint8, manual_seed, no_grad,
                                              np):
    manual_seed(0)
    lin = Linear(16, 4)
    x = Tensor(np.random.default_rng(1).standard_normal((5, 16)).astype(np.float32))
    q = QuantizedLinear.from_float(lin)
    assert q.input_scale is None, (
        f"from_float without input_qparams is dynamic (each batch picks its input scale): "
        f"input_scale must be None, got {q.input_scale}")
    with no_grad():
        ref = lin(x).numpy()
    got = q(x)
    assert got.shape == (5, 4) and got.dtype == np.float32, (
        f"(5, 16) in -> (5, 4) float32 out, got {got.shape} {got.dtype}")
    err = np.abs(got.numpy() - ref).max()
    assert err < 0.05, (
        f"int8 weights and activations should stay within a few hundredths of the float "
        f"layer here, max error {err:.3g}: check the zero point subtraction and the scales")
    s, z = determine_qparams(x.numpy().min(), x.numpy().max(), 0, 255)
    xq = quantize_per_tensor(x, float(s), int(z), quint8).dequantize().numpy().astype(np.float64)
    w = q.weight().dequantize().numpy().astype(np.float64)
    want = xq @ w.T + lin.bias.data
    off = np.abs(got.numpy() - want).max()
    assert np.allclose(got.numpy(), want, atol=1e-4), (
        "the output must equal dequantize(q_x) @ dequantize(q_w).T + b (up to float rounding), "
        "with q_x quantized per batch (quint8, the batch's min and max): int32 accumulation is "
        f"exact, so any other difference is a bug; max difference {off:.3g}")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 5. Quantizing a whole model, without touching its code
#
# A model is a tree of modules (module 03). Converting it means replacing every `Linear`
# node by a `QuantizedLinear` built from it — **a new layer that wraps the old one's
# numbers**, while `Linear`, `Sequential` and your earlier modules stay exactly as they are.
# The engine is one recursive walk:
#
# ```
#   swap_modules(Sequential(Linear, ReLU, Linear), {Linear: QuantizedLinear.from_float})
#
#   Sequential                       Sequential
#   ├── "0": Linear(64, 64)   ──►    ├── "0": QuantizedLinear(64, 64)
#   ├── "1": ReLU                    ├── "1": ReLU
#   └── "2": Linear(64, 10)   ──►    └── "2": QuantizedLinear(64, 10)
# ```
#
# Replace a child with `parent.add_module(name, new)`: it keeps the child's **position**
# (`Sequential` runs its children in registration order). Then PyTorch's workflows are a few
# lines each (given below):
#
# * `quantize_dynamic(model)` — copy the model, swap every Linear for a dynamic
#   `QuantizedLinear` (weights per-tensor by default, as PyTorch; `per_channel_dynamic_qconfig`
#   for per-channel);
# * `prepare(model, qconfig)` — copy the model and wrap every Linear in an `Observed` layer
#   whose observer records the layer's **input**; run calibration batches through it;
#   `convert(prepared)` swaps every `Observed` for a static `QuantizedLinear`;
# * `quantize_model(model, calibration_batches=None, per_channel=True)` — the one call the
#   2018 milestone uses: dynamic without calibration data, static with it.
#
# A `QConfig(activation, weight)` names the two observer factories, as in PyTorch.
#
# **Convolutions plug in the same way.** Module 09 computes a convolution as a matmul of the
# weight `(O, C·kh·kw)` with the im2col columns of the input — a Linear applied to every
# window. `QuantizedConv2d` (given) is therefore `QuantizedLinear`'s recipe on those columns:
# quantize the input once, subtract its zero point, pad with integer 0 (which *is* the real
# 0.0 after the subtraction), im2col, int32 matmul, one rescale per output channel. The
# mapping `QUANTIZED_MODULES = {Linear: QuantizedLinear, Conv2d: QuantizedConv2d}` is all the
# conversion functions need to quantize a CNN too.
#
# **How big is a model?** `model_bytes(model)` adds the bytes (`nbytes`) of every parameter
# and every buffer — for a float Linear `4 · (in · out + out)`, for a `QuantizedLinear` one
# byte per weight plus its scales, zero points and float bias. The ratio is a little below 4
# because of those extras; per-channel scales cost `out` more floats than per-tensor.

# %%
#| export
def _flat_linear(conv: Conv2d) -> Linear:
    """A Linear sharing ``conv``'s numbers: weight ``(O, C·kh·kw)`` (a view), the same bias."""
    flat = Linear.__new__(Linear)
    Module.__init__(flat)
    o = conv.weight.shape[0]
    flat.in_features, flat.out_features = int(conv.weight.data.size // o), o
    flat.weight = Parameter(conv.weight.data.reshape(o, -1))
    if conv.bias is None:
        flat.register_parameter("bias", None)
    else:
        flat.bias = conv.bias
    return flat


def _input_qparams(layer: Any, data: np.ndarray) -> tuple[float, int]:
    """The input's ``(scale, zero_point)``: calibrated (static) or from ``data`` (dynamic)."""
    if layer.input_scale is None:
        scale, zp = determine_qparams(data.min(), data.max(), quint8.qmin, quint8.qmax)
        return float(scale), int(zp)
    return float(layer.input_scale.data[0]), int(layer.input_zero_point.data[0])


class QuantizedConv2d(Module):
    """A Conv2d with int8 weights and int32 accumulation (given): module 09's im2col with
    ``QuantizedLinear``'s arithmetic (``torch.ao.nn.quantized.Conv2d``; dynamic when
    ``input_scale`` is None).

    Buffers as :class:`QuantizedLinear`, with ``qweight`` ``(O, C, kh, kw)``.
    Shapes: input ``(N, C, H, W)`` (or ``(C, H, W)``) float32 -> ``(N, O, H_out, W_out)``.
    ``padding_mode`` is the float layer's: the quantized input is padded the same way (zeros
    are the integer 0; PyTorch's quantized convolution has only ``'zeros'`` and ``'reflect'``,
    here every mode of ``Conv2d`` converts).
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 dtype: QDtype = qint8, padding_mode: str = "zeros") -> None:
        super().__init__()
        Conv2d._check(in_channels, out_channels, groups, padding, stride, padding_mode)
        self.padding_mode = padding_mode
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _pair(kernel_size, "kernel_size")
        self.stride = _pair(stride, "stride")
        self.padding = padding if isinstance(padding, str) else _pair(padding, "padding")
        self.dilation, self.groups = _pair(dilation, "dilation"), groups
        self.weight_dtype = dtype
        self.per_channel = False
        kh, kw = self.kernel_size
        self.register_buffer("qweight", Tensor(np.zeros(
            (out_channels, in_channels // groups, kh, kw), dtype=dtype.storage)))
        self.register_buffer("weight_scale", Tensor(np.ones(1, dtype=np.float32)))
        self.register_buffer("weight_zero_point", Tensor(np.zeros(1, dtype=dtype.storage)))
        self.register_buffer("bias", Tensor(np.zeros(out_channels, dtype=np.float32))
                             if bias else None)
        self.register_buffer("input_scale", None)
        self.register_buffer("input_zero_point", None)

    @classmethod
    def from_float(cls, mod: Conv2d, weight_observer: Callable[[], ObserverBase] | None = None,
                   input_qparams: tuple[Any, Any] | None = None) -> QuantizedConv2d:
        """Quantize a float ``Conv2d`` exactly as ``QuantizedLinear.from_float`` quantizes its
        flattened weight ``(O, C·kh·kw)`` (one scale per output channel by default)."""
        flat = QuantizedLinear.from_float(_flat_linear(mod), weight_observer, input_qparams)
        q = cls(mod.in_channels, mod.out_channels, mod.kernel_size, mod.stride, mod.padding,
                mod.dilation, mod.groups, mod.bias is not None, flat.weight_dtype,
                mod.padding_mode)
        q.per_channel = flat.per_channel
        q.qweight = Tensor(flat.qweight.data.reshape(mod.weight.shape))
        for name in ("weight_scale", "weight_zero_point", "bias", "input_scale",
                     "input_zero_point"):
            setattr(q, name, getattr(flat, name))
        return q

    def forward(self, x: Tensor) -> Tensor:
        data = x.data.astype(np.float32, copy=False)
        if data.ndim == 3:
            return Tensor(self.forward(Tensor(data[None])).data[0])
        n, _, h, w = data.shape
        (kh, kw), (sh, sw), (dh, dw) = self.kernel_size, self.stride, self.dilation
        (ph, pw), (eh, ew) = _conv_padding(self.padding, self.kernel_size, self.stride,
                                           self.dilation)
        s, z = _input_qparams(self, data)
        qx = quantize_per_tensor(data, s, z, quint8).int_repr().data       # (N, C, H, W) uint8
        xi = qx.astype(np.int32) - np.int32(z)           # integer 0 is the real 0.0 now
        xi = np.pad(xi, ((0, 0), (0, 0), (ph, ph + eh), (pw, pw + ew)),
                    mode=PADDING_MODES[self.padding_mode])
        cols = im2col(xi, (kh, kw), (sh, sw), (dh, dw))                     # (N, C*kh*kw, L)
        o, g = self.out_channels, self.groups
        cols = cols.reshape(n, g, -1, cols.shape[-1])                       # (N, G, K, L)
        wz = self.weight_zero_point.data.astype(np.int32).reshape(-1, 1)
        wi = self.qweight.data.reshape(o, -1).astype(np.int32) - wz         # (O, K)
        acc = np.matmul(wi.reshape(g, o // g, -1), cols).reshape(n, o, -1)  # (N, O, L) int32
        out = acc.astype(np.float32) * (np.float32(s) * self.weight_scale.data).reshape(1, -1, 1)
        if self.bias is not None:
            out = out + self.bias.data.reshape(1, -1, 1)
        ho, wo = out_size(h + eh, kh, sh, ph, dh), out_size(w + ew, kw, sw, pw, dw)
        return Tensor(out.reshape(n, o, ho, wo))

    def extra_repr(self) -> str:
        mode = "dynamic" if self.input_scale is None else "static"
        scheme = "per_channel" if self.per_channel else "per_tensor"
        groups = f", groups={self.groups}" if self.groups != 1 else ""
        if self.padding_mode != "zeros":
            groups += f", padding_mode={self.padding_mode}"
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, padding={self.padding}{groups}, qscheme={scheme}, "
                f"activations={mode}")


class QConfig(NamedTuple):
    """Observer factories for a layer's input (``activation``) and ``weight``
    (``torch.ao.quantization.QConfig``). ``activation=None`` means dynamic quantization."""

    activation: Callable[[], ObserverBase] | None
    weight: Callable[[], ObserverBase]


_PER_TENSOR_WEIGHT = MinMaxObserver.with_args(dtype=qint8, qscheme=per_tensor_symmetric)
_PER_CHANNEL_WEIGHT = PerChannelMinMaxObserver.with_args(dtype=qint8,
                                                         qscheme=per_channel_symmetric)
default_qconfig = QConfig(activation=MinMaxObserver.with_args(dtype=quint8),
                          weight=_PER_TENSOR_WEIGHT)
default_per_channel_qconfig = QConfig(activation=MinMaxObserver.with_args(dtype=quint8),
                                      weight=_PER_CHANNEL_WEIGHT)
default_dynamic_qconfig = QConfig(activation=None, weight=_PER_TENSOR_WEIGHT)
per_channel_dynamic_qconfig = QConfig(activation=None, weight=_PER_CHANNEL_WEIGHT)

#: Float layer type -> its quantized replacement (a class with ``from_float``).
QUANTIZED_MODULES: dict[type, Any] = {Linear: QuantizedLinear, Conv2d: QuantizedConv2d}


def swap_modules(module: Module, mapping: dict[type, Callable[[Module], Module]]) -> Module:
    """Replace, everywhere in the tree, each module whose exact type is a key of ``mapping``.

    Args:
        module: the root; its children are replaced *in place*.
        mapping: ``{layer type: function(old module) -> new module}``.

    Returns:
        The new root: ``mapping[type(module)](module)`` if the root itself matches, else
        ``module`` (with its descendants swapped).

    APPROACH:
        1. If ``type(module) in mapping``: return ``mapping[type(module)](module)`` (do not
           look inside a module you replace).
        2. Otherwise, for each ``(name, child)`` in ``list(module._modules.items())`` that is
           not None: ``module.add_module(name, swap_modules(child, mapping))``.
        3. Return ``module``.

    EXAMPLE:
        >>> m = Sequential(Linear(4, 3), ReLU(), Sequential(Linear(3, 2)))
        >>> m = swap_modules(m, {Linear: QuantizedLinear.from_float})
        >>> [type(c).__name__ for c in m.modules()]
        ['Sequential', 'QuantizedLinear', 'ReLU', 'Sequential', 'QuantizedLinear']

    HINT: ``setattr(module, name, new)`` works for most modules but moves the child to the
    *end* of a ``Sequential``'s order (module 03's ``__setattr__`` pops and re-adds it);
    ``add_module`` replaces the entry where it is. Match ``type(x)`` exactly, as PyTorch
    does: a subclass of Linear with its own ``forward`` is not a Linear to quantize.
    """
    # BEGIN SOLUTION NO PROMPT
    if type(module) in mapping:
        return mapping[type(module)](module)
    for name, child in list(module._modules.items()):
        if child is not None:
            module.add_module(name, swap_modules(child, mapping))
    return module
    # END SOLUTION
    raise NotImplementedError("module 15: implement swap_modules (see its docstring)")  # STUB


def model_bytes(model: Module) -> int:
    """Bytes of a model's stored state: every parameter and every buffer.

    APPROACH: add ``p.data.nbytes`` for every ``p`` in ``model.parameters()`` and
    ``b.data.nbytes`` for every ``b`` in ``model.buffers()``; return an ``int``.

    EXAMPLE:
        >>> model_bytes(Linear(64, 10))
        2600
        >>> model_bytes(QuantizedLinear.from_float(Linear(64, 10)))
        730

    HINT: count bytes, not elements (``nbytes``, not ``size``): an int8 weight is 1 byte, a
    float32 one 4. A quantized layer has no parameters at all — its state is in buffers.
    """
    # BEGIN SOLUTION NO PROMPT
    total = sum(p.data.nbytes for p in model.parameters())
    total += sum(b.data.nbytes for b in model.buffers())
    return int(total)
    # END SOLUTION
    raise NotImplementedError("module 15: implement model_bytes (see its docstring)")  # STUB


class Observed(Module):
    """A float layer with an observer on its input: what :func:`prepare` puts in its place.

    ``forward(x)`` records ``x`` in ``input_observer`` and returns ``layer(x)``.
    """

    def __init__(self, layer: Module, qconfig: QConfig) -> None:
        super().__init__()
        if qconfig.activation is None:
            raise ValueError("static quantization needs an activation observer in the qconfig")
        self.layer = layer
        self.input_observer = qconfig.activation()
        self.qconfig = qconfig

    def forward(self, x: Tensor) -> Tensor:
        self.input_observer(x)
        return self.layer(x)


def _qconfigs(spec: Any, default: QConfig) -> dict[type, QConfig]:
    if spec is None:
        return {t: default for t in QUANTIZED_MODULES}
    if isinstance(spec, dict):
        return dict(spec)
    return {t: default for t in spec}


def quantize_dynamic(model: Module, qconfig_spec: Any = None, dtype: QDtype = qint8,
                     inplace: bool = False) -> Module:
    """Dynamic quantization (``torch.ao.quantization.quantize_dynamic``): every layer of a
    type in ``qconfig_spec`` (a set of types, or ``{type: QConfig}``; default every type in
    ``QUANTIZED_MODULES`` with ``default_dynamic_qconfig``) becomes its quantized version
    with activations quantized per batch. The original model is left unchanged unless
    ``inplace``."""
    if dtype is not qint8:
        raise ValueError("quantize_dynamic supports qint8 weights")
    model = model if inplace else copy.deepcopy(model)
    configs = _qconfigs(qconfig_spec, default_dynamic_qconfig)
    mapping = {t: functools.partial(QUANTIZED_MODULES[t].from_float, weight_observer=c.weight)
               for t, c in configs.items()}
    return swap_modules(model, mapping)


def prepare(model: Module, qconfig: QConfig = default_qconfig, inplace: bool = False) -> Module:
    """Wrap every quantizable layer in an :class:`Observed` layer (``torch.ao.quantization
    .prepare``); run calibration batches through the result, then :func:`convert` it."""
    model = model if inplace else copy.deepcopy(model)
    return swap_modules(model, {t: functools.partial(Observed, qconfig=qconfig)
                                for t in QUANTIZED_MODULES})


def _convert_observed(obs: Observed) -> Module:
    scale, zero_point = obs.input_observer.calculate_qparams()
    return QUANTIZED_MODULES[type(obs.layer)].from_float(
        obs.layer, weight_observer=obs.qconfig.weight,
        input_qparams=(float(scale[0]), int(zero_point[0])))


def convert(model: Module, inplace: bool = False) -> Module:
    """Replace every :class:`Observed` layer by its static quantized version
    (``torch.ao.quantization.convert``)."""
    model = model if inplace else copy.deepcopy(model)
    return swap_modules(model, {Observed: _convert_observed})


def quantize_model(model: Module, calibration_batches: Iterable[Any] | None = None,
                   per_channel: bool = True) -> Module:
    """A quantized copy of ``model``: static when ``calibration_batches`` (Tensors or arrays
    of inputs) are given, dynamic otherwise; per-channel (default) or per-tensor weights.
    The float model is left unchanged."""
    if calibration_batches is None:
        qconfig = per_channel_dynamic_qconfig if per_channel else default_dynamic_qconfig
        return quantize_dynamic(model, {t: qconfig for t in QUANTIZED_MODULES})
    prepared = prepare(model, default_per_channel_qconfig if per_channel else default_qconfig)
    prepared.eval()
    with no_grad():
        for batch in calibration_batches:
            prepared(batch if isinstance(batch, Tensor) else Tensor(batch))
    return convert(prepared, inplace=True)


# %% [raw]
# # BEGIN QUESTION
# name: convert
# points: 0

# %% [markdown]
# ### Check: converting a model

# %% [raw]
# # BEGIN TESTS

# %%
def test_swap_modules_keeps_the_order(swap_modules, QuantizedLinear, Linear, ReLU, Sequential,
                                      Tensor, manual_seed, np):
    manual_seed(0)
    model = Sequential(Linear(4, 8), ReLU(), Sequential(Linear(8, 3)))
    x = Tensor(np.random.default_rng(0).standard_normal((6, 4)).astype(np.float32))
    out = swap_modules(model, {Linear: QuantizedLinear.from_float})
    names = [type(m).__name__ for m in out.modules()]
    assert names == ["Sequential", "QuantizedLinear", "ReLU", "Sequential", "QuantizedLinear"], (
        f"every Linear, also inside a nested Sequential, becomes a QuantizedLinear in its own "
        f"place; got {names} (setattr moves a child to the end: use add_module)")
    y = out(x)
    assert y.shape == (6, 3), f"the swapped model still maps (6, 4) to (6, 3), got {y.shape}"
    lone = swap_modules(Linear(2, 2), {Linear: QuantizedLinear.from_float})
    assert type(lone).__name__ == "QuantizedLinear", (
        f"a matching root is replaced too (swap_modules(Linear(2, 2), ...) returns the "
        f"replacement), got {type(lone).__name__}")

# %%
def test_model_bytes_counts_parameters_and_buffers(model_bytes, QuantizedLinear, Linear,
                                                   Sequential, ReLU):
    model = Sequential(Linear(64, 64), ReLU(), Linear(64, 10))
    assert model_bytes(model) == 4 * (64 * 64 + 64 + 64 * 10 + 10), (
        f"float32: 4 bytes per parameter = 19240, got {model_bytes(model)}")
    q = QuantizedLinear.from_float(Linear(64, 10))
    assert model_bytes(q) == 64 * 10 + 10 * 4 + 10 + 10 * 4, (
        f"int8 weights (640 B) + 10 float32 scales (40 B) + 10 int8 zero points (10 B) + "
        f"float32 bias (40 B) = 730, got {model_bytes(q)}: count buffers, in bytes")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 6. Systems view: 4× smaller — and how much less accurate?
#
# The question every deployment asks: what does INT8 cost in accuracy, and what does it buy
# in size? Measure it on the 1986 milestone's network: an MLP `64 → 64 (ReLU) → 10` trained
# on the 8×8 digits (1,437 training and 360 test images, shipped with the course).
#
# ```
#   float32 MLP: (64·64 + 64 + 64·10 + 10) · 4 B = 19,240 B
#   INT8:         weights 1 B each + scales, zero points and float bias per output neuron
# ```
#
# ### Exercise: measure it
#
# Run the cell. It trains the float model (a few seconds), then quantizes copies of it four
# ways: dynamic with per-tensor and per-channel weights, and static (8 calibration batches
# of training images) with both. For each it measures `model_bytes`, the size ratio, test
# accuracy, the accuracy drop and the time per batch. Predict first: which variant loses the
# most accuracy? Is the integer version faster in NumPy?

# %%
from tinytorch_data.loaders import load_digits  # the course's shipped data (checksum verified)

from tinytorch.losses import CrossEntropyLoss
from tinytorch.optimizers import Adam
from tinytorch.profiling import measure  # module 14: CPU time, warm-up, median
from tinytorch.training import Trainer

digits = load_digits()
train_x = (digits.train_x.astype(np.float32) / np.float32(16.0))   # (1437, 64) in [0, 1]
test_x = Tensor(digits.test_x.astype(np.float32) / np.float32(16.0))  # (360, 64)
manual_seed(0)
float_model = Sequential(Linear(64, 64), ReLU(), Linear(64, 10))
trainer = Trainer(float_model, CrossEntropyLoss(), Adam(float_model.parameters(), lr=3e-3))
batch_rng = np.random.default_rng(0)
for _ in range(30):
    trainer.train_epoch(train_x, digits.train_y, 32, batch_rng)
float_model.eval()


def accuracy_of(model):
    with no_grad():
        return float((model(test_x).numpy().argmax(axis=1) == digits.test_y).mean())


def ms_per_batch(model, warmup=2, repeats=20):
    """Median CPU time of one test batch in ms (this thread's clock, module 14's rules)."""
    with no_grad():
        return measure(lambda: model(test_x), warmup=warmup, repeats=repeats).median / 1e6


calibration = [train_x[i:i + 32] for i in range(0, 8 * 32, 32)]
variants = {
    "float32": float_model,
    "dynamic, per-tensor": quantize_model(float_model, per_channel=False),
    "dynamic, per-channel": quantize_model(float_model),
    "static, per-tensor": quantize_model(float_model, calibration, per_channel=False),
    "static, per-channel": quantize_model(float_model, calibration),
}
base_bytes, base_acc = model_bytes(float_model), accuracy_of(float_model)
print(f"{'model':22s} {'bytes':>7s} {'smaller':>8s} {'accuracy':>9s} {'drop (pts)':>11s} "
      f"{'ms/batch':>9s}")
rows = {}
for name, model in variants.items():
    size, acc, ms = model_bytes(model), accuracy_of(model), ms_per_batch(model)
    rows[name] = (base_bytes / size, 100 * (base_acc - acc), ms)
    print(f"{name:22s} {size:7,d} {base_bytes / size:7.2f}x {acc:9.2%} "
          f"{100 * (base_acc - acc):11.2f} {ms:9.3f}")
int8 = [r for name, r in rows.items() if name != "float32"]
slowest_ratio = min(r[2] for r in int8) / rows["float32"][2]
print(f"INT8: {min(r[0] for r in int8):.2f}x to {max(r[0] for r in int8):.2f}x smaller, largest "
      f"drop {max(r[1] for r in int8):.2f} points, at least {slowest_ratio:.1f}x the float "
      f"model's time")
# Expected shape (exact numbers depend on the run): the float model near 97% (between 95 % and
# 98.5 %); every INT8 variant 3.5x to 3.9x smaller (per-channel pays a few hundred bytes for its
# scales) with an accuracy drop of at most 1 point; the integer matmul is *not* faster here:
# at least 1.0x the float model's time (several times more).

# %% [markdown]
# What the numbers say. The **size** ratio is set by arithmetic, not by training: 1 byte
# instead of 4 per weight, minus the overhead of the float bias and the scales (for a layer
# with 64 inputs, one float32 scale per row adds 4 bytes to 64, about 6%). The **accuracy**
# barely moves because the rounding error of each weight (at most half a step, `s/2`) is
# small next to the weight itself and errors of opposite sign cancel in the 64-term sums.
# The **time** goes the other way in NumPy: it has no integer BLAS, so `int32 @ int32` runs
# a plain loop while `float32 @ float32` runs an optimised kernel, and quantizing the input
# costs a few passes over it. Real INT8 speed-ups (2–4× on CPUs) come from kernels such as
# FBGEMM or oneDNN that multiply 8-bit integers with SIMD instructions and move 4× fewer
# bytes; module 18 looks at what makes a kernel fast.

# %% [markdown]
# ## 7. ML systems thinking (graded by hand)

# %% [raw]
# # BEGIN QUESTION
# name: written_outliers
# manual: true
# points: 5

# %% [markdown]
# **Q1 · Outliers.** A layer's input is almost always in [-1, 1], but one calibration batch
# contains a single value of 40. What scale does a `MinMaxObserver` choose for `quint8`, and
# what happens to the resolution of the typical values? Name two remedies and their costs.

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# The range becomes [-1, 40], so `s = 41 / 255 ≈ 0.16`: the typical interval [-1, 1] gets
# only about 12 of the 256 levels, and their rounding error grows about 20× compared with
# a [-1, 1] range (`s = 2/255`). Remedies: a `MovingAverageMinMaxObserver` (one outlier batch
# moves the range only a little; costs: the range lags and rare large values saturate), a
# percentile or histogram observer that clips the top 0.01% (outliers saturate instead of
# degrading everything else), per-channel scales when the outlier lives in one channel (a
# few more floats), or keeping that layer in float (less compression).

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_dynamic_static
# manual: true
# points: 5

# %% [markdown]
# **Q2 · Dynamic or static.** Compare dynamic and static activation quantization for (a) a
# transformer serving requests of very different lengths on a CPU and (b) a CNN on a phone
# with an integer-only accelerator. Which would you pick for each, and why?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# (a) Dynamic: activation ranges vary from request to request, the cost of a min/max pass
# is small next to large matmuls, and there is no calibration set to maintain — PyTorch's
# `quantize_dynamic` targets exactly Linear/LSTM-heavy models on CPU. (b) Static: an
# integer-only accelerator cannot compute float min/max and choose scales on the fly, and
# with fixed scales each layer's int32 output can be requantized directly to the next
# layer's int8 input (no float between layers). It needs a representative calibration set;
# inputs outside the calibrated range saturate.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_budget
# manual: true
# points: 5

# %% [markdown]
# **Q3 · Memory and bandwidth.** A 7-billion-parameter language model generates one token per
# forward pass, and each pass reads every weight once. Estimate the weight memory in float16
# and in int8, and the best tokens per second on a device with 100 GB/s of memory bandwidth.
# Why does INT8 help this workload even without faster arithmetic?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# float16: 14 GB, so at most 100 / 14 ≈ 7 tokens/s; int8: 7 GB (plus ~1% for scales), about
# 14 tokens/s. Generating one token is a matrix-vector product per layer: about 2 FLOPs per
# weight read, far below what the arithmetic units can do, so the time is set by bytes moved
# (memory-bound, the roofline of module 18). Halving the bytes per weight halves the time,
# whatever the speed of integer arithmetic; it also lets the model fit on a smaller device.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## Summary
#
# You built INT8 quantization with PyTorch's exact conventions: the affine rule with round
# half to even and saturation, per-tensor and per-channel scales, observers that calibrate
# them, a Linear layer that multiplies int8 by int8 into int32, and the conversion of a whole
# model by wrapping its layers. You measured a model about 3.5–4× smaller with almost no
# accuracy lost. Export with `python export.py 15`. Module 16 shrinks models another way:
# by removing weights (pruning), factorising them, and distilling a small model from a big
# one.
