"""``tito regrade --scheduler``: the same regrade on a Dask distributed cluster.

Each submission is one task, :func:`staff.regrade.task.grade_payload`, which grades it on
a worker with that worker's own harness (sandboxed child, trusted parent), exactly as the local
threads do. What travels:

* parent -> scheduler -> worker: the task's plain data (the module's course facts and limits,
  the fingerprint of the grading files, the submission's files, and its
  ``submission_metadata.json`` with the submitters' names, SIDs and emails);
* worker -> scheduler -> parent: the results.json as JSON data (plus the grading time and the
  worker's name), or a one-line course-side error.

The parent keeps everything else (the export, the other records, the output folder, the
gradebook) and writes every file itself. A worker whose grading files or course facts differ
from the parent's refuses the task; the submission is then reported as not graded.

Only the TA can reach the cluster (a Dask scheduler runs whatever a connected client sends it,
as the user it runs as: root, on a grading server):

* ``local:N`` starts a cluster whose scheduler, nannies and workers listen on 127.0.0.1 only,
  speak **TLS with mutual authentication** (``distributed.security.Security.temporary()``: a
  key and self-signed certificate made for this run, kept in memory, never written where
  another user can read them), and serve **no HTTP** (:mod:`staff.regrade.dask_nodes`).
  Another local user can open a TCP connection, and nothing more: without the run's
  certificate the TLS handshake fails.
* A scheduler address (``tls://host:8786``) needs TLS credentials, a CA, a certificate and
  its key (``--tls-ca-file``, ``--tls-cert``, ``--tls-key``, or Dask's
  ``distributed.comm.tls`` configuration). A plain address (``tcp://``, ``ws://``, ``ucx://``
  or none) is refused unless the TA passes ``--insecure``. docs/regrade.md says how to make
  the credentials.

Dask is an optional dependency (``pip install .[dask]``, pinned in pyproject.toml).
"""

from __future__ import annotations

import logging
import re
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from staff.regrade.core import RegradeError

_LOCAL = re.compile(r"^local:(\d+)$")
_ADDRESS = re.compile(r"^(?:(?:tcp|tls|ucx|inproc|ws|wss)://)?[\w.\-\[\]:]+(?::\d+)?$")
#: schemes whose comms are encrypted and authenticated with certificates
SECURE = ("tls://", "wss://")
LOOPBACK = "127.0.0.1"


@dataclass(frozen=True)
class Target:
    """Where ``--scheduler`` sends the tasks, and with which credentials."""

    address: str                 # "local:N" or a scheduler address
    ca_file: str | None = None
    cert: str | None = None
    key: str | None = None
    insecure: bool = False

    def __str__(self) -> str:
        return self.address

    @property
    def workers(self) -> int | None:
        """N of ``local:N``; None for a scheduler address."""
        m = _LOCAL.match(self.address)
        return int(m.group(1)) if m else None


def _config_credentials() -> tuple[str | None, str | None, str | None]:
    """Dask's own ``distributed.comm.tls`` settings (config files or DASK_* variables)."""
    import dask.config

    def get(key: str) -> str | None:
        value = dask.config.get(key, default=None)
        return str(value) if value else None

    return (get("distributed.comm.tls.ca-file"),
            get("distributed.comm.tls.client.cert") or get("distributed.comm.tls.cert"),
            get("distributed.comm.tls.client.key") or get("distributed.comm.tls.key"))


def _readable(path: str, what: str, *, private: bool = False) -> str:
    p = Path(path)
    try:
        st = p.stat()
        with p.open("rb"):
            pass
    except OSError as exc:
        raise RegradeError(f"{what} {path}: cannot be read ({exc.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        raise RegradeError(f"{what} {path}: not a file")
    if private and st.st_mode & 0o077:
        raise RegradeError(f"{what} {path}: the private key can be read by other users; "
                           f"make it yours alone (chmod 600 {path})")
    return str(p)


def check_scheduler(spec: str | Target, *, tls_ca_file: str | None = None,
                    tls_cert: str | None = None, tls_key: str | None = None,
                    insecure: bool = False) -> Target:
    """Refuse a malformed or unprotected ``--scheduler`` (or a missing Dask) before anything
    is read; the target to connect to.

    Raises:
        RegradeError: not ``local:N`` (N >= 1) or an address; Dask is not installed; a plain
            address without ``--insecure``; a TLS address without readable credentials.
    """
    if isinstance(spec, Target):
        target = spec
    else:
        target = Target(str(spec), tls_ca_file, tls_cert, tls_key, insecure)
    address = target.address
    given = [f for f in (target.ca_file, target.cert, target.key) if f]
    m = _LOCAL.match(address)
    if m:
        if int(m.group(1)) < 1:
            raise RegradeError(f"--scheduler {address}: a local cluster needs at least 1 worker")
        if given or target.insecure:
            raise RegradeError(f"--scheduler {address}: a local cluster always makes its own "
                               "TLS credentials; --tls-* and --insecure are for a scheduler "
                               "address")
    elif address.startswith("local") or not _ADDRESS.match(address):
        raise RegradeError(f"--scheduler {address!r}: expected a scheduler address "
                           "(tls://host:8786) or local:N")
    elif address.startswith("inproc://"):
        raise RegradeError(f"--scheduler {address}: an in-process address cannot be reached "
                           "from here; give tls://host:port or local:N")
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise RegradeError("--scheduler needs Dask: pip install '.[dask]' (the pinned extra "
                           "in pyproject.toml)") from None
    if m:
        return target
    if not address.startswith(SECURE):
        if not target.insecure:
            raise RegradeError(
                f"--scheduler {address}: plain comms send students' code, names and emails "
                "unencrypted, and anyone who can reach the scheduler can run code on it; "
                "connect with tls:// and TLS credentials (--tls-ca-file, --tls-cert, "
                "--tls-key; see docs/regrade.md), or pass --insecure on a network you control")
        if given:
            raise RegradeError(f"--scheduler {address}: TLS credentials given for a plain "
                               "address; write it as tls://...")
        return target
    if target.insecure:
        raise RegradeError(f"--scheduler {address}: --insecure is for a plain tcp:// address")
    ca, cert, key = target.ca_file, target.cert, target.key
    if not (ca and cert and key):
        c_ca, c_cert, c_key = _config_credentials()
        ca, cert, key = ca or c_ca, cert or c_cert, key or c_key
    missing = [flag for flag, v in (("--tls-ca-file", ca), ("--tls-cert", cert),
                                    ("--tls-key", key)) if not v]
    if missing:
        raise RegradeError(f"--scheduler {address}: needs TLS credentials: "
                           f"{', '.join(missing)} (or Dask's distributed.comm.tls settings); "
                           "docs/regrade.md says how to make them")
    assert ca and cert and key
    return Target(address, _readable(ca, "--tls-ca-file", private=False),
                  _readable(cert, "--tls-cert"), _readable(key, "--tls-key", private=True))


def _abort_worker() -> int:
    """Run on each worker of a local cluster when the regrade is interrupted."""
    from autograder.harness import isolation

    return isolation.abort_all()


def local_cluster(n: int) -> tuple[Any, Any]:
    """A cluster of ``n`` single-threaded worker processes only this process can reach.

    Scheduler, nannies and workers listen on 127.0.0.1 and speak TLS with a certificate made
    for this run (both ends must present it); none of them starts an HTTP server.

    Returns:
        The cluster and its Security (for the client).
    """
    from distributed import Nanny, SpecCluster
    from distributed.security import Security

    from staff.regrade.dask_nodes import NoHTTPScheduler, NoHTTPWorker

    security = Security.temporary()
    scheduler = {"cls": NoHTTPScheduler, "options": {
        "host": LOOPBACK, "port": 0, "protocol": "tls://", "security": security,
        "dashboard": False, "dashboard_address": None}}
    worker = {"cls": Nanny, "options": {
        "host": LOOPBACK, "protocol": "tls://", "security": security, "nthreads": 1,
        "memory_limit": 0, "worker_class": NoHTTPWorker, "dashboard": False,
        "dashboard_address": None, "silence_logs": logging.ERROR}}
    cluster = SpecCluster(scheduler=scheduler, workers=dict.fromkeys(range(n), worker),
                          worker=worker, security=security, silence_logs=logging.ERROR,
                          name="tito-regrade")
    return cluster, security


class DaskRunner:
    """Submit tasks to a scheduler (or a local cluster this runner starts and stops)."""

    def __init__(self, spec: str | Target, *, hide: tuple[str, ...] = ()) -> None:
        from distributed import Client
        from distributed.security import Security

        target = check_scheduler(spec)
        self.hide = hide  # paths a sandbox must not see, where the worker shares this machine
        self.cluster: Any = None
        try:
            if target.workers is not None:
                self.cluster, security = local_cluster(target.workers)
                self.client = Client(self.cluster, security=security)
            elif target.address.startswith(SECURE):
                security = Security(tls_ca_file=target.ca_file, tls_client_cert=target.cert,
                                    tls_client_key=target.key, require_encryption=True)
                self.client = Client(target.address, security=security, timeout="20s")
            else:  # --insecure, said by the TA
                self.client = Client(target.address, timeout="20s")
        except (OSError, TimeoutError, ValueError) as exc:
            if self.cluster is not None:
                self.cluster.close()
            raise RegradeError(f"--scheduler {target}: cannot connect ({exc})") from None

    def slots(self) -> int:
        """Worker threads in the cluster (the regrade keeps about twice as many tasks queued)."""
        try:
            return max(1, sum(self.client.nthreads().values()))
        except Exception:  # noqa: BLE001 - an unreachable scheduler fails at submit
            return 1

    def check(self, modules: list[dict[str, Any]], graders: list[str]) -> None:
        """Ask every connected worker what it grades with, before any task is sent.

        Raises:
            RegradeError: a worker's task format, grading files, course facts or sandbox
                differ from this regrade's (one line naming the worker; workers that join
                later are checked by each task, which such a worker refuses).
        """
        from autograder.harness import isolation
        from staff.regrade.task import worker_facts, worker_problem

        try:
            facts = self.client.run(worker_facts, modules, on_error="return")
        except Exception as exc:  # noqa: BLE001 - a scheduler that went away
            raise RegradeError(f"--scheduler: cannot ask the workers ({exc})") from None
        here = isolation.plan().namespaces
        bad = [(addr, why) for addr, got in sorted(facts.items())
               if (why := worker_problem(got, modules, graders, here)) is not None]
        if bad:
            more = f" (and {len(bad) - 1} more worker(s))" if len(bad) > 1 else ""
            raise RegradeError(f"worker {bad[0][0]}: {bad[0][1]}{more}")

    def submit(self, payload: dict[str, Any], *, priority: float) -> Any:
        from staff.regrade.task import grade_payload, payload_fingerprint

        key = f"tito-regrade-{payload['key']}-{payload_fingerprint(payload)[:16]}"
        return self.client.submit(grade_payload, payload, hide=self.hide, key=key, pure=False,
                                  priority=int(round(priority * 10)), retries=0)

    def done(self, handle: Any) -> bool:
        return bool(handle.done())

    def wait(self, timeout: float) -> None:
        """Results arrive on the client's own thread; nothing to do but let time pass."""
        time.sleep(timeout)

    def result(self, handle: Any) -> dict[str, Any]:
        try:
            out = handle.result()
        except Exception as exc:  # noqa: BLE001 - a lost worker is a course-side failure
            return {"error": f"dask task failed: {type(exc).__name__}: {exc}"}
        return dict(out) if isinstance(out, dict) else {"error": "dask task returned no dict"}

    def abort(self, handles: list[Any]) -> int:
        """Cancel every task; on a local cluster also stop the workers' grading children."""
        running = sum(1 for h in handles if h.status == "pending")
        self.client.cancel(handles, force=True)
        if self.cluster is not None:
            try:
                self.client.run(_abort_worker)
            except Exception:  # noqa: BLE001 - the cluster is closed right after anyway
                pass
        return running

    def close(self) -> None:
        try:
            self.client.close()
        finally:
            if self.cluster is not None:
                self.cluster.close()
