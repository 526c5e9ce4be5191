"""Grading-side milestone logic: the task the parent builds, the forward pass it evaluates with.

**The milestone contract** (docs/milestones.md). A milestone graded with a module has:

* a **trainer** in ``tinytorch_milestones.recipes`` — ``TRAINERS[id](tt, seed, train_x,
  train_y, work, on_epoch=None, on_step=None) -> model`` — the only milestone code the sandboxed child
  loads. It gets training data, a training seed and the fixed work of course.yml
  ``training`` (epochs or steps, batch size), trains exactly that much, and the child sends
  back
  ``recipes.parameters(model)``: the trained parameters and buffers by name, never
  predictions;
* a **provider** ``autograder/milestones/providers/<id>.py``, loaded in the trusted parent
  only, with two functions:

  - ``task(seed) -> (train_x, train_y, test_x, test_y)``: one variant of the task
    (``tinytorch_data.loaders.milestone_task``); only ``train_x`` and ``train_y`` are sent to the
    child, the held-out ``test_x`` / ``test_y`` never are;
  - ``predict(params, x) -> int64 predictions``: the reference forward pass in NumPy
    (:mod:`autograder.milestones.forward`; the 2017 GPT's in
    :mod:`autograder.milestones.gpt_forward`), raising ``forward.BadParameters`` for
    parameters of the wrong names or shapes;

  and one optional hook, for a milestone judged on more than one model's predictions
  (``mlperf_2018``, :mod:`autograder.milestones.mlperf`): ``evaluate(result, test_x, test_y)
  -> {"passed", "value", "message"}`` receives what the trainer returned (there, ``task`` may
  give mappings of arrays for ``train_x`` / ``test_x``); the k-of-n rule is
  :func:`autograder.milestones.grading.k_of_n`;

* its numbers in course.yml (threshold, seed slots, ``min_passing_seeds``, the fixed
  ``training``, the CPU-time cap ``time_budget_s``, points).

Per submission and seed slot the harness derives a training seed (sent to the child) and a
data seed (kept in the parent) from a salted hash of the submission
(:func:`autograder.harness.variants.milestone_seeds`), so neither fixed predictions nor
weights trained elsewhere fit the variant being graded. The parent evaluates each returned
parameter set as soon as it arrives and keeps only the predictions; :func:`evaluate` applies
the k-of-n rule.

Helpers here: :func:`make_provider` (a provider in two lines), :func:`task`, :func:`predict`,
:func:`item_timeout_s`, :func:`work`, and :func:`run_in_process` (trusted packages only: staff
checks and tests).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from autograder.milestones import forward, transformer
from autograder.milestones.data import loaders, recipes
from autograder.milestones.grading import as_milestone, evaluate, moot_seeds
from coursekit.course import Course, Milestone, load_course

__all__ = [
    "GRADED_MILESTONES", "PROVIDERS_DIR", "evaluate", "item_timeout_s", "make_provider",
    "predict", "provider_file", "run_in_process", "task", "trainer", "work",
]

PROVIDERS_DIR = Path(__file__).resolve().parent / "providers"

#: Milestones whose trainer, task and forward pass live here (later tiers add theirs).
GRADED_MILESTONES: tuple[str, ...] = ("perceptron_1957", "xor_1969", "mlp_1986", "cnn_1998",
                                      "cnn_fashion_1998", "transformer_reversal_2017",
                                      "transformer_2017")

Split = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _architectures() -> dict[str, tuple[list[int], str]]:
    """Layer sizes and hidden activation of each milestone's model (recipes.py is the source)."""
    r = recipes()
    return {"perceptron_1957": ([2, 1], "none"),
            "xor_1969": ([2, r.XOR["hidden"], 1], "sigmoid"),
            "mlp_1986": ([64, r.MLP["hidden"], 10], "relu")}


#: The CNN milestones' recipes in ``tinytorch_milestones/recipes.py`` (their channel counts).
_CNN_RECIPES = {"cnn_1998": "CNN_DIGITS", "cnn_fashion_1998": "CNN_FASHION"}


def trainer(milestone_id: str) -> Callable[..., Any]:
    """The child-side ``train(tt, seed, train_x, train_y, work, on_epoch=None, on_step=None)
    -> model``."""
    trainers: dict[str, Callable[..., Any]] = recipes().TRAINERS
    if milestone_id not in trainers:
        raise KeyError(f"no trainer for milestone {milestone_id!r}; known: {', '.join(trainers)}")
    return trainers[milestone_id]


def task(milestone_id: str, seed: int) -> Split:
    """One variant of the milestone's task: ``(train_x, train_y, test_x, test_y)``.

    ``transformer_2017``'s ``test_y`` is flattened to one label per predicted character (its
    metric counts characters), as :func:`predict` flattens its predictions.
    """
    split = tuple(loaders().milestone_task(milestone_id, int(seed)))
    if milestone_id == "transformer_2017":
        split = (*split[:3], np.asarray(split[3], dtype=np.int64).reshape(-1))
    return split


def predict(milestone_id: str, params: Any, x: np.ndarray) -> np.ndarray:
    """What the trained ``params`` predict for raw inputs ``x`` (reference forward, NumPy):
    classes (N,) int64, the reversal task's greedy outputs (N, 8), or the KJV task's next
    characters flattened (N * 32,).

    Raises:
        forward.BadParameters: the parameters do not fit the milestone's model.
    """
    if milestone_id in transformer.IDS:
        pred = transformer.predict(milestone_id, params, x)
        return pred.reshape(-1) if milestone_id == "transformer_2017" else pred
    feats = recipes().FEATURES[milestone_id](x)
    if milestone_id in _CNN_RECIPES:
        channels = recipes().__dict__[_CNN_RECIPES[milestone_id]]["channels"]
        return forward.classes(forward.cnn_logits(params, feats, tuple(channels)))
    sizes, hidden = _architectures()[milestone_id]
    return forward.classes(forward.mlp_logits(params, feats, sizes, hidden))


def make_provider(milestone_id: str) -> tuple[Callable[[int], Split],
                                              Callable[[Any, np.ndarray], np.ndarray]]:
    """``(task, predict)`` of a milestone defined here, for ``providers/<id>.py``."""

    def task_fn(seed: int) -> Split:
        return task(milestone_id, seed)

    def predict_fn(params: Any, x: np.ndarray) -> np.ndarray:
        return predict(milestone_id, params, x)

    task_fn.__name__ = f"task_{milestone_id}"
    predict_fn.__name__ = f"predict_{milestone_id}"
    return task_fn, predict_fn


def provider_file(milestone_id: str) -> Path:
    """``providers/<id>.py``."""
    path = PROVIDERS_DIR / f"{milestone_id}.py"
    if not path.is_file():
        raise KeyError(f"no provider for milestone {milestone_id!r}")
    return path


def item_timeout_s(milestone: Milestone | Mapping[str, Any]) -> float:
    """The CPU-second cap of one seed, ``time_budget_s / len(seeds)``: CPU seconds of the
    sandboxed child (the harness's item deadline, :mod:`autograder.harness.clock`)."""
    ms = as_milestone(milestone)
    return ms.time_budget_s / len(ms.seeds)


def work(milestone: Milestone | Mapping[str, Any]) -> dict[str, Any]:
    """What a trainer gets as ``work``: course.yml ``training`` (the fixed epochs or steps and
    batch size) and ``cap_s``, the seed's CPU cap (:func:`item_timeout_s`), as the grader's
    child passes them (:meth:`autograder.harness.milestones.MilestoneJob.work`)."""
    ms = as_milestone(milestone)
    if ms.training is None:
        raise KeyError(f"milestone {ms.id!r} has no training in course.yml")
    return {**ms.training.work(), "cap_s": item_timeout_s(ms)}


def _milestone(milestone_id: str, course: Course | None) -> Milestone:
    c = course or load_course()
    for ms in c.milestones:
        if ms.id == milestone_id:
            return ms
    raise KeyError(f"milestone {milestone_id!r} is not in course.yml")


def run_in_process(package: Any, milestone_id: str, course: Course | None = None,
                   seeds: list[int] | None = None, *, until_decided: bool = False
                   ) -> dict[str, Any]:
    """Train and score a TRUSTED package in this process (staff checks and tests only).

    Each seed ``s`` trains with seed ``s`` on task variant ``s`` and is evaluated exactly as
    the grader does: parameters out, reference forward pass on the held-out split.
    ``until_decided``: train the seeds in order and stop once the k-of-n verdict cannot
    change (:func:`autograder.milestones.grading.moot_seeds`, the grader's rule); the seeds
    left untrained count as ``None`` and say so, which gives the verdict (and score) of
    training them all.

    Returns:
        :func:`evaluate`'s dict plus ``seconds`` (seed -> CPU seconds of training, the clock
        the cap is measured on) and ``steps`` (seed -> training steps done; a seed left out by
        ``until_decided`` has neither). A seed that raises counts as ``None``, exactly as a
        crashed child would. Nothing is capped here: a seed trains its whole work (compare
        ``seconds`` with :func:`item_timeout_s`).
    """
    ms = _milestone(milestone_id, course)
    fixed = work(ms)
    if seeds is not None:
        ms = ms.model_copy(update={"seeds": seeds,
                                   "min_passing_seeds": min(ms.min_passing_seeds, len(seeds))})
    fit = trainer(milestone_id)
    preds: dict[int, np.ndarray | None] = {}
    labels: dict[int, np.ndarray] = {}
    seconds: dict[int, float] = {}
    steps: dict[int, int] = {}
    untrained: list[int] = []
    for seed in ms.seeds:
        train_x, train_y, test_x, test_y = task(milestone_id, seed)
        labels[seed] = test_y
        counter = recipes().StepCounter(None)
        t0 = time.process_time()
        try:
            model = fit(package, seed, train_x, train_y, fixed, on_step=counter)
            preds[seed] = predict(milestone_id, recipes().parameters(model), test_x)
        except Exception:  # noqa: BLE001 - a broken package fails the seed, like a crash
            preds[seed] = None
        seconds[seed] = time.process_time() - t0
        steps[seed] = counter.done
        if until_decided:
            so_far = evaluate(ms.model_copy(update={"seeds": list(preds)}), preds, labels)
            untrained = moot_seeds(ms, {s: s in so_far["passing_seeds"] for s in preds})
            if untrained:
                break
    for seed in ms.seeds:  # seeds left out by until_decided: scored as None, on their labels
        if seed not in labels:
            labels[seed] = task(milestone_id, seed)[3]
    result = evaluate(ms, preds, labels, untrained=untrained)
    result["seconds"] = seconds
    result["steps"] = steps
    return result
