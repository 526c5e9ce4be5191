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
# # Module 03 · Layers
#
# A neural network is a tree of **modules**: a model holds layers, layers hold parameters,
# and one call — `model.parameters()` — hands every trainable number to the optimizer. In this
# module you build PyTorch's `nn.Module` machinery and the first layers that use it: `Linear`,
# `Sequential`, `Dropout` and `Flatten`.
#
# ## Learning objectives
#
# By the end of this module you can:
#
# 1. explain how `nn.Module` finds parameters and sub-modules by *attribute assignment*
#    (`self.fc = Linear(...)`) and walks the tree to list them with dotted names;
# 2. implement `Linear(in_features, out_features)` with PyTorch's weight layout
#    `(out_features, in_features)` and its default initialisation, and say why the scale of
#    the initial weights matters;
# 3. implement `train()` / `eval()` and a layer whose behaviour depends on it (inverted
#    `Dropout`);
# 4. save and restore a model's state as plain NumPy arrays (`state_dict`);
# 5. count a model's parameters, its memory and the FLOPs of a forward pass.
#
# ## How to work through this notebook
#
# Fill in the functions that raise `NotImplementedError` (docstrings give what / APPROACH /
# EXAMPLE / HINT), and run each `grader.check(...)`. Cells starting with `#| export` become
# `tinytorch/layers.py` (`python export.py 03`). Your `Tensor` (module 01) and activations
# (module 02) are imported from your package.

# %%
import numpy as np

# %% [markdown]
# ## 1. Parameters and the module tree
#
# ```
#   model = Sequential(Linear(4, 8), ReLU(), Linear(8, 3))
#
#   Sequential ─┬─ "0": Linear ─┬─ weight  Parameter (8, 4)      named_parameters():
#               │               └─ bias    Parameter (8,)          0.weight, 0.bias,
#               ├─ "1": ReLU                                       2.weight, 2.bias
#               └─ "2": Linear ─┬─ weight  Parameter (3, 8)
#                               └─ bias    Parameter (3,)
# ```
#
# A **Parameter** is a `Tensor` that a module owns and an optimizer updates; it is created with
# `requires_grad=True`. `Module.__setattr__` is the trick that builds the tree: when you write
# `self.weight = Parameter(...)` or `self.fc = Linear(...)` inside `__init__`, the module
# records the value in `self._parameters` or `self._modules` (keeping insertion order, which is
# why parameter lists are reproducible). Every other method walks those dictionaries.
#
# Besides parameters and children, a module can own **buffers** (`self._buffers`, filled by the
# provided `register_buffer`): state that is saved with the model but not trained, such as
# BatchNorm's running mean. No layer in this module has one, but `state_dict` must save them.
#
# `Module` is an abstract base class, and module 02's `Activation` is registered as a virtual
# subclass: `isinstance(ReLU(), Module)` is True, so activations sit in the tree like any
# layer, with no parameters of their own.

# %%
#| export
"""Module 03 · Layers — depends on: tensor, activations; used by: losses, optimizers, models.

``Module`` (parameter registration, the module tree, train/eval, state_dict), ``Parameter``,
and the first layers: ``Linear``, ``Sequential``, ``Dropout`` and ``Flatten``.
"""

from __future__ import annotations

import abc
import math
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np

from tinytorch.activations import Activation, RemovableHandle, _ForwardHooks  # noqa: F401
from tinytorch.tensor import (  # noqa: F401 - manual_seed for the examples
    Context,
    Function,
    Tensor,
    default_generator,
    manual_seed,
)

# ----------------------------------------------------------------------------- provided


class Parameter(Tensor):
    """A Tensor that is a module's trainable state; ``requires_grad`` defaults to True.

    Example:
        >>> p = Parameter(np.zeros((2, 3), dtype=np.float32))
        >>> p.requires_grad, p.shape
        (True, (2, 3))
    """

    def __init__(self, data: Any = None, requires_grad: bool = True) -> None:
        if data is None:
            data = np.zeros((0,), dtype=np.float32)
        super().__init__(data, requires_grad=requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


class _IncompatibleKeys(NamedTuple):
    missing_keys: list[str]
    unexpected_keys: list[str]


# %% [markdown]
# ## 2. Walking the tree
#
# `named_modules()` (given) yields `(dotted_name, module)` for the module itself and every
# descendant, depth-first in registration order. You write the methods built on it:
#
# * `named_parameters()` — every parameter as `("0.weight", p)`, each *object* once (two
#   layers may share one weight: weight tying in module 13);
# * `parameters()` — the same without names (what an optimizer takes);
# * `train(mode)` / `eval()` — set `training` on every module in the tree;
# * `zero_grad()` — clear every parameter's `.grad`;
# * `state_dict()` / `load_state_dict()` — save and restore every parameter as NumPy arrays.
#
# The methods live in a mix-in class, `_ModuleTree`, that `Module` (given after it) inherits.
# Some EXAMPLEs use `Linear`, `Sequential` and `Dropout` from sections 3–4: they run once you
# have written those too; the check below builds its own tiny modules instead.

# %%
#| export
def _named_modules(module: Any, prefix: str = "",
                   memo: set[int] | None = None) -> Iterator[tuple[str, Any]]:
    """(dotted name, module) for ``module`` and its descendants, each object once."""
    memo = set() if memo is None else memo
    if id(module) in memo:
        return
    memo.add(id(module))
    yield prefix, module
    for name, child in module._modules.items():
        if child is None:
            continue
        yield from _named_modules(child, f"{prefix}.{name}" if prefix else name, memo)


class _ModuleTree:
    """Mix-in: the methods of ``Module`` that walk the module tree."""

    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, Any]]:
        """Yield ``(name, module)`` for this module (name ``""``) and every descendant."""
        yield from _named_modules(self, prefix)

    def modules(self) -> Iterator[Any]:
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, Any]]:
        for name, m in self._modules.items():  # type: ignore[attr-defined]
            if m is not None:
                yield name, m

    def children(self) -> Iterator[Any]:
        for _, m in self.named_children():
            yield m

    def named_parameters(self, prefix: str = "",
                         recurse: bool = True) -> Iterator[tuple[str, Parameter]]:
        """Yield ``(dotted_name, parameter)`` for every parameter, each object once.

        APPROACH:
            1. Walk ``self.named_modules(prefix)`` if ``recurse`` else just
               ``[(prefix, self)]``.
            2. For each ``(mod_name, mod)`` and each ``(name, p)`` in
               ``mod._parameters.items()``: skip ``p is None``; skip a ``p`` whose ``id`` you
               have already yielded; yield ``(f"{mod_name}.{name}" if mod_name else name, p)``.

        EXAMPLE:
            >>> [n for n, _ in Sequential(Linear(4, 8), Dropout(0.1), Linear(8, 3)).named_parameters()]
            ['0.weight', '0.bias', '2.weight', '2.bias']

        HINT: a set of ``id(p)`` handles shared parameters.
        """
        # BEGIN SOLUTION NO PROMPT
        seen: set[int] = set()
        mods = self.named_modules(prefix) if recurse else iter([(prefix, self)])
        for mod_name, mod in mods:
            for name, p in mod._parameters.items():
                if p is None or id(p) in seen:
                    continue
                seen.add(id(p))
                yield (f"{mod_name}.{name}" if mod_name else name), p
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 03: implement Module.named_parameters (see its docstring)")  # STUB

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Yield every parameter (no names), in the order of ``named_parameters``.

        APPROACH: loop over ``self.named_parameters(recurse=recurse)`` and ``yield`` each
        parameter without its name.

        EXAMPLE:
            >>> sum(p.numel() for p in Linear(4, 8).parameters())
            40

        HINT: reuse ``named_parameters`` rather than walking the tree again, so the two can
        never disagree about order or shared parameters.
        """
        # BEGIN SOLUTION NO PROMPT
        for _, p in self.named_parameters(recurse=recurse):
            yield p
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 03: implement Module.parameters (see its docstring)")  # STUB

    def named_buffers(self, prefix: str = "") -> Iterator[tuple[str, Tensor]]:
        for mod_name, mod in self.named_modules(prefix):
            for name, b in mod._buffers.items():
                if b is not None:
                    yield (f"{mod_name}.{name}" if mod_name else name), b

    def buffers(self) -> Iterator[Tensor]:
        for _, b in self.named_buffers():
            yield b

    def train(self, mode: bool = True) -> Any:
        """Set ``training = mode`` on this module and every descendant; return ``self``.

        APPROACH: for every module ``m`` in ``self.modules()`` (this one included), set
        ``m.training = bool(mode)``; then ``return self``.

        EXAMPLE:
            >>> model = Sequential(Linear(2, 2), Dropout(0.5))
            >>> model.eval() is model, model[1].training
            (True, False)

        HINT: returning ``self`` is what makes ``model = Net().eval()`` work; setting the flag
        only on ``self`` leaves a ``Dropout`` inside the model dropping units at test time.
        """
        # BEGIN SOLUTION NO PROMPT
        for m in self.modules():
            object.__setattr__(m, "training", bool(mode))
        return self
        # END SOLUTION
        raise NotImplementedError("module 03: implement Module.train (see its docstring)")  # STUB

    def eval(self) -> Any:
        """Evaluation mode: ``self.train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Any:
        for p in self.parameters():
            p.requires_grad = requires_grad
        return self

    def double(self) -> Any:
        """Cast every floating-point parameter and buffer to float64, in place (PyTorch's
        ``Module.double()``); returns ``self``."""
        return self._cast_floats(np.float64)

    def float(self) -> Any:
        """Cast every floating-point parameter and buffer to float32, in place."""
        return self._cast_floats(np.float32)

    def _cast_floats(self, dtype: Any) -> Any:
        for _, t in list(self.named_parameters()) + list(self.named_buffers()):
            if t.data.dtype.kind == "f":
                t.data = t.data.astype(dtype)
                if t.grad is not None:
                    t.grad = Tensor(t.grad.data.astype(dtype))
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear every parameter's gradient (``p.grad = None``, PyTorch's default).

        With ``set_to_none=False``, set each existing ``p.grad`` to a zero Tensor instead.

        APPROACH: for every ``p`` in ``self.parameters()``: if ``set_to_none`` or ``p.grad`` is
        None, set ``p.grad = None``; otherwise ``p.grad = Tensor(np.zeros_like(p.grad.data))``.

        EXAMPLE:
            >>> lin = Linear(2, 1); lin.weight.grad = Tensor([[1.0, 1.0]])
            >>> lin.zero_grad(); lin.weight.grad is None
            True

        HINT: gradients *accumulate* (module 05 adds into ``.grad``), so a training loop
        calls ``zero_grad()`` before every backward pass; ``None`` also frees the memory.
        """
        # BEGIN SOLUTION NO PROMPT
        for p in self.parameters():
            if set_to_none or p.grad is None:
                p.grad = None
            else:
                p.grad = Tensor(np.zeros_like(p.grad.data))
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 03: implement Module.zero_grad (see its docstring)")  # STUB

    # ---------------------------------------------------------------- state
    def state_dict(self) -> OrderedDict[str, np.ndarray]:
        """Every parameter and persistent buffer as ``{dotted_name: ndarray copy}``.

        A checkpoint is just this dictionary (module 07 saves it as ``.npz``). The arrays are
        copies: changing the model afterwards does not change a saved state.

        APPROACH:
            1. ``out = OrderedDict()``.
            2. For each ``(name, p)`` in ``self.named_parameters()``:
               ``out[name] = p.data.copy()``.
            3. For each ``(name, b)`` in ``self._persistent_buffers()`` (given below: every
               buffer except those registered with ``persistent=False``):
               ``out[name] = b.data.copy()``.
            4. Return ``out``.

        EXAMPLE:
            >>> {k: v.shape for k, v in Linear(4, 2).state_dict().items()}
            {'weight': (2, 4), 'bias': (2,)}

        HINT: without ``.copy()`` the "checkpoint" is the live weight array: the next
        optimizer step silently changes the saved state too.
        """
        # BEGIN SOLUTION NO PROMPT
        out: OrderedDict[str, np.ndarray] = OrderedDict()
        for name, p in self.named_parameters():
            out[name] = p.data.copy()
        for name, b in self._persistent_buffers():
            out[name] = b.data.copy()
        return out
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 03: implement Module.state_dict (see its docstring)")  # STUB

    def _persistent_buffers(self) -> Iterator[tuple[str, Tensor]]:
        for mod_name, mod in self.named_modules():
            skip = mod.__dict__.get("_non_persistent", set())
            for name, b in mod._buffers.items():
                if b is not None and name not in skip:
                    yield (f"{mod_name}.{name}" if mod_name else name), b

    def load_state_dict(self, state_dict: dict[str, Any], strict: bool = True) -> _IncompatibleKeys:
        """Copy arrays from ``state_dict`` into this model's parameters, *in place*.

        Args:
            state_dict: ``{dotted_name: array}`` as produced by ``state_dict()``.
            strict: raise if keys are missing or unexpected.

        Returns:
            ``(missing_keys, unexpected_keys)``.

        Raises:
            RuntimeError: a shape differs (always), or keys differ with ``strict=True``.

        APPROACH:
            1. ``own = dict(self.named_parameters())`` plus the persistent buffers.
            2. ``missing = [k for k in own if k not in state_dict]``;
               ``unexpected = [k for k in state_dict if k not in own]``.
            3. If ``strict`` and either is non-empty: raise ``RuntimeError`` naming them.
            4. For each shared key: check shapes (``RuntimeError`` naming key and both
               shapes), then ``own[k].data[...] = np.asarray(value)`` — in place, so an
               optimizer holding these Parameters sees the new values.
            5. Return ``_IncompatibleKeys(missing, unexpected)``.

        EXAMPLE:
            >>> a, b = Linear(2, 1), Linear(2, 1)
            >>> b.load_state_dict(a.state_dict())
            _IncompatibleKeys(missing_keys=[], unexpected_keys=[])
            >>> bool(np.array_equal(a.weight.data, b.weight.data))
            True

        HINT: values may be Tensors too: use ``value.data`` when it is a ``Tensor``. Do not
        assign ``own[k].data = arr`` or a new ``Parameter``: the optimizer would keep
        updating the old array.
        """
        # BEGIN SOLUTION NO PROMPT
        own: dict[str, Tensor] = dict(self.named_parameters())
        own.update(self._persistent_buffers())
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        if strict and (missing or unexpected):
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}: "
                               f"missing keys {missing}, unexpected keys {unexpected}")
        for k, target in own.items():
            if k not in state_dict:
                continue
            value = state_dict[k]
            arr = np.asarray(value.data if isinstance(value, Tensor) else value)
            if arr.shape != target.data.shape:
                raise RuntimeError(f"size mismatch for {k}: copying a param with shape "
                                   f"{arr.shape}, the shape in current model is "
                                   f"{target.data.shape}")
            target.data[...] = arr
        return _IncompatibleKeys(missing, unexpected)
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 03: implement Module.load_state_dict (see its docstring)")  # STUB


# %% [markdown]
# `Module` itself is given: it inherits the tree methods you just wrote, and `__call__` with
# PyTorch's forward hooks from module 02 (`register_forward_pre_hook`,
# `register_forward_hook`: module 14's profiler uses them), and adds registration
# (`__setattr__`) and printing.

# %%
#| export
class Module(_ModuleTree, _ForwardHooks, abc.ABC):
    """Base class of every layer and model, with PyTorch's interface.

    Subclasses call ``super().__init__()`` first, assign parameters and sub-modules as
    attributes, and define ``forward``. ``module(x)`` calls ``forward(x)``, with any forward
    hooks around it (``register_forward_pre_hook``, ``register_forward_hook``).

    Assigning a ``Parameter`` registers it as a parameter and a ``Module`` as a child (in
    assignment order); any other value, a plain ``Tensor`` included, is an ordinary
    attribute. Module 02's activations are modules too: ``isinstance(ReLU(), Module)``.
    """

    training: bool

    def __init__(self) -> None:
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())

    # ---------------------------------------------------------------- registration
    def __setattr__(self, name: str, value: Any) -> None:
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter) or isinstance(value, Module):
            if params is None:
                raise AttributeError(
                    f"cannot assign {type(value).__name__} '{name}' before Module.__init__() "
                    "call: call super().__init__() first")
            for table in (self._parameters, self._buffers, self._modules):
                table.pop(name, None)
            if isinstance(value, Parameter):
                self._parameters[name] = value
            else:
                self._modules[name] = value
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                "(Parameter or None expected)")
            params[name] = None
        elif params is not None and name in self._modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module "
                                f"'{name}' (Module or None expected)")
            self._modules[name] = None
        elif params is not None and name in self._buffers:
            self._buffers[name] = value
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        for table in ("_parameters", "_buffers", "_modules"):
            self.__dict__.get(table, {}).pop(name, None)
        object.__delattr__(self, name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register ``param`` (or None, e.g. a disabled bias) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("call super().__init__() before register_parameter")
        self._parameters[name] = param
        object.__setattr__(self, name, param)

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Register non-trainable state (e.g. running statistics) saved in ``state_dict``."""
        self._buffers[name] = tensor
        if not persistent:
            self.__dict__.setdefault("_non_persistent", set()).add(name)
        object.__setattr__(self, name, tensor)

    def add_module(self, name: str, module: Module | None) -> None:
        """Register ``module`` as a child called ``name``."""
        self._modules[name] = module
        object.__setattr__(self, name, module)

    register_module = add_module

    # ---------------------------------------------------------------- calling
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function')

    # ---------------------------------------------------------------- printing
    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines = []
        for name, child in self._modules.items():
            body = repr(child).replace("\n", "\n  ")
            lines.append(f"({name}): {body}")
        head = f"{type(self).__name__}({self.extra_repr()}"
        if not lines:
            return head + ")"
        return head + "\n  " + "\n  ".join(lines) + "\n)"


# Module 02's parameter-free activations are modules too (a virtual subclass, no rebinding).
Module.register(Activation)


# %% [raw]
# # BEGIN QUESTION
# name: module
# points: 0

# %% [markdown]
# ### Check: the module tree

# %% [raw]
# # BEGIN TESTS

# %%
def test_module_registers_parameters_and_children(Module, Parameter, Tensor, np):
    class Tiny(Module):
        def __init__(self):
            super().__init__()
            self.w = Parameter(np.ones((2, 2), dtype=np.float32))
            self.scale = 3.0

    class Outer(Module):
        def __init__(self):
            super().__init__()
            self.inner = Tiny()
            self.b = Parameter(np.zeros(2, dtype=np.float32))

    model = Outer()
    names = [n for n, _ in model.named_parameters()]
    assert names == ["b", "inner.w"], (
        f"named_parameters should list own parameters first, then children's with dotted "
        f"names; got {names}")
    count = len(list(model.parameters()))
    assert count == 2, (
        f"parameters() must yield b and inner.w once each (the optimizer steps exactly "
        f"these): expected 2, got {count}")
    returned = model.eval()
    assert returned is model, (
        f"eval() returns the module itself (for chaining), got {type(returned).__name__}")
    assert not model.inner.training, (
        f"eval() must reach every sub-module, but inner.training is {model.inner.training}: "
        "a Dropout inside would keep dropping at test time")
    model.train()
    assert model.inner.training, (
        f"train() must reach every sub-module, but inner.training is {model.inner.training}")

# %%
def test_state_dict_round_trip(Module, Parameter, Tensor, np):
    class Tiny(Module):
        def __init__(self):
            super().__init__()
            self.w = Parameter(np.arange(4, dtype=np.float32).reshape(2, 2))

    a, b = Tiny(), Tiny()
    b.w.data[...] = 0
    state = a.state_dict()
    assert list(state) == ["w"] and isinstance(state["w"], np.ndarray), (
        f"state_dict maps dotted names to NumPy arrays (module 07 saves them as .npz), "
        f"got {state!r}")
    w_before = b.w
    b.load_state_dict(state)
    assert b.w is w_before, (
        f"load_state_dict must copy in place (optimizers hold the Parameter), but b.w is now "
        f"a new {type(b.w).__name__}")
    assert np.array_equal(b.w.data, a.w.data), (
        f"load_state_dict did not copy the values: expected {a.w.data.tolist()}, "
        f"got {b.w.data.tolist()}")
    try:
        b.load_state_dict({"w": np.zeros((3, 3), dtype=np.float32)})
    except RuntimeError:
        pass
    else:
        raise AssertionError("a shape mismatch must raise RuntimeError")
    b.w.grad = Tensor(np.ones((2, 2), dtype=np.float32))
    b.zero_grad()
    assert b.w.grad is None, (
        f"zero_grad() sets every parameter's .grad to None (PyTorch's default), got "
        f"{type(b.w.grad).__name__}: gradients accumulate, a stale one corrupts the next step")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 3. Linear: `y = x Wᵀ + b`
#
# ```
#   x (batch, in_features) @ W.T (in_features, out_features) + b (out_features,)
#     -> y (batch, out_features)
#
#   W has shape (out_features, in_features): row j holds the weights of output unit j.
# ```
#
# PyTorch stores `W` as `(out, in)` so that each output unit's weights are one contiguous row,
# and computes `x @ W.T` (a free view, module 01). Keep this layout: checkpoints, the
# optimizer and every later module rely on it.
#
# **Initialisation.** If each weight is drawn with variance `σ²`, each output is a sum of
# `in_features` products, so its variance is about `in_features · σ² · Var(x)`. To keep the
# signal's scale from layer to layer, `σ²` must shrink like `1 / in_features`. PyTorch's default
# (`kaiming_uniform_(a=√5)`) works out to
#
# ```
#   bound = 1 / sqrt(in_features);     W, b ~ Uniform(-bound, bound)
# ```
#
# drawn from the global generator (`default_generator()`, seeded by `manual_seed`): first the
# weight, then the bias.
#
# **One operation, not three.** Written with tensor operations, `x @ W.T + b` records three
# graph nodes (a transpose, a product, a sum), each a Python call with its own checks, and for
# a sequence `x (B, T, in)` NumPy multiplies `B` separate `(T, in)` matrices. PyTorch's
# `nn.Linear` calls one fused operation instead (`F.linear`), and so do we: `_LinearFn` is a
# `Function` (module 02) that flattens the leading dimensions into rows, makes **one** matrix
# product `(rows, in) @ (in, out)` and adds the bias into that product's fresh output, in
# place:
#
# ```
#   x (B, T, in) -> rows (B·T, in) @ W.T (in, out) -> (B·T, out) += b -> y (B, T, out)
# ```
#
# Its backward (given; module 05 derives it) is two more products over the same rows:
# `dx = g @ W`, `dW = gᵀ @ rows`, and `db` sums `g` down its columns (as a third product, a
# row of ones times `g`). On the GPT of module 13 (`(16, 32, 64)` inputs) one product over all
# rows takes half the time of the 16 separate ones, and a layer costs one Python operation
# instead of three.

# %%
#| export
class _LinearFn(Function):
    """``y = x @ weight.T + bias`` as one operation on rows (``F.linear``)."""

    @staticmethod
    def forward(ctx: Context, x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None = None,
                needs_input_grad: bool = True) -> np.ndarray:
        """``(*, in) -> (*, out)``: one matrix product over all rows, then the bias.

        Args:
            x: ``(*, in_features)``; weight: ``(out_features, in_features)``;
            bias: ``(out_features,)`` or None.
            needs_input_grad: whether backward must compute ``dx`` (saved for it).

        APPROACH:
            1. ``rows = x.reshape(-1, x.shape[-1])`` — ``(R, in)``, every leading dim merged
               (a view when ``x`` is contiguous).
            2. ``out = rows.dot(weight.T)`` — ``(R, out)``, the matrix product; when
               ``bias`` is not None, ``out += bias`` (in place: ``out`` is a fresh array).
            3. The given lines after yours save ``rows`` for backward and return ``out`` in
               the shape ``(*, out_features)``.

        EXAMPLE:
            >>> w = np.array([[1.0, 0.0, -1.0], [0.5, 0.5, 0.5]], np.float32)
            >>> _LinearFn.forward(Context(), np.ones((2, 1, 3), np.float32), w,
            ...                   np.array([0.0, 1.0], np.float32))
            array([[[0. , 2.5]],
            <BLANKLINE>
                   [[0. , 2.5]]], dtype=float32)

        HINT: ``weight.T`` is a free view (module 01); BLAS reads it transposed without a
        copy. ``x @ weight.T`` on the 3-D ``x`` would give the same numbers, as ``B``
        products instead of one. For two 2-D arrays ``a.dot(b)`` is ``a @ b`` with less
        dispatch: ``@`` is NumPy's general batched ``matmul``, a few microseconds more per
        call, which is what a one-token step of a language model is made of.
        """
        # BEGIN SOLUTION NO PROMPT
        rows = x.reshape(-1, x.shape[-1])  # (R, in)
        out = rows.dot(weight.T)  # (R, out)
        if bias is not None:
            out += bias
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 03: implement _LinearFn.forward (see its docstring)")  # STUB
        ctx.save_for_backward(rows, weight, x.shape, bias is not None, needs_input_grad)
        return out.reshape(*x.shape[:-1], weight.shape[0])

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray | None, ...]:
        # provided: with g = dL/dy as rows (R, out): dx = g @ W (only when x needs it: a first
        # layer's input never does, and that product costs as much as dW's), dW = g.T @ rows,
        # db = the column sums of g; one gradient per input of apply.
        rows, weight, shape, has_bias, needs_input_grad = ctx.saved
        g = grad.reshape(rows.shape[0], weight.shape[0])  # (R, out)
        dx = g.dot(weight).reshape(shape) if needs_input_grad else None
        dweight = g.T.dot(rows)  # (out, in)
        if has_bias:
            # NOTE: a row of ones times g is its column sums in one BLAS product;
            # g.sum(axis=0) adds g one row at a time, several times slower
            return dx, dweight, np.ones(g.shape[0], dtype=g.dtype).dot(g)
        return dx, dweight


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:  # noqa: A002
    """``torch.nn.functional.linear``: ``input @ weight.T + bias`` as one operation (provided).

    Raises:
        RuntimeError: ``input``'s last dimension is not ``weight``'s second, or the dtypes
            differ (PyTorch's checks).

    Example:
        >>> linear(Tensor(np.ones((2, 3), np.float32)), Tensor(np.ones((4, 3), np.float32))).shape
        (2, 4)
    """
    if weight.ndim != 2 or input.ndim == 0 or input.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"linear: input of shape {input.shape} cannot be multiplied by "
                           f"weight.T, weight of shape {weight.shape} (expected "
                           f"(*, {weight.shape[-1] if weight.ndim else '?'}) inputs)")
    if input.dtype != weight.dtype or (bias is not None and bias.dtype != weight.dtype):
        raise RuntimeError(f"linear: expected input ({input.dtype}), weight ({weight.dtype}) "
                           f"and bias to have the same dtype")
    tensors = (input, weight) if bias is None else (input, weight, bias)
    return _LinearFn.apply(*tensors, needs_input_grad=input.requires_grad)


class Linear(Module):
    """Fully connected layer ``y = x @ weight.T + bias``.

    Args:
        in_features: size of each input sample (last dimension of ``x``).
        out_features: size of each output sample.
        bias: whether to learn an additive bias (``self.bias`` is None otherwise).

    Shapes:
        input ``(*, in_features)`` -> output ``(*, out_features)``;
        ``weight`` ``(out_features, in_features)``, ``bias`` ``(out_features,)``.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True) -> None:
        """Create ``weight`` and ``bias`` with PyTorch's default initialisation.

        APPROACH:
            1. ``super().__init__()``; store ``in_features`` and ``out_features``.
            2. ``bound = 1 / math.sqrt(in_features)`` (0 when ``in_features`` is 0);
               ``rng = default_generator()``.
            3. ``self.weight = Parameter(rng.uniform(-bound, bound,
               (out_features, in_features)).astype(np.float32))``.
            4. With ``bias``: the same for shape ``(out_features,)``, drawn *after* the weight;
               otherwise ``self.register_parameter("bias", None)``.

        EXAMPLE:
            >>> manual_seed(0); lin = Linear(4, 3)
            >>> lin.weight.shape, lin.bias.shape, bool(np.abs(lin.weight.data).max() <= 0.5)
            ((3, 4), (3,), True)

        HINT: the order of the two draws matters: the same seed must give the same model.
        """
        # BEGIN SOLUTION NO PROMPT
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        bound = 1.0 / math.sqrt(in_features) if in_features > 0 else 0.0
        rng = default_generator()
        self.weight = Parameter(
            rng.uniform(-bound, bound, (out_features, in_features)).astype(np.float32))
        if bias:
            self.bias = Parameter(rng.uniform(-bound, bound, (out_features,)).astype(np.float32))
        else:
            self.register_parameter("bias", None)
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 03: implement Linear.__init__ (see its docstring)")  # STUB

    def forward(self, x: Tensor) -> Tensor:
        """``x @ weight.T + bias`` for ``x`` of shape ``(*, in_features)``.

        APPROACH: return ``linear(x, self.weight, self.bias)`` — the fused operation above
        (``self.bias`` may be None).

        EXAMPLE:
            >>> lin = Linear(3, 2); lin.weight.data[...] = 1; lin.bias.data[...] = 0.5
            >>> lin(Tensor([[1.0, 2.0, 3.0]]))
            tensor([[6.5, 6.5]], requires_grad=True)

        HINT: go through ``linear`` (a Tensor operation), not NumPy on ``.data``, so module 05
        can send gradients to ``weight`` and ``bias``. ``x @ self.weight.T + self.bias``
        computes the same numbers, as three operations.
        """
        # BEGIN SOLUTION NO PROMPT
        return linear(x, self.weight, self.bias)
        # END SOLUTION
        raise NotImplementedError("module 03: implement Linear.forward (see its docstring)")  # STUB

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


# %% [raw]
# # BEGIN QUESTION
# name: linear
# points: 0

# %% [markdown]
# ### Check: Linear

# %% [raw]
# # BEGIN TESTS

# %%
def test_linear_shapes_and_init(Linear, Tensor, manual_seed, np):
    manual_seed(0)
    lin = Linear(16, 4)
    assert lin.weight.shape == (4, 16), (
        f"weight is (out_features, in_features) = (4, 16), got {lin.weight.shape}: "
        "checkpoints and optimizers rely on PyTorch's layout")
    assert lin.bias.shape == (4,), f"bias has one entry per output: (4,), got {lin.bias.shape}"
    assert lin.weight.requires_grad, (
        f"weights are Parameters (requires_grad=True), got requires_grad="
        f"{lin.weight.requires_grad}: the optimizer would never see them")
    w = lin.weight.numpy()
    assert w.dtype == np.float32, (
        f"parameters are float32, got {w.dtype}: float64 weights double memory and make every "
        "later layer run in float64")
    assert np.abs(w).max() <= 0.25 and np.abs(w).max() > 0.15, (
        f"init bound is 1/sqrt(in_features) = 0.25 for in_features = 16, but max |w| is "
        f"{np.abs(w).max():.3f}: draw from Uniform(-bound, bound) so activations keep their scale")
    nob = Linear(16, 4, bias=False).bias
    assert nob is None, f"bias=False sets bias to None, got {type(nob).__name__}"

# %%
def test_linear_forward(Linear, Tensor, np):
    lin = Linear(3, 2)
    lin.weight.data[...] = np.array([[1.0, 0.0, -1.0], [0.5, 0.5, 0.5]], dtype=np.float32)
    lin.bias.data[...] = np.array([0.0, 1.0], dtype=np.float32)
    out = lin(Tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]]))
    assert out.shape == (2, 2), f"(2, 3) -> (2, 2), got {out.shape}"
    assert np.allclose(out.numpy(), [[-2.0, 4.0], [0.0, 1.0]]), (
        f"y = x @ W.T + b; got {out.numpy().tolist()}")
    got = lin(Tensor(np.ones((5, 7, 3), dtype=np.float32))).shape
    assert got == (5, 7, 2), (
        f"Linear acts on the last dimension of any (*, in_features) input: (5, 7, 3) -> "
        f"(5, 7, 2), got {got}")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 4. Sequential, Dropout, Flatten
#
# **Sequential** chains modules: `Sequential(a, b, c)(x) == c(b(a(x)))`. Its children are named
# `"0"`, `"1"`, ... — hence parameter names like `0.weight`.
#
# **Dropout** (Srivastava et al., 2014) zeroes each element with probability `p` during
# training, so units cannot co-adapt. *Inverted* dropout scales the survivors by `1 / (1 - p)`
# so the expected value of each element is unchanged, and evaluation needs no change at all:
#
# ```
#   train:  x = [1, 2, 3, 4], p = 0.5, keep mask [1, 0, 1, 0]  ->  [2, 0, 6, 0]   E[out] = x
#   eval:   identity                                            ->  [1, 2, 3, 4]
# ```
#
# **Flatten** turns `(N, C, H, W)` into `(N, C·H·W)` for a `Linear` layer after convolutions
# (module 09): dimensions `start_dim..end_dim` are merged.

# %%
#| export
class Sequential(Module):
    """A chain of modules applied in order; children are named ``"0"``, ``"1"``, ...

    Accepts modules as arguments, or one ``OrderedDict`` of ``{name: module}``.
    """

    def __init__(self, *modules: Any) -> None:
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            for name, m in modules[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(modules):
                self.add_module(str(i), m)

    def forward(self, x: Any) -> Any:
        """Apply each child in order: ``x = child(x)`` for every child, then return ``x``.

        APPROACH: loop over ``self._modules.values()`` (registration order ``"0"``, ``"1"``,
        ...), replacing ``x`` with ``m(x)``.

        EXAMPLE:
            >>> Sequential(Linear(4, 8), Dropout(0.1), Linear(8, 3))(Tensor(np.ones((2, 4), np.float32))).shape
            (2, 3)

        HINT: call ``m(x)``, not ``m.forward(x)``: ``__call__`` is the one entry point, as in
        PyTorch (where it also runs hooks).
        """
        # BEGIN SOLUTION NO PROMPT
        for m in self._modules.values():
            x = m(x)
        return x
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 03: implement Sequential.forward (see its docstring)")  # STUB

    def __getitem__(self, idx: int | slice) -> Any:
        mods = list(self._modules.values())
        if isinstance(idx, slice):
            return Sequential(OrderedDict(list(self._modules.items())[idx]))
        return mods[idx]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._modules.values())

    def append(self, module: Any) -> Sequential:
        self.add_module(str(len(self)), module)
        return self


class Dropout(Module):
    """Inverted dropout: in training zero each element with probability ``p`` and scale the
    rest by ``1 / (1 - p)``; the identity in eval mode.

    Raises:
        ValueError: ``p`` is not in ``[0, 1]``.
    """

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, x: Tensor) -> Tensor:
        """Apply dropout when ``self.training``; return ``x`` unchanged otherwise.

        APPROACH:
            1. If not training, or ``p == 0``: return ``x``.
            2. If ``p == 1``: return ``x * 0.0`` (everything dropped).
            3. ``keep = default_generator().random(x.shape) >= self.p`` — each element survives
               with probability ``1 - p``.
            4. ``mask = Tensor((keep / (1 - self.p)).astype(x.dtype))`` and return ``x * mask``
               (a Tensor product, so autograd sends gradient only through survivors).

        EXAMPLE:
            >>> d = Dropout(0.5); x = Tensor(np.ones((1, 8), np.float32))
            >>> sorted(set(d(x).numpy().ravel().tolist())), d.eval()(x) is x
            ([0.0, 2.0], True)

        HINT: forgetting the ``1 / (1 - p)`` makes eval-time activations twice as large as the
        ones the next layer was trained on (for p = 0.5).
        """
        # BEGIN SOLUTION NO PROMPT
        if not self.training or self.p == 0.0:
            return x
        if self.p == 1.0:
            return x * 0.0
        keep = default_generator().random(x.shape) >= self.p
        mask = Tensor((keep / (1.0 - self.p)).astype(x.dtype))
        return x * mask
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 03: implement Dropout.forward (see its docstring)")  # STUB

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Flatten(Module):
    """Merge dimensions ``start_dim..end_dim`` into one: ``(N, C, H, W) -> (N, C*H*W)``."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, x: Tensor) -> Tensor:
        """Reshape so that dimensions ``start_dim`` to ``end_dim`` (inclusive) become one.

        APPROACH:
            1. Check both dims as PyTorch does: with ``size = max(x.ndim, 1)`` each must be in
               ``[-size, size - 1]`` (``IndexError`` otherwise: NumPy-style wrapping would
               silently flatten the wrong dimensions); turn them non-negative (``d % size``)
               and raise ``RuntimeError`` if ``start > end``.
            2. A 0-d tensor (``x.ndim == 0``) becomes shape ``(1,)``, as in PyTorch.
            3. ``new_shape = shape[:start] + (product of shape[start:end + 1],) +
               shape[end + 1:]``.
            4. ``return x.reshape(new_shape)`` — a view, no copy (module 01).

        EXAMPLE:
            >>> Flatten()(Tensor(np.zeros((2, 3, 4, 5)))).shape
            (2, 60)
            >>> Flatten(0, 1)(Tensor(np.zeros((2, 3, 4)))).shape
            (6, 4)
            >>> Flatten(0)(Tensor(3.0)).shape
            (1,)

        HINT: a 1-D input has nothing to merge with the defaults (``start_dim=1``): its
        shape stays the same.
        """
        # BEGIN SOLUTION NO PROMPT
        size = max(x.ndim, 1)
        for d in (self.start_dim, self.end_dim):
            if not -size <= d < size:
                raise IndexError(f"Dimension out of range (expected to be in range of "
                                 f"[{-size}, {size - 1}], but got {d})")
        start, end = self.start_dim % size, self.end_dim % size
        if start > end:
            raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
        if x.ndim == 0:
            return x.reshape(1)
        merged = 1
        for size in x.shape[start:end + 1]:
            merged *= size
        return x.reshape(tuple(x.shape[:start]) + (merged,) + tuple(x.shape[end + 1:]))
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 03: implement Flatten.forward (see its docstring)")  # STUB

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


# %% [raw]
# # BEGIN QUESTION
# name: containers
# points: 0

# %% [markdown]
# ### Check: Sequential, Dropout, Flatten

# %% [raw]
# # BEGIN TESTS

# %%
def test_sequential_chains_and_names(Sequential, Linear, Dropout, Tensor, np):
    model = Sequential(Linear(4, 8), Dropout(0.1), Linear(8, 3)).eval()
    out = model(Tensor(np.ones((5, 4), dtype=np.float32)))
    assert out.shape == (5, 3), f"(5, 4) -> Linear(4, 8) -> Linear(8, 3) is (5, 3), not {out.shape}"
    names = [n for n, _ in model.named_parameters()]
    assert names == ["0.weight", "0.bias", "2.weight", "2.bias"], (
        f"children of Sequential are named '0', '1', ...; got {names}")
    count = sum(p.numel() for p in model.parameters())
    assert count == 4 * 8 + 8 + 8 * 3 + 3, (
        f"the MLP has 4*8 + 8 + 8*3 + 3 = 67 parameters, parameters() gave {count}")

# %%
def test_dropout_train_and_eval(Dropout, Tensor, np, manual_seed):
    manual_seed(1)
    d = Dropout(p=0.25)
    x = Tensor(np.ones((200, 50), dtype=np.float32))
    y = d(x).numpy()
    dropped = float((y == 0).mean())
    assert 0.2 < dropped < 0.3, f"about 25% of elements should be zero in training: {dropped:.2f}"
    kept = y[y != 0]
    assert np.allclose(kept, 1 / 0.75), (
        f"survivors are scaled by 1 / (1 - p) = {1 / 0.75:.4f}, got values from "
        f"{kept.min():.4f} to {kept.max():.4f}: the expected activation must not change")
    d.eval()
    ev = d(x).numpy()
    assert np.array_equal(ev, x.numpy()), (
        f"in eval mode dropout is the identity, but {int((ev != 1).sum())} of {ev.size} ones "
        "changed")
    try:
        Dropout(1.5)
    except ValueError:
        pass
    else:
        raise AssertionError("p = 1.5 is not a probability: raise ValueError")

# %%
def test_flatten(Flatten, Tensor, np):
    x = Tensor(np.zeros((2, 3, 4, 5), dtype=np.float32))
    assert Flatten()(x).shape == (2, 60), (
        f"Flatten() keeps the batch dim and merges the rest: (2, 60), got {Flatten()(x).shape}")
    assert Flatten(0, 1)(x).shape == (6, 4, 5), (
        f"Flatten(0, 1) merges the first two dims: (6, 4, 5), got {Flatten(0, 1)(x).shape}")
    assert Flatten(1, 2)(x).shape == (2, 12, 5), (
        f"Flatten(1, 2) merges dims 1 and 2 (end_dim is inclusive): (2, 12, 5), "
        f"got {Flatten(1, 2)(x).shape}")
    try:
        shape = Flatten(1, 4)(x).shape
    except IndexError:
        pass
    else:
        raise AssertionError(f"Flatten(1, 4) on a 4-D input must raise IndexError (dims go up "
                             f"to 3), but gave shape {shape}: never wrap a dim around")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 5. Systems view: parameters, memory and FLOPs
#
# A `Linear(in, out)` layer holds `in·out + out` parameters. A forward pass on a batch of `B`
# does `B·in·out` multiply-adds (`2·B·in·out` FLOPs) and writes a `(B, out)` output.
#
# | model | parameters | float32 weights | FLOPs per sample (forward) |
# |---|---|---|---|
# | MLP 784-256-10 | 203,530 | 0.8 MB | 0.4 M |
# | GPT-2 small MLP block (768-3072-768) | 4.7 M | 18.9 MB | 9.4 M |
# | GPT-3 (175 B params) | 1.75·10¹¹ | 700 GB | ~3.5·10¹¹ |
#
# Training needs more than the weights: one gradient per parameter (1×), optimizer state
# (module 06: Adam keeps 2×), and the activations kept for backward, which grow with the
# batch. PyTorch's `nn.Linear` calls one fused BLAS routine (`addmm`: `b + x @ W.T` in a single
# pass), with weights stored `(out, in)` so the transposed read is free. PyTorch's `Dropout` draws
# its mask with a counter-based generator on the device and keeps it (1 byte per element, or
# recomputes it) for backward.

# %%
def count_parameters(model) -> int:
    return sum(p.numel() for p in model.parameters())


from tinytorch.activations import ReLU  # noqa: E402

mlp = Sequential(Linear(784, 256), ReLU(), Linear(256, 10))
n = count_parameters(mlp)
print(f"{n:,} parameters, {n * 4 / 1e6:.2f} MB in float32, {2 * n / 1e6:.2f} MFLOPs/sample")
# Expected: 203,530 parameters, 0.81 MB in float32, 0.41 MFLOPs/sample

# %% [markdown]
# ## 6. ML systems thinking (graded by hand)

# %% [raw]
# # BEGIN QUESTION
# name: written_init
# manual: true
# points: 5

# %% [markdown]
# **Q1 · Initialisation.** Suppose `Linear(1024, 1024)` layers were initialised with
# `Uniform(-1, 1)` instead of `Uniform(-1/32, 1/32)`. Estimate how the standard deviation of the
# activations changes per layer, what happens after 10 layers in float32, and why the bound
# depends on `in_features` rather than `out_features` in the forward pass.

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# `Uniform(-a, a)` has variance `a²/3`. An output is a sum of 1024 terms, so its variance is
# about `1024 · a²/3 · Var(x)`. With `a = 1`: ×341 in variance, ×18.5 in standard deviation per
# layer, so ~18.5¹⁰ ≈ 5·10¹² after ten layers: activations (and exponentials of them, e.g. in
# softmax) overflow or saturate, and gradients explode. With `a = 1/32` the factor is 1/3
# (std ×0.58) before the non-linearity; ReLU halves it again, which is why Kaiming uses a
# larger gain — the point is that it is independent of width. Each output sums over the
# *inputs* (fan-in), so `in_features` controls the forward variance (fan-out matters for the
# backward pass, hence Xavier's average of both).

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_param_memory
# manual: true
# points: 5

# %% [markdown]
# **Q2 · Memory of training.** For the MLP 784-256-10 above, how much memory do the weights,
# the gradients and Adam's two moment buffers take in float32? How much do the activations of
# a batch of 256 take (inputs and every layer output kept for backward)? Which term grows with
# the batch?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# 203,530 parameters × 4 B ≈ 0.81 MB for weights, the same for gradients, 2 × 0.81 MB for
# Adam's moments: ≈ 3.3 MB, independent of the batch. Activations at B = 256: input
# 256·784, hidden 256·256 (before and after ReLU), output 256·10 floats ≈ (200,704 + 131,072 +
# 2,560) × 4 B ≈ 1.3 MB — linear in the batch. For small MLPs parameters dominate; for CNNs
# and transformers at realistic batch sizes and sequence lengths the activations do.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_dropout
# manual: true
# points: 5

# %% [markdown]
# **Q3 · Dropout at inference.** A model trained with `Dropout(0.5)` is deployed without calling
# `model.eval()`. Describe two symptoms. Then explain why *inverted* dropout (scaling at training
# time) is the better engineering choice than scaling by `(1 - p)` at inference.

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# Predictions become random: the same input gives different outputs on every call, and
# accuracy drops because half the features are missing on each call (with the survivors doubled,
# the expected value is right but the variance is large). Debugging is confusing because
# nothing crashes. Inverted dropout makes the inference path the plain network: no extra
# multiply, nothing to remember when exporting or fusing the model, and `eval()` simply turns
# the layer into the identity; the scaling cost is paid only in training, where the mask is
# applied anyway.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## Summary
#
# You built the module tree (registration by attribute assignment, dotted names, train/eval,
# state dicts as NumPy arrays) and the first layers: `Linear` with PyTorch's layout and
# initialisation, `Sequential`, inverted `Dropout` and `Flatten`. Export with `python export.py 03`;
# module 04 adds the losses that say how wrong a model's outputs are.
