"""Grading-side milestone logic: child-side training probes and the parent-side verdict.

What the harness calls, per milestone id (``perceptron_1957``, ``xor_1969``, ``mlp_1986``,
``cnn_1998``, ``cnn_fashion_1998``):

Parent (trusted, never runs student code):

* :func:`data_for` ``(milestone_id) -> (train_x, train_y, test_x, test_y)``; keep ``test_y``.
* :func:`item_timeout_s` ``(milestone)`` — the hard per-seed timeout to enforce on the child.
* :func:`evaluate` ``(milestone, predictions_by_seed, test_y) -> dict`` — k-of-n verdict.
* :func:`probe_entry` ``(milestone_id) -> {"id", "file"}`` — the file the child loads.

Child (sandboxed; loaded before any student code runs):

* :func:`trainer` ``(milestone_id)`` -> ``train_and_predict(tt, seed, train_x, train_y,
  test_x, budget_s) -> np.ndarray`` of int64 class predictions for ``test_x``;
* the probe file ``probes/<id>.py`` defines ``probe(pkg, seed)``: it binds the training data
  (never ``test_y``) and :func:`train_budget_s` at load time and calls the trainer.

Every number (threshold, seeds, ``min_passing_seeds``, ``time_budget_s``, points) comes from
course.yml.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from autograder.milestones.data import data_for, recipes
from autograder.milestones.grading import as_milestone, evaluate
from tito.course import Course, Milestone, load_course

__all__ = [
    "GRADED_MILESTONES", "data_for", "evaluate", "item_timeout_s", "make_probe", "make_verdict",
    "probe_entry",
    "run_in_process", "train_budget_s", "trainer",
]

PROBES_DIR = Path(__file__).resolve().parent / "probes"

#: Milestones whose training and scoring live here (later tiers add theirs).
GRADED_MILESTONES: tuple[str, ...] = ("perceptron_1957", "xor_1969", "mlp_1986", "cnn_1998",
                                      "cnn_fashion_1998")

#: Share of a seed's slot spent training; the rest covers prediction and a slow import.
TRAIN_SHARE = 0.6

TrainAndPredict = Callable[..., np.ndarray]


def trainer(milestone_id: str) -> TrainAndPredict:
    """The child-side ``train_and_predict(tt, seed, train_x, train_y, test_x, budget_s)``."""
    trainers: dict[str, TrainAndPredict] = recipes().TRAINERS
    if milestone_id not in trainers:
        raise KeyError(f"no trainer for milestone {milestone_id!r}; known: {', '.join(trainers)}")
    return trainers[milestone_id]


def item_timeout_s(milestone: Milestone | Mapping[str, Any]) -> float:
    """Hard limit for one seed, ``time_budget_s / len(seeds)``: CPU seconds of the sandboxed
    child (the harness's item deadline, :mod:`autograder.harness.clock`)."""
    ms = as_milestone(milestone)
    return ms.time_budget_s / len(ms.seeds)


def train_budget_s(milestone: Milestone | Mapping[str, Any]) -> float:
    """CPU seconds of training one seed may use before it must stop and predict."""
    return TRAIN_SHARE * item_timeout_s(milestone)


def _milestone(milestone_id: str, course: Course | None) -> Milestone:
    c = course or load_course()
    for ms in c.milestones:
        if ms.id == milestone_id:
            return ms
    raise KeyError(f"milestone {milestone_id!r} is not in course.yml")


def make_probe(milestone_id: str, course: Course | None = None) -> Callable[[Any, int], Any]:
    """``probe(pkg, seed) -> np.ndarray``: everything trusted is bound now, before the sandbox.

    The probe holds the training data, ``test_x`` and the training budget, never ``test_y``;
    it imports nothing when called (the child blocks imports of ``autograder`` later).
    """
    ms = _milestone(milestone_id, course)
    train_x, train_y, test_x, _ = data_for(milestone_id)
    fit = trainer(milestone_id)
    budget = train_budget_s(ms)

    def probe(pkg: Any, seed: int) -> np.ndarray:
        pred = fit(pkg, int(seed), train_x.copy(), train_y.copy(), test_x.copy(), budget)
        return np.array(np.asarray(pred), dtype=np.int64).reshape(-1)

    probe.__name__ = f"probe_{milestone_id}"
    return probe


def make_verdict(milestone_id: str, course: Course | None = None
                 ) -> Callable[[Mapping[Any, Any]], dict[str, Any]]:
    """``evaluate(predictions_by_seed) -> dict``: the parent-side k-of-n verdict.

    The test labels are loaded only when the verdict is computed, so the sandboxed child, which
    loads the same probe file for ``probe``, never holds them.
    """

    def verdict(predictions_by_seed: Mapping[Any, Any]) -> dict[str, Any]:
        ms = _milestone(milestone_id, course)
        _, _, _, test_y = data_for(milestone_id)
        return evaluate(ms, predictions_by_seed, test_y)

    verdict.__name__ = f"verdict_{milestone_id}"
    return verdict


def probe_entry(milestone_id: str) -> dict[str, str]:
    """``{"id": ..., "file": ...}`` for ``RunSpec.milestones`` (the child loads ``probe``)."""
    path = PROBES_DIR / f"{milestone_id}.py"
    if not path.is_file():
        raise KeyError(f"no probe file for milestone {milestone_id!r}")
    return {"id": milestone_id, "file": str(path)}


def run_in_process(package: Any, milestone_id: str, course: Course | None = None,
                   seeds: list[int] | None = None) -> dict[str, Any]:
    """Train and score a TRUSTED package in this process (staff checks and tests only).

    Returns:
        :func:`evaluate`'s dict plus ``seconds`` (seed -> CPU seconds of training, the clock
        the budget is measured on). A seed that raises counts as ``None``, exactly as a crashed
        child would.
    """
    ms = _milestone(milestone_id, course)
    if seeds is not None:
        ms = ms.model_copy(update={"seeds": seeds,
                                   "min_passing_seeds": min(ms.min_passing_seeds, len(seeds))})
    train_x, train_y, test_x, test_y = data_for(milestone_id)
    fit = trainer(milestone_id)
    preds: dict[int, np.ndarray | None] = {}
    seconds: dict[int, float] = {}
    for seed in ms.seeds:
        t0 = time.process_time()
        try:
            preds[seed] = np.asarray(fit(package, seed, train_x, train_y, test_x,
                                         train_budget_s(ms)))
        except Exception:  # noqa: BLE001 - a broken package fails the seed, like a crash
            preds[seed] = None
        seconds[seed] = time.process_time() - t0
    result = evaluate(ms, preds, test_y)
    result["seconds"] = seconds
    return result
