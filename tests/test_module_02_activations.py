"""Module 02: the suite is worth its points, the solution scores 100%, the stub 0, bugs lose."""

from __future__ import annotations

from pathlib import Path

import pytest
from suite_tools import (
    call_with_globals,
    load_suite,
    load_variant,
    public_tests,
    score_variant,
    total,
)

import tinytorch_ref
import tinytorch_ref.activations as ref_module
from tito import paths

MODULE = "02_activations"
SLUG = "activations"
SUITE = load_suite(MODULE)
BUGGY = sorted((Path(__file__).parent / "fixtures" / "buggy" / MODULE).glob("*.py"))
STUB = paths.RELEASE / "tinytorch" / f"{SLUG}.py"


def test_suite_points_match_course(course):
    assert SUITE.total_points == course.module("02").points


def test_every_case_has_a_hint_and_positive_points():
    assert all(c.hint and c.points > 0 for c in SUITE.cases)


def test_reference_scores_full_marks():
    results = score_variant(SUITE, tinytorch_ref)
    failed = [(r.case.name, r.message) for r in results if not r.passed]
    assert failed == []


def test_untouched_release_scores_zero():
    results = score_variant(SUITE, load_variant({SLUG: STUB}))
    assert total(results) == 0, [r.case.name for r in results if r.passed]
    assert all("module 02: implement" in r.message for r in results), [
        (r.case.name, r.message) for r in results if "module 02: implement" not in r.message]


@pytest.mark.parametrize("fixture", BUGGY, ids=lambda p: p.stem)
def test_buggy_variant_loses_points(fixture):
    results = score_variant(SUITE, load_variant({SLUG: fixture}))
    assert total(results) < SUITE.total_points, f"{fixture.stem} survived the hidden suite"


def test_there_are_at_least_five_buggy_variants():
    assert len(BUGGY) >= 5


@pytest.mark.parametrize("name,fn", public_tests(MODULE), ids=lambda x: x
                         if isinstance(x, str) else "")
def test_public_test_passes_on_reference(name, fn):
    call_with_globals(fn, vars(ref_module))


def test_public_tests_fail_on_the_stub():
    stub = load_variant({SLUG: STUB})
    failures = 0
    for _name, fn in public_tests(MODULE):
        try:
            call_with_globals(fn, vars(getattr(stub, SLUG)))
        except (AssertionError, NotImplementedError):
            failures += 1
    assert failures == len(public_tests(MODULE))
