"""``tito regrade --jobs N``: ``N`` worker processes, each supervising its own gradings.

A grading's supervision (reading the sandboxed child's messages, its CPU clock, the results it
reports, the reference values it is compared with) costs its grading process CPU for every
test. With ``N`` threads in one process that process did it for every submission at once and
stopped gaining at about four busy cores (issue 32: 92 ms of its CPU per submission at
``--jobs 1``, 283 ms at ``--jobs 16``). Here each of ``N`` workers
(:mod:`staff.regrade.worker`) grades one submission at a time with
:func:`staff.regrade.task.grade_payload`, as a Dask worker does; the regrade process sends a
task's plain data to an idle worker, highest priority first (the slowest expected submission
first: :func:`staff.regrade.run.estimate`), and receives its results: a constant amount of
work per submission, whatever ``N``.

A worker that dies (killed by the machine's OOM killer, say) ends its task with a course-side
error (reported as not graded, retried by the next run) and is replaced. Every worker is
started through ``setpriv --pdeathsig KILL`` where it is available and stops its children when
its pipe from the regrade closes, so nothing outlives a regrade killed with ``kill -9``.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

STOP_WAIT_S = 15.0  # a worker told to stop kills its children and exits well within this
_ROOT = str(Path(__file__).resolve().parents[2])  # the repository the workers import from


@dataclass(eq=False)
class Handle:
    """One submitted task: waiting, then on a worker, then done with its outcome."""

    id: int
    priority: float
    payload: dict[str, Any] | None
    outcome: dict[str, Any] | None = None

    def done(self) -> bool:
        return self.outcome is not None


@dataclass(eq=False)
class _Worker:
    proc: subprocess.Popen[bytes]
    inbox: Connection    # the regrade writes tasks here
    outbox: Connection   # and reads outcomes here
    task: Handle | None = None


@dataclass
class LocalRunner:
    """``jobs`` worker processes on this machine (the runner of :func:`run_tasks` without
    ``--scheduler``)."""

    jobs: int
    hide: tuple[str, ...]
    workers: list[_Worker] = field(default_factory=list)
    waiting: list[Handle] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._ids = itertools.count()
        self._order = itertools.count()
        self.workers = [self._start() for _ in range(max(1, self.jobs))]

    @staticmethod
    def _start() -> _Worker:
        from autograder.harness import lifeline

        down_r, down_w = os.pipe()  # regrade -> worker
        up_r, up_w = os.pipe()      # worker -> regrade
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (_ROOT, env.get("PYTHONPATH", "")) if p)
        try:
            proc = subprocess.Popen(
                [*lifeline.launch_prefix(), sys.executable, "-m", "staff.regrade.worker",
                 str(down_r), str(up_w)], pass_fds=(down_r, up_w), stdin=subprocess.DEVNULL,
                env=env)
        except BaseException:
            for fd in (down_r, down_w, up_r, up_w):
                os.close(fd)
            raise
        os.close(down_r)
        os.close(up_w)
        return _Worker(proc, Connection(down_w, readable=False), Connection(up_r, writable=False))

    def slots(self) -> int:
        return len(self.workers)

    def check(self, modules: list[dict[str, Any]], graders: list[str]) -> None:
        """Nothing to ask: the workers grade with this machine's files and sandbox."""

    def submit(self, payload: dict[str, Any], *, priority: float) -> Handle:
        handle = Handle(next(self._ids), priority, payload)
        self.waiting.append(handle)
        self._dispatch()
        return handle

    def _dispatch(self) -> None:
        """Idle workers take the waiting tasks, highest priority first (then in order sent)."""
        self.waiting.sort(key=lambda h: (-h.priority, h.id))
        for w in self.workers:
            if w.task is None and self.waiting:
                handle = self.waiting.pop(0)
                payload, handle.payload = handle.payload, None  # its files: sent, not kept
                w.task = handle
                try:
                    w.inbox.send((handle.id, payload, self.hide))
                except OSError:  # the worker died: reported when its pipe is read
                    pass

    def wait(self, timeout: float) -> None:
        """Receive every outcome that arrives within ``timeout`` s; hand out waiting tasks."""
        busy = {w.outbox: w for w in self.workers if w.task is not None}
        for conn in wait(list(busy), timeout) if busy else ():
            w = busy[conn]  # type: ignore[index]
            assert w.task is not None
            try:
                task_id, outcome = w.outbox.recv()
                if task_id != w.task.id:  # pragma: no cover - one task per worker at a time
                    raise EOFError(f"an answer for task {task_id}")
            except (EOFError, OSError) as exc:
                outcome = {"error": self._lost(w, exc)}
                self.workers[self.workers.index(w)] = self._start()
            w.task.outcome = dict(outcome)
            w.task = None
        self._dispatch()

    def _lost(self, w: _Worker, exc: BaseException) -> str:
        self._stop([w])
        code = w.proc.returncode
        how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit {code}"
        return (f"regrade worker {w.proc.pid} ended during the grading ({how}; {exc or 'EOF'}): "
                "not graded, the next run retries it")

    def done(self, handle: Handle) -> bool:
        return handle.done()

    def result(self, handle: Handle) -> dict[str, Any]:
        assert handle.outcome is not None
        return handle.outcome

    def abort(self, handles: list[Any]) -> int:
        """Stop every worker and its children at once; the number of gradings stopped."""
        running = sum(1 for w in self.workers if w.task is not None)
        self.waiting.clear()
        self._stop(self.workers)
        return running

    def close(self) -> None:
        self.waiting.clear()
        self._stop(self.workers)

    @staticmethod
    def _stop(workers: list[_Worker]) -> None:
        """Close each worker's pipe (it kills its children and exits); wait; kill stragglers."""
        for w in workers:
            w.inbox.close()
        for w in workers:
            try:
                w.proc.wait(timeout=STOP_WAIT_S)
            except subprocess.TimeoutExpired:  # pragma: no cover - a worker stuck in the kernel
                w.proc.kill()
                w.proc.wait()
            w.outbox.close()
