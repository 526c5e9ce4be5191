"""The 2018 MLPerf-style milestone's scoring: NumPy only, one source for the grader and the script.

The grader (``autograder/milestones/mlperf.py``, in the trusted parent) and the student script
(``milestones/mlperf_2018.py``) score the raw results of ``recipes.mlperf_run`` with these
functions: sizes from the returned arrays, accuracies from a NumPy forward pass of each
returned model, sparsity counted in the returned weights, the generated tokens, and the
speed-up from a sequential median-ratio interval. The grader also checks every new token
against its own forward pass of the returned GPT (``greedy_logits``); the script, which has no
such pass, checks the tokens against each other and the prompts. Thresholds are course.yml's.

The generation's measurements come from the grader's own timing when it grades (the child's
CPU time read from outside, on prompts drawn after the models were committed, the uncached
baseline run by the course's reference in a process of its own) and from the script's
``single_stream`` runs when a student runs it; both have the same layout, one row per pair.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

#: Slack on "the token is the greedy choice": float32 in the child, float64 in the grader.
TOKEN_TOLERANCE = 1e-3

LAYERS = ("0", "2")  # the MLP's Linear layers in ``Sequential(Linear, ReLU, Linear)``


class BadResult(ValueError):
    """A result that does not have the shape, names or dtypes the recipe produces."""


def max_speedup(prompt_len: int, new_tokens: int, context: int) -> float:
    """The largest speed-up a KV cache can physically give: uncached greedy generation runs
    every position of the window again for each new token (``sum(min(t, context))`` positions
    for ``t = P .. P + new - 1``), the cached one each position once (``P + new - 1``: the
    prompt, then each new token but the last), and a
    cached position costs no less than an uncached one (the same layers, one position at a
    time, attending to at least as many keys). A measured ratio above this is not a
    measurement."""
    total = sum(min(t, int(context)) for t in range(int(prompt_len),
                                                    int(prompt_len) + int(new_tokens)))
    return total / max(1, int(prompt_len) + int(new_tokens) - 1)


# ----------------------------------------------------------------------------- models
def _array(state: Mapping[str, Any], name: str, kinds: str, shape: tuple[int, ...] | None,
           what: str) -> np.ndarray:
    a = state.get(name)
    if not isinstance(a, np.ndarray):
        raise BadResult(f"{what}: {name} is missing or not an array")
    if a.dtype.kind not in kinds:
        kind = "an integer" if kinds == "iu" else "a floating-point"
        raise BadResult(f"{what}: {name} has dtype {a.dtype}, expected {kind} array")
    if shape is not None and tuple(a.shape) != shape:
        raise BadResult(f"{what}: {name} has shape {tuple(a.shape)}, expected {shape}")
    if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
        raise BadResult(f"{what}: {name} holds NaN or infinite values")
    return a


def _check_names(state: Any, allowed: set[str], what: str) -> Mapping[str, Any]:
    if not isinstance(state, Mapping):
        raise BadResult(f"{what}: expected a mapping of names to arrays, got "
                            f"{type(state).__name__}")
    extra = sorted(str(k) for k in state if k not in allowed)
    if extra:
        raise BadResult(f"{what}: unexpected arrays {extra[:4]}")
    return state


def _sizes(hidden: int) -> list[tuple[int, int]]:
    return [(int(hidden), 64), (10, int(hidden))]


def float_layers(state: Any, hidden: int, what: str = "float model"
                 ) -> list[tuple[np.ndarray, np.ndarray]]:
    """``[(W (out, in), b (out,)), ...]`` in float64 from a float or pruned MLP state."""
    names = {f"{i}.{p}" for i in LAYERS for p in ("weight", "bias")}
    st = _check_names(state, names, what)
    out = []
    for i, shape in zip(LAYERS, _sizes(hidden), strict=True):
        w = _array(st, f"{i}.weight", "f", shape, what)
        b = _array(st, f"{i}.bias", "f", (shape[0],), what)
        out.append((w.astype(np.float64), b.astype(np.float64)))
    return out


def _quantize_input(x: np.ndarray, scale: float, zero_point: int) -> np.ndarray:
    """What a static quint8 input quantizer passes on: ``(clip(round(x/s) + z) - z) * s``."""
    q = np.clip(np.rint(x / scale) + zero_point, 0, 255)
    return (q - zero_point) * scale


def int8_layers(state: Any, hidden: int
                ) -> list[tuple[np.ndarray, np.ndarray, tuple[float, int] | None]]:
    """``[(W dequantized (out, in), b, input qparams or None), ...]`` from an INT8 MLP state.

    Per layer ``i``: ``i.qweight`` (int8 or uint8, (out, in)), ``i.weight_scale`` and
    ``i.weight_zero_point`` ((out,) per channel or (1,) per tensor), ``i.bias`` (float (out,)),
    and optionally ``i.input_scale`` / ``i.input_zero_point`` ((1,): static activations).
    """
    what = "INT8 model"
    names = {f"{i}.{p}" for i in LAYERS for p in ("qweight", "weight_scale", "weight_zero_point",
                                                  "bias", "input_scale", "input_zero_point")}
    st = _check_names(state, names, what)
    out = []
    for i, shape in zip(LAYERS, _sizes(hidden), strict=True):
        q = _array(st, f"{i}.qweight", "iu", shape, what)
        if q.dtype.itemsize != 1:
            raise BadResult(f"{what}: {i}.qweight has dtype {q.dtype}, not an 8-bit integer")
        scale = _array(st, f"{i}.weight_scale", "f", None, what).astype(np.float64).reshape(-1)
        zp = _array(st, f"{i}.weight_zero_point", "iu", None, what).astype(np.float64).reshape(-1)
        if scale.size not in (1, shape[0]) or zp.size != scale.size or np.any(scale <= 0):
            raise BadResult(f"{what}: {i}.weight_scale / weight_zero_point need 1 or "
                                f"{shape[0]} values (positive scales)")
        w = (q.astype(np.float64) - zp[:, None]) * scale[:, None]
        b = _array(st, f"{i}.bias", "f", (shape[0],), what).astype(np.float64)
        qp: tuple[float, int] | None = None
        if f"{i}.input_scale" in st:
            s = _array(st, f"{i}.input_scale", "f", (1,), what)
            z = _array(st, f"{i}.input_zero_point", "iu", (1,), what)
            if not float(s[0]) > 0:
                raise BadResult(f"{what}: {i}.input_scale must be positive")
            qp = (float(s[0]), int(z[0]))
        out.append((w, b, qp))
    return out


def int8_copy_problem(qlayers: list[Any], flayers: list[tuple[np.ndarray, np.ndarray]],
                      state: Mapping[str, Any]) -> str:
    """Why the INT8 model is not a quantized copy of the float one ("" when it is): each
    dequantized weight within one quantization step of the float weight, biases kept in
    float as they are (PyTorch's quantized Linear stores the float bias)."""
    for i, (qw, qb, _), (fw, fb) in zip(LAYERS, qlayers, flayers, strict=True):
        step = np.asarray(state[f"{i}.weight_scale"], dtype=np.float64).reshape(-1)
        step = np.broadcast_to(step[:, None] if step.size > 1 else step, fw.shape)
        if np.any(np.abs(qw - fw) > step + 1e-7):
            return f"INT8 model: {i}.qweight is not the float model's weight quantized"
        if not np.allclose(qb, fb, rtol=1e-6, atol=1e-7):
            return (f"INT8 model: {i}.bias differs from the float model's (a quantized copy "
                    "keeps the float bias)")
    return ""


def mlp_logits(layers: list[Any], x: np.ndarray) -> np.ndarray:
    """Logits (N, classes) in float64 of ``Linear -> ReLU -> Linear`` layers on ``x (N, 64)``."""
    h = np.asarray(x, dtype=np.float64)
    for k, layer in enumerate(layers):
        w, b = layer[0], layer[1]
        if len(layer) > 2 and layer[2] is not None:
            h = _quantize_input(h, *layer[2])
        h = h @ w.T + b  # (N, out)
        if k < len(layers) - 1:
            h = np.maximum(h, 0.0)
    return h


def int8_static_logits(state: Mapping[str, Any], x: np.ndarray) -> np.ndarray:
    """Logits (N, 10) in float32 of an INT8 MLP whose layers all quantize their input
    statically, in module 15's own float32 steps (``QuantizedLinear``): bit for bit what the
    course's reference computes, where :func:`mlp_logits` is the float64 view. ``state`` has
    passed :func:`int8_layers` (names, shapes, dtypes checked)."""
    h = np.asarray(x, dtype=np.float32)  # (N, 64)
    for k, i in enumerate(LAYERS):
        s = float(np.asarray(state[f"{i}.input_scale"]).reshape(-1)[0])
        z = int(np.asarray(state[f"{i}.input_zero_point"]).reshape(-1)[0])
        q = np.clip(np.rint(h * (np.float32(1.0) / np.float32(s)) + np.float32(z)), 0, 255)
        xi = q.astype(np.uint8).astype(np.int64) - z  # (N, in)
        wz = np.asarray(state[f"{i}.weight_zero_point"]).astype(np.int64).reshape(-1, 1)
        wi = np.asarray(state[f"{i}.qweight"]).astype(np.int64) - wz  # (out, in)
        acc = (xi @ wi.T).astype(np.int32)  # (N, out): exact integers, as the int32 sum
        h = acc.astype(np.float32) * (np.float32(s) * state[f"{i}.weight_scale"])
        h = h + state[f"{i}.bias"]
        if k < len(LAYERS) - 1:
            h = np.maximum(h, np.float32(0.0))
    return h


def mlp_predict(layers: list[Any], x: np.ndarray) -> np.ndarray:
    """Class predictions (N,) of ``Linear -> ReLU -> Linear`` layers on features ``x (N, 64)``."""
    return mlp_logits(layers, x).argmax(axis=1)


def state_bytes(state: Mapping[str, Any]) -> int:
    """Bytes a model stores: the sum of its arrays' ``nbytes``."""
    return int(sum(int(a.nbytes) for a in state.values() if isinstance(a, np.ndarray)))


def weight_sparsity(layers: list[tuple[np.ndarray, np.ndarray]]) -> float:
    """Share of exact zeros among the Linear weights (biases excluded)."""
    total = sum(w.size for w, _ in layers)
    zeros = sum(int(np.count_nonzero(w == 0)) for w, _ in layers)
    return zeros / total


# ----------------------------------------------------------------------------- speed-up
def median_interval(values: np.ndarray, confidence: float) -> tuple[float, float]:
    """Distribution-free two-sided interval for the median of ``values`` (order statistics).

    With the values sorted, ``(v[k-1], v[n-k])`` covers the median with probability at least
    ``confidence`` when ``P(Binomial(n, 1/2) <= k - 1) <= (1 - confidence) / 2``; ``k`` is the
    largest such count. Too few values for any ``k``: ``(-inf, inf)`` (nothing is decided).
    """
    v = np.sort(np.asarray(values, dtype=np.float64))
    n = v.size
    alpha = (1.0 - confidence) / 2.0
    k, cdf = 0, 0.0
    for j in range(n // 2 + 1):  # cdf = P(X <= j)
        cdf += math.comb(n, j) / 2.0 ** n
        if cdf > alpha:
            break
        k = j + 1
    if k == 0:
        return -math.inf, math.inf
    return float(v[k - 1]), float(v[n - k])


def speedup_decision(uncached_s: Any, cached_s: Any, threshold: float, confidence: float,
                     min_pairs: int) -> dict[str, Any]:
    """The sequential speed-up rule on the child's paired CPU timings.

    After each pair ``n >= min_pairs`` the ratios ``uncached / cached`` of the first ``n`` pairs
    give a median interval; ``passed`` at the first ``n`` whose lower end is ``>= threshold``,
    failed at the first ``n`` whose upper end is below it, and failed (undecided) when the
    pairs run out first.

    Returns:
        ``{"passed", "decided", "pairs", "used", "median", "low", "high", "why"}``.

    Raises:
        BadResult: the timings are not two equally long 1-D arrays of positive finite
            seconds.
    """
    u = np.asarray(uncached_s)
    c = np.asarray(cached_s)
    if (u.dtype.kind not in "fiu" or c.dtype.kind not in "fiu" or u.ndim != 1
            or u.shape != c.shape or u.size == 0):
        raise BadResult("generation timings must be two equally long 1-D arrays of seconds")
    u, c = u.astype(np.float64), c.astype(np.float64)
    if not (np.all(np.isfinite(u)) and np.all(np.isfinite(c)) and np.all(u > 0)
            and np.all(c > 0)):
        raise BadResult("generation timings must be positive finite seconds")
    ratios = u / c
    out: dict[str, Any] = {"passed": False, "decided": False, "pairs": int(ratios.size),
                           "used": 0, "median": float(np.median(ratios)), "low": None,
                           "high": None, "why": ""}
    for n in range(max(1, int(min_pairs)), ratios.size + 1):
        low, high = median_interval(ratios[:n], confidence)
        out.update(used=n, median=float(np.median(ratios[:n])), low=low, high=high)
        if low >= threshold:
            out.update(passed=True, decided=True,
                       why=f"interval [{low:.2f}, {high:.2f}] above {threshold:g}")
            return out
        if high < threshold:
            out.update(decided=True, why=f"interval [{low:.2f}, {high:.2f}] below {threshold:g}")
            return out
    if ratios.size < min_pairs:
        out["why"] = f"only {ratios.size} pairs (at least {int(min_pairs)} needed)"
    else:
        out["why"] = (f"undecided after {ratios.size} pairs: interval [{out['low']:.2f}, "
                      f"{out['high']:.2f}] contains {threshold:g}")
    return out


def timing_decided(uncached_s: Any, cached_s: Any, threshold: float, confidence: float,
                   min_pairs: int) -> bool:
    """Whether timing may stop after these pairs: the sequential rule
    (:func:`speedup_decision`, which never decides before ``min_pairs`` pairs; not run on
    fewer) has decided, so no later pair can change its verdict. The grader's plan and the
    milestone script both stop here.

    Raises:
        BadResult: as :func:`speedup_decision`.
    """
    return len(cached_s) >= int(min_pairs) and bool(speedup_decision(
        uncached_s, cached_s, threshold, confidence, min_pairs)["decided"])


# ----------------------------------------------------------------------------- tokens
def _greedy_floor(best: Any) -> Any:
    """The smallest logit that still counts as a greedy choice when ``best`` is the largest
    (``TOKEN_TOLERANCE``: float32 in the child, float64 in the grader)."""
    return best - TOKEN_TOLERANCE * (1.0 + np.abs(best))


def _near_tie(logits: np.ndarray, a: int, b: int) -> bool:
    """Whether tokens ``a`` and ``b`` are both greedy choices of the last row of ``logits``
    (the logits that chose the next token)."""
    row = np.asarray(logits, dtype=np.float64)[-1]
    floor = _greedy_floor(row.max())
    return bool(row[a] >= floor and row[b] >= floor)


def check_tokens(generation: Mapping[str, Any], new_tokens: int, vocab_size: int,
                 greedy_logits: Callable[[np.ndarray], np.ndarray] | None = None) -> str:
    """"" when the generated tokens are right, else why not.

    Right means, for every pair ``r``: the uncached and the cached run are ``(P + new_tokens)``
    ids that begin with ``prompts[r]``, the cached run equals the uncached one, ids are in the
    vocabulary, and, when ``greedy_logits`` is given (the grader's own forward pass of the
    returned GPT: tokens ``(1, T - 1)`` -> logits ``(T - 1, V)``), every new token is within
    float32 slack of the largest logit before it.

    With ``greedy_logits``, the two runs may also part at a near tie: at the first position
    where they differ, both tokens within that slack of the largest logit of the grader's
    forward pass (their common prefix is the same). Two correct float32 computations of the
    same logits (the cached path and the uncached one add in different orders) can pick
    different tokens of a near tie, and the prompts are drawn at random, so without this a
    correct submission would fail now and then; a broken cache is still caught, because every
    cached token must be the greedy choice of the grader's own forward pass.
    """
    prompts = generation.get("prompts")
    u = generation.get("uncached_tokens")
    c = generation.get("cached_tokens")
    if not isinstance(prompts, np.ndarray) or prompts.dtype.kind not in "iu" \
            or prompts.ndim != 2 or prompts.shape[0] == 0:
        return "no prompts were recorded"
    runs, plen = prompts.shape
    total = plen + int(new_tokens)
    for name, a in (("uncached", u), ("cached", c)):
        if not isinstance(a, np.ndarray) or a.dtype.kind not in "iu" or a.shape != (runs, total):
            return f"{name} tokens are not a ({runs}, {total}) integer array"
    assert isinstance(u, np.ndarray) and isinstance(c, np.ndarray)
    for r in range(runs):
        if not np.array_equal(u[r, :plen], prompts[r]) or not np.array_equal(c[r, :plen],
                                                                             prompts[r]):
            return f"run {r} does not begin with its prompt"
        if not np.array_equal(c[r], u[r]):
            first = int(np.argmax(c[r] != u[r]))
            if greedy_logits is None or not _near_tie(
                    greedy_logits(c[r:r + 1, :first]), int(c[r, first]), int(u[r, first])):
                return (f"cached generation differs from uncached in run {r} at position "
                        f"{first} ({int(c[r, first])} instead of {int(u[r, first])})")
    if int(c.min()) < 0 or int(c.max()) >= vocab_size:
        return "generated token ids are out of the vocabulary"
    if greedy_logits is None:
        return ""
    start = plen - 1
    for r in range(runs):
        logits = greedy_logits(c[r:r + 1, :-1])  # (T - 1, V)
        rows = logits[start:]  # the logits that chose tokens P .. T-1
        chosen = rows[np.arange(rows.shape[0]), c[r, start + 1:]]
        best = rows.max(axis=1)
        wrong = np.flatnonzero(chosen < _greedy_floor(best))
        if wrong.size:
            pos = int(wrong[0]) + start + 1
            return (f"run {r}: token {pos} ({int(c[r, pos])}) is not the greedy choice of the "
                    f"model ({int(rows[wrong[0]].argmax())})")
    return ""


def score_seed(result: Any, x: np.ndarray, y: np.ndarray, crit: Mapping[str, float],
               threshold: float, hidden: int, vocab_size: int, context: int,
               greedy_logits: Callable[[Any], Callable[[np.ndarray], np.ndarray]] | None = None
               ) -> tuple[bool, float | None, list[str]]:
    """``(passed, speed-up median or None, notes)`` for one seed's raw result.

    Args:
        result: the models (``recipes.mlperf_models``) and ``"generation"``, the paired
            measurements (the grader's own, or the script's); x, y: held-out features
            ``(N, 64)`` and labels; crit: course.yml's ``criteria``; threshold: the speed-up
            threshold; hidden: the MLP's width; vocab_size, context: the GPT's;
            greedy_logits: ``gpt_params -> (tokens -> logits)``, the grader's forward pass
            (None: the tokens are checked against each other and the prompts only).
    """
    if not isinstance(result, Mapping):
        return False, None, [f"sent a {type(result).__name__}, not the recipe's results"]
    notes: list[str] = []
    ok = True
    n = len(y)
    y = np.asarray(y, dtype=np.int64)
    base: int | None = None
    try:
        base = int(np.count_nonzero(mlp_predict(float_layers(result.get("float"), hidden), x) == y))
        good = base + 1e-9 >= crit["min_float_accuracy"] * n
        ok &= good
        notes.append(f"float accuracy {base / n:.4f}" + ("" if good else
                     f" below {crit['min_float_accuracy']:g}"))
    except BadResult as exc:
        ok = False
        notes.append(str(exc))
    try:
        qstate = result.get("int8")
        qlayers = int8_layers(qstate, hidden)
        qc = int(np.count_nonzero(mlp_predict(qlayers, x) == y))
        fstate = result.get("float")
        if not isinstance(fstate, Mapping) or not isinstance(qstate, Mapping):
            raise BadResult("the float and INT8 models must both be mappings of arrays")
        copy_problem = int8_copy_problem(qlayers, float_layers(fstate, hidden), qstate)
        if copy_problem:
            raise BadResult(copy_problem)
        ratio = state_bytes(fstate) / max(1, state_bytes(qstate))
        small = ratio >= crit["int8_min_size_ratio"]
        close = base is not None and qc + 1e-9 >= base - crit["int8_max_accuracy_drop"] * n
        ok &= small and close
        notes.append(f"INT8 {ratio:.2f}x smaller" + ("" if small else
                     f" (needs {crit['int8_min_size_ratio']:g}x)") + f", accuracy {qc / n:.4f}"
                     + ("" if close else
                        f" (drop over {100 * crit['int8_max_accuracy_drop']:g} points)"))
    except BadResult as exc:
        ok = False
        notes.append(str(exc))
    try:
        players = float_layers(result.get("pruned"), hidden, "pruned model")
        pc = int(np.count_nonzero(mlp_predict(players, x) == y))
        sp = weight_sparsity(players)
        sparse = sp + 1e-12 >= crit["pruned_min_sparsity"]
        close = base is not None and pc + 1e-9 >= base - crit["pruned_max_accuracy_drop"] * n
        ok &= sparse and close
        notes.append(f"pruned {100 * sp:.1f}% zeros" + ("" if sparse else
                     f" (needs {100 * crit['pruned_min_sparsity']:g}%)") + f", accuracy "
                     f"{pc / n:.4f}" + ("" if close else
                     f" (drop over {100 * crit['pruned_max_accuracy_drop']:g} points)"))
    except BadResult as exc:
        ok = False
        notes.append(str(exc))
    speed: float | None = None
    gen = result.get("generation")
    try:
        if not isinstance(gen, Mapping):
            raise BadResult("no generation measurements")
        if gen.get("problem"):
            raise BadResult(str(gen["problem"]))
        greedy = None if greedy_logits is None else greedy_logits(result.get("gpt"))
        why = check_tokens(gen, int(crit["new_tokens"]), vocab_size, greedy)
        if why:
            raise BadResult(why)
        d = speedup_decision(gen.get("uncached_s"), gen.get("cached_s"), threshold,
                             crit["confidence"], int(crit["min_pairs"]))
        bound = max_speedup(np.asarray(gen["prompts"]).shape[1], int(crit["new_tokens"]),
                            context)
        if d["median"] > bound:
            raise BadResult(f"a measured speed-up of {d['median']:.1f}x is more than a KV cache "
                            f"can give here ({bound:.1f}x): implausible, not counted")
        speed = d["median"]
        ok &= bool(d["passed"])
        notes.append(f"KV cache {d['median']:.2f}x faster (median of {d['used']} of "
                     f"{d['pairs']} pairs; {d['why']})")
    except BadResult as exc:
        ok = False
        notes.append(f"generation: {exc}")
    return bool(ok), speed, notes
