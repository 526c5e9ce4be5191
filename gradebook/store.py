"""The gradebook store: append-only score events in SQLite, or in PostgreSQL.

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
- ``integrity_documents``: the code each student wrote for a module, per term, kept by
  ``tito integrity`` so later terms are compared with earlier ones (staff only; never scores).

Every write happens inside :meth:`Store.transaction`, so a process killed mid-ingest leaves the
store exactly as it was before the ingest began. SQLite: ``BEGIN IMMEDIATE`` ... ``COMMIT``.
PostgreSQL (``postgresql://`` URL, psycopg 3): ``BEGIN``, a transaction-scoped advisory lock
that serialises writers as ``BEGIN IMMEDIATE`` does, ... ``COMMIT``; the server rolls back the
transaction of a client that dies. The SQL is written once, in SQLite's spelling;
:mod:`gradebook.dialect` translates it for PostgreSQL, so callers use ``store.conn`` and the
connection :meth:`Store.transaction` yields the same way on both.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import getpass
import os
import re
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from gradebook.dialect import (
    PG_TRIGGERS,
    SQLITE_SCHEMA,
    PgConnection,
    pg_schema_statements,
)
from gradebook.errors import GradebookError

#: The SQLite schema (kept under its old name for callers).
SCHEMA = SQLITE_SCHEMA

#: URL prefixes of a PostgreSQL store (libpq's own spellings).
PG_SCHEMES = ("postgresql://", "postgres://")

#: Advisory lock keys (per database): one serialises schema creation, one every write.
PG_SCHEMA_LOCK = 0x6772_6164_6562_0001
PG_WRITE_LOCK = 0x6772_6164_6562_0002

#: The tables a complete store has (PostgreSQL checks them before running any DDL).
TABLES = ("sources", "events", "tests", "roster_imports", "roster", "extensions",
          "integrity_documents")

#: The connection a store reads and writes through: SQLite's, or psycopg's behind the dialect.
Connection = sqlite3.Connection | PgConnection

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
    if is_postgres(text):
        raise GradebookError(f"store {redact(text)}: a PostgreSQL URL, not a SQLite path")
    if text.startswith("sqlite:///"):
        text = text[len("sqlite:///"):]
    elif "://" in text:
        raise GradebookError(f"store {text}: not a SQLite path or sqlite:/// URL")
    path = Path(text)
    if not path.is_absolute() and root is not None:
        path = root / path
    return path


def is_postgres(url: str | Path) -> bool:
    """Whether ``url`` names a PostgreSQL store (``postgresql://`` or ``postgres://``)."""
    return str(url).startswith(PG_SCHEMES)


def redact(url: str) -> str:
    """``url`` with any password replaced by ``***`` (for messages and reports).

    Example:
        >>> redact("postgresql://ta:s3cret@db.example.edu/grades?password=x&sslmode=require")
        'postgresql://ta:***@db.example.edu/grades?password=***&sslmode=require'
    """
    text = re.sub(r"^(\w+://[^:/@?#]*):[^@/?#]*@", r"\1:***@", url)
    return re.sub(r"([?&]password=)[^&]*", r"\1***", text)


def store_label(url: str | Path, root: Path | None = None) -> str:
    """How to name a store in messages: the SQLite file, or the URL without its password."""
    return redact(str(url)) if is_postgres(url) else str(sqlite_path(url, root))


@dataclass(frozen=True)
class ServerLocation:
    """Where a PostgreSQL store "is" for callers that expect :attr:`Store.path` to be a file.

    ``str()`` gives the URL without its password (for messages); ``parent`` is the local
    folder for files written "next to the store" (the current directory).
    """

    url: str
    parent: Path

    def __str__(self) -> str:
        return self.url


def _first_line(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return lines[0] if lines else type(exc).__name__


def connect_postgres(url: str) -> PgConnection:
    """Open a PostgreSQL store's connection (autocommit; the store opens transactions).

    Any libpq URL works: ``postgresql://user@host/db``, ``postgresql:///db?host=/socket/dir``,
    a password from ``~/.pgpass`` or ``$PGPASSWORD``. Unless the URL says otherwise, connecting
    gives up after 10 seconds.

    Raises:
        GradebookError: one line, naming the URL without its password, when psycopg is missing
            or the server cannot be reached.
    """
    where = redact(url)
    try:
        import psycopg
        from psycopg.conninfo import conninfo_to_dict
    except ImportError:  # pragma: no cover - psycopg is a dependency (pyproject.toml)
        raise GradebookError(
            f"store {where}: PostgreSQL stores need the psycopg driver: "
            "pip install 'psycopg[binary]'"
        ) from None
    try:
        given = conninfo_to_dict(url)
        extra: dict[str, Any] = {k: v for k, v in (("connect_timeout", "10"),
                                   ("application_name", "tito-gradebook")) if k not in given}
        raw = psycopg.connect(url, autocommit=True, **extra)
    except psycopg.Error as exc:
        raise GradebookError(f"store {where}: psycopg cannot connect: {_first_line(exc)}"
                             ) from None
    try:
        _ensure_pg_schema(raw)
    except psycopg.Error as exc:
        raw.close()
        raise GradebookError(f"store {where}: cannot create the gradebook tables: "
                             f"{_first_line(exc)}") from None
    return PgConnection(raw)


def _ensure_pg_schema(raw: Any) -> None:
    """Create the tables, indexes and append-only triggers that are missing (no DDL if none)."""

    def complete() -> bool:
        tables = raw.execute("SELECT count(to_regclass(t)) FROM unnest(%s::text[]) AS t",
                             (list(TABLES),)).fetchone()[0]
        triggers = raw.execute(
            "SELECT count(*) FROM pg_trigger WHERE tgrelid = to_regclass('events') "
            "AND tgname = ANY(%s::text[])", (list(PG_TRIGGERS),)).fetchone()[0]
        return bool(tables == len(TABLES) and triggers == len(PG_TRIGGERS))

    if complete():
        return
    with raw.transaction():
        raw.execute("SELECT pg_advisory_xact_lock(%s)", (PG_SCHEMA_LOCK,))
        if complete():  # another process created it while we waited
            return
        for statement in pg_schema_statements():
            raw.execute(statement)
        have = {r[0] for r in raw.execute(
            "SELECT tgname FROM pg_trigger WHERE tgrelid = 'events'::regclass")}
        for name, statement in PG_TRIGGERS.items():
            if name not in have:
                raw.execute(statement)


class Store:
    """An open gradebook store.

    Args:
        url: a file path, a ``sqlite:///`` URL, or a ``postgresql://`` URL (any libpq URL:
            ``postgresql://user@host/db``, ``postgresql:///db?host=/socket/dir``).
        root: directory that relative SQLite paths are resolved against.

    Attributes:
        dialect: ``"sqlite"`` or ``"postgresql"``.
        path: the SQLite file, or for PostgreSQL a :class:`ServerLocation` (its ``str`` is the
            URL without a password, its ``parent`` the current directory).
        conn: the connection; it takes the store's SQLite-spelled SQL on both dialects.
    """

    def __init__(self, url: str | Path, root: Path | None = None) -> None:
        self.url = str(url)
        self.path: Path | ServerLocation
        self.conn: Connection
        if is_postgres(self.url):
            self.dialect = "postgresql"
            self.path = ServerLocation(redact(self.url), Path.cwd())
            self.conn = connect_postgres(self.url)
            return
        self.dialect = "sqlite"
        self.path = sqlite_path(url, root)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(self.path), isolation_level=None, timeout=30)
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
        conn.executescript(SCHEMA)
        self.conn = conn

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Connection]:
        """One all-or-nothing write (``ROLLBACK`` on any error or interrupt).

        SQLite: ``BEGIN IMMEDIATE`` ... ``COMMIT``. PostgreSQL: ``BEGIN``, wait (up to 30 s, as
        SQLite's busy timeout) for the store's write lock, ... ``COMMIT``. Either way one writer
        at a time, and what it reads inside the transaction is what it writes against.

        Raises:
            GradebookError: (PostgreSQL) the server refused a statement or the connection was
                lost; one line, and the transaction was rolled back.
        """
        if isinstance(self.conn, PgConnection):
            import psycopg

            raw = self.conn.raw
            try:
                with raw.transaction():
                    raw.execute("SET LOCAL lock_timeout = '30s'")
                    raw.execute("SELECT pg_advisory_xact_lock(%s)", (PG_WRITE_LOCK,))
                    yield self.conn
            except psycopg.Error as exc:
                raise GradebookError(f"store {self.path}: PostgreSQL refused the write, "
                                     f"nothing was written: {_first_line(exc)}") from exc
            return
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    # ------------------------------------------------------------------ writes
    def insert_event(self, conn: Connection, event: dict[str, Any]) -> int | None:
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
        self, conn: Connection, event_id: int, tests: Sequence[dict[str, Any]]
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
        self, conn: Connection, *, path: str, sha256: str, kind: str, added: int,
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
        assert cur.description is not None, f"not a query: {sql}"
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
