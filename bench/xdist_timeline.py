"""Where the workers of a parallel test run spend their time: busy, idle, and the tail.

A pytest plugin plus a summary. Load it in the run to measure (the controller records every
test phase's worker, start and stop from the reports the workers send)::

    PYTHONPATH=bench TT_TIMELINE=build/timeline.jsonl \\
        .venv/bin/python -m pytest -p xdist_timeline -n 2 --dist loadgroup

then summarise it::

    python bench/xdist_timeline.py build/timeline.jsonl

Per worker: busy seconds (the sum of its tests' setup, call and teardown), when it finished
its last test, and idle seconds (from the session's first test to the last worker's last
test, less busy). The *tail* is how long the last worker ran on after the first one had
nothing left to do: the wall time a better order of the queue could save at most. The
slowest tests of the tail are listed. Wall-clock figures of one run: compare runs made on
an equally busy machine.
"""

from __future__ import annotations

import json
import os
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

_OUT = os.environ.get("TT_TIMELINE", "")


def pytest_runtest_logreport(report: Any) -> None:
    """Controller side: one line per test phase run on a worker."""
    node = getattr(report, "node", None)
    if not _OUT or node is None or not hasattr(report, "start"):
        return
    worker = getattr(getattr(node, "gateway", None), "id", "?")
    with open(_OUT, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"worker": worker, "test": report.nodeid, "when": report.when,
                             "start": report.start, "stop": report.stop}) + "\n")


def summarize(path: Path, top: int = 8) -> str:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    if not rows:
        return "no test phases recorded"
    t0 = min(r["start"] for r in rows)
    busy: dict[str, float] = defaultdict(float)
    last: dict[str, float] = defaultdict(float)
    tests: dict[tuple[str, str], list[float]] = {}
    for r in rows:
        busy[r["worker"]] += r["stop"] - r["start"]
        last[r["worker"]] = max(last[r["worker"]], r["stop"])
        span = tests.setdefault((r["worker"], r["test"]), [r["start"], r["stop"]])
        span[0], span[1] = min(span[0], r["start"]), max(span[1], r["stop"])
    end = max(last.values())
    first_done = min(last.values())
    lines = [f"wall {end - t0:.0f} s from the first test to the last; "
             f"tail {end - first_done:.0f} s (one worker alone at the end)"]
    for w in sorted(busy):
        lines.append(f"  {w}: busy {busy[w]:.0f} s, last test ended at {last[w] - t0:.0f} s, "
                     f"idle {end - t0 - busy[w]:.0f} s")
    tail = sorted(((stop - max(start, first_done), w, t) for (w, t), (start, stop)
                   in tests.items() if stop > first_done), reverse=True)[:top]
    if tail:
        lines.append("  in the tail:")
        lines += [f"    {secs:6.1f} s  {w}  {t}" for secs, w, t in tail]
    return "\n".join(lines)


if __name__ == "__main__":
    print(summarize(Path(sys.argv[1])))
