"""The lessons' claims (issue 29 item 2, DESIGN invariant 13): every figure a lesson's prose
states about what a cell computes is declared in ``solutions/NN_slug/claims.yml`` and checked.

Here, before running anything: each claims file is valid, each ``says`` is in its lesson and
writes the figures it states, and every figure of an ``# Expected`` comment is claimed. The
notebook tier (``tests/test_student_notebooks.py``) executes each lesson and checks every claim
against what its cells printed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from coursebuild.claims import (
    Claim,
    ClaimsError,
    check_outputs,
    load_claims,
    notebook_text,
    numbers,
    prose,
    static_problems,
    unclaimed_expectations,
)
from coursebuild.release import available_modules
from coursekit.course import load_course
from coursekit.paths import solution_path

COURSE = load_course()
MODULES = available_modules(COURSE)


@pytest.mark.parametrize("module", MODULES, ids=[m.name for m in MODULES])
def test_claims_are_in_the_lesson_and_state_its_figures(module):
    assert static_problems(solution_path(module)) == []


@pytest.mark.parametrize("module", MODULES, ids=[m.name for m in MODULES])
def test_every_expected_figure_is_claimed(module):
    assert unclaimed_expectations(solution_path(module)) == [], (
        "a figure in an '# Expected' comment states what the cell prints: declare it in "
        "claims.yml (says / printed / value or range) so the notebook tier checks it")


def _lesson(tmp_path: Path, prose_lines: str, claims: str) -> Path:
    folder = tmp_path / "99_demo"
    folder.mkdir()
    path = folder / "99_demo.py"
    path.write_text("# %% [markdown]\n" + prose_lines + "\n\n# %%\nprint(1)\n", encoding="utf-8")
    (folder / "claims.yml").write_text(claims, encoding="utf-8")
    return path


def test_prose_joins_lines_and_numbers_read_as_written(tmp_path):
    path = _lesson(tmp_path, "# The cache is about\n#   **2.3×** faster at\n# 1,024 tokens.", "")
    assert "The cache is about **2.3×** faster at 1,024 tokens." in prose(path)
    assert numbers("row 0: [1, −1, 2], −128 and 0.703; 1,024 tokens; x3") == [
        0, 1, -1, 2, -128, 0.703, 1024]


def test_static_problems_name_the_claim_and_the_field(tmp_path):
    path = _lesson(tmp_path, "# The cache is about 2.3× faster.", (
        "- says: about 2.3× faster\n  printed: 'speed-up ([\\d.]+)x'\n  value: 2.3\n"
        "  rel: 0.5\n"
        "- says: about 9× faster\n  printed: 'x'\n  value: 9\n  tolerance: 1\n"
        "- says: 2.3×\n  printed: '(\\d) (\\d)'\n  value: 4\n  tolerance: 0\n"))
    problems = static_problems(path)
    assert len(problems) == 4, problems
    assert "claims[1]" in problems[0] and "not in the lesson" in problems[0]
    assert "claims[1]" in problems[1] and "0 groups for 1 figures" in problems[1]
    assert "claims[2]" in problems[2] and "states [4.0]" in problems[2]
    assert "claims[2]" in problems[3] and "2 groups" in problems[3]


@pytest.mark.parametrize("text,field", [
    ("- says: abc\n  printed: x\n", "give exactly one of"),
    ("- says: abc\n  printed: x\n  value: 1\n", "exactly one of tolerance"),
    ("- says: abc\n  printed: x\n  between: [3, 2]\n", "[low, high]"),
    ("- says: abc\n  printed: x\n  value: 1\n  rel: 0.1\n  color: red\n", "claims[0].color"),
    ("says: abc\n", "must be a list"),
])
def test_a_broken_claims_file_is_one_line_naming_the_field(tmp_path, text, field):
    path = tmp_path / "claims.yml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ClaimsError) as err:
        load_claims(path)
    assert field in str(err.value) and "\n" not in str(err.value) and "claims.yml" in str(err.value)


def _notebook(*outputs: dict) -> dict:
    return {"cells": [{"cell_type": "markdown", "source": "# 9.9x"},
                      {"cell_type": "code", "outputs": list(outputs)}]}


def test_outputs_are_checked_against_the_stated_figures(tmp_path):
    path = _lesson(tmp_path, "# about 2–3× for one sequence; softmax = [0.703, 0.202, 0.095];"
                             "\n# at least 100× faster", (
                       "- says: about 2–3× for one sequence\n"
                       "  printed: 'batch 1 speed-up ([\\d.]+)x'\n  between: [2, 3]\n"
                       "- says: softmax = [0.703, 0.202, 0.095]\n"
                       "  printed: 'T=4 \\[([\\d.]+) ([\\d.]+) ([\\d.]+)\\]'\n"
                       "  value: [0.703, 0.202, 0.095]\n  tolerance: 0.0005\n"
                       "- says: at least 100× faster\n  printed: 'loops ([\\d,.]+)x'\n"
                       "  at_least: 100\n"))
    assert static_problems(path) == []
    good = notebook_text(_notebook(
        {"output_type": "stream", "name": "stdout", "text": "batch 1 speed-up 2.4x\n"},
        {"output_type": "execute_result", "data": {"text/plain": "T=4 [0.703 0.202 0.095]"}},
        {"output_type": "stream", "name": "stdout", "text": ["loops 1,234.5x\n"]}))
    assert check_outputs(path, good) == []
    bad = good.replace("2.4x", "41.1x").replace("0.202", "0.19")
    problems = check_outputs(path, bad)
    assert len(problems) == 2, problems
    assert "claims[0]" in problems[0] and "printed 41.1, the lesson says 2 to 3" in problems[0]
    assert "claims[1]" in problems[1] and "printed 0.19, the lesson says 0.202 ± 0.0005" in (
        problems[1])
    twice = good + "\nbatch 1 speed-up 2.5x\n"
    assert "matched 2 times" in check_outputs(path, twice)[0]
    assert "matched 0 times" in check_outputs(path, "")[0]


def test_relative_tolerance_and_bounds():
    c = Claim(says="2.3×", printed="(x)", value=2.3, rel=0.5)
    assert c.holds([3.4]) is None and "± 50 %" in (c.holds([3.5]) or "")
    c = Claim(says="100 to 300", printed="(x)", at_least=100, at_most=300)
    assert c.holds([100.0]) is None and c.holds([99.0]) and c.holds([301.0])


def test_an_unclaimed_expected_figure_is_found(tmp_path):
    path = _lesson(tmp_path, "# Text.", "- says: columns about 12x slower\n  printed: '(\\d+)x'\n"
                                        "  between: [2, 30]\n")
    path.write_text(path.read_text() + "# Expected: columns about 12x slower, and cols\n"
                    "# take 9.0x the input (19.3 MB).\nx = 1\n", encoding="utf-8")
    got = unclaimed_expectations(path)
    assert len(got) == 2 and "'9.0x'" in got[0] and "'19.3 MB'" in got[1], got
