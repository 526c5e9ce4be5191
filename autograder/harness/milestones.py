"""The milestone hook: train in the sandbox, score in the parent, k of n seeds.

A milestone graded with a module (course.yml ``milestones[].graded_with``) is provided by a
Python file ``<milestones dir>/<id>.py`` (``autograder/milestones/probes/``) with two names::

    def probe(tt, seed: int):
        '''Runs in the sandboxed child with tt = the package under test: train with `seed`
        on the training split and return the predictions on the test inputs (plain data,
        e.g. an int array of class ids).'''

    def evaluate(predictions_by_seed: dict[int, object | None]) -> dict:
        '''Runs in the trusted parent on the decoded predictions (None for a seed that
        crashed or ran out of time): the k-of-n verdict against labels the child never sees,
        as ``{"score", "passed", "per_seed", "passing_seeds", "message", ...}``.'''

The harness runs one item ``milestone:<id>@<seed>`` per seed (each gets ``time_budget_s /
len(seeds)`` seconds) and records the verdict, seeds and per-seed metrics in
``extra_data.milestones``. Thresholds, seeds and points come from course.yml only.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.harness.limits import MilestoneInfo
from autograder.harness.supervisor import Outcome

Evaluator = Callable[[dict[int, Any]], dict[str, Any]]


@dataclass(frozen=True)
class MilestoneJob:
    """A milestone ready to run: its course facts and its provider file (None = missing)."""

    info: MilestoneInfo
    file: Path | None

    def items(self) -> list[str]:
        return [f"milestone:{self.info.id}@{s}" for s in self.info.seeds]

    def item_timeout(self) -> float:
        return self.info.time_budget_s / max(1, len(self.info.seeds))


def find_jobs(milestones: tuple[MilestoneInfo, ...], folders: list[Path]) -> list[MilestoneJob]:
    """Pair each milestone with ``<folder>/<id>.py`` from the first folder that has it."""
    jobs = []
    for m in milestones:
        file = next((f / f"{m.id}.py" for f in folders if (f / f"{m.id}.py").is_file()), None)
        jobs.append(MilestoneJob(m, file))
    return jobs


def load_evaluator(file: Path) -> Evaluator:
    """Import a provider (trusted course code) in the parent and return its ``evaluate``."""
    spec = importlib.util.spec_from_file_location(f"milestone_eval_{file.stem}", file)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {file}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.evaluate


def score(job: MilestoneJob, outcomes: dict[str, Outcome], evaluate: Evaluator | None
          ) -> tuple[float, str, dict[str, Any]]:
    """(points, message, extra) for one milestone from its per-seed outcomes."""
    m = job.info
    preds: dict[int, Any] = {}
    notes: list[str] = []
    for seed, item in zip(m.seeds, job.items(), strict=True):
        o = outcomes.get(item)
        if o is not None and o.status == "result":
            preds[seed] = o.value
        else:
            preds[seed] = None
            notes.append(f"seed {seed}: " + (o.message or o.status if o else "no result"))
    if evaluate is None:
        return 0.0, "This milestone could not be scored (grader problem).", {}
    verdict = evaluate(preds)
    points = float(verdict.get("score", 0.0))
    msg = str(verdict.get("message", ""))
    if notes:
        msg += "\n" + "\n".join(notes[:len(m.seeds)])
    per_seed = {str(k): v for k, v in dict(verdict.get("per_seed", {})).items()}
    extra = {"seeds": list(m.seeds), "metric": m.metric, "threshold": m.threshold,
             "values": per_seed, "passing": len(verdict.get("passing_seeds", [])),
             "needed": m.min_passing_seeds, "passed": bool(verdict.get("passed", False))}
    return min(points, float(m.points)), msg, extra


def score_submitted(m: MilestoneInfo, submission_dir: Path, data_dir: Path | None
                    ) -> tuple[float, str, dict[str, Any], str | None]:
    """(points, message, extra, grader problem) for a submitted-weights milestone (course.yml
    ``weights``): :mod:`autograder.milestones.cifar` reads the file and scores it here, in the
    parent; no child runs and the test labels stay in this process."""
    from autograder.milestones import cifar  # noqa: PLC0415 - milestone zips only

    if m.dataset != "cifar10":
        return (0.0, "This milestone could not be scored (grader problem).",
                {"seeds": list(m.seeds)}, f"no evaluator for submitted weights on {m.dataset!r}")
    started = time.process_time()
    verdict, problem = cifar.score_weights(m, submission_dir, data_dir)
    per_seed = {str(k): v for k, v in dict(verdict.get("per_seed", {})).items()}
    extra = {"seeds": list(m.seeds), "metric": m.metric, "threshold": m.threshold,
             "values": per_seed, "passing": len(verdict.get("passing_seeds", [])),
             "needed": m.min_passing_seeds, "passed": bool(verdict.get("passed", False)),
             "weights": m.weights, "cpu_s": round(time.process_time() - started, 2)}
    points = min(float(verdict.get("score", 0.0)), float(m.points))
    return points, str(verdict.get("message", "")), extra, problem
