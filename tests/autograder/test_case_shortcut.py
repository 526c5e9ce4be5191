"""A case's ``shortcut``: what the goldens keep of the reference's answer, computed without the
work the check never reads (the capstone's event optimises, reports and times a model of which
the goldens keep only the seed and the baseline). It runs in the reference's runs only, the
goldens build checks it against the whole case in one variant, and a wrong one stops the build.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from autograder.harness import wire
from autograder.harness.goldens import (
    GoldensError,
    _reference_run,
    compute_bank,
    kept_bank,
    load_suite,
)
from autograder.harness.variants import salt_from_reference
from autograder.suite import Suite, run_case
from coursekit import paths
from tests.autograder.conftest import FAST, REF

TOY = '''
import numpy as np
from autograder.suite import Suite

suite = Suite(module="01_mini", version="test.shortcut")


def _keep(value):
    return {"drawn": value["drawn"]}


def _shortcut(tt, rng):
    drawn = rng.standard_normal(3).astype(np.float32)
    return {"drawn": (drawn + {offset}).tolist()}


@suite.case(points=1, expected=_keep, shortcut=_shortcut, check=lambda got, exp: (True, ""))
def event(tt, rng):
    drawn = rng.standard_normal(3).astype(np.float32)
    work = tt.Vec(rng.standard_normal(50)).sum()  # what the goldens do not keep
    return {"drawn": drawn.tolist(), "work": work}


@suite.case(points=1)
def plain(tt, rng):
    return tt.Vec(rng.standard_normal(4)).sum()
'''


def _toy(tmp_path: Path, offset: str) -> Path:
    path = tmp_path / f"suite_{len(list(tmp_path.iterdir()))}.py"
    path.write_text(TOY.replace("{offset}", offset), encoding="utf-8")
    return path


def _common(path: Path) -> dict:
    return dict(suite_path=path, suite=load_suite(path), reference=REF, slug="mini", number=1,
                all_modules=((1, "mini"), (2, "later")), limits=FAST)


def test_a_shortcut_needs_the_keeper_whose_value_it_computes():
    suite = Suite(module="01_x", version="1")
    with pytest.raises(ValueError, match="shortcut but no expected= keeper"):
        suite.case(points=1, shortcut=lambda tt, rng: 0)(lambda tt, rng: 0)


def test_run_case_takes_the_shortcut_only_when_asked():
    suite = Suite(module="01_x", version="1")
    suite.case(points=1, name="c", expected=lambda v: v["k"],
               shortcut=lambda tt, rng: "short")(lambda tt, rng: {"k": "whole"})
    case = suite.get("c")
    assert run_case(case, None, 1) == {"k": "whole"}
    assert run_case(case, None, 1, shortcut=True) == "short"


def test_reference_runs_take_the_shortcut_and_whole_runs_do_not(tmp_path):
    path = _toy(tmp_path, "1.0")  # a shortcut that differs from the case: which one ran shows
    common = _common(path)
    seed = common["suite"].cases[0].seed(0, "salt")
    items = {"case:event@0": ("event", seed), "case:plain@0": ("plain", seed)}
    kept = _reference_run(**common, items=items)
    whole = _reference_run(**common, items=items, whole=True)
    drawn = np.asarray(whole["case:event@0"].value["drawn"], dtype=np.float32)
    assert set(whole["case:event@0"].value) == {"drawn", "work"}
    assert kept["case:event@0"].value == {"drawn": (drawn + 1.0).tolist()}
    assert kept["case:plain@0"].value == whole["case:plain@0"].value


def test_a_bank_with_a_right_shortcut_is_the_bank_of_the_whole_cases(tmp_path):
    common = _common(_toy(tmp_path, "0.0"))
    salt = salt_from_reference(REF / "mini.py")
    for jobs in (1, 2):
        short = compute_bank(**common, variants=4, salt=salt, jobs=jobs)
        whole = kept_bank(compute_bank(**common, variants=4, salt=salt, whole=True),
                          common["suite"])
        assert short.cases == whole.cases
        assert set(wire.decode(short.cases["event"][1])) == {"drawn"}


def test_a_wrong_shortcut_stops_the_build_naming_its_case(tmp_path):
    common = _common(_toy(tmp_path, "1e-3"))
    with pytest.raises(GoldensError, match="case 'event': its shortcut does not give"):
        compute_bank(**common, variants=3, salt="s", jobs=2)


@pytest.mark.parametrize("name", ["olympics_event", "tinygpt_event"])
def test_the_capstone_event_shortcuts_are_what_the_goldens_keep_of_the_whole_events(name):
    import tinytorch_ref

    suite = load_suite(paths.SUITES / "20_capstone" / "suite.py")
    event = suite.get(name)
    assert event.shortcut is not None
    for seed in (3, 4):
        whole = event.kept(run_case(event, tinytorch_ref, seed))
        short = run_case(event, tinytorch_ref, seed, shortcut=True)
        assert wire.dumps(short) == wire.dumps(whole)
