"""The 2018 MLPerf-style milestone: the child measures, the parent decides.

Graded with module 19 (course.yml ``mlperf_2018``). Per seed the sandboxed child runs
``milestones/recipes.py`` ``mlperf_run`` with the package under test and returns raw data only:

* ``float`` / ``int8`` / ``pruned``: the ``state_dict`` arrays of the trained 1986 digits MLP,
  its INT8 copy (module 15) and its 50%-pruned, fine-tuned copy (module 16);
* ``gpt``: the parameters of the GPT whose generation was timed;
* ``generation``: CPU seconds of paired runs generating ``new_tokens`` tokens greedily, uncached
  and with module 17's ``CachedGPT`` (alternating which runs first), and the tokens of each run.

The trusted parent (:func:`score`) never trusts a number it can compute itself:

* sizes are the bytes of the returned arrays (``int8_min_size_ratio``);
* accuracies come from a NumPy forward pass of each returned model on the 360 held-out digits,
  which only the parent holds (``min_float_accuracy``, ``int8_max_accuracy_drop``,
  ``pruned_max_accuracy_drop``, compared as counts);
* sparsity is counted in the returned pruned weights (``pruned_min_sparsity``);
* the generated tokens must be the same for every cached run and the uncached run, begin with
  the parent's prompt, and each new token must be the greedy choice of the parent's own
  forward pass of the returned GPT;
* the speed-up is the median of the per-pair ratios ``uncached / cached``; its distribution-free
  confidence interval (order statistics of the ratios, binomial sign-test coverage) is
  evaluated after each pair from ``min_pairs`` on, and the seed's speed-up passes at the first
  pair count whose interval lies above ``threshold`` (it fails as soon as the interval lies
  below, or when the pairs run out undecided).

A seed passes when every check holds; the milestone when ``min_passing_seeds`` seeds pass.
Every number is course.yml's (``threshold`` and ``criteria``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from autograder.milestones import gpt_forward
from autograder.milestones.data import data_for, recipes
from autograder.milestones.gpt_forward import BadParameters
from tito.course import Course, Milestone, load_course

ID = "mlperf_2018"

#: The course.yml ``criteria`` keys this grader reads (all required).
CRITERIA: tuple[str, ...] = ("new_tokens", "confidence", "min_pairs", "int8_min_size_ratio",
                             "int8_max_accuracy_drop", "pruned_min_sparsity",
                             "pruned_max_accuracy_drop", "min_float_accuracy")

#: Share of a seed's CPU-second slot the child may spend (the rest: import, sending back).
TRAIN_SHARE = 0.6

#: Slack on "the token is the greedy choice": float32 in the child, float64 here.
TOKEN_TOLERANCE = 1e-3

LAYERS = ("0", "2")  # the MLP's Linear layers in ``Sequential(Linear, ReLU, Linear)``


def criteria(ms: Milestone) -> dict[str, float]:
    """The milestone's named thresholds; a missing key is a course.yml error naming it."""
    missing = [k for k in CRITERIA if k not in ms.criteria]
    if missing:
        raise KeyError(f"course.yml: milestones {ms.id}: criteria: missing {', '.join(missing)}")
    return {k: float(ms.criteria[k]) for k in CRITERIA}


def milestone(course: Course | None = None) -> Milestone:
    for ms in (course or load_course()).milestones:
        if ms.id == ID:
            return ms
    raise KeyError(f"milestone {ID!r} is not in course.yml")


def task() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The digits split of the 1986 MLP: ``(train_x, train_y, test_x, test_y)``."""
    return data_for("mlp_1986")


def prompt(seed: int, length: int | None = None) -> np.ndarray:
    """The parent's prompt for a seed: ``(1, P)`` int64 token ids (``P`` from the recipe)."""
    cfg = recipes().MLPERF
    n = int(cfg["prompt"] if length is None else length)
    rng = np.random.default_rng([2018, int(seed)])
    return rng.integers(0, cfg["gpt"]["vocab_size"], size=(1, n)).astype(np.int64)


def item_budget_s(ms: Milestone) -> float:
    """CPU seconds the child's recipe may use for one seed."""
    return TRAIN_SHARE * ms.time_budget_s / len(ms.seeds)


# ----------------------------------------------------------------------------- models
def _array(state: Mapping[str, Any], name: str, kinds: str, shape: tuple[int, ...] | None,
           what: str) -> np.ndarray:
    a = state.get(name)
    if not isinstance(a, np.ndarray):
        raise BadParameters(f"{what}: {name} is missing or not an array")
    if a.dtype.kind not in kinds:
        kind = "an integer" if kinds == "iu" else "a floating-point"
        raise BadParameters(f"{what}: {name} has dtype {a.dtype}, expected {kind} array")
    if shape is not None and tuple(a.shape) != shape:
        raise BadParameters(f"{what}: {name} has shape {tuple(a.shape)}, expected {shape}")
    if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
        raise BadParameters(f"{what}: {name} holds NaN or infinite values")
    return a


def _check_names(state: Any, allowed: set[str], what: str) -> Mapping[str, Any]:
    if not isinstance(state, Mapping):
        raise BadParameters(f"{what}: expected a mapping of names to arrays, got "
                            f"{type(state).__name__}")
    extra = sorted(str(k) for k in state if k not in allowed)
    if extra:
        raise BadParameters(f"{what}: unexpected arrays {extra[:4]}")
    return state


def _sizes() -> list[tuple[int, int]]:
    hidden = int(recipes().MLP["hidden"])
    return [(hidden, 64), (10, hidden)]


def float_layers(state: Any, what: str = "float model") -> list[tuple[np.ndarray, np.ndarray]]:
    """``[(W (out, in), b (out,)), ...]`` in float64 from a float or pruned MLP state."""
    names = {f"{i}.{p}" for i in LAYERS for p in ("weight", "bias")}
    st = _check_names(state, names, what)
    out = []
    for i, shape in zip(LAYERS, _sizes(), strict=True):
        w = _array(st, f"{i}.weight", "f", shape, what)
        b = _array(st, f"{i}.bias", "f", (shape[0],), what)
        out.append((w.astype(np.float64), b.astype(np.float64)))
    return out


def _quantize_input(x: np.ndarray, scale: float, zero_point: int) -> np.ndarray:
    """What a static quint8 input quantizer passes on: ``(clip(round(x/s) + z) - z) * s``."""
    q = np.clip(np.rint(x / scale) + zero_point, 0, 255)
    return (q - zero_point) * scale


def int8_layers(state: Any) -> list[tuple[np.ndarray, np.ndarray, tuple[float, int] | None]]:
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
    for i, shape in zip(LAYERS, _sizes(), strict=True):
        q = _array(st, f"{i}.qweight", "iu", shape, what)
        if q.dtype.itemsize != 1:
            raise BadParameters(f"{what}: {i}.qweight has dtype {q.dtype}, not an 8-bit integer")
        scale = _array(st, f"{i}.weight_scale", "f", None, what).astype(np.float64).reshape(-1)
        zp = _array(st, f"{i}.weight_zero_point", "iu", None, what).astype(np.float64).reshape(-1)
        if scale.size not in (1, shape[0]) or zp.size != scale.size or np.any(scale <= 0):
            raise BadParameters(f"{what}: {i}.weight_scale / weight_zero_point need 1 or "
                                f"{shape[0]} values (positive scales)")
        w = (q.astype(np.float64) - zp[:, None]) * scale[:, None]
        b = _array(st, f"{i}.bias", "f", (shape[0],), what).astype(np.float64)
        qp: tuple[float, int] | None = None
        if f"{i}.input_scale" in st:
            s = _array(st, f"{i}.input_scale", "f", (1,), what)
            z = _array(st, f"{i}.input_zero_point", "iu", (1,), what)
            if not float(s[0]) > 0:
                raise BadParameters(f"{what}: {i}.input_scale must be positive")
            qp = (float(s[0]), int(z[0]))
        out.append((w, b, qp))
    return out


def mlp_predict(layers: list[Any], x: np.ndarray) -> np.ndarray:
    """Class predictions (N,) of ``Linear -> ReLU -> Linear`` layers on features ``x (N, 64)``."""
    h = np.asarray(x, dtype=np.float64)
    for k, layer in enumerate(layers):
        w, b = layer[0], layer[1]
        if len(layer) > 2 and layer[2] is not None:
            h = _quantize_input(h, *layer[2])
        h = h @ w.T + b  # (N, out)
        if k < len(layers) - 1:
            h = np.maximum(h, 0.0)
    return h.argmax(axis=1)


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
        BadParameters: the timings are not two equally long 1-D arrays of positive finite
            seconds.
    """
    u = np.asarray(uncached_s)
    c = np.asarray(cached_s)
    if (u.dtype.kind not in "fiu" or c.dtype.kind not in "fiu" or u.ndim != 1
            or u.shape != c.shape or u.size == 0):
        raise BadParameters("generation timings must be two equally long 1-D arrays of seconds")
    u, c = u.astype(np.float64), c.astype(np.float64)
    if not (np.all(np.isfinite(u)) and np.all(np.isfinite(c)) and np.all(u > 0)
            and np.all(c > 0)):
        raise BadParameters("generation timings must be positive finite seconds")
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


# ----------------------------------------------------------------------------- tokens
def check_tokens(generation: Mapping[str, Any], gpt_params: Any, seed: int,
                 new_tokens: int) -> str:
    """"" when the generated tokens are right, else why not.

    Right means: the uncached run is ``(1, P + new_tokens)`` and begins with the parent's
    prompt; every cached run equals it; and every new token is (within float32 slack) the
    largest logit of the parent's forward pass of ``gpt_params`` on the tokens before it.
    """
    cfg = dict(recipes().MLPERF["gpt"])
    p = prompt(seed)
    total = p.shape[1] + int(new_tokens)
    u = generation.get("uncached_tokens")
    c = generation.get("cached_tokens")
    if not isinstance(u, np.ndarray) or u.dtype.kind not in "iu" or u.shape != (1, total):
        return f"uncached tokens are not a (1, {total}) integer array"
    if not isinstance(c, np.ndarray) or c.dtype.kind not in "iu" or c.ndim != 2 \
            or c.shape[1] != total or c.shape[0] == 0:
        return f"cached tokens are not an (runs, {total}) integer array"
    if not np.array_equal(u[:, :p.shape[1]], p):
        return "the uncached run does not begin with the grader's prompt"
    bad = [i for i in range(c.shape[0]) if not np.array_equal(c[i], u[0])]
    if bad:
        first = int(np.argmax(c[bad[0]] != u[0]))
        return (f"cached generation differs from uncached in run {bad[0]} at position {first} "
                f"({int(c[bad[0], first])} instead of {int(u[0, first])})")
    if int(u.min()) < 0 or int(u.max()) >= cfg["vocab_size"]:
        return "generated token ids are out of the vocabulary"
    logits = gpt_forward.gpt_logits(gpt_params, u[:, :-1], vocab_size=cfg["vocab_size"],
                                    context=cfg["context"], d_model=cfg["d_model"],
                                    n_layers=cfg["n_layers"], n_heads=cfg["n_heads"],
                                    dtype=np.float64)[0]  # (T - 1, V)
    start = p.shape[1] - 1
    rows = logits[start:]  # the logits that chose tokens P .. T-1
    chosen = rows[np.arange(rows.shape[0]), u[0, start + 1:]]
    best = rows.max(axis=1)
    wrong = np.flatnonzero(chosen < best - TOKEN_TOLERANCE * (1.0 + np.abs(best)))
    if wrong.size:
        pos = int(wrong[0]) + start + 1
        return (f"token {pos} ({int(u[0, pos])}) is not the greedy choice of the model "
                f"({int(rows[wrong[0]].argmax())})")
    return ""


# ----------------------------------------------------------------------------- verdict
def score_seed(ms: Milestone, seed: int, result: Any, test_x: np.ndarray,
               test_y: np.ndarray) -> tuple[bool, float | None, list[str]]:
    """``(passed, speed-up median or None, notes)`` for one seed's raw result."""
    crit = criteria(ms)
    if not isinstance(result, Mapping):
        return False, None, [f"sent a {type(result).__name__}, not the recipe's results"]
    notes: list[str] = []
    ok = True
    n = len(test_y)
    x = recipes().digits_features(test_x)
    y = np.asarray(test_y, dtype=np.int64)
    base: int | None = None
    try:
        base = int(np.count_nonzero(mlp_predict(float_layers(result.get("float")), x) == y))
        good = base + 1e-9 >= crit["min_float_accuracy"] * n
        ok &= good
        notes.append(f"float accuracy {base / n:.4f}" + ("" if good else
                     f" below {crit['min_float_accuracy']:g}"))
    except BadParameters as exc:
        ok = False
        notes.append(str(exc))
    try:
        qstate = result.get("int8")
        qc = int(np.count_nonzero(mlp_predict(int8_layers(qstate), x) == y))
        ratio = state_bytes(result.get("float")) / max(1, state_bytes(qstate))
        small = ratio >= crit["int8_min_size_ratio"]
        close = base is not None and qc + 1e-9 >= base - crit["int8_max_accuracy_drop"] * n
        ok &= small and close
        notes.append(f"INT8 {ratio:.2f}x smaller" + ("" if small else
                     f" (needs {crit['int8_min_size_ratio']:g}x)") + f", accuracy {qc / n:.4f}"
                     + ("" if close else
                        f" (drop over {100 * crit['int8_max_accuracy_drop']:g} points)"))
    except BadParameters as exc:
        ok = False
        notes.append(str(exc))
    try:
        players = float_layers(result.get("pruned"), "pruned model")
        pc = int(np.count_nonzero(mlp_predict(players, x) == y))
        sp = weight_sparsity(players)
        sparse = sp + 1e-12 >= crit["pruned_min_sparsity"]
        close = base is not None and pc + 1e-9 >= base - crit["pruned_max_accuracy_drop"] * n
        ok &= sparse and close
        notes.append(f"pruned {100 * sp:.1f}% zeros" + ("" if sparse else
                     f" (needs {100 * crit['pruned_min_sparsity']:g}%)") + f", accuracy "
                     f"{pc / n:.4f}" + ("" if close else
                     f" (drop over {100 * crit['pruned_max_accuracy_drop']:g} points)"))
    except BadParameters as exc:
        ok = False
        notes.append(str(exc))
    speed: float | None = None
    gen = result.get("generation")
    try:
        if not isinstance(gen, Mapping):
            raise BadParameters("no generation measurements")
        why = check_tokens(gen, result.get("gpt"), seed, int(crit["new_tokens"]))
        if why:
            raise BadParameters(why)
        d = speedup_decision(gen.get("uncached_s"), gen.get("cached_s"), ms.threshold,
                             crit["confidence"], int(crit["min_pairs"]))
        speed = d["median"]
        ok &= bool(d["passed"])
        notes.append(f"KV cache {d['median']:.2f}x faster (median of {d['used']} of "
                     f"{d['pairs']} pairs; {d['why']})")
    except BadParameters as exc:
        ok = False
        notes.append(f"generation: {exc}")
    return bool(ok), speed, notes


def score(ms: Milestone, results_by_seed: Mapping[Any, Any]) -> dict[str, Any]:
    """The k-of-n verdict from each seed's raw result (``None``: crashed or out of time)."""
    _, _, test_x, test_y = task()
    by_seed: dict[int, Any] = {}
    for key, value in results_by_seed.items():
        try:
            by_seed[int(key)] = value
        except (TypeError, ValueError):
            continue
    per_seed: dict[int, float | None] = {}
    passing: list[int] = []
    lines: list[str] = []
    for seed in ms.seeds:
        raw = by_seed.get(seed)
        if raw is None:
            per_seed[seed] = None
            lines.append(f"seed {seed}: no results (crashed or out of time)")
            continue
        ok, speed, notes = score_seed(ms, seed, raw, test_x, test_y)
        per_seed[seed] = speed
        if ok:
            passing.append(seed)
        lines.append(f"seed {seed}: {'passed' if ok else 'failed'}: " + "; ".join(notes))
    passed = len(passing) >= ms.min_passing_seeds
    message = (f"{ms.id} {'passed' if passed else 'failed'}: {len(passing)} of {len(ms.seeds)} "
               f"seeds met every target (needed {ms.min_passing_seeds}).\n" + "\n".join(lines))
    return {"passed": passed, "score": float(ms.points) if passed else 0.0,
            "max_score": float(ms.points), "per_seed": per_seed, "passing_seeds": passing,
            "seeds": list(ms.seeds), "threshold": ms.threshold,
            "min_passing_seeds": ms.min_passing_seeds, "metric": ms.metric,
            "message": message}


# ----------------------------------------------------------------------------- harness
def make_probe(course: Course | None = None) -> Callable[[Any, int], Any]:
    """``probe(pkg, seed) -> dict``: the training split, prompts and budget are bound now,
    before any student code runs; the held-out digits are dropped here."""
    ms = milestone(course)
    crit = criteria(ms)
    train_x, train_y, _, _ = task()
    prompts = {s: prompt(s) for s in ms.seeds}
    run = recipes().mlperf_run
    budget = item_budget_s(ms)
    new_tokens = int(crit["new_tokens"])

    def probe(pkg: Any, seed: int) -> dict[str, Any]:
        s = int(seed)
        ids = prompts[s] if s in prompts else prompt(s)
        return dict(run(pkg, s, train_x.copy(), train_y.copy(), ids.copy(), new_tokens, budget))

    probe.__name__ = f"probe_{ID}"
    return probe


def make_verdict(course: Course | None = None) -> Callable[[Mapping[Any, Any]], dict[str, Any]]:
    """``evaluate(results_by_seed) -> dict``: the parent's verdict (the labels load here)."""

    def verdict(results_by_seed: Mapping[Any, Any]) -> dict[str, Any]:
        return score(milestone(course), results_by_seed)

    verdict.__name__ = f"verdict_{ID}"
    return verdict


def run_in_process(package: Any, course: Course | None = None,
                   seeds: list[int] | None = None) -> dict[str, Any]:
    """Measure a TRUSTED package in this process and score it as the grader does (staff
    tools and tests). Returns :func:`score`'s dict plus ``seconds`` (seed -> CPU seconds) and
    ``results`` (seed -> the raw results); a seed that raises counts as None."""
    ms = milestone(course)
    probe = make_probe(course)
    if seeds is not None:
        ms = ms.model_copy(update={"seeds": seeds,
                                   "min_passing_seeds": min(ms.min_passing_seeds, len(seeds))})
    results: dict[int, Any] = {}
    seconds: dict[int, float] = {}
    for seed in ms.seeds:
        t0 = time.process_time()
        try:
            results[seed] = probe(package, seed)
        except Exception:  # noqa: BLE001 - a broken package fails the seed, like a crash
            results[seed] = None
        seconds[seed] = time.process_time() - t0
    out = score(ms, results)
    out["seconds"] = seconds
    out["results"] = results
    return out
