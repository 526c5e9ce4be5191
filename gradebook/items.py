"""Graded items and the grading policy, read from the course (course.yml) once.

A *graded item* is one column of the gradebook:

==========================  ============  =====================================================
item id                     kind          category and points
==========================  ============  =====================================================
``01_tensor``               autograded    the module's ``category``; ``points``
``01_tensor:written``       written       ``written``; the module's ``written_points``
``milestone:xor_1969``      milestone     ``milestones``; the milestone's ``points``
==========================  ============  =====================================================

Every item belongs to a *submission unit*: the module whose Gradescope submission carries it
(a milestone belongs to its ``graded_with`` module). Lateness, extensions and late tokens apply
to a unit, and so to all of its items. An item's due time is its unit's due time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pandas as pd

from gradebook.errors import GradebookError

AUTOGRADED = "autograded"
WRITTEN = "written"
MILESTONE = "milestone"
WRITTEN_CATEGORY = "written"
MILESTONE_CATEGORY = "milestones"

ITEM_COLUMNS = ["item", "kind", "module", "category", "points", "due", "order", "title"]


@dataclass(frozen=True)
class LateRules:
    """The late policy, as numbers.

    Attributes:
        grace_minutes: lateness up to this many minutes counts as on time.
        per_day: fraction of an item's score lost per started day late.
        cap: the largest fraction ever lost to lateness.
        tokens: late tokens per student, shared across modules.
        token_hours: hours of lateness one token forgives.
    """

    grace_minutes: float = 0.0
    per_day: float = 0.0
    cap: float = 1.0
    tokens: int = 0
    token_hours: float = 24.0


@dataclass(frozen=True)
class Policy:
    """Every grading number the policy functions need (from course.yml, never from code).

    Attributes:
        late: the late rules.
        drop_lowest: category id -> number of lowest items dropped.
        weights: track id -> {category id -> weight}.
        track_modules: track id -> module numbers in the track.
        credits: track id -> credit hours.
        letters: letter -> minimum percentage, highest first.
        default_track: the track of a roster row without one.
    """

    late: LateRules
    drop_lowest: dict[str, int]
    weights: dict[str, dict[str, float]]
    track_modules: dict[str, tuple[int, ...]]
    credits: dict[str, int]
    letters: dict[str, float]
    default_track: str = "full"
    category_titles: dict[str, str] = field(default_factory=dict)


def policy_from_course(course: object) -> Policy:
    """Read the grading policy from a loaded ``coursekit.course.Course``.

    Args:
        course: the course (typed schema from ``coursekit.course.load_course``).

    Returns:
        The policy numbers.
    """
    g = course.grading  # type: ignore[attr-defined]
    late = g.late
    tracks = course.tracks  # type: ignore[attr-defined]
    ids = [t.id for t in tracks]
    return Policy(
        late=LateRules(
            grace_minutes=float(late.grace_minutes),
            per_day=float(late.deduction_per_day),
            cap=float(late.max_deduction),
            tokens=int(late.tokens),
            token_hours=float(late.token_hours),
        ),
        drop_lowest={c.id: int(c.drop_lowest) for c in g.categories},
        weights={t.id: dict(t.weights) for t in tracks},
        track_modules={t.id: tuple(t.modules) for t in tracks},
        credits={t.id: int(t.credits) for t in tracks},
        letters=dict(g.letters),
        default_track=str(getattr(g, "default_track", "full" if "full" in ids else ids[-1])),
        category_titles={c.id: c.title for c in g.categories},
    )


def catalogue(course: object) -> pd.DataFrame:
    """All graded items of the course, in syllabus order.

    Args:
        course: the loaded course.

    Returns:
        One row per item with columns ``item, kind, module, category, points, due (UTC
        Timestamp), order, title``. Items with zero points (e.g. a module without written
        questions) are left out.
    """
    rows: list[dict[str, object]] = []
    due_of: dict[int, pd.Timestamp] = {}
    for m in course.modules:  # type: ignore[attr-defined]
        due = pd.Timestamp(course.local_time(m.due)).tz_convert("UTC")  # type: ignore[attr-defined]
        due_of[m.number] = due
        rows.append(
            {"item": m.name, "kind": AUTOGRADED, "module": m.number, "category": m.category,
             "points": float(m.points), "due": due, "title": f"{m.name} (autograded)"}
        )
        if m.written_points > 0:
            rows.append(
                {"item": f"{m.name}:written", "kind": WRITTEN, "module": m.number,
                 "category": WRITTEN_CATEGORY, "points": float(m.written_points), "due": due,
                 "title": f"{m.name} (written)"}
            )
    for ms in course.milestones:  # type: ignore[attr-defined]
        rows.append(
            {"item": f"milestone:{ms.id}", "kind": MILESTONE, "module": ms.graded_with,
             "category": MILESTONE_CATEGORY, "points": float(ms.points),
             "due": due_of[ms.graded_with], "title": f"{ms.title} · {ms.year}"}
        )
    frame = pd.DataFrame(rows)
    kind_rank = frame["kind"].map({AUTOGRADED: 0, WRITTEN: 1, MILESTONE: 2})
    frame = frame.assign(_k=kind_rank).sort_values(["module", "_k"], kind="stable")
    frame = frame.drop(columns="_k").reset_index(drop=True)
    frame["order"] = range(len(frame))
    frame["module"] = frame["module"].astype("int64")
    return frame[ITEM_COLUMNS]


def resolve_item(course: object, ref: str) -> str:
    """Turn a TA's item reference into an item id.

    Accepted: a module reference (``01``, ``1``, ``01_tensor``, ``tensor``) for the autograded
    item; the same followed by ``:written`` (or ``written:01``) for the written item;
    ``milestone:<id>`` or a bare milestone id.

    Args:
        course: the loaded course.
        ref: the reference.

    Returns:
        The item id, e.g. ``01_tensor:written``.

    Raises:
        GradebookError: nothing matches.
    """
    text = ref.strip()
    milestones = {ms.id for ms in course.milestones}  # type: ignore[attr-defined]
    if text.startswith("milestone:"):
        text = text.split(":", 1)[1]
    if text in milestones:
        return f"milestone:{text}"
    written = False
    match = re.fullmatch(r"(?:written:(.+))|(?:(.+):written)", text)
    if match:
        written = True
        text = match.group(1) or match.group(2)
    try:
        module = course.module(text)  # type: ignore[attr-defined]
    except ValueError as exc:
        raise GradebookError(
            f"unknown item {ref!r}: expected a module (01, 01_tensor, tensor), "
            f"MODULE:written, or a milestone ({', '.join(sorted(milestones))})"
        ) from exc
    return f"{module.name}:written" if written else module.name


def track_items(items: pd.DataFrame, policy: Policy, track: str) -> pd.DataFrame:
    """The items that count in a track.

    An item counts when its submission unit (module; a milestone's ``graded_with`` module) is
    in the track and its category has a positive weight in the track.

    Args:
        items: the catalogue.
        policy: the policy.
        track: track id.

    Returns:
        The subset of ``items``.
    """
    modules = set(policy.track_modules[track])
    weights = policy.weights[track]
    keep = items["module"].isin(modules) & items["category"].map(
        lambda c: weights.get(c, 0.0) > 0
    )
    return items[keep]
