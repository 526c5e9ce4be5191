"""Module 07: the suite is worth its points, the solution scores 100%, the stub 0, bugs lose."""

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
from tito import paths

MODULE = "07_training"
SLUG = "training"
SUITE = load_suite(MODULE)
BUGGY = sorted((Path(__file__).parent / "fixtures" / "buggy" / MODULE).glob("*.py"))
STUB = paths.RELEASE / "tinytorch" / f"{SLUG}.py"


def _namespace(package) -> dict:
    """Names a public test may ask for: the notebook's imports and the module's globals."""
    import importlib

    ns: dict = {}
    for name in ("tensor", "optimizers", "training"):
        ns.update(vars(importlib.import_module(f"{package.__name__}.{name}")))
    return ns


def test_suite_points_match_course(course):
    assert SUITE.total_points == course.module("07").points


def test_reference_scores_full_marks():
    results = score_variant(SUITE, tinytorch_ref)
    failed = [(r.case.name, r.message) for r in results if not r.passed]
    assert failed == []


def test_untouched_release_scores_zero():
    results = score_variant(SUITE, load_variant({SLUG: STUB}))
    assert total(results) == 0, [r.case.name for r in results if r.passed]
    assert all("module 07: implement" in r.message for r in results), [
        r.message for r in results if "module 07: implement" not in r.message]


@pytest.mark.parametrize("fixture", BUGGY, ids=lambda p: p.stem)
def test_buggy_variant_loses_points(fixture):
    results = score_variant(SUITE, load_variant({SLUG: fixture}))
    assert total(results) < SUITE.total_points, f"{fixture.stem} survived the hidden suite"


def test_there_are_at_least_five_buggy_variants():
    assert len(BUGGY) >= 5


def test_buggy_fixtures_are_up_to_date():
    """Each fixture is the current reference with its one bug (regenerate with the script)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "make_buggy", Path(__file__).parent / "fixtures" / "buggy" / "make_buggy_05_07.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    source = (paths.REFERENCE / f"{SLUG}.py").read_text(encoding="utf-8")
    bugs = mod.BUGS[(MODULE, SLUG)]
    assert sorted(bugs) == [p.stem for p in BUGGY]
    for bug, edits in bugs.items():
        text = source
        for old, new in edits:
            text = text.replace(old, new)
        fixture = Path(__file__).parent / "fixtures" / "buggy" / MODULE / f"{bug}.py"
        assert fixture.read_text(encoding="utf-8").split("\n", 1)[1] == text, (
            f"{bug} is stale: run tests/fixtures/buggy/make_buggy_05_07.py")


PUBLIC = public_tests(MODULE)


def test_release_has_public_tests():
    assert len(PUBLIC) >= 4


@pytest.mark.parametrize("name,fn", PUBLIC, ids=lambda x: x if isinstance(x, str) else "")
def test_public_test_passes_on_reference(name, fn):
    call_with_globals(fn, _namespace(tinytorch_ref))


def test_public_tests_fail_on_the_stub():
    stub = load_variant({SLUG: STUB})
    failures = 0
    for _name, fn in PUBLIC:
        try:
            call_with_globals(fn, _namespace(stub))
        except (AssertionError, NotImplementedError):
            failures += 1
    assert failures == len(PUBLIC)


def test_trainer_trains_an_nn_mlp_on_xor_and_checkpoints_it(tmp_path):
    """Integration with modules 03-04: nn.Linear + CrossEntropyLoss + Adam + StepLR + clipping."""
    import numpy as np

    from tinytorch_ref import manual_seed, nn, optim
    from tinytorch_ref.training import Trainer, load_checkpoint, save_checkpoint

    manual_seed(0)
    x = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype=np.float32)
    y = np.array([0, 1, 1, 0])
    model = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 2))
    opt = optim.Adam(model.parameters(), lr=0.05)
    trainer = Trainer(model, nn.CrossEntropyLoss(), opt,
                      scheduler=optim.lr_scheduler.StepLR(opt, step_size=100, gamma=0.5),
                      max_grad_norm=5.0)
    trainer.fit(x, y, epochs=200, batch_size=4)
    assert trainer.evaluate(x, y)["accuracy"] == 1.0
    path = save_checkpoint(tmp_path / "xor.npz", model, opt, epoch=200)
    clone = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 2))
    opt2 = optim.Adam(clone.parameters(), lr=1.0)
    assert load_checkpoint(path, clone, opt2) == 200
    assert Trainer(clone, nn.CrossEntropyLoss(), opt2).evaluate(x, y)["accuracy"] == 1.0
    assert opt2.param_groups[0]["lr"] == opt.param_groups[0]["lr"]
    assert nn.utils.clip_grad_norm_ is not None
