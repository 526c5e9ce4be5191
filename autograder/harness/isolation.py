"""Isolation primitives: what this machine offers, how the child is launched, how it is killed.

The parent asks :func:`plan` once. It tries, in order of strength:

* ``unshare --net --pid --fork --mount-proc --kill-child`` (root only): no network, a PID
  namespace whose death kills every process inside (``setsid`` escapers included), and a
  private mount namespace in which the child builds a **minimal root**
  (:func:`enter_minimal_root`): read-only binds of the system libraries, the interpreter and
  its standard library, NumPy (no other installed package), the package under test, and one
  private size-capped tmpfs for everything writable (``/tmp``, ``/var/tmp``, ``/dev/shm``, the
  working directory), then ``pivot_root``: nothing else of the host exists for it;
* a per-run unprivileged uid (root only) that owns nothing, so ``RLIMIT_NPROC`` bounds a fork
  bomb and ``kill(-1)`` as that uid sweeps every leftover process. Student code never runs as
  root: without namespaces the uid can only be dropped when other users can run the
  interpreter, and when they cannot, the plan *refuses* (a course-side error saying how to fix
  the image) rather than run student code as root;
* always: rlimits (address space, CPU, file size, open files, no core dumps), a new session
  and process group killed with ``SIGKILL``, a descendant sweep through ``/proc``, a scratch
  working directory, and a seccomp filter that makes ``socket()`` fail (it holds for
  ``_socket`` and C code too, with or without a network namespace).

``TT_GRADER_ISOLATION=full|basic`` forces a level (``basic`` = no namespaces: the fallback),
which the tests use to exercise the fallback on a machine that has everything.
The child-side helpers (:func:`enter_minimal_root`, :func:`drop_privileges`,
:func:`block_sockets`, ...) run inside the sandbox before any student code is imported.
"""

from __future__ import annotations

import ctypes
import itertools
import os
import platform
import shutil
import signal
import site
import stat
import struct
import subprocess
import sys
import sysconfig
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from autograder.harness import lifeline
from autograder.harness.clock import proc_text, stat_fields

UID_BASE = 2_000_000  # per-run uids come from [UID_BASE, UID_BASE + UID_SPAN): no passwd entry
UID_SPAN = 1 << 28
UID_SLOTS = 64  # uids per grading process before they repeat (more than its concurrent runs)
#: Size of the sandbox's one writable tmpfs (cwd, /tmp, /var/tmp, /dev/shm together), MiB.
SCRATCH_MB = 64


@dataclass(frozen=True)
class Plan:
    """The isolation this machine offers for one run.

    ``refuse`` is set when student code cannot run safely here (it would run as root); the
    harness then writes a course-side error instead of starting the child.
    """

    namespaces: bool
    drop_uid: bool
    root: bool
    notes: tuple[str, ...] = ()
    refuse: str | None = None

    def methods(self) -> list[str]:
        """Short names of the mechanisms in force, for results.json ``extra_data.isolation``."""
        out = ["child-process", "rlimits", "process-group-kill", "seccomp-no-sockets"]
        if self.namespaces:
            out += ["pid-namespace", "net-namespace", "mount-namespace", "minimal-root",
                    "private-tmp"]
        else:
            out += ["session-sweep", "scratch-cwd", "tmp-sweep"]
        if self.drop_uid:
            out += ["per-run-uid", "rlimit-nproc"]
        return out + list(self.notes)


_PLAN_CACHE: dict[str, Plan] = {}
_PLAN_LOCK = threading.Lock()


def plan() -> Plan:
    """Probe (once per process and level) which isolation primitives work here."""
    level = os.environ.get("TT_GRADER_ISOLATION", "full").strip().lower()
    with _PLAN_LOCK:
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
    p = _plan_for(root=root, namespaces=ns)
    with _PLAN_LOCK:
        return _PLAN_CACHE.setdefault(level, p)


def _plan_for(*, root: bool, namespaces: bool, notes: tuple[str, ...] = ()) -> Plan:
    if not root:
        # Not root: the child runs as the grading user (never root); no uid to drop to.
        return Plan(namespaces=False, drop_uid=False, root=False, notes=notes)
    if namespaces:
        # The minimal root binds the interpreter in, so an unprivileged uid can always run it.
        return Plan(namespaces=True, drop_uid=True, root=True, notes=notes)
    blocked = interpreter_blocker()
    if blocked is not None:
        return Plan(namespaces=False, drop_uid=False, root=True, notes=notes, refuse=(
            "student code would run as root: namespaces are not available here and the "
            f"Python interpreter is not readable by other users ({blocked} is not "
            "world-readable/traversable). Fix the image: install Python and NumPy "
            "system-wide (the Gradescope setup.sh does: apt python3 + pip into "
            "/usr/local), or make the interpreter's folders readable by other users "
            "(chmod o+rx), or allow unshare (user/mount/PID/network namespaces)"))
    return Plan(namespaces=False, drop_uid=True, root=True, notes=notes)


def downgrade(reason: str) -> Plan:
    """The minimal root failed in the child: use the no-namespace fallback from now on."""
    level = os.environ.get("TT_GRADER_ISOLATION", "full").strip().lower()
    with _PLAN_LOCK:
        old = _PLAN_CACHE.get(level)
    p = _plan_for(root=os.geteuid() == 0, namespaces=False,
                  notes=((old.notes if old else ()) + (f"minimal-root-failed:{reason[:120]}",)))
    with _PLAN_LOCK:
        _PLAN_CACHE[level] = p
    return p


def interpreter_blocker() -> str | None:
    """The first path that keeps other users from running this interpreter, or None."""
    cfg = os.path.join(sys.prefix, "pyvenv.cfg")
    needs = [(p, 0o005 if os.path.isdir(p) else 0o001) for p in python_paths()]
    if os.path.isfile(cfg):
        needs.append((cfg, 0o004))  # a venv's interpreter reads it at start-up
    for p, need in needs:
        bad = _first_blocked(Path(p), need)
        if bad is not None:
            return bad
    return None


def _first_blocked(path: Path, need: int) -> str | None:
    """The first ancestor other users cannot traverse, or ``path`` if they lack ``need``."""
    p = path.resolve()
    for anc in [*reversed(p.parents), p]:
        try:
            mode = os.stat(anc).st_mode
        except OSError:
            return str(anc)
        if anc != p and not mode & 0o001:
            return str(anc)
        if anc == p and (mode & need) != need:
            return str(anc)
    return None


def python_paths() -> list[str]:
    """The interpreter, its standard library and NumPy: what the sandbox must be able to run."""
    import numpy  # noqa: PLC0415 - wherever NumPy lives must stay reachable

    paths = {os.path.realpath(sys.executable), _stdlib(), _dynload(),
             str(Path(numpy.__file__).resolve().parent)}
    return sorted(p for p in paths if p and os.path.exists(p))


def _stdlib() -> str:
    return os.path.realpath(sysconfig.get_paths()["stdlib"])


def _dynload() -> str:
    """The folder of the standard library's extension modules (``lib-dynload``)."""
    d = sysconfig.get_config_var("DESTSHARED") or ""
    if not os.path.isdir(d):
        d = next((p for p in sys.path if p.rstrip("/").endswith("lib-dynload")), "")
    return os.path.realpath(d) if d and os.path.isdir(d) else ""


# ----------------------------------------------------------------------------- minimal root
#: System folders bound read-only into the minimal root (symlinks are recreated as symlinks).
SYSTEM_DIRS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/usr/bin", "/usr/sbin",
               "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libx32", "/usr/libexec")
SYSTEM_FILES = ("/etc/ld.so.cache",)


def root_layout(package_parent: Path, new_root: Path) -> dict[str, Any]:
    """What :func:`enter_minimal_root` builds, computed in the parent (same interpreter).

    Returns a JSON-able dict: ``dir`` (an empty folder to mount the new root on), ``ro``
    (folders and files bound read-only), ``links`` (symlinks to recreate), ``masks`` (package
    folders of the interpreter covered by an empty directory), ``expose`` (NumPy's folders,
    bound back inside a mask), ``package`` (the package under test, read-only) and
    ``scratch_mb``.
    """
    import numpy  # noqa: PLC0415

    ro: list[str] = []
    links: dict[str, str] = {}
    for d in SYSTEM_DIRS:
        if os.path.islink(d):
            links[d] = os.readlink(d)
        elif os.path.isdir(d):
            ro.append(d)
    ro += [f for f in SYSTEM_FILES if os.path.isfile(f)]
    # the interpreter: every symlink on the way from sys.executable to the binary, the binary,
    # libpython, the standard library (with lib-dynload) and a venv's pyvenv.cfg
    exe = sys.executable
    for _ in range(40):
        if not os.path.islink(exe):
            break
        target = os.readlink(exe)
        links[exe] = target
        exe = os.path.normpath(os.path.join(os.path.dirname(exe), target))
    ro.append(os.path.realpath(exe))
    libdir = sysconfig.get_config_var("LIBDIR") or ""
    if libdir and os.path.isdir(libdir):
        ro += [os.path.join(libdir, f) for f in sorted(os.listdir(libdir))
               if f.startswith("libpython") and os.path.isfile(os.path.join(libdir, f))]
    ro += [p for p in (_stdlib(), _dynload()) if p]
    cfg = os.path.join(sys.prefix, "pyvenv.cfg")
    if os.path.isfile(cfg):
        ro.append(cfg)
    # every package folder the interpreter could import from is masked; NumPy comes back
    masks = sorted({os.path.realpath(p) for p in _site_dirs() if os.path.isdir(p)})
    np_dir = str(Path(numpy.__file__).resolve().parent)
    expose = [np_dir] + [p for p in (np_dir + ".libs",) if os.path.isdir(p)]
    return {"dir": str(new_root), "ro": _dedupe(ro), "links": links, "masks": masks,
            "expose": expose, "package": str(package_parent), "scratch_mb": SCRATCH_MB}


def _site_dirs() -> list[str]:
    dirs = list(site.getsitepackages())
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}:
        try:
            dirs += site.getsitepackages([prefix])
        except (AttributeError, TypeError):  # pragma: no cover - old virtualenv
            pass
    for key in ("purelib", "platlib"):
        dirs.append(sysconfig.get_paths()[key])
        dirs.append(sysconfig.get_paths(vars={"base": sys.base_prefix,
                                              "platbase": sys.base_exec_prefix})[key])
    std = _stdlib()
    for name in ("site-packages", "dist-packages"):
        dirs.append(os.path.join(std, name))
    return dirs


def _dedupe(paths: list[str]) -> list[str]:
    """Drop paths that are inside another path of the list (they are bound with it)."""
    real = sorted({os.path.realpath(p) for p in paths if os.path.exists(p)}, key=len)
    out: list[str] = []
    for p in real:
        if not any(_under(p, q) for q in out):
            out.append(p)
    return out


def launch_prefix(p: Plan) -> list[str]:
    """The command prefix that puts the child in namespaces (empty without them)."""
    if not p.namespaces:
        return []
    return ["unshare", "--net", "--pid", "--fork", "--mount-proc", "--kill-child",
            "--propagation", "private", "--"]


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
    if uid not in USED_UIDS:
        lifeline.watch_uid(uid)
    USED_UIDS.append(uid)
    return uid


# ----------------------------------------------------------------------------- killing
class Killable(Protocol):
    """What :func:`kill_tree` uses of a child: a ``Popen``, or a fork server's child
    (:class:`autograder.harness.zygote.ZygoteChild`)."""

    pid: int

    def kill(self) -> None: ...

    def wait(self, timeout: float | None = None) -> int: ...


def kill_tree(proc: Killable, *, uid: int | None) -> None:
    """Kill the child and everything it started; returns when the child is reaped.

    Order: freeze descendants (SIGSTOP, so a fork bomb stops growing), SIGKILL the process
    group and the descendants found through ``/proc``, then, with a per-run uid,
    ``kill(-1, SIGKILL)`` as that uid, which reaches every process the uid owns. Zombies
    (processes that have already exited and wait to be reaped) are not looked for: they can
    no longer run or fork, and a killed tree is full of them until its parents reap them.
    """
    pid = proc.pid
    for _ in range(3):
        # Freeze first, until the set of descendants stops growing: a stopped process cannot
        # fork, and orphans keep re-parenting to the (stopped, still alive) child.
        _signal(pid, signal.SIGSTOP)
        desc: list[int] = []
        for _ in range(20):
            found = descendants(pid, live=True)
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
        if not descendants(pid, live=True):
            break
    try:
        proc.kill()
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:  # pragma: no cover - a D-state process
        pass
    untrack(proc.pid)
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
    st = _stat_state(pid)
    return st is None or st[0] == "Z"


_LIVE: set[int] = set()  # children this process launched and has not reaped yet
_GROUPS: set[int] = set()  # those of them that lead a group the reaper watches
_SUBREAPER = False
# Held while a child is spawned and registered, and while orphans are swept: with several
# gradings in one process (tito regrade --jobs N), a sweep must never mistake another run's
# just-spawned child for an adopted orphan and kill it.
SPAWN_LOCK = threading.RLock()


def spawn_tracked(cmd: list[str], **kwargs: object) -> subprocess.Popen[bytes]:
    """``subprocess.Popen`` whose pid is registered before any orphan sweep can see it (and,
    when it leads a new session, with the reaper that outlives a killed grader:
    :mod:`autograder.harness.lifeline`)."""
    with SPAWN_LOCK:
        if ABORT.is_set():
            raise Aborted("grading was interrupted: no new process is started")
        proc: subprocess.Popen[bytes] = subprocess.Popen(cmd, **kwargs)  # type: ignore[call-overload]
        track(proc.pid, group=bool(kwargs.get("start_new_session")))
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
        untrack(proc.pid)


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


def track(pid: int, *, group: bool = False) -> None:
    """Register a child this process launched; ``group``: it leads its own process group,
    which the reaper kills if this process dies first."""
    _LIVE.add(pid)
    if group:
        _GROUPS.add(pid)
        lifeline.watch_group(pid)


def untrack(pid: int) -> None:
    """The child ``pid`` has been reaped (or is being): forget it everywhere (the reaper only
    hears of the groups it was told to watch)."""
    _LIVE.discard(pid)
    if pid in _GROUPS:
        _GROUPS.discard(pid)
        lifeline.forget_group(pid)


def _adopted() -> list[int]:
    """Processes re-parented to this grader that it did not launch itself."""
    if not _SUBREAPER:
        return []
    me = os.getpid()
    out = []
    for pid in _proc_entries():
        st = _stat(pid)
        if st is not None and st[0] == me and pid not in _LIVE and pid not in lifeline.REAPERS:
            out.append(pid)
    return out


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


#: ``kill(1)`` (procps or util-linux): ``kill -9 -1`` run as a uid is the first helper of
#: :func:`kill_uid` where it exists, a tenth of a Python interpreter's start (three per run).
KILL_COMMAND = next((p for p in ("/bin/kill", "/usr/bin/kill") if os.access(p, os.X_OK)), None)
#: The POSIX shell, whose built-in ``kill -9 -1`` is the helper where kill(1) is missing or
#: leaves a process alive. Both are files any uid may run; an interpreter need not be (a
#: virtual environment's ``python`` may link into root's private home).
SHELL = "/bin/sh"


def kill_uid(uid: int) -> None:
    """SIGKILL every process owned by ``uid`` (root only): ``kill(-1)`` run as that uid
    (``kill -9 -1``: kill(1), else the shell's built-in; three tries while one is left).
    Linux never sends ``kill(-1)`` to the caller itself, so the helper sees the job through.

    When ``/proc`` shows no live process of ``uid`` no helper is started: ``kill(-1)`` as the
    uid would reach nothing, and only a live process of the uid (which the scan sees) could
    start another. A run sweeps its uid about three times per child (:func:`kill_tree`, the
    run's end), most of them after the first found it empty: a helper is a fork of the grader
    and an exec, about 3 ms of CPU each, a tenth of a mutant's run."""
    if os.geteuid() != 0 or not processes_of_uid(uid):
        return
    shell = [SHELL, "-c", "kill -9 -1"]
    helpers = [[KILL_COMMAND, "-9", "-1"], shell, shell] if KILL_COMMAND else [shell] * 3
    for cmd in helpers:
        try:
            run_tracked(cmd, user=uid, group=uid,
                        extra_groups=[], timeout=10, stdin=subprocess.DEVNULL,
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/")
        except (OSError, subprocess.SubprocessError):
            continue  # this helper could not run: the next one
        if not processes_of_uid(uid):
            return
        time.sleep(0.05)


def processes_of_uid(uid: int) -> list[int]:
    """Live (non-zombie) processes whose real uid is ``uid``."""
    out = []
    for entry in _proc_entries():
        try:
            status = proc_text(f"/proc/{entry}/status")
        except OSError:
            continue
        # the two fields only (this scan runs a few times per run, over every process): a
        # name with a newline is escaped in ``status``, so a line starts where a field does
        uids = _status_field(status, "Uid").split()
        if uids and int(uids[0]) == uid and _status_field(status, "State")[:1] != "Z":
            out.append(entry)
    return out


def _status_field(status: str, name: str) -> str:
    """One field of a ``/proc/<pid>/status`` text, stripped ("" when absent)."""
    at = status.find(f"\n{name}:")
    if at < 0:
        return ""
    start = at + len(name) + 2
    end = status.find("\n", start)
    return status[start:end if end >= 0 else len(status)].strip()


def _proc_entries() -> list[int]:
    try:
        return [int(n) for n in os.listdir("/proc") if n.isdigit()]
    except OSError:  # pragma: no cover
        return []


def _stat(pid: int) -> tuple[int, int, int] | None:
    """(ppid, pgid, session) of a process, or None when it is gone."""
    st = _stat_state(pid)
    return None if st is None else st[1:]


def _stat_state(pid: int) -> tuple[str, int, int, int] | None:
    """(state, ppid, pgid, session) of a process, or None when it is gone."""
    rest = stat_fields(f"/proc/{pid}/stat")
    if rest is None:
        return None
    return rest[0], int(rest[1]), int(rest[2]), int(rest[3])


def descendants(root_pid: int, *, live: bool = False) -> list[int]:
    """Processes below ``root_pid`` (by parent links) or in its process group or session.

    Orphans re-parented to the child (it declares itself a child subreaper) are found by
    parent links even after ``setsid``. ``live``: without zombies (exited, not yet reaped;
    an exiting process hands its children to a reaper first, so no live one is lost).
    """
    table = {}
    for pid in _proc_entries():
        st = _stat_state(pid)
        if st is not None and not (live and st[0] == "Z"):
            table[pid] = st[1:]
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
    """The C library's functions: the symbols already loaded in this process (``dlopen(NULL)``,
    which Python's own libc is among), not ``ctypes.util.find_library("c")``, which runs
    ``ldconfig -p`` in a subprocess in every sandboxed child (about 1 ms of CPU a child)."""
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MNT_DETACH = 2
_PIVOT_ROOT_NR = {"x86_64": 155, "amd64": 155, "aarch64": 41, "arm64": 41, "riscv64": 41,
                  "ppc64le": 203, "ppc64": 203, "s390x": 217}


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None) -> None:
    rc = _lib().mount(source.encode(), target.encode(),
                      fstype.encode() if fstype else None, ctypes.c_ulong(flags),
                      data.encode() if data else None)
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {target}: {os.strerror(err)}")


def _umount(target: str) -> None:
    if _lib().umount2(target.encode(), MNT_DETACH) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"umount {target}: {os.strerror(err)}")


def _pivot_root_here() -> None:
    """``pivot_root(".", ".")`` then detach the old root stacked on top (as runc does)."""
    nr = _PIVOT_ROOT_NR.get(platform.machine().lower())
    if nr is None:
        raise OSError(0, f"pivot_root: unknown architecture {platform.machine()}")
    if _lib().syscall(ctypes.c_long(nr), b".", b".") != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"pivot_root: {os.strerror(err)}")
    _umount(".")


def enter_minimal_root(layout: dict[str, Any]) -> str:
    """Build the minimal root described by :func:`root_layout` and ``pivot_root`` into it.

    Runs as root in the child's private mount namespace, after every trusted file is loaded
    and before any student code. Afterwards the process sees only: ``/usr/bin``, ``/usr/lib``
    and friends (read-only), the interpreter and its standard library (read-only), NumPy and
    no other installed package, the package under test (read-only, at its usual path),
    ``/proc`` of its PID namespace, a few ``/dev`` nodes, and one private tmpfs of
    ``scratch_mb`` MiB behind ``/tmp``, ``/var/tmp`` and ``/dev/shm``. The old root is
    detached: nothing else of the host is reachable by any path.

    Returns:
        the working directory to use (``/tmp``).
    """
    new = layout["dir"]
    ro_flags = MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV

    def inside(path: str) -> str:
        return os.path.join(new, path.lstrip("/"))

    def mount_point(dst: str, is_dir: bool) -> None:
        if is_dir:
            os.makedirs(dst, mode=0o755, exist_ok=True)
        elif not os.path.exists(dst):
            os.makedirs(os.path.dirname(dst), mode=0o755, exist_ok=True)
            with open(dst, "a", encoding="utf-8"):
                pass

    def bind(src: str, *, ro: bool = True, dst: str | None = None) -> None:
        target = dst or inside(src)
        mount_point(target, os.path.isdir(src))
        _mount(src, target, None, MS_BIND | MS_REC, None)
        if ro:
            _mount("none", target, None, ro_flags, None)

    _mount("tmpfs", new, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=2m")
    # one private, capped tmpfs for everything writable (first: later binds may lie below it)
    box = inside("/.box")
    os.makedirs(box, mode=0o700)
    _mount("tmpfs", box, "tmpfs", MS_NOSUID | MS_NODEV,
           f"mode=0755,size={int(layout['scratch_mb'])}m")
    for sub, where in (("tmp", "/tmp"), ("var-tmp", "/var/tmp"), ("shm", "/dev/shm")):
        os.makedirs(os.path.join(box, sub))
        os.chmod(os.path.join(box, sub), 0o1777)
        bind(os.path.join(box, sub), ro=False, dst=inside(where))
    for path in layout["ro"]:
        bind(path)
    for link, target in layout["links"].items():
        where = inside(link)
        if not os.path.lexists(where):
            os.makedirs(os.path.dirname(where), mode=0o755, exist_ok=True)
            os.symlink(target, where)
    # installed packages: every site folder empty, NumPy bound back in
    masks = layout["masks"]
    for m in masks:
        where = inside(m)
        if os.path.isdir(where):
            _mount("tmpfs", where, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
        else:
            os.makedirs(where, mode=0o755, exist_ok=True)
    for path in layout["expose"]:
        bind(path)
    for m in masks:
        if os.path.ismount(inside(m)):
            _mount("none", inside(m), None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV,
                   None)
    bind(layout["package"])
    # devices and /proc (already the PID namespace's own, mounted by unshare --mount-proc)
    for name in ("null", "zero", "full", "random", "urandom"):
        if os.path.exists(f"/dev/{name}"):
            target = inside(f"/dev/{name}")
            mount_point(target, False)
            _mount(f"/dev/{name}", target, None, MS_BIND, None)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        os.symlink(target, inside(f"/dev/{name}"))
    os.makedirs(inside("/proc"), mode=0o555, exist_ok=True)
    _mount("/proc", inside("/proc"), None, MS_BIND | MS_REC, None)
    os.chdir(new)
    _pivot_root_here()
    os.chdir("/")
    _umount("/.box")
    os.rmdir("/.box")
    _mount("none", "/", None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, None)
    return "/tmp"


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


def die_with_parent(result_fd: int) -> None:
    """prctl(PR_SET_PDEATHSIG, SIGKILL), again after a uid change cleared it, then exit at
    once if the grader is already gone (the result pipe's read end closed: POLLERR)."""
    import select  # noqa: PLC0415

    try:
        _lib().prctl(1, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover
        pass
    poller = select.poll()
    poller.register(result_fd, 0)
    if any(ev & (select.POLLERR | select.POLLHUP | select.POLLNVAL)
           for _, ev in poller.poll(0)):
        os._exit(3)


def become_subreaper() -> None:
    """prctl(PR_SET_CHILD_SUBREAPER): orphans of student processes re-parent to the child."""
    try:
        _lib().prctl(36, 1, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover
        pass


# seccomp: socket() fails for everything the sandbox starts (BPF, see seccomp(2))
_AUDIT_ARCH = {"x86_64": 0xC000003E, "amd64": 0xC000003E, "aarch64": 0xC00000B7,
               "arm64": 0xC00000B7}
_NR_SOCKET = {"x86_64": 41, "amd64": 41, "aarch64": 198, "arm64": 198}
_NR_IO_URING_SETUP = 425  # io_uring can open sockets without socket(2)
_X32_BIT = 0x40000000
_RET_ALLOW = 0x7FFF0000
_RET_EACCES = 0x00050000 | 13


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _bpf(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def block_sockets() -> bool:
    """Install a seccomp filter: ``socket()`` and ``io_uring_setup()`` fail with EACCES.

    Unlike patching Python's ``socket`` module (``_socket``, ctypes or a subprocess get
    through), a seccomp filter is enforced by the kernel for this process and everything it
    starts, and cannot be removed. ``socketpair`` (local pairs, used by some libraries)
    stays allowed. Needs no privileges (sets ``no_new_privs``).

    Returns:
        True when the filter is in force, False on an architecture or kernel without it.
    """
    machine = platform.machine().lower()
    if machine not in _AUDIT_ARCH:
        return False
    ld_abs, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    prog = [_bpf(ld_abs, 4),                              # A = arch
            _bpf(jeq, _AUDIT_ARCH[machine], 1, 0),        # native ABI: skip the refusal
            _bpf(ret, _RET_EACCES),                       # any other ABI: nothing at all
            _bpf(ld_abs, 0)]                              # A = syscall number
    if _AUDIT_ARCH[machine] == 0xC000003E:
        prog += [_bpf(jge, _X32_BIT, 0, 1), _bpf(ret, _RET_EACCES)]  # x32 ABI
    prog += [_bpf(jeq, _NR_SOCKET[machine], 0, 1), _bpf(ret, _RET_EACCES),
             _bpf(jeq, _NR_IO_URING_SETUP, 0, 1), _bpf(ret, _RET_EACCES),
             _bpf(ret, _RET_ALLOW)]
    code = b"".join(prog)
    buf = ctypes.create_string_buffer(code, len(code))
    fprog = _SockFprog(len(prog), ctypes.cast(buf, ctypes.c_void_p))
    no_new_privs()
    rc = _lib().prctl(22, 2, ctypes.byref(fprog), 0, 0)  # PR_SET_SECCOMP, MODE_FILTER
    return rc == 0


# ----------------------------------------------------------------------------- fallback sweep
TMP_DIRS = ("/tmp", "/var/tmp", "/dev/shm")


def sweep_uid_files(uid: int, roots: tuple[str, ...] = TMP_DIRS) -> list[str]:
    """Delete what ``uid`` left in the shared temporary folders (fallback mode, root only).

    Without a mount namespace the sandbox writes to the host's ``/tmp``, ``/var/tmp`` and
    ``/dev/shm``; its uid is fresh, so everything it owns there is its own. Returns what was
    removed (top-level entries).
    """
    removed: list[str] = []
    if os.geteuid() != 0:
        return removed
    for root in roots:
        try:
            entries = list(os.scandir(root))
        except OSError:
            continue
        for e in entries:
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if st.st_uid != uid:
                continue
            try:
                if stat.S_ISDIR(st.st_mode):
                    shutil.rmtree(e.path, ignore_errors=True)
                else:
                    os.unlink(e.path)
                removed.append(e.path)
            except OSError:
                pass
    return removed
