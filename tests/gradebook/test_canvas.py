"""Canvas round trip (issue 12 items 5, 6): headers Canvas matches to existing assignments,
never a title Canvas would misread as an id; duplicate Canvas IDs refused in a roster."""

from __future__ import annotations

import csv
import re

import pytest

from gradebook import api
from gradebook.errors import GradebookError
from gradebook.export import CANVAS_FIXED, CANVAS_ID, canvas_header
from gradebook.items import catalogue

CANVAS_RULE = re.compile(r"\((\d+)\)\s*$")  # what Canvas reads as "(assignment id)"


def _headers(path) -> list[str]:
    with open(path, encoding="utf-8", newline="") as fh:
        return next(csv.reader(fh))[len(CANVAS_FIXED):]


def test_titles_never_look_like_an_assignment_id(sample_store, gb_course, tmp_path):
    out = api.export(fmt="canvas", output=tmp_path / "c.csv", store=sample_store,
                     course=gb_course, with_total=True)
    headers = _headers(out)
    assert any("perceptron" in h for h in headers)
    assert [h for h in headers if CANVAS_RULE.search(h)] == []
    assert canvas_header("Lab (2027)", None) == "Lab [2027]"


def test_known_ids_make_title_id_headers(sample_store, gb_course, tmp_path):
    items = catalogue(gb_course)
    mapping = tmp_path / "ids.csv"
    chosen = {row.item: str(9000 + i) for i, row in enumerate(items.itertuples())
              if row.item.startswith(("01_", "milestone:"))}
    mapping.write_text("item,assignment_id\n" + "".join(f"{k},{v}\n" for k, v in chosen.items()))
    out = api.export(fmt="canvas", output=tmp_path / "c.csv", store=sample_store,
                     course=gb_course, canvas_ids=mapping)
    title_of = dict(zip(items["item"], items["title"], strict=True))
    headers = _headers(out)
    for item, aid in chosen.items():
        if title_of[item] in {h.rsplit(" (", 1)[0] for h in headers}:
            assert f"{title_of[item]} ({aid})" in headers
    for h in headers:  # Canvas's rule reads exactly the ids we know, nothing else
        m = CANVAS_RULE.search(h)
        assert m is None or m.group(1) in chosen.values()


def test_ids_are_learned_from_a_canvas_export(sample_store, gb_course, tmp_path):
    items = catalogue(gb_course)
    first = items.iloc[0]
    canvas = tmp_path / "canvas_export.csv"
    canvas.write_text(",".join([*CANVAS_FIXED, f"{first['title']} (4242)",
                                "Attendance (17)", "Current Score"]) + "\n")
    out = tmp_path / "ids.csv"
    ids = api.canvas_ids(source=canvas, output=out, course=gb_course)
    assert ids == {first["item"]: "4242"}
    assert out.read_text().splitlines() == ["item,assignment_id", f"{first['item']},4242"]


@pytest.mark.parametrize("text,error", [
    ("item,assignment_id\nnope,12\n", "unknown item 'nope'"),
    ("item,assignment_id\n01_tensor,x1\n", "is not a number"),
    ("item,assignment_id\n01_tensor,12\n01_tensor,13\n", "listed twice"),
    ("item,assignment_id\n01_tensor,12\n02_activations,12\n", "given to two items"),
    ("Student,ID\n", "no column header"),
])
def test_bad_id_files_are_one_line(gb_course, tmp_path, text, error):
    path = tmp_path / "ids.csv"
    path.write_text(text)
    from gradebook.export import read_canvas_ids

    with pytest.raises(GradebookError, match=error):
        read_canvas_ids(path, catalogue(gb_course))


def test_duplicate_canvas_id_in_roster_is_refused(store_copy, gb_course, tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("Student,ID,SIS User ID,SIS Login ID,Section\n"
                      "Ada,101,S1,ada,A\nAlan,101,S2,alan,A\n")
    with pytest.raises(GradebookError, match=r"roster.csv:3: ID: duplicate '101' \(also on line 2\)"):
        api.roster(roster, store=store_copy, course=gb_course)


def test_canvas_id_regex_matches_canvas_rule():
    assert CANVAS_ID.pattern == CANVAS_RULE.pattern
