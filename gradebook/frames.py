"""The I/O edge: read the store and the course into typed DataFrames for the policy."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from gradebook import policy as pol
from gradebook.items import Policy, catalogue, policy_from_course
from gradebook.store import Store

if TYPE_CHECKING:
    from coursekit.course import Course


@dataclass
class Frames:
    """Everything the policy and the reports read.

    Attributes:
        course: the loaded course.
        items: the item catalogue.
        policy: the grading numbers.
        roster: the current roster.
        events: every score event, with ``student``/``problem`` from the roster.
        extensions: extension rows (``due`` as UTC Timestamps).
        tests: per-test results.
    """

    course: Course
    items: pd.DataFrame
    policy: Policy
    roster: pd.DataFrame
    events: pd.DataFrame
    extensions: pd.DataFrame
    tests: pd.DataFrame
    roster_source: str | None


def load(store: Store, course: Course) -> Frames:
    """Read the store into frames (times parsed to UTC, scores as floats)."""
    events = store.events()
    events["submitted_at"] = pd.to_datetime(events["submitted_at"], utc=True, format="ISO8601")
    for col in ("score", "max_score"):
        events[col] = pd.to_numeric(events[col]).astype("float64")
    roster = store.roster()
    events = pol.resolve_events(events, roster)
    ext = store.extensions()
    ext["due"] = pd.to_datetime(ext["due"], utc=True, format="ISO8601")
    ext["hours"] = pd.to_numeric(ext["hours"]).astype("float64")
    return Frames(
        course=course, items=catalogue(course), policy=policy_from_course(course),
        roster=roster, events=events, extensions=ext, tests=store.tests(),
        roster_source=store.roster_source(),
    )


@dataclass
class Built:
    """A built gradebook plus the frames it came from."""

    frames: Frames
    result: pol.Result
    grades: pd.DataFrame
    as_of: pd.Timestamp | None


def parse_as_of(text: str | None, frames: Frames) -> pd.Timestamp | None:
    """``None`` -> the default cut-off; ``final`` -> every item; else a course-local time."""
    from gradebook.inputs import parse_local_time

    if text is None or text == "":
        return pol.default_as_of(frames.items, frames.events, len(frames.roster))
    if text.lower() in ("final", "all", "end"):
        return None
    return parse_local_time(text, frames.course.tz, "--as-of")


def build(store: Store, course: Course, as_of: str | None = None) -> Built:
    """Load and build the whole gradebook."""
    frames = load(store, course)
    if frames.roster.empty:
        from gradebook.errors import GradebookError

        raise GradebookError(
            f"{store.path}: no roster yet; import one with 'tito gradebook roster ROSTER.csv'"
        )
    cut = parse_as_of(as_of, frames)
    result, grades = pol.build(
        roster=frames.roster, items=frames.items, events=frames.events,
        extensions=frames.extensions, policy=frames.policy, as_of=cut,
    )
    return Built(frames, result, grades, cut)
