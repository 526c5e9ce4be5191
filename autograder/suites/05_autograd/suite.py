"""Hidden suite · module 05 (autograd). Cases are probes; the trusted parent compares.

Each case builds a small graph with the package under test ``tt``, runs backward with a random
upstream gradient (so transposed or mis-scaled formulas cannot hide behind all-ones) and
returns the leaves' gradients as arrays. Points sum to module 05's ``points`` (50).
"""

from __future__ import annotations

import importlib

import numpy as np

from autograder.suite import Suite, outcome

suite = Suite(module="05_autograd", version="2027.1")
case = suite.case


def _autograd(tt):
    """The package's autograd module (``tt.autograd`` need not be imported eagerly)."""
    return importlib.import_module(f"{tt.__name__}.autograd")


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _pos(rng, *shape):
    return rng.uniform(0.5, 2.0, shape).astype(np.float32)


def _grads(tt, rng, fn, *arrays):
    """Leaves from ``arrays``; backward of ``fn(*leaves)`` with a random upstream gradient."""
    leaves = [tt.Tensor(a.copy(), requires_grad=True) for a in arrays]
    out = fn(*leaves)
    upstream = rng.standard_normal(out.shape).astype(out.numpy().dtype)
    out.backward(tt.Tensor(upstream))
    return [None if t.grad is None else np.asarray(t.grad.numpy()).copy() for t in leaves]


# ----------------------------------------------------------------------------- engine (9)
@case(points=2, hint="Sum extra leading dims away, then sum (keepdims) where the input had size 1.")
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


@case(points=2, hint="Post-order DFS: each tensor once, after all of its inputs; root last.",
      check=_topological)
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


@case(points=3, hint=".grad accumulates: across backward calls and over every use of a tensor.")
def gradients_accumulate_over_uses_and_calls(tt, rng):
    x = tt.Tensor(_f32(rng, 4), requires_grad=True)
    (x * x + x).sum().backward()
    first = x.grad.numpy().copy()
    (x * 3.0).sum().backward()
    w = tt.Tensor(_f32(rng, 3, 3), requires_grad=True)
    h = tt.Tensor(_f32(rng, 2, 3))
    ((h @ w) @ w).sum().backward()  # a weight shared by two "layers"
    return [first, x.grad.numpy().copy(), w.grad.numpy().copy()]


@case(points=2, hint="Scalar outputs get gradient 1; others need `gradient` (RuntimeError if not).")
def backward_seed_errors_and_no_grad_inputs(tt, rng):
    x = tt.Tensor(_f32(rng, 3), requires_grad=True)
    c = tt.Tensor(_f32(rng, 3))
    y = x * c
    err = outcome(y.backward)
    seed = _f32(rng, 3)
    (x * c).backward(tt.Tensor(seed))
    with tt.no_grad():
        z = x * 2.0
    return {"nonscalar": err, "x": x.grad.numpy().copy(), "c_grad_is_none": c.grad is None,
            "no_grad_output": bool(z.requires_grad),
            "no_grad_backward": outcome(z.sum().backward),
            "grad_is_tensor": isinstance(x.grad, tt.Tensor), "dtype": str(x.grad.dtype)}


# ----------------------------------------------------------------------------- element-wise (16)
@case(points=3, hint="add/sub pass grad through; a broadcast input's gradient is summed back.",
      rtol=1e-4)
def add_sub_gradients_with_broadcasting(tt, rng):
    a, b, c = _f32(rng, 4, 1, 3), _f32(rng, 5, 1), _f32(rng, 3)
    return [_grads(tt, rng, lambda x, y: x + y, a, b), _grads(tt, rng, lambda x, y: x - y, a, c),
            _grads(tt, rng, lambda x, y: y - x, c, b), _grads(tt, rng, lambda x: 2.0 - x, c)]


@case(points=3, hint="d(ab) = (b, a) · grad; d(a/b) = (1/b, -a/b²) · grad; then unbroadcast.",
      rtol=1e-4)
def mul_div_gradients_with_broadcasting(tt, rng):
    a, b, c = _f32(rng, 2, 3), _pos(rng, 3), _pos(rng, 2, 1)
    return [_grads(tt, rng, lambda x, y: x * y, a, b), _grads(tt, rng, lambda x, y: x / y, a, b),
            _grads(tt, rng, lambda x, y: y / x, c, a), _grads(tt, rng, lambda x: x * x, a)]


@case(points=2, hint="d(-a) = -grad; d(a**p) = p·a**(p-1)·grad for any number p.", rtol=1e-4)
def neg_and_pow_gradients(tt, rng):
    a = _pos(rng, 3, 2)
    return [_grads(tt, rng, lambda x: -x, a), _grads(tt, rng, lambda x: x ** 2, a),
            _grads(tt, rng, lambda x: x ** 3, a), _grads(tt, rng, lambda x: x ** 0.5, a),
            _grads(tt, rng, lambda x: x ** -1.5, a)]


@case(points=3, hint="exp' = out, log' = 1/a, sqrt' = 1/(2·out).", rtol=1e-4)
def exp_log_sqrt_gradients(tt, rng):
    a = _pos(rng, 2, 3)
    return [_grads(tt, rng, lambda x: x.exp(), a), _grads(tt, rng, lambda x: x.log(), a),
            _grads(tt, rng, lambda x: x.sqrt(), a)]


@case(points=2, hint="tanh' = 1 - out²; abs' = sign(a); clamp passes grad where min <= a <= max.",
      rtol=1e-4)
def tanh_abs_clamp_gradients(tt, rng):
    a = _f32(rng, 3, 4)
    a[0, 0] = 0.0
    a[1, 1] = 0.5  # exactly on a clamp bound: inclusive, as in PyTorch
    return [_grads(tt, rng, lambda x: x.tanh(), a), _grads(tt, rng, lambda x: x.abs(), a),
            _grads(tt, rng, lambda x: x.clamp(min=-0.5, max=0.5), a),
            _grads(tt, rng, lambda x: x.clamp(min=0.0), a)]


@case(points=3, hint="PyTorch's conventions: x ** 0 has gradient 0 (even at 0); sign(NaN) is 0; "
      "np.where, not grad * mask, so inf * 0 never makes NaN; a NaN maximum takes the whole "
      "gradient; a second backward needs retain_graph=True (pass it to _vjp).")
def edge_conventions_like_pytorch(tt, rng):
    a = _f32(rng, 5)
    a[0] = 0.0
    out = {"pow0": _grads(tt, rng, lambda x: x ** 0, a)}
    nan_abs = a.copy()
    nan_abs[1] = np.nan
    out["abs_nan"] = _grads(tt, rng, lambda x: x.abs(), nan_abs)
    x = tt.Tensor(a, requires_grad=True)
    y = x.clamp(min=0.5)
    with np.errstate(invalid="ignore"):
        y.backward(tt.Tensor(np.full(5, np.inf, dtype=np.float32)))
    out["clamp_inf"] = x.grad.numpy().copy()
    with np.errstate(invalid="ignore"):
        out["max_nan"] = _grads(tt, rng, lambda t: t.max() * 2.0, nan_abs)
    w = tt.Tensor(_f32(rng, 3), requires_grad=True)
    loss = (w * w).sum()
    loss.backward()
    out["second"] = outcome(loss.backward)
    again = (w * w).sum()
    again.backward(retain_graph=True)
    again.backward()
    plain = (w + 1.0).sum()
    plain.backward()
    out["no_saved_values_twice"] = outcome(plain.backward)
    out["w"] = w.grad.numpy().copy()
    return out


# ----------------------------------------------------------------------------- matmul (8)
@case(points=4, hint="dA = G @ Bᵀ, dB = Aᵀ @ G: check the shapes.", rtol=1e-4, atol=1e-5)
def matmul_gradients_2d(tt, rng):
    a, b = _f32(rng, 3, 4), _f32(rng, 4, 5)
    sq = _f32(rng, 4, 4)
    v = tt.Tensor(_f32(rng, 4))  # a constant input: only the other operand needs a gradient
    return [_grads(tt, rng, lambda x, y: x @ y, a, b),
            _grads(tt, rng, lambda x, y: x @ y, sq, sq.T.copy()),
            _grads(tt, rng, lambda y: v @ y, b), _grads(tt, rng, lambda x: x @ v, a)]


@case(points=4, hint="Swap the last two axes (not .T); batch dims of a shared matrix are summed.",
      rtol=1e-4, atol=1e-5)
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
@case(points=4, hint="Re-insert reduced axes (keepdim=False), broadcast back; mean divides by n.",
      rtol=1e-4)
def sum_and_mean_gradients_over_dims(tt, rng):
    a = _f32(rng, 2, 3, 4)
    fns = [lambda x: x.sum(), lambda x: x.sum(dim=1), lambda x: x.sum(dim=(0, 2)),
           lambda x: x.sum(dim=-1, keepdim=True), lambda x: x.mean(),
           lambda x: x.mean(dim=0), lambda x: x.mean(dim=(1, 2), keepdim=True)]
    return [_grads(tt, rng, f, a) for f in fns]


@case(points=3, hint="Full max: ties share grad evenly; max(dim): grad goes to .indices.",
      rtol=1e-4)
def max_gradients_full_and_dim(tt, rng):
    a = _f32(rng, 3, 4)
    tied = np.array([[1.0, 3.0, 3.0], [0.0, 3.0, -1.0]], dtype=np.float32)
    return [_grads(tt, rng, lambda x: x.max(), a), _grads(tt, rng, lambda x: x.max(), tied),
            _grads(tt, rng, lambda x: x.max(dim=1).values, a),
            _grads(tt, rng, lambda x: x.max(dim=0, keepdim=True).values, a)]


@case(points=2, hint="amax: ties within each reduction share the gradient evenly.", rtol=1e-4)
def amax_gradients_share_ties(tt, rng):
    tied = np.array([[2.0, 2.0, 1.0], [0.0, 5.0, 5.0]], dtype=np.float32)
    a = _f32(rng, 2, 3, 4)
    return [_grads(tt, rng, lambda x: x.amax(dim=1), tied),
            _grads(tt, rng, lambda x: x.amax(dim=(0, 2), keepdim=True), a),
            _grads(tt, rng, lambda x: x.amax(), tied)]


# ----------------------------------------------------------------------------- views & indexing (6)
@case(points=3, hint="The backward of a view is the inverse view: reshape back, argsort(dims).",
      rtol=1e-4)
def view_gradients_reshape_transpose_permute(tt, rng):
    a = _f32(rng, 2, 3, 4)
    return [_grads(tt, rng, lambda x: x.reshape(4, 6), a),
            _grads(tt, rng, lambda x: x.transpose(0, 2), a),
            _grads(tt, rng, lambda x: x.permute(2, 0, 1), a),
            _grads(tt, rng, lambda x: x.permute(1, -1, 0), a),
            _grads(tt, rng, lambda x: x.transpose(0, 1).contiguous(), a),
            _grads(tt, rng, lambda x: x.T, a)]


@case(points=3, hint="Scatter grad into zeros with np.add.at: repeated indices add up.",
      rtol=1e-4)
def getitem_gradients_slices_fancy_and_masks(tt, rng):
    a = _f32(rng, 4, 5)
    idx = np.array([3, 0, 3, 3])
    return [_grads(tt, rng, lambda x: x[1], a), _grads(tt, rng, lambda x: x[:, 1:4], a),
            _grads(tt, rng, lambda x: x[idx], a),
            _grads(tt, rng, lambda x: x[tt.Tensor(idx), 2], a),
            _grads(tt, rng, lambda x: x[a > 0], a)]


# ----------------------------------------------------------------------------- end to end (3)
@case(points=2, hint="Every op of a small MLP must be right for its weights' gradients to match.",
      rtol=1e-4, atol=1e-5)
def mlp_gradients_end_to_end(tt, rng):
    x = tt.Tensor(_f32(rng, 8, 4))
    w1 = tt.Tensor(_f32(rng, 4, 6) * 0.5, requires_grad=True)
    b1 = tt.Tensor(np.zeros(6, dtype=np.float32), requires_grad=True)
    w2 = tt.Tensor(_f32(rng, 6, 3) * 0.5, requires_grad=True)
    h = (x @ w1 + b1).tanh().clamp(min=-0.9)
    logits = h @ w2
    shifted = logits - logits.amax(dim=1, keepdim=True)
    logp = shifted - shifted.exp().sum(dim=1, keepdim=True).log()
    loss = -(logp[np.arange(8), np.array([0, 1, 2, 0, 1, 2, 0, 1])]).mean()
    loss.backward()
    return [float(loss.item()), w1.grad.numpy().copy(), b1.grad.numpy().copy(),
            w2.grad.numpy().copy()]
