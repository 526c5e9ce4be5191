"""The shared reference bank of ``tito regrade``: one reference run per module and process,
and for every variant exactly the expected values of that variant's own reference run.

The oracle is :func:`compute_expected` (a trusted reference run for one variant's seeds),
which ``tito grade`` uses; the bank must never be served for an edited reference, and a bank
whose run did not give every value is not kept.
"""

from __future__ import annotations

import json
import shutil
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

import pytest

from autograder.harness import goldens, package, wire
from autograder.harness.goldens import case_seeds, compute_expected, load_suite, shared_expected
from autograder.harness.supervisor import Outcome
from tests.autograder.conftest import FAST, REF, SUITE

ALL = ((1, "mini"), (2, "later"))
SALT = "test-salt"
COUNT = 8


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A fresh process's banks; records the number of items of every reference run."""
    seen: list[int] = []
    real = goldens._reference_run

    def counting(**kw: Any) -> dict[str, Any]:
        seen.append(len(kw["items"]))
        return real(**kw)

    monkeypatch.setattr(goldens, "_reference_run", counting)
    monkeypatch.setattr(goldens, "_SHARED", OrderedDict())
    return seen


def _shared(variant: int, reference: Path = REF) -> goldens.Expected:
    return shared_expected(suite_path=SUITE, suite=load_suite(SUITE), reference=reference,
                           slug="mini", number=1, all_modules=ALL, limits=FAST, salt=SALT,
                           count=COUNT, variant=variant)


def _alone(variant: int, reference: Path = REF) -> goldens.Expected:
    suite = load_suite(SUITE)
    return compute_expected(suite_path=SUITE, suite=suite, reference=reference, slug="mini",
                            number=1, all_modules=ALL, limits=FAST,
                            seeds=case_seeds(suite, variant, SALT))


def _encoded(exp: goldens.Expected) -> str:
    return json.dumps({k: wire.encode(v) for k, v in exp.values.items()}, sort_keys=True)


def test_each_variant_gets_its_own_reference_runs_values_from_one_run(runs: list[int]) -> None:
    cases = len(load_suite(SUITE).cases)
    seen = set()
    for v in (0, 5, COUNT - 1, 5):
        shared, alone = _shared(v), _alone(v)
        assert _encoded(shared) == _encoded(alone), f"variant {v}"
        assert (shared.errors, shared.seeds, shared.suite_sha256, shared.source) == (
            alone.errors, alone.seeds, alone.suite_sha256, alone.source)
        seen.add(_encoded(shared))
    assert len(seen) == 3, "the variants' values differ"
    # one run for the bank (every case of every variant); the others are the oracle's own
    assert runs == [COUNT * cases] + [cases] * 4


def test_an_edited_reference_is_never_served_from_the_old_bank(
        runs: list[int], tmp_path: Path) -> None:
    edited = tmp_path / "ref"
    shutil.copytree(REF, edited)
    mini = edited / "mini.py"
    mini.write_text(mini.read_text(encoding="utf-8").replace(
        "return float(self.data.sum())", "return float(self.data.sum()) + 1.0"),
        encoding="utf-8")
    before = _shared(3)
    after = _shared(3, edited)
    assert after.values["sum_value"] == pytest.approx(before.values["sum_value"] + 1.0)
    assert _encoded(after) == _encoded(_alone(3, edited))
    assert len(runs) == 3  # two banks, one oracle run


def test_a_bank_that_did_not_get_every_value_is_used_once_and_not_kept(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = goldens._reference_run

    def one_case_times_out(**kw: Any) -> dict[str, Any]:
        calls.append(1)
        out = real(**kw)
        item = "case:sum_value@2"
        out[item] = Outcome(item, "timeout", message="stopped after 2 s of CPU time")
        return out

    monkeypatch.setattr(goldens, "_reference_run", one_case_times_out)
    monkeypatch.setattr(goldens, "_SHARED", OrderedDict())
    exp = _shared(2)
    assert exp.errors == {"sum_value": "timeout: stopped after 2 s of CPU time"}
    assert "sum_value" not in exp.values and len(exp.values) == len(load_suite(SUITE).cases) - 1
    assert _shared(1).errors == {}  # another variant of the same run is complete
    assert len(calls) == 2 and not goldens._SHARED  # nothing kept: each call ran again


def test_while_another_thread_computes_the_bank_a_variant_runs_alone(runs: list[int]) -> None:
    """No thread waits for a bank another one is computing (a core would idle): it gets its
    variant from a run of its own, with the same values."""
    suite = load_suite(SUITE)
    key = (package.sha256_file(SUITE), goldens.reference_digest(REF), "mini", 1, ALL, FAST,
           SALT, COUNT)
    busy = goldens._SHARED_BUSY.setdefault(key, threading.Lock())
    with busy:  # "another thread" is computing this bank
        exp = _shared(4)
    assert runs == [len(suite.cases)]
    assert _encoded(exp) == _encoded(_alone(4)) and exp.seeds == case_seeds(suite, 4, SALT)
    assert _encoded(_shared(4)) == _encoded(exp)  # and the bank, once free, agrees
    assert runs == [len(suite.cases)] * 2 + [COUNT * len(suite.cases)]
