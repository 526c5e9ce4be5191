"""The test run's own temporary folder (tests/run_folder.py): everything lands in it, the run
that made it removes it, and a later run removes what a killed run left behind."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import run_folder

TESTS = Path(__file__).resolve().parent


def _owned_by(folder: Path, owner: str) -> Path:
    folder.mkdir()
    (folder / run_folder.OWNER).write_text(owner + "\n", encoding="ascii")
    return folder


def _gone_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_this_process_works_in_the_runs_folder(tmp_path):
    run = Path(os.environ[run_folder.ENV])
    assert os.environ["TMPDIR"] == str(run) and run.name.startswith(run_folder.PREFIX)
    assert Path(tempfile.gettempdir()) == run
    assert tmp_path.is_relative_to(run), tmp_path
    # whoever made it is alive: the run under way is never swept
    assert not run_folder._abandoned(run)
    # a subprocess (and what it makes) inherits it
    made = subprocess.run([sys.executable, "-c", "import tempfile; print(tempfile.mkdtemp())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    assert Path(made).parent == run


def test_sweep_removes_only_the_folders_of_runs_that_are_gone(tmp_path):
    boot = run_folder._boot_id()
    me = os.getpid()
    alive = _owned_by(tmp_path / f"{run_folder.PREFIX}alive",
                      f"{boot} {me} {run_folder._process_start(me)}")
    dead = _owned_by(tmp_path / f"{run_folder.PREFIX}dead", f"{boot} {_gone_pid()} 12345")
    # same pid, another process (the pid was reused): its start time differs
    reused = _owned_by(tmp_path / f"{run_folder.PREFIX}reused", f"{boot} {me} 1")
    other_boot = _owned_by(tmp_path / f"{run_folder.PREFIX}oldboot",
                           f"not-this-boot {me} {run_folder._process_start(me)}")
    # a run starting up has not written its owner yet: left alone until it is a minute old
    starting = tmp_path / f"{run_folder.PREFIX}starting"
    starting.mkdir()
    stale = tmp_path / f"{run_folder.PREFIX}stale"
    stale.mkdir()
    old = time.time() - 2 * run_folder.STARTING_UP_S
    os.utime(stale, (old, old))
    unrelated = tmp_path / "pytest-of-someone"
    unrelated.mkdir()
    # what the killed run left: read-only folders, files of another mode
    locked = dead / "a" / "b"
    locked.mkdir(parents=True)
    (locked / "f").write_text("x")
    os.chmod(locked, 0o500)
    os.chmod(dead / "a", 0o500)

    removed = run_folder.sweep_abandoned_runs(tmp_path)

    assert sorted(p.name for p in removed) == sorted(
        p.name for p in (dead, reused, other_boot, stale))
    assert alive.is_dir() and starting.is_dir() and unrelated.is_dir()
    assert not dead.exists() and not reused.exists() and not other_boot.exists()
    assert not stale.exists()


def test_a_run_removes_its_folder_at_exit_and_the_next_run_sweeps_a_killed_one(tmp_path):
    """Two runs in fresh processes with TMPDIR at ``tmp_path``: the first exits normally
    (its folder is gone), the second is killed (its folder stays), and a third sweeps it."""
    script = textwrap.dedent(f'''
        import os, sys, tempfile
        sys.path.insert(0, {str(TESTS)!r})
        import run_folder
        folder = run_folder.enter()
        open(tempfile.mkdtemp() + "/data", "w").write("x" * 1000)
        print(folder, flush=True)
        if sys.argv[1] == "kill":
            os.kill(os.getpid(), 9)
    ''')
    env = {k: v for k, v in os.environ.items() if k != run_folder.ENV}
    env["TMPDIR"] = str(tmp_path)

    def run(how: str) -> tuple[int, Path]:
        proc = subprocess.run([sys.executable, "-c", script, how], capture_output=True,
                              text=True, env=env, timeout=120)
        return proc.returncode, Path(proc.stdout.strip())

    rc, first = run("exit")
    assert rc == 0 and first.parent == tmp_path and not first.exists()
    rc, killed = run("kill")
    assert rc == -9 and killed.is_dir()
    rc, third = run("exit")
    assert rc == 0 and not killed.exists() and not third.exists()
    assert list(tmp_path.iterdir()) == []
