"""Matching people: nothing is credited to a roster student on partial evidence, and a short
roster row is an error, not a silent default."""

from __future__ import annotations

import pandas as pd
import pytest

from gradebook.errors import GradebookError
from gradebook.identity import RosterIndex
from gradebook.inputs import parse_roster

ROSTER = pd.DataFrame([
    {"student": "S1001", "name": "Lovelace, Ada", "login": "alovelace", "email": "",
     "canvas_id": "1", "section": "A", "track": "full"},
])


def test_known_email_with_unknown_sid_is_flagged_not_credited():
    res = RosterIndex(ROSTER).resolve(sid="S9998", email="alovelace@example.edu")
    assert res.student is None
    assert "SID S9998 not on the roster" in res.problem and "S1001" in res.problem


def test_all_identifiers_agreeing_resolve():
    res = RosterIndex(ROSTER).resolve(sid="S1001", login="alovelace",
                                      email="alovelace@example.edu")
    assert res.student == "S1001" and res.problem == ""


def test_a_short_roster_row_is_an_error_naming_the_line(tmp_path):
    p = tmp_path / "roster.csv"
    p.write_text("Student,ID,SIS User ID,SIS Login ID,Section,Track\n"
                 '"Hopper, Grace",50102,S1003,ghopper,CS 249 LEC 002\n')
    with pytest.raises(GradebookError, match=r"roster.csv:2: 5 cells but the header has 6"):
        parse_roster(p, tracks=["foundation", "full"], default_track="full")
