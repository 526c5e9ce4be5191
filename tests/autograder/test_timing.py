"""The parent times a named piece of work in the child (autograder/harness/timing.py).

The stand-in suite ``fixtures/suites/01_timed`` has one timed case: the child commits, then the
parent asks for runs of ``total(range(n))`` on sizes it draws afterwards, in the sandboxed
child and in the trusted twin, and times each from outside. These tests run it through the real
supervisor (sandboxed child, twin, freezing) and check what the parent measured: a submission's
clock, threads and processes cannot change it, and it is the same on an idle and a loaded core.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from autograder.harness import isolation, lifeline, timing
from autograder.harness.decide import Verdict, decider
from autograder.harness.goldens import load_suite
from autograder.harness.package import build_package
from autograder.harness.supervisor import RunSpec, run_items
from autograder.suite import Measured, TimedResult
from tests.autograder.conftest import CORRECT, FIXTURES, REF, STUBS

TIMED = FIXTURES / "suites" / "01_timed" / "suite.py"
SUITE = load_suite(TIMED)
CASE = SUITE.get("total_speed")
ITEM = "case:total_speed"
MODULES = ((1, "mini"), (2, "later"))

#: ``total`` that does the same work as the reference, two ways slower, and clocks that lie.
SLOW = CORRECT.replace("    return sum(xs)", "    t = 0\n    for x in xs:\n        t += x\n"
                       "        t += 0\n        t -= 0\n    return t")
LYING_CLOCKS = '''
import time as _time
for _name in ("thread_time", "process_time", "perf_counter", "monotonic", "time"):
    setattr(_time, _name, lambda: 0.0)
    setattr(_time, _name + "_ns", lambda: 0)
'''


def measure(source: str, *, timed: bool = True, tmp: Path | None = None) -> TimedResult:
    """Run the timed case on ``source`` (the graded module) as grading does; its value."""
    root = Path(tempfile.mkdtemp(prefix="tttiming-", dir=tmp))
    try:
        (root / "pkg").mkdir()
        (root / "twin").mkdir()
        student = build_package(dest=root / "pkg", reference=REF, module_number=1, slug="mini",
                                student_source=source, all_modules=MODULES, stubs=STUBS)
        build_package(dest=root / "twin", reference=REF, module_number=1, slug="mini",
                      student_source=(STUBS / "mini.py").read_text(), all_modules=MODULES,
                      stubs=STUBS)

        def planner(item: str, value: Any) -> Any:
            assert CASE.timing is not None
            return CASE.timing.plan(value, None, timing.plan_rng())

        report = run_items(RunSpec(
            package_parent=root / "pkg", slug="mini", suite_file=TIMED, items=[ITEM],
            scratch=root, item_timeout_s={ITEM: 60.0}, import_timeout_s=10.0,
            run_timeout_s=300.0, memory_limit_mb=700, max_output_kb=8, student_file=student,
            seeds={ITEM: 1}, timing=planner if timed else None,
            twin=timing.TwinJob(package_parent=root / "twin", suite_file=TIMED)))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    o = report.outcomes[ITEM]
    assert o.status == "result", (o.status, o.message)
    assert isinstance(o.value, TimedResult)
    return o.value


def ratio(t: TimedResult) -> float:
    """The median of reference / submission CPU time per pair (what the case's check reads)."""
    assert isinstance(t.timing, dict) and not t.timing.get("problem"), (t.timing, t.problem)
    return float(np.median(np.asarray(t.timing["baseline_s"]) / t.timing["submission_s"]))


def test_each_run_is_measured_from_outside_on_sizes_drawn_after_the_commit() -> None:
    t = measure(CORRECT)
    assert t.problem == "" and t.value == {"committed": t.value["committed"]}
    sizes = t.timing["sizes"]
    assert len(sizes) == len(set(sizes)) == 6  # a fresh input for every pair
    # about 5 ms of CPU per run on either side (sum over 350,000 ints), measured in ns
    assert all(1e-3 < s < 1.0 for s in t.timing["baseline_s"] + t.timing["submission_s"])
    assert 0.5 < ratio(t) < 2.0  # the same code on both sides
    passed, msg = CASE.check(t, None)  # type: ignore[misc]
    assert passed, msg


def test_a_clock_patched_in_the_child_changes_nothing() -> None:
    """time.thread_time, process_time, perf_counter... returning 0 in the child: the parent
    reads the child's CPU clocks from outside, so the same code measures the same."""
    honest, lying = measure(CORRECT), measure(CORRECT + LYING_CLOCKS)
    assert 0.5 < ratio(lying) / ratio(honest) < 2.0
    slow = measure(SLOW + LYING_CLOCKS)
    assert ratio(slow) < 0.5 * ratio(honest)  # slower code is measured slower, clock or not
    assert not CASE.check(slow, None)[0]  # type: ignore[misc]


def test_work_in_a_background_thread_is_counted_not_hidden() -> None:
    """A thread that burns CPU all the time: the tree is frozen between runs, so it only runs
    inside the submission's own runs, where its CPU time counts against the submission."""
    burner = CORRECT + '''
import threading as _threading
def _burn():
    x = 0
    while True:
        x += 1
_threading.Thread(target=_burn, daemon=True).start()
'''
    assert ratio(measure(burner)) < 0.6 * ratio(measure(CORRECT))


def test_a_process_started_during_a_timed_run_makes_it_implausible() -> None:
    """Timed work runs in one process: a run during which a process starts (here the work
    itself forks one that computes and exits) or ends is refused, never measured."""
    forking = CORRECT.replace("    return sum(xs)", '''    import os
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return sum(xs)''')
    t = measure(forking)
    assert "a process started" in t.timing["problem"]
    assert not CASE.check(t, None)[0]  # type: ignore[misc]


def test_runs_without_a_plan_time_nothing() -> None:
    """Reference and mutation runs: the value is committed and the work is never run."""
    t = measure(CORRECT, timed=False)
    assert t.timing is None and t.problem == "" and set(t.value) == {"committed"}


def test_a_timed_case_is_decided_only_on_a_timed_result() -> None:
    """A plain value for a timed case (the child skipped the commit) is refused; a result the
    grader could not time is a course-side problem, never scored as the student's."""
    exp = type("E", (), {"values": {"total_speed": {"committed": 1}}})()
    decide = decider(SUITE, exp, [])  # type: ignore[arg-type]
    plain = decide(ITEM, {"committed": 1})
    assert isinstance(plain, Verdict) and not plain.passed and "not committed" in plain.message
    broken = decide(ITEM, TimedResult({"committed": 1}, None, "the twin ended"))
    assert not broken.passed and broken.grader_error == "total_speed: the twin ended"


def test_the_twins_failure_is_the_graders_not_the_students(monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    """A twin that cannot load the reference package: the plan ends with a course-side problem
    and the submission's work is never blamed (the case is "not scored", for staff)."""
    real = timing.TwinJob

    def broken(**kw: Any) -> Any:
        return real(**{**kw, "package": "no_such_package"})

    monkeypatch.setattr(timing, "TwinJob", broken)
    before = set(isolation._LIVE)
    watched: list[int] = []
    forgotten: list[int] = []
    monkeypatch.setattr(lifeline, "watch_group", watched.append)
    monkeypatch.setattr(lifeline, "forget_group", forgotten.append)
    t = measure(CORRECT)
    assert "the baseline process could not start" in t.problem and t.timing is None, t
    # the twin that never became ready was reaped, and the reaper told to forget its group
    assert isolation._LIVE == before
    assert watched and sorted(watched) == sorted(forgotten), (watched, forgotten)


# ----------------------------------------------------------------------------- the meter
def _spinner() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "x = 0\nwhile True: x += 1"],
                            start_new_session=True)


def test_a_frozen_tree_uses_no_cpu_and_a_run_is_counted_in_nanoseconds() -> None:
    proc = _spinner()
    try:
        meter = timing.Meter(proc.pid)
        meter.hold()
        time.sleep(0.2)
        assert meter.check_idle() == ""  # stopped: its clock did not move
        meter.begin()
        time.sleep(0.3)
        cpu, why = meter.end()
        assert why == "" and 0.05 < cpu < 0.45, cpu  # ran only while thawed
        assert timing.process_cpu_ns(proc.pid) is not None
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_a_tree_that_changes_during_a_run_is_implausible() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "import subprocess, sys, time\n"
                             "time.sleep(0.3)\n"
                             "subprocess.Popen([sys.executable, '-c', 'import time; "
                             "time.sleep(30)'])\ntime.sleep(30)"], start_new_session=True)
    try:
        meter = timing.Meter(proc.pid)
        meter.hold()
        meter.begin()
        time.sleep(2.0)
        cpu, why = meter.end()
        assert cpu != cpu and "a process started (1)" in why  # nan
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_plans_run_in_process_for_trusted_packages() -> None:
    """``drive_in_process`` runs the same plan with both sides' work here (staff tools)."""
    import tinytorch_ref  # noqa: F401 - any trusted package; the work here is plain Python

    def work(n: int) -> int:
        return int(sum(range(int(n))))

    summary = timing.drive_in_process(CASE.timing.plan({}, None, timing.plan_rng()),  # type: ignore[union-attr]
                                      {"total": work}, lambda data: {"total": work})
    assert summary["problem"] == "" and len(summary["baseline_s"]) == 6
    failing = timing.drive_in_process(CASE.timing.plan({}, None, timing.plan_rng()),  # type: ignore[union-attr]
                                      {"total": lambda n: -1}, lambda data: {"total": work})
    assert "is wrong" in failing["problem"]
    assert isinstance(Measured(0.0), Measured)
