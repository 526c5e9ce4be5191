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
#   H_out = floor((H + 2·padding - dilation·(kernel - 1) - 1) / stride) + 1     (same for W)
# ```
#
# (with the default `dilation = 1` this is `floor((H + 2·padding - kernel) / stride) + 1`).
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
        ValueError: anything else (``padding='same'`` is handled by ``conv2d`` itself).
    """
    items = tuple(value) if isinstance(value, (tuple, list)) else (value, value)
    if len(items) != 2 or not all(isinstance(v, (int, np.integer)) for v in items):
        raise ValueError(f"{name} must be an int or a pair of ints, got {value!r}")
    return int(items[0]), int(items[1])


def out_size(size: int, kernel: int, stride: int, padding: int, dilation: int = 1) -> int:
    """Output length along one axis:
    ``(size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1``."""
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def _pad(x: np.ndarray, padding: IntPair, value: float = 0.0,
         extra: IntPair = (0, 0)) -> np.ndarray:
    """Pad the two spatial axes of ``(N, C, H, W)`` by ``padding`` on each side, plus
    ``extra`` rows and columns at the bottom and right (pooling's ``ceil_mode``), with
    ``value`` (no copy when there is nothing to pad)."""
    (ph, pw), (eh, ew) = padding, extra
    if ph == pw == eh == ew == 0:
        return x
    n, c, h, w = x.shape
    shape = (n, c, h + 2 * ph + eh, w + 2 * pw + ew)
    # NOTE: a new array and one slice assignment: about twice as fast as np.pad, whose general
    # machinery (any number of axes, many modes) costs more than the copy at these sizes
    out = np.zeros(shape, x.dtype) if value == 0 else np.full(shape, value, x.dtype)
    out[:, :, ph:ph + h, pw:pw + w] = x
    return out


def _crop(x: np.ndarray, padding: IntPair, extra: IntPair = (0, 0)) -> np.ndarray:
    """Undo ``_pad``: drop ``padding`` rows and columns on each side (and the ``extra``)."""
    (ph, pw), (eh, ew) = padding, extra
    return x[:, :, ph:x.shape[2] - ph - eh, pw:x.shape[3] - pw - ew]


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
# Two more arguments complete PyTorch's `conv2d`. **Dilation** `d` spreads the kernel's taps
# `d` pixels apart (`x_pad[n, c, i·s + u·d, j·s + v·d]`): a 3×3 kernel with `d = 2` sees a
# 5×5 area with 9 weights. **Groups** `G` split the `C` input channels and the `O` filters
# into `G` independent convolutions: filter `o` belongs to group `g = o // (O / G)` and only
# sees input channels `g·C/G … (g+1)·C/G - 1`, so the weight is `(O, C/G, kh, kw)`.
# `groups = C = O` is a *depthwise* convolution (one filter per channel, as in MobileNet).
#
# Write it first exactly as the formula says, with loops over the batch, the filters and the
# output positions, on plain NumPy arrays. It is slow — you will measure how slow in section 6
# — but it is the definition every faster version is checked against.

# %%
#| export
def conv2d_loops(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None = None,
                 stride: Any = 1, padding: Any = 0, dilation: Any = 1,
                 groups: int = 1) -> np.ndarray:
    """2-D convolution by its definition, with Python loops (the slow comparison point).

    Args:
        x: input ``(N, C, H, W)``.
        weight: filters ``(O, C // groups, kh, kw)``.
        bias: ``(O,)`` or None.
        stride, padding, dilation: an int or a pair ``(along H, along W)``.
        groups: split the channels and the filters into this many independent convolutions.

    Returns:
        ``(N, O, H_out, W_out)`` with ``H_out = out_size(H, kh, sh, ph, dh)`` (same for W),
        in ``x``'s dtype.

    APPROACH:
        1. ``(sh, sw), (ph, pw), (dh, dw) = _pair(stride), _pair(padding), _pair(dilation)``;
           read the shapes (``o, cg, kh, kw = weight.shape``: ``cg`` channels per group);
           compute ``ho``, ``wo`` with ``out_size``; ``xp = _pad(x, (ph, pw))``.
        2. ``out = np.zeros((n, o, ho, wo), dtype=x.dtype)``; ``per_group = o // groups``.
        3. Loop over ``b`` in the batch, ``k`` over the filters, ``i`` over ``ho`` and ``j``
           over ``wo``: filter ``k`` reads channels ``g*cg : (g+1)*cg`` with ``g = k //
           per_group``; ``patch = xp[b, g*cg:(g+1)*cg, i*sh : i*sh + dh*(kh-1) + 1 : dh,
           j*sw : j*sw + dw*(kw-1) + 1 : dw]`` (shape ``(cg, kh, kw)``) and
           ``out[b, k, i, j] = np.sum(patch * weight[k])``.
        4. Add ``bias[k]`` to every output of filter ``k`` (``out += bias.reshape(1, o, 1, 1)``)
           when a bias is given.

    EXAMPLE:
        >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
        >>> conv2d_loops(x, np.array([[[[1.0, 0.0], [0.0, 1.0]]]], dtype=np.float32))[0, 0]
        array([[ 5.,  7.,  9.],
               [13., 15., 17.],
               [21., 23., 25.]], dtype=float32)
        >>> conv2d_loops(x, np.array([[[[1.0, 0.0], [0.0, 1.0]]]], dtype=np.float32),
        ...              dilation=2)[0, 0]               # taps (0, 0) and (2, 2) of each window
        array([[10., 12.],
               [18., 20.]], dtype=float32)

    HINT: the window of output ``(i, j)`` starts at ``(i*sh, j*sw)`` in the *padded* input,
    not at ``(i, j)``; a stride of 2 skips every other position. A slice with step ``dh``
    picks the dilated taps: its stop is one past the last tap, ``i*sh + dh*(kh-1) + 1``.
    """
    # BEGIN SOLUTION NO PROMPT
    (sh, sw), (ph, pw) = _pair(stride, "stride"), _pair(padding, "padding")
    dh, dw = _pair(dilation, "dilation")
    n, c, h, w = x.shape
    o, cg, kh, kw = weight.shape
    ho, wo = out_size(h, kh, sh, ph, dh), out_size(w, kw, sw, pw, dw)
    xp = _pad(x, (ph, pw))
    out = np.zeros((n, o, ho, wo), dtype=x.dtype)
    per_group = o // groups
    for b in range(n):
        for k in range(o):
            g = k // per_group
            for i in range(ho):
                for j in range(wo):
                    patch = xp[b, g * cg:(g + 1) * cg,
                               i * sh:i * sh + dh * (kh - 1) + 1:dh,
                               j * sw:j * sw + dw * (kw - 1) + 1:dw]
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


# %%
def test_conv2d_loops_dilation_and_groups(conv2d_loops, np):
    x = np.arange(2 * 4 * 5 * 5, dtype=np.float64).reshape(2, 4, 5, 5)
    w = np.arange(6 * 2 * 2 * 2, dtype=np.float64).reshape(6, 2, 2, 2) / 10
    out = conv2d_loops(x, w, dilation=(2, 1), groups=2)
    assert out.shape == (2, 6, 3, 4), (
        f"dilation 2 spreads a 2-row kernel over 3 rows: H_out = 5 - 2 = 3, W_out = 4; "
        f"expected (2, 6, 3, 4), got {out.shape}")
    want = np.sum(x[1, 2:4, 1:4:2, 2:4] * w[4])
    assert np.isclose(out[1, 4, 1, 2], want), (
        f"filter 4 is in group 4 // 3 = 1, so it reads channels 2 and 3, taps 2 rows apart: "
        f"expected {want:.2f}, got {out[1, 4, 1, 2]:.2f}")

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
# Dilation changes only the two window axes: a tap `u` further down is `dh` rows further, so
# their strides become `sH·dh` and `sW·dw` (and a window spans `dh·(kh - 1) + 1` rows).
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
def sliding_windows(x: np.ndarray, kernel_size: IntPair, stride: IntPair,
                    dilation: IntPair = (1, 1)) -> np.ndarray:
    """A read-only view of every ``kh × kw`` window of ``x``, without copying.

    Args:
        x: ``(N, C, H, W)`` (already padded).
        kernel_size: ``(kh, kw)``.
        stride: ``(sh, sw)``.
        dilation: ``(dh, dw)``, the distance between two taps of a window.

    Returns:
        A view of shape ``(N, C, kh, kw, H_out, W_out)`` with
        ``view[n, c, u, v, i, j] == x[n, c, i*sh + u*dh, j*sw + v*dw]``.

    APPROACH:
        1. ``n, c, h, w = x.shape``; ``ho = (h - dh*(kh - 1) - 1) // sh + 1`` (the same for
           ``wo``).
        2. ``s_n, s_c, s_h, s_w = x.strides`` (in bytes).
        3. Return ``as_strided(x, shape=(n, c, kh, kw, ho, wo), strides=(s_n, s_c, s_h * dh,
           s_w * dw, s_h * sh, s_w * sw), writeable=False)``.

    EXAMPLE:
        >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
        >>> win = sliding_windows(x, (2, 2), (2, 2))
        >>> win.shape, win[0, 0, :, :, 1, 0].tolist(), bool(np.shares_memory(win, x))
        ((1, 1, 2, 2, 2, 2), [[8.0, 9.0], [12.0, 13.0]], True)
        >>> sliding_windows(x, (2, 2), (1, 1), (2, 2))[0, 0, :, :, 0, 1].tolist()
        [[1.0, 3.0], [9.0, 11.0]]

    HINT: strides are in *bytes* in NumPy; taking them from ``x.strides`` keeps the view
    right for any dtype and for inputs that are themselves views.
    """
    # BEGIN SOLUTION NO PROMPT
    kh, kw = kernel_size
    sh, sw = stride
    dh, dw = dilation
    n, c, h, w = x.shape
    ho, wo = (h - dh * (kh - 1) - 1) // sh + 1, (w - dw * (kw - 1) - 1) // sw + 1
    s_n, s_c, s_h, s_w = x.strides
    return as_strided(x, shape=(n, c, kh, kw, ho, wo),
                      strides=(s_n, s_c, s_h * dh, s_w * dw, s_h * sh, s_w * sw),
                      writeable=False)
    # END SOLUTION
    raise NotImplementedError("module 09: implement sliding_windows (see its docstring)")  # STUB


def im2col(x: np.ndarray, kernel_size: IntPair, stride: IntPair,
           dilation: IntPair = (1, 1)) -> np.ndarray:
    """Every window of ``x`` as a column: ``(N, C, H, W) -> (N, C*kh*kw, H_out*W_out)``.

    Args:
        x: ``(N, C, H, W)`` (already padded).
        kernel_size, stride, dilation: pairs, as in ``sliding_windows``.

    Returns:
        ``cols`` with ``cols[n, (c*kh + u)*kw + v, i*W_out + j] ==
        x[n, c, i*sh + u*dh, j*sw + v*dw]`` (a new, contiguous array).

    APPROACH:
        1. ``win = sliding_windows(x, kernel_size, stride, dilation)`` — ``(N, C, kh, kw,
           H_out, W_out)``.
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
    win = sliding_windows(x, kernel_size, stride, dilation)
    n, c, kh, kw, ho, wo = win.shape
    return win.reshape(n, c * kh * kw, ho * wo)
    # END SOLUTION
    raise NotImplementedError("module 09: implement im2col (see its docstring)")  # STUB


def col2im(cols: np.ndarray, x_shape: tuple[int, ...], kernel_size: IntPair,
           stride: IntPair, dilation: IntPair = (1, 1)) -> np.ndarray:
    """The adjoint of ``im2col``: add every column entry back into the pixel it came from.

    Args:
        cols: ``(N, C*kh*kw, H_out*W_out)``, e.g. the gradient of ``im2col``'s output.
        x_shape: ``(N, C, H, W)``, the shape of the (padded) image ``im2col`` read.
        kernel_size, stride, dilation: as in ``im2col``.

    Returns:
        ``(N, C, H, W)`` in ``cols``' dtype; a pixel covered by ``k`` windows is the sum of
        its ``k`` entries (a pixel in no window gets 0).

    APPROACH:
        1. Compute ``ho``, ``wo`` from ``x_shape`` as in ``sliding_windows``.
        2. ``win = cols.reshape(n, c, kh, kw, ho, wo)``; ``out = np.zeros(x_shape,
           dtype=cols.dtype)``.
        3. For every kernel offset ``(u, v)``, whose taps start at row ``u*dh`` and column
           ``v*dw``: ``out[:, :, u*dh : u*dh + sh*ho : sh, v*dw : v*dw + sw*wo : sw] +=
           win[:, :, u, v]``.
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
    dh, dw = dilation
    ho, wo = (h - dh * (kh - 1) - 1) // sh + 1, (w - dw * (kw - 1) - 1) // sw + 1
    win = cols.reshape(n, c, kh, kw, ho, wo)
    out = np.zeros(x_shape, dtype=cols.dtype)
    for u in range(kh):
        for v in range(kw):
            out[:, :, u * dh:u * dh + sh * ho:sh, v * dw:v * dw + sw * wo:sw] += win[:, :, u, v]
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
    dil = sliding_windows(x, (2, 2), (1, 2), (3, 2))
    assert dil.shape == (2, 3, 2, 2, 2, 2), (
        f"dilation (3, 2) makes a 2x2 kernel span 4x3 pixels: H_out = 5 - 3 = 2, "
        f"W_out = (6 - 3) // 2 + 1 = 2; expected (2, 3, 2, 2, 2, 2), got {dil.shape}")
    got, want = dil[0, 1, 1, 1, 1, 1], x[0, 1, 1 + 1 * 3, 1 * 2 + 1 * 2]
    assert got == want, (
        f"view[0, 1, 1, 1, 1, 1] must be x[0, 1, i*sh + u*dh, j*sw + v*dw] = x[0, 1, 4, 4] = "
        f"{want}, got {got}: the window axes step by the dilation")


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
# **Stride 1: the input gradient without `col2im`.** `col2im` adds each of the `kh·kw` slices
# of `d cols` into a window-shaped region of the padded image: rows of `W_out` numbers that land
# `W_out + kw - 1` numbers apart, so NumPy adds one short row at a time (16 numbers in the
# second convolution of a CIFAR-10 network) and pays its fixed cost per row, not per image.
# With stride 1 there is a way around it. Put each output's gradient at its window's
# top-left corner in a zero plane the size of the padded input, `(H_p, W_p)`, and flatten the
# plane. Kernel offset `(u, v)` sends the gradient at corner `(i, j)` to pixel `(i + u, j + v)`,
# which is flat position `i·W_p + j` plus `s = u·W_p + v` (`u·d_h·W_p + v·d_w` with dilation):
# the same shift for every corner. So `d x_pad` is `kh·kw` whole planes added at shifts `s`,
# each one long contiguous add over all channels, not `H_out` short ones per channel:
#
# ```
#   gp      = zeros (N, O, H_p·W_p); every output's gradient at its window's corner
#   taps    = W_tapsᵀ @ gp      (N, kh·kw·C, H_p·W_p)   one product, rows ordered (u, v, c)
#   d x_pad[s:] += taps[u, v][: end - s]                for each offset, s = u·W_p + v
# ```
#
# What spills past the end of a plane comes from the zero corners of the bottom rows and
# right columns, so it adds nothing — as long as the weight is finite: `0 · inf` is NaN, and
# an infinite weight would put NaN where `col2im` adds nothing (the paragraph on infinite
# weights below), so such a weight takes `col2im`. The product is a little larger (`H_p·W_p`
# columns instead of `H_out·W_out`), and the input gradient is still faster than `d cols` +
# `col2im` on that layer (`docs/performance.md` measures both). The given
# `_input_grad_by_shifts` does it; `col2im` stays the general tool (strides, groups, pooling).
#
# **Groups** cost one reshape each way: the columns of group `g` are the contiguous block of
# rows `g·K … (g+1)·K - 1` of `cols` (with `K = C/G·kh·kw`, because `(c, u, v)` is flattened
# channel first), and the filters of group `g` are a contiguous block of `O/G` rows of `W2`:
#
# ```
#   cols (N, C·kh·kw, L) ──reshape──► (N, G, K, L)
#   W2   (O, K)          ──reshape──► (G, O/G, K)
#   out  = W2 @ cols                  (N, G, O/G, L)   np.matmul pairs group g with group g
#        .reshape(N, O, L)
# ```
#
# and the backward is the same two products, group by group. With `G = 1` this is exactly the
# single product above.
#
# **Initialisation** is `Linear`'s (module 03) with `fan_in = in_channels / groups · kh · kw`
# (the weights one output sums over): PyTorch's `kaiming_uniform_(a=√5)` works out to
# `bound = 1 / sqrt(fan_in)`, weight and then bias drawn from `Uniform(-bound, bound)`.
#
# **`padding='same'`** (given in `conv2d`) pads so that `H_out = H` (stride 1 only): the kernel
# spans `dh·(kh - 1)` extra rows; half of them go on top and the rest at the bottom, so an odd
# total puts the extra row at the bottom, as PyTorch does. `padding='valid'` is no padding.
#
# **`padding_mode`** (given in `Conv2d`) says what the padding holds. `'zeros'` is the default
# above; the other three fill it with the image's own pixels, then convolve without padding:
#
# ```
#   row  a b c d       'reflect'    c b | a b c d | c b      mirrored, the edge not repeated
#                      'replicate'  a a | a b c d | d d      the edge repeated
#                      'circular'   c d | a b c d | a b      wrapped around from the other side
# ```
#
# Each padded pixel is a copy of a real one, so the padding's gradient flows back to the pixel
# it copied (a given `Function`, `_PadFn`, adds it there).
#
# **An infinite or NaN weight** (a diverged training run) meets the zero padding too, and in
# the matrix product `0 · inf` is NaN. The padding is not part of the image — a weight that
# lands on it adds nothing — so `conv2d` (given) takes a slower path for such weights only:
# one 1×1 convolution per kernel tap, kept only in the outputs where that tap reads a real
# pixel. (PyTorch's answer here depends on the kernel it picks for the shapes;
# `docs/conformance.md` has the details.)

# %%
#| export
def _input_grad_by_shifts(grad: np.ndarray, weight: np.ndarray, x_pad_shape: tuple[int, ...],
                          dilation: IntPair) -> np.ndarray:
    """The gradient of a stride-1, one-group convolution's padded input, without ``col2im``
    (provided; see "Stride 1" above): ``grad (N, O, H_out, W_out)`` -> ``(N, C, H_p, W_p)``,
    ``x_pad_shape``. The same numbers as ``col2im`` of ``d cols``."""
    n, o, ho, wo = grad.shape
    _, c, hp, wp = x_pad_shape
    kh, kw = weight.shape[2:]
    dh, dw = dilation
    p = hp * wp                                                    # one padded plane, flat
    gp = np.zeros((n, o, hp, wp), dtype=grad.dtype)
    gp[:, :, :ho, :wo] = grad                                      # at each window's corner
    w_taps = weight.transpose(2, 3, 1, 0).reshape(kh * kw * c, o)  # rows ordered (u, v, c)
    taps = np.matmul(w_taps, gp.reshape(n, o, p))                  # (N, kh*kw*C, P)
    taps = taps.reshape(n, kh * kw, c * p)                         # one (C*P) block per offset
    dxp = np.zeros((n, c * p), dtype=grad.dtype)
    for u in range(kh):
        for v in range(kw):
            s = u * dh * wp + v * dw                               # the offset's flat shift
            dxp[:, s:] += taps[:, u * kw + v, :c * p - s]
    return dxp.reshape(x_pad_shape)


class _Conv2dFn(Function):
    """2-D convolution (im2col + one matmul per group) with its own backward (col2im)."""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None = None,
                stride: IntPair = (1, 1), padding: IntPair = (0, 0),
                dilation: IntPair = (1, 1), groups: int = 1,
                needs_input_grad: bool = True) -> np.ndarray:
        """``(N, C, H, W) * (O, C/G, kh, kw) -> (N, O, H_out, W_out)`` via im2col and a matmul.

        APPROACH:
            1. ``xp = _pad(x, padding)``; ``o, cg, kh, kw = weight.shape``; ``n = x.shape[0]``;
               ``k = cg * kh * kw`` (the length of one group's window).
            2. ``cols = im2col(xp, (kh, kw), stride, dilation)`` — ``(N, C*kh*kw, L)`` —, then
               ``cols = cols.reshape(n, groups, k, -1)`` — ``(N, G, K, L)``; ``ho``, ``wo``
               from ``out_size`` (so that ``L = ho * wo``).
            3. ``out = np.matmul(weight.reshape(groups, o // groups, k), cols)`` —
               ``(N, G, O/G, L)`` —, reshaped to ``(N, O, L)``; if ``bias`` is not None:
               ``out += bias.reshape(1, o, 1)``.
            4. Save for backward: ``ctx.save_for_backward(cols, weight)`` and, as attributes,
               ``ctx.x_pad_shape = xp.shape``, ``ctx.stride``, ``ctx.padding``,
               ``ctx.dilation``, ``ctx.groups``, ``ctx.has_bias = bias is not None``,
               ``ctx.needs_input_grad``.
            5. Return ``out.reshape(n, o, ho, wo)``.

        EXAMPLE:
            >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
            >>> w = np.array([[[[1.0, 0.0], [0.0, 1.0]]]], dtype=np.float32)
            >>> _Conv2dFn.forward(Context(), x, w, np.array([0.5], np.float32))[0, 0, 0]
            array([5.5, 7.5, 9.5], dtype=float32)

        HINT: ``np.matmul`` of ``(G, O/G, K)`` with ``(N, G, K, L)`` broadcasts the weight over
        the batch and pairs the groups: ``(N, G, O/G, L)`` is already channels-first, so the
        final reshapes are free.
        """
        # BEGIN SOLUTION NO PROMPT
        xp = _pad(x, padding)
        o, cg, kh, kw = weight.shape
        n, k = x.shape[0], cg * kh * kw
        ho = out_size(x.shape[2], kh, stride[0], padding[0], dilation[0])
        wo = out_size(x.shape[3], kw, stride[1], padding[1], dilation[1])
        cols = im2col(xp, (kh, kw), stride, dilation)                  # (N, C*kh*kw, L)
        cols = cols.reshape(n, groups, k, ho * wo)                     # (N, G, K, L)
        out = np.matmul(weight.reshape(groups, o // groups, k), cols)  # (N, G, O/G, L)
        out = out.reshape(n, o, ho * wo)                               # (N, O, L)
        if bias is not None:
            out += bias.reshape(1, o, 1)
        ctx.save_for_backward(cols, weight)
        ctx.x_pad_shape = xp.shape
        ctx.stride, ctx.padding, ctx.dilation, ctx.groups = stride, padding, dilation, groups
        ctx.has_bias, ctx.needs_input_grad = bias is not None, needs_input_grad
        return out.reshape(n, o, ho, wo)
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 09: implement _Conv2dFn.forward (see its docstring)")  # STUB

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray | None, ...]:
        """Gradients ``(dx, dweight)``, plus ``dbias`` when the forward had a bias.

        APPROACH:
            1. ``cols, weight = ctx.saved`` (``cols`` is ``(N, G, K, L)``);
               ``n, o, ho, wo = grad.shape``; ``groups = ctx.groups``;
               ``g = grad.reshape(n, groups, o // groups, ho * wo)`` — ``(N, G, O/G, L)``.
            2. ``dw = np.matmul(g, cols.transpose(0, 1, 3, 2)).sum(axis=0)`` —
               ``(G, O/G, K)`` —, reshaped to ``weight.shape``.
            3. ``dx = None`` unless ``ctx.needs_input_grad``: then, with stride 1, one
               group and a finite weight (``ctx.stride == (1, 1) and groups == 1 and
               np.isfinite(weight).all()``), ``dx = _crop(_input_grad_by_shifts(grad,
               weight, ctx.x_pad_shape, ctx.dilation), ctx.padding)`` (given: see the speed
               note above); otherwise
               ``dcols = np.matmul(w2.transpose(0, 2, 1), g)`` with
               ``w2 = weight.reshape(groups, o // groups, -1)`` — ``(N, G, K, L)`` —,
               reshaped to ``(N, C*kh*kw, L)``, and
               ``dx = _crop(col2im(dcols, ctx.x_pad_shape, (kh, kw), ctx.stride,
               ctx.dilation), ctx.padding)``.
            4. Return ``(dx, dw)``, or ``(dx, dw, grad.sum(axis=(0, 2, 3)))`` when
               ``ctx.has_bias``.

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
        groups = ctx.groups
        kh, kw = weight.shape[2:]
        g = grad.reshape(n, groups, o // groups, ho * wo)              # (N, G, O/G, L)
        dw = np.matmul(g, cols.transpose(0, 1, 3, 2)).sum(axis=0).reshape(weight.shape)
        dx = None
        if (ctx.needs_input_grad and ctx.stride == (1, 1) and groups == 1
                and np.isfinite(weight).all()):
            dx = _crop(_input_grad_by_shifts(grad, weight, ctx.x_pad_shape, ctx.dilation),
                       ctx.padding)
        elif ctx.needs_input_grad:
            w2 = weight.reshape(groups, o // groups, -1)               # (G, O/G, K)
            dcols = np.matmul(w2.transpose(0, 2, 1), g)                # (N, G, K, L)
            dcols = dcols.reshape(n, -1, ho * wo)                      # (N, C*kh*kw, L)
            dx = _crop(col2im(dcols, ctx.x_pad_shape, (kh, kw), ctx.stride, ctx.dilation),
                       ctx.padding)
        if ctx.has_bias:
            return dx, dw, grad.sum(axis=(0, 2, 3))
        return dx, dw
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 09: implement _Conv2dFn.backward (see its docstring)")  # STUB


def _conv_padding(padding: Any, kernel_size: IntPair, stride: IntPair,
                  dilation: IntPair) -> tuple[IntPair, IntPair]:
    """``(padding on each side, extra rows and columns at the bottom and right)``.

    An int or a pair pads symmetrically; ``'valid'`` is no padding; ``'same'`` pads
    ``dilation * (kernel - 1)`` in all: half on each side, and the odd one out (when the
    total is odd) at the bottom or right, as PyTorch does.
    """
    if not isinstance(padding, str):
        return _pair(padding, "padding"), (0, 0)
    if padding == "valid":
        return (0, 0), (0, 0)
    if padding != "same":
        raise ValueError(f"Invalid padding string '{padding}', should be one of "
                         "{'valid', 'same'}")
    if stride != (1, 1):
        raise ValueError("padding='same' is not supported for strided convolutions")
    total = (dilation[0] * (kernel_size[0] - 1), dilation[1] * (kernel_size[1] - 1))
    return (total[0] // 2, total[1] // 2), (total[0] % 2, total[1] % 2)


Pad4 = tuple[int, int, int, int]

#: ``Conv2d``'s padding modes, and the ``np.pad`` mode each one is.
PADDING_MODES = {"zeros": "constant", "reflect": "reflect", "replicate": "edge",
                 "circular": "wrap"}


def _check_pad(shape: tuple[int, ...], pad: Pad4, mode: str) -> None:
    """PyTorch's limits of ``F.pad`` for the modes that copy pixels: reflecting needs fewer
    padded rows than the image has (one image row is the mirror), wrapping at most as many,
    and both need a non-empty image."""
    for (before, after), size in (((pad[2], pad[3]), shape[-2]), ((pad[0], pad[1]), shape[-1])):
        if mode == "reflect" and max(before, after) >= size:
            raise RuntimeError(f"Padding size should be less than the corresponding input "
                               f"dimension, but got: padding ({before}, {after}) for a "
                               f"dimension of size {size} (padding_mode='reflect')")
        if mode == "circular" and (max(before, after) > size or size == 0):
            raise RuntimeError(f"Padding value causes wrapping around more than once: "
                               f"padding ({before}, {after}) for a dimension of size {size}")
        if mode == "replicate" and size == 0 and before + after > 0:
            raise RuntimeError("padding_mode='replicate' needs a non-empty input")


class _PadFn(Function):
    """Pad the last two axes by ``pad = (left, right, top, bottom)`` (provided): with zeros,
    or with the image's own pixels — mirrored (``'reflect'``), repeated (``'replicate'``) or
    wrapped around (``'circular'``)."""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray, *, pad: Pad4, mode: str = "zeros") -> np.ndarray:
        left, right, top, bottom = pad
        ctx.pad, ctx.mode, ctx.shape = pad, mode, x.shape
        if mode == "zeros":
            return np.pad(x, [(0, 0)] * (x.ndim - 2) + [(top, bottom), (left, right)])
        # which image row (column) each padded row (column) copies
        ctx.rows = np.pad(np.arange(x.shape[-2]), (top, bottom), mode=PADDING_MODES[mode])
        ctx.cols = np.pad(np.arange(x.shape[-1]), (left, right), mode=PADDING_MODES[mode])
        return x[..., ctx.rows[:, None], ctx.cols]

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray]:
        left, right, top, bottom = ctx.pad
        if ctx.mode == "zeros":
            h, w = grad.shape[-2:]
            return (np.ascontiguousarray(grad[..., top:h - bottom, left:w - right]),)
        dx = np.zeros(ctx.shape, dtype=grad.dtype)
        np.add.at(dx, (Ellipsis, ctx.rows[:, None], ctx.cols), grad)  # a copied pixel adds up
        return (dx,)


def _pad2d(input: Tensor, pad: Pad4, mode: str = "zeros") -> Tensor:  # noqa: A002
    """Pad the last two axes of ``input`` by ``pad = (left, right, top, bottom)``, as
    ``F.pad(input, pad, mode)`` does for 2-D padding (``mode``: one of ``PADDING_MODES``;
    PyTorch calls zeros ``'constant'``). Differentiable (provided)."""
    if mode not in PADDING_MODES:
        raise ValueError(f"padding mode must be one of {sorted(PADDING_MODES)}, got {mode!r}")
    if mode != "zeros":
        _check_pad(input.shape, pad, mode)
    return _PadFn.apply(input, pad=tuple(int(p) for p in pad), mode=mode)


def _reading_outputs(size: int, before: int, stride: int, offset: int,
                     n_out: int) -> tuple[int, int]:
    """The outputs ``i0 <= i < i1`` whose tap at ``offset`` (in the padded input) reads a
    real pixel: ``0 <= i * stride + offset - before < size`` (``i0 == i1``: none does)."""
    first = min(n_out, max(0, -((offset - before) // stride)))
    last = min(n_out, (size - 1 + before - offset) // stride + 1)
    return first, max(first, last)


def _conv2d_by_taps(x: Tensor, weight: Tensor, bias: Tensor | None, stride: IntPair,
                    pad: Pad4, dilation: IntPair, groups: int) -> Tensor:
    """``conv2d`` with zero padding ``pad = (left, right, top, bottom)``, one kernel tap at a
    time, each kept only in the outputs where it reads a real pixel (provided).

    Zero padding is not part of the image: a weight that lands on it adds nothing. The im2col
    product multiplies it by 0 all the same, which is NaN when the weight is infinite or NaN
    (``0 · inf``); ``conv2d`` takes this slower path for such weights only. Tap ``(u, v)`` is a
    1×1 convolution of the pixels it reads; the outputs where those are padding are dropped.
    """
    left, right, top, bottom = pad
    n, _, h, w = x.shape
    o, _, kh, kw = weight.shape
    (sh, sw), (dh, dw) = stride, dilation
    ho = out_size(h + top + bottom, kh, sh, 0, dh)
    wo = out_size(w + left + right, kw, sw, 0, dw)
    padded = _PadFn.apply(x, pad=pad)
    out = Tensor(np.zeros((n, o, ho, wo), dtype=x.dtype))
    for u in range(kh):
        i0, i1 = _reading_outputs(h, top, sh, u * dh, ho)
        for v in range(kw):
            j0, j1 = _reading_outputs(w, left, sw, v * dw, wo)
            pixels = padded[:, :, u * dh:u * dh + (ho - 1) * sh + 1:sh,
                            v * dw:v * dw + (wo - 1) * sw + 1:sw]     # (N, C, H_out, W_out)
            tap = _Conv2dFn.apply(pixels, weight[:, :, u:u + 1, v:v + 1], stride=(1, 1),
                                  padding=(0, 0), dilation=(1, 1), groups=groups,
                                  needs_input_grad=pixels.requires_grad)  # (N, O, H_out, W_out)
            out = out + _PadFn.apply(tap[:, :, i0:i1, j0:j1], pad=(j0, wo - j1, i0, ho - i1))
    if bias is not None:
        out = out + bias.reshape(1, o, 1, 1)
    return out


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
           stride: Any = 1, padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """2-D convolution, ``torch.nn.functional.conv2d`` (provided: checks, then your Function).

    Args:
        input: ``(N, C, H, W)``, or ``(C, H, W)`` for one unbatched image.
        weight: ``(O, C // groups, kh, kw)``.
        bias: ``(O,)`` or None.
        stride, dilation: an int or a pair.
        padding: an int, a pair, ``'valid'`` (none) or ``'same'`` (``H_out = H``; stride 1).
        groups: split channels and filters into this many independent convolutions.

    Returns:
        ``(N, O, H_out, W_out)`` (or ``(O, H_out, W_out)`` for an unbatched input).

    Raises:
        RuntimeError: wrong number of dimensions, channel or group mismatch, a kernel larger
            than the padded input, or a weight or bias of another dtype (PyTorch's messages).
        ValueError: an unknown padding string, or ``'same'`` with a stride.
    """
    if input.ndim == 3:
        out = conv2d(input.reshape(1, *input.shape), weight, bias, stride, padding, dilation,
                     groups)
        return out.reshape(*out.shape[1:])
    if input.ndim != 4:
        raise RuntimeError("Expected 3D (unbatched) or 4D (batched) input to conv2d, but got "
                           f"input of size: {list(input.shape)}")
    s, d = _pair(stride, "stride"), _pair(dilation, "dilation")
    if weight.ndim != 4:
        raise RuntimeError(f"weight should have 4 dimensions, got {list(weight.shape)}")
    p, extra = _conv_padding(padding, (weight.shape[2], weight.shape[3]), s, d)
    if min(s) < 1 or min(p) < 0 or min(d) < 1 or groups < 1:
        raise RuntimeError(f"conv2d: stride, dilation and groups must be positive and padding "
                           f"non-negative, got stride={s}, padding={p}, dilation={d}, "
                           f"groups={groups}")
    if input.shape[1] != weight.shape[1] * groups or weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, "
                           f"expected input{list(input.shape)} to have "
                           f"{weight.shape[1] * groups} channels, but got {input.shape[1]} "
                           f"channels instead (and out_channels divisible by groups)")
    hp, wp = input.shape[2] + 2 * p[0] + extra[0], input.shape[3] + 2 * p[1] + extra[1]
    kh, kw = d[0] * (weight.shape[2] - 1) + 1, d[1] * (weight.shape[3] - 1) + 1
    if kh > hp or kw > wp:
        raise RuntimeError(f"Calculated padded input size per channel: ({hp} x {wp}). Kernel "
                           f"size: ({kh} x {kw}). Kernel size can't be greater than actual "
                           "input size")
    if weight.dtype != input.dtype or (bias is not None and bias.dtype != input.dtype):
        raise RuntimeError(f"Input type ({input.dtype}) and weight type ({weight.dtype}) "
                           "should be the same (and the bias's)")
    pad = (p[1], p[1] + extra[1], p[0], p[0] + extra[0])  # (left, right, top, bottom)
    if any(pad) and not np.isfinite(weight.data).all():
        return _conv2d_by_taps(input, weight, bias, s, pad, d, groups)
    x = _PadFn.apply(input, pad=(0, extra[1], 0, extra[0])) if extra != (0, 0) else input
    tensors = (x, weight) if bias is None else (x, weight, bias)
    return _Conv2dFn.apply(*tensors, stride=s, padding=p, dilation=d, groups=groups,
                           needs_input_grad=x.requires_grad)


class Conv2d(Module):
    """2-D convolution layer, ``torch.nn.Conv2d``.

    Args:
        in_channels, out_channels: ``C`` and ``O`` (both divisible by ``groups``).
        kernel_size: an int or ``(kh, kw)``.
        stride, dilation: an int or a pair.
        padding: an int, a pair, ``'valid'`` or ``'same'``.
        groups: independent channel groups (``groups = C`` is a depthwise convolution).
        bias: whether to learn a per-filter bias (``self.bias`` is None otherwise).
        padding_mode: what the padding holds: ``'zeros'`` (PyTorch's default), or the image's
            own pixels, ``'reflect'`` (mirrored, without repeating the edge), ``'replicate'``
            (the edge repeated) or ``'circular'`` (wrapped around from the other side).

    Shapes:
        input ``(N, C, H, W)`` -> output ``(N, O, H_out, W_out)``; ``weight``
        ``(O, C // groups, kh, kw)``, ``bias`` ``(O,)``.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros") -> None:
        """Store the configuration and create ``weight`` and ``bias`` with PyTorch's init.

        APPROACH:
            1. ``super().__init__()``; ``self._check(in_channels, out_channels, groups,
               padding, stride, padding_mode)`` (given: PyTorch's errors).
               Store ``in_channels``, ``out_channels``, ``groups``, ``padding_mode`` and
               ``kernel_size``, ``stride``, ``dilation`` as pairs (``_pair``); ``padding``
               as a pair too, or as given when it is a string (``'same'``, ``'valid'``).
            2. ``fan_in = in_channels // groups * kh * kw``; ``bound = 1 / math.sqrt(fan_in)``;
               ``rng = default_generator()``.
            3. ``self.weight = Parameter(rng.uniform(-bound, bound, (out_channels,
               in_channels // groups, kh, kw)).astype(np.float32))``.
            4. With ``bias``: ``(out_channels,)`` from the same distribution, drawn *after*
               the weight; otherwise ``self.register_parameter("bias", None)``.

        EXAMPLE:
            >>> manual_seed(0); conv = Conv2d(3, 8, 3, padding=1)
            >>> conv.weight.shape, conv.bias.shape, conv.kernel_size, conv.padding
            ((8, 3, 3, 3), (8,), (3, 3), (1, 1))
            >>> bool(np.abs(conv.weight.data).max() <= 1 / np.sqrt(27))
            True
            >>> Conv2d(4, 6, 3, groups=2, padding="same").weight.shape
            (6, 2, 3, 3)

        HINT: ``fan_in`` counts every weight one output sums over: the input channels of its
        group times the kernel area, not just ``in_channels``.
        """
        # BEGIN SOLUTION NO PROMPT
        super().__init__()
        self._check(in_channels, out_channels, groups, padding, stride, padding_mode)
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _pair(kernel_size, "kernel_size")
        self.stride = _pair(stride, "stride")
        self.padding = padding if isinstance(padding, str) else _pair(padding, "padding")
        self.dilation = _pair(dilation, "dilation")
        self.groups = groups
        self.padding_mode = padding_mode
        kh, kw = self.kernel_size
        fan_in = in_channels // groups * kh * kw
        bound = 1.0 / math.sqrt(fan_in)
        rng = default_generator()
        self.weight = Parameter(rng.uniform(
            -bound, bound, (out_channels, in_channels // groups, kh, kw)).astype(np.float32))
        if bias:
            self.bias = Parameter(rng.uniform(-bound, bound, (out_channels,)).astype(np.float32))
        else:
            self.register_parameter("bias", None)
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 09: implement Conv2d.__init__ (see its docstring)")  # STUB

    @staticmethod
    def _check(in_channels: int, out_channels: int, groups: int, padding: Any, stride: Any,
               padding_mode: str) -> None:
        """PyTorch's checks of the layer's arguments (provided)."""
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 "{'valid', 'same'}")
            if padding == "same" and _pair(stride, "stride") != (1, 1):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {set(PADDING_MODES)}, but got "
                             f"padding_mode={padding_mode!r}")

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return self._conv_forward(input, self.weight, self.bias)

    def _conv_forward(self, input: Tensor, weight: Tensor,  # noqa: A002
                      bias: Tensor | None) -> Tensor:
        """``conv2d`` with this layer's geometry (PyTorch's ``_conv_forward``): a padding mode
        other than zeros pads the input first (the odd one out of ``'same'`` at the bottom and
        right), then convolves without padding."""
        if self.padding_mode == "zeros":
            return conv2d(input, weight, bias, self.stride, self.padding, self.dilation,
                          self.groups)
        (ph, pw), (eh, ew) = _conv_padding(self.padding, self.kernel_size, self.stride,
                                           self.dilation)
        padded = _pad2d(input, (pw, pw + ew, ph, ph + eh), self.padding_mode)
        return conv2d(padded, weight, bias, self.stride, 0, self.dilation, self.groups)

    def extra_repr(self) -> str:
        text = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}")
        if self.padding != (0, 0):
            text += f", padding={self.padding}"
        if self.dilation != (1, 1):
            text += f", dilation={self.dilation}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        if self.padding_mode != "zeros":
            text += f", padding_mode={self.padding_mode}"
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
def test_conv2d_dilation_groups_and_same_padding(conv2d, conv2d_loops, Tensor, np):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 4, 7, 6)).astype(np.float32)
    w = rng.standard_normal((6, 2, 3, 2)).astype(np.float32)
    got = conv2d(Tensor(x), Tensor(w), None, 2, 1, (2, 1), 2).numpy()
    want = conv2d_loops(x, w, None, 2, 1, (2, 1), 2)
    assert got.shape == want.shape and np.allclose(got, want, atol=1e-4), (
        f"stride 2, padding 1, dilation (2, 1), groups 2: expected shape {want.shape}, got "
        f"{got.shape}" + (f", largest difference {np.abs(got - want).max():.3g}"
                          if got.shape == want.shape else "")
        + ": reshape cols to (N, G, K, L) and the weight to (G, O/G, K)")
    same = conv2d(Tensor(x), Tensor(w), None, 1, "same", 1, 2).numpy()
    want = conv2d_loops(np.pad(x, ((0, 0), (0, 0), (1, 1), (0, 1))), w, None, 1, 0, 1, 2)
    assert same.shape == (2, 6, 7, 6) and np.allclose(same, want, atol=1e-4), (
        f"padding='same' keeps 7x6 and pads a 3x2 kernel by (1, 1) rows and (0, 1) columns "
        f"(the odd one at the right); got shape {same.shape}")


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
    w = rng.standard_normal((4, 1, 2, 3))
    try:
        ok = gradcheck(lambda a, k, c: conv2d(a, k, c, padding=(1, 2), dilation=(2, 1),
                                              groups=2), [x, w, b[:1].repeat(4)])
    except AssertionError as err:
        raise AssertionError(f"conv2d backward disagrees with finite differences "
                             f"(dilation (2, 1), groups 2): {err}") from None
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
    depthwise = Conv2d(4, 8, (3, 2), groups=4, dilation=2)
    assert depthwise.weight.shape == (8, 1, 3, 2), (
        f"groups=4: each filter sees in_channels / groups = 1 channel, so the weight is "
        f"(8, 1, 3, 2); got {depthwise.weight.shape}")
    wmax = float(np.abs(depthwise.weight.numpy()).max())
    assert wmax <= 1 / np.sqrt(6), (
        f"fan_in of a grouped convolution is in_channels / groups * kh * kw = 6, so the bound "
        f"is {1 / np.sqrt(6):.3f}; max |w| is {wmax:.3f}")

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
#
# **When windows tile the image, skip `col2im`.** With pooling's default (`stride =
# kernel_size`, no dilation, an image that is a whole number of windows) every pixel lies in
# exactly one window, so the windows view is just a reshape of the image:
# `x.reshape(N, C, H_out, kh, W_out, kw).transpose(0, 1, 3, 5, 2, 4)` is `sliding_windows(x)`
# (the same strides). Do the same to a fresh gradient array and `dwin` *is* the gradient:
# writing `dwin[:, :, u, v]` writes the pixels, and there is nothing to add back. `col2im`
# would instead add every entry into an array of zeros with short, strided inner loops (one
# row of `W_out` numbers at a time), a whole extra pass over the image that the view skips
# (docs/performance.md measures it on a Fashion-MNIST CNN's activations). The given
# `window_grads` returns that view when the windows tile, and a plain array for `col2im`
# otherwise.
#
# The forward gains from the same reshape. `win[:, :, u, v]` reads every `kw`-th number of a
# row, a short strided run of `W_out` numbers at a time. When the windows tile
# (`windows_tile`, given), cut each row into its windows, `xp.reshape(N, C, H, W_out, kw)`,
# take the maximum over the last axis's `kw` slices (each window's row), then view the result
# as `(N, C, H_out, kh, W_out)` and take the maximum over its `kh` whole rows, which are
# contiguous runs, longer than the offset loop's. The result is the same (columns before rows
# keeps the first maximum in row-major order, and a NaN still wins). The given `_maximum`
# takes each stage's maximum in one new array: `np.maximum(a, b)` of the first two reads both
# in one pass, where copying the first and then taking the maximum in place passes over the
# image once more.
#
# **PyTorch's other pooling arguments** change only the geometry, which is given
# (`pool_geometry`): `dilation` (max pooling) spreads the taps as in a convolution;
# `ceil_mode=True` rounds the output size up, so a last, partial window covers the leftover
# rows — it is padded at the bottom/right by `extra` rows of `-inf` (max) or zeros (average);
# average pooling divides by `kh·kw` by default, by the number of *real* pixels in the window
# with `count_include_pad=False`, or by `divisor_override`; windows cut short by `ceil_mode`
# never count the extra rows (`_avg_divisor` gives the divisor of every window). Integer
# tensors pool too: max pooling pads them with their dtype's smallest value, and the average
# of integers is truncated towards zero, as in PyTorch.
#
# **Where was the maximum?** `max_pool2d(..., return_indices=True)` (given) also returns, for
# every window, the flat position `row · W + col` of its maximum in the input plane — the
# first one in row-major order (the same tie rule as the backward), never the padding.
# `MaxUnpool2d` uses them to put each maximum back where it was, with zeros everywhere else
# (the "unpooling" of segmentation networks):
#
# ```
#   1 3 2 0        max 2×2         5 2        indices   4  2       unpool   0 0 2 0
#   5 4 1 1   ────────────────►   2 7                   9 10      ───────►  5 0 0 0
#   0 2 7 6                                                                  0 2 7 0
#   1 0 3 4                                                                  0 0 0 0
# ```

# %%
#| export
def _pool_args(kernel_size: Any, stride: Any, padding: Any,
               dilation: Any = 1) -> tuple[IntPair, IntPair, IntPair, IntPair]:
    """Pairs for pooling; ``stride=None`` means ``stride = kernel_size`` (PyTorch's default)."""
    k = _pair(kernel_size, "kernel_size")
    s = k if stride is None or (isinstance(stride, (tuple, list)) and not stride) \
        else _pair(stride, "stride")
    p, d = _pair(padding, "padding"), _pair(dilation, "dilation")
    if min(k) < 1 or min(s) < 1 or min(d) < 1 or min(p) < 0:
        raise RuntimeError(f"pooling: kernel_size, stride and dilation must be positive and "
                           f"padding non-negative, got kernel_size={k}, stride={s}, "
                           f"padding={p}, dilation={d}")
    if p[0] > k[0] // 2 or p[1] > k[1] // 2:
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                           f"pad={p}, kernel_size={k} and dilation={d}")
    return k, s, p, d


def pool_out_size(size: int, kernel: int, stride: int, padding: int, dilation: int = 1,
                  ceil_mode: bool = False) -> int:
    """Pooling's output length along one axis (PyTorch's ``pooling_output_shape``): the
    convolution formula, rounded up with ``ceil_mode``, except that a window must start
    inside the input or its left padding."""
    span = size + 2 * padding - dilation * (kernel - 1) - 1
    out = (span + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + padding:
        out -= 1
    return out


def pool_geometry(x_shape: tuple[int, ...], kernel_size: IntPair, stride: IntPair,
                  padding: IntPair, dilation: IntPair = (1, 1),
                  ceil_mode: bool = False) -> tuple[int, int, IntPair]:
    """``(H_out, W_out, extra)``: the output size and the rows and columns to pad at the
    bottom and right (beyond ``padding``) so that the last window fits (``ceil_mode``)."""
    h, w = x_shape[-2:]
    ho = pool_out_size(h, kernel_size[0], stride[0], padding[0], dilation[0], ceil_mode)
    wo = pool_out_size(w, kernel_size[1], stride[1], padding[1], dilation[1], ceil_mode)
    need_h = (ho - 1) * stride[0] + dilation[0] * (kernel_size[0] - 1) + 1
    need_w = (wo - 1) * stride[1] + dilation[1] * (kernel_size[1] - 1) + 1
    extra = (max(0, need_h - h - 2 * padding[0]), max(0, need_w - w - 2 * padding[1]))
    return ho, wo, extra


def windows_tile(x_pad_shape: tuple[int, ...], kernel_size: IntPair, stride: IntPair,
                 dilation: IntPair = (1, 1)) -> bool:
    """True when the windows tile the (padded) image: ``stride == kernel_size``, no dilation,
    and the image a whole number of windows, so that every pixel lies in exactly one window
    and the windows view is a plain reshape: ``x.reshape(N, C, H_out, kh, W_out, kw)``."""
    h, w = x_pad_shape[-2:]
    (kh, kw), (sh, sw), (dh, dw) = kernel_size, stride, dilation
    return (sh, sw) == (kh, kw) and (dh, dw) == (1, 1) and h % kh == 0 and w % kw == 0


def window_grads(x_pad_shape: tuple[int, ...], kernel_size: IntPair, stride: IntPair,
                 dilation: IntPair, dtype: Any) -> tuple[np.ndarray | None, np.ndarray]:
    """``(dxp, dwin)``: where a pooling backward writes the gradient of every window entry.

    ``dwin`` has the windows' shape ``(N, C, kh, kw, H_out, W_out)``. When the windows
    **tile** the padded image (``stride == kernel_size``, no dilation, the image a whole number
    of windows: pooling's default), every pixel is exactly one window entry, so ``dwin`` is a
    view of ``dxp``, the ``(N, C, H, W)`` gradient itself: writing ``dwin`` writes ``dxp`` and
    no ``col2im`` is needed. Otherwise ``dxp`` is ``None`` and ``dwin`` a new array, for
    ``col2im`` to add back.
    """
    n, c, h, w = x_pad_shape
    (kh, kw), (sh, sw), (dh, dw) = kernel_size, stride, dilation
    ho, wo = (h - dh * (kh - 1) - 1) // sh + 1, (w - dw * (kw - 1) - 1) // sw + 1
    if windows_tile(x_pad_shape, kernel_size, stride, dilation):
        dxp = np.empty(x_pad_shape, dtype=dtype)                       # every pixel written
        dwin = dxp.reshape(n, c, ho, kh, wo, kw).transpose(0, 1, 3, 5, 2, 4)
        return dxp, dwin                                               # (N, C, kh, kw, Ho, Wo)
    return None, np.empty((n, c, kh, kw, ho, wo), dtype=dtype)


def _maximum(arrays: list[np.ndarray]) -> np.ndarray:
    """The element-wise maximum of ``arrays`` (same shape), in one new array (provided; a NaN
    wins, as in ``np.maximum``): the first two in one pass, no copy of the first."""
    if len(arrays) == 1:
        return arrays[0].copy()
    out = np.maximum(arrays[0], arrays[1])
    for a in arrays[2:]:
        np.maximum(out, a, out=out)
    return out


def _lowest(dtype: Any) -> float:
    """The value max pooling pads with: ``-inf``, or an integer dtype's smallest value."""
    return float(-np.inf) if np.dtype(dtype).kind == "f" else int(np.iinfo(dtype).min)


def _avg_divisor(x_shape: tuple[int, ...], kernel_size: IntPair, stride: IntPair,
                 padding: IntPair, extra: IntPair, count_include_pad: bool,
                 divisor_override: int | None, dtype: Any) -> Any:
    """What average pooling divides each window's sum by: ``divisor_override``, or
    ``kh * kw``, or — when some window is cut short — ``(H_out, W_out)`` counts of the
    pixels each window may count (the real ones, plus the padding with
    ``count_include_pad``; never the ``ceil_mode`` extra), in ``dtype`` for float inputs."""
    if divisor_override is not None:
        return divisor_override
    kh, kw = kernel_size
    if extra == (0, 0) and (count_include_pad or padding == (0, 0)):
        return kh * kw
    h, w = x_shape[-2:]
    inside = _pad(np.ones((1, 1, h, w)), padding, value=float(count_include_pad))
    inside = _pad(inside, (0, 0), extra=extra)  # the extra rows never count
    win = sliding_windows(inside, kernel_size, stride)
    counts = win.sum(axis=(2, 3))[0, 0]
    return counts.astype(dtype) if np.dtype(dtype).kind == "f" else counts.astype(np.int64)


def _divide(total: np.ndarray, divisor: Any) -> np.ndarray:
    """``total / divisor`` in ``total``'s dtype; integers are truncated towards zero (C's
    integer division, which PyTorch uses)."""
    if total.dtype.kind == "f":
        return total / divisor if np.ndim(divisor) else total / total.dtype.type(divisor)
    floor = total // divisor  # rounds down; C rounds towards zero (the divisor is positive)
    return (floor + ((floor * divisor != total) & (total < 0))).astype(total.dtype)


class _MaxPool2dFn(Function):
    """Max over every window; the gradient goes to the first maximum of each window."""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray, kernel_size: IntPair = (2, 2),
                stride: IntPair = (2, 2), padding: IntPair = (0, 0),
                dilation: IntPair = (1, 1), ceil_mode: bool = False) -> np.ndarray:
        """``(N, C, H, W) -> (N, C, H_out, W_out)``: the largest value of every window.

        APPROACH:
            1. ``ho, wo, extra = pool_geometry(x.shape, kernel_size, stride, padding,
               dilation, ceil_mode)``; ``xp = _pad(x, padding, value=_lowest(x.dtype),
               extra=extra)``; ``win = sliding_windows(xp, kernel_size, stride, dilation)``.
            2. ``out = win[:, :, 0, 0].copy()``; for every offset ``(u, v)``:
               ``np.maximum(out, win[:, :, u, v], out=out)``. (Or, when
               ``windows_tile(xp.shape, kernel_size, stride, dilation)``: the maximum over
               each window's columns first, then over its rows — see the lesson.)
            3. Save ``win`` and ``out`` (``ctx.save_for_backward(win, out)``) and
               ``ctx.x_pad_shape``, ``ctx.stride``, ``ctx.padding``, ``ctx.dilation``,
               ``ctx.extra``; return ``out``.

        EXAMPLE:
            >>> x = np.array([[[[1, 3, 2, 0], [5, 4, 1, 1], [0, 2, 7, 6], [1, 0, 3, 4]]]],
            ...              dtype=np.float32)
            >>> _MaxPool2dFn.forward(Context(), x, (2, 2), (2, 2), (0, 0))[0, 0]
            array([[5., 2.],
                   [2., 7.]], dtype=float32)
            >>> _MaxPool2dFn.forward(Context(), x, (3, 3), (2, 2), (0, 0), (1, 1), True)[0, 0]
            array([[7., 7.],
                   [7., 7.]], dtype=float32)

        HINT: ``.copy()`` the first slice: ``np.maximum(..., out=out)`` writes into ``out``,
        and the windows view is read-only.
        """
        # BEGIN SOLUTION NO PROMPT
        ho, wo, extra = pool_geometry(x.shape, kernel_size, stride, padding, dilation,
                                      ceil_mode)
        xp = _pad(x, padding, value=_lowest(x.dtype), extra=extra)
        win = sliding_windows(xp, kernel_size, stride, dilation)  # (N, C, kh, kw, Ho, Wo)
        kh, kw = kernel_size
        if windows_tile(xp.shape, kernel_size, stride, dilation):
            n, c, h = xp.shape[:3]
            cols = xp.reshape(n, c, h, win.shape[5], kw)           # each row cut into windows
            widest = _maximum([cols[..., v] for v in range(kw)])   # (N, C, H, Wo): row maxima
            rows = widest.reshape(n, c, h // kh, kh, -1)           # whole rows of Wo maxima
            out = _maximum([rows[:, :, :, u] for u in range(kh)])  # (N, C, Ho, Wo)
        else:
            out = win[:, :, 0, 0].copy()
            for u in range(kh):
                for v in range(kw):
                    np.maximum(out, win[:, :, u, v], out=out)
        ctx.save_for_backward(win, out)
        ctx.x_pad_shape, ctx.stride, ctx.padding = xp.shape, stride, padding
        ctx.dilation, ctx.extra = dilation, extra
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
               ``dxp, dwin = window_grads(ctx.x_pad_shape, (kh, kw), ctx.stride,
               ctx.dilation, grad.dtype)`` (given: ``dwin`` is a view of ``dxp`` when the
               windows tile the image);
               ``won = np.zeros(out.shape, dtype=bool)`` (windows whose gradient is given);
               ``offsets = [(u, v) for u in range(kh) for v in range(kw)]``.
            2. For every ``(u, v)`` of ``offsets``: ``hit = ~won & (win[:, :, u, v] == out)``;
               ``dwin[:, :, u, v] = grad * hit`` (``np.where(hit, grad, 0)`` when ``grad`` is
               not all finite); ``won |= hit``.
            3. If ``not won.all()`` (a NaN maximum equals nothing, so step 2 left its windows
               alone): the same over ``reversed(offsets)`` with ``hit = ~won &
               np.isnan(win[:, :, u, v])``, keeping what is there elsewhere:
               ``np.where(hit, grad, dwin[:, :, u, v])``.
            4. If ``dxp is None``: ``dxp = col2im(dwin.reshape(n, c * kh * kw, ho * wo),
               ctx.x_pad_shape, (kh, kw), ctx.stride, ctx.dilation)``. Return
               ``(_crop(dxp, ctx.padding, ctx.extra),)``.

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
        dxp, dwin = window_grads(ctx.x_pad_shape, (kh, kw), ctx.stride, ctx.dilation,
                                 grad.dtype)  # every slice of dwin is written below
        won = np.zeros(out.shape, dtype=bool)  # (N, C, Ho, Wo): gradient given
        offsets = [(u, v) for u in range(kh) for v in range(kw)]
        finite = bool(np.isfinite(grad).all())  # then a 0/1 mask may multiply it
        for u, v in offsets:  # the first maximum of each window
            hit = win[:, :, u, v] == out
            hit &= ~won
            if finite:  # straight into place: no temporary to copy
                np.multiply(grad, hit, out=dwin[:, :, u, v])
            else:
                dwin[:, :, u, v] = np.where(hit, grad, 0)
            won |= hit
        if not won.all():  # windows whose maximum is NaN: to their last NaN
            for u, v in reversed(offsets):
                hit = ~won & np.isnan(win[:, :, u, v])
                dwin[:, :, u, v] = np.where(hit, grad, dwin[:, :, u, v])
                won |= hit
        if dxp is None:  # overlapping or gapped windows: add them back
            dxp = col2im(dwin.reshape(n, c * kh * kw, ho * wo), ctx.x_pad_shape, (kh, kw),
                         ctx.stride, ctx.dilation)
        return (_crop(dxp, ctx.padding, ctx.extra),)
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 09: implement _MaxPool2dFn.backward (see its docstring)")  # STUB


class _AvgPool2dFn(Function):
    """Mean over every window (zero padding counted, as PyTorch's default)."""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray, kernel_size: IntPair = (2, 2),
                stride: IntPair = (2, 2), padding: IntPair = (0, 0), ceil_mode: bool = False,
                count_include_pad: bool = True,
                divisor_override: int | None = None) -> np.ndarray:
        """``(N, C, H, W) -> (N, C, H_out, W_out)``: the mean of every window.

        APPROACH:
            1. ``ho, wo, extra = pool_geometry(x.shape, kernel_size, stride, padding,
               (1, 1), ceil_mode)``; ``xp = _pad(x, padding, extra=extra)`` (zeros);
               ``win = sliding_windows(xp, kernel_size, stride)``.
            2. ``out = win[:, :, 0, 0].copy()``; add every other offset's slice
               ``win[:, :, u, v]`` into it.
            3. ``divisor = _avg_divisor(x.shape, kernel_size, stride, padding, extra,
               count_include_pad, divisor_override, x.dtype)`` (given: ``kh * kw`` unless
               a window is cut short) and ``out = _divide(out, divisor)``.
            4. Save ``ctx.x_pad_shape``, ``ctx.kernel_size``, ``ctx.stride``, ``ctx.padding``,
               ``ctx.extra`` and ``ctx.divisor`` (the backward needs no values); return
               ``out``.

        EXAMPLE:
            >>> x = np.array([[[[1, 3, 2, 0], [5, 4, 1, 1], [0, 2, 7, 6], [1, 0, 3, 4]]]],
            ...              dtype=np.float32)
            >>> _AvgPool2dFn.forward(Context(), x, (2, 2), (2, 2), (0, 0))[0, 0]
            array([[3.25, 1.  ],
                   [0.75, 5.  ]], dtype=float32)
            >>> _AvgPool2dFn.forward(Context(), x, (3, 3), (3, 3), (0, 0), True)[0, 0]
            array([[2.7777777, 2.3333333],
                   [1.3333334, 4.       ]], dtype=float32)

        HINT: start from a copy of the first slice and add the others in place (``+=``); the
        divisor is the window area even where the window covers padding (PyTorch's default).
        """
        # BEGIN SOLUTION NO PROMPT
        ho, wo, extra = pool_geometry(x.shape, kernel_size, stride, padding, (1, 1), ceil_mode)
        xp = _pad(x, padding, extra=extra)
        win = sliding_windows(xp, kernel_size, stride)            # (N, C, kh, kw, Ho, Wo)
        kh, kw = kernel_size
        out = win[:, :, 0, 0].copy()
        for u in range(kh):
            for v in range(kw):
                if u or v:
                    out += win[:, :, u, v]
        divisor = _avg_divisor(x.shape, kernel_size, stride, padding, extra, count_include_pad,
                               divisor_override, x.dtype)
        out = _divide(out, divisor)
        ctx.x_pad_shape, ctx.kernel_size = xp.shape, kernel_size
        ctx.stride, ctx.padding, ctx.extra, ctx.divisor = stride, padding, extra, divisor
        return out
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 09: implement _AvgPool2dFn.forward (see its docstring)")  # STUB

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray]:
        """``dx``: every entry of a window receives ``grad / divisor``.

        APPROACH:
            1. ``kh, kw = ctx.kernel_size``; ``n, c, ho, wo = grad.shape``.
            2. ``dwin = np.broadcast_to(_divide(grad, ctx.divisor)[:, :, None, None],
               (n, c, kh, kw, ho, wo))`` — the same share for every window entry.
            3. ``dxp = col2im(dwin.reshape(n, c * kh * kw, ho * wo), ctx.x_pad_shape,
               (kh, kw), ctx.stride)``; return ``(_crop(dxp, ctx.padding, ctx.extra),)``.

        EXAMPLE: 2×2 windows with stride 2 and ``grad`` of ones: every pixel gets ``0.25``;
        with stride 1 (overlapping windows) an interior pixel gets ``4 × 0.25 = 1``.

        HINT: dividing by the divisor once, before spreading, is cheaper than after.
        """
        # BEGIN SOLUTION NO PROMPT
        kh, kw = ctx.kernel_size
        n, c, ho, wo = grad.shape
        share = _divide(grad, ctx.divisor)
        dwin = np.broadcast_to(share[:, :, None, None], (n, c, kh, kw, ho, wo))
        dxp = col2im(dwin.reshape(n, c * kh * kw, ho * wo), ctx.x_pad_shape, (kh, kw),
                     ctx.stride)
        return (_crop(dxp, ctx.padding, ctx.extra),)
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 09: implement _AvgPool2dFn.backward (see its docstring)")  # STUB


def _pool(fn: type[Function], name: str, input: Tensor, kernel_size: Any,  # noqa: A002
          stride: Any, padding: Any, dilation: Any = 1, ceil_mode: bool = False,
          **options: Any) -> Tensor:
    """Shared checks of the pooling functions (unbatched input, dtype, output size)."""
    if input.ndim == 3:
        out = _pool(fn, name, input.reshape(1, *input.shape), kernel_size, stride, padding,
                    dilation, ceil_mode, **options)
        return out.reshape(*out.shape[1:])
    if input.ndim != 4:
        raise RuntimeError(f"{name}: expected 3D or 4D input, got {list(input.shape)}")
    if input.dtype == np.bool_ or (fn is _AvgPool2dFn and input.dtype.kind in "iu"
                                   and input.dtype != np.int64):
        raise RuntimeError(f'"{name}" not implemented for {input.dtype.name!r} (use float, '
                           "or int64 for the average)")
    k, s, p, d = _pool_args(kernel_size, stride, padding, dilation)
    ho = pool_out_size(input.shape[2], k[0], s[0], p[0], d[0], ceil_mode)
    wo = pool_out_size(input.shape[3], k[1], s[1], p[1], d[1], ceil_mode)
    if ho < 1 or wo < 1:
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, input.shape[1:]))}). "
                           f"Calculated output size: ({input.shape[1]}x{ho}x{wo}). "
                           "Output size is too small")
    if fn is _MaxPool2dFn:
        options["dilation"] = d
    return fn.apply(input, kernel_size=k, stride=s, padding=p, ceil_mode=ceil_mode, **options)


def _max_pool_indices(x: np.ndarray, kernel_size: IntPair, stride: IntPair,
                      padding: IntPair, dilation: IntPair, ceil_mode: bool) -> np.ndarray:
    """Where each window's maximum is, as PyTorch's ``return_indices`` gives it (provided):
    ``(N, C, H_out, W_out)`` int64 flat indices ``row * W + col`` into the input plane.

    PyTorch's loop over a window's *real* pixels, in row-major order: it starts from the first
    one and moves on to a pixel that is larger than the best so far, or NaN — so ties go to
    the first maximum, a NaN to the last NaN, and the padding never wins (not even over a real
    ``-inf``). A window of padding only gets -1.
    """
    h, w = x.shape[-2:]
    _, _, extra = pool_geometry(x.shape, kernel_size, stride, padding, dilation, ceil_mode)
    win = sliding_windows(_pad(x, padding, value=_lowest(x.dtype), extra=extra), kernel_size,
                          stride, dilation)                           # (N, C, kh, kw, Ho, Wo)
    plane = np.arange(h * w, dtype=np.int64).reshape(1, 1, h, w)
    where = sliding_windows(_pad(plane, padding, value=-1, extra=extra), kernel_size, stride,
                            dilation)[0, 0]                           # (kh, kw, Ho, Wo)
    best = np.full(win.shape[:2] + win.shape[4:], _lowest(x.dtype), dtype=x.dtype)
    index = np.full(best.shape, -1, dtype=np.int64)
    for u in range(kernel_size[0]):
        for v in range(kernel_size[1]):
            tap, real = win[:, :, u, v], where[u, v] >= 0
            index = np.where(real & (index < 0), where[u, v], index)  # the first real pixel
            take = real & ((tap > best) | np.isnan(tap))
            best = np.where(take, tap, best)
            index = np.where(take, where[u, v], index)
    return index


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
               padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """Max pooling, ``torch.nn.functional.max_pool2d``.

    ``stride`` defaults to ``kernel_size``; ``padding`` (at most half the kernel) pads with
    ``-inf``; ``dilation`` spreads the taps; ``ceil_mode`` rounds the output size up.
    Input ``(N, C, H, W)`` or ``(C, H, W)``, float or integer.

    Returns:
        The pooled tensor; with ``return_indices=True`` the pair ``(pooled, indices)``, where
        ``indices`` (int64, the same shape) holds the flat position ``row * W + col`` of each
        window's maximum in its input plane (``MaxUnpool2d`` puts the values back there).
    """
    out = _pool(_MaxPool2dFn, "max_pool2d", input, kernel_size, stride, padding, dilation,
                ceil_mode)
    if not return_indices:
        return out
    k, s, p, d = _pool_args(kernel_size, stride, padding, dilation)
    x = input.data if input.ndim == 4 else input.data[None]
    index = _max_pool_indices(x, k, s, p, d, ceil_mode)
    return out, Tensor(index if input.ndim == 4 else index[0])


def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
               padding: Any = 0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """Average pooling, ``torch.nn.functional.avg_pool2d``.

    ``stride`` defaults to ``kernel_size``; zero padding counts in the mean unless
    ``count_include_pad=False``; ``divisor_override`` replaces the divisor; ``ceil_mode``
    rounds the output size up (the cut-short windows divide by what they cover). The mean of
    integers is truncated towards zero.
    """
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    return _pool(_AvgPool2dFn, "avg_pool2d", input, kernel_size, stride, padding, 1,
                 ceil_mode, count_include_pad=count_include_pad,
                 divisor_override=divisor_override)


class MaxPool2d(Module):
    """``torch.nn.MaxPool2d(kernel_size, stride=None, padding=0, dilation=1,
    return_indices=False, ceil_mode=False)``; the arguments are stored as given (``stride``
    defaults to ``kernel_size``), as PyTorch does."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 dilation: Any = 1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor) -> Tensor | tuple[Tensor, Tensor]:  # noqa: A002
        return max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                          self.ceil_mode, self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"
                f", dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    """``torch.nn.AvgPool2d(kernel_size, stride=None, padding=0, ceil_mode=False,
    count_include_pad=True, divisor_override=None)``; arguments stored as given."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _MaxUnpool2dFn(Function):
    """Scatter each value to its flat index in a zero plane; the gradient gathers it back."""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray, *, indices: np.ndarray,
                size: IntPair) -> np.ndarray:
        n, c = x.shape[:2]
        flat = indices.reshape(n, c, -1)                                # (N, C, H_in*W_in)
        out = np.zeros((n, c, size[0] * size[1]), dtype=x.dtype)
        if out.size:  # (an empty plane holds nothing: PyTorch checks no index then)
            np.put_along_axis(out, flat, x.reshape(n, c, -1), axis=2)
        ctx.flat, ctx.shape = flat, x.shape
        return out.reshape(n, c, *size)

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray]:
        n, c = grad.shape[:2]
        if grad.size == 0:  # an empty plane: nothing to gather, unless an index points in
            if ctx.flat.size:  # (PyTorch's gather fails then, as it does here)
                raise RuntimeError(f"max_unpool2d backward: index {int(ctx.flat.flat[0])} is "
                                   "out of bounds for dimension 2 with size 0 (the output "
                                   "plane is empty)")
            return (np.zeros(ctx.shape, dtype=grad.dtype),)
        return (np.take_along_axis(grad.reshape(n, c, -1), ctx.flat, axis=2)
                .reshape(ctx.shape),)


def _unpool_size(in_size: tuple[int, ...], kernel_size: IntPair, stride: IntPair,
                 padding: IntPair, output_size: Any) -> IntPair:
    """The output plane of ``max_unpool2d``: the size max pooling came from,
    ``(H_in - 1) * stride - 2 * padding + kernel`` (same for W), or ``output_size`` (the last
    two numbers), which must lie strictly within one stride of it."""
    default = tuple((in_size[i] - 1) * stride[i] + kernel_size[i] - 2 * padding[i]
                    for i in (0, 1))
    if output_size is None:
        return default[0], default[1]
    size = tuple(int(v) for v in output_size)
    if len(size) == 4:
        size = size[2:]
    if len(size) != 2:
        raise ValueError(f"output_size should be a sequence containing 2 or 4 elements, but "
                         f"it has a length of '{len(size)}'")
    for i in (0, 1):
        low, high = default[i] - stride[i], default[i] + stride[i]
        if not low < size[i] < high:
            raise ValueError(f'invalid output_size "{size}" (dim {i} must be between {low} '
                             f"and {high})")
    return size[0], size[1]


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: Any,  # noqa: A002
                 stride: Any = None, padding: Any = 0, output_size: Any = None) -> Tensor:
    """The partial inverse of ``max_pool2d``, ``torch.nn.functional.max_unpool2d``
    (provided): every value goes back to the position ``indices`` (from ``max_pool2d(...,
    return_indices=True)``) names; everything else is 0. Float input ``(N, C, H, W)`` or
    ``(C, H, W)`` with int64 ``indices`` of the same shape."""
    k = _pair(kernel_size, "kernel_size")
    s = k if stride is None else _pair(stride, "stride")
    p = _pair(padding, "padding")
    if input.ndim not in (3, 4):
        raise RuntimeError(f"max_unpool2d: expected 3D or 4D input, got {list(input.shape)}")
    if input.dtype.kind != "f":
        raise RuntimeError(f'"max_unpool2d" not implemented for {input.dtype.name!r}')
    if indices.dtype != np.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: "
                           f"{indices.dtype.name}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    size = _unpool_size(input.shape[-2:], k, s, p, output_size)
    index = indices.data
    bad = (index < 0) | (index >= size[0] * size[1])
    if bad.any() and size[0] * size[1] > 0:
        raise RuntimeError(f"Found an invalid max index: {int(index[bad].flat[0])} (output "
                           f"volumes are of size {size[0]}x{size[1]})")
    if input.ndim == 3:
        out = _MaxUnpool2dFn.apply(input.reshape(1, *input.shape), indices=index[None],
                                   size=size)
        return out.reshape(*out.shape[1:])
    return _MaxUnpool2dFn.apply(input, indices=index, size=size)


class MaxUnpool2d(Module):
    """``torch.nn.MaxUnpool2d(kernel_size, stride=None, padding=0)``: ``forward(input,
    indices, output_size=None)`` is :func:`max_unpool2d` (provided)."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        self.kernel_size = _pair(kernel_size, "kernel_size")
        self.stride = self.kernel_size if stride is None else _pair(stride, "stride")
        self.padding = _pair(padding, "padding")

    def forward(self, input: Tensor, indices: Tensor,  # noqa: A002
                output_size: Any = None) -> Tensor:
        return max_unpool2d(input, indices, self.kernel_size, self.stride, self.padding,
                            output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


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


# %%
def test_pooling_dilation_ceil_mode_and_divisors(max_pool2d, avg_pool2d, Tensor, np):
    x = Tensor(np.arange(25, dtype=np.float32).reshape(1, 1, 5, 5), requires_grad=True)
    out = max_pool2d(x, 2, stride=2, dilation=2)
    assert out.numpy()[0, 0].tolist() == [[12.0, 14.0], [22.0, 24.0]], (
        f"dilation 2: the window of output (0, 0) is pixels (0|2, 0|2), its max is 12; "
        f"expected [[12, 14], [22, 24]], got {out.numpy()[0, 0].tolist()}")
    out.sum().backward()
    assert x.grad.numpy()[0, 0, 2, 2] == 1.0 and x.grad.numpy()[0, 0, 3, 3] == 0.0, (
        f"the gradient goes back through the dilated taps to the winners (12 at (2, 2)); got "
        f"{x.grad.numpy()[0, 0].tolist()}")
    ceil = max_pool2d(x, 2, stride=2, ceil_mode=True)
    assert ceil.shape == (1, 1, 3, 3) and ceil.numpy()[0, 0, 2, 2] == 24.0, (
        f"ceil_mode rounds 5 / 2 up: a 3x3 output whose last window holds only pixel 24; got "
        f"shape {ceil.shape}")
    avg = avg_pool2d(x, 2, stride=2, ceil_mode=True).numpy()[0, 0]
    assert np.isclose(avg[2, 2], 24.0) and np.isclose(avg[0, 2], 6.5), (
        f"a window cut short by ceil_mode divides by the pixels it covers: (4 + 9) / 2 = 6.5 "
        f"at (0, 2) and 24 at (2, 2); got {avg[0, 2]} and {avg[2, 2]}")
    ones = Tensor(np.ones((1, 1, 2, 2), dtype=np.float32))
    inc = avg_pool2d(ones, 2, stride=1, padding=1).numpy()[0, 0, 0, 0]
    exc = avg_pool2d(ones, 2, stride=1, padding=1, count_include_pad=False).numpy()[0, 0, 0, 0]
    assert np.isclose(inc, 0.25) and np.isclose(exc, 1.0), (
        f"the corner window holds one real pixel and three of padding: 1/4 counting the "
        f"padding (default), 1/1 with count_include_pad=False; got {inc} and {exc}")
    ints = avg_pool2d(Tensor(np.array([[[[-3, 0], [0, 0]]]], dtype=np.int64)), 2)
    assert ints.dtype == np.int64 and ints.numpy().item() == 0, (
        f"the mean of integers is truncated towards zero (-3 / 4 -> 0) and stays int64; got "
        f"{ints.numpy().item()} ({ints.dtype})")

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

    NOTE: ``np.var`` subtracts the mean before squaring. The shortcut ``E[x²] − E[x]²``
    subtracts two nearly equal large numbers: for float32 activations near 2000 that vary by
    about 1 it loses every digit of the variance (or makes it negative), where PyTorch stays
    exact.
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
from tinytorch_data.loaders import load_digits  # noqa: E402 - the course's shipped data

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
