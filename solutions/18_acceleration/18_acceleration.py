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
# # Module 18 · Acceleration
#
# Module 14 showed where your models spend their time. This module is about **why** some code
# runs at a few percent of what the CPU can do and other code near its limit, and how to move
# code from the first kind to the second. You write the same matrix product three ways —
# Python loops, one vectorised expression, and **cache-blocked** tiles — and a **fused** bias +
# GELU that replaces ten operations by one (module 09 already weighed a convolution's loops
# against im2col). Then you measure your machine's limits, its arithmetic rate (GFLOP/s) and
# its memory bandwidth (GB/s) from the caches and from main memory, and place every kernel on
# the **roofline**: a kernel that does few FLOPs per byte it moves can never be faster than
# memory allows, however clever its arithmetic. Last, the number nanoGPT prints while it
# trains: **model FLOPs utilisation**, the share of the machine's peak a whole training step
# uses.
#
# ## Learning objectives
#
# By the end of this module you can:
#
# 1. explain what Python's interpreter, vectorisation (NumPy, BLAS) and caches each cost,
#    and measure the speed-up of each step on your machine;
# 2. write a cache-blocked matrix product and explain, with the bytes each tile moves, why
#    its arithmetic intensity grows with the block size;
# 3. count a GPT's FLOPs per training step (nanoGPT's `6N + 12·L·H·Q·T` per token) and measure
#    its **model FLOPs utilisation** (MFU) on your machine;
# 4. fuse element-wise operations into one `Function` with its own backward, and measure the
#    memory and time it saves;
# 5. measure your machine's peak GFLOP/s and memory bandwidth (in the caches and from main
#    memory), compute each kernel's **arithmetic intensity** (FLOPs per byte), say which memory
#    roof applies to it, and whether it is compute- or memory-bound.
#
# ## How to work through this notebook
#
# Fill in every function that raises `NotImplementedError` (docstrings give what / APPROACH /
# EXAMPLE / HINT) and run each `grader.check(...)`. Cells starting with `#| export` become
# `tinytorch/acceleration.py` (`python export.py 18`). Timings use module 14's `measure` and
# `compare`; every number printed here is measured on your machine.

# %%
import numpy as np

# %% [markdown]
# ## 1. One matrix product, three ways
#
# `C = A B` with `A (m, k)` and `B (k, n)`: `C[i, j] = Σ_p A[i, p]·B[p, j]`, `m·n·k`
# multiply-adds, **`2·m·n·k` FLOPs** (module 14's convention).
#
# **Loops.** Three nested Python loops run the arithmetic one number at a time. Each
# iteration costs the interpreter ~50–100 ns (look up names, box a float, index two arrays),
# while the CPU could do a multiply-add in well under 1 ns: a 1000× gap before memory even
# matters.
#
# **Vectorised.** One NumPy expression moves the loop into C. Broadcasting `A[:, :, None] *
# B[None, :, :]` forms all `m·k·n` products in one `(m, k, n)` array and `.sum(axis=1)`
# adds them: no Python per element, but a temporary `k` times bigger than `C`, written to
# memory and read back.
#
# **Blocked.** Caches hold recently used data close to the core (tens of KB for L1, a few MB
# for L2/L3). Working on `b × b` tiles keeps the three tiles in cache while they are reused:
#
# ```
#   for i0 in 0, b, 2b, ...:            C tile (i0, j0) stays in cache while p0 runs
#     for j0 in 0, b, 2b, ...:
#       for p0 in 0, b, 2b, ...:        A[i0:i0+b, p0:p0+b] @ B[p0:p0+b, j0:j0+b]
#         C[i0:i0+b, j0:j0+b] += kernel(A tile, B tile)
#
#        B ┌──┬──┬──┐            a b×b tile product does 2b³ FLOPs on 3b² numbers:
#          │  │▒▒│  │            b/1.5 FLOPs per number loaded. Bigger tiles reuse each
#          └──┴──┴──┘            number more — until the tiles no longer fit in cache.
#   A ┌──┬──┐   C ┌──┬──┬──┐
#     │▓▓│▓▓│ →   │  │██│  │
#     └──┴──┘     └──┴──┴──┘
# ```
#
# With the broadcasting kernel the temporary of one tile product is `b³` numbers: small
# tiles stay in cache but pay Python's cost per tile, big tiles spill out of cache. BLAS
# (`np.matmul`) does all of this for you, in assembly, with tiles sized for each cache level
# and SIMD registers — which is why you should call it rather than write your own, and why
# knowing how it works tells you what a good kernel must do. Edges: when `b` does not divide
# a dimension, the last tiles are smaller (slicing past the end just stops there).

# %%
#| export
"""Module 18 · Acceleration — depends on: tensor, activations, autograd, profiling; used by:
benchmarking, capstone.

Why some kernels run near the machine's limits and others far below: matrix products with
Python loops, broadcasting and cache-blocked tiles; a fused bias + GELU ``Function``; the
roofline model (FLOPs, bytes moved, arithmetic intensity) and measurements of a machine's
peak GFLOP/s and memory bandwidth.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from tinytorch.activations import gelu  # noqa: F401 - the composed version, for checks
from tinytorch.autograd import gradcheck  # noqa: F401 - for checks
from tinytorch.profiling import compare, graph_activation_bytes, measure  # noqa: F401
from tinytorch.tensor import Context, Function, Tensor


def _check_matmul(a: np.ndarray, b: np.ndarray) -> tuple[int, int, int]:
    """``(m, k, n)`` of ``a (m, k) @ b (k, n)``; ValueError naming both shapes otherwise, and
    TypeError for two different dtypes or bool matrices (PyTorch's ``matmul`` refuses both)."""
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"matmul: shapes {a.shape} and {b.shape} cannot be multiplied "
                         "(need (m, k) and (k, n))")
    if a.dtype != b.dtype:
        raise TypeError(f"matmul: expected both matrices to have the same dtype, got {a.dtype} "
                        f"and {b.dtype}")
    if a.dtype == np.bool_:
        raise TypeError("matmul: bool matrices are not supported (PyTorch has no bool matmul)")
    return a.shape[0], a.shape[1], b.shape[1]


def _accumulator(dtype: np.dtype) -> np.dtype:
    """The dtype a product is summed in: the dtype itself for floats (float32 stays float32),
    int64 for integers; the result is cast back to ``dtype`` at the end, so integer products
    wrap around exactly as PyTorch's integer ``matmul`` does."""
    return np.dtype(dtype) if np.dtype(dtype).kind == "f" else np.dtype(np.int64)


def matmul_loops(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` with three Python loops: the slow comparison point.

    Args:
        a: ``(m, k)``; b: ``(k, n)``.

    Returns:
        ``(m, n)`` in the inputs' dtype (integers wrap around, as in PyTorch).

    Raises:
        ValueError: the shapes do not fit; TypeError: two dtypes, or bool
            (``_check_matmul`` raises both for you).

    APPROACH:
        1. ``m, k, n = _check_matmul(a, b)``; ``wide = _accumulator(a.dtype)``;
           ``a, b = a.astype(wide), b.astype(wide)``; ``out = np.zeros((m, n), dtype=wide)``.
        2. For every ``i`` and ``j``: ``acc = wide.type(0)``; for every ``p``:
           ``acc += a[i, p] * b[p, j]``; then ``out[i, j] = acc``.
        3. Return ``out.astype(dtype)`` with the inputs' original ``dtype``.

    EXAMPLE:
        >>> matmul_loops(np.array([[1.0, 2.0]]), np.array([[3.0], [4.0]]))
        array([[11.]])

    HINT: keep it naive — it is the baseline every other version is measured against. Sum in
    the order ``p = 0, 1, ...`` (the checks compare to this order's rounding).
    """
    # BEGIN SOLUTION NO PROMPT
    m, k, n = _check_matmul(a, b)
    dtype, wide = a.dtype, _accumulator(a.dtype)
    a, b = a.astype(wide), b.astype(wide)
    out = np.zeros((m, n), dtype=wide)
    for i in range(m):
        for j in range(n):
            acc = wide.type(0)
            for p in range(k):
                acc += a[i, p] * b[p, j]
            out[i, j] = acc
    return out.astype(dtype)
    # END SOLUTION
    raise NotImplementedError("module 18: implement matmul_loops (see its docstring)")  # STUB


def matmul_broadcast(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` as one broadcast product and a sum: vectorised, without BLAS.

    Args:
        a: ``(m, k)``; b: ``(k, n)``.

    Returns:
        ``(m, n)`` in the inputs' dtype (integers wrap around, as in PyTorch).

    APPROACH: check the shapes with ``_check_matmul``; cast both to ``_accumulator(a.dtype)``;
    ``a[:, :, None] * b[None, :, :]`` has shape ``(m, k, n)``; sum it over axis 1 and cast the
    sum back to the inputs' dtype.

    EXAMPLE:
        >>> matmul_broadcast(np.ones((2, 3), np.float32), np.ones((3, 4), np.float32))
        array([[3., 3., 3., 3.],
               [3., 3., 3., 3.]], dtype=float32)

    HINT: the temporary holds ``m·k·n`` numbers — 4 GB for two 1000 × 1000 float32 matrices:
    use it on tiles (``matmul_blocked``) or small inputs only.
    """
    # BEGIN SOLUTION NO PROMPT
    _check_matmul(a, b)
    wide = _accumulator(a.dtype)
    products = a.astype(wide)[:, :, None] * b.astype(wide)[None, :, :]  # (m, k, n)
    return products.sum(axis=1).astype(a.dtype)
    # END SOLUTION
    raise NotImplementedError("module 18: implement matmul_broadcast (see its docstring)")  # STUB


def matmul_blocked(a: np.ndarray, b: np.ndarray, block_size: int = 64,
                   kernel: Callable[[np.ndarray, np.ndarray], np.ndarray] = np.matmul
                   ) -> np.ndarray:
    """``a @ b`` computed tile by tile: ``C[I, J] += kernel(A[I, P], B[P, J])``.

    Args:
        a: ``(m, k)``; b: ``(k, n)``.
        block_size: the tile edge ``b`` (1 or more; need not divide any dimension).
        kernel: multiplies two tiles (``np.matmul`` by default, or ``matmul_broadcast``).

    Returns:
        ``(m, n)`` in the inputs' dtype (integers wrap around, as in PyTorch).

    Raises:
        ValueError: the shapes do not fit, or ``block_size < 1``; TypeError: two dtypes, or
            bool.

    APPROACH:
        1. ``m, k, n = _check_matmul(a, b)``; refuse ``block_size < 1``; cast ``a`` and ``b``
           to ``wide = _accumulator(a.dtype)``; ``out = np.zeros((m, n), dtype=wide)``.
        2. For ``i`` in ``range(0, m, block_size)``, ``j`` in ``range(0, n, block_size)``:
           ``tile = out[i:i + block_size, j:j + block_size]`` (a view); for ``p`` in
           ``range(0, k, block_size)``: ``tile += kernel(a[i:i + bs, p:p + bs],
           b[p:p + bs, j:j + bs])``.
        3. Return ``out.astype(dtype)`` with the inputs' original ``dtype``.

    EXAMPLE:
        >>> a = np.arange(15.0).reshape(3, 5); b = np.arange(10.0).reshape(5, 2)
        >>> bool(np.allclose(matmul_blocked(a, b, block_size=2), a @ b))
        True

    HINT: the loop order ``i, j, p`` keeps one output tile in cache while the ``p`` loop adds
    into it. ``out[i:i + bs, ...]`` stops at the edge by itself: no special case for the
    last, smaller tiles.
    """
    # BEGIN SOLUTION NO PROMPT
    m, k, n = _check_matmul(a, b)
    if block_size < 1:
        raise ValueError(f"matmul_blocked: block_size must be >= 1, got {block_size}")
    bs = int(block_size)
    dtype, wide = a.dtype, _accumulator(a.dtype)
    a, b = a.astype(wide), b.astype(wide)
    out = np.zeros((m, n), dtype=wide)
    for i in range(0, m, bs):
        for j in range(0, n, bs):
            tile = out[i:i + bs, j:j + bs]
            for p in range(0, k, bs):
                tile += kernel(a[i:i + bs, p:p + bs], b[p:p + bs, j:j + bs])
    return out.astype(dtype)
    # END SOLUTION
    raise NotImplementedError("module 18: implement matmul_blocked (see its docstring)")  # STUB


# %% [raw]
# # BEGIN QUESTION
# name: matmul
# points: 0

# %% [markdown]
# ### Check: three matrix products

# %% [raw]
# # BEGIN TESTS

# %%
def test_matmul_loops_and_broadcast(matmul_loops, matmul_broadcast, np):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 5)), rng.standard_normal((5, 4))
    got = matmul_loops(a, b)
    assert got.shape == (3, 4) and np.allclose(got, a @ b), (
        f"C[i, j] = sum_p A[i, p] B[p, j]; max error {np.abs(got - a @ b).max():.3g}")
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    got = matmul_broadcast(a32, b32)
    assert got.dtype == np.float32 and np.allclose(got, a32 @ b32, atol=1e-5), (
        f"(m, k, 1) * (1, k, n) summed over k: dtype {got.dtype}, max error "
        f"{np.abs(got - a32 @ b32).max():.3g}")
    try:
        matmul_broadcast(a, a)
    except ValueError:
        pass
    else:
        raise AssertionError("(3, 5) @ (3, 5) does not fit: raise ValueError")
    i8 = np.array([[100, 100], [3, -4]], np.int8)
    for fn in (matmul_loops, matmul_broadcast):
        got = fn(i8, np.array([[2, 1], [1, 1]], np.int8))
        assert got.dtype == np.int8 and got.tolist() == [[44, -56], [2, -1]], (
            f"{fn.__name__}: int8 @ int8 is int8 and wraps around as PyTorch's does (300 -> 44, "
            f"200 -> -56); got {got.dtype} {got.tolist()}")


# %%
def test_matmul_blocked_any_size_any_block(matmul_blocked, matmul_broadcast, np):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((7, 11)), rng.standard_normal((11, 5))
    for bs in (1, 2, 3, 4, 16):
        got = matmul_blocked(a, b, block_size=bs)
        assert got.shape == (7, 5) and np.allclose(got, a @ b), (
            f"block_size={bs}: the edge tiles are smaller when {bs} does not divide 7, 11 or "
            f"5; max error {np.abs(got - a @ b).max():.3g}")
    got = matmul_blocked(a, b, 3, kernel=matmul_broadcast)
    assert np.allclose(got, a @ b), (
        f"with kernel=matmul_broadcast: expected a @ b, max error {np.abs(got - a @ b).max():.3g}: "
        "any tile kernel gives the same product, so call the kernel you were given")
    try:
        matmul_blocked(a, b, 0)
    except ValueError:
        pass
    else:
        raise AssertionError("block_size=0 has no tiles: raise ValueError")


# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 2. Fusion: ten operations into one
#
# GPT-2's MLP computes `gelu(x W₁ᵀ + b₁)`. Written with tensor operations (module 02's
# `gelu(..., approximate="tanh")` after `x + b`), that is ten graph nodes (module 02 builds
# the cube as `h·h·h`, PyTorch's way, so `h³` alone is two of them):
#
# ```
#   h = x + b     h·h        ·h         ·0.044715     h + ·      ·√(2/π)
#   tanh          + 1        h·0.5      ·(tanh + 1)             → 10 new arrays, all kept for backward
# ```
#
# Each operation reads its inputs from memory and writes a new array: for `n` elements in
# float32 about `10 × 2 × 4n` bytes move for `~10n` FLOPs — about **0.1 FLOP per byte**,
# deep in memory-bound territory. A **fused** kernel reads `x` and `b` once and writes `y`
# once (8n bytes), and keeps only what backward needs. In NumPy we cannot make one pass,
# but we can get most of the benefit: one `Function` that computes in place (`out=`,
# `*=`), allocates four arrays instead of ten, records one graph node and keeps only `h` and
# `t = tanh(√(2/π)·(h + 0.044715·h³))` for backward.
#
# ```
#   forward:   h = x + b;   t = tanh(c·(h + a·h³));   y = 0.5·h·(1 + t)      c = √(2/π), a = 0.044715
#   backward:  dy/dh = 0.5·(1 + t) + 0.5·h·(1 − t²)·c·(1 + 3a·h²)
#              dL/dx = G ⊙ dy/dh      dL/db = the same, summed over every leading axis
# ```
#
# Return the bias's gradient in the broadcast shape of `x`: the engine's `unbroadcast`
# (module 05) sums it back to `(C,)`.

# %%
#| export
_GELU_C = math.sqrt(2.0 / math.pi)  # a Python float: float32 stays float32
_GELU_A = 0.044715


class _BiasGELUFn(Function):
    """``gelu(x + bias)`` with the tanh approximation, as one node (a fused kernel)."""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray, bias: np.ndarray) -> np.ndarray:
        """``y = 0.5·h·(1 + tanh(c·(h + a·h³)))`` for ``h = x + bias``; save ``h`` and ``t``.

        APPROACH:
            1. ``h = x + bias`` (a new array, kept for backward).
            2. ``t = h * h``; then in place: ``t *= _GELU_A``; ``t += 1.0``; ``t *= h``;
               ``t *= _GELU_C``; ``np.tanh(t, out=t)`` — now ``t = tanh(c·(h + a·h³))``.
            3. ``y = h * 0.5``; ``y *= t + 1.0`` (halve first, as PyTorch: ``2·h`` overflows
               for ``h`` near float32's largest value, ``h / 2`` does not).
            4. ``ctx.save_for_backward(h, t)``; return ``y``.

        EXAMPLE:
            >>> _BiasGELUFn.forward(Context(), np.array([[0.0, 1.0]], np.float32),
            ...                     np.array([0.0, 1.0], np.float32)).round(4)
            array([[0.    , 1.9546]], dtype=float32)

        HINT: ``h·(1 + a·h²)`` equals ``h + a·h³`` with one multiply fewer, and avoids
        ``h ** 3`` (slow in NumPy). Every constant is a Python float.
        """
        # BEGIN SOLUTION NO PROMPT
        h = x + bias
        t = h * h
        t *= _GELU_A
        t += 1.0
        t *= h
        t *= _GELU_C
        np.tanh(t, out=t)
        y = h * 0.5
        y *= t + 1.0
        ctx.save_for_backward(h, t)
        return y
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 18: implement _BiasGELUFn.forward (see its docstring)")  # STUB

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(dL/dx, dL/dbias)`` from the saved ``h`` and ``t`` (both in ``x``'s shape).

        APPROACH:
            1. ``h, t = ctx.saved``.
            2. ``d = 1.0 - t * t``; ``d *= h * h * (3.0 * _GELU_A) + 1.0``;
               ``d *= h * (0.5 * _GELU_C)``; ``d += 0.5 * (1.0 + t)`` — now ``d = dy/dh``.
            3. ``d *= grad``; return ``(d, d)`` (the engine sums the bias's copy down to
               ``(C,)``).

        EXAMPLE: at ``h = 0``: ``t = 0`` and ``dy/dh = 0.5`` — GELU's slope at the origin.

        HINT: check against finite differences in float64 (the check below does): a slip in
        the ``3a·h²`` term is invisible to the eye.
        """
        # BEGIN SOLUTION NO PROMPT
        h, t = ctx.saved
        d = 1.0 - t * t
        d *= h * h * (3.0 * _GELU_A) + 1.0
        d *= h * (0.5 * _GELU_C)
        d += 0.5 * (1.0 + t)
        d *= grad
        return d, d
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 18: implement _BiasGELUFn.backward (see its docstring)")  # STUB


def bias_gelu(input: Tensor, bias: Tensor) -> Tensor:  # noqa: A002 - PyTorch's argument name
    """``F.gelu(input + bias, approximate="tanh")`` as one fused node (provided).

    Example:
        >>> bias_gelu(Tensor([[1.0, -1.0]]), Tensor([0.0, 0.0]))
        tensor([[ 0.8412, -0.1588]])
    """
    return _BiasGELUFn.apply(input, bias)


# %% [raw]
# # BEGIN QUESTION
# name: fusion
# points: 0

# %% [markdown]
# ### Check: the fused bias + GELU

# %% [raw]
# # BEGIN TESTS

# %%
def test_bias_gelu_matches_the_composed_version(bias_gelu, gelu, Tensor, np):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 6)).astype(np.float32) * 3
    b = rng.standard_normal(6).astype(np.float32)
    fused = bias_gelu(Tensor(x), Tensor(b))
    composed = gelu(Tensor(x) + Tensor(b), approximate="tanh")
    assert fused.dtype == np.float32, f"float32 in, float32 out; got {fused.dtype}"
    assert np.allclose(fused.numpy(), composed.numpy(), atol=1e-5), (
        f"fused must equal gelu(x + b, approximate='tanh'); max difference "
        f"{np.abs(fused.numpy() - composed.numpy()).max():.3g}")


# %%
def test_bias_gelu_gradients(bias_gelu, gradcheck, Tensor, np):
    rng = np.random.default_rng(3)
    x, b = rng.standard_normal((3, 2, 5)), rng.standard_normal(5)
    try:
        gradcheck(bias_gelu, [x, b], eps=1e-6, atol=1e-6, rtol=1e-5)
    except AssertionError as err:
        raise AssertionError(f"dL/dx and dL/dbias must match central differences (float64): "
                             f"{err}") from None
    xt, bt = Tensor(x, requires_grad=True), Tensor(b, requires_grad=True)
    bias_gelu(xt, bt).sum().backward()
    assert bt.grad.shape == (5,) and xt.grad.shape == (3, 2, 5), (
        f"expected gradients of shape (5,) for the bias and (3, 2, 5) for x, got "
        f"{bt.grad.shape} and {xt.grad.shape}: the bias's gradient is summed over every "
        "leading axis, or the optimizer cannot subtract it")


# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 3. The roofline: FLOPs, bytes and your machine's two limits
#
# A kernel needs time for its arithmetic *and* for moving its data between memory and the
# core; whichever is larger wins. With `P` the peak arithmetic rate (GFLOP/s) and `β` the
# memory bandwidth (GB/s), a kernel doing `F` FLOPs on `Q` bytes of traffic takes at least
# `max(F / P, Q / β)`. Divide by `F`: the rate it can reach is
#
# ```
#   attainable GFLOP/s = min(P, β · I),      I = F / Q   (arithmetic intensity, FLOP/byte)
#
#   GFLOP/s │            ______________________ P  (compute-bound)
#           │          ╱ ridge I* = P / β
#           │        ╱
#           │      ╱  slope β   (memory-bound)
#           │    ╱
#           └──────────────────────────────── I (FLOP/byte, log scale)
# ```
#
# Intensities (float32, counting each number once: the minimum traffic):
#
# | kernel | FLOPs | bytes | intensity |
# |---|---|---|---|
# | copy `y = x` | 0 | 8n | 0 |
# | element-wise `y = relu(x)` | n | 8n | 0.125 |
# | matmul `(m,k)@(k,n)` | `2mkn` | `4(mk + kn + mn)` | `n/6` for square `n×n` |
# | blocked matmul, tile `b` | `2mkn` | `4(mk·⌈n/b⌉ + kn·⌈m/b⌉ + mn)` | grows with `b` |
#
# The blocked row counts traffic from memory *into the cache*: every tile row of `A` is read
# again for each column of tiles of `C`, every tile column of `B` for each row of tiles, `C`
# once. Bigger tiles, fewer re-reads, higher intensity — the reason blocking works.
#
# **Which roof?** Memory is a hierarchy, and each level has its own bandwidth: a few hundred
# GB/s from L1, less from L2 and L3, least from main memory (DRAM). A roofline therefore has
# one slope per level, and the one that limits a kernel is the level its **working set** (the
# bytes it touches: its operands and its output) lives in. Two 256 × 256 float32 operands and
# their product are 768 KB: they stay in the L2 or L3 cache of most machines, so judging that
# matrix product against the DRAM slope says "memory-bound" for a kernel that never waits for
# DRAM — and can even put its measured rate *above* that roof. So the experiment measures the
# bandwidth at each kernel's own working set (a copy of that many bytes) and uses that roof;
# only a working set beyond the last-level cache meets the DRAM roof.
#
# Your machine's numbers are measured, not looked up: `P` as the rate of a BLAS matrix product
# whose operands fit in the cache (256 × 256: about as fast as this machine multiplies from
# Python), `β` from copying an array (which reads and writes every byte: `2·nbytes` of
# traffic) — a small one for a cache's roof, a large one for the DRAM roof. Both use module
# 14's `measure` and its median on the thread's CPU clock; a timer argument lets the checks use
# a fake clock.

# %%
#| export
def matmul_cost(m: int, k: int, n: int, itemsize: int = 4) -> tuple[int, int]:
    """``(FLOPs, bytes)`` of ``(m, k) @ (k, n)``: ``2mkn`` and every number moved once.

    APPROACH: FLOPs ``2·m·k·n``; bytes ``itemsize·(m·k + k·n + m·n)`` (read A and B, write
    C). Return both as Python ints.

    EXAMPLE:
        >>> matmul_cost(512, 512, 512)
        (268435456, 3145728)

    HINT: for square matrices the intensity is ``2n³ / (12n²) = n / 6`` FLOP per byte: big
    matrix products are compute-bound on every machine.
    """
    # BEGIN SOLUTION NO PROMPT
    return 2 * m * k * n, itemsize * (m * k + k * n + m * n)
    # END SOLUTION
    raise NotImplementedError("module 18: implement matmul_cost (see its docstring)")  # STUB


def blocked_matmul_bytes(m: int, k: int, n: int, block_size: int, itemsize: int = 4) -> int:
    """Bytes ``matmul_blocked`` moves from memory into the cache (tiles of edge ``b``).

    Returns:
        ``itemsize·(m·k·⌈n/b⌉ + k·n·⌈m/b⌉ + m·n)``: ``A`` is read once per column of output
        tiles, ``B`` once per row of output tiles, ``C`` written once.

    APPROACH: ``math.ceil(n / block_size)`` and ``math.ceil(m / block_size)``; return the
    formula as an int.

    EXAMPLE:
        >>> blocked_matmul_bytes(512, 512, 512, 64), blocked_matmul_bytes(512, 512, 512, 512)
        (17825792, 3145728)

    HINT: one tile covering the whole matrix reads everything once: the minimum traffic of
    ``matmul_cost``.
    """
    # BEGIN SOLUTION NO PROMPT
    return itemsize * (m * k * math.ceil(n / block_size) + k * n * math.ceil(m / block_size)
                       + m * n)
    # END SOLUTION
    raise NotImplementedError(  # STUB
        "module 18: implement blocked_matmul_bytes (see its docstring)")  # STUB


def attainable_gflops(intensity: float, peak_gflops: float, bandwidth_gbs: float) -> float:
    """The roofline: ``min(peak, bandwidth · intensity)`` in GFLOP/s.

    EXAMPLE:
        >>> attainable_gflops(0.125, 100.0, 20.0), attainable_gflops(85.0, 100.0, 20.0)
        (2.5, 100.0)

    APPROACH: one ``min`` of two Python floats.

    HINT: GB/s × FLOP/byte = GFLOP/s: the units tell you the formula.
    """
    # BEGIN SOLUTION NO PROMPT
    return float(min(peak_gflops, bandwidth_gbs * intensity))
    # END SOLUTION
    raise NotImplementedError("module 18: implement attainable_gflops (see its docstring)")  # STUB


def measure_bandwidth(n_bytes: int = 64 * 2**20, repeats: int = 10,
                      timer: Callable[[], float] = time.thread_time_ns) -> float:
    """Memory bandwidth in GB/s: copy ``n_bytes`` of float32 into another array.

    APPROACH:
        1. ``src = np.ones(n_bytes // 4, np.float32)``; ``dst = np.empty_like(src)``.
        2. ``t = measure(lambda: np.copyto(dst, src), warmup=2, repeats=repeats,
           timer=timer)`` (module 14).
        3. A copy reads and writes every byte: return ``2 * src.nbytes / t.median`` (bytes
           per nanosecond are GB/s).

    EXAMPLE: with a fake clock that advances 1,000,000 ns per reading, copying 16 MB counts
    as ``2 · 16,777,216 / 1,000,000 ≈ 33.6`` GB/s:
        >>> clock = iter(range(0, 10**9, 10**6)).__next__
        >>> round(measure_bandwidth(16 * 2**20, repeats=3, timer=clock), 1)
        33.6

    HINT: the size decides which level you measure: an array far bigger than the caches
    (64 MB on most machines) gives the DRAM roof, one that fits in them a cache's roof.
    """
    # BEGIN SOLUTION NO PROMPT
    src = np.ones(n_bytes // 4, np.float32)
    dst = np.empty_like(src)
    t = measure(lambda: np.copyto(dst, src), warmup=2, repeats=repeats, timer=timer)
    return 2.0 * src.nbytes / t.median
    # END SOLUTION
    raise NotImplementedError("module 18: implement measure_bandwidth (see its docstring)")  # STUB


def measure_gflops(n: int = 256, repeats: int = 10,
                   timer: Callable[[], float] = time.thread_time_ns) -> float:
    """Achieved GFLOP/s of an ``n × n`` float32 matrix product (BLAS): the practical peak.

    APPROACH:
        1. ``a = np.ones((n, n), np.float32)``; ``b`` the same; ``c = np.empty_like(a)``.
        2. ``t = measure(lambda: np.matmul(a, b, out=c), warmup=2, repeats=repeats,
           timer=timer)``.
        3. Return ``2 * n**3 / t.median`` (FLOPs per nanosecond are GFLOP/s).

    EXAMPLE:
        >>> clock = iter(range(0, 10**9, 10**6)).__next__
        >>> measure_gflops(100, repeats=3, timer=clock)
        2.0

    HINT: ``out=c`` reuses one result array, so every repeat measures the arithmetic, not a
    fresh allocation.
    """
    # BEGIN SOLUTION NO PROMPT
    a = np.ones((n, n), np.float32)
    b = np.ones((n, n), np.float32)
    c = np.empty_like(a)
    t = measure(lambda: np.matmul(a, b, out=c), warmup=2, repeats=repeats, timer=timer)
    return 2.0 * n**3 / t.median
    # END SOLUTION
    raise NotImplementedError("module 18: implement measure_gflops (see its docstring)")  # STUB


def ascii_roofline(points: dict[str, tuple[float, float]], peak_gflops: float,
                   bandwidth_gbs: float, width: int = 64, height: int = 16,
                   cache_bandwidth_gbs: float | None = None) -> str:
    """A log-log text plot of the roofline with ``{name: (intensity, achieved GFLOP/s)}``
    marked by their first letters (provided): ``-`` the DRAM roof (``bandwidth_gbs``), ``=``
    a cache's roof (``cache_bandwidth_gbs``) where it lies above it."""
    lo_i, hi_i = 1e-2, 1e3
    lo_g = max(min([g for _, g in points.values() if g > 0] + [peak_gflops]) / 10, 1e-3)
    hi_g = peak_gflops * 2

    def col(i: float) -> int:
        i = min(max(i, lo_i), hi_i)
        return round((math.log10(i) - math.log10(lo_i)) / (math.log10(hi_i) - math.log10(lo_i))
                     * (width - 1))

    def row(g: float) -> int:
        g = min(max(g, lo_g), hi_g)
        return round((math.log10(hi_g) - math.log10(g)) / (math.log10(hi_g) - math.log10(lo_g))
                     * (height - 1))

    grid = [[" "] * width for _ in range(height)]
    for c in range(width):
        i = 10 ** (math.log10(lo_i) + c / (width - 1) * (math.log10(hi_i) - math.log10(lo_i)))
        if cache_bandwidth_gbs is not None:
            grid[row(attainable_gflops(i, peak_gflops, cache_bandwidth_gbs))][c] = "="
        grid[row(attainable_gflops(i, peak_gflops, bandwidth_gbs))][c] = "-"
    for name, (i, g) in points.items():
        grid[row(g)][col(i)] = name[0]
    lines = ["".join(r) for r in grid]
    ridges = f"ridge at {peak_gflops / bandwidth_gbs:.2f} FLOP/byte" + (
        "" if cache_bandwidth_gbs is None
        else f" (DRAM), {peak_gflops / cache_bandwidth_gbs:.2f} (cache)")
    lines.append(f"intensity {lo_i:g} .. {hi_i:g} FLOP/byte (log); GFLOP/s {lo_g:.3g} .. "
                 f"{hi_g:.3g} (log); {ridges}")
    return "\n".join(lines)


# %% [raw]
# # BEGIN QUESTION
# name: roofline
# points: 0

# %% [markdown]
# ### Check: the roofline model (with a fake clock)

# %% [raw]
# # BEGIN TESTS

# %%
def test_costs_and_roofline(matmul_cost, blocked_matmul_bytes, attainable_gflops):
    got = matmul_cost(512, 512, 512)
    assert got == (268_435_456, 3_145_728), (
        f"2*512^3 FLOPs and 4*(3*512^2) bytes: expected (268435456, 3145728), got {got}")
    got = matmul_cost(2, 3, 4, itemsize=8)
    assert got == (48, 8 * (6 + 12 + 8)), (
        f"float64 (itemsize 8): expected (48, 208), got {got}: itemsize scales the bytes, not "
        "the FLOPs")
    got = blocked_matmul_bytes(512, 512, 512, 64)
    assert got == 17_825_792, (
        f"A and B are each read 512/64 = 8 times, C written once: 4*(8*512^2 + 8*512^2 + "
        f"512^2) = 17,825,792; got {got}")
    got = blocked_matmul_bytes(5, 3, 7, 2)
    assert got == 4 * (15 * 4 + 21 * 3 + 35), (
        f"expected {4 * (15 * 4 + 21 * 3 + 35)}, got {got}: ceil(7/2) = 4 column tiles re-read "
        "A, ceil(5/2) = 3 row tiles re-read B (edge tiles count as whole re-reads)")
    got = blocked_matmul_bytes(64, 64, 64, 64)
    assert got == 4 * 3 * 64 * 64, (
        f"one tile: expected {4 * 3 * 64 * 64} bytes, got {got}: every number moves once (the "
        "minimum, matmul_cost's bytes)")
    got = attainable_gflops(0.125, 100.0, 20.0)
    assert got == 2.5, (
        f"memory-bound: expected 20 GB/s x 0.125 FLOP/B = 2.5 GFLOP/s, got {got}: below the "
        "ridge point the bandwidth limits")
    got = attainable_gflops(85.0, 100.0, 20.0)
    assert got == 100.0, (
        f"compute-bound: expected the peak 100 GFLOP/s, got {got}: the roofline is "
        "min(peak, bandwidth x intensity)")


# %%
def test_machine_measurements_on_a_fake_clock(measure_bandwidth, measure_gflops):
    ticks = iter(range(0, 10**12, 10**6))
    got = measure_bandwidth(16 * 2**20, repeats=3, timer=lambda: next(ticks))
    assert abs(got - 2 * 16 * 2**20 / 1e6) < 1e-9, (
        f"a copy reads and writes every byte: 2 * 16 MiB / 1 ms = 33.55 GB/s; got {got}")
    got = measure_gflops(100, repeats=3, timer=lambda: next(ticks))
    assert abs(got - 2.0) < 1e-12, (
        f"2 * 100^3 FLOPs in 1 ms is 2 GFLOP/s; got {got}")


# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 4. Systems experiment: your machine's roofline, and where each kernel lands
#
# Measure the limits, then time each kernel and place it: intensity from its FLOPs and bytes,
# achieved rate from your timing, and the roof of the memory level its working set lives in.
# Speed-ups are paired ratios with module 14's `compare` (median of `a_i / b_i` and its 95 %
# interval): a claim is solid when the whole interval is on one side of 1. Every timing is CPU
# time of this thread (module 14's default clock); BLAS must run on one thread for that (the
# course's tests and grader set `OPENBLAS_NUM_THREADS=1`; see module 14, section 4).

# %%
peak = measure_gflops(256, repeats=20)
print(f"peak (BLAS matmul 256 x 256): {peak:.1f} GFLOP/s")
print("copy bandwidth against the bytes copied (reads + writes), the memory hierarchy:")
for kb in (256, 1024, 4096, 16384, 65536):
    print(f"  {kb:>6,} KB: {measure_bandwidth(kb * 1024, repeats=10 if kb > 4096 else 50):6.1f} GB/s")


def roof_bandwidth(working_set):
    """The memory roof at a kernel's working set: copy half of it into the other half."""
    return measure_bandwidth(max(working_set // 2, 4096), repeats=10 if working_set > 2**23 else 50)


rng = np.random.default_rng(0)
small_a = rng.standard_normal((32, 32)).astype(np.float32)
small_b = rng.standard_normal((32, 32)).astype(np.float32)
print("\nspeed-ups on 32 x 32 (median ratio [95% interval]):")
for name, slow, fast in [
        ("loops -> broadcast", lambda: matmul_loops(small_a, small_b),
         lambda: matmul_broadcast(small_a, small_b)),
        ("broadcast -> BLAS", lambda: matmul_broadcast(small_a, small_b),
         lambda: np.matmul(small_a, small_b))]:
    c = compare(slow, fast, warmup=1, repeats=11 if "loops" in name else 30)
    print(f"  {name:20s} {c.ratio:8.1f}x  [{c.low:.1f}, {c.high:.1f}]")

n = 256
big_a = rng.standard_normal((n, n)).astype(np.float32)
big_b = rng.standard_normal((n, n)).astype(np.float32)
print(f"\nblocked {n} x {n}: ms (GFLOP/s) per tile kernel, vs block size")
points, working_sets = {}, {}
flops = 2 * n**3
operands = 3 * n * n * 4  # A, B and C in float32: 768 KB
for bs in (8, 16, 32, 64, 128, 256):
    t_blas = measure(lambda: matmul_blocked(big_a, big_b, bs), warmup=1, repeats=5)
    t_bcast = measure(lambda: matmul_blocked(big_a, big_b, bs, kernel=matmul_broadcast),
                      warmup=1, repeats=3)
    print(f"  block {bs:4d}:  BLAS tiles {t_blas.median / 1e6:7.2f} ms ({flops / t_blas.median:6.1f})"
          f"   broadcast tiles {t_bcast.median / 1e6:7.1f} ms ({flops / t_bcast.median:5.2f})")
    if bs == 64:
        points["Tiled b=64 (BLAS tiles)"] = (flops / blocked_matmul_bytes(n, n, n, bs),
                                              flops / t_blas.median)
        working_sets["Tiled b=64 (BLAS tiles)"] = operands
        # the broadcast kernel writes every product to memory and reads it back to sum it:
        # 2 FLOPs per 8 bytes, whatever the block size; its b^3 temporary joins the operands
        points["broadcast tiles, b=64"] = (2 / 8, flops / t_bcast.median)
        working_sets["broadcast tiles, b=64"] = operands + 4 * bs**3
t = measure(lambda: np.matmul(big_a, big_b), warmup=2, repeats=10)
flops, traffic = matmul_cost(n, n, n)
points["matmul (BLAS)"] = (flops / traffic, flops / t.median)
working_sets["matmul (BLAS)"] = operands

x = rng.standard_normal((4096, 4096)).astype(np.float32)  # 64 MB in, 64 MB out
y = np.empty_like(x)
t = measure(lambda: np.maximum(x, 0.0, out=y), warmup=2, repeats=10)
points["relu"] = (x.size / (8 * x.size), x.size / t.median)
working_sets["relu"] = x.nbytes + y.nbytes
vs_copy = compare(lambda: np.copyto(y, x), lambda: np.maximum(x, 0.0, out=y), warmup=2,
                  repeats=15)

print(f"\n{'kernel':24s} {'FLOP/byte':>9s} {'GFLOP/s':>8s} {'working set':>12s} {'roof GB/s':>9s} "
      f"{'roofline':>8s} {'of roof':>7s} {'bound':>7s}")
roofs, shares = {}, []
for name, (intensity, achieved) in points.items():
    roofs[name] = roof_bandwidth(working_sets[name])
    roof = attainable_gflops(intensity, peak, roofs[name])
    bound = "memory" if intensity < peak / roofs[name] else "compute"
    shares.append(achieved / roof)
    print(f"{name:24s} {intensity:9.3f} {achieved:8.2f} {working_sets[name] / 1e6:9.2f} MB "
          f"{roofs[name]:9.1f} {roof:8.1f} {achieved / roof:7.2f} {bound:>7s}")
print(f"largest share of its roof: {max(shares):.2f}")
print(f"relu / copy of the same bytes (paired): {1 / vs_copy.ratio:.2f} of the copy's speed "
      f"[{1 / vs_copy.high:.2f}, {1 / vs_copy.low:.2f}]")
print()
print(ascii_roofline(points, peak, roofs["relu"], cache_bandwidth_gbs=roofs["matmul (BLAS)"]))
del x, y
# Expected shape: loops -> broadcast is a speed-up of tens to hundreds of times (between 30x
# and 300x: the interpreter's cost per multiply-add), broadcast -> BLAS another 5x or more. The
# bandwidth falls as the copy outgrows each cache level (how far, and where, depends on your
# caches). Both blocked versions are slowest at tiny blocks, where Python's cost per tile
# (microseconds for (n/b)^3 tiles) dominates, and get faster as the block grows: with BLAS tiles
# the time approaches a single np.matmul; with broadcast tiles it levels off at a GFLOP/s or
# two (between 0.3 and 4 GFLOP/s), because that kernel writes all b^3 products to memory whatever b is (intensity 0.25
# FLOP/byte) and sits on the memory slope. The 256 x 256 kernels work in the cache, so their
# roof is the cache's bandwidth, and the tiled and BLAS products come out compute-bound: no
# kernel beats the roof that applies to it (the "of roof" column at most 1.5: the roof and the
# kernel are two separate measurements, and BLAS defines the compute roof: on a busy machine
# one median can land a few tens of percent from the other).
# BLAS sits near the compute roof (it *defines* this roof here); ReLU streams 134.2 MB (64 MiB
# in, 64 MiB out) at about the speed of a copy of the same bytes (between 0.5 and 1.5 of it): it sits on the memory
# slope at a few GFLOP/s at most.

# %% [markdown]
# ### Fused vs composed
#
# The same measurement for the fused bias + GELU, and the activation memory each keeps for
# backward (module 14's `graph_activation_bytes`).

# %%
xs = Tensor(rng.standard_normal((256, 1024)).astype(np.float32), requires_grad=True)
bs_ = Tensor(rng.standard_normal(1024).astype(np.float32), requires_grad=True)
composed_bytes = graph_activation_bytes(gelu(xs + bs_, approximate="tanh"))
fused_bytes = graph_activation_bytes(bias_gelu(xs, bs_))
c = compare(lambda: gelu(xs + bs_, approximate="tanh").sum().backward(),
            lambda: bias_gelu(xs, bs_).sum().backward(), warmup=2, repeats=25)
print(f"kept for backward: composed {composed_bytes / 1e6:.1f} MB, fused {fused_bytes / 1e6:.1f} MB "
      f"({composed_bytes / fused_bytes:.2f}x)")
print(f"forward + backward: fused is {c.ratio:.2f}x faster  [{c.low:.2f}, {c.high:.2f}]")
# Expected: the composed version keeps 3.33 times the memory of the fused one (its ten
# arrays, the output among them, against h, t and the output: 10/3); the fused forward + backward is faster by a
# factor between 1.3 and 3 (on the CPU clock a busy machine does not move it), with an
# interval above 1.

# %% [markdown]
# ### Model FLOPs utilisation: how much of this machine does a training step use?
#
# The roofline judges one kernel. nanoGPT judges a whole training step with one number, its
# **model FLOPs utilisation** (MFU, from Google's PaLM paper): the FLOPs the *model* needs per
# step, divided by the step's time, as a share of the machine's peak. The FLOPs come from a
# formula, not a counter, so recomputation or wasted work never inflates them:
#
# ```
#   per token:  6·N  +  12·L·H·Q·T        N: parameters that multiply (every weight except the
#               │        │                   embedding tables: a lookup does no arithmetic)
#               │        └ attention: QKᵀ and P·V, 2·T·Q multiply-adds per head and layer
#               │          (forward), ×3 with backward
#               └ each weight: 1 multiply-add forward (2 FLOPs), 2 backward (4 FLOPs)
#   per step:   that × B·T tokens;     MFU = per step / step time / peak
# ```
#
# (`L` layers, `H` heads of size `Q`, context `T`.) Measure a training step — forward,
# cross-entropy, backward, AdamW — of two GPTs of module 13, the milestone's size and a wider
# and deeper one, against the peak measured above.

# %%
from tinytorch.losses import cross_entropy  # noqa: E402 - modules 04, 06 and 13 for the step
from tinytorch.optimizers import AdamW  # noqa: E402
from tinytorch.tensor import manual_seed  # noqa: E402
from tinytorch.transformers import GPT  # noqa: E402


def model_flops_per_token(model, length):
    """nanoGPT's estimate: ``6·N + 12·L·H·Q·T`` for a forward and backward pass of a token."""
    tables = model.tok_emb.weight.numel() + sum(p.numel() for p in model.pos_emb.parameters())
    n = sum(p.numel() for p in model.parameters()) - tables
    q = model.d_model // model.n_heads
    return 6 * n + 12 * model.n_layers * model.n_heads * q * length


batch, length = 8, 64
for d_model, n_layers in ((64, 2), (256, 4)):
    manual_seed(0)
    gpt = GPT(vocab_size=65, context_length=length, d_model=d_model, n_layers=n_layers, n_heads=4)
    opt = AdamW(gpt.parameters(), lr=1e-3)
    tokens = np.random.default_rng(1).integers(0, 65, size=(batch, length + 1))
    targets = Tensor(tokens[:, 1:].reshape(-1))

    def train_step():
        opt.zero_grad()
        logits = gpt(tokens[:, :-1])
        cross_entropy(logits.reshape(batch * length, 65), targets).backward()
        opt.step()

    t = measure(train_step, warmup=2, repeats=5)
    per_step = model_flops_per_token(gpt, length) * batch * length
    mfu = per_step / t.median / peak
    print(f"GPT d_model {d_model:3d}, {n_layers} layers: {per_step / 1e9:5.2f} GFLOP per step in "
          f"{t.median / 1e6:6.1f} ms = {per_step / t.median:5.1f} GFLOP/s, MFU {100 * mfu:4.1f} %")
# Expected shape: the milestone-sized GPT uses a small share of the machine (MFU between 3 %
# and 40 %): its matrices are 64 wide, so Python's fixed cost per operation and the
# memory-bound element-wise work (LayerNorm, GELU, softmax, Adam) take most of the step. Four
# times wider and twice as deep, the matrix products dominate and the MFU rises (between 20 %
# and 80 %). nanoGPT prints the same number while it trains GPT-2 on a GPU: the same formula
# against a far higher peak.

# %% [markdown]
# ## 5. ML systems thinking (graded by hand)

# %% [raw]
# # BEGIN QUESTION
# name: written_blocking
# manual: true
# points: 5

# %% [markdown]
# **Q1 · Block size.** Using your block-size sweep, explain why small blocks are slow with
# either tile kernel. From `blocked_matmul_bytes`, how does the intensity of the blocked
# algorithm depend on `b` for square matrices? Why does the broadcast kernel stay far below
# the roofline at every block size, and what limits how large `b` can usefully be in a real
# BLAS (think of the three tiles and the cache sizes)?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# Tiny blocks do little work per Python iteration: `(n/b)³` tile products each pay the
# interpreter's fixed cost (microseconds), which dominates both kernels. For square `n`, the
# blocked algorithm moves ≈ `4·(2n³/b + n²)` bytes for `2n³` FLOPs, so its intensity is
# ≈ `b/4` FLOP/byte: it grows linearly with the block size. A kernel only benefits if it keeps
# the tiles' numbers close to the core while reusing them; the broadcast kernel instead
# writes every one of the `b³` products to memory and reads it back to sum it (8 bytes per
# 2 FLOPs, 0.25 FLOP/byte), so it is memory-bound at every `b` and levels off near
# `0.25 × bandwidth`. In a real BLAS the working set of three tiles, `3b²` numbers (12 KB at
# b = 32 in float32), must fit in the cache level it targets (L1 ≈ 32–48 KB, L2 ≈ 1–2 MB),
# so BLAS nests blocks for each level around a register-sized micro-kernel.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_fusion
# manual: true
# points: 5

# %% [markdown]
# **Q2 · Fusion.** Count the bytes the composed bias + GELU moves for `n` float32 elements
# (each operation reads its inputs and writes its output) and the bytes a one-pass fused
# kernel moves. Place both on your roofline. Your NumPy `_BiasGELUFn` still makes several
# passes: where does its measured speed-up come from, and what would a compiled kernel add?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# Composed: ten operations, most reading one or two arrays of `4n` bytes and writing one:
# roughly 10 × (4n + 4n) to 10 × 12n ≈ 80–120·n bytes for ~10n FLOPs (≈ 0.1 FLOP/byte).
# Fused: read `x`, write `y`: 8n bytes for the same FLOPs (≈ 1.2 FLOP/byte) — still
# memory-bound on most machines (ridge ≈ 5–20 FLOP/byte), but ~10× higher on the slope, so up
# to ~10× faster. The NumPy version gains from fewer allocations (four arrays instead of
# ten: no page faults, less cache pollution), one graph node instead of ten (Python
# overhead in forward and backward), in-place passes and a backward that saves only `h` and
# `t`. A compiled kernel (PyTorch's fused CPU/GPU kernels, numba) makes one pass with every
# intermediate in registers, reaching the memory roof for `8n` bytes.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_roofline
# manual: true
# points: 5

# %% [markdown]
# **Q3 · Which optimisation for which kernel?** For each of (a) a 4096 × 4096 matmul, (b) a
# LayerNorm over `(64, 1024, 768)` activations and (c) the attention scores of a 2k-token
# context, compute or estimate the intensity, say on which side of your ridge it falls, and
# name the optimisation that would help most (and one that would not help at all).

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# (a) Intensity ≈ n/6 ≈ 680 FLOP/byte: compute-bound; only more FLOP/s helps (better BLAS,
# more cores, lower precision with faster arithmetic such as INT8/bf16); fusing or saving
# memory traffic does not. (b) ~7 FLOPs per element for 8 bytes read + written ≈ 1
# FLOP/byte: memory-bound; fuse it into one pass (or with the neighbouring residual add),
# use a smaller dtype; more FLOP/s would not help. (c) `QKᵀ` with head size 64 has
# intensity ≈ 2·64/(4·2) ≈ 16 FLOP/byte per score written, then softmax at < 1 FLOP/byte on
# a `T × T` array that does not fit in cache: the memory traffic of the scores dominates, so
# FlashAttention-style fusion (tile over keys, never write the `T × T` matrix) helps most;
# a faster matmul alone would not.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## Summary
#
# You wrote the matrix product three ways and measured what each layer of the stack buys:
# the interpreter, vectorisation, caches and BLAS; fused ten element-wise operations into
# one `Function`; measured your machine's roofline — a roof for each level of memory — and
# placed each kernel under the roof that applies to it; and measured how much of the machine a
# whole GPT training step uses (MFU). Export with `python export.py 18`; module 19 turns `measure` and `compare` into a benchmark
# harness with an accuracy gate.
