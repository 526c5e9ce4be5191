"""The capstone's benchmark report is graded in the trusted parent, never trusted.

The event's child writes the report with the submission's ``olympics_report`` (module 19's
harness) and returns the saved file's text; the parent checks it with the reference's own
``validate_report`` and against its own measurement of both returned models on the report's
digits. Oracles: the reference framework's own forward pass of the same models (accuracies,
logits bit for bit), module 19's reference validator, and hand-edited reports an attacker
could send.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import tinytorch_ref
from autograder.harness.decide import (
    MAX_PUBLISHED_BYTES,
    MAX_PUBLISHED_TEXT,
    Verdict,
    checked_publish,
    decider,
)
from autograder.harness.goldens import load_suite
from autograder.milestones import mlperf, report_schema
from autograder.suite import Suite
from coursekit import paths

SUITE = load_suite(paths.SUITES / "20_capstone" / "suite.py")
EVENT = SUITE.get("olympics_event")
S = SimpleNamespace(**EVENT.fn.__globals__)  # the suite module's namespace
REF_BENCH = importlib.import_module("tinytorch_ref.benchmarking")
REF_CAPSTONE = importlib.import_module("tinytorch_ref.capstone")


@pytest.fixture(scope="module")
def event() -> dict[str, Any]:
    """The reference's event in the first variant whose float and INT8 models score
    differently on the report's digits (so a swapped or doubled report is visible)."""
    for i in range(12):
        value = EVENT.fn(tinytorch_ref, np.random.default_rng(100 + i)).value  # committed
        accs = [r["accuracy"] for r in json.loads(value["report"])["results"]]
        if accs[0] != accs[1]:
            return value
    raise AssertionError("12 variants in a row with equal accuracies: the report's digits "
                         "no longer tell the two models apart")


def _models(value: dict[str, Any]) -> tuple[Any, Any]:
    """The reference's baseline and optimised model of the event's seed, rebuilt."""
    seed = value["seed"]
    base = S._baseline(tinytorch_ref, seed)
    sub = REF_CAPSTONE.optimize(base, S.TRAIN_X.copy(), S.TRAIN_Y.copy(), seed=seed,
                                **REF_CAPSTONE.OLYMPICS_RECIPE)
    return base, sub


def _edited(value: dict[str, Any], edit: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
    report = json.loads(value["report"])
    edit(report)
    return {**value, "report": json.dumps(report)}


def _problem(value: Any, expected: dict[str, Any]) -> str:
    problem, report = S._report_check(value, expected)
    assert (problem == "") == (report is not None)
    passed, msg = EVENT.check(value, expected)
    assert passed == (problem == "") or not passed, msg
    if problem:
        assert not passed and "benchmark report was not accepted" in msg, msg
        assert EVENT.publish is not None and EVENT.publish(value, expected) is None
    return problem


# ----------------------------------------------------------------------------- the parent's view
def test_the_reference_report_holds_and_matches_the_framework(event):
    """Every accuracy in the reference's report is what the reference framework's own forward
    pass gives; the parent's band is exact there (nothing too close to call)."""
    assert _problem(event, event) == ""
    x, y = S._report_digits(event["seed"])
    assert x.dtype == np.float32 and x.min() >= 0 and x.max() <= 1 and len(y) == len(x)
    report = json.loads(event["report"])
    for model, key, result in zip(_models(event), ("baseline", "submitted"), report["results"],
                                  strict=True):
        with tinytorch_ref.no_grad():
            right = int(np.sum(model(tinytorch_ref.Tensor(x)).data.argmax(axis=1) == y))
        assert result["accuracy"] == right / len(y)
        sure, doubtful = S._report_band(event[key], x, y, key)
        assert sure <= right <= sure + doubtful and doubtful <= 2, (key, sure, doubtful, right)
    drop = S.TARGETS["max_accuracy_drop"]
    assert report["results"][0]["accuracy_target"] == pytest.approx(
        report["results"][0]["accuracy"] - drop, abs=1e-12)


def test_the_parent_replays_int8_bit_for_bit(event):
    """The parent's float32 replay of module 15's QuantizedLinear gives the reference's logits
    exactly (so a single digit of difference in a report is visible)."""
    x, _ = S._report_digits(event["seed"])
    _, sub = _models(event)
    with tinytorch_ref.no_grad():
        child = sub(tinytorch_ref.Tensor(x)).data
    assert np.array_equal(mlperf.int8_static_logits(event["submitted"], x), child)


# ----------------------------------------------------------------------------- attacks
def _one_more_right(r: dict[str, Any]) -> None:
    r["results"][1]["accuracy"] += 1 / (len(S.TRAIN_Y) * S.REPORT_COPIES)
    res = r["results"][1]
    res["status"] = "VALID" if res["accuracy"] >= res["accuracy_target"] else "INVALID"


def _swap(r: dict[str, Any]) -> None:
    r["results"].reverse()


def _baseline_twice(r: dict[str, Any]) -> None:
    r["results"][1] = dict(r["results"][0])


def _lower_target(r: dict[str, Any]) -> None:
    for res in r["results"]:
        res["accuracy_target"] -= 0.05
        res["status"] = "VALID"


def _flip_status(r: dict[str, Any]) -> None:
    r["results"][1]["status"] = "INVALID" if r["results"][1]["status"] == "VALID" else "VALID"


def _zero_latency(r: dict[str, Any]) -> None:
    r["results"][1]["latency_ms"]["min"] = 0.0


def _five_runs(r: dict[str, Any]) -> None:
    r["results"][0]["runs"] = 5


def _other_system(r: dict[str, Any]) -> None:
    r["system"]["name"] = "my laptop"


def _with_comparisons(r: dict[str, Any]) -> None:
    r["comparisons"] = []


def _extra_field(r: dict[str, Any]) -> None:
    r["results"][0]["note"] = "trust me"


def _one_result(r: dict[str, Any]) -> None:
    del r["results"][1]


def _offline(r: dict[str, Any]) -> None:
    res = r["results"][1]
    res.update(scenario="Offline", metric="samples_per_second", latency_ms=None)


@pytest.mark.parametrize("edit,says", [
    (_one_more_right, "results[1].accuracy"),
    (_swap, "results[0].accuracy"),
    (_baseline_twice, "results[1].accuracy"),
    (_lower_target, "accuracy targets"),
    (_flip_status, "results[1].status"),
    (_zero_latency, "not a measurement"),
    (_five_runs, "expected 3 runs"),
    (_other_system, "system.name"),
    (_with_comparisons, "no comparisons"),
    (_extra_field, "run_scenario's"),
    (_one_result, "expected 2"),
    (_offline, "expected SingleStream"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_a_fabricated_or_altered_report_is_refused(event, edit, says):
    problem = _problem(_edited(event, edit), event)
    assert says in problem, problem


def test_a_status_flip_is_refused_by_the_reference_validator_not_the_students(event):
    problem = _problem(_edited(event, _flip_status), event)
    assert "checked with the course's own validator" in problem, problem


@pytest.mark.parametrize("report,says", [
    (None, "sent no report file"),
    (b"{}", "sent no report file"),
    ("{" * 3, "not JSON"),
    ("[" * 5000 + "]" * 5000, "not JSON"),
    ('{"schema": NaN}', "not JSON"),
    ("x" * 20_001, "20001 characters"),
    ("[]", "must be an object"),
], ids=["missing", "bytes", "truncated", "deep", "nan", "huge", "list"])
def test_a_missing_or_malformed_report_file_is_refused(event, report, says):
    value = {**event, "report": report}
    if report is None:
        del value["report"]
    assert says in _problem(value, event)


def test_another_variants_report_is_refused(event):
    """A report copied from another run (another seed's digits and models) does not match
    this variant's models on this variant's digits."""
    other = EVENT.fn(tinytorch_ref, np.random.default_rng(7)).value
    problem = _problem({**event, "report": other["report"]}, event)
    assert "accuracy" in problem, problem


def test_the_digits_come_from_the_expected_seed_not_the_childs(event):
    """The child's own 'seed' field is ignored: the parent rebuilds the report's digits from
    the reference's value for the variant."""
    assert _problem({**event, "seed": event["seed"] + 1}, event) == ""
    assert "no expected value" in _problem(event, {**event, "seed": None})


def test_dynamic_int8_layers_get_a_wide_band(event):
    """Without static input qparams the child's result depends on its batches: the parent
    marks the digits near a tie as doubtful instead of failing a faithful report."""
    state = {k: v for k, v in event["submitted"].items() if "input_" not in k}
    x, y = S._report_digits(event["seed"])
    sure, doubtful = S._report_band(state, x, y, "submitted")
    exact_sure, exact_doubtful = S._report_band(event["submitted"], x, y, "submitted")
    assert doubtful > exact_doubtful and sure <= exact_sure + exact_doubtful


# ----------------------------------------------------------------------------- publishing
def test_the_checked_report_is_published(event):
    assert EVENT.publish is not None
    got = EVENT.publish(event, event)
    assert got is not None
    text, data = got
    report = json.loads(event["report"])
    assert data == {"benchmark_report": report}
    assert text.startswith("Your benchmark report (autograder sandbox")
    assert text.count("SingleStream") == 2 and "baseline" in text and "optimised" in text


def _suite_with(publish: Any) -> Suite:
    suite = Suite(module="20_capstone", version="t")
    suite.case(1, name="event", check=lambda got, exp: (bool(got), "msg"),
               publish=publish)(lambda tt, rng: None)
    return suite


def test_publish_runs_in_the_parent_on_arrival_and_is_bounded():
    """The harness calls a case's publish with the decoded value and the expected value, keeps
    (text, data) on the verdict, and turns a bad publication into one line for staff."""
    suite = _suite_with(lambda v, e: (f"got {v} of {e}", {"v": v}))
    decide = decider(suite, SimpleNamespace(values={"event": 2}), [])  # type: ignore[arg-type]
    verdict = decide("case:event", 1)
    assert isinstance(verdict, Verdict) and verdict.published == ("got 1 of 2", {"v": 1})
    case = suite.cases[0]
    big = {"x": "y" * MAX_PUBLISHED_BYTES}  # {"x":"yy..."}: 8 bytes more than the y's
    assert checked_publish(replace(case, publish=lambda v, e: ("t", big)), 1, 2) == (
        f"publish: {MAX_PUBLISHED_BYTES + 8} bytes of data (at most {MAX_PUBLISHED_BYTES})")
    nan = replace(case, publish=lambda v, e: ("t", {"x": float("nan")}))
    assert str(checked_publish(nan, 1, 2)).startswith("publish: ValueError")
    assert checked_publish(replace(case, publish=lambda v, e: None), 1, 2) is None
    assert checked_publish(replace(case, publish=lambda v, e: ("t", [1])), 1, 2) == (
        "publish: expected (text, dict)")
    long_text = checked_publish(replace(case, publish=lambda v, e: ("z" * 10**5, {})), 1, 2)
    assert isinstance(long_text, tuple) and len(long_text[0]) == MAX_PUBLISHED_TEXT


# ----------------------------------------------------------------------------- the schema
def test_the_parent_validator_is_the_references_own_code():
    """Extracted from the reference file: the schema's names only, no framework import; it
    refuses exactly what the reference's validate_report refuses, field for field."""
    text = report_schema.extract(report_schema.SOURCE.read_text(encoding="utf-8"))
    assert "from ." not in text and "import numpy" not in text
    for name in report_schema.NAMES:
        assert f"def {name}(" in text or f"class {name}(" in text or f"\n{name} = " in text
    assert "def run_scenario" not in text and "def make_report" not in text
    schema = report_schema.load()
    good = REF_BENCH.make_report("ci", "m", [REF_BENCH.run_scenario(
        lambda b: np.eye(2)[np.zeros(len(b), dtype=int)], np.zeros((6, 1)),
        np.array([0, 0, 0, 1, 1, 0]), "SingleStream", accuracy_target=0.5, runs=2,
        queries=4)])
    schema.validate_report(good)
    breaks = [lambda r: r.update(schema="tinytorch-benchmark/0"),
              lambda r: r["results"][0].update(ci=[1.0, 0.0]),
              lambda r: r["results"][0].update(status="INVALID"),
              lambda r: r["results"][0].update(runs=True),
              lambda r: r["results"][0]["latency_ms"].update(p50=-1.0),
              lambda r: r["system"].update(name=""),
              lambda r: r.update(results=[])]
    for brk in breaks:
        bad = json.loads(json.dumps(good))
        brk(bad)
        fields = []
        for validate, error in ((schema.validate_report, schema.ReportError),
                                (REF_BENCH.validate_report, REF_BENCH.ReportError)):
            with pytest.raises(error) as info:
                validate(bad)
            fields.append(info.value.field)
        assert fields[0] == fields[1], fields


def test_the_schema_keeps_what_its_names_use_transitively():
    """validate_report's helpers come along (module 19 gives the traversal and its helpers,
    the student writes three rules): every top-level name a kept definition uses, and only
    those — never the framework."""
    names = {n: f"def {n}(*a):\n    return None\n" for n in report_schema.NAMES}
    names["validate_report"] = "def validate_report(r):\n    return _helper(r)\n"
    src = ("import math\nimport numpy as np\nfrom .tensor import Tensor\n\n"
           + "\n".join(names.values())
           + "\ndef _helper(r):\n    return _deeper(r) + math.pi\n"
           + "\ndef _deeper(r):\n    return 1\n"
           + "\ndef unused(r):\n    return np.zeros(1)\n")
    text = report_schema.extract(src)
    assert "def _helper(" in text and "def _deeper(" in text and "import math" in text
    assert "def unused(" not in text and "numpy" not in text and "Tensor" not in text


def test_the_zip_copy_is_preferred_and_a_missing_name_is_a_course_error(tmp_path, monkeypatch):
    src = report_schema.SOURCE.read_text(encoding="utf-8")
    shipped = tmp_path / "report_schema" / "benchmarking.py"
    shipped.parent.mkdir()
    shipped.write_text(report_schema.extract(src), encoding="utf-8")
    monkeypatch.setattr(report_schema, "SHIPPED", shipped)
    monkeypatch.setattr(report_schema, "SOURCE", tmp_path / "absent.py")
    assert report_schema.load().__file__ == str(shipped)
    with pytest.raises(report_schema.SchemaSourceError, match="defines no validate_report"):
        report_schema.extract(src.replace("def validate_report(", "def check_report("))
    with pytest.raises(report_schema.SchemaSourceError, match="cannot read"):
        report_schema.load(tmp_path / "absent.py")


def test_the_parent_reads_the_held_out_digits_once_and_cannot_change_them():
    g = SUITE.get("olympics_event").fn.__globals__
    x, y = g["_held_out_digits"]()
    assert g["_held_out_digits"]()[0] is x  # read once per process
    _, _, test_x, test_y = mlperf.task()
    assert x.dtype == np.float32 and x.shape == (len(test_x), 64)
    np.testing.assert_array_equal(x, np.asarray(test_x, np.float32).reshape(len(test_x), -1) / 16)
    np.testing.assert_array_equal(y, test_y)
    with pytest.raises(ValueError, match="read-only"):
        x[0, 0] = 1.0
