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
# # Module 13 · Transformers
#
# Modules 11 and 12 gave you the two ingredients that make a sequence model: vectors for tokens
# and positions, and attention between them. A **transformer** stacks them into blocks, and
# three small pieces make a deep stack trainable: **layer normalisation** keeps every token's
# vector at a sensible scale, a **residual stream** lets each block *add* to the
# representation instead of replacing it, and a position-wise **MLP** gives every token some
# private computation after it has looked around. In this module you build those pieces with
# PyTorch's names, assemble a **GPT** (the decoder-only transformer of Radford et al., 2018,
# on the architecture of Vaswani et al., 2017), make it write text, and count where its
# parameters and its memory go.
#
# ## Learning objectives
#
# By the end of this module you can:
#
# 1. derive **LayerNorm**'s forward and backward pass and implement
#    `nn.LayerNorm(normalized_shape, eps=1e-5, elementwise_affine=True)` and
#    `nn.functional.layer_norm` with PyTorch's semantics (biased variance, any trailing shape)
#    as one fused `Function` on raw arrays;
# 2. build the position-wise **MLP** (`Linear → GELU → Linear`) and the **pre-norm transformer
#    block** (`x + attn(ln(x))`, then `x + mlp(ln(x))`) with a causal mask;
# 3. assemble a **GPT**: token and position embeddings, `n` blocks, a final LayerNorm and a
#    language-model head that turns each position into next-token logits;
# 4. **generate** text autoregressively with temperature and top-k sampling (and greedy
#    decoding), reproducibly from `tt.manual_seed`;
# 5. count a GPT's **parameters by component** from first principles and **measure** how its
#    activation memory grows with the context length.
#
# ## How to work through this notebook
#
# Fill in every function that raises `NotImplementedError` (docstrings give what / APPROACH /
# EXAMPLE / HINT) and run each `grader.check(...)`. Cells starting with `#| export` become
# `tinytorch/transformers.py` (`python export.py 13`); `LayerNorm` and `layer_norm` are
# re-exported as `tinytorch.nn.LayerNorm` and `tinytorch.nn.functional.layer_norm`, and the
# GPT lives at `tinytorch.transformers.GPT`. Modules 01–12 are imported from your package.

# %%
import time
import tracemalloc

import numpy as np

# %% [markdown]
# ## 1. Layer normalisation
#
# Deep stacks drift: after a few blocks the vectors of some tokens grow large, others shrink,
# and the next layer's weights see inputs at wildly different scales. **LayerNorm** (Ba et al.,
# 2016) rescales each token's vector on its own — across its features, not across the batch
# (that is BatchNorm, module 09) — to mean 0 and variance 1, then lets the network choose a
# scale `γ` (`weight`) and shift `β` (`bias`) per feature:
#
# ```
#   x (B, T, C)     for every (b, t): one row of C features
#
#   μ   = mean(x, over the last dims)                 (B, T, 1)
#   σ²  = mean((x − μ)², over the last dims)          (B, T, 1)   biased: divide by C, not C − 1
#   x̂   = (x − μ) / sqrt(σ² + eps)                    (B, T, C)   mean 0, variance ~1 per row
#   y   = x̂ · γ + β                                   (B, T, C)   γ, β: (C,), broadcast
# ```
#
# `normalized_shape` says *which* trailing dimensions form one "row": `LayerNorm(64)` normalises
# the last dimension; `LayerNorm((4, 8))` normalises the last two together (32 numbers per
# row). The statistics are per row, so a token's output never depends on the other tokens or
# the batch size — the same in training and in generation.
#
# **Huge rows.** `σ²` squares the centred values, and in float32 a square overflows to `inf`
# beyond about 1.8e19: `1/sqrt(inf)` is 0 and the row would come out as all zeros, though its
# normalised values are perfectly ordinary (`[3e19, 1e19, 0]` normalises like `[3, 1, 0]`).
# The given helper `_rstd` computes `1/sqrt(σ² + eps)` and redoes such rows from `x̂`'s
# scaled-down values, the way a stable softmax subtracts the maximum first. (PyTorch's own
# kernel gives NaN or zeros there: `docs/conformance.md`.)
#
# **Backward.** Write `N` for the number of normalised elements per row, `r = 1/sqrt(σ² + eps)`
# and `g = dL/dy · γ`. Then (the derivation is the same one as BatchNorm's, per row):
#
# ```
#   dL/dβ = sum of dL/dy over the leading dims          (C,)
#   dL/dγ = sum of dL/dy · x̂ over the leading dims      (C,)
#   dL/dx = r · (g − mean(g) − x̂ · mean(g · x̂))        means over each row, like μ
# ```
#
# The two subtracted terms are what "subtract the mean" and "divide by the standard deviation"
# do to the gradient: a row's gradient sums to zero and is orthogonal to `x̂`. Composed from
# tensor operations LayerNorm would record about ten graph nodes and keep ten arrays of the
# input's size; as one `Function` it keeps two (`x̂` and `r`).
#
# **Speed: a row's sum is a matrix product.** The means above are over short rows (C = 64 in
# the GPT below, one row per token). NumPy reduces along a short last axis one row at a time
# (`x.mean(axis=-1)` of a `(16, 32, 64)` array: 512 small loops), while a product with a
# column of `1/C`, `rows @ avg` with `rows (B·T, C)` and `avg (C, 1)`, is one BLAS call that
# averages every row at once, several times faster. The forward and backward below compute all
# four row means that way. The sums over tokens (for `dγ`, `dβ`) are products too: a row of
# ones times the `(B·T, C)` gradient, `ones.dot(g)` (several times faster than
# `g.sum(axis=0)`, NumPy's column sum, which adds one row at a time).

# %%
#| export
"""Module 13 · Transformers — depends on: tensor, autograd, layers, embeddings, attention; used
by: memoization (the KV cache) and the 2017 transformer milestone.

``LayerNorm`` / ``layer_norm`` (PyTorch's semantics, a fused backward), the position-wise
``MLP`` with a tanh-approximated GELU, the pre-norm ``TransformerBlock`` (causal
``MultiheadAttention`` with ``batch_first=True``) and ``GPT``: token and learned position
embeddings, ``n_layers`` blocks, a final LayerNorm and a language-model head, with
``generate`` (temperature, top-k, greedy with ``top_k=1``). Blocks and the GPT accept an
optional ``cache`` argument, the plug-in point of module 17's KV cache.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from tinytorch.attention import MultiheadAttention
from tinytorch.autograd import gradcheck  # noqa: F401 - for the checks
from tinytorch.embeddings import Embedding, LearnedPositionalEmbedding
from tinytorch.layers import Dropout, Linear, Module, Parameter, Sequential
from tinytorch.tensor import (
    Context,
    Function,
    Tensor,
    default_generator,
    manual_seed,  # noqa: F401 - used by the examples
    no_grad,
)


def _rstd(xc: np.ndarray, var: np.ndarray, eps: float, axes: tuple[int, ...]) -> np.ndarray:
    """``1 / sqrt(var + eps)``, also for rows whose squares overflow (provided).

    In a row of float32 values beyond about 1.8e19 (float64: 1.3e154) ``xc * xc`` is ``inf``,
    so ``var`` is too and ``1 / sqrt(var + eps)`` is 0: the row would normalise to all zeros
    where the true answer is an ordinary normalised row. Such rows are computed again from
    ``xc / s``, with ``s`` the row's largest ``|xc|``: ``1 / (s * sqrt(mean((xc / s)²) +
    eps / s²))`` — the same number, without squaring anything large.
    """
    rstd = 1.0 / np.sqrt(var + eps)
    # NOTE: rstd is 0 exactly where var is inf, so the usual case stops here. count_nonzero
    # is one C call; rstd.all() runs a Python wrapper first, which a one-token step feels
    if np.count_nonzero(rstd) == rstd.size:
        return rstd
    over = np.isinf(var) & np.isfinite(xc).all(axis=axes, keepdims=True)
    if not over.any():
        return rstd
    s = np.where(over, np.abs(xc).max(axis=axes, keepdims=True), 1)
    scaled = xc / s
    std = s * np.sqrt(np.mean(scaled * scaled, axis=axes, keepdims=True) + eps / s / s)
    return np.where(over, 1.0 / std, rstd).astype(rstd.dtype, copy=False)


@functools.cache
def _averager(n: int, dtype: np.dtype) -> np.ndarray:
    """The column ``(n, 1)`` of ``1 / n`` in ``dtype``: ``rows.dot(_averager(n, rows.dtype))``
    is each row's mean (provided).

    Made once per ``(n, dtype)`` and kept (``functools.cache``), read-only so no caller can
    change it for the others: in generation every LayerNorm sees one row, and building the
    column again each call would cost about as much as using it.
    """
    avg = np.full((n, 1), 1.0 / n, dtype=dtype)
    avg.flags.writeable = False
    return avg


class _LayerNormFn(Function):
    """``(x - mean) / sqrt(var + eps) * weight + bias`` over the trailing ``axes``, fused."""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray, weight: np.ndarray, bias: np.ndarray, *,
                axes: tuple[int, ...], eps: float) -> np.ndarray:
        """Normalise each row of ``x`` over ``axes`` (the trailing dims), then scale and shift.

        Args:
            x: the input, shape ``(*, *normalized_shape)``.
            weight, bias: ``normalized_shape`` arrays (``γ`` and ``β``).
            axes: the trailing axes that form one row, e.g. ``(2,)`` for ``(B, T, C)``.
            eps: added to the variance (a Python float).

        APPROACH (one row per normalised group, each row's sum as one matrix product):
            1. ``n`` = the numbers per row (the product of the last ``len(axes)`` sizes);
               ``rows = x.reshape(-1, n)`` — ``(R, n)``; ``avg = _averager(n, x.dtype)``
               (given: the column ``np.full((n, 1), 1.0 / n, x.dtype)``, made once and kept).
            2. ``mean = rows.dot(avg)`` — ``(R, 1)``; ``xc = rows - mean``; then
               ``xc -= xc.dot(avg)``, a second pass that removes what rounding left of the mean.
            3. ``var = (xc * xc).dot(avg)`` — the *biased* variance.
            4. ``rstd = _rstd(xc, var, eps, (1,))`` (given: ``1.0 / np.sqrt(var + eps)``,
               and right for rows so large that ``xc * xc`` overflows); ``xhat = xc * rstd``.
            5. ``ctx.save_for_backward(xhat, rstd, weight, x.shape)``; return
               ``(xhat * weight.reshape(n) + bias.reshape(n)).reshape(x.shape)``.

        EXAMPLE:
            >>> x = np.array([[1.0, 2.0, 3.0], [2.0, 2.0, 2.0]], np.float32)
            >>> _LayerNormFn.forward(Context(), x, np.ones(3, np.float32),
            ...                      np.zeros(3, np.float32), axes=(1,), eps=1e-5).round(4)
            array([[-1.2247,  0.    ,  1.2247],
                   [ 0.    ,  0.    ,  0.    ]], dtype=float32)

        HINT: ``(R, n) @ (n, 1)`` gives ``(R, 1)``, which broadcasts back over each row; so
        would ``x.mean(axis=axes, keepdims=True)``, but NumPy reduces a short last axis one
        row at a time, about 8x slower here than one BLAS product (see the speed note above).
        ``a.dot(b)`` is ``a @ b`` for 2-D arrays, with less dispatch (module 03).
        ``eps`` is a Python float, so float32 stays float32. A constant row has variance 0:
        ``eps`` is what keeps the division finite.

        NOTE: subtract the mean first, as in step 2. The shortcut ``E[x²] − E[x]²`` subtracts
        two nearly equal large numbers: for float32 rows near 2000 that vary by about 1 it
        loses every digit of the variance (or makes it negative), where PyTorch stays exact.
        Step 2's second pass matters for the gradient: in a float32 row near -3.1 that varies
        by 0.02, the mean's rounding error is a larger part of each small ``xc``, and the
        backward's cancellation magnifies it: without the pass, ``dx`` can land several times
        further from the exact answer than PyTorch's; with it, no further.
        """
        # BEGIN SOLUTION NO PROMPT
        n = math.prod(x.shape[x.ndim - len(axes):])
        rows = x.reshape(-1, n)  # (R, n)
        avg = _averager(n, x.dtype)  # rows.dot(avg): each row's mean
        mean = rows.dot(avg)  # (R, 1)
        xhat = rows - mean  # a new array: normalise it in place
        xhat -= xhat.dot(avg)  # what rounding left of the mean
        var = (xhat * xhat).dot(avg)
        rstd = _rstd(xhat, var, eps, (1,))
        xhat *= rstd
        ctx.save_for_backward(xhat, rstd, weight, x.shape)
        y = xhat * weight.reshape(n)
        y += bias.reshape(n)
        return y.reshape(x.shape)
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 13: implement _LayerNormFn.forward (see its docstring)")  # STUB

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(dL/dx, dL/dweight, dL/dbias)`` from ``grad = dL/dy`` (see the table above).

        APPROACH (rows as in ``forward``: ``xhat (R, n)``, ``rstd (R, 1)``):
            1. ``xhat, rstd, weight, shape = ctx.saved``; ``r, n = xhat.shape``;
               ``gr = grad.reshape(r, n)``.
            2. Column sums as products with a row of ones, ``ones = np.ones(r, xhat.dtype)``:
               ``dbias = ones.dot(gr)``; ``gx = gr * xhat``; ``dweight = ones.dot(gx)`` —
               both reshaped to ``weight.shape``.
            3. ``wavg = weight.reshape(n, 1) / n``, so ``a.dot(wavg)`` is each row's mean of
               ``a * weight``: with ``g = gr * weight``, ``mean(g) = gr.dot(wavg)`` and
               ``mean(g * xhat) = gx.dot(wavg)``; ``dx = rstd * (g - gr.dot(wavg) - xhat *
               gx.dot(wavg))``, in place on the new array ``g``.
            4. Return ``(dx.reshape(shape), dweight, dbias)`` — one gradient per input.

        EXAMPLE: a row's ``dx`` always sums to 0: adding a constant to every feature of ``x``
        changes nothing after the mean is subtracted. For ``x (2, 3, 4)`` normalised over the
        last axis: ``dx (2, 3, 4)``, ``dweight (4,)``, ``dbias (4,)``.

        HINT: an unbatched row ``(C,)`` is one row (``R = 1``). ``gr.sum(axis=0)`` gives the
        same column sums, several times slower than the product (see the speed note
        above). Folding ``weight`` into ``wavg`` saves multiplying ``gx`` by it: one
        pass over ``(R, n)`` less. Check your formula against ``gradcheck`` in float64 — the
        check below does.
        """
        # BEGIN SOLUTION NO PROMPT
        xhat, rstd, weight, shape = ctx.saved
        r, n = xhat.shape
        gr = grad.reshape(r, n)  # (R, n)
        ones = np.ones(r, dtype=xhat.dtype)  # ones.dot(a): the column sums of a
        dbias = ones.dot(gr).reshape(weight.shape)
        gx = gr * xhat
        dweight = ones.dot(gx).reshape(weight.shape)
        wavg = weight.reshape(n, 1) / n  # a.dot(wavg): each row's mean of a * weight
        dx = gr * weight.reshape(n)  # g
        dx -= gr.dot(wavg)  # mean(g)
        dx -= xhat * gx.dot(wavg)  # xhat * mean(g * xhat)
        dx *= rstd
        return dx.reshape(shape), dweight, dbias
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 13: implement _LayerNormFn.backward (see its docstring)")  # STUB


def _shape_tuple(normalized_shape: int | Sequence[int]) -> tuple[int, ...]:
    """``normalized_shape`` as a tuple of ints (an int means one trailing dim; provided)."""
    if isinstance(normalized_shape, (int, np.integer)):
        return (int(normalized_shape),)
    return tuple(map(int, normalized_shape))


def _check_layer_norm_args(input: Tensor, normalized_shape: Any) -> None:  # noqa: A002
    """PyTorch's argument checks of ``F.layer_norm`` (provided): ``normalized_shape`` is a
    sequence (``nn.LayerNorm`` turns an int into one, the function does not), and the input
    is floating point."""
    if isinstance(normalized_shape, (int, np.integer)):
        raise TypeError("layer_norm(): argument 'normalized_shape' must be tuple of ints, not "
                        "int (write (C,))")
    if input.dtype.kind != "f":
        raise RuntimeError(f"layer_norm is not implemented for {input.dtype} inputs: "
                           "convert to float first")


def layer_norm(input: Tensor, normalized_shape: int | Sequence[int],  # noqa: A002
               weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """``torch.nn.functional.layer_norm``: normalise over the trailing ``normalized_shape``.

    Args:
        input: a float tensor of shape ``(*, *normalized_shape)``.
        normalized_shape: a sequence of ints — the trailing dims of one row (PyTorch's
            functional form refuses a bare int; ``LayerNorm(4)`` accepts one).
        weight, bias: ``normalized_shape`` tensors, or None (scale 1, shift 0).
        eps: added to the variance (default ``1e-5``, PyTorch's).

    Returns:
        A tensor of ``input``'s shape and dtype.

    Raises:
        TypeError: ``normalized_shape`` is an int (PyTorch: "must be tuple of ints").
        RuntimeError: an integer or bool input (PyTorch has no integer layer norm).
        RuntimeError: the trailing dims of ``input`` are not ``normalized_shape`` (PyTorch:
            ``"Given normalized_shape=[4], expected input with shape [*, 4], but got input of
            size[2, 3]"``).

    APPROACH:
        1. ``_check_layer_norm_args(input, normalized_shape)`` (given: the TypeError, and the
           RuntimeError for an integer input); ``shape = _shape_tuple(normalized_shape)`` (given);
           ``k = len(shape)``. If ``input.shape[input.ndim - k:] != shape`` (or
           ``input.ndim < k``): raise the ``RuntimeError``.
        2. Missing ``weight``/``bias``: use ``Tensor(np.ones(shape, input.dtype))`` /
           ``Tensor(np.zeros(shape, input.dtype))`` (constants: they get no gradient).
        3. ``axes = tuple(range(input.ndim - k, input.ndim))``.
        4. Return ``_LayerNormFn.apply(input, weight, bias, axes=axes, eps=eps)``.

    EXAMPLE:
        >>> y = layer_norm(Tensor(np.arange(6, dtype=np.float32).reshape(2, 3)), (3,))
        >>> y.numpy().round(4)
        array([[-1.2247,  0.    ,  1.2247],
               [-1.2247,  0.    ,  1.2247]], dtype=float32)

    HINT: ``normalized_shape`` counts from the *end*: for ``(B, T, C)`` and ``C`` the axes are
    ``(2,)``; for ``(T, C)`` they are ``(1, 2)``.
    """
    # BEGIN SOLUTION NO PROMPT
    _check_layer_norm_args(input, normalized_shape)
    shape = _shape_tuple(normalized_shape)
    k = len(shape)
    if input.ndim < k or tuple(input.shape[input.ndim - k:]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, shape))}], but got input of size"
                           f"{list(input.shape)}")
    if weight is None:
        weight = Tensor(np.ones(shape, dtype=input.dtype))
    if bias is None:
        bias = Tensor(np.zeros(shape, dtype=input.dtype))
    axes = tuple(range(input.ndim - k, input.ndim))
    return _LayerNormFn.apply(input, weight, bias, axes=axes, eps=eps)
    # END SOLUTION
    raise NotImplementedError("module 13: implement layer_norm (see its docstring)")  # STUB


class LayerNorm(Module):
    """Layer normalisation over the trailing ``normalized_shape`` with learned scale and shift.

    Args:
        normalized_shape: an int or a sequence of ints, the trailing dims of one row.
        eps: added to the variance for stability (default ``1e-5``, PyTorch's).
        elementwise_affine: learn ``weight`` (ones) and ``bias`` (zeros) of
            ``normalized_shape``; without it both are None.
        bias: with ``elementwise_affine``, whether to learn the shift (PyTorch >= 2.1).

    Shapes:
        input ``(*, *normalized_shape)`` -> output of the same shape.
    """

    def __init__(self, normalized_shape: int | Sequence[int], eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True) -> None:
        """Store the settings and create ``weight`` and ``bias`` like PyTorch.

        APPROACH:
            1. ``super().__init__()``; ``self.normalized_shape = _shape_tuple(normalized_shape)``;
               store ``eps`` and ``elementwise_affine``.
            2. With ``elementwise_affine``: ``self.weight = Parameter(np.ones(shape,
               np.float32))``, and ``self.bias = Parameter(np.zeros(shape, np.float32))`` if
               ``bias`` else ``self.register_parameter("bias", None)``.
            3. Without it: register both ``"weight"`` and ``"bias"`` as None.

        EXAMPLE:
            >>> ln = LayerNorm(4)
            >>> ln.normalized_shape, ln.weight.numpy().tolist(), ln.bias.numpy().tolist()
            ((4,), [1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0])

        HINT: starting at scale 1 and shift 0 makes a fresh LayerNorm a plain normaliser;
        register None (not a missing attribute) so ``ln.weight is None`` works as in PyTorch.
        """
        # BEGIN SOLUTION NO PROMPT
        super().__init__()
        self.normalized_shape = _shape_tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(np.ones(self.normalized_shape, dtype=np.float32))
            if bias:
                self.bias = Parameter(np.zeros(self.normalized_shape, dtype=np.float32))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 13: implement LayerNorm.__init__ (see its docstring)")  # STUB

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's argument name
        """``layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)``.

        APPROACH: one call to your ``layer_norm``.

        EXAMPLE:
            >>> LayerNorm(3)(Tensor([[1.0, 2.0, 3.0]])).numpy().round(4)
            array([[-1.2247,  0.    ,  1.2247]], dtype=float32)

        HINT: pass the parameters themselves (not ``.data``) so they receive gradients.
        """
        # BEGIN SOLUTION NO PROMPT
        return layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 13: implement LayerNorm.forward (see its docstring)")  # STUB

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


# %% [raw]
# # BEGIN QUESTION
# name: layer_norm
# points: 0

# %% [markdown]
# ### Check: LayerNorm, forward and backward

# %% [raw]
# # BEGIN TESTS

# %%
def test_layer_norm_forward_normalises_each_row(layer_norm, Tensor, np):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((2, 3, 4, 5)) * 3 + 2).astype(np.float32)
    w = rng.standard_normal((4, 5)).astype(np.float32)
    b = rng.standard_normal((4, 5)).astype(np.float32)
    y = layer_norm(Tensor(x), (4, 5), Tensor(w), Tensor(b), eps=1e-5)
    assert y.shape == x.shape and y.dtype == np.float32, (
        f"same shape and dtype as the input: expected {x.shape} float32, got {y.shape} {y.dtype}")
    mu = x.mean(axis=(2, 3), keepdims=True)
    var = x.var(axis=(2, 3), keepdims=True)
    expected = (x - mu) / np.sqrt(var + 1e-5) * w + b
    assert np.allclose(y.numpy(), expected, atol=1e-4), (
        "normalized_shape (4, 5) normalises the last TWO dims together, with the biased "
        f"variance (divide by N, not N - 1); first values {y.numpy().ravel()[:3]} vs "
        f"{expected.ravel()[:3]}")
    plain = layer_norm(Tensor(x), (5,)).numpy()
    assert np.allclose(plain.mean(-1), 0.0, atol=1e-5) and np.allclose(plain.std(-1), 1.0,
                                                                        atol=1e-3), (
        f"without weight and bias every row of the output has mean 0 and standard deviation ~1; "
        f"got means up to {np.abs(plain.mean(-1)).max():.3g}, deviations "
        f"{plain.std(-1).min():.3f} to {plain.std(-1).max():.3f}")
    try:
        layer_norm(Tensor(x), (4,))
    except RuntimeError:
        pass
    else:
        raise AssertionError("normalized_shape (4,) does not match the last dim 5: RuntimeError")
    try:
        layer_norm(Tensor(x), 5)
    except TypeError:
        pass
    else:
        raise AssertionError("F.layer_norm takes normalized_shape as a tuple, as PyTorch does: "
                             "an int (5) is a TypeError (nn.LayerNorm(5) accepts the int)")


# %%
def test_layer_norm_backward_matches_finite_differences(layer_norm, Tensor, gradcheck, np):
    rng = np.random.default_rng(1)
    x, w, b = rng.standard_normal((3, 2, 4)), rng.standard_normal(4), rng.standard_normal(4)
    try:
        gradcheck(lambda a, c, d: layer_norm(a, (4,), c, d) * Tensor(np.arange(24.0).reshape(
            3, 2, 4)), [x, w, b], eps=1e-6, atol=1e-6, rtol=1e-5)
    except AssertionError as err:
        raise AssertionError(f"dL/dx, dL/dweight and dL/dbias must match central differences: "
                             f"{err}") from None
    t = Tensor(x.astype(np.float32), requires_grad=True)
    layer_norm(t, (4,)).sum().backward()
    assert t.grad is not None and np.allclose(t.grad.numpy(), 0.0, atol=1e-5), (
        "the gradient of sum(layer_norm(x)) is 0: every row of the output sums to 0 whatever "
        f"x is; got values up to {np.abs(t.grad.numpy()).max() if t.grad is not None else None}")


# %%
def test_layer_norm_module(LayerNorm, Tensor, np):
    ln = LayerNorm(6)
    names = [n for n, _ in ln.named_parameters()]
    assert names == ["weight", "bias"], f"parameters are weight then bias, got {names}"
    assert np.array_equal(ln.weight.numpy(), np.ones(6)) and not ln.bias.numpy().any(), (
        f"weight starts at ones and bias at zeros (the identity), got weight "
        f"{ln.weight.numpy().round(3).tolist()} and bias {ln.bias.numpy().round(3).tolist()}")
    assert ln.weight.dtype == np.float32 and ln.normalized_shape == (6,), (
        f"float32 parameters and normalized_shape (6,); got {ln.weight.dtype}, "
        f"{ln.normalized_shape}")
    rng = np.random.default_rng(2)
    ln.weight.data[...] = rng.standard_normal(6)
    ln.bias.data[...] = rng.standard_normal(6)
    x = Tensor(rng.standard_normal((2, 3, 6)).astype(np.float32), requires_grad=True)
    y = ln(x)
    xn = (x.numpy() - x.numpy().mean(-1, keepdims=True)) / np.sqrt(x.numpy().var(-1, keepdims=True)
                                                                   + 1e-5)
    want = xn * ln.weight.numpy() + ln.bias.numpy()
    assert y.shape == want.shape and np.allclose(y.numpy(), want, atol=1e-5), (
        f"LayerNorm(x) = x_hat * weight + bias, with x_hat normalised over the last dim: "
        f"expected shape {want.shape}, got {y.shape}"
        + (f", max error {np.abs(y.numpy() - want).max():.3g}" if y.shape == want.shape else ""))
    y.sum().backward()
    assert ln.weight.grad is not None and ln.bias.grad is not None, (
        f"weight and bias must receive gradients, got weight.grad "
        f"{type(ln.weight.grad).__name__} and bias.grad {type(ln.bias.grad).__name__}: pass the "
        "Parameters, not their .data")
    assert np.allclose(ln.bias.grad.numpy(), 6.0), (
        f"dL/dbias of a sum over (2, 3) rows is 6 per feature, got {ln.bias.grad.numpy()}")
    bare = LayerNorm((2, 3), eps=1e-3, elementwise_affine=False)
    assert bare.weight is None and bare.bias is None and list(bare.parameters()) == [], (
        f"elementwise_affine=False: weight and bias are None and there are no parameters, got "
        f"{len(list(bare.parameters()))} parameter(s)")
    nob = LayerNorm(4, bias=False).bias
    assert nob is None, f"bias=False: no shift parameter, got {type(nob).__name__}"


# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 2. The position-wise MLP
#
# Attention *moves* information between positions; it computes little on its own (a weighted
# average is linear in the values). Each block therefore gives every position a small
# two-layer network of its own, the same weights at every position:
#
# ```
#   x (B, T, C) ──fc: Linear(C, 4C)──► (B, T, 4C) ──GELU──► (B, T, 4C) ──proj: Linear(4C, C)──► (B, T, C)
# ```
#
# The hidden layer is 4× wider than the model (GPT-2's choice); with `8C² + 5C` parameters per
# block, the MLPs hold about two thirds of a GPT's block parameters (section 6 counts them).
#
# **GELU, the tanh approximation.** GPT-2 uses
# `gelu(x) = 0.5 · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³)))`, PyTorch's
# `nn.GELU(approximate="tanh")`. Module 02 built it from eight tensor operations; on the
# `(B, T, 4C)` hidden layer — the largest activation of a block — that is eight graph nodes and
# eight arrays kept for backward. `_TanhGELUFn` below (provided) is the same formula as one
# `Function` that keeps two arrays and updates its temporaries in place. Its constants are
# Python floats: a NumPy `float64` constant such as `np.sqrt(2 / np.pi)` would silently turn the
# whole float32 MLP into float64 — twice the bytes in every activation it keeps, and slower
# matrix products.
#
# **A speed note on `Linear` with 3-D inputs.** `x @ W.T` with `x (B, T, C)` works, but it
# multiplies `B` separate `(T, C)` matrices, and its weight gradient `xᵀ @ grad` becomes `B`
# separate `(C, T) @ (T, 4C)` products plus a sum over `B` (module 05's broadcasting rule).
# Module 03's `Linear` flattens `(B, T)` into `B·T` rows itself (one product forward, two
# backward), so the MLP passes `(B, T, C)` tensors straight through.

# %%
#| export
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)  # a Python float: float32 stays float32
_GELU_A = 0.044715


class _TanhGELUFn(Function):
    """``0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³)))`` with one fused backward (provided)."""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray) -> np.ndarray:
        h = x * x  # (..., H) work array, reused in place
        h *= _GELU_A * _SQRT_2_OVER_PI
        h += _SQRT_2_OVER_PI
        h *= x  # u = √(2/π) (x + a x³)
        np.tanh(h, out=h)
        h += 1.0
        h *= 0.5  # the gate h = (1 + tanh u) / 2: gelu(x) = x · h
        ctx.save_for_backward(x, h)
        return x * h

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray]:
        # d/dx = h + x · h' with h' = 2 h (1 - h) u' (as 1 - tanh² u = 4 h (1 - h)), so
        # d/dx = h (1 + 2 x u' (1 - h)) and x u' = x √(2/π) (1 + 3a x²): nine passes
        x, h = ctx.saved
        s = x * x
        s *= 6.0 * _GELU_A * _SQRT_2_OVER_PI
        s += 2.0 * _SQRT_2_OVER_PI
        s *= x  # 2 x u'
        s *= 1.0 - h
        s += 1.0
        s *= h
        s *= grad
        return (s,)


def gelu_tanh(x: Tensor) -> Tensor:
    """GELU with the tanh approximation (``nn.functional.gelu(x, approximate="tanh")``).

    Example:
        >>> gelu_tanh(Tensor([-1.0, 0.0, 1.0])).numpy().round(4)
        array([-0.1588,  0.    ,  0.8412], dtype=float32)
    """
    return _TanhGELUFn.apply(x)


class MLP(Module):
    """The position-wise feed-forward network ``proj(gelu(fc(x)))``, then dropout.

    Args:
        d_model: ``C``, the width of the residual stream.
        hidden: the hidden width (``4 * d_model`` when None).
        dropout: dropout probability on the output (training mode only).

    Attributes:
        fc: ``Linear(d_model, hidden)``; proj: ``Linear(hidden, d_model)``; dropout: ``Dropout``.
    """

    def __init__(self, d_model: int, hidden: int | None = None, dropout: float = 0.0) -> None:
        """Create ``fc``, ``proj`` and ``dropout``, in that order.

        APPROACH: ``super().__init__()``; ``hidden = 4 * d_model`` if it is None;
        ``self.fc = Linear(d_model, hidden)``; ``self.proj = Linear(hidden, d_model)``;
        ``self.dropout = Dropout(dropout)``.

        EXAMPLE:
            >>> shapes = [(n, p.shape) for n, p in MLP(8).named_parameters()]
            >>> shapes  # doctest: +NORMALIZE_WHITESPACE
            [('fc.weight', (32, 8)), ('fc.bias', (32,)),
             ('proj.weight', (8, 32)), ('proj.bias', (8,))]

        HINT: the order of assignment is the order of ``named_parameters`` — and of the random
        draws, so the same seed gives the same MLP.
        """
        # BEGIN SOLUTION NO PROMPT
        super().__init__()
        hidden = 4 * d_model if hidden is None else hidden
        self.fc = Linear(d_model, hidden)
        self.proj = Linear(hidden, d_model)
        self.dropout = Dropout(dropout)
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 13: implement MLP.__init__ (see its docstring)")  # STUB

    def forward(self, x: Tensor) -> Tensor:
        """``dropout(proj(gelu_tanh(fc(x))))`` for ``x (*, d_model)``.

        APPROACH: ``h = self.fc(x)`` — ``(*, 4C)``; ``h = self.proj(gelu_tanh(h))`` —
        ``(*, C)``; return ``self.dropout(h)``.

        EXAMPLE:
            >>> MLP(8)(Tensor(np.ones((2, 5, 8), np.float32))).shape
            (2, 5, 8)

        HINT: ``Linear`` acts on the last dimension of any input (module 03 makes it one
        matrix product over all rows; see the speed note above), so no reshape is needed.
        """
        # BEGIN SOLUTION NO PROMPT
        h = self.fc(x)  # (B, T, 4C)
        h = self.proj(gelu_tanh(h))  # (B, T, C)
        return self.dropout(h)
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 13: implement MLP.forward (see its docstring)")  # STUB


# %% [raw]
# # BEGIN QUESTION
# name: mlp
# points: 0

# %% [markdown]
# ### Check: the MLP

# %% [raw]
# # BEGIN TESTS

# %%
def test_mlp_structure_and_forward(MLP, gelu_tanh, Tensor, np):
    mlp = MLP(6, hidden=10)
    shapes = [(n, p.shape) for n, p in mlp.named_parameters()]
    assert shapes == [("fc.weight", (10, 6)), ("fc.bias", (10,)), ("proj.weight", (6, 10)),
                      ("proj.bias", (6,))], f"fc (hidden, C) then proj (C, hidden); got {shapes}"
    first = [p.shape for p in MLP(6).parameters()][0]
    assert first == (24, 6), f"hidden defaults to 4 * d_model: fc is (24, 6), got {first}"
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 6)).astype(np.float32)
    y = mlp(Tensor(x))
    assert y.shape == (2, 3, 6) and y.dtype == np.float32, (
        f"(B, T, C) in, (B, T, C) float32 out; got {y.shape} {y.dtype}")
    h = x @ mlp.fc.weight.numpy().T + mlp.fc.bias.numpy()
    h = 0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h ** 3)))
    expected = h @ mlp.proj.weight.numpy().T + mlp.proj.bias.numpy()
    assert y.shape == expected.shape and np.allclose(y.numpy(), expected, atol=1e-5), (
        f"MLP(x) = proj(gelu_tanh(fc(x))): expected shape {expected.shape}, got {y.shape}"
        + (f", max error {np.abs(y.numpy() - expected).max():.3g}"
           if y.shape == expected.shape else "")
        + "; check the order of the layers and the activation")
    t = Tensor(x, requires_grad=True)
    mlp(t).sum().backward()
    assert t.grad is not None and t.grad.shape == x.shape, (
        f"the input must receive a gradient of shape {x.shape}, got "
        f"{None if t.grad is None else t.grad.shape}")
    missing = [n for n, p in mlp.named_parameters() if p.grad is None]
    assert missing == [], f"every parameter gets a gradient; none reached {missing}"


# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 3. The pre-norm transformer block
#
# A block reads the **residual stream** `x` twice and adds to it twice:
#
# ```
#   x ─┬──────────────────────────────►(+)─┬──────────────────────────►(+)──► out   (B, T, C)
#      └─ ln_1 ─► attn (causal) ─► drop ─┘  └─ ln_2 ─► mlp (+ dropout) ─┘
# ```
#
# * **Residual connections** (`x + f(x)`): the gradient of `x + f(x)` with respect to `x` is
#   `1 + f'(x)`, so the loss reaches the first block undiminished through the `1` however deep
#   the stack is. Each block *adds* its contribution to a shared stream.
# * **Pre-norm** (GPT-2 and later): LayerNorm sits *inside* each branch, before attention and
#   before the MLP. The original transformer (2017) normalised *after* the addition
#   ("post-norm"), which needs a careful learning-rate warm-up to train deep stacks; pre-norm
#   leaves the stream itself un-normalised, so a final LayerNorm (section 4) is needed at the top.
# * **Causal self-attention**: position `t` may only attend to positions `≤ t`, so the model
#   cannot peek at the token it must predict. Module 12's `MultiheadAttention` takes the mask
#   with **True = not allowed**: `np.triu(np.ones((T, T), bool), k=1)`, and `is_causal=True`
#   as a hint, with `need_weights=False` for the fused attention path.
#
# ```
#   T = 4, attn_mask (True = hidden)      query 2 sees keys 0, 1, 2
#   [[F, T, T, T],
#    [F, F, T, T],
#    [F, F, F, T],
#    [F, F, F, F]]
# ```
#
# **A plug-in point for the KV cache (module 17).** When a GPT generates one token at a time,
# the keys and values of earlier positions never change; module 17 stores them instead of
# recomputing them. So that it needs no change to this module, `forward` takes an optional
# `cache`: a callable `cache(attn, h) -> (B, T, C)` that computes this block's attention for the
# new positions `h` with the block's own `attn` parameters and the keys and values it has
# stored. Without a cache, the block calls its attention directly.

# %%
#| export
def causal_mask(length: int) -> np.ndarray:
    """``(length, length)`` boolean mask, True above the diagonal: MultiheadAttention's
    "not allowed" convention for causal self-attention (provided).

    Example:
        >>> causal_mask(3).astype(int)
        array([[0, 1, 1],
               [0, 0, 1],
               [0, 0, 0]])
    """
    positions = np.arange(length)
    # key j is "not allowed" for query i when j > i: a row against a column, broadcast (the
    # same mask as np.triu(np.ones(...), k=1), several times faster: no ones array, no copy)
    return positions[None, :] > positions[:, None]


class TransformerBlock(Module):
    """Pre-norm block: ``x + drop(attn(ln_1(x)))``, then ``x + mlp(ln_2(x))``.

    Args:
        d_model: ``C``; n_heads: attention heads (must divide ``C``); dropout: on the attention
            weights, the attention output and the MLP output (training mode only).

    Attributes:
        ln_1, attn, ln_2, mlp, dropout — created in this order.
    """

    def __init__(self, d_model: int, n_heads: int, dropout: float = 0.0) -> None:
        """Create the block's layers, in this order (it fixes the parameter names and order).

        APPROACH: ``super().__init__()``; then
            ``self.ln_1 = LayerNorm(d_model)``;
            ``self.attn = MultiheadAttention(d_model, n_heads, dropout=dropout,
            batch_first=True)``;
            ``self.ln_2 = LayerNorm(d_model)``;
            ``self.mlp = MLP(d_model, dropout=dropout)``;
            ``self.dropout = Dropout(dropout)`` (on the attention branch's output).

        EXAMPLE:
            >>> names = [n for n, _ in TransformerBlock(8, 2).named_parameters()]
            >>> names  # doctest: +NORMALIZE_WHITESPACE
            ['ln_1.weight', 'ln_1.bias', 'attn.in_proj_weight', 'attn.in_proj_bias',
             'attn.out_proj.weight', 'attn.out_proj.bias', 'ln_2.weight', 'ln_2.bias',
             'mlp.fc.weight', 'mlp.fc.bias', 'mlp.proj.weight', 'mlp.proj.bias']

        HINT: pass ``batch_first=True`` explicitly (keyword-only in module 12): inputs are
        ``(B, T, C)``.
        """
        # BEGIN SOLUTION NO PROMPT
        super().__init__()
        self.ln_1 = LayerNorm(d_model)
        self.attn = MultiheadAttention(d_model, n_heads, dropout=dropout, batch_first=True)
        self.ln_2 = LayerNorm(d_model)
        self.mlp = MLP(d_model, dropout=dropout)
        self.dropout = Dropout(dropout)
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 13: implement TransformerBlock.__init__ (see its docstring)")  # STUB

    def forward(self, x: Tensor, cache: Any = None) -> Tensor:
        """One pre-norm block on ``x (B, T, C)``; returns ``(B, T, C)``.

        Args:
            x: the residual stream.
            cache: None, or a per-layer cache (module 17): a callable ``cache(attn, h)``
                returning the attention output ``(B, T, C)`` for the new positions ``h``.

        APPROACH:
            1. ``h = self.ln_1(x)``.
            2. No cache: ``a, _ = self.attn(h, h, h, attn_mask=causal_mask(T),
               need_weights=False, is_causal=True)`` with ``T = x.shape[1]``; with a cache:
               ``a = cache(self.attn, h)``.
            3. ``x = x + self.dropout(a)``.
            4. Return ``x + self.mlp(self.ln_2(x))``.

        EXAMPLE:
            >>> TransformerBlock(8, 2)(Tensor(np.ones((2, 5, 8), np.float32))).shape
            (2, 5, 8)

        HINT: pass the same tensor ``h`` as query, key and value: module 12 then computes
        ``q, k, v`` with one matrix product. Add to ``x``, not to ``h``: the stream itself is
        never normalised.
        """
        # BEGIN SOLUTION NO PROMPT
        h = self.ln_1(x)  # (B, T, C)
        if cache is None:
            a, _ = self.attn(h, h, h, attn_mask=causal_mask(x.shape[1]), need_weights=False,
                             is_causal=True)
        else:
            a = cache(self.attn, h)
        x = x + self.dropout(a)  # (B, T, C)
        return x + self.mlp(self.ln_2(x))
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 13: implement TransformerBlock.forward (see its docstring)")  # STUB


# %% [raw]
# # BEGIN QUESTION
# name: block
# points: 0

# %% [markdown]
# ### Check: the block — residuals, causality and the cache plug-in

# %% [raw]
# # BEGIN TESTS

# %%
def test_block_structure_and_residuals(TransformerBlock, Tensor, np):
    block = TransformerBlock(8, 2)
    names = [n for n, _ in block.named_parameters()]
    assert names[:2] == ["ln_1.weight", "ln_1.bias"] and names[-2:] == ["mlp.proj.weight",
                                                                         "mlp.proj.bias"], (
        f"ln_1, attn, ln_2, mlp in this order; got {names}")
    assert block.attn.batch_first, (
        f"MultiheadAttention with batch_first=True: inputs (B, T, C); got batch_first="
        f"{block.attn.batch_first!r}")
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 5, 8)).astype(np.float32)
    y = block(Tensor(x))
    assert y.shape == (2, 5, 8) and y.dtype == np.float32, f"(B, T, C) out, got {y.shape}"
    for p in (block.attn.out_proj.weight, block.attn.out_proj.bias, block.mlp.proj.weight,
              block.mlp.proj.bias):
        p.data[...] = 0.0
    out0 = block(Tensor(x)).numpy()
    assert out0.shape == x.shape and np.allclose(out0, x), (
        f"got shape {out0.shape}"
        + (f", max |out - x| {np.abs(out0 - x).max():.3g}" if out0.shape == x.shape else "")
        + ": with both branches' output layers at zero the block must return x itself: "
        "out = x + attn(ln_1(x)) then + mlp(ln_2(x)) — add to the stream x, not to ln(x)")


# %%
def test_block_is_causal_and_takes_a_cache(TransformerBlock, Tensor, np):
    rng = np.random.default_rng(5)
    block = TransformerBlock(8, 2)
    x = rng.standard_normal((1, 6, 8)).astype(np.float32)
    changed = x.copy()
    changed[0, 4:] = rng.standard_normal((2, 8))
    a, b = block(Tensor(x)).numpy(), block(Tensor(changed)).numpy()
    assert np.allclose(a[0, :4], b[0, :4], atol=1e-6), (
        f"positions 0-3 must not depend on later positions 4-5, but changed by up to "
        f"{np.abs(a[0, :4] - b[0, :4]).max():.3g}: pass the causal mask (True above the "
        "diagonal) to the attention")
    assert not np.allclose(a[0, 4:], b[0, 4:]), (
        "positions 4-5 see their own (changed) inputs, but their outputs did not change "
        f"(max difference {np.abs(a[0, 4:] - b[0, 4:]).max():.3g})")
    calls = []

    def fake_cache(attn, h):
        calls.append((attn, h.shape))
        return Tensor(np.zeros(h.shape, np.float32))

    out = block(Tensor(x), cache=fake_cache)
    assert calls == [(block.attn, (1, 6, 8))], (
        f"with a cache the block calls cache(self.attn, h) once, with h = ln_1(x) of shape "
        f"(1, 6, 8); got {len(calls)} call(s) with shapes {[c[1] for c in calls]}")
    mlp_only = Tensor(x) + block.mlp(block.ln_2(Tensor(x)))
    assert np.allclose(out.numpy(), mlp_only.numpy(), atol=1e-6), (
        f"the cache's output replaces the attention output; the MLP half is unchanged: max "
        f"error {np.abs(out.numpy() - mlp_only.numpy()).max():.3g}")


# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 4. A GPT
#
# ```
#   idx (B, T) int ──tok_emb──► (B, T, C) ──+ pos_emb[0:T]──► drop ──► block 0 ─► ... ─► block n−1
#                                                                                         │
#   logits (B, T, V) ◄──head: Linear(C, V, bias=False)◄── ln_f ◄───────────────────────────┘
# ```
#
# * `tok_emb`: module 11's `Embedding(vocab_size, d_model)`; `pos_emb`: module 11's
#   `LearnedPositionalEmbedding(context_length, d_model)`, which *adds* the rows of positions
#   `offset .. offset + T − 1` to its input (the offset matters for the KV cache);
# * `blocks`: a `Sequential` of `n_layers` `TransformerBlock`s — we iterate over it rather than
#   call it, so that each block can receive its own cache;
# * `ln_f`: the final LayerNorm a pre-norm stack needs; `head`: logits for every position, so
#   one forward pass trains on all `T` next-token predictions of every sequence at once.
#
# **Initialisation (GPT-2's).** Every matrix (embeddings, attention, MLP, head) is drawn from
# `N(0, 0.02²)`, biases start at zero and LayerNorms at the identity; the two projections that
# write into the residual stream (`attn.out_proj.weight`, `mlp.proj.weight`) use a smaller
# standard deviation `0.02 / √(2·n_layers)`, so that the stream's variance stays about the same
# however many blocks add to it. (Module 11's `N(0, 1)` embeddings would start the stream at a
# scale 50× larger than what the blocks add.)
#
# **Weight tying** (optional, not used here). GPT-2 shares one matrix between `tok_emb` and
# the head (`head.weight = tok_emb.weight`: both are `(V, C)`), saving `V·C` parameters.
# Our `Module` supports it — assign the Parameter and `parameters()` lists it once — but we
# keep them separate: at a 65-character vocabulary it saves 4,160 parameters and makes the
# parameter count of section 6 harder to read.

# %% [markdown]
# ## 5. Writing text: sampling
#
# A GPT predicts a distribution over the next token. To generate, feed a prompt, take the
# logits of the **last** position, pick a token, append it, repeat:
#
# ```
#   idx (B, T) ─► forward(idx[:, -context:]) ─► logits[:, -1] (B, V) ─► / temperature
#        ▲                                                               │ top-k: keep k largest
#        └──────────── append (B, 1) ◄── sample ◄── softmax ◄────────────┘
# ```
#
# * **temperature** `τ`: `softmax(logits / τ)`. `τ < 1` sharpens the distribution (safer,
#   more repetitive text), `τ > 1` flattens it (more surprising, more errors).
# * **top-k**: only the `k` most likely tokens may be drawn (the others get `-inf`, probability
#   0); it cuts off the long tail of unlikely tokens that ruins a sample now and then.
# * **greedy decoding**: always the most likely token — `top_k=1` (with any temperature).
# * Sampling draws from `tt`'s global generator, so `tt.manual_seed(s)` reproduces a sample.
#
# Every step runs the whole model on up to `context_length` tokens to produce one new token:
# `max_new_tokens` full forward passes, most of whose work (the keys and values of the earlier
# positions) repeats the previous step. Module 17's KV cache removes that repetition.

# %%
#| export
class GPT(Module):
    """A decoder-only transformer language model (GPT-2's architecture, pre-norm).

    Args:
        vocab_size: ``V``, the number of token ids.
        context_length: the most positions one forward pass may see (the position table's size).
        d_model: ``C``, the width of the residual stream.
        n_layers: how many ``TransformerBlock``s.
        n_heads: attention heads per block (must divide ``d_model``).
        dropout: after the embeddings and inside every block (training mode only).

    Attributes (in this order): ``tok_emb``, ``pos_emb``, ``drop``, ``blocks``, ``ln_f``,
    ``head``.

    Shapes:
        ``forward(idx)``: ``idx (B, T)`` integers with ``T <= context_length`` -> logits
        ``(B, T, V)``.
    """

    def __init__(self, vocab_size: int, context_length: int, d_model: int, n_layers: int,
                 n_heads: int, dropout: float = 0.0) -> None:
        """Build the layers, then apply GPT-2's initialisation.

        APPROACH:
            1. ``super().__init__()``; store ``vocab_size``, ``context_length``, ``d_model``,
               ``n_layers`` and ``n_heads``.
            2. ``self.tok_emb = Embedding(vocab_size, d_model)``;
               ``self.pos_emb = LearnedPositionalEmbedding(context_length, d_model)``;
               ``self.drop = Dropout(dropout)``;
               ``self.blocks = Sequential(*[TransformerBlock(d_model, n_heads, dropout) for _
               in range(n_layers)])``; ``self.ln_f = LayerNorm(d_model)``;
               ``self.head = Linear(d_model, vocab_size, bias=False)``.
            3. Initialise, with ``rng = default_generator()``, for each ``(name, p)`` of
               ``self.named_parameters()`` in order: a 2-D ``p`` gets
               ``p.data[...] = rng.normal(0.0, std, p.shape)`` with ``std = 0.02 /
               math.sqrt(2 * n_layers)`` when ``name`` ends with ``"out_proj.weight"`` or
               ``"mlp.proj.weight"`` and ``0.02`` otherwise; a ``name`` ending with ``"bias"``
               gets zeros. (LayerNorm weights stay at one.)

        EXAMPLE:
            >>> gpt = GPT(vocab_size=65, context_length=32, d_model=64, n_layers=2, n_heads=4)
            >>> sum(p.numel() for p in gpt.parameters())
            110464

        HINT: ``p.data[...] = ...`` writes into the existing float32 array (the draw is
        float64; assigning into the array casts it).
        """
        # BEGIN SOLUTION NO PROMPT
        super().__init__()
        self.vocab_size = vocab_size
        self.context_length = context_length
        self.d_model = d_model
        self.n_layers = n_layers
        self.n_heads = n_heads
        self.tok_emb = Embedding(vocab_size, d_model)
        self.pos_emb = LearnedPositionalEmbedding(context_length, d_model)
        self.drop = Dropout(dropout)
        self.blocks = Sequential(*[TransformerBlock(d_model, n_heads, dropout)
                                   for _ in range(n_layers)])
        self.ln_f = LayerNorm(d_model)
        self.head = Linear(d_model, vocab_size, bias=False)
        rng = default_generator()
        small = 0.02 / math.sqrt(2 * n_layers)
        for name, p in self.named_parameters():
            if p.ndim == 2:
                std = small if name.endswith(("out_proj.weight", "mlp.proj.weight")) else 0.02
                p.data[...] = rng.normal(0.0, std, p.shape)
            elif name.endswith("bias"):
                p.data[...] = 0.0
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 13: implement GPT.__init__ (see its docstring)")  # STUB

    def forward(self, idx: Any, cache: Any = None) -> Tensor:
        """Next-token logits for every position of ``idx (B, T)``: ``(B, T, vocab_size)``.

        Args:
            idx: integer token ids, a Tensor or an array, shape ``(B, T)``.
            cache: None, or a model cache (module 17) with ``cache.offset`` (positions already
                stored) and ``cache.layers`` (one per-layer cache per block).

        Raises:
            ValueError: ``idx`` is not 2-D, or ``offset + T > context_length``.

        APPROACH:
            1. ``ids = idx.data if isinstance(idx, Tensor) else np.asarray(idx)``; check it is
               2-D; ``offset = 0 if cache is None else cache.offset``; if ``offset + T >
               self.context_length`` raise ``ValueError`` naming both numbers.
            2. ``x = self.drop(self.pos_emb(self.tok_emb(ids), offset))`` — ``(B, T, C)``.
            3. For each ``i, block in enumerate(self.blocks)``: ``x = block(x, None if cache
               is None else cache.layers[i])``.
            4. Return the logits ``self.head(self.ln_f(x))`` — ``(B, T, V)`` (``Linear`` makes
               them one matrix product over all ``B·T`` positions).

        EXAMPLE:
            >>> gpt = GPT(10, 8, 16, 1, 2)
            >>> gpt(Tensor([[1, 2, 3], [4, 5, 6]])).shape
            (2, 3, 10)

        HINT: position ``t`` of ``idx`` is position ``offset + t`` of the sequence; the
        positional embedding checks the range for you, but raise the clearer error first.
        """
        # BEGIN SOLUTION NO PROMPT
        ids = idx.data if isinstance(idx, Tensor) else np.asarray(idx)
        if ids.ndim != 2:
            raise ValueError(f"GPT expects token ids of shape (B, T), got {ids.shape}")
        b, t = ids.shape
        offset = 0 if cache is None else int(cache.offset)
        if offset + t > self.context_length:
            raise ValueError(f"Cannot forward {offset + t} positions: the context length is "
                             f"only {self.context_length}")
        x = self.drop(self.pos_emb(self.tok_emb(ids), offset))  # (B, T, C)
        for i, block in enumerate(self.blocks):
            x = block(x, None if cache is None else cache.layers[i])  # (B, T, C)
        x = self.ln_f(x)
        return self.head(x)  # (B, T, V)
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 13: implement GPT.forward (see its docstring)")  # STUB

    def generate(self, idx: Any, max_new_tokens: int, temperature: float = 1.0,
                 top_k: int | None = None) -> Tensor:
        """Extend ``idx (B, T)`` by ``max_new_tokens`` sampled tokens; returns ``(B, T + n)``.

        Runs under ``no_grad`` (nothing is recorded). nanoGPT's semantics: each step feeds the
        last ``context_length`` tokens, takes the logits of the last position, divides them by
        ``temperature`` (default 1.0), keeps only the ``top_k`` largest (if given), and samples
        from the softmax with the package's generator (reproducible with ``manual_seed``).
        Greedy decoding: ``top_k=1``. Call ``model.eval()`` first when the model has dropout.

        Raises:
            ValueError: ``temperature <= 0`` or ``top_k < 1``.

        APPROACH:
            1. Check the arguments. ``out = idx.data if Tensor else np.asarray(idx)``, as
               int64; ``rng = default_generator()``.
            2. Inside ``with no_grad():``, repeat ``max_new_tokens`` times:
               a. ``logits = self.forward(out[:, -self.context_length:]).data[:, -1, :] /
                  temperature`` — ``(B, V)``;
               b. top-k: ``k = min(top_k, self.vocab_size)``;
                  ``kth = np.sort(logits, axis=-1)[:, -k, None]`` — ``(B, 1)``;
                  ``logits[logits < kth] = -np.inf``;
               c. ``p = np.exp(logits - logits.max(-1, keepdims=True))``; divide by its sum
                  (in place in ``logits``, a new array since step a: NOTE below);
               d. sample by inverting the CDF: ``c = p.cumsum(-1)``, ``c /= c[:, -1:]``,
                  ``u = rng.random((B, 1))``, ``nxt = (c <= u).sum(-1, keepdims=True)``;
               e. ``out = np.concatenate([out, nxt], axis=1)``.
            3. Return ``Tensor(out)``.

        EXAMPLE:
            >>> manual_seed(0); gpt = GPT(10, 4, 16, 1, 2)
            >>> out = gpt.generate(Tensor([[1, 2, 3]]), max_new_tokens=5, top_k=1)
            >>> out.shape, out.dtype, out.numpy()[0, :3].tolist()
            ((1, 8), dtype('int64'), [1, 2, 3])

        HINT: the first token with cumulative probability above ``u`` is drawn with exactly its
        probability; tokens removed by top-k have probability 0 and can never be drawn.
        Cropping to the last ``context_length`` tokens keeps the positions in range once the
        sequence is longer than the context. NOTE (speed): a step of cached generation
        (module 17) is a few hundred microseconds, so every NumPy call counts: ``[:, -k,
        None]`` is a plain slice where ``[:, [-k]]`` is a fancy-index copy, and writing ``-inf``
        and the exponentials into ``logits`` saves ``np.where``'s and ``exp``'s new arrays.
        Use the ``with`` form, not nanoGPT's ``@torch.no_grad()`` decorator: the grader checks
        that every method of your module runs code from your file, and a decorated method runs
        the decorator's wrapper.
        """
        # BEGIN SOLUTION NO PROMPT
        if temperature <= 0:
            raise ValueError(f"temperature must be positive, got {temperature} "
                             "(for greedy decoding use top_k=1)")
        if top_k is not None and top_k < 1:
            raise ValueError(f"top_k must be at least 1, got {top_k}")
        out = np.asarray(idx.data if isinstance(idx, Tensor) else idx).astype(np.int64)
        rng = default_generator()
        with no_grad():
            for _ in range(max_new_tokens):
                logits = self.forward(out[:, -self.context_length:]).data[:, -1, :] / temperature
                if top_k is not None:
                    k = min(top_k, self.vocab_size)
                    kth = np.sort(logits, axis=-1)[:, -k, None]  # (B, 1): the k-th largest
                    logits[logits < kth] = -np.inf
                logits -= logits.max(axis=-1, keepdims=True)
                p = np.exp(logits, out=logits)  # (B, V), in place: logits is a new array
                c = p.cumsum(axis=-1)  # the method: np.cumsum(p) adds a Python wrapper
                c /= c[:, -1:]
                u = rng.random((out.shape[0], 1))
                nxt = (c <= u).sum(axis=-1, keepdims=True)  # (B, 1)
                out = np.concatenate([out, nxt.astype(np.int64)], axis=1)
        return Tensor(out)
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 13: implement GPT.generate (see its docstring)")  # STUB


# %% [raw]
# # BEGIN QUESTION
# name: gpt
# points: 0

# %% [markdown]
# ### Check: the GPT — parameters, causal logits, positions

# %% [raw]
# # BEGIN TESTS

# %%
def test_gpt_parameters_and_initialisation(GPT, np):
    gpt = GPT(vocab_size=11, context_length=7, d_model=8, n_layers=2, n_heads=2)
    shapes = dict((n, p.shape) for n, p in gpt.named_parameters())
    names = list(shapes)
    assert names[:2] == ["tok_emb.weight", "pos_emb.weight"] and names[-3:] == [
        "ln_f.weight", "ln_f.bias", "head.weight"], (
        f"tok_emb, pos_emb, blocks, ln_f, head (no head bias); got {names[:2]} ... {names[-3:]}")
    got = [shapes.get(k) for k in ("tok_emb.weight", "pos_emb.weight", "head.weight")]
    assert got == [(11, 8), (7, 8), (11, 8)], (
        f"tok_emb (V, C), pos_emb (context, C), head (V, C): expected [(11, 8), (7, 8), "
        f"(11, 8)], got {got}")
    blocks = sorted({k.split(".")[1] for k in shapes if k.startswith("blocks.")})
    assert blocks == ["0", "1"], (
        f"n_layers=2 TransformerBlocks in a Sequential named blocks, got blocks {blocks}")
    big = GPT(vocab_size=50, context_length=64, d_model=64, n_layers=2, n_heads=4)
    params = dict(big.named_parameters())
    std = float(params["tok_emb.weight"].numpy().std())
    assert 0.015 < std < 0.025, f"matrices start at N(0, 0.02^2); tok_emb has std {std:.4f}"
    small = float(params["blocks.0.mlp.proj.weight"].numpy().std())
    assert 0.008 < small < 0.012, (
        f"residual projections use 0.02 / sqrt(2 * n_layers) = 0.01; got std {small:.4f}")
    biases = [float(np.abs(params[k].numpy()).max())
              for k in ("blocks.0.attn.in_proj_bias", "blocks.0.mlp.fc.bias")]
    assert biases == [0.0, 0.0], f"every bias starts at zero, got max |b| {biases}"
    lnw = params["ln_f.weight"].numpy()
    assert np.array_equal(lnw, np.ones(64)), (
        f"LayerNorms start at one, got ln_f.weight from {lnw.min():.3g} to {lnw.max():.3g}")


# %%
def test_gpt_forward_is_causal_and_uses_positions(GPT, Tensor, np):
    gpt = GPT(vocab_size=13, context_length=6, d_model=16, n_layers=2, n_heads=4)
    rng = np.random.default_rng(6)
    idx = rng.integers(0, 13, size=(3, 6))
    logits = gpt(Tensor(idx))
    assert logits.shape == (3, 6, 13) and logits.dtype == np.float32, (
        f"(B, T) ids -> (B, T, V) float32 logits; got {logits.shape} {logits.dtype}")
    short = gpt(idx[:, :4]).shape
    assert short == (3, 4, 13), (
        f"T may be shorter than context_length: expected (3, 4, 13), got {short}")
    changed = idx.copy()
    changed[:, 3:] = (changed[:, 3:] + 1) % 13
    a, b = logits.numpy(), gpt(Tensor(changed)).numpy()
    assert np.allclose(a[:, :3], b[:, :3], atol=1e-6), (
        f"logits of positions 0-2 must not depend on tokens 3-5 (causal blocks), but changed "
        f"by up to {np.abs(a[:, :3] - b[:, :3]).max():.3g}")
    same = np.full((1, 6), 4)
    rows = gpt(Tensor(same)).numpy()[0]
    assert not np.allclose(rows[0], rows[5], atol=1e-5), (
        f"the same token at positions 0 and 5 must give different logits (they differ by at "
        f"most {np.abs(rows[0] - rows[5]).max():.3g}): add pos_emb")
    try:
        gpt(Tensor(rng.integers(0, 13, size=(1, 7))))
    except ValueError:
        pass
    else:
        raise AssertionError("7 tokens with context_length 6 must raise ValueError")
    loss_grad = Tensor(rng.standard_normal((3, 6, 13)).astype(np.float32))
    (logits * loss_grad).sum().backward()
    missing = [n for n, p in gpt.named_parameters() if p.grad is None]
    assert missing == [], f"every parameter must receive a gradient; missing: {missing}"


# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: generate
# points: 0

# %% [markdown]
# ### Check: generation — greedy, reproducible, cropped to the context

# %% [raw]
# # BEGIN TESTS

# %%
def test_generate_greedy_sampling_and_cropping(GPT, Tensor, manual_seed, np):
    manual_seed(0)
    gpt = GPT(vocab_size=9, context_length=5, d_model=16, n_layers=1, n_heads=2)
    rng = np.random.default_rng(7)
    for p in gpt.parameters():
        p.data[...] += rng.standard_normal(p.shape).astype(np.float32)
    prompt = rng.integers(0, 9, size=(2, 3))
    out = gpt.generate(Tensor(prompt), max_new_tokens=6, top_k=1)
    assert out.shape == (2, 9) and out.dtype == np.int64, (
        f"(B, T) -> (B, T + max_new_tokens) int64; got {out.shape} {out.dtype}")
    seq = prompt.copy()
    for _ in range(6):
        nxt = gpt(Tensor(seq[:, -5:])).numpy()[:, -1].argmax(-1)
        seq = np.concatenate([seq, nxt[:, None]], axis=1)
    assert np.array_equal(out.numpy(), seq), (
        "top_k=1 is greedy: each new token is the argmax of the last position's logits, "
        f"feeding only the last context_length tokens; expected {seq[0]}, got {out.numpy()[0]}")
    manual_seed(1)
    s1 = gpt.generate(prompt, max_new_tokens=8, temperature=2.0).numpy()
    manual_seed(1)
    s2 = gpt.generate(prompt, max_new_tokens=8, temperature=2.0).numpy()
    assert np.array_equal(s1, s2), (
        f"the same manual_seed must give the same sample: got {s1[0].tolist()}, then "
        f"{s2[0].tolist()}; draw from default_generator(), which manual_seed seeds")
    manual_seed(2)
    many = gpt.generate(np.repeat(prompt[:1], 400, axis=0), max_new_tokens=1, top_k=3).numpy()
    logits = gpt(Tensor(prompt[:1])).numpy()[0, -1]
    top3 = set(np.argsort(logits)[-3:].tolist())
    drawn = set(many[:, -1].tolist())
    assert drawn <= top3 and len(drawn) > 1, (
        f"top_k=3 samples only among the 3 largest logits {sorted(top3)}; drew {sorted(drawn)}")


# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# Try it: an untrained GPT writes noise. The milestone script `milestones/transformer_2017.py`
# trains this model on the King James Bible, one character per token, and then it writes
# (mostly) English.

# %%
manual_seed(0)
demo = GPT(vocab_size=27, context_length=16, d_model=32, n_layers=2, n_heads=4)
letters = "abcdefghijklmnopqrstuvwxyz "
sample = demo.generate(Tensor([[7, 4, 11, 11, 14]]), max_new_tokens=20, temperature=1.0).numpy()
print("untrained:", "".join(letters[i] for i in sample[0]))

# %% [markdown]
# ## 6. Systems view: where the parameters and the memory go
#
# **Parameters.** Count them yourself, component by component, for
# `GPT(V, context, C, n_layers, n_heads)`:
#
# | component | what | count |
# |---|---|---|
# | embeddings | `tok_emb (V, C)` + `pos_emb (context, C)` | `V·C + context·C` |
# | attention | per block: `in_proj (3C, C)` + `(3C,)`, `out_proj (C, C)` + `(C,)` | `n_layers · (4C² + 4C)` |
# | mlp | per block: `fc (4C, C)` + `(4C,)`, `proj (C, 4C)` + `(C,)` | `n_layers · (8C² + 5C)` |
# | norms | `ln_1`, `ln_2` per block and `ln_f`: weight + bias `(C,)` each | `(2·n_layers + 1) · 2C` |
# | head | `Linear(C, V, bias=False)` | `V·C` |
#
# Note what does *not* appear: `n_heads` (heads split the same projections) and the context
# length (except for the position table). Write the formula, then check it against counting
# the model's own `.parameters()`.

# %%
#| export
#: Components of a GPT, by the first part of a parameter's name (see ``count_parameters``).
COMPONENTS = ("embeddings", "attention", "mlp", "norms", "head")


def gpt_parameter_counts(vocab_size: int, context_length: int, d_model: int, n_layers: int,
                         n_heads: int) -> dict[str, int]:
    """The parameters of ``GPT(vocab_size, context_length, d_model, n_layers, n_heads)`` by
    component, from the formulas of the table above (without building the model).

    Returns:
        ``{"embeddings", "attention", "mlp", "norms", "head", "total"}`` -> int.

    APPROACH: one line per component (``C = d_model``):
        ``embeddings = V·C + context·C``; ``attention = n_layers·(4C² + 4C)``;
        ``mlp = n_layers·(8C² + 5C)``; ``norms = (2·n_layers + 1)·2C``; ``head = V·C``;
        ``total`` is their sum.

    EXAMPLE:
        >>> gpt_parameter_counts(65, 32, 64, 2, 4)["total"]
        110464

    HINT: ``n_heads`` is not used — and that is the point (module 12, Q3).
    """
    # BEGIN SOLUTION NO PROMPT
    c = d_model
    counts = {
        "embeddings": vocab_size * c + context_length * c,
        "attention": n_layers * (4 * c * c + 4 * c),
        "mlp": n_layers * (8 * c * c + 5 * c),
        "norms": (2 * n_layers + 1) * 2 * c,
        "head": vocab_size * c,
    }
    counts["total"] = sum(counts.values())
    return counts
    # END SOLUTION
    raise NotImplementedError(  # STUB
        "module 13: implement gpt_parameter_counts (see its docstring)")  # STUB


def count_parameters(model: Module) -> dict[str, int]:
    """Count a GPT's actual parameters by component, from their names (provided).

    ``tok_emb``/``pos_emb`` -> embeddings, ``*.attn.*`` -> attention, ``*.mlp.*`` -> mlp,
    ``ln_*`` -> norms, ``head`` -> head; plus ``total``. A shared (tied) parameter counts once.
    """
    counts = dict.fromkeys(COMPONENTS, 0)
    for name, p in model.named_parameters():
        if name.startswith(("tok_emb.", "pos_emb.")):
            key = "embeddings"
        elif ".attn." in name:
            key = "attention"
        elif ".mlp." in name:
            key = "mlp"
        elif "ln_" in name:
            key = "norms"
        elif name.startswith("head."):
            key = "head"
        else:
            raise ValueError(f"count_parameters: {name!r} belongs to no component")
        counts[key] += p.numel()
    counts["total"] = sum(counts.values())
    return counts


# %% [raw]
# # BEGIN QUESTION
# name: parameter_counts
# points: 0

# %% [markdown]
# ### Check: your formula against the model's own parameters

# %% [raw]
# # BEGIN TESTS

# %%
def test_parameter_formula_matches_counting(gpt_parameter_counts, count_parameters, GPT):
    for config in [(65, 32, 64, 2, 4), (11, 7, 8, 3, 2), (100, 20, 24, 1, 3)]:
        formula = gpt_parameter_counts(*config)
        counted = count_parameters(GPT(*config))
        assert formula == counted, (
            f"GPT{config}: your formula gives {formula}, counting .parameters() gives {counted}")


# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# **Experiment 1 — parameters by component.** The course's milestone model, a model 4× wider,
# and GPT-2 small (V = 50,257, context 1,024, C = 768, 12 layers, 12 heads: formula only —
# building it would take 652 MB of float32 weights). Where do the parameters go at each scale?

# %%
configs = {"milestone (65, 32, 64, 2, 4)": (65, 32, 64, 2, 4),
           "wider (65, 32, 256, 2, 4)": (65, 32, 256, 2, 4),
           "GPT-2 small": (50257, 1024, 768, 12, 12)}
print(f"{'model':<28}" + "".join(f"{c:>12}" for c in (*COMPONENTS, "total")))
for label, config in configs.items():
    counts = gpt_parameter_counts(*config)
    if config[2] <= 256:  # small enough to build: check the formula against the real model
        assert count_parameters(GPT(*config)) == counts
    shares = "".join(f"{counts[c] / counts['total']:>12.1%}" for c in COMPONENTS)
    print(f"{label:<28}{shares}{counts['total']:>12,}")
gpt2 = gpt_parameter_counts(*configs["GPT-2 small"])
print(f"GPT-2 small: {gpt2['total'] / 1e6:.1f} M parameters, {4 * gpt2['total'] / 1e6:.0f} MB in "
      f"float32; with the head tied to tok_emb {(gpt2['total'] - gpt2['head']) / 1e6:.1f} M")
# Expected: at C = 64 the embeddings and the head (which grow with V·C) are a large share; the
# blocks grow with C² and take over as C grows. GPT-2 small is 163.0 M parameters here, 652 MB:
# its famous 124.4 M ties the head to tok_emb (38.6 M counted once instead of twice); this
# course counts it untied, as your GPT builds it.

# %% [markdown]
# **Experiment 2 — activation memory against the context length.** Training keeps every
# intermediate array of the forward pass alive until backward has used it. Per block and
# sequence that is a few arrays of `T·C` (the LayerNorm outputs, `q, k, v`, the residual
# stream) and `T·4C` (the MLP), which grow **linearly** in `T`, plus the attention weights
# `h·T²`, which grow **quadratically**. We measure what NumPy holds after the forward pass
# (`tracemalloc` sees NumPy's buffers), for one batch of 8 sequences:

# %%
def activation_megabytes(model, idx):
    """MB of NumPy memory the graph of one forward pass + loss holds, before backward."""
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    logits = model(idx)
    loss = (logits * logits).mean()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    loss.backward()
    model.zero_grad()
    return held / 1e6


def median_cpu_ms(fn, warmup=1, repeats=5):
    """Median CPU time of ``fn()`` in ms: ``warmup`` untimed calls, then ``repeats`` timed ones
    on this thread's clock, which other programs on the machine do not inflate (module 14
    explains why, and builds the full tool)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.thread_time_ns()
        fn()
        times.append(time.thread_time_ns() - start)
    return float(np.median(times)) / 1e6


def train_pass(model, idx):
    logits = model(idx)
    (logits * logits).mean().backward()
    model.zero_grad()


rng = np.random.default_rng(0)
manual_seed(0)
model = GPT(vocab_size=65, context_length=512, d_model=64, n_layers=2, n_heads=4)
lengths, per_token = (16, 32, 64, 128, 256, 512), []
print(f"{'T':>5} {'activations MB':>15} {'KB per token':>13} {'fwd+bwd ms':>11}")
for length in lengths:
    idx = Tensor(rng.integers(0, model.vocab_size, size=(8, length)))
    mb = activation_megabytes(model, idx)
    per_token.append(mb / (8 * length))
    ms = median_cpu_ms(lambda: train_pass(model, idx), repeats=3 if length > 128 else 5)
    print(f"{length:>5} {mb:>15.2f} {1e3 * per_token[-1]:>13.1f} {ms:>11.1f}")
slope, flat = np.polyfit(lengths, per_token, 1)  # MB per token = flat + slope * T
print(f"per token: {1e3 * flat:.1f} KB flat + {1e6 * slope:.1f} bytes x T; the T-part equals the "
      f"flat part at T = {flat / slope:.0f}")
print(f"formula 28·C/h: T = {28 * 64 / 4:.0f} for this model, {28 * 768 / 12:.0f} for GPT-2 small")
# Expected: for short contexts the KB per token is almost flat (the T·C and T·4C arrays
# dominate: memory linear in T, here 14.5 KB per token, about 28·C floats per block); then it
# rises with T, because each block also keeps h·T attention weights per token (memory
# quadratic in T). With C = 64 and h = 4 the quadratic part catches up near T = 457 (the
# formula 28·C/h says 448); with GPT-2's C = 768 and h = 12 only near T = 1792. The time of a
# training pass grows faster than the memory once the T × T arrays outgrow the CPU caches.

# %% [markdown]
# ## 7. ML systems thinking (graded by hand)

# %% [raw]
# # BEGIN QUESTION
# name: written_residual_prenorm
# manual: true
# points: 5

# %% [markdown]
# **Q1 · Residuals and pre-norm.** Your block computes `x + attn(ln_1(x))`. Explain with the
# chain rule why the residual connection lets a 48-block GPT train at all. What changes if the
# LayerNorm is moved *after* the addition (the 2017 "post-norm" block), and why does a
# pre-norm GPT need the final `ln_f`?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# `d(x + f(x))/dx = I + f'(x)`: the gradient of the loss flows to every earlier block through
# the identity term, unchanged in scale, however many blocks lie between; without it, it is a
# product of 48 Jacobians that vanishes or explodes. With post-norm (`ln(x + f(x))`) the
# identity path goes through a LayerNorm in every block, so the clean highway is broken and
# early training is unstable without a long learning-rate warm-up. In pre-norm the stream is
# never normalised and grows as blocks add to it; `ln_f` normalises it once before the head,
# so the logits see a well-scaled input.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_parameter_budget
# manual: true
# points: 5

# %% [markdown]
# **Q2 · The parameter budget.** From experiment 1: which component dominates the milestone
# model, and which GPT-2 small? Give the per-block count in terms of `C` and explain the
# `12C²`. What would weight tying save in each model, and why is it a reasonable thing to do?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# At `C = 64`, `V = 65` the embeddings plus head (`2VC + context·C` ≈ 10 k) are ~10 % and the
# blocks ~90 %, MLPs about two thirds of them. In GPT-2 small the token embedding and the head
# are each 38.6 M (~24 % each, untied), the blocks 85 M. A block has `12C² + 13C`: attention
# `4C²` (q, k, v and out) and MLP `8C²` (two `4C × C` matrices). Tying would save `V·C`:
# 4,160 parameters in the milestone model (4 %), 38.6 M in GPT-2 small (its published 124 M
# is the tied count). It is reasonable because both matrices map between token ids and the
# same `C`-dimensional space: the input embedding of a token and the output direction that
# predicts it can share a representation.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_memory_and_generation
# manual: true
# points: 5

# %% [markdown]
# **Q3 · Memory and generation.** Use experiment 2: how does activation memory scale with `T`
# at the milestone's context, and where does it become quadratic? Estimate the activation
# memory of GPT-2 small training at `T = 1024`, batch 8. Then: how many forward passes and how
# much attention work does `generate` spend on 100 new tokens at a full context, and what will
# the KV cache of module 17 save?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# At `T = 32` memory is dominated by the linear `T·C` and `T·4C` arrays: 15.5 KB per token,
# and almost the same at every short `T` (the table's KB per token is almost flat); the `h·T²` attention weights add
# `h·T` floats per token and block, a share that doubles with every doubling of `T` and
# overtakes the linear part near `T ≈ 450` for this model (where `h·T = 28·C`). GPT-2 small, per layer and token: ~28·C floats of linear activations plus ~h·T for
# attention: `8·1024·12·(28·768 + 12·1024)·4 B ≈ 13 GB` — why real training uses activation
# checkpointing and fused attention. `generate` runs 100 full forward passes of up to
# `context` tokens each: the attention work per step is `O(T²)` and repeats the keys and values
# of all earlier positions. A KV cache stores them, so each step projects only the new token and
# attends once over `T` cached keys: `O(T)` per step instead of `O(T²)`, for `2·C` floats per
# token and layer of memory.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## Summary
#
# You built the transformer's missing pieces — a fused LayerNorm with PyTorch's semantics, the
# GELU MLP and the pre-norm block with causal attention — and assembled a GPT that generates
# text with temperature and top-k sampling. You counted its parameters by component and
# measured how its memory grows with the context. Export with `python export.py 13`, then run
# the 2017 milestone: `python milestones/transformer_2017.py` trains your GPT to reverse
# sequences and to write King James English, one character at a time.
