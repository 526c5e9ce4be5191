"""Each policy step on a tiny hand-built frame with a hand-computed answer."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradebook import policy as pol
from gradebook.items import LateRules, Policy

UTC = "UTC"
RULES = LateRules(grace_minutes=15, per_day=0.1, cap=0.5, tokens=3, token_hours=24)
DAY = 1440


def ts(text: str) -> pd.Timestamp:
    return pd.Timestamp(text, tz=UTC)


def tiny_policy(**over) -> Policy:
    base = dict(
        late=RULES,
        drop_lowest={"modules": 1, "written": 0, "milestones": 0},
        weights={"full": {"modules": 0.5, "written": 0.25, "milestones": 0.25},
                 "short": {"modules": 1.0}},
        track_modules={"full": (1, 2, 3), "short": (1, 2)},
        credits={"full": 4, "short": 2},
        letters={"A": 90, "B": 80, "C": 70, "F": 0},
    )
    base.update(over)
    return Policy(**base)


# ----------------------------------------------------------------- late fraction
@pytest.mark.parametrize(
    ("minutes", "tokens", "expected"),
    [
        (0, 0, 0.0),            # on time
        (15, 0, 0.0),           # inside the 15-minute grace
        (16, 0, 0.1),           # one started day
        (DAY, 0, 0.1),          # exactly one day
        (DAY + 1, 0, 0.2),      # two started days
        (4 * DAY + 1, 0, 0.5),  # five started days: 0.5 = cap
        (20 * DAY, 0, 0.5),     # capped
        (DAY + 1, 1, 0.0),      # a token forgives 24 h: 1 minute left -> within grace
        (DAY + 16, 1, 0.1),     # 16 minutes left after one token -> one started day
        (53 * 60, 2, 0.1),      # 53 h - 48 h = 5 h -> one day
        (53 * 60, 3, 0.0),      # cleared
    ],
)
def test_late_fraction_counts_started_days_after_grace_and_tokens(minutes, tokens, expected):
    assert pol.late_fraction(minutes, RULES, tokens) == pytest.approx(expected)


@pytest.mark.parametrize(("minutes", "need"), [(0, 0), (15, 0), (16, 1), (DAY + 15, 1),
                                               (DAY + 16, 2), (53 * 60, 3)])
def test_tokens_to_clear(minutes, need):
    assert pol.tokens_to_clear(minutes, RULES) == need


@settings(derandomize=True, max_examples=200)
@given(st.floats(0, 30 * DAY), st.floats(0, 30 * DAY), st.integers(0, 5))
def test_late_fraction_is_monotone_and_capped(a, b, k):
    lo, hi = sorted((a, b))
    assert 0.0 <= pol.late_fraction(lo, RULES, k) <= pol.late_fraction(hi, RULES, k) <= 0.5
    assert pol.late_fraction(hi, RULES, k + 1) <= pol.late_fraction(hi, RULES, k)


# ------------------------------------------------------------------ tokens
def units(rows):
    return pd.DataFrame(rows, columns=["student", "module", "minutes_late", "value"])


def test_tokens_go_where_they_save_most_points():
    # s1: module 2 is 30 min late (value 54), module 5 is 53 h late (value 57).
    #   3 tokens on 5 save 0.3*57 = 17.1; 2 on 5 + 1 on 2 save 0.2*57 + 0.1*54 = 16.8.
    u = units([("s1", 2, 30, 54.0), ("s1", 5, 53 * 60, 57.0)])
    out = pol.allocate_tokens(u, RULES)
    assert list(out["tokens"]) == [0, 3]


def test_tokens_not_spent_where_they_save_nothing():
    # 8 days late: even 3 tokens leave 5 days = the 50 % cap, so nothing is saved.
    u = units([("s1", 7, 8 * DAY, 75.0), ("s1", 3, 0, 50.0)])
    assert list(pol.allocate_tokens(u, RULES)["tokens"]) == [0, 0]


def test_token_ties_go_to_the_earlier_module_and_fewest_tokens():
    # Two equal late units (1 day, value 50): one token each saves 5 points; with 3 tokens
    # both are cleared and the third token is kept. With 1 token the earlier module wins.
    u = units([("s1", 4, 600, 50.0), ("s1", 2, 600, 50.0)])
    assert list(pol.allocate_tokens(u, RULES)["tokens"]) == [1, 1]
    one = LateRules(15, 0.1, 0.5, tokens=1, token_hours=24)
    out = pol.allocate_tokens(u, one)
    assert list(zip(out["module"], out["tokens"], strict=True)) == [(2, 1), (4, 0)]


def test_tokens_are_per_student():
    u = units([("a", 1, 600, 10.0), ("b", 1, 600, 10.0)])
    assert list(pol.allocate_tokens(u, LateRules(15, 0.1, 0.5, 1, 24))["tokens"]) == [1, 1]


@settings(derandomize=True, max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 7 * DAY), st.floats(0, 60)), min_size=1, max_size=4))
def test_token_allocation_is_optimal_by_brute_force(spec):
    u = units([("s", i + 1, m, v) for i, (m, v) in enumerate(spec)])
    out = pol.allocate_tokens(u, RULES)
    assert out["tokens"].sum() <= RULES.tokens

    def saved(alloc):
        return sum(v * (pol.late_fraction(m, RULES) - pol.late_fraction(m, RULES, k))
                   for (m, v), k in zip(spec, alloc, strict=True))

    best = max(saved(a) for a in itertools.product(range(RULES.tokens + 1), repeat=len(spec))
               if sum(a) <= RULES.tokens)
    assert saved(list(out["tokens"])) == pytest.approx(best, abs=1e-6)


# --------------------------------------------------------------- extensions
def test_effective_due_takes_the_most_generous_extension():
    due = ts("2027-02-01 04:59")
    frame = pd.DataFrame({"student": ["a", "a", "b", "c"], "module": [1, 2, 1, 1],
                          "due": [due] * 4})
    ext = pd.DataFrame([
        {"student": "a", "module": 0, "due": pd.NaT, "hours": 48.0, "reason": "accommodation"},
        {"student": "a", "module": 1, "due": ts("2027-02-02 04:59"), "hours": np.nan,
         "reason": "sick"},  # +24 h: less generous than +48 h on every module
        {"student": "b", "module": 1, "due": ts("2027-02-05 04:59"), "hours": np.nan,
         "reason": "sick"},
    ])
    out = pol.effective_due(frame, ext)
    assert list(out["due_effective"]) == [due + pd.Timedelta(hours=48)] * 2 + [
        ts("2027-02-05 04:59"), due]
    assert "every module" in out["extension"][0] and out["extension"][3] == ""


def test_lateness_is_clipped_and_missing_is_on_time():
    frame = pd.DataFrame({
        "submitted_at": [ts("2027-02-01 05:29"), ts("2027-01-30 00:00"), pd.NaT],
        "due_effective": [ts("2027-02-01 04:59")] * 3,
    })
    assert list(pol.lateness(frame)["minutes_late"]) == [30.0, 0.0, 0.0]


# ------------------------------------------------------- late, override, drop
def test_apply_late_and_overrides():
    frame = pd.DataFrame({"raw_points": [40.0, 40.0, 30.0], "minutes_late": [30.0, 30.0, 0.0],
                          "tokens": [0, 1, 0], "override": [np.nan, np.nan, 50.0]})
    out = pol.apply_overrides(pol.apply_late(frame, RULES))
    assert list(out["late_points"]) == pytest.approx([4.0, 0.0, 0.0])
    assert list(out["final"]) == pytest.approx([36.0, 40.0, 50.0])


def test_drops_lowest_percentage_ties_in_syllabus_order_and_keeps_one():
    frame = pd.DataFrame({
        "student": ["a"] * 4 + ["b"],
        "category": ["modules", "modules", "modules", "written", "modules"],
        "item": ["m1", "m2", "m3", "w1", "m1"],
        "final": [25.0, 25.0, 50.0, 0.0, 10.0],
        "points": [50.0, 50.0, 50.0, 15.0, 50.0],
        "order": [0, 1, 2, 3, 0],
    })
    out = pol.apply_drops(frame, {"modules": 1, "written": 1})
    # a: m1 and m2 tie at 50 %: m1 (earlier) is dropped; w1 is alone: kept. b: alone: kept.
    assert list(out["dropped"]) == [True, False, False, False, False]


def test_category_totals():
    frame = pd.DataFrame({
        "student": ["a"] * 3, "category": ["modules"] * 3, "item": ["m1", "m2", "m3"],
        "final": [25.0, 45.0, 50.0], "points": [50.0] * 3, "dropped": [True, False, False],
    })
    row = pol.category_totals(frame).iloc[0]
    assert (row["earned"], row["possible"], row["items"], row["dropped"]) == (95.0, 100.0, 2, 1)
    assert row["percent"] == pytest.approx(95.0)


def test_course_grade_renormalises_over_categories_with_items():
    cats = pd.DataFrame({"student": ["a", "a"], "category": ["modules", "written"],
                         "earned": [90.0, 12.0], "possible": [100.0, 15.0],
                         "percent": [90.0, 80.0], "items": [2, 1], "dropped": [0, 0]})
    out = pol.course_grades(cats, pd.DataFrame({"student": ["a"], "track": ["full"]}),
                            tiny_policy())
    # milestones (weight 0.25) has nothing counted: (0.5*90 + 0.25*80) / 0.75 = 86.667
    assert out.loc[0, "percent"] == pytest.approx(65.0 / 0.75)
    assert (out.loc[0, "letter"], out.loc[0, "credits"]) == ("B", 4)


@pytest.mark.parametrize(("pct", "letter"), [(100, "A"), (90, "A"), (89.999, "B"),
                                             (70, "C"), (0, "F")])
def test_letter_cutoffs_are_minimums_without_rounding_up(pct, letter):
    assert pol.letter_for(pct, tiny_policy().letters) == letter


# ---------------------------------------------------- current scores and grid
def events(rows):
    cols = ["event_id", "student", "item", "kind", "score", "max_score", "submitted_at",
            "submission_id", "source_path", "suite_version", "reason", "recorded_by"]
    frame = pd.DataFrame(rows, columns=cols)
    frame["submitted_at"] = pd.to_datetime(frame["submitted_at"], utc=True)
    return frame


def test_current_score_latest_submission_wins_and_overrides_sit_on_top():
    ev = events([
        (1, "a", "m1", "results_json", 30.0, 50.0, "2027-01-02", "1", "f1", "v1", None, "ta"),
        (2, "a", "m1", "results_json", 40.0, 50.0, "2027-01-01", "0", "f0", "v1", None, "ta"),
        (3, "a", "m1", "regrade", 35.0, 50.0, "2027-01-02", "1", "f2", "v2", None, "ta"),
        (4, "a", "m2", "results_json", 10.0, 50.0, "2027-01-02", "2", "f3", "v1", None, "ta"),
        (5, "a", "m2", "override", 50.0, 50.0, None, None, "cli", None, "crash", "prof"),
        (6, "a", "m3", "override", 20.0, 50.0, None, None, "cli", None, "x", "prof"),
        (7, "a", "m3", "override", None, None, None, None, "cli", None, "undo", "prof"),
    ])
    out = pol.current_scores(ev).set_index("item")
    # m1: event 2 is an older submission ingested later: it does not replace event 1; the
    # regrade (same submission) does.
    assert out.at["m1", "score"] == 35.0 and out.at["m1", "event_kind"] == "regrade"
    assert out.at["m2", "score"] == 10.0 and out.at["m2", "override"] == 50.0
    assert np.isnan(out.at["m3", "override"]) and np.isnan(out.at["m3", "score"])


def test_counted_items_follow_track_and_cut_off():
    items = pd.DataFrame({
        "item": ["m1", "m2", "m3"], "kind": ["autograded"] * 3, "module": [1, 2, 3],
        "category": ["modules"] * 3, "points": [50.0] * 3,
        "due": [ts("2027-01-10"), ts("2027-01-20"), ts("2027-01-30")], "order": [0, 1, 2],
        "title": ["m1", "m2", "m3"],
    })
    roster = pd.DataFrame({"student": ["a", "b"], "track": ["full", "short"]})
    grid = pol.counted_items(roster, items, tiny_policy(), ts("2027-01-25"))
    assert sorted(zip(grid["student"], grid["item"], strict=True)) == [("a", "m1"), ("a", "m2"),
                                                          ("b", "m1"), ("b", "m2")]
    grid = pol.counted_items(roster, items, tiny_policy(), None)
    assert sorted(zip(grid["student"], grid["item"], strict=True))[-1] == ("b", "m2")
    assert len(grid) == 5


def test_score_rows_scale_to_item_points_and_written_inherits_submission_time():
    grid = pd.DataFrame({"student": ["a", "a", "a"], "item": ["m1", "m1:w", "m2"],
                         "kind": ["autograded", "written", "autograded"], "module": [1, 1, 2],
                         "points": [50.0, 15.0, 50.0]})
    current = pd.DataFrame({
        "student": ["a", "a"], "item": ["m1", "m1:w"], "score": [30.0, 10.0],
        "max_score": [60.0, 15.0],
        "submitted_at": pd.to_datetime(["2027-01-02", None], utc=True),
        "override": [np.nan, np.nan],
    })
    out = pol.score_rows(grid, current)
    assert list(out["raw_points"]) == [25.0, 10.0, 0.0]
    assert list(out["missing"]) == [False, False, True]
    assert out.loc[1, "submitted_at"] == ts("2027-01-02")


def test_resolve_events_by_sid_login_or_email_and_flags_conflicts():
    roster = pd.DataFrame({"student": ["S1", "S2"], "login": ["ada", "alan"],
                           "email": ["", "turing@uni.edu"]})
    ev = pd.DataFrame({"sid": [None, "S1", None, "S1", None],
                       "login": [None, None, "ALAN", None, None],
                       "email": ["ada@x.edu", None, None, "turing@uni.edu", "nobody@x.edu"]})
    out = pol.resolve_events(ev, roster)
    assert list(out["student"][:3]) == ["S1", "S1", "S2"]
    assert out["student"][3] is None and "different students" in out["problem"][3]
    assert out["student"][4] is None and "not on the roster" in out["problem"][4]


def test_docstring_examples():
    import doctest

    assert doctest.testmod(pol, raise_on_error=False).failed == 0


def test_default_cut_off_is_the_latest_item_graded_for_half_the_class():
    items = pd.DataFrame({"item": ["m1", "m2", "m3"], "due": [ts("2027-01-10"),
                                                             ts("2027-01-20"),
                                                             ts("2027-01-30")]})
    ev = pd.DataFrame({"student": ["a", "b", "a", "b", "a", None, "c"],
                       "item": ["m1", "m1", "m2", "m2", "m3", "m3", "m3"],
                       "kind": ["results_json"] * 6 + ["override"]})
    # 4 students: m1 and m2 have 2 of 4 (half) -> graded; m3 has 1 (one early submission;
    # unresolved and override events do not count) -> not yet.
    assert pol.default_as_of(items, ev, 4) == ts("2027-01-20")
    assert pol.default_as_of(items, ev, 5) == ts("2027-01-10") - pd.Timedelta(minutes=1)
