"""``tito regrade --jobs N``'s worker: one process that grades one submission at a time.

The regrade starts ``N`` of these (:class:`staff.regrade.pool.WorkerPool`). Each supervises
its own sandboxed gradings (:func:`staff.regrade.task.grade_payload`, exactly what a Dask
worker runs), so the regrade process itself only sends a task's plain data and receives its
results: its CPU per submission does not grow with ``N``.

Two pipes join a worker to the regrade, given as file descriptors on the command line
(``python -m staff.regrade.worker IN OUT``): the regrade sends ``(task id, payload, hide)``
on ``IN``, the worker answers ``(task id, outcome)`` on ``OUT``. Standard output and error
stay the regrade's (a warning printed here reaches the TA's terminal, never the pipe).

When ``IN`` reaches end of file (the regrade closed it to stop, exited, or was killed with
``kill -9``) the worker stops every grading child at once
(:func:`autograder.harness.isolation.abort_all`) and exits; its children also carry their own
lifeline (:mod:`autograder.harness.lifeline`). Ctrl-C and a hang-up are the regrade's to
handle: a worker ignores them and is stopped through the pipe.
"""

from __future__ import annotations

import os
import queue
import signal
import sys
import threading
from multiprocessing.connection import Connection
from typing import Any


def serve(inbox: Connection, outbox: Connection) -> None:
    """Grade what arrives on ``inbox`` until it closes; answer on ``outbox``."""
    from autograder.harness import isolation
    from staff.regrade.task import grade_payload

    tasks: queue.Queue[tuple[Any, dict[str, Any], tuple[str, ...]]] = queue.Queue()

    def read() -> None:
        try:
            while True:
                tasks.put(inbox.recv())
        except (EOFError, OSError):
            pass
        isolation.abort_all()  # the regrade stopped (or died): nothing of ours goes on
        os._exit(0)

    threading.Thread(target=read, name="regrade-inbox", daemon=True).start()
    import autograder.harness.core  # noqa: F401 - loaded while the regrade prepares the tasks
    while True:
        task_id, payload, hide = tasks.get()
        outcome = grade_payload(payload, hide=tuple(hide))
        try:
            outbox.send((task_id, outcome))
        except (OSError, ValueError):  # the regrade is gone; the reader thread ends us
            return


def main(argv: list[str]) -> int:
    for sig in (signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    if len(argv) != 2:
        print("usage: python -m staff.regrade.worker IN_FD OUT_FD (started by tito regrade)",
              file=sys.stderr)
        return 2
    serve(Connection(int(argv[0]), writable=False), Connection(int(argv[1]), readable=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
