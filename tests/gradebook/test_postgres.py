"""The PostgreSQL store keeps the SQLite store's guarantees and gives the same numbers.

A throwaway cluster (``pg_server.py``: Unix socket only, a temp dir) serves every test; each
test gets its own database. The store scenarios that matter run on both backends
(``store_url`` is parametrized): idempotent ingest, append-only events, all-or-nothing ingest
(an error, and ``kill -9``), concurrent ingests. The sample term loaded into PostgreSQL must
build, export, explain and check exactly as the SQLite one does.
"""

from __future__ import annotations

import doctest
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import psycopg
import pytest
from click.testing import CliRunner
from pg_server import PgServer, PgUnavailable, find_bindir, start

from gradebook import api, dialect, store
from gradebook.cli import gradebook
from gradebook.errors import GradebookError
from gradebook.ingest import parse_inputs, record
from gradebook.store import Store
from tests.gradebook.conftest import INGEST_CHILD, kill_mid_ingest

REPO = Path(api.__file__).resolve().parent.parent
SAMPLE = Path(api.SAMPLE_TERM)
RESULTS = SAMPLE / "results"
HAND_COMPUTED = {  # docs/gradebook.md and test_gradebook_sample.py
    "S1001": (100.0, "A"), "S1002": (86.958333, "B"), "S1003": (95.5, "A"),
    "S1004": (90.625, "A-"), "S1005": (95.0, "A"),
}
RECORDING_TIME = ["recorded_at"]  # the only column two loads of the same files may differ in


@pytest.fixture(scope="session")
def pg() -> Iterator[PgServer]:
    """One throwaway PostgreSQL cluster for the session (missing binaries: the tests FAIL)."""
    try:
        server, reason = start(), ""
    except PgUnavailable as exc:
        reason = str(exc)
    if reason:  # outside the except block: the failure is the one line, nothing chained
        pytest.fail(reason, pytrace=False)
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new empty store of each kind."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'gb.sqlite'}"
    return request.getfixturevalue("pg").create_database("t")


def count(url: str, table: str) -> int:
    with Store(url) as st:
        return int(st.frame(f"SELECT COUNT(*) AS n FROM {table}")["n"].iloc[0])


def recorded(text: str) -> str:
    """``text`` with recording times (``... <UTC time> by <user>``) masked."""
    return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00 by", "<recorded> by", text)


def roster(url: str, course: Any) -> None:
    api.roster(SAMPLE / "roster.csv", store=url, course=course)


# ------------------------------------------------------------------ the dialect and URLs
def test_missing_server_binaries_fail_with_the_install_command(tmp_path):
    with pytest.raises(PgUnavailable) as err:
        find_bindir(env={"PATH": str(tmp_path)}, lib=tmp_path)
    assert str(err.value) == ("PostgreSQL server binaries (initdb, pg_ctl) not found: "
                              "apt-get install postgresql")


def test_dialect_and_redaction_examples_run():
    for module in (dialect, store):
        assert doctest.testmod(module).failed == 0


@pytest.mark.parametrize(("sql", "expected"), [
    ("SELECT * FROM events WHERE item = ?", ("SELECT * FROM events WHERE item = %s", False)),
    ("INSERT INTO tests (event_id, name) VALUES (?, ?)",
     ("INSERT INTO tests (event_id, name) VALUES (%s, %s)", False)),
    ("insert or ignore into extensions (student) values (?);",
     ("INSERT INTO extensions (student) values (%s) ON CONFLICT DO NOTHING RETURNING id", True)),
    ("INSERT INTO roster_imports (path) VALUES (?) RETURNING id",
     ("INSERT INTO roster_imports (path) VALUES (%s) RETURNING id", False)),
    ("SELECT '?', \"a?\", x FROM t WHERE y LIKE '%a'", (
        "SELECT '?', \"a?\", x FROM t WHERE y LIKE '%%a'", False)),
])
def test_statements_are_translated_for_postgres(sql, expected):
    assert dialect.to_postgres(sql) == expected


def test_both_url_forms_open_the_same_store(pg, gb_course):
    url = pg.create_database("forms")
    name = url.split("?")[0].rsplit("/", 1)[1]
    roster(pg.url(name, style="query"), gb_course)  # postgresql:///db?host=/socket/dir
    with Store(pg.url(name, style="host")) as st:   # postgresql://user@%2Fsocket%2Fdir/db
        assert st.dialect == "postgresql" and len(st.roster()) == 42
        assert str(st.path) == pg.url(name, style="host")
        assert st.path.parent == Path.cwd()


def test_unreachable_server_is_one_line_error_without_the_password(tmp_path):
    url = f"postgresql://ta:s3cret@/grades?host={tmp_path}"
    with pytest.raises(GradebookError) as err:
        Store(url)
    message = str(err.value)
    assert "\n" not in message and "s3cret" not in message
    assert message.startswith(f"store postgresql://ta:***@/grades?host={tmp_path}: psycopg "
                              "cannot connect: ")
    r = CliRunner().invoke(gradebook, ["build", "--store", url])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1


def test_opening_twice_creates_the_schema_once(pg):
    url = pg.create_database("twice")
    Store(url).close()
    with Store(url) as st:
        triggers = st.frame("SELECT tgname FROM pg_trigger WHERE tgrelid = 'events'::regclass "
                            "AND NOT tgisinternal ORDER BY tgname")
        kinds = st.frame("SELECT data_type FROM information_schema.columns "
                         "WHERE table_name = 'events' AND column_name = 'score'")
    assert list(triggers["tgname"]) == sorted(dialect.PG_TRIGGERS)
    assert list(kinds["data_type"]) == ["double precision"]  # REAL would be 4 bytes


# -------------------------------------------------------- guarantees, on both backends
def test_ingest_is_idempotent(store_url, gb_course):
    roster(store_url, gb_course)
    first = api.ingest([RESULTS, SAMPLE / "gradescope"], store=store_url, course=gb_course)
    assert first.added == 450 and count(store_url, "events") == 450
    again = api.ingest([RESULTS, SAMPLE / "gradescope"], store=store_url, course=gb_course)
    assert again.added == 0 and count(store_url, "events") == 450
    roster(store_url, gb_course)  # the same roster file again: unchanged
    assert count(store_url, "roster_imports") == 1
    ext = SAMPLE / "extensions.csv"
    added = api.extensions(ext, store=store_url, course=gb_course)
    assert added > 0 and api.extensions(ext, store=store_url, course=gb_course) == 0


@pytest.mark.parametrize("statement", ["UPDATE events SET score = 0",
                                       "DELETE FROM events WHERE id = 1",
                                       "DELETE FROM events"])
def test_events_are_append_only(store_url, gb_course, statement):
    roster(store_url, gb_course)
    api.ingest([RESULTS / "01_tensor"], store=store_url, course=gb_course)
    before = count(store_url, "events")
    with Store(store_url) as st, pytest.raises(Exception, match="append-only"):
        st.conn.execute(statement)
    assert count(store_url, "events") == before > 0


def test_truncate_is_refused_on_postgres(pg, gb_course):
    url = pg.create_database("truncate")
    roster(url, gb_course)
    api.ingest([RESULTS / "01_tensor"], store=url, course=gb_course)
    before = count(url, "events")
    with Store(url) as st, pytest.raises(psycopg.Error, match="append-only"):
        st.conn.execute("TRUNCATE events CASCADE")
    assert count(url, "events") == before > 0


def test_an_error_mid_ingest_writes_nothing(store_url, gb_course, monkeypatch):
    roster(store_url, gb_course)
    sources = parse_inputs([RESULTS], course=gb_course)
    calls = []

    def failing(self, conn, event_id, tests):
        calls.append(event_id)
        if len(calls) == 50:
            raise RuntimeError("disk on fire")
        return original(self, conn, event_id, tests)

    original = Store.insert_tests
    monkeypatch.setattr(Store, "insert_tests", failing)
    with Store(store_url) as st, pytest.raises(RuntimeError, match="disk on fire"):
        record(st, sources)
    monkeypatch.undo()
    assert [count(store_url, t) for t in ("events", "tests", "sources")] == [0, 0, 0]
    assert count(store_url, "roster") == 42
    assert api.ingest([RESULTS], store=store_url, course=gb_course).added == 409


def test_a_refused_write_is_one_line_error_and_writes_nothing(pg, gb_course):
    url = pg.create_database("refused")
    roster(url, gb_course)
    event = {"kind": "manual", "student_ref": "sid:S1001", "item": "01_tensor", "score": 1.0,
             "source_path": "x.csv", "source_sha256": "ab", "recorded_at": "2027-01-01",
             "recorded_by": "ta"}
    with Store(url) as st, pytest.raises(GradebookError) as err:
        with st.transaction() as conn:
            st.insert_event(conn, event)
            st.insert_event(conn, {**event, "item": "02_activations", "name": "nul\x00byte"})
    assert "\n" not in str(err.value) and "nothing was written" in str(err.value)
    assert count(url, "events") == 0



def test_kill_9_mid_ingest_leaves_the_store_as_before(store_url, gb_course):
    roster(store_url, gb_course)
    kill_mid_ingest(store_url, slow_s="0.01")

    assert [count(store_url, t) for t in ("events", "tests", "sources")] == [0, 0, 0]
    assert count(store_url, "roster") == 42  # earlier committed work is intact
    assert api.ingest([RESULTS], store=store_url, course=gb_course).added == 409
    assert api.ingest([RESULTS], store=store_url, course=gb_course).added == 0


def test_concurrent_ingests_of_the_same_files_record_each_event_once(store_url, gb_course):
    roster(store_url, gb_course)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    children = [subprocess.Popen([sys.executable, "-c", INGEST_CHILD, store_url, str(RESULTS)],
                                 stdout=subprocess.DEVNULL, env=env, cwd=REPO)
                for _ in range(2)]
    assert [c.wait(timeout=1800) for c in children] == [0, 0]
    assert count(store_url, "events") == 409
    with Store(store_url) as st:  # one ingest added everything, the other nothing
        added = st.frame("SELECT SUM(added) AS n FROM sources")["n"].iloc[0]
    assert int(added) == 409


# ------------------------------------------------- the sample term: same numbers as SQLite
@pytest.fixture(scope="session")
def pg_sample(pg: PgServer, gb_course) -> str:
    """The whole sample term loaded into a PostgreSQL store (read-only for tests)."""
    url = pg.create_database("sample")
    api.load_sample(store=url, course=gb_course)
    return url


@pytest.fixture(scope="session")
def pg_built(pg_sample: str, gb_course):
    return api.build(store=pg_sample, course=gb_course)


def test_sample_term_gives_the_hand_computed_credit(pg_built, sample_built):
    grades = pg_built.grades.set_index("student")
    for sid, (percent, letter) in HAND_COMPUTED.items():
        assert grades.at[sid, "percent"] == pytest.approx(percent, abs=1e-6), sid
        assert grades.at[sid, "letter"] == letter, sid
    pd.testing.assert_frame_equal(pg_built.grades, sample_built.grades)
    pd.testing.assert_frame_equal(pg_built.result.scores, sample_built.result.scores)


@pytest.mark.parametrize("table", ["events", "tests", "roster", "extensions", "sources"])
def test_store_frames_are_the_same_as_sqlite(pg_sample, sample_store, table):
    with Store(pg_sample) as pgs, Store(sample_store) as lite:
        ours, theirs = getattr(pgs, table)(), getattr(lite, table)()
    if table == "sources":
        theirs["path"] = theirs["path"].astype(str)
    drop = [c for c in RECORDING_TIME if c in ours]
    pd.testing.assert_frame_equal(ours.drop(columns=drop), theirs.drop(columns=drop))
    assert len(ours) > 0


def test_exports_and_explanations_are_identical_to_sqlite(pg_sample, sample_store, gb_course,
                                                          tmp_path):
    for fmt in ("canvas", "gradescope"):
        a = api.export(fmt=fmt, output=tmp_path / f"pg-{fmt}.csv", store=pg_sample,
                       course=gb_course)
        b = api.export(fmt=fmt, output=tmp_path / f"lite-{fmt}.csv", store=sample_store,
                       course=gb_course)
        assert a.read_bytes() == b.read_bytes(), fmt
    api.build(store=pg_sample, course=gb_course, output=tmp_path / "pg")
    api.build(store=sample_store, course=gb_course, output=tmp_path / "lite")
    for name in ("grades.csv", "scores.csv"):
        assert (tmp_path / "pg" / name).read_bytes() == (tmp_path / "lite" / name).read_bytes()
    for sid in HAND_COMPUTED:
        assert (recorded(api.explain(sid, store=pg_sample, course=gb_course))
                == recorded(api.explain(sid, store=sample_store, course=gb_course)))
    assert (api.check(store=pg_sample, course=gb_course)
            == api.check(store=sample_store, course=gb_course))


def test_every_command_works_unchanged_through_the_cli(pg_sample, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # build without -o writes next to the store: here

    def run(*args: Any) -> Any:
        return CliRunner().invoke(gradebook, [str(a) for a in (*args, "--store", pg_sample)],
                                  catch_exceptions=False)

    r = run("build")
    assert r.exit_code == 0 and "42 students, items due by 2027-02-25 23:59" in r.output
    assert (tmp_path / "grades.csv").is_file() and (tmp_path / "scores.csv").is_file()
    r = run("ingest", SAMPLE / "results", SAMPLE / "gradescope", SAMPLE / "regrade")
    assert r.exit_code == 0 and "total: 0 event(s) added" in r.output, r.output
    r = run("ingest", SAMPLE / "regrade", "--dry-run")
    assert r.exit_code == 0 and "nothing written" in r.output
    assert run("export", "--canvas", "-o", tmp_path / "c.csv").exit_code == 0
    r = run("explain", "aturing@example.edu")
    assert r.exit_code == 0 and "-> B" in r.output
    assert run("report", "-o", tmp_path / "r.html").exit_code == 0
    assert "data:image/png;base64," in (tmp_path / "r.html").read_text(encoding="utf-8")
    r = run("check")
    assert r.exit_code == 0 and "0 error(s)" in r.output
