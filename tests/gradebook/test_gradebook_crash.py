"""kill -9 in the middle of an ingest loses nothing and leaves the store consistent."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from gradebook import api
from tests.gradebook.conftest import RESULTS, kill_mid_ingest


def count(store: Path, table: str) -> int:
    with sqlite3.connect(store) as conn:
        return conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


def test_kill_9_mid_ingest_leaves_store_as_before(tmp_path, gb_course):
    store = tmp_path / "gb.sqlite"
    api.roster(Path(api.SAMPLE_TERM) / "roster.csv", store=store, course=gb_course)
    kill_mid_ingest(str(store), slow_s="0.02")

    with sqlite3.connect(store) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert (count(store, "events"), count(store, "tests"), count(store, "sources")) == (0, 0, 0)
    assert count(store, "roster") == 42  # earlier committed work is intact

    done = api.ingest([RESULTS], store=store, course=gb_course)
    assert done.added == 409 and count(store, "events") == 409  # 42 students x 01-07
    assert api.ingest([RESULTS], store=store, course=gb_course).added == 0
