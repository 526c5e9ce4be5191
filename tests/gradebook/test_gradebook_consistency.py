"""Ingest refuses what it cannot record faithfully (issue 12, items 1 and 3).

* One reader of Gradescope's export metadata for every command: a Ruby ``BigDecimal`` score
  reads the same in ``tito gradebook ingest`` as in ``tito regrade``.
* A score outside [0, max], a top-level ``score`` that disagrees with its tests, or an export
  ``:score:`` that disagrees with its ``:results:`` is refused with one line naming the file and
  the field, and nothing is written; ``--accept-inconsistent REASON`` records it anyway with
  the reason, the problems and the user in the event (shown by ``check`` and ``explain``).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from coursekit import gradescope_export as gs
from gradebook import api
from gradebook.errors import GradebookError

ROSTER = (
    "Student,ID,SIS User ID,SIS Login ID,Section,Track\n"
    '"Lovelace, Ada",1,S1,ada,LEC 001,full\n'
    '"Turing, Alan",2,S2,alan,LEC 002,full\n'
)
BIGDECIMAL_EXPORT = """\
submission_11: !ruby/hash:ActiveSupport::HashWithIndifferentAccess
  :submitters:
  - :name: Ada Lovelace
    :sid: S1
    :email: ada@uni.edu
  :created_at: 2027-01-25 17:59:00.000000000 -05:00
  :score: !ruby/object:BigDecimal 18:0.46e2
  :results:
{results}
submission_12:
  :submitters:
  - :name: Alan Turing
    :sid: S2
    :email: alan@uni.edu
  :created_at: 2027-01-25 18:10:00.000000000 -05:00
  :score: !ruby/object:BigDecimal 27:0.315e2
"""


def _results(scores: list[float], maxes: list[float], top: float | None = None,
             module: str = "01_tensor") -> dict[str, Any]:
    tests = [{"name": f"{module} · t{i}", "score": s, "max_score": m,
              "tags": [f"module:{module}", "hidden"]}
             for i, (s, m) in enumerate(zip(scores, maxes, strict=True))]
    return {"score": sum(scores) if top is None else top, "tests": tests,
            "extra_data": {"module": module}}


def _indented_json(doc: dict[str, Any]) -> str:
    return "\n".join("    " + line for line in json.dumps(doc, indent=1).splitlines())


def _submission(folder: Path, results: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.json").write_text(json.dumps(results))
    (folder / "submission_metadata.json").write_text(json.dumps(
        {"id": 7, "created_at": "2027-01-25T10:00:00-05:00",
         "users": [{"email": "ada@uni.edu", "sid": "S1", "name": "Ada"}]}))
    return folder / "results.json"


@pytest.fixture()
def store(tmp_path: Path, gb_course: Any) -> Path:
    path = tmp_path / "gb.sqlite"
    (tmp_path / "roster.csv").write_text(ROSTER)
    api.roster(tmp_path / "roster.csv", store=path, course=gb_course)
    return path


def _events(store: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(store) as conn:
        return conn.execute("SELECT kind, sid, item, score, max_score, details FROM events "
                            "ORDER BY id").fetchall()


# ----------------------------------------------------------------------------- item 1
def test_bigdecimal_scores_ingest_as_numbers(tmp_path: Path, store: Path,
                                             gb_course: Any) -> None:
    res = _results([21, 25], [25, 25])
    folder = tmp_path / "export" / "assignment_5001_export"
    folder.mkdir(parents=True)
    (folder / gs.METADATA_YML).write_text(
        BIGDECIMAL_EXPORT.format(results=_indented_json(res)))
    api.ingest([tmp_path / "export"], store=store, course=gb_course, module="01")
    got = {(sid, item): (score, top) for _, sid, item, score, top, _ in _events(store)}
    assert got == {("S1", "01_tensor"): (46.0, 50.0), ("S2", "01_tensor"): (31.5, 50.0)}


def test_regrade_and_gradebook_read_an_export_with_the_same_reader() -> None:
    import staff.regrade.core as rg

    assert rg.load_metadata_yaml is gs.load_metadata_yaml
    assert rg.parse_records is gs.parse_records
    text = BIGDECIMAL_EXPORT.format(results=_indented_json(_results([21, 25], [25, 25])))
    recs = gs.parse_records(gs.load_metadata_yaml(text, "m.yml"), "m.yml")
    assert [(r.key, r.old_score) for r in recs] == [("submission_11", 46.0),
                                                    ("submission_12", 31.5)]


def test_bigdecimal_dumps() -> None:
    assert gs.bigdecimal("18:0.50e2") == 50.0
    assert gs.bigdecimal("0.125e1") == 1.25
    assert gs.bigdecimal("27:NaN") is None and gs.bigdecimal("x") is None


# ----------------------------------------------------------------------------- item 3
@pytest.mark.parametrize(("scores", "maxes", "top", "needle"), [
    ([60], [50], None, "tests[0].score: 60 is outside 0..50"),
    ([-5, 10], [25, 25], None, "tests[0].score: -5 is outside 0..25"),
    ([25, 25], [25, 25], 75, "score: 75 but its tests sum to 50"),
])
def test_inconsistent_results_are_refused_in_one_line(
        tmp_path: Path, store: Path, gb_course: Any, scores: list[float], maxes: list[float],
        top: float | None, needle: str) -> None:
    path = _submission(tmp_path / "s", _results(scores, maxes, top))
    with pytest.raises(GradebookError) as err:
        api.ingest([path], store=store, course=gb_course)
    line = str(err.value)
    assert "\n" not in line and str(path) in line and needle in line, line
    assert "--accept-inconsistent" in line
    assert _events(store) == []


def test_export_score_disagreeing_with_its_results_is_refused(
        tmp_path: Path, store: Path, gb_course: Any) -> None:
    res = _results([20, 20], [25, 25])  # 40, while :score: says 46 (changed by hand?)
    folder = tmp_path / "export" / "assignment_5001_export"
    folder.mkdir(parents=True)
    (folder / gs.METADATA_YML).write_text(
        BIGDECIMAL_EXPORT.format(results=_indented_json(res)))
    with pytest.raises(GradebookError, match=r"submission_11: :score: 46 but its :results: "
                                             r"give 40"):
        api.ingest([tmp_path / "export"], store=store, course=gb_course, module="01")
    assert _events(store) == []


def test_grade_csv_total_above_max_is_refused(tmp_path: Path, store: Path,
                                              gb_course: Any) -> None:
    csv = tmp_path / "01_tensor_scores.csv"
    csv.write_text("First Name,Last Name,SID,Email,Total Score,Max Points,Status,"
                   "Submission Time\nAda,Lovelace,S1,ada@uni.edu,60,50,Graded,"
                   "2027-01-25 10:00:00 -0500\n")
    with pytest.raises(GradebookError, match=r"01_tensor_scores\.csv:2: Total Score: 60 is "
                                             r"outside 0\.\.50"):
        api.ingest([csv], store=store, course=gb_course)
    assert _events(store) == []


def test_accept_inconsistent_records_what_the_student_saw_audited(
        tmp_path: Path, store: Path, gb_course: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRADEBOOK_USER", "ta-jane")
    path = _submission(tmp_path / "s", _results([25, 25], [25, 25], top=45))
    with pytest.raises(GradebookError, match="needs a reason"):
        api.ingest([path], store=store, course=gb_course, accept="  ")
    api.ingest([path], store=store, course=gb_course, accept="instructor lowered it by hand")
    ((kind, sid, item, score, top, details),) = _events(store)
    assert (kind, sid, item, score, top) == ("results_json", "S1", "01_tensor", 45.0, 50.0)
    acc = json.loads(details)["accepted"]
    assert acc["reason"] == "instructor lowered it by hand" and acc["by"] == "ta-jane"
    assert "score: 45 but its tests sum to 50" in acc["problems"][0]
    text = api.explain("S1", store=store, course=gb_course)
    assert "accepted although inconsistent" in text and "instructor lowered it" in text


def test_accepted_score_above_max_is_a_note_in_check(tmp_path: Path, store: Path,
                                                     gb_course: Any) -> None:
    path = _submission(tmp_path / "s", _results([52], [50]))
    api.ingest([path], store=store, course=gb_course, accept="extra credit, approved")
    found = [p for p in api.check(store=store, course=gb_course) if p.field == "score"]
    assert [p.level for p in found] == ["note"] and "extra credit" in found[0].message


def test_cli_refuses_then_accepts(tmp_path: Path, store: Path) -> None:
    from gradebook.cli import gradebook as gradebook_cmd

    path = _submission(tmp_path / "s", _results([60], [50]))
    runner = CliRunner()
    res = runner.invoke(gradebook_cmd, ["ingest", str(path), "--store", str(store)])
    assert res.exit_code != 0 and "outside 0..50" in res.output
    res = runner.invoke(gradebook_cmd, ["ingest", str(path), "--store", str(store),
                                        "--accept-inconsistent", "bonus round"])
    assert res.exit_code == 0, res.output
    assert [e[3] for e in _events(store)] == [60.0]
