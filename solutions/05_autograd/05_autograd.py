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
# # Module 05 · Autograd
#
# Since module 01 every operation on a tensor with `requires_grad=True` has quietly written
# down *how* it was made: `out._node = Node(op, inputs, saved)`. Nobody has read those notes
# yet. In this module you write the reader: an **automatic differentiation engine** that walks
# the recorded graph backwards and fills `.grad` on every parameter — the algorithm behind
# `loss.backward()` in PyTorch, and the reason the layers and losses of modules 02–04 can now
# be *trained*.
#
# ## Learning objectives
#
# By the end of this module you can:
#
# 1. draw the **computational graph** of an expression and explain how it is recorded on the
#    fly (define-by-run), with no change to the code of modules 01–04;
# 2. apply the **chain rule** in reverse mode: one backward pass gives the gradient of a scalar
#    loss with respect to *every* input, at a cost of about two forward passes;
# 3. derive and implement the **vector-Jacobian product** of each tensor operation (element-wise,
#    matmul, reductions, views, indexing);
# 4. reduce gradients back to an input's shape after **broadcasting** (`unbroadcast`);
# 5. order the backward walk with a **topological sort** and **accumulate** gradients where a
#    tensor is used more than once;
# 6. verify any gradient numerically with **central differences** (`gradcheck`), and estimate
#    the **memory** autograd keeps alive for the backward pass.
#
# ## How to work through this notebook
#
# Fill in every function that raises `NotImplementedError` — the docstrings give **what**,
# an **APPROACH**, an **EXAMPLE** and **HINTS**. Run the `grader.check(...)` cells as you go.
# Cells starting with `#| export` become `tinytorch/autograd.py` (`python export.py 05`). The
# hidden suite checks gradients of every operation against the reference engine.

# %%
import numpy as np

from tinytorch.tensor import Tensor

# %% [markdown]
# ## 1. The graph you have been building all along
#
# Take `L = sum((x * w + b) ** 2)`. Each operation made a new tensor and a `Node` that points
# at its inputs:
#
# ```
#   x ──┐
#       ├─[mul]── u ──┐
#   w ──┘             ├─[add]── v ──[pow 2]── s ──[sum]── L
#   b ────────────────┘
#
#   L._node = Node("sum",  (s,), {dim: None, keepdim: False})
#   s._node = Node("pow",  (v,), {exponent: 2})
#   v._node = Node("add",  (u, b), {})
#   u._node = Node("mul",  (x, w), {})
#   x, w, b: leaves (no _node); they hold .grad after backward
# ```
#
# **Reverse mode** starts at `L` with `dL/dL = 1` and walks *against* the arrows. At each node
# it knows `grad = dL/d(out)` and computes `dL/d(input)` for each input with the chain rule:
#
# ```
#   backward walk (reverse topological order):
#   L: grad 1 ──► sum: dL/ds = 1 (broadcast to s's shape)
#             ──► pow: dL/dv = dL/ds · 2v
#             ──► add: dL/du = dL/dv,  dL/db = dL/dv  (summed over broadcast dims!)
#             ──► mul: dL/dx = dL/du · w,  dL/dw = dL/du · x
# ```
#
# Each of these rules is a **vector-Jacobian product** (VJP): we never build the Jacobian
# matrix `d(out)/d(in)` (for a 1000×1000 matmul that would be 10¹² numbers); we compute
# `grad · J` directly with a formula of the same cost as the forward operation.

# %% [markdown]
# ## 2. The derivative table
#
# For every operation name that module 01 records, you write one function
# `grad_<op>(grad, node, out) -> tuple` that returns one gradient array per input:
#
# | op | forward | gradient(s) given `g = dL/d(out)` |
# |---|---|---|
# | add | `a + b` | `g`, `g` |
# | sub | `a - b` | `g`, `-g` |
# | mul | `a * b` | `g·b`, `g·a` |
# | div | `a / b` | `g / b`, `-g·a / b²` |
# | neg | `-a` | `-g` |
# | pow | `a ** p` | `g · p · a^(p-1)` |
# | exp | `e^a` | `g · out` |
# | log | `ln a` | `g / a` |
# | sqrt | `√a` | `g / (2·out)` |
# | tanh | `tanh a` | `g · (1 - out²)` |
# | abs | `|a|` | `g · sign(a)` |
# | clamp | `clip(a, lo, hi)` | `g` where `lo ≤ a ≤ hi`, else 0 |
# | matmul | `A @ B` | `g @ Bᵀ`, `Aᵀ @ g` |
# | sum | `Σ a` | `g` broadcast back over the summed dims |
# | mean | `Σ a / n` | `g / n` broadcast back |
# | max / amax | largest | `g` to the arg-max (shared evenly among ties) |
# | reshape / transpose / permute | views | the inverse view of `g` |
# | getitem | `a[idx]` | zeros with `g` *added* at `idx` |
#
# The formulas return gradients with the **output's shape**; the engine then calls
# `unbroadcast` to bring each one back to its input's shape. Formulas work on raw NumPy
# arrays, so computing gradients never records a new graph.
#
# ## 3. Broadcasting runs backwards as a sum
#
# If `b` of shape `(3,)` was broadcast to `(4, 3)` in `x + b`, each element of `b` influenced
# four outputs, so its gradient is the **sum** of those four:
#
# ```
#   forward:  b (3,) ──stretch──► (4, 3)          backward:  g (4, 3) ──sum dim 0──► (3,)
#   forward:  c (4, 1) ─stretch─► (4, 3)          backward:  g (4, 3) ──sum dim 1, keepdim──► (4, 1)
# ```
#
# Rule: sum away the extra leading dimensions, then sum (keeping the dim) every dimension
# where the input had size 1 and the gradient does not.

# %%
#| export
"""Module 05 · Autograd — depends on: tensor; used by: optimizers, training.

Reverse-mode automatic differentiation over the graph module 01 records: a topological sort,
one vector-Jacobian product per operation, gradient reduction under broadcasting, gradient
accumulation into leaves, and a central-difference ``gradcheck``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from tinytorch.tensor import Node, Tensor

GradFn = Callable[[np.ndarray, Node, np.ndarray], tuple[np.ndarray | None, ...]]


def unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum ``grad`` down to ``shape``: the backward of broadcasting.

    APPROACH:
        1. While ``grad`` has more dimensions than ``shape``, sum over axis 0 (extra leading
           dimensions were added by broadcasting).
        2. For each axis ``i`` where ``shape[i] == 1`` but ``grad.shape[i] != 1``, sum over it
           with ``keepdims=True``.
        3. Return the result (its shape is now exactly ``shape``).

    EXAMPLE:
        >>> unbroadcast(np.ones((4, 3)), (3,))
        array([4., 4., 4.])
        >>> unbroadcast(np.ones((2, 4, 3)), (4, 1)).shape
        (4, 1)

    HINT: ``shape == ()`` (a scalar input) means: sum everything.
    """
    # BEGIN SOLUTION NO PROMPT
    shape = tuple(shape)
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad
    # END SOLUTION
    raise NotImplementedError("module 05: implement unbroadcast (see its docstring)")  # STUB


def topological_order(root: Tensor) -> list[Tensor]:
    """Every tensor ``root`` depends on (``root`` included), inputs before the outputs.

    A tensor's inputs are ``t._node.inputs`` (leaves have ``t._node is None``). Each tensor
    must appear **once**, after all of its inputs.

    APPROACH (depth-first post-order, without recursion so deep graphs do not overflow):
        1. Keep ``visited`` (a set of ``id(t)``) and ``order`` (the output list).
        2. Use a stack of ``(tensor, expanded)`` pairs, starting with ``(root, False)``.
        3. Pop a pair. If ``expanded`` is True, append the tensor to ``order``. Otherwise,
           if not yet visited: mark it, push ``(tensor, True)``, then push
           ``(inp, False)`` for each input not yet visited.
        4. Return ``order`` (``order[-1] is root``).

    EXAMPLE:
        >>> a = Tensor([1.0], requires_grad=True)
        >>> b = a * 2
        >>> c = b + a
        >>> order = topological_order(c)
        >>> ids = [id(t) for t in order]
        >>> order[-1] is c, ids.index(id(a)) < ids.index(id(b)) < ids.index(id(c))
        (True, True)

    HINT: tensors are not hashable by value; key the visited set by ``id(tensor)``. A tensor
    used twice (``a`` above) must still appear only once.
    """
    # BEGIN SOLUTION NO PROMPT
    visited: set[int] = set()
    order: list[Tensor] = []
    stack: list[tuple[Tensor, bool]] = [(root, False)]
    while stack:
        t, expanded = stack.pop()
        if expanded:
            order.append(t)
            continue
        key = id(t)
        if key in visited:
            continue
        visited.add(key)
        stack.append((t, True))
        node = t._node
        if node is not None:
            for inp in node.inputs:
                if id(inp) not in visited:
                    stack.append((inp, False))
    return order
    # END SOLUTION
    raise NotImplementedError(  # STUB
        "module 05: implement topological_order (see its docstring)")  # STUB


# %% [raw]
# # BEGIN QUESTION
# name: graph
# points: 0

# %% [markdown]
# ### Check: broadcasting backwards and the walk order

# %% [raw]
# # BEGIN TESTS

# %%
def test_unbroadcast_sums_stretched_dims(unbroadcast, np):
    g = np.ones((4, 3), dtype=np.float32)
    out = unbroadcast(g, (3,))
    assert out.shape == (3,), (
        f"a (3,) bias broadcast over 4 rows needs a (3,) gradient, got {out.shape}: "
        "sum away the extra leading dimension")
    assert np.allclose(out, 4.0), (
        f"each bias element touched 4 outputs, so its gradient is 4, got {out.tolist()}: sum, "
        "not mean")
    kept = unbroadcast(np.ones((2, 4, 3)), (4, 1))
    assert kept.shape == (4, 1), f"(2, 4, 3) -> (4, 1) should keep the size-1 dim, got {kept.shape}"
    assert np.allclose(kept, 6.0), (
        f"2 * 3 = 6 outputs per element of the (4, 1) input, got {kept.ravel().tolist()}")
    scalar = unbroadcast(np.ones((2, 3)), ()).shape
    assert scalar == (), f"a scalar input gets a scalar gradient, shape (), got {scalar}"

# %%
def test_topological_order_visits_each_tensor_once(topological_order, Tensor):
    a = Tensor([1.0, 2.0], requires_grad=True)
    b = a * 3.0
    c = b + a
    d = c * b
    order = topological_order(d)
    ids = [id(t) for t in order]
    names = {id(a): "a", id(b): "b", id(c): "c", id(d): "d"}
    shown = [names.get(i, "?") for i in ids]
    assert len(ids) == len(set(ids)), (
        f"a tensor appears twice in the order {shown}: it would pass its gradient on twice")
    assert order[-1] is d, (
        f"the root (the tensor you call backward on) must come last, got the order {shown}")
    pos = {id(t): i for i, t in enumerate(order)}
    assert all(k in pos for k in names) and pos[id(a)] < pos[id(b)] < pos[id(c)] < pos[id(d)], (
        f"expected a before b before c before d (every tensor after its inputs), got {shown}: "
        "otherwise the backward walk reads unfinished gradients")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 4. Element-wise operations
#
# Every formula receives `grad` (`dL/d(out)`, shaped like the output), the `node`
# (`node.inputs` are the input tensors — read their `.data` — and `node.saved` the values the
# forward pass stored) and `out` (the forward result's data, handy for `exp`, `sqrt`, `tanh`).
# Return a tuple with one array per input, **shaped like the output** — the engine
# unbroadcasts for you. Inputs of two dtypes (`float32 / float64_0d`): PyTorch computes the
# derivative at the result's dtype, then casts it to each input's, so module 01 records the
# other input through a `cast` to `out`'s dtype and your binary formulas compute in it.
#
# **Where the derivative does not exist, follow PyTorch's convention** — a model trained here
# must compute the same gradients as the same model in PyTorch:
#
# | point | choice | why |
# |---|---|---|
# | `abs` at 0 | 0 | the subgradient in the middle; NaN inputs also get 0 (PyTorch's sign of NaN) |
# | `relu` at 0 (module 02) | 0 | a unit exactly at 0 is "off" |
# | `clamp` at a bound | passes `grad` | bounds are inclusive |
# | `x ** 0` at 0 | 0 | `x ** 0` is the constant 1, whatever the power rule's `0 · 0⁻¹` says |
# | `max` ties | shared evenly (full max), or all to the recorded index (`max(dim)`) | PyTorch's rules |
#
# And never multiply a gradient by a 0/1 mask when a `np.where` will do: `inf * 0` is NaN, so
# an infinite gradient reaching a blocked element would poison the sum; `where` gives 0.

# %%
#| export
def grad_add(grad: np.ndarray, node: Node, out: np.ndarray) -> tuple[np.ndarray, ...]:
    """``out = a + b``: both inputs receive ``grad`` unchanged (``d(a+b)/da = 1``).

    APPROACH: the local derivatives are both 1, so each input's gradient is ``grad * 1``;
    return the 2-tuple ``(grad, grad)`` (both shaped like ``out``).

    EXAMPLE: ``grad_add(np.ones(3), node, out)`` -> ``(array([1., 1., 1.]), array([1., 1., 1.]))``

    HINT: return the gradient as it is, even if ``a`` or ``b`` was broadcast: the engine
    calls ``unbroadcast`` on each result for you.
    """
    # BEGIN SOLUTION NO PROMPT
    return grad, grad
    # END SOLUTION
    raise NotImplementedError("module 05: implement grad_add (see its docstring)")  # STUB


def grad_sub(grad: np.ndarray, node: Node, out: np.ndarray) -> tuple[np.ndarray, ...]:
    """``out = a - b``: ``a`` receives ``grad``, ``b`` receives ``-grad``.

    APPROACH: ``d(a-b)/da = 1`` and ``d(a-b)/db = -1``: return ``grad`` for ``a`` and its
    negation for ``b``, in input order, both shaped like ``out``.

    EXAMPLE: ``grad = [1., 2.]`` -> ``([1., 2.], [-1., -2.])``: making ``b`` larger makes
    ``out`` smaller.

    HINT: the minus sign belongs to ``b`` only; ``(grad, grad)`` is the classic slip and
    ``a - a`` still gets zero, so test with two different tensors.
    """
    # BEGIN SOLUTION NO PROMPT
    return grad, -grad
    # END SOLUTION
    raise NotImplementedError("module 05: implement grad_sub (see its docstring)")  # STUB


def grad_mul(grad: np.ndarray, node: Node, out: np.ndarray) -> tuple[np.ndarray, ...]:
    """``out = a * b``: ``da = grad * b``, ``db = grad * a`` (product rule).

    APPROACH: ``a, b = (t.data for t in node.inputs)``; return both products.

    EXAMPLE: for ``a = [2.], b = [5.]`` and ``grad = [1.]`` -> ``([5.], [2.])``.

    HINT: each input gets the *other* input's value (``grad * a`` for ``a`` is wrong);
    for ``x * x`` both entries are ``grad * x`` and the engine adds them to ``2x·grad``.
    """
    # BEGIN SOLUTION NO PROMPT
    a, b = (t.data for t in node.inputs)
    return grad * b, grad * a
    # END SOLUTION
    raise NotImplementedError("module 05: implement grad_mul (see its docstring)")  # STUB


def grad_div(grad: np.ndarray, node: Node, out: np.ndarray) -> tuple[np.ndarray, ...]:
    """``out = a / b``: ``da = grad / b``, ``db = -grad * a / b**2``.

    APPROACH: read ``b`` from ``node.inputs``; quotient rule: ``da = grad / b`` and
    ``db = -grad * a / b² = -grad * (out / b)`` (``out = a / b`` is given); both arrays are
    shaped like ``out``.

    EXAMPLE: for ``a = [6.], b = [2.]`` and ``grad = [1.]`` -> ``([0.5], [-1.5])``.

    HINT: ``db`` is negative; compute it as ``-grad * (out / b)``, in PyTorch's order:
    ``b * b`` underflows to 0 in float32 for ``|b| < 1e-23`` and makes ``0 / 0 = nan`` where
    the exact answer is 0, and ``grad * out`` can overflow where ``out / b`` does not.
    """
    # BEGIN SOLUTION NO PROMPT
    b = node.inputs[1].data
    return grad / b, -grad * (out / b)
    # END SOLUTION
    raise NotImplementedError("module 05: implement grad_div (see its docstring)")  # STUB


def grad_neg(grad: np.ndarray, node: Node, out: np.ndarray) -> tuple[np.ndarray, ...]:
    """``out = -a``: ``da = -grad``. Return a 1-tuple: ``(-grad,)``.

    APPROACH: ``d(-a)/da = -1``, so the gradient is ``grad`` negated, shaped like ``out``.

    EXAMPLE: ``grad = [1., -3.]`` -> ``([-1., 3.],)``.

    HINT: return a tuple even for one input — a bare array would be unpacked element by
    element by the engine.
    """
    # BEGIN SOLUTION NO PROMPT
    return (-grad,)
    # END SOLUTION
    raise NotImplementedError("module 05: implement grad_neg (see its docstring)")  # STUB


def grad_pow(grad: np.ndarray, node: Node, out: np.ndarray) -> tuple[np.ndarray, ...]:
    """``out = a ** p`` for a number ``p = node.saved["exponent"]``: ``da = grad * (p * a**(p-1))``.

    APPROACH:
        1. ``(a,) = (t.data for t in node.inputs)``; ``p = node.saved["exponent"]`` (a
           Python number, not a Tensor).
        2. ``p == 0``: ``a ** 0`` is the constant 1, so its gradient is 0 everywhere — also at
           ``a = 0``, where the power rule would compute ``0 * 0**-1 = 0 * inf = nan``.
           Return zeros shaped like ``a`` (PyTorch does the same).
        3. Otherwise the power rule ``grad * (p * a**(p - 1))``, shaped like ``a``. Keep
           PyTorch's order (the bracket first): in float32 it decides whether a huge power
           overflows to inf, as ``4 * a**3`` does for ``a = 5e12``, or stays finite.

    EXAMPLE: for ``a = [3.]``, ``p = 2`` and ``grad = [1.]`` -> ``([6.],)``; for ``a = [0.]``
    and ``p = 0`` -> ``([0.],)``.

    HINT: keep the dtype: ``np.power(a, a.dtype.type(p - 1))``; ``np.zeros_like(a)`` for
    step 2. For ``p = 0.5`` (the gradient of a square root) PyTorch computes ``a ** -0.5``
    as ``1 / np.sqrt(a)``, as module 01's ``x ** -0.5`` does: at ``-0.0`` it gives ``-inf``
    where ``np.power`` gives ``inf``.
    """
    # BEGIN SOLUTION NO PROMPT
    (a,) = (t.data for t in node.inputs)
    p = node.saved["exponent"]
    if p == 0:
        return (np.zeros_like(a),)
    power = 1 / np.sqrt(a) if p == 0.5 else np.power(a, a.dtype.type(p - 1))
    return (grad * (a.dtype.type(p) * power),)
    # END SOLUTION
    raise NotImplementedError("module 05: implement grad_pow (see its docstring)")  # STUB


def grad_exp(grad: np.ndarray, node: Node, out: np.ndarray) -> tuple[np.ndarray, ...]:
    """``out = exp(a)``: ``da = grad * out`` (the exponential is its own derivative).

    APPROACH: ``d exp(a)/da = exp(a)``, which the forward pass already computed as ``out``;
    return the 1-tuple ``(grad * out,)``.

    EXAMPLE: ``a = [0.]`` (so ``out = [1.]``), ``grad = [2.]`` -> ``([2.],)``.

    HINT: reuse ``out`` rather than recomputing ``np.exp(a)``: that is why the engine passes it.
    """
    # BEGIN SOLUTION NO PROMPT
    return (grad * out,)
    # END SOLUTION
    raise NotImplementedError("module 05: implement grad_exp (see its docstring)")  # STUB


def grad_log(grad: np.ndarray, node: Node, out: np.ndarray) -> tuple[np.ndarray, ...]:
    """``out = log(a)``: ``da = grad / a`` (``d ln a / da = 1 / a``).

    APPROACH: ``a = node.inputs[0].data``; return the 1-tuple ``(grad / a,)`` (elementwise,
    shaped like ``a``).

    EXAMPLE: ``a = [2.]``, ``grad = [1.]`` -> ``([0.5],)``.

    HINT: the input is ``node.inputs[0].data``; ``out`` here is ``log(a)``, not ``a``.
    """
    # BEGIN SOLUTION NO PROMPT
    return (grad / node.inputs[0].data,)
    # END SOLUTION
    raise NotImplementedError("module 05: implement grad_log (see its docstring)")  # STUB


def grad_sqrt(grad: np.ndarray, node: Node, out: np.ndarray) -> tuple[np.ndarray, ...]:
    """``out = sqrt(a)``: ``da = grad / (2 * out)`` (``d√a/da = 1 / (2√a)``).

    APPROACH: ``d sqrt(a)/da = 1 / (2 sqrt(a))`` and ``sqrt(a)`` is ``out``: return
    ``(grad / (2 * out),)``.

    EXAMPLE: ``a = [4.]`` (so ``out = [2.]``), ``grad = [1.]`` -> ``([0.25],)``.

    HINT: divide by ``2 * out``, not ``2 * a`` (that would be the derivative of ``log`` halved).
    """
    # BEGIN SOLUTION NO PROMPT
    return (grad / (2 * out),)
    # END SOLUTION
    raise NotImplementedError("module 05: implement grad_sqrt (see its docstring)")  # STUB


def grad_tanh(grad: np.ndarray, node: Node, out: np.ndarray) -> tuple[np.ndarray, ...]:
    """``out = tanh(a)``: ``da = grad * (1 - out**2)``.

    APPROACH: ``d tanh(a)/da = 1 - tanh(a)**2 = 1 - out**2``; return ``(grad * (1 - out * out),)``.

    EXAMPLE: ``a = [0.]`` (so ``out = [0.]``), ``grad = [3.]`` -> ``([3.],)``; for large ``|a|``,
    ``out → ±1`` and the gradient vanishes — the saturation you met in module 02.

    HINT: use ``out`` (``tanh(a)``), not ``a``: ``1 - a**2`` is wrong and goes negative for
    ``|a| > 1``.
    """
    # BEGIN SOLUTION NO PROMPT
    return (grad * (1 - out * out),)
    # END SOLUTION
    raise NotImplementedError("module 05: implement grad_tanh (see its docstring)")  # STUB


def grad_abs(grad: np.ndarray, node: Node, out: np.ndarray) -> tuple[np.ndarray, ...]:
    """``out = |a|``: ``da = grad * sign(a)``; PyTorch uses 0 at ``a == 0`` (so does np.sign).

    APPROACH: ``a = node.inputs[0].data``; ``d|a|/da = sign(a)`` (``np.sign`` gives -1, 0 or
    1). PyTorch's sign of a NaN is 0 while NumPy's is NaN, so take the sign of
    ``np.nan_to_num(a)`` (NaN -> 0); return ``(grad * sign,)``.

    EXAMPLE: ``a = [-2., 0., 3., nan]``, ``grad = [1., 1., 1., 1.]`` -> ``([-1., 0., 1., 0.],)``.

    HINT: ``out / a`` also gives the sign but divides by zero at ``a = 0``; ``np.sign`` returns
    the 0 PyTorch uses there.
    """
    # BEGIN SOLUTION NO PROMPT
    return (grad * np.sign(np.nan_to_num(node.inputs[0].data)),)
    # END SOLUTION
    raise NotImplementedError("module 05: implement grad_abs (see its docstring)")  # STUB


def grad_clamp(grad: np.ndarray, node: Node, out: np.ndarray) -> tuple[np.ndarray, ...]:
    """``out = clamp(a, min, max)``: gradient passes where ``min <= a <= max``, else 0.

    APPROACH: start from a mask of True; AND it with ``a >= min`` when ``node.saved["min"]``
    is not None and with ``a <= max`` when ``node.saved["max"]`` is not None; return
    ``(np.where(mask, grad, 0),)``.

    EXAMPLE: ``a = [-1., 0., 2.]``, ``min = 0``, ``max = None``, ``grad = [1., 1., 1.]`` ->
    ``([0., 1., 1.],)`` — unlike ReLU (module 02), whose gradient at 0 is 0.

    HINT: the bounds are inclusive, as in PyTorch: ``clamp(min=0)`` at ``a = 0`` passes ``grad``.
    Use ``np.where``, not ``grad * mask``: an infinite ``grad`` where the mask is False must
    give 0, not ``inf * 0 = nan``.
    """
    # BEGIN SOLUTION NO PROMPT
    a = node.inputs[0].data
    lo, hi = node.saved["min"], node.saved["max"]
    mask = np.ones(a.shape, dtype=bool)
    if lo is not None:
        mask &= a >= lo
    if hi is not None:
        mask &= a <= hi
    return (np.where(mask, grad, 0),)
    # END SOLUTION
    raise NotImplementedError("module 05: implement grad_clamp (see its docstring)")  # STUB


# %% [raw]
# # BEGIN QUESTION
# name: elementwise
# points: 0

# %% [markdown]
# ### Check: element-wise formulas
#
# These call your formulas directly on a node the forward pass recorded, without the engine
# (`backward` comes in section 7), so a formula is checked on its own.

# %% [raw]
# # BEGIN TESTS

# %%
def test_elementwise_formulas_directly(grad_add, grad_sub, grad_mul, grad_div, grad_neg,
                                       grad_pow, grad_exp, grad_log, grad_sqrt, grad_tanh,
                                       grad_abs, grad_clamp, Tensor, np):
    def check(name, fn, y, g, expected, why):
        got = fn(g, y._node, y.data)
        got = got if isinstance(got, tuple) else (got,)
        assert len(got) == len(expected), (
            f"{name}: expected {len(expected)} gradient(s), one per input, got {len(got)}: {why}")
        for i, (gi, ei) in enumerate(zip(got, expected)):
            gi = np.asarray(gi)
            shown = np.round(gi, 4).tolist() if gi.shape == ei.shape else f"shape {gi.shape}"
            assert gi.shape == ei.shape and np.allclose(gi, ei, rtol=1e-5, atol=1e-6), (
                f"{name}, input {i}: expected {np.round(ei, 4).tolist()} (shape {ei.shape}), "
                f"got {shown}: {why}")

    a = Tensor([0.5, -2.0, 3.0], requires_grad=True)
    b = Tensor([2.0, 4.0, -1.0], requires_grad=True)
    c = Tensor([0.5, 2.0, 4.0], requires_grad=True)
    A, B, C = (t.numpy().astype(np.float64) for t in (a, b, c))
    g = np.array([1.0, 10.0, 100.0], dtype=np.float32)
    check("a + b", grad_add, a + b, g, [g, g], "d(a + b)/da = d(a + b)/db = 1")
    check("a - b", grad_sub, a - b, g, [g, -g], "d(a - b)/db = -1: b's gradient is -grad")
    check("a * b", grad_mul, a * b, g, [g * B, g * A],
          "each input's gradient is grad times the *other* input")
    check("a / b", grad_div, a / b, g, [g / B, -g * A / B ** 2],
          "d(a/b)/da = 1/b and d(a/b)/db = -a/b²")
    check("-a", grad_neg, -a, g, [-g], "negation flips the sign of the gradient")
    check("a ** 3", grad_pow, a ** 3, g, [g * 3 * A ** 2],
          "the power rule n·a^(n-1), with n from node.saved")
    check("a.exp()", grad_exp, a.exp(), g, [g * np.exp(A)], "exp is its own derivative: grad * out")
    check("c.log()", grad_log, c.log(), g, [g / C], "d log(c)/dc = 1/c")
    check("c.sqrt()", grad_sqrt, c.sqrt(), g, [g / (2 * np.sqrt(C))],
          "d sqrt(c)/dc = 1 / (2·sqrt(c)) = 0.5 / out")
    check("a.tanh()", grad_tanh, a.tanh(), g, [g * (1 - np.tanh(A) ** 2)],
          "d tanh(a)/da = 1 - out²")
    check("a.abs()", grad_abs, a.abs(), g, [g * np.sign(A)], "d|a|/da = sign(a)")
    check("a.clamp(-1, 1)", grad_clamp, a.clamp(min=-1.0, max=1.0), g,
          [g * ((A >= -1) & (A <= 1))],
          "clamp passes the gradient only where a was inside the bounds (0 where it was clipped)")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 5. Matrix multiplication
#
# For `C = A @ B` with `A (n, k)`, `B (k, m)`, `G = dL/dC (n, m)`:
#
# ```
#   dL/dA = G @ Bᵀ      (n, m) @ (m, k) -> (n, k)   same shape as A ✓
#   dL/dB = Aᵀ @ G      (k, n) @ (n, m) -> (k, m)   same shape as B ✓
# ```
#
# Shapes are your check: there is only one way to combine `G` with the other operand that
# gives the right shape. For batched inputs `(..., n, k)`, "transpose" means swapping the
# **last two** axes, and the batch dimensions broadcast (so `unbroadcast` sums a shared weight's
# gradient over the batch). 1-D operands are promoted: a vector `a (k,)` on the left acts as
# `(1, k)`, on the right as `(k, 1)`; the extra axis is removed again at the end.

# %%
#| export
def grad_matmul(grad: np.ndarray, node: Node, out: np.ndarray) -> tuple[np.ndarray, ...]:
    """``out = a @ b`` (NumPy/PyTorch matmul rules): ``da = grad @ bᵀ``, ``db = aᵀ @ grad``.

    APPROACH:
        1. ``a, b`` are the input arrays. If ``b`` is 1-D, use ``b[:, None]`` and
           ``grad[..., None]``; then, if ``a`` is 1-D, use ``a[None, :]`` and
           ``grad[..., None, :]`` (in this order, so ``vector @ vector`` works too).
        2. ``da = grad @ swapaxes(b, -1, -2)``; ``db = swapaxes(a, -1, -2) @ grad`` — each only
           when its input requires grad (``node.inputs[0].requires_grad``), else ``None``:
           the first layer's input ``x`` needs no gradient, and its product is as costly as
           the weight's (PyTorch skips it too).
        3. Undo the promotion: drop axis -2 of ``da`` if ``a`` was 1-D, axis -1 of ``db`` if
           ``b`` was 1-D. Batch dimensions are left for ``unbroadcast``.
        4. (Speed, optional) ``(B, T, K) @ (K, N)`` with a 2-D ``b`` (a Linear on a sequence):
           ``db`` as ``B`` products summed by ``unbroadcast`` is one product over all ``B·T``
           rows, ``a.reshape(rows, K).T @ grad.reshape(rows, N)`` with ``rows = B·T``, and no ``(B, K, N)``
           temporary.

    EXAMPLE: ``a (2, 3)``, ``b (3, 4)``, ``grad (2, 4)`` -> ``da (2, 3)``, ``db (3, 4)``.

    HINT: ``.T`` reverses *all* axes — wrong for batches. Use ``np.swapaxes(x, -1, -2)``.
    """
    # BEGIN SOLUTION NO PROMPT
    a_in, b_in = node.inputs
    a, b = a_in.data, b_in.data
    a_vec, b_vec = a.ndim == 1, b.ndim == 1
    if b_vec:
        b = b[:, None]
        grad = grad[..., None]
    if a_vec:
        a = a[None, :]
        grad = grad[..., None, :]
    da = np.matmul(grad, np.swapaxes(b, -1, -2)) if a_in.requires_grad else None
    if not b_in.requires_grad:
        db = None
    elif b.ndim == 2 and a.ndim > 2:  # one weight for every batch element: one product
        rows = int(np.prod(a.shape[:-1]))  # B·T
        db = a.reshape(rows, a.shape[-1]).T @ grad.reshape(rows, grad.shape[-1])
    else:
        db = np.matmul(np.swapaxes(a, -1, -2), grad)
    if a_vec and da is not None:
        da = da[..., 0, :]
    if b_vec and db is not None:
        db = db[..., 0]
    return da, db
    # END SOLUTION
    raise NotImplementedError("module 05: implement grad_matmul (see its docstring)")  # STUB


# %% [raw]
# # BEGIN QUESTION
# name: matmul
# points: 0

# %% [markdown]
# ### Check: the matmul formula
#
# These call your formulas directly on a node the forward pass recorded, without the engine
# (`backward` comes in section 7), so a formula is checked on its own.

# %% [raw]
# # BEGIN TESTS

# %%
def test_matmul_formula_directly(grad_matmul, Tensor, np):
    def check(name, fn, y, g, expected, why):
        got = fn(g, y._node, y.data)
        got = got if isinstance(got, tuple) else (got,)
        assert len(got) == len(expected), (
            f"{name}: expected {len(expected)} gradient(s), one per input, got {len(got)}: {why}")
        for i, (gi, ei) in enumerate(zip(got, expected)):
            gi = np.asarray(gi)
            shown = np.round(gi, 4).tolist() if gi.shape == ei.shape else f"shape {gi.shape}"
            assert gi.shape == ei.shape and np.allclose(gi, ei, rtol=1e-5, atol=1e-6), (
                f"{name}, input {i}: expected {np.round(ei, 4).tolist()} (shape {ei.shape}), "
                f"got {shown}: {why}")

    rng = np.random.default_rng(0)
    a = Tensor(rng.standard_normal((2, 3)), requires_grad=True)
    b = Tensor(rng.standard_normal((3, 4)), requires_grad=True)
    g = rng.standard_normal((2, 4))
    A, B = a.numpy(), b.numpy()
    check("(2, 3) @ (3, 4)", grad_matmul, a @ b, g, [g @ B.T, A.T @ g],
          "dA = G @ Bᵀ (shape of A) and dB = Aᵀ @ G (shape of B)")
    p = Tensor(rng.standard_normal((5, 2, 3)), requires_grad=True)
    q = Tensor(rng.standard_normal((5, 3, 4)), requires_grad=True)
    g3 = rng.standard_normal((5, 2, 4))
    P, Q = p.numpy(), q.numpy()
    check("(5, 2, 3) @ (5, 3, 4)", grad_matmul, p @ q, g3,
          [g3 @ np.swapaxes(Q, -1, -2), np.swapaxes(P, -1, -2) @ g3],
          "batched: transpose only the last two axes (np.swapaxes(x, -1, -2); .T would reverse "
          "all three)")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 6. Reductions, views and indexing
#
# A **sum** copies its gradient back to every element it added; a **mean** also divides by the
# count. Without `keepdim` the reduced axes are gone from `grad`, so put them back with
# `np.expand_dims` before broadcasting. A **max** sends the gradient only to the element that
# won (ties share it evenly, as PyTorch does for a full reduction and for `amax`); with a
# `dim`, `max` recorded the winning `indices` and the gradient goes exactly there.
#
# **Views** move no data, so their backward is the inverse view: reshape back, swap the same
# axes back, apply the inverse permutation (`np.argsort(dims)`). **Indexing** picks elements;
# its backward scatters `grad` into zeros — with `np.add.at`, because `x[[0, 0]]` uses `x[0]`
# twice and must receive *both* gradients (`g[idx] += grad` would keep only one).

# %%
#| export
def _axes(dim: int | tuple[int, ...] | None, ndim: int) -> tuple[int, ...]:
    """Reduced axes as non-negative ints (provided)."""
    if dim is None:
        return tuple(range(ndim))
    dims = dim if isinstance(dim, tuple) else (dim,)
    return tuple(sorted(d % ndim for d in dims)) if ndim else ()


def _expand_reduced(grad: np.ndarray, node: Node, ndim: int) -> np.ndarray:
    """Re-insert the axes a reduction removed (when ``keepdim`` was False); provided."""
    if node.saved.get("keepdim"):
        return grad
    shape = list(np.shape(grad))
    for axis in _axes(node.saved.get("dim"), ndim):  # ascending, so each index is final
        shape.insert(axis, 1)
    return np.reshape(grad, shape)


def grad_sum(grad: np.ndarray, node: Node, out: np.ndarray) -> tuple[np.ndarray, ...]:
    """``out = a.sum(dim, keepdim)``: every summed element receives the gradient of its sum.

    APPROACH: ``g = _expand_reduced(grad, node, a.ndim)``; return
    ``np.broadcast_to(g, a.shape)``.

    EXAMPLE: ``a (2, 3)``, ``dim=1``, ``grad = [1., 2.]`` -> ``[[1, 1, 1], [2, 2, 2]]``.

    HINT: without ``keepdim``, ``grad (2,)`` does not broadcast against ``a (2, 3)`` (NumPy aligns
    trailing axes): re-insert the reduced axis first, so ``(2,) -> (2, 1) -> (2, 3)``.
    """
    # BEGIN SOLUTION NO PROMPT
    a = node.inputs[0].data
    return (np.broadcast_to(_expand_reduced(grad, node, a.ndim), a.shape),)
    # END SOLUTION
    raise NotImplementedError("module 05: implement grad_sum (see its docstring)")  # STUB


def grad_mean(grad: np.ndarray, node: Node, out: np.ndarray) -> tuple[np.ndarray, ...]:
    """``out = a.mean(dim, keepdim)``: like ``grad_sum``, divided by the number averaged.

    APPROACH: ``a = node.inputs[0].data``; ``count = a.size // out.size``;
    ``g = _expand_reduced(grad, node, a.ndim) / count``; return
    ``np.broadcast_to(g, a.shape)`` — the ``grad_sum`` recipe with one division.

    EXAMPLE: ``a (2, 3)``, ``dim=1``, ``grad = [3., 6.]`` -> ``[[1, 1, 1], [2, 2, 2]]``.

    HINT: the count is ``a.size // out.size`` (works for any ``dim``). Divide by it in ``a``'s
    dtype (``a.dtype.type(count)``) so float32 gradients stay float32.
    """
    # BEGIN SOLUTION NO PROMPT
    a = node.inputs[0].data
    count = a.size // max(out.size, 1)
    g = _expand_reduced(grad, node, a.ndim) / a.dtype.type(count)
    return (np.broadcast_to(g, a.shape),)
    # END SOLUTION
    raise NotImplementedError("module 05: implement grad_mean (see its docstring)")  # STUB


def grad_max(grad: np.ndarray, node: Node, out: np.ndarray) -> tuple[np.ndarray, ...]:
    """``out = a.max()`` or ``a.max(dim, keepdim).values``.

    APPROACH:
        * ``node.saved["dim"] is None`` (full reduction): ``mask = a == out``; return
          ``np.where(mask, grad / mask.sum(), 0)`` — ties share the gradient evenly, the rest
          get exactly 0 (even when ``grad`` is NaN or inf). A NaN is the maximum of anything
          it is in but equals nothing (``nan == nan`` is False): when ``out`` is NaN use
          ``mask = np.isnan(a)`` instead, as PyTorch does.
        * otherwise: start from ``np.zeros_like(a)``; expand ``grad`` and
          ``node.saved["indices"]`` with ``_expand_reduced``; then
          ``np.put_along_axis(g, indices, grad, axis=dim)``.

    EXAMPLE: ``a = [1., 5., 5.]``, ``grad = 1.`` (full max) -> ``[0., 0.5, 0.5]``.

    HINT: the values-only winner test ``a == out`` is right only for the full reduction; with
    a ``dim`` use the saved ``indices`` — on a tie PyTorch gives the whole gradient to the
    recorded index, not a share to each.
    """
    # BEGIN SOLUTION NO PROMPT
    a = node.inputs[0].data
    if node.saved["dim"] is None:
        mask = np.isnan(a) if np.isnan(out) else a == out
        return (np.where(mask, grad / mask.sum(), 0).astype(a.dtype, copy=False),)
    g = np.zeros_like(a)
    idx = _expand_reduced(np.asarray(node.saved["indices"]), node, a.ndim)
    winners = _expand_reduced(grad, node, a.ndim).astype(a.dtype)
    np.put_along_axis(g, idx, winners, axis=node.saved["dim"])
    return (g,)
    # END SOLUTION
    raise NotImplementedError("module 05: implement grad_max (see its docstring)")  # STUB


def grad_amax(grad: np.ndarray, node: Node, out: np.ndarray) -> tuple[np.ndarray, ...]:
    """``out = a.amax(dim, keepdim)``: ties share the gradient evenly within each reduction.

    APPROACH: expand ``out`` and ``grad`` with ``_expand_reduced``; ``mask = a == out_e``;
    ``count = mask.sum(axis=reduced axes, keepdims=True)``; return ``grad_e * mask / count``.

    EXAMPLE: ``a = [[1., 4.], [3., 3.]]``, ``dim=1``, ``grad = [1., 1.]`` ->
    ``[[0., 1.], [0.5, 0.5]]``.

    HINT: divide by the tie count *per reduction* (``keepdims=True`` so it broadcasts), not by
    ``mask.sum()`` over the whole array; and compare ``a`` with the *expanded* ``out``.
    """
    # BEGIN SOLUTION NO PROMPT
    a = node.inputs[0].data
    axes = _axes(node.saved["dim"], a.ndim)
    mask = (a == _expand_reduced(out, node, a.ndim)).astype(a.dtype)
    count = mask.sum(axis=axes, keepdims=True)
    return (_expand_reduced(grad, node, a.ndim) * mask / count,)
    # END SOLUTION
    raise NotImplementedError("module 05: implement grad_amax (see its docstring)")  # STUB


def grad_reshape(grad: np.ndarray, node: Node, out: np.ndarray) -> tuple[np.ndarray, ...]:
    """``out = a.reshape(...)``: reshape ``grad`` back to ``a``'s shape.

    APPROACH: a reshape moves no data, so its inverse is a reshape back: return
    ``(grad.reshape(a.shape),)`` with ``a = node.inputs[0].data``.

    EXAMPLE: ``a (2, 3)``, ``grad (6,)`` -> a ``(2, 3)`` gradient with the same values.

    HINT: reshape to the *input's* shape ``a.shape``, not ``out.shape`` (``grad`` already has
    that one).
    """
    # BEGIN SOLUTION NO PROMPT
    return (grad.reshape(node.inputs[0].data.shape),)
    # END SOLUTION
    raise NotImplementedError("module 05: implement grad_reshape (see its docstring)")  # STUB


def grad_transpose(grad: np.ndarray, node: Node, out: np.ndarray) -> tuple[np.ndarray, ...]:
    """``out = a.transpose(dim0, dim1)``: swap the same two axes of ``grad`` back.

    APPROACH: ``np.swapaxes(grad, node.saved["dim0"], node.saved["dim1"])``: swapping the
    same two axes of ``grad`` (shaped like ``out``) gives an array shaped like ``a``.

    EXAMPLE: ``a (2, 3, 4)``, ``dim0=0, dim1=2``: ``grad (4, 3, 2)`` -> ``(2, 3, 4)``.

    HINT: a swap is its own inverse; the axes are ``node.saved["dim0"]`` and ``["dim1"]``.
    """
    # BEGIN SOLUTION NO PROMPT
    return (np.swapaxes(grad, node.saved["dim0"], node.saved["dim1"]),)
    # END SOLUTION
    raise NotImplementedError("module 05: implement grad_transpose (see its docstring)")  # STUB


def grad_permute(grad: np.ndarray, node: Node, out: np.ndarray) -> tuple[np.ndarray, ...]:
    """``out = a.permute(dims)``: apply the inverse permutation ``np.argsort(dims)`` to ``grad``.

    APPROACH: ``dims = node.saved["dims"]``; the inverse permutation is ``np.argsort(dims)``
    (position of each original axis in ``out``); return ``(np.transpose(grad, inverse),)``.

    EXAMPLE: ``dims = (2, 0, 1)`` -> inverse ``(1, 2, 0)``.

    HINT: normalise negative dims first: ``[d % grad.ndim for d in dims]``.
    """
    # BEGIN SOLUTION NO PROMPT
    dims = [d % max(grad.ndim, 1) for d in node.saved["dims"]]
    return (np.transpose(grad, np.argsort(dims)),)
    # END SOLUTION
    raise NotImplementedError("module 05: implement grad_permute (see its docstring)")  # STUB


def grad_getitem(grad: np.ndarray, node: Node, out: np.ndarray) -> tuple[np.ndarray, ...]:
    """``out = a[index]``: scatter ``grad`` into zeros shaped like ``a``, *adding* at repeats.

    APPROACH: ``g = np.zeros_like(a)``; ``np.add.at(g, node.saved["index"], grad)``.

    EXAMPLE: ``a (3,)``, ``index = [0, 0, 2]``, ``grad = [1., 1., 1.]`` -> ``[2., 0., 1.]``.

    HINT: ``g[index] = grad`` (or ``+=``) writes a repeated index only once, so ``x[[0, 0]]``
    would give ``x[0]`` 1 instead of 2; ``np.add.at`` accumulates every occurrence.
    """
    # BEGIN SOLUTION NO PROMPT
    a = node.inputs[0].data
    g = np.zeros_like(a)
    np.add.at(g, node.saved["index"], grad)
    return (g,)
    # END SOLUTION
    raise NotImplementedError("module 05: implement grad_getitem (see its docstring)")  # STUB


def grad_contiguous(grad: np.ndarray, node: Node, out: np.ndarray) -> tuple[np.ndarray, ...]:
    """``out = a.contiguous()``: a copy with the same values, so ``grad`` passes unchanged.

    APPROACH: the copy is the identity function on values (derivative 1), and ``out`` has
    ``a``'s shape: return the 1-tuple ``(grad,)``.

    EXAMPLE: ``a`` transposed to ``(4, 3)`` then made contiguous, ``grad (4, 3)`` -> the same
    ``(4, 3)`` array, unchanged (the ``transpose`` node before it turns it back to ``(3, 4)``).

    HINT: do not transpose or reshape here — undoing the view is the job of the view's own
    node earlier in the graph.
    """
    # BEGIN SOLUTION NO PROMPT
    return (grad,)
    # END SOLUTION
    raise NotImplementedError("module 05: implement grad_contiguous (see its docstring)")  # STUB


# Provided: the derivatives of module 01's operations you did not write there.
def grad_cast(grad: np.ndarray, node: Node, out: np.ndarray) -> tuple[np.ndarray, ...]:
    """``out = a.double()`` (or ``.float()``): the engine casts ``grad`` back to ``a``'s dtype."""
    return (grad,)


def grad_pow_tensor(grad: np.ndarray, node: Node, out: np.ndarray) -> tuple[np.ndarray, ...]:
    """``out = a ** b`` with a tensor ``b``: ``da = grad * b * a**(b-1)`` (0 where ``b == 0``),
    ``db = grad * out * log(a)`` (0 where ``a == 0`` and ``b >= 0``, as in PyTorch)."""
    a, b = (t.data.astype(out.dtype, copy=False) for t in node.inputs)
    if node.inputs[1].data.dtype == np.bool_:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not "
                           "supported (PyTorch's pow backward computes exponent - 1)")
    with np.errstate(divide="ignore", invalid="ignore"):
        da = np.where(b == 0, 0, grad * (b * np.power(a, b - 1)))
        db = np.where((a == 0) & (b >= 0), 0, grad * (out * np.log(a)))
    return (da, db)


def grad_floordiv(grad: np.ndarray, node: Node, out: np.ndarray) -> tuple[np.ndarray, ...]:
    """``out = a // b``: PyTorch defines no derivative (it is piecewise constant)."""
    raise RuntimeError("derivative for floor_divide is not implemented")


def grad_mod(grad: np.ndarray, node: Node, out: np.ndarray) -> tuple[np.ndarray, ...]:
    """``out = a % b = a - b * floor(a / b)``: ``da = grad``, ``db = -grad * (a // b)``."""
    a, b = (t.data for t in node.inputs)
    return grad, -grad * np.floor_divide(a, b)


def grad_rmod(grad: np.ndarray, node: Node, out: np.ndarray) -> tuple[np.ndarray, ...]:
    """``out = number % t``: PyTorch defines no derivative for this form."""
    raise RuntimeError("derivative for remainder(Scalar, Tensor) is not implemented")


# The derivative table the engine looks up by ``node.op`` (provided).
DERIVATIVES: dict[str, GradFn] = {
    "add": grad_add, "sub": grad_sub, "mul": grad_mul, "div": grad_div, "neg": grad_neg,
    "pow": grad_pow, "exp": grad_exp, "log": grad_log, "sqrt": grad_sqrt, "tanh": grad_tanh,
    "abs": grad_abs, "clamp": grad_clamp, "matmul": grad_matmul, "sum": grad_sum,
    "mean": grad_mean, "max": grad_max, "amax": grad_amax, "reshape": grad_reshape,
    "transpose": grad_transpose, "permute": grad_permute, "getitem": grad_getitem,
    "contiguous": grad_contiguous, "cast": grad_cast, "pow_tensor": grad_pow_tensor,
    "floordiv": grad_floordiv, "mod": grad_mod, "rmod": grad_rmod,
}

# Operations whose derivative reads saved values (inputs or output). A backward pass frees
# them, as PyTorch does, so a second ``backward`` through such a node needs
# ``retain_graph=True`` on the first. Sums, reshapes and additions save nothing.
SAVES_VALUES = {"mul", "div", "pow", "pow_tensor", "exp", "log", "sqrt", "tanh", "abs",
                "clamp", "matmul", "max", "amax", "floordiv", "mod", "rmod"}


# %% [raw]
# # BEGIN QUESTION
# name: reductions
# points: 0

# %% [markdown]
# ### Check: reduction and view formulas
#
# These call your formulas directly on a node the forward pass recorded, without the engine
# (`backward` comes in section 7), so a formula is checked on its own.

# %% [raw]
# # BEGIN TESTS

# %%
def test_reduction_and_view_formulas_directly(grad_sum, grad_mean, grad_max, grad_amax,
                                              grad_reshape, grad_transpose, grad_permute,
                                              grad_getitem, grad_contiguous, Tensor, np):
    def check(name, fn, y, g, expected, why):
        got = fn(g, y._node, y.data)
        got = got if isinstance(got, tuple) else (got,)
        assert len(got) == len(expected), (
            f"{name}: expected {len(expected)} gradient(s), one per input, got {len(got)}: {why}")
        for i, (gi, ei) in enumerate(zip(got, expected)):
            gi = np.asarray(gi)
            shown = np.round(gi, 4).tolist() if gi.shape == ei.shape else f"shape {gi.shape}"
            assert gi.shape == ei.shape and np.allclose(gi, ei, rtol=1e-5, atol=1e-6), (
                f"{name}, input {i}: expected {np.round(ei, 4).tolist()} (shape {ei.shape}), "
                f"got {shown}: {why}")

    x = Tensor([[1.0, 5.0, 2.0], [7.0, 3.0, 4.0]], requires_grad=True)
    g2 = np.array([1.0, 10.0])
    g13 = np.array([[1.0, 2.0, 3.0]])
    check("x.sum(dim=1)", grad_sum, x.sum(dim=1), g2, [np.array([[1.0] * 3, [10.0] * 3])],
          "every element of a row gets that row's gradient: re-insert the summed axis, then "
          "broadcast to x's shape")
    check("x.mean(dim=0, keepdim=True)", grad_mean, x.mean(dim=0, keepdim=True), g13,
          [np.array([[0.5, 1.0, 1.5], [0.5, 1.0, 1.5]])],
          "like sum, divided by the number of elements averaged (2 per column)")
    check("x.max(dim=1).values", grad_max, x.max(dim=1).values, g2,
          [np.array([[0.0, 1.0, 0.0], [10.0, 0.0, 0.0]])],
          "only the largest element of each row (node.saved['indices']) gets the gradient")
    check("x.amax(dim=1)", grad_amax, x.amax(dim=1), g2,
          [np.array([[0.0, 1.0, 0.0], [10.0, 0.0, 0.0]])],
          "only the largest element of each row gets the gradient (shared evenly on ties)")
    g6 = np.arange(6.0)
    check("x.reshape(6)", grad_reshape, x.reshape(6), g6, [g6.reshape(2, 3)],
          "a reshape's backward reshapes the gradient back to x's shape")
    g32 = np.arange(6.0).reshape(3, 2)
    check("x.transpose(0, 1)", grad_transpose, x.transpose(0, 1), g32, [g32.T],
          "a transpose's backward is the same transpose")
    z = Tensor(np.arange(24.0).reshape(2, 3, 4), requires_grad=True)
    g423 = np.arange(24.0).reshape(4, 2, 3)
    check("z.permute(2, 0, 1)", grad_permute, z.permute(2, 0, 1), g423,
          [np.transpose(g423, (1, 2, 0))],
          "undo a permute with the inverse permutation np.argsort(dims) = (1, 2, 0)")
    v = Tensor([1.0, 2.0, 3.0], requires_grad=True)
    check("v[[0, 0, 2]]", grad_getitem, v[np.array([0, 0, 2])], np.array([1.0, 10.0, 100.0]),
          [np.array([11.0, 0.0, 100.0])],
          "v[0] is used twice, so it gets 1 + 10: scatter with np.add.at (g[idx] = grad keeps "
          "only the last)")
    t = x.transpose(0, 1)
    check("x.T.contiguous()", grad_contiguous, t.contiguous(), g32, [g32],
          "contiguous only copies: it passes the gradient through unchanged")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 7. The engine: `backward`
#
# ```
#   backward(root, gradient):
#     grads = {id(root): gradient}                       dL/dL = 1 for a scalar loss
#     for t in reversed(topological_order(root)):        outputs before inputs
#         g = grads.pop(id(t))            (skip t if nothing reached it)
#         if t is a leaf:  t.grad += g                   ACCUMULATE, never overwrite
#         else:            for (inp, gi) in zip(t._node.inputs, formula(g, t._node, t.data)):
#                              if inp.requires_grad: grads[id(inp)] += unbroadcast(gi, inp.shape)
# ```
#
# Two rules make this correct. **Order**: a tensor's gradient is complete only after *every*
# tensor that used it has been processed — the reverse topological order guarantees that.
# **Accumulation**: a tensor used twice (`y = x * x`, or a weight shared by two layers)
# receives the *sum* of the gradients from each use; and `.grad` on a leaf accumulates across
# `backward` calls, which is why training loops call `zero_grad()`.
#
# A `Function` subclass (used by later modules for fused ops) brings its own
# `backward(ctx, grad)`; its context is `node.saved["ctx"]`.
#
# **Freeing the graph.** The values a graph saves for backward (every activation of every
# layer) are most of a training step's memory. PyTorch frees them as soon as `backward` has
# used them, so calling `loss.backward()` a second time raises "Trying to backward through the
# graph a second time" — unless the first call passed `retain_graph=True`. `_vjp` (provided)
# does the same bookkeeping: it refuses a node a previous pass released, and releases each
# node it uses unless asked to retain the graph. Nodes that save nothing (`+`, `sum`,
# `reshape`, ...) can be walked again, as in PyTorch.

# %%
#| export
def _saves_values(node: Node) -> bool:
    """Whether ``node``'s derivative reads values a backward pass frees (see SAVES_VALUES)."""
    op = node.op
    if not isinstance(op, str):
        return bool(node.saved["ctx"].saved)
    if op in SAVES_VALUES:
        return True
    if op == "getitem":  # an index array is saved; a basic slice is not
        index = node.saved["index"]
        return any(isinstance(i, np.ndarray) for i in
                   (index if isinstance(index, tuple) else (index,)))
    return False


def _vjp(node: Node, grad: np.ndarray, out: np.ndarray,
         retain_graph: bool = False) -> tuple[np.ndarray | None, ...]:
    """Gradients for each input of ``node`` (provided): the table, or a Function's backward.

    Raises ``RuntimeError`` if an earlier backward pass freed what this node saved.
    """
    if node.released:
        raise RuntimeError("Trying to backward through the graph a second time (or directly "
                           "access saved tensors after they have already been freed). Specify "
                           "retain_graph=True if you need to backward through the graph a "
                           "second time.")
    op = node.op
    if isinstance(op, str):
        formula = DERIVATIVES.get(op)
        if formula is None:
            raise RuntimeError(f"autograd: no derivative for operation {op!r}")
        grads = formula(grad, node, out)
    else:
        grads = op.backward(node.saved["ctx"], grad)
    if not isinstance(grads, tuple):
        grads = (grads,)
    if not retain_graph and _saves_values(node):
        node.released = True
        if not isinstance(node.op, str):
            node.saved["ctx"].saved = ()  # free a Function's saved arrays now
    return grads


def backward(tensor: Tensor, gradient: Tensor | np.ndarray | None = None,
             retain_graph: bool = False) -> None:
    """Fill ``.grad`` of every leaf ``tensor`` depends on (what ``tensor.backward()`` calls).

    Args:
        tensor: the output to differentiate (usually a scalar loss).
        gradient: ``dL/d(tensor)``, same shape as ``tensor``; may be omitted only for a
            one-element tensor (it is then 1).
        retain_graph: keep the saved values so the graph can be walked again (pass it on
            to ``_vjp``, which frees them otherwise).

    Raises:
        RuntimeError: ``tensor`` does not require grad, or is not a scalar and no
            ``gradient`` was given ("grad can be implicitly created only for scalar outputs").

    APPROACH:
        1. Errors first (see Raises; match PyTorch's messages).
        2. The seed: ``np.ones_like(tensor.data)`` or the given gradient's array (check its
           shape equals ``tensor.shape``, else ``RuntimeError``).
        3. ``grads = {id(tensor): seed}``; walk ``reversed(topological_order(tensor))``.
        4. For a tensor ``t`` with a gradient ``g`` waiting: if ``t._node is None`` (a leaf) and
           ``t.requires_grad``: ``t.grad = Tensor(g)`` the first time, else
           ``Tensor(t.grad.data + g)``. Otherwise call ``_vjp(t._node, g, t.data,
           retain_graph)`` and for each input with ``requires_grad`` and a non-None gradient,
           **add** it into ``grads[id(inp)]`` — after ``unbroadcast(gi, inp.shape)`` when its
           shape differs from the input's (only broadcast inputs need it; skipping the call
           otherwise saves time on every node).
        5. Cast each gradient to its tensor's dtype when it differs (float32 stays float32).

    EXAMPLE:
        >>> x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
        >>> (x * x).sum().backward()
        >>> x.grad
        tensor([2., 4., 6.])

    HINT: never write into ``grads[...]`` in place (``+=`` on an array): a formula may return
    the same array for two inputs (``grad_add``). Use ``grads[k] = grads[k] + g``.
    """
    # BEGIN SOLUTION NO PROMPT
    if not tensor.requires_grad:
        raise RuntimeError("element 0 of tensors does not require grad and does not have a "
                           "grad_fn")
    if gradient is None:
        if tensor.data.size != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        seed = np.ones_like(tensor.data)
    else:
        seed = np.asarray(gradient.data if isinstance(gradient, Tensor) else gradient)
        if seed.shape != tensor.data.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output has shape {seed.shape} and "
                               f"output has shape {tensor.data.shape}")
        seed = seed.astype(tensor.data.dtype, copy=False)
    grads: dict[int, np.ndarray] = {id(tensor): seed}
    for t in reversed(topological_order(tensor)):
        g = grads.pop(id(t), None)
        if g is None:
            continue
        if t._node is None:
            if t.requires_grad:
                g = np.asarray(g, dtype=t.data.dtype)
                t.grad = Tensor(g.copy()) if t.grad is None else Tensor(t.grad.data + g)
            continue
        for inp, gi in zip(t._node.inputs, _vjp(t._node, g, t.data, retain_graph), strict=True):
            if gi is None or not inp.requires_grad:
                continue
            gi = np.asarray(gi)
            if gi.shape != inp.data.shape:  # NOTE: only a broadcast input needs unbroadcast
                gi = unbroadcast(gi, inp.data.shape)
            if gi.dtype != inp.data.dtype:
                gi = gi.astype(inp.data.dtype)
            key = id(inp)
            grads[key] = gi if key not in grads else grads[key] + gi
    return
    # END SOLUTION
    raise NotImplementedError("module 05: implement backward (see its docstring)")  # STUB


# %% [markdown]
# `x.backward()` is module 01's `Tensor.backward`, which calls `backward` in
# `tinytorch/autograd.py` — the file you have not exported yet. The cell below points it at
# the `backward` of this notebook, so the checks use the cells you just ran, without exporting
# or restarting. It looks `backward` up at each call: after fixing a formula or the engine,
# re-running that cell is enough.

# %%
import tinytorch.autograd as _exported_autograd


def _notebook_backward(*args, **kwargs):
    return backward(*args, **kwargs)


_exported_autograd.backward = _notebook_backward

# %% [raw]
# # BEGIN QUESTION
# name: engine
# points: 0

# %% [markdown]
# ### Check: the engine

# %% [raw]
# # BEGIN TESTS

# %%
def test_backward_fills_leaf_gradients(backward, Tensor, np):
    x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = Tensor([0.5], requires_grad=True)
    backward((x * x + b).sum())
    got = None if x.grad is None else x.grad.numpy().tolist()
    assert got == [2.0, 4.0, 6.0], (
        f"backward((x * x + b).sum()) gives x.grad = 2x = [2, 4, 6] (x is used twice: the two "
        f"uses add up), got {got}: every leaf's gradient is what the optimizer steps along")
    got_b = None if b.grad is None else (b.grad.shape, b.grad.numpy().tolist())
    assert got_b == ((1,), [3.0]), (
        f"b of shape (1,) was broadcast over 3 elements, so b.grad is their sum, shape (1,) "
        f"value [3]; got (shape, values) {got_b}: unbroadcast each input's gradient")
    backward((x * 2.0).sum())
    again = x.grad.numpy().tolist()
    assert again == [4.0, 6.0, 8.0], (
        f"a second backward adds into .grad: [2, 4, 6] + [2, 2, 2] = [4, 6, 8], got {again}: "
        "leaf gradients accumulate, which is why training calls zero_grad()")
    assert x.grad.dtype == np.float32, (
        f"float32 inputs keep float32 gradients, got {x.grad.dtype}: float64 doubles memory")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 8. Trust, but verify: `gradcheck` (provided)
#
# Any derivative formula can be checked against the definition, with **central differences**:
#
# ```
#   df/dx_i ≈ (f(x + ε e_i) - f(x - ε e_i)) / (2ε)        error O(ε²)
# ```
#
# in **float64** (in float32, `ε = 1e-6` is lost in rounding). It costs two forward passes per
# input *element* — hopeless for training (millions of parameters), perfect for tests. The
# function below is provided; use it to test each formula you wrote.

# %%
#| export
def gradcheck(fn: Callable[..., Tensor], inputs: Sequence[np.ndarray | Tensor], *,
              eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-4) -> bool:
    """Compare autograd's gradients of ``fn(*inputs).sum()`` with central differences.

    Args:
        fn: takes Tensors, returns a Tensor.
        inputs: arrays (converted to float64 Tensors with ``requires_grad=True``).

    Returns:
        True when all gradients agree.

    Raises:
        AssertionError: naming the input, the element and both values when one disagrees.

    Example:
        >>> gradcheck(lambda a, b: a * b, [np.ones(3), np.arange(3.0)])
        True
    """
    arrays = [np.array(x.data if isinstance(x, Tensor) else x, dtype=np.float64)
              for x in inputs]
    tensors = [Tensor(a.copy(), requires_grad=True) for a in arrays]
    fn(*tensors).sum().backward()
    all_agree = True  # a disagreement raises below, naming input and element
    for i, (arr, t) in enumerate(zip(arrays, tensors, strict=True)):
        analytic = np.zeros_like(arr) if t.grad is None else t.grad.data
        for idx in np.ndindex(arr.shape):
            plus, minus = arr.copy(), arr.copy()
            plus[idx] += eps
            minus[idx] -= eps
            args_p = [Tensor(plus) if j == i else Tensor(a) for j, a in enumerate(arrays)]
            args_m = [Tensor(minus) if j == i else Tensor(a) for j, a in enumerate(arrays)]
            numeric = (fn(*args_p).data.sum() - fn(*args_m).data.sum()) / (2 * eps)
            if not np.isclose(analytic[idx], numeric, atol=atol, rtol=rtol):
                raise AssertionError(
                    f"gradcheck: input {i}, element {idx}: autograd gives {analytic[idx]:.6g}, "
                    f"finite differences give {numeric:.6g}")
    return all_agree


# %% [raw]
# # BEGIN QUESTION
# name: formulas
# points: 0

# %% [markdown]
# ### Check: derivative formulas, broadcasting, accumulation and the engine

# %% [raw]
# # BEGIN TESTS

# %%
def test_elementwise_gradients_match_finite_differences(gradcheck, np):
    rng = np.random.default_rng(0)
    a = rng.uniform(0.5, 2.0, (2, 3))
    b = rng.uniform(0.5, 2.0, (2, 3))
    checks = {
        "add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
        "div": lambda x, y: x / y, "pow": lambda x, y: x ** 3, "exp": lambda x, y: x.exp(),
        "log": lambda x, y: x.log(), "sqrt": lambda x, y: x.sqrt(),
        "tanh": lambda x, y: x.tanh(), "neg": lambda x, y: -x,
    }
    for name, f in checks.items():
        try:
            gradcheck(f, [a, b])
        except AssertionError as err:
            raise AssertionError(f"{name}: {err}. A wrong derivative here silently corrupts "
                                 "every model that uses this op") from None

# %%
def test_broadcast_gradient_is_reduced(Tensor, np):
    x = Tensor(np.ones((4, 3), dtype=np.float32), requires_grad=True)
    b = Tensor(np.zeros(3, dtype=np.float32), requires_grad=True)
    (x + b).sum().backward()
    assert b.grad is not None, (
        f"b requires grad, so backward must fill b.grad, got {b.grad!r}")
    assert b.grad.shape == (3,), (
        f"b.grad must have b's shape (3,), got {b.grad.shape}: unbroadcast the gradient, or the "
        "optimizer cannot subtract it from the bias")
    assert np.allclose(b.grad.numpy(), 4.0), (
        f"each bias element was added to 4 rows, so its gradient is 4, got "
        f"{b.grad.numpy().tolist()}")

# %%
def test_matmul_and_reduction_gradients(gradcheck, np):
    rng = np.random.default_rng(1)
    checks = [
        ("matmul (2, 3) @ (3, 4)", lambda a, b: a @ b,
         [rng.standard_normal((2, 3)), rng.standard_normal((3, 4))],
         "dA = G @ Bᵀ and dB = Aᵀ @ G; check the shapes"),
        ("batched matmul (5, 2, 3) @ (3, 4)", lambda a, b: a @ b,
         [rng.standard_normal((5, 2, 3)), rng.standard_normal((3, 4))],
         "swap only the last two axes (np.swapaxes, not .T); unbroadcast sums B's batch"),
        ("sum(dim=1)", lambda a: a.sum(dim=1), [rng.standard_normal((2, 3))],
         "re-insert the reduced axis (_expand_reduced), then broadcast to a's shape"),
        ("mean(dim=0, keepdim=True)", lambda a: a.mean(dim=0, keepdim=True),
         [rng.standard_normal((2, 3))], "like sum, divided by the count a.size // out.size"),
        ("max(dim=1).values", lambda a: a.max(dim=1).values, [rng.standard_normal((3, 4))],
         "only the winning element (node.saved['indices']) gets the gradient"),
        ("transpose(0, 1).reshape(6)", lambda a: a.transpose(0, 1).reshape(6),
         [rng.standard_normal((2, 3))], "a view's backward is the inverse view"),
        ("permute(2, 0, 1).contiguous()", lambda a: a.permute(2, 0, 1).contiguous(),
         [rng.standard_normal((2, 3, 4))],
         "undo a permute with the inverse permutation np.argsort(dims); contiguous passes grad"),
        ("amax(dim=1)", lambda a: a.amax(dim=1), [rng.standard_normal((3, 4))],
         "the maximum of each row gets the gradient (shared evenly on ties)"),
        ("abs, clamp(-0.5, 0.5)", lambda a: a.abs() + a.clamp(min=-0.5, max=0.5),
         [rng.standard_normal((3, 4))], "abs' = sign(a); clamp passes grad only inside bounds"),
    ]
    for name, f, inputs, hint in checks:
        try:
            gradcheck(f, inputs)
        except AssertionError as err:
            raise AssertionError(f"{name}: {err}. Hint: {hint}") from None

# %%
def test_gradients_accumulate(Tensor, np):
    x = Tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    (x * x).sum().backward()
    assert np.allclose(x.grad.numpy(), [4.0, 8.0]), (
        f"two backward calls must ADD their gradients (2x + 2x = [4, 8]), got "
        f"{x.grad.numpy().tolist()}: .grad accumulates until zero_grad(), which gradient "
        "accumulation over micro-batches relies on")
    y = Tensor([3.0], requires_grad=True)
    (y * y + y).sum().backward()
    assert np.allclose(y.grad.numpy(), [7.0]), (
        f"y is used three times: d(y*y + y)/dy = 2y + 1 = 7, got {y.grad.numpy().tolist()}; "
        "sum the gradient of every use")

# %%
def test_indexing_repeats_add_up(Tensor, np):
    x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
    x[np.array([0, 0, 2])].sum().backward()
    assert np.allclose(x.grad.numpy(), [2.0, 0.0, 1.0]), (
        f"x[[0, 0, 2]] uses x[0] twice, so it gets gradient 2: expected [2, 0, 1], got "
        f"{x.grad.numpy().tolist()}; use np.add.at, not g[idx] = grad")

# %%
def test_backward_errors_like_pytorch(Tensor, np):
    x = Tensor([1.0, 2.0], requires_grad=True)
    try:
        (x * 2).backward()
    except NotImplementedError:
        raise  # a stub: its own message says what to write (it is also a RuntimeError)
    except RuntimeError as err:
        assert "scalar" in str(err), (
            f"backward() on shape (2,) without a gradient raised RuntimeError({str(err)!r}); "
            "say 'grad can be implicitly created only for scalar outputs', as PyTorch does, "
            "so a student who forgot .sum() on the loss learns why")
    else:
        raise AssertionError("backward() on a non-scalar without gradient must raise "
                             "RuntimeError, as in PyTorch")
    y = x * 2
    y.backward(Tensor([1.0, 10.0]))
    seeded = x.grad.numpy()
    assert np.allclose(seeded, [2.0, 20.0]), (
        f"y = 2x; y.backward([1, 10]) seeds dL/dy = [1, 10], so x.grad = [2, 20], got {seeded}")
    c = Tensor([1.0, 2.0])
    (x * c).sum().backward()
    assert c.grad is None, (
        f"tensors without requires_grad get no gradient (it would only cost memory), got "
        f"c.grad = {c.grad}")
    loss = (x * c).sum()
    loss.backward()
    try:
        loss.backward()
    except RuntimeError:
        pass
    else:
        raise AssertionError("a second backward through the same graph must raise RuntimeError "
                             "(PyTorch frees the saved values): pass retain_graph to _vjp")
    kept = (x * c).sum()
    kept.backward(retain_graph=True)
    kept.backward()  # allowed: the first call kept the graph

# %%
def test_gradient_conventions_like_pytorch(Tensor, np):
    z = Tensor([0.0, 2.0], requires_grad=True)
    (z ** 0).sum().backward()
    assert z.grad.numpy().tolist() == [0.0, 0.0], (
        f"x ** 0 is the constant 1: its gradient is 0 everywhere, also at x = 0 (PyTorch); "
        f"got {z.grad.numpy().tolist()} — the power rule gives 0 * 0**-1 = nan there")
    m = Tensor([1.0, float("nan"), 3.0], requires_grad=True)
    with np.errstate(invalid="ignore"):
        m.abs().sum().backward()
    assert m.grad.numpy().tolist() == [1.0, 0.0, 1.0], (
        f"the gradient of |x| at NaN is 0 in PyTorch (its sign of NaN is 0), got "
        f"{m.grad.numpy().tolist()}: take np.sign of np.nan_to_num(a)")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 9. Systems view: what autograd costs
#
# **Memory.** The backward pass needs values from the forward pass: `mul` needs both inputs,
# `exp`/`tanh`/`sqrt` need their output, `matmul` needs both matrices. Every node keeps its
# inputs alive until backward has run, so **training memory ≈ parameters + gradients +
# optimizer state + all saved activations**. For a float32 MLP with batch `B` and hidden width
# `H`, each saved `(B, H)` tensor costs `B·H·4` bytes; with `k` saved tensors per layer over `L`
# layers that is `k·L·B·H·4` bytes — it grows with the batch, unlike the weights (`L·H²·4`). This is why inference (`with no_grad():` records
# nothing and frees each activation immediately) fits far larger batches than training.
#
# **FLOPs.** For `C = A @ B` with `A (n, k)`, `B (k, m)`: the forward costs `2nkm` FLOPs; the
# backward computes `G @ Bᵀ` and `Aᵀ @ G`, `2nkm` each. So **a training step costs about 3×
# the forward pass** (1 forward + 2 backward), the rule of thumb used to estimate training
# compute (6·params·tokens for transformers = 2 forward + 4 backward per parameter per token).
#
# **How PyTorch does it.** The same design at scale: each op's `grad_fn` (e.g.
# `MulBackward0`) is a node with `next_functions`; the engine (C++) runs a dependency-counted
# topological walk, possibly on several threads/devices; derivative formulas are generated
# from one table (`derivatives.yaml`) — the counterpart of your `DERIVATIVES`. Two differences
# you can observe: PyTorch **frees the graph** after `backward()` (calling it twice raises
# unless `retain_graph=True`), and it only stores `.grad` on leaves (`retain_grad()` for others).
# `torch.autograd.gradcheck` is exactly your `gradcheck`, in float64.

# %%
# Measure it: the activations a 3-layer MLP keeps alive for backward.
B, H = 64, 256
x = Tensor(np.random.default_rng(0).standard_normal((B, H)).astype(np.float32))
ws = [Tensor(np.zeros((H, H), dtype=np.float32), requires_grad=True) for _ in range(3)]
h = x
for w in ws:
    h = (h @ w).tanh()
saved = sum(t.data.nbytes for t in topological_order(h) if t._node is not None)
print(f"parameters: {sum(w.data.nbytes for w in ws):,} B, graph activations: {saved:,} B")
# Expected: parameters: 786,432 B, graph activations: 393,216 B (6 tensors of 64x256x4 B)

# %% [markdown]
# ## 10. ML systems thinking (graded by hand)

# %% [raw]
# # BEGIN QUESTION
# name: written_memory
# manual: true
# points: 5

# %% [markdown]
# **Q1 · Activation memory.** A 20-layer MLP with hidden width 4096 is trained with batch 512
# in float32. Roughly how much memory do the saved activations take if each layer keeps two
# `(batch, width)` tensors for backward? How does this change at batch 32, and what does
# `with no_grad():` change at inference?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# Per layer 2 × 512 × 4096 × 4 B ≈ 16.8 MB; 20 layers ≈ 336 MB (plus the weights,
# 20 × 4096² × 4 B ≈ 1.3 GB, and as much again for gradients). At batch 32 activations shrink
# 16× to ≈ 21 MB — activation memory is linear in the batch, weights are not. Under `no_grad()`
# no node is recorded, so each activation can be freed as soon as the next layer consumed it:
# peak activation memory becomes about one or two layers' worth instead of all 20.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_reverse_mode
# manual: true
# points: 5

# %% [markdown]
# **Q2 · Reverse vs forward mode.** Why does deep learning use reverse-mode differentiation
# rather than forward mode (or finite differences) to get the gradient of a scalar loss with
# respect to 10⁸ parameters? Estimate the cost of each in forward passes.

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# Reverse mode computes the gradient w.r.t. *all* inputs of one scalar output in one backward
# pass, ≈ 2 forward passes of work (≈ 3 with the forward itself). Forward mode propagates one
# input direction per pass, so 10⁸ passes; central differences need 2 × 10⁸ forward passes and
# lose precision in float32. The price of reverse mode is memory: it must store (or recompute)
# the forward activations, whereas forward mode needs none.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_accumulation
# manual: true
# points: 5

# %% [markdown]
# **Q3 · Accumulation.** `.grad` accumulates across `backward()` calls instead of being
# overwritten. Give one systems reason this is useful, and one bug it causes if a training loop
# forgets `zero_grad()`.

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# Gradient accumulation: to train with an effective batch of 1024 on hardware that fits 128,
# run 8 micro-batches and call `backward()` on each (loss scaled by 1/8) before one optimizer
# step — memory stays that of batch 128. Accumulation is also what makes a tensor used twice
# (shared weights, residual connections) receive the sum of its gradients. Forgetting
# `zero_grad()` makes step t use the sum of all previous gradients: the effective learning rate
# grows every step and training diverges or oscillates.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## Summary
#
# Your engine turns module 01's recorded graph into gradients: topological order, one VJP per
# op, unbroadcasting, accumulation. Nothing in modules 01–04 changed — every layer and loss
# you wrote is now differentiable. Export with `python export.py 05`; module 06 uses `.grad` to
# update parameters.
