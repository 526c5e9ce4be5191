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
# # Module 09 · Spatial (convolutions)
#
# A `Linear` layer on a 28×28 image treats pixel (0, 0) and pixel (27, 27) as unrelated
# inputs, and must learn "an edge" separately at every position. A **convolution** slides one
# small filter over the whole image: the same few weights look at every position (*weight
# sharing*), and each output only sees a small neighbourhood (*local connectivity*). That is
# the idea of LeCun's 1998 network, and it is what you build here: `Conv2d`, `MaxPool2d`,
# `AvgPool2d` and `BatchNorm2d`, with gradients, at a speed that can train a CNN on a laptop
# CPU.
#
# ## Learning objectives
#
# By the end of this module you can:
#
# 1. compute a 2-D convolution by its definition (four nested loops) and give its output
#    shape for any kernel size, stride and padding;
# 2. turn convolution into **one matrix product** with *im2col*: a strided view of every
#    window (no copy, module 01's strides), then a reshape;
# 3. derive and implement the backward pass of convolution (`col2im`, the adjoint of im2col),
#    of max pooling (the gradient goes to the winner of each window) and of average pooling;
# 4. implement batch normalisation with its batch statistics in training, running statistics
#    in evaluation, and the one-line backward that makes it cheap;
# 5. **measure** the loop version against im2col, and the memory im2col costs;
# 6. **measure** what batch normalisation buys in training, and how it depends on the batch
#    size.
#
# ## How to work through this notebook
#
# Fill in every function that raises `NotImplementedError` (docstrings give what / APPROACH /
# EXAMPLE / HINT) and run each `grader.check(...)` cell. Cells starting with `#| export`
# become `tinytorch/spatial.py` (`python export.py 09`); `tinytorch.nn` then offers `Conv2d`,
# `MaxPool2d`, `AvgPool2d`, `BatchNorm2d`, and `tinytorch.nn.functional` offers `conv2d`,
# `max_pool2d`, `avg_pool2d` and `batch_norm`, exactly as in PyTorch. Your `Tensor` (01),
# autograd (05) and `Module` (03) come from your package.
#
# Shapes follow PyTorch everywhere: images are `(N, C, H, W)` (batch, channels, height,
# width), a convolution weight is `(out_channels, in_channels, kh, kw)`.

# %%
import time

import numpy as np

# %% [markdown]
# ## 0. The provided machinery
#
# The first export cell is given: the imports, two helpers and the output-size formula
#
# ```
#   H_out = floor((H + 2·padding - kernel) / stride) + 1        (the same for W)
# ```
#
# `_pair(3)` turns PyTorch's "an int or a pair" arguments into `(3, 3)`.

# %%
#| export
"""Module 09 · Spatial — depends on: tensor, autograd, layers; used by: the 1998 CNN milestone.

Convolution (``Conv2d``, by loops and by im2col + one matrix product), pooling
(``MaxPool2d``, ``AvgPool2d``) and batch normalisation (``BatchNorm2d``), all differentiable,
with PyTorch's names, arguments, defaults, weight layout and initialisation.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from tinytorch.autograd import gradcheck  # noqa: F401 - the checks compare with finite differences
from tinytorch.layers import Module, Parameter
from tinytorch.tensor import Context, Function, Tensor, default_generator, manual_seed  # noqa: F401

# ----------------------------------------------------------------------------- provided
IntPair = tuple[int, int]


def _pair(value: Any, name: str = "argument") -> IntPair:
    """``3 -> (3, 3)``; ``(3, 2) -> (3, 2)``: PyTorch's "int or pair" arguments.

    Raises:
        ValueError: anything else (e.g. PyTorch's ``padding='same'``, not supported here).
    """
    items = tuple(value) if isinstance(value, (tuple, list)) else (value, value)
    if len(items) != 2 or not all(isinstance(v, (int, np.integer)) for v in items):
        raise ValueError(f"{name} must be an int or a pair of ints, got {value!r}")
    return int(items[0]), int(items[1])


def out_size(size: int, kernel: int, stride: int, padding: int) -> int:
    """Output length along one axis: ``(size + 2 * padding - kernel) // stride + 1``."""
    return (size + 2 * padding - kernel) // stride + 1


def _pad(x: np.ndarray, padding: IntPair, value: float = 0.0) -> np.ndarray:
    """Pad the two spatial axes of ``(N, C, H, W)`` by ``padding`` on each side (no copy
    when there is nothing to pad)."""
    ph, pw = padding
    if ph == 0 and pw == 0:
        return x
    return np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=value)


def _crop(x: np.ndarray, padding: IntPair) -> np.ndarray:
    """Undo ``_pad``: drop ``padding`` rows and columns on each side."""
    ph, pw = padding
    return x[:, :, ph:x.shape[2] - ph, pw:x.shape[3] - pw]


# %% [markdown]
# ## 1. Convolution by its definition
#
# A convolution layer (strictly a *cross-correlation*: the kernel is not flipped, as in
# PyTorch) slides each of its `O` filters over the input. Filter `o` has one `kh × kw` slice per
# input channel; at each position it multiplies the window it covers element by element and
# adds everything up:
#
# ```
#   out[n, o, i, j] = bias[o] + Σ_c Σ_u Σ_v  x_pad[n, c, i·s + u, j·s + v] · weight[o, c, u, v]
#
#   input x (1 channel, 4×4)     kernel (2×2)       output (3×3), stride 1, padding 0
#   ┌────┬────┬────┬────┐        ┌───┬───┐
#   │ 0  │ 1  │ 2  │ 3  │        │ 1 │ 0 │         out[0, 0] = 0·1 + 1·0 + 4·0 + 5·1 = 5
#   ├────┼────┼────┼────┤        ├───┼───┤         out[0, 1] = 1·1 + 2·0 + 5·0 + 6·1 = 7
#   │ 4  │ 5  │ 6  │ 7  │        │ 0 │ 1 │         ...
#   ├────┼────┼────┼────┤        └───┴───┘         every output looks at a 2×2 window;
#   │ 8  │ 9  │ 10 │ 11 │                          the window moves `stride` pixels a step
#   ...
# ```
#
# **Padding** adds `p` rows/columns of zeros around the image so that the border pixels are
# seen as often as the centre ones (`padding = k // 2` keeps `H_out = H` for odd `k` and
# stride 1). **Stride** `s` moves the window `s` pixels at a time and divides the output size
# by about `s`.
#
# Write it first exactly as the formula says, with loops over the batch, the filters and the
# output positions, on plain NumPy arrays. It is slow — you will measure how slow in section 6
# — but it is the definition every faster version is checked against.

# %%
#| export
def conv2d_loops(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None = None,
                 stride: Any = 1, padding: Any = 0) -> np.ndarray:
    """2-D convolution by its definition, with Python loops (the slow comparison point).

    Args:
        x: input ``(N, C, H, W)``.
        weight: filters ``(O, C, kh, kw)``.
        bias: ``(O,)`` or None.
        stride, padding: an int or a pair ``(along H, along W)``.

    Returns:
        ``(N, O, H_out, W_out)`` with ``H_out = out_size(H, kh, sh, ph)`` (same for W), in
        ``x``'s dtype.

    APPROACH:
        1. ``(sh, sw), (ph, pw) = _pair(stride), _pair(padding)``; read the shapes; compute
           ``ho``, ``wo`` with ``out_size``; ``xp = _pad(x, (ph, pw))``.
        2. ``out = np.zeros((n, o, ho, wo), dtype=x.dtype)``.
        3. Loop over ``b`` in the batch, ``k`` over the filters, ``i`` over ``ho`` and ``j``
           over ``wo``: ``patch = xp[b, :, i*sh : i*sh + kh, j*sw : j*sw + kw]`` (shape
           ``(C, kh, kw)``) and ``out[b, k, i, j] = np.sum(patch * weight[k])``.
        4. Add ``bias[k]`` to every output of filter ``k`` (``out += bias.reshape(1, o, 1, 1)``)
           when a bias is given.

    EXAMPLE:
        >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
        >>> conv2d_loops(x, np.array([[[[1.0, 0.0], [0.0, 1.0]]]], dtype=np.float32))[0, 0]
        array([[ 5.,  7.,  9.],
               [13., 15., 17.],
               [21., 23., 25.]], dtype=float32)

    HINT: the window of output ``(i, j)`` starts at ``(i*sh, j*sw)`` in the *padded* input,
    not at ``(i, j)``; a stride of 2 skips every other position.
    """
    # BEGIN SOLUTION NO PROMPT
    (sh, sw), (ph, pw) = _pair(stride, "stride"), _pair(padding, "padding")
    n, c, h, w = x.shape
    o, _, kh, kw = weight.shape
    ho, wo = out_size(h, kh, sh, ph), out_size(w, kw, sw, pw)
    xp = _pad(x, (ph, pw))
    out = np.zeros((n, o, ho, wo), dtype=x.dtype)
    for b in range(n):
        for k in range(o):
            for i in range(ho):
                for j in range(wo):
                    patch = xp[b, :, i * sh:i * sh + kh, j * sw:j * sw + kw]
                    out[b, k, i, j] = np.sum(patch * weight[k])
    if bias is not None:
        out += bias.reshape(1, o, 1, 1)
    return out
    # END SOLUTION
    raise NotImplementedError("module 09: implement conv2d_loops (see its docstring)")  # STUB


# %% [raw]
# # BEGIN QUESTION
# name: conv_loops
# points: 0

# %% [markdown]
# ### Check: convolution by loops

# %% [raw]
# # BEGIN TESTS

# %%
def test_conv2d_loops_hand_computed(conv2d_loops, np):
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    k = np.array([[[[1.0, 0.0], [0.0, 1.0]]]], dtype=np.float32)
    out = conv2d_loops(x, k)
    assert out.shape == (1, 1, 3, 3), (
        f"a 2x2 kernel on a 4x4 image gives 3x3 outputs (stride 1, no padding), got {out.shape}")
    assert np.allclose(out[0, 0, 0], [5.0, 7.0, 9.0]), (
        f"out[0, 0] = x[0,0]*1 + x[1,1]*1 = 0 + 5 = 5, then 7, 9; got {out[0, 0, 0].tolist()}")
    assert out.dtype == np.float32, f"keep the input's dtype (float32), got {out.dtype}"


# %%
def test_conv2d_loops_stride_padding_bias(conv2d_loops, np):
    x = np.ones((2, 3, 5, 5), dtype=np.float32)
    w = np.ones((4, 3, 3, 3), dtype=np.float32)
    b = np.array([0.0, 1.0, 2.0, 3.0], dtype=np.float32)
    out = conv2d_loops(x, w, b, stride=2, padding=1)
    assert out.shape == (2, 4, 3, 3), (
        f"(5 + 2*1 - 3) // 2 + 1 = 3 positions per axis: expected (2, 4, 3, 3), got {out.shape}")
    assert np.isclose(out[0, 0, 1, 1], 27.0), (
        f"a window fully inside a ones image sums 3 channels x 9 = 27, got {out[0, 0, 1, 1]}")
    assert np.isclose(out[0, 0, 0, 0], 12.0), (
        f"the corner window overlaps 2x2 real pixels (the rest is zero padding): 3 x 4 = 12, "
        f"got {out[0, 0, 0, 0]}")
    assert np.isclose(out[1, 3, 1, 1], 30.0), (
        f"filter 3 adds its bias 3.0 to every output: expected 30, got {out[1, 3, 1, 1]}")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 2. im2col: every window as a column, without copying twice
#
# The loops do `N·O·H_out·W_out` tiny dot products. The trick every fast CPU library uses is
# to lay all the windows out as the columns of one matrix (*im2col*, "image to columns") so
# that the whole convolution becomes **one matrix product**:
#
# ```
#   x (N, C, H, W) ──windows──►  (N, C, kh, kw, H_out, W_out)   a VIEW: no copy (strides!)
#                  ──reshape──►  cols (N, C·kh·kw, L)            L = H_out·W_out; one copy
#
#   weight (O, C, kh, kw) ──reshape──► W2 (O, C·kh·kw)
#
#   out = W2 @ cols  ─────────────────► (N, O, L) ──reshape──► (N, O, H_out, W_out)
# ```
#
# Column `l = i·W_out + j` of `cols[n]` is the window of output `(i, j)`, flattened in the
# order `(c, u, v)` — the same order in which `weight[o]` is flattened into row `o` of `W2`.
# PyTorch calls im2col `torch.nn.functional.unfold` and uses exactly this layout.
#
# **The windows view.** Module 01 taught that an array is a buffer plus *strides*: the number
# of bytes to skip to move one step along each axis. A window view needs six axes over the
# same buffer, with strides you can write down:
#
# ```
#   x.strides = (sN, sC, sH, sW)              (bytes; x is (N, C, H, W))
#   view axis:    n    c    u    v    i        j
#   shape:      (N,   C,   kh,  kw,  H_out,   W_out)
#   strides:    (sN,  sC,  sH,  sW,  sH·sh,   sW·sw)      u, v move inside a window;
#                                                         i, j move the window by the stride
# ```
#
# `numpy.lib.stride_tricks.as_strided(x, shape, strides, writeable=False)` builds that view
# in microseconds, whatever the size of `x`. (Read-only: a write through overlapping windows
# would change several "copies" at once.) The reshape to `(N, C·kh·kw, L)` then copies every
# pixel into each window it belongs to: that copy is where im2col's memory goes (section 6).
#
# **col2im, the way back.** The backward pass needs the adjoint: given a gradient for every
# column entry, add it back to the pixel it was copied from. A pixel inside `k` windows
# receives `k` contributions. Loop over the `kh·kw` offsets `(u, v)` of the kernel (9
# iterations for 3×3, whatever the image size) and add a whole strided slice at once:
#
# ```
#   for u, v in kernel offsets:
#       x_grad[:, :, u : u + sh·H_out : sh,  v : v + sw·W_out : sw] += windows_grad[:, :, u, v]
# ```

# %%
#| export
def sliding_windows(x: np.ndarray, kernel_size: IntPair, stride: IntPair) -> np.ndarray:
    """A read-only view of every ``kh × kw`` window of ``x``, without copying.

    Args:
        x: ``(N, C, H, W)`` (already padded).
        kernel_size: ``(kh, kw)``.
        stride: ``(sh, sw)``.

    Returns:
        A view of shape ``(N, C, kh, kw, H_out, W_out)`` with
        ``view[n, c, u, v, i, j] == x[n, c, i*sh + u, j*sw + v]``.

    APPROACH:
        1. ``n, c, h, w = x.shape``; ``ho = (h - kh) // sh + 1``, ``wo = (w - kw) // sw + 1``.
        2. ``s_n, s_c, s_h, s_w = x.strides`` (in bytes).
        3. Return ``as_strided(x, shape=(n, c, kh, kw, ho, wo), strides=(s_n, s_c, s_h, s_w,
           s_h * sh, s_w * sw), writeable=False)``.

    EXAMPLE:
        >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
        >>> win = sliding_windows(x, (2, 2), (2, 2))
        >>> win.shape, win[0, 0, :, :, 1, 0].tolist(), bool(np.shares_memory(win, x))
        ((1, 1, 2, 2, 2, 2), [[8.0, 9.0], [12.0, 13.0]], True)

    HINT: strides are in *bytes* in NumPy; taking them from ``x.strides`` keeps the view
    right for any dtype and for inputs that are themselves views.
    """
    # BEGIN SOLUTION NO PROMPT
    kh, kw = kernel_size
    sh, sw = stride
    n, c, h, w = x.shape
    ho, wo = (h - kh) // sh + 1, (w - kw) // sw + 1
    s_n, s_c, s_h, s_w = x.strides
    return as_strided(x, shape=(n, c, kh, kw, ho, wo),
                      strides=(s_n, s_c, s_h, s_w, s_h * sh, s_w * sw), writeable=False)
    # END SOLUTION
    raise NotImplementedError("module 09: implement sliding_windows (see its docstring)")  # STUB


def im2col(x: np.ndarray, kernel_size: IntPair, stride: IntPair) -> np.ndarray:
    """Every window of ``x`` as a column: ``(N, C, H, W) -> (N, C*kh*kw, H_out*W_out)``.

    Args:
        x: ``(N, C, H, W)`` (already padded).
        kernel_size, stride: pairs, as in ``sliding_windows``.

    Returns:
        ``cols`` with ``cols[n, (c*kh + u)*kw + v, i*W_out + j] == x[n, c, i*sh + u, j*sw + v]``
        (a new, contiguous array).

    APPROACH:
        1. ``win = sliding_windows(x, kernel_size, stride)`` — ``(N, C, kh, kw, H_out,
           W_out)``.
        2. Return ``win.reshape(n, c * kh * kw, ho * wo)``: merging the axes copies each
           window into its column.

    EXAMPLE:
        >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
        >>> cols = im2col(x, (2, 2), (2, 2))
        >>> cols.shape, cols[0, :, 1].tolist()
        ((1, 4, 4), [2.0, 3.0, 6.0, 7.0])

    HINT: the axes are already in the right order; one ``reshape`` does it (NumPy copies
    because the view is not contiguous).
    """
    # BEGIN SOLUTION NO PROMPT
    win = sliding_windows(x, kernel_size, stride)
    n, c, kh, kw, ho, wo = win.shape
    return win.reshape(n, c * kh * kw, ho * wo)
    # END SOLUTION
    raise NotImplementedError("module 09: implement im2col (see its docstring)")  # STUB


def col2im(cols: np.ndarray, x_shape: tuple[int, ...], kernel_size: IntPair,
           stride: IntPair) -> np.ndarray:
    """The adjoint of ``im2col``: add every column entry back into the pixel it came from.

    Args:
        cols: ``(N, C*kh*kw, H_out*W_out)``, e.g. the gradient of ``im2col``'s output.
        x_shape: ``(N, C, H, W)``, the shape of the (padded) image ``im2col`` read.
        kernel_size, stride: as in ``im2col``.

    Returns:
        ``(N, C, H, W)`` in ``cols``' dtype; a pixel covered by ``k`` windows is the sum of
        its ``k`` entries (a pixel in no window gets 0).

    APPROACH:
        1. Compute ``ho``, ``wo`` from ``x_shape`` as in ``sliding_windows``.
        2. ``win = cols.reshape(n, c, kh, kw, ho, wo)``; ``out = np.zeros(x_shape,
           dtype=cols.dtype)``.
        3. For every kernel offset ``(u, v)``:
           ``out[:, :, u:u + sh*ho:sh, v:v + sw*wo:sw] += win[:, :, u, v]``.
        4. Return ``out``.

    EXAMPLE:
        >>> ones = np.ones((1, 4, 9), dtype=np.float32)      # 2x2 kernel, stride 1 on 4x4
        >>> col2im(ones, (1, 1, 4, 4), (2, 2), (1, 1))[0, 0]  # how many windows hold each pixel
        array([[1., 2., 2., 1.],
               [2., 4., 4., 2.],
               [2., 4., 4., 2.],
               [1., 2., 2., 1.]], dtype=float32)

    HINT: loop over the ``kh * kw`` kernel offsets, never over pixels: each ``+=`` adds a
    whole ``(N, C, H_out, W_out)`` slice. ``out[...] = ...`` instead of ``+=`` would keep only
    the last window's contribution where windows overlap.
    """
    # BEGIN SOLUTION NO PROMPT
    n, c, h, w = x_shape
    kh, kw = kernel_size
    sh, sw = stride
    ho, wo = (h - kh) // sh + 1, (w - kw) // sw + 1
    win = cols.reshape(n, c, kh, kw, ho, wo)
    out = np.zeros(x_shape, dtype=cols.dtype)
    for u in range(kh):
        for v in range(kw):
            out[:, :, u:u + sh * ho:sh, v:v + sw * wo:sw] += win[:, :, u, v]
    return out
    # END SOLUTION
    raise NotImplementedError("module 09: implement col2im (see its docstring)")  # STUB


# %% [raw]
# # BEGIN QUESTION
# name: im2col
# points: 0

# %% [markdown]
# ### Check: windows, im2col and col2im

# %% [raw]
# # BEGIN TESTS

# %%
def test_sliding_windows_is_a_view(sliding_windows, np):
    x = np.arange(2 * 3 * 5 * 6, dtype=np.float32).reshape(2, 3, 5, 6)
    win = sliding_windows(x, (3, 2), (2, 2))
    assert win.shape == (2, 3, 3, 2, 2, 3), (
        f"(N, C, kh, kw, H_out, W_out) = (2, 3, 3, 2, 2, 3) for a 3x2 kernel, stride 2 on 5x6; "
        f"got {win.shape}")
    assert np.shares_memory(win, x), (
        f"expected a view of x, got a copy (win.base is {type(win.base).__name__}): build the "
        "windows with as_strided, or a large image is copied kh*kw times")
    got, want = win[1, 2, 2, 1, 1, 2], x[1, 2, 1 * 2 + 2, 2 * 2 + 1]
    assert got == want, (
        f"view[1, 2, 2, 1, 1, 2] must be x[1, 2, 1*2 + 2, 2*2 + 1] = {want}, got {got}: "
        "view[n, c, u, v, i, j] is x[n, c, i*sh + u, j*sw + v]; check the strides of the last "
        "two axes (the window moves by the stride)")


# %%
def test_im2col_columns_are_flattened_windows(im2col, np):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 5, 5)).astype(np.float32)
    cols = im2col(x, (3, 3), (1, 1))
    assert cols.shape == (2, 27, 9), f"(N, C*kh*kw, L) = (2, 27, 9), got {cols.shape}"
    i, j = 1, 2
    want = x[1, :, i:i + 3, j:j + 3].reshape(-1)
    got = cols[1, :, i * 3 + j]
    assert np.array_equal(got, want), (
        f"column i*W_out + j = 5 must be the window of output (1, 2) flattened in (c, u, v) "
        f"order: expected {want[:4].round(3).tolist()}..., got {got[:4].round(3).tolist()}...; "
        "the weights are flattened the same way, so any other order mixes up the taps")


# %%
def test_col2im_counts_overlaps_and_is_the_adjoint(col2im, im2col, np):
    counts = col2im(np.ones((1, 4, 9), dtype=np.float32), (1, 1, 4, 4), (2, 2), (1, 1))[0, 0]
    assert counts[0, 0] == 1 and counts[1, 1] == 4 and counts[0, 1] == 2, (
        f"a corner pixel lies in 1 window of a 2x2 kernel, a central one in 4, an edge one in "
        f"2; col2im of ones gave {counts.tolist()}: add (+=) the overlapping windows")
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 2, 6, 5))
    c = rng.standard_normal((2, 2 * 3 * 2, 2 * 2))
    lhs = float(np.sum(im2col(x, (3, 2), (2, 3)) * c))
    rhs = float(np.sum(x * col2im(c, x.shape, (3, 2), (2, 3))))
    assert np.isclose(lhs, rhs), (
        f"col2im is the adjoint of im2col: <im2col(x), c> must equal <x, col2im(c)>, got "
        f"{lhs:.6f} vs {rhs:.6f} (stride 2x3, kernel 3x2)")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 3. Conv2d: forward and backward as one autograd `Function`
#
# **Forward** (`x` padded first):
#
# ```
#   cols = im2col(x_pad)                    # (N, C·kh·kw, L)
#   W2   = weight.reshape(O, C·kh·kw)       # (O, C·kh·kw)
#   out  = W2 @ cols  (+ bias)              # (N, O, L): np.matmul broadcasts W2 over N
#        .reshape(N, O, H_out, W_out)
# ```
#
# **Backward.** The forward is a matrix product, so module 05's rule for `Y = A @ B`
# (`dA = dY @ Bᵀ`, `dB = Aᵀ @ dY`) gives everything, with `g = grad.reshape(N, O, L)`:
#
# ```
#   d weight = Σ_n  g[n] @ cols[n]ᵀ          (O, L) @ (L, C·kh·kw), summed over the batch
#   d cols   = W2ᵀ @ g                       (C·kh·kw, O) @ (N, O, L) -> (N, C·kh·kw, L)
#   d x_pad  = col2im(d cols)                every window's gradient back to its pixels
#   d x      = d x_pad without the padding
#   d bias   = Σ over n and l of g           (O,)
# ```
#
# `cols` is saved for the backward pass (it is the input of the matrix product), so the
# backward does not rebuild it.
#
# **Skip what nobody needs.** The first layer's input is the data, which needs no gradient:
# `d cols` and `col2im` would be wasted work (the largest part of the backward). The
# functional `conv2d` (given) passes `needs_input_grad=input.requires_grad`, like PyTorch's
# `ctx.needs_input_grad`; return `None` for `dx` when it is False.
#
# **Initialisation** is `Linear`'s (module 03) with `fan_in = in_channels · kh · kw`: PyTorch's
# `kaiming_uniform_(a=√5)` works out to `bound = 1 / sqrt(fan_in)`, weight and then bias drawn
# from `Uniform(-bound, bound)`.

# %%
#| export
class _Conv2dFn(Function):
    """2-D convolution (im2col + one matmul) with its own backward (col2im)."""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None = None,
                stride: IntPair = (1, 1), padding: IntPair = (0, 0),
                needs_input_grad: bool = True) -> np.ndarray:
        """``(N, C, H, W) * (O, C, kh, kw) -> (N, O, H_out, W_out)`` via im2col and a matmul.

        APPROACH:
            1. ``xp = _pad(x, padding)``; ``o, c, kh, kw = weight.shape``; ``n = x.shape[0]``.
            2. ``cols = im2col(xp, (kh, kw), stride)`` — ``(N, C*kh*kw, L)``; ``ho``, ``wo``
               from ``out_size`` (so that ``L = ho * wo``).
            3. ``out = np.matmul(weight.reshape(o, -1), cols)`` — ``(N, O, L)``; if ``bias``
               is not None: ``out += bias.reshape(1, o, 1)``.
            4. Save for backward: ``ctx.save_for_backward(cols, weight)`` and, as attributes,
               ``ctx.x_pad_shape = xp.shape``, ``ctx.stride``, ``ctx.padding``,
               ``ctx.has_bias = bias is not None``, ``ctx.needs_input_grad``.
            5. Return ``out.reshape(n, o, ho, wo)``.

        EXAMPLE:
            >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
            >>> w = np.array([[[[1.0, 0.0], [0.0, 1.0]]]], dtype=np.float32)
            >>> _Conv2dFn.forward(Context(), x, w, np.array([0.5], np.float32))[0, 0, 0]
            array([5.5, 7.5, 9.5], dtype=float32)

        HINT: ``np.matmul`` of ``(O, K)`` with ``(N, K, L)`` broadcasts the weight over the
        batch and gives ``(N, O, L)`` — already channels-first, so the final reshape is free.
        """
        # BEGIN SOLUTION NO PROMPT
        xp = _pad(x, padding)
        o, c, kh, kw = weight.shape
        n = x.shape[0]
        ho = out_size(x.shape[2], kh, stride[0], padding[0])
        wo = out_size(x.shape[3], kw, stride[1], padding[1])
        cols = im2col(xp, (kh, kw), stride)                        # (N, C*kh*kw, L)
        out = np.matmul(weight.reshape(o, c * kh * kw), cols)      # (N, O, L)
        if bias is not None:
            out += bias.reshape(1, o, 1)
        ctx.save_for_backward(cols, weight)
        ctx.x_pad_shape = xp.shape
        ctx.stride, ctx.padding = stride, padding
        ctx.has_bias, ctx.needs_input_grad = bias is not None, needs_input_grad
        return out.reshape(n, o, ho, wo)
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 09: implement _Conv2dFn.forward (see its docstring)")  # STUB

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray | None, ...]:
        """Gradients ``(dx, dweight)``, plus ``dbias`` when the forward had a bias.

        APPROACH:
            1. ``cols, weight = ctx.saved``; ``n, o, ho, wo = grad.shape``;
               ``g = grad.reshape(n, o, ho * wo)`` — ``(N, O, L)``.
            2. ``dw = np.matmul(g, cols.transpose(0, 2, 1)).sum(axis=0)`` — ``(O, C*kh*kw)``,
               reshaped to ``weight.shape``.
            3. ``dx = None`` unless ``ctx.needs_input_grad``: then
               ``dcols = np.matmul(weight.reshape(o, c * kh * kw).T, g)`` —
               ``(N, C*kh*kw, L)`` —,
               ``dx = _crop(col2im(dcols, ctx.x_pad_shape, (kh, kw), ctx.stride),
               ctx.padding)``.
            4. Return ``(dx, dw)``, or ``(dx, dw, g.sum(axis=(0, 2)))`` when ``ctx.has_bias``.

        EXAMPLE: for ``x`` of ones ``(1, 1, 3, 3)``, a ``(1, 1, 2, 2)`` kernel and ``grad`` of
        ones ``(1, 1, 2, 2)``: ``dw`` is all 4 (each weight meets 4 pixels), ``db = [4.]``,
        and ``dx[0, 0] = [[w00, w00+w01, w01], ...]`` (every weight reaches the pixels its
        windows covered).

        HINT: one gradient per input of ``apply``, in order: ``(x, weight)`` or
        ``(x, weight, bias)``. The batch shares the weight, so its gradient *sums* over ``n``.
        """
        # BEGIN SOLUTION NO PROMPT
        cols, weight = ctx.saved
        n, o, ho, wo = grad.shape
        c, kh, kw = weight.shape[1:]
        g = grad.reshape(n, o, ho * wo)                                # (N, O, L)
        dw = np.matmul(g, cols.transpose(0, 2, 1)).sum(axis=0).reshape(weight.shape)
        dx = None
        if ctx.needs_input_grad:
            dcols = np.matmul(weight.reshape(o, c * kh * kw).T, g)     # (N, C*kh*kw, L)
            dx = _crop(col2im(dcols, ctx.x_pad_shape, (kh, kw), ctx.stride), ctx.padding)
        if ctx.has_bias:
            return dx, dw, g.sum(axis=(0, 2))
        return dx, dw
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 09: implement _Conv2dFn.backward (see its docstring)")  # STUB


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
           stride: Any = 1, padding: Any = 0) -> Tensor:
    """2-D convolution, ``torch.nn.functional.conv2d`` (provided: checks, then your Function).

    Args:
        input: ``(N, C, H, W)``, or ``(C, H, W)`` for one unbatched image.
        weight: ``(O, C, kh, kw)``.
        bias: ``(O,)`` or None.
        stride, padding: an int or a pair.

    Returns:
        ``(N, O, H_out, W_out)`` (or ``(O, H_out, W_out)`` for an unbatched input).

    Raises:
        RuntimeError: wrong number of dimensions, channel mismatch, a kernel larger than
            the padded input, or a weight or bias of another dtype (PyTorch's messages).
    """
    if input.ndim == 3:
        out = conv2d(input.reshape(1, *input.shape), weight, bias, stride, padding)
        return out.reshape(*out.shape[1:])
    if input.ndim != 4:
        raise RuntimeError("Expected 3D (unbatched) or 4D (batched) input to conv2d, but got "
                           f"input of size: {list(input.shape)}")
    s, p = _pair(stride, "stride"), _pair(padding, "padding")
    if min(s) < 1 or min(p) < 0:
        raise RuntimeError(f"conv2d: stride must be positive and padding non-negative, got "
                           f"stride={s}, padding={p}")
    if weight.ndim != 4 or input.shape[1] != weight.shape[1]:
        raise RuntimeError(f"Given groups=1, weight of size {list(weight.shape)}, expected "
                           f"input{list(input.shape)} to have "
                           f"{weight.shape[1] if weight.ndim > 1 else '?'} channels, but got "
                           f"{input.shape[1]} channels instead")
    hp, wp = input.shape[2] + 2 * p[0], input.shape[3] + 2 * p[1]
    if weight.shape[2] > hp or weight.shape[3] > wp:
        raise RuntimeError(f"Calculated padded input size per channel: ({hp} x {wp}). Kernel "
                           f"size: ({weight.shape[2]} x {weight.shape[3]}). Kernel size can't "
                           "be greater than actual input size")
    if weight.dtype != input.dtype or (bias is not None and bias.dtype != input.dtype):
        raise RuntimeError(f"Input type ({input.dtype}) and weight type ({weight.dtype}) "
                           "should be the same (and the bias's)")
    tensors = (input, weight) if bias is None else (input, weight, bias)
    return _Conv2dFn.apply(*tensors, stride=s, padding=p,
                           needs_input_grad=input.requires_grad)


class Conv2d(Module):
    """2-D convolution layer, ``torch.nn.Conv2d`` (no groups or dilation).

    Args:
        in_channels, out_channels: ``C`` and ``O``.
        kernel_size: an int or ``(kh, kw)``.
        stride, padding: an int or a pair.
        bias: whether to learn a per-filter bias (``self.bias`` is None otherwise).

    Shapes:
        input ``(N, C, H, W)`` -> output ``(N, O, H_out, W_out)``; ``weight``
        ``(O, C, kh, kw)``, ``bias`` ``(O,)``.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, bias: bool = True) -> None:
        """Store the configuration and create ``weight`` and ``bias`` with PyTorch's init.

        APPROACH:
            1. ``super().__init__()``; store ``in_channels``, ``out_channels`` and
               ``kernel_size``, ``stride``, ``padding`` as pairs (``_pair``).
            2. ``fan_in = in_channels * kh * kw``; ``bound = 1 / math.sqrt(fan_in)``;
               ``rng = default_generator()``.
            3. ``self.weight = Parameter(rng.uniform(-bound, bound, (out_channels,
               in_channels, kh, kw)).astype(np.float32))``.
            4. With ``bias``: ``(out_channels,)`` from the same distribution, drawn *after*
               the weight; otherwise ``self.register_parameter("bias", None)``.

        EXAMPLE:
            >>> manual_seed(0); conv = Conv2d(3, 8, 3, padding=1)
            >>> conv.weight.shape, conv.bias.shape, conv.kernel_size, conv.padding
            ((8, 3, 3, 3), (8,), (3, 3), (1, 1))
            >>> bool(np.abs(conv.weight.data).max() <= 1 / np.sqrt(27))
            True

        HINT: ``fan_in`` counts every weight one output sums over: all input channels times
        the kernel area, not just ``in_channels``.
        """
        # BEGIN SOLUTION NO PROMPT
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _pair(kernel_size, "kernel_size")
        self.stride = _pair(stride, "stride")
        self.padding = _pair(padding, "padding")
        kh, kw = self.kernel_size
        fan_in = in_channels * kh * kw
        bound = 1.0 / math.sqrt(fan_in)
        rng = default_generator()
        self.weight = Parameter(
            rng.uniform(-bound, bound, (out_channels, in_channels, kh, kw)).astype(np.float32))
        if bias:
            self.bias = Parameter(rng.uniform(-bound, bound, (out_channels,)).astype(np.float32))
        else:
            self.register_parameter("bias", None)
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 09: implement Conv2d.__init__ (see its docstring)")  # STUB

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return conv2d(input, self.weight, self.bias, self.stride, self.padding)

    def extra_repr(self) -> str:
        text = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}")
        if self.padding != (0, 0):
            text += f", padding={self.padding}"
        if self.bias is None:
            text += ", bias=False"
        return text


# %% [raw]
# # BEGIN QUESTION
# name: conv2d
# points: 0

# %% [markdown]
# ### Check: Conv2d forward, backward and initialisation

# %% [raw]
# # BEGIN TESTS

# %%
def test_conv2d_matches_the_loops(conv2d, conv2d_loops, Tensor, np):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 7, 6)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 2)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    for stride, padding in [(1, 0), (2, 1), ((2, 1), (0, 1))]:
        got = conv2d(Tensor(x), Tensor(w), Tensor(b), stride=stride, padding=padding).numpy()
        want = conv2d_loops(x, w, b, stride, padding)
        assert got.shape == want.shape, (
            f"stride={stride}, padding={padding}: shape {got.shape}, loops give {want.shape}")
        assert np.allclose(got, want, atol=1e-4), (
            f"stride={stride}, padding={padding}: im2col + matmul must equal the loop "
            f"definition; largest difference {np.abs(got - want).max():.3g}")
        assert got.dtype == np.float32, f"float32 in, float32 out; got {got.dtype}"


# %%
def test_conv2d_gradients_match_finite_differences(conv2d, gradcheck, np):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 2, 5, 4))
    w = rng.standard_normal((3, 2, 3, 2))
    b = rng.standard_normal(3)
    try:
        ok = gradcheck(lambda a, k, c: conv2d(a, k, c, stride=2, padding=1), [x, w, b])
    except AssertionError as err:
        raise AssertionError(f"conv2d backward disagrees with finite differences "
                             f"(stride 2, padding 1): {err}") from None
    assert ok, f"gradcheck returned {ok!r} instead of True"


# %%
def test_conv2d_layer_init_and_shapes(Conv2d, Tensor, manual_seed, np):
    manual_seed(0)
    conv = Conv2d(3, 8, kernel_size=3, padding=1)
    assert conv.weight.shape == (8, 3, 3, 3), (
        f"weight is (out_channels, in_channels, kh, kw) = (8, 3, 3, 3), got {conv.weight.shape}")
    bound = 1 / np.sqrt(27)
    wmax = float(np.abs(conv.weight.numpy()).max())
    assert 0.8 * bound < wmax <= bound, (
        f"init bound is 1/sqrt(fan_in) = 1/sqrt(3*3*3) = {bound:.3f}; max |w| is {wmax:.3f}")
    nobias = Conv2d(3, 8, 3, bias=False).bias
    assert nobias is None, (
        f"bias=False sets bias to None, got {type(nobias).__name__}: a zero bias would still "
        "be trained and saved")
    out = conv(Tensor(np.ones((2, 3, 5, 5), dtype=np.float32)))
    assert out.shape == (2, 8, 5, 5), f"padding=1 keeps 5x5 for a 3x3 kernel, got {out.shape}"

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 4. Pooling: summarise each window
#
# A pooling layer has no weights: it shrinks each feature map by summarising every window,
# usually 2×2 with stride 2 (the default stride is the kernel size, so windows do not
# overlap):
#
# ```
#   max pooling 2×2, stride 2                     average pooling 2×2, stride 2
#   ┌───┬───┬───┬───┐                              same windows:
#   │ 1 │ 3 │ 2 │ 0 │        ┌───┬───┐             ┌─────┬─────┐
#   │ 5 │ 4 │ 1 │ 1 │  ───►  │ 5 │ 2 │             │3.25 │ 1.0 │
#   │ 0 │ 2 │ 7 │ 6 │        │ 2 │ 7 │             │0.75 │ 5.0 │
#   │ 1 │ 0 │ 3 │ 4 │        └───┴───┘             └─────┴─────┘
#   └───┴───┴───┴───┘
# ```
#
# **Forward.** Reuse the windows view: loop over the `kh·kw` kernel offsets and combine the
# slices `win[:, :, u, v]` (each `(N, C, H_out, W_out)`) with `np.maximum` or `+`. (NumPy
# reduces a 6-D strided view with `.max(axis=(2, 3))` correctly but slowly; 4 or 9 whole-array
# operations are fast.) Max pooling pads with `-inf`, so padding never wins; average pooling
# pads with zeros and divides by `kh·kw` (PyTorch's default `count_include_pad=True`).
#
# **Backward.** Build the gradient of every window entry, `(N, C, kh, kw, H_out, W_out)`, and
# hand it to `col2im`, which adds it back to the pixels (overlapping windows add up):
#
# * average: every entry of a window gets `grad / (kh·kw)`;
# * max: the whole gradient goes to the entry that won. When several entries tie (common
#   after a ReLU: a window of zeros), PyTorch gives it to the **first** one in row-major
#   order. Walk the offsets in order, keep the gradient that is still "unclaimed", and give
#   it to the first offset that holds the maximum:
#
# ```
#   left = grad
#   for each offset (u, v) in row-major order:
#       take = left * (win[:, :, u, v] == out)       # unclaimed gradient where (u, v) wins
#       dwin[:, :, u, v] = take
#       left = left - take                           # claimed: later ties get nothing
# ```
#
#   (Multiplying by the boolean mask is one fast ufunc; `np.where(mask, left, 0)` gives the
#   same values about 7× slower here.)

# %%
#| export
def _pool_args(kernel_size: Any, stride: Any, padding: Any) -> tuple[IntPair, IntPair, IntPair]:
    """Pairs for pooling; ``stride=None`` means ``stride = kernel_size`` (PyTorch's default)."""
    k = _pair(kernel_size, "kernel_size")
    s = k if stride is None else _pair(stride, "stride")
    p = _pair(padding, "padding")
    if p[0] > k[0] // 2 or p[1] > k[1] // 2:
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                           f"pad={p}, kernel_size={k}")
    return k, s, p


class _MaxPool2dFn(Function):
    """Max over every window; the gradient goes to the first maximum of each window."""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray, kernel_size: IntPair = (2, 2),
                stride: IntPair = (2, 2), padding: IntPair = (0, 0)) -> np.ndarray:
        """``(N, C, H, W) -> (N, C, H_out, W_out)``: the largest value of every window.

        APPROACH:
            1. ``xp = _pad(x, padding, value=-np.inf)``;
               ``win = sliding_windows(xp, kernel_size, stride)``.
            2. ``out = win[:, :, 0, 0].copy()``; for every offset ``(u, v)``:
               ``np.maximum(out, win[:, :, u, v], out=out)``.
            3. Save ``win`` and ``out`` (``ctx.save_for_backward(win, out)``) and
               ``ctx.x_pad_shape``, ``ctx.stride``, ``ctx.padding``; return ``out``.

        EXAMPLE:
            >>> x = np.array([[[[1, 3, 2, 0], [5, 4, 1, 1], [0, 2, 7, 6], [1, 0, 3, 4]]]],
            ...              dtype=np.float32)
            >>> _MaxPool2dFn.forward(Context(), x, (2, 2), (2, 2), (0, 0))[0, 0]
            array([[5., 2.],
                   [2., 7.]], dtype=float32)

        HINT: ``.copy()`` the first slice: ``np.maximum(..., out=out)`` writes into ``out``,
        and the windows view is read-only.
        """
        # BEGIN SOLUTION NO PROMPT
        xp = _pad(x, padding, value=-np.inf)
        win = sliding_windows(xp, kernel_size, stride)            # (N, C, kh, kw, Ho, Wo)
        out = win[:, :, 0, 0].copy()
        for u in range(kernel_size[0]):
            for v in range(kernel_size[1]):
                np.maximum(out, win[:, :, u, v], out=out)
        ctx.save_for_backward(win, out)
        ctx.x_pad_shape, ctx.stride, ctx.padding = xp.shape, stride, padding
        return out
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 09: implement _MaxPool2dFn.forward (see its docstring)")  # STUB

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray]:
        """``dx``: each window's gradient goes to its first maximum (row-major order), or, in a
        window holding NaN, to its last NaN (PyTorch's rule: NaN counts as the largest value).

        APPROACH:
            1. ``win, out = ctx.saved``; ``n, c, kh, kw, ho, wo = win.shape``;
               ``dwin = np.empty(win.shape, dtype=grad.dtype)``;
               ``won = np.zeros(out.shape, dtype=bool)`` (windows whose gradient is given);
               ``offsets = [(u, v) for u in range(kh) for v in range(kw)]``.
            2. For every ``(u, v)`` of ``offsets``: ``hit = ~won & (win[:, :, u, v] == out)``;
               ``dwin[:, :, u, v] = grad * hit`` (``np.where(hit, grad, 0)`` when ``grad`` is
               not all finite); ``won |= hit``.
            3. If ``not won.all()`` (a NaN maximum equals nothing, so step 2 left its windows
               alone): the same over ``reversed(offsets)`` with ``hit = ~won &
               np.isnan(win[:, :, u, v])``, keeping what is there elsewhere:
               ``np.where(hit, grad, dwin[:, :, u, v])``.
            4. ``dxp = col2im(dwin.reshape(n, c * kh * kw, ho * wo), ctx.x_pad_shape,
               (kh, kw), ctx.stride)``; return ``(_crop(dxp, ctx.padding),)``.

        EXAMPLE: for the 4×4 example of ``forward`` and ``grad`` of ones, ``dx`` is 1 at the
        four maxima (the 5 at row 1, column 0; the 2s at (0, 2) and (2, 1); the 7 at (2, 2))
        and 0 elsewhere. For ``x`` of zeros only the first entry of each window gets 1.

        HINT: ``win == out`` marks *every* entry equal to the maximum; without ``won`` a
        window of four zeros would pass its gradient on four times. ``inf * 0`` is NaN, hence
        ``np.where`` for a gradient that is not finite; for a finite one ``grad * hit`` gives
        the same and is many times faster (``np.where`` with a scattered mask mispredicts
        branches).
        """
        # BEGIN SOLUTION NO PROMPT
        win, out = ctx.saved
        n, c, kh, kw, ho, wo = win.shape
        dwin = np.empty(win.shape, dtype=grad.dtype)  # every slice is written below
        won = np.zeros(out.shape, dtype=bool)  # (N, C, Ho, Wo): gradient given
        offsets = [(u, v) for u in range(kh) for v in range(kw)]
        finite = bool(np.isfinite(grad).all())  # then a 0/1 mask may multiply it
        for u, v in offsets:  # the first maximum of each window
            hit = ~won & (win[:, :, u, v] == out)
            dwin[:, :, u, v] = grad * hit if finite else np.where(hit, grad, 0)
            won |= hit
        if not won.all():  # windows whose maximum is NaN: to their last NaN
            for u, v in reversed(offsets):
                hit = ~won & np.isnan(win[:, :, u, v])
                dwin[:, :, u, v] = np.where(hit, grad, dwin[:, :, u, v])
                won |= hit
        dxp = col2im(dwin.reshape(n, c * kh * kw, ho * wo), ctx.x_pad_shape, (kh, kw),
                     ctx.stride)
        return (_crop(dxp, ctx.padding),)
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 09: implement _MaxPool2dFn.backward (see its docstring)")  # STUB


class _AvgPool2dFn(Function):
    """Mean over every window (zero padding counted, as PyTorch's default)."""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray, kernel_size: IntPair = (2, 2),
                stride: IntPair = (2, 2), padding: IntPair = (0, 0)) -> np.ndarray:
        """``(N, C, H, W) -> (N, C, H_out, W_out)``: the mean of every window.

        APPROACH:
            1. ``xp = _pad(x, padding)`` (zeros); ``win = sliding_windows(xp, kernel_size,
               stride)``.
            2. ``out = win[:, :, 0, 0].copy()``; add every other offset's slice
               ``win[:, :, u, v]`` into it; then divide by ``kh * kw``.
            3. Save ``ctx.x_pad_shape``, ``ctx.kernel_size``, ``ctx.stride``, ``ctx.padding``
               (the backward needs no values); return ``out``.

        EXAMPLE:
            >>> x = np.array([[[[1, 3, 2, 0], [5, 4, 1, 1], [0, 2, 7, 6], [1, 0, 3, 4]]]],
            ...              dtype=np.float32)
            >>> _AvgPool2dFn.forward(Context(), x, (2, 2), (2, 2), (0, 0))[0, 0]
            array([[3.25, 1.  ],
                   [0.75, 5.  ]], dtype=float32)

        HINT: start from a copy of the first slice and add the others in place (``+=``); the
        divisor is the window area even where the window covers padding.
        """
        # BEGIN SOLUTION NO PROMPT
        xp = _pad(x, padding)
        win = sliding_windows(xp, kernel_size, stride)            # (N, C, kh, kw, Ho, Wo)
        kh, kw = kernel_size
        out = win[:, :, 0, 0].copy()
        for u in range(kh):
            for v in range(kw):
                if u or v:
                    out += win[:, :, u, v]
        out /= kh * kw
        ctx.x_pad_shape, ctx.kernel_size = xp.shape, kernel_size
        ctx.stride, ctx.padding = stride, padding
        return out
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 09: implement _AvgPool2dFn.forward (see its docstring)")  # STUB

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray]:
        """``dx``: every entry of a window receives ``grad / (kh * kw)``.

        APPROACH:
            1. ``kh, kw = ctx.kernel_size``; ``n, c, ho, wo = grad.shape``.
            2. ``dwin = np.broadcast_to((grad / (kh * kw))[:, :, None, None],
               (n, c, kh, kw, ho, wo))`` — the same share for every window entry.
            3. ``dxp = col2im(dwin.reshape(n, c * kh * kw, ho * wo), ctx.x_pad_shape,
               (kh, kw), ctx.stride)``; return ``(_crop(dxp, ctx.padding),)``.

        EXAMPLE: 2×2 windows with stride 2 and ``grad`` of ones: every pixel gets ``0.25``;
        with stride 1 (overlapping windows) an interior pixel gets ``4 × 0.25 = 1``.

        HINT: dividing by the window area once, before spreading, is cheaper than after.
        """
        # BEGIN SOLUTION NO PROMPT
        kh, kw = ctx.kernel_size
        n, c, ho, wo = grad.shape
        dwin = np.broadcast_to((grad / (kh * kw))[:, :, None, None], (n, c, kh, kw, ho, wo))
        dxp = col2im(dwin.reshape(n, c * kh * kw, ho * wo), ctx.x_pad_shape, (kh, kw),
                     ctx.stride)
        return (_crop(dxp, ctx.padding),)
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 09: implement _AvgPool2dFn.backward (see its docstring)")  # STUB


def _pool(fn: type[Function], name: str, input: Tensor, kernel_size: Any,  # noqa: A002
          stride: Any, padding: Any) -> Tensor:
    """Shared checks of the pooling functions (unbatched input, output size)."""
    if input.ndim == 3:
        out = _pool(fn, name, input.reshape(1, *input.shape), kernel_size, stride, padding)
        return out.reshape(*out.shape[1:])
    if input.ndim != 4:
        raise RuntimeError(f"{name}: expected 3D or 4D input, got {list(input.shape)}")
    k, s, p = _pool_args(kernel_size, stride, padding)
    ho, wo = out_size(input.shape[2], k[0], s[0], p[0]), out_size(input.shape[3], k[1], s[1], p[1])
    if ho < 1 or wo < 1 or min(s) < 1:
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, input.shape[1:]))}). "
                           f"Calculated output size: ({input.shape[1]}x{ho}x{wo}). "
                           "Output size is too small")
    return fn.apply(input, kernel_size=k, stride=s, padding=p)


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
               padding: Any = 0) -> Tensor:
    """Max pooling, ``torch.nn.functional.max_pool2d`` (no dilation, no ceil mode).

    ``stride`` defaults to ``kernel_size``; ``padding`` (at most half the kernel) pads with
    ``-inf``. Input ``(N, C, H, W)`` or ``(C, H, W)``.
    """
    return _pool(_MaxPool2dFn, "max_pool2d", input, kernel_size, stride, padding)


def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
               padding: Any = 0) -> Tensor:
    """Average pooling, ``torch.nn.functional.avg_pool2d`` with ``count_include_pad=True``.

    ``stride`` defaults to ``kernel_size``; zero padding counts in the mean.
    """
    return _pool(_AvgPool2dFn, "avg_pool2d", input, kernel_size, stride, padding)


class _Pool2d(Module):
    """What both pooling layers store: the arguments as given (``stride`` defaults to
    ``kernel_size``), as PyTorch does."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding = padding

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxPool2d(_Pool2d):
    """``torch.nn.MaxPool2d(kernel_size, stride=None, padding=0)``."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return max_pool2d(input, self.kernel_size, self.stride, self.padding)

    def extra_repr(self) -> str:
        return super().extra_repr() + ", dilation=1, ceil_mode=False"


class AvgPool2d(_Pool2d):
    """``torch.nn.AvgPool2d(kernel_size, stride=None, padding=0)`` (zero padding counted)."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return avg_pool2d(input, self.kernel_size, self.stride, self.padding)


# %% [raw]
# # BEGIN QUESTION
# name: pooling
# points: 0

# %% [markdown]
# ### Check: max and average pooling

# %% [raw]
# # BEGIN TESTS

# %%
def test_max_pool_values_and_gradient(max_pool2d, Tensor, np):
    x = Tensor(np.array([[[[1, 3, 2, 0], [5, 4, 1, 1], [0, 2, 7, 6], [1, 0, 3, 4]]]],
                        dtype=np.float32), requires_grad=True)
    out = max_pool2d(x, 2)
    assert out.shape == (1, 1, 2, 2), f"2x2 windows, stride 2 (default): (1, 1, 2, 2), got {out.shape}"
    assert out.numpy()[0, 0].tolist() == [[5.0, 2.0], [2.0, 7.0]], (
        f"each output is the max of its 2x2 window: [[5, 2], [2, 7]], got {out.numpy()[0, 0].tolist()}")
    out.sum().backward()
    want = np.zeros((4, 4), dtype=np.float32)
    want[1, 0] = want[0, 2] = want[2, 1] = want[2, 2] = 1.0
    assert np.array_equal(x.grad.numpy()[0, 0], want), (
        f"the gradient goes to each window's maximum only (the 5, the two 2s and the 7), "
        f"nowhere else. Got {x.grad.numpy()[0, 0].tolist()}")


# %%
def test_max_pool_ties_pass_the_gradient_once(max_pool2d, Tensor, np):
    x = Tensor(np.zeros((1, 2, 4, 4), dtype=np.float32), requires_grad=True)
    max_pool2d(x, 2).sum().backward()
    total = float(x.grad.numpy().sum())
    assert total == 8.0, (
        f"8 windows of four tied zeros pass on 8 gradients in total (one each, to the first "
        f"zero), got {total}: give the gradient to the first maximum only")
    first = x.grad.numpy()[0, 0, :2, :2]
    assert first[0, 0] == 1.0 and first[0, 1] == 0.0, (
        f"with a tie, the first entry in row-major order wins (as in PyTorch): expected the "
        f"first window's gradient [[1, 0], [0, 0]], got {first.tolist()}")


# %%
def test_avg_pool_values_and_gradient(avg_pool2d, Tensor, np):
    x = Tensor(np.array([[[[1, 3, 2, 0], [5, 4, 1, 1], [0, 2, 7, 6], [1, 0, 3, 4]]]],
                        dtype=np.float32), requires_grad=True)
    out = avg_pool2d(x, 2)
    assert np.allclose(out.numpy()[0, 0], [[3.25, 1.0], [0.75, 5.0]]), (
        f"each output is the mean of its window; got {out.numpy()[0, 0].tolist()}")
    out.sum().backward()
    assert np.allclose(x.grad.numpy(), 0.25), (
        f"every pixel of a 2x2 window receives 1/4 of its gradient, got "
        f"{np.unique(x.grad.numpy()).tolist()}")
    y = Tensor(np.ones((1, 1, 4, 4), dtype=np.float32), requires_grad=True)
    avg_pool2d(y, 2, stride=1).sum().backward()
    assert np.isclose(y.grad.numpy()[0, 0, 1, 1], 1.0), (
        "with stride 1 windows overlap: an interior pixel lies in 4 windows and gets 4 x 1/4 = 1, "
        f"got {y.grad.numpy()[0, 0, 1, 1]}")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 5. Batch normalisation
#
# Deep CNNs train faster when every channel's activations are kept at mean 0 and variance 1
# (Ioffe & Szegedy, 2015). `BatchNorm2d` normalises each channel `c` over the batch and both
# spatial axes — `M = N·H·W` values — then applies a learned scale and shift:
#
# ```
#   μ_c = mean over (n, h, w) of x[:, c]          σ²_c = mean of (x[:, c] - μ_c)²  (biased)
#   x̂   = (x - μ_c) / sqrt(σ²_c + eps)            y = weight_c · x̂ + bias_c
#
#   x (N, C, H, W) ──stats over axes (0, 2, 3)──► μ, σ² (C,) ──broadcast as (1, C, 1, 1)──►
# ```
#
# **Train and eval.** The batch statistics only exist for a batch. While training, the layer
# also keeps exponential moving averages in *buffers* (module 03's `register_buffer`: saved
# in `state_dict`, never trained), and `eval()` uses them instead:
#
# ```
#   running_mean ← (1 - momentum) · running_mean + momentum · μ
#   running_var  ← (1 - momentum) · running_var  + momentum · σ² · M / (M - 1)   (unbiased!)
# ```
#
# PyTorch normalises with the biased variance but stores the *unbiased* one (`M / (M - 1)`).
# With `momentum=None` the average is cumulative: the factor is `1 / num_batches_tracked`.
#
# **Backward, in one line.** `μ` and `σ²` depend on every input of the channel, so the
# gradient is not just `grad · weight / σ`. Working through the chain rule (and noting that
# `Σ grad·x̂ = d weight` and `Σ grad = d bias`) it collapses to
#
# ```
#   dx = weight · inv_std · (grad - d bias / M - x̂ · d weight / M)      inv_std = 1/sqrt(σ²+eps)
#   d weight = Σ grad · x̂        d bias = Σ grad                         (sums over n, h, w)
# ```
#
# In eval mode the statistics are constants, so `dx = weight · inv_std · grad`.
#
# The `Function` below receives the statistics to use (`mean`, `var`) and a flag saying
# whether they were computed from this batch; the functional `batch_norm` computes them and
# updates the running averages; `BatchNorm2d.forward` decides which mode applies.

# %%
#| export
def _channel_shape(x: np.ndarray) -> list[int]:
    """``[1, C, 1, 1]`` (one per dimension): how a per-channel ``(C,)`` array broadcasts."""
    shape = [1] * x.ndim
    shape[1] = x.shape[1]
    return shape


def _reduce_axes(x: np.ndarray) -> tuple[int, ...]:
    """Every axis but the channel axis 1: ``(0, 2, 3)`` for ``(N, C, H, W)``."""
    return (0, *range(2, x.ndim))


class _BatchNormFn(Function):
    """Per-channel normalisation with given statistics; batch statistics change the backward."""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray, weight: np.ndarray, bias: np.ndarray,
                mean: np.ndarray | None = None, var: np.ndarray | None = None,
                eps: float = 1e-5, batch_stats: bool = True) -> np.ndarray:
        """``weight * (x - mean) / sqrt(var + eps) + bias``, per channel.

        Args:
            x: ``(N, C, *)``; weight, bias, mean, var: ``(C,)``.
            batch_stats: True when ``mean``/``var`` were computed from this ``x`` (training).

        APPROACH:
            1. ``shape = _channel_shape(x)`` (``[1, C, 1, 1]``);
               ``inv_std = 1.0 / np.sqrt(var + eps)``.
            2. ``xhat = (x - mean.reshape(shape)) * inv_std.reshape(shape)``.
            3. ``ctx.save_for_backward(xhat, weight, inv_std)``; ``ctx.batch_stats =
               batch_stats``.
            4. Return ``xhat * weight.reshape(shape) + bias.reshape(shape)``.

        EXAMPLE:
            >>> x = np.array([[[[1.0]], [[4.0]]], [[[3.0]], [[0.0]]]], np.float32)  # (2, 2, 1, 1)
            >>> one, zero = np.ones(2, np.float32), np.zeros(2, np.float32)
            >>> _BatchNormFn.forward(Context(), x, one, zero, np.array([2.0, 2.0], np.float32),
            ...                      np.array([1.0, 4.0], np.float32), 0.0, True).ravel()
            array([-1.,  1.,  1., -1.], dtype=float32)

        HINT: keep ``eps`` a Python float so float32 stays float32; ``var + eps`` comes
        *before* the square root.
        """
        # BEGIN SOLUTION NO PROMPT
        shape = _channel_shape(x)
        inv_std = 1.0 / np.sqrt(var + eps)
        xhat = (x - mean.reshape(shape)) * inv_std.reshape(shape)
        ctx.save_for_backward(xhat, weight, inv_std)
        ctx.batch_stats = batch_stats
        return xhat * weight.reshape(shape) + bias.reshape(shape)
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 09: implement _BatchNormFn.forward (see its docstring)")  # STUB

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(dx, dweight, dbias)``; ``dx`` includes the path through the batch statistics.

        APPROACH:
            1. ``xhat, weight, inv_std = ctx.saved``; ``axes = _reduce_axes(grad)``;
               ``shape = _channel_shape(grad)``.
            2. ``db = grad.sum(axis=axes)``; ``dw = (grad * xhat).sum(axis=axes)``;
               ``scale = (weight * inv_std).reshape(shape)``.
            3. If not ``ctx.batch_stats``: ``dx = grad * scale``. Otherwise, with
               ``m = grad.size // grad.shape[1]`` values per channel:
               ``dx = scale * (grad - (db / m).reshape(shape) - xhat * (dw / m).reshape(shape))``.
            4. Return ``(dx, dw, db)``.

        EXAMPLE: in training mode the gradient of ``y.sum()`` w.r.t. ``x`` is 0 everywhere
        (shifting a whole channel changes nothing after normalisation), while
        ``d bias = M`` for each channel.

        HINT: ``m`` is the number of values per channel, ``N * H * W``, not the batch size.
        """
        # BEGIN SOLUTION NO PROMPT
        xhat, weight, inv_std = ctx.saved
        axes, shape = _reduce_axes(grad), _channel_shape(grad)
        db = grad.sum(axis=axes)
        dw = (grad * xhat).sum(axis=axes)
        scale = (weight * inv_std).reshape(shape)
        if not ctx.batch_stats:
            return grad * scale, dw, db
        m = grad.size // grad.shape[1]
        dx = scale * (grad - (db / m).reshape(shape) - xhat * (dw / m).reshape(shape))
        return dx, dw, db
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 09: implement _BatchNormFn.backward (see its docstring)")  # STUB


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,  # noqa: A002
               weight: Tensor | None = None, bias: Tensor | None = None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Batch normalisation over every axis but 1, ``torch.nn.functional.batch_norm``.

    Args:
        input: ``(N, C, *)``.
        running_mean, running_var: ``(C,)`` buffers, updated in place when ``training``;
            required when not ``training``.
        weight, bias: ``(C,)`` or None (scale 1, shift 0).
        training: normalise with this batch's statistics (and update the running ones).
        momentum: the running averages' update factor.
        eps: added to the variance.

    Raises:
        ValueError: training with one value per channel; evaluation without running stats.

    APPROACH:
        1. ``c = input.shape[1]``; when ``weight``/``bias`` is None use
           ``Tensor(np.ones(c, input.dtype))`` / ``Tensor(np.zeros(c, input.dtype))``.
        2. Training: ``m = input.numel() // c``; ``m <= 1`` is a ``ValueError("Expected more
           than 1 value per channel when training, got input size [...]")``.
           ``mean = input.data.mean(axis=axes)``, ``var = input.data.var(axis=axes)`` with
           ``axes = _reduce_axes(input.data)``. If ``running_mean`` is given:
           ``running_mean.data[...] = (1 - momentum) * running_mean.data + momentum * mean``;
           if ``running_var`` is given: the same with ``var * m / (m - 1)``.
        3. Evaluation: both running buffers are required (``ValueError`` otherwise);
           ``mean, var = running_mean.data, running_var.data``.
        4. ``return _BatchNormFn.apply(input, weight, bias, mean=mean, var=var, eps=eps,
           batch_stats=training)``.

    EXAMPLE:
        >>> rm, rv = Tensor(np.zeros(1, np.float32)), Tensor(np.ones(1, np.float32))
        >>> y = batch_norm(Tensor([[1.0], [3.0]]), rm, rv, training=True)
        >>> y.numpy().ravel().round(3), rm.numpy(), rv.numpy()
        (array([-1.,  1.], dtype=float32), array([0.2], dtype=float32), array([1.1], dtype=float32))

    HINT: update the buffers *in place* (``.data[...] =``): the module holds those very
    Tensors, and a new Tensor bound to a local name would be lost.
    """
    # BEGIN SOLUTION NO PROMPT
    c = input.shape[1]
    if weight is None:
        weight = Tensor(np.ones(c, dtype=input.dtype))
    if bias is None:
        bias = Tensor(np.zeros(c, dtype=input.dtype))
    if training:
        m = input.numel() // c
        if m <= 1:
            raise ValueError("Expected more than 1 value per channel when training, got input "
                             f"size {list(input.shape)}")
        axes = _reduce_axes(input.data)
        mean = input.data.mean(axis=axes)
        var = input.data.var(axis=axes)
        if running_mean is not None:
            running_mean.data[...] = (1 - momentum) * running_mean.data + momentum * mean
        if running_var is not None:
            running_var.data[...] = ((1 - momentum) * running_var.data
                                     + momentum * var * (m / (m - 1)))
    else:
        if running_mean is None or running_var is None:
            raise ValueError("batch_norm: running_mean and running_var must be given in "
                             "evaluation mode (training=False)")
        mean, var = running_mean.data, running_var.data
    return _BatchNormFn.apply(input, weight, bias, mean=mean, var=var, eps=eps,
                              batch_stats=training)
    # END SOLUTION
    raise NotImplementedError("module 09: implement batch_norm (see its docstring)")  # STUB


class BatchNorm2d(Module):
    """``torch.nn.BatchNorm2d`` over ``(N, C, H, W)`` inputs.

    Args:
        num_features: ``C``.
        eps: added to the variance.
        momentum: running-average factor, or None for a cumulative average.
        affine: learn ``weight`` (ones) and ``bias`` (zeros); None otherwise.
        track_running_stats: keep ``running_mean`` (zeros), ``running_var`` (ones) and
            ``num_batches_tracked`` (int64 0) as buffers; without them the layer always uses
            batch statistics.
        bias: (keyword only, PyTorch 2.13) with ``affine``, whether to learn the shift too.
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, *,
                 bias: bool = True) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(np.ones(num_features, dtype=np.float32))
        else:
            self.register_parameter("weight", None)
        if affine and bias:
            self.bias = Parameter(np.zeros(num_features, dtype=np.float32))
        else:
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", Tensor(np.zeros(num_features, np.float32)))
            self.register_buffer("running_var", Tensor(np.ones(num_features, np.float32)))
            self.register_buffer("num_batches_tracked", Tensor(np.array(0, dtype=np.int64)))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """Normalise with batch statistics in training, running statistics in evaluation.

        APPROACH:
            1. ``input.ndim != 4``: ``ValueError(f"expected 4D input (got {input.ndim}D
               input)")``.
            2. ``factor = 0.0 if self.momentum is None else self.momentum``. When training
               with ``track_running_stats``: ``self.num_batches_tracked.data += 1``, and with
               ``momentum is None``: ``factor = 1.0 / float(self.num_batches_tracked.data)``.
            3. ``use_batch = self.training or self.running_mean is None``.
            4. Pass the running buffers to ``batch_norm`` unless training without
               ``track_running_stats`` (then ``None``); return ``batch_norm(input, rm, rv,
               self.weight, self.bias, use_batch, factor, self.eps)``.

        EXAMPLE:
            >>> bn = BatchNorm2d(2); x = Tensor(np.arange(16, dtype=np.float32).reshape(2, 2, 2, 2))
            >>> y = bn(x); bn.running_mean.numpy(), int(bn.num_batches_tracked.item())
            (array([0.55, 0.95], dtype=float32), 1)
            >>> bool(np.allclose(bn.eval()(x).numpy(), (x.numpy() - [[[[0.55]], [[0.95]]]])
            ...                  / np.sqrt(bn.running_var.numpy().reshape(1, 2, 1, 1) + 1e-5)))
            True

        HINT: ``eval()`` must use the running statistics even for a batch of one image —
        that is the point of keeping them.
        """
        # BEGIN SOLUTION NO PROMPT
        if input.ndim != 4:
            raise ValueError(f"expected 4D input (got {input.ndim}D input)")
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked.data += 1
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked.data)
        use_batch = self.training or self.running_mean is None
        keep = not self.training or self.track_running_stats
        return batch_norm(input, self.running_mean if keep else None,
                          self.running_var if keep else None, self.weight, self.bias,
                          use_batch, factor, self.eps)
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 09: implement BatchNorm2d.forward (see its docstring)")  # STUB

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


# %% [raw]
# # BEGIN QUESTION
# name: batchnorm
# points: 0

# %% [markdown]
# ### Check: batch normalisation

# %% [raw]
# # BEGIN TESTS

# %%
def test_batchnorm_train_normalises_and_tracks(BatchNorm2d, Tensor, np):
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((8, 3, 4, 4)) * [[[[2.0]], [[0.5]], [[3.0]]]] + 5.0).astype(np.float32)
    bn = BatchNorm2d(3)
    y = bn(Tensor(x)).numpy()
    assert y.shape == x.shape and y.dtype == np.float32, f"shape and dtype kept, got {y.shape}, {y.dtype}"
    assert np.allclose(y.mean(axis=(0, 2, 3)), 0.0, atol=1e-5) and np.allclose(
        y.var(axis=(0, 2, 3)), 1.0, atol=1e-3), (
        "in training every channel is normalised over (N, H, W) to mean 0, variance 1; got "
        f"means {y.mean(axis=(0, 2, 3)).round(3).tolist()}, variances "
        f"{y.var(axis=(0, 2, 3)).round(3).tolist()}")
    m = 8 * 4 * 4
    want_var = 0.9 + 0.1 * x.var(axis=(0, 2, 3)) * m / (m - 1)
    want_mean = 0.1 * x.mean(axis=(0, 2, 3))
    assert np.allclose(bn.running_mean.numpy(), want_mean, rtol=1e-5), (
        f"running_mean = 0.9 * 0 + 0.1 * batch mean after one training step: expected "
        f"{want_mean.round(4).tolist()}, got {bn.running_mean.numpy().round(4).tolist()}")
    assert np.allclose(bn.running_var.numpy(), want_var, rtol=1e-5), (
        f"running_var = 0.9 * 1 + 0.1 * the UNBIASED batch variance (times M / (M - 1), "
        f"M = N*H*W): expected {want_var.round(4).tolist()}, got "
        f"{bn.running_var.numpy().round(4).tolist()}")
    steps = int(bn.num_batches_tracked.item())
    assert steps == 1, (
        f"num_batches_tracked counts training steps: expected 1 after one, got {steps}")


# %%
def test_batchnorm_eval_uses_running_stats(BatchNorm2d, Tensor, np):
    bn = BatchNorm2d(2)
    bn.running_mean.data[...] = [1.0, -1.0]
    bn.running_var.data[...] = [4.0, 0.25]
    bn.eval()
    x = np.ones((1, 2, 1, 1), dtype=np.float32)
    y = bn(Tensor(x)).numpy().ravel()
    want = np.array([0.0, 2.0 / np.sqrt(0.25 + 1e-5)])
    assert np.allclose(y, want, rtol=1e-5), (
        f"eval() normalises with running_mean/running_var (even for one image): expected "
        f"{want.round(4).tolist()}, got {y.round(4).tolist()}")
    kept = bn.running_mean.numpy().tolist()
    assert kept == [1.0, -1.0], (
        f"eval() never changes the buffers: expected running_mean [1.0, -1.0], got {kept}; "
        "evaluating would otherwise leak test statistics into the model")


# %%
def test_batchnorm_gradient_matches_finite_differences(batch_norm, gradcheck, Tensor, np):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 2, 2, 3))
    w = rng.uniform(0.5, 2.0, 2)
    b = rng.standard_normal(2)
    probe = rng.standard_normal((3, 2, 2, 3))
    for training in (True, False):
        rm, rv = Tensor(np.array([0.3, -0.2])), Tensor(np.array([1.5, 0.7]))
        def fn(a, g, h, rm=rm, rv=rv, training=training):
            return batch_norm(a, rm, rv, g, h, training=training) * Tensor(probe)

        try:
            gradcheck(fn, [x, w, b])
        except AssertionError as err:
            raise AssertionError(f"batch_norm (training={training}) backward disagrees with "
                                 f"finite differences: {err}") from None

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 6. Systems view: the loops against im2col, and what im2col costs
#
# **FLOPs.** Every output value is a dot product of length `C·kh·kw`, so a convolution does
#
# ```
#   FLOPs = 2 · N · O · H_out · W_out · C · kh · kw          (a multiply and an add each)
# ```
#
# — the same for the loops and for im2col: im2col does not do less arithmetic, it does it in
# one BLAS call (blocked for the cache, vectorised) instead of `N·O·H_out·W_out` interpreted
# Python iterations.
#
# **Memory.** `cols` holds every pixel once per window that contains it: `C·kh·kw·L` values per
# image against `C·H·W` for the input, about `kh·kw / (sh·sw)` times more (9× for a 3×3 kernel
# at stride 1), and the backward pass keeps it alive. Production libraries avoid materialising
# it (implicit GEMM on GPUs, direct convolution kernels in oneDNN, Winograd for 3×3).
#
# Measure both on the same input, on the CPU clock of this thread (other programs on the
# machine do not inflate it; module 14 explains why and builds the full tool), as the median
# of repeated runs after a warm-up.

# %%
def median_cpu_ms(fn, warmup=1, repeats=5):
    """Median CPU time of ``fn()`` in ms: ``warmup`` untimed calls, then ``repeats`` timed ones
    on this thread's clock."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.thread_time_ns()
        fn()
        times.append(time.thread_time_ns() - start)
    return float(np.median(times)) / 1e6


rng = np.random.default_rng(0)
xs = rng.standard_normal((4, 3, 16, 16)).astype(np.float32)
ws = rng.standard_normal((8, 3, 3, 3)).astype(np.float32)
n_, c_, h_, w_ = xs.shape
o_, _, kh_, kw_ = ws.shape
flops = 2 * n_ * o_ * out_size(h_, kh_, 1, 1) * out_size(w_, kw_, 1, 1) * c_ * kh_ * kw_

slow = conv2d_loops(xs, ws, None, 1, 1)
fast = conv2d(Tensor(xs), Tensor(ws), padding=1).numpy()
assert np.allclose(slow, fast, atol=1e-4)
ms_loops = median_cpu_ms(lambda: conv2d_loops(xs, ws, None, 1, 1), warmup=0, repeats=3)
ms_im2col = median_cpu_ms(lambda: conv2d(Tensor(xs), Tensor(ws), padding=1), repeats=20)
cols = im2col(_pad(xs, (1, 1)), (3, 3), (1, 1))
print(f"{flops / 1e6:.2f} MFLOPs: loops {ms_loops:.1f} ms ({flops / ms_loops / 1e6:.3f} "
      f"GFLOP/s), im2col {ms_im2col:.3f} ms ({flops / ms_im2col / 1e6:.2f} GFLOP/s), "
      f"{ms_loops / ms_im2col:.0f}x faster")
print(f"input {xs.nbytes:,} B, cols {cols.nbytes:,} B: {cols.nbytes / xs.nbytes:.1f}x the input")
# Expected: 0.44 MFLOPs; im2col hundreds to thousands of times faster (between 100x and
# 5,000x); cols 9.0x the input

# %% [markdown]
# ## 7. Systems experiment: batch normalisation, measured
#
# Section 5 said what batch norm does; here is what it buys. Train one small CNN on the 8×8
# digits (1,437 training and 360 test images, shipped with the course) with and without a
# `BatchNorm2d` after each convolution, at four batch sizes, with the same optimiser (SGD,
# momentum 0.9, learning rate 0.01), seed and two epochs:
#
# ```
#   (B, 1, 8, 8) ─Conv2d(1, 16, 3, padding=1)─[BatchNorm2d(16)]─ReLU─
#                ─Conv2d(16, 16, 3, padding=1)─[BatchNorm2d(16)]─ReLU─MaxPool2d(2)─► (B, 16, 4, 4)
#                ─Flatten─Linear(256, 10)─► (B, 10)
# ```
#
# The table shows the test accuracy after each epoch (in `eval()` mode: running statistics)
# and the CPU time of one training step (the median over all steps of the run).

# %%
from datasets.loaders import load_digits  # noqa: E402 - the course's shipped data

from tinytorch.activations import ReLU  # noqa: E402
from tinytorch.layers import Flatten, Linear, Sequential  # noqa: E402
from tinytorch.losses import CrossEntropyLoss  # noqa: E402
from tinytorch.optimizers import SGD  # noqa: E402
from tinytorch.tensor import no_grad  # noqa: E402

digits = load_digits()
train_images = (digits.train_x.astype(np.float32) / 16.0).reshape(-1, 1, 8, 8)
test_images = (digits.test_x.astype(np.float32) / 16.0).reshape(-1, 1, 8, 8)


def small_cnn(with_bn):
    def norm():
        return [BatchNorm2d(16)] if with_bn else []
    return Sequential(Conv2d(1, 16, 3, padding=1), *norm(), ReLU(),
                      Conv2d(16, 16, 3, padding=1), *norm(), ReLU(), MaxPool2d(2), Flatten(),
                      Linear(16 * 4 * 4, 10))


def train_and_test(with_bn, batch_size, epochs=2, lr=0.01, seed=0):
    """(test accuracy after each epoch, median CPU ms of one training step)."""
    manual_seed(seed)
    model = small_cnn(with_bn)
    opt, loss_fn = SGD(model.parameters(), lr=lr, momentum=0.9), CrossEntropyLoss()
    rng, accuracies, step_ns = np.random.default_rng(seed), [], []
    for _ in range(epochs):
        model.train()
        order = rng.permutation(len(train_images))
        for i in range(0, len(order), batch_size):
            rows = order[i:i + batch_size]
            start = time.thread_time_ns()
            opt.zero_grad()
            loss_fn(model(Tensor(train_images[rows])), Tensor(digits.train_y[rows])).backward()
            opt.step()
            step_ns.append(time.thread_time_ns() - start)
        model.eval()
        with no_grad():
            predicted = model(Tensor(test_images)).numpy().argmax(axis=1)
        accuracies.append(float((predicted == digits.test_y).mean()))
    return accuracies, float(np.median(step_ns)) / 1e6


runs = {}
print(f"{'batch':>5} {'batch norm':>10} {'epoch 1':>8} {'epoch 2':>8} {'ms/step':>8}")
for batch_size in (2, 8, 32, 128):
    for with_bn in (False, True):
        runs[batch_size, with_bn] = train_and_test(with_bn, batch_size)
        (first, second), ms = runs[batch_size, with_bn]
        print(f"{batch_size:>5} {'yes' if with_bn else 'no':>10} {first:>8.1%} {second:>8.1%} "
              f"{ms:>8.2f}")


def gain(batch_size, epoch):
    return 100 * (runs[batch_size, True][0][epoch] - runs[batch_size, False][0][epoch])


print(f"batch norm's gain in test accuracy (points): after epoch 1 at batch 32 "
      f"{gain(32, 0):+.1f}; after epoch 2 at batch 2 {gain(2, 1):+.1f}, at batch 128 "
      f"{gain(128, 1):+.1f}")
print(f"batch norm's cost per step at batch 32: {runs[32, True][1] / runs[32, False][1]:.2f}x")
# Expected shape: at batch 32 the network with batch norm is already above 90 % after one
# epoch, while the plain one is still far behind (a gain of at least 20 points): normalised
# activations keep every layer's inputs on the same scale, so one learning rate suits all of
# them. The gain grows with the batch size at a fixed number of epochs (at batch 128, at least
# 20 points after epoch 2: fewer, larger steps, and the plain network's small learning rate
# crawls), and all but vanishes at batch 2 (between -5 and 5 points), where the many small
# steps train the plain network too and each batch's statistics come from only 2 images. Batch
# norm is not free: each step costs more (between 1.05x and 2x at batch 32) for the two extra
# normalisations and their backward passes.

# %% [markdown]
# ## 8. ML systems thinking (graded by hand)

# %% [raw]
# # BEGIN QUESTION
# name: written_im2col_memory
# manual: true
# points: 5

# %% [markdown]
# **Q1 · im2col memory.** A ResNet layer applies a 3×3 convolution, stride 1, padding 1, with
# 64 input and 64 output channels to a batch of 32 feature maps of 56×56 in float32. How large
# are the input, the `cols` matrix and the output? What does that mean for training memory
# (what does the backward keep?), and name one way production libraries avoid the cost.

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# Input: 32·64·56·56·4 B ≈ 25.7 MB; output the same (64 channels, 56×56 kept by padding 1).
# `cols` has `C·kh·kw = 576` rows and `L = 3136` columns per image: 32·576·3136·4 B ≈ 231 MB,
# 9× the input. Our backward keeps `cols` for the weight gradient, so every conv layer costs
# ~9× its input in saved activations during training (a 50-layer network would not fit in a
# few GB). Libraries avoid materialising it: implicit GEMM (the GPU kernel gathers each
# window on the fly into shared memory/registers), direct convolution (oneDNN on CPUs),
# Winograd/FFT transforms for 3×3, or recomputing the columns in the backward pass instead of
# storing them (trading FLOPs for memory).

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_weight_sharing
# manual: true
# points: 5

# %% [markdown]
# **Q2 · Weight sharing.** Compare a `Linear` layer mapping a 1×28×28 image to 8×26×26
# features with `Conv2d(1, 8, 3)`, which produces the same output shape: count the
# parameters and the multiply-adds of each. What property of images justifies the
# convolution's assumption, and what does a convolution *not* give you for free (think of an
# object that moves, rotates or grows)?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# Linear: 784 inputs × 5408 outputs = 4,239,872 weights + 5,408 biases ≈ 4.2 M parameters and
# 4.2 M multiply-adds per image. Conv2d(1, 8, 3): 8·1·3·3 + 8 = 80 parameters; multiply-adds
# 5408 outputs × 9 = 48,672 per image. The convolution assumes *locality* (useful features are
# built from nearby pixels) and *stationarity* (the same feature is useful everywhere), which
# makes it translation **equivariant**: shifting the input shifts the feature maps. It is not
# invariant to rotation or scale (a rotated edge needs another filter; data augmentation or
# more filters must cover it), and exact shift invariance only comes with pooling, and only
# approximately (striding breaks it for shifts that are not multiples of the stride).

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_batchnorm_modes
# manual: true
# points: 5

# %% [markdown]
# **Q3 · Train/eval for batch norm.** A CNN with `BatchNorm2d` scores 98% on its validation
# set when evaluated after `model.eval()`, but a teammate's serving code forgets `eval()` and
# sends one image at a time. What happens to each prediction, and why? Why does the running
# variance use the unbiased estimate `M/(M-1)·σ²`, and why does batch norm behave badly with
# very small training batches?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# In training mode a single image is normalised with its *own* statistics: each channel's
# mean over one image's pixels is subtracted, so the absolute level of every feature map is
# lost (for a 1×1 map the output is just the bias, whatever the input), predictions depend on
# the image alone in a distorted way and accuracy collapses; the running buffers are also
# overwritten by serving traffic. `eval()` switches to the running averages learned over
# many training batches, a fixed per-channel affine map. The running variance estimates the
# population variance, for which the biased batch variance is too small by `(M-1)/M`; the
# unbiased one averages to the true value. With tiny batches (say 2 images of 1×1 maps) the
# batch statistics are very noisy estimates, the noise differs between training (batch
# statistics) and inference (running statistics), and normalising over few values removes
# real signal; GroupNorm/LayerNorm avoid the batch dimension for that reason.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## Summary
#
# You built the layers of a convolutional network: convolution by definition and as
# im2col + one matrix product (with `col2im` as its backward), max and average pooling, and
# batch normalisation with running statistics, each a `Function` with its own gradient, and
# measured why im2col wins and what it costs, and what batch norm buys in training at each
# batch size. Export with `python export.py 09`; the 1998 CNN
# milestone (`python milestones/cnn_1998.py`) trains LeNet-style networks with them.
