"""tito regrade: export parsing, grading each submission, the diff, dry run, apply, bad input.

The fixture export (``make_export.py``) is built from the sample class: six submissions whose
old scores differ from the current suite's for some students, one corrupt notebook, one
missing notebook, one renamed notebook. Grading one module-01 notebook takes about a second.
"""

from __future__ import annotations

import json
import sqlite3
import zipfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from make_export import build_export

from coursekit.gradescope_export import GradescopeExportError
from staff.regrade.cli import regrade as regrade_cmd
from staff.regrade.core import (
    diff_tests,
    load_metadata_yaml,
    open_export,
    parse_records,
    regrade,
)


def _old_scores() -> dict[str, float]:
    """The export's old scores, from the fixture's old results against today's case points
    (make_export's table: 46, 35, 10... when the suite's points were last laid out)."""
    from make_export import old_results, submissions

    return {s.sid: (s.old_score if s.old_fails is None
                    else old_results(s.old_fails, s.old_score, s.old_passes)[1])
            for s in submissions().values()}


OLD = _old_scores()
# the partial submission fails the same tests as before: same score
NEW = {"S1001": 50.0, "S1003": OLD["S1003"], "S1002": 0.0, "S1004": 0.0, "S1005": 0.0,
       "S1006": 50.0}


def _by_sid(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["students"][0]["sid"]: r for r in rows}


def _events(store: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(store) as conn:
        return conn.execute(
            "SELECT id, kind, sid, score, submission_id, details FROM events ORDER BY id"
        ).fetchall()


# ----------------------------------------------------------------------------- dry run (CLI)
@pytest.fixture(scope="module")
def dry(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("dry")
    export = build_export(tmp)
    store = tmp / "gradebook.sqlite"
    out = tmp / "out"
    result = CliRunner().invoke(regrade_cmd, [str(export), "--module", "01", "--dry-run",
                                              "-o", str(out), "--store", str(store)])
    report = json.loads((out / "regrade_report.json").read_text()) if out.exists() else {}
    return {"result": result, "store": store, "out": out, "report": report}


def test_dry_run_exits_zero_and_prints_the_diff(dry: dict[str, Any]) -> None:
    res = dry["result"]
    assert res.exit_code == 0, res.output
    for name in ("Ada Lovelace", "Grace Hopper", "Alan Turing", "Barbara Liskov",
                 "Edsger Dijkstra", "Frances Allen"):
        assert name in res.output
    assert "S1004" in res.output and "bliskov@example.edu" in res.output
    assert "-50" in res.output and f"+{NEW['S1001'] - OLD['S1001']:g}" in res.output
    assert "dry run: the gradebook was not touched" in res.output


def test_dry_run_writes_nothing_to_the_store(dry: dict[str, Any]) -> None:
    assert not dry["store"].exists()
    assert dry["report"]["ingest"] is None and dry["report"]["dry_run"] is True


def test_diff_scores_and_deltas(dry: dict[str, Any]) -> None:
    rows = _by_sid(dry["report"]["submissions"])
    assert {sid: r["old_score"] for sid, r in rows.items()} == OLD
    assert {sid: r["new_score"] for sid, r in rows.items()} == NEW
    assert {sid: r["delta"] for sid, r in rows.items()} == {
        sid: NEW[sid] - OLD[sid] for sid in OLD}
    assert all(r["max_score"] == 50.0 for r in rows.values())
    summary = dry["report"]["summary"]
    assert (summary["submissions"], summary["up"], summary["down"], summary["same"]) == (
        6, 1, 2, 3)
    # drops first: they are the ones to review
    order = [r["students"][0]["sid"] for r in dry["report"]["submissions"]]
    assert order[:3] == ["S1004", "S1002", "S1001"]


def test_diff_lists_the_tests_that_changed(dry: dict[str, Any]) -> None:
    rows = _by_sid(dry["report"]["submissions"])
    ada = {(c["name"], c["old_status"], c["new_status"]) for c in rows["S1001"]["changed_tests"]}
    assert ada == {("01_tensor · matmul_batched", "failed", "passed"),
                   ("01_tensor · matmul_shape_errors_name_shapes", "failed", "passed")}
    assert rows["S1003"]["changed_tests"] == []  # same score, same failing tests
    alan = rows["S1002"]["changed_tests"]
    assert len(alan) == 5 and {c["new_status"] for c in alan} == {"failed"}
    assert rows["S1005"]["changed_tests"] == []  # no old results to compare with


def test_broken_submissions_get_zero_with_a_message(dry: dict[str, Any]) -> None:
    rows = _by_sid(dry["report"]["submissions"])
    corrupt, missing = rows["S1004"], rows["S1005"]
    assert corrupt["new_score"] == 0 and corrupt["outcome"] == "zero" and corrupt["graded"]
    assert any("not valid notebook JSON" in n for n in corrupt["notes"])
    assert missing["new_score"] == 0 and missing["outcome"] == "zero"
    assert any("no notebook named 01_tensor.ipynb" in n and "tensor_notes.txt" in n
               for n in missing["notes"])
    for sid in ("S1004", "S1005"):
        results = json.loads((dry["out"] / rows[sid]["results"]).read_text())
        assert results["score"] == 0 and results["tests"]
        assert "could not be graded" in results["output"]


def test_renamed_notebook_is_graded_with_a_note(dry: dict[str, Any]) -> None:
    row = _by_sid(dry["report"]["submissions"])["S1006"]
    assert row["new_score"] == 50 and row["graded"]
    assert any("01_tensor (1).ipynb" in n for n in row["notes"])


def test_results_and_metadata_written_per_submission(dry: dict[str, Any]) -> None:
    out = dry["out"]
    meta = json.loads((out / "submission_700001" / "submission_metadata.json").read_text())
    assert meta["id"] == 700001
    assert meta["users"] == [{"name": "Ada Lovelace", "sid": "S1001",
                              "email": "alovelace@example.edu"}]
    assert meta["created_at"].startswith("2027-01-25T17:59:00")
    assert meta["assignment"]["id"] == 5001 and meta["assignment"]["total_points"] == 50
    assert meta["previous_submissions"][0]["score"] == 30.0
    results = json.loads((out / "submission_700001" / "results.json").read_text())
    assert results["extra_data"]["module"] == "01_tensor"
    assert results["extra_data"]["submission_metadata"]["id"] == 700001
    csv_lines = (out / "regrade_report.csv").read_text().splitlines()
    assert csv_lines[0].startswith("module,submission_id,name,sid,email,old_score,new_score")
    assert len(csv_lines) == 7


# ----------------------------------------------------------------------------- apply
@pytest.fixture(scope="module")
def applied(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("apply")
    export = build_export(tmp)
    store = tmp / "gradebook.sqlite"
    first = regrade(export=export, module="tensor", out=tmp / "out", apply=True, store=store,
                    jobs=2)
    events_after_first = _events(store)
    second = regrade(export=export, module="01_tensor", out=tmp / "out", apply=True,
                     store=store, jobs=2)
    return {"first": first, "second": second, "store": store, "out": tmp / "out",
            "events1": events_after_first, "events2": _events(store)}


def test_apply_records_old_scores_then_regrade_events(applied: dict[str, Any]) -> None:
    ing = applied["first"].ingest
    assert ing["export"]["new"] == 6
    assert ing["results"]["regrades"] == 4 and ing["results"]["unchanged"] == 2
    regrades = {e[2]: e for e in applied["events1"] if e[1] == "regrade"}
    assert set(regrades) == {"S1001", "S1002", "S1004", "S1005"}  # S1005: now suite-scored
    details = json.loads(regrades["S1001"][5])
    assert details["diff"] == NEW["S1001"] - OLD["S1001"]
    assert details["previous_score"] == OLD["S1001"]
    assert details["previous_event"] > 0
    assert regrades["S1004"][3] == 0.0


def _scores(report: Any) -> dict[str, Any]:
    return {r.key: (r.new_score, [t.output[:160] if hasattr(t, "output") else str(t)
                                  for t in getattr(r, "changed", [])][:3])
            for r in report.rows}


def test_second_apply_changes_nothing(applied: dict[str, Any]) -> None:
    ing = applied["second"].ingest
    why = f"first: {_scores(applied['first'])}\nsecond: {_scores(applied['second'])}"
    assert ing["export"]["new"] == 0 and ing["export"]["regrades"] == 0, why
    assert ing["results"]["new"] == 0 and ing["results"]["regrades"] == 0, why
    assert applied["events2"] == applied["events1"]


def test_apply_writes_reports_and_parallel_matches_serial(
        applied: dict[str, Any], dry: dict[str, Any]) -> None:
    report = json.loads((applied["out"] / "regrade_report.json").read_text())
    assert report["ingest"]["results"]["regrades"] == 0  # the second run's report
    assert (applied["out"] / "regrade_report.csv").is_file()
    assert {r.students[0].sid: r.new_score for r in applied["first"].rows} == NEW
    assert applied["first"].jobs == 2 and "jobs" not in dry["report"]  # timing is not report


# ----------------------------------------------------------------------------- layouts
def test_nested_zip_is_found(tmp_path: Path) -> None:
    export = build_export(tmp_path, only=["700001", "700005"], nested=True)
    names = zipfile.ZipFile(export).namelist()
    assert any(n.startswith("export/assignment_5001_export/submission_metadata.yml")
               for n in names)
    report = regrade(export=export, module="01", dry_run=True, jobs=2)
    assert {r.key: r.new_score for r in report.rows} == {"submission_700001": 50.0,
                                                         "submission_700005": 0.0}
    assert report.outdir is None


def test_unpacked_nested_folder_is_found(tmp_path: Path) -> None:
    folder = build_export(tmp_path, only=["700002"], nested=True, as_zip=False)
    exp = open_export(folder, workdir=tmp_path / "work")
    assert exp.root.name == "assignment_5001_export" and exp.assignment_id == "5001"
    report = regrade(export=folder, module="01", out=tmp_path / "out")
    assert [(r.old_score, r.new_score) for r in report.rows] == [(OLD["S1003"], OLD["S1003"])]
    assert (tmp_path / "out" / "regrade_report.json").is_file()


# ----------------------------------------------------------------------------- bad input
def _run(args: list[str]) -> Any:
    return CliRunner().invoke(regrade_cmd, args)


def _one_line_exit_2(res: Any, *needles: str) -> str:
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("tito: "), res.output
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def test_not_a_zip(tmp_path: Path) -> None:
    bogus = tmp_path / "export.zip"
    bogus.write_text("not a zip")
    _one_line_exit_2(_run([str(bogus), "--module", "01"]), str(bogus), "not a zip archive")


def test_folder_without_metadata(tmp_path: Path) -> None:
    (tmp_path / "a" / "b" / "c").mkdir(parents=True)
    (tmp_path / "a" / "b" / "c" / "submission_metadata.yml").write_text("{}")  # too deep
    _one_line_exit_2(_run([str(tmp_path), "--module", "01", "--dry-run"]), str(tmp_path),
                     "submission_metadata.yml")


def _yml_export(tmp: Path, text: str) -> Path:
    root = tmp / "assignment_1_export"
    root.mkdir(parents=True)
    (root / "submission_metadata.yml").write_text(text)
    return tmp


def test_invalid_yaml_names_the_file(tmp_path: Path) -> None:
    export = _yml_export(tmp_path, "submission_1:\n  :score: [1, 2\n")
    _one_line_exit_2(_run([str(export), "--module", "01", "--dry-run"]),
                     "submission_metadata.yml", "invalid YAML")


def test_unsafe_yaml_tag_is_refused_not_run(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    export = _yml_export(tmp_path, f"submission_1: !!python/object/apply:os.system "
                                   f"['touch {marker}']\n")
    _one_line_exit_2(_run([str(export), "--module", "01", "--dry-run"]), "invalid YAML")
    assert not marker.exists()


def test_record_without_submitters_names_the_field(tmp_path: Path) -> None:
    export = _yml_export(tmp_path, "submission_7:\n  :created_at: 2027-01-25 10:00:00 -05:00\n"
                                   "  :score: 3.0\n")
    _one_line_exit_2(_run([str(export), "--module", "01", "--dry-run"]),
                     "submission_7", ":submitters:")


def test_bad_score_names_the_field(tmp_path: Path) -> None:
    export = _yml_export(tmp_path, "submission_7:\n  :submitters:\n  - :sid: S1\n"
                                   "  :created_at: 2027-01-25 10:00:00 -05:00\n"
                                   "  :score: lots\n")
    _one_line_exit_2(_run([str(export), "--module", "01", "--dry-run"]),
                     "submission_7", ":score:", "lots")


def test_unknown_module(tmp_path: Path) -> None:
    export = build_export(tmp_path, only=["700002"])
    _one_line_exit_2(_run([str(export), "--module", "nosuch", "--dry-run"]),
                     "--module", "unknown module 'nosuch'")


def test_export_of_another_module_is_refused() -> None:
    from coursekit import paths

    sample = paths.SAMPLES / "term" / "gradescope" / "assignment_7007_export.zip"
    assert sample.is_file(), "samples/term is missing its Gradescope export (samples/term/generate.py)"
    _one_line_exit_2(_run([str(sample), "--module", "01", "--dry-run"]),
                     "extra_data.module is 07_training, not 01_tensor")


def test_dry_run_and_apply_exclude_each_other(tmp_path: Path) -> None:
    export = build_export(tmp_path, only=["700002"])
    _one_line_exit_2(_run([str(export), "--module", "01", "--dry-run", "--apply"]),
                     "--dry-run and --apply")


def test_zip_slip_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "evil.zip"
    with zipfile.ZipFile(bad, "w") as zf:
        zf.writestr("assignment_1_export/submission_metadata.yml", "{}")
        zf.writestr("../escape.txt", "x")
    _one_line_exit_2(_run([str(bad), "--module", "01", "--dry-run"]), "unsafe path")
    assert not (tmp_path.parent / "escape.txt").exists()


# ----------------------------------------------------------------------------- units
def test_ruby_tagged_yaml_reads_as_plain_data() -> None:
    text = ("submission_9: !ruby/hash:ActiveSupport::HashWithIndifferentAccess\n"
            "  :submitters:\n  - :name: Ada\n    :sid: S9\n    :email: a@x.edu\n"
            "  :created_at: 2027-01-25 17:59:00.000000000 -05:00\n"
            "  :score: !ruby/object:BigDecimal 18:0.46e2\n")
    (rec,) = parse_records(load_metadata_yaml(text, "m.yml"), "m.yml")
    assert rec.old_score == 46.0 and rec.submission_id == "9"
    assert rec.created_at.startswith("2027-01-25T17:59:00")
    assert rec.students[0].email == "a@x.edu"


def test_bad_key_is_refused() -> None:
    with pytest.raises(GradescopeExportError, match="not a submission_<id> key"):
        parse_records({"results": {}}, "m.yml")


def test_diff_tests_ignores_zero_point_feedback() -> None:
    old = {"tests": [{"name": "p", "score": 0, "max_score": 0, "status": "failed"},
                     {"name": "a", "score": 1, "max_score": 1, "status": "passed"},
                     {"name": "gone", "score": 2, "max_score": 2, "status": "passed"}]}
    new = {"tests": [{"name": "p", "score": 0, "max_score": 0, "status": "passed"},
                     {"name": "a", "score": 0, "max_score": 1, "status": "failed"},
                     {"name": "added", "score": 3, "max_score": 3, "status": "passed"}]}
    got = {(c.name, c.old_status, c.new_status) for c in diff_tests(old, new)}
    assert got == {("a", "passed", "failed"), ("gone", "passed", None),
                   ("added", None, "passed")}
    assert diff_tests(None, new) == []


@pytest.mark.parametrize(("spec", "needle"), [("local:0", "at least 1 worker"),
                                              ("bad address!", "expected a scheduler address")])
def test_bad_scheduler_is_one_line(tmp_path: Path, spec: str, needle: str) -> None:
    export = build_export(tmp_path, only=["700002"])
    _one_line_exit_2(_run([str(export), "--module", "01", "--scheduler", spec]), needle)


def test_export_whose_module_cannot_be_told_needs_module(tmp_path: Path) -> None:
    export = build_export(tmp_path, only=["700005"])  # no old results, no assignment title
    _one_line_exit_2(_run([str(export), "--dry-run"]), "cannot tell which module", "--module")
