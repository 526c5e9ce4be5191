"""The milestone hook: train in the sandbox, evaluate in the parent, k of n seeds.

A milestone graded with a module (course.yml ``milestones[].graded_with``) needs a trainer in
``tinytorch_milestones.recipes`` (``TRAINERS[id]``, the only milestone code the child imports)
and a provider ``<providers dir>/<id>.py`` loaded in this trusted process only::

    def task(seed: int) -> (train_x, train_y, test_x, test_y)
        '''One variant of the task; only the training split is sent to the child.'''

    def predict(params: list[np.ndarray], x: np.ndarray) -> np.ndarray
        '''The reference forward pass in NumPy: classes the trained params give for x.'''

    def evaluate(result, test_x, test_y) -> {"passed": bool, "value": float | None,
                                             "message": str}     # optional
        '''A milestone judged on more than one model's predictions (mlperf_2018: sizes,
        accuracies, tokens, paired timings): the provider judges what the trainer returned,
        here, and the harness keeps the verdict only; k of n as for the others.'''

    def plan(result, test_x, rng) -> generator                     # optional, with evaluate
        '''Timed work (mlperf_2018: KV-cached generation): after the child committed
        ``result``, the parent times the work of ``recipes.TIMED_WORK[id]`` in the child and of
        ``recipes.BASELINE_WORK[id]`` in the trusted twin (:mod:`autograder.harness.timing`);
        ``evaluate`` then gets a :class:`autograder.suite.TimedResult`.'''

For each seed slot of course.yml the harness derives, from the submission, a training seed
(sent to the child with the training split) and a data seed (kept here: which task variant,
hence which held-out test split); see :func:`autograder.harness.variants.milestone_seeds`.
One item ``milestone:<id>#<slot>@<training seed>`` runs per slot: the trainer runs the fixed
work of course.yml ``training`` (epochs or steps, batch size) in full, and reports its steps
as it goes; ``time_budget_s / len(seeds)`` CPU seconds are only its cap. A slot stopped at
the cap fails with how far it got ("did 1,240 of 3,000 steps"); it never trains less. The
child returns the trained parameters, :func:`on_result` turns them into predictions on the
held-out split at once (the parameters are dropped), and :func:`score` applies the k-of-n
rule. Slots run in course.yml's order; once the verdict cannot change, the slots left are
never started (:func:`moot_items`, ``RunSpec.moot``) and :func:`score` leaves them out, run
or not: the score is that of training every slot. Thresholds, slots, work and points come
from course.yml only.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from autograder.harness import wire
from autograder.harness.home import import_file
from autograder.harness.limits import MilestoneInfo
from autograder.harness.supervisor import Outcome
from autograder.harness.variants import MilestoneSeed, milestone_seeds
from autograder.suite import TimedResult

#: The module the child imports the trainers from (by name, from the harness root).
RECIPES = "tinytorch_milestones.recipes"


@dataclass
class MilestoneJob:
    """A milestone ready to run: its course facts, its provider file (None = missing) and,
    once :func:`prepare` ran, this submission's seeds, training inputs and held-out tests."""

    info: MilestoneInfo
    file: Path | None
    seeds: list[MilestoneSeed] = field(default_factory=list)
    provider: ModuleType | None = None
    inputs: dict[str, Any] = field(default_factory=dict)     # item -> wire data (to the child)
    held_out: dict[str, tuple[Any, np.ndarray]] = field(default_factory=dict)
    total_steps: dict[str, int] = field(default_factory=dict)  # item -> steps its work takes

    def items(self) -> list[str]:
        return [f"milestone:{self.info.id}#{s.slot}@{s.train}" for s in self.seeds]

    @property
    def plan(self) -> Any:
        """The provider's ``plan`` hook (timed work), or None."""
        hook = getattr(self.provider, "plan", None)
        return hook if callable(hook) else None

    def item_timeout(self) -> float:
        """The CPU-second cap of one slot: ``time_budget_s / len(seeds)``."""
        return self.info.time_budget_s / max(1, len(self.info.seeds))

    def work(self) -> dict[str, Any]:
        """What the child's trainer runs: course.yml ``training``, and the slot's cap
        (``cap_s``, which no trainer waits for)."""
        return {**(self.info.training or {}), "cap_s": self.item_timeout()}


def find_jobs(milestones: tuple[MilestoneInfo, ...], folders: list[Path]) -> list[MilestoneJob]:
    """Pair each milestone with ``<folder>/<id>.py`` from the first folder that has it."""
    jobs = []
    for m in milestones:
        file = next((f / f"{m.id}.py" for f in folders if (f / f"{m.id}.py").is_file()), None)
        jobs.append(MilestoneJob(m, file))
    return jobs


def load_provider(file: Path) -> ModuleType:
    """Import a provider (trusted course code) in the parent; it must define task and predict."""
    mod = import_file(f"milestone_provider_{file.stem}", file)
    for name in ("task", "predict"):
        if not callable(getattr(mod, name, None)):
            raise ImportError(f"{file.name} defines no {name}()")
    return mod


def prepare(job: MilestoneJob, *, key: str, salt: str) -> None:
    """This submission's seeds, the training split of each variant (for the child) and the
    held-out split (kept here). Raises whatever the provider raises (a course-side error)."""
    from autograder.milestones.data import recipes  # noqa: PLC0415 - milestone zips only

    assert job.file is not None
    if not job.info.training:
        raise ValueError(f"course.yml milestones {job.info.id}: no training (the fixed work "
                         "the grader runs)")
    job.provider = load_provider(job.file)
    job.seeds = milestone_seeds(key, salt, job.info.id, job.info.seeds)
    for s, item in zip(job.seeds, job.items(), strict=True):
        train_x, train_y, test_x, test_y = job.provider.task(s.data)
        job.total_steps[item] = recipes().total_steps(job.info.training, len(train_y))
        # a task may hand the child more than one array (mlperf_2018: images and a prompt)
        job.inputs[item] = wire.encode([train_x if isinstance(train_x, dict)
                                        else np.asarray(train_x), np.asarray(train_y)])
        job.held_out[item] = (test_x if isinstance(test_x, dict) else np.asarray(test_x),
                              np.asarray(test_y))


def child_job(jobs: list[MilestoneJob]) -> dict[str, Any]:
    """``RunSpec.milestone_job``: what the child needs to train (no labels of any test set)."""
    ready = [j for j in jobs if j.file is not None and j.seeds]
    if not ready:
        return {}
    return {"recipes": RECIPES, "ids": [j.info.id for j in ready],
            "inputs": {i: d for j in ready for i, d in j.inputs.items()},
            "work": {j.info.id: j.work() for j in ready}}


def plan(job: MilestoneJob, item: str, result: Any, rng: np.random.Generator) -> Any:
    """The provider's timing plan for one seed slot's committed ``result``."""
    assert job.plan is not None
    return job.plan(result, job.held_out[item][0], rng)


def on_result(job: MilestoneJob, item: str, params: Any) -> dict[str, Any]:
    """Predictions of the returned parameters on the held-out split, or the provider's
    ``evaluate`` verdict when it has the hook (what the child sent is dropped either way).
    A timed slot's ``params`` is a :class:`autograder.suite.TimedResult`; one the grader could
    not time is a course-side problem (``grader_error``), never the student's 0."""
    assert job.provider is not None
    test_x, test_y = job.held_out[item]
    if job.plan is not None and not isinstance(params, TimedResult):
        return {"invalid": "the work was not committed before it was timed (tampering?)"}
    if isinstance(params, TimedResult) and params.problem:
        return {"grader_error": params.problem[:300]}
    try:
        judge = getattr(job.provider, "evaluate", None)
        if callable(judge):
            v = judge(params, test_x, test_y)
            return {"verdict": {"passed": bool(v["passed"]), "value": v.get("value"),
                                "message": str(v.get("message", ""))}}
        pred = np.asarray(job.provider.predict(params, test_x))
    except ValueError as exc:  # forward.BadParameters and shape errors: the submission's
        return {"invalid": str(exc)[:300]}
    return {"pred": pred}


def seed_passed(job: MilestoneJob, slot: int, item: str, outcome: Outcome) -> bool:
    """Whether slot ``slot``'s outcome (its item ``item``) reached the threshold, exactly as
    :func:`score` counts it (a slot that crashed, ran out of time or could not be scored did
    not)."""
    from autograder.milestones.grading import evaluate  # noqa: PLC0415 - milestone zips only

    got = outcome.value if outcome.status == "result" else None
    if isinstance(got, dict) and "verdict" in got:
        return bool(got["verdict"].get("passed", False))
    if not (isinstance(got, dict) and "pred" in got):
        return False
    alone = {**_as_course_milestone(job.info), "seeds": [slot], "min_passing_seeds": 1}
    return bool(evaluate(alone, {slot: got["pred"]}, {slot: job.held_out[item][1]})["passed"])


def untrained(job: MilestoneJob, outcomes: Mapping[str, Outcome]) -> list[int]:
    """The slots whose training cannot change ``job``'s verdict given ``outcomes``
    (:func:`autograder.milestones.grading.moot_seeds`, slots in course.yml's order). Slots
    left ``skipped`` are not results: the slots before them decided."""
    from autograder.milestones.grading import moot_seeds  # noqa: PLC0415 - milestone zips only

    passed = {s.slot: seed_passed(job, s.slot, item, outcomes[item])
              for s, item in zip(job.seeds, job.items(), strict=True)
              if item in outcomes and outcomes[item].status != "skipped"}
    return moot_seeds(_as_course_milestone(job.info), passed)


def moot_items(jobs: list[MilestoneJob]) -> Callable[[Outcome], dict[str, str]]:
    """``RunSpec.moot``: for each outcome recorded, the milestone items that need not run any
    more (:func:`autograder.milestones.grading.moot_seeds` on the slots judged so far, each
    judged once, as :func:`score` judges it), each with what it says. Lanes call it from their
    own threads: the verdicts so far are shared under a lock."""
    from autograder.milestones.grading import UNTRAINED, moot_seeds  # noqa: PLC0415 - milestone zips only

    slots = {item: (j, s.slot) for j in jobs if j.file is not None
             for s, item in zip(j.seeds, j.items(), strict=True)}
    passed: dict[str, dict[int, bool]] = {j.info.id: {} for j in jobs}
    lock = threading.Lock()

    def moot(outcome: Outcome) -> dict[str, str]:
        if outcome.item not in slots:
            return {}
        job, slot = slots[outcome.item]
        verdict = seed_passed(job, slot, outcome.item, outcome)
        with lock:
            passed[job.info.id][slot] = verdict
            left = set(moot_seeds(_as_course_milestone(job.info), passed[job.info.id]))
        return {item: f"not run: {UNTRAINED}"
                for s, item in zip(job.seeds, job.items(), strict=True) if s.slot in left}

    return moot


def score(job: MilestoneJob, outcomes: dict[str, Outcome]) -> tuple[float, str, dict[str, Any]]:
    """(points, message, extra) for one milestone from its per-seed outcomes. The slots
    :func:`untrained` names are left out whether or not they ran (in lanes one may have):
    the result is the same whichever order the slots ran in."""
    from autograder.milestones.grading import evaluate, k_of_n  # noqa: PLC0415 - milestone zips only

    m = job.info
    judged = callable(getattr(job.provider, "evaluate", None))
    skip = untrained(job, outcomes)
    verdicts: dict[int, Any] = {}
    preds: dict[int, Any] = {}
    labels: dict[int, np.ndarray] = {}
    notes: list[str] = []
    steps: list[int | None] = []
    cpu: list[float | None] = []
    grader_errors: list[str] = []
    for s, item in zip(job.seeds, job.items(), strict=True):
        labels[s.slot] = job.held_out[item][1]
        if s.slot in skip:
            steps.append(None)
            cpu.append(None)
            continue
        o = outcomes.get(item)
        got = o.value if o is not None and o.status == "result" else None
        total = job.total_steps.get(item, 0)
        steps.append(total if got is not None else o.steps if o is not None else None)
        cpu.append(o.cpu_s if o is not None else None)
        if isinstance(got, dict) and "pred" in got:
            preds[s.slot] = got["pred"]
            continue
        if isinstance(got, dict) and "verdict" in got:
            verdicts[s.slot] = got["verdict"]
            continue
        preds[s.slot] = verdicts[s.slot] = None
        if isinstance(got, dict) and "grader_error" in got:
            grader_errors.append(f"seed {s.slot}: {got['grader_error']}")
            notes.append(f"seed {s.slot}: not scored: the grader could not time it (an "
                         "autograder problem; course staff will regrade it)")
        elif isinstance(got, dict) and "invalid" in got:
            notes.append(f"seed {s.slot}: the trained parameters do not fit the model "
                         f"({got['invalid']})")
        elif o is not None and o.status == "timeout" and o.stopped_by == "cpu":
            notes.append(f"seed {s.slot}: " + capped_message(job, total, o.steps))
        else:
            notes.append(f"seed {s.slot}: " + ((o.message or o.status) if o else "no result"))
    verdict = (k_of_n(_as_course_milestone(m), verdicts, untrained=skip) if judged
               else evaluate(_as_course_milestone(m), preds, labels, untrained=skip))
    msg = str(verdict.get("message", ""))
    if notes:
        msg += "\n" + "\n".join(notes[:len(m.seeds)])
    per_seed = {str(k): v for k, v in dict(verdict.get("per_seed", {})).items()}
    extra = {"seeds": list(m.seeds), "train_seeds": [s.train for s in job.seeds],
             "data_seeds": [s.data for s in job.seeds], "metric": m.metric,
             "threshold": m.threshold, "values": per_seed,
             "passing": len(verdict.get("passing_seeds", [])),
             "needed": m.min_passing_seeds, "passed": bool(verdict.get("passed", False)),
             "work": dict(m.training or {}), "steps": steps,
             "total_steps": [job.total_steps.get(i, 0) for i in job.items()],
             "cpu_s": cpu, "cap_s": round(job.item_timeout(), 2), "untrained": skip}
    if grader_errors:
        extra["grader_errors"] = grader_errors
    points = float(verdict.get("score", 0.0))
    return min(points, float(m.points)), msg, extra


def capped_message(job: MilestoneJob, total: int, done: int | None) -> str:
    """What a slot stopped at its CPU cap says: how far it got, out of the fixed work, in the
    cap, and where to look. The same whatever the machine's load: the work is fixed, and the
    cap is CPU time (only how far it got depends on the speed of the machine)."""
    got = (f"did {done:,} of {total:,} steps" if done else
           f"did not finish one of its {total:,} steps")
    return (f"your training {got} in the {job.item_timeout():g} CPU-s "
            "this milestone allows per seed, and was stopped: a seed that does not finish its "
            "fixed training is not measured (it is never trained for less). The reference "
            "finishes in a small part of that; profile one training step (module 14's "
            "profiler) to find what in your code is slow, typically a backward pass written "
            "with Python loops.")


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


def _as_course_milestone(m: MilestoneInfo) -> dict[str, Any]:
    return {"id": m.id, "year": 0, "title": m.title, "requires": [], "graded_with": 0,
            "dataset": m.dataset or "-", "metric": m.metric, "threshold": m.threshold,
            "seeds": list(m.seeds), "min_passing_seeds": m.min_passing_seeds,
            "time_budget_s": m.time_budget_s, "points": m.points,
            "training": m.training or None, "weights": m.weights or None,
            "test_data": m.test_data}
