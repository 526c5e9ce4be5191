"""Module 01: the suite is worth its points, the solution scores 100%, the stub 0, bugs lose."""

from __future__ import annotations

from pathlib import Path

import pytest

import tinytorch_ref
import tinytorch_ref.tensor as ref_tensor
from suite_tools import (call_with_globals, load_suite, load_variant, public_tests,
                         score_variant, total)
from tito import paths

SUITE = load_suite("01_tensor")
BUGGY = sorted((Path(__file__).parent / "fixtures" / "buggy" / "01_tensor").glob("*.py"))
STUB = paths.RELEASE / "tinytorch" / "tensor.py"


def test_suite_points_match_course(course):
    assert SUITE.total_points == course.module("01").points


def test_reference_scores_full_marks():
    results = score_variant(SUITE, tinytorch_ref)
    failed = [(r.case.name, r.message) for r in results if not r.passed]
    assert failed == []


def test_untouched_release_scores_zero():
    results = score_variant(SUITE, load_variant({"tensor": STUB}))
    assert total(results) == 0, [r.case.name for r in results if r.passed]
    assert all("module 01: implement" in r.message for r in results)


@pytest.mark.parametrize("fixture", BUGGY, ids=lambda p: p.stem)
def test_buggy_variant_loses_points(fixture):
    results = score_variant(SUITE, load_variant({"tensor": fixture}))
    assert total(results) < SUITE.total_points, f"{fixture.stem} survived the hidden suite"


def test_there_are_at_least_five_buggy_variants():
    assert len(BUGGY) >= 5


@pytest.mark.parametrize("name,fn", public_tests("01_tensor"), ids=lambda x: x
                         if isinstance(x, str) else "")
def test_public_test_passes_on_reference(name, fn):
    call_with_globals(fn, vars(ref_tensor))


def test_public_tests_fail_on_the_stub():
    stub = load_variant({"tensor": STUB})
    failures = 0
    for _name, fn in public_tests("01_tensor"):
        try:
            call_with_globals(fn, vars(stub.tensor))
        except (AssertionError, NotImplementedError):
            failures += 1
    assert failures == len(public_tests("01_tensor"))


def test_imagenet_batch_costs_about_19_mb():
    import numpy as np

    batch = tinytorch_ref.Tensor(np.zeros((32, 3, 224, 224), dtype=np.float32))
    assert batch.memory_footprint() == 32 * 3 * 224 * 224 * 4
    assert round(batch.memory_footprint() / 1e6, 1) == 19.3
