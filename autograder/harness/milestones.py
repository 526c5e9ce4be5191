"""The milestone hook: train in the sandbox, score in the parent, k of n seeds.

A milestone graded with a module (course.yml ``milestones[].graded_with``) is provided by a
Python file ``<milestones dir>/<id>.py`` with two functions::

    def probe(tt, seed: int):
        '''Runs in the sandboxed child with tt = the package under test: train with `seed`
        on the training split and return the predictions on the test inputs (plain data,
        e.g. an int array of class ids).'''

    def evaluate(got, seed: int) -> float:
        '''Runs in the trusted parent on the decoded predictions: returns the metric
        (accuracy, ...) computed against labels the child never sees.'''

The harness runs one item ``milestone:<id>@<seed>`` per seed (each gets ``time_budget_s /
len(seeds)`` seconds), calls ``evaluate`` in the parent, and awards the milestone's points
when at least ``min_passing_seeds`` seeds reach ``threshold``. Seeds and per-seed metrics go
to ``extra_data.milestones``. Thresholds, seeds and points come from course.yml only.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.harness.limits import MilestoneInfo
from autograder.harness.supervisor import Outcome

Evaluator = Callable[[Any, int], float]


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
    metrics: dict[str, float | None] = {}
    notes: list[str] = []
    for seed, item in zip(m.seeds, job.items(), strict=True):
        o = outcomes.get(item)
        value: float | None = None
        if o is not None and o.status == "result" and evaluate is not None:
            try:
                value = float(evaluate(o.value, seed))
                if math.isnan(value):
                    value = None
            except Exception as exc:  # noqa: BLE001 - bad predictions are the student's
                notes.append(f"seed {seed}: predictions could not be scored ({exc})")
        elif o is not None:
            notes.append(f"seed {seed}: {o.message or o.status}")
        metrics[str(seed)] = value
    passing = sum(1 for v in metrics.values() if v is not None and v >= m.threshold)
    passed = passing >= m.min_passing_seeds
    shown = ", ".join(f"seed {s}: {'—' if v is None else f'{v:.3f}'}" for s, v in metrics.items())
    msg = (f"{m.metric} per seed ({shown}); {passing} of {len(m.seeds)} seeds reached "
           f"{m.threshold:g}, {m.min_passing_seeds} needed.")
    if notes:
        msg += "\n" + "\n".join(notes[:len(m.seeds)])
    extra = {"seeds": list(m.seeds), "metric": m.metric, "threshold": m.threshold,
             "values": metrics, "passing": passing, "needed": m.min_passing_seeds}
    return (m.points if passed else 0.0), msg, extra
