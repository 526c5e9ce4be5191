"""One temporary folder per test run, removed at its end, and after a killed run by the next.

Everything a run writes to the temporary folder (``tmp_path``, ``tempfile`` in tests and in the
code under test, PostgreSQL clusters, grading scratch, whatever every subprocess makes) goes
below one folder made for this run: ``TMPDIR`` points there, and the xdist workers and every
subprocess inherit it. The process that made it removes it when it exits. A run that was
killed cannot clean up (a CI time limit, a session that ended; SIGKILL skips ``atexit``, and
xdist workers never run it), so each new run first removes the folders of runs whose owning
process is gone. The machine's disk never fills up with what earlier runs left behind: it
did, 7 GB of them in a day, until a landing CI run failed on a full disk.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from autograder.harness.clock import stat_fields

PREFIX = "tt-testrun-"
OWNER = ".owner"
ENV = "TT_TEST_RUN_TMP"
#: a folder with no owner file yet is a run starting up, left alone this long (seconds)
STARTING_UP_S = 60.0


def _process_start(pid: int) -> str | None:
    """The start time of process ``pid`` in clock ticks since boot (None: no such process);
    with the pid it names one process for as long as the machine is up. (Read with the
    harness's lenient reader: a process name may hold any bytes.)"""
    fields = stat_fields(f"/proc/{pid}/stat")
    return None if fields is None else fields[19]


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text(encoding="ascii").strip()
    except OSError:
        return "unknown"


def _remove_tree(path: Path) -> None:
    """Remove ``path`` whatever its modes (a test may leave a read-only folder)."""
    def retry(func: Any, name: str, _exc: Any) -> None:
        try:
            os.chmod(os.path.dirname(name), 0o700)
            if os.path.isdir(name) and not os.path.islink(name):
                os.chmod(name, 0o700)
            func(name)
        except OSError:
            pass
    shutil.rmtree(path, onerror=retry)  # (onexc from Python 3.12; onerror still works)


def _abandoned(folder: Path) -> bool:
    """Whether a run folder's owner is gone (another boot, or no process with its pid and
    start time). A folder with no owner file yet is a run starting up: left for a minute."""
    try:
        boot, pid, start = (folder / OWNER).read_text(encoding="ascii").split()
    except (OSError, ValueError):
        try:
            return time.time() - folder.stat().st_mtime > STARTING_UP_S
        except OSError:
            return False
    # (without /proc both sides read "None": such a folder is kept, never a live run's lost)
    return boot != _boot_id() or str(_process_start(int(pid))) != start


def sweep_abandoned_runs(base: Path) -> list[Path]:
    """Remove the run folders under ``base`` whose run was killed; returns what was removed."""
    removed = []
    for folder in sorted(base.glob(PREFIX + "*")):
        if folder.is_dir() and not folder.is_symlink() and _abandoned(folder):
            _remove_tree(folder)
            removed.append(folder)
    return removed


def run_folder() -> Path:
    """This run's temporary folder: inherited from the process that started the run (an xdist
    worker, a subprocess), or made here when this process starts the run."""
    inherited = os.environ.get(ENV)
    if inherited and Path(inherited).is_dir():
        return Path(inherited)
    base = Path(tempfile.gettempdir())
    sweep_abandoned_runs(base)
    folder = Path(tempfile.mkdtemp(prefix=PREFIX, dir=base))
    me = os.getpid()
    (folder / OWNER).write_text(f"{_boot_id()} {me} {_process_start(me)}\n", encoding="ascii")
    # like the machine's /tmp: every uid may make its own folders here (the PostgreSQL server
    # runs as postgres; the grader drops to an unprivileged uid)
    os.chmod(folder, 0o1777)

    def remove() -> None:
        if os.getpid() == me:  # not in a forked child
            _remove_tree(folder)
    atexit.register(remove)
    return folder


def enter() -> Path:
    """Make this process use the run's folder (made here if this process starts the run)."""
    folder = run_folder()
    os.environ.update({"TMPDIR": str(folder), ENV: str(folder)})
    tempfile.tempdir = None  # tempfile re-reads TMPDIR
    return folder
