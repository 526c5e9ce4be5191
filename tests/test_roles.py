"""One end-to-end test per role (issue 12), each through the commands that role types.

* An instructor publishes week 3: the course checks clean, the student folder holds the first
  three modules and nothing later, and the Gradescope zip of module 03, unpacked into a
  simulated container, gives the released notebook 0 and the solution full marks.
* A TA regrades an export whose scores are Ruby ``BigDecimal`` and where one student is in two
  records: the dry run says what ``--apply`` would refuse, ``--apply`` refuses before grading
  anything, and after the export is fixed ``--apply`` records every student, resumes from the
  dry run's work, and the Canvas CSV carries the new scores.
* A department renders the syllabus of both tracks, as Markdown and HTML.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import re
import zipfile
from pathlib import Path

from click.testing import CliRunner

from coursebuild.release import built_modules
from coursekit.course import load_course
from tito.cli import cli

COURSE = load_course()


def _tito(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return res.exit_code, res.output


# ----------------------------------------------------------------------------- instructor
def test_instructor_publishes_week_3(tmp_path: Path) -> None:
    from coursebuild.release import dump_notebook
    from coursebuild.samples import build_notebook
    from tests.autograder.test_gradescope import _container, _full_notebooks, _run

    code, out = _tito("course", "check")
    assert code == 0, out
    third, fourth = built_modules(COURSE)[2:4]
    as_of = (COURSE.local_time(third.release) + dt.timedelta(hours=1)).strftime(
        "%Y-%m-%d %H:%M")
    student = tmp_path / "student"
    code, out = _tito("publish", "--to", str(student), "--as-of", as_of)
    assert code == 0, out
    published = sorted(p.name for p in student.iterdir() if p.is_dir() and p.name[:2].isdigit())
    assert published == [m.name for m in built_modules(COURSE)[:3]], out
    assert not (student / fourth.name).exists()
    assert third.name in (student / "README.md").read_text()

    zip_path = tmp_path / f"{third.name}.zip"
    code, out = _tito("autograder", f"{third.number:02d}", "-o", str(zip_path))
    assert code == 0, out
    with zipfile.ZipFile(zip_path) as zf:
        assert "run_autograder" in zf.namelist()
    nb_name = f"{third.name}.ipynb"
    released = (student / third.name / nb_name).read_bytes()
    res = _run(_container(tmp_path / "released", zip_path, released, nb_name))
    assert res["score"] == 0, [t["name"] for t in res["tests"] if t["score"]]
    # built today, the zip grades modules 01-02 on the student's own uploads while their
    # windows are open (on the reference once closed): a full student uploads all three
    full = dump_notebook(build_notebook(third, "full")).encode()
    res = _run(_container(tmp_path / "full", zip_path, full, nb_name,
                          extra=_full_notebooks(COURSE, third.number)))
    failed = [(t["name"], t.get("output", "")[:200]) for t in res["tests"]
              if t["status"] == "failed"]
    assert res["score"] >= third.points and not failed, failed


# ----------------------------------------------------------------------------- TA
def _drop_partner(export: Path, fixed: Path) -> str:
    """The TA's fix on Gradescope: the group record no longer names the student who also
    submitted alone. Returns that student's SIS id."""
    with zipfile.ZipFile(export) as zf:
        files = {i.filename: zf.read(i) for i in zf.infolist() if not i.is_dir()}
    meta = next(n for n in files if n.endswith("submission_metadata.yml"))
    text = files[meta].decode()
    group = re.search(r"  :submitters:\n(  - :email: .*\n    :name: .*\n    :sid: (\S+)\n){2}",
                      text)
    assert group, "the synthetic export has no group record"
    partner = group.group(2)
    entry = re.search(r"  - :email: .*\n    :name: .*\n    :sid: " + re.escape(partner) + r"\n",
                      text[group.start():])
    assert entry
    start = group.start() + entry.start()
    files[meta] = (text[:start] + text[group.start() + entry.end():]).encode()
    with zipfile.ZipFile(fixed, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return partner


def test_ta_regrades_an_export_with_bigdecimal_scores_and_a_duplicate(tmp_path: Path) -> None:
    export = tmp_path / "export.zip"
    code, out = _tito("synth-export", "01", "-n", "6", "--duplicated", "1", "--seed", "5",
                      "-o", str(export))
    assert code == 0, out
    with zipfile.ZipFile(export) as zf:
        meta = next(n for n in zf.namelist() if n.endswith("submission_metadata.yml"))
        assert "!ruby/object:BigDecimal" in zf.read(meta).decode()
    store = tmp_path / "gb.sqlite"
    code, out = _tito("gradebook", "roster", str(tmp_path / "export-roster.csv"), "--store",
                      str(store))
    assert code == 0, out

    work = tmp_path / "regrade"
    code, out = _tito("regrade", str(export), "--module", "01", "--dry-run", "-o", str(work),
                      "-j", "2")
    assert code == 0, out
    assert "--apply would refuse" in out, out
    assert not store.with_suffix(".sqlite-journal").exists()

    code, out = _tito("regrade", str(export), "--module", "01", "--apply", "--store", str(store),
                      "-o", str(tmp_path / "refused"))
    lines = [ln for ln in out.splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1 and "nothing was graded" in lines[0], out
    assert not (tmp_path / "refused").exists()

    fixed = tmp_path / "export-fixed.zip"
    partner = _drop_partner(export, fixed)
    code, out = _tito("regrade", str(fixed), "--module", "01", "--apply", "--store", str(store),
                      "-o", str(work), "-j", "2")
    assert code == 0, out
    assert re.search(r"[1-9]\d* reused", out), f"the dry run's grading was not reused:\n{out}"
    report = json.loads((work / "regrade_report.json").read_text())
    assert len(report["submissions"]) == 6 and report["dry_run"] is False

    canvas = tmp_path / "canvas.csv"
    code, out = _tito("gradebook", "export", "--canvas", "-o", str(canvas), "--as-of", "final",
                      "--store", str(store))
    assert code == 0, out
    with canvas.open(newline="", encoding="utf-8") as fh:
        table = list(csv.reader(fh))
    header = table[0]
    col = header.index(f"{COURSE.module('01').name} (autograded)")
    sis = header.index("SIS User ID")
    canvas_score = {r[sis]: float(r[col]) for r in table[1:] if r[sis]}
    new_score = {st["sid"]: sub["new_score"] for sub in report["submissions"]
                 for st in sub["students"]}
    assert partner in new_score and len(new_score) == 6
    # this export has no late record: every Canvas cell is exactly the regraded score
    assert {sid: canvas_score[sid] for sid in new_score} == new_score


# ----------------------------------------------------------------------------- department
def test_department_renders_both_syllabi(tmp_path: Path) -> None:
    for track in ("foundation", "full"):
        code, out = _tito("course", "syllabus", "--track", track, "-o", str(tmp_path))
        assert code == 0, out
        md = (tmp_path / f"syllabus-{track}.md").read_text()
        html = (tmp_path / f"syllabus-{track}.html").read_text()
        assert "<h1" in html and "Grading" in md
        numbers = set(COURSE.track(track).modules)
        assert all(m.title in md for m in COURSE.modules if m.number in numbers)
        assert all(m.title not in md for m in COURSE.modules if m.number not in numbers)
