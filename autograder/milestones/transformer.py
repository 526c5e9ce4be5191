"""The 2017 transformer milestone: the sandbox trains and returns parameters, the parent tests them.

Two course.yml entries, graded with module 13:

* ``transformer_reversal_2017`` — write a sequence of 8 digits backwards (renamed digits);
  metric ``exact_match``: the share of held-out sources whose whole reversal is right, by
  greedy decoding;
* ``transformer_2017`` — a character-level GPT on the King James text; metric
  ``next_char_accuracy`` over every position of held-out windows of the validation text.

Per seed: :func:`task` draws a variant (``datasets/loaders.py`` ``transformer_task``); the
sandboxed child trains module 13's ``GPT`` on the training split with the recipe of
``milestones/recipes.py`` and returns :func:`recipes.named_parameters` (the trained weights,
by name — never predictions); the trusted parent runs :mod:`autograder.milestones.gpt_forward`
on the held-out split (:func:`predict`) and applies the k-of-n rule
(:func:`autograder.milestones.grading.evaluate`). The held-out labels never enter the child.

Provider functions, in the shape of the parameters-out contract (``task(seed)`` and
``predict(params, x)`` per milestone; see :func:`provider`), and the probe/verdict pair the
current harness loads from ``probes/<id>.py`` (:func:`make_probe`, :func:`make_verdict`).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from autograder.milestones import gpt_forward
from autograder.milestones.data import loaders, recipes
from autograder.milestones.grading import evaluate
from tito.course import Course, Milestone, load_course

IDS: tuple[str, ...] = ("transformer_2017", "transformer_reversal_2017")

#: Share of a seed's slot spent training (as for every milestone); the rest covers the import
#: and sending the parameters back.
TRAIN_SHARE = 0.6

Split = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _check(milestone_id: str) -> None:
    if milestone_id not in IDS:
        raise KeyError(f"{milestone_id!r} is not a task of the 2017 transformer milestone")


def task(milestone_id: str, seed: int) -> Split:
    """One variant: ``(train_x, train_y, test_x, test_y)``; only the training split may be sent
    to the child."""
    _check(milestone_id)
    return tuple(loaders().transformer_task(milestone_id, int(seed)))


@functools.lru_cache(maxsize=None)
def vocab_size(milestone_id: str) -> int:
    """The GPT's vocabulary for a task: 10 digits and the separator, or the 62 KJV characters."""
    _check(milestone_id)
    data = loaders()
    if milestone_id == "transformer_reversal_2017":
        return int(data.REVERSAL_TASK["vocab_size"]) + 1
    return len(data.load_kjv_chars().vocabulary)


def model_config(milestone_id: str) -> dict[str, int]:
    """``gpt_forward.gpt_logits`` keyword arguments for a task (sizes from the recipe)."""
    r = recipes().gpt_recipe(milestone_id)
    return {"vocab_size": vocab_size(milestone_id), "context": r["context"],
            "d_model": r["d_model"], "n_layers": r["n_layers"], "n_heads": r["n_heads"]}


def predict(milestone_id: str, params: Any, x: np.ndarray) -> np.ndarray:
    """What the trained ``params`` answer for held-out inputs ``x`` (reference forward pass).

    * reversal: greedy decoding after ``[source, SEP]``, one token at a time — (N, 8) int64;
    * KJV: the most likely next character at every position of each window — (N, 32) int64.

    Raises:
        gpt_forward.BadParameters: the parameters do not fit the recipe's GPT.
    """
    cfg = model_config(milestone_id)
    x = np.asarray(x, dtype=np.int64)
    if milestone_id == "transformer_2017":
        return gpt_forward.gpt_logits(params, x, **cfg).argmax(axis=-1).astype(np.int64)
    seq = np.concatenate([x, np.full((len(x), 1), cfg["vocab_size"] - 1, dtype=np.int64)], axis=1)
    for _ in range(x.shape[1]):
        nxt = gpt_forward.gpt_logits(params, seq, **cfg)[:, -1].argmax(axis=-1)
        seq = np.concatenate([seq, nxt[:, None].astype(np.int64)], axis=1)
    return seq[:, x.shape[1] + 1:]


def provider(milestone_id: str) -> tuple[Callable[[int], Split],
                                         Callable[[Any, np.ndarray], np.ndarray]]:
    """``(task(seed), predict(params, x))`` of one task: the provider pair of the
    parameters-out contract."""
    _check(milestone_id)

    def task_fn(seed: int) -> Split:
        return task(milestone_id, seed)

    def predict_fn(params: Any, x: np.ndarray) -> np.ndarray:
        return predict(milestone_id, params, x)

    return task_fn, predict_fn


def _milestone(milestone_id: str, course: Course | None) -> Milestone:
    for ms in (course or load_course()).milestones:
        if ms.id == milestone_id:
            return ms
    raise KeyError(f"milestone {milestone_id!r} is not in course.yml")


def train_budget_s(ms: Milestone) -> float:
    return TRAIN_SHARE * ms.time_budget_s / len(ms.seeds)


def trainer(milestone_id: str) -> Callable[..., Any]:
    """The child-side ``train(tt, seed, train_x, train_y, budget_s, on_epoch=None) -> model``."""
    _check(milestone_id)
    fit: Callable[..., Any] = recipes().MODEL_TRAINERS[milestone_id]
    return fit


def make_probe(milestone_id: str, course: Course | None = None) -> Callable[[Any, int], Any]:
    """``probe(pkg, seed) -> {name: float32 array}`` for the current harness: the training split
    of every graded seed and the budget are bound now (before any student code runs), the test
    split is dropped; the probe trains and returns the trained parameters."""
    ms = _milestone(milestone_id, course)
    splits = {s: task(milestone_id, s)[:2] for s in ms.seeds}
    fit, params_of = trainer(milestone_id), recipes().named_parameters
    budget = train_budget_s(ms)

    def probe(pkg: Any, seed: int) -> dict[str, np.ndarray]:
        train_x, train_y = splits[int(seed)]
        return params_of(fit(pkg, int(seed), train_x.copy(), train_y.copy(), budget))

    probe.__name__ = f"probe_{milestone_id}"
    return probe


def score(ms: Milestone, params_by_seed: Mapping[Any, Any]) -> dict[str, Any]:
    """Parent side: test each seed's parameters on its held-out split, then k of n seeds."""
    preds: dict[int, Any] = {}
    labels: dict[int, np.ndarray] = {}
    notes: list[str] = []
    by_seed = {}
    for key, value in params_by_seed.items():
        try:
            by_seed[int(key)] = value
        except (TypeError, ValueError):
            continue
    for seed in ms.seeds:
        _, _, test_x, test_y = task(ms.id, seed)
        labels[seed] = np.asarray(test_y, dtype=np.int64)
        params = by_seed.get(seed)
        preds[seed] = None
        if params is None:
            continue
        try:
            preds[seed] = predict(ms.id, params, test_x)
        except gpt_forward.BadParameters as exc:
            notes.append(f"seed {seed}: the trained parameters do not fit the model ({exc})")
        if ms.id == "transformer_2017" and preds[seed] is not None:
            preds[seed] = preds[seed].reshape(-1)
    if ms.id == "transformer_2017":  # one label per predicted character
        labels = {s: y.reshape(-1) for s, y in labels.items()}
    result = evaluate(ms, preds, labels)
    if notes:
        result["message"] += "\n" + "\n".join(notes)
    return result


def make_verdict(milestone_id: str, course: Course | None = None
                 ) -> Callable[[Mapping[Any, Any]], dict[str, Any]]:
    """``evaluate(params_by_seed) -> dict``: the parent-side verdict for the current harness."""

    def verdict(params_by_seed: Mapping[Any, Any]) -> dict[str, Any]:
        return score(_milestone(milestone_id, course), params_by_seed)

    verdict.__name__ = f"verdict_{milestone_id}"
    return verdict


def run_in_process(package: Any, milestone_id: str, course: Course | None = None,
                   seeds: list[int] | None = None) -> dict[str, Any]:
    """Train a TRUSTED package in this process and score it as the grader does (staff tools
    and tests only). Returns :func:`score`'s dict plus ``seconds`` (seed -> training time);
    a seed that raises counts as None, exactly as a crashed child would."""
    ms = _milestone(milestone_id, course)
    budget = train_budget_s(ms)  # the graded per-seed budget, whatever seeds are run here
    if seeds is not None:
        ms = ms.model_copy(update={"seeds": seeds,
                                   "min_passing_seeds": min(ms.min_passing_seeds, len(seeds))})
    fit, params_of = trainer(milestone_id), recipes().named_parameters
    params: dict[int, Any] = {}
    seconds: dict[int, float] = {}
    for seed in ms.seeds:
        train_x, train_y, _, _ = task(milestone_id, seed)
        t0 = time.perf_counter()
        try:
            params[seed] = params_of(fit(package, seed, train_x, train_y, budget))
        except Exception:  # noqa: BLE001 - a broken package fails the seed, like a crash
            params[seed] = None
        seconds[seed] = time.perf_counter() - t0
    result = score(ms, params)
    result["seconds"] = seconds
    return result
