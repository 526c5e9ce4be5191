"""The 2018 MLPerf-style milestone: the child measures, the parent decides.

Graded with module 19 (course.yml ``mlperf_2018``), under the milestone contract of
:mod:`autograder.milestones` with its optional hooks: the provider (``providers/mlperf_2018.py``)
builds the task (:func:`task`: a digits variant), times the generation (:func:`plan`) and
judges what the trainer committed together with the timings (:func:`evaluate_seed`). Per seed
slot the sandboxed child runs ``tinytorch_milestones/recipes.py`` ``TRAINERS["mlperf_2018"]``
(``mlperf_models``) with the package under test and commits raw data only:

* ``float`` / ``int8`` / ``pruned``: the ``state_dict`` arrays of the trained 1986 digits MLP,
  its INT8 copy (module 15) and its 50%-pruned, fine-tuned copy (module 16);
* ``gpt``: the parameters of the GPT whose generation is timed.

Then the parent times the generation itself (:mod:`autograder.harness.timing`): per pair, a
prompt it draws after the commit, greedy generation of ``new_tokens`` tokens with module 17's
``CachedGPT`` in the child (``recipes.TIMED_WORK``) and without a cache by the course's
reference GPT holding the committed parameters in the trusted twin (``recipes.BASELINE_WORK``),
alternating which runs first; each run's CPU time read from outside. Nothing the child measures
counts: a patched clock or a wrapped ``single_stream`` changes nothing.

The trusted parent (:func:`score`, with the NumPy scoring of
``tinytorch_milestones.mlperf_score``, which the student script shares) never trusts a number it can compute itself:

* sizes are the bytes of the returned arrays (``int8_min_size_ratio``);
* accuracies come from a NumPy forward pass of each returned model on the variant's 360
  held-out digits, which only the parent holds (``min_float_accuracy``, ``int8_max_accuracy_drop``,
  ``pruned_max_accuracy_drop``, compared as counts);
* sparsity is counted in the returned pruned weights (``pruned_min_sparsity``);
* each pair's cached tokens must equal the reference's uncached ones, begin with the parent's
  prompt, and each new token must be the greedy choice of the parent's own forward pass of the
  returned GPT;
* the speed-up is the median of the per-pair ratios ``uncached / cached``; its distribution-free
  confidence interval (order statistics of the ratios, binomial sign-test coverage) is
  evaluated after each pair from ``min_pairs`` on, and the seed's speed-up passes at the first
  pair count whose interval lies above ``threshold`` (it fails as soon as the interval lies
  below, or when the pairs run out undecided); a median above what a KV cache can physically
  give (``mlperf_score.max_speedup``) is implausible and fails the seed.

A seed passes when every check holds; the milestone when ``min_passing_seeds`` seeds pass.
Every number is course.yml's (``threshold`` and ``criteria``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

import numpy as np

from autograder.milestones import gpt_forward
from autograder.milestones import work as milestone_work
from autograder.milestones.data import MLPERF_SCORE, course_module, loaders, recipes
from autograder.milestones.gpt_forward import BadParameters
from autograder.milestones.grading import k_of_n
from autograder.suite import Baseline, Run, TimedResult
from coursekit.course import Course, Milestone, load_course

ID = "mlperf_2018"

#: The course.yml ``criteria`` keys this grader reads (all required).
CRITERIA: tuple[str, ...] = ("new_tokens", "confidence", "min_pairs", "int8_min_size_ratio",
                             "int8_max_accuracy_drop", "pruned_min_sparsity",
                             "pruned_max_accuracy_drop", "min_float_accuracy")


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


def task(seed: int | None = None) -> tuple[Any, np.ndarray, Any, np.ndarray]:
    """The provider's ``task``: variant ``seed`` of the 1986 digits task (pixels and labels
    permuted, ``tinytorch_data.loaders.milestone_task``), as ``({"images", "new_tokens"}, train_y,
    {"images"}, test_y)``; only the first two reach the child (the prompts are drawn by
    :func:`plan`, after the commit). ``seed=None``: the plain digits split ``(train_x, train_y,
    test_x, test_y)`` (module 20's event)."""
    if seed is None:
        return tuple(loaders().milestone_data("mlp_1986"))
    train_x, train_y, test_x, test_y = loaders().milestone_task("mlp_1986", int(seed))
    new_tokens = int(criteria(milestone())["new_tokens"])
    return ({"images": train_x, "new_tokens": new_tokens}, train_y, {"images": test_x}, test_y)


def work(ms: Milestone) -> dict[str, Any]:
    """The trainer's ``work`` for one seed: course.yml ``training`` and the seed's CPU cap."""
    return milestone_work(ms)


# ----------------------------------------------------------------------------- scoring
def scoring() -> ModuleType:
    """``tinytorch_milestones.mlperf_score``: the NumPy scoring shared with the student script."""
    return course_module(MLPERF_SCORE)


def _hidden() -> int:
    return int(recipes().MLP["hidden"])


def float_layers(state: Any, what: str = "float model") -> list[tuple[np.ndarray, np.ndarray]]:
    """``[(W, b), ...]`` in float64 from a float or pruned state of the recipe's MLP."""
    return scoring().float_layers(state, _hidden(), what)


def int8_layers(state: Any) -> list[Any]:
    """``[(W dequantized, b, input qparams or None), ...]`` from an INT8 state of the MLP."""
    return scoring().int8_layers(state, _hidden())


def mlp_predict(layers: list[Any], x: np.ndarray) -> np.ndarray:
    return scoring().mlp_predict(layers, x)


def mlp_logits(layers: list[Any], x: np.ndarray) -> np.ndarray:
    return scoring().mlp_logits(layers, x)


def int8_static_logits(state: Mapping[str, Any], x: np.ndarray) -> np.ndarray:
    return scoring().int8_static_logits(state, x)


def state_bytes(state: Mapping[str, Any]) -> int:
    return int(scoring().state_bytes(state))


def median_interval(values: np.ndarray, confidence: float) -> tuple[float, float]:
    return scoring().median_interval(values, confidence)


def speedup_decision(uncached_s: Any, cached_s: Any, threshold: float, confidence: float,
                     min_pairs: int) -> dict[str, Any]:
    return scoring().speedup_decision(uncached_s, cached_s, threshold, confidence, min_pairs)


def greedy_logits(gpt_params: Any) -> Callable[[np.ndarray], np.ndarray]:
    """The grader's forward pass of the returned GPT (float64): tokens (1, T) -> (T, V)."""
    cfg = dict(recipes().MLPERF["gpt"])

    def logits(tokens: np.ndarray) -> np.ndarray:
        try:
            return gpt_forward.gpt_logits(gpt_params, tokens, vocab_size=cfg["vocab_size"],
                                          context=cfg["context"], d_model=cfg["d_model"],
                                          n_layers=cfg["n_layers"], n_heads=cfg["n_heads"],
                                          dtype=np.float64)[0]
        except BadParameters as exc:
            raise scoring().BadResult(f"the GPT's parameters: {exc}") from exc

    return logits


def score_seed(ms: Milestone, result: Any, test_x: Mapping[str, Any],
               test_y: np.ndarray) -> tuple[bool, float | None, list[str]]:
    """``(passed, speed-up median or None, notes)`` for one seed's raw result (the models and
    the ``generation`` measurements), on the held-out half of its variant (``task(seed)[2:]``)."""
    gpt = recipes().MLPERF["gpt"]
    return scoring().score_seed(result, recipes().digits_features(test_x["images"]), test_y,
                                criteria(ms), ms.threshold, _hidden(), int(gpt["vocab_size"]),
                                int(gpt["context"]), greedy_logits)


def plan(result: Any, test_x: Any, rng: np.random.Generator) -> Any:
    """The provider's ``plan`` (:mod:`autograder.harness.timing`): after the child committed
    ``result`` (the models and the GPT's parameters), pairs of greedy generation on a fresh
    prompt each: uncached by the reference in the twin, cached by the submission in the child,
    alternating which runs first, until the sequential rule decides or ``max_pairs`` run out
    (or a cached run fails or gives other tokens: more pairs would not change the verdict).
    Returns the ``generation`` measurements :func:`score_seed` reads."""
    del test_x
    cfg = recipes().MLPERF
    crit = criteria(milestone())
    new = int(crit["new_tokens"])
    gpt = result.get("gpt") if isinstance(result, Mapping) else None
    if not isinstance(gpt, Mapping):
        return {"problem": "no GPT parameters were committed"}
    try:
        greedy_logits(gpt)(np.zeros((1, 1), dtype=np.int64))  # names, shapes, finite
    except scoring().BadResult as exc:
        return {"problem": str(exc)}
    yield Baseline({"gpt": dict(gpt), "new_tokens": new})
    vocab, plen = int(cfg["gpt"]["vocab_size"]), int(cfg["prompt"])
    out: dict[str, list[Any]] = {k: [] for k in ("prompts", "uncached_tokens", "cached_tokens",
                                                 "uncached_s", "cached_s")}
    problem = ""
    for i in range(int(cfg["max_pairs"])):
        prompt = rng.integers(0, vocab, size=(1, plen)).astype(np.int64)
        got = {}
        for side in (("baseline", "submission") if i % 2 == 0 else ("submission", "baseline")):
            got[side] = yield Run(side, "generate", prompt)
        mine, ref = got["submission"], got["baseline"]
        if mine.implausible:
            problem = f"implausible measurement: {mine.implausible}"
            break
        if mine.error:
            problem = f"your cached generation raised {mine.error}"
            break
        tokens = mine.output
        if not isinstance(tokens, np.ndarray) or tokens.dtype.kind not in "iu" \
                or tokens.shape != (1, plen + new):
            problem = f"a cached run did not return (1, {plen + new}) token ids"
            break
        out["prompts"].append(prompt[0])
        out["uncached_tokens"].append(np.asarray(ref.output, dtype=np.int64)[0])
        out["cached_tokens"].append(tokens[0].astype(np.int64))
        out["uncached_s"].append(ref.cpu_s)
        out["cached_s"].append(mine.cpu_s)
        if not np.array_equal(tokens[0], out["uncached_tokens"][-1]):
            break  # wrong tokens: the seed fails on them, whatever the timings
        if scoring().timing_decided(out["uncached_s"], out["cached_s"], milestone().threshold,
                                    crit["confidence"], int(crit["min_pairs"])):
            break
    gen: dict[str, Any] = {k: np.asarray(v, dtype=np.float64 if k.endswith("_s") else np.int64)
                           for k, v in out.items()}
    gen["problem"] = problem
    return gen


def predict(params: Any, x: Any) -> np.ndarray:
    """The provider's ``predict``: classes of the returned float MLP (``params["float"]``) for
    held-out digits (``x["images"]`` or raw ``(N, 64)`` pixels)."""
    if not isinstance(params, Mapping):
        raise BadParameters(f"sent a {type(params).__name__}, not the recipe's results")
    images = x["images"] if isinstance(x, Mapping) else x
    try:
        layers = float_layers(params.get("float"))
    except scoring().BadResult as exc:
        raise BadParameters(str(exc)) from exc
    return mlp_predict(layers, recipes().digits_features(images))


def evaluate_seed(result: Any, test_x: Mapping[str, Any], test_y: np.ndarray,
                  course: Course | None = None) -> dict[str, Any]:
    """The provider's ``evaluate`` hook: ``{"passed", "value", "message"}`` for what one seed
    slot's trainer committed and the parent measured (a :class:`TimedResult`; the value is the
    speed-up's median, or None)."""
    if isinstance(result, TimedResult):
        raw = dict(result.value) if isinstance(result.value, Mapping) else result.value
        if isinstance(raw, dict):
            raw.pop("generation", None)  # only the parent's own measurement counts
            if result.timing is not None:
                raw["generation"] = result.timing
        result = raw
    ok, speed, notes = score_seed(milestone(course), result, test_x, test_y)
    return {"passed": ok, "value": speed, "message": "; ".join(notes)}


def score(ms: Milestone, results_by_seed: Mapping[Any, Any]) -> dict[str, Any]:
    """The k-of-n verdict from each seed's raw result (``None``: crashed or out of time); seed
    ``s`` is judged on variant ``s``'s held-out split, as :func:`run_in_process` trains it."""
    by_seed: dict[int, Any] = {}
    for key, value in results_by_seed.items():
        try:
            by_seed[int(key)] = value
        except (TypeError, ValueError):
            continue
    verdicts: dict[int, dict[str, Any] | None] = {}
    for seed in ms.seeds:
        raw = by_seed.get(seed)
        if raw is None:
            verdicts[seed] = None
            continue
        _, _, test_x, test_y = task(seed)
        ok, speed, notes = score_seed(ms, raw, test_x, test_y)
        verdicts[seed] = {"passed": ok, "value": speed, "message": "; ".join(notes)}
    return k_of_n(ms, verdicts)


# ----------------------------------------------------------------------------- staff
def run_in_process(package: Any, course: Course | None = None,
                   seeds: list[int] | None = None) -> dict[str, Any]:
    """Measure a TRUSTED package in this process and score it as the grader does (staff
    tools and tests): seed ``s`` trains with seed ``s`` on variant ``s`` with course.yml's
    fixed work, and the grader's :func:`plan` times the generation in this process
    (``timing.drive_in_process``: the same prompts, pairs and checks; the package's own GPT
    for the uncached baseline; the grader times it from outside, with the reference). Returns
    :func:`score`'s dict plus ``seconds`` (seed -> CPU seconds) and ``results`` (seed -> the
    raw results); a seed that raises counts as None."""
    ms = milestone(course)
    fixed = work(ms)
    if seeds is not None:
        ms = ms.model_copy(update={"seeds": seeds,
                                   "min_passing_seeds": min(ms.min_passing_seeds, len(seeds))})
    from autograder.harness import timing  # noqa: PLC0415 - staff tools only

    rec = recipes()
    results: dict[int, Any] = {}
    seconds: dict[int, float] = {}
    for seed in ms.seeds:
        train_x, train_y, test_x, _ = task(seed)
        t0 = time.process_time()
        try:
            result = rec.parameters(rec.TRAINERS[ID](package, seed, train_x, train_y, fixed))
            result["generation"] = timing.drive_in_process(
                plan(result, test_x, timing.plan_rng()),
                rec.TIMED_WORK[ID](package, seed, train_x),
                lambda data: rec.BASELINE_WORK[ID](package, data))
            results[seed] = result
        except Exception:  # noqa: BLE001 - a broken package fails the seed, like a crash
            results[seed] = None
        seconds[seed] = time.process_time() - t0
    out = score(ms, results)
    out["seconds"] = seconds
    out["results"] = results
    return out
