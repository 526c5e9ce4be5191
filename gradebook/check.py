"""``check``: problems in the inputs, one flagged row each; nothing is swallowed.

Levels: ``error`` (a score cannot be trusted or placed: ``check`` exits 1), ``warning``
(counted, but a TA should look), ``note`` (informational: rows a source skipped on purpose).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from gradebook import policy as pol
from gradebook.frames import Frames
from gradebook.tables import cell


@dataclass(frozen=True)
class Problem:
    """One flagged row."""

    level: str
    source: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.level}: {self.source}: {self.field}: {self.message}"


def problems(frames: Frames, sources: pd.DataFrame) -> list[Problem]:
    """Every problem found in the store's inputs, errors first.

    Args:
        frames: the loaded frames.
        sources: the store's ``sources`` table.

    Returns:
        Problems, sorted by level then source.
    """
    out: list[Problem] = []
    r: Any  # itertuples rows: one attribute per column, typed by the column
    ev = frames.events
    items = frames.items.set_index("item")
    if frames.roster.empty:
        out.append(Problem("error", "store", "roster", "no roster imported"))
    # 1. events that match no roster student
    bad = ev[ev["student"].isna()]
    for (path, _ref), group in bad.groupby(["source_path", "student_ref"], sort=True):
        out.append(Problem("error", str(path), "student",
                           f"{group['problem'].iloc[0]}; {len(group)} score(s) not counted"))
    # 2. items the course does not know
    for (path, item), group in ev[~ev["item"].isin(items.index)].groupby(
        ["source_path", "item"], sort=True
    ):
        out.append(Problem("error", str(path), "item",
                           f"unknown item {item!r} ({len(group)} event(s)); not in course.yml"))
    known = ev[ev["item"].isin(items.index) & ev["score"].notna()]
    # 3. score above max, or max differing from the course's points
    for r in known.itertuples(index=False):
        if r.max_score is not None and not pd.isna(r.max_score):
            if r.score > r.max_score + 1e-9 or r.score < -1e-9:
                accepted = pol.details_of(r.details).get("accepted")
                level = "note" if accepted else "error"
                why = f" (accepted: {accepted.get('reason')})" if accepted else ""
                out.append(Problem(level, str(r.source_path), "score",
                                   f"{r.student_ref} {r.item}: {r.score:g} outside 0..max "
                                   f"{r.max_score:g}{why}"))
            points = float(cell(items, r.item, "points"))
            if r.kind not in ("manual", "override") and abs(r.max_score - points) > 1e-9:
                out.append(Problem("warning", str(r.source_path), "max_score",
                                   f"{r.student_ref} {r.item}: out of {r.max_score:g} but "
                                   f"course.yml gives {points:g}; scaled"))
    # 4. impossible dates: before the module's release, or long after its due time
    releases = {m.number: pd.Timestamp(frames.course.local_time(m.release)).tz_convert("UTC")
                for m in frames.course.modules}
    limit_days = float(frames.course.grading.implausible_late_days)
    timed = known[known["submitted_at"].notna()]
    for r in timed.itertuples(index=False):
        module = int(cell(items, r.item, "module"))
        due = cell(items, r.item, "due")
        if r.submitted_at < releases[module]:
            out.append(Problem("error", str(r.source_path), "submitted_at",
                               f"{r.student_ref} {r.item}: submitted "
                               f"{r.submitted_at.isoformat()}, before the module's release"))
        elif r.submitted_at > due + pd.Timedelta(days=limit_days):
            out.append(Problem("error", str(r.source_path), "submitted_at",
                               f"{r.student_ref} {r.item}: submitted "
                               f"{r.submitted_at.isoformat()}, more than {limit_days:g} days "
                               "after the due time (wrong module or year?)"))
    # 5. extensions for students who left the roster
    on_roster = set(frames.roster["student"])
    for r in frames.extensions.itertuples(index=False):
        if r.student not in on_roster:
            out.append(Problem("warning", f"{r.source_path}:{r.line}", "student",
                               f"{r.student} has an extension but is not on the roster"))
    # 6. roster students without any score, and counted items without one
    if not frames.roster.empty:
        scored = set(ev.loc[ev["student"].notna(), "student"])
        for r in frames.roster.itertuples(index=False):
            if r.student not in scored:
                out.append(Problem("warning", frames.roster_source or "roster", "student",
                                   f"{r.student} ({r.name}) has no scores at all"))
        resolved = ev[ev["student"].notna()]
        current = pol.current_scores(resolved)
        cut = pol.default_as_of(frames.items, ev, len(frames.roster))
        grid = pol.counted_items(frames.roster, frames.items, frames.policy, cut)
        rows = pol.score_rows(grid, current)
        missing = rows[rows["missing"] & rows["override"].isna()]
        for student, group in missing.groupby("student", sort=True):
            if student in scored:
                out.append(Problem("warning", "gradebook", "missing",
                                   f"{student}: no score for {', '.join(group['item'])} "
                                   "(counts as 0)"))
        # overrides on items outside the student's track
        track_of = dict(zip(frames.roster["student"], frames.roster["track"], strict=True))
        ov = resolved[resolved["kind"] == "override"]
        for r in ov.itertuples(index=False):
            track = track_of.get(r.student)
            if track is None or r.item not in items.index:
                continue
            if int(cell(items, r.item, "module")) not in frames.policy.track_modules[track]:
                out.append(Problem("warning", str(r.source_path), "item",
                                   f"override of {r.item} for {r.student}: not in track {track}"))
    # 7. pending items: the autograder could not score them (course side); never a 0
    out += _pending(ev)
    # 8. what sources skipped on purpose
    notes = {(str(r.path), note) for r in sources.itertuples(index=False)
             if isinstance(r.note, str) and r.note for note in r.note.split("; ")}
    out += [Problem("note", path, "rows", note) for path, note in sorted(notes)]
    rank = {"error": 0, "warning": 1, "note": 2}
    return sorted(out, key=lambda p: (rank[p.level], p.source, p.field, p.message))


def _pending(ev: pd.DataFrame) -> list[Problem]:
    """Every pending event no later score replaced: an error when the item has no score at
    all (it does not count until regraded), a warning when an earlier score still counts."""
    last_pending: dict[tuple[str, str], Any] = {}
    scored: dict[tuple[str, str], int] = {}
    r: Any  # itertuples rows: one attribute per column
    for r in ev.sort_values("event_id").itertuples(index=False):
        key = (str(r.student if isinstance(r.student, str) else r.student_ref), str(r.item))
        if r.kind == pol.PENDING:
            last_pending[key] = r
        elif r.kind != "override" and not pd.isna(r.score):
            scored[key] = int(r.event_id)
    out = []
    for key, r in sorted(last_pending.items()):
        if scored.get(key, -1) > int(r.event_id):
            continue
        why = pol.details_of(r.details).get("pending") or ["not scored"]
        has_score = key in scored
        out.append(Problem(
            "warning" if has_score else "error", str(r.source_path), "pending",
            f"{key[0]} {key[1]}: submission {r.submission_id or '?'} could not be scored "
            f"(course side: {'; '.join(str(w) for w in why[:3])}); "
            + ("the earlier score still counts" if has_score else
               "it counts as nothing, not 0, until it is regraded")
            + " — fix the cause, then regrade (tito regrade ... --apply)"))
    return out
