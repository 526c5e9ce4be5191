"""Hidden suite · module 05 (autograd). Cases are probes; the trusted parent compares.

Each case builds a small graph with the package under test ``tt``, runs backward with a random
upstream gradient (so transposed or mis-scaled formulas cannot hide behind all-ones) and
returns the leaves' gradients as arrays. Points sum to module 05's ``points`` (50).
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

from autograder.suite import Suite, outcome

suite = Suite(module="05_autograd", version="2027.2")
case = suite.case
UNBROADCAST = suite.unit("unbroadcast", "unbroadcast")
TOPOLOGICAL = suite.unit("topological_order", "topological_order")
ENGINE = suite.unit("backward", "backward", uses=(TOPOLOGICAL, UNBROADCAST))
ADD_SUB = suite.unit("grad_add, grad_sub", "grad_add", "grad_sub", uses=(ENGINE,))
MUL_DIV = suite.unit("grad_mul, grad_div", "grad_mul", "grad_div", uses=(ENGINE,))
NEG_POW = suite.unit("grad_neg, grad_pow", "grad_neg", "grad_pow", uses=(ENGINE,))
EXP_LOG_SQRT = suite.unit("grad_exp, grad_log, grad_sqrt", "grad_exp", "grad_log", "grad_sqrt",
                          uses=(ENGINE,))
TANH_ABS_CLAMP = suite.unit("grad_tanh, grad_abs, grad_clamp", "grad_tanh", "grad_abs",
                            "grad_clamp", uses=(ENGINE,))
MATMUL = suite.unit("grad_matmul", "grad_matmul", uses=(ENGINE,))
SUM_MEAN = suite.unit("grad_sum, grad_mean", "grad_sum", "grad_mean", uses=(ENGINE,))
MAX = suite.unit("grad_max, grad_amax", "grad_max", "grad_amax", uses=(ENGINE,))
VIEWS = suite.unit("view gradients", "grad_reshape", "grad_transpose", "grad_permute",
                   "grad_contiguous", uses=(ENGINE,))
GETITEM = suite.unit("grad_getitem", "grad_getitem", uses=(ENGINE,))


def _autograd(tt):
    """The package's autograd module (``tt.autograd`` need not be imported eagerly)."""
    return importlib.import_module(f"{tt.__name__}.autograd")


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _pos(rng, *shape):
    return rng.uniform(0.5, 2.0, shape).astype(np.float32)


def _suite_ops(tt):
    """Operations of the suite's own, as ``Function`` subclasses with their derivatives
    written here: the engine's cases build their graphs from these, so they grade the
    engine (``backward``, ``topological_order``, ``unbroadcast``) and none of the student's
    derivatives (each of those has cases of its own)."""

    function: Any = tt.Function

    def op(forward, backward, saves=True):
        class SuiteOp(function):
            @staticmethod
            def forward(ctx, *arrays):
                if saves:
                    ctx.save_for_backward(*arrays)
                return forward(*arrays)

            @staticmethod
            def backward(ctx, grad):
                return backward(grad, *ctx.saved)

        return SuiteOp.apply

    class Ops:
        add = op(np.add, lambda g, *_: (g, g), saves=False)
        mul = op(np.multiply, lambda g, a, b: (g * b, g * a))
        matmul = op(np.matmul, lambda g, a, b: (g @ np.swapaxes(b, -1, -2),
                                                np.swapaxes(a, -1, -2) @ g))
        tanh = op(np.tanh, lambda g, a: (g * (1 - np.tanh(a) ** 2),))
        sum = op(lambda a: np.asarray(a.sum()), lambda g, a: (np.broadcast_to(g, a.shape).copy(),))
        square = op(np.square, lambda g, a: (2 * a * g,))
        plus_one = op(lambda a: a + 1, lambda g, *_: (g,), saves=False)

    return Ops


def _grads(tt, rng, fn, *arrays):
    """Leaves from ``arrays``; backward of ``fn(*leaves)`` with a random upstream gradient."""
    leaves = [tt.Tensor(a.copy(), requires_grad=True) for a in arrays]
    out = fn(*leaves)
    upstream = rng.standard_normal(out.shape).astype(out.numpy().dtype)
    out.backward(tt.Tensor(upstream))
    return [None if t.grad is None else np.asarray(t.grad.numpy()).copy() for t in leaves]


# ----------------------------------------------------------------------------- engine (9)
@case(unit=UNBROADCAST, points=2,
      hint="unbroadcast: sum extra leading dims away, then sum (keepdims) where the input had "
           "size 1.",
      stated={'unbroadcast': ('Sum ``grad`` down to ``shape``: the backward of broadcasting.',
                              'While ``grad`` has more dimensions than ``shape``, sum over axis 0',
                              'For each axis ``i`` where ``shape[i] == 1`` but ``grad.shape[i] != 1``, sum over it with ``keepdims=True``.',
                              '``shape == ()`` (a scalar input) means: sum everything.')})
def unbroadcast_reduces_to_input_shape(tt, rng):
    ub = _autograd(tt).unbroadcast
    g = _f32(rng, 2, 4, 3)
    # np.asarray: for shape () a NumPy scalar and a 0-d array are the same answer
    return [np.asarray(ub(g, shape)) for shape in ((4, 3), (3,), (4, 1), (1, 1, 3), (),
                                                   (2, 4, 3))]


def _topological(got, expected):
    """Parent-side check: ``got["order"]`` lists the reference's nodes once each, every input
    before the tensor made from it (edges from the reference's answer), the root last."""
    if not (isinstance(got, dict) and isinstance(got.get("order"), list)):
        return False, "the result is not the mapping the test builds"
    order, nodes = got["order"], sorted(expected["order"])
    if sorted(order) != nodes:
        return False, (f"the order has {len(order)} entries for {len(nodes)} tensors (each "
                       "tensor of the graph exactly once)")
    pos = {label: i for i, label in enumerate(order)}
    for src, dst in expected["edges"]:
        if src in pos and dst in pos and pos[src] > pos[dst]:
            return False, "a tensor comes before one of its inputs"
    if order[-1] != expected["order"][-1]:
        return False, "the root (the tensor backward starts from) must come last"
    return True, ""


@case(unit=TOPOLOGICAL, points=2, check=_topological,
      hint="topological_order: post-order DFS: each tensor once, after all of its inputs; root "
           "last.",
      stated={'topological_order': ('Every tensor ``root`` depends on (``root`` included), inputs before the outputs.',
                                    'Each tensor must appear **once**, after all of its inputs.',
                                    'Return ``order`` (``order[-1] is root``).')})
def topological_order_each_tensor_once_inputs_first(tt, rng):
    nodes = [tt.Tensor(_f32(rng, 3), requires_grad=True)
             for _ in range(int(rng.integers(1, 3)))]
    edges: list[tuple[int, int]] = []
    for _ in range(int(rng.integers(3, 7))):
        i, j = (int(k) for k in rng.integers(0, len(nodes), 2))
        kind = int(rng.integers(3))
        out = (nodes[i] + nodes[j] if kind == 0 else nodes[i] * nodes[j] if kind == 1
               else nodes[i] * float(rng.uniform(0.5, 2.0)))
        edges += [(i, len(nodes))] + ([(j, len(nodes))] if kind < 2 else [])
        nodes.append(out)
    # random labels: no fixed list of numbers is a valid order for every variant
    names = [int(n) for n in rng.permutation(1000)[:len(nodes)]]
    label = {id(t): names[k] for k, t in enumerate(nodes)}
    order = _autograd(tt).topological_order(nodes[-1])
    return {"order": [label.get(id(t), -1) for t in order],
            "edges": [(names[a], names[b]) for a, b in edges]}


@case(unit=ENGINE, points=3,
      hint="backward: .grad accumulates, across backward calls and over every use of a tensor "
           "(add each new gradient to the one already there).",
      stated={'backward': ('``t.grad = Tensor(g)`` the first time, else ``Tensor(t.grad.data + g)``.',
                           '**add** it into ``grads[id(inp)]``'),
              'test:test_gradients_accumulate': 'two backward calls must ADD their gradients'})
def gradients_accumulate_over_uses_and_calls(tt, rng):
    ops = _suite_ops(tt)
    x = tt.Tensor(_f32(rng, 4), requires_grad=True)
    ops.sum(ops.add(ops.mul(x, x), x)).backward()
    first = x.grad.numpy().copy()
    ops.sum(ops.mul(x, tt.Tensor(_f32(rng, 4)))).backward()
    w = tt.Tensor(_f32(rng, 3, 3), requires_grad=True)
    h = tt.Tensor(_f32(rng, 2, 3))
    ops.sum(ops.matmul(ops.matmul(h, w), w)).backward()  # a weight shared by two "layers"
    return [first, x.grad.numpy().copy(), w.grad.numpy().copy()]


@case(unit=ENGINE, points=3,
      hint="backward: scalar outputs get gradient 1, others need `gradient` (RuntimeError if "
           "not); a second backward through values the first one freed raises RuntimeError unless "
           "the first passed retain_graph=True (pass it on to _vjp).",
      stated={'backward': ('RuntimeError: ``tensor`` does not require grad, or is not a scalar and no ``gradient`` was given',
                           'gradient: ``dL/d(tensor)``, same shape as ``tensor``; may be omitted only for a one-element tensor (it is then 1).',
                           'retain_graph: keep the saved values so the graph can be walked again (pass it on to ``_vjp``, which frees them otherwise).',
                           'if ``t._node is None`` (a leaf) and ``t.requires_grad``: ``t.grad = Tensor(g)`` the first time',
                           'for each input with ``requires_grad`` and a non-None gradient',
                           "Cast each gradient to its tensor's dtype when it differs (float32 stays float32)."),
              '_vjp': 'Raises ``RuntimeError`` if an earlier backward pass freed what this node saved.',
              'test:test_backward_errors_like_pytorch': 'a second backward through the same graph must raise RuntimeError (PyTorch frees the saved values): pass retain_graph to _vjp'})
def backward_seed_errors_and_no_grad_inputs(tt, rng):
    ops = _suite_ops(tt)
    x = tt.Tensor(_f32(rng, 3), requires_grad=True)
    c = tt.Tensor(_f32(rng, 3))
    y = ops.mul(x, c)
    err = outcome(y.backward)
    seed = _f32(rng, 3)
    ops.mul(x, c).backward(tt.Tensor(seed))
    with tt.no_grad():
        z = ops.mul(x, tt.Tensor(_f32(rng, 3)))
    out = {"nonscalar": err, "x": x.grad.numpy().copy(), "c_grad_is_none": c.grad is None,
           "no_grad_output": bool(z.requires_grad),
           "no_grad_backward": outcome(ops.sum(z).backward),
           "grad_is_tensor": isinstance(x.grad, tt.Tensor), "dtype": str(x.grad.dtype)}
    w = tt.Tensor(_f32(rng, 3), requires_grad=True)
    loss = ops.sum(ops.square(w))
    loss.backward()
    out["second"] = outcome(loss.backward)
    again = ops.sum(ops.square(w))
    again.backward(retain_graph=True)
    again.backward()
    plain = ops.sum(ops.plus_one(w))
    plain.backward()
    out["no_saved_values_twice"] = outcome(plain.backward)
    out["w"] = w.grad.numpy().copy()
    return out


# ----------------------------------------------------------------------------- element-wise (16)
@case(unit=ADD_SUB, points=3, rtol=1e-4,
      hint="grad_add/grad_sub: add/sub pass grad through; a broadcast input's gradient is summed "
           "back.",
      stated={'grad_add': ('both inputs receive ``grad`` unchanged',
                           'the engine calls ``unbroadcast`` on each result for you.'),
              'grad_sub': '``out = a - b``: ``a`` receives ``grad``, ``b`` receives ``-grad``.'})
def add_sub_gradients_with_broadcasting(tt, rng):
    a, b, c = _f32(rng, 4, 1, 3), _f32(rng, 5, 1), _f32(rng, 3)
    return [_grads(tt, rng, lambda x, y: x + y, a, b), _grads(tt, rng, lambda x, y: x - y, a, c),
            _grads(tt, rng, lambda x, y: y - x, c, b), _grads(tt, rng, lambda x: 2.0 - x, c)]


@case(unit=MUL_DIV, points=3, rtol=1e-4,
      hint="grad_mul/grad_div: d(ab) = (b, a) · grad; d(a/b) = (1/b, -a/b²) · grad; then "
           "unbroadcast.",
      stated={'grad_mul': ('``out = a * b``: ``da = grad * b``, ``db = grad * a`` (product rule).',
                           'for ``x * x`` both entries are ``grad * x`` and the engine adds them to ``2x·grad``.'),
              'grad_div': '``out = a / b``: ``da = grad / b``, ``db = -grad * a / b**2``.',
              'grad_add': 'the engine calls ``unbroadcast`` on each result for you.'})
def mul_div_gradients_with_broadcasting(tt, rng):
    a, b, c = _f32(rng, 2, 3), _pos(rng, 3), _pos(rng, 2, 1)
    return [_grads(tt, rng, lambda x, y: x * y, a, b), _grads(tt, rng, lambda x, y: x / y, a, b),
            _grads(tt, rng, lambda x, y: y / x, c, a), _grads(tt, rng, lambda x: x * x, a)]


@case(unit=NEG_POW, points=3, rtol=1e-4,
      hint="grad_neg: d(-a) = -grad; grad_pow: d(a**p) = p·a**(p-1)·grad for any number p, and x "
           "** 0 has gradient 0 (even at 0), as in PyTorch.",
      stated={'grad_neg': '``out = -a``: ``da = -grad``.',
              'grad_pow': ('``out = a ** p`` for a number ``p = node.saved["exponent"]``: ``da = grad * (p * a**(p-1))``.',
                           '``p == 0``: ``a ** 0`` is the constant 1, so its gradient is 0 everywhere — also at ``a = 0``')})
def neg_and_pow_gradients(tt, rng):
    a = _pos(rng, 3, 2)
    z = _f32(rng, 5)
    z[0] = 0.0
    return [_grads(tt, rng, lambda x: -x, a), _grads(tt, rng, lambda x: x ** 2, a),
            _grads(tt, rng, lambda x: x ** 3, a), _grads(tt, rng, lambda x: x ** 0.5, a),
            _grads(tt, rng, lambda x: x ** -1.5, a), _grads(tt, rng, lambda x: x ** 0, z)]


@case(unit=EXP_LOG_SQRT, points=3, rtol=1e-4,
      hint="grad_exp/grad_log/grad_sqrt: exp' = out, log' = 1/a, sqrt' = 1/(2·out).",
      stated={'grad_exp': '``out = exp(a)``: ``da = grad * out``',
              'grad_log': '``out = log(a)``: ``da = grad / a``',
              'grad_sqrt': '``out = sqrt(a)``: ``da = grad / (2 * out)``'})
def exp_log_sqrt_gradients(tt, rng):
    a = _pos(rng, 2, 3)
    return [_grads(tt, rng, lambda x: x.exp(), a), _grads(tt, rng, lambda x: x.log(), a),
            _grads(tt, rng, lambda x: x.sqrt(), a)]


@case(unit=TANH_ABS_CLAMP, points=3, rtol=1e-4,
      hint="grad_tanh: 1 - out²; grad_abs: sign(a), and sign(NaN) is 0; grad_clamp passes grad "
           "where min <= a <= max, with np.where (not grad * mask, so inf * 0 never makes NaN).",
      stated={'grad_tanh': '``out = tanh(a)``: ``da = grad * (1 - out**2)``.',
              'grad_abs': ('``out = |a|``: ``da = grad * sign(a)``; PyTorch uses 0 at ``a == 0``',
                           "PyTorch's sign of a NaN is 0 while NumPy's is NaN"),
              'grad_clamp': ('gradient passes where ``min <= a <= max``, else 0.',
                             'the bounds are inclusive, as in PyTorch',
                             'an infinite ``grad`` where the mask is False must give 0, not ``inf * 0 = nan``.')})
def tanh_abs_clamp_gradients(tt, rng):
    a = _f32(rng, 3, 4)
    a[0, 0] = 0.0
    a[1, 1] = 0.5  # exactly on a clamp bound: inclusive, as in PyTorch
    out = [_grads(tt, rng, lambda x: x.tanh(), a), _grads(tt, rng, lambda x: x.abs(), a),
           _grads(tt, rng, lambda x: x.clamp(min=-0.5, max=0.5), a),
           _grads(tt, rng, lambda x: x.clamp(min=0.0), a)]
    b = _f32(rng, 5)
    b[1] = np.nan
    out.append(_grads(tt, rng, lambda x: x.abs(), b))
    x = tt.Tensor(_f32(rng, 5), requires_grad=True)
    with np.errstate(invalid="ignore"):
        x.clamp(min=0.5).backward(tt.Tensor(np.full(5, np.inf, dtype=np.float32)))
    out.append(x.grad.numpy().copy())
    return out


# ----------------------------------------------------------------------------- matmul (8)
@case(unit=MATMUL, points=4, rtol=1e-4, atol=1e-5,
      hint="grad_matmul: dA = G @ Bᵀ, dB = Aᵀ @ G: check the shapes.",
      stated={'grad_matmul': ('``da = grad @ bᵀ``, ``db = aᵀ @ grad``.',
                              'If ``b`` is 1-D, use ``b[:, None]`` and ``grad[..., None]``',
                              'each only when its input requires grad (``node.inputs[0].requires_grad``), else ``None``')})
def matmul_gradients_2d(tt, rng):
    a, b = _f32(rng, 3, 4), _f32(rng, 4, 5)
    sq = _f32(rng, 4, 4)
    v = tt.Tensor(_f32(rng, 4))  # a constant input: only the other operand needs a gradient
    return [_grads(tt, rng, lambda x, y: x @ y, a, b),
            _grads(tt, rng, lambda x, y: x @ y, sq, sq.T.copy()),
            _grads(tt, rng, lambda y: v @ y, b), _grads(tt, rng, lambda x: x @ v, a)]


@case(unit=MATMUL, points=4, rtol=1e-4, atol=1e-5,
      hint="grad_matmul: swap the last two axes (not .T); batch dims of a shared matrix are "
           "summed.",
      stated={'grad_matmul': ('``out = a @ b`` (NumPy/PyTorch matmul rules)',
                              'If ``b`` is 1-D, use ``b[:, None]`` and ``grad[..., None]``; then, if ``a`` is 1-D, use ``a[None, :]`` and ``grad[..., None, :]`` (in this order, so ``vector @ vector`` works too).',
                              'Undo the promotion: drop axis -2 of ``da`` if ``a`` was 1-D, axis -1 of ``db`` if ``b`` was 1-D. Batch dimensions are left for ``unbroadcast``.',
                              'Use ``np.swapaxes(x, -1, -2)``.')})
def matmul_gradients_batched_and_vectors(tt, rng):
    a, w = _f32(rng, 5, 3, 4), _f32(rng, 4, 2)
    c = _f32(rng, 5, 4, 6)
    d = _f32(rng, 2, 1, 3, 4)
    v, u = _f32(rng, 4), _f32(rng, 3)
    m = _f32(rng, 3, 4)
    return [_grads(tt, rng, lambda x, y: x @ y, a, w), _grads(tt, rng, lambda x, y: x @ y, a, c),
            _grads(tt, rng, lambda x, y: x @ y, d, c), _grads(tt, rng, lambda x, y: x @ y, m, v),
            _grads(tt, rng, lambda x, y: x @ y, u, m), _grads(tt, rng, lambda x, y: x @ y, v, v)]


# ----------------------------------------------------------------------------- reductions (9)
@case(unit=SUM_MEAN, points=4, rtol=1e-4,
      hint="grad_sum/grad_mean: re-insert reduced axes (keepdim=False), broadcast back; mean "
           "divides by n.",
      stated={'grad_sum': ('every summed element receives the gradient of its sum.',
                           '``g = _expand_reduced(grad, node, a.ndim)``; return ``np.broadcast_to(g, a.shape)``.'),
              'grad_mean': ('like ``grad_sum``, divided by the number averaged.',
                            '``count = a.size // out.size``')})
def sum_and_mean_gradients_over_dims(tt, rng):
    a = _f32(rng, 2, 3, 4)
    fns = [lambda x: x.sum(), lambda x: x.sum(dim=1), lambda x: x.sum(dim=(0, 2)),
           lambda x: x.sum(dim=-1, keepdim=True), lambda x: x.mean(),
           lambda x: x.mean(dim=0), lambda x: x.mean(dim=(1, 2), keepdim=True)]
    return [_grads(tt, rng, f, a) for f in fns]


@case(unit=MAX, points=3, rtol=1e-4,
      hint="grad_max: full max, ties share grad evenly and a NaN maximum takes the whole "
           "gradient; max(dim): grad goes to .indices.",
      stated={'grad_max': ('ties share the gradient evenly, the rest get exactly 0',
                           'when ``out`` is NaN use ``mask = np.isnan(a)`` instead, as PyTorch does.',
                           '``np.put_along_axis(g, indices, grad, axis=dim)``.',
                           'with a ``dim`` use the saved ``indices``')})
def max_gradients_full_and_dim(tt, rng):
    a = _f32(rng, 3, 4)
    tied = np.array([[1.0, 3.0, 3.0], [0.0, 3.0, -1.0]], dtype=np.float32)
    nan = _f32(rng, 5)
    nan[int(rng.integers(5))] = np.nan
    with np.errstate(invalid="ignore"):
        nan_max = _grads(tt, rng, lambda t: t.max(), nan)
    return [_grads(tt, rng, lambda x: x.max(), a), _grads(tt, rng, lambda x: x.max(), tied),
            _grads(tt, rng, lambda x: x.max(dim=1).values, a),
            _grads(tt, rng, lambda x: x.max(dim=0, keepdim=True).values, a), nan_max]


@case(unit=MAX, points=2, rtol=1e-4,
      hint="grad_max/grad_amax: amax: ties within each reduction share the gradient evenly.",
      stated={'grad_amax': ('``out = a.amax(dim, keepdim)``: ties share the gradient evenly within each reduction.',
                            '``count = mask.sum(axis=reduced axes, keepdims=True)``; return ``grad_e * mask / count``.')})
def amax_gradients_share_ties(tt, rng):
    tied = np.array([[2.0, 2.0, 1.0], [0.0, 5.0, 5.0]], dtype=np.float32)
    a = _f32(rng, 2, 3, 4)
    return [_grads(tt, rng, lambda x: x.amax(dim=1), tied),
            _grads(tt, rng, lambda x: x.amax(dim=(0, 2), keepdim=True), a),
            _grads(tt, rng, lambda x: x.amax(), tied)]


# ----------------------------------------------------------------------------- views & indexing (6)
@case(unit=VIEWS, points=3, rtol=1e-4,
      hint="grad_reshape/grad_transpose/grad_permute: the backward of a view is the inverse view: "
           "reshape back, argsort(dims).",
      stated={'grad_reshape': "``out = a.reshape(...)``: reshape ``grad`` back to ``a``'s shape.",
              'grad_transpose': '``out = a.transpose(dim0, dim1)``: swap the same two axes of ``grad`` back.',
              'grad_permute': ('apply the inverse permutation ``np.argsort(dims)`` to ``grad``.',
                               'normalise negative dims first'),
              'grad_contiguous': 'a copy with the same values, so ``grad`` passes unchanged.'})
def view_gradients_reshape_transpose_permute(tt, rng):
    a = _f32(rng, 2, 3, 4)
    return [_grads(tt, rng, lambda x: x.reshape(4, 6), a),
            _grads(tt, rng, lambda x: x.transpose(0, 2), a),
            _grads(tt, rng, lambda x: x.permute(2, 0, 1), a),
            _grads(tt, rng, lambda x: x.permute(1, -1, 0), a),
            _grads(tt, rng, lambda x: x.transpose(0, 1).contiguous(), a),
            _grads(tt, rng, lambda x: x.T, a)]


@case(unit=GETITEM, points=3, rtol=1e-4,
      hint="grad_getitem: scatter grad into zeros with np.add.at: repeated indices add up.",
      stated={'grad_getitem': ('``out = a[index]``: scatter ``grad`` into zeros shaped like ``a``, *adding* at repeats.',
                               '``g = np.zeros_like(a)``; ``np.add.at(g, node.saved["index"], grad)``.')})
def getitem_gradients_slices_fancy_and_masks(tt, rng):
    a = _f32(rng, 4, 5)
    idx = np.array([3, 0, 3, 3])
    return [_grads(tt, rng, lambda x: x[1], a), _grads(tt, rng, lambda x: x[:, 1:4], a),
            _grads(tt, rng, lambda x: x[idx], a),
            _grads(tt, rng, lambda x: x[tt.Tensor(idx), 2], a),
            _grads(tt, rng, lambda x: x[a > 0], a)]


# ----------------------------------------------------------------------------- end to end (3)
@case(unit=ENGINE, points=2, rtol=1e-4, atol=1e-5,
      hint="backward on a small MLP: visit every node once, after everything that uses it, "
           "unbroadcast each gradient (the bias is broadcast over the batch) and add it to what "
           "the input already has.",
      stated={'backward': ('Fill ``.grad`` of every leaf ``tensor`` depends on',
                           'walk ``reversed(topological_order(tensor))``.',
                           "**add** it into ``grads[id(inp)]`` — after ``unbroadcast(gi, inp.shape)`` when its shape differs from the input's")})
def mlp_gradients_end_to_end(tt, rng):
    ops = _suite_ops(tt)
    x = tt.Tensor(_f32(rng, 8, 4))
    w1 = tt.Tensor(_f32(rng, 4, 6) * 0.5, requires_grad=True)
    b1 = tt.Tensor(_f32(rng, 6) * 0.1, requires_grad=True)
    w2 = tt.Tensor(_f32(rng, 6, 3) * 0.5, requires_grad=True)
    h = ops.tanh(ops.add(ops.matmul(x, w1), b1))
    out = ops.matmul(h, w2)
    loss = ops.sum(ops.add(ops.mul(out, tt.Tensor(_f32(rng, 8, 3))), ops.square(out)))
    loss.backward()
    return [float(loss.item()), w1.grad.numpy().copy(), b1.grad.numpy().copy(),
            w2.grad.numpy().copy()]
