"""`tito course syllabus` (issue 12 item 12): both tracks, from course.yml and the lessons."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from coursebuild.release import built_modules
from coursebuild.syllabus import HOURS_PER_CREDIT, module_info, syllabus_markdown
from coursekit.course import load_course
from tito.cli import cli

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
    from coursekit.paths import REPO_ROOT

    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    built = {m.number for m in built_modules(COURSE)}
    tiers = {t.id: t.title for t in COURSE.tiers}
    for m in COURSE.modules:
        status = "built" if m.number in built else "not built yet"
        row = f"| {m.number:02d} {m.title} | {tiers[m.tier]} | {status} |"
        assert row in readme, f"README's module table should say: {row}"


def test_a_module_costs_the_same_hours_in_every_track():
    """Issue 34: the syllabi gave one module ~13 h in one track and ~9 h in the other. Each
    module's hours come from course.yml, the same in both; the workload adds them up against
    the track's credit hours."""
    texts = {t.id: syllabus_markdown(COURSE, t) for t in COURSE.tracks}
    for t in COURSE.tracks:
        text = texts[t.id]
        for n in t.modules:
            m = COURSE.module(n)
            assert f"| {m.name} · {m.title} | {m.release} | {m.due} | {m.hours:g} |" in text
        work = sum(COURSE.module(n).hours for n in t.modules)
        budget = t.credits * HOURS_PER_CREDIT
        assert work <= budget
        assert (f"The {len(t.modules)} modules take an estimated {work:g} hours" in text
                and f"the other {budget - work:g} hours are lectures or sections" in text)
    # the same row, with the same hours, in both tracks' schedules
    for n in COURSE.track("foundation").modules:
        m = COURSE.module(n)
        row = [x for x in texts["foundation"].splitlines() if f"| {m.name} · " in x]
        assert row and row[0].split(" | ")[1:5] == [
            x for x in texts["full"].splitlines() if f"| {m.name} · " in x][0].split(" | ")[1:5]


def test_course_outcomes_are_mapped_to_what_assesses_them():
    """A curriculum committee's question (issue 34): every course learning outcome with the
    graded work that assesses it, per track; every module of a track maps to an outcome."""
    for t in COURSE.tracks:
        text = syllabus_markdown(COURSE, t)
        assert "## Course learning outcomes" in text
        section = text.split("## Course learning outcomes")[1].split("\n## ")[0]
        shown = [o for o in COURSE.outcomes if f"| {o.id} | {o.text} |" in section]
        assert shown, t.id
        for o in shown:
            line = next(x for x in section.splitlines() if x.startswith(f"| {o.id} |"))
            for n in o.modules:
                if n in t.modules:
                    assert f"{n:02d}" in line.split(" | ")[-1], (o.id, n)
            assert ("written questions" in line) == o.written
        mapped = {n for o in shown for n in o.modules}
        assert set(t.modules) <= mapped, f"{t.id}: modules no outcome maps to"
    foundation = syllabus_markdown(COURSE, COURSE.track("foundation"))
    assert "Assessed only in modules outside this track: CO4, CO5, CO6." in foundation


def test_course_check_refuses_hours_over_the_credits_and_unmapped_modules(tmp_path):
    import yaml

    from coursekit.course import load_course
    from coursekit.paths import REPO_ROOT
    from staff.check import _syllabus_problems

    data = yaml.safe_load((REPO_ROOT / "course.yml").read_text(encoding="utf-8"))
    data["modules"][0]["hours"] = 45  # foundation: 56 - 8 + 45 = 93 > 90; full: 202 > 180
    for o in data["outcomes"]:
        o["modules"] = [n for n in o["modules"] if n != 1]
    path = tmp_path / "course.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    assert _syllabus_problems(load_course(path)) == [
        "course.yml: tracks[0]: its modules take 93 hours, more than its 2 credit(s) allow "
        "(90 h); lower modules' hours, drop modules or add credits",
        "course.yml: tracks[1]: its modules take 202 hours, more than its 4 credit(s) allow "
        "(180 h); lower modules' hours, drop modules or add credits",
        "course.yml: outcomes: no course learning outcome maps to module 01_tensor; add it "
        "to the outcome(s) its work assesses"]
    assert _syllabus_problems(load_course(REPO_ROOT / "course.yml")) == []
