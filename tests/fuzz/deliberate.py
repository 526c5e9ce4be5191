"""Deliberate differences from PyTorch: the fuzzer skips exactly the cases these match.

Each entry's ``id`` is a row of the table in ``docs/conformance.md`` (what, why, what the
student should expect); ``tests/parity/test_fuzz.py`` checks that the two lists agree. A
predicate sees the case *before* it runs and answers whether the documented difference
applies, so everything else is still compared.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from .engine import Case, Input


@dataclass(frozen=True)
class Deliberate:
    id: str
    applies: Callable[[Case], bool]


def _dtypes(case: Case) -> set[str]:
    return {np.asarray(inp.value).dtype.name for _, inp in case.inputs
            if inp.kind in ("tensor", "array", "npscalar")}


def _inputs(case: Case) -> dict[str, Input]:
    return dict(case.inputs)


def _pow_operands(case: Case) -> tuple[Input, Input] | None:
    m = re.fullmatch(r"out = (\w+) \*\* (\w+)", case.code.strip())
    if not m:
        return None
    ins = _inputs(case)
    return ins[m.group(1)], ins[m.group(2)]


def _exponent_rounding_changes_power_rule(case: Case) -> bool:
    """``t ** p`` with a float32 ``t`` requiring grad, where rounding ``p - 1`` to float32
    changes whether it is an integer (or its parity), so the power rule's sign or NaN-ness
    differs from PyTorch, which keeps ``p - 1`` in double precision."""
    ops = _pow_operands(case)
    if ops is None or ops[1].kind not in ("scalar", "npscalar") or not ops[0].grad:
        return False
    q = float(ops[1].value) - 1
    if not np.isfinite(q):
        return False
    q32 = float(np.float32(q))
    whole, whole32 = q == round(q), q32 == round(q32)
    return whole != whole32 or (whole and int(q) % 2 != int(q32) % 2)


def _bool_power_gradient(case: Case) -> bool:
    """``True ** t`` (PyTorch's backward fails with an internal assert, a PyTorch bug) and
    ``t ** False`` (PyTorch does not see False as the exponent 0 and returns NaN at 0)."""
    ops = _pow_operands(case)
    if ops is None:
        return False
    base, exp = ops
    return ((base.kind == "scalar" and isinstance(base.value, bool) and exp.grad)
            or (exp.kind == "scalar" and isinstance(exp.value, bool) and base.grad))


class _Key:
    """``_Key()[expr]`` gives back the index ``expr`` itself (slices and all)."""

    def __getitem__(self, key: object) -> object:
        return key


def _out_of_range_index_into_empty_result(case: Case) -> bool:
    """``x[...]`` with an out-of-range index array where the selection is empty: PyTorch
    checks index values only for the elements it gathers (none), NumPy checks them all."""
    if case.entry != "getitem":
        return False
    m = re.fullmatch(r"out = a\[(.*)\]", case.code.strip())
    if not m:
        return False
    ins = _inputs(case)
    a = ins["a"].value

    def in_range(item: object) -> object:
        """An integer index array (a literal list too) as zeros: in range if the dimension
        is not empty."""
        if isinstance(item, (list, np.ndarray)):
            try:
                arr = np.asarray(item)
            except ValueError:
                return item
            if arr.dtype.kind in "iu":
                return np.zeros_like(arr)
        return item

    def select(arrays: dict[str, np.ndarray], safe: bool = False) -> np.ndarray:
        scope: dict[str, object] = {"a": np.zeros(a.shape), **arrays}
        index = eval(f"K[{m.group(1)}]", {"__builtins__": {"slice": slice}},  # noqa: S307
                     {**scope, "K": _Key()})
        if isinstance(index, list) and any(  # PyTorch reads such a list as a tuple
                isinstance(i, (list, tuple, np.ndarray, slice)) or i is None or i is Ellipsis
                for i in index):
            index = tuple(index)
        if safe:
            index = (tuple(in_range(i) for i in index) if isinstance(index, tuple)
                     else in_range(index))
        return scope["a"][index]

    real = {k: v.value for k, v in ins.items() if k != "a"}
    try:
        select(real)
        return False
    except (TypeError, ValueError):  # not NumPy's business (e.g. a list read as a tuple)
        return False
    except IndexError as exc:
        if "out of bounds" not in str(exc):
            return False
    safe = {k: (np.zeros_like(v) if v.dtype.kind in "iu" else v) for k, v in real.items()}
    try:
        return select(safe, safe=True).size == 0
    except (IndexError, ValueError):
        return False


def _extreme_integer_exponent(case: Case) -> bool:
    """A float tensor to an integer tensor power holding its dtype's minimum or maximum:
    PyTorch's gradient computes ``exponent - 1`` in the integer dtype, which overflows."""
    ops = _pow_operands(case)
    if ops is None or ops[1].kind != "tensor":
        return False
    e = np.asarray(ops[1].value)
    if e.dtype.kind not in "iu" or not ops[0].grad:
        return False
    info = np.iinfo(e.dtype)
    return bool(np.any((e == info.min) | (e == info.max)))


def _int_scalar_out_of_range(case: Case) -> bool:
    """``clamp`` or ``**`` of a small integer tensor with a Python int it cannot hold:
    PyTorch raises (or wraps) case by case, we wrap as its arithmetic does."""
    if case.entry == "clamp":
        names = [k for k in ("lo", "hi") if re.search(rf"\b{k}\b", case.code)]
        tensor = _inputs(case)["a"]
    elif (ops := _pow_operands(case)) is not None:
        names = [n for n, inp in case.inputs if inp is ops[1] or inp is ops[0]]
        tensor = ops[0] if ops[0].kind == "tensor" else ops[1]
    else:
        return False
    dtype = np.asarray(tensor.value).dtype
    if dtype.kind not in "iu":
        return False
    info = np.iinfo(dtype)
    ins = _inputs(case)
    return any(ins[k].kind == "scalar" and isinstance(ins[k].value, int)
               and not isinstance(ins[k].value, bool)
               and not info.min <= ins[k].value <= info.max for k in names)


def _inplace_on_graph(case: Case) -> bool:
    if case.entry != "inplace_op":
        return False
    ins = _inputs(case)
    return ins["b"].grad or (ins["a"].grad and "v = a[0]" in case.code)


def _empty_matmul_mixed_dtypes(case: Case) -> bool:
    """``a @ b`` (module 01) or module 18's kernels with two dtypes — or bool, which no
    ``matmul`` of PyTorch computes — where an operand is empty: PyTorch skips its checks."""
    if case.entry not in ("matmul", "matmul_kernels"):
        return False
    ins = _inputs(case)
    a, b = ins["a"].value, ins["b"].value
    odd = a.dtype != b.dtype or (case.entry == "matmul_kernels" and a.dtype == np.bool_)
    return odd and (a.size == 0 or b.size == 0)


def _prune_ties(case: Case) -> bool:
    """Pruning where several entries (or, structured, several slices' norms) are equal: which
    of them PyTorch prunes depends on the order its ``topk`` returns ties in (unspecified);
    ours prunes the first."""
    if case.entry not in ("pruning", "pruning_masks"):
        return False
    ins = _inputs(case)
    arrays = [np.abs(np.asarray(ins[k].value, dtype=np.float64)).ravel()
              for k in ("w", "b", "t", "u") if k in ins]
    if "global_masks" in case.code:
        arrays = [np.concatenate(arrays)]
    m = (re.search(r"ln_structured\(m, 'weight', [^,]+, n=([^,]+), dim=(-?\d+)\)", case.code)
         or re.search(r"ln_mask\(t, [^,]+, ([^,]+), (-?\d+)\)", case.code))
    if m is not None:  # structured: ties among the norms of the slices
        values = np.asarray((ins["w"] if "w" in ins else ins["t"]).value, dtype=np.float64)
        n = {"inf": np.inf, "-inf": -np.inf}.get(m.group(1).strip(), None)
        n = float(m.group(1)) if n is None else n
        d = int(m.group(2)) % max(values.ndim, 1)
        if values.ndim < 2 or values.size == 0:
            return False
        rows = np.moveaxis(values, d, 0).reshape(values.shape[d], -1)
        norms = np.linalg.norm(rows, ord=n, axis=1)
        return np.unique(norms).size < norms.size
    return any(np.unique(a).size < a.size for a in arrays)


def _bce_logits_target_grad_at_inf(case: Case) -> bool:
    """BCE with logits, an infinite logit and a target that requires grad: the target's
    gradient is ``inf - inf`` in one order of operations and ``inf`` in the other."""
    if "with_logits" not in case.code and "BCEWithLogits" not in case.code:
        return False
    ins = _inputs(case)
    return ins["t"].grad and bool(np.isinf(ins["x"].value).any())


def _gelu_at_inf(case: Case) -> bool:
    """GELU of ±inf, or of a float32 value so large that ``x·(1 + erf)`` overflows in
    PyTorch's vectorised kernel (its scalar path, for the last few elements, does not)."""
    return "gelu" in case.code.lower() and any(
        inp.kind == "tensor" and inp.value.dtype.kind == "f" and (
            np.isinf(inp.value).any() or (inp.value.dtype == np.float32
                                          and (np.abs(inp.value) > 1.7e38).any()))
        for _, inp in case.inputs)


def _max_pool_minus_inf_beside_padding(case: Case) -> bool:
    """Max pooling of an input holding ``-inf`` where windows reach padding (``padding``
    above 0, or the extra rows of ``ceil_mode``)."""
    if case.entry != "pool2d" or "max" not in case.code.lower():
        return False
    if not np.isneginf(_inputs(case)["x"].value).any():
        return False
    m = re.search(r"padding=(\d+)", case.code) or re.search(r", (\d+)\)\(?", case.code)
    return (m is not None and m.group(1) != "0") or "ceil_mode=True" in case.code


def _max_pool_window_of_padding_only(case: Case) -> bool:
    """Max pooling with a dilation whose taps skip every real pixel of some window: PyTorch
    returns ``-inf`` there and an index outside the input, which its backward writes to (a
    PyTorch bug: it corrupts memory). The generator writes these calls with keywords:
    ``max_pool2d(x, K, stride=S, padding=P, dilation=D, ceil_mode=C)``."""
    if case.entry != "pool2d" or "dilation=" not in case.code:
        return False
    m = re.search(r"(?:MaxPool2d\(|max_pool2d\(x, )(\(\d+, \d+\)|\d+), stride=(.*?), "
                  r"padding=(\d+), dilation=(\(\d+, \d+\)|\d+), ceil_mode=(True|False)",
                  case.code)
    if m is None:
        return False

    def pair(text: str) -> tuple[int, int]:
        nums = [int(v) for v in re.findall(r"\d+", text)]
        return (nums[0], nums[0]) if len(nums) == 1 else (nums[0], nums[1])

    k = pair(m.group(1))
    s = k if m.group(2) == "None" else pair(m.group(2))
    p, d, ceil = int(m.group(3)), pair(m.group(4)), m.group(5) == "True"
    size = _inputs(case)["x"].value.shape[-2:]
    for axis in (0, 1):
        n, kk, ss, dd = size[axis], k[axis], s[axis], d[axis]
        out = (n + 2 * p - dd * (kk - 1) - 1 + (ss - 1 if ceil else 0)) // ss + 1
        if ceil and (out - 1) * ss >= n + p:
            out -= 1
        if any(not any(0 <= i * ss - p + u * dd < n for u in range(kk)) for i in range(out)):
            return True
    return False


class _Called(Exception):
    """Raised by the recorders of ``_conv_call`` once they have the arguments."""


def _conv_call(case: Case) -> dict | None:
    """The convolution's arguments (``x``, ``weight``, ``stride``, ``padding``,
    ``dilation``, ``mode``), read by running the case's code against recorders."""
    got: dict = {}

    def conv2d(x: object, weight: object, bias: object = None, stride: object = 1,
               padding: object = 0, dilation: object = 1, groups: object = 1) -> None:
        got.update(x=x, weight=weight, stride=stride, padding=padding, dilation=dilation,
                   mode="zeros")
        raise _Called

    def conv_layer(cin: object, cout: object, kernel_size: object, stride: object = 1,
                   padding: object = 0, dilation: object = 1, groups: object = 1,
                   bias: object = True, padding_mode: str = "zeros") -> None:
        got.update(stride=stride, padding=padding, dilation=dilation, mode=padding_mode)
        raise _Called

    scope = {name: inp.value for name, inp in case.inputs}
    scope.update(F=SimpleNamespace(conv2d=conv2d), nn=SimpleNamespace(Conv2d=conv_layer),
                 load=lambda m, **_: m)
    try:
        exec(case.code, scope)  # noqa: S102 - the catalogue's own code
    except _Called:
        pass
    except Exception:  # noqa: BLE001 - not a convolution this can read
        return None
    if not got:
        return None
    ins = _inputs(case)
    got.setdefault("x", ins["x"].value)
    got.setdefault("weight", (ins["wt"] if "wt" in ins else ins["wg"]).value)
    return got


def _zeros_outside_the_sum(size: int, kernel: int, stride: int, dilation: int, before: int,
                           after: int) -> bool:
    """Along one axis: does some window tap land on zero padding, or some pixel lie in no
    window (a stride that skips it, rows left over at the end)?"""
    span = size + before + after
    n_out = (span - dilation * (kernel - 1) - 1) // stride + 1
    if n_out < 1:
        return False
    read = {i * stride + u * dilation for i in range(n_out) for u in range(kernel)}
    return any(r < before or r >= before + size for r in read) or any(
        before + r not in read for r in range(size))


def _conv_non_finite_weight_times_zero(case: Case) -> bool:
    """A convolution with an infinite or NaN weight and zeros that are not part of the sum:
    zero padding some tap lands on (forward), or pixels no window reads (backward). Ours
    leaves them out; PyTorch multiplies them in (``0 · inf``) or not, depending on the
    kernel it picks for the shapes."""
    if case.entry != "conv2d":
        return False
    call = _conv_call(case)
    if call is None or np.isfinite(np.asarray(call["weight"], dtype=np.float64)).all():
        return False
    weight, x = np.asarray(call["weight"]), np.asarray(call["x"])
    if weight.ndim != 4 or x.ndim < 2:
        return False

    def pair(v: object) -> tuple[int, int]:
        return (int(v[0]), int(v[1])) if isinstance(v, (tuple, list)) else (int(v), int(v))

    kernel, stride, dilation = weight.shape[2:], pair(call["stride"]), pair(call["dilation"])
    padding = call["padding"]
    if padding == "same":
        total = [dilation[i] * (kernel[i] - 1) for i in (0, 1)]
        pads = [(t // 2, t - t // 2) for t in total]
    elif padding == "valid":
        pads = [(0, 0), (0, 0)]
    else:
        pads = [(p, p) for p in pair(padding)]
    size = x.shape[-2:]
    if call["mode"] != "zeros":  # the padding holds real pixels: a larger image, no padding
        size = (size[0] + sum(pads[0]), size[1] + sum(pads[1]))
        pads = [(0, 0), (0, 0)]
    return any(_zeros_outside_the_sum(size[i], kernel[i], stride[i], dilation[i], *pads[i])
               for i in (0, 1))


def _layer_norm_overflowing_variance(case: Case) -> bool:
    """Layer norm of values whose squares, summed over a row, can overflow: |x| above
    sqrt(max / n) for a row of at most n = x.size values (float32: 1.8e19 for one value,
    float64: 1.3e154; less for longer rows): ours is the true value; PyTorch's Welford sums
    overflow and give NaN, 0 or the right value depending on the values
    (pytorch/pytorch#162489)."""
    if case.entry != "layer_norm":
        return False
    x = _inputs(case)["x"].value
    if x.dtype not in (np.dtype(np.float32), np.dtype(np.float64)) or x.size == 0:
        return False
    limit = float(np.sqrt(np.finfo(x.dtype).max / x.size))
    return bool((np.abs(x.astype(np.float64)) > limit).any())


DELIBERATE: list[Deliberate] = [
    Deliberate("no-float16", lambda c: bool(_dtypes(c) & {"float16", "bfloat16"})),
    Deliberate("no-complex", lambda c: any(d.startswith("complex") for d in _dtypes(c))),
    Deliberate("tensor-is-a-module", lambda c: "lib.tensor(" in c.code),
    Deliberate("inplace-on-graph", _inplace_on_graph),
    Deliberate("numpy-bool-operand", lambda c: "np.bool_(" in c.code or any(
        inp.kind == "npscalar" and np.asarray(inp.value).dtype == np.bool_
        for _, inp in c.inputs)),
    Deliberate("float32-rounded-exponent", _exponent_rounding_changes_power_rule),
    Deliberate("bool-power-gradient", _bool_power_gradient),
    Deliberate("extreme-integer-exponent", _extreme_integer_exponent),
    Deliberate("out-of-range-index-into-empty-result", _out_of_range_index_into_empty_result),
    Deliberate("full-smoothing-infinite-logit", lambda c: c.entry == "class_loss"
               and "label_smoothing=1.0" in c.code and bool(np.isinf(_inputs(c)["x"].value).any())),
    Deliberate("int-scalar-out-of-range", _int_scalar_out_of_range),
    Deliberate("empty-matmul-mixed-dtypes", _empty_matmul_mixed_dtypes),
    Deliberate("reduction-keepdim-without-dim", lambda c: bool(
        re.search(r"\.(sum|mean|max)\(keepdim=", c.code) or ".max(dim=None" in c.code)),
    Deliberate("gelu-at-infinity", _gelu_at_inf),
    Deliberate("sigmoid-keeps-tiny-values", lambda c: c.entry == "composite_graph"
               and "sigmoid" in c.code and any(
                   inp.kind == "tensor" and bool((inp.value < -88).any())
                   for _, inp in c.inputs)),
    Deliberate("gelu-float64-precision", lambda c: "gelu" in c.code.lower()
               and "tanh" not in c.code and "float64" in _dtypes(c)),
    Deliberate("bce-logits-target-grad-at-infinity", _bce_logits_target_grad_at_inf),
    Deliberate("softmax-of-empty-non-float", lambda c: c.entry == "softmax" and any(
        inp.kind == "tensor" and inp.value.dtype.kind != "f" and inp.value.size == 0
        for _, inp in c.inputs)),
    Deliberate("dropout-of-non-float", lambda c: c.entry == "dropout" and any(
        inp.kind == "tensor" and inp.value.dtype.kind != "f" for _, inp in c.inputs)),
    Deliberate("numpy-of-grad-tensor", lambda c: ".numpy()" in c.code and any(
        inp.grad for _, inp in c.inputs)),
    Deliberate("layer-norm-mixed-dtypes", lambda c: c.entry == "layer_norm" and len(
        {d for d in _dtypes(c) if d.startswith("float")}) > 1),
    Deliberate("max-pool-minus-inf-beside-padding", _max_pool_minus_inf_beside_padding),
    Deliberate("max-pool-window-of-padding-only", _max_pool_window_of_padding_only),
    Deliberate("conv-non-finite-weight-times-zero", _conv_non_finite_weight_times_zero),
    Deliberate("prune-ties", _prune_ties),
    Deliberate("uint8-target-weight-smoothing-mean", lambda c: c.entry == "class_loss"
               and _inputs(c)["t"].value.dtype == np.uint8 and "weight=w" in c.code
               and "label_smoothing" in c.code and "reduction='mean'" in c.code),
    Deliberate("layer-norm-overflowing-variance", _layer_norm_overflowing_variance),
    Deliberate("dataloader-worker-processes", lambda c: c.entry == "dataloader"
               and bool(re.search(r"num_workers=[1-9]", c.code))),
    Deliberate("tanh-saturation-ulp", lambda c: c.entry == "composite_graph"
               and ".tanh()" in c.code and "float32" in _dtypes(c) and any(
                   inp.kind == "tensor" and bool((np.abs(inp.value) >= 3).any())
                   for _, inp in c.inputs)),
    Deliberate("batch-norm-of-empty-input", lambda c: c.entry.startswith("batch_norm")
               and _inputs(c)["x"].value.size == 0),
]


def deliberate_for(case: Case) -> str | None:
    """The id of the deliberate difference that covers ``case``, if any."""
    for d in DELIBERATE:
        if d.applies(case):
            return d.id
    return None
