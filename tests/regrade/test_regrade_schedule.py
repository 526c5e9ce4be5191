"""A regrade before an earlier module closes (issue 34 items 2 and 3).

Module 02 submissions uploaded alone, old scores 50 (the suite passed them when module 01 was
graded on its reference). Regraded while module 01 is still open, module 01 comes from its
release stub: every row says so in the table and the CSV, and ``--apply`` holds those drops
back (exit 1, old scores kept) unless the TA names them with ``--accept-drops REASON``, which
is recorded in each regrade event. Regraded once module 01 has closed, the same export gives
the old scores back. ``--accept-inconsistent`` gets ``--apply`` past an export whose
``:score:`` disagrees with its results, as ``gradebook ingest`` does.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from coursekit.course import load_course
from gradebook import api
from staff.regrade.cli import regrade as regrade_cmd
from staff.regrade.core import RegradeError, regrade
from staff.synthetic import synth_export

OPEN = dt.datetime(2027, 1, 30, 12, 0, tzinfo=dt.timezone.utc)  # 01 due, still open
CLOSED = dt.datetime(2027, 2, 22, 12, 0, tzinfo=dt.timezone.utc)  # 01 closed


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("sched")
    made = synth_export(module="02", n=2, out=tmp / "export", seed=1, mix={"correct": 1.0},
                        as_zip=False)
    course = load_course()
    assert course.closes_at(course.module("01")) > OPEN
    assert course.closes_at(course.module("01")) < CLOSED
    dry = regrade(export=made.path, module="02", out=tmp / "dry", dry_run=True, now=OPEN)
    return {"tmp": tmp, "made": made, "dry": dry}


def _store(tmp: Path, made: Any, name: str) -> Path:
    store = tmp / f"{name}.sqlite"
    api.roster(made.roster, store=store)
    return store


def _events(store: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(store) as conn:
        return conn.execute("SELECT kind, sid, item, score, details FROM events "
                            "ORDER BY id").fetchall()


def test_every_drop_says_it_came_from_a_release_stub(export: dict[str, Any]) -> None:
    dry = export["dry"]
    assert len(dry.rows) == 2
    for row in dry.rows:
        assert row.old_score == 50 and row.new_score is not None and row.new_score < 50
        assert row.stubs == ["01_tensor"] and row.stub_drop
        [note] = [n for n in row.notes if "release stub" in n]
        assert "01_tensor" in note and "still open until 2027-02-04" in note
        assert "--accept-drops" in note
    assert dry.summary()["stub_drops"] == 2
    with open(export["tmp"] / "dry" / "regrade_report.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 2 and all("release stub of 01_tensor" in r["notes"] for r in rows)
    doc = json.loads((export["tmp"] / "dry" / "regrade_report.json").read_text())
    assert all(s["stub_modules"] == ["01_tensor"] for s in doc["submissions"])


def test_the_table_marks_stub_drops(export: dict[str, Any]) -> None:
    from rich.console import Console

    from staff.regrade.core import render

    console = Console(record=True, width=250)
    render(export["dry"], console)
    text = console.export_text()
    assert "(stub)" in text and "2 drop(s) were graded with the release stub of 01_tensor" in text


def test_apply_holds_stub_drops_back_unless_accepted(export: dict[str, Any]) -> None:
    tmp, made = export["tmp"], export["made"]
    store = _store(tmp, made, "held")
    res = CliRunner().invoke(regrade_cmd, [str(made.path), "--module", "02", "--apply",
                                           "--store", str(store), "-o", str(tmp / "dry"),
                                           "--as-of", "2027-01-30 07:00"])
    assert res.exit_code == 1, res.output
    last = res.output.strip().splitlines()[-1]
    assert last.startswith("tito: held back 2 lower score(s) graded with the release stub of "
                           "01_tensor") and "--accept-drops REASON" in last
    recorded = _events(store)
    assert {e[0] for e in recorded} == {"gradescope_export"}  # the old scores, nothing else
    assert {e[3] for e in recorded} == {50.0}

    ok = regrade(export=made.path, module="02", out=tmp / "dry", apply=True, store=store,
                 now=OPEN, accept_drops="module 01 closed for everyone on the 3rd (memo)")
    assert ok.ingest["held_back"] == [] and ok.ingest["results"]["regrades"] == 2
    regrades = [e for e in _events(store) if e[0] == "regrade"]
    assert len(regrades) == 2
    for e in regrades:
        accepted = json.loads(e[4])["accepted_drop"]
        assert accepted["reason"].startswith("module 01 closed") and accepted["by"]
        assert accepted["stub_modules"] == ["01_tensor"]


def test_after_module_01_closes_the_same_export_regrades_on_its_reference(
        export: dict[str, Any]) -> None:
    tmp, made = export["tmp"], export["made"]
    later = regrade(export=made.path, module="02", out=tmp / "dry", dry_run=True, now=CLOSED)
    assert [r.new_score for r in later.rows] == [50.0, 50.0]
    assert all(not r.stubs and not r.stub_drop for r in later.rows)
    assert later.reused == 0, "a finished task is not reused once its open modules differ"
    assert later.graded_now == 2


def test_accept_flags_need_a_reason_and_apply(export: dict[str, Any]) -> None:
    made = export["made"]
    with pytest.raises(RegradeError, match="--accept-drops only matters with --apply"):
        regrade(export=made.path, module="02", dry_run=True, accept_drops="x")
    with pytest.raises(RegradeError, match="--accept-inconsistent: give the reason"):
        regrade(export=made.path, module="02", apply=True, accept_inconsistent="  ")


def test_apply_accept_inconsistent_works_as_in_gradebook_ingest(tmp_path: Path) -> None:
    made = synth_export(module="01", n=2, out=tmp_path / "export", seed=2,
                        mix={"correct": 1.0}, as_zip=False)
    meta = next(made.path.rglob("submission_metadata.yml"))
    text = meta.read_text()
    first = text.index(":score: !ruby/object:BigDecimal 18:0.5e2")
    meta.write_text(text[:first] + ":score: 45.0" + text[first + len(
        ":score: !ruby/object:BigDecimal 18:0.5e2"):])  # changed by hand in Gradescope
    store = tmp_path / "gb.sqlite"
    api.roster(made.roster, store=store)
    with pytest.raises(RegradeError, match="--accept-inconsistent"):
        regrade(export=made.path, module="01", out=tmp_path / "out", apply=True, store=store)
    with pytest.raises(Exception, match="--accept-inconsistent"):  # ingesting first: refused
        api.ingest([made.path], store=store)
    done = regrade(export=made.path, module="01", out=tmp_path / "out", apply=True,
                   store=store, accept_inconsistent="score edited in Gradescope by the TA")
    assert done.ingest["export"]["new"] == 2
    with sqlite3.connect(store) as conn:
        details = [json.loads(d) for (d,) in conn.execute(
            "SELECT details FROM events WHERE kind='gradescope_export' AND details IS NOT NULL")]
    assert any(d.get("accepted", {}).get("reason", "").startswith("score edited")
               for d in details)


def test_a_pending_result_is_not_graded_and_feedback_only_errors_are() -> None:
    """A regrade row is "not graded" (old score kept) when the harness says tests are pending
    or the run failed; grader errors that cost no points (a leaderboard entry) keep the
    score; an older harness's results (no ``pending`` list) with grader errors do not."""
    from staff.regrade.task import course_side_failure

    tests = [{"name": "t", "score": 1.0, "max_score": 1.0}]
    pending = {"tests": tests, "extra_data": {"pending": [
        {"test": "milestone · cnn_cifar_1998", "why": "milestone cnn_cifar_1998: test data "
                                                      "is not installed"}]}}
    why = course_side_failure(pending)
    assert why is not None and why.startswith("pending (course side): 1 test(s) not scored")
    assert "test data is not installed" in why
    assert course_side_failure({"tests": tests, "extra_data": {
        "pending": [], "grader_errors": ["leaderboard: malformed entries dropped"]}}) is None
    assert course_side_failure({"tests": tests, "extra_data": {
        "grader_errors": ["milestone x: no provider file"]}}) == (
        "autograder error: milestone x: no provider file")
    assert course_side_failure({"tests": [], "extra_data": {
        "grader_error": "internal error: KeyError"}}) == (
        "autograder error: internal error: KeyError")
