"""The gradebook store: append-only score events in SQLite (PostgreSQL optional).

Tables (all append-only; triggers refuse UPDATE and DELETE on score events):

- ``events``: one row per score event: who (``sid``/``login``/``email`` as the source gave
  them), which item, score and max, submission time and id, suite version, the source file
  and its sha256, the kind (``results_json``, ``gradescope_csv``, ``gradescope_export``,
  ``manual``, ``override``, ``regrade``), when and by whom it was recorded, a reason and a JSON
  ``details`` field (a regrade's diff, an override's previous score).
  ``UNIQUE(source_sha256, student_ref, item)`` makes ingesting a file twice a no-op.
- ``tests``: the per-test results of a ``results_json``/``gradescope_export``/``regrade``
  event (for pass rates in the report).
- ``roster_imports`` / ``roster``: every roster import; the latest one is the roster.
- ``extensions``: per-student due-date changes, latest per (student, module) wins.
- ``sources``: one row per ingested file, with what it added.

Every write happens inside :meth:`Store.transaction` (``BEGIN IMMEDIATE`` ... ``COMMIT``), so a
process killed mid-ingest leaves the store exactly as it was before the ingest began.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import getpass
import os
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from gradebook.errors import GradebookError

SCHEMA = """
CREATE TABLE IF NOT EXISTS sources (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    path TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    kind TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    recorded_by TEXT NOT NULL,
    added INTEGER NOT NULL,
    note TEXT
);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    student_ref TEXT NOT NULL,
    sid TEXT,
    login TEXT,
    email TEXT,
    name TEXT,
    item TEXT NOT NULL,
    score REAL,
    max_score REAL,
    submitted_at TEXT,
    submission_id TEXT,
    suite_version TEXT,
    source_path TEXT NOT NULL,
    source_sha256 TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    recorded_by TEXT NOT NULL,
    reason TEXT,
    details TEXT,
    UNIQUE (source_sha256, student_ref, item)
);
CREATE TABLE IF NOT EXISTS tests (
    event_id INTEGER NOT NULL REFERENCES events(id),
    name TEXT NOT NULL,
    score REAL,
    max_score REAL,
    status TEXT,
    tags TEXT
);
CREATE TABLE IF NOT EXISTS roster_imports (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    path TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    recorded_by TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS roster (
    import_id INTEGER NOT NULL REFERENCES roster_imports(id),
    student TEXT NOT NULL,
    name TEXT NOT NULL,
    canvas_id TEXT,
    login TEXT NOT NULL,
    email TEXT,
    section TEXT,
    track TEXT NOT NULL,
    line INTEGER
);
CREATE TABLE IF NOT EXISTS extensions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    student TEXT NOT NULL,
    module INTEGER NOT NULL,
    due TEXT,
    hours REAL,
    reason TEXT,
    source_path TEXT NOT NULL,
    source_sha256 TEXT NOT NULL,
    line INTEGER,
    recorded_at TEXT NOT NULL,
    recorded_by TEXT NOT NULL,
    UNIQUE (source_sha256, student, module)
);
CREATE INDEX IF NOT EXISTS events_by_item ON events (student_ref, item);
CREATE INDEX IF NOT EXISTS tests_by_event ON tests (event_id);
CREATE TRIGGER IF NOT EXISTS events_append_only_u BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'gradebook events are append-only'); END;
CREATE TRIGGER IF NOT EXISTS events_append_only_d BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'gradebook events are append-only'); END;
"""

EVENT_COLUMNS = [
    "kind", "student_ref", "sid", "login", "email", "name", "item", "score", "max_score",
    "submitted_at", "submission_id", "suite_version", "source_path", "source_sha256",
    "recorded_at", "recorded_by", "reason", "details",
]


def current_user() -> str:
    """Who is recording: ``$GRADEBOOK_USER``, else the login name, else ``unknown``."""
    for var in ("GRADEBOOK_USER", "USER", "LOGNAME"):
        if os.environ.get(var):
            return os.environ[var]
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # pragma: no cover - no passwd entry
        return "unknown"


def now_utc() -> str:
    """The current time as an ISO-8601 UTC string (seconds)."""
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def sqlite_path(url: str | Path, root: Path | None = None) -> Path:
    """The file of a SQLite store given as a path or a ``sqlite:///`` URL.

    ``sqlite:///rel/path`` is relative to ``root`` (the repository); ``sqlite:////abs/path``
    is absolute, as in SQLAlchemy.

    Args:
        url: a path or URL.
        root: the directory relative paths are resolved against (default: current directory).

    Returns:
        The database file path.
    """
    text = str(url)
    if text.startswith("sqlite:///"):
        text = text[len("sqlite:///"):]
    elif "://" in text:
        raise GradebookError(f"store {text}: not a SQLite path or sqlite:/// URL")
    path = Path(text)
    if not path.is_absolute() and root is not None:
        path = root / path
    return path


class Store:
    """An open gradebook store.

    Args:
        url: a file path, a ``sqlite:///`` URL, or (with ``psycopg`` installed) a
            ``postgresql://`` URL.
        root: directory that relative SQLite paths are resolved against.
    """

    def __init__(self, url: str | Path, root: Path | None = None) -> None:
        self.url = str(url)
        if self.url.startswith(("postgresql://", "postgres://")):
            raise GradebookError(
                f"store {self.url}: PostgreSQL stores need the optional 'psycopg' driver and "
                "are not enabled in this build; use a SQLite path"
            )
        self.path = sqlite_path(url, root)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(str(self.path), isolation_level=None, timeout=30)
        self.conn.execute("PRAGMA foreign_keys = ON")
        self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.execute("PRAGMA synchronous = FULL")
        self.conn.executescript(SCHEMA)

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One all-or-nothing write: ``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on error)."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    # ------------------------------------------------------------------ writes
    def insert_event(self, conn: sqlite3.Connection, event: dict[str, Any]) -> int | None:
        """Insert one event inside a transaction; ``None`` if (sha, student, item) exists."""
        values = [event.get(c) for c in EVENT_COLUMNS]
        cur = conn.execute(
            f"INSERT OR IGNORE INTO events ({', '.join(EVENT_COLUMNS)}) "
            f"VALUES ({', '.join('?' * len(EVENT_COLUMNS))})",
            values,
        )
        if cur.rowcount == 0:
            return None
        return int(cur.lastrowid or 0)

    def insert_tests(
        self, conn: sqlite3.Connection, event_id: int, tests: Sequence[dict[str, Any]]
    ) -> None:
        """Insert the per-test results of an event."""
        conn.executemany(
            "INSERT INTO tests (event_id, name, score, max_score, status, tags) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [
                (event_id, t["name"], t.get("score"), t.get("max_score"), t.get("status"),
                 ",".join(t.get("tags") or []))
                for t in tests
            ],
        )

    def insert_source(
        self, conn: sqlite3.Connection, *, path: str, sha256: str, kind: str, added: int,
        note: str = "",
    ) -> None:
        """Record that a file was ingested (and what it added)."""
        conn.execute(
            "INSERT INTO sources (path, sha256, kind, recorded_at, recorded_by, added, note) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (path, sha256, kind, now_utc(), current_user(), added, note),
        )

    # ------------------------------------------------------------------- reads
    def frame(self, sql: str, params: Sequence[Any] = ()) -> pd.DataFrame:
        """Run a query and return a DataFrame."""
        cur = self.conn.execute(sql, params)
        cols = [d[0] for d in cur.description]
        return pd.DataFrame(cur.fetchall(), columns=cols)

    def events(self) -> pd.DataFrame:
        """All score events, oldest first (``id`` order)."""
        cols = ", ".join(EVENT_COLUMNS)
        return self.frame(f"SELECT id AS event_id, {cols} FROM events ORDER BY id")

    def tests(self) -> pd.DataFrame:
        """All per-test results."""
        return self.frame("SELECT event_id, name, score, max_score, status, tags FROM tests")

    def roster(self) -> pd.DataFrame:
        """The latest roster import (empty frame if none)."""
        return self.frame(
            "SELECT student, name, canvas_id, login, email, section, track, line FROM roster "
            "WHERE import_id = (SELECT MAX(id) FROM roster_imports) ORDER BY line"
        )

    def roster_source(self) -> str | None:
        """The path of the latest roster import, if any."""
        row = self.conn.execute(
            "SELECT path FROM roster_imports ORDER BY id DESC LIMIT 1"
        ).fetchone()
        return None if row is None else str(row[0])

    def extensions(self) -> pd.DataFrame:
        """All extension records, oldest first."""
        return self.frame(
            "SELECT id, student, module, due, hours, reason, source_path, line, recorded_at, "
            "recorded_by FROM extensions ORDER BY id"
        )

    def sources(self) -> pd.DataFrame:
        """Every ingested file."""
        return self.frame("SELECT * FROM sources ORDER BY id")

    def seen_hashes(self) -> set[tuple[str, str, str]]:
        """The (sha256, student_ref, item) keys already recorded."""
        rows = self.conn.execute("SELECT source_sha256, student_ref, item FROM events")
        return {(a, b, c) for a, b, c in rows}
