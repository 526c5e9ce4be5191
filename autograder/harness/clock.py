"""Grading deadlines in CPU seconds of the child's process tree, with a backstop for blocking.

A deadline in wall-clock seconds makes a verdict depend on what else the machine is doing: the
same submission passes on an idle machine and times out on a busy one (CI shares two cores;
a TA regrades with several jobs; Gradescope gives half a CPU). So the supervisor charges each
phase of a child (importing the package, then one item at a time) with the CPU time the child
and every process below it have used, which a busy machine does not inflate.

Code that blocks without computing (``time.sleep``, waiting on a pipe) uses no CPU; it is
stopped once it has spent :data:`WALL_FACTOR` times the limit *neither running nor waiting
for a CPU*. The parent samples the tree every :data:`SAMPLE_EVERY_S`: an interval in which a
task is runnable (state ``R``: on a CPU or queued for one) is not blocked; otherwise it counts
as blocked less the time the tasks ran or queued meanwhile (``/proc/<pid>/task/<tid>/
schedstat``). Waiting for a busy machine's CPUs is not blocking, so load does not trigger the
backstop either. The whole run's limit (``run_timeout_s``) stays wall clock: it exists to
finish before the platform kills the run.
"""

from __future__ import annotations

import os
import time

#: A phase that has used less CPU than its limit still ends after this many times the limit
#: spent blocked (neither running nor queued to run): sleeping or waiting code.
WALL_FACTOR = 5.0
#: How often (wall seconds) the parent samples the child's CPU and run-queue times.
SAMPLE_EVERY_S = 0.2

_TICK = float(os.sysconf("SC_CLK_TCK"))
TICK = _TICK  #: clock ticks per second of /proc's utime, cutime...


def proc_text(path: str) -> str:
    """A ``/proc`` file as text; raises OSError when the process is gone. A process name is
    whatever bytes the process set (a submission may set invalid UTF-8 with ``prctl``), so it
    is decoded leniently: a name must never crash the parent reading it. Plain ``os`` calls:
    the supervisor reads several of these for every item it runs."""
    fd = os.open(path, os.O_RDONLY)
    try:
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks).decode("utf-8", "replace")


def stat_fields(path: str) -> list[str] | None:
    """The fields of a ``/proc/<pid>/stat`` (or ``.../task/<tid>/stat``) file after the
    process name, or None when the process is gone: item 0 is the state (``stat`` field 3),
    item ``k`` is field ``k + 3``. The name sits in parentheses and may itself hold spaces
    and parentheses, so the fields start after the last ``)``."""
    try:
        text = proc_text(path)
    except OSError:
        return None
    return text[text.rfind(")") + 2:].split()


def _cpu_ticks(pid: int) -> int:
    """utime + stime + cutime + cstime of one process (all its threads), 0 when it is gone."""
    fields = stat_fields(f"/proc/{pid}/stat")
    if fields is None:
        return 0
    # utime..cstime are stat fields 14..17
    return sum(int(x) for x in fields[11:15])


def _tasks(pid: int) -> list[str]:
    try:
        return os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []


def _children(pid: int, tasks: list[str]) -> list[int]:
    out: list[int] = []
    for tid in tasks:
        try:
            out += [int(c) for c in proc_text(f"/proc/{pid}/task/{tid}/children").split()]
        except (OSError, ValueError):
            continue
    return out


def process_tree(root: int) -> dict[int, list[str]]:
    """``root`` and every process below it (pid -> its thread ids).

    Processes that re-parent to the grading child (it is a child subreaper) stay below it.
    """
    tree: dict[int, list[str]] = {}
    frontier = [root]
    while frontier:
        pid = frontier.pop()
        if pid in tree:
            continue
        tree[pid] = _tasks(pid)
        frontier += _children(pid, tree[pid])
    return tree


def tree_cpu_seconds(root: int) -> float:
    """CPU seconds used so far by ``root`` and every process below it (reaped ones included)."""
    return sum(_cpu_ticks(pid) for pid in process_tree(root)) / _TICK


def _runnable(pid: int, tid: str) -> bool:
    """Whether a task is on a CPU or queued for one (state R) right now."""
    fields = stat_fields(f"/proc/{pid}/task/{tid}/stat")
    return fields is not None and fields[:1] == ["R"]


def _wanted_ns(pid: int, tid: str) -> int:
    """Nanoseconds a task has spent on a CPU or queued for one (0 when not reported).

    The kernel adds a wait to this when the task gets the CPU, so a starved task's waiting
    shows late; :func:`_runnable` covers it meanwhile.
    """
    try:
        run, queued, _ = proc_text(f"/proc/{pid}/task/{tid}/schedstat").split()
        return int(run) + int(queued)
    except (OSError, ValueError):
        return 0


class Deadline:
    """The current phase's limit for one child: CPU seconds, with the blocking backstop.

    ``start(limit)`` opens a phase (the import, an item); ``idle()`` closes it (between items
    only the run's wall-clock deadline applies). ``expired()`` says whether to stop the child.

    A phase counts from the end of the one before it, not from when this process reads the
    child's "start": the child goes on to its next item while the parent decides the last
    result (a milestone's held-out evaluation takes seconds), and that CPU time belongs to
    the next item. So neither the cap nor the CPU seconds recorded for an item depend on how
    fast the parent was.
    """

    def __init__(self, pid: int, run_deadline: float) -> None:
        self.pid = pid
        self.run_deadline = run_deadline
        self.limit: float | None = None
        self.cpu0 = 0.0
        self.cpu = 0.0
        self.blocked = 0.0
        self.reason = ""
        self._sampled = 0.0
        self._wanted: dict[tuple[int, str], int] = {}  # last seen per task; gone tasks stay
        self._wanted_total = 0
        self._mark: float | None = None  # CPU of the tree when the last phase ended

    def start(self, limit: float, *, from_launch: bool = False) -> None:
        self.limit = limit
        if from_launch:
            self.cpu0 = 0.0
            self._sampled = time.monotonic()
        else:
            now = self._sample(force=True, phase_start=True)
            self.cpu0 = now if self._mark is None else min(self._mark, now)
        self._mark = None
        self.blocked = 0.0

    def idle(self) -> float:
        """Close the phase; returns the CPU seconds it used (0 when none was open). The next
        phase counts from now."""
        used = self.used() if self.limit is not None else 0.0
        self._mark = self.cpu if self.limit is not None else self._sample(force=True)
        self.limit = None
        return used

    def resync(self) -> None:
        """Forget the wall time since the last sample: the parent held the child (stopped it
        while it timed something else, :mod:`autograder.harness.timing`), so that time was
        neither the child's CPU nor its blocking."""
        self._sample(force=True, phase_start=True)

    def _sample(self, force: bool = False, phase_start: bool = False) -> float:
        """CPU seconds of the tree now; updates the blocked time of the phase (not at a phase
        start: :meth:`start` resets it, so the tasks' states are not read then)."""
        now = time.monotonic()
        if not force and now - self._sampled < SAMPLE_EVERY_S:
            return self.cpu
        tree = process_tree(self.pid)
        self.cpu = sum(_cpu_ticks(pid) for pid in tree) / _TICK
        before = self._wanted_total
        runnable = phase_start
        for pid, tids in tree.items():
            for tid in tids:
                runnable = runnable or _runnable(pid, tid)
                ns = _wanted_ns(pid, tid)
                self._wanted[(pid, tid)] = max(ns, self._wanted.get((pid, tid), 0))
        self._wanted_total = sum(self._wanted.values())
        if not runnable:
            dt = now - self._sampled
            self.blocked += max(0.0, dt - (self._wanted_total - before) / 1e9)
        self._sampled = now
        return self.cpu

    def used(self) -> float:
        """CPU seconds the tree has used in the current phase so far (rounded to 0.01)."""
        return round(max(0.0, self._sample(force=True) - self.cpu0), 2)

    def expired(self) -> bool:
        if time.monotonic() >= self.run_deadline:
            self.reason = "run"
            return True
        if self.limit is None:
            return False
        if self._sample() - self.cpu0 >= self.limit:
            self.reason = "cpu"
            return True
        if self.blocked >= self.limit * WALL_FACTOR:
            self.reason = "blocked"
            return True
        return False

    def wait_s(self) -> float:
        """How long the parent may block before it must look again."""
        return max(0.0, min(SAMPLE_EVERY_S, self.run_deadline - time.monotonic()))

    def describe(self) -> str:
        """Why the phase was stopped, for the student-facing message."""
        if self.limit is None:
            return ""
        if self.reason == "blocked":
            return f"{self.limit * WALL_FACTOR:g} s of wall-clock time without computing"
        return f"{self.limit:g} s of CPU time"
