"""Nothing outlives a killed regrade (issue 34 item 6): ``kill -9`` of ``tito regrade`` while
its sandboxed children (``unshare`` wrappers, PID namespaces, per-run uids) run submissions,
two of them looping, leaves no process behind within seconds. (Without namespaces, as root,
this machine's interpreter under /root would make the harness refuse to run student code; the
reaper's part there, killing groups, sessions and per-run uids, is tests/autograder/
test_lifeline.py's.)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from autograder.harness import isolation
from staff.synthetic import synth_export

REPO = Path(__file__).resolve().parents[2]


def _live(pid: int) -> bool:
    st = isolation._stat_state(pid)
    return st is not None and st[0] != "Z"


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _uid(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Uid:"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def test_kill_9_of_a_regrade_leaves_no_process_behind(tmp_path: Path) -> None:
    made = synth_export(module="01", n=3, out=tmp_path / "export.zip", seed=3,
                        mix={"correct": 1.0}, looping=2)
    env = {**os.environ, "TT_GRADER_ISOLATION": "full", "OPENBLAS_NUM_THREADS": "1",
           "PYTHONPATH": str(REPO)}
    log = (tmp_path / "log").open("w")
    tito = subprocess.Popen([sys.executable, "-m", "tito.cli", "regrade", str(made.path),
                             "--module", "01", "-o", str(tmp_path / "out"), "-j", "2"],
                            env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True, cwd=tmp_path)
    try:
        seen: set[int] = set()
        end = time.monotonic() + 120
        children: list[int] = []
        while time.monotonic() < end and tito.poll() is None:
            found = isolation.descendants(tito.pid, live=True)
            seen.update(found)
            # both jobs in a sandboxed child (dropped to a per-run uid, looping or grading)
            children = [p for p in found if (_uid(p) or 0) >= isolation.UID_BASE]
            if len(children) >= 2:
                break
            time.sleep(0.1)
        assert len(children) >= 2, (tito.poll(), (tmp_path / "log").read_text()[-2000:])
        time.sleep(0.5)
        seen.update(isolation.descendants(tito.pid, live=True))
        uids = {_uid(p) for p in seen} - {0, None}
        assert any("unshare" in _cmdline(p) for p in seen), "the namespace wrappers"
        os.kill(tito.pid, signal.SIGKILL)
        tito.wait()
        end = time.monotonic() + 10
        while time.monotonic() < end and any(_live(p) for p in seen):
            time.sleep(0.1)
        left = {p: _cmdline(p) for p in seen if _live(p)}
        assert not left, f"still running {time.monotonic() - end + 10:.1f} s after kill -9: {left}"
        assert not [p for u in uids for p in isolation.processes_of_uid(u)]
    finally:
        if tito.poll() is None:
            tito.kill()
            tito.wait()
        log.close()


def test_ctrl_c_in_tito_grade_is_one_line_and_leaves_the_provisional_result(
        tmp_path: Path) -> None:
    """Ctrl-C (SIGINT to the terminal's process group) while a looping notebook is graded:
    ``tito: interrupted (Ctrl-C)``, exit 130, no traceback, no child left; results.json is
    the provisional course-side one ("did not finish"), never a score."""
    import json

    from coursekit.course import load_course
    from staff.synthetic import _notebooks

    data, _ = _notebooks(load_course().module("01"))["looping"]
    (tmp_path / "01_tensor.ipynb").write_bytes(data)
    out = tmp_path / "results.json"
    tito = subprocess.Popen(
        [sys.executable, "-c", "import signal, sys; signal.signal(signal.SIGINT, "
         "signal.default_int_handler); from tito.cli import main; sys.argv[0] = 'tito'; main()",
         "grade", "01", str(tmp_path / "01_tensor.ipynb"), "-o", str(out)],
        env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True, cwd=tmp_path)
    try:
        end = time.monotonic() + 120
        tree: list[int] = []
        while time.monotonic() < end and tito.poll() is None:
            tree = isolation.descendants(tito.pid, live=True)
            if any((_uid(p) or 0) >= isolation.UID_BASE for p in tree):
                break
            time.sleep(0.1)
        time.sleep(0.5)
        tree = isolation.descendants(tito.pid, live=True)
        os.killpg(tito.pid, signal.SIGINT)
        _, err = tito.communicate(timeout=60)
    finally:
        if tito.poll() is None:
            tito.kill()
            tito.wait()
    assert tito.returncode == 130, err
    [line] = err.strip().splitlines()
    assert line.startswith("tito: interrupted (Ctrl-C)"), err
    end = time.monotonic() + 10
    while time.monotonic() < end and any(_live(p) for p in tree):
        time.sleep(0.1)
    assert not [p for p in tree if _live(p)], {p: _cmdline(p) for p in tree if _live(p)}
    res = json.loads(out.read_text())
    assert res["extra_data"].get("provisional") and "did not finish" in res["extra_data"][
        "grader_error"]

