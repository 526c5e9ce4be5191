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
# # Module 07 · Training
#
# You have tensors (01), activations (02), layers (03), losses (04), gradients (05) and
# optimizers (06). This module assembles them into the loop that actually trains a network,
# and adds the engineering that makes training *reliable*: learning-rate schedules, gradient
# clipping, checkpoints you can resume from, metrics and early stopping. After it you can run
# the 1969 XOR and 1986 digits milestones with your own framework.
#
# ## Learning objectives
#
# 1. write the canonical **training loop** (zero_grad → forward → loss → backward → step) over
#    shuffled **minibatches**, and an **evaluation** pass under `no_grad()` in `eval()` mode;
# 2. implement **learning-rate schedules** with PyTorch's semantics: `StepLR`,
#    `CosineAnnealingLR`, `LinearLR` (warm-up), `scheduler.step()` and `get_last_lr()`;
# 3. implement **gradient clipping by global norm** (`clip_grad_norm_`) and explain when it
#    saves a run;
# 4. **checkpoint** model *and* optimizer state as a `.npz` archive (never pickle) and resume
#    exactly;
# 5. measure **accuracy** and stop early when the validation loss stops improving.
#
# Fill in the functions that raise `NotImplementedError`; run the checks; `python export.py 07`
# writes `tinytorch/training.py`. Schedulers are also available as
# `tinytorch.optim.lr_scheduler` and clipping as `tinytorch.nn.utils.clip_grad_norm_`.

# %%
import numpy as np

from tinytorch.optimizers import SGD, Adam
from tinytorch.tensor import Tensor

# %% [markdown]
# ## 1. The loop
#
# ```
#   for epoch in range(epochs):                      ┌──────────── one step ─────────────┐
#       model.train()                                │ optimizer.zero_grad()             │
#       for xb, yb in minibatches(X, y, shuffle):    │ loss = loss_fn(model(xb), yb)      │
#           ── one step ──►                          │ loss.backward()                    │
#       scheduler.step()        (once per epoch)     │ clip_grad_norm_(params, max_norm)  │
#       evaluate(X_val, y_val)  (no_grad, eval())    │ optimizer.step()                   │
#       early_stopping.step(val_loss) → stop?        └────────────────────────────────────┘
# ```
#
# **Shuffle every epoch**: minibatches in a fixed order let the model learn the order. The
# epoch's loss is the **mean over examples**, so weight each batch's mean loss by its size (the
# last batch may be smaller). **Evaluation** must not train: `model.eval()` switches off dropout
# (module 03) and `no_grad()` stops graph recording, which also saves the activation memory
# autograd would keep (module 05).

# %%
#| export
"""Module 07 · Training — depends on: tensor, autograd, optimizers; used by: milestones.

The training loop (``Trainer``: fit / evaluate over minibatches), LR schedulers with torch
semantics (StepLR, CosineAnnealingLR, LinearLR), ``clip_grad_norm_``, ``.npz`` checkpoints
(never pickle), ``accuracy`` and ``EarlyStopping``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from tinytorch.optimizers import SGD, Adam, Optimizer  # noqa: F401 - SGD, Adam: for checks
from tinytorch.tensor import Tensor, no_grad


def iterate_minibatches(x: np.ndarray, y: np.ndarray, batch_size: int, *, shuffle: bool = True,
                        rng: np.random.Generator | None = None
                        ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Yield ``(x_batch, y_batch)`` slices of at most ``batch_size`` examples (provided).

    With ``shuffle``, the order is a fresh permutation from ``rng`` on every call.
    """
    n = len(x)
    order = (rng or np.random.default_rng()).permutation(n) if shuffle else np.arange(n)
    for start in range(0, n, batch_size):
        idx = order[start:start + batch_size]
        yield x[idx], y[idx]


def accuracy(output: Tensor | np.ndarray, target: Tensor | np.ndarray, *,
             logits: bool | None = None) -> float:
    """Fraction of correct predictions, a Python float in [0, 1].

    ``output`` may be:
        * scores of shape ``(N, C)`` with ``C > 1`` (logits or probabilities): the prediction is
          the arg-max over the last dimension (the same for both: softmax keeps the order);
        * floats of shape ``(N,)`` or ``(N, 1)``, one score of class 1 per example. Say which:
          ``logits=True`` (a model trained with ``BCEWithLogitsLoss``: predicted 1 when
          ``> 0``) or ``logits=False`` (probabilities, after a sigmoid: predicted 1 when
          ``> 0.5``). Without it, raise ``ValueError`` — guessing turns a logit of 0.3 (a
          probability of 0.57, class 1) into class 0;
        * integers of shape ``(N,)``: predicted labels.

    APPROACH: unwrap Tensors (``.data``); turn ``output`` into predicted labels as above;
    compare with ``target.reshape(-1)``; return the mean as ``float``.

    EXAMPLE:
        >>> accuracy(np.array([[0.1, 2.0], [3.0, 0.0], [0.2, 0.3]]), np.array([1, 0, 0]))
        0.6666666666666666
        >>> accuracy(np.array([0.9, 0.2, 0.6]), np.array([1, 0, 0]), logits=False)
        0.6666666666666666
        >>> accuracy(np.array([0.3, -2.0, -0.1]), np.array([1, 0, 0]), logits=True)
        1.0

    HINT: test the cases in the order above: ``(N, 1)`` is 2-D but has a single column, so it
    is one score per example, not a score per class. ``np.mean`` of a boolean array is the
    fraction of True; wrap it in ``float(...)`` (a NumPy scalar is not a Python float).
    """
    # BEGIN SOLUTION NO PROMPT
    out = np.asarray(output.data if isinstance(output, Tensor) else output)
    tgt = np.asarray(target.data if isinstance(target, Tensor) else target).reshape(-1)
    if out.ndim >= 2 and out.shape[-1] > 1:
        pred = out.argmax(axis=-1).reshape(-1)
    elif out.dtype.kind == "f":
        if logits is None:
            raise ValueError("accuracy: one score per example is ambiguous; pass logits=True "
                             "(threshold 0) or logits=False (probabilities, threshold 0.5)")
        pred = (out.reshape(-1) > (0.0 if logits else 0.5)).astype(np.int64)
    else:
        pred = out.reshape(-1)
    return float(np.mean(pred == tgt))
    # END SOLUTION
    raise NotImplementedError("module 07: implement accuracy (see its docstring)")  # STUB


# %% [raw]
# # BEGIN QUESTION
# name: metrics
# points: 0

# %% [markdown]
# ### Check: accuracy

# %% [raw]
# # BEGIN TESTS

# %%
def test_accuracy_from_logits_probabilities_and_labels(accuracy, np):
    logits = np.array([[0.1, 2.0], [3.0, 0.0], [0.2, 0.3], [1.0, -1.0]])
    got = accuracy(logits, np.array([1, 0, 0, 0]))
    assert got == 0.75, (
        f"(N, C) scores: predict the arg-max class over the last dim; 3 of 4 are right, got {got}")
    got = accuracy(np.array([0.9, 0.2, 0.6]), np.array([1, 0, 0]), logits=False)
    assert got == 2 / 3, (
        f"(N,) probabilities (logits=False): predict 1 when p > 0.5, so 2 of 3 are right; got "
        f"{got}")
    got = accuracy(np.array([[0.3], [-2.0], [-0.1]]), np.array([1, 0, 0]), logits=True)
    assert got == 1.0, (
        f"(N, 1) logits (logits=True): predict 1 when the logit is > 0 (probability > 0.5), so "
        f"all 3 are right; got {got} — a 0.5 threshold on logits calls 0.3 class 0")
    try:
        accuracy(np.array([0.9, 0.2]), np.array([1, 0]))
    except ValueError:
        pass
    else:
        raise AssertionError("one float score per example without logits=True/False must "
                             "raise ValueError: the threshold (0 or 0.5) cannot be guessed")
    kind = type(accuracy(logits, np.array([1, 0, 0, 0]))).__name__
    assert kind == "float", (
        f"expected a Python float, got {kind}: wrap the mean in float(...), so logs and JSON "
        "see a plain number")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 2. Gradient clipping by global norm
#
# One bad batch (an outlier, a loss spike in an RNN or transformer) can produce a gradient
# thousands of times larger than usual and throw the parameters far away in one step.
# **Clipping by global norm** treats all gradients as one long vector `g`:
#
# ```
#   total = ‖g‖₂ = sqrt( Σ_params Σ_elements grad² )
#   if total > max_norm:   every grad ← grad · max_norm / (total + 1e-6)
# ```
#
# The *direction* of the update is kept (all parameters scale by the same factor); only its
# length is capped. Clipping each parameter separately would change the direction.
# PyTorch returns the total norm (before clipping) so you can log it — a rising gradient norm is
# the earliest warning of divergence.
#
# Two details follow PyTorch exactly. The global norm is computed as *the norm of the
# per-parameter norms* (for the 2-norm that is the same number, and it works for every
# `norm_type`: `inf`, `-inf`, `0` counts non-zero entries). And every gradient is multiplied by
# `min(coef, 1)` — no `if`: a NaN gradient makes the total NaN and *every* gradient NaN, so a
# broken step is visible everywhere instead of half-applied.

# %%
#| export
def _vector_norm(x: np.ndarray, norm_type: float) -> float:
    """Provided: the ``norm_type``-norm of all elements of ``x``, as ``torch.linalg.vector_norm``
    (``inf``: largest ``|x|``; ``-inf``: smallest; ``0``: how many are non-zero)."""
    a = np.abs(np.asarray(x, dtype=np.float64)).reshape(-1)
    if abs(norm_type) == math.inf:
        if a.size == 0:
            raise RuntimeError("the infinity norm of an empty tensor is undefined (the max "
                               "and min have no identity)")
        return float(a.max() if norm_type > 0 else a.min())
    if norm_type == 0:
        return float(np.count_nonzero(a))
    return float(np.sum(a ** norm_type) ** (1.0 / norm_type))


def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float,
                    norm_type: float = 2.0) -> Tensor:
    """Scale all gradients in place so their global norm is at most ``max_norm``.

    Args:
        parameters: a Tensor or an iterable of Tensors; those with ``grad is None`` are skipped.
        max_norm: the largest allowed global norm.
        norm_type: 2.0 (Euclidean), ``math.inf`` (largest absolute value), or any p-norm.

    Returns:
        The total norm *before* clipping, as a 0-d Tensor of the gradients' dtype (as PyTorch).

    APPROACH:
        1. Collect the gradient arrays (``p.grad.data``) of the parameters that have one; with
           none, return ``Tensor(np.asarray(0.0, dtype=np.float32))``.
        2. ``norms = [_vector_norm(g, norm_type) for g in grads]`` (one per parameter), then
           ``total = _vector_norm(np.array(norms), norm_type)``.
        3. ``coef = min(max_norm / (total + 1e-6), 1)`` computed with ``np.minimum`` (a NaN
           total must give a NaN ``coef``; Python's ``min`` could drop it).
        4. Multiply **every** gradient by ``coef`` (write a new ``p.grad`` Tensor, keep its
           dtype) and return ``total`` as a 0-d tensor of ``np.result_type(*grads)``.

    EXAMPLE:
        >>> a = Tensor([0.0], requires_grad=True); a.grad = Tensor([3.0])
        >>> b = Tensor([0.0], requires_grad=True); b.grad = Tensor([4.0])
        >>> clip_grad_norm_([a, b], max_norm=1.0).item(), round(a.grad.item(), 4)
        (5.0, 0.6)

    HINT: a generator can only be walked once (``model.parameters()`` may be one): turn
    ``parameters`` into a list first. Multiplying by ``min(coef, 1)`` instead of testing
    ``total > max_norm`` applies the ``1e-6`` guard against division by zero consistently
    (as PyTorch); multiplying by 1 changes nothing.
    """
    # BEGIN SOLUTION NO PROMPT
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    with_grad = [p for p in params if p.grad is not None]
    if not with_grad:
        return Tensor(np.asarray(0.0, dtype=np.float32))
    grads = [p.grad.data for p in with_grad]
    total = _vector_norm(np.array([_vector_norm(g, norm_type) for g in grads]), norm_type)
    coef = float(np.minimum(max_norm / (total + 1e-6), 1.0))
    for p, g in zip(with_grad, grads, strict=True):
        p.grad = Tensor((g * coef).astype(g.dtype))
    return Tensor(np.asarray(total, dtype=np.result_type(*grads)))
    # END SOLUTION
    raise NotImplementedError("module 07: implement clip_grad_norm_ (see its docstring)")  # STUB


# %% [raw]
# # BEGIN QUESTION
# name: clipping
# points: 0

# %% [markdown]
# ### Check: gradient clipping

# %% [raw]
# # BEGIN TESTS

# %%
def test_clip_grad_norm_scales_all_parameters(clip_grad_norm_, Tensor, np):
    a = Tensor([0.0], requires_grad=True)
    a.grad = Tensor([3.0])
    b = Tensor([0.0, 0.0], requires_grad=True)
    b.grad = Tensor([0.0, 4.0])
    total = clip_grad_norm_([a, b], max_norm=1.0)
    assert abs(float(total.item()) - 5.0) < 1e-5, (
        f"return the global norm BEFORE clipping: sqrt(3² + 4²) = 5 over all params, got "
        f"{float(total.item())}; you log this number to watch for divergence")
    assert np.allclose(a.grad.numpy(), [0.6], atol=1e-5) and np.allclose(
        b.grad.numpy(), [0.0, 0.8], atol=1e-5), (
        f"every gradient must be scaled by the same factor 1/5 so the update keeps its "
        f"direction: expected [0.6] and [0, 0.8], got {a.grad.numpy()} and {b.grad.numpy()}")
    c = Tensor([0.0], requires_grad=True)
    c.grad = Tensor([0.5])
    clip_grad_norm_([c], max_norm=1.0)
    assert np.allclose(c.grad.numpy(), [0.5]), (
        f"a norm (0.5) below max_norm (1.0) must not be changed, got {c.grad.numpy()}: clipping "
        "only ever shrinks gradients")
    d = Tensor([0.0, 0.0], requires_grad=True)
    d.grad = Tensor([3.0, -4.0])
    top = clip_grad_norm_([d], max_norm=1.0, norm_type=float("inf"))
    assert np.isclose(float(top.item()), 4.0), (
        f"the inf-norm is the largest |gradient| (4), got {float(top.item())}: use _vector_norm")
    e = Tensor([0.0, 0.0], requires_grad=True)
    e.grad = Tensor([float("nan"), 1.0])
    with np.errstate(invalid="ignore"):
        clip_grad_norm_([a, e], max_norm=1.0)
    assert np.isnan(a.grad.numpy()).all() and np.isnan(e.grad.numpy()).all(), (
        f"a NaN gradient makes the total NaN and, as in PyTorch, every gradient NaN (multiply "
        f"by min(coef, 1) with np.minimum, no `if`); got {a.grad.numpy()} and {e.grad.numpy()}")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 3. Learning-rate schedules
#
# A fixed learning rate is a compromise: large steps make progress early, small steps settle
# into a minimum late. A **scheduler** edits `group["lr"]` of the optimizer once per epoch
# (or per step). PyTorch's contract, which you must match exactly:
#
# * constructing the scheduler records `group["initial_lr"]` (the base LR) and already
#   performs **step 0**: `last_epoch = 0`, `lr = lr(0)` (the base LR for StepLR and cosine,
#   `start_factor · base` for LinearLR);
# * every `scheduler.step()` (call it *after* `optimizer.step()`) does `last_epoch += 1` and
#   sets `lr = lr(last_epoch)`;
# * `get_last_lr()` returns the list of current LRs, one per group.
#
# ```
#   StepLR(step_size=3, gamma=0.1):   lr(e) = base · γ^⌊e / step_size⌋
#      e:  0    1    2    3     4     5     6
#          1.0  1.0  1.0  0.1   0.1   0.1   0.01
#
#   CosineAnnealingLR(T_max, η_min):  lr(e) = η_min + (base − η_min) · (1 + cos(π e / T_max)) / 2
#      base ─╮
#             ╲__
#                ╲___             (half a cosine from base at e = 0 to η_min at e = T_max)
#                    ╲_____ η_min
#
#   LinearLR(start_factor, end_factor, total_iters):  warm-up
#      lr(e) = base · (s + (f − s) · min(e, total_iters) / total_iters)
# ```
#
# The classic off-by-one: a scheduler that decays at `e = step_size - 1` or `step_size + 1`,
# or that forgets the implicit step 0 in the constructor. Each shifts the whole schedule by an
# epoch.
#
# Your job in each scheduler is only `get_lr()`: a **closed form** of `self.last_epoch` and the
# base LRs in `self.base_lrs` (recorded once from `initial_lr`). The provided base class does the
# bookkeeping. Never compute from the current `group["lr"]` — multiplying the current LR by γ on
# every call compounds the decay, and breaks as soon as `get_lr()` is called twice.
#
# Two things to know about cosine: at `e = T_max` the LR is exactly `η_min`, and *after* `T_max`
# the formula climbs back up (the cosine keeps going) — in PyTorch too. Set `T_max` to the total
# number of epochs (or steps, if you call `scheduler.step()` per batch).

# %%
#| export
class LRScheduler:
    """Base class with PyTorch's ``step()``/``get_last_lr()`` contract (provided).

    Subclasses implement ``get_lr()``: the learning rate of every group for ``last_epoch``.
    """

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            group.setdefault("initial_lr", group["lr"])
        self.base_lrs: list[float] = [g["initial_lr"] for g in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._last_lr: list[float] = []
        self.step()

    def get_lr(self) -> list[float]:
        raise NotImplementedError(f"{type(self).__name__} does not implement get_lr()")

    def step(self) -> None:
        """Advance one epoch and write the new learning rates into the optimizer."""
        self.last_epoch += 1
        lrs = self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, lrs, strict=True):
            group["lr"] = lr
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    def get_last_lr(self) -> list[float]:
        """The learning rates set by the last ``step()``, one per parameter group."""
        return list(self._last_lr)

    def state_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)


class StepLR(LRScheduler):
    """Multiply the LR by ``gamma`` every ``step_size`` epochs (``torch.optim.lr_scheduler.StepLR``)."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """``base · gamma ** (last_epoch // step_size)`` for each base LR in ``self.base_lrs``.

        APPROACH: one list comprehension over ``self.base_lrs``; the exponent is the number of
        completed ``step_size`` blocks, ``self.last_epoch // self.step_size`` (integer division).

        EXAMPLE: ``base 1.0, step_size 3, gamma 0.1``: epochs 0..6 give
        ``1, 1, 1, 0.1, 0.1, 0.1, 0.01``.

        HINT: return a *list* with one LR per parameter group, even for a single group.
        """
        # BEGIN SOLUTION NO PROMPT
        return [base * self.gamma ** (self.last_epoch // self.step_size)
                for base in self.base_lrs]
        # END SOLUTION
        raise NotImplementedError("module 07: implement StepLR.get_lr (see its docstring)")  # STUB


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from the base LR to ``eta_min`` over ``T_max`` epochs (torch semantics)."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,  # noqa: N803
                 last_epoch: int = -1) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """``eta_min + (base - eta_min) * (1 + cos(pi * last_epoch / T_max)) / 2`` per group.

        APPROACH: compute the factor ``(1 + cos(π · last_epoch / T_max)) / 2`` once (it goes from
        1 at epoch 0 to 0 at ``T_max``), then interpolate each group between ``eta_min`` and its
        base LR with it.

        EXAMPLE: ``base 1.0, T_max 4, eta_min 0``: epochs 0..4 give
        ``1.0, 0.854, 0.5, 0.146, 0.0``.

        HINT: use ``math.cos`` and ``math.pi`` on Python floats. The halfway point
        (``last_epoch = T_max / 2``) must give exactly ``(base + eta_min) / 2``.
        """
        # BEGIN SOLUTION NO PROMPT
        cos = (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
        return [self.eta_min + (base - self.eta_min) * cos for base in self.base_lrs]
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 07: implement CosineAnnealingLR.get_lr (see its docstring)")  # STUB


class LinearLR(LRScheduler):
    """Scale the LR linearly from ``start_factor`` to ``end_factor`` over ``total_iters`` steps.

    Used as a **warm-up**: ``LinearLR(opt, start_factor=0.1, total_iters=5)`` ramps from
    10% of the base LR to 100% in 5 epochs, then stays (torch semantics and defaults).
    """

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, total_iters: int = 5, last_epoch: int = -1) -> None:
        if not 0 < start_factor <= 1 or not 0 <= end_factor <= 1:
            raise ValueError("start_factor must be in (0, 1] and end_factor in [0, 1]")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """``base * (s + (e - s) * min(last_epoch, total_iters) / total_iters)`` per group.

        APPROACH: ``frac`` = the fraction of the ramp done, ``last_epoch / total_iters`` capped
        at 1; ``factor = s + (e - s) * frac``; return ``base * factor`` for each base LR.
        ``total_iters = 0`` means no ramp at all: PyTorch then keeps ``start_factor``
        (``frac = 0``), and dividing by 0 must not happen.

        EXAMPLE: ``base 1.0, start 0.25, end 1.0, total_iters 3``: epochs 0..4 give
        ``0.25, 0.5, 0.75, 1.0, 1.0``.

        HINT: without the cap (``min``), the LR keeps growing past ``end_factor · base`` after
        the warm-up — a warm-up that never ends.
        """
        # BEGIN SOLUTION NO PROMPT
        frac = min(self.last_epoch, self.total_iters) / self.total_iters if self.total_iters else 0.0
        factor = self.start_factor + (self.end_factor - self.start_factor) * frac
        return [base * factor for base in self.base_lrs]
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 07: implement LinearLR.get_lr (see its docstring)")  # STUB


# %% [raw]
# # BEGIN QUESTION
# name: schedulers
# points: 0

# %% [markdown]
# ### Check: schedulers

# %% [raw]
# # BEGIN TESTS

# %%
def test_step_lr_decays_at_the_right_epoch(StepLR, SGD, Tensor, np):
    opt = SGD([Tensor([0.0], requires_grad=True)], lr=1.0)
    sched = StepLR(opt, step_size=3, gamma=0.1)
    seen = [sched.get_last_lr()[0]]
    for _ in range(6):
        sched.step()
        seen.append(opt.param_groups[0]["lr"])
    assert np.allclose(seen, [1, 1, 1, 0.1, 0.1, 0.1, 0.01]), (
        f"StepLR(step_size=3) must decay after epochs 3 and 6, got {seen}: an off-by-one "
        "shifts every later learning rate")

# %%
def test_cosine_and_linear_warmup(CosineAnnealingLR, LinearLR, SGD, Tensor, np):
    opt = SGD([Tensor([0.0], requires_grad=True)], lr=1.0)
    cos = CosineAnnealingLR(opt, T_max=4)
    lrs = [cos.get_last_lr()[0]]
    for _ in range(4):
        cos.step()
        lrs.append(cos.get_last_lr()[0])
    assert np.allclose(lrs, [1.0, 0.853553, 0.5, 0.146447, 0.0], atol=1e-5), (
        f"cosine from 1 to 0 over 4 epochs should give [1, 0.854, 0.5, 0.146, 0], got {lrs}: "
        "check that you use last_epoch / T_max (not T_max + 1) and base_lrs, not group['lr']")
    opt2 = SGD([Tensor([0.0], requires_grad=True)], lr=1.0)
    warm = LinearLR(opt2, start_factor=0.25, total_iters=3)
    lrs = [warm.get_last_lr()[0]]
    for _ in range(4):
        warm.step()
        lrs.append(warm.get_last_lr()[0])
    assert np.allclose(lrs, [0.25, 0.5, 0.75, 1.0, 1.0]), (
        f"warm-up from 25% to 100% in 3 steps, then constant, should give "
        f"[0.25, 0.5, 0.75, 1, 1]; got {lrs}: cap last_epoch at total_iters")
    opt3 = SGD([Tensor([0.0], requires_grad=True)], lr=1.0)
    flat = LinearLR(opt3, start_factor=0.25, total_iters=0)
    flat.step()
    assert np.isclose(flat.get_last_lr()[0], 0.25), (
        f"LinearLR with total_iters=0 has no ramp: PyTorch keeps start_factor (0.25), got "
        f"{flat.get_last_lr()[0]} (and never divide by total_iters = 0)")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 4. Checkpoints without pickle
#
# A long run *will* be interrupted. A checkpoint must hold everything needed to resume
# exactly: the model's parameters, the **optimizer state** (Adam's moments and step counts —
# resuming without them restarts bias correction and gives a visible loss spike), the
# hyper-parameters (the scheduled LR) and the epoch.
#
# We store it as a NumPy `.npz` archive: named arrays, nothing else. **Never pickle**:
# `pickle.load` (and `torch.load` before `weights_only=True`) can run arbitrary code hidden in
# the file, so loading a checkpoint from someone else would be running their program. We load
# with `np.load(path, allow_pickle=False)`, which refuses anything but plain arrays.
#
# ```
#   checkpoint.npz
#   ├── epoch                         ()        int
#   ├── model/0.weight                (16, 2)   the model's state_dict, one array per entry
#   ├── model/0.bias                  (16,)
#   ├── optim/state/0/exp_avg         (16, 2)   optimizer state, parameter by position
#   ├── optim/state/0/step            ()
#   └── optim/group/0/lr              ()        hyper-parameters of each param group
# ```

# %%
#| export
def _to_array(value: Any) -> np.ndarray:
    """Tensors and plain values to an array pickle-free ``np.savez`` can store (provided)."""
    if isinstance(value, Tensor):
        return np.asarray(value.data)
    arr = np.asarray(value)
    if arr.dtype == object:
        raise TypeError(f"cannot store {type(value).__name__} in a checkpoint without pickle")
    return arr


def _from_array(arr: np.ndarray) -> Any:
    """0-d arrays back to Python numbers, 1-d hyper-parameter arrays to tuples (provided)."""
    return arr.item() if arr.ndim == 0 else tuple(arr.tolist())


def save_checkpoint(path: str | Path, model: Any, optimizer: Optimizer | None,
                    epoch: int) -> Path:
    """Save model parameters, optimizer state and the epoch to an ``.npz`` archive.

    Keys (see the diagram above): ``"epoch"``; ``"model/<name>"`` for each entry of
    ``model.state_dict()``; from ``optimizer.state_dict()``: ``"optim/state/<i>/<key>"``
    for each state value and ``"optim/group/<j>/<key>"`` for each group hyper-parameter
    (skip the ``"params"`` list and ``None`` values).

    APPROACH: build a ``dict[str, np.ndarray]`` with ``_to_array`` and write it with
    ``np.savez(path, **arrays)``. Return the path written (NumPy adds ``.npz`` when missing).

    EXAMPLE:
        >>> save_checkpoint("ckpt.npz", model, opt, epoch=3)  # doctest: +SKIP
        PosixPath('ckpt.npz')
        >>> sorted(np.load("ckpt.npz").files)[:3]  # Adam on a Linear(2, 16)  # doctest: +SKIP
        ['epoch', 'model/0.bias', 'model/0.weight']

    HINT: ``optimizer.state_dict()`` already names parameters by position (``{0: {...}}``) and
    holds plain values; ``_to_array`` turns Tensors, numbers and tuples (``betas``) into arrays
    and refuses anything that would need pickle.
    """
    # BEGIN SOLUTION NO PROMPT
    arrays: dict[str, np.ndarray] = {"epoch": np.asarray(int(epoch))}
    for name, value in model.state_dict().items():
        arrays[f"model/{name}"] = _to_array(value)
    if optimizer is not None:
        sd = optimizer.state_dict()
        for i, state in sd["state"].items():
            for key, value in state.items():
                arrays[f"optim/state/{i}/{key}"] = _to_array(value)
        for j, group in enumerate(sd["param_groups"]):
            for key, value in group.items():
                if key != "params" and value is not None:
                    arrays[f"optim/group/{j}/{key}"] = _to_array(value)
    path = Path(path)
    if path.suffix != ".npz":
        path = path.with_name(path.name + ".npz")
    np.savez(path, **arrays)
    return path
    # END SOLUTION
    raise NotImplementedError("module 07: implement save_checkpoint (see its docstring)")  # STUB


def load_checkpoint(path: str | Path, model: Any, optimizer: Optimizer | None = None) -> int:
    """Restore what :func:`save_checkpoint` wrote; returns the saved epoch.

    APPROACH:
        1. ``with np.load(path, allow_pickle=False) as data:`` — never allow pickle.
        2. ``model.load_state_dict({name: Tensor(arr) for "model/<name>" keys})``.
        3. If ``optimizer`` is given: rebuild ``{"state": {i: {key: value}}, "param_groups":
           [...]}`` from the ``optim/`` keys — arrays of state stay arrays (0-d ones such as
           ``step`` become numbers with ``_from_array``), group values go through
           ``_from_array`` — then ``optimizer.load_state_dict(...)``. Each group's
           ``"params"`` is the list of its parameters' positions: copy it from
           ``optimizer.state_dict()``.
        4. Return ``int(data["epoch"])``.

    EXAMPLE:
        >>> epoch = load_checkpoint("ckpt.npz", model, opt)  # doctest: +SKIP
        >>> epoch, opt.state[model.parameters()[0]]["step"]  # doctest: +SKIP
        (3, 120)

    HINT: copy arrays out of the archive (``np.array(data[k])``) before the file closes. Keys
    split on ``"/"``: ``"optim/state/0/exp_avg".split("/")`` ->
    ``["optim", "state", "0", "exp_avg"]``; the position is a string, convert it with ``int``.
    """
    # BEGIN SOLUTION NO PROMPT
    with np.load(Path(path), allow_pickle=False) as data:
        arrays = {k: np.array(data[k]) for k in data.files}
    model_sd = {k[len("model/"):]: Tensor(v) for k, v in arrays.items() if k.startswith("model/")}
    model.load_state_dict(model_sd)
    if optimizer is not None:
        current = optimizer.state_dict()
        state: dict[int, dict[str, Any]] = {}
        groups = [{"params": g["params"]} for g in current["param_groups"]]
        for key, arr in arrays.items():
            parts = key.split("/")
            if parts[:2] == ["optim", "state"]:
                value = _from_array(arr) if arr.ndim == 0 else arr
                state.setdefault(int(parts[2]), {})[parts[3]] = value
            elif parts[:2] == ["optim", "group"]:
                groups[int(parts[2])][parts[3]] = _from_array(arr)
        optimizer.load_state_dict({"state": state, "param_groups": groups})
    return int(arrays["epoch"])
    # END SOLUTION
    raise NotImplementedError("module 07: implement load_checkpoint (see its docstring)")  # STUB


# %% [raw]
# # BEGIN QUESTION
# name: checkpoints
# points: 0

# %% [markdown]
# ### Check: a checkpoint round trip

# %% [raw]
# # BEGIN TESTS

# %%
def test_checkpoint_roundtrip_restores_optimizer_state(save_checkpoint, load_checkpoint, Adam,
                                                       Tensor, np):
    import tempfile
    from pathlib import Path

    class Tiny:
        def __init__(self):
            self.w = Tensor(np.ones(3, dtype=np.float32), requires_grad=True)

        def state_dict(self):
            return {"w": self.w}

        def load_state_dict(self, sd):
            self.w.data[...] = sd["w"].data

    m = Tiny()
    opt = Adam([m.w], lr=0.1)
    m.w.grad = Tensor(np.ones(3, dtype=np.float32))
    opt.step()
    path = Path(tempfile.mkdtemp()) / "ckpt.npz"
    save_checkpoint(path, m, opt, epoch=4)
    m2 = Tiny()
    opt2 = Adam([m2.w], lr=0.5)
    epoch = load_checkpoint(path, m2, opt2)
    assert epoch == 4, f"load_checkpoint must return the saved epoch 4 as an int, got {epoch!r}"
    assert np.allclose(m2.w.data, m.w.data), (
        f"the model's parameters must be restored: expected w = {m.w.data}, got {m2.w.data}; "
        "pass {name: Tensor} for every 'model/<name>' key to model.load_state_dict")
    assert opt2.param_groups[0]["lr"] == 0.1, (
        f"the saved lr 0.1 must replace the new optimizer's 0.5, got "
        f"{opt2.param_groups[0]['lr']}: restore every 'optim/group/<j>/<key>'; a scheduled LR "
        "lives only there")
    restored = opt2.state.get(m2.w, {})
    assert restored.get("step") == 1 and np.allclose(
        restored.get("exp_avg", np.nan), opt.state[m.w]["exp_avg"]), (
        f"Adam's state must be restored: expected step 1 and exp_avg "
        f"{opt.state[m.w]['exp_avg']}, got step {restored.get('step')!r} and exp_avg "
        f"{restored.get('exp_avg')!r}; without them resuming restarts bias correction")
    pickled = []
    with np.load(path, allow_pickle=False) as data:
        for k in data.files:
            try:
                data[k]
            except ValueError:  # an object array refuses to load without pickle
                pickled.append(k)
    assert pickled == [], (
        f"expected plain numeric arrays only, got object arrays under {pickled}: an object "
        "array needs pickle, which can run arbitrary code when the file is loaded")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 5. Early stopping and the `Trainer`
#
# Validation loss usually falls, flattens, then rises as the model starts to memorise the
# training set. **Early stopping** watches it: an epoch *improves* when the loss drops below
# the best so far by more than `min_delta`; after `patience` epochs without improvement, stop.
#
# ```
#   val loss:  0.90  0.60  0.50  0.52  0.51  0.53   (patience 3, min_delta 0)
#   counter:   0     0     0     1     2     3 → stop; best was 0.50 at epoch 2
# ```

# %%
#| export
class EarlyStopping:
    """Stop when a monitored value has not improved for ``patience`` checks.

    Args:
        patience: checks without improvement allowed before stopping.
        min_delta: smallest change that counts as an improvement.
        mode: ``"min"`` (losses) or ``"max"`` (accuracies).
    """

    def __init__(self, patience: int = 5, min_delta: float = 0.0, mode: str = "min") -> None:
        if mode not in ("min", "max"):
            raise ValueError(f"mode must be 'min' or 'max', not {mode!r}")
        self.patience = patience
        self.min_delta = min_delta
        self.mode = mode
        self.best: float | None = None
        self.counter = 0
        self.should_stop = False

    def step(self, value: float) -> bool:
        """Record one check; return True when training should stop.

        APPROACH:
            1. Improvement: ``best is None``, or ``value < best - min_delta`` (mode "min"),
               or ``value > best + min_delta`` (mode "max").
            2. On improvement: ``best = value``, ``counter = 0``. Otherwise ``counter += 1``.
            3. ``should_stop = counter >= patience``; return it.

        EXAMPLE: patience 2, losses ``1.0, 0.9, 0.95, 0.91`` -> ``False, False, False, True``
        (0.95 and 0.91 do not beat the best, 0.9: counter 1, then 2 = patience).

        HINT: the first value is always an improvement (there is no best yet). With
        ``min_delta = 0.1`` and best ``1.0``, a loss of ``0.95`` is *not* an improvement: only
        values below ``0.9`` reset the counter.
        """
        # BEGIN SOLUTION NO PROMPT
        value = float(value)
        if self.best is None:
            improved = True
        elif self.mode == "min":
            improved = value < self.best - self.min_delta
        else:
            improved = value > self.best + self.min_delta
        if improved:
            self.best = value
            self.counter = 0
        else:
            self.counter += 1
        self.should_stop = self.counter >= self.patience
        return self.should_stop
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 07: implement EarlyStopping.step (see its docstring)")  # STUB


class Trainer:
    """Train ``model`` with ``loss_fn`` and ``optimizer`` over NumPy arrays in minibatches.

    Args:
        model: a Module (``parameters()``, ``train()``, ``eval()``, callable on a Tensor).
        loss_fn: ``loss_fn(output, target) -> scalar Tensor`` (e.g. ``nn.CrossEntropyLoss()``).
        optimizer: an :class:`Optimizer` over ``model.parameters()``.
        scheduler: optional LR scheduler, stepped once per epoch.
        max_grad_norm: clip the global gradient norm to this value before each step.
        accumulation_steps: minibatches whose gradients are summed before one optimizer step
            (gradient accumulation: ``batch_size=8, accumulation_steps=4`` takes the steps of
            batches of 32 with the activation memory of 8).
        logits: how ``evaluate`` reads a model's single output column (see :func:`accuracy`).

    Raises:
        ValueError: ``accumulation_steps`` is not an int >= 1.
    """

    def __init__(self, model: Any, loss_fn: Callable[[Tensor, Tensor], Tensor],
                 optimizer: Optimizer, scheduler: LRScheduler | None = None,
                 max_grad_norm: float | None = None, accumulation_steps: int = 1,
                 logits: bool | None = None) -> None:
        if isinstance(accumulation_steps, bool) or not isinstance(accumulation_steps, int) \
                or accumulation_steps < 1:
            raise ValueError(f"accumulation_steps must be an int >= 1, got "
                             f"{accumulation_steps!r}")
        self.model = model
        self.loss_fn = loss_fn
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.max_grad_norm = max_grad_norm
        self.accumulation_steps = accumulation_steps
        self.logits = logits

    def train_epoch(self, x: np.ndarray, y: np.ndarray, batch_size: int = 32,
                    rng: np.random.Generator | None = None) -> float:
        """One pass over shuffled minibatches; returns the mean loss per example.

        With ``accumulation_steps = k``, each optimizer step uses the gradients of ``k``
        consecutive minibatches (a *group*; the last group may be shorter), summed so that the
        step is exactly the step of one batch made of the whole group.

        APPROACH:
            1. ``self.model.train()``; ``total, count = 0.0, 0``;
               ``batches = list(iterate_minibatches(x, y, batch_size, rng=rng))``.
            2. For each group ``batches[i:i + k]``: ``zero_grad()``; ``n = `` the number of
               examples in the group. For each ``xb, yb`` of the group:
               ``loss = self.loss_fn(self.model(Tensor(xb)), Tensor(yb))``;
               ``(loss * (len(xb) / n)).backward()``; ``total += loss.item() * len(xb)``;
               ``count += len(xb)``. After the group: clip if ``self.max_grad_norm`` is set
               (use ``self.optimizer.params()``), then ``self.optimizer.step()``.
            3. Return ``total / count``.

        EXAMPLE: 10 examples, ``batch_size=4``: batches of 4, 4 and 2 examples. If their mean
        losses are 1.0, 1.0 and 0.4, the epoch loss is ``(4·1.0 + 4·1.0 + 2·0.4) / 10 = 0.88``
        — not the mean of the batch means, ``0.8``, which over-weights the short last batch.
        With ``accumulation_steps=2`` the groups are ``[4, 4]`` (each loss weighted 4/8) and
        ``[2]`` (weighted 2/2): two optimizer steps, the same as ``batch_size=8``.

        HINT: the scheduler is stepped by ``fit`` once per epoch, not here. Call
        ``zero_grad()`` once per *group*, before its first ``backward()``: gradients accumulate
        (module 05), which is exactly what summing a group needs. Weighting by
        ``len(xb) / n`` rather than ``1 / k`` keeps a short last group's step at full size.
        """
        # BEGIN SOLUTION NO PROMPT
        self.model.train()
        total, count = 0.0, 0
        batches = list(iterate_minibatches(x, y, batch_size, rng=rng))
        k = self.accumulation_steps
        for start in range(0, len(batches), k):
            group = batches[start:start + k]
            n = sum(len(xb) for xb, _ in group)
            self.optimizer.zero_grad()
            for xb, yb in group:
                loss = self.loss_fn(self.model(Tensor(xb)), Tensor(yb))
                (loss * (len(xb) / n)).backward()
                total += float(loss.item()) * len(xb)
                count += len(xb)
            if self.max_grad_norm is not None:
                clip_grad_norm_(self.optimizer.params(), self.max_grad_norm)
            self.optimizer.step()
        return total / max(count, 1)
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 07: implement Trainer.train_epoch (see its docstring)")  # STUB

    def evaluate(self, x: np.ndarray, y: np.ndarray, batch_size: int = 256) -> dict[str, float]:
        """Mean loss and accuracy over ``(x, y)`` without training: ``{"loss", "accuracy"}``.

        APPROACH: ``self.model.eval()``; inside ``with no_grad():`` walk the batches in order
        (``shuffle=False``), summing ``loss.item() * n`` and the number of correct predictions
        (``accuracy(out, yb, logits=self.logits) * n``); divide both by the number of examples.

        EXAMPLE: a model that predicts every one of 4 examples correctly with a loss of 0.1
        each -> ``{"loss": 0.1, "accuracy": 1.0}``.

        HINT: ``eval()`` turns dropout off (module 03) and ``no_grad()`` records no graph, so no
        activation is kept alive for a backward pass that never comes (module 05). Neither
        ``zero_grad()`` nor ``step()`` belongs here: evaluating must not change the model.
        """
        # BEGIN SOLUTION NO PROMPT
        self.model.eval()
        loss_sum, correct, count = 0.0, 0.0, 0
        with no_grad():
            for xb, yb in iterate_minibatches(x, y, batch_size, shuffle=False):
                out = self.model(Tensor(xb))
                loss_sum += float(self.loss_fn(out, Tensor(yb)).item()) * len(xb)
                correct += accuracy(out, yb, logits=self.logits) * len(xb)
                count += len(xb)
        count = max(count, 1)
        return {"loss": loss_sum / count, "accuracy": correct / count}
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 07: implement Trainer.evaluate (see its docstring)")  # STUB

    def fit(self, x: np.ndarray, y: np.ndarray, epochs: int, batch_size: int = 32, *,
            val_data: tuple[np.ndarray, np.ndarray] | None = None,
            early_stopping: EarlyStopping | None = None, seed: int = 0) -> dict[str, list[float]]:
        """Train for up to ``epochs`` epochs; returns the history (provided).

        History keys: ``train_loss``, ``lr`` (the LR used in each epoch) and, with
        ``val_data``, ``val_loss`` and ``val_accuracy``. Early stopping watches ``val_loss``
        (or ``train_loss`` without validation data).
        """
        rng = np.random.default_rng(seed)
        history: dict[str, list[float]] = {"train_loss": [], "lr": []}
        for _ in range(epochs):
            history["lr"].append(float(self.optimizer.param_groups[0]["lr"]))
            history["train_loss"].append(self.train_epoch(x, y, batch_size, rng))
            monitored = history["train_loss"][-1]
            if val_data is not None:
                metrics = self.evaluate(*val_data)
                history.setdefault("val_loss", []).append(metrics["loss"])
                history.setdefault("val_accuracy", []).append(metrics["accuracy"])
                monitored = metrics["loss"]
            if self.scheduler is not None:
                self.scheduler.step()
            if early_stopping is not None and early_stopping.step(monitored):
                break
        return history


# %% [raw]
# # BEGIN QUESTION
# name: loop
# points: 0

# %% [markdown]
# ### Check: early stopping and the loop

# %% [raw]
# # BEGIN TESTS

# %%
def test_early_stopping_patience(EarlyStopping):
    es = EarlyStopping(patience=2)
    got = [es.step(v) for v in [1.0, 0.9, 0.95, 0.91]]
    assert got == [False, False, False, True], (
        f"patience 2: two checks without beating 0.9 stop training; got {got}")
    es = EarlyStopping(patience=1, min_delta=0.1)
    got = [es.step(v) for v in [1.0, 0.95]]
    assert got == [False, True], (
        f"with min_delta 0.1, a drop of 0.05 is not an improvement (only < 0.9 is), so "
        f"patience 1 stops at once; got {got}")

# %%
def test_trainer_steps_accumulates_and_evaluates(Trainer, SGD, Tensor, np):
    class Line:  # y = x @ w, a model with one (3, 1) weight
        def __init__(self):
            self.w = Tensor(np.array([[0.5], [-0.5], [0.25]], dtype=np.float32),
                            requires_grad=True)
            self.mode = "new"

        def __call__(self, x):
            return (x @ self.w).reshape(-1)

        def parameters(self):
            return [self.w]

        def train(self):
            self.mode = "train"
            return self

        def eval(self):
            self.mode = "eval"
            return self

    def mse(out, target):
        return ((out - target) ** 2).mean()

    rng = np.random.default_rng(0)
    x = rng.standard_normal((10, 3)).astype(np.float32)
    y = (x @ np.array([1.0, 2.0, -1.0], dtype=np.float32)).astype(np.float32)
    m = Line()
    first = float(mse(m(Tensor(x)), Tensor(y)).item())
    loss = Trainer(m, mse, SGD(m.parameters(), lr=0.0)).train_epoch(x, y, batch_size=10)
    assert m.mode == "train", f"train_epoch must call model.train() first; the model is {m.mode}"
    assert abs(loss - first) < 1e-5, (
        f"one batch of all 10 examples with lr 0: the epoch loss is that batch's mean loss "
        f"{first:.6f}, got {loss!r}")
    big, small = Line(), Line()
    Trainer(big, mse, SGD(big.parameters(), lr=0.1)).train_epoch(
        x, y, batch_size=8, rng=np.random.default_rng(1))
    Trainer(small, mse, SGD(small.parameters(), lr=0.1), accumulation_steps=4).train_epoch(
        x, y, batch_size=2, rng=np.random.default_rng(1))
    assert np.allclose(small.w.numpy(), big.w.numpy(), atol=1e-5), (
        f"batch_size=2 with accumulation_steps=4 must take the same two steps as batch_size=8 "
        f"(groups of 8 and 2 examples): expected w {big.w.numpy().ravel()}, got "
        f"{small.w.numpy().ravel()}. zero_grad once per group, weight each loss by "
        "len(xb) / (examples in the group), step after the group")
    w_before = big.w.numpy().copy()
    res = Trainer(big, mse, SGD(big.parameters(), lr=1.0), logits=False).evaluate(
        x, y, batch_size=3)
    expected = float(mse(big(Tensor(x)), Tensor(y)).item())
    assert isinstance(res, dict) and set(res) == {"loss", "accuracy"}, (
        f"evaluate returns {{'loss': ..., 'accuracy': ...}}, got {res!r}")
    assert abs(res["loss"] - expected) < 1e-4, (
        f"evaluate's loss is the mean over all 10 examples ({expected:.5f}), got "
        f"{res['loss']!r}: weight each batch (3, 3, 3, 1) by its size")
    assert big.mode == "eval" and np.array_equal(big.w.numpy(), w_before), (
        f"evaluate must call model.eval() and leave the weights alone: expected mode 'eval' and "
        f"w {w_before.ravel()}, got mode {big.mode!r} and w {big.w.numpy().ravel()} (no step, "
        "no zero_grad: evaluating must not train)")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 6. Putting it together: XOR
#
# The 1969 milestone in miniature: a 2-16-1 MLP learns XOR, which no single layer can. The
# model is built from Tensor operations here so this cell only needs modules 01, 05, 06 and
# yours; the milestone script uses `nn.Linear` and `nn.BCEWithLogitsLoss` from modules 03–04.

# %%
class TinyMLP:
    def __init__(self, rng):
        self.w1 = Tensor(rng.standard_normal((2, 16)).astype(np.float32), requires_grad=True)
        self.b1 = Tensor(np.zeros(16, dtype=np.float32), requires_grad=True)
        self.w2 = Tensor((rng.standard_normal((16, 1)) * 0.5).astype(np.float32),
                         requires_grad=True)

    def __call__(self, x):
        return ((x @ self.w1 + self.b1).tanh() @ self.w2).reshape(-1)

    def parameters(self):
        return [self.w1, self.b1, self.w2]

    def train(self):
        return self

    def eval(self):
        return self


def mse(out, target):
    return ((out - target) ** 2).mean()


x_xor = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype=np.float32)
y_xor = np.array([0, 1, 1, 0], dtype=np.float32)
model = TinyMLP(np.random.default_rng(0))
opt = Adam(model.parameters(), lr=0.05)
trainer = Trainer(model, mse, opt, scheduler=StepLR(opt, step_size=150, gamma=0.5),
                  max_grad_norm=5.0, logits=False)  # outputs regress to 0/1: threshold 0.5
hist = trainer.fit(x_xor, y_xor, epochs=300, batch_size=4)
final_acc = trainer.evaluate(x_xor, y_xor)["accuracy"]
print(f"final loss {hist['train_loss'][-1]:.4f}, accuracy {final_acc:.2f}")
# Expected: a final loss near 0 (below 0.01) and accuracy 1.00

# %% [markdown]
# ## 7. Systems view
#
# * **Where the time goes.** Per step: forward ≈ 1×, backward ≈ 2× (module 05), optimizer
#   ≈ a few passes over the parameters (module 06), data ≈ copying a batch. For small models in
#   NumPy the Python overhead per op dominates; for large ones the matmuls do.
# * **Batch size** trades steps for parallelism: larger batches mean fewer, more efficient
#   steps and more activation memory (linear in the batch); the learning rate usually has to
#   grow with the batch (linear scaling rule) — with a **warm-up** so that early, large steps on
#   a random network do not diverge.
# * **Checkpoint size** = parameters + optimizer state: for Adam, 3× the model. Writing a 1B-
#   parameter model's checkpoint (12 GB in float32) every few minutes is itself an I/O problem;
#   PyTorch's `torch.save` writes a zip of raw tensor storages with a small pickle describing
#   them — which is why `torch.load(weights_only=True)` exists — and `safetensors`, like our
#   `.npz`, stores only named arrays.
# * **How PyTorch does it.** `torch.optim.lr_scheduler` has exactly the `step()` /
#   `get_last_lr()` contract you built; `torch.nn.utils.clip_grad_norm_` computes the same
#   global norm (fused over all tensors with `foreach`); training loops live in user code or in
#   libraries (Lightning, HF Trainer) that wrap this very loop.
#
# ### Measured: where a training step's memory goes
#
# Training memory has four parts: the **parameters**, their **gradients** (same size), the
# **optimizer state** (Adam: two moments, 2× the parameters) and the **activations** autograd
# keeps for the backward pass (linear in the batch size). The cell below measures each one for
# a 784-256-256-10 MLP, the activations by walking the graph the forward pass recorded (every
# tensor reachable from the loss that is not a parameter), and the step's peak allocation with
# `tracemalloc`. Then it shows **gradient accumulation**: 4 micro-batches of 32 keep the
# activations of 32 examples, not 128, for the same step.

# %%
import tracemalloc


class MemoryMLP:
    def __init__(self, rng, sizes=(784, 256, 256, 10)):
        self.ws = [Tensor((rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32),
                          requires_grad=True) for a, b in zip(sizes, sizes[1:])]

    def __call__(self, x):
        for i, w in enumerate(self.ws):
            x = x @ w
            if i < len(self.ws) - 1:
                x = x.clamp(min=0.0)
        return x

    def parameters(self):
        return list(self.ws)

    def train(self):
        return self

    def eval(self):
        return self


def graph_bytes(root, exclude):
    """Bytes of every tensor the graph from ``root`` keeps alive, except ``exclude``."""
    seen, stack, total = set(), [root], 0
    while stack:
        t = stack.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        if id(t) not in exclude:
            total += t.data.nbytes
        if t._node is not None:
            stack.extend(t._node.inputs)
    return total


def measure_step(batch, rng):
    net = MemoryMLP(np.random.default_rng(0))
    adam = Adam(net.parameters(), lr=1e-3)
    xb = Tensor(rng.standard_normal((batch, 784)).astype(np.float32))
    target = Tensor(rng.standard_normal((batch, 10)).astype(np.float32))
    params = {id(p) for p in net.parameters()}
    tracemalloc.start()
    loss = ((net(xb) - target) ** 2).mean()
    acts = graph_bytes(loss, params)
    loss.backward()
    adam.step()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    p_bytes = sum(p.data.nbytes for p in net.parameters())
    g_bytes = sum(p.grad.data.nbytes for p in net.parameters())
    state = sum(v.nbytes for s in adam.state.values() for v in s.values()
                if isinstance(v, np.ndarray))
    return p_bytes, g_bytes, state, acts, peak


mib = 2 ** 20
activations = {}
for batch in (32, 128):
    p_b, g_b, s_b, a_b, peak = measure_step(batch, np.random.default_rng(1))
    activations[batch] = a_b
    print(f"batch {batch:>3}: parameters {p_b / mib:5.2f} MiB, gradients {g_b / mib:5.2f} MiB, "
          f"Adam state {s_b / mib:5.2f} MiB, activations {a_b / mib:5.2f} MiB; "
          f"peak allocated during the step {peak / mib:5.2f} MiB")
print(f"activations, batch 128 / batch 32: {activations[128] / activations[32]:.1f}x; Adam "
      f"state / parameters: {s_b / p_b:.1f}x")
# Expected: parameters = gradients ≈ 1.0 MiB, Adam's state ≈ 2× that; activations grow 4× from
# batch 32 to 128 while the other three stay. Accumulating 4 micro-batches of 32 takes the step
# of batch 128 with batch 32's activations: Trainer(..., accumulation_steps=4), batch_size=32.

# %% [markdown]
# ## 8. ML systems thinking (graded by hand)

# %% [raw]
# # BEGIN QUESTION
# name: written_checkpoint
# manual: true
# points: 5

# %% [markdown]
# **Q1 · Checkpoints.** Your job on a shared cluster is pre-empted every ~2 hours. Training a
# 350M-parameter model with AdamW in float32, what does one checkpoint weigh, and what goes
# wrong if you save only the model's weights and resume? Why do we refuse pickle?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# Weights 350M × 4 B = 1.4 GB plus Adam's two moments 2.8 GB: ≈ 4.2 GB per checkpoint (plus
# negligible step counters, LR and epoch). Resuming from weights alone resets `m`, `v` and the
# step count: bias correction restarts and the first updates have a different scale, giving a
# loss spike, and the LR schedule restarts too unless the epoch is saved. Pickle executes
# arbitrary code on load, so a shared or downloaded checkpoint could run anything;
# `np.load(allow_pickle=False)` only reads arrays.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_clipping
# manual: true
# points: 5

# %% [markdown]
# **Q2 · Clipping.** Why clip by the *global* norm rather than clip each parameter's gradient
# (or each element) separately? What does the logged total norm tell you about a run?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# Global-norm clipping multiplies every gradient by the same factor, so the update keeps the
# direction of steepest descent and only its length is capped. Per-parameter or per-element
# clipping changes the relative sizes and hence the direction (per-element clipping turns
# large components into their sign). The logged norm is a health signal: steady or slowly
# falling is normal, sudden spikes point to bad batches or too high an LR, a steady rise
# usually precedes divergence, and a norm near zero means vanishing gradients.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_schedule
# manual: true
# points: 5

# %% [markdown]
# **Q3 · Schedules and batch size.** You scale training from batch 256 to batch 4096 on 16
# GPUs. How would you change the learning rate and the schedule, and why is a warm-up needed?
# What does the larger batch cost and save?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# By the linear scaling rule multiply the LR by 16 (4096/256), reached through a linear warm-up
# over the first few epochs, because large steps on a freshly initialised network (and Adam's
# early moment estimates) are unstable; then decay with cosine or steps over 16× fewer
# iterations. The larger batch saves wall-clock time (16× fewer sequential steps, better
# hardware utilisation) but costs activation memory per GPU step, communication for
# gradient all-reduce every step, and beyond a "critical batch size" generalisation and sample
# efficiency get worse.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## Summary
#
# You can now train anything the framework can express, with the tools that keep real runs
# alive: schedules, clipping, safe checkpoints, metrics and early stopping. Export with
# `python export.py 07` and run the XOR and digits milestones.
