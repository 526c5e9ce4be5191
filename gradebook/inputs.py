"""Parsers for the files TAs write or download: roster, extensions, manual scores, overrides.

Each parser reads one CSV file and returns plain rows, or raises :class:`GradebookError` with
one line naming the file, the line and the field (``roster.csv:7: SIS User ID: empty``).
Nothing is dropped silently: rows that are skipped on purpose (Canvas's ``Points Possible``
row and its ``Test Student``) are counted in the result.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from gradebook.errors import GradebookError, where
from gradebook.identity import RosterIndex

if TYPE_CHECKING:
    from coursekit.course import Course

ROSTER_REQUIRED = ["Student", "SIS User ID", "SIS Login ID", "Section"]
TIME_FORMAT = "%Y-%m-%d %H:%M"


def sha256_file(path: Path) -> str:
    """The sha256 of a file's bytes (hex)."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 16), b""):
            digest.update(chunk)
    return digest.hexdigest()


def read_csv_rows(path: Path, required: list[str]) -> Iterator[tuple[int, dict[str, str]]]:
    """Yield ``(line, row)`` for each data row of a CSV with a header.

    Column names and cells are stripped; a UTF-8 byte-order mark is tolerated.

    Raises:
        GradebookError: the file is missing or empty, or lacks a required column.
    """
    if not path.is_file():
        raise GradebookError(f"{path}: file not found")
    with path.open(newline="", encoding="utf-8-sig") as fh:
        reader = csv.reader(fh)
        try:
            yield from _rows(path, reader, required)
        except (csv.Error, UnicodeDecodeError) as exc:
            # a field over csv's size limit, a NUL byte, bytes that are not UTF-8
            raise GradebookError(f"{where(path, reader.line_num + 1)}: not a readable CSV "
                                 f"({type(exc).__name__}: {str(exc)[:120]})") from None


def _rows(path: Path, reader: Any, required: list[str]
          ) -> Iterator[tuple[int, dict[str, str]]]:
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        raise GradebookError(f"{path}: empty file (expected a header row)") from None
    for col in required:
        if col not in header:
            raise GradebookError(
                f"{path}:1: {col}: missing column (header has: {', '.join(header)})"
            )
    for cells in reader:
        if not any(c.strip() for c in cells):
            continue
        if len(cells) != len(header):
            # a short row would silently default its missing cells (e.g. a track)
            raise GradebookError(
                f"{where(path, reader.line_num)}: {len(cells)} cells but the header has "
                f"{len(header)} columns"
            )
        row = {h: (cells[i].strip() if i < len(cells) else "") for i, h in enumerate(header)}
        yield reader.line_num, row


# --------------------------------------------------------------------------- roster
@dataclass
class RosterFile:
    """A parsed roster.

    Attributes:
        rows: one dict per student (``student, name, canvas_id, login, email, section, track,
            line``).
        skipped: human-readable notes on rows skipped on purpose.
    """

    rows: list[dict[str, Any]]
    skipped: list[str] = field(default_factory=list)


def parse_roster(path: Path, *, tracks: list[str], default_track: str) -> RosterFile:
    """Read a roster in Canvas's gradebook export format.

    Columns: ``Student, ID, SIS User ID, SIS Login ID, Section`` (required except ``ID``),
    optional ``Track`` (a track id from course.yml; empty means ``default_track``) and
    optional ``Email``. Canvas's ``Points Possible`` row and ``Test Student`` rows are skipped
    and reported.

    Args:
        path: the CSV.
        tracks: valid track ids.
        default_track: track of rows without one.

    Returns:
        The parsed roster.

    Raises:
        GradebookError: a required field is empty, a track is unknown, or a Canvas ID, SIS
            User ID, SIS Login ID or Email repeats.
    """
    rows: list[dict[str, Any]] = []
    skipped: list[str] = []
    seen: dict[tuple[str, str], int] = {}
    for line, r in read_csv_rows(path, ROSTER_REQUIRED):
        name = r["Student"]
        if name == "Points Possible":
            skipped.append(f"line {line}: Canvas 'Points Possible' row")
            continue
        if name in ("Student, Test", "Test Student"):
            skipped.append(f"line {line}: Canvas test student {name!r}")
            continue
        for col in ROSTER_REQUIRED:
            if not r[col]:
                raise GradebookError(f"{where(path, line, col)}: empty")
        track = r.get("Track", "") or default_track
        if track not in tracks:
            raise GradebookError(
                f"{where(path, line, 'Track')}: unknown track {track!r} "
                f"(expected one of: {', '.join(tracks)})"
            )
        email = r.get("Email", "")
        for col, value in (("SIS User ID", r["SIS User ID"]), ("SIS Login ID", r["SIS Login ID"]),
                           ("Email", email), ("ID", r.get("ID", ""))):
            if not value:
                continue
            key = (col, value.lower())
            if key in seen:
                raise GradebookError(
                    f"{where(path, line, col)}: duplicate {value!r} (also on line {seen[key]})"
                )
            seen[key] = line
        rows.append(
            {"student": r["SIS User ID"], "name": name, "canvas_id": r.get("ID", ""),
             "login": r["SIS Login ID"], "email": email, "section": r["Section"],
             "track": track, "line": line}
        )
    if not rows:
        raise GradebookError(f"{path}: no students in the roster")
    return RosterFile(rows, skipped)


# ----------------------------------------------------------------------- helpers
def parse_local_time(text: str, tz: Any, what: str) -> pd.Timestamp:
    """Parse ``YYYY-MM-DD HH:MM`` in the course time zone (or any ISO time with an offset).

    Args:
        text: the time.
        tz: the course time zone.
        what: location prefix for the error message.

    Returns:
        The time in UTC.

    Raises:
        GradebookError: not a time, or a year outside 2000-2100.
    """
    try:
        stamp = pd.Timestamp(dt.datetime.strptime(text, TIME_FORMAT)).tz_localize(tz)
    except ValueError:
        try:
            stamp = pd.Timestamp(text)
        except (ValueError, TypeError):
            raise GradebookError(f"{what}: {text!r} is not a time (YYYY-MM-DD HH:MM)") from None
        if pd.isna(stamp):
            raise GradebookError(f"{what}: empty time") from None
        stamp = stamp.tz_localize(tz) if stamp.tzinfo is None else stamp
    if not 2000 <= stamp.year <= 2100:
        raise GradebookError(f"{what}: impossible date {text!r}")
    return stamp.tz_convert("UTC")


def _student(index: RosterIndex, ref: str, what: str) -> str:
    if not ref:
        raise GradebookError(f"{what}: empty")
    res = index.lookup(ref)
    if res.student is None:
        raise GradebookError(f"{what}: {res.problem}")
    return res.student


def _number(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise GradebookError(f"{what}: {text!r} is not a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise GradebookError(f"{what}: {text!r} is not a finite number")
    return value


# -------------------------------------------------------------------- extensions
def parse_extensions(path: Path, *, course: Course, roster: pd.DataFrame) -> list[dict[str, Any]]:
    """Read per-student extensions and accommodations.

    Columns: ``student`` (SIS User ID, login or email), ``module`` (``01``, ``tensor``, ... or
    ``*`` for every module), exactly one of ``due`` (new due time ``YYYY-MM-DD HH:MM`` in the
    course time zone) or ``hours`` (extra hours, > 0), and ``reason``.

    Returns:
        Rows ``student, module (0 = every module), due (ISO UTC or None), hours, reason, line``.

    Raises:
        GradebookError: unknown student or module, both or neither of due/hours, a due time
            before the module's own due time, or a repeated (student, module).
    """
    index = RosterIndex(roster)
    out: list[dict[str, Any]] = []
    seen: dict[tuple[str, int], int] = {}
    for line, r in read_csv_rows(path, ["student", "module", "reason"]):
        student = _student(index, r["student"], where(path, line, "student"))
        mref = r["module"]
        if mref in ("*", "all"):
            number = 0
        else:
            try:
                number = course.module(mref).number
            except ValueError as exc:
                raise GradebookError(f"{where(path, line, 'module')}: {exc}") from None
        due_text, hours_text = r.get("due", ""), r.get("hours", "")
        if bool(due_text) == bool(hours_text):
            raise GradebookError(
                f"{where(path, line, 'due/hours')}: give exactly one of a new due time or hours"
            )
        if not r["reason"]:
            raise GradebookError(f"{where(path, line, 'reason')}: empty")
        due_iso: str | None = None
        hours: float | None = None
        if due_text:
            if number == 0:
                raise GradebookError(
                    f"{where(path, line, 'due')}: module '*' takes hours, not a due time"
                )
            due = parse_local_time(due_text, course.tz, where(path, line, "due"))
            module = course.module(number)
            original = pd.Timestamp(course.local_time(module.due)).tz_convert("UTC")
            if due <= original:
                raise GradebookError(
                    f"{where(path, line, 'due')}: {due_text} is not after the module's due time "
                    f"{module.due}"
                )
            due_iso = due.isoformat()
        else:
            hours = _number(hours_text, where(path, line, "hours"))
            if hours <= 0 or hours > 24 * 365:
                raise GradebookError(
                    f"{where(path, line, 'hours')}: {hours_text} is not in (0, 8760]"
                )
        key = (student, number)
        if key in seen:
            raise GradebookError(
                f"{where(path, line, 'module')}: duplicate extension for {student} module "
                f"{mref} (also on line {seen[key]})"
            )
        seen[key] = line
        out.append({"student": student, "module": number, "due": due_iso, "hours": hours,
                    "reason": r["reason"], "line": line})
    return out


# ------------------------------------------------------------- manual / overrides
def parse_scores(
    path: Path, *, course: Course, roster: pd.DataFrame, items: pd.DataFrame, override: bool
) -> list[dict[str, Any]]:
    """Read hand-entered scores: written questions (``manual``) or overrides.

    Manual columns: ``student``, ``module`` (the module's written item) or ``item`` (any item
    id), ``score``, optional ``grader`` and ``comment``. Override columns: ``student``,
    ``item``, ``score`` (or ``clear`` to remove an override), ``reason`` (required).

    Returns:
        Rows ``student, item, score (None = clear), reason, line``.

    Raises:
        GradebookError: unknown student or item, a score outside [0, points], a missing reason,
            or a repeated (student, item).
    """
    from gradebook.items import resolve_item

    index = RosterIndex(roster)
    points = dict(zip(items["item"], items["points"], strict=True))
    required = ["student", "score"] + (["item", "reason"] if override else [])
    out: list[dict[str, Any]] = []
    seen: dict[tuple[str, str], int] = {}
    for line, r in read_csv_rows(path, required):
        student = _student(index, r["student"], where(path, line, "student"))
        if not override and "item" not in r and "module" not in r:
            raise GradebookError(f"{path}:1: module: missing column (or give an item column)")
        ref = r.get("item") or ""
        col = "item"
        if not ref and not override:
            ref, col = r.get("module", ""), "module"
            if ref:
                ref += ":written"
        if not ref:
            raise GradebookError(f"{where(path, line, col)}: empty")
        item = resolve_item(course, ref) if ref else ""
        if item not in points:
            raise GradebookError(f"{where(path, line, col)}: item {item!r} has no points")
        text = r["score"]
        score: float | None
        if override and text.lower() == "clear":
            score = None
        else:
            if not text:
                raise GradebookError(f"{where(path, line, 'score')}: empty")
            score = _number(text, where(path, line, "score"))
            if not 0 <= score <= points[item]:
                raise GradebookError(
                    f"{where(path, line, 'score')}: {text} is outside 0..{points[item]:g} "
                    f"for {item}"
                )
        reason = r.get("reason", "") or r.get("comment", "")
        if override and not reason:
            raise GradebookError(f"{where(path, line, 'reason')}: an override needs a reason")
        key = (student, item)
        if key in seen:
            raise GradebookError(
                f"{where(path, line, 'student')}: duplicate score for {student} {item} "
                f"(also on line {seen[key]})"
            )
        seen[key] = line
        grader = r.get("grader", "")
        out.append({"student": student, "item": item, "score": score, "reason": reason,
                    "grader": grader, "line": line})
    return out
