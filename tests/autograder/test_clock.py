"""Grading deadlines are CPU seconds of the child's process tree, with a wall-clock backstop.

The verdict must not depend on how busy the machine is: a case that computes too long is
stopped after its CPU seconds (however long that takes in wall-clock time), and a case that
is only *slow in wall-clock time* (here: blocked for twice its limit) still passes. Code that
blocks forever is stopped by the backstop (5 x the limit in wall-clock seconds).
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

import pytest

from autograder.harness import clock
from autograder.harness.package import build_package
from autograder.harness.supervisor import RunSpec, run_items
from tests.autograder.conftest import CORRECT, REF, SUITE


def _in_sum(code: str) -> str:
    body = "".join(f"        {line}\n" for line in code.strip("\n").splitlines())
    return CORRECT.replace("    def sum(self):\n", "    def sum(self):\n" + body, 1)


def _run(source: str, *, sandbox: bool, limit: float = 0.5):
    scratch = Path(tempfile.mkdtemp(prefix="ttclock-"))
    try:
        (scratch / "pkg").mkdir()
        build_package(dest=scratch / "pkg", reference=REF, module_number=1, slug="mini",
                      student_source=source, all_modules=((1, "mini"), (2, "later")))
        items = ["case:sum_value", "case:shape_tuple"]
        return run_items(RunSpec(
            package_parent=scratch / "pkg", slug="mini", suite_file=SUITE, items=items,
            scratch=scratch, item_timeout_s=dict.fromkeys(items, limit), import_timeout_s=5.0,
            run_timeout_s=120.0, memory_limit_mb=700, max_output_kb=4, sandbox=sandbox,
            hide=[]))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


@pytest.mark.parametrize("sandbox", [True, False], ids=["sandboxed", "trusted"])
def test_cpu_limit_not_wall_time_decides(sandbox: bool) -> None:
    slow = _run(_in_sum("import time\ntime.sleep(1.0)"), sandbox=sandbox)  # 2x the limit
    assert slow.outcomes["case:sum_value"].status == "result", slow.outcomes
    loops = _run(_in_sum("while True:\n    pass"), sandbox=sandbox)
    o = loops.outcomes["case:sum_value"]
    assert o.status == "timeout" and "0.5 s of CPU time" in o.message, o
    assert loops.outcomes["case:shape_tuple"].status == "result", "the next case still runs"
    blocked = _run(_in_sum("import time\ntime.sleep(3600)"), sandbox=sandbox)
    o = blocked.outcomes["case:sum_value"]
    assert o.status == "timeout" and "2.5 s of wall-clock time" in o.message, o


def test_tree_cpu_counts_descendants_and_not_sleepers() -> None:
    code = ("import subprocess, sys\n"
            "subprocess.run([sys.executable, '-c', 'while True: pass'])\n")
    busy = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    sleeper = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        end = time.monotonic() + 120  # a safety bound only: the loop ends on CPU seconds
        while clock.tree_cpu_seconds(busy.pid) < 0.3:
            assert time.monotonic() < end, "the busy grandchild's CPU time was never seen"
            time.sleep(0.05)
        assert clock.tree_cpu_seconds(sleeper.pid) < 0.1
        assert clock.tree_cpu_seconds(2 ** 22 + 12345) == 0.0  # no such process
    finally:
        for p in (busy, sleeper):
            os.killpg(p.pid, signal.SIGKILL)  # its own process group: it and its child
            p.wait()


def _pinned(cpu: int, niceness: int):
    def setup() -> None:
        os.sched_setaffinity(0, {cpu})
        os.nice(niceness)
    return setup


def test_waiting_for_a_busy_cpu_is_not_blocking() -> None:
    """A starved child (runnable, queued behind two busy processes on its one CPU, at nice 19)
    gets almost no CPU for many times its limit in wall-clock seconds: neither clock expires.
    A sleeping child reaches the backstop after 5 x its limit."""
    cpu = min(os.sched_getaffinity(0))
    loop = [sys.executable, "-c", "while True: pass"]
    hogs = [subprocess.Popen(loop, preexec_fn=_pinned(cpu, 0)) for _ in range(2)]
    starved = subprocess.Popen(loop, preexec_fn=_pinned(cpu, 19))
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        time.sleep(0.3)
        slow, idle = clock.Deadline(starved.pid, time.monotonic() + 600), \
            clock.Deadline(sleeper.pid, time.monotonic() + 600)
        slow.start(0.3)
        idle.start(0.3)
        end = time.monotonic() + 3.0  # 10 x the limit
        while time.monotonic() < end:
            assert not slow.expired(), (slow.reason, slow.cpu, slow.blocked)
            time.sleep(0.05)
        assert slow.blocked < 0.3 * clock.WALL_FACTOR, slow.blocked
        while not idle.expired():  # the sleeper: 1.5 s of blocked time, then stopped
            assert time.monotonic() < end + 60, idle.blocked
            time.sleep(0.05)
        assert idle.reason == "blocked" and idle.cpu < 0.1
    finally:
        for p in (*hogs, starved, sleeper):
            p.kill()
            p.wait()



# A process name is bytes the process chooses; invalid UTF-8 (and a ")" in it) once made the
# parent's /proc readers raise UnicodeDecodeError: any such host process broke grading runs
# beside it, and a submission could rename itself to crash its own grading.
_RENAME = "open('/proc/self/comm', 'wb').write(b'\\xff) \\xfe')"


def test_a_process_name_that_is_not_utf8_does_not_crash_the_parent() -> None:
    from autograder.harness import isolation

    code = f"import subprocess, sys, time\n{_RENAME}\ntime.sleep(60)\n"
    proc = subprocess.Popen([sys.executable, "-c",
                             f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', "
                             f"{code!r}])\n"], start_new_session=True)
    try:
        end = time.monotonic() + 120  # a safety bound only
        while True:
            kids = isolation.descendants(proc.pid)
            if kids and b"\xff" in Path(f"/proc/{kids[0]}/comm").read_bytes():
                break
            assert time.monotonic() < end, "the renamed grandchild never appeared"
            time.sleep(0.05)
        assert clock.proc_text(f"/proc/{kids[0]}/stat").startswith(f"{kids[0]} (")
        # the name holds ") ": the fields still start at the state, then the parent's pid
        fields = clock.stat_fields(f"/proc/{kids[0]}/stat")
        assert fields is not None and fields[0] in "RSD", fields
        assert int(fields[1]) == proc.pid, fields
        assert clock.stat_fields("/proc/0/stat") is None  # no such process
        assert clock.tree_cpu_seconds(proc.pid) >= 0.0
        assert proc.pid not in isolation.processes_of_uid(2 ** 31 - 7)  # reads every status
        isolation.kill_tree(proc, uid=None)
        assert not Path(f"/proc/{kids[0]}").exists() or isolation._zombie(kids[0])
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def test_a_submission_that_renames_itself_is_graded_as_usual() -> None:
    """In the sandbox /proc/self/comm is read-only, but a process's name is also the name of
    the file it runs: a symlink to Python named with invalid UTF-8 is enough."""
    code = ("import os, subprocess, sys, tempfile\n"
            "link = os.path.join(os.fsencode(tempfile.mkdtemp()), b'\\xff) \\xfe')\n"
            "os.symlink(os.fsencode(sys.executable), link)\n"
            "subprocess.run([link, '-c', 'import time; time.sleep(1)'])")
    report = _run(_in_sum(code), sandbox=True, limit=5.0)
    assert report.fatal is None, report.fatal
    assert report.outcomes["case:sum_value"].status == "result", report.outcomes
    assert report.outcomes["case:shape_tuple"].status == "result", report.outcomes
