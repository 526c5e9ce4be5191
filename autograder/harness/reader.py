"""Parse untrusted files in capped worker processes: one mechanism for every staff tool.

A student's notebook is hostile input even when none of its code runs: one 9 MB literal makes
CPython's parser use gigabytes, a 10,000-term expression exhausts the recursion limit, and a
file can be made to parse for minutes. Whatever parses such files (the grader's export,
``tito integrity``'s fingerprints) does it through :func:`read_untrusted`:

* in ``python -I -S -B`` worker processes (:mod:`autograder.harness.export_worker`), started
  with :func:`autograder.harness.isolation.spawn_tracked` (so an interrupted regrade stops
  them too), working folder ``/``, no student code;
* each worker capped at ``memory_mb`` of address space and ``cpu_s`` seconds of CPU time per
  item (the kernel's ``RLIMIT_CPU``: a count of the worker's own CPU time, the same on a quiet
  or a loaded machine), with no core dumps and no file writes; a wall-clock backstop
  (:data:`STALL_S` without any progress) only catches a worker blocked on I/O;
* results come back one JSON line per item, so when a worker dies the item it was reading is
  known: that item gets a one-line error naming the file, and a fresh worker goes on with the
  next one. Every other item is read.

The parent never parses the files itself; it holds what the workers send back.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from autograder.harness import isolation
from autograder.harness.home import HARNESS_ROOT, in_threads

WORKER = Path(__file__).with_name("export_worker.py")
#: Address-space cap of a worker (the grader's export worker has always used 512 MB).
MEMORY_MB = 512
#: CPU seconds one item may take.
CPU_S = 30.0
#: A worker that sends nothing for this long (wall clock) while its CPU clock stands still is
#: blocked (on I/O, never on parsing, which the CPU limit ends): it is killed.
STALL_S = 120.0
#: The longest result line a worker may send (bytes); a longer one is that item's failure.
MAX_LINE_BYTES = 256 * 1024 * 1024
#: Items one worker process is given at most (and bytes of job), so the job itself never
#: crowds the worker's memory and a restart after a failure re-reads little.
BATCH_ITEMS = 32
BATCH_BYTES = 8 * 1024 * 1024


def _name(item: dict[str, Any]) -> str:
    path = item.get("path")
    return Path(str(path)).name if path else str(item.get("name") or "input")


def failure(kind: str, name: str, *, memory_mb: int, cpu_s: float, detail: str = "") -> str:
    """The one-line reason an item could not be read, naming the file."""
    if kind == "memory":
        return (f"{name}: is too large to read (parsing it needs more than {memory_mb} MB; "
                "a huge literal or output?)")
    if kind == "recursion":
        return f"{name}: is too deeply nested to read"
    if kind == "time":
        return f"{name}: took more than {cpu_s:g} s of CPU time to read"
    if kind == "stalled":
        return f"{name}: reading it made no progress for {STALL_S:g} s"
    return f"{name}: could not be read ({detail or kind})"


def _cpu_ticks(pid: int) -> int | None:
    """utime + stime of a process in clock ticks, read from /proc (None when gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return None


class _Worker:
    """One worker process reading a list of items in order."""

    def __init__(self, job: dict[str, Any], items: list[dict[str, Any]]) -> None:
        payload = json.dumps({**job, "items": items}, ensure_ascii=False).encode("utf-8")
        self.proc = isolation.spawn_tracked(
            [sys.executable, "-I", "-S", "-B", str(WORKER)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd="/")
        self.stderr = b""
        self._feeder = threading.Thread(target=self._feed, args=(payload,), daemon=True)
        self._feeder.start()
        self._drain = threading.Thread(target=self._read_stderr, daemon=True)
        self._drain.start()
        self.progress = time.monotonic()
        self.stalled = False
        self._watch_stop = threading.Event()
        self._watch = threading.Thread(target=self._watchdog, daemon=True)
        self._watch.start()

    def _feed(self, payload: bytes) -> None:
        stdin: IO[bytes] | None = self.proc.stdin
        try:
            if stdin is not None:
                stdin.write(payload)
                stdin.close()
        except (BrokenPipeError, OSError):
            pass

    def _read_stderr(self) -> None:
        if self.proc.stderr is not None:
            self.stderr = self.proc.stderr.read()[-4000:]

    def _watchdog(self) -> None:
        ticks = _cpu_ticks(self.proc.pid)
        while not self._watch_stop.wait(1.0):
            now_ticks = _cpu_ticks(self.proc.pid)
            if now_ticks is None:
                return
            if now_ticks != ticks:
                ticks, self.progress = now_ticks, time.monotonic()
            elif time.monotonic() - self.progress > STALL_S:
                self.stalled = True
                self.proc.kill()
                return

    def lines(self) -> Any:
        """The result lines, as they come (ends when the worker exits)."""
        out = self.proc.stdout
        assert out is not None
        while True:
            line = out.readline(MAX_LINE_BYTES + 1)
            if not line:
                return
            self.progress = time.monotonic()
            if len(line) > MAX_LINE_BYTES:
                self.proc.kill()
                yield {"i": -1, "error": "result too large", "kind": "memory"}
                return
            try:
                yield json.loads(line)
            except (ValueError, UnicodeDecodeError, RecursionError):
                self.proc.kill()
                return

    def finish(self) -> str:
        """Wait for the worker; why it stopped early, as a failure kind."""
        self.proc.wait()
        self._watch_stop.set()
        self._drain.join(timeout=5)
        self._feeder.join(timeout=5)
        isolation.untrack(self.proc.pid)
        rc = self.proc.returncode
        if rc == 0:
            return ""
        if self.stalled:
            return "stalled"
        if rc == -signal.SIGXCPU:
            return "time"
        if rc == -signal.SIGKILL or b"MemoryError" in self.stderr:
            return "memory"
        if rc and rc < 0:
            return f"killed by signal {-rc}"
        if b"RecursionError" in self.stderr:
            return "recursion"
        raise RuntimeError("the notebook reader failed: "
                           + self.stderr.decode("utf-8", "replace")[-500:])


def _read_chunk(job: dict[str, Any], items: list[dict[str, Any]], results: list[Any],
                indices: list[int], memory_mb: int, cpu_s: float,
                on_item: Callable[[int], None] | None) -> None:
    todo = list(indices)
    while todo:
        batch: list[int] = []
        size = 0
        for i in todo[:BATCH_ITEMS]:
            size += len(json.dumps(items[i], ensure_ascii=False))
            if batch and size > BATCH_BYTES:
                break
            batch.append(i)
        worker = _Worker(job, [items[i] for i in batch])
        done = 0
        for line in worker.lines():
            k = line.get("i") if isinstance(line, dict) else None
            if not isinstance(k, int) or k != done:
                worker.proc.kill()  # out of step: this item counts as failed, a fresh worker
                break               # goes on with the next
            results[todo[k]] = line
            done += 1
            if on_item is not None:
                on_item(todo[k])
        why = worker.finish()
        if done < len(batch):
            if not why:  # exited normally without answering: a broken reader
                raise RuntimeError("the notebook reader stopped before reading "
                                   f"{_name(items[todo[done]])}")
            # the worker died reading todo[done] (or sent something unreadable for it)
            i = todo[done]
            results[i] = {"error": failure(why, _name(items[i]), memory_mb=memory_mb,
                                           cpu_s=cpu_s), "kind": why}
            if on_item is not None:
                on_item(i)
            done += 1
        todo = todo[done:]


def read_untrusted(items: list[dict[str, Any]], *, reader: Path | None = None,
                   function: str = "export_one", options: dict[str, Any] | None = None,
                   memory_mb: int = MEMORY_MB, cpu_s: float = CPU_S, workers: int = 1,
                   on_item: Callable[[int], None] | None = None) -> list[dict[str, Any]]:
    """Run ``function(exporter, item, **options)`` on every item in capped workers.

    Args:
        items: JSON-able dicts; ``path`` (or ``name``) names the file in error messages.
        reader: a standard-library-only file holding ``function`` (default: the grader's
            export job in :mod:`autograder.harness.export_worker`).
        options: keyword arguments for ``function`` (JSON-able).
        memory_mb: address-space cap of each worker.
        cpu_s: CPU seconds each item may take.
        workers: processes reading side by side (items are split into that many runs).
        on_item: called with an item's index once it is read (progress).

    Returns:
        One dict per item, in order: the function's result, or ``{"error": one line naming
        the file, "kind": "memory" | "recursion" | "time" | "stalled" | ...}`` for an item
        that exhausted a limit or killed its worker.
    """
    results: list[Any] = [None] * len(items)
    if not items:
        return []
    job = {"root": str(HARNESS_ROOT), "memory_mb": int(memory_mb), "cpu_s": float(cpu_s),
           "reader": str(reader) if reader else None, "function": function,
           "options": options or {}}
    workers = max(1, min(workers, len(items)))
    runs = [list(range(len(items)))[w::workers] for w in range(workers)]
    if workers == 1:
        _read_chunk(job, items, results, runs[0], memory_mb, cpu_s, on_item)
    else:
        in_threads(lambda indices: _read_chunk(job, items, results, indices, memory_mb, cpu_s,
                                               on_item), runs, name="reader")
    out: list[dict[str, Any]] = []
    for i, res in enumerate(results):
        if not isinstance(res, dict):
            res = {"error": failure("no result", _name(items[i]), memory_mb=memory_mb,
                                    cpu_s=cpu_s), "kind": "crash"}
        elif res.get("kind") in ("memory", "recursion", "error") and "detail" in res:
            res = {"error": failure(res["kind"], _name(items[i]), memory_mb=memory_mb,
                                    cpu_s=cpu_s, detail=str(res["detail"])),
                   "kind": res["kind"]}
        res.pop("i", None)
        out.append(res)
    return out
