"""The grading policy as pure functions over DataFrames: no I/O, deterministic.

The pipeline (``build``), one function per step, each tested on a tiny hand-built frame:

1. :func:`resolve_events`   events -> the roster student they belong to (or a problem)
2. :func:`current_scores`   the score that counts per (student, item), and its override
3. :func:`counted_items`    (student, item) pairs that count: the student's track, due by ``as_of``
4. :func:`effective_due`    extensions: a new due time or extra hours (the most generous applies)
5. :func:`lateness`         minutes late per (student, submission unit)
6. :func:`allocate_tokens`  late tokens where they save the most points (exact, tie-broken)
7. :func:`apply_late`       late fraction ``min(cap, per_day * started days)`` of each score
8. :func:`apply_overrides`  an override replaces the item's final score
9. :func:`apply_drops`      the lowest N items per category are dropped
10. :func:`category_totals` earned / possible per category
11. :func:`course_grades`   weighted percentage per track (renormalised over categories that
    have counted items) and letter
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from gradebook.identity import RosterIndex
from gradebook.items import LateRules, Policy, track_items
from gradebook.tables import cell, records

EPS = 1e-9
#: Event kind of a result the autograder could not score for a course-side reason (missing
#: test data, a broken reference): never a score, never a 0 (DESIGN invariant 12).
PENDING = "pending"


# --------------------------------------------------------------------------- 1
def resolve_events(events: pd.DataFrame, roster: pd.DataFrame) -> pd.DataFrame:
    """Attach the roster student (SIS User ID) to every event.

    Args:
        events: store events (columns ``sid, login, email`` among others).
        roster: the roster (``student, login, email``).

    Returns:
        ``events`` plus ``student`` (``None`` when unresolved) and ``problem`` (why).
    """
    index = RosterIndex(roster)
    out = events.copy()
    res = [index.resolve(r.sid, r.login, r.email) for r in events.itertuples(index=False)]
    out["student"] = pd.Series([r.student for r in res], index=out.index, dtype="object")
    out["problem"] = pd.Series([r.problem for r in res], index=out.index, dtype="object")
    return out


# --------------------------------------------------------------------------- 2
def current_scores(events: pd.DataFrame) -> pd.DataFrame:
    """The score that counts for each (student, item), and the override if any.

    Rule: events are read in recording order (``event_id``); an event replaces the current
    one unless both carry a submission time and the new one's is earlier (an older
    submission ingested late never replaces a newer one). Regrades of a submission share its
    time, so the latest regrade wins. The latest ``override`` event is kept apart; an
    override with no score (cleared) means no override. A ``pending`` event (the autograder
    could not score it, a course-side failure) never replaces a score; a pair whose only
    events are pending is ``pending`` (it does not count until it is regraded).

    Args:
        events: resolved events (``student`` not null), with ``event_id, kind, item, score,
            max_score, submitted_at`` (UTC Timestamps or NaT) ...

    Returns:
        One row per (student, item): ``score, max_score, submitted_at, submission_id,
        event_id, event_kind, source_path, suite_version, override, override_reason,
        override_by, override_event``.
    """
    cols = ["student", "item", "score", "max_score", "submitted_at", "submission_id",
            "event_id", "event_kind", "source_path", "suite_version", "override",
            "override_reason", "override_by", "override_event", "pending"]
    current: dict[tuple[str, str], dict[str, Any]] = {}
    overrides: dict[tuple[str, str], dict[str, Any]] = {}
    pending: set[tuple[str, str]] = set()
    for ev in records(events.sort_values("event_id")):
        key = (ev["student"], ev["item"])
        if ev["kind"] == "override":
            overrides[key] = ev
            continue
        if ev["kind"] == PENDING:
            pending.add(key)
            continue
        cur = current.get(key)
        if cur is not None and not pd.isna(cur["submitted_at"]) and not pd.isna(
            ev["submitted_at"]
        ) and ev["submitted_at"] < cur["submitted_at"]:
            continue
        current[key] = ev
    rows = []
    for key in sorted(set(current) | set(overrides) | pending):
        event = current.get(key)
        ov = overrides.get(key)
        rows.append({
            "student": key[0], "item": key[1],
            "score": np.nan if event is None else event["score"],
            "max_score": np.nan if event is None else event["max_score"],
            "submitted_at": pd.NaT if event is None else event["submitted_at"],
            "submission_id": None if event is None else event["submission_id"],
            "event_id": np.nan if event is None else event["event_id"],
            "event_kind": None if event is None else event["kind"],
            "source_path": None if event is None else event["source_path"],
            "suite_version": None if event is None else event["suite_version"],
            "override": np.nan if ov is None or ov["score"] is None else ov["score"],
            "override_reason": None if ov is None else ov["reason"],
            "override_by": None if ov is None else ov["recorded_by"],
            "override_event": np.nan if ov is None else ov["event_id"],
            "pending": event is None and key in pending,
        })
    frame = pd.DataFrame(rows, columns=cols)
    frame["submitted_at"] = pd.to_datetime(frame["submitted_at"], utc=True)
    for col in ("score", "max_score", "event_id", "override", "override_event"):
        frame[col] = frame[col].astype("float64")
    return frame


# --------------------------------------------------------------------------- 3
def counted_items(
    roster: pd.DataFrame, items: pd.DataFrame, policy: Policy, as_of: pd.Timestamp | None
) -> pd.DataFrame:
    """The (student, item) pairs that count toward each student's grade.

    An item counts for a student when it is in the student's track (see
    :func:`gradebook.items.track_items`) and it was due by ``as_of`` (``None``: every item).

    Args:
        roster: ``student, track``.
        items: the catalogue.
        policy: the policy.
        as_of: cut-off time (UTC) or ``None``.

    Returns:
        One row per pair with the item columns and ``student, track``.
    """
    parts = []
    for track, group in roster.groupby("track", sort=True):
        its = track_items(items, policy, str(track))
        if as_of is not None:
            its = its[its["due"] <= as_of]
        students = group[["student", "track"]]
        parts.append(students.merge(its, how="cross"))
    if not parts:
        return pd.DataFrame(columns=["student", "track", *items.columns])
    out = pd.concat(parts, ignore_index=True)
    return out.sort_values(["student", "order"], kind="stable").reset_index(drop=True)


# --------------------------------------------------------------------------- 4
def effective_due(frame: pd.DataFrame, extensions: pd.DataFrame) -> pd.DataFrame:
    """Apply extensions: each (student, module) gets its effective due time.

    Extension rows give a new due time for one module, or extra hours for one module or for
    every module (``module == 0``). For each (student, module) the latest row of each form
    counts, and the most generous of {due + every-module hours, the module's new due time,
    due + the module's hours} applies (they do not add up).

    Args:
        frame: rows with ``student, module, due``.
        extensions: ``student, module, due (UTC or NaT), hours (or NaN), reason``, oldest
            first.

    Returns:
        ``frame`` plus ``due_effective`` and ``extension`` (a description, empty if none).
    """
    out = frame.copy()
    latest: dict[tuple[str, int], dict[str, Any]] = {}
    for row in records(extensions):
        latest[(row["student"], int(row["module"]))] = row
    dues, notes = [], []
    for student, module, due in zip(out["student"], out["module"], out["due"], strict=True):
        best, note = due, ""
        for key, label in (((student, 0), "every module"), ((student, int(module)), "")):
            ext = latest.get(key)
            if ext is None:
                continue
            if ext.get("due") is not None and not pd.isna(ext.get("due")):
                cand = pd.Timestamp(ext["due"])
                text = f"new due time ({ext['reason']})"
            else:
                cand = due + pd.Timedelta(hours=float(ext["hours"]))
                scope = f" on {label}" if label else ""
                text = f"+{float(ext['hours']):g} h{scope} ({ext['reason']})"
            if cand > best:
                best, note = cand, text
        dues.append(best)
        notes.append(note)
    out["due_effective"] = pd.to_datetime(pd.Series(dues, index=out.index), utc=True)
    out["extension"] = notes
    return out


# --------------------------------------------------------------------------- 5
def lateness(frame: pd.DataFrame) -> pd.DataFrame:
    """Minutes late of each row: ``submitted_at - due_effective``, never negative.

    Args:
        frame: rows with ``submitted_at`` (NaT when nothing was submitted) and
            ``due_effective``.

    Returns:
        ``frame`` plus ``minutes_late`` (0 when on time or not submitted).
    """
    out = frame.copy()
    delta = (out["submitted_at"] - out["due_effective"]).dt.total_seconds() / 60.0
    out["minutes_late"] = delta.clip(lower=0).fillna(0.0).astype("float64")
    return out


def late_fraction(minutes: float, rules: LateRules, tokens: int = 0) -> float:
    """The fraction of a score lost to lateness.

    ``m = minutes - tokens * token_hours * 60``; on time when ``m <= grace_minutes``;
    otherwise ``min(cap, per_day * ceil(m / 1440))`` (every started day counts, from the due
    time).

    Example:
        >>> late_fraction(16, LateRules(grace_minutes=15, per_day=0.1, cap=0.5))
        0.1
        >>> late_fraction(3 * 1440 + 1, LateRules(15, 0.1, 0.5, 3, 24), tokens=2)
        0.2
    """
    m = minutes - tokens * rules.token_hours * 60.0
    if m <= rules.grace_minutes + EPS:
        return 0.0
    days = math.ceil(m / 1440.0 - EPS)
    return round(min(rules.cap, rules.per_day * days), 12)


def tokens_to_clear(minutes: float, rules: LateRules) -> int:
    """Tokens that make a submission on time (0 if it already is)."""
    if minutes <= rules.grace_minutes + EPS:
        return 0
    return max(0, math.ceil((minutes - rules.grace_minutes) / (rules.token_hours * 60.0) - EPS))


# --------------------------------------------------------------------------- 6
def allocate_tokens(units: pd.DataFrame, rules: LateRules) -> pd.DataFrame:
    """Spend each student's late tokens where they save the most points.

    A *unit* is one student's submission of one module; its ``value`` is the points at stake
    (the raw points of its items that have no override). ``k`` tokens on a unit save
    ``value * (late_fraction(m) - late_fraction(m, k))``. The allocation is exact (dynamic
    programming over units), chosen by: most points saved, then fewest tokens spent, then
    tokens on earlier modules first. Tokens are never spent where they save nothing.

    Args:
        units: ``student, module, minutes_late, value``.
        rules: the late rules (``tokens`` per student, ``token_hours`` each).

    Returns:
        ``units`` plus ``tokens`` (int).
    """
    out = units.sort_values(["student", "module"], kind="stable").reset_index(drop=True)
    spent = np.zeros(len(out), dtype="int64")
    for _student, idx in out.groupby("student", sort=True).groups.items():
        rows = list(idx)
        # state: tokens used -> (saved, allocation tuple)
        states: dict[int, tuple[float, tuple[int, ...]]] = {0: (0.0, ())}
        for i in rows:
            m, value = float(cell(out, i, "minutes_late")), float(cell(out, i, "value"))
            need = tokens_to_clear(m, rules)
            base = late_fraction(m, rules)
            nxt: dict[int, tuple[float, tuple[int, ...]]] = {}
            for used, (saved, alloc) in states.items():
                for k in range(0, min(rules.tokens - used, need) + 1):
                    gain = value * (base - late_fraction(m, rules, k))
                    cand = (round(saved + gain, 9), (*alloc, k))
                    cur = nxt.get(used + k)
                    if cur is None or cand > cur:
                        nxt[used + k] = cand
            states = nxt
        best = max(states.items(), key=lambda kv: (kv[1][0], -kv[0], kv[1][1]))
        for i, k in zip(rows, best[1][1], strict=True):
            spent[i] = k
    out["tokens"] = spent
    return out


# --------------------------------------------------------------------------- 7
def apply_late(frame: pd.DataFrame, rules: LateRules) -> pd.DataFrame:
    """Deduct lateness from each row's raw points.

    Args:
        frame: rows with ``raw_points, minutes_late, tokens``.
        rules: the late rules.

    Returns:
        ``frame`` plus ``late_fraction``, ``late_points`` (points lost) and ``after_late``.
    """
    out = frame.copy()
    pairs = zip(out["minutes_late"], out["tokens"], strict=True)
    frac = [late_fraction(m, rules, int(t)) for m, t in pairs]
    out["late_fraction"] = pd.Series(frac, index=out.index, dtype="float64")
    out["late_points"] = out["raw_points"] * out["late_fraction"]
    out["after_late"] = out["raw_points"] - out["late_points"]
    return out


# --------------------------------------------------------------------------- 8
def apply_overrides(frame: pd.DataFrame) -> pd.DataFrame:
    """An override (in item points) replaces the item's score after lateness.

    Args:
        frame: rows with ``after_late`` and ``override`` (NaN: none).

    Returns:
        ``frame`` plus ``final``.
    """
    out = frame.copy()
    out["final"] = out["override"].where(out["override"].notna(), out["after_late"])
    return out


# --------------------------------------------------------------------------- 9
def apply_drops(frame: pd.DataFrame, drop_lowest: dict[str, int]) -> pd.DataFrame:
    """Drop the lowest N items per (student, category).

    Items are ranked by percentage ``final / points``; ties are dropped in syllabus order
    (earlier item first). At least one item per category always counts.

    Args:
        frame: rows with ``student, category, final, points, order``.
        drop_lowest: category -> N.

    Returns:
        ``frame`` plus ``dropped`` (bool).
    """
    out = frame.copy()
    out["dropped"] = False
    pct = out["final"] / out["points"]
    ranked = out.assign(_pct=pct.round(12)).sort_values(
        ["student", "category", "_pct", "order"], kind="stable"
    )
    for (_student, category), group in ranked.groupby(["student", "category"], sort=True):
        n = min(int(drop_lowest.get(str(category), 0)), len(group) - 1)
        if n > 0:
            out.loc[group.index[:n], "dropped"] = True
    return out


# -------------------------------------------------------------------------- 10
def category_totals(frame: pd.DataFrame) -> pd.DataFrame:
    """Earned and possible points per (student, category), over items not dropped.

    Returns:
        ``student, category, earned, possible, percent, items, dropped``.
    """
    kept = frame[~frame["dropped"]]
    agg = kept.groupby(["student", "category"], sort=True).agg(
        earned=("final", "sum"), possible=("points", "sum"), items=("item", "count")
    )
    drops = frame.groupby(["student", "category"], sort=True)["dropped"].sum().rename("dropped")
    out = agg.join(drops).reset_index()
    out["percent"] = np.where(out["possible"] > 0, 100.0 * out["earned"] / out["possible"], 0.0)
    out["dropped"] = out["dropped"].astype("int64")
    return out[["student", "category", "earned", "possible", "percent", "items", "dropped"]]


# -------------------------------------------------------------------------- 11
def letter_for(percent: float, letters: dict[str, float]) -> str:
    """The highest letter whose cutoff ``percent`` reaches (no rounding up).

    Example:
        >>> letter_for(92.99, {"A": 93, "A-": 90, "F": 0})
        'A-'
    """
    for letter, cut in letters.items():
        if percent + EPS >= cut:
            return letter
    return list(letters)[-1]


def course_grades(cats: pd.DataFrame, students: pd.DataFrame, policy: Policy) -> pd.DataFrame:
    """Weighted course percentage and letter per student in the student's track.

    ``percent = sum_c w_c * percent_c / sum_c w_c`` over the track's categories that have at
    least one counted item (so a category with nothing due yet does not count as 0).

    Args:
        cats: category totals.
        students: ``student, track``.
        policy: weights, credits and letters.

    Returns:
        ``student, track, credits, percent, letter``.
    """
    rows = []
    by_student = {s: g for s, g in cats.groupby("student", sort=True)}
    for student, track in zip(students["student"], students["track"], strict=True):
        weights = policy.weights[track]
        group = by_student.get(student)
        num = den = 0.0
        if group is not None:
            cols = (group["category"], group["percent"], group["possible"])
            for cat, pct, possible in zip(*cols, strict=True):
                w = weights.get(cat, 0.0)
                if w > 0 and possible > 0:
                    num += w * pct
                    den += w
        percent = round(num / den, 9) if den > 0 else 0.0  # NOTE: drop float noise (1e-14)
        rows.append({"student": student, "track": track, "credits": policy.credits[track],
                     "percent": percent, "letter": letter_for(percent, policy.letters)})
    return pd.DataFrame(rows, columns=["student", "track", "credits", "percent", "letter"])


# ------------------------------------------------------------------- pipeline
@dataclass
class Result:
    """A built gradebook for one track assignment of the students.

    Attributes:
        scores: one row per counted (student, item) with every step's columns.
        units: one row per (student, module) submission unit with ``minutes_late, value,
            tokens``.
        categories: category totals.
        grades: ``student, track, credits, percent, letter``.
    """

    scores: pd.DataFrame
    units: pd.DataFrame
    categories: pd.DataFrame
    grades: pd.DataFrame


def score_rows(grid: pd.DataFrame, current: pd.DataFrame) -> pd.DataFrame:
    """Join the counted pairs with their current scores; compute raw points.

    ``raw_points = score / max_score * points`` (0 when nothing was recorded). A written item
    without its own submission time takes its module's (the written answers are in the same
    notebook).

    Returns:
        ``grid`` plus the current-score columns, ``missing`` and ``raw_points``.
    """
    out = grid.merge(current, on=["student", "item"], how="left")
    pending = out["pending"] if "pending" in out else pd.Series(False, index=out.index)
    out["pending"] = pending.astype("boolean").fillna(False).astype(bool)
    out["missing"] = out["score"].isna()
    ratio = (out["score"] / out["max_score"]).where(out["max_score"] > 0, 0.0)
    out["raw_points"] = (ratio.fillna(0.0) * out["points"]).astype("float64")
    auto = out[out["kind"] == "autograded"].set_index(["student", "module"])["submitted_at"]
    key = pd.MultiIndex.from_arrays([out["student"], out["module"]])
    inherited = pd.Series(auto.reindex(key).to_numpy(), index=out.index)
    fill = out["submitted_at"].isna() & (out["kind"] == "written")
    out["submitted_at"] = out["submitted_at"].where(~fill, inherited)
    out["submitted_at"] = pd.to_datetime(out["submitted_at"], utc=True)
    return out


def build_track(
    *, roster: pd.DataFrame, items: pd.DataFrame, current: pd.DataFrame,
    extensions: pd.DataFrame, policy: Policy, as_of: pd.Timestamp | None,
) -> Result:
    """Run steps 3-11 for students in the tracks given by ``roster.track``."""
    grid = counted_items(roster, items, policy, as_of)
    frame = score_rows(grid, current)
    # a pending item (course-side failure, no score yet) does not count until it is regraded:
    # never a 0 (``check`` lists it)
    frame = frame[~(frame["pending"] & frame["missing"] & frame["override"].isna())]
    frame = effective_due(frame, extensions)
    frame = lateness(frame)
    at_stake = frame["raw_points"].where(frame["override"].isna(), 0.0)
    units = (
        frame.assign(value=at_stake)
        .groupby(["student", "module"], sort=True)
        .agg(minutes_late=("minutes_late", "max"), value=("value", "sum"),
             due_effective=("due_effective", "max"), submitted_at=("submitted_at", "max"))
        .reset_index()
    )
    units = allocate_tokens(units, policy.late)
    frame = frame.merge(units[["student", "module", "tokens"]], on=["student", "module"])
    frame = apply_late(frame, policy.late)
    frame = apply_overrides(frame)
    frame = apply_drops(frame, policy.drop_lowest)
    frame = frame.sort_values(["student", "order"], kind="stable").reset_index(drop=True)
    cats = category_totals(frame)
    grades = course_grades(cats, roster[["student", "track"]], policy)
    return Result(frame, units, cats, grades)


def build(
    *, roster: pd.DataFrame, items: pd.DataFrame, events: pd.DataFrame,
    extensions: pd.DataFrame, policy: Policy, as_of: pd.Timestamp | None,
) -> tuple[Result, pd.DataFrame]:
    """The whole gradebook: each student in their own track, plus the percentage and letter
    every student would have in every track (``percent_<track>``, ``letter_<track>``).

    Args:
        roster: ``student, name, login, email, section, track``.
        items: the catalogue.
        events: resolved events (see :func:`resolve_events`); unresolved ones are ignored
            here and reported by ``check``.
        extensions: extension rows.
        policy: the policy.
        as_of: items due after this do not count (``None``: all count).

    Returns:
        ``(result, grades)``: the own-track result and the per-student grade table.
    """
    resolved = events[events["student"].notna()]
    current = current_scores(resolved)
    own = build_track(roster=roster, items=items, current=current, extensions=extensions,
                      policy=policy, as_of=as_of)
    grades = roster[["student", "name", "login", "section", "track"]].merge(
        own.grades.drop(columns="track"), on="student", how="left"
    )
    for track in sorted(policy.weights):
        alt = build_track(roster=roster.assign(track=track), items=items, current=current,
                          extensions=extensions, policy=policy, as_of=as_of).grades
        grades = grades.merge(
            alt[["student", "percent", "letter"]].rename(
                columns={"percent": f"percent_{track}", "letter": f"letter_{track}"}
            ), on="student", how="left",
        )
    return own, grades


def default_as_of(
    items: pd.DataFrame, events: pd.DataFrame, roster_size: int
) -> pd.Timestamp:
    """The cut-off when none is given: the latest due time among *graded* items.

    An item is graded once at least half of the roster has a score for it (overrides aside),
    so a few early submissions to a module not yet due do not make it count as zeros for
    everyone else, and modules not graded yet do not count. With no graded item, the earliest
    due time minus one minute (nothing counts).

    Args:
        items: the catalogue.
        events: resolved events.
        roster_size: students on the roster.

    Returns:
        The cut-off (UTC).
    """
    scored = events[events["student"].notna() & ~events["kind"].isin(["override", PENDING])]
    counts = scored.groupby("item")["student"].nunique()
    graded = set(counts[2 * counts >= max(roster_size, 1)].index)
    dues = items.loc[items["item"].isin(graded), "due"]
    if len(dues) == 0:
        return items["due"].min() - pd.Timedelta(minutes=1)
    return dues.max()


def details_of(text: object) -> dict[str, Any]:
    """Parse an event's JSON ``details`` (empty dict when none)."""
    if text is None or (isinstance(text, float) and math.isnan(text)) or text == "":
        return {}
    return dict(json.loads(str(text)))
