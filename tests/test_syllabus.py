"""`tito course syllabus` (issue 12 item 12): both tracks, from course.yml and the lessons."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from tito.cli import cli
from tito.course import load_course
from tito.release import built_modules
from tito.syllabus import HOURS_PER_CREDIT, module_info, syllabus_markdown

COURSE = load_course()


@pytest.mark.parametrize("track", [t.id for t in COURSE.tracks])
def test_syllabus_holds_what_a_department_reviews(track):
    t = COURSE.track(track)
    text = syllabus_markdown(COURSE, t)
    for n in t.modules:
        m = COURSE.module(n)
        assert f"| {m.name} · {m.title} | {m.release} | {m.due} |" in text
    for cat, weight in t.weights.items():
        assert f"| {COURSE.category(cat).title} | {weight:.0%} |" in text
    for letter, cut in COURSE.grading.letters.items():
        assert f"{letter} ≥ {cut:g} %" in text
    assert f"{t.credits * HOURS_PER_CREDIT} hours of work" in text
    assert f"{COURSE.grading.late.tokens} late tokens" in text
    for section in ("## Weekly schedule", "## Learning outcomes", "## Grading", "## Workload",
                    "## What students need", "## Staffing", "## Policies"):
        assert section in text
    assert text.count("_Placeholder") == 3


def test_outcomes_and_prerequisites_come_from_the_lessons():
    m = COURSE.module("05")
    info = module_info(m, True)
    assert len(info.outcomes) >= 3 and "chain rule" in " ".join(info.outcomes)
    assert info.depends_on == "tensor"
    text = syllabus_markdown(COURSE, COURSE.track("foundation"))
    assert info.outcomes[0] in text


def test_the_full_track_says_what_is_not_built():
    built = {m.number for m in built_modules(COURSE)}
    full = COURSE.track("full")
    text = syllabus_markdown(COURSE, full)
    missing = [COURSE.module(n).name for n in full.modules if n not in built]
    if missing:
        assert "Not built yet in this repository: " + ", ".join(missing) in text
    else:
        assert "Not built yet" not in text


def test_cli_writes_markdown_and_html(tmp_path):
    res = CliRunner().invoke(cli, ["course", "syllabus", "-o", str(tmp_path)])
    assert res.exit_code == 0, res.output
    for t in COURSE.tracks:
        page = (tmp_path / f"syllabus-{t.id}.html").read_text()
        assert page.startswith("<!DOCTYPE html>") and "<table>" in page and "<script" not in page
        assert re.search(r"<h2>Weekly schedule</h2>", page)
        assert (tmp_path / f"syllabus-{t.id}.md").read_text().startswith(f"# {COURSE.course.code}")
    bad = CliRunner().invoke(cli, ["course", "syllabus", "--track", "summer"])
    assert bad.exit_code == 2 and bad.output.startswith("tito: unknown track 'summer'")


def test_readme_says_plainly_which_modules_exist():
    from tito.paths import REPO_ROOT

    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    built = {m.number for m in built_modules(COURSE)}
    tiers = {t.id: t.title for t in COURSE.tiers}
    for m in COURSE.modules:
        status = "built" if m.number in built else "not built yet"
        row = f"| {m.number:02d} {m.title} | {tiers[m.tier]} | {status} |"
        assert row in readme, f"README's module table should say: {row}"
