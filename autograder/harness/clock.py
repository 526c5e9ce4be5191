"""Grading deadlines in CPU seconds of the child's process tree, with a wall-clock backstop.

A deadline in wall-clock seconds makes a verdict depend on what else the machine is doing: the
same submission passes on an idle machine and times out on a busy one (CI shares two cores;
a TA regrades with several jobs; Gradescope gives half a CPU). So the supervisor charges each
phase of a child (importing the package, then one item at a time) with the CPU time the child
and every process below it have used, which a busy machine does not inflate. Code that blocks
without computing (``time.sleep``, waiting on a pipe) uses no CPU; it is stopped once it has
spent :data:`WALL_FACTOR` times the limit in wall-clock seconds. The whole run's limit
(``run_timeout_s``) stays wall clock: it exists to finish before the platform kills the run.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

#: A phase that has used less CPU than its limit still ends after this many times the limit in
#: wall-clock seconds (it is blocked, not computing). Large enough that work which stays under
#: its CPU limit never reaches it on a busy machine; small enough to bound sleeping code.
WALL_FACTOR = 5.0
#: How often (wall seconds) the parent samples the child's CPU time while it waits.
SAMPLE_EVERY_S = 0.2

_TICK = float(os.sysconf("SC_CLK_TCK"))


def _cpu_ticks(pid: int) -> int:
    """utime + stime + cutime + cstime of one process (all its threads), 0 when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    fields = text[text.rfind(")") + 2:].split()
    # fields[0] is the state (stat field 3): utime..cstime are stat fields 14..17
    return sum(int(x) for x in fields[11:15])


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            out += [int(c) for c in Path(f"/proc/{pid}/task/{tid}/children").read_text().split()]
        except (OSError, ValueError):
            continue
    return out


def tree_cpu_seconds(root: int) -> float:
    """CPU seconds used so far by ``root`` and every process below it (including reaped ones).

    Processes that re-parent to the grading child (it is a child subreaper) stay below it.
    """
    seen: set[int] = set()
    frontier = [root]
    ticks = 0
    while frontier:
        pid = frontier.pop()
        if pid in seen:
            continue
        seen.add(pid)
        ticks += _cpu_ticks(pid)
        frontier += _children(pid)
    return ticks / _TICK


class Deadline:
    """The current phase's limit for one child: CPU seconds, with the wall-clock backstop.

    ``start(limit)`` opens a phase (the import, an item); ``idle()`` closes it (between items
    only the run's wall-clock deadline applies). ``expired()`` says whether to stop the child.
    """

    def __init__(self, pid: int, run_deadline: float) -> None:
        self.pid = pid
        self.run_deadline = run_deadline
        self.limit: float | None = None
        self.cpu0 = 0.0
        self.wall0 = 0.0
        self.cpu = 0.0
        self._sampled = 0.0
        self.reason = ""

    def start(self, limit: float, *, from_launch: bool = False) -> None:
        self.limit = limit
        self.wall0 = time.monotonic()
        self.cpu0 = 0.0 if from_launch else self._sample(force=True)

    def idle(self) -> None:
        self.limit = None

    def _sample(self, force: bool = False) -> float:
        now = time.monotonic()
        if force or now - self._sampled >= SAMPLE_EVERY_S:
            self.cpu = tree_cpu_seconds(self.pid)
            self._sampled = now
        return self.cpu

    def expired(self) -> bool:
        now = time.monotonic()
        if now >= self.run_deadline:
            self.reason = "run"
            return True
        if self.limit is None:
            return False
        if now - self.wall0 >= self.limit * WALL_FACTOR:
            self.reason = "wall"
            return True
        if self._sample() - self.cpu0 >= self.limit:
            self.reason = "cpu"
            return True
        return False

    def wait_s(self) -> float:
        """How long the parent may block before it must look again."""
        return max(0.0, min(SAMPLE_EVERY_S, self.run_deadline - time.monotonic()))

    def describe(self) -> str:
        """Why the phase was stopped, for the student-facing message."""
        if self.limit is None:
            return ""
        if self.reason == "wall":
            return f"{self.limit * WALL_FACTOR:g} s of wall-clock time"
        return f"{self.limit:g} s of CPU time"
