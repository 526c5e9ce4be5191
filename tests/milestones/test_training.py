"""Each milestone passes with the reference (k of n seeds) and fails with plausible bugs."""

from __future__ import annotations

import importlib.abc
import importlib.util
import statistics
import sys
import time
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from milestone_variants import variant

from autograder.milestones import (
    GRADED_MILESTONES,
    data_for,
    evaluate,
    item_timeout_s,
    make_probe,
    probe_entry,
    run_in_process,
    train_budget_s,
    trainer,
)

#: Per-seed training CPU seconds allowed for the reference (the clock the budgets use, so a
#: busy machine does not change the verdict; far below each milestone's training budget).
REFERENCE_SECONDS = {"perceptron_1957": 5.0, "xor_1969": 5.0, "mlp_1986": 20.0,
                     "cnn_1998": 5.0, "cnn_fashion_1998": 15.0}

#: Which plausible bug must fail which milestone (measured; a bug a milestone cannot see,
#: e.g. a dropped input gradient in a one-layer perceptron, is not listed for it).
MUST_FAIL = {
    "linear_ignores_bias": ["perceptron_1957"],
    "linear_outputs_constant": ["perceptron_1957", "xor_1969", "mlp_1986"],
    "matmul_drops_weight_grad": ["perceptron_1957", "xor_1969", "mlp_1986"],
    "matmul_drops_input_grad": ["xor_1969", "mlp_1986"],
    "sgd_never_updates": ["perceptron_1957"],
    "adam_never_updates": ["xor_1969", "mlp_1986", "cnn_1998"],
    # Module 09. Frozen random convolutions still reach ~0.84 on Fashion-MNIST (a linear model
    # on random features), so these two are checked on the digits only.
    "conv_weight_grad_zero": ["cnn_1998"],
    "max_pool_drops_gradient": ["cnn_1998"],
    "conv_weight_grad_sign_flipped": ["cnn_1998", "cnn_fashion_1998"],
}

#: Seeds a plausible bug trains on when the milestone is slow (one seed must fail then).
BUG_SEEDS: dict[str, list[int]] = {"cnn_fashion_1998": [0]}

_ref_results: dict[str, dict[str, Any]] = {}


def ref_result(ref: ModuleType, mid: str) -> dict[str, Any]:
    if mid not in _ref_results:
        _ref_results[mid] = run_in_process(ref, mid)
    return _ref_results[mid]


@pytest.mark.parametrize("mid", GRADED_MILESTONES)
def test_reference_passes_on_every_graded_seed(ref: ModuleType, mid: str, course: Any) -> None:
    r = ref_result(ref, mid)
    ms = next(m for m in course.milestones if m.id == mid)
    assert r["passed"], r["message"]
    assert r["score"] == ms.points and r["seeds"] == ms.seeds
    assert r["passing_seeds"] == ms.seeds, f"reference should pass every seed: {r['message']}"


@pytest.mark.parametrize("mid", GRADED_MILESTONES)
def test_reference_trains_fast_on_one_core(ref: ModuleType, mid: str) -> None:
    secs = ref_result(ref, mid)["seconds"]
    assert statistics.median(secs.values()) < REFERENCE_SECONDS[mid], secs


@pytest.mark.parametrize("bug, mid", [(b, m) for b, ms in MUST_FAIL.items() for m in ms])
def test_plausible_bug_fails_the_milestone(bug: str, mid: str) -> None:
    r = run_in_process(variant(bug), mid, seeds=BUG_SEEDS.get(mid))
    assert not r["passed"] and r["score"] == 0, f"{bug} should fail {mid}: {r['message']}"


def test_xor_single_layer_cannot_reach_full_accuracy(ref: ModuleType) -> None:
    x, y, _, _ = data_for("xor_1969")
    fit = trainer("xor_1969")
    best = []
    for seed in range(3):
        accs: list[float] = []
        fit(ref, seed, x, y, x, 30.0, on_epoch=lambda _e, _l, a, acc=accs: acc.append(a),
            hidden=0)
        best.append(max(accs))
    assert max(best) <= 0.75, best


def test_training_stops_at_the_budget_and_still_predicts(ref: ModuleType) -> None:
    train_x, train_y, test_x, _ = data_for("mlp_1986")
    epochs: list[int] = []
    t0 = time.process_time()
    pred = trainer("mlp_1986")(ref, 0, train_x, train_y, test_x, 0.0,
                               on_epoch=lambda e, _l, _a: epochs.append(e))
    assert epochs == [1], "a zero budget allows exactly one epoch"
    assert time.process_time() - t0 < 5, "one epoch, not the whole recipe (CPU seconds)"
    assert pred.shape == (len(test_x),) and pred.dtype == np.int64


@pytest.mark.parametrize("mid", GRADED_MILESTONES)
def test_budgets_come_from_course_yml(mid: str, course: Any) -> None:
    ms = next(m for m in course.milestones if m.id == mid)
    assert item_timeout_s(ms) == pytest.approx(ms.time_budget_s / len(ms.seeds))
    assert 0 < train_budget_s(ms) < item_timeout_s(ms)


def test_same_seed_gives_the_same_predictions(ref: ModuleType) -> None:
    train_x, train_y, test_x, _ = data_for("perceptron_1957")
    fit = trainer("perceptron_1957")
    a = fit(ref, 1, train_x, train_y, test_x, 10.0)
    b = fit(ref, 1, train_x, train_y, test_x, 10.0)
    assert np.array_equal(a, b)


class _BlockAutograder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        if fullname.split(".")[0] == "autograder":
            raise ImportError(f"blocked: {fullname}")
        return None


@pytest.mark.parametrize("mid", GRADED_MILESTONES)
def test_probe_file_works_as_the_sandboxed_child_runs_it(ref: ModuleType, mid: str,
                                                         course: Any) -> None:
    """Loaded by path, then autograder imports are blocked and its modules forgotten."""
    entry = probe_entry(mid)
    assert entry["id"] == mid
    spec = importlib.util.spec_from_file_location(f"milestone_{mid}", entry["file"])
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    saved = {k: v for k, v in sys.modules.items() if k.split(".")[0] == "autograder"}
    blocker = _BlockAutograder()
    sys.meta_path.insert(0, blocker)
    for k in saved:
        del sys.modules[k]
    try:
        pred = mod.probe(ref, 0)
    finally:
        sys.meta_path.remove(blocker)
        sys.modules.update(saved)
    *_, test_y = data_for(mid)
    assert isinstance(pred, np.ndarray) and pred.dtype == np.int64
    one_seed = next(m for m in course.milestones if m.id == mid).model_copy(
        update={"seeds": [0], "min_passing_seeds": 1})
    verdict = evaluate(one_seed, {0: pred}, test_y)
    assert verdict["passed"], verdict["message"]


def test_probe_never_holds_the_test_labels() -> None:
    probe = make_probe("mlp_1986")
    *_, test_y = data_for("mlp_1986")
    fit_cells = [c.cell_contents for c in probe.__closure__ or ()]
    arrays = [v for v in fit_cells if isinstance(v, np.ndarray)]
    assert len(arrays) == 3, "train_x, train_y, test_x"
    assert not any(a.shape == test_y.shape and np.array_equal(a, test_y) for a in arrays)


def test_unknown_milestone_is_a_clear_error() -> None:
    with pytest.raises(KeyError, match="nope"):
        trainer("nope")
    with pytest.raises(KeyError, match="nope"):
        probe_entry("nope")
