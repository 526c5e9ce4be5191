"""The trusted side of a sandboxed run: launch, watch, time out, kill, restart, collect.

:func:`run_items` runs a list of items (``case:NAME``, ``public:FILE:I``,
``milestone:ID@SEED``) in a child started by :mod:`autograder.harness.child`. It enforces a
deadline for the import and one per item, in CPU seconds of the child's process tree with a
wall-clock backstop (:mod:`autograder.harness.clock`), and a wall-clock one for the whole
run. When the child dies or an
item times out, the whole process tree is killed and a fresh child resumes at the next item,
so one ``os._exit`` or infinite loop costs only the item that caused it. The parent never
imports the package under test; it only reads framed JSON lines from a pipe and decodes them
with :mod:`autograder.harness.wire`. A timed item commits its value, then the parent's plan
(``RunSpec.timing``) times its work from outside, run by run, with a trusted twin for the
baseline (:mod:`autograder.harness.timing`); the item's value is then an
:class:`autograder.suite.TimedResult`.
"""

from __future__ import annotations

import builtins
import json
import math
import os
import re
import secrets
import selectors
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from autograder.harness import isolation, lifeline, timing, wire
from autograder.harness.clock import Deadline
from autograder.harness.home import HARNESS_ROOT
from autograder.harness.timing import Planner, TwinJob
from autograder.harness.zygote import Zygote, ZygoteChild
from autograder.suite import Measured, TimedResult

Status = Literal["result", "error", "timeout", "crashed", "not_run", "fatal", "protocol",
                 "skipped"]

CHILD = Path(__file__).with_name("child.py")
_DEBUG = bool(os.environ.get("TT_GRADER_DEBUG"))
MAX_MESSAGE_BYTES = 32 * 1024 * 1024
MAX_CHANNEL_BYTES = 128 * 1024 * 1024


class SandboxUnavailable(RuntimeError):
    """Student code cannot be run safely on this machine (it would run as root)."""


@dataclass
class Outcome:
    """What became of one item. Only ``status == "result"`` carries a value: the decoded
    data, or what ``RunSpec.on_result`` made of it (the received data itself is dropped)."""

    item: str
    status: Status
    value: Any = None
    message: str = ""
    where: str = ""
    out: str = ""
    secs: float = 0.0
    #: CPU seconds the child's process tree used on this item, measured here (a timing fact:
    #: never part of a verdict); None when the item never started
    cpu_s: float | None = None
    #: training steps the child reported done (milestone items, ``progress`` messages)
    steps: int | None = None
    #: for a timeout, which limit stopped it: ``cpu`` (the item's CPU seconds), ``blocked``
    #: (the wall-clock backstop for code that does not compute) or ``run`` (the whole run's)
    stopped_by: str = ""
    #: the lines of the module under test the item executed (``RunSpec.trace`` only)
    lines: frozenset[int] | None = None


@dataclass
class RunSpec:
    """Everything a sandboxed (or trusted) run needs; paths are absolute."""

    package_parent: Path
    slug: str
    suite_file: Path
    items: list[str]
    scratch: Path
    item_timeout_s: dict[str, float]
    import_timeout_s: float
    run_timeout_s: float
    memory_limit_mb: int
    max_output_kb: int
    student_file: Path | None = None
    public_tests: list[dict[str, str]] = field(default_factory=list)
    milestones: list[dict[str, str]] = field(default_factory=list)
    sandbox: bool = True
    hide: list[Path] = field(default_factory=list)
    package: str = "tinytorch"
    seeds: dict[str, int] = field(default_factory=dict)
    #: Trusted reference runs only: a case with a ``shortcut`` runs it instead of its work
    #: (:func:`autograder.suite.run_case`); its value is then already what the case keeps.
    shortcuts: bool = False
    student_files: list[Path] = field(default_factory=list)
    #: ``{"recipes": module name, "ids": [...], "inputs": {item: wire data}, "work": {id: {...}}}``
    milestone_job: dict[str, Any] = field(default_factory=dict)
    #: Called in the parent with (item, decoded value) as each result arrives; what it
    #: returns is kept instead of the value (compare and drop: memory stays bounded). An
    #: exception makes that item the submission's failure ("protocol"), never the grader's.
    on_result: Callable[[str, Any], Any] | None = None
    #: Called in the parent with each outcome as it is recorded; True ends the run there:
    #: the child is killed and the items not started get status ``skipped``. Mutation
    #: testing stops at a mutant's first failure (one is a kill).
    stop_after: Callable[[Outcome], bool] | None = None
    #: Called in the parent with each outcome as it is recorded; returns the items that need
    #: not run any more, each with what it says (a milestone's seeds once its k-of-n verdict
    #: is decided). Those not started are never run: when the next item is one, the child is
    #: killed and a fresh one goes on after them. They get status ``skipped``.
    moot: Callable[[Outcome], dict[str, str]] | None = None
    #: A fork server (:class:`autograder.harness.zygote.Zygote`) to start the children
    #: from instead of a fresh interpreter each: trusted code only (mutants of the
    #: reference), never with a student file.
    zygote: Zygote | None = None
    #: Stand-ins for the child: ``{"units": {unit: payload}, "items": {item: [unit, ...]}}``
    #: (:mod:`autograder.standins`); the reference's code of those units then runs in it.
    standins: dict[str, Any] | None = None
    #: The child may hold reference code (a stage with stand-ins): nothing it chooses to say
    #: reaches the report but facts from a fixed vocabulary (exception types, line numbers
    #: of the student's own files, re-read here) and the data the parent compares. Its
    #: import output, integrity facts and printed output are dropped.
    sealed: bool = False
    #: ``(item, committed value) -> plan or None``: how the parent times a timed item's work
    #: (:mod:`autograder.harness.timing`); None times nothing (the item's value is then
    #: ``TimedResult(value)``: reference and mutation runs).
    timing: Planner | None = None
    #: The twin's package and code, for plans that time a baseline; None: no twin.
    twin: TwinJob | None = None
    #: Trusted mutation runs only: record which lines of the module under test the import
    #: (``RunReport.import_lines``) and each item (``Outcome.lines``) execute.
    trace: bool = False


@dataclass
class RunReport:
    """The whole run as the parent saw it."""

    outcomes: dict[str, Outcome]
    fatal: str | None = None
    fatal_where: str = ""
    integrity: list[str] = field(default_factory=list)
    blocked_imports: list[str] = field(default_factory=list)
    raw_output: str = ""
    import_output: str = ""
    isolation: list[str] = field(default_factory=list)
    sandbox_facts: list[str] = field(default_factory=list)
    exposed: list[str] = field(default_factory=list)
    launches: int = 0
    stopped_at: str = ""  # the item whose outcome ended the run early (RunSpec.stop_after)
    #: item -> why it need not run (``RunSpec.moot``); run or not, the caller leaves it out
    moot: dict[str, str] = field(default_factory=dict)
    protocol_errors: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0
    child_numpy: str | None = None
    #: item -> the last count of training steps the child reported for it (``progress``)
    progress: dict[str, int] = field(default_factory=dict)
    #: the lines of the module under test the package import executed, over every launch
    #: (``RunSpec.trace`` only)
    import_lines: set[int] = field(default_factory=set)


class _Capped:
    def __init__(self, cap: int) -> None:
        self.buf = bytearray()
        self.cap = cap
        self.dropped = 0

    def add(self, data: bytes) -> None:
        room = self.cap - len(self.buf)
        if room > 0:
            self.buf += data[:room]
        self.dropped += max(0, len(data) - max(room, 0))

    def text(self) -> str:
        s = self.buf.decode("utf-8", errors="replace")
        return s + (f"\n[... {self.dropped} more bytes dropped ...]" if self.dropped else "")


def _child_env(home: Path) -> dict[str, str]:
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "TMPDIR": str(home),
        "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMEXPR_NUM_THREADS": "1",
        "PYTHONHASHSEED": "0", "MPLBACKEND": "Agg",
    }


def start_zygote(*, suite_file: Path, public_tests: list[dict[str, str]] | None = None,
                 milestone_job: dict[str, Any] | None = None) -> Zygote:
    """A fork server for runs of ``suite_file`` (their ``RunSpec.zygote``): it loads what
    :func:`_job` gives every child of such a run to load before its sandbox closes."""
    warm = {"harness_root": str(HARNESS_ROOT), "suite_file": str(suite_file),
            "milestones": milestone_job or {}, "public_tests": public_tests or []}
    return Zygote(warm, env=_child_env(Path("/")))


def _prepare_box(spec: RunSpec, uid: int | None) -> Path:
    """Scratch layout. Trusted runs keep the scratch 0700 (a reference run's package must not
    be readable by anyone else); a sandboxed run opens it to its own uid only (group = the
    run's gid, 0710) and gives that uid a private 0700 working dir."""
    work = spec.scratch / "work"
    work.mkdir(exist_ok=True)
    if uid is None:
        os.chmod(spec.scratch, 0o700)
        return work
    os.chown(spec.scratch, 0, uid)
    os.chmod(spec.scratch, 0o710)
    os.chown(work, uid, uid)
    os.chmod(work, 0o700)
    # The package stays root-owned and read-only to the sandbox.
    for p in [spec.package_parent, *spec.package_parent.rglob("*")]:
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    return work


def _exposed(spec: RunSpec) -> list[str]:
    """Paths the sandbox should not see but could, in the fallback (no minimal root):
    recorded in extra_data so staff know which file permissions they rely on."""
    out = []
    for p in spec.hide:
        if os.path.exists(p) and isolation._first_blocked(Path(p), 0o004) is None:
            out.append(str(p))
    return out


def run_items(spec: RunSpec) -> RunReport:
    """Run ``spec.items`` in a child (restarting after crashes and timeouts) and collect.

    Raises:
        SandboxUnavailable: a sandboxed run was asked for on a machine where student code
            would run as root; nothing was started.
    """
    if spec.zygote is not None and (spec.student_file is not None or spec.student_files):
        raise ValueError("a fork server starts trusted code only, never a student's")
    t_start = time.monotonic()
    plan = isolation.plan() if spec.sandbox else isolation.Plan(False, False, os.geteuid() == 0)
    if spec.sandbox and plan.refuse:
        raise SandboxUnavailable(plan.refuse)
    uid = isolation.new_run_uid() if (spec.sandbox and plan.drop_uid) else None
    if spec.sandbox and not plan.namespaces:
        isolation.adopt_orphans()
    work = _prepare_box(spec, uid)
    report = RunReport(outcomes={}, isolation=plan.methods() if spec.sandbox else ["trusted"])
    if spec.sandbox and not plan.namespaces:
        report.exposed = _exposed(spec)
    raw = _Capped(spec.max_output_kb * 1024)
    deadline = t_start + spec.run_timeout_s
    start = 0
    twins = (timing.TwinHost(spec.twin, spec.scratch, _child_env(spec.scratch))
             if spec.twin is not None and spec.timing is not None else None)
    try:
        while start < len(spec.items):
            if time.monotonic() >= deadline or isolation.ABORT.is_set():
                break
            before = len(report.outcomes)
            nxt = _launch_once(spec, plan, uid, work, start, deadline, report, raw, twins)
            report.launches += 1
            if nxt == _FALLBACK:
                # the minimal root could not be built here: fall back for good, same items
                plan = isolation.downgrade(report.sandbox_facts[-1] if report.sandbox_facts
                                           else "unknown")
                if plan.refuse:
                    raise SandboxUnavailable(plan.refuse)
                report.isolation = plan.methods()
                if uid is None and plan.drop_uid:
                    uid = isolation.new_run_uid()
                    work = _prepare_box(spec, uid)
                isolation.adopt_orphans()
                report.exposed = _exposed(spec)
                continue
            if report.fatal is not None or report.stopped_at:
                break
            if nxt is None:
                break
            if len(report.outcomes) == before and nxt <= start:
                # No progress: charge the item we were on and move on.
                item = spec.items[start]
                if item not in report.outcomes:
                    report.outcomes[item] = Outcome(item, "crashed", message=(
                        "the grading process ended before this test could start"))
                    if _recorded(spec, report, item):
                        break
                nxt = start + 1
            start = _needed_from(spec, report, nxt)
    finally:
        if twins is not None:
            twins.close()
        if uid is not None:
            isolation.kill_uid(uid)
            if not plan.namespaces:
                isolation.sweep_uid_files(uid)
        shutil.rmtree(work, ignore_errors=True)
    for item in spec.items:
        if item not in report.outcomes:
            if report.fatal is not None:
                report.outcomes[item] = Outcome(item, "fatal", message=report.fatal,
                                                where=report.fatal_where)
            elif report.stopped_at:
                report.outcomes[item] = Outcome(item, "skipped", message=(
                    f"not run: the run stopped at {report.stopped_at}"))
            elif item in report.moot:
                report.outcomes[item] = Outcome(item, "skipped", message=report.moot[item])
            else:
                report.outcomes[item] = Outcome(item, "not_run", message=(
                    f"not run: the whole submission used up its {spec.run_timeout_s:g} s "
                    "time limit"))
    report.raw_output = raw.text()
    report.elapsed_s = time.monotonic() - t_start
    return report


_FALLBACK = -1


def _needed_from(spec: RunSpec, report: RunReport, index: int) -> int:
    """The first item at or after ``index`` that is not moot (``len(items)``: none is)."""
    while index < len(spec.items) and spec.items[index] in report.moot:
        index += 1
    return index


def _recorded(spec: RunSpec, report: RunReport, item: str) -> bool:
    """``item``'s outcome was just recorded: True when it ends the run
    (``RunSpec.stop_after``), else record what it made moot (``RunSpec.moot``). If that
    callback fails, nothing is moot: every item runs (the caller's scoring reports the fault)."""
    outcome = report.outcomes[item]
    if spec.stop_after is not None and spec.stop_after(outcome):
        report.stopped_at = item
        return True
    if spec.moot is not None:
        try:
            report.moot.update(spec.moot(outcome))
        except Exception:  # noqa: BLE001 - skipping is only a saving: run everything instead
            pass
    return False


def _job(spec: RunSpec, plan: isolation.Plan, uid: int | None, work: Path, start: int,
         result_fd: int, nonce: str, deadline: float, work_fd: int) -> dict[str, Any]:
    sandbox: dict[str, Any] = {}
    if spec.sandbox:
        remaining = max(1, int(deadline - time.monotonic()) + 5)
        # With a minimal root the writable tmpfs (cwd, /tmp, /var/tmp, /dev/shm) lives in
        # memory: it counts against the memory limit, so the address space gets the rest.
        memory = spec.memory_limit_mb - (isolation.SCRATCH_MB if plan.namespaces else 0)
        sandbox = {
            "rlimits": {"memory_mb": max(memory, 128), "cpu_s": remaining,
                        "fsize_mb": 64, "nproc": 64 if uid is not None else None},
            "uid": uid,
            "seccomp": True,
        }
        if plan.namespaces:
            new_root = spec.scratch / "root"
            new_root.mkdir(exist_ok=True)
            os.chmod(new_root, 0o700)
            sandbox["root"] = isolation.root_layout(spec.package_parent, new_root)
    return {
        "nonce": nonce, "result_fd": result_fd, "work_fd": work_fd,
        "harness_root": str(HARNESS_ROOT),
        "suite_file": str(spec.suite_file), "items": spec.items, "start": start,
        "seeds": spec.seeds, "shortcuts": bool(spec.shortcuts and not spec.sandbox),
        "package_parent": str(spec.package_parent), "package": spec.package, "slug": spec.slug,
        "student_file": str(spec.student_file) if spec.student_file else "",
        "student_files": [str(p) for p in spec.student_files],
        "check_integrity": spec.student_file is not None,
        "public_tests": spec.public_tests, "milestones": spec.milestone_job,
        "max_output_chars": spec.max_output_kb * 1024, "cwd": str(work),
        "sandbox": sandbox, "block_imports": spec.sandbox,
        "standins": spec.standins or {}, "trace": spec.trace,
    }


class _Timer:
    """The submission's side of timed items in one launch: the work pipe's pending request,
    the committed values, and the plan's session (:class:`timing.Session`)."""

    def __init__(self, spec: RunSpec, twins: timing.TwinHost | None, fd: int) -> None:
        self.spec, self.twins, self.fd = spec, twins, fd
        self.out = bytearray()
        self.committed: dict[str, Any] = {}
        self.session: timing.Session | None = None
        self.meter: timing.Meter | None = None
        self.measuring = False
        self.problem = ""  # a planner that could not start: course-side

    def commit(self, item: str, value: Any, pid: int) -> None:
        """The item committed ``value``: start its plan (or end at once without one)."""
        self.committed[item] = value
        plan: Any = None
        problem = ""
        if self.spec.timing is not None:
            try:
                plan = self.spec.timing(item, value)
            except Exception as exc:  # noqa: BLE001 - a planner bug is the course's problem
                problem = f"the timing plan could not start: {type(exc).__name__}: {exc}"[:300]
        if plan is None:
            self.session = None
            self.meter = None
            self._end(problem)
            return
        self.meter = timing.Meter(pid)
        self.meter.hold()
        self.session = timing.Session(item, plan, self.twins, self.meter)
        self._next(self.session.advance(None))

    def reply(self, kind: str, msg: dict[str, Any]) -> None:
        """A ``work_done`` / ``work_error`` for the run being measured."""
        assert self.session is not None and self.meter is not None
        self.measuring = False
        cpu, why = self.meter.end()
        if kind == "work_error":
            m = Measured(cpu, None, error=_text(msg.get("error"), 2000) or "raised")
        else:
            try:
                m = Measured(cpu, wire.decode(msg.get("data")))
            except Exception as exc:  # noqa: BLE001 - unreadable output: the run's failure
                m = Measured(cpu, None, error=f"its output could not be read ({_why(exc)})")
            finally:
                msg.pop("data", None)
        if why:
            m = Measured(math.nan, m.output, m.error, implausible=why)
        self._next(self.session.advance(m))

    def _next(self, run: Any) -> None:
        if run is None:
            self._end("")
            return
        assert self.meter is not None
        try:
            line = timing.run_request(run)
        except wire.WireError as exc:  # a plan that asks for something not plain data
            assert self.session is not None
            self.session.plan.close()
            self.session.done, self.session.problem = True, f"the plan's input: {exc}"
            self._end("")
            return
        self.meter.begin()  # the window opens before the request is written
        self.measuring = True
        self.out += line

    def _end(self, problem: str) -> None:
        if self.meter is not None:
            self.meter.release()
        self.problem = problem
        self.out += timing.request_line("end")

    def result(self, item: str) -> TimedResult | str:
        """The item's value once its ``result`` arrived, or why it is a protocol failure."""
        if item not in self.committed:
            return ""
        value = self.committed.pop(item)
        s, self.session = self.session, None
        if s is not None and not s.done:
            return "the result arrived before the timing was over (tampering?)"
        problem, self.problem = self.problem, ""
        return TimedResult(value, s.summary if s else None, s.problem if s else problem)


def _launch_once(spec: RunSpec, plan: isolation.Plan, uid: int | None, work: Path,
                 start: int, deadline: float, report: RunReport, raw: _Capped,
                 twins: timing.TwinHost | None = None) -> int | None:
    """One child process from item ``start``; returns the index to resume at, None when the
    run is over, or ``_FALLBACK`` when the child could not build its minimal root."""
    launch = _spawn(spec, plan, uid, work, start, deadline, report, raw, twins)
    try:
        return launch.decided if _watch(launch) else _stopped_talking(launch)
    finally:
        _reap(launch)


@dataclass
class _Launch:
    """One child process of a run: its pipes and clock, and what it has said so far."""

    spec: RunSpec
    report: RunReport
    raw: _Capped
    start: int
    deadline: float
    uid: int | None
    nonce: str
    proc: subprocess.Popen[bytes] | ZygoteChild
    rfd: int  # the result channel's read end
    work_w: int  # the work pipe's write end (timed work's requests)
    sel: selectors.BaseSelector
    timer: _Timer
    clock: Deadline  # CPU seconds per phase, wall-clock backstop
    index: dict[str, int]
    resume: int | None  # where a next child goes on: after the last item that started
    writing: bool = False  # the work pipe is registered for writing
    pending: bytearray = field(default_factory=bytearray)  # the result channel's partial line
    total: int = 0  # bytes read from the result channel
    seq: int = 0
    ready: bool = False  # the package was imported
    current: str | None = None  # the item that started and has no outcome yet
    sandboxed: bool = False  # the child reported its sandbox closed (before any student code)
    streams: int = 2  # raw output + result channel; the channel's EOF ends the launch
    reason: str = ""  # why the child stopped talking: deadline, eof, flood
    decided: int | None = None  # where the run goes on, once a message decided it

    def end(self, resume: int | None) -> bool:
        """A message decided where the run goes on: ``resume`` (``_watch`` stops)."""
        self.decided = resume
        return True


def _spawn(spec: RunSpec, plan: isolation.Plan, uid: int | None, work: Path, start: int,
           deadline: float, report: RunReport, raw: _Capped,
           twins: timing.TwinHost | None) -> _Launch:
    """Start the child (from the fork server, or a fresh interpreter with the job on its
    stdin) with its result and work pipes, and its import phase's clock running."""
    nonce = secrets.token_hex(16)
    rfd, wfd = os.pipe()
    work_r, work_w = os.pipe()
    launch_plan = plan if spec.sandbox else isolation.Plan(False, False, False)
    cmd = [*lifeline.launch_prefix(), *isolation.launch_prefix(launch_plan), sys.executable,
           "-I", "-B", str(CHILD)]
    job = _job(spec, plan, uid, work, start, wfd, nonce, deadline, work_r)
    proc: subprocess.Popen[bytes] | ZygoteChild
    try:
        if spec.zygote is not None:
            proc = spec.zygote.launch(job, env=_child_env(work), cwd=str(work),
                                      namespaces=launch_plan.namespaces)
        else:
            proc = isolation.spawn_tracked(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                           stderr=subprocess.STDOUT, pass_fds=(wfd, work_r),
                                           cwd=str(work), env=_child_env(work),
                                           start_new_session=True)
    except BaseException:
        os.close(work_w)
        raise
    finally:
        os.close(wfd)
        os.close(work_r)
    assert proc.stdout is not None
    if proc.stdin is not None:
        try:
            proc.stdin.write(json.dumps(job).encode())
            proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass
    sel = selectors.DefaultSelector()
    os.set_blocking(rfd, False)
    os.set_blocking(proc.stdout.fileno(), False)
    sel.register(rfd, selectors.EVENT_READ, "result")
    sel.register(proc.stdout.fileno(), selectors.EVENT_READ, "raw")
    os.set_blocking(work_w, False)
    timer = _Timer(spec, twins, work_w)
    clock = Deadline(proc.pid, deadline)
    clock.start(spec.import_timeout_s, from_launch=True)
    return _Launch(spec=spec, report=report, raw=raw, start=start, deadline=deadline, uid=uid,
                   nonce=nonce, proc=proc, rfd=rfd, work_w=work_w, sel=sel, timer=timer,
                   clock=clock, index={name: i for i, name in enumerate(spec.items)},
                   resume=start)


def _watch(launch: _Launch) -> bool:
    """Serve the child until it stops talking (False: it died, timed out or flooded the
    channel) or a message decides where the run goes on (True: ``launch.decided``)."""
    while launch.streams > 0:
        if isolation.ABORT.is_set():
            return launch.end(None)  # interrupted: the caller discards this run
        if launch.clock.expired():
            launch.reason = "deadline"
            return False
        if launch.timer.out and not launch.writing:
            launch.sel.register(launch.work_w, selectors.EVENT_WRITE, "work")
            launch.writing = True
        for key, _ in launch.sel.select(timeout=launch.clock.wait_s()):
            if key.data == "work":
                _feed_work(launch)
            elif _collect(launch, key.fd, key.data):
                return True
            if launch.streams == 0:
                break
    return False


def _feed_work(launch: _Launch) -> None:
    """Write what the timer asks of the child on the work pipe, as far as it takes it."""
    timer = launch.timer
    try:
        del timer.out[:os.write(launch.work_w, timer.out)]
    except BlockingIOError:
        pass
    except OSError:  # the child closed its end: it will be charged anyway
        timer.out.clear()
    if not timer.out:
        launch.sel.unregister(launch.work_w)
        launch.writing = False


def _collect(launch: _Launch, fd: int, stream: str) -> bool:
    """Read what the child wrote on ``stream`` (``raw`` output, or the ``result`` channel:
    framed lines, each handled in turn); True once a message decided where the run goes on."""
    try:
        chunk = os.read(fd, 65536)
    except BlockingIOError:
        return False
    if not chunk:
        launch.sel.unregister(fd)
        launch.streams -= 1
        if stream == "result":
            launch.reason = "eof"
            launch.streams = 0
        return False
    if stream == "raw":
        launch.raw.add(chunk)
        return False
    launch.total += len(chunk)
    pending = launch.pending
    scan = len(pending)
    pending += chunk
    if launch.total > MAX_CHANNEL_BYTES or (pending.find(b"\n", scan) < 0
                                            and len(pending) > MAX_MESSAGE_BYTES):
        launch.report.protocol_errors.append("result channel flooded")
        launch.reason = "flood"
        launch.streams = 0
        return False
    while True:
        cut = pending.find(b"\n", scan)
        if cut < 0:
            return False
        line = bytes(pending[:cut])
        del pending[:cut + 1]
        scan = 0
        msg = _parse(line, launch.nonce, launch.seq, launch.report)
        if _DEBUG:
            print(f"[harness {time.monotonic():.3f}] {line[:120]!r}", file=sys.stderr)
        del line
        if msg is not None and _on_message(launch, msg):
            return True


def _on_message(launch: _Launch, msg: dict[str, Any]) -> bool:
    """One valid message of the child; True when it decided where the run goes on."""
    spec, report = launch.spec, launch.report
    launch.seq = msg["seq"]
    kind = msg["type"]
    if not launch.sandboxed:
        if kind == "sandbox_failed":
            report.sandbox_facts.append(_text(msg.get("error"), 300) or "failed")
            return launch.end(_FALLBACK)
        if kind == "sandbox":
            launch.sandboxed = True
            if not report.sandbox_facts:
                report.sandbox_facts = [_text(f, 60) for f in _list(msg.get("facts"))][:12]
            return False
        if spec.sandbox:
            report.protocol_errors.append("message before the sandbox was closed")
            return False
    if kind in ("fatal", "ready", "done"):
        return _on_import(launch, kind, msg)
    item = msg.get("item")
    if not isinstance(item, str) or item not in launch.index:
        report.protocol_errors.append(f"unknown item {str(item)[:80]!r}")
        return False
    if not spec.sealed:
        _note_blocked(msg, report)
    if kind == "start":
        if not launch.ready:
            report.protocol_errors.append("item started before import finished")
        launch.current = item
        launch.resume = launch.index[item] + 1
        launch.clock.start(spec.item_timeout_s.get(item, 10.0))
        return False
    if kind == "progress":
        done = msg.get("done")
        if item == launch.current and type(done) is int and done >= 0:
            report.progress[item] = done
        return False
    if kind in ("commit", "work_done", "work_error"):
        return _on_timed_work(launch, kind, item, msg)
    if kind in ("result", "error"):
        return _on_result(launch, kind, item, msg)
    report.protocol_errors.append(f"unknown message type {str(kind)[:40]!r}")
    return False


def _on_import(launch: _Launch, kind: str, msg: dict[str, Any]) -> bool:
    """``fatal`` (the package could not be imported), ``ready`` (it was) or ``done``."""
    spec, report = launch.spec, launch.report
    if kind == "done":
        return launch.end(None)
    if kind == "fatal":
        if spec.sealed:
            report.fatal = SEALED_FATAL
            return launch.end(None)
        report.fatal = _text(msg.get("error"), 2000) or "import failed"
        report.fatal_where = _text(msg.get("where"), 4000)
        report.import_output = _text(msg.get("out"), spec.max_output_kb * 1024)
        return launch.end(None)
    launch.ready = True
    if spec.trace:
        report.import_lines |= _lines(msg)
    if not spec.sealed:
        if launch.start == 0 or not report.integrity:
            report.integrity = [_text(p, 300) for p in _list(msg.get("integrity"))][:20]
        report.import_output = report.import_output or _text(
            msg.get("out"), spec.max_output_kb * 1024)
        report.child_numpy = _text(msg.get("numpy"), 40) or None
    launch.clock.idle()
    return False


def _on_timed_work(launch: _Launch, kind: str, item: str, msg: dict[str, Any]) -> bool:
    """``commit`` (a timed item's value, before anything is timed), ``work_done`` or
    ``work_error`` (a run the parent asked for): handed to the timer, in order or not at all."""
    report, timer = launch.report, launch.timer
    if item != launch.current or item in report.outcomes or (
            kind == "commit" and item in timer.committed) or (
            kind != "commit" and not timer.measuring):
        report.protocol_errors.append(f"{kind} for {item} out of order")
        report.outcomes[item] = Outcome(item, "protocol", message=(
            "this test's timed work reported out of order (tampering?)"))
        return launch.end(launch.resume)
    if kind == "commit":
        try:
            value = wire.decode(msg.get("data"))
        except Exception as exc:  # noqa: BLE001 - the child's failure
            report.outcomes[item] = Outcome(item, "protocol", message=(
                f"the result could not be read ({_why(exc)})"))
            return launch.end(launch.resume)
        finally:
            msg.pop("data", None)
        timer.commit(item, value, launch.proc.pid)
    else:
        timer.reply(kind, msg)
    launch.clock.resync()  # the child was stopped while the parent worked
    return False


def _on_result(launch: _Launch, kind: str, item: str, msg: dict[str, Any]) -> bool:
    """An item's ``result`` or ``error``: its outcome, with the CPU seconds it used."""
    report = launch.report
    if item != launch.current:
        report.protocol_errors.append(f"result for {item} out of order")
        report.outcomes[item] = Outcome(item, "protocol", message=(
            "the result of this test arrived out of order (tampering?)"))
        return False
    if item in report.outcomes:
        report.outcomes[item] = Outcome(item, "protocol", message=(
            "this test reported twice (tampering?)"))
        return False
    cpu = launch.clock.idle()  # before deciding: the parent's time is not the item's
    timed = launch.timer.result(item) if kind == "result" else ""
    if kind == "error":
        launch.timer.committed.pop(item, None)
    if isinstance(timed, str) and timed:
        report.outcomes[item] = Outcome(item, "protocol", message=timed)
    else:
        report.outcomes[item] = _outcome(kind, item, msg, launch.spec,
                                         timed if isinstance(timed, TimedResult) else None)
    report.outcomes[item].cpu_s = cpu
    if launch.spec.trace:
        report.outcomes[item].lines = frozenset(_lines(msg))
    report.outcomes[item].steps = report.progress.get(item)
    launch.current = None
    if _recorded(launch.spec, report, item):
        return launch.end(None)
    after = launch.index[item] + 1
    if after < len(launch.spec.items) and launch.spec.items[after] in report.moot:
        return launch.end(_needed_from(launch.spec, report, after))  # this child goes
    return False


def _stopped_talking(launch: _Launch) -> int | None:
    """The child died, timed out or flooded the channel: charge the phase it was in (the
    import, or the item that started) and say where the run goes on."""
    report, current = launch.report, launch.current
    if _DEBUG:
        print(f"[harness {time.monotonic():.3f}] stop: {launch.reason} current={current} "
              f"poll={launch.proc.poll()}", file=sys.stderr)
    if launch.reason == "deadline":
        return _timed_out(launch)
    if not launch.ready:
        code = _exit_code(launch.proc)
        report.fatal = _ended_message(code, "while your module was being imported")
        return None
    if current is not None and current not in report.outcomes:
        code = _exit_code(launch.proc)
        report.outcomes[current] = Outcome(current, "crashed", message=_ended_message(
            code, "during this test"), steps=report.progress.get(current))
        if _recorded(launch.spec, report, current):
            return None
    return launch.resume


def _timed_out(launch: _Launch) -> int | None:
    """The phase's CPU seconds, its wall-clock backstop or the whole run's time ran out."""
    report, current, clock = launch.report, launch.current, launch.clock
    if not launch.ready:
        if time.monotonic() >= launch.deadline:
            return None
        report.fatal = (f"importing your module took longer than {clock.describe()} "
                        "(an infinite loop or heavy work at import time?)")
        return None
    if current is not None and current not in report.outcomes:
        run_over = time.monotonic() >= launch.deadline - 1e-3
        report.outcomes[current] = Outcome(current, "timeout", message=(
            f"stopped after {clock.describe()}" if not run_over else
            f"stopped: the whole submission used up its {launch.spec.run_timeout_s:g} s"
            " time limit") + " (an infinite loop, or far too slow?)",
            cpu_s=clock.used(), steps=report.progress.get(current),
            stopped_by="run" if run_over else clock.reason)
        if _recorded(launch.spec, report, current):
            return None
    return None if time.monotonic() >= launch.deadline else launch.resume


def _reap(launch: _Launch) -> None:
    """Stop watching, close the pipes, kill the child's process tree and keep the rest of
    its raw output."""
    launch.sel.close()
    os.close(launch.rfd)
    os.close(launch.work_w)
    isolation.kill_tree(launch.proc, uid=launch.uid)
    stdout = launch.proc.stdout
    assert stdout is not None
    try:
        rest = stdout.read() or b""
        launch.raw.add(rest)
    except (OSError, ValueError):
        pass
    stdout.close()


def _exit_code(proc: subprocess.Popen[bytes] | ZygoteChild) -> int | None:
    try:
        return proc.wait(timeout=2)
    except subprocess.TimeoutExpired:
        return None


def _ended_message(code: int | None, when: str) -> str:
    if code is not None and code < 0:
        sig = -code
        what = {9: "was killed (SIGKILL: often the memory limit)", 11: "crashed (SIGSEGV)",
                6: "aborted (SIGABRT)", 24: "ran out of CPU time"}.get(sig, f"got signal {sig}")
        return f"the grading process {what} {when}"
    if code == 137:
        return f"the grading process was killed (often the memory limit) {when}"
    return (f"the grading process ended {when} (exit code {code}); does your code call "
            "os._exit/sys.exit, or use too much memory?")


def _parse(line: bytes, nonce: str, seq: int, report: RunReport) -> dict[str, Any] | None:
    try:
        msg = json.loads(line.decode("utf-8"), parse_constant=_reject)
    except Exception:  # noqa: BLE001 - anything unreadable is the child's failure
        report.protocol_errors.append("unreadable message on the result channel")
        return None
    if not isinstance(msg, dict) or msg.get("n") != nonce:
        report.protocol_errors.append("message without the run's nonce")
        return None
    s = msg.get("seq")
    if type(s) is not int or s <= seq or not isinstance(msg.get("type"), str):
        report.protocol_errors.append("message out of sequence")
        return None
    return msg


def _lines(msg: dict[str, Any]) -> set[int]:
    """The line numbers a traced child sent (``lines``); anything else is dropped."""
    return {n for n in _list(msg.get("lines")) if type(n) is int}


def _reject(name: str) -> Any:
    raise ValueError(name)


def _outcome(kind: str, item: str, msg: dict[str, Any], spec: RunSpec,
             timed: TimedResult | None = None) -> Outcome:
    """The outcome of a ``result`` or ``error`` message; a timed item's value is ``timed``
    (its committed value and what the parent measured), never data from this message."""
    out = "" if spec.sealed else _text(msg.get("out"), spec.max_output_kb * 1024)
    secs = msg.get("secs")
    secs_f = float(secs) if (type(secs) is int or type(secs) is float) and math.isfinite(
        secs) else 0.0
    if kind == "error":
        if spec.sealed:
            return Outcome(item, "error", message=_sealed_error(msg.get("error")),
                           where=_sealed_where(msg.get("where"), spec), secs=secs_f)
        return Outcome(item, "error", message=_text(msg.get("error"), 2000),
                       where=_text(msg.get("where"), 4000), out=out, secs=secs_f)
    value: Any = timed
    try:
        if timed is None:
            value = wire.decode(msg.get("data"))
    except Exception as exc:  # noqa: BLE001 - whatever the child sent, it is its failure
        why = type(exc).__name__ if spec.sealed else _why(exc)
        return Outcome(item, "protocol", message=f"the result could not be read ({why})",
                       out=out, secs=secs_f)
    finally:
        msg.pop("data", None)
    if spec.on_result is not None:
        try:
            value = spec.on_result(item, value)
        except Exception as exc:  # noqa: BLE001 - odd data must not crash grading
            return Outcome(item, "protocol", message=(
                f"the result could not be checked ({_why(exc)})"), out=out, secs=secs_f)
    return Outcome(item, "result", value=value, out=out, secs=secs_f)


#: What a sealed stage's import failure says (the first stage reported the real one).
SEALED_FATAL = ("your module could not be imported again for the tests that run with the "
                "course's stand-ins (it was imported for the others)")
_BUILTIN_ERRORS = frozenset(n for n, v in vars(builtins).items()
                            if isinstance(v, type) and issubclass(v, BaseException))
_WHERE = re.compile(r"^  ([^,/]+), line (\d+), in ")


def _sealed_error(error: Any) -> str:
    """A sealed child's exception, reduced to a built-in exception's name: its message (and
    the name of an exception class of its own) could carry anything the child read."""
    text = error if isinstance(error, str) else ""
    if text.startswith("called sys.exit("):
        return "called sys.exit(); graded code must return, not exit"
    name = text.partition(":")[0].strip()
    stub = re.match(r"NotImplementedError: module (\d\d): implement", text)
    if stub:  # an unfinished stub: only the module's number is kept
        return f"NotImplementedError: module {stub.group(1)}: implement"
    if name in _BUILTIN_ERRORS:
        return f"{name} (its message is not shown for tests that run with the course's code)"
    return ("an exception of a class of its own (its name and message are not shown for tests "
            "that run with the course's code)")


def _sealed_where(where: Any, spec: RunSpec) -> str:
    """A sealed child's traceback lines, rebuilt here: the file names and line numbers it
    gives, with each line's text read from the parent's copy of that (student) file."""
    if not isinstance(where, str):
        return ""
    files = {p.name: p for p in [spec.student_file, *spec.student_files] if p is not None}
    out = []
    for line in where.splitlines()[:5]:
        m = _WHERE.match(line)
        if not m or m.group(1) not in files:
            continue
        n = int(m.group(2))
        try:
            text = files[m.group(1)].read_text(encoding="utf-8").splitlines()[n - 1].strip()
        except (OSError, IndexError, UnicodeDecodeError):
            text = ""
        out.append(f"  {m.group(1)}, line {n}" + (f": {text[:200]}" if text else ""))
    return "\n".join(out)


def _why(exc: BaseException) -> str:
    text = str(exc)[:160] if isinstance(exc, wire.WireError) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _note_blocked(msg: dict[str, Any], report: RunReport) -> None:
    for name in _list(msg.get("blocked")):
        t = _text(name, 100)
        if t and t not in report.blocked_imports:
            report.blocked_imports.append(t)


def _text(x: Any, cap: int) -> str:
    if not isinstance(x, str):
        return ""
    return x if len(x) <= cap else x[:cap] + "\n[... truncated ...]"


def _list(x: Any) -> list[Any]:
    return x if isinstance(x, list) else []
