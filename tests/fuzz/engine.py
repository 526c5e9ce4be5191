"""Differential fuzzer engine: run one generated case in tinytorch_ref and in PyTorch, compare.

A *case* is a few lines of Python (``code``) plus named inputs. The same code runs twice, in a
namespace bound to ``tinytorch_ref`` and in one bound to ``torch`` (see ``namespaces.py``), so
the one-line reproduction of a difference is the case itself::

    a = T([4, 9], 'int64'); b = 0.5; out = a ** b

The run compares what the code raised (raised or not), the result's type, shape, dtype and
values, and, when the result is a float tensor that requires grad, the gradients of every leaf
(the tensor inputs created with ``grad=True`` and anything the code lists in ``leaves``) after
``out.backward(upstream)`` with the same random ``upstream`` on both sides. A failing case is
minimised (smaller shapes, simpler values) while the same kind of difference persists.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

# ----------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class Input:
    """One named input of a case.

    ``kind``: ``"tensor"`` (``value`` is an ndarray; ``grad`` makes it a leaf that requires
    grad), ``"scalar"`` (a Python bool/int/float), ``"npscalar"`` (a NumPy scalar such as
    ``np.float64(2.5)``), ``"array"`` (a raw ndarray passed as is, e.g. a weight to copy).
    """

    kind: str
    value: Any
    grad: bool = False

    def render(self) -> str:
        """Python source that rebuilds this input in either namespace."""
        if self.kind == "tensor":
            return _render_tensor(self.value, self.grad)
        if self.kind == "array":
            return _render_array(self.value)
        if self.kind == "npscalar":
            return f"np.{np.asarray(self.value).dtype.name}({_render_number(self.value.item())})"
        return _render_number(self.value)


def _render_number(x: Any) -> str:
    if isinstance(x, bool):
        return repr(x)
    if isinstance(x, float):
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
    return repr(x)


def _render_list(arr: np.ndarray) -> str:
    if arr.ndim == 0:
        if arr.dtype in (np.float32, np.float16) and np.isfinite(arr):
            return str(arr[()])  # the shortest text that gives back this float32 value
        return _render_number(arr.item())
    return "[" + ", ".join(_render_list(a) for a in arr) + "]"


def _render_values(arr: np.ndarray) -> str:
    if arr.size == 0:
        return f"[], '{arr.dtype.name}', shape={tuple(arr.shape)}"
    return f"{_render_list(arr)}, '{arr.dtype.name}'"


def _render_tensor(arr: np.ndarray, grad: bool) -> str:
    return f"T({_render_values(arr)}{', grad=True' if grad else ''})"


def _render_array(arr: np.ndarray) -> str:
    return f"A({_render_values(arr)})"


@dataclass(frozen=True)
class Case:
    """A generated case: which catalogue entry made it, its code, its inputs, its seed."""

    module: str
    entry: str
    code: str
    inputs: tuple[tuple[str, Input], ...]
    seed: int

    def repro(self) -> str:
        """The one-line reproduction: input assignments, then the code."""
        parts = [f"{name} = {inp.render()}" for name, inp in self.inputs]
        return "; ".join(parts + [self.code.strip().replace("\n", "; ")])

    def signature(self) -> str:
        """Input kinds and dtypes, e.g. ``int64,float``: part of a difference's class."""
        out = []
        for _, inp in self.inputs:
            if inp.kind in ("tensor", "array"):
                arr = inp.value
                tag = arr.dtype.name + ("[0d]" if arr.ndim == 0 else "")
                out.append(tag + ("+g" if inp.grad else ""))
            elif inp.kind == "npscalar":
                out.append(f"np.{np.asarray(inp.value).dtype.name}")
            else:
                out.append(type(inp.value).__name__)
        return ",".join(out)


# ----------------------------------------------------------------------------- running


@dataclass
class Outcome:
    """What one library did with a case: the exception, or the normalised result + grads."""

    raised: str | None = None
    result: Any = None
    grads: dict[str, Any] = field(default_factory=dict)
    backward_raised: str | None = None


_CODE_CACHE: dict[str, Any] = {}


def _compiled(code: str) -> Any:
    obj = _CODE_CACHE.get(code)
    if obj is None:
        obj = compile(code, "<fuzz case>", "exec")
        if len(_CODE_CACHE) > 20000:
            _CODE_CACHE.clear()
        _CODE_CACHE[code] = obj
    return obj


def run(case: Case, lib: Any) -> Outcome:
    """Execute ``case`` against one library namespace (``namespaces.Lib``)."""
    scope: dict[str, Any] = dict(lib.names)
    leaves: list[tuple[str, Any]] = []
    try:
        for name, inp in case.inputs:
            scope[name] = lib.make(inp)
            if inp.kind == "tensor" and inp.grad:
                leaves.append((name, scope[name]))
    except Exception as exc:  # noqa: BLE001 - a library refusing an input is an outcome
        return Outcome(raised="input: " + _one_line(exc))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            try:
                exec(_compiled(case.code), scope)  # noqa: S102 - our own catalogue's code
            except Exception as exc:  # noqa: BLE001
                return Outcome(raised=_one_line(exc))
            out = scope.get("out")
            outcome = Outcome(result=lib.normalise(out))
            for i, leaf in enumerate(scope.get("leaves", ())):
                leaves.append((f"leaves[{i}]", leaf))
            known = {id(t) for _, t in leaves}
            for name in sorted(scope):  # leaves a reproduction line made itself (T(..., grad=True))
                value = scope[name]
                if (isinstance(value, lib.tensor_type) and id(value) not in known
                        and name not in lib.names and lib.is_grad_leaf(value)):
                    leaves.append((name, value))
            if scope.get("no_backward") or not lib.wants_backward(out):
                return outcome
            upstream = np.asarray(np.random.default_rng(case.seed).standard_normal(
                tuple(lib.shape(out))).round(2))
            upstream[np.abs(upstream) < 0.05] = 0.5  # a zero would hide a gradient
            try:
                lib.backward(out, upstream)
            except Exception as exc:  # noqa: BLE001
                outcome.backward_raised = _one_line(exc)
                return outcome
            for name, leaf in leaves:
                outcome.grads[name] = lib.normalise(lib.grad(leaf))
    return outcome


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:160]}"


# ----------------------------------------------------------------------------- comparing


@dataclass(frozen=True)
class Difference:
    """One way the two outcomes differ; ``kind`` names the class, ``detail`` the values."""

    kind: str
    detail: str


def _tol(dtype: str, loose: bool) -> tuple[float, float]:
    if loose or dtype in ("float32", "float16", "bfloat16"):
        return 1e-4, 1e-5
    return 1e-7, 1e-9


def compare_values(ours: Any, theirs: Any, where: str, loose: bool = False) -> list[Difference]:
    """Compare two normalised results (see ``namespaces.normalise``).

    ``loose``: the case computed in float32 somewhere, so float64 results (e.g. the gradient
    of a float64 input that met float32 data) are compared at float32 precision too.
    """
    if type(ours) is not type(theirs):
        return [Difference(f"{where}type",
                           f"ours {_short(ours)}, torch {_short(theirs)}")]
    if isinstance(ours, TensorValue):
        if ours.shape != theirs.shape:
            return [Difference(f"{where}shape", f"ours {ours.shape}, torch {theirs.shape}")]
        if ours.dtype != theirs.dtype:
            return [Difference(f"{where}dtype", f"ours {ours.dtype}, torch {theirs.dtype}"
                               f" (values ours {_few(ours.values)}, torch {_few(theirs.values)})")]
        if not _close(ours.values, theirs.values, ours.dtype, loose):
            return [Difference(f"{where}value",
                               f"ours {_few(ours.values)}, torch {_few(theirs.values)}")]
        if ours.requires_grad != theirs.requires_grad:
            return [Difference(f"{where}requires_grad",
                               f"ours {ours.requires_grad}, torch {theirs.requires_grad}")]
        return []
    if isinstance(ours, (list, tuple)):
        if len(ours) != len(theirs):
            return [Difference(f"{where}length", f"ours {len(ours)}, torch {len(theirs)}")]
        diffs: list[Difference] = []
        for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            diffs += compare_values(a, b, f"{where}[{i}].", loose)
        return diffs
    if isinstance(ours, dict):
        if sorted(ours) != sorted(theirs):
            return [Difference(f"{where}keys", f"ours {sorted(ours)}, torch {sorted(theirs)}")]
        diffs = []
        for k in sorted(ours):
            diffs += compare_values(ours[k], theirs[k], f"{where}{k}.", loose)
        return diffs
    if isinstance(ours, float):
        if not _close(np.asarray(ours), np.asarray(theirs), "float32", loose):
            return [Difference(f"{where}value", f"ours {ours!r}, torch {theirs!r}")]
        return []
    if ours != theirs:
        return [Difference(f"{where}value", f"ours {ours!r}, torch {theirs!r}")]
    return []


def compare(ours: Outcome, theirs: Outcome, loose: bool = False) -> list[Difference]:
    """Every difference between the two outcomes (empty when they agree)."""
    if (ours.raised is None) != (theirs.raised is None):
        who = "ours" if ours.raised else "torch"
        return [Difference("raised", f"only {who} raised: {ours.raised or theirs.raised}")]
    if ours.raised is not None:
        return []
    diffs = compare_values(ours.result, theirs.result, "", loose)
    if diffs:
        return diffs
    if (ours.backward_raised is None) != (theirs.backward_raised is None):
        who = "ours" if ours.backward_raised else "torch"
        return [Difference("backward-raised",
                           f"only {who} raised: {ours.backward_raised or theirs.backward_raised}")]
    for name in sorted(set(ours.grads) | set(theirs.grads)):
        a, b = ours.grads.get(name, "missing"), theirs.grads.get(name, "missing")
        diffs += compare_values(a, b, f"grad {name} ", loose)
    return diffs


def computes_in_float32(case: Case) -> bool:
    """Whether some input of ``case`` is float32 (or narrower): then compare loosely."""
    for _, inp in case.inputs:
        if inp.kind in ("tensor", "array", "npscalar"):
            if np.asarray(inp.value).dtype in (np.float32, np.float16):
                return True
    return False


@dataclass(frozen=True)
class TensorValue:
    """A tensor result in plain data: dtype name, shape, values, requires_grad."""

    dtype: str
    shape: tuple[int, ...]
    values: np.ndarray
    requires_grad: bool

    def __repr__(self) -> str:
        return f"{self.dtype}{list(self.shape)} {_few(self.values)}"


def _close(a: np.ndarray, b: np.ndarray, dtype: str, loose: bool = False) -> bool:
    if a.dtype.kind not in "fc":
        return bool(np.array_equal(a, b))
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    nan_a, nan_b = np.isnan(a64), np.isnan(b64)
    if not np.array_equal(nan_a, nan_b):
        return False
    fin = np.isfinite(a64) & np.isfinite(b64)
    if not np.array_equal(a64[~fin & ~nan_a], b64[~fin & ~nan_a]):
        return False
    rtol, atol = _tol(dtype, loose)
    x, y = a64[fin], b64[fin]
    scale = max(1.0, float(np.abs(y).max())) if y.size else 1.0
    return bool(np.all(np.abs(x - y) <= atol * scale + rtol * np.abs(y)))


def _few(values: np.ndarray) -> str:
    flat = np.asarray(values).reshape(-1)
    shown = ", ".join(_render_number(v.item()) if v.dtype.kind != "f" else f"{v.item():.6g}"
                      for v in flat[:6])
    return "[" + shown + (", ..." if flat.size > 6 else "") + "]"


def _short(x: Any) -> str:
    text = repr(x)
    return text if len(text) < 120 else text[:117] + "..."


# ----------------------------------------------------------------------------- conditioning
#: How much further from the float64 answer than PyTorch's own float32 result ours may be.
ROUNDING_FACTOR = 2.0


def widened(case: Case) -> Case | None:
    """``case`` with every float32 input in float64: a shadow whose result is the float32
    computation's exact answer to about 1e-16. None when the code names a float32 dtype itself
    (the shadow would then compute partly in float32)."""
    if "float32" in case.code or "float16" in case.code or ".float()" in case.code:
        return None
    inputs = []
    for name, inp in case.inputs:
        value = inp.value
        if inp.kind in ("tensor", "array") and value.dtype == np.float32:
            value = value.astype(np.float64)
        elif inp.kind == "npscalar" and np.asarray(value).dtype == np.float32:
            value = np.float64(value)
        inputs.append((name, replace(inp, value=value)))
    return replace(case, inputs=tuple(inputs))


def within_rounding(ours: Outcome, theirs: Outcome, exact: Outcome) -> bool:
    """Whether ours is a float32 rounding of the same computation as PyTorch's: the same
    structure, dtypes and non-finite entries, and every finite value at most
    ``ROUNDING_FACTOR`` times as far from the float64 shadow's as PyTorch's own float32 value.

    A trajectory that cancels most of its digits (an optimizer step landing near 0) magnifies
    a difference of one unit in the last place, such as PyTorch's fused multiply-add, into a
    relative difference of 1e-2; both libraries are then equally far from the exact answer.
    An inf or a nan on either side is never rounding.
    """
    if ours.raised or theirs.raised or exact.raised:
        return False
    pairs = [(ours.result, theirs.result, exact.result)]
    for name in set(ours.grads) | set(theirs.grads):
        if name not in ours.grads or name not in theirs.grads or name not in exact.grads:
            return False
        pairs.append((ours.grads[name], theirs.grads[name], exact.grads[name]))
    return all(_rounding_only(a, b, x) for a, b, x in pairs)


def _rounding_only(a: Any, b: Any, x: Any) -> bool:
    if isinstance(a, (list, tuple)):
        return (isinstance(b, (list, tuple)) and isinstance(x, (list, tuple))
                and len(a) == len(b) == len(x)
                and all(_rounding_only(p, q, r) for p, q, r in zip(a, b, x, strict=True)))
    if isinstance(a, dict):
        return (isinstance(b, dict) and isinstance(x, dict) and sorted(a) == sorted(b) == sorted(x)
                and all(_rounding_only(a[k], b[k], x[k]) for k in a))
    if not isinstance(a, TensorValue):
        return bool(a == b) if not isinstance(a, float) else _close(
            np.asarray(a), np.asarray(b), "float32")
    if not (isinstance(b, TensorValue) and isinstance(x, TensorValue) and a.dtype == b.dtype
            and a.shape == b.shape == x.shape and a.requires_grad == b.requires_grad
            and a.dtype == "float32" and x.dtype == "float64"):
        return False
    p, q, r = (np.asarray(v, dtype=np.float64) for v in (a.values, b.values, x.values))
    if not (np.all(np.isfinite(p)) and np.all(np.isfinite(q)) and np.all(np.isfinite(r))):
        return False
    rtol, atol = _tol("float32", True)  # element by element: a large entry hides nothing
    return bool(np.all(np.abs(p - r) <= ROUNDING_FACTOR * np.abs(q - r) + atol + rtol * np.abs(r)))


# ----------------------------------------------------------------------------- minimising


def _candidates(case: Case) -> list[Case]:
    """Smaller or simpler variants of ``case``, most aggressive first."""
    out: list[Case] = []
    names = [n for n, _ in case.inputs]
    for i, (name, inp) in enumerate(case.inputs):
        for new in _simpler_inputs(inp):
            inputs = list(case.inputs)
            inputs[i] = (name, new)
            out.append(replace(case, inputs=tuple(inputs)))
    # shrink the leading dimension of every tensor input at once (keeps broadcasting valid)
    tens = [i for i, (_, inp) in enumerate(case.inputs)
            if inp.kind in ("tensor", "array") and inp.value.ndim > 0]
    if len(tens) > 1:
        for keep in (1,):
            inputs = list(case.inputs)
            changed = False
            for i in tens:
                arr = inputs[i][1].value
                if arr.shape[0] > keep:
                    inputs[i] = (names[i], replace(inputs[i][1], value=arr[:keep].copy()))
                    changed = True
            if changed:
                out.append(replace(case, inputs=tuple(inputs)))
    return out


def _simpler_inputs(inp: Input) -> list[Input]:
    if inp.kind in ("scalar", "npscalar"):
        v = inp.value
        py = v.item() if isinstance(v, np.generic) else v
        if isinstance(py, bool):
            return []
        options: list[Any] = [0, 1, 2, -1] if isinstance(py, int) else [0.0, 1.0, 0.5, 2.0]
        if isinstance(py, float) and math.isfinite(py) and py != round(py):
            options.append(float(round(py)))
        res = []
        for o in options:
            if o == py or (isinstance(py, float) and not math.isfinite(py)):
                continue
            new = type(v)(o) if isinstance(v, np.generic) else o
            res.append(replace(inp, value=new))
        return res
    if inp.kind not in ("tensor", "array"):
        return []
    arr = inp.value
    res = []
    if inp.grad:
        res.append(replace(inp, grad=False))
    for axis in range(arr.ndim):
        if arr.shape[axis] > 1:
            res.append(replace(inp, value=np.take(arr, [0], axis=axis)))
            half = arr.shape[axis] // 2
            if half > 1:
                res.append(replace(inp, value=np.take(arr, range(half), axis=axis)))
    for axis in range(arr.ndim):  # drop a dimension
        if arr.shape[axis] == 1:
            res.append(replace(inp, value=np.take(arr, 0, axis=axis)))
    if arr.size and arr.dtype.kind in "fiu":
        for simple in (0, 1):
            cand = np.full_like(arr, simple)
            if not np.array_equal(cand, arr):
                res.append(replace(inp, value=cand))
        if arr.dtype.kind == "f":
            with np.errstate(all="ignore"):
                rounded = np.where(np.isfinite(arr), np.round(arr), arr).astype(arr.dtype)
            if not np.array_equal(rounded, arr, equal_nan=True):
                res.append(replace(inp, value=rounded))
            with np.errstate(all="ignore"):
                halves = np.where(np.isfinite(arr), np.round(arr * 2) / 2, arr).astype(arr.dtype)
            if not np.array_equal(halves, arr, equal_nan=True) and not np.array_equal(
                    halves, rounded, equal_nan=True):
                res.append(replace(inp, value=halves))
        flat = arr.reshape(-1)
        for j in range(min(flat.size, 8)):  # simplify one element at a time
            v = flat[j]
            if v != 0 and not (arr.dtype.kind == "f" and np.isnan(v)):
                one = flat.copy()
                one[j] = 0
                res.append(replace(inp, value=one.reshape(arr.shape)))
    return res


def _size(case: Case) -> tuple[int, int, float]:
    n, dims, mag = 0, 0, 0.0
    for _, inp in case.inputs:
        if inp.kind in ("tensor", "array"):
            n += inp.value.size
            dims += inp.value.ndim
            if inp.value.size and inp.value.dtype.kind in "fiu":
                with np.errstate(all="ignore"):
                    v = np.abs(inp.value.astype(np.float64))
                mag += float(np.sum(np.where(np.isfinite(v), v, 1e6)))
            n += int(inp.grad)
    return n, dims, mag


def minimise(case: Case, kind: str, check: Callable[[Case], list[Difference]],
             budget: int = 400) -> Case:
    """Greedily shrink ``case`` while ``check`` still reports a difference of ``kind``."""
    best = case
    tries = 0
    improved = True
    while improved and tries < budget:
        improved = False
        for cand in _candidates(best):
            tries += 1
            if tries > budget:
                break
            if _size(cand) >= _size(best):
                continue
            try:
                diffs = check(cand)
            except Exception:  # noqa: BLE001 - a candidate that breaks the harness is skipped
                continue
            if any(d.kind == kind for d in diffs):
                best = cand
                improved = True
                break
    return best
