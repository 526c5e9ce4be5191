"""The fuzz catalogue: one table of entries, each a generator of cases for one public API.

An entry belongs to a course module (``"01_tensor"``, ...) and runs only once that module is
built (``tinytorch_ref/<slug>.py`` exists). A new module joins the fuzzer by adding entries
here, e.g. for module 09::

    @entry("09_spatial")
    def conv2d(g):
        x = g.tensor((2, 1, 6, 6), "float32")
        w, b = g.array((4, 1, 3, 3)), g.array((4,))
        return g.case("m = load(nn.Conv2d(1, 4, 3), weight=w, bias=b); out = m(x); "
                      "leaves = [m.weight, m.bias]", x=x, w=w, b=b)

A generator gets a :class:`Gen` and returns a :class:`Case`: code that runs unchanged against
``tinytorch_ref`` and ``torch`` (see ``namespaces.py`` for the names it may use).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .engine import Case, Input
from .gen import Gen


@dataclass(frozen=True)
class Entry:
    module: str
    name: str
    make: Callable[[Gen], Case]
    weight: float = 1.0


ENTRIES: list[Entry] = []


def entry(module: str, weight: float = 1.0) -> Callable[[Callable[[Gen], Case]], Callable]:
    def register(fn: Callable[[Gen], Case]) -> Callable[[Gen], Case]:
        name = fn.__name__
        if any(e.name == name for e in ENTRIES):
            raise ValueError(f"duplicate fuzz entry {name!r}")
        ENTRIES.append(Entry(module, name, fn, weight))
        return fn

    return register


def _reflect(g: Gen, code: str, a: Input, b: Input) -> Case:
    """``code`` uses ``a OP b``; sometimes swap to ``b OP a`` (a scalar on the left)."""
    if g.p(0.35):
        code = code.replace("a", "@").replace("b", "a").replace("@", "b")
    return g.case(code, a=a, b=b)


# ============================================================================ 01 tensor
BINARY = ["+", "-", "*", "/", "**", "//", "%"]
COMPARE = ["==", "!=", "<", "<=", ">", ">="]


@entry("01_tensor", weight=4)
def binary_op(g: Gen) -> Case:
    a = g.tensor()
    b = g.operand(a.value.shape)
    op = g.choice(BINARY)
    if op in ("**",) and b.kind == "tensor" and g.p(0.5):
        b = g.scalar()
    return _reflect(g, f"out = a {op} b", a, b)


@entry("01_tensor", weight=1.5)
def comparison(g: Gen) -> Case:
    a = g.tensor(grad=False)
    b = g.operand(a.value.shape)
    return _reflect(g, f"out = a {g.choice(COMPARE)} b", a, b)


@entry("01_tensor", weight=1.5)
def inplace_op(g: Gen) -> Case:
    a = g.tensor(grad=False if g.p(0.7) else None)
    b = g.operand(a.value.shape)
    op = g.choice(["+", "-", "*", "/"])
    if g.p(0.3) and a.value.ndim:
        return g.case(f"v = a[0]; v {op}= b; out = a", a=a, b=b)
    return g.case(f"c = a; c {op}= b; out = (a, c is a)", a=a, b=b)


@entry("01_tensor", weight=2)
def unary_op(g: Gen) -> Case:
    a = g.tensor()
    fn = g.choice(["a.exp()", "a.log()", "a.sqrt()", "a.tanh()", "a.abs()", "-a",
                   "a.float()", "a.double()", "a.long()", "a.detach()", "a.contiguous()", "~a",
                   "abs(a)"])
    return g.case(f"out = {fn}", a=a)


@entry("01_tensor")
def clamp(g: Gen) -> Case:
    a = g.tensor()
    lo, hi = g.scalar("fi"), g.scalar("fi")
    form = g.choice(["a.clamp(min=lo)", "a.clamp(max=hi)", "a.clamp(min=lo, max=hi)",
                     "a.clamp(lo, hi)", "a.clamp()"])
    return g.case(f"out = {form}", a=a, lo=lo, hi=hi)


@entry("01_tensor", weight=2)
def reduction(g: Gen) -> Case:
    a = g.tensor(g.shape(0, 4))
    nd = a.value.ndim
    kind = g.choice(["sum", "mean", "amax", "max", "argmax", "max_dim", "sum_pos"])
    keep = g.choice([True, False])
    if kind == "max":
        return g.case("out = a.max()", a=a)
    if kind == "max_dim":
        return g.case(f"out = tuple(a.max(dim={g.dim(nd)!r}, keepdim={keep}))", a=a)
    if kind == "argmax":
        return g.case(f"out = a.argmax(dim={g.dim(nd, allow_none=True)!r}, keepdim={keep})",
                      a=a)
    if kind == "sum_pos":
        return g.case(f"out = a.sum({g.dim(nd)!r})", a=a)
    d = g.dim(nd, allow_none=kind != "amax", allow_tuple=True)
    if g.p(0.2):
        return g.case(f"out = a.{kind}()", a=a)
    if g.p(0.15):
        return g.case(f"out = a.{kind}(keepdim={keep})", a=a)
    return g.case(f"out = a.{kind}(dim={d!r}, keepdim={keep})", a=a)


@entry("01_tensor", weight=2)
def matmul(g: Gen) -> Case:
    form = g.choice(["vv", "mv", "vm", "mm", "bmm", "bcast"])
    n, k, m = g.int(1, 4), g.int(0, 4) if g.p(0.1) else g.int(1, 4), g.int(1, 4)
    k2 = k if g.p(0.93) else k + 1
    shapes = {"vv": ((k,), (k2,)), "mv": ((n, k), (k2,)), "vm": ((k,), (k2, m)),
              "mm": ((n, k), (k2, m)), "bmm": ((2, n, k), (2, k2, m)),
              "bcast": ((g.int(1, 3), 1, n, k), (g.int(1, 2), k2, m))}[form]
    da = "float32" if g.p(0.8) else g.dtype("fi")
    db = da if g.p(0.85) else g.dtype("fi")
    a, b = g.tensor(shapes[0], da), g.tensor(shapes[1], db)
    op = g.choice(["a @ b", "a.matmul(b)"])
    return g.case(f"out = {op}", a=a, b=b)


def _factor(g: Gen, n: int) -> tuple[int, ...]:
    dims = []
    rest = n
    for _ in range(g.int(0, 3)):
        divs = [d for d in range(1, rest + 1) if rest % d == 0] if rest else [0, 1]
        d = g.choice(divs)
        dims.append(d)
        rest = rest // d if d else 0
    dims.append(rest if n else g.int(0, 2))
    return tuple(dims)


LAYOUTS = ["x = a", "x = a.transpose(0, -1)", "x = a[..., ::2]", "x = a.permute(*range(a.dim())[::-1])",
           "x = a[:, :1]", "x = a[1:]", "x = a.T"]


@entry("01_tensor", weight=2.5)
def view_op(g: Gen) -> Case:
    a = g.tensor(g.shape(1, 4, zero=0.06))
    nd = a.value.ndim
    layout = g.choice(LAYOUTS if nd >= 2 else LAYOUTS[:3])
    n = a.value.size
    target = list(_factor(g, n))
    if target and g.p(0.3):
        target[g.int(0, len(target) - 1)] = -1
    if g.p(0.05):
        target = [n + 1]
    op = g.choice([
        f"x.reshape({tuple(target)!r})", f"x.reshape(*{tuple(target)!r})",
        f"x.view({tuple(target)!r})", f"x.view(*{tuple(target)!r})",
        f"x.transpose({g.dim(nd)}, {g.dim(nd)})", "x.stride()", "x.is_contiguous()",
        "x.contiguous().is_contiguous()", "x.T", "x.size()", f"x.size({g.dim(nd)})",
        "x.dim()", "x.numel()", "tuple(x.shape)", "x.ndim", "x.stride(-1)",
        f"x.permute(*{tuple(int(d) for d in g.rng.permutation(nd))!r})",
        f"x.permute({tuple(int(d) for d in g.rng.permutation(nd))!r})",
        f"x.permute({tuple(int(d) - nd for d in g.rng.permutation(nd))!r})",
        "x.contiguous().stride()", "x.is_contiguous() == x.contiguous().is_contiguous()",
    ])
    return g.case(f"{layout}; out = {op}", a=a)


def _index_expr(g: Gen, shape: tuple[int, ...], inputs: dict[str, Input]) -> str:
    parts: list[str] = []
    dim = 0
    nd = len(shape)
    while dim < nd and len(parts) < nd + 1:
        size = shape[dim]
        r = g.rng.random()
        if r < 0.25:
            i = g.int(-size, size - 1) if size else 0
            if g.p(0.03):
                i = size
            parts.append(str(i))
            dim += 1
        elif r < 0.55:
            start = g.choice(["", "0", "1", "-1", "-2", str(size)])
            stop = g.choice(["", "2", "-1", str(size), "100"])
            step = g.choice(["", "", ":2", ":3", ":1"] + ([":-1"] if g.p(0.1) else []))
            parts.append(f"{start}:{stop}{step}")
            dim += 1
        elif r < 0.62:
            parts.append("None")
        elif r < 0.66 and "..." not in parts:
            parts.append("...")
            dim = nd - g.int(0, nd - dim)
        elif r < 0.86:
            name = f"i{len(inputs)}"
            n = g.int(0, 3)
            inputs[name] = Input("tensor", g.values((n,), "int64", f"index:{max(size, 1)}"))
            if size and g.p(0.3):
                inputs[name] = Input("tensor", -1 - inputs[name].value % size)
            if g.p(0.3):
                parts.append(f"{name}.tolist()")
            else:
                parts.append(name)
            dim += 1
        else:
            name = f"m{len(inputs)}"
            inputs[name] = Input("tensor", g.values((size,), "bool"))
            parts.append(name)
            dim += 1
    return ", ".join(parts) if parts else "..."


@entry("01_tensor", weight=3)
def getitem(g: Gen) -> Case:
    a = g.tensor(g.shape(1, 4, zero=0.03))
    inputs: dict[str, Input] = {"a": a}
    expr = _index_expr(g, a.value.shape, inputs)
    r = g.rng.random()
    if r < 0.06:  # a list index holding lists, slices or None: read as a tuple (PyTorch)
        expr = "[" + g.choice(["[0]", "[0, 1]", "[[0], [0]]", "0, slice(None)", "None, 0",
                               "[0], 0", "slice(1, None)"]) + "]"
    elif r < 0.1:  # Python bools as indices
        expr = g.choice(["True", "False", "0, True", "..., False", "True, 0", "[True, False]",
                         "None, True"])
    elif r < 0.13:  # too many indices, out of range
        expr = g.choice([", ".join(["0"] * (a.value.ndim + 1)), str(max(a.value.shape) + 2),
                         f"-{a.value.shape[0] + 1}"])
    return g.case(f"out = a[{expr}]", **inputs)


@entry("01_tensor")
def to_python(g: Gen) -> Case:
    a = g.tensor(g.shape(0, 2, max_side=2), grad=False)
    fn = g.choice(["a.item()", "a.tolist()", "bool(a)", "float(a)", "int(a)", "len(a)",
                   "[v for v in a] if a.dim() else 0", "a.numpy().dtype.name",
                   "[10, 20, 30, 40][a]"])
    return g.case(f"out = {fn}", a=a)


@entry("01_tensor")
def factory(g: Gen) -> Case:
    shape = g.shape(0, 3)
    value = g.scalar()
    a = g.tensor(shape, grad=False)
    lo, hi = g.int(-3, 3), g.int(-3, 6)
    form = g.choice([
        f"lib.zeros{shape!r}" if len(shape) != 1 else f"lib.zeros({shape[0]})",
        f"lib.ones({shape!r})", f"lib.full({shape!r}, v)", "lib.zeros_like(a)",
        "lib.ones_like(a)", f"lib.arange({hi})", f"lib.arange({lo}, {hi})",
        f"lib.arange({lo}, {hi}, {g.choice([1, 2, 3, 0.5])})", f"lib.arange({hi}.5)",
        "lib.tensor(a.tolist())", "lib.tensor(v)", "lib.tensor([v, v])",
        f"lib.randn{shape!r}.shape", f"lib.rand{shape!r}.dtype", f"lib.randn{shape!r}.dtype",
        "lib.tensor([1, 2.5])", "lib.tensor([[True], [False]])", "lib.tensor([])",
        f"lib.zeros({shape!r}, requires_grad=True)",
    ])
    return g.case(f"out = {form}", a=a, v=value)


@entry("01_tensor", weight=0.7)
def tensor_from_data(g: Gen) -> Case:
    """``Tensor(data)`` (ours) against ``torch.tensor(data)``: the dtype it infers."""
    atoms = ["1", "2.5", "True", "np.float64(1.5)", "np.float32(2)", "np.int32(3)", "np.int8(1)",
             "np.bool_(True)", "-0.0", "nan", "2**63 - 1", "2**63", "-2**63"]
    form = g.choice(["atom", "list", "list", "nested", "array"])
    if form == "atom":
        data = g.choice(atoms)
    elif form == "list":
        data = "[" + ", ".join(g.choice(atoms) for _ in range(g.int(0, 3))) + "]"
    elif form == "nested":
        row = ", ".join(g.choice(atoms) for _ in range(g.int(1, 2)))
        data = f"[[{row}], [{row}]]"
    else:
        data = f"np.array([1, 2], dtype='{g.dtype('fiub')}')"
    return g.case(f"out = tensor_of({data}); no_backward = True")


@entry("01_tensor")
def grad_mode(g: Gen) -> Case:
    a = g.tensor(dtype=g.dtype("f"), grad=True)
    form = g.choice([
        "with no_grad(): out = a * 2",
        "with no_grad(): y = a * 2\nout = (y, y.requires_grad, lib.is_grad_enabled())",
        "out = a.detach() * 3",
        "out = a.requires_grad_(False)",
        "out = T([1, 2], 'int64').requires_grad_()",
        "out = T([1, 2], 'int64', grad=True)",
        "out = (a * 2).detach().requires_grad",
    ])
    return g.case(form, a=a)


@entry("01_tensor")
def backward_api(g: Gen) -> Case:
    a = g.tensor(g.shape(1, 2), g.dtype("f"), grad=True)
    op = g.choice(["a * a", "a + 1", "a * 2", "a.exp()", "a.reshape(-1)", "-a", "a[0]",
                   "a.sum()", "a.tanh()", "(a + a).mean()", "a[T([0], 'int64')]"])
    form = g.choice([
        f"y = ({op}).sum(); y.backward(); y.backward(); out = a.grad",
        f"y = ({op}).sum(); y.backward(retain_graph=True); y.backward(); out = a.grad",
        f"y = ({op}); y.backward(); out = a.grad",
        f"y = ({op}); y.backward(lib.ones_like(y)); out = a.grad",
        f"y = ({op}).sum(); y.backward(); y2 = ({op}).sum(); y2.backward(); out = a.grad",
        f"y = ({op}).sum().detach(); y.backward(); out = a.grad",
    ])
    return g.case(form + "\nno_backward = True", a=a)


# ============================================================================ 02 activations
ACTIVATIONS = [("F.relu(a)", "nn.ReLU()(a)"), ("F.sigmoid(a)", "nn.Sigmoid()(a)"),
               ("F.tanh(a)", "nn.Tanh()(a)"), ("F.gelu(a)", "nn.GELU()(a)"),
               ("F.gelu(a, approximate='tanh')", "nn.GELU(approximate='tanh')(a)")]


@entry("02_activations", weight=2)
def pointwise_activation(g: Gen) -> Case:
    a = g.tensor(dtype=g.dtype("fiub") if g.p(0.25) else g.dtype("f"),
                 domain="huge" if g.p(0.08) else None)
    fn, mod = g.choice(ACTIVATIONS)
    return g.case(f"out = {mod if g.p(0.3) else fn}", a=a)


@entry("02_activations", weight=2)
def softmax(g: Gen) -> Case:
    a = g.tensor(g.shape(0, 4, zero=0.08), dtype=g.dtype("f") if g.p(0.85) else g.dtype("fiub"))
    d = g.dim(a.value.ndim)
    fn = g.choice(["F.softmax(a, dim=d)", "F.log_softmax(a, dim=d)", "nn.Softmax(dim=d)(a)",
                   "nn.LogSoftmax(dim=d)(a)", "F.softmax(a, d)", "a.softmax(d)"
                   if False else "F.log_softmax(a, d)"])
    return g.case(f"d = {d!r}; out = {fn}", a=a)


@entry("02_activations", weight=0.5)
def activation_errors(g: Gen) -> Case:
    a = g.tensor(dtype="float32")
    fn = g.choice(["F.gelu(a, approximate='fast')", "nn.GELU('fast')(a)", "F.softmax(a, dim=5)",
                   "repr(nn.ReLU())", "list(nn.Tanh().parameters())", "nn.ReLU().training"])
    return g.case(f"out = {fn}", a=a)


# ============================================================================ 03 layers
@entry("03_layers", weight=2)
def linear(g: Gen) -> Case:
    fin, fout = g.int(0, 5) if g.p(0.05) else g.int(1, 5), g.int(1, 5)
    bias = g.p(0.8)
    batch = g.shape(0, 2)
    x = g.tensor(batch + (fin if g.p(0.95) else fin + 1,),
                 "float32" if g.p(0.85) else g.dtype("fi"))
    w = g.array((fout, fin))
    b = g.array((fout,))
    params = "weight=w, bias=b" if bias else "weight=w"
    leaves = "[m.weight, m.bias]" if bias else "[m.weight]"
    return g.case(f"m = load(nn.Linear({fin}, {fout}, bias={bias}), {params}); out = m(x); "
                  f"leaves = {leaves}", x=x, w=w, b=b)


@entry("03_layers")
def sequential_mlp(g: Gen) -> Case:
    x = g.tensor((g.int(1, 4), 3), "float32")
    act = g.choice(["nn.ReLU()", "nn.Tanh()", "nn.Sigmoid()", "nn.GELU()", "nn.Dropout(0.0)",
                    "nn.Flatten(0)"])
    w1, b1, w2, b2 = g.array((4, 3)), g.array((4,)), g.array((2, 4)), g.array((2,))
    tail = g.choice(["out = m(x)", "out = [n for n, _ in m.named_parameters()]",
                     "out = sorted(m.state_dict())", "out = m.eval()(x)",
                     "out = sum(p.numel() for p in m.parameters())", "out = len(m)",
                     "out = m[0](x)", "out = m[0].weight.shape"])
    return g.case(
        f"m = nn.Sequential(nn.Linear(3, 4), {act}, nn.Linear(4, 2)); "
        "load(m, **{'0__weight': w1, '0__bias': b1, '2__weight': w2, '2__bias': b2}); "
        f"{tail}; leaves = list(m.parameters())", x=x, w1=w1, b1=b1, w2=w2, b2=b2)


@entry("03_layers")
def flatten(g: Gen) -> Case:
    a = g.tensor(g.shape(0, 4))
    nd = a.value.ndim
    s, e = g.dim(nd, bad=0.08), g.dim(nd, bad=0.08)
    form = g.choice([f"nn.Flatten({s}, {e})(a)", "nn.Flatten()(a)", f"nn.Flatten({s})(a)"])
    return g.case(f"out = {form}", a=a)


@entry("03_layers", weight=0.5)
def dropout(g: Gen) -> Case:
    a = g.tensor()
    p = g.choice([0.0, 0.5, 1.0, 1.5, -0.1, 0.3])
    form = g.choice([f"nn.Dropout({p}).eval()(a)", f"nn.Dropout({p})(a) if {p} in (0.0, 1.0) "
                     "else 0", f"nn.Dropout(p={p}).p"])
    return g.case(f"out = {form}", a=a)


@entry("03_layers", weight=0.5)
def module_state(g: Gen) -> Case:
    w, b = g.tensor((2, 3), "float32", False), g.tensor((2,), "float32", False)
    w_bad = g.tensor((3, 3), "float32", False)
    form = g.choice([
        "m.load_state_dict({'weight': w, 'bias': b}); out = m.weight",
        "m.load_state_dict({'weight': w_bad, 'bias': b}); out = m.weight",
        "m.load_state_dict({'weight': w}); out = m.weight",
        "r = m.load_state_dict({'weight': w}, strict=False); out = (list(r.missing_keys), "
        "list(r.unexpected_keys))",
        "out = [k for k in m.state_dict()]", "m.zero_grad(); out = m.weight.grad",
        "out = m.train().training, m.eval().training",
        "out = [n for n, _ in m.named_parameters()]",
    ])
    return g.case(f"m = nn.Linear(3, 2); {form}; no_backward = True", w=w, b=b, w_bad=w_bad)


# ============================================================================ 04 losses
def _class_target(g: Gen, shape: tuple[int, ...], n_classes: int, ignore: int) -> Input:
    t = g.values(shape, "int64", f"index:{max(n_classes, 1)}")
    narrow = g.choice(["int32", "uint8", "int16", "int8"]) if g.p(0.08) else None
    if g.p(0.2) and t.size:
        t = t.copy()
        flat = t.reshape(-1)
        flat[g.int(0, flat.size - 1)] = ignore
        if g.p(0.3):
            flat[:] = ignore
    if g.p(0.02) and t.size:
        t = t.copy()
        t.reshape(-1)[0] = n_classes
    if narrow is not None:  # PyTorch takes int64 (and uint8 for (N, C) inputs) only
        with np.errstate(over="ignore"):
            t = t.astype(narrow)
    return Input("tensor", t)


@entry("04_losses", weight=3)
def class_loss(g: Gen) -> Case:
    n_classes = g.int(1, 5)
    form = g.choice(["2d", "2d", "1d", "spatial"])
    n = g.int(0, 4) if g.p(0.05) else g.int(1, 4)
    xshape = {"2d": (n, n_classes), "1d": (n_classes,),
              "spatial": (n, n_classes, g.int(1, 3))}[form]
    tshape = {"2d": (n,), "1d": (), "spatial": (n, xshape[-1])}[form]
    ignore = g.choice([-100, -100, 0, 1])
    x = g.tensor(xshape, g.dtype("f"), grad=g.p(0.9))
    t = _class_target(g, tshape, n_classes, ignore)
    kw = [f"reduction={g.choice(['mean', 'sum', 'none'])!r}"]
    if ignore != -100 or g.p(0.2):
        kw.append(f"ignore_index={ignore}")
    inputs = {"x": x, "t": t}
    if g.p(0.3):
        inputs["w"] = Input("tensor", g.values((n_classes,), x.value.dtype.name, "pos"))
        kw.append("weight=w")
    fn = g.choice(["cross_entropy", "cross_entropy", "nll_loss"])
    if fn == "cross_entropy" and g.p(0.3):
        kw.append(f"label_smoothing={g.choice([0.1, 0.25, 1.0])}")
    if fn == "nll_loss" and g.p(0.5):
        code = f"out = F.nll_loss(F.log_softmax(x, dim={1 if form != '1d' else 0}), t, {', '.join(kw)})"
    elif g.p(0.25):
        cls = "CrossEntropyLoss" if fn == "cross_entropy" else "NLLLoss"
        code = f"out = nn.{cls}({', '.join(kw).replace('weight=w', 'weight=w')})(x, t)"
    else:
        code = f"out = F.{fn}(x, t, {', '.join(kw)})"
    return g.case(code, **inputs)


@entry("04_losses")
def cross_entropy_probs(g: Gen) -> Case:
    n, c = g.int(1, 4), g.int(1, 4)
    dt = g.dtype("f")
    x = g.tensor((n, c), dt)
    q = g.values((n, c), dt, "prob")
    q = q / q.sum(axis=1, keepdims=True)
    t = Input("tensor", q.astype(dt), g.p(0.3))
    kw = f"reduction={g.choice(['mean', 'sum', 'none'])!r}"
    if g.p(0.3):
        kw += f", label_smoothing={g.choice([0.1, 0.5])}"
    return g.case(f"out = F.cross_entropy(x, t, {kw})", x=x, t=t)


@entry("04_losses", weight=2)
def regression_and_binary_loss(g: Gen) -> Case:
    shape = g.shape(0, 3)
    dt = g.dtype("f")
    fn = g.choice(["mse_loss", "mse_loss", "binary_cross_entropy",
                   "binary_cross_entropy_with_logits", "bce_module", "bcel_module", "mse_module"])
    red = g.choice(["mean", "sum", "none"])
    tshape = shape if g.p(0.9) else g.broadcast_to(shape)
    if fn in ("binary_cross_entropy", "bce_module"):
        x = g.tensor(shape, dt, domain="prob" if g.p(0.9) else "special")
    else:
        x = g.tensor(shape, dt)
    tdt = dt if g.p(0.85) else g.dtype("f")
    t = Input("tensor", g.values(tshape, tdt, "prob" if g.p(0.7) else "coarse"), g.p(0.3))
    inputs = {"x": x, "t": t}
    kw = f"reduction={red!r}"
    if fn in ("binary_cross_entropy", "binary_cross_entropy_with_logits") and g.p(0.3):
        inputs["w"] = Input("tensor", g.values(shape[-1:], dt, "pos"))
        kw += ", weight=w"
    if fn == "binary_cross_entropy_with_logits" and g.p(0.3):
        inputs["pw"] = Input("tensor", g.values(shape[-1:], dt, "pos"))
        kw += ", pos_weight=pw"
    module = {"bce_module": "BCELoss", "bcel_module": "BCEWithLogitsLoss",
              "mse_module": "MSELoss"}.get(fn)
    code = f"out = nn.{module}({kw})(x, t)" if module else f"out = F.{fn}(x, t, {kw})"
    return g.case(code, **inputs)


@entry("04_losses", weight=0.5)
def loss_errors(g: Gen) -> Case:
    x = g.tensor((2, 3), "float32")
    t = Input("tensor", g.values((2,), "int64", "index:3"))
    form = g.choice(["F.cross_entropy(x, t, reduction='avg')", "nn.MSELoss(reduction='avg')",
                     "F.cross_entropy(x, t.float())", "F.nll_loss(x, t[:1])",
                     "F.mse_loss(x, x, reduction='bad')", "nn.CrossEntropyLoss(label_smoothing=2.0)",
                     "F.cross_entropy(x, t, label_smoothing=-0.1)"])
    return g.case(f"out = {form}", x=x, t=t)


# ============================================================================ 05 autograd
# Graph building blocks. Values stay finite and moderate (exp of a tanh, sqrt of x² + 1), so the
# composites test how gradients combine, not how infinities meet in a BLAS sum.
UNARY_GRAPH = ["{} * {}", "{} + {}", "{} - {}", "({}).tanh()", "({}).tanh().exp()", "({}) ** 2",
               "({}).abs()", "({}).sum(dim=0, keepdim=True) + {}", "({}).mean()", "({}) / 2.5",
               "({}).clamp(min=-0.5)", "F.relu({})", "F.sigmoid({})", "({}).amax(dim=-1, keepdim=True)",
               "({}) @ ({}).T", "({})[..., :1]", "({}).reshape(-1)", "({}).max()",
               "({}).transpose(0, -1)", "({}) ** 0", "(({}) ** 2 + 1.0).sqrt()"]


@entry("05_autograd", weight=2)
def composite_graph(g: Gen) -> Case:
    # finite, moderate values: this entry tests the graph's structure (special values are the
    # other entries' job; here x @ x.T - x @ x.T with inf or 100s would compare rounding noise)
    shape = g.shape(1, 3, zero=0.0)
    a = g.tensor(shape, g.dtype("f"), grad=True, domain=g.choice(["fine", "coarse", "fine"]))
    b = g.tensor(shape, a.value.dtype.name, grad=g.p(0.5),
                 domain=g.choice(["fine", "coarse", "fine"]))
    expr = g.choice(["a", "b"])
    for _ in range(g.int(1, 4)):
        tmpl = g.choice(UNARY_GRAPH)
        args = [expr] + [g.choice(["a", "b", expr]) for _ in range(tmpl.count("{}") - 1)]
        if tmpl == "{} - {}" and args[0] == args[1]:  # x - x: exact cancellation, rounding noise
            tmpl = "{} + {}"
        expr = tmpl.format(*args)
    return g.case(f"out = {expr}", a=a, b=b)


@entry("05_autograd")
def shared_subgraph(g: Gen) -> Case:
    # moderate values, as composite_graph: this entry tests how a reused node's gradients
    # add up, not how infinities meet (exp(88.5) overflows float32)
    a = g.tensor((g.int(1, 3), g.int(1, 3)), "float32", grad=True,
                 domain=g.choice(["fine", "coarse"]))
    form = g.choice(["y = a * 2; out = y * y + y", "y = a.exp(); out = (y + y).sum() * y",
                     "y = a[0]; out = y + a", "y = a.T; out = y @ a",
                     "y = a.reshape(-1); out = y[0] * y"])
    return g.case(form, a=a)


# ============================================================================ 06 optimizers
def _params(g: Gen, n: int) -> dict[str, Input]:
    return {f"p{i}": g.tensor(g.shape(1, 2), "float32", grad=False) for i in range(n)}


@entry("06_optimizers", weight=3)
def optimizer_trajectory(g: Gen) -> Case:
    inputs = _params(g, g.int(1, 2))
    names = list(inputs)
    kind = g.choice(["SGD", "Adam", "AdamW"])
    lr = g.choice([0.1, 0.01, 0.5, 0.0])
    if kind == "SGD":
        kw = {"lr": lr, "momentum": g.choice([0.0, 0.9, 0.5]),
              "dampening": g.choice([0.0, 0.0, 0.3]), "weight_decay": g.choice([0.0, 0.1]),
              "nesterov": g.p(0.2)}
    else:
        kw = {"lr": lr, "betas": g.choice([(0.9, 0.999), (0.8, 0.9), (0.0, 0.5)]),
              "eps": g.choice([1e-8, 1e-3]), "weight_decay": g.choice([0.0, 0.1, 0.01])}
    args = ", ".join(f"{k}={v!r}" for k, v in kw.items())
    steps = g.int(1, 4)
    grads_zero = g.p(0.15)
    loss = "sum(((q ** 4) * 0.25 - q * 0.5).sum() for q in ps)"
    if grads_zero:
        loss = "sum((q * 0.0).sum() for q in ps)"
    skip = g.p(0.2)  # a parameter without gradient is skipped
    code = (f"ps = [{', '.join(f'{n}.requires_grad_()' for n in names)}]; "
            f"opt = optim.{kind}(ps, {args})\n"
            f"for _ in range({steps}):\n"
            f"    opt.zero_grad()\n"
            f"    loss = {loss if not skip else 'sum(((q ** 4) * 0.25).sum() for q in ps[:1])'}\n"
            f"    loss.backward()\n"
            f"    opt.step()\n"
            f"out = [q.detach() for q in ps] + [q.grad for q in ps[1:]]\nno_backward = True")
    return g.case(code, **inputs)


@entry("06_optimizers")
def optimizer_api(g: Gen) -> Case:
    inputs = _params(g, 1)
    kind = g.choice(["SGD", "Adam", "AdamW"])
    bad = g.choice(["lr=-0.1", "weight_decay=-0.1", "momentum=-0.5", "eps=-1e-8",
                    "betas=(1.0, 0.9)", "betas=(0.9, -0.1)", "nesterov=True", "lr=0.1",
                    "dampening=0.5, momentum=0.9, nesterov=True"])
    form = g.choice([f"opt = optim.{kind}([p0.requires_grad_()], {bad}); out = opt.param_groups[0]['lr']",
                     f"opt = optim.{kind}([], lr=0.1); out = 0",
                     f"opt = optim.{kind}([p0.requires_grad_()], lr=0.1); opt.zero_grad(); out = p0.grad",
                     f"opt = optim.{kind}([{{'params': [p0.requires_grad_()], 'lr': 0.5}}], lr=0.1); "
                     "out = opt.param_groups[0]['lr']",
                     f"opt = optim.{kind}([p0.requires_grad_()]); "
                     "out = [opt.defaults[k] for k in ('lr', 'weight_decay')]"])
    return g.case(form + "; no_backward = True", **inputs)


# ============================================================================ 07 training
@entry("07_training", weight=2)
def scheduler_trajectory(g: Gen) -> Case:
    kind = g.choice(["StepLR", "CosineAnnealingLR", "LinearLR"])
    if kind == "StepLR":
        kw = f"step_size={g.choice([1, 2, 3, 0])}, gamma={g.choice([0.1, 0.5, 1.0, 2.0])}"
    elif kind == "CosineAnnealingLR":
        kw = f"T_max={g.choice([1, 3, 5, 0, 10])}, eta_min={g.choice([0.0, 0.01, 0.5])}"
    else:
        kw = (f"start_factor={g.choice([1 / 3, 0.1, 1.0, 0.0, 1.5])}, "
              f"end_factor={g.choice([1.0, 0.5, 0.0, 1.2])}, "
              f"total_iters={g.choice([5, 1, 3, 0])}")
    lr = g.choice([0.1, 1.0, 0.05])
    steps = g.int(1, 12)
    p = g.tensor((2,), "float32", grad=False)
    code = (f"opt = optim.SGD([p.requires_grad_()], lr={lr}); "
            f"s = lr_scheduler.{kind}(opt, {kw}); lrs = [s.get_last_lr()[0]]\n"
            f"for _ in range({steps}):\n    opt.step(); s.step(); lrs.append(s.get_last_lr()[0])\n"
            "out = lrs + [opt.param_groups[0]['lr'], s.last_epoch]\nno_backward = True")
    return g.case(code, p=p)


@entry("07_training", weight=2)
def clip_grad_norm(g: Gen) -> Case:
    n = g.int(1, 3)
    inputs = {f"g{i}": Input("tensor", g.values(g.shape(0, 2), "float32",
                                                g.choice(["fine", "fine", "special"])))
              for i in range(n)}
    max_norm = g.choice([1.0, 0.5, 100.0, 0.0])
    norm_type = g.choice([2.0, 2.0, 1.0, "inf", "-inf", 0.0, 3.0])
    none_grad = g.p(0.15)
    params = ", ".join(f"lib.zeros({tuple(inputs[k].value.shape)!r}, requires_grad=True)"
                       for k in inputs)
    sets = "; ".join(f"ps[{i}].grad = {k}" for i, k in enumerate(inputs)
                     if not (none_grad and i == 0))
    return g.case(f"ps = [{params}]; {sets}; "
                  f"total = clip_grad_norm_(ps, {max_norm}, norm_type={norm_type}); "
                  f"out = [total] + [q.grad for q in ps]; no_backward = True", **inputs)


# ============================================================================ 09 spatial
# Convolutions and norms sum many products: values stay finite (special values belong to the
# element-wise entries; here they would compare the order of a BLAS sum).
def _conv_geometry(g: Gen) -> tuple[int, int, tuple[int, int], str, str, str]:
    """Groups, channels, kernel, and the stride, padding and dilation arguments as text."""
    groups = g.choice([1, 1, 1, 2, 3])
    k = (g.int(1, 3), g.int(1, 3)) if g.p(0.3) else (g.int(1, 3),) * 2
    stride = g.choice(["1", "1", "2", "(2, 1)", "(1, 3)"])
    dilation = g.choice(["1", "1", "1", "2", "(1, 2)", "(3, 1)"])
    padding = g.choice(["0", "0", "1", "2", "(1, 0)", "(0, 2)", "'same'", "'same'",
                        "'valid'"])
    if padding == "'same'" and g.p(0.9):
        stride = "1"
    return groups, k[0] if k[0] == k[1] else k, k, stride, padding, dilation


@entry("09_spatial", weight=3)
def conv2d(g: Gen) -> Case:
    groups, ktext, (kh, kw), stride, padding, dilation = _conv_geometry(g)
    n, cin, cout = g.int(1, 2), groups * g.int(1, 2), groups * g.int(1, 2)
    h, w = g.int(1, 7), g.int(1, 7)
    batch = (n,) if g.p(0.9) else ()
    shape = batch + (cin if g.p(0.96) else cin + 1, h, w)
    dt = "float32" if g.p(0.85) else "float64"
    # mostly finite values (a convolution sums many products: special values would compare
    # the order of a BLAS sum); now and then an infinity or NaN in the weight or the input
    x = g.tensor(shape, dt, domain="special" if g.p(0.05) else "fine")
    wt = g.array((cout, cin // groups, kh, kw), domain="special" if g.p(0.05) else "fine")
    b = g.array((cout,))
    conf = f"stride={stride}, padding={padding}, dilation={dilation}, groups={groups}"
    if g.p(0.1):  # the image's own pixels in the padding (reflect needs padding < size)
        conf += f", padding_mode='{g.choice(['reflect', 'replicate', 'circular', 'zeros'])}'"
    if g.p(0.5) or "padding_mode" in conf:
        bias = g.p(0.7)
        params = "weight=wt, bias=b" if bias else "weight=wt"
        tail = g.choice(["out = m(x)", "out = m(x)", "out = m(x)", "out = repr(m)",
                         "out = [m.padding, m.dilation, m.groups, tuple(m.weight.shape)]"])
        return g.case(f"m = load(nn.Conv2d({cin}, {cout}, {ktext}, {conf}, bias={bias}), "
                      f"{params}); {tail}; leaves = list(m.parameters())", x=x, wt=wt, b=b)
    wg = Input("tensor", wt.value.astype(dt), True)
    bg = Input("tensor", b.value.astype(dt), g.p(0.7))
    args = g.choice(["wg, bg", "wg", f"wg, bg, {conf}", f"wg, None, {conf}",
                     f"wg, bg, {stride}, {padding}, {dilation}, {groups}"])
    return g.case(f"out = F.conv2d(x, {args})", x=x, wg=wg, bg=bg)


@entry("09_spatial", weight=3)
def pool2d(g: Gen) -> Case:
    k = (g.int(1, 3), g.int(1, 3)) if g.p(0.25) else (g.int(1, 3),) * 2
    ktext = k[0] if k[0] == k[1] else k
    stride = g.choice([None, 1, 2, 3, (2, 1)])
    kind = g.choice(["max", "avg"])
    dil = g.choice([1, 1, 1, 2, (1, 2)]) if kind == "max" else 1
    dpair = dil if isinstance(dil, tuple) else (dil, dil)
    eff = (dpair[0] * (k[0] - 1) + 1, dpair[1] * (k[1] - 1) + 1)
    pad = g.int(0, min(k) // 2) if g.p(0.95) else min(k) // 2 + 1
    ceil = g.p(0.3)
    batch = (g.int(1, 2),) if g.p(0.85) else ()
    shape = batch + (g.int(1, 3), g.int(max(1, eff[0] - 2 * pad), 6),
                     g.int(max(1, eff[1] - 2 * pad), 6))
    dt = g.dtype("f") if g.p(0.85) else g.dtype("fiub")
    x = g.tensor(shape, dt, domain=g.choice(["fine", "coarse", "coarse", "special"]))
    if kind == "max":
        opts = f"stride={stride}, padding={pad}, dilation={dil!r}, ceil_mode={ceil}"
        if g.p(0.12):  # where each maximum is, and MaxUnpool2d putting them back
            pool = g.choice([f"F.max_pool2d(x, {ktext!r}, {opts}, return_indices=True)",
                             f"nn.MaxPool2d({ktext!r}, {opts}, return_indices=True)(x)"])
            if x.value.dtype.kind != "f" or g.p(0.3):
                return g.case(f"out = {pool}", x=x)
            unpool = g.choice([f"F.max_unpool2d(p, i, {ktext!r}, {stride}, {pad})",
                               f"nn.MaxUnpool2d({ktext!r}, {stride}, {pad})(p, i)",
                               f"F.max_unpool2d(p, i, {ktext!r}, {stride}, {pad}, "
                               "output_size=x.shape)",
                               f"F.max_unpool2d(p, i, {ktext!r}, {stride}, {pad}, "
                               "output_size=x.shape[-2:])"])
            return g.case(f"p, i = {pool}; out = {unpool}", x=x)
        if g.p(0.5):
            return g.case(f"out = nn.MaxPool2d({ktext!r}, {opts})(x)", x=x)
        if g.p(0.3):
            return g.case(f"out = F.max_pool2d(x, {ktext!r}, {stride}, {pad})", x=x)
        return g.case(f"out = F.max_pool2d(x, {ktext!r}, {opts})", x=x)
    include = g.p(0.6)
    divisor = g.choice([None, None, None, None, 1, 3])
    opts = (f"stride={stride}, padding={pad}, ceil_mode={ceil}, count_include_pad={include}, "
            f"divisor_override={divisor}")
    if g.p(0.5):
        return g.case(f"out = nn.AvgPool2d({ktext!r}, {opts})(x)", x=x)
    if g.p(0.3):
        return g.case(f"out = F.avg_pool2d(x, {ktext!r}, {stride}, {pad})", x=x)
    return g.case(f"out = F.avg_pool2d(x, {ktext!r}, {opts})", x=x)


@entry("09_spatial", weight=2)
def batch_norm2d(g: Gen) -> Case:
    c = g.int(1, 3)
    shape = (g.int(1, 3), c, g.int(1, 3), g.int(1, 3))
    # distinct values: a channel of equal values (var 0) normalises to exactly 0 here, and to
    # rounding noise scaled by 1/sqrt(eps) in PyTorch's kernel
    x = Input("tensor", _distinct(g, shape, "float32", ties=0.0).value)
    wt, b = g.array((c,), domain="coarse"), g.array((c,))
    rm, rv = g.array((c,)), g.array((c,), domain="pos")
    affine, track = g.p(0.8), g.p(0.8)
    momentum = g.choice([0.1, 0.5, None])
    mode = g.choice(["train()", "train()", "eval()"])
    params = "weight=wt, bias=b" if affine else ""
    stats = "running_mean=rm, running_var=rv" if track else ""
    loads = ", ".join(p for p in (params, stats) if p)
    tail = ("out = [m(x), m(x)] + ([m.running_mean, m.running_var, m.num_batches_tracked] "
            f"if {track} else [])")
    return g.case(f"m = load(nn.BatchNorm2d({c}, momentum={momentum}, affine={affine}, "
                  f"track_running_stats={track}){', ' + loads if loads else ''}).{mode}; "
                  f"{tail}; leaves = list(m.parameters())", x=x, wt=wt, b=b, rm=rm, rv=rv)


@entry("09_spatial")
def batch_norm_functional(g: Gen) -> Case:
    c = g.int(1, 3)
    x = g.tensor((g.int(1, 3), c) + g.shape(0, 2), "float32", domain="fine")
    rm = Input("tensor", g.values((c,), "float32", "fine"))
    rv = Input("tensor", g.values((c,), "float32", "pos"))
    wt = Input("tensor", g.values((c,), "float32", "coarse"), g.p(0.5))
    training = g.p(0.5)
    form = g.choice(["rm, rv", "rm, rv, wt", "None, None", "rm, rv, wt, wt"])
    if form == "None, None":
        training = True
    return g.case(f"out = [F.batch_norm(x, {form}, training={training}, momentum=0.3), rm, rv]"
                  if "rm" in form else f"out = F.batch_norm(x, {form}, training={training})",
                  x=x, rm=rm, rv=rv, wt=wt)


# ============================================================================ 11 embeddings
@entry("11_embeddings", weight=2)
def embedding(g: Gen) -> Case:
    v, d = g.int(1, 5), g.int(1, 4)
    ids = Input("tensor", g.values(g.shape(0, 2), "int64",
                                   f"index:{v if g.p(0.95) else v + 1}"))
    pad = g.choice([None, None, 0, v - 1, -1])
    wt = g.array((v, d))
    if g.p(0.5):
        return g.case(f"m = load(nn.Embedding({v}, {d}, padding_idx={pad}), weight=wt); "
                      "out = m(ids); leaves = [m.weight]", ids=ids, wt=wt)
    wg = Input("tensor", wt.value, True)
    return g.case(f"out = F.embedding(ids, wg, padding_idx={pad})", ids=ids, wg=wg)


# ============================================================================ 12 attention
def _mask_shape(g: Gen, lead: tuple[int, ...], q_len: int, k_len: int) -> tuple[int, ...]:
    """A mask shape that broadcasts against ``lead + (q_len, k_len)`` (rarely one that does
    not): 2-D, 1-D over the keys, with leading dims, or size-1 axes."""
    form = g.choice(["2d", "2d", "2d", "1d", "lead", "ones", "bad"])
    if form == "1d":
        return (k_len if g.p(0.8) else 1,)
    if form == "lead":
        return tuple(d if g.p(0.6) else 1 for d in lead) + (q_len, k_len)
    if form == "ones":
        return (1 if g.p(0.5) else q_len, 1 if g.p(0.5) else k_len)
    if form == "bad" and g.p(0.3):
        return (q_len + 1, k_len)
    return (q_len, k_len)


@entry("12_attention", weight=3)
def sdpa(g: Gen) -> Case:
    batch = g.shape(0, 2, max_side=2)
    q_len, k_len, e, ev = g.int(1, 4), g.int(1, 4), g.int(1, 4), g.int(1, 3)
    dt = "float32" if g.p(0.8) else "float64"
    q = g.tensor(batch + (q_len, e), dt, domain="fine")
    k = g.tensor(batch + (k_len, e), dt, domain="fine")
    v = g.tensor(batch + (k_len, ev), dt, domain="fine")
    mask = g.choice(["None", "None", "bool", "bool", "float", "other"])
    inputs = {"q": q, "k": k, "v": v}
    kw = [f"is_causal={g.p(0.3) and mask == 'None'}"]
    mshape = _mask_shape(g, batch, q_len, k_len)
    if mask == "bool":
        inputs["m"] = Input("tensor", g.values(mshape, "bool"))
        kw.append("attn_mask=m")
    elif mask == "float":
        mdt = dt if g.p(0.8) else g.choice(["float32", "float64"])
        inputs["m"] = Input("tensor", g.values(mshape, mdt, g.choice(["fine", "fine",
                                                                      "special"])), g.p(0.3))
        kw.append("attn_mask=m")
    elif mask == "other":
        inputs["m"] = Input("tensor", g.values(mshape, g.choice(["int64", "uint8", "int32"]),
                                               "coarse"))
        kw.append("attn_mask=m")
    if g.p(0.3):
        kw.append(f"scale={g.choice([0.5, 1.0, 2.0])}")
    return g.case(f"out = F.scaled_dot_product_attention(q, k, v, {', '.join(kw)})", **inputs)


@entry("12_attention", weight=3)
def multihead_attention(g: Gen) -> Case:
    heads = g.choice([1, 2])
    e = heads * g.int(1, 2)
    n, length = g.int(1, 2), g.int(1, 3)
    src = length if g.p(0.6) else g.int(1, 3)
    batched = g.p(0.85)
    bf = g.choice([True, False, None])  # None: the default (batch_first=False)
    dt = "float32" if g.p(0.9) else "float64"

    def shape(t: int) -> tuple[int, ...]:
        if not batched:
            return (t, e)
        return (n, t, e) if bf else (t, n, e)

    x = g.tensor(shape(length), dt, domain="fine")
    self_attention = g.p(0.6)
    inputs = {"x": x}
    if not self_attention:
        inputs["kv"] = g.tensor(shape(src), dt, domain="fine")
    else:
        src = length
    bias = g.p(0.85)
    wi, bi = g.array((3 * e, e), dt), g.array((3 * e,), dt)
    wo, bo = g.array((e, e), dt), g.array((e,), dt)
    inputs.update(wi=wi, bi=bi, wo=wo, bo=bo)
    loads = "in_proj_weight=wi, out_proj__weight=wo"
    if bias:
        loads += ", in_proj_bias=bi, out_proj__bias=bo"
    kw = []
    mask_kind = g.choice(["none", "none", "causal", "bool", "float", "kpm", "kpm", "both"])
    if mask_kind == "causal":
        inputs["cm"] = Input("tensor", np.triu(np.ones((length, src), dtype=bool), 1))
        kw.append("attn_mask=cm" + (", is_causal=True" if g.p(0.5) and src == length else ""))
    if mask_kind in ("bool", "float", "both"):
        mdt = "bool" if mask_kind != "float" else dt
        mshape = (length, src) if g.p(0.8) or not batched else (n * heads, length, src)
        inputs["am"] = Input("tensor", g.values(mshape, mdt, "fine"))
        kw.append("attn_mask=am")
    if mask_kind in ("kpm", "both"):
        kshape = (n, src) if batched else (src,)
        kdt = "bool" if g.p(0.85) or mask_kind == "both" else dt
        inputs["kpm"] = Input("tensor", g.values(kshape, kdt, "fine"))
        kw.append("key_padding_mask=kpm")
    need = g.choice([True, True, False])
    kw.append(f"need_weights={need}")
    if need and g.p(0.3):
        kw.append("average_attn_weights=False")
    ctor = f"nn.MultiheadAttention({e}, {heads}, bias={bias}"
    ctor += ")" if bf is None else f", batch_first={bf})"
    mode = g.choice(["", "", ".eval()"])
    cast = ".double()" if dt == "float64" else ""
    call = "m(x, x, x" if self_attention else "m(x, kv, kv"
    body = f"y, att = {call}, {', '.join(kw)}); out = [y, att]"
    if mode and g.p(0.5):
        body = f"with no_grad():\n    {body}"
    return g.case(f"m = load({ctor}{cast}, {loads}){mode}\n{body}\n"
                  "leaves = list(m.parameters())", **inputs)


# ============================================================================ 13 transformers
@entry("13_transformers", weight=2)
def layer_norm(g: Gen) -> Case:
    # rows of at least three values: one value normalises to exactly 0 and two to exactly ±1,
    # so their gradients are pure cancellation (PyTorch's fused kernel leaves rounding noise)
    shape = g.shape(0, 2, zero=0.0) + (g.int(3, 5),)
    last = g.int(1, min(2, len(shape)))
    normalized = shape[-last:]
    x = g.tensor(shape, "float32" if g.p(0.8) else "float64",
                 domain="huge" if g.p(0.04) else "fine")
    if g.p(0.03):
        x = g.tensor(shape, g.dtype("iub"), grad=False)
    wt, b = g.array(normalized, domain="coarse"), g.array(normalized)
    eps = g.choice([1e-5, 1e-5, 1e-3, 0.1])
    if g.p(0.5):
        affine, bias = g.p(0.8), g.p(0.8)
        loads = ("weight=wt, bias=b" if bias else "weight=wt") if affine else ""
        return g.case(f"m = load(nn.LayerNorm({list(normalized)}, eps={eps}, "
                      f"elementwise_affine={affine}, bias={bias}){', ' + loads if loads else ''}"
                      "); out = m(x); leaves = list(m.parameters())", x=x, wt=wt, b=b)
    wg = Input("tensor", wt.value.astype(x.value.dtype), g.p(0.6))
    bg = Input("tensor", b.value.astype(x.value.dtype), g.p(0.6))
    args = g.choice(["", ", wg", ", wg, bg", ", None, bg"])
    shape_arg = normalized[0] if len(normalized) == 1 and g.p(0.1) else list(normalized)
    return g.case(f"out = F.layer_norm(x, {shape_arg}{args}, eps={eps})", x=x, wg=wg,
                  bg=bg)


# ============================================================================ 08 dataloader
@entry("08_dataloader", weight=2)
def dataloader(g: Gen) -> Case:
    n = g.int(0, 7) if g.p(0.9) else g.int(0, 1)
    a = g.tensor((n,) + g.shape(0, 2, max_side=3), g.dtype("fiub"), grad=False)
    b = Input("tensor", g.values((n,), "int64", "coarse"))
    batch = g.choice([1, 2, 3, 4, 8, None, None])
    drop = g.p(0.3)
    form = g.choice(["tensors", "tensors", "dicts", "tuples", "arrays"])
    if form == "tensors":
        ds = "ds = data.TensorDataset(a, b)"
    elif form == "dicts":
        ds = "ds = [{'x': a[i], 'y': int(b[i]), 'name': str(i)} for i in range(len(a))]"
    elif form == "tuples":
        ds = "ds = [(float(b[i]), (int(b[i]), bool(b[i] > 0))) for i in range(len(b))]"
    else:
        ds = "ds = [a.numpy()[i] for i in range(len(a))]"
    tail = g.choice(["out = [batch for batch in dl]", "out = [len(dl), dl.batch_size, "
                     "dl.drop_last, dl.batch_sampler is None]", "out = [batch for batch in dl]"])
    loader = g.choice([
        f"data.DataLoader(ds, batch_size={batch}, drop_last={drop})",
        # PyTorch's positional order: dataset, batch_size, shuffle, sampler, batch_sampler,
        # num_workers, collate_fn, pin_memory, drop_last
        f"data.DataLoader(ds, {batch}, False, None, None, 0, None, False, {drop})",
        f"data.DataLoader(ds, {batch}, drop_last={drop}, num_workers=0, pin_memory="
        f"{g.p(0.5)}, timeout=0, worker_init_fn=None, prefetch_factor=None, "
        "persistent_workers=False, in_order=True)",
        g.choice([f"data.DataLoader(ds, {batch}, num_workers=-1)",
                  f"data.DataLoader(ds, {batch}, timeout=-1)",
                  f"data.DataLoader(ds, {batch}, prefetch_factor=2)",
                  f"data.DataLoader(ds, {batch}, persistent_workers=True)",
                  f"data.DataLoader(ds, {batch}, multiprocessing_context='spawn')",
                  f"data.DataLoader(ds, {batch}, num_workers={g.int(1, 4)})"])
        if g.p(0.3) else f"data.DataLoader(ds, batch_size={batch}, drop_last={drop})"])
    return g.case(f"{ds}\ndl = {loader}\n{tail}\nno_backward = True", a=a, b=b)


@entry("08_dataloader")
def transforms(g: Gen) -> Case:
    c, h, w = g.int(1, 3), g.int(1, 4), g.int(1, 4)
    kind = g.choice(["to_tensor", "normalize", "pad", "compose"])
    if kind == "to_tensor":
        img = Input("array", g.values((h, w, c) if g.p(0.7) else (h, w),
                                      g.choice(["uint8", "uint8", "float32", "float64"]), "coarse"
                                      if g.p(0.5) else "fine"))
        if img.value.dtype == np.uint8:
            img = Input("array", g.rng.integers(0, 256, img.value.shape).astype(np.uint8))
        return g.case("out = tv.ToTensor()(img); no_backward = True", img=img)
    # coarse values: torchvision pads integer images through float32 (exact below 2**24)
    x = g.tensor((c, h, w) if g.p(0.9) else (g.int(1, 2), c, h, w),
                 g.dtype("f") if g.p(0.9) else g.dtype("iu"), grad=False, domain="coarse")
    mean = [float(v) for v in g.values((c,), "float64", "coarse")]
    std = [float(v) for v in g.values((c,), "float64", "pos" if g.p(0.95) else "coarse")]
    if g.p(0.2):
        mean, std = mean[:1], std[:1]
    if kind == "normalize":
        return g.case(f"out = tv.Normalize({mean!r}, {std!r})(x); no_backward = True", x=x)
    padding = g.choice([1, 2, (1, 2), (0, 1, 2, 1), (1, 0, 0, 0)])
    mode = g.choice(["constant", "constant", "edge", "reflect", "symmetric"])
    fill = g.choice([0, 1, 0.5])
    if kind == "pad":
        return g.case(f"out = tv.pad(x, {padding!r}, fill={fill}, padding_mode='{mode}'); "
                      "no_backward = True", x=x)
    return g.case(f"t = tv.Compose([tv.Normalize({mean!r}, {std!r})]); out = t(x); "
                  "no_backward = True", x=x)


# ============================================================================ 11 embeddings
@entry("11_embeddings")
def positional_encoding(g: Gen) -> Case:
    d, positions = g.int(1, 6), g.int(1, 8)
    kind = g.choice(["table", "add", "learned"])
    if kind == "table":
        return g.case(f"out = PE.sinusoidal({positions}, {d})")
    t = g.int(1, positions)
    offset = g.int(0, positions - t) if g.p(0.9) else positions - t + 1
    x = g.tensor(g.shape(0, 1, max_side=2) + (t, d), "float32", domain="fine")
    if kind == "add":
        return g.case(f"out = PE.add_sinusoidal(x, {offset}, {positions})", x=x)
    table = Input("tensor", g.values((positions, d), "float32", "fine"))
    return g.case(f"out, w = PE.add_learned(x, table, {offset}); leaves = [w]", x=x,
                  table=table)


@entry("11_embeddings", weight=0.5)
def embedding_from_pretrained(g: Gen) -> Case:
    v, d = g.int(1, 4), g.int(1, 3)
    table = g.tensor((v, d), g.dtype("fi"), grad=False)
    ids = Input("tensor", g.values(g.shape(1, 2, max_side=3), "int64", f"index:{v}"))
    freeze = g.p(0.5)
    pad = g.choice([None, 0, v - 1])
    return g.case(f"m = nn.Embedding.from_pretrained(table, freeze={freeze}, padding_idx={pad}); "
                  "out = [m(ids), m.weight.dtype == table.dtype, m.weight.requires_grad]; "
                  "leaves = [m.weight] if m.weight.requires_grad else []", table=table, ids=ids)


# ============================================================================ 15 quantization
@entry("15_quantization", weight=2)
def quantize_tensor(g: Gen) -> Case:
    x = g.tensor(g.shape(0, 2, max_side=4), "float32" if g.p(0.9) else g.dtype("fi"),
                 grad=False, domain=g.choice(["fine", "fine", "coarse", "special"]))
    dtype = g.choice(["qint8", "quint8"])
    scale = g.choice([0.1, 0.25, 0.5, 1 / 64, 3.0, 0.0, -0.5]) if g.p(0.95) else 1e-30
    zp = g.choice([0, 0, 1, 3, -1, 10, 127, 128, -128]) if g.p(0.95) else 300
    tail = g.choice(["out = [q.int_repr(), q.dequantize(), q.q_scale(), q.q_zero_point()]",
                     "out = q.int_repr()", "out = q.dequantize()"])
    return g.case(f"q = lib.quantize_per_tensor(x, {scale}, {zp}, lib.{dtype}); {tail}", x=x)


@entry("15_quantization")
def quantize_channels(g: Gen) -> Case:
    shape = (g.int(1, 3), g.int(1, 3)) + g.shape(0, 1, max_side=2)
    axis = g.int(0, len(shape) - 1) if g.p(0.95) else len(shape)
    x = g.tensor(shape, "float32", grad=False, domain=g.choice(["fine", "coarse", "special"]))
    n = shape[min(axis, len(shape) - 1)]
    scales = Input("tensor", g.values((n,), "float64", "pos"))
    zps = Input("tensor", g.values((n,), "int64", "coarse"))
    dtype = g.choice(["qint8", "quint8"])
    return g.case(f"q = lib.quantize_per_channel(x, s, z, {axis}, lib.{dtype}); "
                  "out = [q.int_repr(), q.dequantize()]", x=x, s=scales, z=zps)


@entry("15_quantization", weight=0.7)
def fake_quantize(g: Gen) -> Case:
    x = g.tensor(g.shape(0, 2, max_side=4), "float32", domain=g.choice(["fine", "coarse",
                                                                        "special"]))
    scale = g.choice([0.1, 0.25, 0.5, 1 / 64, 3.0])
    qmin, qmax = g.choice([(0, 255), (-128, 127), (0, 15), (-8, 7)])
    zp = g.int(qmin, qmax) if g.p(0.9) else qmax + 1
    return g.case(f"out = lib.fake_quantize_per_tensor_affine(x, {scale}, {zp}, {qmin}, {qmax})",
                  x=x)


@entry("15_quantization", weight=2)
def observer(g: Gen) -> Case:
    kind = g.choice(["MinMaxObserver", "MovingAverageMinMaxObserver", "PerChannelMinMaxObserver"])
    per_channel = kind.startswith("PerChannel")
    scheme = g.choice(["affine", "symmetric"])
    qscheme = f"lib.{'per_channel' if per_channel else 'per_tensor'}_{scheme}"
    if g.p(0.03):
        qscheme = f"lib.{'per_tensor' if per_channel else 'per_channel'}_{scheme}"
    dtype = g.choice(["quint8", "qint8"])
    kw = [f"dtype=lib.{dtype}", f"qscheme={qscheme}", f"reduce_range={g.p(0.3)}"]
    if g.p(0.15):
        lo = g.choice([0, -8, -128, 1])
        kw += [f"quant_min={lo}", f"quant_max={g.choice([15, 7, 127, 255])}"]
    if kind == "MovingAverageMinMaxObserver" and g.p(0.5):
        kw.append(f"averaging_constant={g.choice([0.01, 0.5, 1.0])}")
    if per_channel and g.p(0.5):
        kw.append("ch_axis=1")
    steps = g.int(0, 3)
    xs = {f"x{i}": g.tensor((g.int(1, 3), g.int(1, 3)), "float32", grad=False,
                            domain=g.choice(["fine", "coarse"])) for i in range(steps)}
    feed = "".join(f"o({name}); " for name in xs)
    return g.case(f"o = obs.{kind}({', '.join(kw)}); {feed}"
                  "s, z = o.calculate_qparams(); out = [s, z]; no_backward = True", **xs)


# ============================================================================ 16 compression
def _distinct(g: Gen, shape: tuple[int, ...], dtype: str, ties: float = 0.1) -> Input:
    """Values of distinct magnitudes (with probability ``ties`` not): which of several equal
    magnitudes PyTorch prunes depends on its ``topk`` (row ``prune-ties``)."""
    n = int(np.prod(shape))
    if g.p(ties):
        return g.array(shape, dtype, "coarse")
    mags = g.rng.permutation(np.arange(1, n + 1)) / 16.0
    signs = np.where(g.rng.random(n) < 0.5, -1.0, 1.0)
    return Input("array", (mags * signs).astype(dtype).reshape(shape))


@entry("16_compression", weight=2)
def pruning(g: Gen) -> Case:
    fin, fout = g.int(1, 4), g.int(1, 4)
    dt = "float32" if g.p(0.8) else "float64"
    w, b = _distinct(g, (fout, fin), dt), _distinct(g, (fout,), dt)
    x = g.tensor((g.int(1, 2), fin), dt, grad=False)
    amount = g.choice([0.0, 0.25, 0.5, 1, 2, 0.99, 1.0, 3])
    kind = g.choice(["l1", "l1", "ln", "l1_twice", "remove"])
    cast = ".double()" if dt == "float64" else ""
    head = f"m = PR.prunable(load(nn.Linear({fin}, {fout}){cast}, weight=w, bias=b))\n"
    if kind == "ln":
        n, dim = g.choice([1, 2, "inf"]), g.choice([0, 1, -1])
        body = f"PR.ln_structured(m, 'weight', {amount}, n={n}, dim={dim})"
    elif kind == "l1_twice":
        body = (f"PR.l1_unstructured(m, 'weight', {amount}); "
                f"PR.l1_unstructured(m, 'weight', {g.choice([0.5, 1])})")
    else:
        name = g.choice(["weight", "weight", "bias"])
        body = f"PR.l1_unstructured(m, '{name}', {amount})"
    if kind == "remove":
        body += "; PR.remove(m, 'weight')"
        tail = "out = [m.weight, m(x)]"
    elif kind == "l1" and name == "bias":
        tail = "out = [m.bias_mask, m(x)]"
    else:
        tail = "out = [PR.weight(m), m.weight_mask, m(x)]"
    return g.case(f"{head}{body}\n{tail}\nno_backward = True", w=w, b=b, x=x)


@entry("16_compression")
def pruning_masks(g: Gen) -> Case:
    t = Input("tensor", _distinct(g, g.shape(1, 3, max_side=4), "float32" if g.p(0.85)
                                  else "float64").value)
    amount = g.choice([0.0, 0.3, 0.5, 1.0, 1, 2, 0.99, -0.1, 1.5])
    kind = g.choice(["l1", "ln", "global"])
    if kind == "l1":
        return g.case(f"out = PR.l1_mask(t, {amount})", t=t)
    if kind == "ln":
        n, dim = g.choice([1, 2, "inf", "-inf"]), g.dim(t.value.ndim)
        return g.case(f"out = PR.ln_mask(t, {amount}, {n}, {dim})", t=t)
    u = Input("tensor", _distinct(g, g.shape(1, 2, max_side=3), t.value.dtype.name).value
              * np.asarray(1.03, t.value.dtype))
    return g.case(f"out = PR.global_masks([t, u], {amount})", t=t, u=u)


# ============================================================================ 17 memoization
@entry("17_memoization")
def kv_cache(g: Gen) -> Case:
    heads = g.choice([1, 2])
    e = heads * g.int(1, 3)
    b, t = g.int(1, 2), g.int(1, 5)
    prompt = g.int(1, t)
    x = g.tensor((b, t, e), "float32" if g.p(0.85) else "float64", grad=False, domain="fine")
    dt = x.value.dtype.name
    wi, bi = g.array((3 * e, e), dt), g.array((3 * e,), dt)
    wo, bo = g.array((e, e), dt), g.array((e,), dt)
    cast = ".double()" if dt == "float64" else ""
    return g.case(f"m = load(nn.MultiheadAttention({e}, {heads}, batch_first=True){cast}, "
                  "in_proj_weight=wi, in_proj_bias=bi, out_proj__weight=wo, out_proj__bias=bo)"
                  f".eval()\nwith no_grad():\n    out = KV.attend(m, x, {prompt})\n"
                  "no_backward = True", x=x, wi=wi, bi=bi, wo=wo, bo=bo)


# ============================================================================ 18 acceleration
@entry("18_acceleration", weight=2)
def matmul_kernels(g: Gen) -> Case:
    m, k, n = g.int(1, 4), g.int(0, 4) if g.p(0.1) else g.int(1, 4), g.int(1, 4)
    da = g.choice(["float32", "float32", "float64", "int8", "int32", "int64", "uint8", "bool"])
    db = da if g.p(0.9) else g.dtype("fiub")
    a = g.tensor((m, k), da, grad=False, domain="coarse" if da != "int8" else "special")
    b = g.tensor((k if g.p(0.95) else k + 1, n), db, grad=False,
                 domain="coarse" if db != "int8" else "special")
    form = g.choice(["K.loops(a, b)", "K.broadcast(a, b)",
                     f"K.blocked(a, b, {g.choice([1, 2, 3, 64, 0])})",
                     f"K.blocked(a, b, {g.choice([1, 2])}, kernel='broadcast')"])
    return g.case(f"out = {form}; no_backward = True", a=a, b=b)


@entry("18_acceleration", weight=1.5)
def bias_gelu(g: Gen) -> Case:
    shape = g.shape(1, 3)
    dt = g.dtype("f")
    x = g.tensor(shape, dt, domain=g.choice(["fine", "coarse", "special", "huge"]))
    b = g.tensor(shape[-1:], dt, domain=g.choice(["fine", "fine", "huge"]))
    return g.case("out = K.bias_gelu(x, b)", x=x, b=b)
