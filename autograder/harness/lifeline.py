"""Nothing a grader started outlives it, even after ``kill -9`` (issue 34 item 6).

A grading process (``tito grade``, ``tito regrade``, a Dask worker) stops its children itself
when it ends or is interrupted (:func:`autograder.harness.isolation.kill_tree`,
:func:`~autograder.harness.isolation.abort_all`). A process killed with SIGKILL runs no code,
so two mechanisms that need none of it stop the children instead:

* **Parent-death signal.** Every child is launched through ``setpriv --pdeathsig KILL``
  (:func:`launch_prefix`): the kernel sends it SIGKILL when the grader thread that started it
  dies. In the namespace sandbox that process is ``unshare``, whose ``--kill-child`` passes
  the signal on to the namespace's first process, the sandboxed child; the child arms it
  again after it drops to its per-run uid (a uid change clears it) and checks the grader is
  still there (:func:`autograder.harness.isolation.die_with_parent`); when the namespace's
  first process dies, the kernel kills everything in the namespace.
* **A reaper.** The first child a grading process starts also starts one small reaper
  process (this file, standard library only) in a session of its own, so a signal to the
  grader's terminal or process group does not reach it. The grader tells it, over a pipe only
  the grader holds, each process group it launches (and forgets, once reaped) and each
  per-run uid it hands out. When the pipe reaches end of file (the grader exited, or was
  killed), the reaper SIGKILLs those process groups, every process in their sessions, and,
  as root, every process of those uids (what a student process that left the session still
  has), then exits. Without ``setpriv`` the reaper alone does the job.

A process group is forgotten as soon as its leader is reaped, so the reaper never signals a
group whose number the system may give to somebody else.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

REAPER = Path(__file__).resolve()

_LOCK = threading.Lock()
_REAPER: dict[int, subprocess.Popen[bytes]] = {}  # grader pid -> its reaper (a fork: its own)
#: pids of the reapers this process started (a child of the grader it did not launch for a
#: grading: orphan sweeps must leave it alone)
REAPERS: set[int] = set()
_PREFIX: list[list[str]] = []


# ----------------------------------------------------------------------------- grader side
def launch_prefix() -> list[str]:
    """``setpriv --pdeathsig KILL --`` where util-linux's setpriv supports it, else empty."""
    if not _PREFIX:
        exe = shutil.which("setpriv")
        ok = False
        if exe:
            try:
                ok = subprocess.run([exe, "--pdeathsig", "KILL", "--", "true"],
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, timeout=10).returncode == 0
            except (OSError, subprocess.SubprocessError):
                ok = False
        _PREFIX.append([exe, "--pdeathsig", "KILL", "--"] if ok and exe else [])
    return list(_PREFIX[0])


def _send(line: str) -> None:
    """Tell this process's reaper one thing (starting it first); a reaper that is gone is
    not an error: the parent-death signals still hold."""
    with _LOCK:
        reaper = _REAPER.get(os.getpid())
        if reaper is None:
            try:
                proc = subprocess.Popen(
                    [sys.executable, "-I", "-S", "-B", str(REAPER)], stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/",
                    start_new_session=True, close_fds=True)
            except OSError:
                return
            REAPERS.add(proc.pid)
            reaper = _REAPER[os.getpid()] = proc
        try:
            assert reaper.stdin is not None
            reaper.stdin.write(f"{line}\n".encode())
            reaper.stdin.flush()
        except (OSError, ValueError):
            pass


def watch_group(pgid: int) -> None:
    """Kill process group ``pgid`` (and its session) if this grader dies before
    :func:`forget_group`."""
    _send(f"+g {int(pgid)}")


def forget_group(pgid: int) -> None:
    """The group's leader is being reaped: never signal that number again."""
    if os.getpid() in _REAPER:
        _send(f"-g {int(pgid)}")


def watch_uid(uid: int) -> None:
    """Kill every process of per-run ``uid`` if this grader dies (root only)."""
    _send(f"+u {int(uid)}")


# ----------------------------------------------------------------------------- reaper side
def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, pgid, session) of a process, or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            text = fh.read().decode("ascii", "replace")
    except OSError:
        return None
    rest = text[text.rfind(")") + 2:].split()
    return (rest[0], int(rest[2]), int(rest[3])) if len(rest) > 3 else None


def _members(groups: set[int]) -> list[int]:
    """Live processes in one of ``groups`` or in a session led by one of them."""
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = _stat(int(name))
            if st is not None and st[0] != "Z" and (st[1] in groups or st[2] in groups):
                out.append(int(name))
    return out


def _kill_uid(uid: int) -> None:
    """``kill(-1, SIGKILL)`` as ``uid``: every process it owns (root only)."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass
        os._exit(0)
    os.waitpid(pid, 0)


def reap(groups: set[int], uids: set[int]) -> None:
    """SIGKILL the groups, their sessions' processes and the uids' processes, a few rounds
    (a process forking while it is killed)."""
    for _ in range(5):
        targets = _members(groups)
        for g in groups:
            try:
                os.killpg(g, signal.SIGKILL)
            except OSError:
                pass
        for pid in targets:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if os.geteuid() == 0:
            for uid in uids:
                _kill_uid(uid)
        if not targets:
            break


def main() -> None:
    """The reaper: read ``+g N`` / ``-g N`` / ``+u N`` lines until end of file, then reap."""
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_IGN)
    groups: set[int] = set()
    uids: set[int] = set()
    mine = {os.getpgrp(), os.getsid(0), 0, 1}
    for raw in sys.stdin.buffer:
        parts = raw.split()
        if len(parts) != 2 or not parts[1].isdigit():
            continue
        op, value = parts[0], int(parts[1])
        if op == b"+g" and value not in mine:
            groups.add(value)
        elif op == b"-g":
            groups.discard(value)
        elif op == b"+u":
            uids.add(value)
    reap(groups, uids)


if __name__ == "__main__":
    main()
