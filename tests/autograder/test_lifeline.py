"""The reaper of :mod:`autograder.harness.lifeline`: what a grader launched dies with it, even
when the grader is killed with SIGKILL, and nothing it has reaped (and forgotten) is touched.

Each test runs a small stand-in grader in its own session: it launches process groups the way
the harness does (``isolation.spawn_tracked(..., start_new_session=True)``), prints their pids,
and waits to be killed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from autograder.harness import lifeline

REPO = Path(__file__).resolve().parents[2]

GRADER = textwrap.dedent("""
    import subprocess, sys, time
    sys.path.insert(0, {repo!r})
    from autograder.harness import isolation, lifeline
    sleeper = [sys.executable, "-c", "import os, time\\nif os.fork() == 0:\\n    os.setpgid(0, 0)\\ntime.sleep(600)"]
    kept = isolation.spawn_tracked(sleeper, start_new_session=True)
    done = isolation.spawn_tracked([sys.executable, "-c", "pass"], start_new_session=True)
    done.wait()
    isolation.untrack(done.pid)
    prefixed = subprocess.Popen([*lifeline.launch_prefix(), *sleeper], start_new_session=True)
    print(kept.pid, done.pid, prefixed.pid, flush=True)
    time.sleep(600)
""")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _session(sid: int) -> list[int]:
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as fh:
                    rest = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(rest[3]) == sid and rest[0] != "Z":
                out.append(int(name))
    return out


def _wait_gone(pids: list[int], seconds: float) -> list[int]:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        alive = [p for p in pids if _alive(p)]
        if not alive:
            return []
        time.sleep(0.05)
    return [p for p in pids if _alive(p)]


def test_kill_9_of_the_grader_kills_every_group_it_launched() -> None:
    grader = subprocess.Popen([sys.executable, "-c", GRADER.format(repo=str(REPO))],
                              stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        kept, _done, prefixed = (int(x) for x in grader.stdout.readline().split())
        time.sleep(0.3)  # the sleeper's own child (another process group) has started
        # the reaper's: a registered group and the session it leads (the forked child left
        # the group); the parent-death signal's: the prefixed process itself
        victims = [*_session(kept), prefixed]
        assert len(victims) == 3, victims
        assert all(_alive(p) for p in victims)
        os.kill(grader.pid, signal.SIGKILL)
        grader.wait()
        assert _wait_gone(victims, 10.0) == [], "a launched process outlived its grader"
    finally:
        if grader.poll() is None:
            grader.kill()
            grader.wait()
        for pid in _session(prefixed) if "prefixed" in locals() else []:
            os.kill(pid, signal.SIGKILL)  # the prefixed sleeper's child: not this test's


def test_the_reaper_never_signals_a_group_it_was_told_to_forget(tmp_path: Path) -> None:
    """A forgotten group number that now belongs to someone else is left alone: simulated
    with a live group the reaper hears ``-g`` for, then end of input."""
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                             start_new_session=True)
    watched = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                               start_new_session=True)
    try:
        reaper = subprocess.run(
            [sys.executable, "-I", "-S", "-B", str(lifeline.REAPER)], timeout=30,
            input=f"+g {other.pid}\n+g {watched.pid}\n-g {other.pid}\nnonsense\n".encode())
        assert reaper.returncode == 0
        assert watched.wait(timeout=10) == -signal.SIGKILL
        assert other.poll() is None, "a forgotten group was signalled"
    finally:
        for p in (other, watched):
            if p.poll() is None:
                p.kill()
            p.wait()


def test_the_launch_prefix_sets_a_parent_death_signal() -> None:
    prefix = lifeline.launch_prefix()
    assert prefix[:3] == [prefix[0], "--pdeathsig", "KILL"] and prefix[0].endswith("setpriv")
    code = ("import ctypes, signal\nsig = ctypes.c_int()\n"
            "ctypes.CDLL(None).prctl(2, ctypes.byref(sig), 0, 0, 0)\nprint(sig.value)")
    out = subprocess.run([*prefix, sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=30, check=True).stdout
    assert int(out) == signal.SIGKILL


def test_a_grading_stopped_by_an_interrupt_prints_no_traceback(grade_mini, capfd,
                                                               monkeypatch) -> None:
    """After ``abort_all`` (Ctrl-C in ``tito regrade``) a grading that can no longer start its
    children ends as a course-side failure saying so, without an internal-error traceback:
    the command prints its one line (issue 34 item 7)."""
    from autograder.harness import isolation
    from tests.autograder.conftest import CORRECT

    monkeypatch.setattr(isolation, "ABORT", __import__("threading").Event())
    isolation.ABORT.set()
    res = grade_mini(CORRECT)
    err = capfd.readouterr().err
    assert "Traceback" not in err and "internal error" not in err
    assert res["extra_data"]["grader_error"].startswith("interrupted:")
    assert res["score"] == 0
