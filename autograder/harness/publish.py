"""Publish: the grading record becomes Gradescope's results.json, written so one always exists.

The last stage of the pipeline (:mod:`autograder.harness.core`). Before any student code runs,
:func:`provisional` writes a valid results.json (a course-side "did not finish") and keeps a
reserve file beside it, so a run that is killed, or a submission that fills the disk, still
leaves a valid one; :func:`results` turns the record and the tests the decide stage built
(:mod:`autograder.harness.decide`) into the document, and :func:`write` replaces the
provisional one atomically. :func:`grader_failure` is the document of a run the autograder
itself could not finish. :data:`RUN_FACTS` names the fields that say how a run went rather
than what it graded.
"""

from __future__ import annotations

import json
import math
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from autograder.harness.decide import GraderError, Grading

HARNESS_VERSION = "2.0"
TOP_VISIBILITY = "after_due_date"

#: Space kept free next to results.json while student code runs, so the final write succeeds
#: even when the submission fills the disk (released just before writing).
RESERVE_BYTES = 4 * 1024 * 1024

#: The results.json fields that say how a run went rather than what it graded: wall-clock and
#: CPU seconds, and the uid the sandbox ran as (``*`` is any key). Everything else (scores,
#: statuses, outputs, metrics, seeds, steps) is a function of the submission, its variant and
#: the course only, the same under any load and on any worker (docs/grading.md, "What can and
#: cannot change a grade"); tests/autograder/test_under_load.py checks it.
RUN_FACTS: tuple[tuple[str, ...], ...] = (
    ("execution_time",), ("extra_data", "run", "elapsed_s"), ("extra_data", "sandbox"),
    ("extra_data", "milestones", "*", "cpu_s"), ("extra_data", "schedule", "decided_at"))


def provisional(out: Path, ctx: Grading) -> Path | None:
    """Before any student code runs: a valid results.json (a course-side "did not finish"),
    written atomically over any stale one, and a reserve file that keeps room for the real
    results even if the submission fills the disk. Returns the reserve (or None)."""
    if out.is_symlink():
        out.unlink()
    elif out.is_dir():
        shutil.rmtree(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    doc = grader_failure(ctx, "grading did not finish: the grading process was stopped "
                         "before it could write its results", ctx.started)
    doc["extra_data"]["provisional"] = True
    _atomic_write(out, _dumps(doc))
    reserve = out.parent / f".results-reserve-{os.getpid()}-{id(ctx):x}"
    try:
        fd = os.open(reserve, os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o600)
        try:
            os.posix_fallocate(fd, 0, RESERVE_BYTES)
        finally:
            os.close(fd)
        return reserve
    except OSError:
        reserve.unlink(missing_ok=True)
        return None


def _dumps(results: dict[str, Any]) -> bytes:
    return json.dumps(results, indent=1, allow_nan=False).encode("utf-8")


def _atomic_write(out: Path, data: bytes) -> None:
    """A temp file in the same folder, flushed, then renamed over ``out``."""
    fd, tmp = tempfile.mkstemp(prefix=".results-", suffix=".json", dir=out.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write(out: Path, results: dict[str, Any], reserve: Path | None) -> None:
    """Replace results.json atomically. The reserve is released first; if the write still
    fails (a full disk), a short course-side failure is tried, and failing that the
    provisional results.json stays: there is always a valid one."""
    out.parent.mkdir(parents=True, exist_ok=True)
    data = _dumps(results)
    if reserve is not None:
        reserve.unlink(missing_ok=True)
    try:
        _atomic_write(out, data)
        return
    except OSError as exc:
        print(f"results.json could not be written ({exc}); keeping a short one",
              file=sys.stderr)
    short = {k: results[k] for k in ("score", "execution_time", "visibility",
                                     "stdout_visibility") if k in results}
    short.update({"output": "The results of this run were too large to store on the grading "
                  "machine (its disk was full). Please tell course staff.",
                  "tests": [], "extra_data": {"grader_error": "results.json write failed"}})
    short["score"] = 0.0
    try:
        _atomic_write(out, _dumps(short))
    except OSError:
        pass  # the provisional results.json is still there and valid


def grader_failure(ctx: Grading | None, why: str, started: float) -> dict[str, Any]:
    """A valid results.json when the autograder itself is broken (score 0, staff notified)."""
    name = ctx.info.name if ctx else "unknown"
    msg = ("The autograder could not grade this submission because of a problem on the "
           "course's side, not yours. Please tell course staff; your submission is kept.")
    res = {
        "score": 0.0, "execution_time": round(time.monotonic() - started, 3), "output": msg,
        "visibility": "visible", "stdout_visibility": "hidden",
        "tests": [{"name": f"{name} · autograder", "score": 0, "max_score": 0,
                   "status": "failed", "visibility": "visible", "output": msg,
                   "tags": [f"module:{name}", "grader-error"]}],
        "extra_data": {"module": name, "grader_error": why[:2000],
                       "packages": _packages(None), "harness": HARNESS_VERSION},
    }
    return res


def results(ctx: Grading, tests: list[dict[str, Any]], summary: str) -> dict[str, Any]:
    """results.json of a graded run: ``tests`` and ``summary`` (the decide stage's) with the
    record's facts in ``extra_data``; the maximum score must be course.yml's."""
    info = ctx.info
    scored_max = math.fsum(t["max_score"] for t in tests)
    if not math.isclose(scored_max, info.max_score, abs_tol=1e-9):
        raise GraderError(f"maximum score {scored_max:g} does not match course.yml "
                          f"({info.max_score:g})")
    score = round(math.fsum(t["score"] for t in tests), 6)
    suite = ctx.suite
    extra: dict[str, Any] = {
        "module": info.name,
        "suite_version": suite.version if suite else "",
        "suite_sha256": ctx.suite_sha,
        "max_score": info.max_score,
        "seeds": dict(ctx.seeds),
        "packages": _packages(ctx.extra.get("run", {}).get("child_numpy")),
        "isolation": ctx.isolation,
        "expected_from": ctx.expected_source,
        "limits": ctx.limits.as_dict(),
        "submission": {"file": ctx.submission_file, "sha256": ctx.submission_sha},
        "harness": HARNESS_VERSION,
        **ctx.extra,
    }
    if ctx.grader_errors:
        extra["grader_errors"] = ctx.grader_errors[:20]
    # always present (empty when nothing is pending): a reader can tell this harness's
    # results, whose pending tests are tagged, from older ones
    extra["pending"] = ctx.pending[:50]
    for t in tests:
        t["score"] = float(t["score"])
        t["max_score"] = float(t["max_score"])
    doc = {"score": score, "execution_time": round(time.monotonic() - ctx.started, 3),
           "output": summary, "visibility": TOP_VISIBILITY, "stdout_visibility": "hidden",
           "tests": tests, "extra_data": extra}
    if ctx.leaderboard:
        doc["leaderboard"] = ctx.leaderboard
    return doc


def without_run_facts(results: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``results`` without its :data:`RUN_FACTS`: what two gradings of the same
    submission must agree on exactly."""
    out = json.loads(json.dumps(results))

    def drop(node: Any, path: tuple[str, ...]) -> None:
        if not isinstance(node, dict) or not path:
            return
        keys = list(node) if path[0] == "*" else [path[0]]
        for key in keys:
            if len(path) == 1:
                node.pop(key, None)
            else:
                drop(node.get(key), path[1:])

    for path in RUN_FACTS:
        drop(out, path)
    return out


def _packages(child_numpy: str | None) -> dict[str, str]:
    pk = {"python": platform.python_version(), "numpy": np.__version__,
          "platform": platform.platform(terse=True)}
    if child_numpy and child_numpy != np.__version__:
        pk["numpy_child"] = child_numpy
    return pk
