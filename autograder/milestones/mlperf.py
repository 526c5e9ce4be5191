"""The 2018 MLPerf-style milestone: the child measures, the parent decides.

Graded with module 19 (course.yml ``mlperf_2018``), under the milestone contract of
:mod:`autograder.milestones` with its one optional hook: the provider
(``providers/mlperf_2018.py``) builds the task (:func:`task`: a digits variant, the parent's
prompt), and its ``evaluate`` judges what the trainer returned (:func:`evaluate_seed`). Per seed
slot the sandboxed child runs ``milestones/recipes.py`` ``TRAINERS["mlperf_2018"]``
(``mlperf_run``) with the package under test and returns raw data only:

* ``float`` / ``int8`` / ``pruned``: the ``state_dict`` arrays of the trained 1986 digits MLP,
  its INT8 copy (module 15) and its 50%-pruned, fine-tuned copy (module 16);
* ``gpt``: the parameters of the GPT whose generation was timed;
* ``generation``: CPU seconds of paired runs generating ``new_tokens`` tokens greedily, uncached
  and with module 17's ``CachedGPT`` (alternating which runs first), and the tokens of each run.

The trusted parent (:func:`score`, with the NumPy scoring of ``milestones/mlperf_score.py``,
which the student script shares) never trusts a number it can compute itself:

* sizes are the bytes of the returned arrays (``int8_min_size_ratio``);
* accuracies come from a NumPy forward pass of each returned model on the variant's 360
  held-out digits, which only the parent holds (``min_float_accuracy``, ``int8_max_accuracy_drop``,
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

import time
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

import numpy as np

from autograder.milestones import gpt_forward
from autograder.milestones import work as milestone_work
from autograder.milestones.data import load_file, loaders, recipes
from autograder.milestones.gpt_forward import BadParameters
from autograder.milestones.grading import k_of_n
from tito import paths
from tito.course import Course, Milestone, load_course

SCORE_FILE = paths.REPO_ROOT / "milestones" / "mlperf_score.py"

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
    permuted, ``datasets.loaders.milestone_task``) and the parent's prompt for it, as
    ``({"images", "prompt", "new_tokens"}, train_y, {"images", "prompt"}, test_y)``; only the
    first two reach the child. ``seed=None``: the plain digits split ``(train_x, train_y,
    test_x, test_y)`` (module 20's event)."""
    if seed is None:
        return tuple(loaders().milestone_data("mlp_1986"))
    train_x, train_y, test_x, test_y = loaders().milestone_task("mlp_1986", int(seed))
    ids = prompt(int(seed))
    new_tokens = int(criteria(milestone())["new_tokens"])
    return ({"images": train_x, "prompt": ids, "new_tokens": new_tokens}, train_y,
            {"images": test_x, "prompt": ids}, test_y)


def prompt(seed: int, length: int | None = None) -> np.ndarray:
    """The parent's prompt for a seed: ``(1, P)`` int64 token ids (``P`` from the recipe)."""
    cfg = recipes().MLPERF
    n = int(cfg["prompt"] if length is None else length)
    return scoring().prompt(seed, int(cfg["gpt"]["vocab_size"]), n)


def work(ms: Milestone) -> dict[str, Any]:
    """The trainer's ``work`` for one seed: course.yml ``training`` and the seed's CPU cap."""
    return milestone_work(ms)


# ----------------------------------------------------------------------------- scoring
def scoring() -> ModuleType:
    """``milestones/mlperf_score.py``: the NumPy scoring shared with the student script."""
    return load_file(SCORE_FILE, "_tt_course_mlperf_score")


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
    """``(passed, speed-up median or None, notes)`` for one seed's raw result, on the held-out
    half of its variant (``task(seed)[2:]``)."""
    return scoring().score_seed(result, recipes().digits_features(test_x["images"]), test_y,
                                criteria(ms), ms.threshold, np.asarray(test_x["prompt"]),
                                _hidden(), int(recipes().MLPERF["gpt"]["vocab_size"]),
                                greedy_logits)


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
    slot's trainer returned (the value is the speed-up's median, or None)."""
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
    fixed work. Returns :func:`score`'s dict plus ``seconds`` (seed -> CPU seconds) and
    ``results`` (seed -> the raw results); a seed that raises counts as None."""
    ms = milestone(course)
    fixed = work(ms)
    if seeds is not None:
        ms = ms.model_copy(update={"seeds": seeds,
                                   "min_passing_seeds": min(ms.min_passing_seeds, len(seeds))})
    train = recipes().TRAINERS[ID]
    results: dict[int, Any] = {}
    seconds: dict[int, float] = {}
    for seed in ms.seeds:
        train_x, train_y, _, _ = task(seed)
        t0 = time.process_time()
        try:
            results[seed] = recipes().parameters(train(package, seed, train_x, train_y, fixed))
        except Exception:  # noqa: BLE001 - a broken package fails the seed, like a crash
            results[seed] = None
        seconds[seed] = time.process_time() - t0
    out = score(ms, results)
    out["seconds"] = seconds
    out["results"] = results
    return out
