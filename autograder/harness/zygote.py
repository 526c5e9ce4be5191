"""A fork server for the children of a mutation run: NumPy and the suite loaded once.

A sandboxed child spends most of a small mutant's cost before it runs anything of the
package: starting an interpreter, importing NumPy, loading the harness and the hidden suite
(about 100 ms of CPU, against some 35 ms to import the package and run the suite). A mutation
run starts one child per mutant, all with the same trusted part (suite, harness, no student
file), so :class:`Zygote` starts one process that loads that part once
(:class:`autograder.harness.child.Trusted`, exactly what a fresh child loads) and then forks
one child per launch. From the fork on, a child does what a fresh child does after its own
trusted imports (:func:`autograder.harness.child.serve`): the same namespaces, minimal root,
rlimits, seccomp filter, uid, package import, items and messages.

The forked child reproduces what the supervisor's command line gives a fresh child:
``start_new_session`` (``setsid``), the run's environment and working directory, stdin on
``/dev/null``, stdout and stderr on the raw-output pipe, the result pipe and the work pipe
(timed work's requests) as its only other file descriptors, and, with namespaces, what ``unshare --net --pid --fork --mount-proc
--kill-child --propagation private`` does: the launched process unshares the network, mount
and PID namespaces, blocks SIGINT and SIGTERM, forks the namespace's first process and waits
for it, ending the way it ended; that process dies with its parent (``PR_SET_PDEATHSIG``),
makes every mount private and mounts its own ``/proc``.

The supervisor watches, times and kills a forked child exactly like a launched one (its CPU
clock starts at the fork, so the import phase is not charged the 0.1 s of interpreter start
and NumPy import a fresh child spends before it; the limits are the same):
:class:`ZygoteChild` has what :mod:`autograder.harness.supervisor` and
:func:`autograder.harness.isolation.kill_tree` use of a ``Popen`` (``pid``, ``stdout``,
``poll``, ``wait``, ``kill``). The fork server does not reap a child until the supervisor
asks, so a pid the supervisor signals is never reused meanwhile (as with ``Popen``).

Only for trusted code: the forked children share the fork server's memory image, which holds
the jobs of earlier launches. Student grading keeps one fresh interpreter per run; a
:class:`RunSpec <autograder.harness.supervisor.RunSpec>` with a student file refuses a zygote.

Protocol on a Unix socket pair: each message is an 8-byte big-endian length and a JSON
object; a ``spawn`` request carries the raw-output and result pipes' write ends and the work
pipe's read end as ``SCM_RIGHTS`` with its first bytes. Requests are ``{"op": "spawn", "job", "env", "cwd",
"namespaces"}`` (answer ``{"pid"}`` or ``{"error"}``) and ``{"op": "wait", "pid"}`` (answer
``{"status"}``: None while it runs, else the exit code, negative for a signal, as
``Popen.returncode``). End of input ends the server.
"""

from __future__ import annotations

import ctypes
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ZYGOTE = Path(__file__).resolve()
RESULT_FD = 3  # the result pipe's number in a forked child
WORK_FD = 4  # the work pipe's (timed work's requests)
#: How long the grader waits for one answer of the fork server: a guard against a hang only
#: (an answer takes milliseconds; starting the server, loading NumPy, about a second).
ANSWER_TIMEOUT_S = 600.0
_HEADER = 8
_MAX_MESSAGE = 64 * 1024 * 1024

# unshare(2) and mount(2) flags
CLONE_NEWNS = 0x00020000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REC = 16384
MS_PRIVATE = 1 << 18
PR_SET_PDEATHSIG = 1


# ----------------------------------------------------------------------------- framing
def _send(sock: socket.socket, obj: dict[str, Any], fds: tuple[int, ...] = ()) -> None:
    body = json.dumps(obj, separators=(",", ":")).encode()
    head = len(body).to_bytes(_HEADER, "big")
    if fds:
        socket.send_fds(sock, [head], list(fds))
    else:
        sock.sendall(head)
    sock.sendall(body)


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    chunks = []
    while n:
        chunk = sock.recv(min(n, 1 << 20))
        if not chunk:
            raise EOFError("the fork server's socket closed")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _recv(sock: socket.socket, *, max_fds: int = 0) -> tuple[dict[str, Any], list[int]]:
    if max_fds:
        head, fds, _, _ = socket.recv_fds(sock, _HEADER, max_fds)
        if not head:
            raise EOFError("the fork server's socket closed")
        if len(head) < _HEADER:
            head += _recv_exact(sock, _HEADER - len(head))
    else:
        head, fds = _recv_exact(sock, _HEADER), []
    size = int.from_bytes(head, "big")
    if size > _MAX_MESSAGE:
        raise ValueError("fork server message too large")
    return json.loads(_recv_exact(sock, size).decode()), list(fds)


# ----------------------------------------------------------------------------- server side
def _status(code: int) -> int:
    """A wait status as ``Popen.returncode``: the exit code, or minus the signal."""
    return -os.WTERMSIG(code) if os.WIFSIGNALED(code) else os.waitstatus_to_exitcode(code)


def _fail(message: str) -> None:
    os.write(2, f"{message}\n".encode())
    os._exit(1)


def _libc_call(name: str, *args: Any) -> None:
    from autograder.harness import isolation  # noqa: PLC0415 - a script

    if getattr(isolation._lib(), name)(*args) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{name}: {os.strerror(err)}")


def _enter_namespaces() -> int | None:
    """What ``unshare --net --pid --fork --mount-proc --kill-child --propagation private``
    does before it runs its command. Returns None in the namespace's first process (which
    goes on to run the child) and never returns in the launched process."""
    try:
        _libc_call("unshare", ctypes.c_int(CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWNS))
    except OSError as exc:
        _fail(f"unshare failed: {exc}")
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    parent = os.pidfd_open(os.getpid())  # readable once the launched process has ended
    pid = os.fork()
    if pid:
        os.close(parent)
        while True:
            try:
                _, code = os.waitpid(pid, 0)
                break
            except ChildProcessError:
                _fail("child exit failed")
        if os.WIFEXITED(code):
            os._exit(os.WEXITSTATUS(code))
        sig = os.WTERMSIG(code)
        if sig != signal.SIGKILL:
            signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {sig})
        os.kill(os.getpid(), sig)
        _fail("child exit failed")
    signal.pthread_sigmask(signal.SIG_SETMASK, old)
    try:
        _libc_call("prctl", ctypes.c_int(PR_SET_PDEATHSIG), ctypes.c_ulong(signal.SIGKILL),
                   ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0))
        if select.select([parent], [], [], 0)[0]:  # it died before the prctl
            os._exit(1)
        os.close(parent)
        from autograder.harness.isolation import _mount  # noqa: PLC0415 - a script

        _mount("none", "/", None, MS_REC | MS_PRIVATE, None)
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NOEXEC | MS_NODEV, None)
    except OSError as exc:
        _fail(f"unshare: {exc}")
    return None


def _child(sock: socket.socket, req: dict[str, Any], raw_w: int, result_w: int, work_r: int,
           trusted: Any) -> None:
    """In the forked process: become what the supervisor's command line would have made,
    then serve the job. Never returns."""
    try:
        fd = sock.detach()  # the object must not close a reused number later
        os.setsid()
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(raw_w, 1)
        os.dup2(raw_w, 2)
        work_r = os.dup(work_r) if work_r == RESULT_FD else work_r
        os.dup2(result_w, RESULT_FD)
        os.dup2(work_r, WORK_FD)
        for n in {null, raw_w, result_w, work_r, fd} - {0, 1, 2, RESULT_FD, WORK_FD}:
            os.close(n)
        os.closerange(WORK_FD + 1, os.sysconf("SC_OPEN_MAX"))
        os.set_inheritable(RESULT_FD, True)
        os.set_inheritable(WORK_FD, True)
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 - input() sees EOF
        os.environ.clear()
        os.environ.update(req["env"])
        os.chdir(req["cwd"])
        if req["namespaces"]:
            _enter_namespaces()
        from autograder.harness.child import serve  # noqa: PLC0415 - a script

        job = req["job"]
        job["result_fd"] = RESULT_FD
        job["work_fd"] = WORK_FD
        del req
        serve(job, trusted)
    except BaseException as exc:  # noqa: BLE001 - never back into the server loop
        try:
            os.write(2, f"fork server child: {type(exc).__name__}: {exc}\n".encode())
        finally:
            os._exit(70)
    os._exit(70)


def serve_forks(control_fd: int, warm: dict[str, Any]) -> None:
    """The fork server's loop (in the zygote process): one request at a time."""
    sys.path[:0] = [warm["harness_root"]]  # as a fresh child's load_trusted puts it
    from autograder.harness.child import Trusted  # noqa: PLC0415 - a script

    trusted = Trusted(warm)
    sock = socket.socket(fileno=control_fd)
    _send(sock, {"ready": True})
    while True:
        try:
            req, fds = _recv(sock, max_fds=3)
        except (EOFError, ConnectionError):
            os._exit(0)
        if req.get("op") == "wait":
            for n in fds:
                os.close(n)
            try:
                pid, code = os.waitpid(int(req["pid"]), os.WNOHANG)
                status = _status(code) if pid else None
            except ChildProcessError:
                status = -signal.SIGKILL  # not ours (never happens): reported as gone
            _send(sock, {"status": status})
            continue
        if req.get("op") != "spawn" or len(fds) != 3:
            for n in fds:
                os.close(n)
            _send(sock, {"error": "bad request"})
            continue
        raw_w, result_w, work_r = fds
        pid = os.fork()
        if pid == 0:
            _child(sock, req, raw_w, result_w, work_r, trusted)
        os.close(raw_w)
        os.close(result_w)
        os.close(work_r)
        _send(sock, {"pid": pid})


def main() -> None:
    """The zygote process: the warm job on stdin (its trusted part and the socket's fd)."""
    warm = json.loads(sys.stdin.buffer.read().decode())
    sys.stdin.close()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    serve_forks(int(warm["control_fd"]), warm)


# ----------------------------------------------------------------------------- client side
class ZygoteChild:
    """A forked child as the supervisor sees it: the part of ``Popen`` it uses."""

    stdin = None

    def __init__(self, zygote: Zygote, pid: int, stdout: Any) -> None:
        self._zygote = zygote
        self.pid = pid
        self.stdout = stdout
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self._zygote._wait_once(self.pid)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        end = None if timeout is None else time.monotonic() + timeout
        delay = 0.001
        while self.poll() is None:
            if end is not None and time.monotonic() >= end:
                raise subprocess.TimeoutExpired(f"fork server child {self.pid}", timeout or 0)
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
        assert self.returncode is not None
        return self.returncode

    def kill(self) -> None:
        """SIGKILL, unless already reaped (its pid could then be another process's)."""
        if self.returncode is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


class Zygote:
    """The grader's handle on one fork server (for one suite and harness).

    ``Zygote(warm)`` starts it with the trusted part of the jobs it will serve (the fields
    :data:`autograder.harness.child.TRUSTED_FIELDS`); :meth:`launch` forks a child for one
    job whose trusted part is the same; :meth:`close` (or ``with``) stops it. Thread-safe:
    one request and its answer at a time.
    """

    def __init__(self, warm: dict[str, Any], *, env: dict[str, str]) -> None:
        from autograder.harness import isolation  # noqa: PLC0415 - a script too
        from autograder.harness.child import TRUSTED_FIELDS  # noqa: PLC0415 - a script too

        self.trusted = {k: warm.get(k) for k in TRUSTED_FIELDS}
        self._lock = threading.Lock()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.proc = isolation.spawn_tracked(
                [sys.executable, "-I", "-B", str(ZYGOTE)], stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),), cwd="/", env=env, start_new_session=True)
        finally:
            fileno = theirs.fileno()
            theirs.close()
        self._sock = ours
        ours.settimeout(ANSWER_TIMEOUT_S)
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({**self.trusted, "control_fd": fileno}).encode())
        self.proc.stdin.close()
        try:
            ready, _ = _recv(self._sock)
        except (EOFError, OSError, ValueError) as exc:  # (a timeout is an OSError)
            self.close()
            raise RuntimeError("the mutation fork server did not start "
                               f"(exit code {self.proc.poll()})") from exc
        if not ready.get("ready"):
            self.close()
            raise RuntimeError("the mutation fork server did not start")

    def __enter__(self) -> Zygote:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _ask(self, req: dict[str, Any], fds: tuple[int, ...] = ()) -> dict[str, Any]:
        with self._lock:
            try:
                _send(self._sock, req, fds)
                return _recv(self._sock)[0]
            except (EOFError, ConnectionError, OSError) as exc:
                raise RuntimeError(f"the mutation fork server stopped answering ({exc})"
                                   ) from exc

    def _wait_once(self, pid: int) -> int | None:
        status = self._ask({"op": "wait", "pid": pid})["status"]
        return None if status is None else int(status)

    def launch(self, job: dict[str, Any], *, env: dict[str, str], cwd: str,
               namespaces: bool) -> ZygoteChild:
        """Fork a child for ``job`` (whose ``result_fd`` is the result pipe's write end
        here, ``work_fd`` the work pipe's read end); it is registered like a spawned process
        (``isolation.spawn_tracked``)."""
        from autograder.harness import isolation  # noqa: PLC0415 - a script too

        for k, v in self.trusted.items():
            if job.get(k) != v:
                raise ValueError(f"a job with another {k} than the fork server's")
        raw_r, raw_w = os.pipe()
        result_w = int(job["result_fd"])
        work_r = int(job["work_fd"])
        per_launch = {k: v for k, v in job.items() if k not in self.trusted}
        try:
            with isolation.SPAWN_LOCK:
                if isolation.ABORT.is_set():
                    raise isolation.Aborted("grading was interrupted: no new process is started")
                answer = self._ask({"op": "spawn", "job": per_launch, "env": env, "cwd": cwd,
                                    "namespaces": namespaces}, (raw_w, result_w, work_r))
                if "pid" not in answer:
                    raise RuntimeError(f"the mutation fork server refused: {answer}")
                pid = int(answer["pid"])
                isolation.track(pid, group=True)
        except BaseException:
            os.close(raw_r)
            raise
        finally:
            os.close(raw_w)
        return ZygoteChild(self, pid, os.fdopen(raw_r, "rb"))

    def close(self) -> None:
        """Stop the server (its children are the supervisor's to kill, and were)."""
        try:
            self._sock.close()
        finally:
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            from autograder.harness import isolation  # noqa: PLC0415 - a script too

            isolation.untrack(self.proc.pid)


if __name__ == "__main__":
    main()
