"""The bundled sample term: credit of five students computed by hand, exports, explain.

Policy (course.yml): modules and written drop the lowest 1; late: 15 min grace, 10 % per
started day, cap 50 %, 3 tokens of 24 h; weights full = modules .5, written .1,
milestones .2, capstone .2 (nothing due: renormalised over .8); foundation = .6/.15/.25.
The default cut-off counts modules 01-07 and the three milestones graded with 06 and 07.
"""

from __future__ import annotations

import csv
import filecmp
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gradebook import api, export

SAMPLE = Path(api.SAMPLE_TERM)


def grade(built, sid):
    return built.grades.set_index("student").loc[sid]


def test_sample_term_size_and_tracks(sample_built):
    g = sample_built.grades
    assert len(g) >= 40
    assert set(g["track"]) == {"foundation", "full"}
    assert g["percent"].between(0, 100).all()


def test_ada_perfect_is_100(sample_built):
    row = grade(sample_built, "S1001")
    assert row["percent"] == pytest.approx(100.0) and row["letter"] == "A"


def test_alan_late_tokens_and_drops(sample_built):
    # 02 is 30 min late, 05 is 53 h late; 3 tokens on 05 save 0.3 * (45 + 12) = 17.1 points,
    # more than 2 on 05 + 1 on 02 (0.2 * 57 + 0.1 * 54 = 16.8), so 02 loses 10 %:
    # 40 -> 36 and written 14 -> 12.6.
    modules = (50 + 36 + 50 + 45 + 50 + 50) / 300 * 100   # 03 (30/50) dropped -> 93.667
    written = (15 + 12.6 + 15 + 12 + 15 + 15) / 90 * 100  # 03 (10/15) dropped -> 94.0
    milestones = (10 + 10 + 0) / 30 * 100                 # mlp_1986 failed -> 66.667
    full = (0.5 * modules + 0.1 * written + 0.2 * milestones) / 0.8
    foundation = 0.6 * modules + 0.15 * written + 0.25 * milestones
    row = grade(sample_built, "S1002")
    assert row["percent"] == pytest.approx(full) == pytest.approx(86.958333, abs=1e-6)
    assert row["letter"] == "B"
    assert row["percent_foundation"] == pytest.approx(foundation)
    units = sample_built.result.units.set_index(["student", "module"])
    assert units.at[("S1002", 5), "tokens"] == 3 and units.at[("S1002", 2), "tokens"] == 0


def test_grace_extension_and_milestone_override(sample_built):
    # 04 submitted 3 days late but extended 4 days -> on time; xor_1969 failed (0) but
    # overridden to 10; 07 (30/50, written 9/15) is the lowest and dropped.
    modules = (50 + 50 + 40 + 50 + 50 + 40) / 300 * 100   # 93.333
    written = (15 + 15 + 15 + 12 + 15 + 15) / 90 * 100    # 96.667
    milestones = 100.0
    row = grade(sample_built, "S1003")
    assert row["track"] == "foundation" and row["credits"] == 2
    assert row["percent"] == pytest.approx(0.6 * modules + 0.15 * written + 0.25 * milestones)
    assert row["percent"] == pytest.approx(95.5) and row["letter"] == "A"


def test_donald_override_regrade_and_capped_late(sample_built):
    # 02: 20/50 overridden to 50; 03: regraded 40 -> 45; 07 eight days late -> 50 % cap on the
    # whole submission (module 50 -> 25, written 15 -> 7.5, xor and mlp 10 -> 5); tokens
    # would leave 5 days = still the cap, so none are spent. 07 is dropped in modules and
    # written.
    modules = (50 + 50 + 45 + 50 + 50 + 50) / 300 * 100   # 98.333
    written = 100.0
    milestones = (10 + 5 + 5) / 30 * 100                  # 66.667
    row = grade(sample_built, "S1004")
    assert row["percent"] == pytest.approx((0.5 * modules + 0.1 * written + 0.2 * milestones)
                                           / 0.8)
    assert row["percent"] == pytest.approx(90.625) and row["letter"] == "A-"
    assert sample_built.result.units.query("student == 'S1004'")["tokens"].sum() == 0


def test_margaret_missing_module_is_zero_and_dropped(sample_built):
    modules = (40 + 40 + 50 + 50 + 50 + 50) / 300 * 100   # 03 missing = 0, dropped
    written = (12 + 12 + 15 + 15 + 15 + 15) / 90 * 100
    row = grade(sample_built, "S1005")
    assert row["percent"] == pytest.approx(0.6 * modules + 0.15 * written + 0.25 * 100)
    assert row["percent"] == pytest.approx(95.0)
    s = sample_built.result.scores.set_index(["student", "item"])
    assert bool(s.at[("S1005", "03_layers"), "missing"])
    assert bool(s.at[("S1005", "03_layers"), "dropped"])


def test_final_cut_off_counts_every_item_as_zero(sample_store, gb_course):
    built = api.build(store=sample_store, course=gb_course, as_of="final")
    row = grade(built, "S1001")
    # Full track, every module due: Ada has 7 of 20 modules, 3 of 6 milestones.
    assert row["percent"] < 50
    assert grade(built, "S1003")["percent"] == pytest.approx(95.5)  # foundation: all due


def test_canvas_export_format(sample_store, gb_course, tmp_path):
    out = api.export(fmt="canvas", output=tmp_path / "canvas.csv", store=sample_store,
                     course=gb_course)
    rows = list(csv.reader(out.open(encoding="utf-8")))
    assert rows[0][:5] == export.CANVAS_FIXED
    assert rows[1][0] == "Points Possible" and rows[1][1:5] == ["", "", "", ""]
    header = rows[0]
    assert header[5] == "01_tensor (autograded)" and export.TOTAL_COLUMN not in header
    with_total = api.export(fmt="canvas", output=tmp_path / "canvas_total.csv",
                            store=sample_store, course=gb_course, with_total=True)
    assert next(csv.reader(with_total.open(encoding="utf-8")))[-1] == export.TOTAL_COLUMN
    assert float(rows[1][header.index("01_tensor (written)")]) == 15.0
    by_sis = {r[2]: r for r in rows[2:]}
    assert len(by_sis) == 42 and "" not in by_sis  # no Test Student row
    alan = by_sis["S1002"]
    assert alan[3] == "aturing" and alan[4] == "CS 249 LEC 001"
    assert float(alan[header.index("02_activations (autograded)")]) == 36.0
    total_rows = list(csv.reader(with_total.open(encoding="utf-8")))
    alan_total = {r[2]: r for r in total_rows[2:]}["S1002"]
    assert float(alan_total[-1]) == pytest.approx(86.96)


def test_gradescope_export_format(sample_store, gb_course, tmp_path):
    out = api.export(fmt="gradescope", output=tmp_path / "gs.csv", store=sample_store,
                     course=gb_course)
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    hopper = next(r for r in rows if r["SID"] == "S1003")
    assert (hopper["First Name"], hopper["Last Name"]) == ("Grace", "Hopper")
    assert float(hopper["Total Score"]) == 95.5 and hopper["Max Points"] == "100.0"
    assert hopper["Letter"] == "A" and hopper["Track"] == "foundation"


@pytest.mark.parametrize("ref", ["S1004", "dknuth", "dknuth@example.edu"])
def test_explain_names_every_adjustment(sample_store, gb_course, ref):
    text = api.explain(ref, store=sample_store, course=gb_course)
    assert text.startswith("Knuth, Donald")
    assert "OVERRIDE: final score set to 50" in text and "autograder crashed" in text
    assert "regrade: 40 -> 45" in text and "2027.1.1" in text
    assert "late deduction 50% = -25.00" in text
    assert "dropped" in text
    assert "= 90.62% -> A-" in text or "= 90.63% -> A-" in text


def test_explain_shows_extension_and_tokens(sample_store, gb_course):
    hopper = api.explain("ghopper", store=sample_store, course=gb_course)
    assert "extension: due 2027-02-10 23:59 -> 2027-02-14 23:59" in hopper
    alan = api.explain("S1002", store=sample_store, course=gb_course)
    assert "late tokens: 3 of 3 used" in alan and "3 token(s) applied" in alan


def test_sample_term_checks_clean(sample_store, gb_course):
    found = api.check(store=sample_store, course=gb_course)
    assert not [p for p in found if p.level == "error"], found
    assert any("S1005: no score for 03_layers" in p.message for p in found)
    assert any(":history:" in p.message for p in found)


def test_sample_modules_match_course(gb_course):
    sys.path.insert(0, str(SAMPLE))
    try:
        import generate
    finally:
        sys.path.remove(str(SAMPLE))
    for number, slug, due, cases, milestones in generate.MODULES:
        m = gb_course.module(number)
        assert (m.slug, m.due) == (slug, due)
        assert len(cases) * 10 == m.points
        assert sorted(milestones) == sorted(x.id for x in gb_course.milestones_graded_with(number))


def test_generator_is_deterministic_and_in_sync(tmp_path):
    copy = tmp_path / "term"
    copy.mkdir()
    shutil.copy(SAMPLE / "generate.py", copy / "generate.py")
    subprocess.run([sys.executable, str(copy / "generate.py")], check=True)
    committed = sorted(p.relative_to(SAMPLE) for p in SAMPLE.rglob("*")
                       if p.is_file() and "__pycache__" not in p.parts)
    fresh = sorted(p.relative_to(copy) for p in copy.rglob("*") if p.is_file())
    assert committed == fresh
    for rel in committed:
        assert filecmp.cmp(SAMPLE / rel, copy / rel, shallow=False), f"{rel} is out of date"
