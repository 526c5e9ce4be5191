"""One error convention for every command (issue 12 item 9): a module that is declared but not
built, or a course that is wrong, gives one line ``tito: ...`` and a non-zero exit; `course
check` validates course.yml, solution modules, suites, points, dates and ranges in one pass."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from coursekit import paths
from tito.cli import cli

#: every module course.yml declares is built, so these run against a copy of course.yml that
#: declares one more (module 21), as tests/test_cli_commands.py does
UNBUILT_NUMBER, UNBUILT_NAME, UNBUILT_SLUG = 21, "21_unbuilt", "unbuilt"


@pytest.fixture
def unbuilt_course(tmp_path: Path) -> list[str]:
    from tests.test_cli_commands import _write_unbuilt_course

    _write_unbuilt_course(tmp_path)
    return ["--course", str(tmp_path / "unbuilt.yml")]


def _run(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(cli, list(args), env=env)


def _one_line_error(res, *needles: str) -> None:
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("tito: "), res.output
    for n in needles:
        assert n in lines[0], lines[0]


@pytest.mark.parametrize("verb", [["autograder"], ["suite-strength"], ["release"], ["export"],
                                  ["samples"]])
def test_every_verb_refuses_an_unbuilt_module_in_one_line(verb, unbuilt_course):
    res = _run(*unbuilt_course, *verb, f"{UNBUILT_NUMBER:02d}")
    _one_line_error(res, f"{UNBUILT_NAME} is declared in course.yml but not built yet",
                    "built modules: 01-")


def test_grade_of_an_unbuilt_module_still_writes_results(tmp_path, unbuilt_course):
    out = tmp_path / "results.json"
    res = _run(*unbuilt_course, "grade", UNBUILT_SLUG, str(tmp_path / "x.ipynb"), "-o", str(out))
    _one_line_error(res, "not built yet")
    results = json.loads(out.read_text())
    assert results["score"] == 0 and "not built yet" in results["tests"][0]["output"]


def test_unknown_module_is_one_line():
    _one_line_error(_run("autograder", "99"), "unknown module '99'")


def _course_copy(tmp_path: Path, edit) -> dict[str, str]:
    data = yaml.safe_load((paths.REPO_ROOT / "course.yml").read_text(encoding="utf-8"))
    edit(data)
    path = tmp_path / "course.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return {"TITO_COURSE": str(path)}


def test_course_check_passes_on_the_repository():
    res = _run("course", "check")
    assert res.exit_code == 0, res.output
    assert "built: 01-" in res.output


def test_course_check_names_suite_points_that_disagree(tmp_path):
    def edit(d):
        d["modules"][2]["points"] = 40
        d["tracks"] = d["tracks"]  # unchanged

    res = _run("course", "check", env=_course_copy(tmp_path, edit))
    assert res.exit_code == 1
    assert "autograder/suites/03_layers/suite.py: cases sum to 50 points, course.yml" in res.output


def test_implausible_threshold_is_refused_on_load(tmp_path):
    def edit(d):
        d["milestones"][2]["threshold"] = 95

    res = _run("course", "check", env=_course_copy(tmp_path, edit))
    _one_line_error(res, "milestones[2]", "not a fraction", "write 0.97, not 97")


def test_course_check_names_dates_out_of_order(tmp_path):
    def edit(d):
        d["modules"][4]["release"] = "2027-01-20 09:00"

    res = _run("course", "check", env=_course_copy(tmp_path, edit))
    assert res.exit_code == 1 and "05_autograd: released 2027-01-20 09:00, before" in res.output


def test_course_check_finds_a_half_built_module(tmp_path, monkeypatch):
    suites = tmp_path / "suites"
    shutil.copytree(paths.SUITES, suites, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.rmtree(suites / "06_optimizers")
    monkeypatch.setattr(paths, "SUITES", suites)
    res = _run("course", "check")
    assert res.exit_code == 1
    assert "06_optimizers: half built: autograder/suites/06_optimizers/suite.py is missing" \
        in res.output
