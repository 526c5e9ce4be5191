"""Exports: Canvas gradebook import CSV and a Gradescope-style grade CSV (pure frame builders).

Both export each counted item's *final* points (after lateness and overrides; a dropped item
keeps its score, since Canvas does not know our drops) and the course percentage, which
includes drops and weights. Cells of items outside a student's track are blank.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from gradebook.frames import Built
from gradebook.tables import cell

CANVAS_FIXED = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
TOTAL_COLUMN = "Course Grade (%)"


def _item_table(built: Built) -> tuple[list[str], pd.DataFrame]:
    """Item titles in syllabus order and a student x title table of final points."""
    scores = built.result.scores
    items = built.frames.items
    counted = items[items["item"].isin(set(scores["item"]))].sort_values("order")
    titles = list(counted["title"])
    wide = scores.pivot(index="student", columns="item", values="final")
    wide = wide.reindex(columns=list(counted["item"]))
    wide.columns = titles
    return titles, wide.round(2)


def canvas(built: Built, *, with_total: bool = False) -> pd.DataFrame:
    """The Canvas gradebook import: fixed columns, then one column per graded item.

    Row 1 is ``Points Possible`` (points of each item); student rows follow in roster order,
    matched by Canvas on SIS Login ID / SIS User ID.

    Args:
        built: the built gradebook.
        with_total: also add the course grade as a last column (``Course Grade (%)``, 100
            points possible). Off by default: Canvas would import it as one more assignment
            and count it in its own total.

    Returns:
        The CSV as a frame (write with ``to_csv(index=False)``).
    """
    titles, wide = _item_table(built)
    items = built.frames.items.set_index("title")
    points = {t: float(cell(items, t, "points")) for t in titles}
    roster = built.frames.roster
    r: Any  # itertuples rows: one attribute per column, typed by the column
    grades = built.grades.set_index("student")
    rows = [{"Student": "Points Possible", "ID": "", "SIS User ID": "", "SIS Login ID": "",
             "Section": "", **{t: points[t] for t in titles}, TOTAL_COLUMN: 100.0}]
    for r in roster.itertuples(index=False):
        row = {"Student": r.name, "ID": r.canvas_id, "SIS User ID": r.student,
               "SIS Login ID": r.login, "Section": r.section}
        for t in titles:
            value = cell(wide, r.student, t) if r.student in wide.index else float("nan")
            row[t] = "" if pd.isna(value) else value
        row[TOTAL_COLUMN] = round(float(cell(grades, r.student, "percent")), 2)
        rows.append(row)
    if not with_total:
        return pd.DataFrame(rows, columns=[*CANVAS_FIXED, *titles])
    return pd.DataFrame(rows, columns=[*CANVAS_FIXED, *titles, TOTAL_COLUMN])


def gradescope(built: Built) -> pd.DataFrame:
    """A grade CSV in Gradescope's "Download Grades" layout for the whole course.

    ``First Name, Last Name, SID, Email, Sections, Total Score (course %), Max Points (100),
    Status, Track, Letter``, then one column per item (final points).

    Args:
        built: the built gradebook.

    Returns:
        The CSV as a frame.
    """
    titles, wide = _item_table(built)
    roster = built.frames.roster
    r: Any  # itertuples rows: one attribute per column, typed by the column
    grades = built.grades.set_index("student")
    rows = []
    for r in roster.itertuples(index=False):
        last, _, first = str(r.name).partition(", ")
        if not first:
            first, _, last = str(r.name).rpartition(" ")
        email = r.email or (r.login if "@" in str(r.login) else "")
        row = {"First Name": first, "Last Name": last, "SID": r.student, "Email": email,
               "Sections": r.section,
               "Total Score": round(float(cell(grades, r.student, "percent")), 2),
               "Max Points": 100.0, "Status": "Graded", "Track": r.track,
               "Letter": grades.at[r.student, "letter"]}
        for t in titles:
            value = cell(wide, r.student, t) if r.student in wide.index else float("nan")
            row[t] = "" if pd.isna(value) else value
        rows.append(row)
    cols = ["First Name", "Last Name", "SID", "Email", "Sections", "Total Score", "Max Points",
            "Status", "Track", "Letter", *titles]
    return pd.DataFrame(rows, columns=cols)
