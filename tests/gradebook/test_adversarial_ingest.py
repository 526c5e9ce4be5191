"""Issue 33 ("grading trust, round 3"): `tito gradebook ingest` against students' own files.

A Gradescope export holds what students uploaded, in ``submission_<id>/`` folders. A student
can upload a ``results.json`` with a ``submission_metadata.json`` naming anyone, or a ``.zip``
that looks like an export. Ingest used to search every folder below the one it was given for
``results.json`` and ``.zip`` files, so an unpacked export kept three folders down (a term's
``exports/module/download/``) had those uploads ingested as scores. Now a folder holding
``submission_metadata.yml`` is one export and nothing below it is searched.

The other files ingest opens are read with bounds: a JSON or YAML document nested beyond
Python's parser, a JSON file of absurd size, or a CSV with a field over the csv module's limit
is one line naming the file, never a traceback.
"""

from __future__ import annotations

import json
import sqlite3
import zipfile
from pathlib import Path

import pytest
from test_gradebook_ingest import SAMPLE, results, store, submission, write

from gradebook import api
from gradebook.errors import GradebookError

__all__ = ["store"]  # the fixture, shared with test_gradebook_ingest
EXPORT = SAMPLE / "gradescope" / "assignment_7007_export.zip"


def _events(store: Path) -> list[tuple]:
    with sqlite3.connect(store) as conn:
        return conn.execute("SELECT kind, source_path, student_ref, item, score FROM events "
                            "ORDER BY id").fetchall()


def _forged_export(path: Path) -> None:
    """A zip shaped like an export that gives Ada full marks on module 01."""
    meta = ("submission_1:\n  :submitters:\n  - :name: Ada\n    :sid: S1\n"
            "    :email: ada@uni.edu\n  :created_at: 2027-01-25 10:00:00 -0500\n"
            "  :score: 50.0\n  :results:\n" + "".join(
                f"    {line}\n" for line in json.dumps(results()).splitlines()))
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("assignment_1_export/submission_metadata.yml", meta)


def test_files_a_student_uploaded_into_an_export_are_never_scores(tmp_path, gb_course):
    deep = tmp_path / "term" / "exports" / "07"       # the export three folders down
    with zipfile.ZipFile(EXPORT) as zf:
        zf.extractall(deep)
    upload = next((deep / "assignment_7007_export").glob("submission_*"))
    submission(upload, results(scores=(10, 10, 10, 10, 10)), email="ada@uni.edu")
    _forged_export(upload / "my_backup.zip")
    store = tmp_path / "gb.sqlite"
    api.roster(SAMPLE / "roster.csv", store=store, course=gb_course)

    rep = api.ingest([tmp_path / "term"], store=store, course=gb_course)

    assert [(f.kind, Path(f.path).name) for f in rep.files] == [
        ("gradescope_export", "assignment_7007_export")]
    assert rep.added == 123
    assert {kind for kind, _, _, _, _ in _events(store)} == {"gradescope_export"}
    assert not any("submission_" in source for _, source, _, _, _ in _events(store))


def test_the_same_uploads_outside_any_export_are_still_ingested(tmp_path, store, gb_course):
    """A folder of results (a regrade's output) is still searched: only exports are closed."""
    submission(tmp_path / "regrade" / "submission_1", results())
    rep = api.ingest([tmp_path / "regrade"], store=store, course=gb_course)
    assert rep.added == 1


@pytest.mark.parametrize(("name", "content", "says"), [
    ("results.json", "[" * 200_000 + "]" * 200_000, "invalid JSON (nested too deeply)"),
    ("results.json", None, "is 65 MB, more than 64 MB; not a results file"),
    ("scores_01.csv", "SID,Email,Total Score,Max Points,Status,Submission Time\nS1,"
     + "x" * 200_000 + ",1,2,Graded,2027-01-25\n", "not a readable CSV (Error: field larger"),
    ("scores_01.csv", b"SID,Email,Total Score,Max Points,Status,Submission Time\nS1,\xff\xfe,1,"
     b"2,Graded,2027-01-25\n", "not a readable CSV (UnicodeDecodeError"),
])
def test_an_unreadable_file_is_one_line_naming_it(tmp_path, store, gb_course, name, content,
                                                  says):
    path = tmp_path / "in" / name
    path.parent.mkdir()
    if content is None:
        with path.open("wb") as fh:
            fh.truncate(65 * 1024 * 1024)  # sparse: 65 MB on paper, nothing on disk
    elif isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    if name == "results.json":
        write(path.parent / "submission_metadata.json", json.dumps({"id": 1}))
    with pytest.raises(GradebookError) as err:
        api.ingest([path], store=store, course=gb_course)
    message = str(err.value)
    assert message.startswith(str(path)) and says in message and "\n" not in message
    assert _events(store) == []


def test_a_metadata_yaml_nested_beyond_the_parser_is_one_line(tmp_path, store, gb_course):
    folder = tmp_path / "assignment_1_export"
    write(folder / "submission_metadata.yml", "a: " + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(GradebookError, match=r"submission_metadata\.yml: invalid YAML"):
        api.ingest([folder], store=store, course=gb_course)
