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
# # Module 02 · Activations
#
# A stack of linear layers is still one linear map: `W2 @ (W1 @ x) = (W2 @ W1) @ x`. What makes
# a deep network more than a matrix is the **non-linearity** between the layers: the
# activation function. In this module you build the activations every later module uses —
# ReLU, Sigmoid, Tanh, GELU, Softmax and LogSoftmax — and you make them **numerically
# stable**, because the textbook formulas overflow on exactly the inputs a training run
# produces.
#
# ## Learning objectives
#
# By the end of this module you can:
#
# 1. explain why a network needs a non-linearity, and what each common activation does to its
#    input range and to the gradient that flows back through it;
# 2. implement `relu`, `sigmoid`, `tanh`, `gelu` (exact and tanh approximation), `softmax` and
#    `log_softmax` with PyTorch's names, arguments (`dim`, `approximate`) and results;
# 3. recognise **overflow** (`exp(1000) = inf`) and **cancellation** in floating point, and
#    remove them with two standard tricks: branch on the sign, and subtract the maximum;
# 4. count the memory and FLOPs an activation costs, and say why activations are
#    *memory-bound* while matrix products are *compute-bound*.
#
# ## How to work through this notebook
#
# * Fill in every function that raises `NotImplementedError`. Its docstring gives **what** it
#   computes, an **APPROACH**, an **EXAMPLE** with the expected output and **HINTS**.
# * Run each `grader.check(...)` cell: the public tests explain what is wrong and why it
#   matters. The hidden suite checks the same behaviour on more inputs (large values, other
#   `dim`s, other shapes).
# * Cells starting with `#| export` become `tinytorch/activations.py` when you run
#   `python export.py 02`. Your `Tensor` from module 01 is imported; every activation below is built
#   from `Tensor` operations, so module 05 (autograd) will differentiate it automatically.

# %%
import numpy as np

# %% [markdown]
# ## 0. The provided machinery
#
# The first export cell is given. It holds:
#
# * `Activation` — a tiny base class. In PyTorch `nn.ReLU` is an `nn.Module`; we meet `Module`
#   only in module 03, so activations get a minimal stand-in that already behaves like a
#   parameter-free module (`__call__` runs `forward`, `parameters()` is empty, `train()` /
#   `eval()` exist). Module 03 declares it a kind of `Module`, so `Sequential` accepts it.
# * `_ForwardHooks` — PyTorch's **forward hooks**, shared by `Activation` and module 03's
#   `Module`: `layer(x)` runs every `register_forward_pre_hook` hook, then `forward`, then every
#   `register_forward_hook` hook. Nothing uses them until module 14, whose profiler times and
#   counts each layer through them without changing any layer.
# * `erf` / `erfc` — NumPy has no error function; these are vectorised approximations with a
#   relative error below 1.2e-7 (better than float32 needs).
# * `_softmax_dim` — checks the input and `dim` of a softmax as PyTorch does (float input
#   only; `Softmax()` created without a `dim` gets PyTorch's legacy choice, with its warning).

# %%
#| export
"""Module 02 · Activations — depends on: tensor; used by: layers, losses, every model.

Element-wise non-linearities (ReLU, Sigmoid, Tanh, GELU) and the normalising maps Softmax and
LogSoftmax, as functions (``relu``, ``softmax``, ...) and as parameter-free modules (``ReLU``,
``Softmax(dim)``, ...), numerically stable for large inputs.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from tinytorch.tensor import Context, Function, Tensor

# ----------------------------------------------------------------------------- provided


def erfc(x: np.ndarray) -> np.ndarray:
    """Complementary error function ``1 - erf(x)``, element-wise, in float64.

    Chebyshev fit (Numerical Recipes ``erfcc``): relative error below 1.2e-7 everywhere, so
    tails such as ``erfc(6) ~ 2e-17`` keep their precision instead of cancelling to 0.
    """
    x = np.asarray(x, dtype=np.float64)
    z = np.abs(x)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = (-1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (
        -0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (
            -0.82215223 + t * 0.17087277)))))))))
    ans = t * np.exp(-z * z + poly)
    return np.where(x >= 0, ans, 2.0 - ans)


def erf(x: np.ndarray) -> np.ndarray:
    """Error function ``erf(x) = 2/sqrt(pi) * integral_0^x exp(-t^2) dt``, in float64."""
    return 1.0 - erfc(x)


def _softmax_dim(name: str, input: Tensor, dim: int | None) -> int | None:  # noqa: A002
    """The axis a softmax normalises, checked as PyTorch does.

    Float input only (a softmax of integers is refused, as in PyTorch); ``dim=None`` takes
    PyTorch's legacy choice with its warning; a 0-d tensor gives None (NumPy's "everything").
    """
    if input.dtype.kind != "f":
        raise RuntimeError(f"{name} is not implemented for {input.dtype} tensors: use .float()")
    if dim is None:
        warnings.warn(f"Implicit dimension choice for {name} has been deprecated. "
                      "Change the call to include dim=X as an argument.", stacklevel=3)
        dim = 0 if input.ndim in (0, 1, 3) else 1
    size = max(input.ndim, 1)
    if not -size <= dim < size:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-size}, "
                         f"{size - 1}], but got {dim})")
    return dim % input.ndim if input.ndim else None


class RemovableHandle:
    """What ``register_forward_hook`` returns (``torch.utils.hooks.RemovableHandle``):
    ``handle.remove()`` unregisters the hook; ``with handle:`` removes it on exit."""

    _next_id = 0

    def __init__(self, hooks: dict[int, Any]) -> None:
        self.hooks = hooks
        self.id = RemovableHandle._next_id
        RemovableHandle._next_id += 1

    def remove(self) -> None:
        self.hooks.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


class _ForwardHooks:
    """``module(*args)`` with PyTorch's forward hooks (shared by ``Activation`` and ``Module``).

    ``__call__`` runs every pre-hook ``hook(module, args)`` (a result that is not None
    replaces ``args``; a non-tuple becomes a 1-tuple), then ``forward(*args, **kwargs)``,
    then every hook ``hook(module, args, output)`` (a result that is not None replaces the
    output), in registration order. Without hooks it is a plain ``forward`` call.

    Example:
        >>> seen = []
        >>> relu = ReLU()
        >>> handle = relu.register_forward_hook(lambda m, args, out: seen.append(out.shape))
        >>> _ = relu(Tensor([[1.0, -1.0]])); handle.remove(); _ = relu(Tensor([2.0]))
        >>> seen
        [(1, 2)]
    """

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define forward")

    def register_forward_pre_hook(self, hook: Any) -> RemovableHandle:
        """Call ``hook(module, args)`` before every ``forward``."""
        table = self.__dict__.setdefault("_forward_pre_hooks", {})
        handle = RemovableHandle(table)
        table[handle.id] = hook
        return handle

    def register_forward_hook(self, hook: Any) -> RemovableHandle:
        """Call ``hook(module, args, output)`` after every ``forward``."""
        table = self.__dict__.setdefault("_forward_hooks", {})
        handle = RemovableHandle(table)
        table[handle.id] = hook
        return handle

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        pre = self.__dict__.get("_forward_pre_hooks")
        post = self.__dict__.get("_forward_hooks")
        if not pre and not post:
            return self.forward(*args, **kwargs)
        for hook in list(pre.values()) if pre else ():
            result = hook(self, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
        output = self.forward(*args, **kwargs)
        for hook in list(post.values()) if post else ():
            result = hook(self, args, output)
            if result is not None:
                output = result
        return output


class Activation(_ForwardHooks):
    """A parameter-free module: ``act(x)`` calls ``act.forward(x)`` (and any forward hooks).

    A minimal stand-in for ``nn.Module`` (module 03), which registers it as a virtual
    subclass, so ``isinstance(ReLU(), nn.Module)`` is True and containers accept it.
    """

    def __init__(self) -> None:
        self.training = True
        self._parameters: dict[str, Any] = {}
        self._buffers: dict[str, Any] = {}
        self._modules: dict[str, Any] = {}

    def train(self, mode: bool = True) -> Activation:
        self.training = bool(mode)
        return self

    def eval(self) -> Activation:
        return self.train(False)

    def parameters(self, recurse: bool = True) -> Iterator[Any]:
        return iter(())

    def named_parameters(self, prefix: str = "", recurse: bool = True) -> Iterator[Any]:
        return iter(())

    def children(self) -> Iterator[Any]:
        return iter(())

    def modules(self) -> Iterator[Any]:
        yield self

    def zero_grad(self, set_to_none: bool = True) -> None:
        return None

    def state_dict(self) -> dict[str, np.ndarray]:
        return {}

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.extra_repr()})"


# %% [markdown]
# ## 1. ReLU: the default non-linearity
#
# ```
#   relu(x) = max(0, x)                       relu'(x) = 1 if x > 0 else 0
#
#        out                                   a gradient either passes unchanged
#         │      ╱                             (x > 0) or is blocked (x <= 0): cheap,
#         │    ╱                               and it does not shrink through many
#    ─────┼──╱──────── x                       layers the way sigmoid's does.
#         │
# ```
#
# ReLU made deep networks trainable (AlexNet, 2012): it costs one comparison per element and
# its gradient does not *saturate* for positive inputs. Its failure mode is the "dead ReLU": a
# unit whose input is always negative never passes a gradient again.
#
# **The kink at 0.** `max(0, x)` has no derivative at exactly `x = 0`; every framework picks
# one, and PyTorch (like TensorFlow and JAX) picks **0**: a unit whose input is exactly 0 passes
# no gradient. Module 01's `clamp(min=0)` computes the same values, but its bounds are
# inclusive, so its gradient at 0 is 1 — a different network as soon as inputs hit 0 exactly
# (ReLU outputs feeding another ReLU, quantized inputs, zero padding). So ReLU gets its own
# operation whose gradient is `1 where the output is positive, else 0`.
#
# Most activations below are built from `Tensor` operations (`exp`, `tanh`, arithmetic,
# `sum`, ...), never by returning a bare NumPy array: the operations you use are recorded, and
# module 05 turns that record into gradients. When no combination of `Tensor` operations gives
# the right values *and* the right gradient, an activation is a `Function`: an operation that
# brings its own gradient.
#
# **How a `Function` works** (the provided machinery of module 01, used here for the first time;
# PyTorch's `torch.autograd.Function` has the same shape):
#
# ```
#   relu(t)     ->  _ReLUFn.apply(t)                    t: Tensor
#                     ctx = Context()
#                     out = _ReLUFn.forward(ctx, t.data)    <- you write this: arrays in,
#                                                              one array out
#                     return Tensor(out), remembering (_ReLUFn, ctx, t) for module 05
#
#   inside forward:  ctx.save_for_backward(a, b, ...)   stores arrays; backward reads ctx.saved
# ```
#
# So inside `forward` you use NumPy (`np.maximum`, `np.exp`, boolean masks, `np.empty_like`),
# never `Tensor` methods, and you return a NumPy array of the input's dtype. `backward` is
# given (module 05 explains gradients).

# %%
#| export
class _ReLUFn(Function):
    """ReLU with PyTorch's gradient: 1 where the output is positive, 0 elsewhere (also at 0)."""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray) -> np.ndarray:
        """Compute ``max(x, 0)`` element-wise; save the output for backward.

        APPROACH:
            1. ``out = np.maximum(x, 0)`` — same shape and dtype as ``x`` (a NaN stays NaN,
               as in PyTorch).
            2. ``ctx.save_for_backward(out)`` and return ``out``.

        EXAMPLE:
            >>> _ReLUFn.forward(Context(), np.array([-2.0, 0.0, 3.0], np.float32))
            array([0., 0., 3.], dtype=float32)

        HINT: save the *output*, not the input: backward only needs to know where it is
        positive, and the output is what the next layer keeps alive anyway.
        """
        # BEGIN SOLUTION NO PROMPT
        out = np.maximum(x, 0)
        ctx.save_for_backward(out)
        return out
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 02: implement _ReLUFn.forward (see its docstring)")  # STUB

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray]:
        # provided: relu'(x) = 0 where the output is <= 0 (also at x = 0), else 1; a NaN
        # input passes its gradient, as in PyTorch. An infinite gradient reaching a dead unit
        # must stay 0, and inf * 0 would be NaN: np.where then. A finite gradient may simply
        # be multiplied by the 0/1 mask, which is ~8x faster than np.where with a scattered
        # mask (np.where branches on every element and mispredicts half of them).
        (out,) = ctx.saved
        dead = out <= 0
        if np.isfinite(grad).all():
            return (grad * ~dead,)
        return (np.where(dead, 0, grad).astype(grad.dtype, copy=False),)


def relu(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's argument name
    """Rectified linear unit, element-wise: ``max(0, x)``; same shape and dtype.

    EXAMPLE:
        >>> relu(Tensor([-2.0, 0.0, 3.0]))
        tensor([0., 0., 3.])
    """
    if input.dtype == np.bool_:
        raise RuntimeError("Boolean inputs not supported for relu")
    return _ReLUFn.apply(input)


# %% [raw]
# # BEGIN QUESTION
# name: relu
# points: 0

# %% [markdown]
# ### Check: ReLU

# %% [raw]
# # BEGIN TESTS

# %%
def test_relu_values(relu, Tensor, np):
    out = relu(Tensor([-2.0, -0.5, 0.0, 0.5, 3.0]))
    assert isinstance(out, Tensor), (
        f"relu must return a Tensor (so autograd can track it), got {type(out).__name__}")
    assert out.numpy().tolist() == [0.0, 0.0, 0.0, 0.5, 3.0], (
        f"relu keeps positives and zeroes negatives, got {out.numpy().tolist()}")
    assert out.dtype == np.float32, (
        f"relu must keep float32, got {out.dtype}: a float64 result doubles the memory of "
        "every activation (np.maximum(x, 0) keeps the input's dtype)")

# %%
def test_relu_gradient_is_zero_at_zero(_ReLUFn, Context, np):
    ctx = Context()
    out = _ReLUFn.forward(ctx, np.array([-1.0, 0.0, 2.0], dtype=np.float32))
    assert out.tolist() == [0.0, 0.0, 2.0], f"relu([-1, 0, 2]) is [0, 0, 2], got {out.tolist()}"
    assert len(ctx.saved) == 1, (
        f"forward must save one array (the output) with ctx.save_for_backward; ctx.saved holds "
        f"{len(ctx.saved)}: the given backward reads it")
    (grad,) = _ReLUFn.backward(ctx, np.ones(3, dtype=np.float32))
    assert grad.tolist() == [0.0, 0.0, 1.0], (
        f"relu's gradient is [0, 0, 1] at x = [-1, 0, 2] (0 at exactly 0, as in PyTorch), got "
        f"{grad.tolist()}: save the output of np.maximum, not something else")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 2. Sigmoid and Tanh: squashing functions, and a stability trick
#
# ```
#   sigmoid(x) = 1 / (1 + exp(-x))        range (0, 1): a probability
#   tanh(x)    = 2·sigmoid(2x) - 1        range (-1, 1): zero-centred
#
#    1 ┤            ___________           sigmoid'(x) = s(1 - s) <= 0.25
#      │         ╱                        tanh'(x)    = 1 - tanh(x)^2 <= 1
#  0.5 ┤       ╱                          Both go to 0 for large |x|: the unit *saturates*
#      │ ____╱                            and stops learning (vanishing gradients).
#    0 ┼──────────────── x
# ```
#
# **The overflow trap.** In float32, `exp(x)` overflows to `inf` for `x > 88.7`. The textbook
# formula `1 / (1 + exp(-x))` at `x = -1000` computes `exp(1000) = inf` and returns
# `1 / inf = 0` — correct by luck, with an overflow warning — but the equivalent
# `exp(x) / (1 + exp(x))` at `x = +1000` gives `inf / inf = nan`. The fix is to branch on the
# sign so that `exp` only ever sees a *non-positive* argument:
#
# ```
#   x >= 0:  1 / (1 + exp(-x))        exp(-x) in (0, 1]  -> no overflow
#   x <  0:  exp(x) / (1 + exp(x))    exp(x)  in (0, 1)  -> no overflow, and tiny values
#                                                            such as sigmoid(-100) = 3.7e-44
#                                                            keep their precision
# ```
#
# Branching is not a `Tensor` operation, so sigmoid is a `Function` like ReLU: you write
# `forward` on raw NumPy arrays; `backward` is given. (Module 05 explains gradients: the
# derivative of sigmoid is `s·(1 - s)`, so backward reuses the output saved in `ctx` instead of
# recomputing `exp`.) Integer inputs become float32 first, as in PyTorch: `sigmoid` of an
# integer tensor is a probability, not an integer.

# %%
#| export
class _SigmoidFn(Function):
    """Numerically stable logistic sigmoid with its own gradient."""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray) -> np.ndarray:
        """Compute ``1 / (1 + exp(-x))`` element-wise without overflow; save the output.

        APPROACH:
            1. ``out = np.empty_like(x)`` (same shape and dtype); ``pos = x >= 0`` (a mask).
            2. ``out[pos] = 1 / (1 + np.exp(-x[pos]))`` — here ``-x <= 0``.
            3. ``e = np.exp(x[~pos])`` (here ``x < 0``), then ``out[~pos] = e / (1 + e)``.
            4. ``ctx.save_for_backward(out)`` and return ``out``.

        EXAMPLE:
            >>> _SigmoidFn.forward(Context(), np.array([-1000.0, 0.0, 1000.0], np.float32))
            array([0. , 0.5, 1. ], dtype=float32)

        HINT: no NumPy warning should appear for ``x = ±1000``: ``exp`` may only see
        arguments <= 0.
        """
        # BEGIN SOLUTION NO PROMPT
        out = np.empty_like(x)
        pos = x >= 0
        out[pos] = 1.0 / (1.0 + np.exp(-x[pos]))
        e = np.exp(x[~pos])
        out[~pos] = e / (1.0 + e)
        ctx.save_for_backward(out)
        return out
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 02: implement _SigmoidFn.forward (see its docstring)")  # STUB

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray]:
        # provided: d sigmoid / dx = s * (1 - s), with s the saved output
        (s,) = ctx.saved
        return (grad * s * (1 - s),)


def sigmoid(input: Tensor) -> Tensor:  # noqa: A002
    """Logistic sigmoid ``1 / (1 + exp(-x))``, stable for any input; integers give float32.

    EXAMPLE:
        >>> sigmoid(Tensor([0.0, 2.0, -1000.0]))
        tensor([0.5   , 0.8808, 0.    ])
    """
    return _SigmoidFn.apply(input if input.dtype.kind == "f" else input.float())


def tanh(input: Tensor) -> Tensor:  # noqa: A002
    """Hyperbolic tangent, element-wise (range (-1, 1)).

    APPROACH: module 01's ``Tensor.tanh`` already computes it stably (``np.tanh`` never
    overflows); return it.

    EXAMPLE:
        >>> tanh(Tensor([0.0, 1.0, 1000.0]))
        tensor([0.    , 0.7616, 1.    ])

    HINT: one line. Writing it as ``(e^x - e^-x) / (e^x + e^-x)`` would overflow to
    ``inf / inf = nan`` at ``x = 1000``.
    """
    # BEGIN SOLUTION NO PROMPT
    return input.tanh()
    # END SOLUTION
    raise NotImplementedError("module 02: implement tanh (see its docstring)")  # STUB


# %% [raw]
# # BEGIN QUESTION
# name: pointwise
# points: 0

# %% [markdown]
# ### Check: Sigmoid and Tanh

# %% [raw]
# # BEGIN TESTS

# %%
def test_sigmoid_is_stable(sigmoid, Tensor, np):
    with np.errstate(over="raise", invalid="raise"):
        out = sigmoid(Tensor([-1000.0, -100.0, 0.0, 100.0, 1000.0])).numpy()
    assert not np.isnan(out).any(), (
        f"sigmoid returned NaN: {out}; exp overflowed (branch on the sign)")
    assert np.allclose(out, [0.0, 0.0, 0.5, 1.0, 1.0]), f"sigmoid of large |x| is wrong: {out}"
    assert out[1] > 0, (
        f"sigmoid(-100) = 3.7e-44 is tiny but positive, got {out[1]}: for x < 0 use "
        "exp(x) / (1 + exp(x))")
    at_two = sigmoid(Tensor([2.0])).item()
    assert abs(at_two - 0.880797) < 1e-6, (
        f"sigmoid(2) = 1 / (1 + exp(-2)) = 0.880797, got {at_two}")

# %%
def test_tanh_values(tanh, Tensor, np):
    out = tanh(Tensor([-1000.0, 0.0, 1.0])).numpy()
    assert np.allclose(out, [-1.0, 0.0, 0.7615942]), f"tanh is wrong: {out}"

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 3. GELU: the transformer's activation
#
# GELU weights each input by the probability that a standard normal variable is smaller:
#
# ```
#   gelu(x) = x · Φ(x) = x · ½ · (1 + erf(x / √2))                 approximate='none'
#   gelu(x) ≈ ½ · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³)))      approximate='tanh'
#
#   relu:  ──────┘╱      a hard corner at 0
#   gelu:  ─────╮╱       smooth, slightly negative for x < 0 (minimum -0.17 at x = -0.75)
# ```
#
# BERT and GPT-2 use GELU. The tanh form predates a fast `erf` on GPUs; GPT-2's weights were
# trained with it, which is why PyTorch keeps both. Exact GELU needs `erf`, which is not a
# `Tensor` operation, so it is a `Function` like sigmoid (use the provided `erf`); the tanh
# form is built from `Tensor` operations.

# %%
#| export
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


class _GELUFn(Function):
    """Exact GELU ``x · Φ(x)`` with its own gradient."""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray) -> np.ndarray:
        """Compute ``x * 0.5 * (1 + erf(x / sqrt(2)))`` element-wise; save ``x``.

        APPROACH:
            1. ``cdf = 0.5 * erfc(-x / math.sqrt(2))`` — the same as ``0.5 * (1 + erf(...))``
               but without cancellation for very negative ``x``.
            2. ``ctx.save_for_backward(x)``.
            3. Return ``(x * cdf).astype(x.dtype)`` (``erfc`` works in float64).

        EXAMPLE:
            >>> _GELUFn.forward(Context(), np.array([-1.0, 0.0, 1.0], np.float32)).round(4)
            array([-0.1587,  0.    ,  0.8413], dtype=float32)

        HINT: ``erfc`` and ``math.sqrt`` are provided above; work on the NumPy array ``x``
        (not a ``Tensor``), and check that a float32 input gives a float32 output.
        """
        # BEGIN SOLUTION NO PROMPT
        cdf = 0.5 * erfc(-x / math.sqrt(2.0))
        ctx.save_for_backward(x)
        return (x * cdf).astype(x.dtype)
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 02: implement _GELUFn.forward (see its docstring)")  # STUB

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray]:
        # provided: d/dx [x Φ(x)] = Φ(x) + x φ(x), with φ the standard normal density
        (x,) = ctx.saved
        x64 = x.astype(np.float64)
        cdf = 0.5 * erfc(-x64 / math.sqrt(2.0))
        pdf = np.exp(-0.5 * x64 * x64) / math.sqrt(2.0 * math.pi)
        return ((grad * (cdf + x64 * pdf)).astype(grad.dtype),)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:  # noqa: A002
    """Gaussian error linear unit, exact (``approximate='none'``) or the tanh approximation.

    Args:
        input: a float tensor of any shape.
        approximate: ``'none'`` for ``x·Φ(x)`` or ``'tanh'`` for
            ``0.5·x·(1 + tanh(sqrt(2/pi)·(x + 0.044715·x³)))``.

    Returns:
        A tensor of the same shape and dtype.

    Raises:
        ValueError: ``approximate`` is neither ``'none'`` nor ``'tanh'``.

    APPROACH:
        1. ``'none'``: ``return _GELUFn.apply(input)`` (your Function from above).
        2. ``'tanh'``: build the formula from Tensor operations — ``inner = (x + 0.044715 ·
           x·x·x) · _SQRT_2_OVER_PI`` (defined above), then ``0.5 · x · (inner.tanh() + 1)``.
        3. Anything else: ``raise ValueError`` naming the bad value (PyTorch does the same).

    EXAMPLE:
        >>> gelu(Tensor([-1.0, 0.0, 1.0])), gelu(Tensor([1.0]), approximate="tanh")
        (tensor([-0.1587,  0.    ,  0.8413]), tensor([0.8412]))

    HINT: multiplying a float32 Tensor by a Python float keeps float32. Write the cube as
    ``x * x * x``, as PyTorch's kernel does, not ``x ** 3``: at a huge ``x`` (float32:
    1.1e19 to 1.8e19) the gradient of ``x ** 3``, ``3x²``, overflows while ``x²`` does not,
    and the saturated tanh's gradient 0 times that ``inf`` is NaN; through ``x * x * x`` it
    stays 0.
    """
    if input.dtype.kind != "f":
        raise RuntimeError(f"gelu is not implemented for {input.dtype} tensors (as in PyTorch)")
    # BEGIN SOLUTION NO PROMPT
    if approximate == "none":
        return _GELUFn.apply(input)
    if approximate == "tanh":
        inner = (input + input * input * input * 0.044715) * _SQRT_2_OVER_PI
        return input * 0.5 * (inner.tanh() + 1.0)
    raise ValueError(f"gelu: approximate must be 'none' or 'tanh', not {approximate!r}")
    # END SOLUTION
    raise NotImplementedError("module 02: implement gelu (see its docstring)")  # STUB


# %% [raw]
# # BEGIN QUESTION
# name: gelu
# points: 0

# %% [markdown]
# ### Check: GELU

# %% [raw]
# # BEGIN TESTS

# %%
def test_gelu_exact_and_tanh(gelu, Tensor, np):
    x = Tensor([-3.0, -1.0, 0.0, 1.0, 3.0])
    exact = gelu(x).numpy()
    assert np.allclose(exact, [-0.00404951, -0.15865526, 0.0, 0.8413447, 2.9959507], atol=1e-6), (
        f"exact GELU is x * Phi(x); got {exact}")
    approx = gelu(x, approximate="tanh").numpy()
    assert np.allclose(approx, [-0.00363752, -0.15880801, 0.0, 0.841192, 2.9963627], atol=1e-6), (
        f"the tanh approximation is 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))); got {approx}")
    assert exact.dtype == np.float32 and approx.dtype == np.float32, (
        f"GELU must keep float32, got {exact.dtype} (exact) and {approx.dtype} (tanh): a "
        "float64 constant in the formula promotes the whole activation")
    try:
        gelu(x, approximate="fast")
    except ValueError:
        pass
    else:
        raise AssertionError("approximate='fast' is not a GELU variant: raise ValueError")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 4. Softmax and LogSoftmax: from scores to probabilities
#
# A classifier's last layer produces one score (**logit**) per class. Softmax turns a row of
# logits into a probability distribution along `dim`:
#
# ```
#   softmax(x)_i = exp(x_i) / Σ_j exp(x_j)            every output in (0, 1), each row sums to 1
#
#   logits  [2.0, 1.0, 0.1]  ──exp──►  [7.39, 2.72, 1.11]  ──÷ 11.21──►  [0.659, 0.242, 0.099]
# ```
#
# **Subtract the maximum.** Softmax is *shift-invariant*: `softmax(x) = softmax(x - c)` for any
# constant `c` (the factor `exp(-c)` cancels). With `c = max(x)` the largest exponent is
# `exp(0) = 1` and nothing overflows; without it, logits of `[1000, 0]` give `inf / inf = nan`.
#
# **LogSoftmax** is what losses need (module 04). Computing `log(softmax(x))` loses everything
# below float32's smallest number: `softmax([0, -200])` rounds its second entry to `0` and the
# log is `-inf`. Work in log space instead (the *log-sum-exp* trick):
#
# ```
#   log_softmax(x) = (x - m) - log Σ_j exp(x_j - m),        m = max_j x_j
#                  = [0, -200] - log(1 + e^-200) = [0, -200]   (exact, no -inf)
# ```
#
# `dim` says which axis is normalised: for logits of shape `(batch, classes)` it is `dim=-1`
# (or `1`); for a sequence model's `(batch, time, vocab)` also `-1`; attention (module 12)
# normalises the last axis of a `(B, heads, T, T)` score tensor.
#
# Both are `Function`s, like sigmoid: one operation each, whose gradient is given. (Built from
# `Tensor` operations, log-softmax would record five operations — subtract, exp, sum, log,
# subtract — and keep five temporaries alive for backward; one `Function` keeps only its
# output, and its backward is one line. The loss of module 04 calls it on every batch.)
# The maximum is a *constant* for the gradient (shift-invariance means the result does not
# depend on it), so it needs no gradient of its own.
#
# **Speed: a row's sum is a matrix product.** Along the last axis (logits `(N, C)`, attention
# scores `(B, h, T, T)`) NumPy's `sum` adds each short row in its own small loop; a product
# with a column of ones, `e @ ones((C, 1))`, adds every row in one BLAS call, several times
# faster for rows this short. The given `_sums` does that for the last axis.

# %%
#| export
def _sums(a: np.ndarray, dim: int | None) -> np.ndarray:
    """``a.sum(axis=dim, keepdims=True)`` (provided); along the last axis as one product
    with a column of ones (see the speed note above)."""
    if dim is not None and dim in (-1, a.ndim - 1):
        return np.matmul(a, np.ones((a.shape[-1], 1), dtype=a.dtype))
    return a.sum(axis=dim, keepdims=True)


class _SoftmaxFn(Function):
    """Softmax along ``dim``, stable for any logits; saves its output for backward."""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray, dim: int | None = None) -> np.ndarray:
        """``exp(x - max) / sum(exp(x - max))`` along ``dim``, on a NumPy array.

        APPROACH:
            1. ``m = x.max(axis=dim, keepdims=True, initial=-np.inf)`` — NOTE: subtracting the
               maximum keeps every exponent <= 0, so nothing overflows; ``initial=-np.inf``
               makes the maximum of an empty row ``-inf`` instead of an error (PyTorch returns
               an empty result for an empty tensor).
            2. ``e = np.asarray(x - m)`` — a new array (``asarray``: for a 0-d input NumPy
               returns a scalar); exponentiate it in place, ``np.exp(e, out=e)``.
            3. Divide it in place too: ``e /= _sums(e, dim)`` (given: ``e.sum(axis=dim,
               keepdims=True)``, faster along the last axis); ``out = e``.
            4. ``ctx.save_for_backward(out, dim)`` (the given backward needs both) and return
               ``out``.

        EXAMPLE:
            >>> _SoftmaxFn.forward(Context(), np.array([[1.0, 2.0, 3.0]], np.float32), dim=1).round(4)
            array([[0.09  , 0.2447, 0.6652]], dtype=float32)

        HINT: ``keepdims=True`` keeps the reduced axis with size 1 so the division broadcasts;
        use ``dim`` in both the max and the sum. A 0-d input arrives with ``dim=None`` (NumPy's
        "everything"): it is a row of one, and its softmax is 1. NOTE (speed): ``np.exp(x -
        m)`` and ``e / s`` would each allocate another array of ``x``'s size; working in the
        one new array ``x - m`` skips both allocations (a large share of a softmax's time on
        module 12's attention scores).
        """
        # BEGIN SOLUTION NO PROMPT
        m = x.max(axis=dim, keepdims=True, initial=-np.inf)
        e = np.asarray(x - m)  # a new array: exponentiate and normalise it in place
        np.exp(e, out=e)
        e /= _sums(e, dim)
        ctx.save_for_backward(e, dim)
        return e
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 02: implement _SoftmaxFn.forward (see its docstring)")  # STUB

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray]:
        # provided: d softmax: s * (grad - sum(grad * s)) along dim, in the one new array
        # grad * s (asarray: a 0-d result is a NumPy scalar), as log_softmax's below
        s, dim = ctx.saved
        d = np.asarray(grad * s)
        np.subtract(grad, _sums(d, dim), out=d)
        d *= s
        return (d,)


class _LogSoftmaxFn(Function):
    """``log(softmax(x))`` along ``dim``, computed in log space; saves its output."""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray, dim: int | None = None) -> np.ndarray:
        """``(x - m) - log(sum(exp(x - m)))`` along ``dim`` (log-sum-exp), on a NumPy array.

        APPROACH:
            1. ``shifted = np.asarray(x - x.max(axis=dim, keepdims=True, initial=-np.inf))``
               (a new array; ``asarray`` as in softmax).
            2. ``shifted -= np.log(_sums(np.exp(shifted), dim))``, in place:
               ``out = shifted``.
            3. ``ctx.save_for_backward(out, dim)`` and return ``out``.

        EXAMPLE:
            >>> _LogSoftmaxFn.forward(Context(), np.array([0.0, -200.0], np.float32), dim=0)
            array([   0., -200.], dtype=float32)

        HINT: never compute ``np.log(softmax)``: for the example it returns ``[0, -inf]``.
        A 0-d input (``dim=None``) is a row of one: its log_softmax is 0.
        """
        # BEGIN SOLUTION NO PROMPT
        shifted = np.asarray(x - x.max(axis=dim, keepdims=True, initial=-np.inf))
        shifted -= np.log(_sums(np.exp(shifted), dim))  # in place: out
        ctx.save_for_backward(shifted, dim)
        return shifted
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 02: implement _LogSoftmaxFn.forward (see its docstring)")  # STUB

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray]:
        # provided: d log_softmax: grad - softmax * sum(grad), with softmax = exp(out), in
        # the one new array exp(out) (asarray: a 0-d result is a NumPy scalar)
        out, dim = ctx.saved
        d = np.asarray(np.exp(out))
        d *= _sums(grad, dim)
        return (np.subtract(grad, d, out=d),)


def softmax(input: Tensor, dim: int | None = None) -> Tensor:  # noqa: A002
    """Softmax along ``dim``; entries are in (0, 1) and sum to 1 along ``dim``.

    Args:
        input: a float tensor of any shape.
        dim: the axis to normalise (negative values count from the end). ``None`` uses
            PyTorch's legacy rule and warns.

    EXAMPLE:
        >>> softmax(Tensor([[1.0, 2.0, 3.0], [1000.0, 0.0, -1000.0]]), dim=1)
        tensor([[0.09  , 0.2447, 0.6652],
                [1.    , 0.    , 0.    ]])
    """
    return _SoftmaxFn.apply(input, dim=_softmax_dim("softmax", input, dim))


def log_softmax(input: Tensor, dim: int | None = None) -> Tensor:  # noqa: A002
    """``log(softmax(x))`` along ``dim``, stable for any logits.

    EXAMPLE:
        >>> log_softmax(Tensor([0.0, -200.0]), dim=0)
        tensor([   0., -200.])
    """
    return _LogSoftmaxFn.apply(input, dim=_softmax_dim("log_softmax", input, dim))


# %% [raw]
# # BEGIN QUESTION
# name: softmax
# points: 0

# %% [markdown]
# ### Check: Softmax and LogSoftmax

# %% [raw]
# # BEGIN TESTS

# %%
def test_softmax_rows_are_distributions(softmax, Tensor, np):
    x = Tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
    p = softmax(x, dim=1).numpy()
    assert np.allclose(p.sum(axis=1), 1.0), f"each row must sum to 1 along dim=1, got {p.sum(1)}"
    assert np.allclose(p[0], [0.09003057, 0.24472847, 0.66524096]), (
        f"softmax([1, 2, 3]) is [0.0900, 0.2447, 0.6652] = exp(x - 3) / sum(exp(x - 3)); "
        f"got {p[0]}")
    assert np.allclose(p[1], 1 / 3), f"equal logits give equal probabilities 1/3, got {p[1]}"
    q = softmax(x, dim=0).numpy()
    assert np.allclose(q.sum(axis=0), 1.0), (
        f"softmax(x, dim=0) must make each column sum to 1, got column sums {q.sum(axis=0)}: "
        "use the given dim in both the max and the sum (not a fixed axis)")

# %%
def test_softmax_survives_large_logits(softmax, Tensor, np):
    with np.errstate(over="raise", invalid="raise"):
        p = softmax(Tensor([[1000.0, 0.0, -1000.0]]), dim=-1).numpy()
    assert not np.isnan(p).any(), (
        f"softmax([1000, 0, -1000]) gave NaN: {p}; subtract each row's max before exp")
    assert np.allclose(p, [[1.0, 0.0, 0.0]]), f"softmax([1000, 0, -1000]) is [1, 0, 0], got {p}"
    empty = softmax(Tensor(np.zeros((2, 0), dtype=np.float32)), dim=1)
    assert empty.shape == (2, 0), (
        f"the softmax of rows with no entries is empty, shape (2, 0), got {empty.shape}: "
        "pass initial=-np.inf to the max (an empty row has no maximum)")

# %%
def test_log_softmax_is_stable(log_softmax, Tensor, np):
    out = log_softmax(Tensor([[0.0, -200.0], [1000.0, 1000.0]]), dim=1).numpy()
    assert np.isfinite(out).all(), (
        f"log_softmax gave -inf or NaN: {np.round(out, 4).tolist()}; work in log space "
        "(x - m - log sum exp(x - m))")
    assert np.allclose(out, [[0.0, -200.0], [-0.6931472, -0.6931472]]), (
        "log_softmax([0, -200]) is [0, -200] and log_softmax([1000, 1000]) is "
        f"[-log 2, -log 2] = [-0.6931, -0.6931]; got {out.tolist()}")
    assert out.dtype == np.float32, (
        f"log_softmax must keep float32, got {out.dtype}: float64 doubles the memory of "
        "every activation")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 5. The modules: `nn.ReLU()`, `nn.Softmax(dim=1)`, ...
#
# PyTorch offers each activation twice: a function (`F.relu(x)`) and a module (`nn.ReLU()`)
# you can put in a `Sequential` (module 03). The modules below are provided: each stores its
# arguments and calls your function in `forward`.

# %%
#| export
class ReLU(Activation):
    """``max(0, x)`` as a module. ``inplace`` is accepted for PyTorch compatibility (ignored)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, x: Tensor) -> Tensor:
        return relu(x)


class Sigmoid(Activation):
    """``1 / (1 + exp(-x))`` as a module."""

    def forward(self, x: Tensor) -> Tensor:
        return sigmoid(x)


class Tanh(Activation):
    """``tanh(x)`` as a module."""

    def forward(self, x: Tensor) -> Tensor:
        return tanh(x)


class GELU(Activation):
    """GELU as a module; ``approximate`` is ``'none'`` (exact) or ``'tanh'``."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, x: Tensor) -> Tensor:
        return gelu(x, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Softmax(Activation):
    """Softmax along ``dim`` as a module."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x: Tensor) -> Tensor:
        return softmax(x, dim=self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Activation):
    """LogSoftmax along ``dim`` as a module."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x: Tensor) -> Tensor:
        return log_softmax(x, dim=self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


# %% [raw]
# # BEGIN QUESTION
# name: modules
# points: 0

# %% [markdown]
# ### Check: the module forms

# %% [raw]
# # BEGIN TESTS

# %%
def test_modules_match_functions(ReLU, GELU, Softmax, LogSoftmax, Tensor, np):
    x = Tensor([[-1.0, 0.5, 2.0], [3.0, -4.0, 0.0]])
    assert np.allclose(ReLU()(x).numpy(), [[0.0, 0.5, 2.0], [3.0, 0.0, 0.0]]), (
        f"ReLU()(x) must equal relu(x); got {ReLU()(x).numpy().tolist()}: fix relu first")
    got = GELU("tanh")(x).shape
    assert got == (2, 3), f"GELU is element-wise: it keeps the shape (2, 3), got {got}"
    p = Softmax(dim=0)(x).numpy()
    assert np.allclose(p.sum(axis=0), 1.0), (
        f"Softmax(dim=0) must normalise along dim 0: column sums should be 1, got "
        f"{p.sum(axis=0).round(4).tolist()} (pass dim on to softmax)")
    lp = LogSoftmax(dim=1)(x).numpy()
    rows = np.exp(lp).sum(axis=1)
    assert np.allclose(rows, 1.0), (
        f"exp(LogSoftmax(dim=1)(x)) rows sum to 1, got {rows.round(4).tolist()}")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 6. Systems view: what an activation costs
#
# For an activation tensor with `N` elements in float32:
#
# | op | FLOPs (approx.) | bytes moved (forward) | kept for backward |
# |---|---|---|---|
# | ReLU | N (compare) | read 4N, write 4N | a 1-bit/1-byte mask or the input (4N) |
# | Sigmoid / Tanh | ~4N (+ exp) | 8N | the output (4N) |
# | GELU exact | ~20N (erf polynomial) | 8N | the input (4N) |
# | Softmax over rows of C | ~4N (+ exp) | 8N in 2-3 passes | the output (4N) |
#
# A modern CPU core does tens of FLOPs in the time it reads one float from main memory, so even
# GELU's polynomial is cheap next to moving the data: activations are **memory-bound**. A
# `(1024, 1024)` matmul does 2·10⁹ FLOPs on 12 MB of data (compute-bound); a ReLU on its
# 4 MB output does 10⁶ comparisons and is limited by reading and writing 8 MB.
#
# That is why PyTorch (and compilers such as `torch.compile`, XLA, TensorRT) **fuse**
# activations into the preceding kernel: `linear + bias + GELU` becomes one pass over memory
# instead of three. PyTorch's softmax kernel does the max, the `exp`-sum and the division in
# one or two passes over each row held in cache, and the "online softmax" used by
# FlashAttention (module 12) computes the running max and sum in a single pass. Our NumPy
# version makes a new array for every step (`x - m`, `exp`, `sum`, `/`): roughly 4 temporary
# tensors the size of the input.
#
# Memory for training: every activation's input or output is **kept until the backward pass**
# (module 05). In a transformer block the GELU alone keeps a `(B, T, 4d)` tensor: for
# B=32, T=1024, d=768 that is 32·1024·3072·4 B ≈ 400 MB per layer.

# %%
x = Tensor(np.random.default_rng(0).standard_normal((1024, 1024)).astype(np.float32))
print(f"input {x.memory_footprint() / 1e6:.1f} MB -> softmax temporaries ~ "
      f"{4 * x.memory_footprint() / 1e6:.1f} MB")
# Expected: input 4.2 MB -> softmax temporaries ~ 16.8 MB

# %% [markdown]
# ## 7. ML systems thinking (graded by hand)

# %% [raw]
# # BEGIN QUESTION
# name: written_stability
# manual: true
# points: 5

# %% [markdown]
# **Q1 · Stability.** In float32, `exp(x)` overflows above about 88.7. A language model's
# logits over a 50,000-token vocabulary reach 120 after a few bad steps. What does a softmax
# *without* the max subtraction return, what happens to the loss and the weights on the next
# step, and why does subtracting the max not change the mathematical result?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# `exp(120)` is `inf`, so the row becomes `inf / inf = nan` (and entries without overflow
# become `x / inf = 0`). The loss is NaN, its gradient is NaN, and the optimizer writes NaN into
# every weight it touches: the run is dead from that step on (it does not recover by itself).
# Softmax is shift-invariant: `exp(x_i - c) / Σ exp(x_j - c) = exp(-c) exp(x_i) /
# (exp(-c) Σ exp(x_j))`, the factor cancels; with `c = max x` every exponent is <= 0, so
# values lie in (0, 1] and the sum is at least 1 — no overflow and no division by zero.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_memory_bound
# manual: true
# points: 5

# %% [markdown]
# **Q2 · Memory-bound.** A GPU does 100 TFLOP/s and reads memory at 2 TB/s. Estimate the time
# of a ReLU over a float32 tensor of 10⁸ elements, and of a `(4096, 4096) @ (4096, 4096)`
# matmul. Which one is limited by arithmetic, which by memory, and what does *kernel fusion*
# save for `gelu(x @ W + b)`?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# ReLU: 10⁸ FLOPs take 1 µs of arithmetic, but it reads and writes 8·10⁸ B = 0.8 GB, i.e.
# 0.4 ms: memory-bound by ~400×. Matmul: 2·4096³ ≈ 1.4·10¹¹ FLOPs = 1.4 ms of arithmetic, and
# only 3·4096²·4 B ≈ 200 MB ≈ 0.1 ms of traffic: compute-bound. Unfused, `x @ W` writes its
# output, the bias add reads and writes it again, GELU reads and writes it again: three round
# trips of the activation tensor. Fusing bias and GELU into the matmul's epilogue applies them
# while the tile is still in registers, saving two full reads and writes of the output
# (and the launch overhead of two kernels).

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_saturation
# manual: true
# points: 5

# %% [markdown]
# **Q3 · Gradients through activations.** The derivative of sigmoid is at most 0.25. Roughly
# how much smaller is the gradient reaching the first layer of a 10-layer sigmoid network than
# the last one (ignore the weights)? Why do ReLU and GELU not have this problem for positive
# inputs, and what is ReLU's own failure mode?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# Each sigmoid layer multiplies the backward signal by at most 0.25, so ten layers scale it by
# at most 0.25¹⁰ ≈ 10⁻⁶ (less when units saturate, where the derivative is near 0): early
# layers barely learn (vanishing gradients). ReLU's derivative is exactly 1 for positive
# inputs (GELU's is close to 1), so the signal passes unchanged through active units. ReLU's
# failure mode is the dead unit: if a unit's pre-activation is negative for every input (e.g.
# after a large update or a bad bias), its gradient is 0 forever and it never recovers; leaky
# ReLU/GELU keep a small gradient for negative inputs.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## Summary
#
# You built PyTorch's activations from `Tensor` operations and two small `Function`s, made them
# stable where the textbook formula overflows (branch on the sign; subtract the max; work in
# log space), and priced them: cheap in FLOPs, expensive in memory traffic. Export with
# `python export.py 02`; module 03 puts these between linear layers.
