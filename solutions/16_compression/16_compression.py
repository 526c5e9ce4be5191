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
# Module 15 kept every weight and stored it in fewer bits. This module removes weights
# instead, or replaces a big layer by smaller ones. Trained networks are heavily redundant:
# many weights are tiny, many neurons duplicate each other, and weight matrices are close to
# low rank. Four techniques exploit that, and you build each with PyTorch's semantics where
# PyTorch has them:
#
# * **magnitude pruning** — zero the smallest weights, per layer or globally across layers
#   (`torch.nn.utils.prune.l1_unstructured`, `global_unstructured`), with masks that stay
#   applied while the model keeps training;
# * **structured pruning** — remove whole neurons, so the layers really get smaller
#   (`ln_structured` chooses which);
# * **low-rank factorisation** — replace one Linear by two thin ones via the SVD;
# * **knowledge distillation** — train a small model to imitate a big one's softened
#   outputs (Hinton et al., 2015), with `kl_div` as in `torch.nn.functional`.
#
# Then you measure what each one costs in accuracy on the digits MLP, for what it saves.
#
# ## Learning objectives
#
# 1. compute L1 **unstructured** pruning masks (local and global) with PyTorch's rules for
#    the amount (a fraction rounds half to even, an integer is a count) and for repeated
#    pruning, and apply them with a layer that keeps pruned weights at zero during training;
# 2. report **sparsity** per layer and globally, and explain why 90% zeros does not make a
#    dense matmul faster;
# 3. rank neurons by their **Lₙ norm** (`ln_structured`) and **remove** them, shrinking the
#    next layer too;
# 4. factorise a Linear by the **SVD** and relate the rank to the error (Eckart–Young) and
#    to the parameter count;
# 5. implement **`kl_div`** (values and gradients) and the **distillation loss** with
#    temperature, and explain the `T²` factor;
# 6. **measure** accuracy against compression for each technique on a real task.
#
# Fill in the functions that raise `NotImplementedError`; run the check after each section;
# `python export.py 16` writes `tinytorch/compression.py`. PyTorch's names are also available
# where PyTorch keeps them: `tinytorch.nn.utils.prune`, `tinytorch.nn.functional.kl_div`,
# `tinytorch.nn.KLDivLoss`.

# %%
import numpy as np

from tinytorch.activations import ReLU
from tinytorch.layers import Linear, Sequential
from tinytorch.tensor import Tensor, manual_seed, no_grad

# %% [markdown]
# ## 1. Magnitude pruning: which weights to drop
#
# The simplest importance score of a weight is its magnitude `|w|`: a weight near zero
# contributes little to any output. **L1 unstructured pruning** zeros the `k` weights with
# the smallest `|w|`, wherever they are:
#
# ```
#   weight            |weight|          amount = 0.5 of 6 -> k = 3 smallest     mask
#   [ 0.9 -0.1  0.4]  [0.9 0.1 0.4]     0.1, 0.2, 0.3 are dropped              [1 0 1]
#   [-0.2  0.3 -0.7]  [0.2 0.3 0.7]                                            [0 0 1]
# ```
#
# The result is a **mask** of the weight's shape: 1 keeps, 0 prunes. PyTorch's rules for the
# amount (`torch.nn.utils.prune`):
#
# * a **float** in [0, 1] is a fraction of the candidates: `k = round(amount · n)` with
#   Python's `round`, which rounds **half to even** (`round(2.5) = 2`, `round(3.5) = 4`);
# * an **int** is a count: `amount = 3` prunes exactly 3; more than `n` is a `ValueError`;
# * a negative amount, or a float above 1, is a `ValueError`; anything else a `TypeError`.
#
# **Pruning again** (iterative pruning) works on what is left: with a `default_mask` from an
# earlier round, the candidates are only the weights still kept, the new `k` counts among
# them, and the old zeros stay zero. Pruning 50% twice keeps 25%, not 0%.
#
# **Ties.** When several weights have the same magnitude, PyTorch (`torch.topk`) does not
# define which go first; ours prunes the one with the lowest flat index first (a stable sort),
# so results are reproducible.

# %%
#| export
"""Module 16 · Compression — depends on: tensor, activations, layers, losses, autograd,
spatial; used by: benchmarking, capstone, milestones.

Magnitude pruning with ``torch.nn.utils.prune``'s semantics (L1 unstructured masks, local and
global, iterative; Lₙ-structured masks) applied by ``MaskedLinear``/``MaskedConv2d`` layers;
sparsity reports; structured removal of neurons and channels; low-rank factorisation of a
Linear by the SVD; ``kl_div`` (``torch.nn.functional.kl_div``) and the distillation loss with
temperature.
"""

from __future__ import annotations

import copy
import numbers
from collections.abc import Iterable
from typing import Any

import numpy as np

from tinytorch.activations import ReLU, log_softmax  # noqa: F401 - ReLU for checks
from tinytorch.layers import Linear, Module, Parameter, Sequential
from tinytorch.losses import cross_entropy
from tinytorch.spatial import BatchNorm2d, Conv2d
from tinytorch.tensor import Context, Function, Tensor, manual_seed, no_grad  # noqa: F401


def nparams_to_prune(amount: Any, n: int) -> int:
    """How many of ``n`` candidates ``amount`` prunes (PyTorch's ``_compute_nparams_toprune``
    with its checks).

    Args:
        amount: an int (a count, ``0 <= amount <= n``) or a float (a fraction in [0, 1]).
        n: the number of candidates.

    Returns:
        ``amount`` for an int; ``round(amount * n)`` for a float.

    Raises:
        TypeError: ``amount`` is not a real number.
        ValueError: a negative amount, a float above 1, or an int larger than ``n``.

    APPROACH:
        1. ``isinstance(amount, numbers.Real)`` or TypeError.
        2. ``numbers.Integral``: refuse ``amount < 0`` and ``amount > n``; return
           ``int(amount)``.
        3. Otherwise a float: refuse values outside [0, 1]; return ``int(round(amount * n))``
           — Python's ``round`` (half to even), as PyTorch.

    EXAMPLE:
        >>> nparams_to_prune(0.5, 5), nparams_to_prune(0.5, 7), nparams_to_prune(3, 10)
        (2, 4, 3)

    HINT: ``math.ceil`` or ``int()`` give different counts from PyTorch: ``0.5 · 5 = 2.5``
    rounds to 2, ``0.5 · 7 = 3.5`` to 4.
    """
    # BEGIN SOLUTION NO PROMPT
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"invalid type for amount: {amount!r}; expected int or float")
    if isinstance(amount, numbers.Integral):
        if amount < 0:
            raise ValueError(f"amount={amount} should be a non-negative integer")
        if amount > n:
            raise ValueError(f"amount={amount} should be smaller than the number of parameters "
                             f"to prune={n}")
        return int(amount)
    if not 0.0 <= float(amount) <= 1.0:
        raise ValueError(f"amount={amount} should be a float in the range [0, 1]")
    return int(round(float(amount) * n))
    # END SOLUTION
    raise NotImplementedError("module 16: implement nparams_to_prune (see its docstring)")  # STUB


def _values(t: Any) -> np.ndarray:
    return np.asarray(t.data if isinstance(t, Tensor) else t)


def l1_unstructured_mask(t: Any, amount: Any, default_mask: Any = None) -> np.ndarray:
    """The mask that prunes the ``amount`` smallest-magnitude entries of ``t`` still kept
    (``torch.nn.utils.prune.L1Unstructured``, including repeated pruning).

    Args:
        t: the importance scores (usually the weight), any shape; a Tensor or an array.
        amount: a fraction or a count of the entries *still kept* (see ``nparams_to_prune``).
        default_mask: an earlier 0/1 mask of ``t``'s shape, a Tensor or an array (None:
            all ones); it is not modified.

    Returns:
        A 0/1 mask of ``t``'s shape and float dtype (float32 for float32 weights): zero where
        ``default_mask`` was zero, and at the ``k`` smallest ``|t|`` among the others.

    APPROACH:
        1. ``mask`` = a float copy of ``default_mask`` (ones if None), contiguous, dtype of
           ``t`` (float32 for non-float ``t``); ``kept = mask != 0``.
        2. ``k = nparams_to_prune(amount, int(kept.sum()))``.
        3. If ``k``: ``scores = np.where(kept, np.abs(t), np.inf).ravel()``; the first ``k``
           of ``np.argsort(scores, kind="stable")`` are pruned: ``mask.reshape(-1)[idx] = 0``.
        4. Return ``mask``.

    EXAMPLE:
        >>> w = np.array([[0.9, -0.1, 0.4], [-0.2, 0.3, -0.7]], dtype=np.float32)
        >>> first = l1_unstructured_mask(w, 0.5); first
        array([[1., 0., 1.],
               [0., 0., 1.]], dtype=float32)
        >>> l1_unstructured_mask(w, 1, default_mask=first)
        array([[1., 0., 0.],
               [0., 0., 1.]], dtype=float32)

    HINT: already-pruned entries get the score ``+inf`` so that they are never chosen again
    and ``k`` counts only the kept ones; ``kind="stable"`` breaks ties by position.
    """
    # BEGIN SOLUTION NO PROMPT
    values = _values(t)
    dtype = values.dtype if values.dtype.kind == "f" else np.float32
    if default_mask is None:
        mask = np.ones(values.shape, dtype=dtype)
    else:
        mask = np.array(_values(default_mask), dtype=dtype, copy=True)
    kept = mask != 0
    k = nparams_to_prune(amount, int(kept.sum()))
    if k:
        scores = np.where(kept, np.abs(values), np.inf).ravel()
        idx = np.argsort(scores, kind="stable")[:k]
        mask.reshape(-1)[idx] = 0
    return mask
    # END SOLUTION
    raise NotImplementedError(  # STUB
        "module 16: implement l1_unstructured_mask (see its docstring)")  # STUB


# %% [raw]
# # BEGIN QUESTION
# name: l1_masks
# points: 0

# %% [markdown]
# ### Check: L1 masks

# %% [raw]
# # BEGIN TESTS

# %%
def test_nparams_to_prune_follows_pytorch(nparams_to_prune):
    got = [nparams_to_prune(0.5, 5), nparams_to_prune(0.5, 7), nparams_to_prune(0.3, 10),
           nparams_to_prune(4, 10), nparams_to_prune(0.0, 3), nparams_to_prune(1.0, 3)]
    assert got == [2, 4, 3, 4, 0, 3], (
        f"expected [2, 4, 3, 4, 0, 3], got {got}: a float is round(amount * n) with Python's "
        "round (2.5 -> 2, 3.5 -> 4); an int is a count")
    for bad, err in [(1.5, ValueError), (-1, ValueError), (11, ValueError), ("half", TypeError)]:
        try:
            nparams_to_prune(bad, 10)
        except err:
            continue
        raise AssertionError(f"amount={bad!r} of 10 must raise {err.__name__}, as PyTorch does")

# %%
def test_l1_unstructured_mask_and_repeated_pruning(l1_unstructured_mask, Tensor, np):
    w = np.array([[0.9, -0.1, 0.4], [-0.2, 0.3, -0.7]], dtype=np.float32)
    m1 = l1_unstructured_mask(w, 0.5)
    assert m1.shape == (2, 3) and m1.dtype == np.float32, (
        f"a mask has the weight's shape and dtype, got {m1.shape} {m1.dtype}")
    assert m1.tolist() == [[1, 0, 1], [0, 0, 1]], (
        f"0.5 of 6 = 3 smallest |w| (0.1, 0.2, 0.3) are pruned: expected [[1, 0, 1], [0, 0, 1]], "
        f"got {m1.tolist()}")
    m2 = l1_unstructured_mask(Tensor(w), 0.5, default_mask=m1)
    assert m2.tolist() == [[1, 0, 0], [0, 0, 0]], (
        f"pruning again works on the 3 weights left: round(0.5 * 3) = round(1.5) = 2 (half to "
        f"even), so 0.4 and 0.7 go and only 0.9 stays; expected [[1, 0, 0], [0, 0, 0]], got "
        f"{m2.tolist()} (counting all 6 entries would prune 3: everything that was left)")
    assert m1.tolist() == [[1, 0, 1], [0, 0, 1]], (
        f"do not modify the default_mask you were given (the caller still holds it): it is now "
        f"{m1.tolist()}")
    ties = l1_unstructured_mask(np.array([0.5, -0.5, 0.5, 2.0], dtype=np.float32), 2)
    assert ties.tolist() == [0, 0, 1, 1], (
        f"equal magnitudes: the lowest indices go first (stable sort), got {ties.tolist()}")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 2. Keeping pruned weights pruned: a masked layer
#
# Zeroing weights once is not enough: the next training step gives them gradients and they
# grow back. PyTorch keeps the original weight (`weight_orig`) and the mask (`weight_mask`)
# and recomputes `weight = weight_orig * weight_mask` before every forward pass (with a hook).
# We do the same, explicitly, in a new layer — module 03's `Linear` stays untouched:
#
# ```
#   MaskedLinear(Linear)
#     weight       Parameter (out, in)      the trained values, pruned entries kept as they were
#     weight_mask  buffer    (out, in)      0/1
#     forward(x) = x @ (weight * weight_mask).T + bias * bias_mask
#                        └── a Tensor product: autograd sends weight the gradient
#                            grad · mask, so pruned entries get exactly 0 and stay pruned
# ```
#
# `MaskedLinear.from_linear(linear)` makes one that **shares** the Linear's parameters (an
# optimizer built for the float model keeps training them). The PyTorch-style functions, given
# below, prune a masked layer **in place**, combining with its current mask:
# `l1_unstructured(module, "weight", amount)`, `ln_structured(...)`, and `remove(module,
# "weight")`, which makes the pruning permanent (`weight ← weight · mask`, mask back to ones).
# `MaskedConv2d` (given) does the same for module 09's `Conv2d`, with `conv2d(x, weight *
# weight_mask, ...)`. `make_prunable(model)` swaps every Linear and Conv2d of a model copy for
# its masked version (the same walk as module 15's `swap_modules`); `strip_masks(model)` turns
# them back into plain `Linear`s and `Conv2d`s with the zeros baked in (ready for module 15's
# quantization).

# %%
#| export
def _bare(cls: type, weight: Parameter, bias: Parameter | None) -> Any:
    """A ``cls`` (a Linear or Conv2d class) holding exactly these Parameters, built without
    its ``__init__`` (which would draw random numbers); the caller sets its other fields."""
    layer = cls.__new__(cls)
    Module.__init__(layer)
    layer.weight = weight
    if bias is None:
        layer.register_parameter("bias", None)
    else:
        layer.bias = bias
    return layer


def _param(values: np.ndarray | None) -> Parameter | None:
    return None if values is None else Parameter(np.ascontiguousarray(values))


def _new_linear(cls: type, weight: np.ndarray, bias: np.ndarray | None) -> Any:
    """A ``cls`` (Linear or a subclass) holding these arrays, without drawing random numbers."""
    layer = _bare(cls, _param(weight), _param(bias))
    layer.out_features, layer.in_features = weight.shape
    return layer


def _new_conv(like: Conv2d, weight: np.ndarray, bias: np.ndarray | None) -> Conv2d:
    """A Conv2d with ``like``'s stride and padding holding these arrays, without drawing
    random numbers."""
    layer = _bare(Conv2d, _param(weight), _param(bias))
    layer.out_channels, layer.in_channels = weight.shape[0], weight.shape[1] * like.groups
    layer.kernel_size = tuple(weight.shape[2:])
    for name in ("stride", "padding", "dilation", "groups", "padding_mode"):
        setattr(layer, name, getattr(like, name))
    return layer


def _add_masks(layer: Module) -> None:
    """Register all-ones ``weight_mask`` and ``bias_mask`` (None without a bias) in their
    parameter's dtype, as ``torch.nn.utils.prune`` does (``ones_like``)."""
    layer.register_buffer("weight_mask", Tensor(np.ones_like(layer.weight.data)))
    layer.register_buffer("bias_mask", None if layer.bias is None else
                          Tensor(np.ones_like(layer.bias.data)))


class MaskedLinear(Linear):
    """A ``Linear`` whose weight and bias are multiplied by fixed 0/1 masks in every forward.

    Buffers ``weight_mask`` ``(out, in)`` and ``bias_mask`` ``(out,)`` (None without bias),
    float32, all ones until a pruning function changes them. ``weight`` keeps the trained
    values (PyTorch's ``weight_orig``); the effective weight is ``weight * weight_mask``.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True) -> None:
        super().__init__(in_features, out_features, bias)
        _add_masks(self)

    @classmethod
    def from_linear(cls, linear: Linear) -> MaskedLinear:
        """A MaskedLinear sharing ``linear``'s Parameters (same objects), masks all ones."""
        layer = _bare(cls, linear.weight, linear.bias)
        layer.in_features, layer.out_features = linear.in_features, linear.out_features
        _add_masks(layer)
        return layer

    def forward(self, x: Tensor) -> Tensor:
        """``x @ (weight * weight_mask).T + bias * bias_mask`` for ``x`` of shape ``(*, in)``.

        APPROACH:
            1. ``w = self.weight * self.weight_mask`` — a Tensor product, recorded by
               autograd (do not multiply ``.data``).
            2. ``out = x @ w.T``.
            3. If there is a bias: ``out = out + self.bias * self.bias_mask``.
            4. Return ``out`` — ``(*, out)``.

        EXAMPLE:
            >>> lin = MaskedLinear(2, 1); lin.weight.data[...] = [[2.0, 3.0]]
            >>> lin.bias.data[...] = 0.0; lin.weight_mask.data[...] = [[1.0, 0.0]]
            >>> lin(Tensor([[1.0, 1.0]]))
            tensor([[2.]], requires_grad=True)

        HINT: multiplying ``self.weight.data`` by the mask in place would lose the pruned
        values (PyTorch keeps them in ``weight_orig``) and the gradient would still reach the
        pruned entries; the Tensor product gives them a gradient of exactly 0.
        """
        # BEGIN SOLUTION NO PROMPT
        w = self.weight * self.weight_mask                       # (out, in)
        out = x @ w.T                                            # (*, out)
        if self.bias is not None:
            out = out + self.bias * self.bias_mask
        return out
        # END SOLUTION
        raise NotImplementedError("module 16: implement MaskedLinear.forward (see its docstring)")  # STUB

    def extra_repr(self) -> str:
        kept = int(np.count_nonzero(self.weight_mask.data))
        return super().extra_repr() + f", weight kept={kept}/{self.weight_mask.data.size}"


class MaskedConv2d(Conv2d):
    """A ``Conv2d`` (module 09) with the same masks as :class:`MaskedLinear` (given): the
    layer's convolution (``_conv_forward``: its stride, padding and padding mode, dilation and
    groups) of ``weight * weight_mask`` and ``bias * bias_mask``."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros") -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode)
        _add_masks(self)

    @classmethod
    def from_conv(cls, conv: Conv2d) -> MaskedConv2d:
        """A MaskedConv2d sharing ``conv``'s Parameters (same objects), masks all ones."""
        layer = _bare(cls, conv.weight, conv.bias)
        for name in ("in_channels", "out_channels", "kernel_size", "stride", "padding",
                     "dilation", "groups", "padding_mode"):
            setattr(layer, name, getattr(conv, name))
        _add_masks(layer)
        return layer

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        bias = None if self.bias is None else self.bias * self.bias_mask
        return self._conv_forward(input, self.weight * self.weight_mask, bias)

    def extra_repr(self) -> str:
        kept = int(np.count_nonzero(self.weight_mask.data))
        return super().extra_repr() + f", weight kept={kept}/{self.weight_mask.data.size}"


MASKED_TYPES = (MaskedLinear, MaskedConv2d)


#: Layer type -> a function making its masked version (sharing the layer's Parameters).
MASKED_MODULES: dict[type, Any] = {Linear: MaskedLinear.from_linear,
                                   Conv2d: MaskedConv2d.from_conv}


def _swap(module: Any, mapping: dict[type, Any]) -> Any:
    """Replace every module whose exact type is in ``mapping``, in place (module 15's
    ``swap_modules``, repeated here so that module 16 does not depend on module 15)."""
    if type(module) in mapping:
        return mapping[type(module)](module)
    for name, child in list(module._modules.items()):
        if child is not None:
            module.add_module(name, _swap(child, mapping))
    return module


def make_prunable(model: Module, inplace: bool = False) -> Any:
    """A copy of ``model`` (or ``model`` itself) with every Linear replaced by a MaskedLinear
    and every Conv2d by a MaskedConv2d."""
    return _swap(model if inplace else copy.deepcopy(model), MASKED_MODULES)


def _masked(module: Any, name: str) -> tuple[Tensor, Tensor]:
    mask = getattr(module, f"{name}_mask", None) if name in ("weight", "bias") else None
    if not isinstance(mask, Tensor):
        raise TypeError(f"{type(module).__name__} has no mask for {name!r}: prune a masked "
                        "layer (MaskedLinear.from_linear(layer), MaskedConv2d.from_conv(layer), "
                        "or make_prunable(model))")
    return getattr(module, name), mask


def l1_unstructured(module: Any, name: str, amount: Any) -> Any:
    """Prune ``amount`` of the still-kept entries of ``module.<name>`` by magnitude, in place
    (``torch.nn.utils.prune.l1_unstructured``); returns ``module``."""
    param, mask = _masked(module, name)
    mask.data[...] = l1_unstructured_mask(param.data, amount, default_mask=mask.data)
    _mark_pruned(module, name)
    return module


def remove(module: Any, name: str) -> Any:
    """Make the pruning of ``module.<name>`` permanent (``torch.nn.utils.prune.remove``):
    ``param ← param · mask`` and the mask back to ones; returns ``module``."""
    param, mask = _masked(module, name)
    if name not in module.__dict__.get("_pruned", set()):
        raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before "
                         "pruning can be removed")
    param.data *= mask.data.astype(param.data.dtype)
    mask.data[...] = 1
    module.__dict__["_pruned"].discard(name)
    return module


def _mark_pruned(module: Any, name: str) -> None:
    """Remember that ``module.<name>`` was pruned: ``remove`` refuses a parameter that was
    not (as PyTorch, whose ``remove`` needs the pruning hook)."""
    module.__dict__.setdefault("_pruned", set()).add(name)


def is_pruned(module: Module) -> bool:
    """Whether ``module`` or any module inside it carries pruning masks
    (``torch.nn.utils.prune.is_pruned``)."""
    return any(isinstance(m, MASKED_TYPES) for m in module.modules())


def strip_masks(model: Module, inplace: bool = False) -> Any:
    """A copy of ``model`` with every masked layer turned into a plain Linear / Conv2d whose
    weight and bias have the masks baked in (ready for module 15's quantization)."""
    def baked(layer: Any) -> tuple[np.ndarray, np.ndarray | None]:
        bias = None if layer.bias is None else layer.bias.data * layer.bias_mask.data
        return layer.weight.data * layer.weight_mask.data, bias

    return _swap(model if inplace else copy.deepcopy(model),
                 {MaskedLinear: lambda m: _new_linear(Linear, *baked(m)),
                  MaskedConv2d: lambda m: _new_conv(m, *baked(m))})


# %% [raw]
# # BEGIN QUESTION
# name: masked_layer
# points: 0

# %% [markdown]
# ### Check: the masked layer

# %% [raw]
# # BEGIN TESTS

# %%
def test_masked_linear_applies_the_mask_and_blocks_gradients(MaskedLinear, Linear,
                                                            l1_unstructured, Tensor,
                                                            manual_seed, np):
    manual_seed(0)
    lin = Linear(3, 2)
    lin.weight.data[...] = [[0.9, -0.1, 0.4], [-0.2, 0.3, -0.7]]
    lin.bias.data[...] = [0.5, -0.5]
    masked = MaskedLinear.from_linear(lin)
    assert masked.weight is lin.weight, (
        f"from_linear shares the Parameters (same objects, so an optimizer holding lin's keeps "
        f"training them), got a {type(masked.weight).__name__} that is not lin.weight")
    l1_unstructured(masked, "weight", 0.5)
    x = Tensor([[1.0, 2.0, 3.0]])
    y = masked(x)
    assert np.allclose(y.numpy(), [[0.9 + 1.2 + 0.5, -2.1 - 0.5]]), (
        f"only kept weights count: [0.9, 0, 0.4] and [0, 0, -0.7] give [[2.6, -2.6]], got "
        f"{y.numpy().tolist()}")
    stored = masked.weight.numpy()
    assert np.allclose(stored, [[0.9, -0.1, 0.4], [-0.2, 0.3, -0.7]]), (
        "the Parameter keeps the trained values (PyTorch's weight_orig): multiply in forward, "
        f"never the stored .data; it now holds {np.round(stored, 4).tolist()}")
    y.sum().backward()
    g = masked.weight.grad.numpy()
    assert np.allclose(g, [[1.0, 0.0, 3.0], [0.0, 0.0, 3.0]]), (
        f"pruned weights get a zero gradient (grad * mask), expected [[1, 0, 3], [0, 0, 3]], got "
        f"{g.tolist()}: build the masked weight with Tensor operations")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 3. Local or global? And how sparse is the model?
#
# **Local** pruning removes the same fraction from every layer. **Global** pruning ranks all
# weights of all layers together and removes the smallest overall, so layers with many
# small weights lose more and sensitive layers keep more:
#
# ```
#   layer A |w|: 0.01 0.02 0.03 0.50     amount 0.5, local:  A loses 2,  B loses 2
#   layer B |w|: 0.40 0.60 0.70 0.80     amount 0.5, global: A loses 3,  B loses 1 (0.40)
# ```
#
# Global pruning is the masks of the **concatenation** of every weight, cut back into pieces
# (`torch.nn.utils.prune.global_unstructured`, given below on top of your function); with
# earlier masks, the candidates are again only the weights still kept. `prune_model(model,
# amount, scope="global" | "local")` prunes a copy of a model's Linear and Conv2d weights
# in one call.
#
# A **sparsity report** says how many weights of the Linear and Conv2d layers are zero, per
# layer and overall — in the *effective* weights (`weight * weight_mask` for a masked layer),
# since that is what the model computes with.

# %%
#| export
def global_unstructured_masks(tensors: list[Any], amount: Any,
                              default_masks: list[Any] | None = None) -> list[np.ndarray]:
    """L1 masks of several tensors, ranked together: the ``amount`` smallest magnitudes among
    all still-kept entries are pruned, wherever they are.

    Args:
        tensors: importance scores (usually weights), any shapes.
        amount: a fraction or count of all still-kept entries together.
        default_masks: earlier masks, one per tensor (None: all ones).

    Returns:
        One mask per tensor, each of its tensor's shape.

    APPROACH:
        1. ``flat = np.concatenate([values.ravel() for each tensor])`` and the same for the
           default masks (ones where None), in ``flat``'s dtype.
        2. ``mask = l1_unstructured_mask(flat, amount, flat_default)``.
        3. Cut ``mask`` back into pieces of each tensor's size (``np.cumsum`` of the sizes
           gives the split points, ``np.split``), reshape each to its tensor's shape and give
           it its tensor's dtype (float32 for a non-float tensor), as PyTorch's masks have.

    EXAMPLE:
        >>> a = np.array([0.01, 0.02, 0.03, 0.5], np.float32)
        >>> b = np.array([0.4, 0.6, 0.7, 0.8], np.float32)
        >>> [m.tolist() for m in global_unstructured_masks([a, b], 0.5)]
        [[0.0, 0.0, 0.0, 1.0], [0.0, 1.0, 1.0, 1.0]]

    HINT: this is one call of your ``l1_unstructured_mask`` on the concatenation; what can go
    wrong is only the cutting back (the split points are the cumulative sizes without the
    last one).
    """
    # BEGIN SOLUTION NO PROMPT
    values = [_values(t) for t in tensors]
    defaults = default_masks or [None] * len(values)
    flat = np.concatenate([v.ravel() for v in values])
    flat_default = np.concatenate([
        (np.ones(v.size, flat.dtype) if d is None else _values(d).astype(flat.dtype).ravel())
        for v, d in zip(values, defaults, strict=True)])
    mask = l1_unstructured_mask(flat, amount, flat_default)
    cuts = np.cumsum([v.size for v in values])[:-1]
    return [piece.reshape(v.shape).astype(v.dtype if v.dtype.kind == "f" else np.float32)
            for piece, v in zip(np.split(mask, cuts), values, strict=True)]
    # END SOLUTION
    raise NotImplementedError(  # STUB
        "module 16: implement global_unstructured_masks (see its docstring)")  # STUB


def global_unstructured(parameters: Iterable[tuple[Any, str]], amount: Any) -> None:
    """Prune ``amount`` of all still-kept entries of the ``(module, name)`` pairs together, in
    place (``torch.nn.utils.prune.global_unstructured`` with ``L1Unstructured``)."""
    parameters = list(parameters)  # walked twice below
    pairs = [_masked(module, name) for module, name in parameters]
    masks = global_unstructured_masks([p.data for p, _ in pairs], amount,
                                      [m.data for _, m in pairs])
    for (_, mask), new in zip(pairs, masks, strict=True):
        mask.data[...] = new
    for module, name in parameters:
        _mark_pruned(module, name)


def prune_model(model: Module, amount: Any, scope: str = "global",
                inplace: bool = False) -> Any:
    """A copy of ``model`` with every Linear/Conv2d turned into a masked layer and ``amount`` of
    their *weights* pruned by magnitude, across layers (``scope="global"``) or in each layer
    (``"local"``). Biases are not pruned."""
    if scope not in ("global", "local"):
        raise ValueError(f"scope must be 'global' or 'local', got {scope!r}")
    model = make_prunable(model, inplace=inplace)
    layers = [m for m in model.modules() if isinstance(m, MASKED_TYPES)]
    if scope == "global":
        global_unstructured([(m, "weight") for m in layers], amount)
    else:
        for m in layers:
            l1_unstructured(m, "weight", amount)
    return model


def sparsity_report(model: Module) -> dict[str, Any]:
    """Zeros in the effective weights of every Linear and Conv2d layer, and overall.

    Args:
        model: any module (Linear, Conv2d, their masked versions, or a container of them).

    Returns:
        ``{"layers": {name: {"zeros": int, "total": int, "sparsity": float}}, "global": {...}}``
        where ``name`` is the layer's name in ``model.named_modules()`` (``""`` for the root)
        and ``sparsity = zeros / total`` (0.0 when ``total`` is 0).

    APPROACH:
        1. For each ``(name, m)`` in ``model.named_modules()`` that is a ``Linear`` or a
           ``Conv2d`` (``isinstance``: the masked layers are subclasses):
           ``w = m.weight.data``, times ``m.weight_mask.data`` if ``m`` has a ``weight_mask``
           Tensor.
        2. ``zeros = int(np.count_nonzero(w == 0))``, ``total = int(w.size)``; store the dict.
        3. ``"global"``: the sums of ``zeros`` and ``total``, and their ratio.

    EXAMPLE:
        >>> layer = MaskedLinear(4, 2); layer.weight_mask.data[0] = 0
        >>> sparsity_report(Sequential(layer))["layers"]["0"]
        {'zeros': 4, 'total': 8, 'sparsity': 0.5}

    HINT: count the zeros of ``weight * mask``: a pruned entry keeps its trained value in
    ``weight`` (it is only masked), and a plain Linear may have exact zeros too (after
    ``remove``). Biases and BatchNorm scales are not counted (as in PyTorch's pruning
    tutorial): they are not what pruning removes.
    """
    # BEGIN SOLUTION NO PROMPT
    layers: dict[str, dict[str, Any]] = {}
    zeros_all, total_all = 0, 0
    for name, m in model.named_modules():
        if not isinstance(m, (Linear, Conv2d)):
            continue
        w = m.weight.data
        mask = m.__dict__.get("weight_mask")
        if isinstance(mask, Tensor):
            w = w * mask.data
        zeros, total = int(np.count_nonzero(w == 0)), int(w.size)
        layers[name] = {"zeros": zeros, "total": total,
                        "sparsity": zeros / total if total else 0.0}
        zeros_all += zeros
        total_all += total
    return {"layers": layers, "global": {"zeros": zeros_all, "total": total_all,
                                         "sparsity": zeros_all / total_all if total_all else 0.0}}
    # END SOLUTION
    raise NotImplementedError("module 16: implement sparsity_report (see its docstring)")  # STUB


def parameter_count(model: Module, nonzero: bool = False) -> int:
    """Elements of every parameter (``nonzero=True``: only the non-zero effective entries of
    weights and biases, masks applied)."""
    if not nonzero:
        return int(sum(p.data.size for p in model.parameters()))
    total = 0
    for m in model.modules():
        for name, p in m._parameters.items():
            if p is None:
                continue
            mask = m.__dict__.get(f"{name}_mask")
            values = p.data * mask.data if isinstance(mask, Tensor) else p.data
            total += int(np.count_nonzero(values))
    return total


# %% [raw]
# # BEGIN QUESTION
# name: global_and_report
# points: 0

# %% [markdown]
# ### Check: global pruning and sparsity

# %% [raw]
# # BEGIN TESTS

# %%
def test_global_masks_rank_all_layers_together(global_unstructured_masks, np):
    a = np.array([0.01, 0.02, 0.03, 0.5], np.float32)
    b = np.array([[0.4, 0.6], [0.7, 0.8]], np.float32)
    ma, mb = global_unstructured_masks([a, b], 0.5)
    assert ma.shape == (4,) and mb.shape == (2, 2), (
        f"one mask per tensor, in its shape; got {ma.shape} and {mb.shape}")
    assert ma.tolist() == [0, 0, 0, 1] and mb.tolist() == [[0, 1], [1, 1]], (
        f"the 4 smallest of all 8 go: 0.01, 0.02, 0.03 in a and 0.4 in b; got {ma.tolist()} "
        f"and {mb.tolist()}")
    ma2, mb2 = global_unstructured_masks([a, b], 2, [ma, mb])
    assert ma2.tolist() == [0, 0, 0, 0] and mb2.tolist() == [[0, 0], [1, 1]], (
        f"2 more among the 4 still kept: 0.5 and 0.6; got {ma2.tolist()} and {mb2.tolist()}")

# %%
def test_sparsity_report_counts_effective_zeros(sparsity_report, prune_model, Linear, ReLU,
                                                Sequential, manual_seed):
    manual_seed(0)
    model = Sequential(Linear(10, 8), ReLU(), Linear(8, 4))
    before = sparsity_report(model)
    assert before["global"] == {"zeros": 0, "total": 112, "sparsity": 0.0}, (
        f"a fresh model has 80 + 32 = 112 weights and no zeros, got {before['global']}")
    pruned = prune_model(model, 0.5)
    report = sparsity_report(pruned)
    assert set(report["layers"]) == {"0", "2"}, (
        f"one entry per layer with a weight, named as in named_modules(), got "
        f"{sorted(report['layers'])}")
    assert report["global"]["zeros"] == 56 and report["global"]["sparsity"] == 0.5, (
        f"global pruning of half of 112 weights leaves 56 effective zeros, got {report['global']}"
        ": count the zeros of weight * weight_mask")
    layer = report["layers"]["0"]
    assert layer["total"] == 80 and layer["sparsity"] == layer["zeros"] / 80, (
        f"per layer: zeros, total and their ratio, got {layer}")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 4. Structured pruning: removing whole neurons
#
# A matrix with 50% zeros scattered everywhere is still a dense matrix: NumPy, BLAS and GPUs
# multiply the zeros like any other number, so unstructured sparsity saves nothing at run time
# unless a sparse format and kernel are used (and those pay off only at very high sparsity).
# **Structured** pruning removes whole rows instead: hidden neuron `j` of `Linear₁` is row `j`
# of its weight and entry `j` of its bias, and it feeds **column** `j` of the next layer's
# weight. Remove all three and both layers really shrink:
#
# ```
#   Linear₁ weight (H, in)     bias (H,)      Linear₂ weight (out, H)
#   row j  ─────────────────── entry j  ───► column j           keep = [0, 2, 3]
#   after:  (3, in)            (3,)           (out, 3)           (H = 4 -> 3 neurons)
# ```
#
# Which neurons? `torch.nn.utils.prune.ln_structured(module, name, amount, n, dim)` ranks
# the slices along `dim` by their **Lₙ norm** (over every other dimension) and keeps the
# `size − k` largest, with `k` from the same amount rule as before (now counting slices). Its
# mask is 1 on whole kept slices, 0 on whole pruned ones. (Ties: ours keeps the lower index.)
# `n` can be any norm order: 1, 2, `np.inf` (largest magnitude), `-np.inf`.
#
# Removing a neuron from a network with a ReLU between the layers is exact when the neuron
# was "dead" (always 0 after the ReLU); otherwise its contribution is lost and the accuracy
# drop says how much it mattered.
#
# Convolutions work the same way with **channels**: output channel `j` of a `Conv2d` is
# `weight[j]` `(C, kh, kw)` and `bias[j]`, and it feeds input channel `j` of the next
# `Conv2d` (`weight[:, j]`), or — after a `Flatten` — `H·W` consecutive inputs of a Linear; a
# `BatchNorm2d` in between loses the same channel. `prune_channels(model, amount)` (given)
# does this for a whole `Sequential`, using your `ln_structured_mask` to choose and your
# `shrink_linear_pair` for Linear pairs.

# %%
#| export
def ln_structured_mask(t: Any, amount: Any, n: float = 2, dim: int = 0,
                       default_mask: Any = None) -> np.ndarray:
    """A mask that prunes whole slices along ``dim`` with the smallest Lₙ norms
    (``torch.nn.utils.prune.LnStructured``).

    Args:
        t: a tensor with at least 2 dimensions (e.g. a weight ``(out, in)``).
        amount: a fraction or count of the slices along ``dim``.
        n: the norm order (1, 2, ``np.inf``, ``-np.inf``, ...).
        dim: the dimension whose slices are kept or pruned (negative counts from the end).
        default_mask: an earlier mask, multiplied in (None: all ones).

    Returns:
        A 0/1 mask of ``t``'s shape and float dtype.

    Raises:
        ValueError: ``t`` has fewer than 2 dimensions, or a bad ``amount``.
        IndexError: ``dim`` out of range.

    APPROACH:
        1. Refuse ``t.ndim < 2``; normalise ``dim`` (``dim + t.ndim`` if negative), refuse
           it if out of range (IndexError).
        2. ``size = t.shape[dim]``; ``k = nparams_to_prune(amount, size)``; ``keep = size - k``.
        3. ``default`` = ones (or the given mask) in ``t``'s float dtype. If ``k == 0``,
           return ``default`` (a copy).
        4. ``norms = np.linalg.norm(np.moveaxis(t, dim, 0).reshape(size, -1), ord=n,
           axis=1)``; ``kept = np.argsort(-norms, kind="stable")[:keep]``.
        5. ``mask = zeros``; set the kept slices to 1 (``np.moveaxis(mask, dim, 0)[kept] = 1``
           writes through the view); return ``mask * default``.

    EXAMPLE:
        >>> w = np.array([[3.0, 4.0], [0.1, 0.1], [1.0, 1.0]], np.float32)
        >>> ln_structured_mask(w, 1, n=2, dim=0)
        array([[1., 1.],
               [0., 0.],
               [1., 1.]], dtype=float32)

    HINT: ``np.moveaxis`` returns a view, so assigning into it fills the right slices of
    ``mask`` whatever ``dim`` is. The norm is over every *other* dimension: one number per
    slice.
    """
    # BEGIN SOLUTION NO PROMPT
    values = _values(t)
    if values.ndim < 2:
        raise ValueError(f"structured pruning needs a tensor with at least 2 dimensions, got "
                         f"shape {values.shape}")
    d = dim + values.ndim if dim < 0 else dim
    if not 0 <= d < values.ndim:
        raise IndexError(f"dim {dim} is out of range for a tensor with {values.ndim} dimensions")
    dtype = values.dtype if values.dtype.kind == "f" else np.float32
    size = values.shape[d]
    k = nparams_to_prune(amount, size)
    empty = [a for a in range(values.ndim) if a != d and values.shape[a] == 0]
    if values.size == 0 and (n < 0 or n == np.inf) and empty:  # max/min: no identity
        raise RuntimeError(f"linalg.vector_norm cannot compute the {n} norm on the dimension "
                           f"{empty[0]} because this dimension is empty")
    default = (np.ones(values.shape, dtype=dtype) if default_mask is None
               else np.array(_values(default_mask), dtype=dtype, copy=True))
    if k == 0:
        return default
    norms = np.linalg.norm(np.moveaxis(values, d, 0).reshape(size, -1).astype(np.float64),
                           ord=n, axis=1)
    kept = np.argsort(-norms, kind="stable")[:size - k]
    mask = np.zeros(values.shape, dtype=dtype)
    np.moveaxis(mask, d, 0)[kept] = 1
    return mask * default
    # END SOLUTION
    raise NotImplementedError("module 16: implement ln_structured_mask (see its docstring)")  # STUB


def ln_structured(module: Any, name: str, amount: Any, n: float, dim: int) -> Any:
    """Prune whole slices of ``module.<name>`` along ``dim`` by Lₙ norm, in place
    (``torch.nn.utils.prune.ln_structured``); returns ``module``."""
    param, mask = _masked(module, name)
    mask.data[...] = ln_structured_mask(param.data, amount, n, dim, default_mask=mask.data)
    _mark_pruned(module, name)
    return module


def shrink_linear_pair(layer: Linear, next_layer: Linear, keep: Any) -> tuple[Linear, Linear]:
    """Keep only the hidden neurons ``keep`` between two Linear layers.

    Args:
        layer: ``Linear(in, H)``; its outputs are the hidden neurons.
        next_layer: ``Linear(H, out)``, reading them (possibly after an activation).
        keep: indices of the neurons to keep, in ``0..H-1``.

    Returns:
        ``(Linear(in, len(keep)), Linear(len(keep), out))``, new layers with copied values:
        rows ``keep`` of ``layer.weight`` and entries ``keep`` of its bias; columns ``keep``
        of ``next_layer.weight`` and all of its bias.

    Raises:
        ValueError: ``layer.out_features != next_layer.in_features``.

    APPROACH:
        1. Check the sizes match; ``keep = np.sort(np.asarray(keep, dtype=np.int64))``.
        2. ``w1 = layer.weight.data[keep]`` ``(k, in)``; ``b1 = layer.bias.data[keep]`` (or
           None); ``w2 = next_layer.weight.data[:, keep]`` ``(out, k)``; ``b2 =
           next_layer.bias.data`` (or None) — copies.
        3. Build the layers with ``_new_linear(Linear, w, b)`` (given: it draws no random
           numbers) and return them.

    EXAMPLE:
        >>> a, b = shrink_linear_pair(Linear(5, 4), Linear(4, 3), [0, 2, 3])
        >>> a.weight.shape, a.bias.shape, b.weight.shape
        ((3, 5), (3,), (3, 3))

    HINT: the next layer loses *columns* (its inputs), not rows; indexing with a NumPy array
    copies, so the new layers never share memory with the old ones.
    """
    # BEGIN SOLUTION NO PROMPT
    if layer.out_features != next_layer.in_features:
        raise ValueError(f"shrink_linear_pair: {layer.out_features} outputs do not feed "
                         f"{next_layer.in_features} inputs")
    idx = np.sort(np.asarray(keep, dtype=np.int64))
    w1 = layer.weight.data[idx]                                        # (k, in)
    b1 = None if layer.bias is None else layer.bias.data[idx]          # (k,)
    w2 = next_layer.weight.data[:, idx]                                # (out, k)
    b2 = None if next_layer.bias is None else next_layer.bias.data.copy()
    return _new_linear(Linear, w1, b1), _new_linear(Linear, w2, b2)
    # END SOLUTION
    raise NotImplementedError("module 16: implement shrink_linear_pair (see its docstring)")  # STUB


def _keep_outputs(layer: Any, keep: np.ndarray) -> Any:
    """``layer`` (Linear or Conv2d) with only the output neurons / channels ``keep``."""
    bias = None if layer.bias is None else layer.bias.data[keep]
    if isinstance(layer, Conv2d):
        return _new_conv(layer, layer.weight.data[keep], bias)
    return _new_linear(Linear, layer.weight.data[keep], bias)


def _keep_inputs(layer: Any, keep: np.ndarray, per_channel: int = 1) -> Any:
    """``layer`` reading only the inputs ``keep``; a Linear after a Flatten reads
    ``per_channel`` consecutive features per channel."""
    bias = None if layer.bias is None else layer.bias.data.copy()
    if isinstance(layer, Conv2d):
        return _new_conv(layer, layer.weight.data[:, keep], bias)
    cols = (keep[:, None] * per_channel + np.arange(per_channel)).reshape(-1)
    return _new_linear(Linear, layer.weight.data[:, cols], bias)


def _keep_batch_norm(bn: BatchNorm2d, keep: np.ndarray) -> BatchNorm2d:
    """A copy of ``bn`` for the channels ``keep`` only (parameters and running statistics)."""
    new = copy.deepcopy(bn)
    new.num_features = len(keep)
    for table in (new._parameters, new._buffers):
        for name, value in list(table.items()):
            if value is not None and value.data.ndim == 1:
                sliced = value.data[keep].copy()
                setattr(new, name, Parameter(sliced) if table is new._parameters
                        else Tensor(sliced))
    return new


def prune_channels(model: Sequential, amount: Any, n: float = 2) -> Sequential:
    """A copy of a ``Sequential`` network with ``amount`` of the output neurons / channels of
    every Linear or Conv2d that feeds another one removed (lowest Lₙ norm of their weight
    slices first), and the next layer shrunk to match.

    Between two such layers only parameter-free modules (activations, pooling, Dropout,
    Flatten) and ``BatchNorm2d`` (sliced along) may sit; a ``Flatten`` between a Conv2d and a
    Linear removes each dropped channel's ``H·W`` input features. Linear pairs go through
    ``shrink_linear_pair``.
    """
    model = copy.deepcopy(model)
    names = list(model._modules)
    layer_at = [i for i, name in enumerate(names)
                if type(model._modules[name]) in (Linear, Conv2d)]
    for i, j in zip(layer_at, layer_at[1:], strict=False):
        between = [names[k] for k in range(i + 1, j)]
        layer, nxt = model._modules[names[i]], model._modules[names[j]]
        if any(getattr(m, "groups", 1) != 1 for m in (layer, nxt)):
            raise ValueError("prune_channels: grouped convolutions (groups > 1) tie their "
                             "channels together and cannot be pruned channel by channel")
        for k in between:
            m = model._modules[k]
            if list(m.parameters()) and not isinstance(m, BatchNorm2d):
                raise ValueError(f"prune_channels: {type(m).__name__} between two layers has "
                                 "parameters; only activations, pooling, Dropout, Flatten and "
                                 "BatchNorm2d can be pruned through")
        mask = ln_structured_mask(layer.weight.data, amount, n, dim=0)
        keep = np.flatnonzero(mask.reshape(mask.shape[0], -1).any(axis=1))
        if type(layer) is Linear and type(nxt) is Linear:
            new_layer, new_next = shrink_linear_pair(layer, nxt, keep)
        else:
            per_channel = 1
            if isinstance(layer, Conv2d) and type(nxt) is Linear:
                per_channel = nxt.in_features // layer.out_channels
            new_layer, new_next = _keep_outputs(layer, keep), _keep_inputs(nxt, keep, per_channel)
        for k in between:
            if isinstance(model._modules[k], BatchNorm2d):
                model.add_module(k, _keep_batch_norm(model._modules[k], keep))
        model.add_module(names[i], new_layer)
        model.add_module(names[j], new_next)
    return model


# %% [raw]
# # BEGIN QUESTION
# name: structured
# points: 0

# %% [markdown]
# ### Check: structured pruning

# %% [raw]
# # BEGIN TESTS

# %%
def test_ln_structured_mask_prunes_whole_slices(ln_structured_mask, np):
    w = np.array([[3.0, 4.0], [0.1, 0.1], [1.0, 1.0]], np.float32)
    m = ln_structured_mask(w, 1, n=2, dim=0)
    assert m.tolist() == [[1, 1], [0, 0], [1, 1]], (
        f"rows have L2 norms 5, 0.14, 1.41: the smallest row goes; got {m.tolist()}")
    cols = ln_structured_mask(w, 0.5, n=1, dim=1)
    assert cols.tolist() == [[0, 1], [0, 1], [0, 1]], (
        f"dim=1: columns have L1 norms 4.1 and 5.1, round(0.5 * 2) = 1 goes; got {cols.tolist()}")
    inf = ln_structured_mask(np.array([[0.1, 5.0], [2.0, 2.0]], np.float32), 1, n=np.inf, dim=0)
    assert inf.tolist() == [[1, 1], [0, 0]], (
        f"n=inf ranks rows by their largest |w| (5 vs 2), got {inf.tolist()}")
    try:
        ln_structured_mask(np.ones(4, np.float32), 1)
    except ValueError:
        pass
    else:
        raise AssertionError("a 1-D tensor has no slices to prune: raise ValueError")

# %%
def test_shrink_linear_pair_keeps_the_function_of_kept_neurons(shrink_linear_pair, Linear,
                                                               ReLU, Tensor, manual_seed,
                                                               no_grad, np):
    manual_seed(0)
    a, b = Linear(5, 4), Linear(4, 3)
    b.weight.data[:, 1] = 0.0            # neuron 1 feeds nothing: removing it changes nothing
    a2, b2 = shrink_linear_pair(a, b, [3, 0, 2])
    assert (a2.weight.shape, a2.bias.shape, b2.weight.shape, b2.bias.shape) == (
        (3, 5), (3,), (3, 3), (3,)), (
        f"3 kept neurons: weights (3, 5) and (3, 3), got {a2.weight.shape} and {b2.weight.shape}")
    src = a.weight.numpy()
    rows = [next((i for i in range(4) if np.allclose(r, src[i])), None) for r in a2.weight.numpy()]
    assert np.allclose(a2.weight.numpy(), src[[0, 2, 3]]), (
        f"the first layer keeps rows 0, 2, 3 in their original order, got rows {rows} of "
        "a.weight (None: no row of it)")
    x = Tensor(np.random.default_rng(0).standard_normal((6, 5)).astype(np.float32))
    with no_grad():
        out, ref = b2(ReLU()(a2(x))).numpy(), b(ReLU()(a(x))).numpy()
    assert np.allclose(out, ref, atol=1e-6), (
        f"removing a neuron that feeds nothing must not change the output, max difference "
        f"{np.abs(out - ref).max():.3g}: the next layer loses the matching *columns*")
    a2.weight.data[...] = 0
    assert not np.all(a.weight.data == 0), (
        f"the new layers hold copies, not views: zeroing a2.weight left "
        f"{np.count_nonzero(a.weight.data)} nonzero entries in the original a.weight")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 5. Low-rank factorisation with the SVD
#
# Every matrix factors as `W = U Σ Vᵀ` (the singular value decomposition): `U (out, m)` and
# `V (in, m)` have orthonormal columns and `Σ` holds the singular values `σ₁ ≥ σ₂ ≥ … ≥ 0`,
# `m = min(out, in)`. Keeping the `r` largest gives the best rank-`r` approximation
# (Eckart–Young), and its error is exactly what was dropped:
#
# $$\frac{\|W - W_r\|_F}{\|W\|_F} = \sqrt{\frac{\sum_{i>r} \sigma_i^2}{\sum_i \sigma_i^2}}$$
#
# `W_r = (U_r)(Σ_r V_rᵀ)` is the product of an `(out, r)` and an `(r, in)` matrix, i.e. two
# Linear layers with `r` units between them and no activation:
#
# ```
#   x (N, in) ──Linear(in, r, bias=False)──► (N, r) ──Linear(r, out)──► (N, out)
#                weight Σ_r V_rᵀ  (r, in)              weight U_r (out, r), the original bias
#
#   parameters:  in·out + out    →    r·(in + out) + out     smaller when r < in·out / (in + out)
# ```
#
# Trained weight matrices often have quickly decaying singular values, so a modest `r` keeps
# most of the function; random matrices do not, which is one way to see that training
# creates structure.

# %%
#| export
def low_rank_linear(linear: Linear, rank: int) -> Sequential:
    """Replace ``linear`` by ``Linear(in, rank, bias=False)`` then ``Linear(rank, out)``,
    the best rank-``rank`` approximation of its weight (truncated SVD).

    Args:
        linear: ``Linear(in, out)``.
        rank: ``1 <= rank <= min(in, out)``.

    Returns:
        ``Sequential(first, second)`` with ``first.weight = Σ_r V_rᵀ`` ``(r, in)``, no bias,
        and ``second.weight = U_r`` ``(out, r)`` with a copy of ``linear``'s bias; float32.

    Raises:
        ValueError: ``rank`` out of range.

    APPROACH:
        1. Check the rank; ``u, s, vt = np.linalg.svd(W as float64, full_matrices=False)``.
        2. ``first = _new_linear(Linear, (s[:r, None] * vt[:r]).astype(np.float32), None)``.
        3. ``second = _new_linear(Linear, u[:, :r].astype(np.float32), a copy of the bias)``.
        4. Return ``Sequential(first, second)``.

    EXAMPLE:
        >>> lin = Linear(3, 2); lin.weight.data[...] = [[2.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
        >>> m = low_rank_linear(lin, 1)
        >>> (m[1].weight.data @ m[0].weight.data).round(6).tolist()
        [[2.0, 0.0, 0.0], [0.0, 0.0, 0.0]]

    HINT: ``np.linalg.svd`` returns ``Vᵀ`` (called ``vt``), not ``V``, and singular values in
    decreasing order: the first ``r`` are the ones to keep. Compute in float64 and cast at
    the end; the signs of ``u`` and ``vt`` are arbitrary, their product is not.
    """
    # BEGIN SOLUTION NO PROMPT
    m = min(linear.in_features, linear.out_features)
    if not 1 <= rank <= m:
        raise ValueError(f"low_rank_linear: rank must be in 1..{m}, got {rank}")
    u, s, vt = np.linalg.svd(linear.weight.data.astype(np.float64), full_matrices=False)
    first = _new_linear(Linear, (s[:rank, None] * vt[:rank]).astype(np.float32), None)
    bias = None if linear.bias is None else linear.bias.data.copy()
    second = _new_linear(Linear, u[:, :rank].astype(np.float32), bias)
    return Sequential(first, second)
    # END SOLUTION
    raise NotImplementedError("module 16: implement low_rank_linear (see its docstring)")  # STUB


def relative_error(approx: Any, exact: Any) -> float:
    """``‖approx − exact‖_F / ‖exact‖_F`` in float64."""
    a = np.asarray(_values(approx), dtype=np.float64)
    e = np.asarray(_values(exact), dtype=np.float64)
    return float(np.linalg.norm(a - e) / np.linalg.norm(e))


# %% [raw]
# # BEGIN QUESTION
# name: low_rank
# points: 0

# %% [markdown]
# ### Check: low-rank factorisation

# %% [raw]
# # BEGIN TESTS

# %%
def test_low_rank_linear_is_the_truncated_svd(low_rank_linear, Linear, Tensor, manual_seed,
                                              no_grad, np):
    manual_seed(0)
    lin = Linear(6, 4)
    full = low_rank_linear(lin, 4)
    assert full[0].weight.shape == (4, 6) and full[1].weight.shape == (4, 4), (
        f"rank 4: weights (4, 6) then (4, 4), got {full[0].weight.shape}, {full[1].weight.shape}")
    assert full[0].bias is None and np.allclose(full[1].bias.numpy(), lin.bias.numpy()), (
        f"the bias is added once: none in the first layer, the original "
        f"{lin.bias.numpy().round(4)} in the second; got {getattr(full[0].bias, 'data', None)} "
        f"and {getattr(full[1].bias, 'data', None)}")
    x = Tensor(np.random.default_rng(0).standard_normal((3, 6)).astype(np.float32))
    with no_grad():
        out, ref = full(x).numpy(), lin(x).numpy()
    assert np.allclose(out, ref, atol=1e-5), (
        f"full rank reproduces the layer exactly (U Σ Vᵀ = W), max difference "
        f"{np.abs(out - ref).max():.3g}")
    one = low_rank_linear(lin, 1)
    w = lin.weight.numpy().astype(np.float64)
    s = np.linalg.svd(w, compute_uv=False)
    got = np.linalg.norm(one[1].weight.numpy() @ one[0].weight.numpy() - w) / np.linalg.norm(w)
    expected = np.sqrt((s[1:] ** 2).sum() / (s ** 2).sum())
    assert np.isclose(got, expected, rtol=1e-4), (
        f"rank 1 keeps the largest singular value: relative error {expected:.4f} expected "
        f"(Eckart-Young), got {got:.4f} — are you keeping the *first* r values of s?")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 6. Knowledge distillation
#
# A small model trained on hard labels learns "this is a 3". A big trained model knows more:
# its outputs say "a 3, a bit like an 8, not at all like a 1". **Distillation** (Hinton,
# Vinyals & Dean, 2015) trains the small *student* to match the big *teacher*'s output
# distribution, softened by a **temperature** `T` so the small probabilities become visible:
#
# ```
#   teacher logits [9, 4, 1] →  T = 1: softmax = [0.993, 0.007, 0.000]     (almost one-hot)
#                               T = 4: softmax = [0.703, 0.202, 0.095]     (the "dark knowledge")
# ```

# %%
for temperature in (1, 4):
    softened = np.exp(np.array([9.0, 4.0, 1.0]) / temperature)
    print(f"T = {temperature}: softmax = {np.round(softened / softened.sum(), 3).tolist()}")

# %% [markdown]
# The difference between two distributions is the **KL divergence**
# `KL(p ‖ q) = Σ p · (log p − log q)`. PyTorch's `kl_div(input, target)` takes the
# **log**-probabilities of the model as `input` and the target distribution as `target`
# (probabilities, or log-probabilities with `log_target=True`), element by element:
#
# ```
#   log_target=False:  target · (log target − input)      (0 where target = 0)
#   log_target=True:   exp(target) · (target − input)
#   reduction:  "none" | "sum" | "mean" (over all elements) | "batchmean" (sum / batch size:
#               the true KL per example — "mean" also divides by the number of classes)
# ```
#
# Its gradients: `∂/∂input = −target` (or `−exp(target)`), and `∂/∂target = log target + 1 −
# input` (or `exp(target)·(target − input + 1)`). The distillation loss mixes the soft and the
# hard objective:
#
# $$\mathcal{L} = \alpha\, T^2\, \mathrm{KL}\big(\mathrm{softmax}(z_t/T)\,\|\,\mathrm{softmax}(z_s/T)\big)
#   + (1-\alpha)\, \mathrm{CE}(z_s, y)$$
#
# Why `T²`? The gradient of the soft term with respect to the student's logit `z_i` is
# `(1/T)·(q_i − p_i)`, with `q` the student's and `p` the teacher's softened probabilities: one
# `1/T` from dividing the logits by `T`. At high temperature both distributions flatten toward
# uniform and their difference shrinks like `1/T` too (`q_i − p_i ≈ (z_i − v_i)/(N·T)` for `N`
# classes and zero-mean logits: Hinton et al., 2015, section 2.1), so the gradient shrinks like
# `1/T²`. Multiplying by `T²` keeps its size comparable to the hard term as you change `T`. The
# teacher is fixed: its logits get no gradient.

# %%
#| export
class _KLDivFn(Function):
    """Element-wise KL divergence terms of ``torch.nn.functional.kl_div`` (no reduction)."""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray, t: np.ndarray,
                log_target: bool = False) -> np.ndarray:
        """Per-element loss: ``t·(log t − x)`` (0 where ``t == 0``), or with ``log_target``
        ``exp(t)·(t − x)``.

        APPROACH:
            1. ``log_target``: ``e = np.exp(t)``; save ``(x, t, e)`` and return ``e * (t - x)``.
            2. Otherwise, inside ``np.errstate(divide="ignore", invalid="ignore")``:
               ``log_t = np.log(t)``; ``xlogx = np.where(t == 0, 0, t * log_t)``; save
               ``(x, t, log_t)`` and return ``xlogx - t * x``.
            3. Keep the dtype of ``x`` (``.astype(x.dtype, copy=False)``); set
               ``ctx.log_target = log_target``.

        EXAMPLE:
            >>> _KLDivFn.forward(Context(), np.log(np.array([0.5, 0.5])), np.array([1.0, 0.0]))
            array([0.69314718, 0.        ])

        HINT: ``0 · log 0`` is NaN in NumPy, but the limit is 0 — that is PyTorch's ``xlogy``;
        a negative target has no logarithm and gives NaN, as in PyTorch.
        """
        # BEGIN SOLUTION NO PROMPT
        ctx.log_target = log_target
        if log_target:
            e = np.exp(t)
            ctx.save_for_backward(x, t, e)
            return (e * (t - x)).astype(x.dtype, copy=False)
        with np.errstate(divide="ignore", invalid="ignore"):
            log_t = np.log(t)
            xlogx = np.where(t == 0, 0, t * log_t)
        ctx.save_for_backward(x, t, log_t)
        return (xlogx - t * x).astype(x.dtype, copy=False)
        # END SOLUTION
        raise NotImplementedError("module 16: implement _KLDivFn.forward (see its docstring)")  # STUB

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(grad · ∂loss/∂x, grad · ∂loss/∂t)``.

        APPROACH:
            1. ``log_target``: ``x, t, e = ctx.saved``; ``dx = -e``;
               ``dt = e * (t - x + 1)``.
            2. Otherwise: ``x, t, log_t = ctx.saved``; ``dx = -t``; ``dt = log_t + 1 - x``.
            3. Return ``((grad * dx).astype(x.dtype), (grad * dt).astype(t.dtype))``.

        EXAMPLE: ``x = log 0.5``, ``t = 1`` and ``grad = 1``: ``dx = -1``,
        ``dt = 0 + 1 - log 0.5 = 1.693``.

        HINT: the input's gradient does not depend on the input (the loss is linear in it);
        a target of 0 has an infinite target gradient (``log 0``), which is why teachers'
        probabilities are passed as constants (no gradient) or as log-probabilities.
        """
        # BEGIN SOLUTION NO PROMPT
        if ctx.log_target:
            x, t, e = ctx.saved
            dx, dt = -e, e * (t - x + 1)
        else:
            x, t, log_t = ctx.saved
            dx, dt = -t, log_t + 1 - x
        return (grad * dx).astype(x.dtype, copy=False), (grad * dt).astype(t.dtype, copy=False)
        # END SOLUTION
        raise NotImplementedError("module 16: implement _KLDivFn.backward (see its docstring)")  # STUB


_REDUCTIONS = ("none", "mean", "sum", "batchmean")


def kl_div(input: Tensor, target: Tensor, reduction: str = "mean",  # noqa: A002
           log_target: bool = False) -> Tensor:
    """KL divergence loss, ``torch.nn.functional.kl_div``.

    Args:
        input: log-probabilities of the model, any shape (usually ``(N, C)``).
        target: probabilities (or log-probabilities with ``log_target=True``), ``input``'s
            shape.
        reduction: ``"none"``, ``"mean"`` (over all elements), ``"sum"`` or ``"batchmean"``
            (the sum divided by ``input.shape[0]``; just the sum for a 0-d input).
        log_target: whether ``target`` holds log-probabilities.

    Returns:
        The loss: ``input``'s shape for ``"none"``, else a 0-d Tensor.

    Raises:
        ValueError: an unknown reduction, or shapes that differ.

    APPROACH:
        1. Check ``reduction`` and the shapes.
        2. ``loss = _KLDivFn.apply(input, target, log_target=log_target)``.
        3. ``"none"``: ``loss``; ``"sum"``: ``loss.sum()``; ``"mean"``: ``loss.mean()``;
           ``"batchmean"``: ``loss.sum() / input.shape[0]`` when ``input.ndim > 0``, else
           ``loss.sum()``.

    EXAMPLE:
        >>> p = Tensor([[0.5, 0.5], [0.9, 0.1]]); q = Tensor([[0.5, 0.5], [0.5, 0.5]])
        >>> round(kl_div(q.log(), p, reduction="batchmean").item(), 4)
        0.184

    HINT: the reductions differ by a factor: "mean" divides by every element (N·C),
    "batchmean" only by N; only "batchmean" is the KL divergence per example (PyTorch warns
    about "mean" for that reason).
    """
    # BEGIN SOLUTION NO PROMPT
    if reduction not in _REDUCTIONS:
        raise ValueError(f"kl_div: reduction must be one of {_REDUCTIONS}, got {reduction!r}")
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(f"kl_div: input shape {tuple(input.shape)} and target shape "
                         f"{tuple(target.shape)} differ")
    loss = _KLDivFn.apply(input, target, log_target=log_target)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.mean()
    return loss.sum() / input.shape[0] if input.ndim > 0 else loss.sum()
    # END SOLUTION
    raise NotImplementedError("module 16: implement kl_div (see its docstring)")  # STUB


class KLDivLoss(Module):
    """``torch.nn.KLDivLoss(reduction="mean", log_target=False)``: ``kl_div`` as a module."""

    def __init__(self, reduction: str = "mean", log_target: bool = False) -> None:
        super().__init__()
        if reduction not in _REDUCTIONS:
            raise ValueError(f"KLDivLoss: reduction must be one of {_REDUCTIONS}")
        self.reduction = reduction
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


def distillation_loss(student_logits: Tensor, teacher_logits: Tensor, target: Tensor,
                      temperature: float = 4.0, alpha: float = 0.5) -> Tensor:
    """Hinton et al.'s loss: ``α·T²·KL(teacher_T ‖ student_T) + (1 − α)·CE(student, target)``.

    Args:
        student_logits: ``(N, C)``, the model being trained.
        teacher_logits: ``(N, C)``, a fixed model's outputs (no gradient flows to it).
        target: ``(N,)`` int64 class labels.
        temperature: ``T > 0``; both distributions are ``softmax(logits / T)``.
        alpha: the weight of the soft term, in [0, 1].

    Returns:
        A 0-d Tensor.

    Raises:
        ValueError: ``temperature <= 0`` or ``alpha`` outside [0, 1].

    APPROACH:
        1. Check the arguments; ``T = float(temperature)``.
        2. ``log_s = log_softmax(student_logits / T, dim=1)``;
           ``log_t = log_softmax(teacher_logits.detach() / T, dim=1)``.
        3. ``soft = kl_div(log_s, log_t, reduction="batchmean", log_target=True) * (T * T)``.
        4. ``hard = cross_entropy(student_logits, target)`` (temperature 1).
        5. Return ``soft * alpha + hard * (1 - alpha)``.

    EXAMPLE: when the student's logits equal the teacher's, the soft term is 0 and the loss is
    ``(1 − α)`` times the cross-entropy:
        >>> z = Tensor([[2.0, 0.5, -1.0]]); y = Tensor(np.array([0]))
        >>> round(distillation_loss(z, z, y, 4.0, 0.5).item(), 4), round(0.5 * cross_entropy(z, y).item(), 4)
        (0.1207, 0.1207)

    HINT: ``detach()`` the teacher: otherwise a backward pass would also "train" the
    teacher's outputs towards the student. The hard term uses the raw logits, not ``/ T``.
    """
    # BEGIN SOLUTION NO PROMPT
    if not temperature > 0:
        raise ValueError(f"distillation_loss: temperature must be positive, got {temperature}")
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"distillation_loss: alpha must be in [0, 1], got {alpha}")
    t = float(temperature)
    log_s = log_softmax(student_logits / t, dim=1)
    log_t = log_softmax(teacher_logits.detach() / t, dim=1)
    soft = kl_div(log_s, log_t, reduction="batchmean", log_target=True) * (t * t)
    hard = cross_entropy(student_logits, target)
    return soft * alpha + hard * (1.0 - alpha)
    # END SOLUTION
    raise NotImplementedError("module 16: implement distillation_loss (see its docstring)")  # STUB


# %% [raw]
# # BEGIN QUESTION
# name: distillation
# points: 0

# %% [markdown]
# ### Check: KL divergence and distillation

# %% [raw]
# # BEGIN TESTS

# %%
def test_kl_div_values_reductions_and_gradients(kl_div, Tensor, np):
    p = np.array([[0.5, 0.5, 0.0], [0.7, 0.2, 0.1]])
    q = np.array([[0.25, 0.25, 0.5], [0.6, 0.3, 0.1]])
    x = Tensor(np.log(q), requires_grad=True)
    terms = np.where(p > 0, p * np.log(np.where(p > 0, p, 1) / q), 0)
    none = kl_div(x, Tensor(p), reduction="none")
    assert none.shape == (2, 3) and np.allclose(none.numpy(), terms), (
        f"element-wise target * (log target - input), 0 where target is 0: expected "
        f"{terms.round(4).tolist()}, got {np.round(none.numpy(), 4).tolist()}")
    got = [kl_div(x, Tensor(p), reduction=r).item() for r in ("sum", "mean", "batchmean")]
    want = [terms.sum(), terms.sum() / 6, terms.sum() / 2]
    assert np.allclose(got, want), (
        f"sum, mean (over all 6 elements), batchmean (over the 2 rows): expected "
        f"{np.round(want, 4).tolist()}, got {np.round(got, 4).tolist()}")
    logp = Tensor(np.log([[0.7, 0.2, 0.1]]), requires_grad=True)
    as_log = kl_div(x[1:], logp, reduction="sum", log_target=True)
    summed = as_log.item()
    assert np.isclose(summed, terms[1].sum()), (
        f"log_target=True takes log-probabilities: exp(target) * (target - input) sums to "
        f"{terms[1].sum():.5f}, got {summed:.5f}")
    kl_div(x, Tensor(p), reduction="sum").backward()
    assert np.allclose(x.grad.numpy(), -p), (
        f"d/dinput of the summed loss is -target, got {np.round(x.grad.numpy(), 4).tolist()}")
    as_log.backward()
    grad_target = logp.grad.numpy()
    want_target = [0.7, 0.2, 0.1] * (np.log([0.7, 0.2, 0.1]) - np.log([0.6, 0.3, 0.1]) + 1)
    assert np.allclose(grad_target, want_target), (
        f"d/dtarget with log_target: exp(target) * (target - input + 1) = "
        f"{np.round(want_target, 4).tolist()}, got {np.round(grad_target, 4).tolist()}")

# %%
def test_distillation_loss_mixes_soft_and_hard_terms(distillation_loss, kl_div, log_softmax,
                                                     cross_entropy, Tensor, np):
    rng = np.random.default_rng(0)
    s = Tensor(rng.standard_normal((4, 5)), requires_grad=True)
    t = Tensor(rng.standard_normal((4, 5)) * 3, requires_grad=True)
    y = Tensor(np.array([0, 3, 1, 4]))
    loss = distillation_loss(s, t, y, temperature=2.0, alpha=0.7)
    soft = kl_div(log_softmax(s / 2.0, dim=1), log_softmax(t / 2.0, dim=1),
                  reduction="batchmean", log_target=True).item() * 4.0
    hard = cross_entropy(s, y).item()
    assert np.isclose(loss.item(), 0.7 * soft + 0.3 * hard), (
        f"alpha * T^2 * KL (batchmean) + (1 - alpha) * CE: expected "
        f"{0.7 * soft + 0.3 * hard:.5f}, got {loss.item():.5f}")
    loss.backward()
    assert s.grad is not None and t.grad is None, (
        f"the student gets a gradient, the teacher none: detach the teacher's logits; got "
        f"s.grad {type(s.grad).__name__}, t.grad {type(t.grad).__name__}")
    same = distillation_loss(s, s, y, temperature=3.0, alpha=1.0)
    assert np.isclose(same.item(), 0.0, atol=1e-7), (
        f"a student equal to its teacher has no soft loss, got {same.item()}")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 7. Systems view: what does each technique cost in accuracy?
#
# Compression is a trade: parameters (or bytes, or FLOPs) against accuracy. Measure it on
# the 1986 milestone's MLP (`64 → 64 → 10`, 4,810 parameters) trained on the digits, four
# ways:
#
# ```
#   technique                 what shrinks                         dense FLOPs
#   global L1 pruning         non-zero weights                     unchanged (zeros still multiplied)
#   structured (neurons)      hidden width: both layers            ∝ width
#   low-rank (layer 1)        64·64 → r·(64 + 64)                  ∝ r
#   distillation              a student 64 → 16 → 10 from scratch  ∝ student size
# ```
#
# ### Exercise: measure it
#
# Run the cell (about ten seconds). It trains the teacher, then reports for each variant the
# parameters it stores (non-zero ones for pruning), test accuracy and the drop in points; it
# fine-tunes the 50% pruned model for 3 epochs; for low rank it also prints the relative error
# of the factorised weight; and it trains the small student twice — from labels only and by
# distillation (`T = 2`, `α = 0.5`) — for the same number of epochs. Predict
# first: how far can global pruning go before the accuracy drops by 2 points? Which
# technique holds up best per parameter removed?

# %%
from tinytorch_data.loaders import load_digits  # the course's shipped data (checksum verified)

from tinytorch.losses import CrossEntropyLoss
from tinytorch.optimizers import Adam
from tinytorch.training import Trainer, iterate_minibatches

digits = load_digits()
train_x = digits.train_x.astype(np.float32) / np.float32(16.0)      # (1437, 64) in [0, 1]
test_x = Tensor(digits.test_x.astype(np.float32) / np.float32(16.0))  # (360, 64)


def accuracy_of(model):
    with no_grad():
        return float((model(test_x).numpy().argmax(axis=1) == digits.test_y).mean())


manual_seed(0)
teacher = Sequential(Linear(64, 64), ReLU(), Linear(64, 10))
trainer = Trainer(teacher, CrossEntropyLoss(), Adam(teacher.parameters(), lr=3e-3))
batch_rng = np.random.default_rng(0)
for _ in range(30):
    trainer.train_epoch(train_x, digits.train_y, 32, batch_rng)
teacher.eval()
base_params, base_acc = parameter_count(teacher), accuracy_of(teacher)
print(f"{'variant':28s} {'params':>7s} {'accuracy':>9s} {'drop (pts)':>11s}")


drops = {}  # variant -> accuracy drop in points


def report(name, model, params, extra=""):
    acc = accuracy_of(model)
    drops[name] = 100 * (base_acc - acc)
    print(f"{name:28s} {params:7,d} {acc:9.2%} {drops[name]:11.2f} {extra}")


report("float teacher", teacher, base_params)
for amount in (0.3, 0.5, 0.7, 0.9):
    for scope in ("global", "local"):
        pruned = prune_model(teacher, amount, scope=scope)
        report(f"{scope} L1 pruning {amount:.0%}", pruned, parameter_count(pruned, nonzero=True),
               f"sparsity {sparsity_report(pruned)['global']['sparsity']:.2f}")
tuned = prune_model(teacher, 0.5)                    # fine-tune: the masks keep the zeros
tuner = Trainer(tuned, CrossEntropyLoss(), Adam(tuned.parameters(), lr=1e-3))
for _ in range(3):
    tuner.train_epoch(train_x, digits.train_y, 32, batch_rng)
tuned.eval()
report("global 50% + 3 epochs tuning", tuned, parameter_count(tuned, nonzero=True),
       f"sparsity {sparsity_report(tuned)['global']['sparsity']:.2f}")
for amount in (0.25, 0.5, 0.75):
    slim = prune_channels(teacher, amount)
    report(f"neurons removed {amount:.0%}", slim, parameter_count(slim),
           f"hidden width {slim[0].out_features}")
for rank in (4, 8, 16, 32):
    factored = Sequential(low_rank_linear(teacher[0], rank), ReLU(), teacher[2])
    product = factored[0][1].weight.data @ factored[0][0].weight.data
    report(f"low rank r={rank} (layer 1)", factored, parameter_count(factored),
           f"relative error {relative_error(product, teacher[0].weight.data):.3f}, "
           f"{parameter_count(factored) / base_params:.0%} of the parameters")

with no_grad():
    teacher_logits = teacher(Tensor(train_x)).numpy()                   # (1437, 10)
students = {}
for name, alpha in (("student 16, labels only", 0.0), ("student 16, distilled", 0.5)):
    accuracies = []
    for seed in (1, 2, 3):                   # a fair comparison needs several seeds
        manual_seed(seed)
        student = Sequential(Linear(64, 16), ReLU(), Linear(16, 10))
        opt = Adam(student.parameters(), lr=3e-3)
        rng = np.random.default_rng(seed)
        for _ in range(20):
            for xb, yb in iterate_minibatches(np.arange(len(train_x)), digits.train_y, 32,
                                              rng=rng):
                opt.zero_grad()
                loss = distillation_loss(student(Tensor(train_x[xb])),
                                         Tensor(teacher_logits[xb]), Tensor(yb),
                                         temperature=2.0, alpha=alpha)
                loss.backward()
                opt.step()
        student.eval()
        accuracies.append(accuracy_of(student))
    students[name] = 100 * np.array(accuracies)
    report(name, student, parameter_count(student),
           f"seeds 1-3: {', '.join(f'{a:.2%}' for a in accuracies)}; mean {np.mean(accuracies):.2%}")
print("local minus global drop (points): " + ", ".join(
    f"{a}% {drops[f'local L1 pruning {a}%'] - drops[f'global L1 pruning {a}%']:+.2f}"
    for a in (30, 50, 70, 90)))
labels, distilled = students.values()
print(f"students: mean drop {base_acc * 100 - max(labels.mean(), distilled.mean()):.2f} to "
      f"{base_acc * 100 - min(labels.mean(), distilled.mean()):.2f} points; the two means differ "
      f"by {abs(labels.mean() - distilled.mean()):.2f}, the seeds of one kind by up to "
      f"{max(np.ptp(labels), np.ptp(distilled)):.2f}")
# Expected shape: one-shot global pruning costs between 0.5 and 3 points at 50% and recovers
# with 3 epochs of fine-tuning (drop at most 1 point; sparsity stays 0.50: the masks hold), 70%
# costs over 10 points and 90% most of the accuracy (over 30 points). Local pruning is much
# worse at 90% (at least 5 points more lost), while at 30-70% global and local land within a
# few points of each other, either way round (local minus global between -3 and 3 at 70%).
# Removing neurons costs more per parameter removed; rank 16 keeps the accuracy (drop at most
# 1 point) with 57% of the parameters, rank 4 does not (over 10 points). The 16-unit student
# (a quarter of the parameters) ends within about a point of the teacher either way (mean drop
# at most 2 points), and distilled and label-only students differ by a few tenths of a point
# (at most 1 point) — no more than the seed-to-seed spread.

# %% [markdown]
# What the numbers say. Pruning removes the *parameters* but not the *work*: the masked
# matrices are as large as before, and a dense matmul multiplies the zeros too; a real speed-up
# needs structured sparsity (smaller matrices: neuron removal, low rank), hardware patterns
# such as 2:4 sparsity (two zeros in every four weights, which recent GPUs skip), or sparse
# kernels at very high sparsity. Global pruning beats local clearly at high sparsity (90%)
# because the layers are not equally redundant — the 64×10 output layer has few weights to
# spare, and local pruning takes 90% of them too; at moderate amounts the two are close, and
# either can come out ahead on a given run.
# Distillation shows no clear gain *here*, and measuring several seeds is what tells you so:
# the small student already learns almost everything the teacher knows about this easy task
# from the labels. The teacher's soft targets pay off when it knows much more than the student
# can learn from labels alone — a large teacher on a hard task (Hinton et al. distilled an
# ensemble of speech models into one), few labels but plenty of unlabelled inputs for the
# teacher to annotate, or a student trained on the teacher's outputs for data augmented on
# the fly.

# %% [markdown]
# ## 8. ML systems thinking (graded by hand)

# %% [raw]
# # BEGIN QUESTION
# name: written_sparse_speed
# manual: true
# points: 5

# %% [markdown]
# **Q1 · Sparsity and speed.** Your model is 90% sparse after global pruning, but inference is
# no faster. Explain why, and describe two ways to turn the sparsity into real savings in
# memory or time, with what each needs.

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# The masked weights are still dense arrays: the matmul reads and multiplies every entry,
# zeros included, so FLOPs and bytes are unchanged. Options: store the weights in a sparse
# format (CSR: values + column indices + row pointers; about 8 bytes per non-zero in float32
# with int32 indices, so it saves memory only well above 50% sparsity) and use sparse kernels,
# which beat dense BLAS only at high sparsity because of irregular memory access; use
# structured sparsity — remove neurons/channels (smaller dense matrices, speed-up on any
# hardware) or the 2:4 pattern that recent GPUs execute at about twice the dense speed;
# or combine with quantization for the memory side.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_rank
# manual: true
# points: 5

# %% [markdown]
# **Q2 · Choosing a rank.** A `Linear(1024, 1024)` has singular values that decay like
# `σᵢ ≈ 1/i`. At what rank does the factorisation start saving parameters? Roughly what
# fraction of the squared Frobenius norm does rank 64 keep, and what would you check before
# shipping it?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# `r·(1024 + 1024) < 1024²` when `r < 512`. With `σᵢ² ≈ 1/i²`, the kept fraction is
# `Σ_{i≤64} 1/i² / Σ_{i≤1024} 1/i² ≈ (π²/6 − 1/64) / (π²/6 − 1/1024) ≈ 0.99`, so the
# relative Frobenius error is about `√0.01 ≈ 0.1`, with 8× fewer parameters. Before shipping,
# measure the task accuracy (a small weight error can still matter if the layer is sensitive),
# ideally fine-tune the factorised model for a few epochs, and measure latency: two thin
# matmuls may be slower than one if the rank is not small enough to pay for the extra call.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_temperature
# manual: true
# points: 5

# %% [markdown]
# **Q3 · Temperature.** What happens to the distillation signal as `T → 1` and as `T → ∞`?
# Why is the soft term multiplied by `T²`, and what would go wrong without it when you tune
# `T`?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# At `T = 1` a confident teacher's distribution is nearly one-hot, so the soft target says
# little more than the label. As `T → ∞` every softmax tends to uniform and the KL term
# compares the logits' deviations from their means (it approaches matching the centred logits
# with an L2 loss, scaled by `1/T²`): all classes' relative scores become visible, but very
# high `T` also amplifies noise in the teacher's small logits. The gradient of the soft term
# with respect to the student's logits shrinks like `1/T²`; multiplying by `T²` keeps the
# balance between soft and hard terms set by `α` independent of `T`. Without it, raising `T`
# would silently turn off the soft term, and `α` and `T` could not be tuned separately.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## Summary
#
# You built PyTorch's magnitude pruning (local, global, repeated and structured) on top of an
# explicit masked layer, sparsity reports, neuron removal that really shrinks a network, SVD
# factorisation, and the KL divergence and distillation loss, and you measured the accuracy
# each technique costs. Export with `python export.py 16`. Module 17 speeds up generation by
# remembering instead of recomputing (a KV cache).
