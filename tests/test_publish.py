"""`tito publish` (issue 12 item 7): students see the modules released by a date, no more."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from coursebuild.release import built_modules
from coursekit.course import CourseError, load_course
from staff.publish import parse_as_of, publish
from tito.cli import cli

COURSE = load_course()
BUILT = built_modules(COURSE)


def _as_of_third_release():
    third = BUILT[2]
    return COURSE.local_time(third.release)


def test_publish_as_of_a_date(tmp_path):
    to = tmp_path / "student"
    res = publish(COURSE, to=to, as_of=_as_of_third_release())
    assert [m.number for m in res.released] == [m.number for m in BUILT[:3]]
    assert res.upcoming == BUILT[3]
    folders = sorted(p.name for p in to.iterdir() if p.is_dir() and p.name[:2].isdigit())
    assert folders == [m.name for m in BUILT[:3]]
    assert [m["name"] for m in json.loads((to / "modules.json").read_text())] == folders
    readme = (to / "README.md").read_text()
    assert BUILT[2].name in readme and BUILT[3].name not in readme
    later = (to / "tinytorch" / f"{BUILT[3].slug}.py").read_text()
    assert "released on" in later and "APPROACH" not in later and "def " not in later.split(
        "def _unreleased")[1]


def test_published_package_imports_and_says_when_a_module_arrives(tmp_path):
    to = tmp_path / "student"
    publish(COURSE, to=to, as_of=_as_of_third_release())
    code = ("import tinytorch\nfrom tinytorch import nn\n"
            "try:\n    nn.CrossEntropyLoss()\nexcept NotImplementedError as e:\n    print(e)\n"
            "try:\n    nn.Linear(2, 3)\nexcept NotImplementedError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=to, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    first, second = out.stdout.splitlines()
    assert f"module {BUILT[3].number:02d} (Losses) is released on {BUILT[3].release}" in first
    assert "implement Linear" in second  # released: the student's stub, not a placeholder


def test_publish_is_reproducible_and_removes_what_is_no_longer_published(tmp_path):
    to = tmp_path / "student"
    late = publish(COURSE, to=to, as_of=COURSE.local_time(BUILT[-1].release))
    assert late.released == BUILT
    again = publish(COURSE, to=to, as_of=COURSE.local_time(BUILT[-1].release))
    assert again.changed == []
    early = publish(COURSE, to=to, as_of=_as_of_third_release())
    assert any(c.startswith("- ") and BUILT[4].name in c for c in early.changed)
    assert not (to / BUILT[4].name).exists()


def test_publish_commits_into_a_git_work_tree(tmp_path):
    to = tmp_path / "student"
    to.mkdir()
    subprocess.run(["git", "init", "-q", str(to)], check=True)
    first = publish(COURSE, to=to, as_of=_as_of_third_release(), commit=True)
    assert first.committed
    log = subprocess.run(["git", "-C", str(to), "log", "--format=%s"], capture_output=True,
                         text=True).stdout
    assert log.startswith("Publish as of") and BUILT[2].name in log
    second = publish(COURSE, to=to, as_of=_as_of_third_release(), commit=True)
    assert not second.committed  # nothing changed, no empty commit


def test_bad_inputs(tmp_path):
    with pytest.raises(CourseError, match="expected YYYY-MM-DD"):
        parse_as_of(COURSE, "next tuesday")
    from coursekit import paths

    with pytest.raises(CourseError, match="outside the course repository"):
        publish(COURSE, to=paths.REPO_ROOT / "build" / "x", as_of=_as_of_third_release())
    res = CliRunner().invoke(cli, ["publish", "--to", str(tmp_path / "s"), "--as-of", "soon"])
    assert res.exit_code == 2 and res.output.startswith("tito: --as-of 'soon'")


def test_cli_publish(tmp_path):
    res = CliRunner().invoke(cli, ["publish", "--to", str(tmp_path / "s"), "--as-of",
                                   BUILT[0].release])
    assert res.exit_code == 0, res.output
    assert f"published modules {BUILT[0].number:02d} as of" in res.output
    assert f"next: {BUILT[1].name}" in res.output


def test_publish_refuses_what_course_check_rejects_one_line_each(tmp_path, monkeypatch):
    """Issue 34: the course checks run first; a problem of a module that would be published,
    or of the course, refuses the publish (nothing written, exit 1, one line per problem); a
    problem of a module released later is a note."""
    import staff.check
    from staff.check import CheckReport

    third, fourth = BUILT[2], BUILT[3]
    rep = CheckReport(findings=[
        (third.name, f"autograder/suites/{third.name}/bugs.py: missing (at least five plausible "
                     "bugs the hidden suite must catch)"),
        (fourth.name, f"{fourth.name}: half built: autograder/suites/{fourth.name}/suite.py "
                      "is missing"),
        (None, "course.yml: grading.categories[0].drop_lowest: 25 would drop every item")])
    monkeypatch.setattr(staff.check, "check_course", lambda course: rep)
    to = tmp_path / "student"
    as_of = f"{_as_of_third_release():%Y-%m-%d %H:%M}"
    res = CliRunner().invoke(cli, ["publish", "--to", str(to), "--as-of", as_of])
    assert res.exit_code == 1
    lines = res.output.strip().splitlines()
    assert lines[:2] == [f"tito: {rep.findings[0][1]}", f"tito: {rep.findings[2][1]}"]
    assert lines[2].startswith("tito: 2 course check problem(s) in what would be published")
    assert len(lines) == 3 and not to.exists()
    rep.findings = rep.findings[1:2]  # only the module released later
    ok = CliRunner().invoke(cli, ["publish", "--to", str(to), "--as-of", as_of])
    assert ok.exit_code == 0, ok.output
    assert f"note: not released yet, fix before it is: {fourth.name}: half built" in ok.output
