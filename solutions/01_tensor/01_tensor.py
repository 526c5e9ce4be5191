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
# # Module 01 · Tensor
#
# Every model you will build in this course — a perceptron, a CNN, a transformer — is a program
# that moves numbers through **tensors**: n-dimensional arrays with a shape, a data type and a
# layout in memory. In this module you build `Tensor`, the class everything else stands on.
#
# ## Learning objectives
#
# By the end of this module you can:
#
# 1. explain how an n-dimensional tensor is stored in one flat block of memory (**storage**),
#    and how **shape** and **strides** turn an index `(i, j, k)` into an address;
# 2. make **views** — `reshape`, `view`, `transpose`, `permute` — that change the shape or the
#    order of axes *without copying a single element*, and say when a copy is unavoidable;
# 3. predict the result shape of **broadcasting** arithmetic, and why it saves memory, and
#    the result **dtype** of mixed arithmetic (PyTorch's *type promotion*);
# 4. compute what a tensor costs in **memory** from its shape and dtype, before you allocate it;
# 5. implement batched **matrix multiplication** and **reductions** (`sum`, `mean`, `max`) with
#    PyTorch's names and semantics (`dim`, `keepdim`).
#
# ## How to work through this notebook
#
# * Read each section, then fill in the functions that raise `NotImplementedError`. Each one
#   has a docstring with **what** it does, an **APPROACH**, an **EXAMPLE** with the expected
#   output, and **HINTS**.
# * Run the `grader.check(...)` cell after each section: these public tests tell you what is
#   wrong and why it matters. Your grade comes from a larger hidden suite that checks the same
#   behaviour more thoroughly, so passing the public tests is necessary, not sufficient.
# * Cells that start with `#| export` become your own package: `python export.py 01` copies them to
#   `tinytorch/tensor.py`, which later modules import. Keep that first line.
# * At the end, answer the three **ML systems thinking** questions in prose.

# %%
import numpy as np

# %% [markdown]
# ## 1. Storage, shape and dtype
#
# A tensor is *one flat block of memory* plus a description of how to read it:
#
# ```
#   logical view (shape (2, 3))        storage (6 contiguous float32 values, 24 bytes)
#   ┌────┬────┬────┐
#   │ 1. │ 2. │ 3. │   row 0  ───►    ┌────┬────┬────┬────┬────┬────┐
#   ├────┼────┼────┤                  │ 1. │ 2. │ 3. │ 4. │ 5. │ 6. │
#   │ 4. │ 5. │ 6. │   row 1  ───►    └────┴────┴────┴────┴────┴────┘
#   └────┴────┴────┘                   offset 0    1    2    3    4    5
# ```
#
# * **shape** — the size of each dimension: `(2, 3)`.
# * **dtype** — the type of each element: `float32` takes 4 bytes, `float64` 8, `int64` 8.
#   Deep learning defaults to `float32`: half the memory and memory traffic of `float64`, twice
#   as many values per CPU vector instruction (and on most GPUs float64 is many times slower
#   still), and precise enough for gradients. PyTorch makes `torch.tensor([1.0, 2.0])` a
#   `float32` tensor; our `Tensor` does the same.
# * **numel** — the number of elements, the product of the shape: `2 × 3 = 6`.
#
# We store the elements in a NumPy array, `self.data`. NumPy already knows how to lay out
# memory; your job is to expose it with PyTorch's names and to understand what it does.
#
# The first export cell is provided: it sets up the class and a small piece of machinery you
# will not need until module 05 (autograd), where it records each operation so gradients can
# flow backwards. Read it, but you need not change it.

# %%
#| export
"""Module 01 · Tensor — depends on: (none); used by: every later module.

The n-dimensional array at the heart of tinytorch: storage, shape, strides and views,
broadcasting arithmetic, batched matmul and reductions, with PyTorch's names and semantics.
"""

from __future__ import annotations

import ctypes
import math
import sys
from collections import namedtuple
from typing import Any

import numpy as np

# ----------------------------------------------------------------------------- provided
# Memory reuse (section 6 says why). A training step allocates the same large arrays every
# step; glibc's malloc hands large freed blocks back to the kernel (those it mapped on their
# own, and the free top of its heap beyond a threshold it adjusts as it goes), and the next
# step's array then starts on fresh pages, each of which traps into the kernel to be zeroed (a
# minor page fault) the first time it is written.


def _keep_freed_memory(keep_mib: int = 64, heap_mib: int = 32) -> bool:
    """Ask glibc's ``malloc`` to keep freed memory for reuse instead of returning it: up to
    ``keep_mib`` MiB of free heap before it trims (``M_TRIM_THRESHOLD``), and blocks of up to
    ``heap_mib`` MiB from that heap rather than from a fresh ``mmap`` each (``M_MMAP_THRESHOLD``,
    which must be set with it: setting one turns off glibc's own adjustment of both). Returns
    whether it was applied (False off Linux/glibc, where nothing changes)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    m_trim_threshold, m_mmap_threshold = -1, -3  # <malloc.h>
    return bool(mallopt(m_trim_threshold, keep_mib << 20)) and bool(
        mallopt(m_mmap_threshold, heap_mib << 20))


_keep_freed_memory()

# Graph recording. Module 01 only *records* which operation made each tensor; module 05
# (autograd) walks these records backwards. Nothing here is rebound later.

_GRAD_ENABLED = [True]


def is_grad_enabled() -> bool:
    """Whether operations currently record the graph (False inside ``no_grad()``)."""
    return _GRAD_ENABLED[0]


class no_grad:  # noqa: N801 - PyTorch's name
    """Context manager (and decorator) that stops graph recording, like ``torch.no_grad``.

    Example:
        >>> with no_grad():
        ...     y = Tensor([1.0], requires_grad=True) * 2
        >>> y.requires_grad
        False
    """

    def __enter__(self) -> None:
        self._prev = _GRAD_ENABLED[0]
        _GRAD_ENABLED[0] = False

    def __exit__(self, *exc: object) -> None:
        _GRAD_ENABLED[0] = self._prev

    def __call__(self, fn: Any) -> Any:
        import functools

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with no_grad():
                return fn(*args, **kwargs)

        return wrapper


class Node:
    """How a tensor was made: the operation, its input tensors and values saved for backward.

    ``op`` is the name of a built-in operation (``"add"``, ``"matmul"``, ...) whose derivative
    module 05 defines, or a :class:`Function` subclass that brings its own ``backward``.
    """

    __slots__ = ("op", "inputs", "saved", "released")

    def __init__(self, op: Any, inputs: tuple[Tensor, ...], saved: dict[str, Any]) -> None:
        self.op = op
        self.inputs = inputs
        self.saved = saved
        self.released = False  # module 05: True once a backward pass has used (and freed) it

    def __repr__(self) -> str:
        name = self.op if isinstance(self.op, str) else self.op.__name__
        return f"<Node {name}>"


def _result(data: np.ndarray, op: Any, inputs: tuple[Tensor, ...], **saved: Any) -> Tensor:
    """Wrap ``data`` in a Tensor and, when gradients are wanted, record how it was made.

    Only floating-point results take part in autograd (as in PyTorch: ``x.long()`` or an
    integer ``argmax`` never requires grad), and nothing is recorded under ``no_grad()``.
    PyTorch computes a binary operation's gradient at the result's dtype, then casts it to
    each input's (in ``float32 / float64_0d`` the divisor enters the derivative as float32),
    so an input of another dtype is recorded here through a ``"cast"`` to the result's.
    """
    out = Tensor(data)
    if _GRAD_ENABLED[0] and out.data.dtype.kind == "f" and any(t.requires_grad for t in inputs):
        out.requires_grad = True
        if op in _BINARY_OPS and any(t.data.dtype != out.data.dtype for t in inputs):
            inputs = tuple([t if t.data.dtype == out.data.dtype else
                            _result(t.data.astype(out.data.dtype), "cast", (t,)) for t in inputs])
        out._node = Node(op, inputs, saved)
    return out


_BINARY_OPS = frozenset({"add", "sub", "mul", "div", "mod"})


class Context:
    """Scratch space a :class:`Function` fills in ``forward`` and reads in ``backward``."""

    def __init__(self) -> None:
        self.saved: tuple[Any, ...] = ()

    def save_for_backward(self, *values: Any) -> None:
        self.saved = values


class Function:
    """An operation that brings its own gradient (later modules add ops this way).

    Subclasses define ``forward(ctx, *arrays, **kwargs) -> np.ndarray`` on raw arrays and
    ``backward(ctx, grad) -> tuple`` returning one array (or None) per input. Call
    ``MyOp.apply(*tensors, **kwargs)``.
    """

    @staticmethod
    def forward(ctx: Context, *arrays: np.ndarray, **kwargs: Any) -> np.ndarray:
        raise NotImplementedError

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray | None, ...]:
        raise NotImplementedError

    @classmethod
    def apply(cls, *inputs: Any, **kwargs: Any) -> Tensor:
        tensors = tuple([x if isinstance(x, Tensor) else Tensor(x) for x in inputs])
        ctx = Context()
        data = cls.forward(ctx, *[t.data for t in tensors], **kwargs)
        return _result(np.asarray(data), cls, tensors, ctx=ctx)


MaxResult = namedtuple("MaxResult", ["values", "indices"])

# NOTE: Python floats become float32, as in PyTorch; NumPy arrays keep their dtype.
_DEFAULT_FLOAT = np.float32


def _holds_numpy_float64(data: Any) -> bool:
    """Whether nested lists or tuples contain a NumPy float64 number (PyTorch keeps float64
    then, where Python floats alone give float32)."""
    if isinstance(data, (list, tuple)):
        return any(_holds_numpy_float64(d) for d in data)
    return isinstance(data, np.floating) and data.dtype == np.float64


def _holds_float(data: Any) -> bool:
    if isinstance(data, (list, tuple)):
        return any(_holds_float(d) for d in data)
    return isinstance(data, (float, np.floating))


def _holds_big_int(data: Any) -> bool:
    if isinstance(data, (list, tuple)):
        return any(_holds_big_int(d) for d in data)
    return isinstance(data, int) and not -2**63 <= data < 2**63


def _to_array(data: Any, dtype: Any = None) -> np.ndarray:
    if isinstance(data, Tensor):
        data = data.data
    if isinstance(data, np.ndarray):
        arr = data
    elif isinstance(data, np.generic):  # a NumPy scalar (e.g. a 0-d result) keeps its dtype
        arr = np.asarray(data)
    else:
        arr = np.asarray(data)
        if arr.dtype == np.float64 and not _holds_numpy_float64(data):
            arr = arr.astype(_DEFAULT_FLOAT)  # Python floats; a NumPy float64 stays float64
        if _holds_big_int(data) and not _holds_float(data):  # ints only: int64 overflows
            raise RuntimeError("Overflow when unpacking long: a Python int beyond int64")
    if dtype is not None:
        arr = arr.astype(dtype, copy=False)
    return arr


# %% [markdown]
# Now the class itself. `__init__`, `__repr__` and a few conversions are given; in this cell
# you write the properties that describe a tensor (`shape`, `dtype`, `ndim`, `numel`,
# `memory_footprint`). The class also lists the methods of sections 2–5 (`reshape`, `+`,
# `@`, `sum`, ...): each is one given line calling a function you write in that section's
# own cell, after its lesson, so you never come back to this cell.

# %%
#| export
class Tensor:
    """An n-dimensional array with PyTorch's interface, stored in a NumPy array ``.data``.

    Args:
        data: nested lists, a scalar, a NumPy array or another Tensor.
        requires_grad: whether operations on this tensor are recorded for autograd (module 05).
        dtype: optional NumPy dtype to convert to.

    Example:
        >>> t = Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        >>> t.shape, t.dtype
        ((2, 3), dtype('float32'))
    """

    __array_priority__ = 1000  # so ndarray + Tensor calls Tensor.__radd__

    def __init__(self, data: Any, requires_grad: bool = False, dtype: Any = None) -> None:
        self.data: np.ndarray = _to_array(data, dtype)
        self.requires_grad: bool = bool(requires_grad)
        self._grad: Tensor | None = None
        self._node: Node | None = None
        if requires_grad:
            _check_can_require_grad(self.data.dtype)

    # ------------------------------------------------------------------ provided helpers
    @property
    def grad(self) -> Tensor | None:
        """The gradient ``backward`` accumulated into this leaf (None until then)."""
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None and tuple(value.shape) != self.data.shape:
            raise RuntimeError(f"attempting to assign a gradient of size '{list(value.shape)}' "
                               f"to a tensor of size '{list(self.data.shape)}'")
        self._grad = value

    def __repr__(self) -> str:
        body = np.array2string(self.data, separator=", ", precision=4, prefix="tensor(")
        extra = ", requires_grad=True" if self.requires_grad else ""
        return f"tensor({body}{extra})"

    def __len__(self) -> int:
        if self.data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return len(self.data)

    __hash__ = object.__hash__

    def numpy(self) -> np.ndarray:
        """The underlying NumPy array (shares memory, like ``torch.Tensor.numpy``)."""
        return self.data

    def size(self, dim: int | None = None) -> tuple[int, ...] | int:
        """PyTorch's other name for the shape: ``x.size()`` or ``x.size(dim)``."""
        return self.shape if dim is None else self.shape[dim]

    def dim(self) -> int:
        """PyTorch's other name for ``ndim``."""
        return self.ndim

    def item(self) -> Any:
        """The value of a one-element tensor as a Python number."""
        if self.data.size != 1:
            raise ValueError(f"item(): tensor has {self.data.size} elements, expected 1")
        return self.data.item()

    # Python's conversions, as in PyTorch: only one-element tensors have a truth value or a
    # number value (``if loss < 0.1:``, ``float(loss)``); ``__index__`` lets an integer tensor
    # index a list.
    def __bool__(self) -> bool:
        if self.data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.data.item())

    def __float__(self) -> float:
        if self.data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return float(self.data.item())

    def __int__(self) -> int:
        if self.data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return int(self.data.item())

    def __index__(self) -> int:
        if self.data.size != 1 or self.data.dtype.kind not in "biu":
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return int(self.data.item())

    def tolist(self) -> Any:
        return self.data.tolist()

    def detach(self) -> Tensor:
        """A tensor sharing this one's data, cut off from the graph."""
        return Tensor(self.data)

    def requires_grad_(self, flag: bool = True) -> Tensor:
        if flag:
            _check_can_require_grad(self.data.dtype)
        self.requires_grad = flag
        return self

    # dtype conversions keep the graph between float types (``x.double()`` passes gradients
    # back to a float32 ``x``), like PyTorch; converting to the same dtype returns ``self``.
    def float(self) -> Tensor:
        return self._to(np.float32)

    def double(self) -> Tensor:
        return self._to(np.float64)

    def long(self) -> Tensor:
        return self._to(np.int64)

    def _to(self, dtype: Any) -> Tensor:
        if self.data.dtype == dtype:
            return self
        return _result(self.data.astype(dtype), "cast", (self,))

    def argmax(self, dim: int | None = None, keepdim: bool = False) -> Tensor:
        """Index of the largest element (over everything, or along ``dim``), int64."""
        if self.data.dtype == np.bool_:
            raise RuntimeError("argmax(): does not support bool input")
        if dim is None:
            idx = np.asarray(np.argmax(self.data), dtype=np.int64)  # into the flattened tensor
            return Tensor(idx.reshape((1,) * self.ndim) if keepdim else idx)
        axis = _dim_arg(dim, self.ndim)
        if axis is None:  # a 0-d tensor: its one element is at index 0
            return Tensor(np.asarray(0, dtype=np.int64))
        return Tensor(np.argmax(self.data, axis=axis, keepdims=keepdim).astype(np.int64))

    def contiguous(self) -> Tensor:
        """A C-contiguous copy when the layout is not contiguous, else ``self``."""
        if self.is_contiguous():
            return self
        return _result(np.ascontiguousarray(self.data), "contiguous", (self,))

    def backward(self, gradient: Tensor | None = None, retain_graph: bool = False) -> None:
        """Compute gradients of this tensor w.r.t. graph leaves (implemented in module 05).

        Like PyTorch, a backward pass frees the values the graph saved for it; pass
        ``retain_graph=True`` to walk the same graph again.
        """
        # The one dependency on a later module: like torch.Tensor.backward delegating to
        # torch.autograd.backward, the engine lives in autograd.py.
        from .autograd import backward as _engine_backward

        _engine_backward(self, gradient, retain_graph)

    # comparisons make boolean tensors (no gradient), handy for masks and accuracy; both
    # sides are promoted first, as for arithmetic (``float32 == 0.1`` compares in float32)
    def __eq__(self, other: object) -> Tensor:  # type: ignore[override]
        return _compare(self, other, np.equal)

    def __ne__(self, other: object) -> Tensor:  # type: ignore[override]
        return _compare(self, other, np.not_equal)

    def __lt__(self, other: Any) -> Tensor:
        return _compare(self, other, np.less)

    def __le__(self, other: Any) -> Tensor:
        return _compare(self, other, np.less_equal)

    def __gt__(self, other: Any) -> Tensor:
        return _compare(self, other, np.greater)

    def __ge__(self, other: Any) -> Tensor:
        return _compare(self, other, np.greater_equal)

    def __invert__(self) -> Tensor:
        """``~mask``: logical not of a bool tensor (bitwise not of an integer one)."""
        if self.data.dtype.kind not in "biu":
            raise TypeError("~ (bitwise not) needs a bool or integer tensor")
        return Tensor(np.invert(self.data))

    # ------------------------------------------------------------------ your code: basics
    @property
    def shape(self) -> tuple[int, ...]:
        """The size of each dimension, as a tuple of ints.

        APPROACH: the NumPy array ``self.data`` stores the shape; return it as a tuple.

        EXAMPLE:
            >>> Tensor([[1, 2, 3], [4, 5, 6]]).shape
            (2, 3)

        HINT: NumPy arrays have a ``.shape`` already, and it is a tuple: return it as it is.
        (Every operation reads shapes, so this property runs dozens of times per layer:
        ``tuple(...)`` around it would copy the tuple each time.)
        """
        # BEGIN SOLUTION NO PROMPT
        return self.data.shape
        # END SOLUTION
        raise NotImplementedError("module 01: implement Tensor.shape (see its docstring)")  # STUB

    @property
    def dtype(self) -> np.dtype:
        """The element type (a NumPy dtype): how many bytes each element takes and how it
        is interpreted.

        APPROACH: the NumPy array ``self.data`` knows its dtype already; return it.

        EXAMPLE:
            >>> Tensor([1.0, 2.0]).dtype, Tensor([1, 2]).dtype
            (dtype('float32'), dtype('int64'))

        HINT: Python floats become float32 in ``__init__`` (as in PyTorch), so you need no
        conversion here.
        """
        # BEGIN SOLUTION NO PROMPT
        return self.data.dtype
        # END SOLUTION
        raise NotImplementedError("module 01: implement Tensor.dtype (see its docstring)")  # STUB

    @property
    def ndim(self) -> int:
        """The number of dimensions.

        APPROACH: the number of entries of the shape; the NumPy array knows it as
        ``self.data.ndim``.

        EXAMPLE:
            >>> Tensor(np.zeros((2, 3, 4))).ndim, Tensor(7.0).ndim
            (3, 0)

        HINT: a scalar tensor has shape ``()`` and therefore 0 dimensions, not 1.
        """
        # BEGIN SOLUTION NO PROMPT
        return self.data.ndim
        # END SOLUTION
        raise NotImplementedError("module 01: implement Tensor.ndim (see its docstring)")  # STUB

    def numel(self) -> int:
        """The number of elements: the product of the shape (1 for a scalar tensor).

        APPROACH: multiply the sizes in ``self.shape`` (an empty product is 1).

        EXAMPLE:
            >>> Tensor(np.zeros((2, 3, 4))).numel()
            24

        HINT: start the product at 1, not 0, so a 0-d tensor gets 1 and a shape with a 0 in it
        gets 0.
        """
        # BEGIN SOLUTION NO PROMPT
        n = 1
        for size in self.shape:
            n *= size
        return n
        # END SOLUTION
        raise NotImplementedError("module 01: implement Tensor.numel (see its docstring)")  # STUB

    def memory_footprint(self) -> int:
        """Bytes needed to hold this tensor's elements: ``numel() × bytes per element``.

        APPROACH:
            1. Count the elements with ``numel()``.
            2. Multiply by the size of one element: ``self.data.itemsize`` (4 for float32).

        EXAMPLE:
            >>> Tensor(np.zeros((32, 3, 224, 224), dtype=np.float32)).memory_footprint()
            19267584

        HINT: this is the *logical* size. A broadcast view may share far less real memory;
        we count what the tensor would need on its own.
        """
        # BEGIN SOLUTION NO PROMPT
        return self.numel() * self.data.itemsize
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 01: implement Tensor.memory_footprint (see its docstring)")  # STUB

    # ------------------------------------------------------------------ section 2: layout
    # From here on, each method calls a function you write in the cell of the section that
    # teaches it (``stride`` calls ``_stride``, ``x + y`` calls ``_add``). Python looks the
    # name up when the method runs, so running that section's cell is enough: this cell
    # need not run again, and nothing is added to the class afterwards.
    def stride(self, dim: int | None = None) -> tuple[int, ...] | int:
        """Elements to skip in storage to move one step along each dimension."""
        return _stride(self, dim)

    def is_contiguous(self) -> bool:
        """True when elements sit in storage in row-major order with no gaps."""
        return _is_contiguous(self)

    def reshape(self, *shape: Any) -> Tensor:
        """The same elements in a new shape; a view (no copy) whenever the layout allows."""
        return _reshape(self, *shape)

    def view(self, *shape: Any) -> Tensor:
        """Like ``reshape`` but guaranteed never to copy; raises when the strides forbid it."""
        return _view(self, *shape)

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        """Swap two dimensions *without copying*: only the shape and strides change."""
        return _transpose(self, dim0, dim1)

    def permute(self, *dims: Any) -> Tensor:
        """Reorder all dimensions, e.g. NCHW -> NHWC with ``permute(0, 2, 3, 1)``. A view."""
        return _permute(self, *dims)

    @property
    def T(self) -> Tensor:  # noqa: N802 - PyTorch's name
        """All dimensions reversed (the matrix transpose for 2-D tensors)."""
        if self.ndim == 2:  # NOTE: the common case, as one transpose
            return self.transpose(0, 1)
        return self.permute(*reversed(range(self.ndim)))

    def __getitem__(self, index: Any) -> Tensor:
        """Indexing and slicing with PyTorch's rules: ``x[0]``, ``x[:, 1:3]``, ``x[idx]``."""
        return _getitem(self, index)

    # ------------------------------------------------------------------ section 3: arithmetic
    def __add__(self, other: Any) -> Tensor:
        """Element-wise ``self + other`` with broadcasting; ``other`` may be a number."""
        return _add(self, other)

    def __sub__(self, other: Any) -> Tensor:
        """Element-wise ``self - other`` with broadcasting."""
        return _sub(self, other)

    def __mul__(self, other: Any) -> Tensor:
        """Element-wise ``self * other`` with broadcasting (not a matrix product: see ``@``)."""
        return _mul(self, other)

    def __truediv__(self, other: Any) -> Tensor:
        """Element-wise ``self / other`` with broadcasting (true division, float result)."""
        return _truediv(self, other)

    def __neg__(self) -> Tensor:
        """Element-wise negation ``-self``."""
        return _neg(self)

    def __pow__(self, exponent: Any) -> Tensor:
        """``self ** exponent`` for a number exponent (``x ** 2``, ``x ** 0.5``)."""
        return _pow(self, exponent)

    # provided: reflected operators (``2 + t``, ``2 - t``, ``2 * t``, ``2 / t``, ``2 ** t``).
    # The number becomes a 0-d tensor of the promoted dtype, then the operator above runs.
    def __radd__(self, other: Any) -> Tensor:
        return _scalar_tensor(other, self) + self

    def __rsub__(self, other: Any) -> Tensor:
        _check_not_bool_sub(self, other)
        return _scalar_tensor(other, self) - self

    def __rmul__(self, other: Any) -> Tensor:
        return _scalar_tensor(other, self) * self

    def __rtruediv__(self, other: Any) -> Tensor:
        if isinstance(other, Tensor) or not _is_number(other):
            return _scalar_tensor(other, self, floating=True) / self
        # ``2 / t`` is ``(1 / t) * 2``, the order PyTorch computes it in (a reciprocal, then
        # a product): it decides where float32 overflows, e.g. in the gradient of ``2 / t``.
        return (_scalar_tensor(1, self, floating=True) / self) * other

    def __rpow__(self, other: Any) -> Tensor:
        return _tensor_pow(_scalar_tensor(other, self), self)

    # provided: floor division and remainder (Python's sign rule: the result of ``%`` has the
    # divisor's sign), as ``torch.floor_divide``/``torch.remainder``
    def __floordiv__(self, other: Any) -> Tensor:
        return _divmod_op(self, other, "floordiv")

    def __rfloordiv__(self, other: Any) -> Tensor:
        return _divmod_op(_scalar_tensor(other, self), self, "floordiv")

    def __mod__(self, other: Any) -> Tensor:
        return _divmod_op(self, other, "mod")

    def __rmod__(self, other: Any) -> Tensor:
        return _divmod_op(_scalar_tensor(other, self), self, "rmod")

    # provided: in-place operators ``t += 1`` write into ``t.data`` (views of ``t`` see the
    # change). PyTorch refuses them on a leaf that requires grad; see ``_inplace``.
    def __iadd__(self, other: Any) -> Tensor:
        return _inplace(self, other, np.add)

    def __isub__(self, other: Any) -> Tensor:
        _check_not_bool_sub(self, other)
        return _inplace(self, other, np.subtract)

    def __imul__(self, other: Any) -> Tensor:
        return _inplace(self, other, np.multiply)

    def __itruediv__(self, other: Any) -> Tensor:
        return _inplace(self, other, np.true_divide)

    # ------------------------------------------------------------------ section 3: math
    def exp(self) -> Tensor:
        """Element-wise ``e ** x``."""
        return _exp(self)

    def log(self) -> Tensor:
        """Element-wise natural logarithm (``-inf`` at 0, NaN below 0, as in NumPy)."""
        return _log(self)

    def sqrt(self) -> Tensor:
        """Element-wise square root."""
        return _sqrt(self)

    def tanh(self) -> Tensor:
        """Element-wise hyperbolic tangent, squashing values into (-1, 1)."""
        return _tanh(self)

    def abs(self) -> Tensor:
        """Element-wise absolute value."""
        return _abs(self)

    def __abs__(self) -> Tensor:
        """``abs(x)``, Python's builtin: the same as ``x.abs()``."""
        return _abs(self)

    def clamp(self, min: float | None = None, max: float | None = None) -> Tensor:  # noqa: A002
        """Limit every element to ``[min, max]``; either bound may be None (torch.clamp)."""
        return _clamp(self, min, max)

    # ------------------------------------------------------------------ section 4: matmul
    def matmul(self, other: Any) -> Tensor:
        """Matrix product with PyTorch's rules: 1-D vectors, 2-D matrices, batched N-D."""
        return _matmul(self, other)

    def __matmul__(self, other: Any) -> Tensor:
        return self.matmul(other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return _as_tensor(other).matmul(self)

    # ------------------------------------------------------------------ section 5: reductions
    def sum(self, dim: int | tuple[int, ...] | None = None, keepdim: bool = False) -> Tensor:
        """Sum over ``dim`` (an int, a tuple, or None for every dimension)."""
        return _sum(self, dim, keepdim)

    def mean(self, dim: int | tuple[int, ...] | None = None, keepdim: bool = False) -> Tensor:
        """Mean over ``dim``; same ``dim``/``keepdim`` rules as ``sum``."""
        return _mean(self, dim, keepdim)

    def max(self, dim: int | None = None, keepdim: bool = False) -> Tensor | MaxResult:
        """Largest element; with ``dim``, ``MaxResult(values, indices)`` as in PyTorch."""
        return _max(self, dim, keepdim)

    def amax(self, dim: int | tuple[int, ...] | None = None, keepdim: bool = False) -> Tensor:
        """Maxima over ``dim`` as a tensor (``torch.amax``): the values without indices."""
        axis = _dim_arg(dim, self.ndim)
        return _result(np.asarray(np.max(self.data, axis=axis, keepdims=keepdim)), "amax",
                       (self,), dim=axis, keepdim=keepdim)


# %% [markdown]
# The helpers below are provided; the methods above and the functions you write in
# sections 2–5 use them. `_binary` is how the second
# operand joins in: it wraps a number in a Tensor of the promoted dtype and hands your
# operator both arrays in that dtype.

# %%
#| export
def _is_number(value: Any) -> bool:
    return isinstance(value, (bool, int, float, np.bool_, np.number))


def _as_tensor(value: Any) -> Tensor:
    """``value`` as a Tensor (a Tensor is returned unchanged)."""
    return value if isinstance(value, Tensor) else Tensor(value)


def _scalar_tensor(value: Any, like: Tensor, floating: bool = False) -> Tensor:
    """The other operand of ``like OP value`` as a Tensor.

    A number becomes a 0-d tensor of ``result_type(like, value)``, so it never widens
    ``like`` (PyTorch's "weak" numbers); integers out of range wrap as in PyTorch
    (``uint8 - 1``). With ``floating`` (true division) an integer result type becomes
    float32 first, so the number is not wrapped. Lists and arrays become tensors.
    """
    if isinstance(value, Tensor):
        return value
    if not _is_number(value):
        return Tensor(value)
    if type(value) in (float, int) and like.data.dtype.kind == "f":  # NOTE: the common case
        return Tensor(np.asarray(value, dtype=like.data.dtype))  # (what result_type gives)
    dtype = result_type(like, value)
    if floating and dtype.kind != "f":
        dtype = np.dtype(_DEFAULT_FLOAT)
    return Tensor(np.asarray(value).astype(dtype))


def _binary(x: Tensor, other: Any,
            floating: bool = False) -> tuple[Tensor, np.ndarray, np.ndarray]:
    """``(other as a Tensor, x's data, other's data)``, both arrays in the promoted dtype.

    ``floating=True`` (true division): an integer or bool result type becomes float32, and
    each operand is converted to it directly (``int8 / int32`` must not wrap the int32).
    """
    other = _scalar_tensor(other, x, floating)
    if other.data.dtype == x.data.dtype and (not floating or x.data.dtype.kind == "f"):
        return other, x.data, other.data  # NOTE: the common case: nothing to promote
    dtype = result_type(x, other)
    if floating and dtype.kind != "f":
        dtype = np.dtype(_DEFAULT_FLOAT)
    return other, x.data.astype(dtype, copy=False), other.data.astype(dtype, copy=False)


def _compare(x: Tensor, other: Any, fn: Any) -> Tensor:
    """``fn(x, other)`` for a comparison ufunc: a bool tensor, never part of the graph."""
    if not (isinstance(other, (Tensor, list, tuple, np.ndarray)) or _is_number(other)):
        return NotImplemented  # ``t == None`` is False, as in Python
    other, a, b = _binary(x, other)
    return Tensor(fn(a, b))


def _float_data(x: Tensor) -> np.ndarray:
    """``x.data``, converted to float32 when ``x`` holds integers or bools (as PyTorch does
    for ``exp``, ``log``, ``sqrt``, ``tanh``, ``sigmoid``, ...)."""
    return x.data if x.data.dtype.kind == "f" else x.data.astype(_DEFAULT_FLOAT)


def _check_can_require_grad(dtype: np.dtype) -> None:
    if dtype.kind not in "fc":
        raise RuntimeError("only Tensors of floating point dtype can require gradients")


def _check_not_bool_sub(x: Tensor, other: Any) -> None:
    other_dtype = other.data.dtype if isinstance(other, Tensor) else np.asarray(other).dtype
    if x.data.dtype == np.bool_ or other_dtype == np.bool_:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` operator instead.")


def _check_power(dtype: np.dtype, exponent: Any) -> None:
    if dtype.kind in "iu" and np.any(np.asarray(exponent) < 0):
        raise RuntimeError("Integers to negative integer powers are not allowed.")


def _tensor_pow(base: Tensor, exponent: Tensor) -> Tensor:
    """``base ** exponent`` for a Tensor exponent (``2 ** t`` comes here too)."""
    exponent, a, b = _binary(base, exponent)
    if a.dtype == np.bool_:
        raise RuntimeError("pow is not implemented for bool tensors")
    out = _integer_power(a, b) if a.dtype.kind in "iu" else np.power(a, b)
    return _result(out, "pow_tensor", (base, exponent))


def _integer_power(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer ``a ** b`` with PyTorch's answer for negative entries of a tensor exponent:
    ``1 / a**n`` truncated to an integer (1 for ``a == 1``, ±1 for ``a == -1``, else 0)."""
    out = np.power(a, np.where(b < 0, 0, b))
    negative = b < 0
    if np.any(negative):
        minus_one = np.where(b % 2 == 0, 1, -1)  # (-1) ** b
        tiny = np.where(a == 1, 1, np.where(a == -1, minus_one, 0)).astype(out.dtype)
        out = np.where(negative, tiny, out)
    return out


def _divmod_op(x: Tensor, other: Any, op: str) -> Tensor:
    """``x // other`` (``op="floordiv"``) or ``x % other`` (``op="mod"``), as PyTorch: an
    integer division by zero raises instead of giving NumPy's silent 0."""
    other, a, b = _binary(x, other)
    if a.dtype == np.bool_:
        raise RuntimeError(f"{op} is not implemented for bool tensors")
    if a.dtype.kind in "iu" and np.broadcast(a, b).size and np.any(b == 0):
        raise RuntimeError("ZeroDivisionError")
    out = np.floor_divide(a, b) if op == "floordiv" else np.remainder(a, b)
    return _result(out, op, (x, other))  # "rmod": number % tensor, which has no derivative


def _inplace(x: Tensor, other: Any, ufunc: Any) -> Tensor:
    """``x OP= other``: compute in the promoted dtype, write into ``x.data``, return ``x``."""
    if _GRAD_ENABLED[0] and (x.requires_grad or getattr(other, "requires_grad", False)):
        if x.requires_grad and x._node is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
        raise RuntimeError("in-place operations on tensors that are part of an autograd graph "
                           "are not supported by tinytorch: write y = y + x instead")
    other, a, b = _binary(x, other, floating=ufunc is np.true_divide)
    if _category(a.dtype) > _category(x.data.dtype):
        raise RuntimeError(f"result type {a.dtype} can't be cast to the desired output type "
                           f"{x.data.dtype}")
    shape = np.broadcast_shapes(x.data.shape, b.shape)
    if shape != x.data.shape:
        raise RuntimeError(f"output with shape {list(x.data.shape)} doesn't match the "
                           f"broadcast shape {list(shape)}")
    ufunc(a, b, out=x.data, casting="unsafe")
    return x


def _shape_arg(shape: tuple[Any, ...]) -> tuple[int, ...]:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return tuple([int(s) for s in shape])


def _check_reshape(shape: tuple[int, ...], numel: int) -> None:
    if -1 not in shape:  # NOTE: the common case: the sizes must multiply to numel
        if math.prod(shape) != numel:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        return
    if sum(1 for s in shape if s == -1) > 1:
        raise RuntimeError("only one dimension can be inferred (-1)")
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if -1 in shape and known == 0:
        raise RuntimeError(f"cannot reshape tensor of {numel} elements into shape "
                           f"{list(shape)}: the size of -1 could be anything")
    ok = numel % known == 0 if -1 in shape else known == numel
    if not ok:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")


def _sequence_as_tuple(index: Any) -> bool:
    """PyTorch's (and old NumPy's) rule for a *list* index: shorter than 32 and holding a
    tensor, a sequence, a slice, ``...`` or None, it means the same as a tuple
    (``x[[[0, 1]]]`` is ``x[[0, 1]]``, ``x[[0, slice(None)]]`` is ``x[0, :]``)."""
    return isinstance(index, list) and len(index) < 32 and any(
        isinstance(i, (Tensor, list, tuple, np.ndarray, slice)) or i is None or i is Ellipsis
        for i in index)


def _index_item(item: Any) -> Any:
    if isinstance(item, Tensor):
        item = item.data
    if isinstance(item, list):
        item = np.asarray([i.item() if isinstance(i, Tensor) else i for i in item])
        if item.size == 0:
            item = item.astype(np.int64)  # x[[]] selects nothing (NumPy would say float64)
    if isinstance(item, np.ndarray) and item.ndim == 0 and item.dtype.kind in "iu":
        return int(item)  # a 0-d integer index is an integer
    return item


def _index_arg(x: Tensor, index: Any) -> tuple[Tensor, Any]:
    """Prepare ``x[index]`` with PyTorch's rules: returns ``(tensor to index, NumPy index)``.

    * Tensors in the index become their arrays; a slice with a negative step is refused.
    * PyTorch applies integer indices before index arrays: ``x[0, :, idx]`` first takes the
      view ``x[0]``, then ``[:, idx]``. NumPy would treat the ``0`` as one more index array
      and, because a slice separates it from ``idx``, move the indexed dimension to the
      front: another shape, and silently transposed values. So when an index mixes integers
      with index arrays, the integers are applied first (a recorded view, no copy).
    """
    if type(index) is slice and index.step is None:  # NOTE: the common case, x[a:b]
        return x, (index, Ellipsis)
    if _sequence_as_tuple(index):
        index = tuple(index)
    items = tuple(_index_item(i) for i in (index if isinstance(index, tuple) else (index,)))
    for item in items:
        if isinstance(item, slice) and item.step is not None and item.step <= 0:
            raise ValueError("step must be greater than zero")
    is_int = [isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in items]
    _check_masks(items, x.shape)
    if not any(isinstance(i, np.ndarray) for i in items):
        # basic indexing only; a trailing ``...`` makes NumPy return a view even when every
        # dimension is indexed (``x[0]`` of a vector is a 0-d view, as in PyTorch)
        return x, items if Ellipsis in items else items + (Ellipsis,)
    if not any(is_int):
        return x, _drop_empty_ellipsis(items, x.ndim)
    first: list[Any] = []
    for item, integer in zip(items, is_int, strict=True):
        if integer or item is Ellipsis:
            first.append(item)
        elif item is not None:  # a slice or an array: keep every dimension it covers
            first.extend([slice(None)] * (item.ndim if isinstance(item, np.ndarray) and
                                          item.dtype == np.bool_ else 1))
    picked = _result(x.data[tuple(first)], "getitem", (x,), index=tuple(first))
    rest = tuple(i for i, integer in zip(items, is_int, strict=True) if not integer)
    return picked, _drop_empty_ellipsis(rest, picked.ndim)


def _check_masks(items: tuple[Any, ...], shape: tuple[int, ...]) -> None:
    """A bool mask must have the shape of the dimensions it covers (NumPy lets an empty mask
    through whatever it covers; PyTorch refuses)."""
    if not any(isinstance(i, np.ndarray) and i.dtype == np.bool_ for i in items):
        return
    sizes = [i.ndim if isinstance(i, np.ndarray) and i.dtype == np.bool_ else 1
             for i in items if i is not None and i is not Ellipsis]
    dim = 0
    for item in items:
        if item is Ellipsis:
            dim += max(len(shape) - sum(sizes), 0)
        elif item is None:
            continue
        elif isinstance(item, np.ndarray) and item.dtype == np.bool_:
            covered = shape[dim:dim + item.ndim]
            if item.shape != covered:
                raise IndexError(f"The shape of the mask {list(item.shape)} does not match the "
                                 f"shape of the indexed tensor {list(covered)} at index {dim}")
            dim += item.ndim
        else:
            dim += 1


def _drop_empty_ellipsis(items: tuple[Any, ...], ndim: int) -> tuple[Any, ...]:
    """Remove a ``...`` that stands for no dimension: NumPy would still count it as
    separating two index arrays (and move their dimension to the front); PyTorch does not."""
    used = sum(i.ndim if isinstance(i, np.ndarray) and i.dtype == np.bool_ else 1
               for i in items if i is not None and i is not Ellipsis)
    if used == ndim:
        items = tuple(i for i in items if i is not Ellipsis)
    return items


def _dim_arg(dim: Any, ndim: int) -> int | tuple[int, ...] | None:
    """``dim`` as NumPy's ``axis``: None for "every dimension" (also ``dim=()`` and any dim
    of a 0-d tensor, as in PyTorch), else checked non-negative ints (a tuple for several)."""
    if dim is None:
        return None
    dims = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
    if not dims:
        return None
    lo, hi = -max(ndim, 1), max(ndim, 1) - 1
    for d in dims:
        if not lo <= d <= hi:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{lo}, {hi}], but got {d})")
    if ndim == 0:
        return None
    axes = tuple(int(d) % ndim for d in dims)
    if len(set(axes)) != len(axes):
        raise RuntimeError(f"dims {dims} name the same dimension twice")
    return axes if isinstance(dim, (tuple, list)) else axes[0]


# ----------------------------------------------------------------------------- factories
# Provided: PyTorch-style constructors and the global random generator.
_RNG = [np.random.default_rng(0)]


def manual_seed(seed: int) -> None:
    """Seed tinytorch's global random generator (like ``torch.manual_seed``)."""
    _RNG[0] = np.random.default_rng(seed)


def default_generator() -> np.random.Generator:
    """The global NumPy Generator used by ``randn``, ``rand`` and layer initialisation."""
    return _RNG[0]


def tensor(data: Any, requires_grad: bool = False, dtype: Any = None) -> Tensor:
    return Tensor(data, requires_grad=requires_grad, dtype=dtype)


def zeros(*shape: Any, requires_grad: bool = False, dtype: Any = _DEFAULT_FLOAT) -> Tensor:
    return Tensor(np.zeros(_size_arg(shape), dtype=dtype), requires_grad=requires_grad)


def ones(*shape: Any, requires_grad: bool = False, dtype: Any = _DEFAULT_FLOAT) -> Tensor:
    return Tensor(np.ones(_size_arg(shape), dtype=dtype), requires_grad=requires_grad)


def full(shape: Any, value: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """``value`` everywhere; the dtype follows the value unless given (``full((2,), 3)`` is
    int64, ``full((2,), 3.0)`` float32), as in PyTorch."""
    dtype = _scalar_dtype(value) if dtype is None else dtype
    return Tensor(np.full(_shape_arg((shape,)), value, dtype=dtype), requires_grad=requires_grad)


def zeros_like(t: Tensor) -> Tensor:
    return Tensor(np.zeros_like(t.data))


def ones_like(t: Tensor) -> Tensor:
    return Tensor(np.ones_like(t.data))


def arange(*args: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """``arange(end)``, ``arange(start, end[, step])``: int64 when every argument is an
    integer, float32 otherwise (PyTorch's rule; NumPy would give float64)."""
    start, end, step = (0, args[0], 1) if len(args) == 1 else (tuple(args) + (1,))[:3]
    if step == 0:
        raise RuntimeError("arange: step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("arange: upper bound and lower bound inconsistent with step sign")
    integers = all(isinstance(a, (int, np.integer)) for a in args)
    dtype = dtype if dtype is not None else np.int64 if integers else _DEFAULT_FLOAT
    return Tensor(np.arange(start, end, step).astype(dtype), requires_grad=requires_grad)


def randn(*shape: Any, requires_grad: bool = False) -> Tensor:
    data = _RNG[0].standard_normal(_size_arg(shape)).astype(_DEFAULT_FLOAT)
    return Tensor(data, requires_grad=requires_grad)


def rand(*shape: Any, requires_grad: bool = False) -> Tensor:
    data = _RNG[0].random(_size_arg(shape)).astype(_DEFAULT_FLOAT)
    return Tensor(data, requires_grad=requires_grad)


def _size_arg(shape: tuple[Any, ...]) -> tuple[int, ...]:
    if not shape:  # ``zeros()`` is a mistake; ``zeros(())`` is the 0-d tensor
        raise TypeError("missing the size: zeros(2, 3), zeros((2, 3)) or zeros(()) for 0-d")
    return _shape_arg(shape)


# %% [raw]
# # BEGIN QUESTION
# name: basics
# points: 0

# %% [markdown]
# ### Check: basics
# Run the cell below after implementing `shape`, `dtype`, `ndim`, `numel` and
# `memory_footprint`.

# %% [raw]
# # BEGIN TESTS

# %%
def test_shape_dtype_ndim(Tensor, np):
    t = Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert t.shape == (2, 3), f"shape should be (2, 3), got {t.shape!r}: return a tuple of ints"
    assert t.dtype == np.float32, f"Python floats should become float32, got {t.dtype}"
    assert t.ndim == 2, f"ndim should be 2, got {t.ndim}"
    scalar = Tensor(3.0)
    assert scalar.ndim == 0, (
        f"Tensor(3.0) has shape () and so 0 dimensions, got ndim {scalar.ndim!r}: a loss is a "
        f"0-d tensor, and code that counts its dimensions must not see 1")

# %%
def test_numel_and_memory(Tensor, np):
    n = Tensor(np.zeros((2, 3, 4))).numel()
    assert n == 24, (
        f"a (2, 3, 4) tensor has 2 * 3 * 4 = 24 elements, numel() gave {n!r}: multiply the "
        f"sizes of the shape; every memory and FLOP estimate starts from this count")
    n0 = Tensor(5.0).numel()
    assert n0 == 1, (
        f"a 0-d tensor holds one element (the empty product is 1), numel() gave {n0!r}: start "
        f"the product at 1, or every scalar loss counts as empty")
    batch = Tensor(np.zeros((32, 3, 224, 224), dtype=np.float32))
    got = batch.memory_footprint()
    assert got == 19267584, (
        f"32 images x 3 x 224 x 224 float32 values x 4 bytes = 19,267,584 bytes (about 19 MB), "
        f"memory_footprint() gave {got!r}: numel() times the bytes of one element")
    got64 = Tensor(np.zeros(10, dtype=np.float64)).memory_footprint()
    assert got64 == 80, (
        f"10 float64 values take 10 x 8 = 80 bytes, memory_footprint() gave {got64!r}: use "
        f"the element size of the dtype (self.data.itemsize), not 4 for every tensor")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ### Exercise: what does a batch cost?
#
# Before we multiply anything, compute what memory a realistic input needs. An ImageNet batch
# of 32 RGB images at 224×224 in float32:

# %%
batch = Tensor(np.zeros((32, 3, 224, 224), dtype=np.float32))
print(f"{batch.numel():,} elements, {batch.memory_footprint() / 1e6:.1f} MB; in float64 "
      f"{batch.numel() * 8 / 1e6:.1f} MB, in int8 {batch.numel() / 1e6:.1f} MB")
# Expected: 4,816,896 elements, 19.3 MB. The same batch in float64 would need 38.5 MB;
# in int8 (module 15) 4.8 MB.

# %% [markdown]
# ## 2. Strides and views: transpose without copying
#
# How does `Tensor` find element `(i, j)` in flat storage? With **strides**: the number of
# elements to skip to move one step along each dimension. For a row-major `(2, 3)` tensor the
# strides are `(3, 1)`: the next row is 3 elements away, the next column 1.
#
# ```
#   address(i, j) = offset + i * stride[0] + j * stride[1]
#
#   x: shape (2, 3), strides (3, 1)         x.T: shape (3, 2), strides (1, 3)
#   storage: [1 2 3 4 5 6]                   same storage: [1 2 3 4 5 6]
#   x[1, 2] -> 1*3 + 2*1 = 5 -> 6            x.T[2, 1] -> 2*1 + 1*3 = 5 -> 6
# ```
#
# A **transpose** swaps the shape *and the strides*; no element moves. That is why
# `x.transpose(0, 1)` costs nothing no matter how large `x` is. The price: the result is no
# longer **contiguous** (walking it in row-major order jumps around storage), and some kernels
# copy it first. `reshape` gives a view when it can and copies otherwise; `view` never copies
# and raises instead.
#
# When can a non-contiguous tensor still be *viewed* in a new shape? When every new dimension
# can be given one stride. For `x` of shape `(4, 6)`, `x[:, :3]` (shape `(4, 3)`, strides
# `(6, 1)`) can become `(4, 3, 1)` or `(2, 2, 3)` (splitting dimension 0 gives strides 12 and
# 6), but not `(12,)`: its elements sit at offsets 0, 1, 2, 6, 7, 8, ..., no single stride.
# `x.T` can never be flattened without a copy. NumPy answers exactly this question when you ask it for a
# reshape that must not copy (`np.reshape(a, shape, copy=False)`), so `view` asks NumPy.
# Two conventions complete the picture: a tensor with no elements is contiguous (there is
# nothing to lay out), and so is any tensor whose only non-trivial dimension has stride 1.
#
# **Indexing** (`x[i]`, `x[:, 1:3]`, `x[idx]`) also makes views when it can: integers and
# slices are *basic* indexing (a view with new shape, strides and offset), index arrays and
# masks are *advanced* indexing (a copy). PyTorch follows NumPy here with two differences you
# must reproduce: a slice with a negative step (`x[::-1]`) is refused (strides are never
# negative in PyTorch; use `x.flip(0)`), and integers are applied *before* index arrays:
#
# ```
#   x: shape (2, 3, 4),  idx = [0, 2]
#   PyTorch  x[0, :, idx]  ->  x[0] is (3, 4), then [:, idx]          ->  shape (3, 2)
#   NumPy    x[0, :, idx]  ->  0 and idx are both "advanced", separated
#                              by a slice, so their dimension goes first ->  shape (2, 3)
# ```
#
# Same values, transposed — a silent bug in code moved between the two. The provided
# `_index_arg` applies integers first when an index mixes them with arrays.

# %% [markdown]
# Your code for this section: the functions behind `x.stride()`, `x.is_contiguous()`,
# `x.reshape(...)`, `x.view(...)`, `x.transpose(...)`, `x.permute(...)` and `x[...]`.
# The `Tensor` class above already has these methods: each calls the function of the same
# name with a leading underscore (`_stride`, ..., `_getitem` for `x[...]`), passing the
# tensor as `self`. Write them here, run this cell, then run the check below it.

# %%
#| export
def _stride(self: Tensor, dim: int | None = None) -> tuple[int, ...] | int:
    """Elements to skip in storage to move one step along each dimension.

    PyTorch counts strides in *elements*; NumPy's ``.strides`` counts *bytes*.

    APPROACH: divide each of ``self.data.strides`` by ``self.data.itemsize``.
    With ``dim`` given, return only that dimension's stride; a negative ``dim`` counts from
    the end (``stride(-1)`` is the last dimension's), as in PyTorch.

    EXAMPLE:
        >>> Tensor(np.zeros((2, 3), dtype=np.float32)).stride()
        (3, 1)
        >>> Tensor(np.zeros((2, 3), dtype=np.float32)).transpose(0, 1).stride()
        (1, 3)

    HINT: use integer division (``//``): strides are whole numbers of elements.
    """
    # BEGIN SOLUTION NO PROMPT
    strides = tuple(s // self.data.itemsize for s in self.data.strides)
    if dim is None:
        return strides
    return strides[dim]
    # END SOLUTION
    raise NotImplementedError("module 01: implement _stride (see its docstring)")  # STUB


def _is_contiguous(self: Tensor) -> bool:
    """True when elements sit in storage in row-major order with no gaps.

    APPROACH:
        1. A tensor with no elements (a 0 in its shape) is contiguous: there is nothing to
           lay out (PyTorch's convention).
        2. Walk the dimensions from last to first, keeping the stride a row-major tensor of
           this shape would have (it starts at 1 and is multiplied by each size).
        3. Compare with ``self.stride()``. Dimensions of size 1 can have any stride (you
           never step along them), so skip them.

    EXAMPLE:
        >>> x = Tensor(np.zeros((2, 3)))
        >>> x.is_contiguous(), x.transpose(0, 1).is_contiguous()
        (True, False)
        >>> Tensor(np.zeros((3, 0))).transpose(0, 1).is_contiguous()
        True

    HINT: a ``(4, 1)`` column transposed to ``(1, 4)`` is still contiguous — that is the
    size-1 rule at work.
    """
    # BEGIN SOLUTION NO PROMPT
    if self.numel() == 0:
        return True
    expected = 1
    strides = self.stride()
    for size, stride in zip(reversed(self.shape), reversed(strides), strict=True):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True
    # END SOLUTION
    raise NotImplementedError(  # STUB
        "module 01: implement _is_contiguous (see its docstring)")  # STUB


def _reshape(self: Tensor, *shape: Any) -> Tensor:
    """The same elements in a new shape; a view (no copy) whenever the layout allows.

    Accepts ``reshape(2, 6)`` or ``reshape((2, 6))``; one size may be ``-1`` and is inferred.

    APPROACH:
        1. Accept a single tuple/list argument as the shape.
        2. Check the element count matches (resolving a ``-1``); if it cannot, raise
           ``RuntimeError("shape '[5, 5]' is invalid for input of size 12")``.
        3. ``self.data.reshape(shape)`` returns a view when it can.
        4. Return ``_result(new_data, "reshape", (self,))`` so autograd can follow.

    EXAMPLE:
        >>> Tensor(np.arange(12)).reshape(3, -1).shape
        (3, 4)

    HINT: the provided helpers ``_shape_arg`` and ``_check_reshape`` do steps 1 and 2;
    ``self.data.size`` is the element count (``numel()`` counts it again in Python).
    """
    # BEGIN SOLUTION NO PROMPT
    shape = _shape_arg(shape)
    _check_reshape(shape, self.data.size)
    return _result(self.data.reshape(shape), "reshape", (self,))
    # END SOLUTION
    raise NotImplementedError("module 01: implement _reshape (see its docstring)")  # STUB


def _view(self: Tensor, *shape: Any) -> Tensor:
    """Like ``reshape`` but guaranteed never to copy; raises when the strides forbid it.

    A contiguous tensor can always be viewed in any shape with the same number of elements.
    A non-contiguous one sometimes can: ``x[:, ::2].view(...)`` may only add or remove
    size-1 dimensions or split a dimension, because a view can only give each new
    dimension one stride. ``x.T.view(-1)`` can never work: row-major order would have to
    jump back and forth in storage.

    APPROACH:
        1. ``shape = _shape_arg(shape)`` and ``_check_reshape(shape, self.numel())`` as in
           ``reshape``.
        2. Ask NumPy for a reshape that must not copy:
           ``np.reshape(self.data, shape, copy=False)`` raises ``ValueError`` exactly when
           no set of strides gives that shape.
        3. Turn that ``ValueError`` into ``RuntimeError`` (PyTorch's type), telling the
           user to call ``.reshape(...)``; otherwise record the result as in ``reshape``.

    EXAMPLE:
        >>> Tensor(np.zeros((2, 3))).transpose(0, 1).view(6)
        Traceback (most recent call last):
        RuntimeError: view size is not compatible with input tensor's size and stride ...
        >>> Tensor(np.zeros((4, 6)))[:, ::2].view(4, 3, 1).shape
        (4, 3, 1)

    HINT: do not test ``is_contiguous()`` first: that refuses views PyTorch allows (the
    second example is not contiguous). ``raise RuntimeError(...) from None`` hides the
    NumPy traceback.
    """
    # BEGIN SOLUTION NO PROMPT
    shape = _shape_arg(shape)
    _check_reshape(shape, self.numel())
    try:
        out = np.reshape(self.data, shape, copy=False)
    except ValueError:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least "
            "one dimension spans across two contiguous subspaces). Use .reshape(...) "
            "instead.") from None
    return _result(out, "reshape", (self,))
    # END SOLUTION
    raise NotImplementedError("module 01: implement _view (see its docstring)")  # STUB


def _transpose(self: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap two dimensions *without copying*: only the shape and strides change.

    APPROACH: ``self.data.swapaxes(dim0, dim1)`` returns a view; wrap it with
    ``_result(..., "transpose", (self,), dim0=dim0, dim1=dim1)``. Negative dims count from
    the end, as in PyTorch: ``transpose(-1, -2)`` swaps the last two.

    EXAMPLE:
        >>> Tensor(np.zeros((2, 3, 4))).transpose(0, 2).shape
        (4, 3, 2)

    HINT: check ``np.shares_memory(x.data, x.transpose(0, 1).data)`` — it should be True.
    """
    if self.ndim == 0:  # nothing to swap: PyTorch accepts dims 0 and -1 for a 0-d tensor
        _dim_arg((dim0, dim1), 0)
        return self.reshape(())
    # BEGIN SOLUTION NO PROMPT
    return _result(self.data.swapaxes(dim0, dim1), "transpose", (self,),
                   dim0=dim0, dim1=dim1)
    # END SOLUTION
    raise NotImplementedError(  # STUB
        "module 01: implement _transpose (see its docstring)")  # STUB


def _permute(self: Tensor, *dims: Any) -> Tensor:
    """Reorder all dimensions, e.g. NCHW -> NHWC with ``permute(0, 2, 3, 1)``. A view.

    APPROACH:
        1. Accept ints or one tuple (``_shape_arg`` does this).
        2. Check ``dims`` is a permutation of ``range(self.ndim)``; else ``RuntimeError``.
        3. ``np.transpose(self.data, dims)`` gives the view; record it with
           ``_result(..., "permute", (self,), dims=dims)``.

    EXAMPLE:
        >>> Tensor(np.zeros((2, 3, 4, 5))).permute(0, 2, 3, 1).shape
        (2, 4, 5, 3)

    HINT: negative dims count from the end: compare ``d % self.ndim``.
    """
    # BEGIN SOLUTION NO PROMPT
    dims = _shape_arg(dims)
    if sorted(d % max(self.ndim, 1) for d in dims) != list(range(self.ndim)):
        raise RuntimeError(f"permute: dims {dims} are not a permutation of {self.ndim} dims")
    return _result(np.transpose(self.data, dims), "permute", (self,), dims=dims)
    # END SOLUTION
    raise NotImplementedError("module 01: implement _permute (see its docstring)")  # STUB


def _getitem(self: Tensor, index: Any) -> Tensor:
    """Indexing and slicing with PyTorch's rules: ``x[0]``, ``x[:, 1:3]``, ``x[idx]``.

    APPROACH:
        1. ``x, index = _index_arg(self, index)`` (provided): it unwraps Tensors in the
           index, refuses negative slice steps (PyTorch does), and applies integer indices
           first when they are mixed with index arrays (PyTorch's rule; see the lesson).
        2. ``x.data[index]`` — basic slices give views, integer arrays give copies.
        3. Return ``_result(np.asarray(out), "getitem", (x,), index=index)``.

    EXAMPLE:
        >>> x = Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        >>> x[1].tolist(), x[:, 1:].tolist(), x[Tensor(np.array([1, 1]))].shape
        ([4.0, 5.0, 6.0], [[2.0, 3.0], [5.0, 6.0]], (2, 3))

    HINT: record ``x`` (not ``self``) as the input: ``_index_arg`` may already have
    recorded the integer step. Keep ``index`` in the record: module 05 needs it to route
    gradients back to the selected elements.
    """
    # BEGIN SOLUTION NO PROMPT
    x, index = _index_arg(self, index)
    return _result(np.asarray(x.data[index]), "getitem", (x,), index=index)
    # END SOLUTION
    raise NotImplementedError(  # STUB
        "module 01: implement _getitem (see its docstring)")  # STUB


# %% [raw]
# # BEGIN QUESTION
# name: views
# points: 0

# %% [markdown]
# ### Check: strides and views

# %% [raw]
# # BEGIN TESTS

# %%
def test_strides_and_contiguity(Tensor, np):
    x = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert x.stride() == (3, 1), f"strides count elements, not bytes: expected (3, 1), got {x.stride()}"
    t = x.transpose(0, 1)
    assert t.shape == (3, 2), (
        f"transpose(0, 1) of a (2, 3) tensor swaps the two sizes to (3, 2), got shape "
        f"{t.shape}: every x.T in a linear layer depends on it")
    assert t.stride() == (1, 3), (
        f"transpose swaps the strides too: (3, 1) becomes (1, 3), got {t.stride()}: the "
        f"strides are how a view finds its elements without copying")
    assert np.shares_memory(t.data, x.data), (
        f"transpose must be a view of x, but its data (strides {t.data.strides} bytes) is a "
        f"copy: a transpose should cost nothing, whatever the size of x")
    flags = (x.is_contiguous(), t.is_contiguous())
    assert flags == (True, False), (
        f"a (2, 3) matrix is contiguous and its transpose (strides {t.stride()}) is not; "
        f"is_contiguous() gave {flags[0]} and {flags[1]}: kernels copy non-contiguous inputs, "
        f"so this decides when a copy happens")
    empty = Tensor(np.zeros((3, 0), dtype=np.float32)).transpose(0, 1)
    assert empty.is_contiguous(), (
        f"a tensor with no elements is contiguous (nothing to lay out, PyTorch's convention), "
        f"but is_contiguous() gave False for shape {empty.shape}, strides {empty.stride()}")

# %%
def test_indexing_like_pytorch(Tensor, np):
    x = Tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    row = x[1]
    assert row.shape == (3, 4) and np.shares_memory(row.data, x.data), (
        f"x[1] selects a (3, 4) view of x; got shape {row.shape}: basic indexing never copies")
    assert x[:, 1:, ::2].shape == (2, 2, 2), (
        f"x[:, 1:, ::2] has shape (2, 2, 2), got {x[:, 1:, ::2].shape}")
    idx = Tensor(np.array([0, 2]))
    got = x[0, :, idx]
    assert got.shape == (3, 2), (
        f"x[0, :, idx] must have shape (3, 2) as in PyTorch (x[0] first, then [:, idx]), got "
        f"{got.shape}: NumPy's rule puts idx's dimension first; apply integers first")
    assert got.numpy().tolist()[1] == [4.0, 6.0], (
        f"x[0, :, [0, 2]] row 1 is [4, 6], got {got.numpy().tolist()[1]}")
    try:
        flipped = x[::-1]
    except ValueError:
        pass
    else:
        raise AssertionError(f"x[::-1] must raise ValueError (PyTorch refuses negative steps: "
                             f"use x.flip(0)), but returned shape {flipped.shape}")

# %%
def test_reshape_and_view(Tensor, np):
    x = Tensor(np.arange(12, dtype=np.float32))
    r = x.reshape(3, -1)
    assert r.shape == (3, 4), (
        f"reshape(3, -1) of 12 elements infers the missing size 12 / 3 = 4, so (3, 4); got "
        f"shape {r.shape}: -1 is how batch code reshapes without knowing the batch size")
    assert np.shares_memory(r.data, x.data), (
        f"reshaping a contiguous tensor must give a view, but the (3, 4) result (strides "
        f"{r.stride()}) is a copy: call self.data.reshape, which never copies when it can avoid it")
    r2 = x.reshape((2, 6))
    assert r2.shape == (2, 6), (
        f"reshape((2, 6)) (one tuple) must work like reshape(2, 6), got shape {r2.shape}: "
        f"x.reshape(other.shape) passes a tuple")
    try:
        bad = x.reshape(5, 5)
    except RuntimeError:
        pass
    else:
        raise AssertionError(
            f"reshape(5, 5) of 12 elements must raise RuntimeError (25 != 12), but returned "
            f"shape {bad.shape}: a wrong element count is a bug to report, not to hide")
    try:
        flat = x.reshape(3, 4).transpose(0, 1).view(12)
    except RuntimeError:
        pass
    else:
        raise AssertionError(
            f"view(12) of a transposed (4, 3) matrix must raise RuntimeError: no single stride "
            f"walks it in row-major order; got shape {flat.shape}, values "
            f"{flat.numpy()[:4].tolist()}... (use reshape, which copies)")
    part = Tensor(np.zeros((4, 6), dtype=np.float32))[:, :3]
    v = part.view(2, 2, 3)
    assert v.shape == (2, 2, 3) and np.shares_memory(v.data, part.data), (
        f"x[:, :3] is not contiguous, but its strides (6, 1) allow the view (2, 2, 3) (strides "
        f"(12, 6, 1)); got shape {v.shape}: do not refuse every non-contiguous tensor")
    p = Tensor(np.zeros((2, 3, 4, 5))).permute(0, 2, 3, 1)
    assert p.shape == (2, 4, 5, 3), (
        f"permute(0, 2, 3, 1) turns NCHW (2, 3, 4, 5) into NHWC (2, 4, 5, 3), got shape "
        f"{p.shape}: dimension i of the result is dimension dims[i] of the input")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 3. Broadcasting arithmetic
#
# Adding a bias vector of shape `(3,)` to a batch of shape `(4, 3)` should not require copying
# the bias four times. **Broadcasting** lines the shapes up *from the right* and stretches
# dimensions of size 1 (or missing ones) without copying:
#
# ```
#   batch  (4, 3)          a (2, 1)      b      (3,)
#   bias      (3,)   ->    -> (2, 3)  +  -> (1, 3) -> (2, 3)
#   result (4, 3)
# ```
#
# Two sizes are compatible when they are equal or one of them is 1. NumPy implements the rule;
# your operators pass it through.
#
# **Type promotion: the dtype of `a + b`.** When the operands have different dtypes, the
# result needs one dtype that holds both. NumPy and PyTorch disagree, and the disagreement
# matters: code moved between them changes precision, memory and speed without an error.
# PyTorch's rule, which `result_type` implements:
#
# | operands | PyTorch | NumPy | why |
# |---|---|---|---|
# | `float32 tensor * 0.5` | float32 | float32 | a number never widens a tensor of its own category |
# | `int64 tensor * 0.5` | **float32** | float64 | a float number lifts an integer tensor to the *default* float, float32 |
# | `float32 tensor * np.float64(0.5)` | **float32** | float64 | NumPy numbers are numbers too |
# | `float32 tensor + float64 0-d tensor` | **float32** | float64 | a 0-d tensor counts less than a tensor with dimensions |
# | `float32 tensor + float64 tensor` | float64 | float64 | two real tensors: the wider dtype |
# | `int8 tensor + 300` | **int8** (wraps) | error | the number takes the tensor's dtype |
# | `int64 tensor + float32 tensor` | **float32** | float64 | a float beats any integer, at the float's width |
# | `int64 tensor / int64 tensor` | **float32** | float64 | true division gives the default float |
#
# In words: every dtype has a **category** (bool < integer < floating). The result's category
# is the highest of all operands. Its dtype comes from the strongest *group* that reaches that
# category — tensors with dimensions first, then 0-d tensors, then numbers (a float number
# stands for float32, an int for int64). So `0.5` never turns float32 into float64 (half the
# speed, twice the memory — the most common silent slowdown in NumPy code), but it does turn
# an integer tensor into a float one: `Tensor([4, 9]) ** 0.5` is `[2., 3.]`, not `[1, 1]`.
#
# The same reasoning gives the dtype of `exp`, `log`, `sqrt` and `tanh` of an integer tensor:
# float32 (`e ** 1` is not an integer). And some mixtures are refused outright, as in PyTorch:
# subtracting bool tensors (`~mask` inverts a mask), an integer tensor to a negative integer
# power, and integer division by zero (`//`, `%`), where NumPy would silently return 0.

# %% [markdown]
# Your code for this section: `result_type` (the table above as code; the helpers
# `_category`, `_scalar_dtype` and `_promote_types` are given), then the operators
# (`_add` for `x + y`, `_sub`, `_mul`, `_truediv`, `_neg`, `_pow`) and the element-wise
# math (`_exp`, `_log`, `_sqrt`, `_tanh`, `_abs`, `_clamp`) that `Tensor`'s methods call.

# %%
#| export
def _category(dtype: np.dtype) -> int:
    """0 for bool, 1 for integers, 2 for floating point: promotion never goes down."""
    return 0 if dtype.kind == "b" else 1 if dtype.kind in "iu" else 2


def _scalar_dtype(value: Any) -> np.dtype:
    """The dtype a Python or NumPy number stands for: bool, int64, or the default float32."""
    if isinstance(value, (bool, np.bool_)):
        return np.dtype(np.bool_)
    if isinstance(value, (int, np.integer)):
        return np.dtype(np.int64)
    if isinstance(value, (float, np.floating)):
        return np.dtype(_DEFAULT_FLOAT)
    raise TypeError(f"unsupported operand type for a tensor operation: {type(value).__name__}")


def _promote_types(a: np.dtype, b: np.dtype) -> np.dtype:
    """The smallest dtype that holds both: a float beats any integer (``int64`` with
    ``float32`` is ``float32`` in PyTorch, ``float64`` in NumPy), otherwise NumPy's table
    (``uint8`` with ``int8`` is ``int16``, ``float32`` with ``float64`` is ``float64``)."""
    if _category(a) != _category(b):
        return a if _category(a) > _category(b) else b
    return np.promote_types(a, b)


def result_type(*operands: Any) -> np.dtype:
    """The dtype of ``a + b`` (and every arithmetic op) under PyTorch's promotion rules.

    Like ``torch.result_type``: ``operands`` are Tensors and Python or NumPy numbers.

    The rule:
        1. Each dtype has a category: bool < integer < floating (``_category``).
        2. Operands form three groups, strongest first: tensors with at least one dimension,
           0-d tensors, and numbers (whose dtype is ``_scalar_dtype``: bool, int64 or
           float32).
        3. The result's category is the highest category of any operand.
        4. The dtype comes from the strongest group that has an operand of that category:
           combine that group's dtypes with ``_promote_types``.

    APPROACH:
        1. Sort the dtypes into three lists: ``dims`` (``t.ndim > 0``), ``zero_d`` and
           ``numbers`` (``_scalar_dtype(x)`` for anything that is not a Tensor).
        2. ``top = max(_category(d) for every dtype in the three lists)``.
        3. For each list in that order: if one of its dtypes has category ``top``, fold the
           list with ``_promote_types`` (start from its first dtype) and return the result.

    EXAMPLE:
        >>> result_type(Tensor([1, 2]), 0.5), result_type(Tensor([1.0]), Tensor(2.0).double())
        (dtype('float32'), dtype('float32'))
        >>> result_type(Tensor(np.array([1], np.int8)), 300), result_type(Tensor([True]), 2)
        (dtype('int8'), dtype('int64'))
        >>> result_type(Tensor([1.0]), Tensor([2.0]).double())
        dtype('float64')

    HINT: a number never widens a tensor of its own category (``float32 * 0.5`` stays
    float32, ``int8 + 300`` stays int8) but lifts a lower one (``int * 0.5`` is float32). A
    NumPy number counts as a number too: ``np.float64(2.0)`` does not make float32 float64.
    """
    # BEGIN SOLUTION NO PROMPT
    groups: tuple[list[np.dtype], ...] = ([], [], [])
    for x in operands:
        if isinstance(x, Tensor):
            groups[0 if x.ndim else 1].append(x.dtype)
        else:
            groups[2].append(_scalar_dtype(x))
    top = max(_category(d) for group in groups for d in group)
    for group in groups:
        if any(_category(d) == top for d in group):
            dtype = group[0]
            for d in group[1:]:
                dtype = _promote_types(dtype, d)
            return dtype
    # END SOLUTION
    raise NotImplementedError("module 01: implement result_type (see its docstring)")  # STUB


def _add(self: Tensor, other: Any) -> Tensor:
    """Element-wise ``self + other`` with broadcasting; ``other`` may be a number.

    APPROACH: the first line (given) calls ``_binary``: it wraps a number in a Tensor and
    gives you both data arrays ``a`` and ``b`` already converted to the dtype PyTorch's
    type promotion picks (your ``result_type``, above). Replace the ``raise`` line with
    ``out = ...``, adding ``a`` and ``b`` — NumPy broadcasts for you. The ``return`` below
    it is given: it records the operation so module 05 can compute gradients. The other
    operators follow the same pattern.

    EXAMPLE:
        >>> (Tensor([[1.0], [2.0]]) + Tensor([10.0, 20.0, 30.0])).shape
        (2, 3)
        >>> (Tensor([1, 2]) + 0.5).dtype
        dtype('float32')

    HINT: do not loop over elements or call ``np.broadcast_to``: ``+`` on the arrays
    broadcasts, and does it without copying. Use ``a`` and ``b``, not ``self.data`` and
    ``other.data``: those still have their own dtypes.
    """
    other, a, b = _binary(self, other)
    # BEGIN SOLUTION NO PROMPT
    out = a + b
    # END SOLUTION
    raise NotImplementedError("module 01: implement _add (see its docstring)")  # STUB
    return _result(out, "add", (self, other))


def _sub(self: Tensor, other: Any) -> Tensor:
    """Element-wise ``self - other`` with broadcasting.

    APPROACH: as in ``_add``: ``out = ...`` from the promoted arrays ``a`` and ``b``.
    (``_check_not_bool_sub``, given, refuses bool tensors as PyTorch does: "subtracting"
    masks is almost always a bug; ``~mask`` inverts one.)

    EXAMPLE:
        >>> (Tensor([5.0, 7.0]) - 1).tolist()
        [4.0, 6.0]

    HINT: the order matters: ``self`` minus ``other``; ``1 - t`` goes through
    ``__rsub__`` (given), which calls this with the operands swapped.
    """
    _check_not_bool_sub(self, other)
    other, a, b = _binary(self, other)
    # BEGIN SOLUTION NO PROMPT
    out = a - b
    # END SOLUTION
    raise NotImplementedError("module 01: implement _sub (see its docstring)")  # STUB
    return _result(out, "sub", (self, other))


def _mul(self: Tensor, other: Any) -> Tensor:
    """Element-wise ``self * other`` with broadcasting (not a matrix product: see ``@``).

    APPROACH: as in ``_add``: ``out = ...`` from the promoted arrays ``a`` and ``b``.

    EXAMPLE:
        >>> (Tensor([[1.0], [2.0]]) * Tensor([3.0, 4.0])).tolist()
        [[3.0, 4.0], [6.0, 8.0]]

    HINT: ``*`` on arrays is element-wise; ``np.dot`` here would be a bug.
    """
    other, a, b = _binary(self, other)
    # BEGIN SOLUTION NO PROMPT
    out = a * b
    # END SOLUTION
    raise NotImplementedError("module 01: implement _mul (see its docstring)")  # STUB
    return _result(out, "mul", (self, other))


def _truediv(self: Tensor, other: Any) -> Tensor:
    """Element-wise ``self / other`` with broadcasting (true division, float result).

    Dividing integers gives a float: NumPy makes ``int / int`` float64, PyTorch float32
    (its default float dtype). The given first line asks ``_binary`` for float operands
    (``floating=True``): integer and bool operands arrive as float32.

    APPROACH: ``out = ...`` dividing ``a`` by ``b``.

    EXAMPLE:
        >>> (Tensor([1, 2]) / Tensor([2, 4])).dtype, (Tensor([1, 2]) / 4).tolist()
        (dtype('float32'), [0.25, 0.5])

    HINT: one line, as in ``_mul``; dividing by 0 gives ``inf`` (or NaN for ``0 / 0``)
    with a NumPy warning, as in PyTorch.
    """
    other, a, b = _binary(self, other, floating=True)
    # BEGIN SOLUTION NO PROMPT
    out = a / b
    # END SOLUTION
    raise NotImplementedError(  # STUB
        "module 01: implement _truediv (see its docstring)")  # STUB
    return _result(out, "div", (self, other))


def _neg(self: Tensor) -> Tensor:
    """Element-wise negation ``-self``.

    APPROACH: ``out = ...`` negating the data array.

    EXAMPLE:
        >>> (-Tensor([1.0, -2.0])).tolist()
        [-1.0, 2.0]

    HINT: ``-self.data`` keeps the dtype; ``0 - self.data`` would too, but says less.
    """
    # BEGIN SOLUTION NO PROMPT
    out = -self.data
    # END SOLUTION
    raise NotImplementedError("module 01: implement _neg (see its docstring)")  # STUB
    return _result(out, "neg", (self,))


def _pow(self: Tensor, exponent: Any) -> Tensor:
    """``self ** exponent`` for a number exponent (``x ** 2``, ``x ** 0.5``).

    APPROACH: as in ``_add``, ``a`` and ``b`` come promoted: ``Tensor([4, 9]) ** 0.5``
    is computed in float32 (an integer tensor to a float power is float32, as in PyTorch),
    while ``x ** 2`` keeps ``x``'s dtype. ``out = ...`` with ``a ** b``, but compute
    ``exponent == 2`` and ``exponent == 3`` with products (``a * a``) — see the HINT.

    EXAMPLE:
        >>> (Tensor([1.0, 2.0, 3.0]) ** 2).tolist(), (Tensor([4, 9]) ** 0.5).tolist()
        ([1.0, 4.0, 9.0], [2.0, 3.0])

    HINT (performance): NumPy's ``x ** 3`` on float32 is ~4x slower than ``x * x * x``
    (``x ** 2`` and ``x ** 0.5`` have fast paths); special-case 2 and 3. The given first
    lines send a Tensor exponent to a general version, refuse what PyTorch refuses (an
    integer tensor to a negative integer power) and compute ``x ** -0.5`` as PyTorch does,
    ``1 / sqrt(x)``: C's ``pow`` differs from it at ``-0.0`` (``inf``, PyTorch ``-inf``) and
    ``-inf`` (``0``, PyTorch ``nan``).
    """
    if isinstance(exponent, Tensor):
        return _tensor_pow(self, exponent)
    other, a, b = _binary(self, exponent)
    _check_power(a.dtype, exponent)
    if a.dtype == np.bool_:  # bool ** bool: x ** True is x, x ** False is True
        return Tensor(a | ~b)
    if exponent == -0.5:
        return _result(1 / np.sqrt(a), "pow", (self,), exponent=exponent)
    # BEGIN SOLUTION NO PROMPT
    if exponent == 2:
        out = a * a
    elif exponent == 3:
        out = a * a * a
    else:
        out = a ** b
    # END SOLUTION
    raise NotImplementedError("module 01: implement _pow (see its docstring)")  # STUB
    return _result(out, "pow", (self,), exponent=exponent)


def _exp(self: Tensor) -> Tensor:
    """Element-wise ``e ** x``.

    APPROACH: ``out = np.exp(...)`` of ``_float_data(self)`` (provided: the data as it
    is for float tensors, converted to float32 for integer and bool tensors, because
    ``e ** 1`` is not an integer — PyTorch does the same). The exponential overflows
    float32 above ~88.7 (``inf``); module 02 shows how softmax avoids that.

    EXAMPLE:
        >>> Tensor([0.0, 1.0]).exp().tolist()  # doctest: +ELLIPSIS
        [1.0, 2.718...]
        >>> Tensor([0, 1]).exp().dtype
        dtype('float32')

    HINT: keep the dtype: ``np.exp`` of float32 data is float32; of int64 data NumPy would
    give float64, which is why you start from ``_float_data(self)``.
    """
    # BEGIN SOLUTION NO PROMPT
    out = np.exp(_float_data(self))
    # END SOLUTION
    raise NotImplementedError("module 01: implement _exp (see its docstring)")  # STUB
    return _result(out, "exp", (self,))


def _log(self: Tensor) -> Tensor:
    """Element-wise natural logarithm (``-inf`` at 0, NaN below 0, as in NumPy).

    APPROACH: ``out = np.log(...)`` of ``_float_data(self)`` (integers become float32).

    EXAMPLE:
        >>> round(Tensor([np.e]).log().item(), 5)
        1.0

    HINT: do not clamp here: losses (module 04) decide how to guard ``log(0)``.
    """
    # BEGIN SOLUTION NO PROMPT
    out = np.log(_float_data(self))
    # END SOLUTION
    raise NotImplementedError("module 01: implement _log (see its docstring)")  # STUB
    return _result(out, "log", (self,))


def _sqrt(self: Tensor) -> Tensor:
    """Element-wise square root.

    APPROACH: ``out = np.sqrt(...)`` of ``_float_data(self)`` (integers become float32).

    EXAMPLE:
        >>> Tensor([4.0, 9.0]).sqrt().tolist(), Tensor([4, 9]).sqrt().tolist()
        ([2.0, 3.0], [2.0, 3.0])

    HINT: negative inputs give NaN (with a NumPy warning), as in PyTorch.
    """
    # BEGIN SOLUTION NO PROMPT
    out = np.sqrt(_float_data(self))
    # END SOLUTION
    raise NotImplementedError("module 01: implement _sqrt (see its docstring)")  # STUB
    return _result(out, "sqrt", (self,))


def _tanh(self: Tensor) -> Tensor:
    """Element-wise hyperbolic tangent, squashing values into (-1, 1).

    APPROACH: ``out = np.tanh(...)`` of ``_float_data(self)`` (integers become float32).

    EXAMPLE:
        >>> Tensor([0.0]).tanh().tolist()
        [0.0]

    HINT: ``np.tanh`` is stable for large inputs; the textbook
    ``(e^x - e^-x) / (e^x + e^-x)`` overflows to ``inf / inf``.
    """
    # BEGIN SOLUTION NO PROMPT
    out = np.tanh(_float_data(self))
    # END SOLUTION
    raise NotImplementedError("module 01: implement _tanh (see its docstring)")  # STUB
    return _result(out, "tanh", (self,))


def _abs(self: Tensor) -> Tensor:
    """Element-wise absolute value.

    APPROACH: ``out = np.abs(...)`` of the data (the dtype stays: ``|int|`` is an int).

    EXAMPLE:
        >>> Tensor([-2.0, 3.0]).abs().tolist(), Tensor([-2, 3]).abs().dtype
        ([2.0, 3.0], dtype('int64'))

    HINT: one NumPy call; module 05 decides the derivative at 0 (0, as in PyTorch).
    """
    if self.data.dtype == np.bool_:
        raise RuntimeError("abs is not implemented for bool tensors (as in PyTorch)")
    # BEGIN SOLUTION NO PROMPT
    out = np.abs(self.data)
    # END SOLUTION
    raise NotImplementedError("module 01: implement _abs (see its docstring)")  # STUB
    return _result(out, "abs", (self,))


def _clamp(self: Tensor, min: float | None = None,  # noqa: A002 - PyTorch's names
           max: float | None = None) -> Tensor:  # noqa: A002
    """Limit every element to ``[min, max]``; either bound may be None (torch.clamp).

    The bounds take part in type promotion like any number: ``int.clamp(min=0.5)`` is
    float32, ``float32.clamp(min=0)`` stays float32.

    APPROACH: ``out = np.clip(a, min, max)`` on the promoted data ``a`` (given) — NumPy
    accepts None for a missing bound.

    EXAMPLE:
        >>> Tensor([-2.0, 0.5, 3.0]).clamp(min=0.0, max=1.0).tolist()
        [0.0, 0.5, 1.0]

    HINT: ``clamp(min=0)`` looks like ReLU (module 02), but PyTorch's ReLU passes no
    gradient at exactly 0 and ``clamp``'s bounds are inclusive: module 02 writes its own.
    """
    if min is None and max is None:
        raise ValueError("clamp: at least one of min and max must be given")
    a = self.data.astype(result_type(self, *(v for v in (min, max) if v is not None)),
                         copy=False)
    # BEGIN SOLUTION NO PROMPT
    out = np.clip(a, min, max)
    # END SOLUTION
    raise NotImplementedError("module 01: implement _clamp (see its docstring)")  # STUB
    return _result(out, "clamp", (self,), min=min, max=max)


# %% [raw]
# # BEGIN QUESTION
# name: arithmetic
# points: 0

# %% [markdown]
# ### Check: arithmetic and broadcasting

# %% [raw]
# # BEGIN TESTS

# %%
def test_broadcasting_arithmetic(Tensor, np):
    a = Tensor([[1.0], [2.0]])
    b = Tensor([10.0, 20.0, 30.0])
    s = a + b
    assert s.shape == (2, 3), f"(2, 1) + (3,) broadcasts to (2, 3), got {s.shape}"
    sums = s.numpy().tolist()
    assert sums == [[11.0, 21.0, 31.0], [12.0, 22.0, 32.0]], (
        f"[[1], [2]] + [10, 20, 30] is [[11, 21, 31], [12, 22, 32]], got {sums}: add the "
        f"promoted arrays a and b and let NumPy broadcast")
    diff = (b - a).numpy().tolist()
    assert diff[1] == [8.0, 18.0, 28.0], (
        f"b - a: row 1 is [10, 20, 30] - 2 = [8, 18, 28], got {diff[1]}: self minus other, "
        f"in that order")
    prod = (a * b).numpy().tolist()
    assert prod[1] == [20.0, 40.0, 60.0], (
        f"a * b: row 1 is 2 * [10, 20, 30] = [20, 40, 60], got {prod[1]}: * is element-wise, "
        f"not a matrix product")
    quot = (b / 10).numpy().tolist()
    assert quot == [1.0, 2.0, 3.0], (
        f"[10, 20, 30] / 10 is [1, 2, 3], got {quot}: a Python number divides every element")
    twice = 2 * b
    assert twice.dtype == np.float32, (
        f"2 * a float32 tensor stays float32, got {twice.dtype}: a Python number must not "
        f"double the memory and halve the speed of everything after it")
    neg = (-a).numpy().tolist()
    assert neg == [[-1.0], [-2.0]], f"-[[1], [2]] is [[-1], [-2]], got {neg}"
    rsub = (1 - b).numpy().tolist()
    assert rsub == [-9.0, -19.0, -29.0], (
        f"1 - [10, 20, 30] is [-9, -19, -29], got {rsub}: __rsub__ calls _sub with the "
        f"operands swapped, so 1 - x must not compute x - 1")

# %%
def test_type_promotion(Tensor, result_type, np):
    cases = [
        ((Tensor([1, 2]), 0.5), np.float32, "int tensor * 0.5 is float32 (the default float)"),
        ((Tensor([1.0]), np.float64(2.0)), np.float32,
         "a NumPy number does not widen float32 (numbers are weak)"),
        ((Tensor([1.0]), Tensor(2.0).double()), np.float32,
         "a float64 0-d tensor does not widen a float32 tensor with dimensions"),
        ((Tensor([1.0]), Tensor([2.0]).double()), np.float64,
         "float32 and float64 tensors with dimensions give float64"),
        ((Tensor(np.array([1], np.int8)), 300), np.int8, "int8 + 300 stays int8 (it wraps)"),
        ((Tensor([True]), 2), np.int64, "bool + an int number is int64"),
        ((Tensor([1, 2]), Tensor([1.0])), np.float32, "int64 and float32 tensors give float32"),
    ]
    for args, want, why in cases:
        got = result_type(*args)
        assert got == want, f"result_type gave {got}, expected {np.dtype(want)}: {why}"
    half = Tensor([1, 2]) * 0.5
    assert half.dtype == np.float32 and half.numpy().tolist() == [0.5, 1.0], (
        f"Tensor([1, 2]) * 0.5 is float32 [0.5, 1.0], got {half.dtype} {half.numpy().tolist()}")
    roots = Tensor([4, 9]) ** 0.5
    assert roots.dtype == np.float32 and roots.numpy().tolist() == [2.0, 3.0], (
        f"Tensor([4, 9]) ** 0.5 is float32 [2.0, 3.0], got {roots.dtype} "
        f"{roots.numpy().tolist()}: an int tensor to a float power must be computed in float")
    ratio = Tensor([1, 2]) / Tensor([2, 4])
    assert ratio.dtype == np.float32 and ratio.numpy().tolist() == [0.5, 0.5], (
        f"int / int is float32 [0.5, 0.5] in PyTorch, got {ratio.dtype} {ratio.numpy().tolist()}")

# %%
def test_elementwise_math(Tensor, np):
    x = Tensor([0.0, 1.0, 4.0])
    sq = (x ** 2).numpy()
    assert np.allclose(sq, [0.0, 1.0, 16.0]), (
        f"[0, 1, 4] ** 2 is [0, 1, 16], got {sq.tolist()}")
    root = x.sqrt().numpy()
    assert np.allclose(root, [0.0, 1.0, 2.0]), f"sqrt([0, 1, 4]) is [0, 1, 2], got {root.tolist()}"
    back = x.exp().log().numpy()
    assert np.allclose(back, x.numpy(), atol=1e-6), (
        f"log(exp(x)) must give x = [0, 1, 4] back, got {back.tolist()}: exp and log are "
        f"inverses (check that each calls the right NumPy function)")
    clamped = Tensor([-2.0, 0.5]).clamp(min=0.0).numpy()
    assert np.allclose(clamped, [0.0, 0.5]), (
        f"[-2, 0.5].clamp(min=0) is [0, 0.5], got {clamped.tolist()}: values below min become "
        f"min, the rest stay")
    mag = Tensor([-3, 2]).abs()
    assert mag.numpy().tolist() == [3, 2] and mag.dtype == np.int64, (
        f"abs of int64 [-3, 2] is int64 [3, 2], got {mag.dtype} {mag.numpy().tolist()}")
    for name in ("exp", "log", "sqrt", "tanh"):
        got = getattr(Tensor([1, 2]), name)()
        assert got.dtype == np.float32, (
            f"{name} of an int64 tensor must be float32 as in PyTorch, got {got.dtype}: start "
            f"from _float_data(self) (NumPy alone would give float64)")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 4. Matrix multiplication
#
# A linear layer computes `x @ W.T + b`: most of a neural network's arithmetic is matrix
# multiplication. Unlike `+` and `*`, `@` does **not** promote: a float64 batch times float32
# weights is an error in PyTorch ("expected both ... to have the same dtype"), because the
# silent alternative doubles the cost of every layer after it. Multiplying `(n, k)` by `(k, m)` takes `n·k·m` multiply-adds, i.e.
# `2·n·k·m` FLOPs, and produces `n·m` outputs. With a batch dimension, PyTorch multiplies the
# last two dimensions and broadcasts the rest:
#
# ```
#   (B, n, k) @ (k, m)    -> (B, n, m)      every batch item times the same matrix
#   (B, n, k) @ (B, k, m) -> (B, n, m)      batch item b times matrix b (attention, module 12)
#   (k,) @ (k, m)         -> (m,)           a vector is treated as a row, then squeezed
# ```
#
# The error message matters: when shapes do not fit, say which shapes and which sizes, as
# PyTorch does — it is the error students meet most often in this course.

# %% [markdown]
# Your code for this section: `_matmul`, which `x.matmul(y)` and `x @ y` call.

# %%
#| export
def _matmul(self: Tensor, other: Any) -> Tensor:
    """Matrix product with PyTorch's rules: 1-D vectors, 2-D matrices, batched N-D.

    For N-D inputs the last two dimensions are multiplied and the leading (batch)
    dimensions broadcast: ``(B, n, k) @ (k, m) -> (B, n, m)``.

    APPROACH:
        1. ``other = _as_tensor(other)`` (given); 0-d inputs are a ``ValueError`` (use
           ``*``).
        2. Unlike ``+`` and ``*``, ``@`` does not promote: if the two dtypes differ,
           raise ``RuntimeError`` naming both (PyTorch: "expected both ... to have the same
           dtype"). A float64 input to a float32 layer is a bug to report, not to hide.
        3. Check the inner sizes agree: the last dim of ``self`` and the second-to-last
           of ``other`` (or its only dim when 1-D). If not, raise ``ValueError`` naming
           both shapes, e.g. ``matmul: shapes (2, 3) and (4, 5) cannot be multiplied
           (3 != 4)``: each shape as Python prints the tuple (``(2, 3)``, a vector
           ``(4,)``).
        4. ``out = np.matmul(self.data, other.data)``: ``np.matmul`` implements exactly
           these rules (the line after the stub records ``out``).

    EXAMPLE:
        >>> a = Tensor(np.ones((8, 2, 3))); b = Tensor(np.ones((3, 5)))
        >>> (a @ b).shape
        (8, 2, 5)

    HINT: ``np.dot`` is not the same as ``np.matmul`` for 3-D inputs — it pairs every batch
    of ``a`` with every batch of ``b``. Use ``np.matmul``.
    """
    other = _as_tensor(other)
    # BEGIN SOLUTION NO PROMPT
    if self.ndim == 0 or other.ndim == 0:
        raise ValueError("matmul: both arguments need at least 1 dimension (use * for scalars)")
    if self.dtype != other.dtype:
        raise RuntimeError(f"matmul: expected both arguments to have the same dtype, but "
                           f"found {self.dtype} and {other.dtype}")
    k_self = self.shape[-1]
    k_other = other.shape[0] if other.ndim == 1 else other.shape[-2]
    if k_self != k_other:
        raise ValueError(f"matmul: shapes {self.shape} and {other.shape} cannot be "
                         f"multiplied ({k_self} != {k_other})")
    out = np.matmul(self.data, other.data)
    # END SOLUTION
    raise NotImplementedError("module 01: implement _matmul (see its docstring)")  # STUB
    return _result(np.asarray(out), "matmul", (self, other))


# %% [raw]
# # BEGIN QUESTION
# name: matmul
# points: 0

# %% [markdown]
# ### Check: matmul

# %% [raw]
# # BEGIN TESTS

# %%
def test_matmul(Tensor, np):
    a = Tensor([[1.0, 2.0], [3.0, 4.0]])
    b = Tensor([[5.0, 6.0], [7.0, 8.0]])
    got = (a @ b).numpy().tolist()
    assert got == [[19.0, 22.0], [43.0, 50.0]], (
        f"[[1, 2], [3, 4]] @ [[5, 6], [7, 8]] is [[19, 22], [43, 50]] (row times column), got "
        f"{got}: use np.matmul, not the element-wise *")
    batch = Tensor(np.ones((8, 2, 3), dtype=np.float32))
    w = Tensor(np.ones((3, 5), dtype=np.float32))
    out = batch @ w
    assert out.shape == (8, 2, 5), (
        f"(8, 2, 3) @ (3, 5) multiplies each of the 8 matrices by w: (8, 2, 5), got shape "
        f"{out.shape}: np.dot pairs every batch with every batch; np.matmul broadcasts")
    try:
        wrong = Tensor(np.ones((2, 3))) @ Tensor(np.ones((4, 5)))
    except ValueError as err:
        assert "(2, 3)" in str(err) and "(4, 5)" in str(err), (
            f"the error must name both shapes (2, 3) and (4, 5), it says {str(err)!r}: this is "
            f"the error students meet most often, and the shapes are what they need to fix it")
    else:
        raise AssertionError(f"(2, 3) @ (4, 5) must raise ValueError (3 != 4), but returned "
                             f"shape {wrong.shape}")
    try:
        mixed = Tensor(np.ones((2, 3))) @ Tensor(np.ones((3, 4), dtype=np.float32))
    except RuntimeError:
        pass
    else:
        raise AssertionError(f"float64 @ float32 must raise RuntimeError (matmul does not "
                             f"promote in PyTorch: a float64 input to float32 weights is a bug), "
                             f"but returned a {mixed.dtype} tensor of shape {mixed.shape}")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 5. Reductions: `sum`, `mean`, `max`
#
# A reduction collapses one or more dimensions. `dim` says which; `keepdim=True` leaves the
# reduced dimension in place with size 1 so the result broadcasts back against the input —
# that is how you centre features (`x - x.mean(dim=0, keepdim=True)`) and how a numerically
# stable softmax subtracts each row's maximum (module 02).
#
# ```
#   x (2, 3)          x.sum(dim=0) (3,)     x.sum(dim=1) (2,)    x.sum(dim=1, keepdim=True) (2, 1)
#   [[1 2 3]          [5 7 9]               [ 6 15]              [[ 6]
#    [4 5 6]]                                                     [15]]
# ```
#
# `max` follows PyTorch: with no `dim` it returns the largest element; with a `dim` it returns
# a pair `(values, indices)`.
#
# Three PyTorch conventions differ from NumPy's: `dim=()` means *every* dimension (NumPy's
# `axis=()` reduces nothing); a 0-d tensor accepts `dim=0` or `dim=-1` (there is one element,
# so the reduction is the identity); and the dtype of a reduction is chosen, not inherited.
# `sum` of integers or bools gives **int64** (`mask.sum()` counts, and a uint8 image does not
# overflow), while `mean` of integers is an *error* — call `.float()` first, which is why
# accuracy is written `(pred == y).float().mean()`.

# %% [markdown]
# Your code for this section: `_sum`, `_mean` and `_max`, which `x.sum(...)`,
# `x.mean(...)` and `x.max(...)` call.

# %%
#| export
def _sum(self: Tensor, dim: int | tuple[int, ...] | None = None, keepdim: bool = False) -> Tensor:
    """Sum over ``dim`` (an int, a tuple, or None for every dimension).

    ``keepdim=True`` keeps the reduced dimensions with size 1, so the result still
    broadcasts against the input: ``x - x.mean(dim=1, keepdim=True)``.

    APPROACH:
        1. ``axis = _dim_arg(dim, self.ndim)`` (given helper): it turns lists into tuples,
           checks the dims, and gives None for "everything" — also for ``dim=()`` and for
           a 0-d tensor, where PyTorch reduces over all dimensions (NumPy's ``axis=()``
           would reduce over none).
        2. ``out = np.sum(...)`` with ``axis=axis`` and ``keepdims=keepdim``. Integer and
           bool tensors sum to int64, as in PyTorch (``mask.sum()`` counts): pass
           ``dtype=np.int64`` for them (``self.dtype.kind in "biu"``), ``None`` otherwise.
        3. The given ``return`` records the op.

    EXAMPLE:
        >>> x = Tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> x.sum().item(), x.sum(dim=0).tolist(), x.sum(dim=1, keepdim=True).shape
        (10.0, [4.0, 6.0], (2, 1))
        >>> Tensor([True, True, False]).sum().item(), x.sum(dim=()).item()
        (2, 10.0)

    HINT: a full reduction gives a NumPy scalar; the given ``np.asarray`` makes it a 0-d
    array so the result is still a Tensor with shape ``()``. Without the int64 rule a
    uint8 image would sum to NumPy's uint64.
    """
    # BEGIN SOLUTION NO PROMPT
    axis = _dim_arg(dim, self.ndim)
    dtype = np.int64 if self.dtype.kind in "biu" else None
    out = np.sum(self.data, axis=axis, keepdims=keepdim, dtype=dtype)
    # END SOLUTION
    raise NotImplementedError("module 01: implement _sum (see its docstring)")  # STUB
    return _result(np.asarray(out), "sum", (self,), dim=axis, keepdim=keepdim)


def _mean(self: Tensor, dim: int | tuple[int, ...] | None = None, keepdim: bool = False) -> Tensor:
    """Mean over ``dim``; same ``dim``/``keepdim`` rules as ``sum``.

    APPROACH (the line after the stub records ``out`` and ``axis``):
        1. The mean of integers is not an integer, and PyTorch will not guess a dtype:
           for a non-float tensor (``self.dtype.kind != "f"``) raise ``RuntimeError``
           saying to call ``.float()`` first.
        2. ``axis = _dim_arg(dim, self.ndim)`` as in ``sum``.
        3. ``out = np.mean(self.data, axis=axis, keepdims=keepdim)`` (float32 data gives a
           float32 mean).

    EXAMPLE:
        >>> Tensor([[1.0, 2.0], [3.0, 4.0]]).mean(dim=0).tolist()
        [2.0, 3.0]
        >>> Tensor([1, 2]).mean()
        Traceback (most recent call last):
        RuntimeError: mean(): could not infer output dtype...

    HINT: accuracy is ``(pred == y).float().mean()``: the comparison gives bools, so the
    ``.float()`` is needed here exactly as in PyTorch.
    """
    # BEGIN SOLUTION NO PROMPT
    if self.dtype.kind != "f":
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be a "
                           f"floating point dtype, got {self.dtype}: call .float() first")
    axis = _dim_arg(dim, self.ndim)
    out = np.mean(self.data, axis=axis, keepdims=keepdim)
    # END SOLUTION
    raise NotImplementedError("module 01: implement _mean (see its docstring)")  # STUB
    return _result(np.asarray(out), "mean", (self,), dim=axis, keepdim=keepdim)


def _max(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor | MaxResult:
    """Largest element. Like PyTorch:

    * ``x.max()`` returns a 0-d tensor with the largest element;
    * ``x.max(dim)`` returns ``MaxResult(values, indices)`` — use ``.values`` for the
      maxima and ``.indices`` for where they are.

    APPROACH:
        1. ``dim is None``: ``np.max`` of everything, recorded with ``dim=None``.
        2. ``axis = _dim_arg(dim, self.ndim)``. A 0-d tensor has nothing to reduce
           (``axis`` is None): its maximum is itself, at index 0 — record it as in step 1
           and return ``MaxResult(values, Tensor(np.zeros((), dtype=np.int64)))``.
        3. Otherwise ``np.max`` and ``np.argmax`` along ``axis`` (both with ``keepdims``);
           record the values with the ``indices`` saved (module 05 sends the gradient
           there) and return ``MaxResult(values, Tensor(indices))``.

    EXAMPLE:
        >>> x = Tensor([[1.0, 5.0], [7.0, 2.0]])
        >>> x.max().item(), x.max(dim=1).values.tolist(), x.max(dim=1).indices.tolist()
        (7.0, [5.0, 7.0], [1, 0])

    HINT: indices are int64, like PyTorch's; ``np.argmax`` gives the platform int. A NaN
    is the maximum of anything it is in (``np.max`` and ``np.argmax`` agree on that).
    """
    # BEGIN SOLUTION NO PROMPT
    if dim is None:
        out = np.asarray(np.max(self.data))
        return _result(out, "max", (self,), dim=None, keepdim=False)
    axis = _dim_arg(dim, self.ndim)
    if axis is None:
        out = _result(np.asarray(np.max(self.data)), "max", (self,), dim=None,
                      keepdim=False)
        return MaxResult(out, Tensor(np.zeros((), dtype=np.int64)))
    values = np.max(self.data, axis=axis, keepdims=keepdim)
    indices = np.argmax(self.data, axis=axis, keepdims=keepdim).astype(np.int64)
    vals = _result(np.asarray(values), "max", (self,), dim=axis, keepdim=keepdim,
                   indices=indices)
    return MaxResult(vals, Tensor(indices))
    # END SOLUTION
    raise NotImplementedError("module 01: implement _max (see its docstring)")  # STUB


# %% [raw]
# # BEGIN QUESTION
# name: reductions
# points: 0

# %% [markdown]
# ### Check: reductions

# %% [raw]
# # BEGIN TESTS

# %%
def test_reductions(Tensor, np):
    x = Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    total = x.sum()
    assert total.shape == () and total.item() == 21.0, (
        f"sum() of [[1, 2, 3], [4, 5, 6]] is the 0-d tensor 21.0, got shape {total.shape}, "
        f"values {total.numpy().tolist()}: with no dim, reduce over every element")
    cols = x.sum(dim=0).numpy().tolist()
    assert cols == [5.0, 7.0, 9.0], (
        f"sum(dim=0) adds down the columns: [5, 7, 9], got {cols}: dim names the dimension "
        f"that disappears")
    kept = x.sum(dim=1, keepdim=True)
    assert kept.shape == (2, 1), (
        f"sum(dim=1, keepdim=True) keeps the summed dimension with size 1: (2, 1), got "
        f"{kept.shape}: x / x.sum(dim=1, keepdim=True) only broadcasts with it")
    means = x.mean(dim=1).numpy().tolist()
    assert means == [2.0, 5.0], (
        f"mean(dim=1) averages each row: [2, 5], got {means}: losses and normalisation "
        f"average over the right dimension")
    top = x.max()
    assert top.item() == 6.0, (
        f"max() is the largest element, 6.0, got {top.numpy().tolist()}")
    m = x.max(dim=1)
    vals, idx = m.values.numpy().tolist(), m.indices.numpy().tolist()
    assert vals == [3.0, 6.0], (
        f"max(dim=1).values are the row maxima [3, 6], got {vals}: return "
        f"MaxResult(values, indices), values first")
    assert idx == [2, 2] and m.indices.dtype == np.int64, (
        f"max(dim=1).indices say where the maxima are: int64 [2, 2], got {m.indices.dtype} "
        f"{idx}: argmax along the same dim gives the predicted class")
    count = Tensor([True, True, False]).sum()
    assert count.dtype == np.int64 and count.item() == 2, (
        f"the sum of a bool mask counts its True values as int64 (2), got {count.dtype} "
        f"{count.item()}")
    every = x.sum(dim=())
    assert every.item() == 21.0, (
        f"sum(dim=()) reduces every dimension in PyTorch (21.0), got {every.numpy()}")
    try:
        bad = Tensor([1, 2]).mean()
    except RuntimeError:
        pass
    else:
        raise AssertionError(f"the mean of an int tensor must raise RuntimeError as in PyTorch "
                             f"(call .float() first), but returned {bad.dtype} "
                             f"{bad.numpy().tolist()}")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 6. Systems view: what PyTorch does differently
#
# * **Storage sharing.** A PyTorch tensor is a `(storage, offset, shape, strides)` record,
#   exactly what you built on top of NumPy. `x.T`, `x[:, 1:]` and `x.view(...)` allocate a
#   small header, never a new buffer.
# * **Memory is the budget.** Training keeps the activations of every layer for the backward
#   pass (module 05); the `memory_footprint` you wrote is the unit of every memory estimate in
#   modules 14–19.
# * **Fresh memory costs a trap.** The first write to each 4 KiB page of a new allocation traps
#   into the kernel (a *minor page fault*), which hands over a zeroed page. By default glibc's
#   `malloc` gives large freed blocks back to the kernel, so a training loop that allocates the
#   same big arrays every step can pay those traps again every step. PyTorch's GPU allocator
#   caches freed blocks for this reason, and its CPU tuning guide suggests an allocator that
#   does; the provided `_keep_freed_memory` at the top of `tensor.py` asks glibc to keep up to
#   64 MiB for reuse. `resource.getrusage(resource.RUSAGE_SELF).ru_minflt` counts the faults.
# * **Contiguity and speed.** Matrix kernels want contiguous rows. PyTorch's `.contiguous()`
#   copies when needed; profilers (module 14) show these hidden copies.
# * **Cost of matmul.** `(n, k) @ (k, m)` reads `n·k + k·m` numbers and does `2·n·k·m` FLOPs.
#   For square matrices the ratio of arithmetic to memory traffic grows with `n`: big matrix
#   products are compute-bound, element-wise ops memory-bound (module 18).
#
# ### Measured: strides decide speed (cache locality)
#
# Memory reaches the CPU in **cache lines** of 64 bytes (16 float32 numbers). Walking a row of a
# row-major array uses every number of every line fetched; walking a column uses one number per
# line (the next one is `strides[0]` bytes away) and throws the other 15 away. The cell below
# sums a 2048 × 2048 float32 array (16 MiB, larger than most caches) row by row and column by
# column: the same additions, only the order of memory accesses differs.

# %%
import time

import numpy as np


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


grid = np.random.default_rng(0).standard_normal((2048, 2048)).astype(np.float32)  # 16 MiB


def by_rows():  # each row: 2048 neighbouring floats, 8 KiB in a row
    return sum(float(grid[i, :].sum()) for i in range(grid.shape[0]))


def by_columns():  # each column: 2048 floats 8 KiB apart, one per cache line
    return sum(float(grid[:, j].sum()) for j in range(grid.shape[1]))


rows, cols = median_cpu_ms(by_rows), median_cpu_ms(by_columns)
print(f"strides {grid.strides}: rows {rows:.1f} ms, columns {cols:.1f} ms "
      f"({cols / rows:.1f}x slower), the same 4.2 million additions")
# Expected: columns several times slower than rows (between 2x and 20x, depending on the
# machine's caches: 4x-15x on the course's 2-core server, the least when nothing else runs,
# more when other programs share its memory: each column step misses the cache, each row step
# is prefetched). This is why kernels want contiguous inputs, and why `.contiguous()` before a
# loop over the last dimension can pay for its copy.

# %% [markdown]
# ## 7. ML systems thinking (graded by hand)
#
# Answer each question in a few sentences, with numbers where you can.

# %% [raw]
# # BEGIN QUESTION
# name: written_memory
# manual: true
# points: 5

# %% [markdown]
# **Q1 · Memory.** A training step on ResNet-50 keeps activations for a batch of 32 images of
# 3×224×224. You just computed the input alone costs about 19 MB in float32. If the network's
# activations total roughly 100× the input, how much memory do activations need at batch 32 and
# at batch 256? What would you change first if the GPU has 16 GB?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# Input: 32 × 3 × 224 × 224 × 4 B ≈ 19.3 MB; activations ≈ 1.9 GB at batch 32 and
# ≈ 15.4 GB at batch 256 (memory grows linearly with the batch), which with weights, gradients
# and optimizer state does not fit in 16 GB. First options: a smaller batch (with gradient
# accumulation to keep the effective batch), mixed precision (float16/bfloat16 halves
# activation memory), or activation checkpointing (recompute instead of store).

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_views
# manual: true
# points: 5

# %% [markdown]
# **Q2 · Views.** `x.transpose(0, 1)` costs the same for a 10×10 and a 10,000×10,000 tensor.
# Why? Name one operation that then *does* pay for the transpose, and explain what it pays.

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# A transpose only swaps shape and strides in the tensor's header; no element is read or
# written, so it is O(1). The cost appears when something needs contiguous memory: `view`
# refuses, `.contiguous()`/`reshape` copy all n·m elements (800 MB for 10⁴×10⁴ float64), and
# kernels that walk rows touch memory with a large stride, so every cache line fetched is
# mostly wasted.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_broadcast
# manual: true
# points: 5

# %% [markdown]
# **Q3 · Broadcasting.** Adding a bias of shape `(512,)` to activations of shape
# `(64, 128, 512)`: how many bytes would an explicit copy of the bias to the full shape take in
# float32, and how many does broadcasting use? Give one bug that broadcasting can hide.

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# An explicit copy is 64·128·512·4 B ≈ 16.8 MB; broadcasting reads the 2 KB bias with stride 0
# along the first two dimensions, so no extra memory. Hidden bug: shapes that are accidentally
# compatible, e.g. predictions `(N, 1)` minus targets `(N,)` broadcast to `(N, N)` — the loss
# silently averages N² wrong differences instead of raising an error.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## Summary
#
# You built the tensor every later module uses: storage + shape + strides, views that cost
# nothing, broadcasting arithmetic, batched matmul with clear errors and PyTorch-style
# reductions — and you can now price a tensor in bytes before allocating it. Export your work
# with `python export.py 01`, then move on to module 02, activations.
