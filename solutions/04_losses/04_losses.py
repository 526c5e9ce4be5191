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
# # Module 04 · Losses
#
# Training needs one number that says how wrong the model is: the **loss**. Its value is
# what you watch in a training curve; its gradient (module 05) is what moves every weight. In
# this module you build PyTorch's standard losses — `MSELoss`, `CrossEntropyLoss`, `NLLLoss`,
# `BCELoss`, `BCEWithLogitsLoss` — with their `reduction` argument, and you make the
# classification losses **stable**: they must return finite numbers for confident, wrong and
# extreme predictions, because those are exactly the ones that matter.
#
# ## Learning objectives
#
# By the end of this module you can:
#
# 1. derive mean squared error and cross-entropy from maximum likelihood, and say which one
#    fits regression, multi-class and binary problems;
# 2. implement the losses with PyTorch's names, argument order, shapes (`(N, C)` logits with
#    `(N,)` class indices, and `(N, C, d1, ...)` for per-pixel or per-token losses) and
#    `reduction='mean' | 'sum' | 'none'`;
# 3. explain why `CrossEntropyLoss` takes **logits** rather than probabilities, and why
#    `BCEWithLogitsLoss` is preferred to `Sigmoid` followed by `BCELoss`;
# 4. estimate the memory and FLOPs of a loss over a large vocabulary.
#
# ## How to work through this notebook
#
# Fill in the functions that raise `NotImplementedError` and run each `grader.check(...)`.
# Cells starting with `#| export` become `tinytorch/losses.py` (`python export.py 04`). Everything
# is built from `Tensor` operations (so module 05 differentiates it) except the two binary
# losses, which are `Function`s with a provided `backward`.

# %%
import numpy as np

# %% [markdown]
# ## 1. Reductions and mean squared error
#
# Every loss first computes one value per element (or per sample), then **reduces**:
#
# ```
#   per-element losses  [0.25, 1.0, 4.0, 0.0]
#     reduction='none'  -> [0.25, 1.0, 4.0, 0.0]     (for weighting, masking, inspection)
#     reduction='sum'   -> 5.25
#     reduction='mean'  -> 1.3125                    (the default: independent of batch size)
# ```
#
# **MSE** for regression: `mean((ŷ - y)²)`. It is the negative log-likelihood of a Gaussian
# with fixed variance, which is why it suits real-valued targets, and it punishes large errors
# quadratically (outliers dominate).
#
# A classic bug from module 01: predictions of shape `(N, 1)` minus targets of shape `(N,)`
# broadcast to `(N, N)`. PyTorch warns; so do we.

# %%
#| export
"""Module 04 · Losses — depends on: tensor, activations, layers; used by: training.

MSELoss, CrossEntropyLoss, NLLLoss, BCELoss and BCEWithLogitsLoss with PyTorch's arguments
and ``reduction='mean'|'sum'|'none'``, as functions and as modules, stable for extreme inputs.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from tinytorch.activations import log_softmax
from tinytorch.layers import Module
from tinytorch.tensor import Context, Function, Tensor

_REDUCTIONS = ("mean", "sum", "none")


def _as_tensor(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    """Apply ``reduction`` to a tensor of per-element losses.

    Args:
        loss: per-element (or per-sample) losses, any shape.
        reduction: ``'mean'`` (average of all elements), ``'sum'``, or ``'none'`` (unchanged).

    Raises:
        ValueError: any other ``reduction``, e.g. ``"'avg' is not a valid value for
            reduction"``.

    APPROACH: ``'mean'`` -> ``loss.mean()``; ``'sum'`` -> ``loss.sum()``; ``'none'`` ->
    ``loss``; anything else -> ``raise ValueError`` with the message above.

    EXAMPLE:
        >>> l = Tensor([0.25, 1.0, 4.0, 0.0])
        >>> _reduce(l, "mean").item(), _reduce(l, "sum").item(), _reduce(l, "none").shape
        (1.3125, 5.25, (4,))

    HINT: use the Tensor reductions from module 01 (they return 0-d Tensors), not NumPy on
    ``.data``: the loss is where module 05's backward pass starts.
    """
    # BEGIN SOLUTION NO PROMPT
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction!r} is not a valid value for reduction")
    # END SOLUTION
    raise NotImplementedError("module 04: implement _reduce (see its docstring)")  # STUB


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:  # noqa: A002
    """Mean squared error ``(input - target)²``, reduced.

    Args:
        input: predictions, any shape.
        target: same shape as ``input`` (a different shape broadcasts, with a warning).
        reduction: ``'mean'`` | ``'sum'`` | ``'none'``.

    APPROACH:
        1. Wrap ``target`` with ``_as_tensor``; if the shapes differ, ``warnings.warn(...)``
           (a ``UserWarning``) saying that the target size differs from the input size and
           will broadcast — then carry on, as PyTorch does.
        2. If exactly one of them is 0-d, give it one dimension (``.reshape(1)``): PyTorch
           broadcasts both before subtracting, so a 0-d float64 target makes a float32 loss
           float64 (module 01's rule keeps a 0-d operand from widening the dtype).
        3. ``diff = input - target``; return ``_reduce(diff * diff, reduction)``.

    EXAMPLE:
        >>> mse_loss(Tensor([1.0, 2.0, 3.0]), Tensor([1.5, 2.0, 1.0]))
        tensor(1.4167)

    HINT: pass ``stacklevel=2`` to ``warnings.warn`` so the warning names the caller's line.
    An unknown ``reduction`` needs no check here: ``_reduce`` raises.
    """
    # BEGIN SOLUTION NO PROMPT
    target = _as_tensor(target)
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({tuple(target.shape)}) that is different to the "
                      f"input size ({tuple(input.shape)}). This will likely lead to incorrect "
                      "results due to broadcasting.", stacklevel=2)
    pred = input
    if target.ndim == 0 and pred.ndim:  # PyTorch broadcasts both first: a 0-d operand
        target = target.reshape(1)      # then promotes like one with dimensions
    elif pred.ndim == 0 and target.ndim:
        pred = pred.reshape(1)
    diff = pred - target
    return _reduce(diff * diff, reduction)
    # END SOLUTION
    raise NotImplementedError("module 04: implement mse_loss (see its docstring)")  # STUB


# %% [raw]
# # BEGIN QUESTION
# name: mse
# points: 0

# %% [markdown]
# ### Check: reductions and MSE

# %% [raw]
# # BEGIN TESTS

# %%
def test_mse_reductions(mse_loss, Tensor, np):
    pred, target = Tensor([1.0, 2.0, 3.0, 4.0]), Tensor([1.5, 2.0, 1.0, 4.0])
    mean = mse_loss(pred, target).item()
    assert np.isclose(mean, 1.0625), (
        f"squared errors are [0.25, 0, 4, 0], their mean is 1.0625; got {mean}")
    total = mse_loss(pred, target, reduction="sum").item()
    assert np.isclose(total, 4.25), f"reduction='sum' adds them: 4.25; got {total}"
    none = mse_loss(pred, target, reduction="none")
    assert none.shape == (4,), (
        f"reduction='none' keeps one loss per element: shape (4,), got {none.shape}")
    assert np.allclose(none.numpy(), [0.25, 0.0, 4.0, 0.0]), (
        f"per-element squared errors (input - target)**2 are [0.25, 0, 4, 0]; "
        f"got {none.numpy().tolist()}")
    got = mse_loss(pred, target).dtype
    assert got == np.float32, (
        f"the loss stays float32, got {got} (a float64 loss would make float64 gradients in "
        "module 05)")
    try:
        mse_loss(pred, target, reduction="avg")
    except ValueError:
        pass
    else:
        raise AssertionError("reduction='avg' is a typo: raise ValueError instead of guessing")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 2. Negative log-likelihood and cross-entropy
#
# A classifier outputs logits `z` of shape `(N, C)`. With `p = softmax(z)`, the likelihood of
# the correct class `y` is `p[y]`, and maximising it is minimising
#
# ```
#   CE(z, y) = -log softmax(z)[y] = -z[y] + log Σ_c exp(z_c)        (per sample)
#
#   logits (N=2, C=3)          log_softmax               pick target      loss
#   [[ 2.0, 1.0, 0.1]    ->    [[-0.42, -1.42, -2.32]    y = [0, 2]  ->  [0.42, 2.42]
#    [ 0.5, 2.5, 0.3]]          [-2.22, -0.22, -2.42]]                    mean 1.42
# ```
#
# PyTorch splits it in two: `log_softmax` (module 02, stable) then `nll_loss`, which just picks
# `-logp[y]` for each sample. So `CrossEntropyLoss` takes **logits**, never probabilities:
# `log(softmax(z))` would underflow to `-inf` for a confident wrong prediction.
#
# **Picking the target entries.** We build a constant *coefficient* array `coef` of the
# input's shape: `coef[i, y_i] = 1` and 0 elsewhere (a one-hot matrix). Then
# `-(logp * coef).sum(dim=1)` is the per-sample loss, built from `Tensor` operations only.
# The provided `_class_coefficients` also handles PyTorch's extras: per-class `weight`,
# `ignore_index` (e.g. padding tokens) and `label_smoothing`, and returns the denominator that
# `'mean'` divides by (the number of — weighted — targets that were not ignored).
#
# One trap: a plain product is not a *pick*. A logit of `-inf` is a legitimate way to rule a
# class out (masking), and its log-probability is `-inf`; `-inf * 0` is NaN in floating point,
# so `logp * coef` would turn the whole loss into NaN although the target's own entry is fine.
# PyTorch gathers `logp[i, y_i]` and never touches the other entries. The provided
# `_picked_loss(logp, coef, dim)` computes `-(logp * coef).sum(dim)` as one operation that
# multiplies only where `coef != 0` (an exact 0 elsewhere, forward and backward), so it behaves
# like PyTorch's gather — and records one graph node instead of three.
#
# Shapes: class dimension is `1` (`(N, C)`, or `(N, C, d1, ...)` with targets `(N, d1, ...)` for
# per-pixel / per-token losses), or `0` for one unbatched sample `(C,)` with a 0-d target.

# %%
#| export
def _class_dim(input: Tensor) -> int:  # noqa: A002
    return 1 if input.ndim >= 2 else 0


def _class_coefficients(input: Tensor, target: Tensor, weight: Tensor | None,  # noqa: A002
                        ignore_index: int, label_smoothing: float) -> tuple[np.ndarray, float]:
    """Provided: the constant array ``coef`` (input's shape) and the 'mean' denominator.

    ``coef`` holds ``(1 - ε)·w[y]`` at each target class, ``ε/C·w[c]`` spread over all classes
    (label smoothing ``ε``), and 0 for ignored targets. ``loss_i = -(logp_i · coef_i).sum()``.
    """
    cdim = _class_dim(input)
    n_classes = input.shape[cdim]
    t = np.asarray(target.data)
    expected = tuple(input.shape[:cdim]) + tuple(input.shape[cdim + 1:])
    if tuple(t.shape) != expected:
        raise ValueError(f"Expected target of shape {expected} for input of shape "
                         f"{tuple(input.shape)}, got {tuple(t.shape)}")
    if t.dtype.kind not in "iu":
        raise TypeError(f"class-index targets must be integers (int64), got {t.dtype}")
    if t.dtype not in (np.int64, np.uint8) or (t.dtype == np.uint8 and input.ndim > 2):
        raise RuntimeError(f"expected target dtype to be Long (or Byte for (N, C) inputs), "
                           f"but got {t.dtype} (use .long())")
    valid = t != ignore_index
    counted = t if valid.all() else t[valid]
    if counted.size and (counted.min() < 0 or counted.max() >= n_classes):
        bad = counted[(counted < 0) | (counted >= n_classes)]
        raise IndexError(f"Target {int(bad[0])} is out of bounds for {n_classes} classes.")
    dtype = input.data.dtype
    # one-hot rows (all zero where the target is ignored), then the per-class weights
    labels = t if counted is t else np.where(valid, t, -1)
    onehot = (labels[..., None] == np.arange(n_classes)).astype(dtype)
    w = None if weight is None else np.asarray(_as_tensor(weight).data, dtype=dtype)
    if w is not None and w.shape != (n_classes,):
        raise RuntimeError(f"weight tensor should be defined either for all {n_classes} "
                           f"classes or no classes but got weight tensor of shape: "
                           f"{list(w.shape)}")
    picked = onehot if w is None else onehot * w
    coef = picked
    if label_smoothing:
        spread = valid[..., None] * (1.0 if w is None else w)
        coef = (1.0 - label_smoothing) * picked + (label_smoothing / n_classes) * spread
    denom = float(counted.size) if w is None else float(picked.sum())
    if cdim != coef.ndim - 1:
        coef = np.moveaxis(coef, -1, cdim)
    return coef.astype(dtype, copy=False), denom


class _PickedLossFn(Function):
    """``-(logp * coef).sum(dim)``, reading ``logp`` only where ``coef != 0`` (provided)."""

    @staticmethod
    def forward(ctx: Context, logp: np.ndarray, coef: np.ndarray, dim: int = 1) -> np.ndarray:
        keep = coef != 0
        ctx.save_for_backward(coef, keep, dim)
        with np.errstate(invalid="ignore"):
            return -np.where(keep, logp * coef, 0).sum(axis=dim).astype(logp.dtype, copy=False)

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray, None]:
        coef, keep, dim = ctx.saved
        g = -np.expand_dims(grad, dim) * coef  # every class of a sample gets its sample's grad
        return np.where(keep, g, 0).astype(grad.dtype, copy=False), None


def _picked_loss(logp: Tensor, coef: np.ndarray, dim: int) -> Tensor:
    """Per-sample ``-(logp * coef).sum(dim)`` that ignores ``logp`` where ``coef`` is 0 (even
    ``-inf`` or NaN there), like PyTorch's gather of the target entries."""
    return _PickedLossFn.apply(logp, Tensor(coef), dim=dim)


def _weighted_mean(losses: Tensor, denom: float) -> Tensor:
    """Provided: ``losses.sum() / denom``, the 'mean' of ``nll_loss``/``cross_entropy``.

    When every target is ignored (``denom == 0``) PyTorch returns NaN with zero gradients
    (``0 / 0`` would make every gradient NaN and poison the weights on the next step).
    """
    if denom == 0:
        return losses.sum() * 0.0 + float("nan")
    if denom == losses.numel():  # NOTE: every target counted with weight 1: a plain mean
        return losses.mean()
    return losses.sum() / denom


def _smoothing(label_smoothing: float) -> float:
    """Provided: PyTorch's check of ``label_smoothing``: above 1 is an error, 0 or less
    means no smoothing."""
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    return max(float(label_smoothing), 0.0)


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
             ignore_index: int = -100, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of class indices, given log-probabilities.

    Args:
        input: log-probabilities ``(N, C)``, ``(N, C, d1, ...)`` or ``(C,)``.
        target: int64 class indices ``(N,)``, ``(N, d1, ...)`` or 0-d.
        weight: optional per-class weights ``(C,)``.
        ignore_index: targets equal to it contribute nothing (and are not counted in 'mean').
        reduction: ``'mean'`` (weighted average over counted targets), ``'sum'``, ``'none'``.

    APPROACH:
        1. Check ``reduction`` is one of ``_REDUCTIONS`` (``ValueError`` otherwise).
        2. ``coef, denom = _class_coefficients(input, _as_tensor(target), weight,
           ignore_index, 0.0)``.
        3. ``losses = _picked_loss(input, coef, _class_dim(input))`` — the target's shape
           (``-(input * coef).sum(dim)``, ignoring entries where ``coef`` is 0, see above).
        4. ``'none'``: ``losses``; ``'sum'``: ``losses.sum()``; ``'mean'``:
           ``_weighted_mean(losses, denom)`` (given: ``losses.sum() / denom``, and PyTorch's
           answer when every target is ignored).

    EXAMPLE:
        >>> nll_loss(Tensor([[-0.5, -1.0], [-2.0, -0.1]]), Tensor(np.array([0, 1])))
        tensor(0.3)

    HINT: ``nll_loss`` does **not** apply (log-)softmax: its input already is
    log-probabilities. ``'mean'`` divides by ``denom``, not by ``N``: ignored targets do not
    count, and with ``weight`` it is the sum of the picked weights (PyTorch's definition).
    """
    # BEGIN SOLUTION NO PROMPT
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction!r} is not a valid value for reduction")
    coef, denom = _class_coefficients(input, _as_tensor(target), weight, ignore_index, 0.0)
    losses = _picked_loss(input, coef, _class_dim(input))
    if reduction == "none":
        return losses
    if reduction == "sum":
        return losses.sum()
    return _weighted_mean(losses, denom)
    # END SOLUTION
    raise NotImplementedError("module 04: implement nll_loss (see its docstring)")  # STUB


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
                  ignore_index: int = -100, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """Cross-entropy between logits and class indices (or class probabilities).

    Args:
        input: unnormalised logits ``(N, C)``, ``(N, C, d1, ...)`` or ``(C,)``.
        target: int64 class indices of the input's shape without the class dim, **or** float
            class probabilities of the input's shape.
        weight, ignore_index: as in ``nll_loss`` (index targets).
        reduction: ``'mean'`` | ``'sum'`` | ``'none'``.
        label_smoothing: ``ε`` in [0, 1]: the target becomes ``(1 - ε)·onehot + ε / C``
            (checked by the given first line: above 1 raises, 0 or less means none).

    APPROACH:
        1. Check ``reduction``; ``cdim = _class_dim(input)``;
           ``logp = log_softmax(input, dim=cdim)`` (stable, module 02).
        2. Float targets (``target.dtype.kind == "f"``): ``q = target * (1 - ε) + ε / C``
           with ``C = input.shape[cdim]``; if ``weight`` is given, multiply ``q`` by it
           reshaped to broadcast along ``cdim`` (shape ``[1, C, 1, ...]``); return
           ``_reduce(-(logp * q).sum(dim=cdim), reduction)`` — ``'mean'`` divides by the
           number of samples.
        3. Index targets: ``coef, denom = _class_coefficients(input, target, weight,
           ignore_index, label_smoothing)``; ``losses = _picked_loss(logp, coef, cdim)``;
           reduce like ``nll_loss`` (``'mean'``: ``_weighted_mean(losses, denom)``).

    EXAMPLE:
        >>> cross_entropy(Tensor([[2.0, 1.0, 0.1], [0.5, 2.5, 0.3]]), Tensor(np.array([0, 2])))
        tensor(1.4185)

    HINT: never compute ``softmax(...).log()``: a confident wrong prediction gives ``-inf``.
    """
    label_smoothing = _smoothing(label_smoothing)
    # BEGIN SOLUTION NO PROMPT
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction!r} is not a valid value for reduction")
    target = _as_tensor(target)
    cdim = _class_dim(input)
    logp = log_softmax(input, dim=cdim)
    if target.dtype.kind == "f":
        n_classes = input.shape[cdim]
        q = target * (1.0 - label_smoothing) + label_smoothing / n_classes
        if weight is not None:
            shape = [1] * input.ndim
            shape[cdim] = n_classes
            q = q * _as_tensor(weight).reshape(*shape)
        return _reduce(-(logp * q).sum(dim=cdim), reduction)
    coef, denom = _class_coefficients(input, target, weight, ignore_index, label_smoothing)
    losses = _picked_loss(logp, coef, cdim)
    if reduction == "none":
        return losses
    if reduction == "sum":
        return losses.sum()
    return _weighted_mean(losses, denom)
    # END SOLUTION
    raise NotImplementedError("module 04: implement cross_entropy (see its docstring)")  # STUB


# %% [raw]
# # BEGIN QUESTION
# name: cross_entropy
# points: 0

# %% [markdown]
# ### Check: NLL and cross-entropy

# %% [raw]
# # BEGIN TESTS

# %%
def test_cross_entropy_values(cross_entropy, nll_loss, Tensor, np):
    logits = Tensor([[2.0, 1.0, 0.1], [0.5, 2.5, 0.3]])
    y = Tensor(np.array([0, 2]))
    loss = cross_entropy(logits, y)
    assert loss.shape == (), f"reduction='mean' gives a 0-d tensor, got shape {loss.shape}"
    assert np.isclose(loss.item(), 1.4185, atol=1e-4), (
        f"mean of -log softmax(z)[y] over the batch is 1.4185, got {loss.item():.4f}")
    per = cross_entropy(logits, y, reduction="none").numpy()
    assert np.allclose(per, [0.41703, 2.41998], atol=1e-4), f"per-sample losses are wrong: {per}"
    total = cross_entropy(logits, y, reduction="sum").item()
    assert np.isclose(total, per.sum(), atol=1e-4), (
        f"reduction='sum' adds the per-sample losses: expected {per.sum():.5f}, got {total}")
    logp = Tensor([[-0.5, -1.0], [-2.0, -0.1]])
    got = nll_loss(logp, Tensor(np.array([0, 1]))).item()
    assert np.isclose(got, 0.3), (
        f"nll_loss averages -logp[i, y_i]: (0.5 + 0.1) / 2 = 0.3, got {got}")

# %%
def test_cross_entropy_is_stable(cross_entropy, Tensor, np):
    logits = Tensor([[1000.0, -1000.0], [-1000.0, 1000.0]])
    loss = cross_entropy(logits, Tensor(np.array([1, 1])), reduction="none").numpy()
    assert np.isfinite(loss).all(), (
        f"cross_entropy of logits +-1000 must be finite, got {loss}: log(softmax) underflows "
        "to log(0); use log_softmax")
    assert np.allclose(loss, [2000.0, 0.0]), f"a confident wrong answer costs 2000 here, got {loss}"
    masked = Tensor([[0.0, 0.0, -np.inf]])  # class 2 ruled out
    with np.errstate(invalid="ignore"):
        got = cross_entropy(masked, Tensor(np.array([0]))).item()
    assert np.isclose(got, np.log(2)), (
        f"with class 2 masked out (logit -inf) the loss of two equal logits is log 2 = 0.6931, "
        f"got {got}: -inf * 0 is NaN, so use _picked_loss(logp, coef, dim), not logp * coef")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 3. Binary cross-entropy, on probabilities and on logits
#
# For one output per sample (spam or not), with `p = σ(z)` the predicted probability of class 1:
#
# ```
#   BCE(p, y) = -[ y·log(p) + (1 - y)·log(1 - p) ]
# ```
#
# **`BCELoss` on probabilities** has two problems: `log(0) = -inf` when the model is certain,
# and the gradient `1/p` explodes. PyTorch clamps each log at `-100` (so a certain, wrong
# prediction costs 100, not infinity) and divides by `max(p(1-p), 1e-12)` in backward.
#
# **`BCEWithLogitsLoss` on logits** avoids both by never forming `p`. With `softplus(a) =
# log(1 + e^a)`, the two logs are `log σ(z) = -softplus(-z)` and `log(1 - σ(z)) = log σ(-z) =
# -z - softplus(-z)`; substituting them, the loss is `(1 - y)·z + softplus(-z)`, and softplus
# is computed without overflow as
#
# ```
#   softplus(-z) = log(1 + e^{-|z|}) + max(-z, 0)         (e^{-|z|} is in (0, 1])
# ```
#
# `pos_weight` multiplies the positive term (for imbalanced data):
# `loss = (1 - y)·z + (1 + (pos_weight - 1)·y)·softplus(-z)`.
#
# Both are `Function`s: you write `forward` on arrays; `backward` is provided (its gradient,
# `σ(z) - y` for the logits version, is one of the neatest results in module 05).

# %%
#| export
class _BCEFn(Function):
    """Binary cross-entropy on probabilities, logs clamped at -100 like PyTorch."""

    @staticmethod
    def forward(ctx: Context, p: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Per-element ``-(t·max(log p, -100) + (1 - t)·max(log(1 - p), -100))``.

        APPROACH:
            1. Inside ``with np.errstate(divide="ignore"):`` (``log(0)`` is expected) compute
               ``log_p = np.maximum(np.log(p), -100)`` and
               ``log_1mp = np.maximum(np.log(1 - p), -100)``.
            2. ``ctx.save_for_backward(p, t, log_p, log_1mp)``.
            3. Return ``-(t * log_p + (1 - t) * log_1mp)``.

        EXAMPLE:
            >>> _BCEFn.forward(Context(), np.array([0.9, 0.0], np.float32),
            ...                np.array([1.0, 1.0], np.float32))
            array([  0.10536055, 100.        ], dtype=float32)

        HINT: clamp the *logs*, not ``p``: clamping ``p`` to ``[1e-7, 1 - 1e-7]`` gives a
        different loss (16.1 instead of 100 for a certain, wrong prediction). ``p`` and ``t``
        are NumPy arrays here.
        """
        # BEGIN SOLUTION NO PROMPT
        with np.errstate(divide="ignore"):
            log_p = np.maximum(np.log(p), -100)
            log_1mp = np.maximum(np.log(1 - p), -100)
        ctx.save_for_backward(p, t, log_p, log_1mp)
        return -(t * log_p + (1 - t) * log_1mp)
        # END SOLUTION
        raise NotImplementedError("module 04: implement _BCEFn.forward (see its docstring)")  # STUB

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # provided: dL/dp = (p - t) / (p (1 - p)), the denominator kept >= 1e-12 like PyTorch;
        # dL/dt = log(1 - p) - log(p), unclamped as in PyTorch (infinite at p = 0 or 1)
        p, t, log_p, log_1mp = ctx.saved
        dp = grad * (p - t) / np.maximum((1 - p) * p, 1e-12)
        with np.errstate(divide="ignore", invalid="ignore"):
            dt = grad * (np.log(1 - p) - np.log(p))
        return dp.astype(p.dtype), dt.astype(t.dtype)


class _BCEWithLogitsFn(Function):
    """Binary cross-entropy on logits, computed with a stable softplus."""

    @staticmethod
    def forward(ctx: Context, z: np.ndarray, t: np.ndarray,
                pos_weight: np.ndarray | None = None) -> np.ndarray:
        """Per-element ``(1 - t)·z + (1 + (pos_weight - 1)·t)·softplus(-z)``.

        APPROACH:
            1. ``sp = np.log1p(np.exp(-np.abs(z))) + np.maximum(-z, 0)`` — softplus(-z) with
               every ``exp`` argument <= 0.
            2. ``lw = 1`` if ``pos_weight is None`` else ``1 + (pos_weight - 1) * t``.
            3. ``ctx.save_for_backward(z, t, pos_weight, sp)``.
            4. Return ``(1 - t) * z + lw * sp``.

        EXAMPLE:
            >>> _BCEWithLogitsFn.forward(Context(), np.array([0.0, 1000.0, -1000.0], np.float32),
            ...                          np.array([1.0, 0.0, 1.0], np.float32))
            array([6.931472e-01, 1.000000e+03, 1.000000e+03], dtype=float32)

        HINT: never compute ``np.exp(-z)`` or ``sigmoid(z)`` directly: ``exp(1000)`` is
        ``inf`` in float32. Save all four values even though ``pos_weight`` may be None:
        the provided ``backward`` unpacks exactly ``(z, t, pos_weight, sp)``.
        """
        # BEGIN SOLUTION NO PROMPT
        sp = np.log1p(np.exp(-np.abs(z))) + np.maximum(-z, 0)
        lw = 1 if pos_weight is None else 1 + (pos_weight - 1) * t
        ctx.save_for_backward(z, t, pos_weight, sp)
        return (1 - t) * z + lw * sp
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 04: implement _BCEWithLogitsFn.forward (see its docstring)")  # STUB

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # provided: dL/dz = (1 - t) - lw·σ(-z)  (= σ(z) - t without pos_weight);
        # dL/dt = -z + (pos_weight - 1)·softplus(-z)
        z, t, pos_weight, sp = ctx.saved
        sig_neg = np.exp(-np.logaddexp(0, z))  # σ(-z) = 1 / (1 + e^z), stable
        lw = 1 if pos_weight is None else 1 + (pos_weight - 1) * t
        dz = grad * ((1 - t) - lw * sig_neg)
        dt = grad * (-z if pos_weight is None else -z + (pos_weight - 1) * sp)
        return dz.astype(z.dtype), dt.astype(t.dtype)


def _check_same_shape(input: Tensor, target: Tensor) -> None:  # noqa: A002
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({tuple(target.shape)}) that is different to the "
                         f"input size ({tuple(input.shape)}) is not supported; "
                         "please ensure they have the same size.")


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
                         reduction: str = "mean") -> Tensor:
    """Binary cross-entropy between probabilities ``input`` in [0, 1] and ``target``.

    ``weight`` (optional, broadcast against the input) multiplies each element's loss before
    the ``reduction``.

    Raises:
        ValueError: shapes differ, or an unknown ``reduction``.
        RuntimeError: an input or a target is outside [0, 1] (not a probability).
    """
    target = _as_tensor(target)
    _check_same_shape(input, target)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction!r} is not a valid value for reduction")
    if target.dtype != input.dtype:
        raise RuntimeError(f"Found dtype {target.dtype} but expected {input.dtype}: "
                           "binary_cross_entropy needs the target in the input's dtype")
    # ``not (0 <= x <= 1)`` rather than ``x < 0 or x > 1``: NaN is not a probability either
    if not np.all((input.data >= 0) & (input.data <= 1)):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if not np.all((target.data >= 0) & (target.data <= 1)):
        raise RuntimeError("all elements of target should be between 0 and 1")
    loss = _BCEFn.apply(input, target)
    if weight is not None:
        loss = loss * _as_tensor(weight)
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,  # noqa: A002
                                     weight: Tensor | None = None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """Binary cross-entropy on logits: ``BCE(sigmoid(input), target)`` computed stably.

    ``pos_weight`` (broadcast along the last dimension) weights the positive class;
    ``weight`` multiplies each element's loss before the ``reduction``.
    """
    target = _as_tensor(target)
    _check_same_shape(input, target)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction!r} is not a valid value for reduction")
    pw = None if pos_weight is None else np.asarray(_as_tensor(pos_weight).data,
                                                    dtype=input.data.dtype)
    loss = _BCEWithLogitsFn.apply(input, target, pos_weight=pw)
    if weight is not None:
        loss = loss * _as_tensor(weight)
    if loss.dtype != target.dtype:  # PyTorch builds the loss in place in a target-sized buffer
        loss = loss.double() if target.dtype == np.float64 else loss.float()
    return _reduce(loss, reduction)


# %% [raw]
# # BEGIN QUESTION
# name: binary
# points: 0

# %% [markdown]
# ### Check: BCE and BCE with logits

# %% [raw]
# # BEGIN TESTS

# %%
def test_bce_clamps_log(binary_cross_entropy, Tensor, np):
    p, y = Tensor([0.9, 0.2, 0.0, 1.0]), Tensor([1.0, 0.0, 1.0, 1.0])
    per = binary_cross_entropy(p, y, reduction="none").numpy()
    assert np.isfinite(per).all(), (
        f"log(0) must be clamped at -100, not left as -inf: got {per.tolist()}")
    assert np.allclose(per, [0.1053605, 0.2231435, 100.0, 0.0], atol=1e-5), (
        f"-(y log p + (1 - y) log(1 - p)) per element, with logs clamped at -100; got {per}")
    got = binary_cross_entropy(p, y).item()
    assert np.isclose(got, per.mean()), (
        f"reduction='mean' (the default) averages the per-element losses: expected "
        f"{per.mean():.5f}, got {got}")

# %%
def test_bce_with_logits_is_stable(binary_cross_entropy_with_logits, Tensor, np):
    z, y = Tensor([0.0, 1000.0, -1000.0, 2.0]), Tensor([1.0, 0.0, 1.0, 1.0])
    with np.errstate(over="raise"):
        per = binary_cross_entropy_with_logits(z, y, reduction="none").numpy()
    assert np.isfinite(per).all(), (
        f"exp overflowed, got {per.tolist()}: use log(1 + exp(-|z|)) + max(-z, 0)")
    assert np.allclose(per, [0.6931472, 1000.0, 1000.0, 0.126928], atol=1e-5), (
        f"(1 - y) z + softplus(-z) per element; got {per}")
    pw = binary_cross_entropy_with_logits(z, y, reduction="none", pos_weight=Tensor([3.0]))
    assert np.isclose(pw.numpy()[3], 3 * 0.126928, atol=1e-5), (
        f"pos_weight multiplies the loss of positive targets: expected 3 * 0.126928 = "
        f"{3 * 0.126928:.6f}, got {pw.numpy()[3]:.6f}")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 4. The loss modules
#
# `nn.CrossEntropyLoss()` and friends are modules that store their options and call the
# functions above (provided).

# %%
#| export
class _Loss(Module):
    # As in PyTorch, the arguments are checked when the loss is computed, not here.
    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = reduction

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}" if self.reduction != "mean" else ""


class MSELoss(_Loss):
    """Mean squared error as a module: ``MSELoss(reduction='mean')(input, target)``."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return mse_loss(input, target, reduction=self.reduction)


class NLLLoss(_Loss):
    """Negative log-likelihood of class indices, given log-probabilities."""

    def __init__(self, weight: Tensor | None = None, ignore_index: int = -100,
                 reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.weight = weight
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                        reduction=self.reduction)


class CrossEntropyLoss(_Loss):
    """Cross-entropy of logits against class indices (or probabilities)."""

    def __init__(self, weight: Tensor | None = None, ignore_index: int = -100,
                 reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        super().__init__(reduction)
        self.weight = weight
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                             reduction=self.reduction, label_smoothing=self.label_smoothing)


class BCELoss(_Loss):
    """Binary cross-entropy on probabilities (logs clamped at -100)."""

    def __init__(self, weight: Tensor | None = None, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.weight = weight

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross-entropy on logits (stable); ``pos_weight`` weights positives."""

    def __init__(self, weight: Tensor | None = None, reduction: str = "mean",
                 pos_weight: Tensor | None = None) -> None:
        super().__init__(reduction)
        self.weight = weight
        self.pos_weight = pos_weight

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return binary_cross_entropy_with_logits(input, target, weight=self.weight,
                                                reduction=self.reduction,
                                                pos_weight=self.pos_weight)


# %% [raw]
# # BEGIN QUESTION
# name: loss_modules
# points: 0

# %% [markdown]
# ### Check: loss modules

# %% [raw]
# # BEGIN TESTS

# %%
def test_loss_modules(CrossEntropyLoss, MSELoss, BCEWithLogitsLoss, Tensor, np):
    logits = Tensor(np.zeros((4, 10), dtype=np.float32))
    y = Tensor(np.array([0, 3, 9, 5]))
    got = CrossEntropyLoss()(logits, y).item()
    assert np.isclose(got, np.log(10), atol=1e-5), (
        f"uniform logits over 10 classes cost log(10) = 2.3026 (the loss of random guessing), "
        f"got {got}")
    shape = CrossEntropyLoss(reduction="none")(logits, y).shape
    assert shape == (4,), f"reduction='none': one loss per sample, shape (4,), got {shape}"
    total = MSELoss(reduction="sum")(Tensor([1.0, 2.0]), Tensor([0.0, 0.0])).item()
    assert np.isclose(total, 5.0), (
        f"MSELoss(reduction='sum') must pass its reduction on: 1² + 2² = 5, got {total}")
    got = BCEWithLogitsLoss()(Tensor([0.0]), Tensor([1.0])).item()
    assert np.isclose(got, np.log(2)), (
        f"a logit of 0 is p = 0.5: the loss is log 2 = 0.6931, got {got}")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 5. Systems view: the loss over a large vocabulary
#
# For logits of shape `(N, C)`, cross-entropy reads `N·C` logits, does ~`4·N·C` FLOPs
# (max, subtract, exp, sum; plus `N` logs) and — in our version — creates several `(N, C)`
# temporaries: the shifted logits, their `exp`, `log_softmax`, the one-hot coefficients and
# their product. PyTorch fuses `log_softmax` + `nll_loss` and *gathers* `logp[i, y_i]`
# (`N` reads) instead of multiplying by a one-hot matrix (`N·C` extra memory).
#
# This matters for language models. GPT-2's vocabulary has C = 50,257 tokens; a batch of 8
# sequences of 1,024 tokens gives N = 8,192 rows: the logits alone are 8192 · 50257 · 4 B ≈
# 1.65 GB in float32, and each temporary the same again. Production code therefore fuses the
# loss into the last matmul and processes the vocabulary in chunks ("chunked" or "fused" cross-
# entropy), never materialising all probabilities at once.

# %%
N, C = 8 * 1024, 50257
print(f"logits: {N * C * 4 / 1e9:.2f} GB; one-hot coefficients: another {N * C * 4 / 1e9:.2f} GB; "
      f"gathered targets: {N * 8 / 1e3:.0f} kB")
# Expected: logits: 1.65 GB; one-hot coefficients: another 1.65 GB; gathered targets: 66 kB

# %% [markdown]
# ## 6. ML systems thinking (graded by hand)

# %% [raw]
# # BEGIN QUESTION
# name: written_logits
# manual: true
# points: 5

# %% [markdown]
# **Q1 · Logits, not probabilities.** A student computes `probs = softmax(z, dim=0)` (the
# stable softmax of module 02) and then `loss = -log(probs[y])`. For logits `z = [0, 120]` and target `y = 0`, what does each step
# return in float32, and what does `cross_entropy(z, y)` return? Why does PyTorch's API take
# logits?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# `softmax([0, 120])` = `[e^-120 / (1 + e^-120), ...]` ≈ `[7.7·10⁻⁵³, 1]`; 7.7·10⁻⁵³ is below
# float32's smallest subnormal (1.4·10⁻⁴⁵), so it rounds to 0 and `-log(0) = inf`; the gradient
# is NaN and training dies. `cross_entropy` computes `-z_y + logsumexp(z) = 0 + 120 + log(1 +
# e^-120) = 120` exactly. Taking logits lets the library fuse softmax into the log-sum-exp, which
# is both stable and cheaper (one pass, and the gradient is simply `softmax(z) - onehot(y)`).

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_reduction
# manual: true
# points: 5

# %% [markdown]
# **Q2 · Reduction and the learning rate.** You train with `reduction='sum'` instead of
# `'mean'` and double the batch size from 64 to 128. What happens to the gradient's magnitude,
# and what must you change to keep the same training dynamics? Why is `'mean'` the default,
# and where is `'none'` useful?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# With `'sum'` the gradient is the sum of per-sample gradients, so it doubles with the batch
# (×2 from 64 to 128) and an SGD step with the same learning rate is twice as large; you would
# have to halve the learning rate (with `'mean'` it stays comparable, which is why it is the
# default and why learning rates transfer across batch sizes). Gradient accumulation over k
# micro-batches must divide by k for the same reason. `'none'` returns per-sample losses for
# masking padded tokens, per-sample weighting, hard-example mining, or logging the loss per
# class.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_vocab
# manual: true
# points: 5

# %% [markdown]
# **Q3 · Memory of the loss.** For N = 8,192 token positions and a vocabulary of C = 50,257,
# estimate the memory of the logits and of the temporaries our `cross_entropy` creates. How
# would you compute the same loss in a fraction of that memory?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# Logits: 8192 · 50257 · 4 B ≈ 1.65 GB. Our version makes five more `(N, C)` arrays
# (shifted logits, their exp, log_softmax, one-hot coefficients, and their product): about
# 6 × 1.65 ≈ 10 GB if they are alive at once (autograd keeps most of them for backward), far
# more than a 4 GB laptop has. Better: gather `z[i, y_i]` with an index (N numbers), and
# compute log-sum-exp in chunks of rows (or of the vocabulary with a running max and sum, the
# online-softmax trick), so only one chunk's temporaries exist at a time; in production the
# chunking is fused with the output projection so the full logit matrix is never stored.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## Summary
#
# You built PyTorch's standard losses with their reductions, class-index and probability
# targets, weights, `ignore_index` and label smoothing, and made them stable (log-sum-exp for
# cross-entropy, clamped logs for BCE, a stable softplus for BCE with logits). With modules
# 01–04 a model can make predictions and score them; module 05 makes the score move the weights.
