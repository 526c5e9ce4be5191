"""Ingest: formats, idempotence, regrades, the append-only store, and bad inputs."""

from __future__ import annotations

import json
import shutil
import sqlite3
import zipfile
from pathlib import Path

import pytest

from gradebook import api
from gradebook.errors import GradebookError

SAMPLE = Path(api.SAMPLE_TERM)
ROSTER = (
    "Student,ID,SIS User ID,SIS Login ID,Section,Track\n"
    "    Points Possible,,,,,\n"
    '"Lovelace, Ada",1,S1,ada,LEC 001,full\n'
    '"Turing, Alan",2,S2,alan,LEC 002,foundation\n'
)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def results(module="01_tensor", scores=(10, 10, 10, 10, 10), milestone=None, suite="v1"):
    tests = [{"name": "public", "score": 0, "max_score": 0, "tags": [f"module:{module}",
                                                                     "public"]}]
    tests += [{"name": f"{module} · t{i}", "score": s, "max_score": 10,
               "status": "passed" if s == 10 else "failed",
               "tags": [f"module:{module}", "hidden"]} for i, s in enumerate(scores)]
    if milestone:
        tests.append({"name": "ms", "score": 10, "max_score": 10, "status": "passed",
                      "tags": [f"module:{module}", f"milestone:{milestone}"]})
    total = sum(t["score"] for t in tests)  # the top-level score agrees with the tests
    return {"score": total, "tests": tests,
            "extra_data": {"module": module, "suite_version": suite}}


def submission(folder: Path, res: dict, *, email="ada@uni.edu", when="2027-01-25T10:00:00-05:00",
               sub_id=1) -> Path:
    write(folder / "results.json", json.dumps(res))
    write(folder / "submission_metadata.json", json.dumps(
        {"id": sub_id, "created_at": when, "users": [{"email": email, "name": "x", "id": 9}]}))
    return folder / "results.json"


@pytest.fixture()
def store(tmp_path: Path, gb_course) -> Path:
    path = tmp_path / "gb.sqlite"
    api.roster(write(tmp_path / "roster.csv", ROSTER), store=path, course=gb_course)
    return path


def events(store: Path) -> list[tuple]:
    with sqlite3.connect(store) as conn:
        return conn.execute("SELECT kind, student_ref, item, score, max_score FROM events "
                            "ORDER BY id").fetchall()


# ----------------------------------------------------------------- formats
def test_results_json_splits_module_and_milestone_points(tmp_path, store, gb_course):
    f = submission(tmp_path / "s", results("06_optimizers", (10, 10, 5, 0, 10),
                                           milestone="perceptron_1957"))
    rep = api.ingest([f], store=store, course=gb_course)
    assert rep.added == 2
    assert events(store) == [
        ("results_json", "email:ada@uni.edu", "06_optimizers", 35.0, 50.0),
        ("results_json", "email:ada@uni.edu", "milestone:perceptron_1957", 10.0, 10.0),
    ]
    with sqlite3.connect(store) as conn:
        assert conn.execute("SELECT COUNT(*) FROM tests").fetchone()[0] == 7


def test_ingest_twice_changes_nothing(tmp_path, store, gb_course):
    f = submission(tmp_path / "s", results())
    first = api.ingest([tmp_path], store=store, course=gb_course)
    again = api.ingest([tmp_path, f], store=store, course=gb_course)
    assert first.added == 1 and again.added == 0
    assert [f.duplicates for f in again.files if f.kind == "results_json"] == [1, 1]
    ignored = [f for f in again.files if f.kind == "ignored"]
    assert [Path(f.path).name for f in ignored] == ["roster.csv"]  # reported, not silent
    assert len(events(store)) == 1


def test_regrade_is_recorded_with_its_diff_and_dry_run_writes_nothing(tmp_path, store, gb_course):
    api.ingest([submission(tmp_path / "a", results(scores=(10, 10, 10, 0, 0)))], store=store,
               course=gb_course)
    new = submission(tmp_path / "b", results(scores=(10, 10, 10, 10, 0), suite="v2"))
    dry = api.ingest([new], store=store, course=gb_course, dry_run=True)
    assert dry.dry_run and dry.regrades[0]["old"] == 30.0 and dry.regrades[0]["new"] == 40.0
    assert len(events(store)) == 1
    api.ingest([new], store=store, course=gb_course)
    assert events(store)[-1] == ("regrade", "email:ada@uni.edu", "01_tensor", 40.0, 50.0)
    with sqlite3.connect(store) as conn:
        details = json.loads(conn.execute("SELECT details FROM events WHERE kind='regrade'")
                             .fetchone()[0])
    assert details["diff"] == 10.0 and details["previous_suite"] == "v1"
    # the original file again does not revert the regrade
    assert api.ingest([tmp_path / "a"], store=store, course=gb_course).added == 0
    built = api.build(store=store, course=gb_course)
    scores = built.result.scores.set_index(["student", "item"])
    assert scores.at[("S1", "01_tensor"), "score"] == 40.0


def test_export_zip_and_unpacked_folder_agree(tmp_path, gb_course):
    zpath = SAMPLE / "gradescope" / "assignment_7007_export.zip"
    unpacked = tmp_path / "unpacked"
    with zipfile.ZipFile(zpath) as zf:
        zf.extractall(unpacked)
    store = tmp_path / "s.sqlite"
    api.roster(SAMPLE / "roster.csv", store=store, course=gb_course)
    first = api.ingest([zpath], store=store, course=gb_course)
    second = api.ingest([unpacked], store=store, course=gb_course)
    assert first.added == 123 and second.added == 0 and second.files[0].unchanged == 123
    assert any(":history:" in n for n in first.files[0].notes)


def test_grade_csv_item_from_file_name_and_missing_rows_noted(tmp_path, gb_course):
    store = tmp_path / "s.sqlite"
    api.roster(SAMPLE / "roster.csv", store=store, course=gb_course)
    rep = api.ingest([SAMPLE / "gradescope" / "07_training_written_scores.csv"], store=store,
                     course=gb_course)
    assert rep.added == 41
    assert rep.files[0].notes == ["1 row(s) with status 'Missing': no score recorded"]
    assert {e[2] for e in events(store)} == {"07_training:written"}


def test_grade_csv_needs_an_item_when_the_name_is_ambiguous(tmp_path, store, gb_course):
    src = SAMPLE / "gradescope" / "07_training_written_scores.csv"
    plain = shutil.copy(src, tmp_path / "scores.csv")
    with pytest.raises(GradebookError, match=r"scores\.csv: cannot tell the module.*--item"):
        api.ingest([Path(plain)], store=store, course=gb_course)
    rep = api.ingest([Path(plain)], store=store, course=gb_course, item="03:written")
    assert rep.added == 41 and {e[2] for e in events(store)} == {"03_layers:written"}


def test_events_are_append_only(store, tmp_path, gb_course):
    api.ingest([submission(tmp_path / "s", results())], store=store, course=gb_course)
    with sqlite3.connect(store) as conn, pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("UPDATE events SET score = 50")
    with sqlite3.connect(store) as conn, pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("DELETE FROM events")


def test_override_and_clear(store, tmp_path, gb_course):
    api.ingest([submission(tmp_path / "s", results(scores=(0, 0, 0, 0, 0)))], store=store,
               course=gb_course)
    api.override("ada", "01", "45", reason="verified by hand", store=store, course=gb_course)
    built = api.build(store=store, course=gb_course)
    row = built.result.scores.set_index(["student", "item"]).loc[("S1", "01_tensor")]
    assert row["final"] == 45.0 and row["override_reason"] == "verified by hand"
    api.override("S1", "tensor", "clear", reason="mistake", store=store, course=gb_course)
    built = api.build(store=store, course=gb_course)
    assert built.result.scores.set_index(["student", "item"]).at[("S1", "01_tensor"),
                                                                 "final"] == 0.0
    with pytest.raises(GradebookError, match="reason"):
        api.override("S1", "01", "10", reason=" ", store=store, course=gb_course)
    with pytest.raises(GradebookError, match="outside 0..50"):
        api.override("S1", "01", "51", reason="x", store=store, course=gb_course)


# -------------------------------------------------------------- bad inputs
@pytest.mark.parametrize(
    ("roster", "message"),
    [
        ("Student,ID,SIS User ID,Section\nA,1,S1,L\n",
         r"roster\.csv:1: SIS Login ID: missing column"),
        ("Student,ID,SIS User ID,SIS Login ID,Section\nA,1,,a,L\n",
         r"roster\.csv:2: SIS User ID: empty"),
        ("Student,ID,SIS User ID,SIS Login ID,Section\nA,1,S1,a,L\nB,2,S1,b,L\n",
         r"roster\.csv:3: SIS User ID: duplicate 'S1' \(also on line 2\)"),
        ("Student,ID,SIS User ID,SIS Login ID,Section,Track\nA,1,S1,a,L,half\n",
         r"roster\.csv:2: Track: unknown track 'half'"),
    ],
)
def test_bad_roster_is_one_line_error(tmp_path, gb_course, roster, message):
    with pytest.raises(GradebookError, match=message) as info:
        api.roster(write(tmp_path / "roster.csv", roster), store=tmp_path / "s.sqlite",
                   course=gb_course)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("meta", "message"),
    [
        ({"id": 1, "created_at": "2027-13-45T10:00", "users": [{"email": "ada@uni.edu"}]},
         r"submission_metadata\.json: created_at: .* is not a time"),
        ({"id": 1, "created_at": "1970-01-01T00:00:00Z", "users": [{"email": "ada@uni.edu"}]},
         r"created_at: impossible date"),
        ({"id": 1, "created_at": "2027-01-25T10:00:00Z", "users": []}, r"users: missing or empty"),
    ],
)
def test_bad_metadata_is_one_line_error(tmp_path, store, gb_course, meta, message):
    write(tmp_path / "s" / "results.json", json.dumps(results()))
    write(tmp_path / "s" / "submission_metadata.json", json.dumps(meta))
    with pytest.raises(GradebookError, match=message):
        api.ingest([tmp_path / "s"], store=store, course=gb_course)
    assert events(store) == []


def test_bad_results_are_one_line_errors_and_nothing_is_written(tmp_path, store, gb_course):
    good = submission(tmp_path / "good", results())
    bad = results()
    bad["tests"][2]["score"] = "ten"
    submission(tmp_path / "bad", bad)
    with pytest.raises(GradebookError, match=r"bad/results\.json: tests\[2\]\.score: 'ten'"):
        api.ingest([good, tmp_path / "bad"], store=store, course=gb_course)
    assert events(store) == []  # the good file was not written either
    submission(tmp_path / "mod", results(module="99_nothing"))
    with pytest.raises(GradebookError, match=r"extra_data\.module: unknown module '99_nothing'"):
        api.ingest([tmp_path / "mod"], store=store, course=gb_course)
    write(tmp_path / "nometa" / "results.json", json.dumps(results()))
    with pytest.raises(GradebookError, match="no submission_metadata.json beside it"):
        api.ingest([tmp_path / "nometa" / "results.json"], store=store, course=gb_course)
    with pytest.raises(GradebookError, match="no such file"):
        api.ingest([tmp_path / "missing.json"], store=store, course=gb_course)


def test_unknown_student_is_recorded_and_flagged_by_check(tmp_path, store, gb_course):
    api.ingest([submission(tmp_path / "s", results(), email="eve@evil.edu")], store=store,
               course=gb_course)
    assert len(events(store)) == 1  # kept, never dropped
    problems = api.check(store=store, course=gb_course)
    errors = [p for p in problems if p.level == "error"]
    assert len(errors) == 1 and "not on the roster (email eve@evil.edu)" in str(errors[0])
    assert "results.json" in errors[0].source


def test_submission_before_release_is_flagged(tmp_path, store, gb_course):
    api.ingest([submission(tmp_path / "s", results(), when="2027-01-02T10:00:00-05:00")],
               store=store, course=gb_course)
    errors = [p for p in api.check(store=store, course=gb_course) if p.level == "error"]
    assert len(errors) == 1 and "before the module's release" in errors[0].message


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ("S9,01,,24,x\n", r"extensions\.csv:2: student: no student 'S9'"),
        ("S1,01,2027-01-20 10:00,,x\n", r"extensions\.csv:2: due: .* not after the module's due"),
        ("S1,01,2027-02-30 10:00,,x\n", r"extensions\.csv:2: due: .* is not a time"),
        ("S1,01,2027-02-01 10:00,24,x\n", r"due/hours: give exactly one"),
        ("S1,01,,24,x\nada,1,,48,y\n", r"extensions\.csv:3: module: duplicate extension"),
        ("S1,42,,24,x\n", r"extensions\.csv:2: module: unknown module '42'"),
        ("S1,01,,-3,x\n", r"hours: -3 is not in"),
    ],
)
def test_bad_extensions(tmp_path, store, gb_course, rows, message):
    path = write(tmp_path / "extensions.csv", "student,module,due,hours,reason\n" + rows)
    with pytest.raises(GradebookError, match=message):
        api.extensions(path, store=store, course=gb_course)


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ("S1,01,16\n", r"written\.csv:2: score: 16 is outside 0..15"),
        ("S1,01,\n", r"written\.csv:2: score: empty"),
        ("S1,01,3\nada,1,4\n", r"written\.csv:3: student: duplicate score"),
        ("bob,01,3\n", r"written\.csv:2: student: no student 'bob'"),
    ],
)
def test_bad_manual_scores(tmp_path, store, gb_course, rows, message):
    path = write(tmp_path / "written.csv", "student,module,score\n" + rows)
    with pytest.raises(GradebookError, match=message):
        api.manual(path, store=store, course=gb_course)


def test_manual_rescore_records_the_change(tmp_path, store, gb_course):
    api.manual(write(tmp_path / "w1.csv", "student,module,score\nS1,01,10\nS2,01,12\n"),
               store=store, course=gb_course)
    rep = api.manual(write(tmp_path / "w2.csv", "student,module,score\nS1,01,11\nS2,01,12\n"),
                     store=store, course=gb_course)
    assert (rep.files[0].new, rep.files[0].unchanged) == (1, 1)
    text = api.explain("ada", store=store, course=gb_course)
    assert "re-entered: 10 -> 11" in text


def test_extensions_apply(tmp_path, store, gb_course):
    late = "2027-01-28T10:00:00-05:00"  # 34 h after the 26th 23:59
    api.ingest([submission(tmp_path / "s", results(), when=late)], store=store, course=gb_course)
    base = api.build(store=store, course=gb_course).result.scores.query("student == 'S1'")
    base = base.set_index("item")
    assert base.at["01_tensor", "tokens"] == 2 and base.at["01_tensor", "final"] == 50.0
    api.extensions(write(tmp_path / "e.csv", "student,module,due,hours,reason\n"
                                             "ada,*,,48,letter\n"), store=store, course=gb_course)
    ext = api.build(store=store, course=gb_course).result.scores.query("student == 'S1'")
    ext = ext.set_index("item")
    assert ext.at["01_tensor", "minutes_late"] == 0 and ext.at["01_tensor", "tokens"] == 0


def test_same_submission_in_two_formats_is_recorded_once(tmp_path, gb_course):
    # results.json names students by email, the export archive by SID: both resolve to the
    # same roster student and submission, so the archive adds nothing.
    store = tmp_path / "s.sqlite"
    api.roster(SAMPLE / "roster.csv", store=store, course=gb_course)
    first = api.ingest([SAMPLE / "results" / "07_training"], store=store, course=gb_course)
    second = api.ingest([SAMPLE / "gradescope" / "assignment_7007_export.zip"], store=store,
                        course=gb_course)
    assert first.added == 123 and second.added == 0 and second.files[0].unchanged == 123


def test_duplicate_rows_in_one_file_are_errors(tmp_path, store, gb_course):
    src = (SAMPLE / "gradescope" / "07_training_written_scores.csv").read_text().splitlines()
    dup = write(tmp_path / "07_written.csv", "\n".join([*src[:3], src[2]]) + "\n")
    with pytest.raises(GradebookError, match=r"07_written\.csv:4: SID/Email: duplicate row for "
                                             r"'s1002' \(also on line 3\)"):
        api.ingest([dup], store=store, course=gb_course)
    meta = {":submitters": [{":sid": "S1"}], ":created_at": "2027-01-25 10:00:00 -0500",
            ":results": results()}
    import yaml

    write(tmp_path / "export" / "submission_metadata.yml",
          yaml.safe_dump({"submission_1": meta, "submission_2": meta}))
    with pytest.raises(GradebookError, match=r"submission_1 and submission_2 both name S1"):
        api.ingest([tmp_path / "export"], store=store, course=gb_course)
    assert events(store) == []
