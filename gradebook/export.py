"""Exports: Canvas gradebook import CSV and a Gradescope-style grade CSV (pure frame builders).

Both export each counted item's *final* points (after lateness and overrides; a dropped item
keeps its score, since Canvas does not know our drops) and the course percentage, which
includes drops and weights. Cells of items outside a student's track are blank.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd

from gradebook.errors import GradebookError
from gradebook.frames import Built
from gradebook.tables import cell

CANVAS_FIXED = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
TOTAL_COLUMN = "Course Grade (%)"
#: Canvas reads a column header ending in "(digits)" as that assignment's id.
CANVAS_ID = re.compile(r"\((\d+)\)\s*$")


def canvas_header(title: str, assignment_id: str | None) -> str:
    """The column header Canvas matches to an assignment: ``Title (id)`` when the id is known;
    otherwise the title, never ending in ``(digits)`` (Canvas would take those for an id and
    create another assignment on every import)."""
    if CANVAS_ID.search(title):
        title = CANVAS_ID.sub(lambda m: f"[{m.group(1)}]", title)
    return f"{title} ({assignment_id})" if assignment_id else title


def read_canvas_ids(path: Path, items: pd.DataFrame) -> dict[str, str]:
    """Canvas assignment ids per item, from a staff-kept CSV or a Canvas gradebook export.

    * ``item,assignment_id`` rows (``01_tensor``, ``01_tensor:written``,
      ``milestone:xor_1969``), as ``tito gradebook canvas-ids`` writes them; or
    * a Canvas gradebook export, whose headers are ``Title (id)``: each title is matched to an
      item's title.

    Raises:
        GradebookError: an unknown item, a repeated item or id, a header that matches no item
            (one line naming the file and the row or column).
    """
    import csv

    try:
        with path.open(encoding="utf-8-sig", newline="") as fh:
            rows = list(csv.reader(fh))
    except (OSError, UnicodeDecodeError) as exc:
        raise GradebookError(f"{path}: cannot be read ({exc})") from None
    if not rows:
        raise GradebookError(f"{path}: empty")
    known = set(items["item"])
    ids: dict[str, str] = {}
    if [h.strip() for h in rows[0][:2]] == ["item", "assignment_id"]:
        for line, row in enumerate(rows[1:], 2):
            if not row or not "".join(row).strip():
                continue
            item, aid = (row + ["", ""])[:2]
            item, aid = item.strip(), aid.strip()
            if item not in known:
                raise GradebookError(f"{path}:{line}: item: unknown item {item!r}")
            if not aid.isdigit():
                raise GradebookError(f"{path}:{line}: assignment_id: {aid!r} is not a number")
            if item in ids:
                raise GradebookError(f"{path}:{line}: item: {item!r} is listed twice")
            ids[item] = aid
    else:
        by_title = dict(zip(items["title"], items["item"], strict=True))
        for header in rows[0]:
            m = CANVAS_ID.search(header)
            if header in CANVAS_FIXED or not m:
                continue
            title = header[: m.start()].strip()
            if title in by_title:
                ids[by_title[title]] = m.group(1)
        if not ids:
            raise GradebookError(f"{path}: no column header 'Title (id)' matches a course item "
                                 "(export the Canvas gradebook after one import)")
    repeated = [a for a in set(ids.values()) if list(ids.values()).count(a) > 1]
    if repeated:
        raise GradebookError(f"{path}: assignment id {repeated[0]} is given to two items")
    return ids


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


def canvas(built: Built, *, with_total: bool = False,
           assignment_ids: dict[str, str] | None = None) -> pd.DataFrame:
    """The Canvas gradebook import: fixed columns, then one column per graded item.

    Row 1 is ``Points Possible`` (points of each item); student rows follow in roster order,
    matched by Canvas on SIS Login ID / SIS User ID.

    Args:
        built: the built gradebook.
        with_total: also add the course grade as a last column (``Course Grade (%)``, 100
            points possible). Off by default: Canvas would import it as one more assignment
            and count it in its own total.
        assignment_ids: Canvas assignment id per item (:func:`read_canvas_ids`); headers of
            items with an id are ``Title (id)``, so an import updates those assignments.

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
    ids = assignment_ids or {}
    item_of = dict(zip(built.frames.items["title"], built.frames.items["item"], strict=True))
    headers = {t: canvas_header(t, ids.get(item_of[t])) for t in titles}
    headers[TOTAL_COLUMN] = canvas_header(TOTAL_COLUMN, None)
    frame = pd.DataFrame(rows, columns=[*CANVAS_FIXED, *titles, TOTAL_COLUMN])
    if not with_total:
        frame = frame.drop(columns=TOTAL_COLUMN)
    return frame.rename(columns=headers)


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
