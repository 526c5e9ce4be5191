"""``tito regrade --scheduler``: the same regrade on a Dask distributed cluster.

Each submission is one task, :func:`autograder.regrade_task.grade_payload`, which grades it on
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

Dask is an optional dependency (``pip install .[dask]``, pinned in pyproject.toml).
"""

from __future__ import annotations

import logging
import re
from typing import Any

from autograder.regrade import RegradeError

_LOCAL = re.compile(r"^local:(\d+)$")
_ADDRESS = re.compile(r"^(?:(?:tcp|tls|ucx|inproc|ws|wss)://)?[\w.\-\[\]:]+(?::\d+)?$")


def check_scheduler(spec: str) -> None:
    """Refuse a malformed ``--scheduler`` or a missing Dask before anything is read.

    Raises:
        RegradeError: not ``local:N`` (N >= 1) or an address, or Dask is not installed.
    """
    m = _LOCAL.match(spec)
    if m:
        if int(m.group(1)) < 1:
            raise RegradeError(f"--scheduler {spec}: a local cluster needs at least 1 worker")
    elif spec.startswith("local") or not _ADDRESS.match(spec):
        raise RegradeError(f"--scheduler {spec!r}: expected a scheduler address "
                           "(tcp://host:8786) or local:N")
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise RegradeError("--scheduler needs Dask: pip install '.[dask]' (the pinned extra "
                           "in pyproject.toml)") from None


def _abort_worker() -> int:
    """Run on each worker of a local cluster when the regrade is interrupted."""
    from autograder.harness import isolation

    return isolation.abort_all()


class DaskRunner:
    """Submit tasks to a scheduler (or a local cluster this runner starts and stops)."""

    def __init__(self, spec: str, *, hide: tuple[str, ...] = ()) -> None:
        from distributed import Client, LocalCluster

        self.hide = hide  # paths a sandbox must not see, where the worker shares this machine
        self.cluster: Any = None
        m = _LOCAL.match(spec)
        try:
            if m:
                self.cluster = LocalCluster(
                    n_workers=int(m.group(1)), threads_per_worker=1, processes=True,
                    dashboard_address=None, silence_logs=logging.ERROR, memory_limit=0)
                self.client = Client(self.cluster)
            else:
                self.client = Client(spec, timeout="20s")
        except (OSError, TimeoutError) as exc:
            if self.cluster is not None:
                self.cluster.close()
            raise RegradeError(f"--scheduler {spec}: cannot connect ({exc})") from None

    def slots(self) -> int:
        """Worker threads in the cluster (the regrade keeps about twice as many tasks queued)."""
        try:
            return max(1, sum(self.client.nthreads().values()))
        except Exception:  # noqa: BLE001 - an unreachable scheduler fails at submit
            return 1

    def submit(self, payload: dict[str, Any], *, priority: float) -> Any:
        from autograder.regrade_task import grade_payload, payload_fingerprint

        key = f"tito-regrade-{payload['key']}-{payload_fingerprint(payload)[:16]}"
        return self.client.submit(grade_payload, payload, hide=self.hide, key=key, pure=False,
                                  priority=int(round(priority * 10)), retries=0)

    def done(self, handle: Any) -> bool:
        return bool(handle.done())

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
