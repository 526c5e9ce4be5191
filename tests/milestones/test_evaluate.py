"""evaluate(): the parent's k-of-n verdict on hand-made prediction arrays."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from autograder.milestones import evaluate
from autograder.milestones.grading import UNTRAINED, moot_seeds
from coursekit.course import Milestone

LABELS = np.array([0, 1, 2, 3] * 25, dtype=np.int64)  # 100 labels


def ms(**over: Any) -> Milestone:
    base = dict(id="mlp_1986", year=1986, title="t", requires=[1], graded_with=7,
                dataset="digits_8x8", metric="accuracy", threshold=0.95, seeds=[0, 1, 2],
                min_passing_seeds=2, time_budget_s=60, points=10,
                training={"epochs": 30, "batch_size": 32})
    base.update(over)
    return Milestone.model_validate(base)


def with_errors(k: int) -> np.ndarray:
    """Predictions with exactly ``k`` wrong answers out of 100."""
    pred = LABELS.copy()
    pred[:k] = (pred[:k] + 1) % 4
    return pred


def test_all_seeds_pass_scores_full_points_and_records_seeds() -> None:
    r = evaluate(ms(), {0: LABELS, 1: LABELS, 2: LABELS}, LABELS)
    assert r["passed"] and r["score"] == 10.0 and r["max_score"] == 10.0
    assert r["per_seed"] == {0: 1.0, 1: 1.0, 2: 1.0} and r["seeds"] == [0, 1, 2]
    assert r["passing_seeds"] == [0, 1, 2]


def test_exactly_k_passing_seeds_pass() -> None:
    r = evaluate(ms(), {0: with_errors(5), 1: with_errors(6), 2: with_errors(0)}, LABELS)
    assert r["passed"] and r["score"] == 10 and r["passing_seeds"] == [0, 2]
    assert r["per_seed"][1] == pytest.approx(0.94)


def test_k_minus_one_passing_seeds_score_zero() -> None:
    r = evaluate(ms(), {0: with_errors(6), 1: with_errors(6), 2: LABELS}, LABELS)
    assert not r["passed"] and r["score"] == 0.0
    assert "1 of 3 seeds" in r["message"] and "needed 2" in r["message"]


def test_a_crashed_or_timed_out_seed_is_none_and_counts_as_failing() -> None:
    r = evaluate(ms(), {0: None, 1: LABELS, 2: LABELS}, LABELS)
    assert r["passed"] and r["per_seed"][0] is None
    assert "seed 0: no predictions" in r["message"]
    r = evaluate(ms(), {0: None, 1: None, 2: LABELS}, LABELS)
    assert not r["passed"] and r["score"] == 0


def test_missing_seeds_count_as_none_and_foreign_seeds_are_ignored() -> None:
    r = evaluate(ms(), {1: LABELS, 7: LABELS, 8: LABELS}, LABELS)
    assert not r["passed"] and r["per_seed"] == {0: None, 1: 1.0, 2: None}
    assert 7 not in r["per_seed"]


def test_json_string_seed_keys_are_accepted() -> None:
    r = evaluate(ms(), {"0": LABELS, "1": LABELS, "2": None}, LABELS)
    assert r["passed"] and r["per_seed"][2] is None


def test_all_seeds_required_when_k_equals_n() -> None:
    r = evaluate(ms(min_passing_seeds=3), {0: LABELS, 1: LABELS, 2: with_errors(6)}, LABELS)
    assert not r["passed"]


def test_constant_predictions_fail() -> None:
    const = np.zeros_like(LABELS)
    r = evaluate(ms(), {0: const, 1: const, 2: const}, LABELS)
    assert not r["passed"] and r["per_seed"][0] == pytest.approx(0.25)


@pytest.mark.parametrize("errors, passed", [(4, True), (5, False)])
def test_threshold_boundary_is_exact(errors: int, passed: bool) -> None:
    """396/400 meets 0.99; 395/400 does not (counts compared, not floats)."""
    labels = np.tile(LABELS, 4)
    pred = labels.copy()
    pred[:errors] = (pred[:errors] + 1) % 4
    r = evaluate(ms(threshold=0.99), {0: pred, 1: pred, 2: pred}, labels)
    assert r["passed"] is passed


def test_xor_threshold_one_needs_every_point() -> None:
    y = np.array([0, 1, 1, 0])
    three = np.array([0, 1, 1, 1])
    assert evaluate(ms(threshold=1.0), {0: y, 1: y, 2: three}, y)["passed"]
    assert not evaluate(ms(threshold=1.0), {0: three, 1: y, 2: three}, y)["passed"]


@pytest.mark.parametrize("bad, why", [
    (np.zeros(99, dtype=np.int64), "shape"),
    (np.full(100, 0.5), "whole class numbers"),
    (np.full(100, np.nan), "whole class numbers"),
    (np.array(["a"] * 100), "dtype"),
    ("0123", "str"),
    ({"a": 1}, "dict"),
])
def test_malformed_predictions_fail_that_seed_with_a_reason(bad: Any, why: str) -> None:
    r = evaluate(ms(), {0: bad, 1: LABELS, 2: LABELS}, LABELS)
    assert r["per_seed"][0] is None and why in r["message"]
    assert r["passed"], "the other two seeds still pass 2 of 3"


def test_integral_floats_and_lists_are_accepted() -> None:
    r = evaluate(ms(), {0: LABELS.astype(np.float32), 1: LABELS.tolist(), 2: None}, LABELS)
    assert r["per_seed"][0] == 1.0 and r["per_seed"][1] == 1.0 and r["passed"]


def test_course_yml_mapping_is_accepted(course: Any) -> None:
    entry = next(m for m in course.milestones if m.id == "mlp_1986").model_dump()
    seeds = entry["seeds"]
    r = evaluate(entry, dict.fromkeys(seeds, LABELS), LABELS)
    assert r["passed"] and r["score"] == entry["points"] and r["threshold"] == entry["threshold"]


def test_metric_not_scored_from_predictions_is_refused() -> None:
    with pytest.raises(ValueError, match="speedup"):
        evaluate(ms(metric="speedup"), {0: LABELS}, LABELS)


@pytest.mark.parametrize("seeds, need, passed, moot", [
    ([0, 1, 2], 2, {0: True, 1: True}, [2]),            # two passed: seed 2 cannot matter
    ([0, 1, 2], 2, {0: False, 1: False}, [2]),          # two failed: it cannot rescue
    ([0, 1, 2], 2, {0: True, 1: False}, []),            # one each: seed 2 decides
    ([0, 1, 2], 2, {0: False, 1: True}, []),
    ([0, 1, 2], 2, {0: True}, []),
    ([0, 1, 2], 2, {0: True, 2: True}, []),             # seed 1 not known: nothing is moot
    ([0, 1, 2], 2, {1: True, 2: True}, []),             # order is course.yml's, not arrival
    ([0, 1, 2], 2, {0: True, 1: True, 2: False}, [2]),  # ran anyway (lanes): still moot
    ([0, 1, 2], 3, {0: False}, [1, 2]),                 # 3 of 3: the first failure decides
    ([0, 1, 2], 1, {0: True}, [1, 2]),                  # 1 of 3: the first pass decides
    ([0, 1, 2], 1, {0: False, 1: False}, []),
    ([5], 1, {5: False}, []),                           # one slot: nothing after it
    ([0, 1, 2, 3, 4], 3, {0: False, 1: False, 2: False}, [3, 4]),
    ([0, 1, 2, 3, 4], 3, {0: True, 1: False, 2: True, 3: True}, [4]),
])
def test_moot_seeds_are_those_the_verdict_no_longer_depends_on(
        seeds: list[int], need: int, passed: dict[int, bool], moot: list[int]) -> None:
    """Hand-worked k-of-n cases; and for every one, scoring with the moot seeds left out
    gives the verdict of every assignment of results to them (the oracle: all of them)."""
    m = ms(seeds=seeds, min_passing_seeds=need)
    assert moot_seeds(m, passed) == moot
    known = {s: passed[s] for s in seeds if s in passed and s not in moot}
    for rest in itertools.product([True, False], repeat=len(moot)):
        full = {**known, **dict(zip(moot, rest, strict=True))}
        preds = {s: LABELS if full.get(s) else with_errors(50) for s in seeds if s in full}
        if len(full) < len(seeds) and not moot:
            continue  # undecided: not a claim about the unknown seeds
        left_out = evaluate(m, {s: preds[s] for s in known}, LABELS, untrained=moot)
        assert left_out["passed"] == evaluate(m, preds, LABELS)["passed"], (passed, rest)
        for s in moot:
            assert left_out["per_seed"][s] is None
            assert f"seed {s}: {UNTRAINED}" in left_out["message"]
