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
# # Module 16 · Compression
#
# TODO(author): one paragraph: what students build in this module, why it matters for the
# framework, and which earlier modules it builds on. This scaffold is a complete worked example
# (two functions, their checks, a hidden suite and plausible bugs) that passes every pipeline
# check; replace its content section by section and keep it passing.
#
# ## Learning objectives
#
# 1. rescale a tensor into a range (`rescale`), including the edge case of a constant input;
# 2. compute a moving average with one cumulative sum instead of a loop (`moving_average`);
# 3. measure what the vectorised version saves.
#
# Fill in the functions that raise `NotImplementedError`; run the check after each section;
# `python export.py 16` writes `tinytorch/compression.py`.

# %%
import time

import numpy as np

from tinytorch.tensor import Tensor

# %% [markdown]
# ## 1. Rescaling
#
# Min-max rescaling maps the smallest element to `low` and the largest to `high`:
#
# $$\mathrm{rescale}(x)_i = \mathrm{low} + (\mathrm{high} - \mathrm{low})
#   \frac{x_i - \min x}{\max x - \min x}$$
#
# ```
#   x:        [ 2   4   6 ]        min 2, max 6, range 4
#   (x-2)/4:  [ 0  0.5  1 ]
#   low=-1, high=1:  [ -1  0  1 ]
# ```
#
# When every element is equal the range is 0: return `low` everywhere instead of dividing by 0.

# %%
#| export
"""Module 16 · Compression — depends on: tensor; used by: (later modules).

TODO(author): what this module file provides, in two lines.
"""

from __future__ import annotations

import numpy as np

from tinytorch.tensor import Tensor


def rescale(x: Tensor, low: float = 0.0, high: float = 1.0) -> Tensor:
    """Map the values of ``x`` linearly onto ``[low, high]`` (min to ``low``, max to ``high``).

    Args:
        x: a tensor of any shape.
        low, high: the target range; ``high`` must be larger than ``low``.

    Returns:
        A tensor of the same shape and dtype; ``low`` everywhere if ``x`` is constant.

    Raises:
        ValueError: ``high <= low``.

    APPROACH:
        1. refuse ``high <= low`` with a ValueError that names both;
        2. take ``x.data.min()`` and ``x.data.max()``; if they are equal, return a tensor full of
           ``low`` (same shape and dtype);
        3. otherwise compute ``low + (high - low) * (data - lo) / (hi - lo)`` and keep the dtype.

    EXAMPLE:
        >>> rescale(Tensor([2.0, 4.0, 6.0]), -1.0, 1.0).numpy().tolist()
        [-1.0, 0.0, 1.0]

    HINT: Python floats keep float32 data float32; ``astype(x.dtype)`` makes sure.
    """
    # BEGIN SOLUTION NO PROMPT
    if high <= low:
        raise ValueError(f"rescale needs high > low, got low={low} and high={high}")
    data = x.data
    lo, hi = data.min(), data.max()
    if hi == lo:
        return Tensor(np.full(data.shape, low, dtype=data.dtype))
    out = low + (high - low) * (data - lo) / (hi - lo)
    return Tensor(out.astype(data.dtype))
    # END SOLUTION
    raise NotImplementedError("module 16: implement rescale (see its docstring)")  # STUB

# %% [raw]
# # BEGIN QUESTION
# name: rescale
# points: 0

# %% [markdown]
# ### Check: rescaling

# %% [raw]
# # BEGIN TESTS

# %%
def test_rescale_values(rescale, Tensor, np):
    got = rescale(Tensor([2.0, 4.0, 6.0]), -1.0, 1.0)
    assert np.allclose(got.numpy(), [-1.0, 0.0, 1.0]), (
        f"min -> low, max -> high: expected [-1, 0, 1], got {got.numpy().tolist()}")
    assert got.dtype == np.float32, f"float32 in, float32 out; got {got.dtype}"
    flat = rescale(Tensor([3.0, 3.0]))
    assert np.allclose(flat.numpy(), [0.0, 0.0]), (
        f"a constant input has range 0: return low everywhere, got {flat.numpy().tolist()}")
    try:
        rescale(Tensor([1.0, 2.0]), 1.0, 1.0)
    except ValueError:
        pass
    else:
        raise AssertionError("high <= low is not a range: raise ValueError")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 2. Moving averages without a loop
#
# The moving average with window `w` of a 1-D signal has `n - w + 1` values,
# `m_j = (x_j + ... + x_{j+w-1}) / w`. A loop costs `n·w` additions; with the cumulative sum
# `c` (and a leading 0), every window is one subtraction: `m_j = (c_{j+w} - c_j) / w`, i.e.
# `c[w:] - c[:n + 1 - w]` for all `j` at once.
#
# ```
#   x:  [1 2 3 4]          c: [0 1 3 6 10]
#   w=2: (3-0)/2, (6-1)/2, (10-3)/2  =  [1.5 2.5 3.5]
# ```

# %%
#| export
def moving_average(x: Tensor, window: int) -> Tensor:
    """Average of every ``window`` consecutive values of a 1-D tensor.

    Args:
        x: shape ``(n,)``.
        window: between 1 and ``n``.

    Returns:
        Shape ``(n - window + 1,)``, the dtype of ``x``.

    Raises:
        ValueError: ``window`` outside ``1..n``.

    APPROACH:
        1. refuse a window outside ``1..n`` with a ValueError;
        2. ``c = np.concatenate([[0], np.cumsum(data)])``;
        3. return ``(c[window:] - c[:n + 1 - window]) / window`` in the dtype of ``x``.

    EXAMPLE:
        >>> moving_average(Tensor([1.0, 2.0, 3.0, 4.0]), 2).numpy().tolist()
        [1.5, 2.5, 3.5]

    HINT: ``c[window:]`` and ``c[:n + 1 - window]`` both have ``n - window + 1`` elements.
    """
    # BEGIN SOLUTION NO PROMPT
    data = x.data
    n = data.shape[0]
    if not 1 <= window <= n:
        raise ValueError(f"moving_average needs 1 <= window <= {n}, got {window}")
    c = np.concatenate([np.zeros(1, dtype=data.dtype), np.cumsum(data, dtype=data.dtype)])
    return Tensor(((c[window:] - c[: n + 1 - window]) / window).astype(data.dtype))
    # END SOLUTION
    raise NotImplementedError("module 16: implement moving_average (see its docstring)")  # STUB

# %% [raw]
# # BEGIN QUESTION
# name: moving_average
# points: 0

# %% [markdown]
# ### Check: moving averages

# %% [raw]
# # BEGIN TESTS

# %%
def test_moving_average(moving_average, Tensor, np):
    got = moving_average(Tensor([1.0, 2.0, 3.0, 4.0]), 2)
    assert got.shape == (3,), f"n - window + 1 = 3 values expected, got shape {got.shape}"
    assert np.allclose(got.numpy(), [1.5, 2.5, 3.5]), (
        f"expected [1.5, 2.5, 3.5], got {got.numpy().tolist()}: check the leading 0 of the "
        "cumulative sum")
    whole = moving_average(Tensor([1.0, 2.0, 3.0, 4.0]), 4)
    assert np.allclose(whole.numpy(), [2.5]), f"window = n is the mean, got {whole.numpy()}"
    try:
        moving_average(Tensor([1.0, 2.0]), 3)
    except ValueError:
        pass
    else:
        raise AssertionError("a window longer than the signal has no value: raise ValueError")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 3. Systems experiment: loop or cumulative sum?
#
# Run the cell: it times a Python loop against your `moving_average` on the same signal. Expect
# the vectorised version to be tens to hundreds of times faster, and the gap to grow with the
# window (the loop does `n·w` additions, the cumulative sum about `2n`).

# %%
signal = Tensor(np.random.default_rng(0).standard_normal(20_000).astype(np.float32))
for w in (4, 64):
    t0 = time.perf_counter()
    looped = [float(signal.data[j:j + w].sum()) / w for j in range(len(signal.data) - w + 1)]
    t_loop = time.perf_counter() - t0
    t0 = time.perf_counter()
    fast = moving_average(signal, w)
    t_fast = time.perf_counter() - t0
    assert np.allclose(looped, fast.numpy(), atol=1e-4)
    print(f"window {w:3d}: loop {t_loop * 1e3:7.1f} ms, cumsum {t_fast * 1e3:6.2f} ms, "
          f"speed-up {t_loop / t_fast:6.0f}x")

# %% [raw]
# # BEGIN QUESTION
# name: written_edge_cases
# manual: true
# points: 5

# %% [markdown]
# **Q1 · Edge cases.** Why does `rescale` return `low` for a constant input instead of
# dividing by zero, and what would a NaN do to a model trained on such data?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# A constant input has no spread to map, and `0 / 0` is NaN; one NaN spreads through every
# later sum, so the loss and all gradients become NaN and training stops making progress.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_cost
# manual: true
# points: 5

# %% [markdown]
# **Q2 · Cost.** Count the additions of the loop and of the cumulative-sum version for
# `n = 20,000` and `w = 64`, and compare the ratio with the speed-up you measured.

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# The loop adds about n·w ≈ 1.28 M numbers, the cumulative sum about 2n = 40 k: 32× fewer.
# The measured speed-up is larger because the loop also pays Python's per-iteration overhead.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_precision
# manual: true
# points: 5

# %% [markdown]
# **Q3 · Precision.** The cumulative sum of a long float32 signal grows large. What does that
# do to the precision of `c[j + w] - c[j]`, and how would you limit it?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# Subtracting two large, nearly equal float32 numbers loses the low bits (cancellation), so
# the error grows with the position. Accumulate in float64, restart the sum in blocks, or
# subtract the signal's mean first.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION
