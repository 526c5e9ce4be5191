"""Isolation primitives: what this machine offers, how the child is launched, how it is killed.

The parent asks :func:`plan` once. It tries, in order of strength:

* ``unshare --net --pid --fork --mount-proc --kill-child`` (root only): no network, a PID
  namespace whose death kills every process inside (``setsid`` escapers included), and a
  private mount namespace in which the child hides secrets under empty tmpfs mounts;
* a per-run unprivileged uid (root only) that owns nothing, so ``RLIMIT_NPROC`` bounds a fork
  bomb and ``kill(-1)`` as that uid sweeps every leftover process;
* always: rlimits (address space, CPU, file size, open files, no core dumps), a new session
  and process group killed with ``SIGKILL``, a descendant sweep through ``/proc``, a scratch
  working directory, and a Python-level socket block when there is no network namespace.

``TT_GRADER_ISOLATION=full|basic`` forces a level (``basic`` = no namespaces, no uid change),
which the tests use to exercise the fallback on a machine that has everything.
The child-side helpers (:func:`hide_paths`, :func:`drop_privileges`, ...) run inside the
sandbox before any student code is imported.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import itertools
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

UID_BASE = 2_000_000  # per-run uids come from [UID_BASE, UID_BASE + UID_SPAN): no passwd entry
UID_SPAN = 1 << 28
UID_SLOTS = 64  # uids per grading process before they repeat (more than its concurrent runs)


@dataclass(frozen=True)
class Plan:
    """The isolation this machine offers for one run."""

    namespaces: bool
    drop_uid: bool
    root: bool
    notes: tuple[str, ...] = ()

    def methods(self) -> list[str]:
        """Short names of the mechanisms in force, for results.json ``extra_data.isolation``."""
        out = ["child-process", "rlimits", "process-group-kill", "scratch-cwd"]
        if self.namespaces:
            out += ["pid-namespace", "net-namespace", "mount-namespace"]
        else:
            out += ["session-sweep", "python-socket-block"]
        if self.drop_uid:
            out += ["per-run-uid", "rlimit-nproc"]
        return out + list(self.notes)


_PLAN_CACHE: dict[str, Plan] = {}


def plan() -> Plan:
    """Probe (once per process and level) which isolation primitives work here."""
    level = os.environ.get("TT_GRADER_ISOLATION", "full").strip().lower()
    if level in _PLAN_CACHE:
        return _PLAN_CACHE[level]
    root = os.geteuid() == 0
    ns = False
    if level != "basic" and root and shutil.which("unshare"):
        try:
            ns = run_tracked(
                ["unshare", "--net", "--pid", "--fork", "--mount-proc", "--kill-child",
                 "true"], timeout=10, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL) == 0
        except (OSError, subprocess.SubprocessError):
            ns = False
    drop = root and level != "basic"
    notes: list[str] = []
    if drop and not ns and not _interpreter_reachable():
        drop = False
        notes.append("no-uid-drop:interpreter-not-readable-by-other-users")
    p = Plan(namespaces=ns, drop_uid=drop, root=root, notes=tuple(notes))
    _PLAN_CACHE[level] = p
    return p


def _interpreter_reachable() -> bool:
    """Whether an unprivileged uid can traverse to the interpreter and its libraries."""
    return all(_world_traversable(Path(p)) for p in python_paths_minimal())


def _world_traversable(path: Path) -> bool:
    p = path.resolve()
    for anc in [p, *p.parents]:
        try:
            if not os.stat(anc).st_mode & 0o001:
                return False
        except OSError:
            return False
    return True


def python_paths_minimal() -> list[str]:
    """Directories the child interpreter needs after it drops privileges.

    Only the interpreter's prefixes, its standard library and site-packages directories:
    never arbitrary ``sys.path`` entries, which may be the course repository itself.
    """
    import site  # noqa: PLC0415
    import sysconfig  # noqa: PLC0415

    import numpy  # noqa: PLC0415 - wherever NumPy lives must stay reachable

    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             str(Path(os.path.realpath(sys.executable)).parent),
             str(Path(numpy.__file__).parent.parent)}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        try:
            paths.add(sysconfig.get_paths()[key])
        except KeyError:  # pragma: no cover
            pass
    try:
        paths.update(site.getsitepackages())
    except AttributeError:  # pragma: no cover - old virtualenv
        pass
    return sorted({os.path.realpath(p) for p in paths if p and os.path.isdir(p)})


USED_UIDS: list[int] = []  # uids handed out by this process (tests check none lingers)
_UID_SEQ = itertools.count()


def new_run_uid() -> int:
    """A fresh uid for one run (no passwd entry needed; owns no files outside scratch).

    Derived from this process's pid, so two graders on one machine (two test runs, parallel
    regrades) never share a uid: a run ends with ``kill(-1)`` as its uid, which must never
    reach another grader's child. Within one process the uids cycle through
    :data:`UID_SLOTS` values, far more than the runs it has open at once.
    """
    slot = next(_UID_SEQ) % UID_SLOTS
    uid = UID_BASE + (os.getpid() * UID_SLOTS + slot) % UID_SPAN
    USED_UIDS.append(uid)
    return uid


def launch_prefix(p: Plan) -> list[str]:
    """The command prefix that puts the child in namespaces (empty without them)."""
    if not p.namespaces:
        return []
    return ["unshare", "--net", "--pid", "--fork", "--mount-proc", "--kill-child",
            "--propagation", "private", "--"]


# ----------------------------------------------------------------------------- killing
def kill_tree(proc: subprocess.Popen[bytes], *, uid: int | None) -> None:
    """Kill the child and everything it started; returns when the child is reaped.

    Order: freeze descendants (SIGSTOP, so a fork bomb stops growing), SIGKILL the process
    group and the descendants found through ``/proc``, then, with a per-run uid,
    ``kill(-1, SIGKILL)`` as that uid, which reaches every process the uid owns.
    """
    pid = proc.pid
    for _ in range(3):
        # Freeze first, until the set of descendants stops growing: a stopped process cannot
        # fork, and orphans keep re-parenting to the (stopped, still alive) child.
        _signal(pid, signal.SIGSTOP)
        desc: list[int] = []
        for _ in range(20):
            found = descendants(pid)
            for d in found:
                _signal(d, signal.SIGSTOP)
            if found == desc:
                break
            desc = found
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for d in desc:
            _signal(d, signal.SIGKILL)
        if uid is not None:
            kill_uid(uid)
        if not descendants(pid):
            break
    try:
        proc.kill()
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:  # pragma: no cover - a D-state process
        pass
    _LIVE.discard(proc.pid)
    if uid is not None:
        kill_uid(uid)
    for _ in range(5):
        with SPAWN_LOCK:  # no other run is between Popen and track() while we look
            orphans = _adopted()
            for o in orphans:
                _signal(o, signal.SIGKILL)
        if not orphans:
            break
        for o in orphans:
            try:
                os.waitpid(o, 0)
            except ChildProcessError:
                pass


class Aborted(OSError):
    """Raised instead of starting a process once :func:`abort_all` was called."""


# Set by abort_all (an interrupted ``tito regrade``): no new child starts, and the supervisor
# stops launching. Only a process that is about to exit (or a test) sets it.
ABORT = threading.Event()


def abort_all() -> int:
    """Stop every grading child of this process at once (``tito regrade`` on Ctrl-C or kill).

    Sets :data:`ABORT` (so nothing new starts and supervisors stop relaunching), then SIGKILLs
    every tracked child's process group and descendants and every process owned by a per-run
    uid this process handed out, until none is left. Running gradings return promptly with
    their children gone; their results must be discarded by the caller.

    Returns:
        The number of processes signalled.
    """
    ABORT.set()
    hit: set[int] = set()
    uids = set(USED_UIDS)
    for _ in range(10):
        with SPAWN_LOCK:
            roots = list(_LIVE)
        targets: set[int] = set()
        for pid in roots:
            targets.add(pid)
            targets.update(descendants(pid))
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if uids and os.geteuid() == 0:
            for u in uids:
                targets.update(processes_of_uid(u))
        targets.discard(os.getpid())
        live = [t for t in targets if _stat(t) is not None and not _zombie(t)]
        if not live:
            break
        for t in live:
            _signal(t, signal.SIGKILL)
        hit.update(live)
        time.sleep(0.02)
    return len(hit)


def _zombie(pid: int) -> bool:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return text[text.rfind(")") + 2:].startswith("Z")


_LIVE: set[int] = set()  # children this process launched and has not reaped yet
_SUBREAPER = False
# Held while a child is spawned and registered, and while orphans are swept: with several
# gradings in one process (tito regrade --jobs N), a sweep must never mistake another run's
# just-spawned child for an adopted orphan and kill it.
SPAWN_LOCK = threading.RLock()


def spawn_tracked(cmd: list[str], **kwargs: object) -> subprocess.Popen[bytes]:
    """``subprocess.Popen`` whose pid is registered before any orphan sweep can see it."""
    with SPAWN_LOCK:
        if ABORT.is_set():
            raise Aborted("grading was interrupted: no new process is started")
        proc: subprocess.Popen[bytes] = subprocess.Popen(cmd, **kwargs)  # type: ignore[call-overload]
        _LIVE.add(proc.pid)
    return proc


def run_tracked(cmd: list[str], *, timeout: float, **kwargs: object) -> int:
    """Run a helper process to completion (tracked, so sweeps leave it alone); its exit code."""
    proc = spawn_tracked(cmd, **kwargs)
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise
    finally:
        _LIVE.discard(proc.pid)


def adopt_orphans() -> None:
    """Make this (grading) process a child subreaper, once.

    Without a PID namespace, a process that double-forks and calls ``setsid`` is re-parented
    to the nearest subreaper when its parents exit: with this, that is the grader, so
    :func:`kill_tree` can find and kill it instead of it surviving under init.
    """
    global _SUBREAPER
    if not _SUBREAPER:
        become_subreaper()
        _SUBREAPER = True


def track(pid: int) -> None:
    _LIVE.add(pid)


def _adopted() -> list[int]:
    """Processes re-parented to this grader that it did not launch itself."""
    if not _SUBREAPER:
        return []
    me = os.getpid()
    out = []
    for pid in _proc_entries():
        st = _stat(pid)
        if st is not None and st[0] == me and pid not in _LIVE:
            out.append(pid)
    return out


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def kill_uid(uid: int) -> None:
    """SIGKILL every process owned by ``uid`` (root only): ``kill(-1)`` run as that uid."""
    if os.geteuid() != 0:
        return
    code = "import os,signal\ntry:\n os.kill(-1, signal.SIGKILL)\nexcept OSError:\n pass\n"
    for _ in range(3):
        try:
            run_tracked([sys.executable, "-I", "-S", "-c", code], user=uid, group=uid,
                        extra_groups=[], timeout=10, stdin=subprocess.DEVNULL,
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/")
        except (OSError, subprocess.SubprocessError):
            return
        if not processes_of_uid(uid):
            return
        time.sleep(0.05)


def processes_of_uid(uid: int) -> list[int]:
    """Live (non-zombie) processes whose real uid is ``uid``."""
    out = []
    for entry in _proc_entries():
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        state = fields.get("State", "").strip()[:1]
        uids = fields.get("Uid", "").split()
        if uids and int(uids[0]) == uid and state != "Z":
            out.append(entry)
    return out


def _proc_entries() -> list[int]:
    try:
        return [int(n) for n in os.listdir("/proc") if n.isdigit()]
    except OSError:  # pragma: no cover
        return []


def _stat(pid: int) -> tuple[int, int, int] | None:
    """(ppid, pgid, session) of a process, or None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    rest = text[text.rfind(")") + 2:].split()
    return int(rest[1]), int(rest[2]), int(rest[3])


def descendants(root_pid: int) -> list[int]:
    """Processes below ``root_pid`` (by parent links) or in its process group or session.

    Orphans re-parented to the child (it declares itself a child subreaper) are found by
    parent links even after ``setsid``.
    """
    table = {}
    for pid in _proc_entries():
        st = _stat(pid)
        if st is not None:
            table[pid] = st
    found = {pid for pid, (_, pgid, sid) in table.items()
             if pid != root_pid and (pgid == root_pid or sid == root_pid)}
    frontier = [root_pid, *found]
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    while frontier:
        cur = frontier.pop()
        for ch in children.get(cur, []):
            if ch not in found:
                found.add(ch)
                frontier.append(ch)
    found.discard(root_pid)
    found.discard(os.getpid())
    return sorted(found)


# ----------------------------------------------------------------------------- child side
_libc = None


def _lib() -> ctypes.CDLL:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    return _libc


MS_BIND = 4096
MS_MOVE = 8192
MS_REC = 16384
MS_NOSUID = 2
MS_NODEV = 4


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None) -> None:
    rc = _lib().mount(source.encode(), target.encode(),
                      fstype.encode() if fstype else None, ctypes.c_ulong(flags),
                      data.encode() if data else None)
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {target}: {os.strerror(err)}")


def hide_paths(hide: list[str], keep: list[str], stash: str) -> list[str]:
    """Cover each directory in ``hide`` with an empty tmpfs, re-exposing ``keep`` paths below.

    Runs as root inside a private mount namespace, before student code. Files are covered by
    bind-mounting ``/dev/null``. Also covers the first ancestor of each ``keep`` path that
    other users cannot traverse (``/root`` holding a pyenv interpreter), so the child can
    reach its interpreter after dropping privileges.

    Returns:
        the paths actually hidden.
    """
    keep = sorted({os.path.realpath(k) for k in keep if os.path.exists(k)})
    targets = {os.path.realpath(h) for h in hide if os.path.exists(h)}
    for k in keep:
        for anc in reversed(Path(k).parents):
            if str(anc) != "/" and not os.stat(anc).st_mode & 0o001:
                targets.add(str(anc))
                break
    done: list[str] = []
    for h in sorted(targets, key=len):
        if any(_under(h, d) for d in done) and not any(_under(k, h) for k in keep):
            continue  # already covered by a shallower tmpfs
        if os.path.isfile(h):
            _mount("/dev/null", h, None, MS_BIND, None)
            done.append(h)
            continue
        inner = [k for k in keep if _under(k, h)]
        inner = [k for k in inner if not any(o != k and _under(k, o) for o in inner)]
        moved = []
        for i, k in enumerate(inner):
            slot = os.path.join(stash, f"k{len(done)}_{i}")
            os.makedirs(slot, exist_ok=True)
            _mount(k, slot, None, MS_BIND | MS_REC, None)
            moved.append((slot, k))
        _mount("tmpfs", h, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0711,size=1m")
        for slot, k in moved:
            os.makedirs(k, mode=0o755, exist_ok=True)
            for anc in Path(k).parents:
                if _under(str(anc), h) and str(anc) != h:
                    os.chmod(anc, 0o711)
            _mount(slot, k, None, MS_MOVE, None)
        done.append(h)
    return done


def _under(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def set_rlimits(*, memory_mb: int, cpu_s: int, fsize_mb: int, nproc: int | None) -> None:
    """Hard rlimits for the sandbox (soft = hard, so student code cannot raise them)."""
    import resource  # noqa: PLC0415

    def lim(which: int, value: int) -> None:
        try:
            resource.setrlimit(which, (value, value))
        except (ValueError, OSError):
            soft, hard = resource.getrlimit(which)
            if hard == resource.RLIM_INFINITY or value < hard:
                resource.setrlimit(which, (min(value, hard) if hard >= 0 else value, hard))

    lim(resource.RLIMIT_AS, memory_mb * 1024 * 1024)
    lim(resource.RLIMIT_CPU, cpu_s)
    lim(resource.RLIMIT_FSIZE, fsize_mb * 1024 * 1024)
    lim(resource.RLIMIT_CORE, 0)
    lim(resource.RLIMIT_NOFILE, 256)
    if nproc is not None:
        lim(resource.RLIMIT_NPROC, nproc)


def drop_privileges(uid: int) -> None:
    """Become ``uid`` (gid = uid, no supplementary groups) for good, with no_new_privs."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    no_new_privs()


def no_new_privs() -> None:
    """prctl(PR_SET_NO_NEW_PRIVS): setuid binaries cannot give privileges back."""
    try:
        _lib().prctl(38, 1, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover
        pass


def become_subreaper() -> None:
    """prctl(PR_SET_CHILD_SUBREAPER): orphans of student processes re-parent to the child."""
    try:
        _lib().prctl(36, 1, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover
        pass


@dataclass
class NetBlock:
    """Python-level network block, used only when there is no network namespace."""

    blocked: list[str] = field(default_factory=list)

    def install(self) -> None:
        import socket  # noqa: PLC0415

        def refuse(*_a: object, **_k: object) -> None:
            raise OSError("network access is disabled while grading")

        for name in ("socket", "create_connection", "socketpair", "getaddrinfo", "fromfd"):
            if hasattr(socket, name):
                setattr(socket, name, refuse)
                self.blocked.append(name)
