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
# # Module 12 · Attention
#
# After module 11 every token is a vector that knows its identity and its position, but each
# one is alone: the vector for "it" in "the cat sat because it was tired" cannot see "cat".
# **Attention** lets every token look at the others and pull in what it needs, with weights it
# computes from the data itself. It is the one operation that separates a transformer from an
# MLP, and it is also the most expensive one: its memory grows with the *square* of the
# sequence length. In this module you build `nn.functional.scaled_dot_product_attention` and
# `nn.MultiheadAttention` with PyTorch's semantics and parameter layout, including a fused
# backward pass, and you measure the quadratic cost.
#
# ## Learning objectives
#
# By the end of this module you can:
#
# 1. explain attention as a **differentiable dictionary lookup** — queries, keys, values —
#    and compute `softmax(Q Kᵀ / √d) V` with the right shapes, for any batch dimensions and
#    for queries and keys of different lengths;
# 2. apply **masks** with PyTorch's conventions: `is_causal`, boolean masks (and which value
#    means "may attend" in which API!), additive float masks, and rows where nothing is allowed;
# 3. derive the **backward pass of attention** and of a numerically stable softmax, and write
#    them as one fused `Function` on raw arrays;
# 4. implement `nn.MultiheadAttention(embed_dim, num_heads, ...)` with PyTorch's parameters
#    (`in_proj_weight (3E, E)`, `in_proj_bias (3E,)`, `out_proj`) so that weights load
#    straight from a torch `state_dict`, splitting heads with one reshape/transpose each way;
# 5. measure attention's **O(T²)** memory and time, and explain what that means for long
#    contexts (and for the KV cache of module 17).
#
# ## How to work through this notebook
#
# Fill in every function that raises `NotImplementedError` (docstrings give what / APPROACH /
# EXAMPLE / HINT) and run each `grader.check(...)`. Cells starting with `#| export` become
# `tinytorch/attention.py` (`python export.py 12`), re-exported as
# `tinytorch.nn.functional.scaled_dot_product_attention` and `tinytorch.nn.MultiheadAttention`.

# %%
import time
import tracemalloc

import numpy as np

# %% [markdown]
# ## 1. Queries, keys and values
#
# Think of a dictionary lookup made soft. Each position `i` of the sequence asks a **query**
# `q_i`; every position `j` offers a **key** `k_j` (what it can be found by) and a **value**
# `v_j` (what it hands over). Position `i` receives a weighted average of all values, with
# weights from how well its query matches each key:
#
# ```
#   scores  S = Q Kᵀ · scale         (L, E) @ (E, S)  -> (L, S)     scale = 1/√E
#   weights P = softmax(S, dim=-1)    each row sums to 1              (L, S)
#   output  O = P V                   (L, S) @ (S, Ev) -> (L, Ev)
#
#          keys j →   k0   k1   k2   k3
#   query  q0       [ .70  .10  .10  .10 ]  · V  -> o0 ≈ mostly v0
#   rows   q1       [ .05  .05  .85  .05 ]  · V  -> o1 ≈ mostly v2
# ```
#
# **Why `1/√E`?** If the entries of `q` and `k` have unit variance, `q · k` sums `E` products
# and has variance `E`. Without the scale, scores for `E = 64` are ~8× larger, the softmax
# saturates to one-hot rows and its gradient vanishes.
#
# **Shapes.** PyTorch's `scaled_dot_product_attention` takes `query (..., L, E)`,
# `key (..., S, E)` and `value (..., S, Ev)` and returns `(..., L, Ev)`; the leading `...`
# (batch, heads) broadcast like `matmul`'s. `L` and `S` may differ: a decoder's queries attend
# to an encoder's keys, and with a KV cache (module 17) one new query attends to `S` cached
# keys.
#
# ## 2. Masks, and rows where nothing is allowed
#
# A mask decides which keys each query may use. PyTorch's `scaled_dot_product_attention`
# accepts one of:
#
# * `is_causal=True`: query `i` sees keys `j ≤ i` — the lower triangle, aligned at the
#   **top-left** corner even when `L ≠ S` (like `torch.ones(L, S).tril()`);
# * a **boolean** `attn_mask` broadcastable to `(..., L, S)`: **True means "takes part"**;
# * a **float** `attn_mask`: **added** to the scores (`-inf` removes a key, other values bias).
#
# Both become an additive *bias*: 0 where allowed, `-inf` where not, since `exp(-inf) = 0`.
#
# ```
#   is_causal, L = 3, S = 4          bias                      softmax row by row
#   [[T, F, F, F],                   [[0, -inf, -inf, -inf],   [[1,   0,   0,   0],
#    [T, T, F, F],        ->          [0,    0, -inf, -inf], ->  [.4, .6,   0,   0],
#    [T, T, T, F]]                    [0,    0,    0, -inf]]     [.2, .5,  .3,   0]]
# ```
#
# A row with **no** allowed key (e.g. a query that only sees padding) has every score at
# `-inf`: the textbook softmax computes `exp(-inf - (-inf)) = exp(nan)` and the NaN spreads
# through the whole backward pass. PyTorch's `scaled_dot_product_attention` gives such rows
# **zero** weights (a zero output and no gradient) since version 2.5 (its `_safe_softmax`;
# 2.0–2.4 returned NaN); we do the same, with a "safe" softmax.
#
# ## 3. A stable softmax with one fused backward
#
# Module 02's `softmax` is four tensor operations (max, subtract/exp, sum, divide): four graph
# nodes and four intermediate arrays kept for backward. Attention calls it on a `(B, h, T, T)`
# array — the biggest array of a transformer — so we write it once more as a `Function` on raw
# arrays that keeps only its output `P`. Its backward is one line: for `P = softmax(X)` along
# the last axis and an incoming gradient `G = dL/dP`,
#
# ```
#   dL/dX = P ⊙ (G − rowsum(G ⊙ P))          (⊙: element-wise; rowsum keeps the last dim)
# ```
#
# because `∂P_j/∂X_k = P_j (δ_jk − P_k)`. Fully masked rows have `P = 0`, so they get 0.

# %%
#| export
"""Module 12 · Attention — depends on: tensor, autograd, layers; used by: transformers, memoization.

``scaled_dot_product_attention`` (PyTorch's masks, ``is_causal``, ``scale`` and dropout, with a
fused backward) and ``MultiheadAttention`` with PyTorch's parameter layout (``in_proj_weight``,
``in_proj_bias``, ``out_proj``) and defaults (``batch_first=False``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tinytorch.activations import _sums, softmax
from tinytorch.autograd import gradcheck  # noqa: F401 - for checks
from tinytorch.layers import Linear, Module, Parameter, linear
from tinytorch.tensor import (  # noqa: F401
    Context,
    Function,
    Tensor,
    default_generator,
    is_grad_enabled,
    manual_seed,
)


class _SafeSoftmaxFn(Function):
    """Softmax over the last axis, stable for large scores and zero on fully masked rows."""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray) -> np.ndarray:
        """``P = exp(x - max) / sum(exp(x - max))`` along the last axis; save ``P``.

        A row whose entries are all ``-inf`` (nothing may be attended) gives zeros, not NaN.

        APPROACH:
            1. ``m = x.max(axis=-1, keepdims=True)``; ``empty = m == -np.inf`` marks the fully
               masked rows; if there are any (``empty.any()``), use 0 there instead:
               ``m = np.where(empty, 0.0, m)``.
            2. ``e = np.exp(x - m)`` — every exponent is <= 0, nothing overflows.
            3. ``s = _sums(e, -1)`` (module 02's given ``e.sum(axis=-1, keepdims=True)``, as
               one product); a fully masked row sums to 0 (its ``e``
               is all zeros): divide by 1 there instead, ``np.where(empty, 1.0, s)``;
               ``p = e / s``. (A NaN sum — a NaN or ``+inf`` score — stays NaN, as in
               PyTorch: only the empty rows divide by 1.)
            4. ``ctx.save_for_backward(p)`` and return ``p``.

        EXAMPLE:
            >>> x = np.array([[1.0, 2.0, 3.0], [-np.inf, -np.inf, -np.inf]], np.float32)
            >>> _SafeSoftmaxFn.forward(Context(), x).round(4)
            array([[0.09  , 0.2447, 0.6652],
                   [0.    , 0.    , 0.    ]], dtype=float32)

        HINT: Python floats (``0.0``, ``1.0``) keep float32 arrays float32; ``keepdims=True``
        makes ``m`` and ``s`` broadcast back over the row. (Speed NOTEs: ``x - m`` is a new
        array, so ``np.exp(e, out=e)`` and ``e /= ...`` can reuse it instead of allocating two
        more ``(..., T, T)`` arrays; the ``np.where`` calls only run when a row is empty; and
        ``x.max(...)`` is the array's own method, where ``np.max(x, ...)`` first runs a Python
        wrapper: a few microseconds per call, which is all a one-token step has. The row sums
        as a product also work on SDPA's key-major scores, several times faster than
        ``sum`` on the GPT's ``(16, 4, 32, 32)``.)
        """
        # BEGIN SOLUTION NO PROMPT
        m = x.max(axis=-1, keepdims=True)
        empty = m == -np.inf  # rows where nothing may be attended
        has_empty = empty.any()
        if has_empty:
            m = np.where(empty, 0.0, m)
        p = x - m  # a new array (laid out like x): work on it in place
        np.exp(p, out=p)
        s = _sums(p, -1)
        if has_empty:
            s = np.where(empty, 1.0, s)
        p /= s
        ctx.save_for_backward(p)
        return p
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 12: implement _SafeSoftmaxFn.forward (see its docstring)")  # STUB

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray]:
        """``dL/dx = P * (grad - sum(grad * P, last axis))`` from the saved ``P``.

        APPROACH: ``(p,) = ctx.saved``; ``gp = grad * p``; ``dot = _sums(gp, -1)`` (the
        row sums of ``grad * p``); return ``(p * (grad - dot),)`` — computed in ``gp``'s
        array, which is not needed once ``dot`` is known (one new ``(..., T, T)`` array, not
        three).

        EXAMPLE: for ``P = [0.5, 0.5]`` and ``grad = [1, 0]``: ``dot = 0.5`` and
        ``dL/dx = [0.5 * 0.5, 0.5 * -0.5] = [0.25, -0.25]`` — the gradient of a softmax row
        always sums to 0 (adding a constant to every score changes nothing).

        HINT: one expression, no Jacobian matrix: the ``(T, T)`` Jacobian per row would cost
        ``T`` times the memory of ``P``.
        """
        # BEGIN SOLUTION NO PROMPT
        (p,) = ctx.saved
        gp = grad * p
        dot = _sums(gp, -1)  # rowsum(G * P)
        np.subtract(grad, dot, out=gp)  # gp's array is free now: P * (G - rowsum(G * P))
        gp *= p
        return (gp,)
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 12: implement _SafeSoftmaxFn.backward (see its docstring)")  # STUB


def mask_to_bias(attn_mask: Any, is_causal: bool, query_len: int, key_len: int,
                 dtype: Any) -> np.ndarray | None:
    """The additive bias of ``scaled_dot_product_attention``'s mask arguments (or None).

    Args:
        attn_mask: None, a boolean mask (True = may attend) or a float mask (added), as a
            Tensor or an array, broadcastable to ``(..., query_len, key_len)``.
        is_causal: use the top-left lower triangle ``j <= i`` of ``(query_len, key_len)``.
        dtype: the dtype of the scores (float32 or float64).

    Returns:
        None when there is nothing to mask, else an array of ``dtype`` with 0 where attention
        is allowed and ``-inf`` where it is not (float masks: their own values).

    Raises:
        RuntimeError: both ``attn_mask`` and ``is_causal`` are given (as in PyTorch:
            "Explicit attn_mask should not be set when is_causal=True").

    APPROACH:
        1. Both given: raise the ``RuntimeError``.
        2. ``is_causal``: ``allowed = np.tril(np.ones((query_len, key_len), dtype=bool))``.
        3. Otherwise: None -> return None; take ``.data`` of a Tensor; a boolean mask is
           ``allowed``; a float mask is returned as ``mask.astype(dtype)``.
        4. Return ``np.where(allowed, 0.0, -np.inf).astype(dtype)``.

    EXAMPLE:
        >>> mask_to_bias(None, True, 2, 3, np.float32)
        array([[  0., -inf, -inf],
               [  0.,   0., -inf]], dtype=float32)
        >>> mask_to_bias(np.array([True, False]), False, 1, 2, np.float32)
        array([  0., -inf], dtype=float32)

    HINT: in ``scaled_dot_product_attention`` True means *may attend*. ``nn.MultiheadAttention``
    uses the opposite convention (True = ignore); section 5 handles that one.
    """
    # BEGIN SOLUTION NO PROMPT
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    if is_causal:
        allowed = np.tril(np.ones((query_len, key_len), dtype=bool))
    elif attn_mask is None:
        return None
    else:
        mask = attn_mask.data if isinstance(attn_mask, Tensor) else np.asarray(attn_mask)
        if mask.dtype != np.bool_:
            return mask.astype(dtype)
        allowed = mask
    return np.where(allowed, 0.0, -np.inf).astype(dtype)
    # END SOLUTION
    raise NotImplementedError("module 12: implement mask_to_bias (see its docstring)")  # STUB


def generate_square_subsequent_mask(sz: int) -> Tensor:
    """The causal float mask of ``nn.Transformer.generate_square_subsequent_mask`` (provided):
    ``(sz, sz)`` float32, 0 on and below the diagonal, ``-inf`` above. Being additive, it means
    the same in ``scaled_dot_product_attention`` and in ``MultiheadAttention``."""
    return Tensor(np.triu(np.full((sz, sz), -np.inf, dtype=np.float32), k=1))


def _check_attn_mask(attn_mask: Any, query: Tensor, key: Tensor, value: Tensor) -> Any:
    """PyTorch's checks of ``scaled_dot_product_attention``'s inputs and mask (provided);
    returns the mask to use (None when the result is empty: PyTorch then ignores it).

    * query, key and value have at least 2 dimensions;
    * the mask is boolean, float32 or the query's own dtype;
    * unless the result is empty, the mask broadcasts *to* the scores ``(..., L, S)`` (it is
      added in place), and with 4-D inputs — which PyTorch's fused CPU kernel takes unless the
      mask requires grad — it has at least the two dimensions ``(L, S)``.

    Raises:
        RuntimeError: naming what did not fit.
    """
    if min(query.ndim, key.ndim, value.ndim) < 2:
        raise RuntimeError(f"Expected query, key, and value to all be at least 2 dimensional, "
                           f"but got query.dim: {query.ndim} key.dim: {key.ndim} and "
                           f"value.dim: {value.ndim} instead.")
    if attn_mask is None:
        return None
    mask = attn_mask.data if isinstance(attn_mask, Tensor) else np.asarray(attn_mask)
    if mask.dtype not in (np.bool_, np.float32, query.dtype):
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query "
                           f"dtype, but got attn_mask.dtype: {mask.dtype} and query.dtype: "
                           f"{query.dtype} instead.")
    lead = np.broadcast_shapes(query.shape[:-2], key.shape[:-2])
    scores = (*lead, query.shape[-2], key.shape[-2])
    if int(np.prod(scores)) == 0:
        return None
    learned = isinstance(attn_mask, Tensor) and attn_mask.requires_grad  # not for the kernel
    if query.ndim == key.ndim == value.ndim == 4 and mask.ndim < 2 and not learned:
        raise RuntimeError(f"attn_mask of shape {mask.shape}: 4-D inputs need a mask with at "
                           "least the two dimensions (L, S)")
    try:
        fits = np.broadcast_shapes(mask.shape, scores) == scores
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(f"attn_mask of shape {mask.shape} does not broadcast to the scores' "
                           f"shape {scores}")
    return attn_mask


def _composed_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor,
                        scale: float, dropout_p: float) -> Tensor:
    """The same attention from Tensor operations (provided), for a float ``attn_mask`` that
    requires grad (a learned bias): the engine then gives the mask its gradient, which the
    fused Function (whose inputs are ``q, k, v``) does not compute."""
    scores = (query @ key.transpose(-2, -1)) * scale + attn_mask
    p = _SafeSoftmaxFn.apply(scores)
    if dropout_p > 0.0:
        keep = (default_generator().random(p.shape) >= dropout_p).astype(p.dtype)
        p = p * Tensor(keep / (1.0 - dropout_p))
    return p @ value


# %% [raw]
# # BEGIN QUESTION
# name: softmax_and_masks
# points: 0

# %% [markdown]
# ### Check: the safe softmax and the masks

# %% [raw]
# # BEGIN TESTS

# %%
def test_safe_softmax_forward_and_backward(_SafeSoftmaxFn, Tensor, np):
    x = np.array([[1.0, 2.0, 3.0], [1000.0, 0.0, -1000.0],
                  [-np.inf, -np.inf, -np.inf]], dtype=np.float32)
    t = Tensor(x, requires_grad=True)
    p = _SafeSoftmaxFn.apply(t)
    got = p.numpy()
    assert got.dtype == np.float32, f"float32 in, float32 out; got {got.dtype}"
    assert np.allclose(got[0], [0.09003057, 0.24472847, 0.66524096]), (
        f"softmax([1, 2, 3]) is [0.090, 0.245, 0.665], got {got[0]}")
    assert np.allclose(got[1], [1.0, 0.0, 0.0]) and not np.isnan(got).any(), (
        f"subtract the row maximum so exp never overflows; got {got[1]}")
    assert np.array_equal(got[2], [0.0, 0.0, 0.0]), (
        f"a fully masked row (all -inf) gives zeros, not NaN; got {got[2]}")
    (p * Tensor(np.array([[1.0, 0.0, 0.0]] * 3, dtype=np.float32))).sum().backward()
    g = t.grad.numpy()
    expected = got[0] * (np.array([1.0, 0.0, 0.0]) - got[0, 0])
    assert np.allclose(g[0], expected, atol=1e-6), (
        f"dL/dx = P * (G - rowsum(G * P)): expected {expected.round(4)}, got {g[0].round(4)}")
    assert np.array_equal(g[2], [0.0, 0.0, 0.0]), (
        f"a fully masked row gets no gradient: expected [0, 0, 0], got {g[2].round(4).tolist()}")


# %%
def test_mask_to_bias_conventions(mask_to_bias, Tensor, np):
    causal = mask_to_bias(None, True, 2, 4, np.float32)
    assert causal is not None and causal.shape == (2, 4) and causal.dtype == np.float32, (
        f"is_causal gives a (query_len, key_len) = (2, 4) bias in the scores' dtype float32, "
        f"got {None if causal is None else (causal.shape, causal.dtype)}")
    assert np.array_equal(causal, [[0, -np.inf, -np.inf, -np.inf], [0, 0, -np.inf, -np.inf]]), (
        f"is_causal is the top-left lower triangle (key j <= query i); got {causal.tolist()}")
    b = mask_to_bias(Tensor(np.array([[True, False, True]])), False, 1, 3, np.float32)
    assert np.array_equal(b, [[0, -np.inf, 0]]), (
        f"a boolean attn_mask: True takes part (0), False is removed (-inf); got {b}")
    f = mask_to_bias(np.array([[0.5, -1.0]]), False, 1, 2, np.float32)
    assert f.dtype == np.float32 and np.allclose(f, [[0.5, -1.0]]), (
        f"a float attn_mask is added as it is (cast to the scores' dtype): expected "
        f"[[0.5, -1.0]] float32, got {np.asarray(f).tolist()} {f.dtype}")
    got = mask_to_bias(None, False, 3, 3, np.float32)
    assert got is None, f"no mask: return None (nothing to add), got {type(got).__name__}"
    try:
        mask_to_bias(np.ones((2, 2), dtype=bool), True, 2, 2, np.float32)
    except RuntimeError:
        pass
    else:
        raise AssertionError("attn_mask together with is_causal=True must raise RuntimeError")


# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 4. Scaled dot-product attention as one `Function`
#
# Composed from tensor operations, attention would record ~7 nodes and keep the scores, the
# exponentials, the sums and the weights alive for backward. As one `Function` it keeps only
# `Q, K, V` and `P` and computes the gradients with four matrix products:
#
# ```
#   forward                              backward (G = dL/dO, shape (..., L, Ev))
#   S = Q Kᵀ · scale + bias              dV = Pᵀ G                     (..., S, Ev)
#   P = softmax(S)        (save P)       dP = G Vᵀ                     (..., L, S)
#   O = P V                              dS = P ⊙ (dP − rowsum(dP ⊙ P))   (the softmax rule)
#                                        dQ = dS K · scale             (..., L, E)
#                                        dK = dSᵀ Q · scale            (..., S, E)
# ```
#
# `Kᵀ` means swapping the last two axes (`np.swapaxes(k, -1, -2)`), never `.T` (which would
# reverse the batch axes too). When `key` had fewer batch dimensions than `query` (a key shared
# by every batch element), `dK` comes out with the bigger batch shape: the engine's
# `unbroadcast` (module 05) sums it back, so return gradients in the broadcast shape.
#
# **Dropout** on the attention weights (PyTorch's `dropout_p`): after the softmax, keep each
# weight with probability `1 - p` and scale it by `1 / (1 - p)`; the same mask multiplies `dP`
# in backward, so it is saved. (We draw it like module 03's `Dropout`:
# `default_generator().random(P.shape) >= p`.)
#
# **Speed: store the scores key-major.** The softmax reduces each row of `S` — one query's
# `S` keys, 32 numbers in the GPT of module 13. NumPy reduces along the *last* axis of an array
# one short row at a time (a loop in C per row), but along an *outer* axis it combines whole
# rows at once with vector instructions: `max` over the last axis of a `(16, 4, 32, 32)` array
# takes about three times as long as over the axis before it. So the forward computes
# `Sᵀ = K Qᵀ` — shape `(..., S, L)`, keys on the outer axis — and works on its transposed
# view `S` (`np.swapaxes`, no copy): the softmax's `max` and `sum` along `S`'s last axis then
# run down `Sᵀ`'s columns, every element-wise step keeps that layout (NumPy lays a result out
# like its input), and BLAS multiplies the transposed `P` by `V` without a copy. The backward
# computes `dPᵀ = V Gᵀ` for the same reason. Same numbers, about half the time of the
# attention core at these sizes (measure it: section 6).
#
# One step goes against that grain: a mask arrives query-major, an `(L, S)` array of rows.
# Added in place to the key-major scores, NumPy walks the scores in their memory order and
# reads the mask across its rows, one element at a time, several times slower than an add of
# two arrays laid out alike. The given `_key_major(bias)` copies the small mask once into the
# scores' layout (its last two axes swapped in memory: the same values, the same shape), and
# the add runs at full speed again over every batch element and head.

# %%
#| export
def _key_major(a: np.ndarray) -> np.ndarray:
    """``a`` laid out in memory like the key-major scores (provided): the same values and
    shape, its last two axes swapped in memory (a copy; 0-d and 1-d arrays as they are)."""
    if a.ndim < 2:
        return a
    return np.ascontiguousarray(a.swapaxes(-1, -2)).swapaxes(-1, -2)


class _ScaledDotProductAttentionFn(Function):
    """``softmax(Q Kᵀ · scale + bias) V`` with a fused backward (four matmuls)."""

    @staticmethod
    def forward(ctx: Context, q: np.ndarray, k: np.ndarray, v: np.ndarray, *,
                bias: np.ndarray | None = None, scale: float = 1.0,
                dropout_p: float = 0.0) -> np.ndarray:
        """Attention of ``q (..., L, E)`` over ``k (..., S, E)`` and ``v (..., S, Ev)``.

        Args:
            bias: None or an additive array broadcastable to ``(..., L, S)`` (0 / ``-inf``).
            scale: multiplies ``Q Kᵀ`` (``1/sqrt(E)`` by default in the caller).
            dropout_p: probability of dropping each attention weight.

        Returns:
            ``(..., L, Ev)``.

        APPROACH:
            1. ``s = np.swapaxes(np.matmul(k, np.swapaxes(q, -1, -2)), -1, -2)`` — shape
               ``(..., L, S)``, stored key-major (see the speed note above); ``s *= scale``.
            2. If ``bias`` is not None: ``s += _key_major(bias)`` (in place: it keeps the
               layout; ``s + bias`` would make a new, query-major array. ``_key_major`` is
               given: the mask laid out like ``s``, see the speed note above).
            3. ``sm = Context()``; ``p = _SafeSoftmaxFn.forward(sm, s)`` (your softmax).
            4. Dropout: ``keep = None``; if ``dropout_p > 0``: ``keep = (default_generator()
               .random(p.shape) >= dropout_p).astype(p.dtype) / (1.0 - dropout_p)`` and
               ``p_used = p * keep``; otherwise ``p_used = p``.
            5. ``ctx.save_for_backward(q, k, v, sm, keep, scale)``; return
               ``np.matmul(p_used, v)``.

        EXAMPLE:
            >>> q = np.array([[1.0, 0.0]], np.float32); k = np.array([[1.0, 0.0], [0.0, 1.0]],
            ...     np.float32); v = np.array([[10.0], [20.0]], np.float32)
            >>> _ScaledDotProductAttentionFn.forward(Context(), q, k, v, scale=1.0).round(3)
            array([[12.689]], dtype=float32)

        HINT: ``np.matmul`` broadcasts the leading dims like ``@`` on tensors; the scale is a
        Python float, so float32 stays float32. ``np.matmul(q, np.swapaxes(k, -1, -2))``
        gives the same numbers, stored query-major (slower softmax).
        """
        # BEGIN SOLUTION NO PROMPT
        s = np.matmul(k, q.swapaxes(-1, -2)).swapaxes(-1, -2)  # (..., L, S), key-major
        s *= scale
        if bias is not None:
            s += _key_major(bias)  # in place keeps the key-major layout (bias broadcasts)
        sm = Context()
        p = _SafeSoftmaxFn.forward(sm, s)
        keep = None
        if dropout_p > 0.0:
            keep = (default_generator().random(p.shape) >= dropout_p).astype(p.dtype)
            keep /= 1.0 - dropout_p
            p = p * keep
        ctx.save_for_backward(q, k, v, sm, keep, scale)
        return np.matmul(p, v)
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 12: implement _ScaledDotProductAttentionFn.forward "  # STUB
            "(see its docstring)")  # STUB

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(dQ, dK, dV)`` from ``grad = dL/dO`` (see the table above).

        APPROACH:
            1. ``q, k, v, sm, keep, scale = ctx.saved``; ``p = sm.saved[0]`` (the softmax
               output) and ``p_used = p if keep is None else p * keep``.
            2. ``dv = np.matmul(np.swapaxes(p_used, -1, -2), grad)``.
            3. ``dp = np.swapaxes(np.matmul(v, np.swapaxes(grad, -1, -2)), -1, -2)`` — ``G Vᵀ``
               stored key-major like ``P``; with dropout ``dp = dp * keep``.
            4. ``(ds,) = _SafeSoftmaxFn.backward(sm, dp)``; then ``ds = ds * scale``.
            5. ``dq = np.matmul(ds, k)``; ``dk = np.matmul(np.swapaxes(ds, -1, -2), q)``.
            6. Return ``(dq, dk, dv)``.

        EXAMPLE: shapes for ``q (2, 4, 3)``, ``k (5, 3)`` (shared) and ``v (2, 5, 6)``:
        ``grad (2, 4, 6)`` -> ``dq (2, 4, 3)``, ``dk (2, 5, 3)`` (the engine sums it to
        ``(5, 3)``) and ``dv (2, 5, 6)``.

        HINT: the scale belongs to ``dS`` (both ``dQ`` and ``dK`` need it once); check your
        result against ``gradcheck`` in float64 — the check below does.
        """
        # BEGIN SOLUTION NO PROMPT
        q, k, v, sm, keep, scale = ctx.saved
        p = sm.saved[0]
        p_used = p if keep is None else p * keep
        dv = np.matmul(np.swapaxes(p_used, -1, -2), grad)
        dp = np.matmul(v, grad.swapaxes(-1, -2)).swapaxes(-1, -2)  # key-major, like p
        if keep is not None:
            dp = dp * keep
        (ds,) = _SafeSoftmaxFn.backward(sm, dp)
        ds *= scale
        return np.matmul(ds, k), np.matmul(np.swapaxes(ds, -1, -2), q), dv
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 12: implement _ScaledDotProductAttentionFn.backward "  # STUB
            "(see its docstring)")  # STUB


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Any = None, dropout_p: float = 0.0,
                                 is_causal: bool = False,
                                 scale: float | None = None) -> Tensor:
    """``torch.nn.functional.scaled_dot_product_attention`` for shapes ``(..., L, E)``.

    Args:
        query: ``(..., L, E)``; key: ``(..., S, E)``; value: ``(..., S, Ev)`` (leading dims
            broadcast).
        attn_mask: None, boolean (True = takes part) or float (added), broadcastable to
            ``(..., L, S)``; float32 or the query's dtype. A float mask that requires grad
            gets its gradient (a learned attention bias).
        dropout_p: dropout on the attention weights (applied whenever it is > 0, as in
            PyTorch's functional form: pass 0.0 in evaluation).
        is_causal: top-left causal mask; not together with ``attn_mask``.
        scale: defaults to ``1 / sqrt(E)``.

    Returns:
        ``(..., L, Ev)``. Rows with no allowed key are 0 (PyTorch does the same since 2.5).

    Raises:
        RuntimeError: ``query`` and ``key`` differ in ``E``, ``key`` and ``value`` in ``S``,
            ``attn_mask`` is given with ``is_causal=True``, or has another dtype than bool,
            float32 or the query's.

    APPROACH:
        1. Check ``query.shape[-1] == key.shape[-1]`` and ``key.shape[-2] ==
           value.shape[-2]``; raise ``RuntimeError`` naming the shapes otherwise; then
           ``attn_mask = _check_attn_mask(attn_mask, query, key, value)`` (given: PyTorch's
           other checks).
        2. ``scale = 1.0 / math.sqrt(query.shape[-1])`` when it is None.
        3. A float mask that requires grad (a ``Tensor`` with ``requires_grad``): return
           ``_composed_attention(query, key, value, attn_mask, scale, dropout_p)`` (given).
           Otherwise ``bias = mask_to_bias(attn_mask, is_causal, L, S, query.dtype)``.
        4. Return ``_ScaledDotProductAttentionFn.apply(query, key, value, bias=bias,
           scale=scale, dropout_p=dropout_p)``.

    EXAMPLE:
        >>> q = Tensor(np.ones((2, 3, 4, 8), np.float32))
        >>> scaled_dot_product_attention(q, q, q, is_causal=True).shape
        (2, 3, 4, 8)

    HINT: ``math.sqrt`` returns a Python float — a NumPy float64 scale would turn a float32
    attention into float64.
    """
    # BEGIN SOLUTION NO PROMPT
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise RuntimeError(f"scaled_dot_product_attention: query {query.shape}, key {key.shape} "
                           f"and value {value.shape} do not fit (..., L, E), (..., S, E), "
                           f"(..., S, Ev)")
    attn_mask = _check_attn_mask(attn_mask, query, key, value)
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1])
    if isinstance(attn_mask, Tensor) and attn_mask.requires_grad:
        return _composed_attention(query, key, value, attn_mask, scale, dropout_p)
    bias = mask_to_bias(attn_mask, is_causal, query.shape[-2], key.shape[-2], query.dtype)
    return _ScaledDotProductAttentionFn.apply(query, key, value, bias=bias, scale=scale,
                                              dropout_p=dropout_p)
    # END SOLUTION
    raise NotImplementedError(  # STUB
        "module 12: implement scaled_dot_product_attention (see its docstring)")  # STUB


# %% [raw]
# # BEGIN QUESTION
# name: sdpa
# points: 0

# %% [markdown]
# ### Check: scaled dot-product attention, forward and backward

# %% [raw]
# # BEGIN TESTS

# %%
def test_sdpa_forward_matches_the_formula(scaled_dot_product_attention, Tensor, np):
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal(s).astype(np.float32) for s in [(2, 3, 8), (2, 5, 8), (2, 5, 4)])
    out = scaled_dot_product_attention(Tensor(q), Tensor(k), Tensor(v))
    assert out.shape == (2, 3, 4), (
        f"(..., L, E) x (..., S, E) x (..., S, Ev) -> (2, 3, 4), got {out.shape}")
    assert out.dtype == np.float32, (
        f"float32 stays float32, got {out.dtype} (use a Python float scale)")
    s = q @ k.transpose(0, 2, 1) / np.sqrt(8)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    assert out.shape == (p @ v).shape and np.allclose(out.numpy(), p @ v, atol=1e-5), (
        f"softmax(Q K^T / sqrt(E)) V: expected shape {(p @ v).shape}, got {out.shape}"
        + (f", max error {np.abs(out.numpy() - p @ v).max():.3g}" if out.shape == (p @ v).shape
           else "") + "; check the scale 1/sqrt(E) and the softmax axis (-1, keys)")
    causal = scaled_dot_product_attention(Tensor(q), Tensor(k), Tensor(v), is_causal=True).numpy()
    assert np.allclose(causal[:, 0], v[:, 0], atol=1e-6), (
        f"with is_causal the first query sees only the first key, so its output is v[0]; "
        f"max error {np.abs(causal[:, 0] - v[:, 0]).max():.3g}")
    masked = scaled_dot_product_attention(Tensor(q), Tensor(k), Tensor(v),
                                          attn_mask=np.zeros((3, 5), dtype=bool)).numpy()
    assert np.array_equal(masked, np.zeros_like(masked)), (
        f"a boolean mask that allows nothing gives zero rows (not NaN), got "
        f"{int(np.isnan(masked).sum())} NaN and max |out| {np.nanmax(np.abs(masked)):.3g}")


# %%
def test_sdpa_backward_matches_finite_differences(scaled_dot_product_attention, gradcheck, np):
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal(s) for s in [(2, 3, 4), (4, 4), (2, 4, 5)])
    mask = np.array([[True, True, False, True]] * 3)
    for kwargs in ({}, {"is_causal": True}, {"attn_mask": mask}, {"scale": 0.3}):
        fn = lambda a, b, c: scaled_dot_product_attention(a, b, c, **kwargs)  # noqa: E731
        assert gradcheck(fn, [q, k, v], eps=1e-6, atol=1e-6, rtol=1e-5), f"gradients with {kwargs}"


# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 5. Many heads: `nn.MultiheadAttention`
#
# One attention computes one set of weights per query. **Multi-head attention** runs `h`
# attentions side by side on `h` slices of the embedding (`head_dim = E / h`), so one head can
# follow syntax while another follows co-reference, at the cost of a single attention of
# width `E`:
#
# ```
#   x (N, L, E) ──in_proj──► q, k, v (N, L, E) ──split_heads──► (N, h, L, hs)   hs = E / h
#                                                                   │ attention per head
#   out (N, L, E) ◄──out_proj── (N, L, E) ◄──merge_heads── (N, h, L, hs)
#
#   split_heads: (N, L, E) -reshape-> (N, L, h, hs) -transpose(1, 2)-> (N, h, L, hs)
#   merge_heads: (N, h, L, hs) -transpose(1, 2)-> (N, L, h, hs) -reshape-> (N, L, E)
# ```
#
# **PyTorch's parameters**, which we copy exactly so that a torch `state_dict` loads as is:
#
# | name | shape | init |
# |---|---|---|
# | `in_proj_weight` | `(3E, E)`: rows `[0, E)` → q, `[E, 2E)` → k, `[2E, 3E)` → v | Xavier |
# | `in_proj_bias` | `(3E,)` (None with `bias=False`) | zeros |
# | `out_proj` | a `Linear(E, E, bias)` | Linear's default, then its bias is zeroed |
#
# Xavier uniform for a `(3E, E)` matrix draws from `U(-b, b)` with `b = sqrt(6 / (E + 3E))`.
#
# PyTorch creates `out_proj` first (its `Linear.__init__` draws the weight, then the bias) and
# *then* draws `in_proj_weight`; we draw in that order so a seed gives the same model. For
# self-attention (`query is key is value`) one `(N, L, E) @ (E, 3E)` product computes `q, k, v`
# at once; `narrow` (given, like `torch.narrow`) cuts it into three views.
#
# **`batch_first`.** The default is PyTorch's, `batch_first=False`: inputs `(L, N, E)`,
# sequence first (the layout of the original Transformer code). Every other module of this
# course puts the batch first, `(N, L, E)`, so the course's models **pass `batch_first=True`
# explicitly** — write it every time, and code moves unchanged between tinytorch and PyTorch.
# (It is keyword-only here: PyTorch's fifth positional argument is `add_bias_kv`.) A 2-D input
# `(L, E)` is one unbatched sequence whatever `batch_first` says.
#
# **Masks — the convention flips!** In `MultiheadAttention`, a *boolean* mask means
# **True = ignore** (the opposite of `scaled_dot_product_attention`):
#
# * `key_padding_mask (N, S)`: True marks padding keys;
# * `attn_mask (L, S)` or `(N·h, L, S)`: True forbids that query-key pair;
# * float masks of either kind are added. Both become one additive bias `(N, h, L, S)`.
#
# `is_causal=True` is only a *hint* in PyTorch's `MultiheadAttention`: you must still pass the
# causal `attn_mask` (e.g. `generate_square_subsequent_mask(L)`), else it raises.
#
# `forward` returns `(output, weights)`. With `need_weights=True` (PyTorch's default) the
# weights are computed explicitly — `(N, L, S)` averaged over heads, or `(N, h, L, S)` with
# `average_attn_weights=False` — and differentiable; with `need_weights=False` the fused
# function runs (faster: use it in training) and `weights` is None.
#
# **A query that may attend to nothing** (every key masked) differs between the paths, exactly
# as in PyTorch:
#
# | path | what a fully masked query row gives |
# |---|---|
# | `scaled_dot_product_attention`, and `MultiheadAttention(need_weights=False)` in training or when a gradient is needed | zeros (the safe softmax of section 2) |
# | `MultiheadAttention(need_weights=True)` | NaN output and NaN weights: a plain softmax (module 02's `softmax`) of a row of `-inf` |
# | PyTorch's fused inference kernel — evaluation mode, nothing needing a gradient, batched self-attention (`query is key is value`) with `batch_first=True`, an even number of heads, biases and no float mask — even with `need_weights=False` | NaN, as the explicit path (`_uses_fused_inference`, given, says when) |
#
# NaN spreads: mask so that every query keeps at least one key (a causal mask always does).
#
# **Plugging in a KV cache (module 17).** The pieces are separate on purpose: a cached
# attention projects only the new token (`_in_projection`), appends its keys and values to a
# cache, and calls `scaled_dot_product_attention(q, k_cache, v_cache, attn_mask=...)` with a
# query of length 1 against `S` cached keys — a new class built from these parts, no patching.

# %%
#| export
class _NarrowFn(Function):
    """``input.narrow(dim, start, length)``: a slice whose backward writes into zeros."""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray, *, dim: int, start: int,
                length: int) -> np.ndarray:
        index = [slice(None)] * x.ndim
        index[dim] = slice(start, start + length)
        ctx.save_for_backward(x.shape, tuple(index))
        return x[tuple(index)]

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray]:
        shape, index = ctx.saved
        g = np.zeros(shape, dtype=grad.dtype)
        g[index] = grad
        return (g,)


def narrow(input: Tensor, dim: int, start: int, length: int) -> Tensor:  # noqa: A002
    """``torch.narrow``: elements ``start .. start + length - 1`` along ``dim`` (provided).

    Example:
        >>> narrow(Tensor(np.arange(6.0).reshape(2, 3)), 1, 1, 2).tolist()
        [[1.0, 2.0], [4.0, 5.0]]
    """
    return _NarrowFn.apply(input, dim=dim, start=start, length=length)


def split_heads(x: Tensor, num_heads: int) -> Tensor:
    """``(..., T, E)`` -> ``(..., num_heads, T, E // num_heads)``: one reshape, one transpose.

    APPROACH:
        1. ``*lead, t, e = x.shape``; ``head_dim = e // num_heads``.
        2. ``x.reshape(*lead, t, num_heads, head_dim)`` — the last axis is cut into heads.
        3. ``.transpose(-3, -2)`` moves the head axis in front of the time axis.

    EXAMPLE:
        >>> split_heads(Tensor(np.zeros((2, 5, 12), np.float32)), 3).shape
        (2, 3, 5, 4)

    HINT: reshaping straight to ``(N, h, T, hs)`` has the right shape but mixes time steps
    into heads: the head axis must be split off ``E``, then moved. Use the Tensor's own
    ``reshape`` and ``transpose`` (here and in ``merge_heads``), so gradients flow back
    through both functions.
    """
    # BEGIN SOLUTION NO PROMPT
    *lead, t, e = x.shape
    return x.reshape(*lead, t, num_heads, e // num_heads).transpose(-3, -2)
    # END SOLUTION
    raise NotImplementedError("module 12: implement split_heads (see its docstring)")  # STUB


def merge_heads(x: Tensor) -> Tensor:
    """``(..., h, T, hs)`` -> ``(..., T, h * hs)``: the inverse of ``split_heads``.

    APPROACH: ``*lead, h, t, hs = x.shape``; ``x.transpose(-3, -2)`` gives
    ``(..., T, h, hs)``; ``.reshape(*lead, t, h * hs)`` joins the heads.

    EXAMPLE:
        >>> x = Tensor(np.arange(24.0).reshape(1, 2, 3, 4))
        >>> bool(np.array_equal(merge_heads(split_heads(merge_heads(x), 2)).numpy(),
        ...                     merge_heads(x).numpy()))
        True

    HINT: after the transpose the tensor is not contiguous; ``reshape`` copies it for you
    (``view`` would refuse, module 01).
    """
    # BEGIN SOLUTION NO PROMPT
    *lead, h, t, hs = x.shape
    return x.transpose(-3, -2).reshape(*lead, t, h * hs)
    # END SOLUTION
    raise NotImplementedError("module 12: implement merge_heads (see its docstring)")  # STUB


def _as_mask_array(mask: Any) -> np.ndarray:
    return mask.data if isinstance(mask, Tensor) else np.asarray(mask)


class MultiheadAttention(Module):
    """Multi-head attention with PyTorch's parameters: ``in_proj_weight`` ``(3E, E)``,
    ``in_proj_bias`` ``(3E,)`` and ``out_proj`` (a ``Linear(E, E)``).

    Args:
        embed_dim: ``E``, the model width (query, key and value all have it).
        num_heads: ``h``; must divide ``E`` (``head_dim = E // h``).
        dropout: dropout on the attention weights, in training mode only.
        bias: add ``in_proj_bias`` and ``out_proj.bias``.
        batch_first: inputs are ``(N, L, E)`` when True and ``(L, N, E)`` when False
            (PyTorch's default). Keyword-only; the course's models pass True.
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 *, batch_first: bool = False) -> None:
        """Create the parameters in PyTorch's layout, order and initialisation.

        APPROACH:
            1. ``super().__init__()``. If ``embed_dim % num_heads`` is not 0, raise
               ``ValueError("embed_dim must be divisible by num_heads")`` (PyTorch asserts).
               Store ``embed_dim``, ``num_heads``, ``dropout``, ``batch_first`` and
               ``head_dim = embed_dim // num_heads``.
            2. Register in PyTorch's order: ``self.in_proj_weight = Parameter(np.zeros((3E,
               E), np.float32))``; ``self.in_proj_bias = Parameter(np.zeros(3E, np.float32))``
               with ``bias``, else ``self.register_parameter("in_proj_bias", None)``; then
               ``self.out_proj = Linear(E, E, bias=bias)`` (it draws its own weights).
            3. Xavier-uniform for the packed weight, drawn after ``out_proj``:
               ``bound = math.sqrt(6.0 / (E + 3 * E))`` and ``self.in_proj_weight.data[...] =
               default_generator().uniform(-bound, bound, (3E, E))``.
            4. With ``bias``: ``out_proj.bias`` is set to zeros (``in_proj_bias`` already is).

        EXAMPLE:
            >>> mha = MultiheadAttention(8, 2)
            >>> [(n, p.shape) for n, p in mha.named_parameters()]  # doctest: +NORMALIZE_WHITESPACE
            [('in_proj_weight', (24, 8)), ('in_proj_bias', (24,)),
             ('out_proj.weight', (8, 8)), ('out_proj.bias', (8,))]

        HINT: parameters register in assignment order, so assign ``in_proj_weight`` (even as
        zeros) before ``out_proj`` and fill it in afterwards; the names must be PyTorch's for
        ``load_state_dict`` to accept a torch checkpoint.
        """
        # BEGIN SOLUTION NO PROMPT
        super().__init__()
        if embed_dim % num_heads != 0:
            raise ValueError("embed_dim must be divisible by num_heads")
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        self.in_proj_weight = Parameter(np.zeros((3 * embed_dim, embed_dim), dtype=np.float32))
        if bias:
            self.in_proj_bias = Parameter(np.zeros(3 * embed_dim, dtype=np.float32))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias)
        bound = math.sqrt(6.0 / (embed_dim + 3 * embed_dim))
        self.in_proj_weight.data[...] = default_generator().uniform(
            -bound, bound, (3 * embed_dim, embed_dim))
        if bias:
            self.out_proj.bias.data[...] = 0.0
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 12: implement MultiheadAttention.__init__ (see its docstring)")  # STUB

    def _in_projection(self, query: Tensor, key: Tensor, value: Tensor,
                       packed: bool) -> tuple[Tensor, Tensor, Tensor]:
        """``q, k, v`` ``(N, L or S, E)`` from the packed weight (provided).

        ``packed``: query, key and value are one tensor (self-attention): one fused ``linear``
        (module 03) with the whole ``(3E, E)`` weight, then ``narrow``. Otherwise each input
        gets its third.
        """
        e = self.embed_dim
        w, b = self.in_proj_weight, self.in_proj_bias
        if packed:
            qkv = linear(query, w, b)  # (N, L, 3E)
            return narrow(qkv, -1, 0, e), narrow(qkv, -1, e, e), narrow(qkv, -1, 2 * e, e)
        out = []
        for i, x in enumerate((query, key, value)):
            out.append(linear(x, narrow(w, 0, i * e, e),  # (N, T, E)
                              None if b is None else narrow(b, 0, i * e, e)))
        return out[0], out[1], out[2]

    def _merge_masks(self, key_padding_mask: Any, attn_mask: Any, batch: int, query_len: int,
                     key_len: int, dtype: Any) -> np.ndarray | None:
        """One additive bias broadcastable to ``(batch, h, query_len, key_len)``, or None.

        Boolean masks here mean **True = ignore** (PyTorch's ``MultiheadAttention``); float
        masks are added as they are.

        Raises:
            RuntimeError: a mask has the wrong shape (message names the expected one).

        APPROACH:
            1. ``bias = None``. For ``attn_mask`` (if given; ``_as_mask_array`` unwraps it):
               a 2-D mask must be ``(query_len, key_len)``; a 3-D mask must be
               ``(batch * h, query_len, key_len)`` and is reshaped to ``(batch, h,
               query_len, key_len)``; otherwise raise ``RuntimeError``. Convert: boolean ->
               ``np.where(m, -np.inf, 0.0)``; float -> as is; both ``.astype(dtype)``.
            2. For ``key_padding_mask``: it must be ``(batch, key_len)``; convert the same
               way and reshape to ``(batch, 1, 1, key_len)`` — one row of keys per sample.
            3. Return the sum of what was given (or the one given, or None).

        EXAMPLE:
            >>> mha = MultiheadAttention(4, 2)
            >>> mha._merge_masks(np.array([[False, True]]), None, 1, 1, 2, np.float32)
            array([[[[  0., -inf]]]], dtype=float32)

        HINT: ``np.where(m, -np.inf, 0.0)`` — True becomes ``-inf`` here, the mirror image
        of ``mask_to_bias``.
        """
        # BEGIN SOLUTION NO PROMPT
        bias = None
        heads = self.num_heads
        if attn_mask is not None:
            m = _as_mask_array(attn_mask)
            if m.shape == (query_len, key_len):
                shape: tuple[int, ...] = m.shape
            elif m.shape == (batch * heads, query_len, key_len):
                shape = (batch, heads, query_len, key_len)
            else:
                raise RuntimeError(f"attn_mask of shape {m.shape} should be (L, S) = "
                                   f"{(query_len, key_len)} or (N * num_heads, L, S)")
            m = np.where(m, -np.inf, 0.0) if m.dtype == np.bool_ else m
            bias = m.astype(dtype).reshape(shape)
        if key_padding_mask is not None:
            m = _as_mask_array(key_padding_mask)
            if m.shape != (batch, key_len):
                raise RuntimeError(f"key_padding_mask of shape {m.shape} should be "
                                   f"({batch}, {key_len})")
            m = np.where(m, -np.inf, 0.0) if m.dtype == np.bool_ else m
            pad = m.astype(dtype).reshape(batch, 1, 1, key_len)
            bias = pad if bias is None else bias + pad
        return bias
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 12: implement MultiheadAttention._merge_masks (see its docstring)")  # STUB

    def forward(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Any = None,
                need_weights: bool = True, attn_mask: Any = None,
                average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        """Multi-head attention; returns ``(output, weights)`` like PyTorch.

        Shapes (``batch_first=True``): query ``(N, L, E)``, key and value ``(N, S, E)`` ->
        output ``(N, L, E)``; weights ``(N, L, S)`` (averaged over heads) or ``(N, h, L, S)``,
        or None with ``need_weights=False``. With ``batch_first=False`` inputs and output are
        ``(L, N, E)`` (weights stay ``(N, ...)``). 2-D inputs ``(L, E)`` are one unbatched
        sequence (``key_padding_mask (S,)``; weights ``(L, S)`` or ``(h, L, S)``).

        Dropout (training mode, ``dropout > 0``) acts on the attention weights, and the
        weights returned are those dropped-out ones, as PyTorch returns them: zeros where a
        weight was dropped, kept ones scaled by ``1 / (1 - p)`` (a row sums to about 1 on
        average). In ``eval()`` mode there is no dropout and both paths give the same output.

        APPROACH:
            1. ``is_causal`` without ``attn_mask``: raise ``RuntimeError("Need attn_mask if
               specifying the is_causal hint")`` (it is only a hint, as in PyTorch).
            2. ``packed = query is key and key is value`` (before any reshape!). Unbatched
               (``query.ndim == 2``): add a batch axis with ``reshape(1, ...)`` to all three
               and to a ``key_padding_mask``; else if not ``batch_first``: ``transpose(0, 1)``.
            3. ``q, k, v = self._in_projection(query, key, value, packed)``; then
               ``split_heads`` each -> ``(N, h, L or S, hs)``.
            4. ``bias = self._merge_masks(key_padding_mask, attn_mask, N, L, S, q.dtype)``;
               ``p = self.dropout if self.training else 0.0``; ``scale = 1 / sqrt(hs)``.
            5. ``need_weights`` or ``fused`` (``fused = self._uses_fused_inference(...)``,
               asked before step 2 changes the inputs): ``scores = (q * scale) @
               k.transpose(2, 3)`` (+ ``Tensor(bias)``) — the queries scaled first, as
               PyTorch's explicit path does: ``L·hs`` multiplications instead of ``L·S``;
               ``weights = softmax(scores, dim=-1)`` (module 02:
               a fully masked row is NaN, as in PyTorch); with ``p > 0`` multiply by
               ``Tensor(keep)``, ``keep = (default_generator().random(shape) >=
               p).astype(dtype) / (1 - p)``; ``out = weights @ v``; keep ``weights`` only if
               ``need_weights``. Otherwise ``out = _ScaledDotProductAttentionFn.apply(q, k, v,
               bias=bias, scale=scale, dropout_p=p)`` and ``weights = None``.
            6. ``out = self.out_proj(merge_heads(out))`` -> ``(N, L, E)``; undo step 2 (drop
               the batch axis, or ``transpose(0, 1)``). Average the weights over heads
               (``mean(dim=1)``) if ``average_attn_weights``; drop the batch axis of the
               weights when unbatched.

        EXAMPLE:
            >>> mha = MultiheadAttention(8, 2, batch_first=True)
            >>> x = Tensor(np.ones((3, 5, 8), np.float32))
            >>> out, w = mha(x, x, x)
            >>> out.shape, w.shape
            ((3, 5, 8), (3, 5, 5))
            >>> MultiheadAttention(8, 2)(x, x, x)[1].shape     # (L, N, E): 5 sequences of 3
            (5, 3, 3)

        HINT: the explicit-weights path and the fused path must give the same output; compare
        them in a check. Use Tensor operations so every parameter gets its gradient.
        """
        # BEGIN SOLUTION NO PROMPT
        if is_causal and attn_mask is None:
            raise RuntimeError("Need attn_mask if specifying the is_causal hint")
        fused = self._uses_fused_inference(query, key, value, attn_mask, key_padding_mask)
        packed = query is key and key is value
        unbatched = query.ndim == 2
        if unbatched:
            query, key, value = (t.reshape(1, *t.shape) for t in (query, key, value))
            if key_padding_mask is not None:
                key_padding_mask = _as_mask_array(key_padding_mask)[None]
        elif not self.batch_first:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        n, length, source_len = query.shape[0], query.shape[1], key.shape[1]
        q, k, v = self._in_projection(query, key, value, packed)
        q = split_heads(q, self.num_heads)  # (N, h, L, hs)
        k = split_heads(k, self.num_heads)  # (N, h, S, hs)
        v = split_heads(v, self.num_heads)  # (N, h, S, hs)
        bias = self._merge_masks(key_padding_mask, attn_mask, n, length, source_len, q.dtype)
        p = self.dropout if self.training else 0.0
        scale = 1.0 / math.sqrt(self.head_dim)
        weights = None
        if need_weights or fused:
            scores = (q * scale) @ k.transpose(2, 3)  # (N, h, L, S)
            if bias is not None:
                scores = scores + Tensor(bias)
            weights = softmax(scores, dim=-1)  # a fully masked row is NaN, as in PyTorch
            if p > 0.0:
                keep = (default_generator().random(weights.shape) >= p).astype(weights.dtype)
                weights = weights * Tensor(keep / (1.0 - p))
            out = weights @ v  # (N, h, L, hs)
            if not need_weights:
                weights = None
        else:
            out = _ScaledDotProductAttentionFn.apply(q, k, v, bias=bias, scale=scale,
                                                     dropout_p=p)
        out = self.out_proj(merge_heads(out))  # (N, L, E)
        if unbatched:
            out = out.reshape(*out.shape[1:])
        elif not self.batch_first:
            out = out.transpose(0, 1)
        if weights is not None:
            if average_attn_weights:
                weights = weights.mean(dim=1)
            if unbatched:
                weights = weights.reshape(*weights.shape[1:])
        return out, weights
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 12: implement MultiheadAttention.forward (see its docstring)")  # STUB

    def _uses_fused_inference(self, query: Tensor, key: Tensor, value: Tensor, attn_mask: Any,
                              key_padding_mask: Any) -> bool:
        """Whether PyTorch would run this call through its fused inference kernel
        (``torch._native_multi_head_attention``, provided): evaluation mode, a batched
        self-attention (``query is key is value``) with ``batch_first``, an even number of
        heads, biases, no float mask, and no gradient needed (``no_grad()``, or nothing
        requires grad). That kernel computes a plain softmax, so a fully masked query row is
        NaN there even with ``need_weights=False``."""
        masks = [_as_mask_array(m) for m in (attn_mask, key_padding_mask) if m is not None]
        # getattr: an inference-only out_proj (module 20's Int8WeightLinear) has no weight
        tensors = (query, self.in_proj_weight, self.in_proj_bias,
                   getattr(self.out_proj, "weight", None), getattr(self.out_proj, "bias", None))
        needs_grad = is_grad_enabled() and any(t is not None and t.requires_grad
                                               for t in tensors)
        return (not self.training and query.ndim == 3 and query is key and key is value
                and self.batch_first and self.num_heads % 2 == 0
                and self.in_proj_bias is not None and query.dtype == self.in_proj_weight.dtype
                and all(m.dtype == np.bool_ for m in masks) and not needs_grad)

    def extra_repr(self) -> str:
        return (f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, "
                f"dropout={self.dropout}, batch_first={self.batch_first}")


# %% [raw]
# # BEGIN QUESTION
# name: multihead
# points: 0

# %% [markdown]
# ### Check: heads and `nn.MultiheadAttention`

# %% [raw]
# # BEGIN TESTS

# %%
def test_split_and_merge_heads(split_heads, merge_heads, Tensor, np):
    x = Tensor(np.arange(2 * 3 * 6, dtype=np.float32).reshape(2, 3, 6))
    h = split_heads(x, 2)
    assert h.shape == (2, 2, 3, 3), (
        f"(N, T, E) = (2, 3, 6) with 2 heads is (2, 2, 3, 3), got {h.shape}")
    assert np.array_equal(h.numpy()[0, 1, 2], [15.0, 16.0, 17.0]), (
        f"head 1 of time step 2 holds features 3..5 of x[0, 2] = [15, 16, 17]; got "
        f"{h.numpy()[0, 1, 2].tolist()}: cut E into heads, then move the head axis")
    back = merge_heads(h)
    assert back.shape == (2, 3, 6) and np.array_equal(back.numpy(), x.numpy()), (
        f"merge_heads(split_heads(x)) must give x (2, 3, 6) back, got shape {back.shape}"
        + ("" if back.shape != (2, 3, 6) else " with the values in another order"))


# %%
def test_multihead_parameters_and_init(MultiheadAttention, manual_seed, np):
    manual_seed(0)
    mha = MultiheadAttention(16, 4)
    names = [(n, tuple(p.shape)) for n, p in mha.named_parameters()]
    assert names == [("in_proj_weight", (48, 16)), ("in_proj_bias", (48,)),
                     ("out_proj.weight", (16, 16)), ("out_proj.bias", (16,))], (
        f"PyTorch's layout and order: in_proj_weight (3E, E), in_proj_bias, out_proj; got {names}")
    w = mha.in_proj_weight.numpy()
    bound = np.sqrt(6 / (16 + 48))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound, (
        f"in_proj_weight is Xavier uniform with bound sqrt(6 / (E + 3E)) = {bound:.3f}; "
        f"max |w| is {np.abs(w).max():.3f}")
    assert not mha.in_proj_bias.numpy().any() and not mha.out_proj.bias.numpy().any(), (
        f"in_proj_bias and out_proj.bias start at zero (PyTorch), got max |b| "
        f"{np.abs(mha.in_proj_bias.numpy()).max():.3g} and "
        f"{np.abs(mha.out_proj.bias.numpy()).max():.3g}")
    nob = MultiheadAttention(8, 2, bias=False).in_proj_bias
    assert nob is None, f"bias=False: no biases, got in_proj_bias {type(nob).__name__}"
    bf = MultiheadAttention(8, 2).batch_first
    assert bf is False, (
        f"the default is PyTorch's, batch_first=False (inputs (L, N, E)); got {bf!r}")
    try:
        MultiheadAttention(10, 3)
    except ValueError:
        pass
    else:
        raise AssertionError("10 is not divisible by 3 heads: raise ValueError")


# %%
def test_multihead_forward_paths_and_masks(MultiheadAttention, Tensor, np):
    rng = np.random.default_rng(2)
    mha = MultiheadAttention(8, 2, batch_first=True)
    mha.in_proj_bias.data[...] = rng.standard_normal(24).astype(np.float32)
    x = Tensor(rng.standard_normal((3, 5, 8)).astype(np.float32))
    out, w = mha(x, x, x)
    assert out.shape == (3, 5, 8) and w.shape == (3, 5, 5), (
        f"(N, L, E) in -> (N, L, E) out and (N, L, S) weights; got {out.shape}, {w.shape}")
    rows = w.numpy().sum(-1)
    assert np.allclose(rows, 1.0, atol=1e-5), (
        f"averaged weights still sum to 1 per row, got row sums from {rows.min():.4f} to "
        f"{rows.max():.4f}: average over heads, not sum")
    fused, none = mha(x, x, x, need_weights=False)
    assert none is None and np.allclose(fused.numpy(), out.numpy(), atol=1e-5), (
        f"need_weights=False (fused) must give the same output, with None for the weights; "
        f"got weights {type(none).__name__}, max output difference "
        f"{np.abs(fused.numpy() - out.numpy()).max():.3g}")
    _, per_head = mha(x, x, x, average_attn_weights=False)
    assert per_head.shape == (3, 2, 5, 5), (
        f"per-head weights are (N, h, L, S), got {per_head.shape}")
    pad = np.zeros((3, 5), dtype=bool)
    pad[:, 3:] = True  # the last two keys are padding
    _, wp = mha(x, x, x, key_padding_mask=pad)
    assert np.allclose(wp.numpy()[..., 3:], 0.0), (
        f"key_padding_mask: True marks padding keys (they get weight 0), got weights up to "
        f"{wp.numpy()[..., 3:].max():.3g} on keys 3 and 4 — the opposite of "
        "scaled_dot_product_attention's boolean masks")
    causal = np.triu(np.ones((5, 5), dtype=bool), k=1)  # True = not allowed
    _, wc = mha(x, x, x, attn_mask=causal)
    above = np.triu(wc.numpy()[0], k=1)
    assert np.allclose(above, 0.0), (
        f"a boolean attn_mask is True where attention is NOT allowed in MultiheadAttention: "
        f"weights above the diagonal should be 0, got up to {above.max():.3g}")
    seq = MultiheadAttention(8, 2, batch_first=False)
    seq.load_state_dict(mha.state_dict())
    out_t, _ = seq(x.transpose(0, 1), x.transpose(0, 1), x.transpose(0, 1))
    assert out_t.shape == (5, 3, 8) and np.allclose(out_t.numpy().transpose(1, 0, 2), out.numpy(),
                                                    atol=1e-5), (
        f"batch_first=False takes and returns (L, N, E) = (5, 3, 8), got {out_t.shape}")
    none = np.ones((5, 5), dtype=bool)
    none[1:, 0] = False  # query 0 may attend to nothing, the others to key 0
    o1, w1 = mha(x, x, x, attn_mask=none)
    o0, _ = mha(x, x, x, attn_mask=none, need_weights=False)
    assert np.isnan(o1.numpy()[:, 0]).all() and np.isnan(w1.numpy()[:, 0]).all() and (
        not np.isnan(o1.numpy()[:, 1:]).any()), (
        f"need_weights=True: a query with no allowed key is NaN (a plain softmax of -inf, as "
        f"in PyTorch), the others are not; got {int(np.isnan(o1.numpy()).sum())} NaN in the "
        f"output")
    assert np.allclose(o0.numpy()[:, 0], mha.out_proj.bias.numpy()) and not np.isnan(
            o0.numpy()).any(), (
        f"need_weights=False (training, the fused path): that query's attention is zeros, so "
        f"its output is out_proj's bias; got {o0.numpy()[0, 0, :3].round(3).tolist()}...")


# %%
def test_multihead_dropout_is_in_the_returned_weights(MultiheadAttention, Tensor, manual_seed,
                                                      np):
    manual_seed(1)
    mha = MultiheadAttention(8, 2, dropout=0.5)
    x = Tensor(np.random.default_rng(3).standard_normal((4, 6, 8)).astype(np.float32))
    _, w = mha(x, x, x, average_attn_weights=False)
    dropped = float((w.numpy() == 0).mean())
    assert 0.35 < dropped < 0.65, (
        f"in training mode with dropout=0.5 about half of the returned per-head weights are 0: "
        f"the weights returned include dropout, as in PyTorch; {dropped:.2f} of them are 0")
    rows = float(w.numpy().sum(-1).mean())
    assert 0.8 < rows < 1.2, (
        f"kept weights are scaled by 1 / (1 - p) = 2, so a row of the returned weights sums to "
        f"about 1 on average; the average row sum is {rows:.3f}")
    mha.eval()
    a, we = mha(x, x, x)
    b, _ = mha(x, x, x, need_weights=False)
    assert (we.numpy() > 0).all(), (
        f"eval() turns dropout off: no returned weight is 0 without masks, got "
        f"{int((we.numpy() == 0).sum())} zeros")
    assert np.allclose(a.numpy(), b.numpy(), atol=1e-5), (
        f"in eval() mode the explicit-weights path (need_weights=True) and the fused path "
        f"(need_weights=False) give the same output; they differ by "
        f"{np.abs(a.numpy() - b.numpy()).max():.3g}")


# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 6. Systems view: attention is quadratic in the sequence length
#
# For a batch `B`, `h` heads, length `T` and head size `hs`, the projections and `Q, K, V` are
# `O(B·T·E)`, but the scores and weights are `(B, h, T, T)`: **`4·B·h·T²` bytes** in float32,
# and the backward pass keeps `P` alive until it runs. The two attention matmuls cost
# `2·(2·B·h·T²·hs)` FLOPs. Doubling `T` doubles the projections but quadruples attention.
#
# The experiment measures, for growing `T`, the **peak memory** NumPy allocates during one
# forward pass (with `tracemalloc`, which sees NumPy's buffers) and the **time** of forward +
# backward, for causal self-attention with `B = 1`, `h = 4`, `hs = 16`.

# %%
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


rng = np.random.default_rng(0)
heads, head_size = 4, 16
# NOTE: a process's first large allocations get fresh pages from the OS (slow page faults).
# On Linux, glibc's malloc then keeps freed buffers for reuse up to the largest size it has
# seen (at most 32 MB); other systems' allocators have their own rules. One big buffer, freed,
# warms it up so the timings measure attention more than the allocator.
warm_up = np.ones(7_500_000, dtype=np.float32)
del warm_up
print(f"{'T':>5} {'P = 4hT^2 MB':>13} {'peak fwd MB':>12} {'peak / P':>9} {'fwd+bwd ms':>11} "
      f"{'x time':>7}")
previous, ratios = None, []
for T in (64, 128, 256, 512, 1024):
    q, k, v = (Tensor(rng.standard_normal((1, heads, T, head_size)).astype(np.float32),
                      requires_grad=True) for _ in range(3))
    tracemalloc.start()
    out = scaled_dot_product_attention(q, k, v, is_causal=True)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    del out

    def step():
        scaled_dot_product_attention(q, k, v, is_causal=True).sum().backward()

    ms = median_cpu_ms(step)
    growth = "" if previous is None else f"{ms / previous:.1f}x"
    previous = ms
    p_bytes = 4 * heads * T * T
    ratios.append(peak / p_bytes)
    print(f"{T:>5} {p_bytes / 1e6:>13.2f} {peak / 1e6:>12.2f} {peak / p_bytes:>9.2f} {ms:>11.2f} "
          f"{growth:>7}")
print(f"peak / P from T = 256 on: {min(ratios[2:]):.2f} to {max(ratios[2:]):.2f}")
# Expected shape: the peak memory is a small multiple of the P column — 2.3 times P (from
# T = 256 on, where the T x T arrays dominate): the scores and the shifted exponentials exist at
# the same time — and grows like T². The time grows by less than 4x per doubling at small T
# (between 1.5x and 3.5x at T = 128: Python's fixed cost per call dominates), and 4x or more
# once the T x T work dominates (between 3x and 15x at T = 512 and at T = 1024). Where the T x T
# arrays outgrow your CPU's caches and every new array needs fresh pages from the OS, a
# doubling costs more than the T x T work alone: that step falls at 512 on one machine and at
# 1024 on another (your caches decide where), and other processes sharing the caches of a busy
# machine push it up further, even on the CPU clock.

# %% [markdown]
# PyTorch's fused CPU and GPU kernels (FlashAttention and its relatives) never store the
# `T × T` matrix: they stream over blocks of keys, keep a running maximum and sum per query
# (the "online softmax"), and recompute the blocks in backward from `Q, K, V` and those
# per-row statistics. Memory becomes `O(T)`; the FLOPs stay `O(T²)`.

# %% [markdown]
# ## 7. ML systems thinking (graded by hand)

# %% [raw]
# # BEGIN QUESTION
# name: written_quadratic_memory
# manual: true
# points: 5

# %% [markdown]
# **Q1 · Long contexts.** GPT-2 small has 12 layers, 12 heads and a 1,024-token context. How
# many bytes do the attention weights `P` of all layers take for one batch of 8 sequences in
# float32, kept for the backward pass? What happens at a 32k context? Use your measurements
# to say how the time of attention scales, and what FlashAttention changes and what it does
# not.

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# Per layer `B·h·T² = 8·12·1024² ≈ 1.0·10⁸` floats = 403 MB; 12 layers ≈ 4.8 GB just for `P`
# (plus the scores if they are kept). At 32k tokens `T²` grows 1,024×: ≈ 5 TB — impossible.
# The measured time roughly quadruples per doubling of `T` once the `T × T` work dominates.
# FlashAttention tiles the computation, keeps only per-row max and sum (`O(T)` memory) and
# recomputes `P` blockwise in backward: memory becomes linear and it is faster because it
# moves far fewer bytes, but the FLOPs remain `O(T²)`.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_mask_conventions
# manual: true
# points: 5

# %% [markdown]
# **Q2 · Two mask conventions.** A colleague builds `allowed = tril(ones(T, T)).bool()` and
# passes it as `attn_mask` to both `scaled_dot_product_attention` and `MultiheadAttention`.
# What does each model compute, and what would you see in training? Why do we use `-inf`
# rather than `-1e9` for masked scores, and what is special about a row where every key is
# masked?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# `scaled_dot_product_attention` reads True as "may attend": correct causal attention.
# `MultiheadAttention` reads True as "ignore": each query sees only the *future* keys (and
# the last query sees nothing). Training loss drops suspiciously fast (the model copies the
# next token it can see) and generation is garbage; the last row is fully masked. `-inf` makes
# the weight exactly 0 in any dtype; `-1e9` overflows to `-inf` in float16 anyway, and with
# large scores a finite penalty can still leak weight. A fully masked row has no valid
# softmax: the textbook formula gives `NaN` (`-inf − (-inf)`), which spreads through the whole
# backward pass. PyTorch's `scaled_dot_product_attention` since 2.5 (and our safe softmax)
# returns zeros for it instead; `MultiheadAttention(need_weights=True)` keeps the plain softmax
# and its NaN (section 5's table says which path does what).

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_heads_and_cache
# manual: true
# points: 5

# %% [markdown]
# **Q3 · Heads and the KV cache.** How many parameters does `MultiheadAttention(E, h)` have,
# and how does the count depend on `h`? Why split `E` into heads at all? When a GPT generates
# one token at a time, what must be cached per layer, how many bytes per token for
# `E = 768` and 12 layers in float32, and why does the new query need no causal mask?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# `3E² + 3E` (in_proj) `+ E² + E` (out_proj) `= 4E² + 4E`, independent of `h`: heads split the
# same projections into `h` slices. Each head computes its own softmax, so the layer can
# attend to several positions for different reasons at once (a single head must average them
# into one distribution), at the same FLOPs. For generation each layer caches the projected
# keys and values of all past tokens: `2·E` floats per token per layer = 2·768·12·4 B ≈ 74 KB
# per token (75 MB for 1,024 tokens). The new token's query is the last position, and every
# cached key is in its past, so all keys are allowed: attention of `L = 1` against `S` cached
# keys needs no mask (a chunk of several new tokens needs the lower-right-aligned triangle).

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## Summary
#
# You built attention the way PyTorch exposes it: `scaled_dot_product_attention` with its
# masks, scale and dropout and a fused backward, and `MultiheadAttention` with PyTorch's packed
# parameters. Export with `python export.py 12`; module 13 stacks it with LayerNorm and an MLP
# into a GPT.
