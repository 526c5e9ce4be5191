"""kill -9 in the middle of an ingest loses nothing and leaves the store consistent."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

from gradebook import api
from gradebook.ingest import SLOW_HOOK

REPO = Path(api.__file__).resolve().parent.parent
RESULTS = Path(api.SAMPLE_TERM) / "results"

CHILD = textwrap.dedent("""
    import sys
    from pathlib import Path
    from gradebook import api
    from gradebook.ingest import parse_inputs, record
    from gradebook.store import Store

    course = api.load_course_any(None)
    sources = parse_inputs([Path(sys.argv[2])], course=course)
    store = Store(sys.argv[1])
    def progress(n):
        print(f"row {n}", flush=True)
    record(store, sources, progress=progress)
    print("committed", flush=True)
""")


def count(store: Path, table: str) -> int:
    with sqlite3.connect(store) as conn:
        return conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


def test_kill_9_mid_ingest_leaves_store_as_before(tmp_path, gb_course):
    store = tmp_path / "gb.sqlite"
    api.roster(Path(api.SAMPLE_TERM) / "roster.csv", store=store, course=gb_course)
    env = {**os.environ, SLOW_HOOK: "0.02", "PYTHONPATH": str(REPO)}
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(store), str(RESULTS)],
                             stdout=subprocess.PIPE, text=True, env=env, cwd=REPO)
    assert child.stdout is not None
    for line in child.stdout:
        if line.strip() == "row 40":  # 40 rows are written inside the open transaction
            break
    else:  # pragma: no cover - the child finished or died early
        raise AssertionError(f"child ended early with {child.wait()}")
    child.send_signal(signal.SIGKILL)
    assert child.wait() == -signal.SIGKILL

    with sqlite3.connect(store) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert (count(store, "events"), count(store, "tests"), count(store, "sources")) == (0, 0, 0)
    assert count(store, "roster") == 42  # earlier committed work is intact

    done = api.ingest([RESULTS], store=store, course=gb_course)
    assert done.added == 409 and count(store, "events") == 409  # 42 students x 01-07
    assert api.ingest([RESULTS], store=store, course=gb_course).added == 0
