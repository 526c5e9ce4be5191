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
# 3. predict the result shape of **broadcasting** arithmetic, and why it saves memory;
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
#   Deep learning defaults to `float32`: half the memory and twice the arithmetic throughput of
#   `float64`, and precise enough for gradients. PyTorch makes `torch.tensor([1.0, 2.0])` a
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

from collections import namedtuple
from typing import Any

import numpy as np

# ----------------------------------------------------------------------------- provided
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

    __slots__ = ("op", "inputs", "saved")

    def __init__(self, op: Any, inputs: tuple[Tensor, ...], saved: dict[str, Any]) -> None:
        self.op = op
        self.inputs = inputs
        self.saved = saved

    def __repr__(self) -> str:
        name = self.op if isinstance(self.op, str) else self.op.__name__
        return f"<Node {name}>"


def _result(data: np.ndarray, op: Any, inputs: tuple[Tensor, ...], **saved: Any) -> Tensor:
    """Wrap ``data`` in a Tensor and, when gradients are wanted, record how it was made."""
    out = Tensor(data)
    if _GRAD_ENABLED[0] and any(t.requires_grad for t in inputs):
        out.requires_grad = True
        out._node = Node(op, inputs, saved)
    return out


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
        tensors = tuple(x if isinstance(x, Tensor) else Tensor(x) for x in inputs)
        ctx = Context()
        data = cls.forward(ctx, *(t.data for t in tensors), **kwargs)
        return _result(np.asarray(data), cls, tensors, ctx=ctx)


MaxResult = namedtuple("MaxResult", ["values", "indices"])

# NOTE: Python floats become float32, as in PyTorch; NumPy arrays keep their dtype.
_DEFAULT_FLOAT = np.float32


def _to_array(data: Any, dtype: Any = None) -> np.ndarray:
    if isinstance(data, Tensor):
        data = data.data
    if isinstance(data, np.ndarray):
        arr = data
    elif isinstance(data, np.generic):  # a NumPy scalar (e.g. a 0-d result) keeps its dtype
        arr = np.asarray(data)
    else:
        arr = np.asarray(data)
        if arr.dtype == np.float64:
            arr = arr.astype(_DEFAULT_FLOAT)
    if dtype is not None:
        arr = arr.astype(dtype, copy=False)
    return arr


# %% [markdown]
# Now the class itself. `__init__`, `__repr__` and a few conversions are given; you write the
# properties that describe a tensor.

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
        self.grad: Tensor | None = None
        self._node: Node | None = None

    # ------------------------------------------------------------------ provided helpers
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

    def tolist(self) -> Any:
        return self.data.tolist()

    def detach(self) -> Tensor:
        """A tensor sharing this one's data, cut off from the graph."""
        return Tensor(self.data)

    def requires_grad_(self, flag: bool = True) -> Tensor:
        self.requires_grad = flag
        return self

    def float(self) -> Tensor:
        return Tensor(self.data.astype(np.float32))

    def double(self) -> Tensor:
        return Tensor(self.data.astype(np.float64))

    def long(self) -> Tensor:
        return Tensor(self.data.astype(np.int64))

    def argmax(self, dim: int | None = None, keepdim: bool = False) -> Tensor:
        idx = np.argmax(self.data, axis=dim, keepdims=keepdim if dim is not None else False)
        return Tensor(np.asarray(idx, dtype=np.int64))

    def contiguous(self) -> Tensor:
        """A C-contiguous copy when the layout is not contiguous, else ``self``."""
        if self.is_contiguous():
            return self
        return _result(np.ascontiguousarray(self.data), "contiguous", (self,))

    def backward(self, gradient: Tensor | None = None) -> None:
        """Compute gradients of this tensor w.r.t. graph leaves (implemented in module 05)."""
        # The one dependency on a later module: like torch.Tensor.backward delegating to
        # torch.autograd.backward, the engine lives in autograd.py.
        from .autograd import backward as _engine_backward

        _engine_backward(self, gradient)

    # comparisons make boolean tensors (no gradient), handy for masks and accuracy
    def __eq__(self, other: object) -> Tensor:  # type: ignore[override]
        return Tensor(self.data == _to_array(other))

    def __ne__(self, other: object) -> Tensor:  # type: ignore[override]
        return Tensor(self.data != _to_array(other))

    def __lt__(self, other: Any) -> Tensor:
        return Tensor(self.data < _to_array(other))

    def __le__(self, other: Any) -> Tensor:
        return Tensor(self.data <= _to_array(other))

    def __gt__(self, other: Any) -> Tensor:
        return Tensor(self.data > _to_array(other))

    def __ge__(self, other: Any) -> Tensor:
        return Tensor(self.data >= _to_array(other))

    # ------------------------------------------------------------------ your code: basics
    @property
    def shape(self) -> tuple[int, ...]:
        """The size of each dimension, as a tuple of ints.

        APPROACH: the NumPy array ``self.data`` stores the shape; return it as a tuple.

        EXAMPLE:
            >>> Tensor([[1, 2, 3], [4, 5, 6]]).shape
            (2, 3)

        HINT: NumPy arrays have a ``.shape`` already; return it as a tuple.
        """
        # BEGIN SOLUTION NO PROMPT
        return tuple(self.data.shape)
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

        APPROACH: count the entries of ``self.shape``.

        EXAMPLE:
            >>> Tensor(np.zeros((2, 3, 4))).ndim, Tensor(7.0).ndim
            (3, 0)

        HINT: a scalar tensor has shape ``()`` and therefore 0 dimensions, not 1.
        """
        # BEGIN SOLUTION NO PROMPT
        return len(self.shape)
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

    # ------------------------------------------------------------------ your code: layout
    def stride(self, dim: int | None = None) -> tuple[int, ...] | int:
        """Elements to skip in storage to move one step along each dimension.

        PyTorch counts strides in *elements*; NumPy's ``.strides`` counts *bytes*.

        APPROACH: divide each of ``self.data.strides`` by ``self.data.itemsize``.
        With ``dim`` given, return only that dimension's stride.

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
        raise NotImplementedError("module 01: implement Tensor.stride (see its docstring)")  # STUB

    def is_contiguous(self) -> bool:
        """True when elements sit in storage in row-major order with no gaps.

        APPROACH:
            1. Walk the dimensions from last to first, keeping the stride a row-major tensor of
               this shape would have (it starts at 1 and is multiplied by each size).
            2. Compare with ``self.stride()``. Dimensions of size 1 can have any stride (you
               never step along them), so skip them.

        EXAMPLE:
            >>> x = Tensor(np.zeros((2, 3)))
            >>> x.is_contiguous(), x.transpose(0, 1).is_contiguous()
            (True, False)

        HINT: a ``(4, 1)`` column transposed to ``(1, 4)`` is still contiguous — that is the
        size-1 rule at work.
        """
        # BEGIN SOLUTION NO PROMPT
        expected = 1
        strides = self.stride()
        for size, stride in zip(reversed(self.shape), reversed(strides), strict=True):
            if size != 1 and stride != expected:
                return False
            expected *= size
        return True
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 01: implement Tensor.is_contiguous (see its docstring)")  # STUB

    def reshape(self, *shape: Any) -> Tensor:
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

        HINT: the helpers ``_shape_arg`` and ``_check_reshape`` below do steps 1 and 2.
        """
        # BEGIN SOLUTION NO PROMPT
        shape = _shape_arg(shape)
        _check_reshape(shape, self.numel())
        return _result(self.data.reshape(shape), "reshape", (self,))
        # END SOLUTION
        raise NotImplementedError("module 01: implement Tensor.reshape (see its docstring)")  # STUB

    def view(self, *shape: Any) -> Tensor:
        """Like ``reshape`` but guaranteed never to copy: only for contiguous tensors.

        APPROACH: if ``not self.is_contiguous()`` raise ``RuntimeError`` telling the user to
        call ``.contiguous()`` or ``.reshape()``; otherwise do what ``reshape`` does.

        EXAMPLE:
            >>> Tensor(np.zeros((2, 3))).transpose(0, 1).view(6)
            Traceback (most recent call last):
            RuntimeError: view size is not compatible with input tensor's size and stride ...

        HINT: reuse ``self.reshape(*shape)`` once contiguity is checked.
        """
        # BEGIN SOLUTION NO PROMPT
        if not self.is_contiguous():
            raise RuntimeError(
                "view size is not compatible with input tensor's size and stride "
                "(the tensor is not contiguous); use .reshape(...) or .contiguous().view(...)")
        return self.reshape(*shape)
        # END SOLUTION
        raise NotImplementedError("module 01: implement Tensor.view (see its docstring)")  # STUB

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        """Swap two dimensions *without copying*: only the shape and strides change.

        APPROACH: ``np.swapaxes(self.data, dim0, dim1)`` returns a view; wrap it with
        ``_result(..., "transpose", (self,), dim0=dim0, dim1=dim1)``.

        EXAMPLE:
            >>> Tensor(np.zeros((2, 3, 4))).transpose(0, 2).shape
            (4, 3, 2)

        HINT: check ``np.shares_memory(x.data, x.transpose(0, 1).data)`` — it should be True.
        """
        # BEGIN SOLUTION NO PROMPT
        return _result(np.swapaxes(self.data, dim0, dim1), "transpose", (self,),
                       dim0=dim0, dim1=dim1)
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 01: implement Tensor.transpose (see its docstring)")  # STUB

    def permute(self, *dims: Any) -> Tensor:
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
        raise NotImplementedError("module 01: implement Tensor.permute (see its docstring)")  # STUB

    @property
    def T(self) -> Tensor:  # noqa: N802 - PyTorch's name
        """All dimensions reversed (the matrix transpose for 2-D tensors)."""
        return self.permute(*reversed(range(self.ndim)))

    def __getitem__(self, index: Any) -> Tensor:
        """Indexing and slicing with NumPy/PyTorch rules: ``x[0]``, ``x[:, 1:3]``, ``x[idx]``.

        APPROACH:
            1. If ``index`` is a Tensor (or contains Tensors in a tuple), use their ``.data``.
            2. ``self.data[index]`` — basic slices give views, integer arrays give copies.
            3. Return ``_result(np.asarray(out), "getitem", (self,), index=index)``.

        EXAMPLE:
            >>> x = Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
            >>> x[1].tolist(), x[:, 1:].tolist(), x[Tensor(np.array([1, 1]))].shape
            ([4.0, 5.0, 6.0], [[2.0, 3.0], [5.0, 6.0]], (2, 3))

        HINT: ``_index_arg`` unwraps Tensors for you; keep ``index`` in the record, module 05
        needs it to route gradients back to the selected elements.
        """
        # BEGIN SOLUTION NO PROMPT
        index = _index_arg(index)
        return _result(np.asarray(self.data[index]), "getitem", (self,), index=index)
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 01: implement Tensor.__getitem__ (see its docstring)")  # STUB

    # ------------------------------------------------------------------ your code: arithmetic
    def __add__(self, other: Any) -> Tensor:
        """Element-wise ``self + other`` with broadcasting; ``other`` may be a number.

        APPROACH: ``other`` is already a Tensor (``_as_tensor`` wrapped any number). Replace
        the ``raise`` line with ``out = ...``, adding the two ``.data`` arrays — NumPy
        broadcasts for you. The ``return`` below it is given: it records the operation so
        module 05 can compute gradients. The other operators follow the same pattern.

        EXAMPLE:
            >>> (Tensor([[1.0], [2.0]]) + Tensor([10.0, 20.0, 30.0])).shape
            (2, 3)

        HINT: do not loop over elements or call ``np.broadcast_to``: ``+`` on the arrays
        broadcasts, and does it without copying.
        """
        other = _as_tensor(other, self)
        # BEGIN SOLUTION NO PROMPT
        out = self.data + other.data
        # END SOLUTION
        raise NotImplementedError("module 01: implement Tensor.__add__ (see its docstring)")  # STUB
        return _result(out, "add", (self, other))

    def __sub__(self, other: Any) -> Tensor:
        """Element-wise ``self - other`` with broadcasting.

        APPROACH: as in ``__add__``: ``out = ...`` from the two ``.data`` arrays.

        EXAMPLE:
            >>> (Tensor([5.0, 7.0]) - 1).tolist()
            [4.0, 6.0]

        HINT: the order matters: ``self`` minus ``other``; ``1 - t`` goes through
        ``__rsub__`` (given), which calls this with the operands swapped.
        """
        other = _as_tensor(other, self)
        # BEGIN SOLUTION NO PROMPT
        out = self.data - other.data
        # END SOLUTION
        raise NotImplementedError("module 01: implement Tensor.__sub__ (see its docstring)")  # STUB
        return _result(out, "sub", (self, other))

    def __mul__(self, other: Any) -> Tensor:
        """Element-wise ``self * other`` with broadcasting (not a matrix product: see ``@``).

        APPROACH: as in ``__add__``: ``out = ...`` from the two ``.data`` arrays.

        EXAMPLE:
            >>> (Tensor([[1.0], [2.0]]) * Tensor([3.0, 4.0])).tolist()
            [[3.0, 4.0], [6.0, 8.0]]

        HINT: ``*`` on arrays is element-wise; ``np.dot`` here would be a bug.
        """
        other = _as_tensor(other, self)
        # BEGIN SOLUTION NO PROMPT
        out = self.data * other.data
        # END SOLUTION
        raise NotImplementedError("module 01: implement Tensor.__mul__ (see its docstring)")  # STUB
        return _result(out, "mul", (self, other))

    def __truediv__(self, other: Any) -> Tensor:
        """Element-wise ``self / other`` with broadcasting (true division, float result).

        APPROACH:
            1. ``out = ...`` dividing the ``.data`` arrays.
            2. NumPy turns int / int into float64; PyTorch gives float32. If both inputs
               are not float64 but ``out`` is, cast ``out`` to float32.

        EXAMPLE:
            >>> (Tensor([1, 2]) / Tensor([2, 4])).dtype
            dtype('float32')

        HINT: ``astype(np.float32)`` returns a new array; assign it back to ``out``.
        """
        other = _as_tensor(other, self)
        # BEGIN SOLUTION NO PROMPT
        out = self.data / other.data
        if out.dtype == np.float64 and self.dtype != np.float64 and other.dtype != np.float64:
            out = out.astype(_DEFAULT_FLOAT)  # int / int gives float32, as in PyTorch
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 01: implement Tensor.__truediv__ (see its docstring)")  # STUB
        return _result(out, "div", (self, other))

    def __neg__(self) -> Tensor:
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
        raise NotImplementedError("module 01: implement Tensor.__neg__ (see its docstring)")  # STUB
        return _result(out, "neg", (self,))

    def __pow__(self, exponent: float) -> Tensor:
        """``self ** exponent`` for a Python number exponent (``x ** 2``, ``x ** 0.5``).

        APPROACH: ``out = ...`` with ``np.power``; keep the dtype (cast the exponent with
        ``self.data.dtype.type(exponent)`` so float32 stays float32).

        EXAMPLE:
            >>> (Tensor([1.0, 2.0, 3.0]) ** 2).tolist()
            [1.0, 4.0, 9.0]

        HINT (performance): NumPy's ``x ** 3`` on float32 is ~35x slower than ``x * x * x``.
        Special-case exponents 2 and 3 with products.
        """
        if isinstance(exponent, Tensor):
            raise TypeError("pow: the exponent must be a Python number")
        # BEGIN SOLUTION NO PROMPT
        if exponent == 2:
            out = self.data * self.data
        elif exponent == 3:
            out = self.data * self.data * self.data
        else:
            out = np.power(self.data, self.data.dtype.type(exponent))
        # END SOLUTION
        raise NotImplementedError("module 01: implement Tensor.__pow__ (see its docstring)")  # STUB
        return _result(out, "pow", (self,), exponent=exponent)

    # reflected operators: 2 + t, 2 - t, 2 * t, 2 / t (provided)
    def __radd__(self, other: Any) -> Tensor:
        return _as_tensor(other, self) + self

    def __rsub__(self, other: Any) -> Tensor:
        return _as_tensor(other, self) - self

    def __rmul__(self, other: Any) -> Tensor:
        return _as_tensor(other, self) * self

    def __rtruediv__(self, other: Any) -> Tensor:
        return _as_tensor(other, self) / self

    # ------------------------------------------------------------------ your code: math
    def exp(self) -> Tensor:
        """Element-wise ``e ** x``.

        APPROACH: ``out = np.exp(...)`` of the data. The exponential overflows float32 above
        ~88.7 (``inf``); module 02 shows how softmax avoids that.

        EXAMPLE:
            >>> Tensor([0.0, 1.0]).exp().tolist()  # doctest: +ELLIPSIS
            [1.0, 2.718...]

        HINT: keep the dtype: ``np.exp`` of float32 data is float32.
        """
        # BEGIN SOLUTION NO PROMPT
        out = np.exp(self.data)
        # END SOLUTION
        raise NotImplementedError("module 01: implement Tensor.exp (see its docstring)")  # STUB
        return _result(out, "exp", (self,))

    def log(self) -> Tensor:
        """Element-wise natural logarithm (``-inf`` at 0, NaN below 0, as in NumPy).

        APPROACH: ``out = np.log(...)`` of the data.

        EXAMPLE:
            >>> round(Tensor([np.e]).log().item(), 5)
            1.0

        HINT: do not clamp here: losses (module 04) decide how to guard ``log(0)``.
        """
        # BEGIN SOLUTION NO PROMPT
        out = np.log(self.data)
        # END SOLUTION
        raise NotImplementedError("module 01: implement Tensor.log (see its docstring)")  # STUB
        return _result(out, "log", (self,))

    def sqrt(self) -> Tensor:
        """Element-wise square root.

        APPROACH: ``out = np.sqrt(...)`` of the data.

        EXAMPLE:
            >>> Tensor([4.0, 9.0]).sqrt().tolist()
            [2.0, 3.0]

        HINT: negative inputs give NaN (with a NumPy warning), as in PyTorch.
        """
        # BEGIN SOLUTION NO PROMPT
        out = np.sqrt(self.data)
        # END SOLUTION
        raise NotImplementedError("module 01: implement Tensor.sqrt (see its docstring)")  # STUB
        return _result(out, "sqrt", (self,))

    def tanh(self) -> Tensor:
        """Element-wise hyperbolic tangent, squashing values into (-1, 1).

        APPROACH: ``out = np.tanh(...)`` of the data.

        EXAMPLE:
            >>> Tensor([0.0]).tanh().tolist()
            [0.0]

        HINT: ``np.tanh`` is stable for large inputs; the textbook
        ``(e^x - e^-x) / (e^x + e^-x)`` overflows to ``inf / inf``.
        """
        # BEGIN SOLUTION NO PROMPT
        out = np.tanh(self.data)
        # END SOLUTION
        raise NotImplementedError("module 01: implement Tensor.tanh (see its docstring)")  # STUB
        return _result(out, "tanh", (self,))

    def abs(self) -> Tensor:
        """Element-wise absolute value.

        APPROACH: ``out = np.abs(...)`` of the data.

        EXAMPLE:
            >>> Tensor([-2.0, 3.0]).abs().tolist()
            [2.0, 3.0]

        HINT: one NumPy call; module 05 decides the derivative at 0 (0, as in PyTorch).
        """
        # BEGIN SOLUTION NO PROMPT
        out = np.abs(self.data)
        # END SOLUTION
        raise NotImplementedError("module 01: implement Tensor.abs (see its docstring)")  # STUB
        return _result(out, "abs", (self,))

    def clamp(self, min: float | None = None, max: float | None = None) -> Tensor:  # noqa: A002
        """Limit every element to ``[min, max]``; either bound may be None (torch.clamp).

        APPROACH: ``out = np.clip(data, min, max)`` — NumPy accepts None for a missing bound.

        EXAMPLE:
            >>> Tensor([-2.0, 0.5, 3.0]).clamp(min=0.0, max=1.0).tolist()
            [0.0, 0.5, 1.0]

        HINT: ``clamp(min=0)`` is ReLU, which you will meet in module 02.
        """
        if min is None and max is None:
            raise ValueError("clamp: at least one of min and max must be given")
        # BEGIN SOLUTION NO PROMPT
        out = np.clip(self.data, min, max)
        # END SOLUTION
        raise NotImplementedError("module 01: implement Tensor.clamp (see its docstring)")  # STUB
        return _result(out, "clamp", (self,), min=min, max=max)

    # ------------------------------------------------------------------ your code: matmul
    def matmul(self, other: Any) -> Tensor:
        """Matrix product with PyTorch's rules: 1-D vectors, 2-D matrices, batched N-D.

        For N-D inputs the last two dimensions are multiplied and the leading (batch)
        dimensions broadcast: ``(B, n, k) @ (k, m) -> (B, n, m)``.

        APPROACH:
            1. ``other = _as_tensor(other, self)``; 0-d inputs are an error (use ``*``).
            2. Check the inner sizes agree: the last dim of ``self`` and the second-to-last
               of ``other`` (or its only dim when 1-D). If not, raise ``ValueError`` naming
               both shapes, e.g. ``matmul: shapes (2, 3) and (4, 5) cannot be multiplied
               (3 != 4)``.
            3. ``out = np.matmul(self.data, other.data)``: ``np.matmul`` implements exactly
               these rules (the line after the stub records ``out``).

        EXAMPLE:
            >>> a = Tensor(np.ones((8, 2, 3))); b = Tensor(np.ones((3, 5)))
            >>> (a @ b).shape
            (8, 2, 5)

        HINT: ``np.dot`` is not the same as ``np.matmul`` for 3-D inputs — it pairs every batch
        of ``a`` with every batch of ``b``. Use ``np.matmul``.
        """
        other = _as_tensor(other, self)
        # BEGIN SOLUTION NO PROMPT
        if self.ndim == 0 or other.ndim == 0:
            raise ValueError("matmul: both arguments need at least 1 dimension (use * for scalars)")
        k_self = self.shape[-1]
        k_other = other.shape[0] if other.ndim == 1 else other.shape[-2]
        if k_self != k_other:
            raise ValueError(f"matmul: shapes {self.shape} and {other.shape} cannot be "
                             f"multiplied ({k_self} != {k_other})")
        out = np.matmul(self.data, other.data)
        # END SOLUTION
        raise NotImplementedError("module 01: implement Tensor.matmul (see its docstring)")  # STUB
        return _result(np.asarray(out), "matmul", (self, other))

    def __matmul__(self, other: Any) -> Tensor:
        return self.matmul(other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return _as_tensor(other, self).matmul(self)

    # ------------------------------------------------------------------ your code: reductions
    def sum(self, dim: int | tuple[int, ...] | None = None, keepdim: bool = False) -> Tensor:
        """Sum over ``dim`` (an int, a tuple, or None for every dimension).

        ``keepdim=True`` keeps the reduced dimensions with size 1, so the result still
        broadcasts against the input: ``x - x.mean(dim=1, keepdim=True)``.

        APPROACH: ``axis = _dim_arg(dim)`` (lists become tuples); ``out = np.sum(...)`` with
        ``axis=axis`` and ``keepdims=keepdim``; the given ``return`` records the op.

        EXAMPLE:
            >>> x = Tensor([[1.0, 2.0], [3.0, 4.0]])
            >>> x.sum().item(), x.sum(dim=0).tolist(), x.sum(dim=1, keepdim=True).shape
            (10.0, [4.0, 6.0], (2, 1))

        HINT: a full reduction gives a NumPy scalar; the given ``np.asarray`` makes it a 0-d
        array so the result is still a Tensor with shape ``()``.
        """
        # BEGIN SOLUTION NO PROMPT
        axis = _dim_arg(dim)
        out = np.sum(self.data, axis=axis, keepdims=keepdim)
        # END SOLUTION
        raise NotImplementedError("module 01: implement Tensor.sum (see its docstring)")  # STUB
        return _result(np.asarray(out), "sum", (self,), dim=axis, keepdim=keepdim)

    def mean(self, dim: int | tuple[int, ...] | None = None, keepdim: bool = False) -> Tensor:
        """Mean over ``dim``; same ``dim``/``keepdim`` rules as ``sum``.

        APPROACH (the line after the stub records ``out`` and ``axis``):
            1. ``axis = _dim_arg(dim)`` as in ``sum``.
            2. ``data = self.data``, converted to float32 first if it is not a float.
            3. ``out = np.mean(data, axis=axis, keepdims=keepdim, dtype=data.dtype)`` (float32
               data gives a float32 mean).

        EXAMPLE:
            >>> Tensor([[1.0, 2.0], [3.0, 4.0]]).mean(dim=0).tolist()
            [2.0, 3.0]

        HINT: for an integer tensor PyTorch refuses ``mean``; we convert to float32 first.
        """
        # BEGIN SOLUTION NO PROMPT
        axis = _dim_arg(dim)
        data = self.data if self.dtype.kind == "f" else self.data.astype(_DEFAULT_FLOAT)
        out = np.mean(data, axis=axis, keepdims=keepdim, dtype=data.dtype)
        # END SOLUTION
        raise NotImplementedError("module 01: implement Tensor.mean (see its docstring)")  # STUB
        return _result(np.asarray(out), "mean", (self,), dim=axis, keepdim=keepdim)

    def max(self, dim: int | None = None, keepdim: bool = False) -> Tensor | MaxResult:
        """Largest element. Like PyTorch:

        * ``x.max()`` returns a 0-d tensor with the largest element;
        * ``x.max(dim)`` returns ``MaxResult(values, indices)`` — use ``.values`` for the
          maxima and ``.indices`` for where they are.

        APPROACH:
            1. ``dim is None``: ``np.max`` of everything, recorded with ``dim=None``.
            2. Otherwise ``np.max`` and ``np.argmax`` along ``dim`` (both with ``keepdims``);
               record the values with the ``indices`` saved (module 05 sends the gradient
               there) and return ``MaxResult(values, Tensor(indices))``.

        EXAMPLE:
            >>> x = Tensor([[1.0, 5.0], [7.0, 2.0]])
            >>> x.max().item(), x.max(dim=1).values.tolist(), x.max(dim=1).indices.tolist()
            (7.0, [5.0, 7.0], [1, 0])

        HINT: indices are int64, like PyTorch's; ``np.argmax`` gives the platform int.
        """
        # BEGIN SOLUTION NO PROMPT
        if dim is None:
            out = np.asarray(np.max(self.data))
            return _result(out, "max", (self,), dim=None, keepdim=False)
        values = np.max(self.data, axis=dim, keepdims=keepdim)
        indices = np.argmax(self.data, axis=dim, keepdims=keepdim).astype(np.int64)
        vals = _result(np.asarray(values), "max", (self,), dim=dim, keepdim=keepdim,
                       indices=indices)
        return MaxResult(vals, Tensor(indices))
        # END SOLUTION
        raise NotImplementedError("module 01: implement Tensor.max (see its docstring)")  # STUB

    def amax(self, dim: int | tuple[int, ...] | None = None, keepdim: bool = False) -> Tensor:
        """Maxima over ``dim`` as a tensor (``torch.amax``): the values without indices."""
        axis = _dim_arg(dim)
        return _result(np.asarray(np.max(self.data, axis=axis, keepdims=keepdim)), "amax",
                       (self,), dim=axis, keepdim=keepdim)


# %% [markdown]
# The helpers below are used by the methods above. `_as_tensor` is how numbers join in:
# `Tensor([1.0, 2.0]) * 3` turns `3` into a float32 tensor so the result stays float32.

# %%
#| export
def _as_tensor(value: Any, like: Tensor) -> Tensor:
    """Make ``value`` a Tensor; Python numbers take ``like``'s dtype (floats stay float)."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (bool, int, float)):
        kind = like.data.dtype.kind
        if isinstance(value, float) and kind in "biu":
            return Tensor(np.asarray(value, dtype=_DEFAULT_FLOAT))
        if kind == "b":
            return Tensor(np.asarray(value))
        return Tensor(np.asarray(value, dtype=like.data.dtype))
    return Tensor(value)


def _shape_arg(shape: tuple[Any, ...]) -> tuple[int, ...]:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


def _check_reshape(shape: tuple[int, ...], numel: int) -> None:
    if sum(1 for s in shape if s == -1) > 1:
        raise RuntimeError("only one dimension can be inferred (-1)")
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    ok = numel % known == 0 if -1 in shape and known else known == numel
    if not ok:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")


def _index_arg(index: Any) -> Any:
    if isinstance(index, Tensor):
        return index.data
    if isinstance(index, tuple):
        return tuple(i.data if isinstance(i, Tensor) else i for i in index)
    if isinstance(index, list):
        return np.asarray([i.item() if isinstance(i, Tensor) else i for i in index])
    return index


def _dim_arg(dim: int | tuple[int, ...] | list[int] | None) -> int | tuple[int, ...] | None:
    if isinstance(dim, list):
        return tuple(dim)
    return dim


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
    return Tensor(np.zeros(_shape_arg(shape), dtype=dtype), requires_grad=requires_grad)


def ones(*shape: Any, requires_grad: bool = False, dtype: Any = _DEFAULT_FLOAT) -> Tensor:
    return Tensor(np.ones(_shape_arg(shape), dtype=dtype), requires_grad=requires_grad)


def full(shape: Any, value: float, dtype: Any = _DEFAULT_FLOAT) -> Tensor:
    return Tensor(np.full(_shape_arg((shape,)), value, dtype=dtype))


def zeros_like(t: Tensor) -> Tensor:
    return Tensor(np.zeros_like(t.data))


def ones_like(t: Tensor) -> Tensor:
    return Tensor(np.ones_like(t.data))


def arange(*args: Any, dtype: Any = None) -> Tensor:
    data = np.arange(*args)
    return Tensor(data if dtype is None else data.astype(dtype))


def randn(*shape: Any, requires_grad: bool = False) -> Tensor:
    data = _RNG[0].standard_normal(_shape_arg(shape)).astype(_DEFAULT_FLOAT)
    return Tensor(data, requires_grad=requires_grad)


def rand(*shape: Any, requires_grad: bool = False) -> Tensor:
    data = _RNG[0].random(_shape_arg(shape)).astype(_DEFAULT_FLOAT)
    return Tensor(data, requires_grad=requires_grad)


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
    assert Tensor(3.0).ndim == 0, "a scalar tensor has 0 dimensions"

# %%
def test_numel_and_memory(Tensor, np):
    assert Tensor(np.zeros((2, 3, 4))).numel() == 24, "numel is the product of the shape"
    assert Tensor(5.0).numel() == 1, "a scalar tensor has one element (the empty product is 1)"
    batch = Tensor(np.zeros((32, 3, 224, 224), dtype=np.float32))
    assert batch.memory_footprint() == 19267584, (
        "32 images x 3 x 224 x 224 float32 values x 4 bytes = 19,267,584 bytes (about 19 MB)")
    assert Tensor(np.zeros(10, dtype=np.float64)).memory_footprint() == 80, (
        "float64 takes 8 bytes per element")

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
print(f"{batch.numel():,} elements, {batch.memory_footprint() / 1e6:.1f} MB")
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
# longer **contiguous** (walking it in row-major order jumps around storage), so `view` refuses
# it and some kernels copy it first. `reshape` gives a view when it can and copies otherwise.

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
    assert t.shape == (3, 2), "transpose(0, 1) swaps the two sizes"
    assert t.stride() == (1, 3), "transpose swaps the strides too"
    assert np.shares_memory(t.data, x.data), "transpose must be a view: no copy of the data"
    assert x.is_contiguous() and not t.is_contiguous(), "a transposed matrix is not contiguous"

# %%
def test_reshape_and_view(Tensor, np):
    x = Tensor(np.arange(12, dtype=np.float32))
    r = x.reshape(3, -1)
    assert r.shape == (3, 4), "-1 infers the missing size: 12 / 3 = 4"
    assert np.shares_memory(r.data, x.data), "reshaping a contiguous tensor should not copy"
    assert x.reshape((2, 6)).shape == (2, 6), "reshape accepts a tuple too"
    try:
        x.reshape(5, 5)
    except RuntimeError:
        pass
    else:
        raise AssertionError("reshape to 25 elements from 12 must raise RuntimeError")
    try:
        x.reshape(3, 4).transpose(0, 1).view(12)
    except RuntimeError:
        pass
    else:
        raise AssertionError("view of a non-contiguous tensor must raise RuntimeError")
    p = Tensor(np.zeros((2, 3, 4, 5))).permute(0, 2, 3, 1)
    assert p.shape == (2, 4, 5, 3), "permute(0, 2, 3, 1) turns NCHW into NHWC"

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
# your operators must pass it through and keep float32 float32 when a Python number joins in.

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
    assert s.numpy().tolist() == [[11.0, 21.0, 31.0], [12.0, 22.0, 32.0]], "wrong sums"
    assert (b - a).numpy()[1, 0] == 8.0, "subtraction: 10 - 2 = 8"
    assert (a * b).numpy()[1, 2] == 60.0, "multiplication: 2 * 30 = 60"
    assert (b / 10).numpy().tolist() == [1.0, 2.0, 3.0], "division by a Python number"
    assert (2 * b).dtype == np.float32, "a Python number must not turn float32 into float64"
    assert (-a).numpy()[0, 0] == -1.0, "negation"
    assert (1 - b).numpy()[0] == -9.0, "reflected subtraction: 1 - 10 = -9"

# %%
def test_elementwise_math(Tensor, np):
    x = Tensor([0.0, 1.0, 4.0])
    assert np.allclose((x ** 2).numpy(), [0.0, 1.0, 16.0]), "x ** 2 squares each element"
    assert np.allclose(x.sqrt().numpy(), [0.0, 1.0, 2.0]), "sqrt"
    assert np.allclose(x.exp().log().numpy(), x.numpy(), atol=1e-6), "log(exp(x)) == x"
    assert np.allclose(Tensor([-2.0, 0.5]).clamp(min=0.0).numpy(), [0.0, 0.5]), "clamp(min=0)"

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 4. Matrix multiplication
#
# A linear layer computes `x @ W.T + b`: most of a neural network's arithmetic is matrix
# multiplication. Multiplying `(n, k)` by `(k, m)` takes `n·k·m` multiply-adds, i.e.
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
    assert (a @ b).numpy().tolist() == [[19.0, 22.0], [43.0, 50.0]], "2x2 matrix product"
    batch = Tensor(np.ones((8, 2, 3), dtype=np.float32))
    w = Tensor(np.ones((3, 5), dtype=np.float32))
    assert (batch @ w).shape == (8, 2, 5), "(8, 2, 3) @ (3, 5) -> (8, 2, 5)"
    try:
        Tensor(np.ones((2, 3))) @ Tensor(np.ones((4, 5)))
    except ValueError as err:
        assert "(2, 3)" in str(err) and "(4, 5)" in str(err), "name both shapes in the error"
    else:
        raise AssertionError("(2, 3) @ (4, 5) must raise ValueError")

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
    assert x.sum().item() == 21.0, "sum() adds every element"
    assert x.sum(dim=0).numpy().tolist() == [5.0, 7.0, 9.0], "sum(dim=0) adds down the columns"
    assert x.sum(dim=1, keepdim=True).shape == (2, 1), "keepdim=True keeps a size-1 dimension"
    assert x.mean(dim=1).numpy().tolist() == [2.0, 5.0], "mean(dim=1) averages each row"
    assert x.max().item() == 6.0, "max() is the largest element"
    m = x.max(dim=1)
    assert m.values.numpy().tolist() == [3.0, 6.0], "max(dim=1).values are the row maxima"
    assert m.indices.numpy().tolist() == [2, 2], "max(dim=1).indices say where they are"

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


def best_time(fn, repeat=5):
    """The fastest of ``repeat`` runs, in seconds (the least disturbed by other programs)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


grid = np.random.default_rng(0).standard_normal((2048, 2048)).astype(np.float32)  # 16 MiB


def by_rows():  # each row: 2048 neighbouring floats, 8 KiB in a row
    return sum(float(grid[i, :].sum()) for i in range(grid.shape[0]))


def by_columns():  # each column: 2048 floats 8 KiB apart, one per cache line
    return sum(float(grid[:, j].sum()) for j in range(grid.shape[1]))


rows, cols = best_time(by_rows), best_time(by_columns)
print(f"strides {grid.strides}: rows {rows * 1e3:.1f} ms, columns {cols * 1e3:.1f} ms "
      f"({cols / rows:.1f}x slower), the same 4.2 million additions")
# Expected: columns several times slower than rows (about 12x on the machine this was written
# on). This is why kernels want contiguous inputs, and why `.contiguous()` before a loop over
# the last dimension can pay for its copy.

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
