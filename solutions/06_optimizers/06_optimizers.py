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
# # Module 06 · Optimizers
#
# Module 05 gave every parameter a `.grad`: the direction in which the loss grows fastest.
# An **optimizer** turns gradients into parameter updates. In this module you build the three
# optimizers that train almost every network in use — SGD (with momentum and Nesterov), Adam
# and AdamW — with PyTorch's exact update rules, and you measure what each one costs in memory.
#
# ## Learning objectives
#
# 1. implement **SGD** with weight decay, momentum, dampening and Nesterov momentum exactly as
#    `torch.optim.SGD` does;
# 2. implement **Adam**'s moment estimates and **bias correction**, and explain why step 1
#    without correction would be tiny;
# 3. explain the difference between **L2 regularisation** (Adam's `weight_decay`) and
#    **decoupled weight decay** (AdamW);
# 4. organise parameters into **param groups** with per-group hyper-parameters, and keep
#    per-parameter **state** that a checkpoint can save;
# 5. compute the **memory** an optimizer adds: 0× (plain SGD), 1× (momentum) or 2× (Adam) the
#    parameters.
#
# Fill in the functions that raise `NotImplementedError`; run the checks; `python export.py 06`
# writes `tinytorch/optimizers.py`, re-exported as `tinytorch.optim`.

# %%
import numpy as np

from tinytorch.tensor import Tensor

# %% [markdown]
# ## 1. The optimizer's contract
#
# ```
#   for batch in data:
#       optimizer.zero_grad()        # forget last step's gradients (they accumulate!)
#       loss = loss_fn(model(x), y)
#       loss.backward()              # module 05 fills p.grad for every parameter
#       optimizer.step()             # p.data <- update(p.data, p.grad, state[p])
# ```
#
# An optimizer holds:
#
# * `param_groups`: a list of dicts, each `{"params": [tensors...], "lr": ..., ...}`. A single
#   list of parameters becomes one group; passing several dicts gives e.g. a smaller learning
#   rate to a pretrained backbone. Learning-rate schedulers (module 07) edit `group["lr"]`.
# * `state`: a dict keyed by the parameter tensor itself, holding whatever the method needs
#   between steps (`momentum_buffer`, `exp_avg`, `exp_avg_sq`, `step`).
#
# Updates are written **in place** into `p.data` (the model keeps references to the same
# tensors) and never recorded by autograd: an update is not part of the model's function.

# %%
#| export
"""Module 06 · Optimizers — depends on: tensor, autograd; used by: training.

``Optimizer`` with PyTorch's ``param_groups``/``state``/``zero_grad``/``step`` contract, and
SGD (momentum, dampening, weight decay, Nesterov), Adam and AdamW with torch's exact update
rules; optimizer-state memory in bytes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from tinytorch.tensor import Tensor


class Optimizer:
    """Base class: parameter groups, per-parameter state, ``zero_grad`` and ``step``.

    Args:
        params: an iterable of Tensors, or of dicts ``{"params": [...], **overrides}``.
        defaults: hyper-parameters every group gets unless it overrides them.
    """

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        self.defaults = dict(defaults)
        self.state: dict[Tensor, dict[str, Any]] = {}
        self.param_groups: list[dict[str, Any]] = []
        params = list(params)
        if not params:
            raise ValueError("optimizer got an empty parameter list")
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        for group in groups:
            self.add_param_group(dict(group))

    def add_param_group(self, group: dict[str, Any]) -> None:
        """Add a group; missing hyper-parameters come from ``defaults`` (provided)."""
        params = group["params"]
        group["params"] = [params] if isinstance(params, Tensor) else list(params)
        for key, value in self.defaults.items():
            group.setdefault(key, value)
        self.param_groups.append(group)

    def params(self) -> list[Tensor]:
        """Every parameter of every group, in order (provided)."""
        return [p for group in self.param_groups for p in group["params"]]

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients of every parameter before the next ``backward``.

        APPROACH: for each parameter of each group: ``p.grad = None`` when ``set_to_none``
        (PyTorch's default: frees the memory); otherwise, if it has a gradient, replace it by
        zeros of the same shape and dtype.

        EXAMPLE:
            >>> w = Tensor([1.0], requires_grad=True); (w * 3).sum().backward()
            >>> opt = SGD([w], lr=0.1); opt.zero_grad(); w.grad is None
            True

        HINT: the default ``set_to_none=True`` must leave ``p.grad is None``, not a zero Tensor;
        use ``self.params()`` so every group is cleared, not just the first.
        """
        # BEGIN SOLUTION NO PROMPT
        for p in self.params():
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad = Tensor(np.zeros_like(p.grad.data))
        return
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 06: implement Optimizer.zero_grad (see its docstring)")  # STUB

    def step(self) -> None:
        """Update every parameter that has a gradient (each optimizer defines this)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement step()")

    def state_bytes(self) -> int:
        """Bytes of optimizer state: the total ``nbytes`` of every array in ``self.state``.

        Only NumPy arrays count (step counters are a few bytes and are ignored).

        APPROACH: loop over ``self.state.values()`` (one dict per parameter) and their values;
        add ``value.nbytes`` for each ``np.ndarray``.

        EXAMPLE: Adam on one float32 parameter of 1,000 elements, after one ``step()``:
        ``exp_avg`` + ``exp_avg_sq`` = 2 × 4,000 = 8000 bytes. Plain SGD: 0 bytes (no state);
        SGD with momentum: 4000 bytes (one buffer).

        HINT: count bytes (``nbytes``: 4 per float32 element), not elements (``size``); state
        is created lazily by ``step()``, so before the first step every optimizer reports 0.
        """
        # BEGIN SOLUTION NO PROMPT
        total = 0
        for per_param in self.state.values():
            for value in per_param.values():
                if isinstance(value, np.ndarray):
                    total += value.nbytes
        return total
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 06: implement Optimizer.state_bytes (see its docstring)")  # STUB

    # ---------------------------------------------------------------- provided: checkpoints
    def state_dict(self) -> dict[str, Any]:
        """State as plain data (like ``torch.optim.Optimizer.state_dict``).

        Parameters are named by their position over all groups: ``{"state": {0: {...}},
        "param_groups": [{"lr": ..., "params": [0, 1]}]}``. Arrays are copied.
        """
        index = {id(p): i for i, p in enumerate(self.params())}
        state = {index[id(p)]: {k: (v.copy() if isinstance(v, np.ndarray) else v)
                                for k, v in s.items()}
                 for p, s in self.state.items() if id(p) in index}
        groups = []
        for group in self.param_groups:
            g = {k: v for k, v in group.items() if k != "params"}
            g["params"] = [index[id(p)] for p in group["params"]]
            groups.append(g)
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore hyper-parameters and state saved by :meth:`state_dict`."""
        params = self.params()
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for group, saved in zip(self.param_groups, groups, strict=True):
            if len(saved["params"]) != len(group["params"]):
                raise ValueError("loaded state dict contains a group of a different size")
            group.update({k: v for k, v in saved.items() if k != "params"})
        self.state = {}
        for i, s in state_dict["state"].items():
            self.state[params[int(i)]] = {
                k: (np.array(v, copy=True) if isinstance(v, np.ndarray) else v)
                for k, v in s.items()}

    def __repr__(self) -> str:
        hyper = ", ".join(f"{k}={v}" for k, v in self.defaults.items())
        return f"{type(self).__name__}({hyper})"


# %% [raw]
# # BEGIN QUESTION
# name: contract
# points: 0

# %% [markdown]
# ### Check: the optimizer's contract

# %% [raw]
# # BEGIN TESTS

# %%
def test_zero_grad_and_state_bytes_of_the_base_class(Optimizer, Tensor, np):
    a = Tensor([1.0, 2.0], requires_grad=True)
    b = Tensor(np.ones((2, 3), dtype=np.float32), requires_grad=True)
    opt = Optimizer([{"params": [a]}, {"params": [b], "lr": 0.01}], {"lr": 0.1})
    a.grad, b.grad = Tensor([0.5, 0.5]), Tensor(np.ones((2, 3), dtype=np.float32))
    opt.zero_grad(set_to_none=False)
    kept = [None if p.grad is None else (p.grad.shape, p.grad.numpy().tolist()) for p in (a, b)]
    assert kept == [((2,), [0.0, 0.0]), ((2, 3), [[0.0] * 3] * 2)], (
        f"zero_grad(set_to_none=False) keeps a gradient of zeros of each parameter's shape in "
        f"every group; got (shape, values) {kept}: the next backward adds into them")
    opt.zero_grad()
    left = [None if p.grad is None else p.grad.numpy().tolist() for p in (a, b)]
    assert left == [None, None], (
        f"zero_grad() sets .grad to None in every group (PyTorch's default); got {left}: a "
        "gradient left over is added to the next backward's, and the step goes the wrong way")
    before = opt.state_bytes()
    assert before == 0, (
        f"an optimizer with no state (nothing in self.state yet) holds 0 bytes, got {before!r}")
    opt.state[b] = {"step": 3, "exp_avg": np.zeros((2, 3), np.float32),
                    "exp_avg_sq": np.zeros((2, 3), np.float32)}
    got = opt.state_bytes()
    assert got == 48, (
        f"two float32 (2, 3) buffers are 2 * 6 * 4 = 48 bytes (the int step counter is not "
        f"counted), got {got!r}: this is the memory an optimizer adds on top of the model")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 2. SGD, momentum and Nesterov
#
# Plain gradient descent: `p ← p − lr · g`. PyTorch's SGD adds, in this order:
#
# ```
#   g ← g + weight_decay · p                      (L2 penalty ½·wd·‖p‖², folded into g)
#   if momentum ≠ 0:
#       b ← g                                     first step: buffer = a COPY of g (no dampening)
#       b ← momentum · b + (1 − dampening) · g    later steps
#       g ← g + momentum · b   if nesterov        (look ahead)
#       g ← b                  otherwise
#   p ← p − lr · g
# ```
#
# Momentum is a running (exponentially weighted) sum of gradients: along a consistent
# direction `g` the buffer grows towards `g / (1 − momentum)`, so steps grow to
# `lr · g / (1 − momentum)` — 10× for 0.9 — while oscillating components cancel.
#
# Two details decide whether you match PyTorch step for step:
#
# * **The first step stores a copy of `g`.** Starting the buffer at zeros gives the same result
#   only when `dampening = 0`; with dampening it gives `(1 − dampening)·g`, a smaller first step.
# * **It is a sum, not an average.** Some textbooks write momentum as the average
#   `b ← 0.9 b + 0.1 g`; PyTorch (with the default `dampening = 0`) adds the full `g`. The
#   average makes the first step 10× smaller and every later one different, so a learning rate
#   tuned for one is wrong for the other.
#
# **Nesterov** uses the buffer to "look ahead": the step is `g + momentum · b` (today's gradient
# plus where momentum is about to carry you) instead of `b`. It needs a buffer, so it is only
# defined for `momentum > 0` and `dampening = 0` (the constructor checks this).

# %%
#| export
class SGD(Optimizer):
    """Stochastic gradient descent, as ``torch.optim.SGD``.

    Args:
        params: parameters or parameter groups.
        lr: learning rate.
        momentum: momentum factor (0 disables the buffer).
        dampening: dampening for momentum.
        weight_decay: L2 penalty added to the gradient.
        nesterov: Nesterov momentum (needs momentum > 0 and dampening 0).
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, momentum: float = 0,
                 dampening: float = 0, weight_decay: float = 0,
                 nesterov: bool = False) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov))

    def step(self) -> None:
        """One SGD update of every parameter with a gradient (rules in the lesson above).

        APPROACH, for each group and each ``p`` in ``group["params"]`` with ``p.grad``:
            1. ``g = p.grad.data``; if ``weight_decay``: ``g = g + wd * p.data``.
            2. If ``momentum``: read ``self.state.setdefault(p, {})``; if it has no
               ``"momentum_buffer"``, store ``g.copy()``; else update the buffer in place:
               ``buf * momentum + (1 - dampening) * g``. Then ``g = g + momentum * buf`` for
               Nesterov, else ``g = buf``.
            3. ``p.data -= lr * g`` (in place, so every reference to ``p`` sees it).

        EXAMPLE:
            >>> p = Tensor([1.0], requires_grad=True); p.grad = Tensor([0.5])
            >>> opt = SGD([p], lr=0.1, momentum=0.9)
            >>> opt.step(); opt.step(); p.data
            array([0.855], dtype=float32)

        HINT: ``p.data -= ...`` keeps float32 and writes into the array ``p.data`` already is;
        do not rebind ``p.data = p.data - ...``: anything holding that array (a view of it, a
        model that shares it) must see the step too, and a new array would also have to be
        cast back to ``p.data.dtype``.
        """
        # BEGIN SOLUTION NO PROMPT
        for group in self.param_groups:
            lr, momentum = group["lr"], group["momentum"]
            dampening, wd = group["dampening"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = p.grad.data
                if wd != 0:
                    g = g + wd * p.data
                if momentum != 0:
                    state = self.state.setdefault(p, {})
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = np.array(g, dtype=p.data.dtype, copy=True)
                        state["momentum_buffer"] = buf
                    else:
                        buf *= momentum
                        buf += (1 - dampening) * g
                    g = g + momentum * buf if group["nesterov"] else buf
                p.data -= (lr * g).astype(p.data.dtype, copy=False)
        return
        # END SOLUTION
        raise NotImplementedError("module 06: implement SGD.step (see its docstring)")  # STUB


# %% [raw]
# # BEGIN QUESTION
# name: sgd
# points: 0

# %% [markdown]
# ### Check: SGD

# %% [raw]
# # BEGIN TESTS

# %%
def test_sgd_plain_and_zero_grad(SGD, Tensor, np):
    p = Tensor([1.0, -2.0], requires_grad=True)
    p.grad = Tensor([0.5, 0.5])
    opt = SGD([p], lr=0.1)
    opt.step()
    assert np.allclose(p.data, [0.95, -2.05]), (
        f"p - lr * grad = [0.95, -2.05], got {p.data}: the basic update is wrong")
    assert p.data.dtype == np.float32, (
        f"the parameter became {p.data.dtype}: cast the update back with "
        "astype(p.data.dtype) (or use p.data -= ...), or every later layer silently runs in "
        "float64 at twice the memory")
    opt.zero_grad()
    assert p.grad is None, (
        f"zero_grad() sets .grad to None by default, as PyTorch does; got {p.grad!r}: None "
        "(not zeros) lets step() skip parameters the last backward did not reach")
    opt.step()
    assert np.allclose(p.data, [0.95, -2.05]), (
        f"after zero_grad() p.grad is None and step() must skip p: expected p to stay "
        f"[0.95, -2.05], got {p.data}: parameters without a gradient (frozen, or unused in this "
        "forward pass) must not move")

# %%
def test_sgd_momentum_first_step_copies_gradient(SGD, Tensor, np):
    p = Tensor([1.0], requires_grad=True)
    p.grad = Tensor([0.5])
    opt = SGD([p], lr=0.1, momentum=0.9)
    opt.step()
    assert np.allclose(p.data, [0.95]), (
        f"step 1 with momentum: expected p = 1 - 0.1 * 0.5 = 0.95, got {p.data}: the first "
        "buffer is the gradient itself (not 0.1 * grad), as in PyTorch")
    opt.step()
    assert np.allclose(p.data, [0.855]), (
        f"step 2: buffer = 0.9 * 0.5 + 0.5 = 0.95, so expected p = 0.95 - 0.095 = 0.855, got "
        f"{p.data}: the buffer must carry over between steps")
    assert "momentum_buffer" in opt.state.get(p, {}), (
        f"expected the buffer in optimizer.state[p]['momentum_buffer'] (PyTorch's key), got "
        f"keys {sorted(opt.state.get(p, {}))}: state_dict() and checkpoints (module 07) save it "
        "from there")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 3. Adam and bias correction
#
# Adam keeps two exponential moving averages per parameter: the mean gradient `m` (first
# moment) and the mean squared gradient `v` (second moment), and divides one by the root of the
# other, so every parameter gets its own effective step size:
#
# ```
#   t ← t + 1
#   g ← g + weight_decay · p                         (Adam: L2 folded into g)
#   m ← β₁ m + (1 − β₁) g
#   v ← β₂ v + (1 − β₂) g²
#   m̂ = m / (1 − β₁ᵗ)      v̂ = v / (1 − β₂ᵗ)          bias correction
#   p ← p − lr · m̂ / (√v̂ + ε)
# ```
#
# Both averages start at zero, so early on they are biased towards zero: at `t = 1`,
# `m = 0.1 g` and `v = 0.001 g²`. Dividing by `1 − βᵗ` removes that bias (exactly when the
# gradient is constant, on average otherwise: `1 − βᵗ` is the total weight the average has
# given to real gradients after `t` steps, instead of to its zero start); without it the
# first steps are too large by a factor `0.1/√0.001 ≈ 3.2`. PyTorch computes the same thing as
# `step_size = lr / (1 − β₁ᵗ)` and `denom = √v / √(1 − β₂ᵗ) + ε` — follow that order to
# match it to the last bit.
#
# ## 4. AdamW: decoupled weight decay
#
# In Adam, an L2 term `wd · p` added to `g` is then *divided by* `√v̂`: parameters with large
# gradients are barely regularised. **AdamW** (Loshchilov & Hutter, 2019) decays the weights
# directly instead, before the Adam update and outside the moments:
#
# ```
#   p ← p · (1 − lr · weight_decay)        then the Adam update with the raw gradient g
# ```
#
# That is the default optimizer for transformers (module 13).

# %%
#| export
class Adam(Optimizer):
    """Adam (Kingma & Ba, 2015) as ``torch.optim.Adam``; ``weight_decay`` is an L2 penalty.

    State per parameter: ``step`` (int), ``exp_avg`` and ``exp_avg_sq`` (arrays like ``p``).
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not (0.0 <= betas[0] < 1.0 and 0.0 <= betas[1] < 1.0):
            raise ValueError(f"Invalid beta parameters: {betas}")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay))

    _decoupled = False  # AdamW sets True

    def step(self) -> None:
        """One Adam update of every parameter with a gradient.

        APPROACH, for each group and each ``p`` with a gradient:
            1. ``state = self.state.setdefault(p, {})``; on first use set ``step = 0`` and
               ``exp_avg``/``exp_avg_sq`` to ``np.zeros_like(p.data)``.
            2. ``state["step"] += 1``; ``t = state["step"]``.
            3. Weight decay, only when ``wd != 0``: if ``self._decoupled`` (AdamW) multiply
               ``p.data`` by ``1 - lr * wd``; otherwise (Adam) ``g = g + wd * p.data``.
            4. Update the moments (in place): ``m = β₁ m + (1 − β₁) g``,
               ``v = β₂ v + (1 − β₂) g²``.
            5. ``step_size = lr / (1 − β₁ᵗ)``; ``denom = √v / √(1 − β₂ᵗ) + eps``;
               ``p.data -= step_size * m / denom``.
            Change ``p.data`` in place (``*=``, ``-=``) in steps 3 and 5, as ``SGD.step`` does:
            the array the parameter holds is updated, never replaced, and keeps its dtype.

        EXAMPLE: with ``lr=0.1`` and any non-zero gradient, the first step moves every element
        by almost exactly ``0.1`` against the sign of its gradient (``m̂/√v̂ = ±1``):
            >>> p = Tensor([1.0, 1.0], requires_grad=True); p.grad = Tensor([3.0, -0.01])
            >>> opt = Adam([p], lr=0.1); opt.step(); p.data.round(4)
            array([0.9, 1.1], dtype=float32)

        HINT: update ``exp_avg``/``exp_avg_sq`` in place (``m *= β₁; m += ...``) so the arrays
        in ``self.state`` are the ones that change — rebinding a local name ``m = ...`` leaves
        the stored state at zero. ``t`` starts at 1, never 0 (``1 − β¹`` ≠ 0). Keep every
        array in the parameter's dtype: ``np.sqrt(0.999)`` is a NumPy float64 *scalar*, and
        float32 array / float64 scalar is a float64 array (twice the memory traffic, and a
        silent cast back at the end) — take square roots of plain numbers with
        ``math.sqrt``.
        """
        # BEGIN SOLUTION NO PROMPT
        for group in self.param_groups:
            lr, (beta1, beta2) = group["lr"], group["betas"]
            eps, wd = group["eps"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = p.grad.data
                state = self.state.setdefault(p, {})
                if not state:
                    state["step"] = 0
                    state["exp_avg"] = np.zeros_like(p.data)
                    state["exp_avg_sq"] = np.zeros_like(p.data)
                state["step"] += 1
                t = state["step"]
                if wd != 0:
                    if self._decoupled:
                        p.data *= p.data.dtype.type(1 - lr * wd)
                    else:
                        g = g + wd * p.data
                m, v = state["exp_avg"], state["exp_avg_sq"]
                m *= beta1
                m += (1 - beta1) * g
                v *= beta2
                v += (1 - beta2) * g * g
                step_size = lr / (1 - beta1 ** t)
                denom = np.sqrt(v)  # then scaled and shifted in place: no extra temporaries
                denom /= math.sqrt(1 - beta2 ** t)
                denom += eps
                p.data -= step_size * m / denom
        return
        # END SOLUTION
        raise NotImplementedError("module 06: implement Adam.step (see its docstring)")  # STUB


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter), as ``torch.optim.AdamW``.

    Same update as :class:`Adam`, except weights decay as ``p ← p·(1 − lr·wd)`` before the step
    instead of adding ``wd·p`` to the gradient. Default ``weight_decay=1e-2`` as in PyTorch.
    """

    _decoupled = True

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2) -> None:
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)


# %% [raw]
# # BEGIN QUESTION
# name: adam
# points: 0

# %% [markdown]
# ### Check: Adam and AdamW

# %% [raw]
# # BEGIN TESTS

# %%
def test_adam_first_step_is_bias_corrected(Adam, Tensor, np):
    p = Tensor([1.0, 1.0], requires_grad=True)
    p.grad = Tensor([3.0, -0.01])
    opt = Adam([p], lr=0.1)
    opt.step()
    assert np.allclose(p.data, [0.9, 1.1], atol=1e-4), (
        f"Adam's first step moves each element by lr against its gradient's sign, got {p.data}; "
        "a step of about 0.03 means the moments are not bias-corrected")
    s = opt.state[p]
    got = {k: (v if k == "step" else np.shape(v)) for k, v in s.items()}
    assert s.get("step") == 1 and np.shape(s.get("exp_avg")) == (2,) and \
        np.shape(s.get("exp_avg_sq")) == (2,), (
            f"optimizer.state[p] must hold 'step' = 1 and 'exp_avg'/'exp_avg_sq' arrays of "
            f"shape (2,) after one step, got {got} (step, or shapes): bias correction needs the "
            "step count, and checkpoints save these keys")

# %%
def test_adamw_decays_weights_outside_the_moments(Adam, AdamW, Tensor, np):
    p = Tensor([2.0], requires_grad=True)
    p.grad = Tensor([0.0])
    AdamW([p], lr=0.1, weight_decay=0.5).step()
    assert np.allclose(p.data, [1.9]), (
        f"AdamW with a zero gradient: expected p * (1 - lr * wd) = 2 * 0.95 = 1.9, got "
        f"{p.data}: decoupled decay is applied directly to the weights, outside the moments")
    q = Tensor([2.0], requires_grad=True)
    q.grad = Tensor([0.0])
    Adam([q], lr=0.1, weight_decay=0.5).step()
    assert np.allclose(q.data, [1.9], atol=1e-4), (
        f"Adam folds wd * p = 1.0 into the gradient, and its first step moves lr = 0.1: "
        f"expected 1.9, got {q.data}; that is the L2 penalty AdamW was made to avoid")
    q.grad = Tensor([0.0])
    AdamW([q], lr=0.1, weight_decay=0.0).step()
    assert np.allclose(q.data, [1.9], atol=1e-6), (
        f"zero gradient and no decay: expected no movement (1.9), got {q.data}: a zero "
        "gradient must give a zero Adam step (eps keeps 0 / 0 away)")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 5. Systems view: what an optimizer costs
#
# Training memory = **weights + gradients + optimizer state + activations**. For `N` float32
# parameters:
#
# ```
#                    weights   grads    state            total (without activations)
#   SGD              4N        4N       0                 8N bytes
#   SGD + momentum   4N        4N       4N (buffer)      12N
#   Adam / AdamW     4N        4N       8N (m and v)     16N   → state alone = 2× the weights
# ```
#
# A 7-billion-parameter model in float32 needs 28 GB for its weights and, with Adam, another
# 56 GB of optimizer state — which is why large-model training shards optimizer state across
# GPUs (ZeRO / FSDP) or keeps it in 8 bits. FLOPs are cheap by comparison: Adam does about a
# dozen element-wise operations per parameter per step, negligible next to the forward and
# backward matmuls, but it reads and writes 4 arrays of size N — optimizers are
# **memory-bandwidth-bound**, the reason PyTorch offers "foreach" and "fused" implementations
# that update all parameters in a few large kernels instead of one small loop per tensor.
#
# ### Exercise: measure it
#
# Compute the expected bytes first, then check with `state_bytes()`.

# %%
rng = np.random.default_rng(0)
params = [Tensor(rng.standard_normal(s).astype(np.float32), requires_grad=True)
          for s in [(256, 784), (256,), (10, 256), (10,)]]
n_bytes = sum(p.data.nbytes for p in params)
for name, make in [("SGD", lambda ps: SGD(ps, lr=0.1)),
                   ("SGD+momentum", lambda ps: SGD(ps, lr=0.1, momentum=0.9)),
                   ("Adam", lambda ps: Adam(ps))]:
    for p in params:
        p.grad = Tensor(np.ones_like(p.data))
    opt = make(params)
    opt.step()
    print(f"{name:13s} state {opt.state_bytes():>9,} B = {opt.state_bytes() / n_bytes:.0f}x "
          f"the {n_bytes:,} B of weights")
# Expected: SGD 0 B = 0x, SGD+momentum 814,120 B = 1x, Adam 1,628,240 B = 2x

# %% [raw]
# # BEGIN QUESTION
# name: memory
# points: 0

# %% [markdown]
# ### Check: optimizer memory

# %% [raw]
# # BEGIN TESTS

# %%
def test_state_bytes_counts_buffers(SGD, Adam, Tensor, np):
    p = Tensor(np.ones(1000, dtype=np.float32), requires_grad=True)
    p.grad = Tensor(np.ones(1000, dtype=np.float32))
    plain = SGD([p], lr=0.1)
    plain.step()
    assert plain.state_bytes() == 0, (
        f"plain SGD keeps no state: expected 0 bytes, got {plain.state_bytes()}")
    mom = SGD([p], lr=0.1, momentum=0.9)
    mom.step()
    assert mom.state_bytes() == 4000, (
        f"momentum keeps one float32 buffer: 1000 * 4 = 4000 bytes, got {mom.state_bytes()} "
        "(1000 means you counted elements: use nbytes)")
    adam = Adam([p])
    adam.step()
    assert adam.state_bytes() == 8000, (
        f"Adam keeps m and v: 2 * 1000 * 4 = 8000 bytes, got {adam.state_bytes()} "
        "(the integer step counter does not count)")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 6. ML systems thinking (graded by hand)

# %% [raw]
# # BEGIN QUESTION
# name: written_memory
# manual: true
# points: 5

# %% [markdown]
# **Q1 · Memory budget.** A 1.3-billion-parameter model is trained in float32 with AdamW on a
# 24 GB GPU. Add up weights, gradients and optimizer state. Does it fit before counting
# activations? Name two ways to make it fit and what each costs.

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# 1.3e9 × 4 B = 5.2 GB weights, 5.2 GB gradients, 10.4 GB Adam state: 20.8 GB before any
# activation, so in practice it does not fit. Options: switch to SGD with momentum (state
# 5.2 GB, but usually worse convergence for transformers); mixed precision with 8-bit or
# bf16 optimizer states (less memory, some numerical risk); shard the state across several GPUs
# (ZeRO/FSDP: communication cost); offload the state to CPU memory (PCIe bandwidth cost).

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_bias_correction
# manual: true
# points: 5

# %% [markdown]
# **Q2 · Bias correction.** With β₁ = 0.9 and β₂ = 0.999, what are `m` and `v` after the first
# step for a gradient `g`, with and without bias correction? What size is the first update in
# each case, and why does it matter most when training starts?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# Without correction `m = 0.1g`, `v = 0.001g²`, so the step is `lr·0.1g/(√0.001·|g|) ≈ 3.16·lr`
# — too large by 3×, and for β₂ = 0.9999 by 10×, which can blow up a freshly initialised
# network. With correction `m̂ = g`, `v̂ = g²`, the step is exactly `lr·sign(g)`. The bias
# vanishes as `βᵗ → 0` (hundreds to thousands of steps for β₂), so it matters in the first
# phase of training, which is also why warm-up schedules (module 07) are used with Adam.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_weight_decay
# manual: true
# points: 5

# %% [markdown]
# **Q3 · Weight decay.** Explain why L2 regularisation in Adam and decoupled weight decay in
# AdamW are *not* the same, although they are for plain SGD. Which parameters are regularised
# less under Adam's L2?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# For SGD, adding `wd·p` to the gradient gives `p ← p − lr·g − lr·wd·p`, exactly a decay by
# `(1 − lr·wd)`. Adam divides the whole gradient, penalty included, by `√v̂`: parameters with a
# large gradient history (large `v`) see their decay shrunk, those with tiny gradients get it
# amplified. AdamW applies `p ← p(1 − lr·wd)` outside the adaptive scaling, so every weight
# decays at the same rate; it generalises better and makes `lr` and `wd` easier to tune
# independently.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## Summary
#
# You built PyTorch's optimizer contract and its three workhorses, and can price each one in
# memory. Export with `python export.py 06`; they are available as `tinytorch.optim.SGD`, `Adam`,
# `AdamW`. Module 07 puts everything into a training loop with schedules and checkpoints.
