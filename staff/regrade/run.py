"""Running a regrade's tasks: reuse, order, a bounded window, records, and interrupts.

:func:`run_tasks` takes the prepared tasks of :func:`staff.regrade.core.regrade` and

* reuses every task whose ``regrade.json`` record matches its fingerprint (and whose
  results.json still has the recorded sha256);
* sends the rest slowest first (:func:`estimate`) to a runner: worker processes on this
  machine (:class:`staff.regrade.pool.LocalRunner`) or a Dask cluster
  (:class:`staff.regrade.dask.DaskRunner`), keeping only a small window of tasks in flight, so a term of 16,000 submissions never holds
  more than a few in memory (each task's files are read when it is sent);
* records each result as it arrives: results.json, then the record, each replaced atomically;
  a course-side failure is recorded as nothing (the next run retries it);
* on SIGINT, SIGTERM or SIGHUP stops every child at once and returns what was kept.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coursekit.gradescope_export import ExportRecord
from staff.regrade.core import RECORD_FILE, RECORD_FORMAT
from staff.regrade.diff import SubmissionDiff, _f, build_row, timed_out_tests
from staff.regrade.errors import RegradeInterrupted
from staff.regrade.export import Unit
from staff.regrade.report import _atomic_json

MAX_LANES = 4  # a looping submission's tests in up to four children side by side
POLL_S = 0.05  # the longest a finished result waits before it is recorded


@dataclass
class Task:
    """One submission to grade (its files are read again when it is sent)."""

    unit: Unit
    record: ExportRecord
    base: dict[str, Any]
    source: Path
    fingerprint: str
    notes: list[str]
    cost: float
    folder: Path

    def payload(self) -> dict[str, Any]:
        """The task's plain data, files read now (the fingerprint follows what was read)."""
        from staff.regrade.task import payload_fingerprint, read_submission

        files, _ = read_submission(self.source)
        payload = {**self.base, "files": files}
        self.fingerprint = payload_fingerprint(payload)
        return payload


def lanes_for(timed_out: int) -> int:
    """Children to grade a submission with: one more than the tests that timed out before
    (2..4), else 1.

    Tests that loop cost one timeout each, one after another; in lanes they overlap. The items
    are dealt round-robin, so with fewer lanes than looping tests two of them share a lane and
    that lane costs two timeouts in a row (issue 32: four looping tests over three lanes ended
    a 16-core regrade at 26 s). The spare lane covers a looping test the old results did not
    count (the old run stopped early, or the regrade's suite reaches the loop once more).
    """
    return min(MAX_LANES, timed_out + 1) if timed_out >= 1 else 1


def estimate(old_results: dict[str, Any] | None, previous: dict[str, Any] | None,
             timeout: float) -> float:
    """Expected grading seconds: an earlier regrade's, else the old results' time and
    timeouts (slowest first: a looping submission starts at once, not last)."""
    if previous and isinstance(previous.get("seconds"), (int, float)):
        return float(previous["seconds"])
    old = old_results or {}
    t = _f(old.get("execution_time")) or 0.0
    return max(t, timed_out_tests(old) * timeout, 0.5)


def read_record(folder: Path) -> dict[str, Any] | None:
    """A submission folder's ``regrade.json`` record, if it is readable."""
    try:
        doc = json.loads((folder / RECORD_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def reusable(folder: Path, fingerprint: str) -> dict[str, Any] | None:
    """The recorded results of a finished task with this fingerprint, else None."""
    rec = read_record(folder)
    if not rec or rec.get("format") != RECORD_FORMAT or rec.get("fingerprint") != fingerprint:
        return None
    try:
        raw = (folder / "results.json").read_bytes()
    except OSError:
        return None
    if hashlib.sha256(raw).hexdigest() != rec.get("results_sha256"):
        return None
    try:
        doc = json.loads(raw)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


def finish(task: Task, outcome: dict[str, Any]) -> SubmissionDiff:
    """Record one finished task in its folder (results first, then the record) and diff it."""
    from staff.regrade.task import course_side_failure

    results = outcome.get("results")
    error = outcome.get("error")
    if results is not None and error is None:
        error = course_side_failure(results)
    row = build_row(task.unit, task.record, results if error is None else None, task.notes,
                    error=error)
    row.seconds = float(outcome.get("seconds") or 0.0)
    if error is not None:
        (task.folder / RECORD_FILE).unlink(missing_ok=True)  # retried by the next run
        return row
    raw = (json.dumps(results, indent=1, allow_nan=False) + "\n").encode()
    tmp = task.folder / f".results.{os.getpid()}.json"
    tmp.write_bytes(raw)
    os.replace(tmp, task.folder / "results.json")
    _atomic_json(task.folder / RECORD_FILE, {
        "format": RECORD_FORMAT, "fingerprint": task.fingerprint,
        "results_sha256": hashlib.sha256(raw).hexdigest(), "seconds": row.seconds,
        "worker": outcome.get("worker"), "finished_at": dt.datetime.now(
            dt.timezone.utc).isoformat(timespec="seconds")})
    return row


@contextmanager
def signals(state: dict[str, Any]) -> Iterator[None]:
    """Ctrl-C, kill (SIGTERM) and hang-up only set a flag; the main loop stops the children."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, _frame: Any) -> None:
        state.setdefault("stop", signum)

    old = {}
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        try:
            old[sig] = signal.signal(sig, handler)
        except (ValueError, OSError):  # pragma: no cover
            pass
    try:
        yield
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)


class Starting:
    """A regrade's runner, started before its tasks are made, so that starting the workers
    (importing the harness) or a Dask cluster overlaps unpacking the export and preparing the
    tasks. Worker processes start at once, from this thread (their parent-death signal follows
    the thread that started them); a Dask cluster, or the connection to a scheduler, starts in
    a thread of its own. :meth:`get` waits for it; :meth:`close` stops it (once)."""

    def __init__(self, jobs: int, scheduler: Any, hide: tuple[str, ...]) -> None:
        self._runner: Any = None
        self._future: Any = None
        self._closed = False
        if scheduler is None:
            from staff.regrade.pool import LocalRunner

            self._runner = LocalRunner(jobs, hide)
            return
        from concurrent.futures import Future

        from staff.regrade.dask import DaskRunner

        self._future = Future()

        def start() -> None:
            try:
                self._future.set_result(DaskRunner(scheduler, hide=hide))
            except BaseException as exc:  # noqa: BLE001 - raised again by get()
                self._future.set_exception(exc)

        threading.Thread(target=start, name="regrade-dask-start", daemon=True).start()

    def get(self) -> Any:
        """The runner, once started.

        Raises:
            RegradeError: the scheduler cannot be reached.
        """
        if self._runner is None:
            self._runner = self._future.result()
        return self._runner

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            runner = self.get()
        except Exception:  # noqa: BLE001 - it never started: nothing to stop
            return
        runner.close()


def run_tasks(tasks: list[Task], *, jobs: int, scheduler: Any, hide: tuple[str, ...],
              on_done: Callable[[SubmissionDiff], None] | None, outdir: Path,
              started: Starting | None = None
              ) -> tuple[list[SubmissionDiff], int, int, RegradeInterrupted | None]:
    """Reuse what is finished, grade the rest slowest first; stop cleanly on a signal.

    ``started``: a runner started already (:class:`Starting`), else one is started here; either way
    it is stopped at the end.

    Returns:
        The rows, how many were reused, how many were graded now, and the interruption (None
        when every task finished).
    """
    rows: list[SubmissionDiff] = []
    todo: list[Task] = []
    for t in tasks:
        results = reusable(t.folder, t.fingerprint)
        if results is None:
            todo.append(t)
            continue
        row = build_row(t.unit, t.record, results, t.notes)
        row.reused = True
        rows.append(row)
        if on_done:
            on_done(row)
    reused = len(rows)
    for t in todo:
        for name in ("results.json", RECORD_FILE):
            (t.folder / name).unlink(missing_ok=True)
    todo.sort(key=lambda t: (-t.cost, t.unit.name, len(t.record.key), t.record.key))
    state: dict[str, Any] = {}
    graded = 0
    starting = started or Starting(jobs, scheduler, hide)
    with signals(state):
        try:
            runner: Any = starting.get()
            if todo:
                graders = {t.base["grader"]: t.base["module"] for t in todo}
                runner.check(list(graders.values()), list(graders))
            queue = list(reversed(todo))  # pop() takes the slowest first
            pending: dict[Any, Task] = {}
            window = max(2, 2 * runner.slots())
            while queue or pending:
                if "stop" in state:
                    stopped = runner.abort(list(pending))
                    return rows, reused, graded, RegradeInterrupted(
                        state["stop"], len(rows), len(todo) - graded, str(outdir), stopped)
                while queue and len(pending) < window:
                    task = queue.pop()
                    pending[runner.submit(task.payload(), priority=task.cost)] = task
                done = [h for h in pending if runner.done(h)]
                if not done:
                    runner.wait(POLL_S)
                    continue
                for h in done:
                    if "stop" in state:
                        break
                    task = pending.pop(h)
                    row = finish(task, runner.result(h))
                    rows.append(row)
                    graded += 1
                    if on_done:
                        on_done(row)
            return rows, reused, graded, None
        finally:
            starting.close()
