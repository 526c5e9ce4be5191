"""The Gradescope leaderboard: a suite names the case whose decoded result the trusted parent
turns into results.json's ``leaderboard`` (module 20's Olympics event); malformed entries are
dropped and a missing result publishes nothing."""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

from autograder.harness.core import _decider, _leaderboard
from autograder.suite import Suite


def _run(entries_of: Any, value: Any, status: str = "result"
         ) -> tuple[list[dict[str, Any]], list[str]]:
    """The child's ``value`` for case ``event`` as the parent handles it: decided on arrival
    (the entries computed then, the data dropped), then turned into the leaderboard."""
    suite = Suite(module="20_capstone", version="t")
    suite.case(1, name="event", check=lambda got, exp: (True, ""))(lambda tt, rng: None)
    suite.leaderboard = ("event", entries_of)
    decide = _decider(suite, SimpleNamespace(values={"event": None}), [])  # type: ignore[arg-type]
    outcomes = {}
    if status != "missing":
        verdict = decide("case:event", value) if status == "result" else None
        outcomes["case:event"] = SimpleNamespace(status=status, value=verdict)
    ctx = SimpleNamespace(grader_errors=[])
    report = SimpleNamespace(outcomes=outcomes)
    return _leaderboard(ctx, suite, report), ctx.grader_errors  # type: ignore[arg-type]


def test_entries_come_from_the_named_case_result() -> None:
    got, errors = _run(lambda v: [{"name": "Score", "value": v["x"] * 2, "order": "desc"}],
                       {"x": 1.5})
    assert got == [{"name": "Score", "value": 3.0, "order": "desc"}] and errors == []


def test_malformed_entries_are_dropped_and_noted() -> None:
    bad = [{"name": "ok", "value": 1, "order": "asc"}, {"name": "nan", "value": math.nan,
                                                       "order": "asc"},
           {"name": "flag", "value": True, "order": "asc"}, {"name": "o", "value": 1,
                                                             "order": "up"}, "text"]
    got, errors = _run(lambda v: bad, None)
    assert got == [{"name": "ok", "value": 1.0, "order": "asc"}]
    assert errors == ["leaderboard: malformed entries dropped"]


def test_no_result_or_a_failing_scorer_publishes_nothing() -> None:
    assert _run(lambda v: [], None, "missing") == ([], [])
    assert _run(lambda v: [], None, "timeout") == ([], [])

    def boom(v: Any) -> list[dict[str, Any]]:
        raise ValueError("no arrays")

    got, errors = _run(boom, {})
    assert got == [] and errors == ["leaderboard: ValueError: no arrays"]
