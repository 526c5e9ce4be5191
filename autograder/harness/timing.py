"""The parent times a named piece of work in a child: one mechanism for every timed grade.

Nothing a grade or a leaderboard value depends on is timed inside the student's process: a
submission can patch ``time.thread_time``, wrap its own benchmark harness or slow down whatever
else runs beside it. Instead a timed item (a case returning :class:`autograder.suite.Timed`, a
milestone with timed work) goes like this:

1. **Commit.** The child runs the item and sends its committed value (the model's arrays...)
   before anything is timed; the parent decodes it and freezes the child's process tree
   (``SIGSTOP``: nothing of the submission runs while the parent is not timing it).
2. **Plan.** A plan in the trusted parent (:class:`autograder.suite.Timing`, or a milestone
   provider's ``plan``) chooses fresh inputs, after the commit, from a generator seeded from
   ``secrets`` (nothing can be replayed or precomputed), and asks for runs of named work, in
   the submission's child or in the **twin**: a trusted process started from the same harness
   with the course's reference package and nothing of the submission, which builds the
   baseline's work from data the plan gives it (the reference's own float32 model, say).
3. **Measure.** Every run, on either side, is measured the same way (:class:`Meter`): with the
   process tree frozen, the parent reads the CPU time of every process in it from outside
   (``clock_gettime`` on each process's CPU-time clock, nanoseconds, every thread and every
   exited thread included), thaws it, sends the request, waits for the reply, freezes it again
   (a stopped task's clock is exact: it was switched out) and reads the clocks again. A run
   during which a process of the tree started or ended, or whose clocks went backwards, is
   ``implausible``; so is a submission tree that used CPU while it should have been frozen
   (the twin's runs are timed with the submission stopped, so it cannot slow the baseline down
   by sharing caches with it).
4. **Decide.** The plan checks each output against the parent's own computation (a run that
   did not do the work does not count) and returns a plain-data summary; the case's check,
   publish and leaderboard (or the milestone's evaluation) decide from the committed value and
   that summary only (:class:`autograder.suite.TimedResult`).

Requests travel on a pipe the child inherits (``work_fd``), one JSON line each, in the wire
format; replies come back on the result channel (``work_done`` / ``work_error``). The
supervisor drives the submission's side inside its event loop (deadlines, output caps, kills
as for any item); the twin side is synchronous (trusted, with a generous backstop).
"""

from __future__ import annotations

import json
import math
import os
import secrets
import selectors
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from autograder.harness import clock, isolation, lifeline, wire
from autograder.harness.home import HARNESS_ROOT
from autograder.suite import Baseline, Measured, Run

#: CPU seconds a frozen submission tree may gain while the twin or the parent works: signals in
#: flight and the harness's return into its read. More is a process that dodged the freeze.
FROZEN_SLACK_S = 0.002
#: How long the parent waits for a tree to stop after SIGSTOP before it reads the clocks anyway
#: (then a clock that still moves shows up as CPU used while frozen).
STOP_WAIT_S = 1.0
#: Wall-clock backstop for one request to the twin (trusted code: a hang is a course bug).
TWIN_TIMEOUT_S = 300.0
CHILD = Path(__file__).with_name("child.py")


class TimingError(RuntimeError):
    """The grader could not time something (the twin failed, a request could not be sent):
    course-side, never the submission's failure."""


# ----------------------------------------------------------------------------- clocks
def process_cpu_ns(pid: int) -> int | None:
    """CPU nanoseconds used so far by every thread of process ``pid`` (exited threads
    included), read from outside through its CPU-time clock; None when it is gone.

    ``clock_getcpuclockid(pid)`` is ``((~pid) << 3) | 2`` on Linux (a process clock,
    ``CPUCLOCK_SCHED``); reading another process's clock needs no permission. A thread that is
    running on another CPU at that instant is counted up to its last tick, so the parent reads
    only frozen (or blocked) trees, whose clocks are exact.
    """
    try:
        return time.clock_gettime_ns(((~pid) << 3) | 2)
    except OSError:
        return None


def _identity(pid: int) -> tuple[int, int, int, int, int] | None:
    """``(start time, cminflt, cmajflt, cutime, cstime)`` of a process, None when it is gone:
    who it is, and what its reaped children left it. A child that was started and reaped within
    a run (its work hidden from the tree's clocks) changes the last four: every new process
    takes page faults, which its parent inherits when it reaps it."""
    fields = clock.stat_fields(f"/proc/{pid}/stat")
    if fields is None or len(fields) < 20:
        return None
    # stat fields 22 (starttime), 11 and 13 (cminflt, cmajflt), 16 and 17 (cutime, cstime)
    return int(fields[19]), int(fields[8]), int(fields[10]), int(fields[13]), int(fields[14])


def _state(pid: int) -> str:
    fields = clock.stat_fields(f"/proc/{pid}/stat")
    return fields[0] if fields else "X"


@dataclass(frozen=True)
class Snapshot:
    """The processes of a tree (pid -> identity: start time and what reaped children left it)
    and their summed CPU nanoseconds."""

    members: dict[int, tuple[int, ...]]
    cpu_ns: int
    missing: bool = False  # a member's clock could not be read (it ended meanwhile)


def snapshot(root: int) -> Snapshot:
    """The tree below ``root`` (``root`` included) and its CPU time, read from outside (with
    the CPU time of reaped children, which the processes' own clocks do not hold)."""
    members: dict[int, tuple[int, ...]] = {}
    total, missing = 0, False
    for pid in clock.process_tree(root):
        ident = _identity(pid)
        ns = process_cpu_ns(pid)
        if ident is None or ns is None:
            missing = True
            continue
        members[pid] = ident
        total += ns + int((ident[3] + ident[4]) * 1e9 / clock.TICK)
    return Snapshot(members, total, missing)


def freeze(root: int) -> None:
    """SIGSTOP every process of the tree (until no new one appears), then wait until each is
    stopped (or gone), at most :data:`STOP_WAIT_S`."""
    stopped: set[int] = set()
    for _ in range(50):
        new = [p for p in clock.process_tree(root) if p not in stopped]
        if not new:
            break
        for p in new:
            _signal(p, signal.SIGSTOP)
        stopped.update(new)
    end = time.monotonic() + STOP_WAIT_S
    waiting = set(stopped)
    while waiting and time.monotonic() < end:
        waiting = {p for p in waiting if _state(p) not in ("T", "t", "Z", "X")}
        if waiting:
            time.sleep(0.0002)


def thaw(root: int) -> None:
    """SIGCONT every process of the tree."""
    for p in clock.process_tree(root):
        _signal(p, signal.SIGCONT)


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


class Meter:
    """One process tree's CPU time across runs, read from outside; the tree stays frozen
    between runs. ``begin()`` (frozen: read, thaw) and ``end()`` (freeze, read) bracket one
    run; ``check_idle()`` says whether the tree used CPU since the last ``end()``."""

    def __init__(self, root: int) -> None:
        self.root = root
        self._at: Snapshot | None = None
        self.frozen = False

    def hold(self) -> None:
        """Freeze the tree and take the reading the next run starts from."""
        freeze(self.root)
        self.frozen = True
        self._at = snapshot(self.root)

    def release(self) -> None:
        """Thaw the tree for good (the timing phase is over)."""
        if self.frozen:
            thaw(self.root)
        self.frozen = False
        self._at = None

    def check_idle(self) -> str:
        """"" when the frozen tree used no CPU (within :data:`FROZEN_SLACK_S`) and kept its
        processes since the last reading; else what happened (the reading is renewed)."""
        if self._at is None:
            return ""
        now = snapshot(self.root)
        before, self._at = self._at, now
        return _problem(before, now, frozen=True)

    def begin(self) -> None:
        if not self.frozen or self._at is None:
            self.hold()
        thaw(self.root)
        self.frozen = False

    def end(self) -> tuple[float, str]:
        """``(CPU seconds of the run, "")`` or ``(nan, why it cannot be trusted)``."""
        freeze(self.root)
        self.frozen = True
        now = snapshot(self.root)
        before, self._at = self._at, now
        assert before is not None
        why = _problem(before, now, frozen=False)
        if why:
            return math.nan, why
        return (now.cpu_ns - before.cpu_ns) / 1e9, ""


def _problem(before: Snapshot, now: Snapshot, *, frozen: bool) -> str:
    if before.members != now.members or before.missing or now.missing:
        started = len(set(now.members) - set(before.members))
        ended = len(set(before.members) - set(now.members))
        reaped = sum(1 for p in set(now.members) & set(before.members)
                     if now.members[p][1:] != before.members[p][1:])
        return (f"a process started ({started + reaped}) or ended ({ended + reaped}) during "
                "the timed run: timed work runs in one process")
    delta = now.cpu_ns - before.cpu_ns
    if delta < 0:
        return "the process tree's CPU clock went backwards"
    if frozen and delta > FROZEN_SLACK_S * 1e9:
        return (f"your code used {delta / 1e6:.1f} ms of CPU while the grader had stopped it "
                "(something in it dodged SIGSTOP)")
    return ""


# ----------------------------------------------------------------------------- requests
def request_line(op: str, **fields: Any) -> bytes:
    """One request on a work pipe (JSON, wire-encoded values, newline-terminated)."""
    return (json.dumps({"op": op, **fields}, separators=(",", ":"), allow_nan=False)
            + "\n").encode()


def run_request(run: Run) -> bytes:
    return request_line("run", work=run.work, input=wire.encode(run.input))


# ----------------------------------------------------------------------------- the twin
@dataclass
class TwinJob:
    """What the twin loads: the harness, the suite and the recipes (trusted), and a package
    built from the course's reference only (no file of the submission)."""

    package_parent: Path
    suite_file: Path
    recipes: str = ""
    milestone_ids: list[str] = field(default_factory=list)
    package: str = "tinytorch"


class Twin:
    """The trusted process that runs the baseline's work: the same child harness
    (``child.py --twin``), unsandboxed, with the reference package; timed with a
    :class:`Meter` exactly like the submission's child."""

    def __init__(self, job: TwinJob, env: dict[str, str], cwd: Path) -> None:
        self.job = job
        self.nonce = secrets.token_hex(16)
        self._seq = 0
        self._item = ""
        rfd, self._result_w = os.pipe()
        self._work_r, wfd = os.pipe()
        try:
            # like every child: dies with the grader, even after kill -9 (lifeline)
            self.proc = isolation.spawn_tracked(
                [*lifeline.launch_prefix(), sys.executable, "-I", "-B", str(CHILD), "--twin"],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                pass_fds=(self._result_w, self._work_r), cwd=str(cwd), env=env,
                start_new_session=True)
        finally:
            os.close(self._result_w)
            os.close(self._work_r)
        self._rfd, self._wfd = rfd, wfd
        self._buf = bytearray()
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps({
                "nonce": self.nonce, "result_fd": self._result_w, "work_fd": self._work_r,
                "harness_root": str(HARNESS_ROOT), "suite_file": str(job.suite_file),
                "milestones": {"recipes": job.recipes, "ids": job.milestone_ids}
                if job.recipes else {}, "public_tests": [],
                "package_parent": str(job.package_parent), "package": job.package}).encode())
            self.proc.stdin.close()
            self.meter = Meter(self.proc.pid)
            self._reply("ready", None)
            self.meter.hold()
        except BaseException:
            # a twin that never became ready is reaped here, and forgotten by the lifeline
            # (a process group left watched could be a stranger's number by the time the
            # grader exits)
            self.close()
            raise

    def setup(self, item: str, data: Any) -> None:
        """Build the baseline work of ``item`` (its case's or milestone's builder) from
        ``data``; raises :class:`TimingError` when the twin cannot."""
        self.meter.begin()
        if self._item:  # the previous item's work is done: the twin goes back to setups
            self._send(request_line("end"))
        self._send(request_line("setup", item=item, data=wire.encode(data)))
        try:
            self._reply("built", item)
        finally:
            self.meter.end()
        self._item = item

    def run(self, run: Run) -> Measured:
        """Time ``run`` in the twin (its tree frozen before and after)."""
        self.meter.begin()
        self._send(run_request(run))
        try:
            kind, msg = self._reply(("work_done", "work_error"), self._item)
        finally:
            cpu, why = self.meter.end()
        if kind == "work_error":
            raise TimingError(f"the reference's {run.work} raised "
                              f"{str(msg.get('error'))[:300]}")
        if why:
            raise TimingError(f"the twin's measurement failed: {why}")
        try:
            out = wire.decode(msg.get("data"))
        except wire.WireError as exc:
            raise TimingError(f"the twin's output could not be read ({exc})") from exc
        return Measured(cpu, out)

    def _send(self, line: bytes) -> None:
        try:
            view = memoryview(line)
            while view:
                view = view[os.write(self._wfd, view):]
        except OSError as exc:
            raise TimingError(f"the twin stopped reading ({exc})") from exc

    def _reply(self, kinds: str | tuple[str, ...], item: str | None) -> tuple[str, dict[str, Any]]:
        wanted = (kinds,) if isinstance(kinds, str) else kinds
        end = time.monotonic() + TWIN_TIMEOUT_S
        while True:
            cut = self._buf.find(b"\n")
            if cut >= 0:
                line = bytes(self._buf[:cut])
                del self._buf[:cut + 1]
                msg = json.loads(line)
                if msg.get("n") != self.nonce or msg.get("seq", 0) <= self._seq:
                    raise TimingError("the twin sent a message out of sequence")
                self._seq = msg["seq"]
                kind = msg.get("type")
                if kind == "setup_error" or kind == "fatal":
                    raise TimingError(f"the twin could not build the baseline: "
                                      f"{str(msg.get('error'))[:300]}")
                if kind in wanted:
                    return kind, msg
                continue
            left = end - time.monotonic()
            if left <= 0:
                raise TimingError(f"the twin did not answer within {TWIN_TIMEOUT_S:g} s")
            sel = selectors.DefaultSelector()
            try:
                sel.register(self._rfd, selectors.EVENT_READ)
                if not sel.select(timeout=min(left, 1.0)):
                    if self.proc.poll() is not None:
                        raise TimingError(f"the twin ended (exit code {self.proc.returncode})")
                    continue
            finally:
                sel.close()
            chunk = os.read(self._rfd, 1 << 20)
            if not chunk:
                raise TimingError(f"the twin ended (exit code {self.proc.poll()})")
            self._buf += chunk

    def close(self) -> None:
        for fd in (self._wfd, self._rfd):
            try:
                os.close(fd)
            except OSError:
                pass
        isolation.kill_tree(self.proc, uid=None)


class TwinHost:
    """Starts the twin the first time a plan needs it and keeps it for the rest of a run."""

    def __init__(self, job: TwinJob, scratch: Path, env: dict[str, str]) -> None:
        self.job, self.scratch, self.env = job, scratch, env
        self.twin: Twin | None = None
        self.error = ""

    def get(self) -> Twin:
        if self.error:
            raise TimingError(self.error)
        if self.twin is None:
            cwd = self.scratch / "twin"
            cwd.mkdir(exist_ok=True)
            os.chmod(cwd, 0o700)
            try:
                self.twin = Twin(self.job, self.env, cwd)
            except (TimingError, OSError, ValueError) as exc:
                self.error = f"the baseline process could not start: {exc}"
                raise TimingError(self.error) from exc
        return self.twin

    def close(self) -> None:
        if self.twin is not None:
            self.twin.close()
            self.twin = None
        shutil.rmtree(self.scratch / "twin", ignore_errors=True)


# ----------------------------------------------------------------------------- the plan
PlanGen = Generator["Run | Baseline", "Measured | None", Any]


def plan_rng() -> np.random.Generator:
    """A fresh generator for a plan's inputs: from ``secrets``, so neither the submission nor
    an earlier run of it can know them."""
    return np.random.default_rng(secrets.randbits(128))


class Session:
    """One timed item's plan, driven by the supervisor.

    :meth:`advance` feeds the plan the last submission measurement and runs everything that
    does not need the submission (twin setups and runs, with the submission frozen) until the
    plan asks for a submission run (returned) or finishes (None; ``summary`` or ``problem``
    set). A plan that raises, or a twin that fails, ends the session with a course-side
    ``problem``; the submission's own failures are the plan's to put in its summary.
    """

    def __init__(self, item: str, plan: PlanGen, twins: TwinHost | None,
                 student: Meter) -> None:
        self.item, self.plan, self.twins, self.student = item, plan, twins, student
        self.summary: Any = None
        self.problem = ""
        self.done = False
        self._started = False

    def advance(self, measured: Measured | None = None) -> Run | None:
        try:
            request = self._next(measured)
            while request is not None:
                if isinstance(request, Baseline):
                    self._twin().setup(self.item, request.data)
                    request = self._next(None)
                    continue
                if not isinstance(request, Run) or request.side not in ("submission",
                                                                         "baseline"):
                    raise TimingError(f"the plan asked for {request!r}")
                if request.side == "submission":
                    return request
                out = self._twin().run(request)
                idle = self.student.check_idle()
                if idle:
                    out = Measured(math.nan, out.output, implausible=idle)
                request = self._next(out)
        except TimingError as exc:
            self._finish(problem=str(exc))
        except Exception as exc:  # noqa: BLE001 - a plan bug is the course's problem
            self._finish(problem=f"the timing plan failed: {type(exc).__name__}: {exc}"[:400])
        return None

    def _twin(self) -> Twin:
        if self.twins is None:
            raise TimingError("this run has no baseline process (no reference package)")
        return self.twins.get()

    def _next(self, measured: Measured | None) -> Run | Baseline | None:
        try:
            if not self._started:
                self._started = True
                return next(self.plan)
            return self.plan.send(measured)
        except StopIteration as stop:
            self._finish(summary=stop.value)
            return None

    def _finish(self, *, summary: Any = None, problem: str = "") -> None:
        self.summary, self.problem, self.done = summary, problem, True
        self.plan.close()


#: ``RunSpec.timing``: ``(item, committed value) -> plan generator, or None`` (time nothing).
Planner = Callable[[str, Any], "PlanGen | None"]


def drive_in_process(plan: PlanGen, submission: Any, baseline: Callable[[Any], Any]) -> Any:
    """Run a plan in this process, for TRUSTED packages only (staff tools and tests): the
    same plan, inputs and checks as grading, with both sides' work run here and timed with this
    thread's CPU clock (``submission``: ``{name: work}``; ``baseline(data) -> {name: work}``).
    Every input and output goes through the wire format, as between processes. Returns the
    plan's summary."""
    base_work: Any = None
    try:
        request = next(plan)
        while True:
            if isinstance(request, Baseline):
                base_work = baseline(request.data)
                request = plan.send(None)
                continue
            work = submission if request.side == "submission" else base_work
            x = wire.decode(wire.encode(request.input))
            t0 = time.thread_time_ns()
            try:
                out = work[request.work](x)
                measured = Measured((time.thread_time_ns() - t0) / 1e9,
                                    wire.decode(wire.encode(out)))
            except Exception as exc:  # noqa: BLE001 - reported to the plan, as in grading
                measured = Measured((time.thread_time_ns() - t0) / 1e9, None,
                                    error=f"{type(exc).__name__}: {exc}"[:300])
            request = plan.send(measured)
    except StopIteration as stop:
        return stop.value
