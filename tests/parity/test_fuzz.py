"""The differential fuzzer's fast tier: tinytorch_ref against PyTorch 2.13 (instructor CI).

Seeded, so every run checks the same cases: each catalogue entry of every built module, one
reproduction per root cause fixed (``fuzz/regressions.py``), the deliberate-differences table
kept in step with ``docs/conformance.md``, and the fuzzer itself (a planted bug is found and
minimised). The long tier is ``make fuzz``.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from fuzz import engine
from fuzz.catalogue import ENTRIES
from fuzz.deliberate import DELIBERATE
from fuzz.namespaces import Ours, Torch
from fuzz.regressions import GUARDS, ROOT_CAUSES
from fuzz.runner import Fuzzer, built_modules, fuzz, select
from suite_tools import load_variant

from coursekit import paths

pytestmark = pytest.mark.parity

FAST_CASES = 8000
FAST_SEED = 20270119


@pytest.fixture(scope="module")
def fast_report():
    return fuzz(FAST_CASES, seed=FAST_SEED)


def test_fast_tier_finds_no_difference_outside_the_table(fast_report):
    assert fast_report.classes == {}, (
        "tinytorch_ref differs from PyTorch (one minimised reproduction per class; run it with "
        "PYTHONPATH=tests python -m fuzz --repro '<line>'):\n" + "\n".join(fast_report.lines()))


def test_fast_tier_exercises_every_entry_of_every_built_module(fast_report):
    entries = select()
    assert {e.module for e in entries} == built_modules()
    thin = {e.name: fast_report.per_entry[e.name] for e in entries
            if fast_report.per_entry[e.name] < 20}
    assert thin == {}, f"catalogue entries the fast tier barely ran: {thin}"


def test_deliberate_differences_are_rare(fast_report):
    skipped = sum(fast_report.skipped.values())
    assert skipped < 0.1 * fast_report.cases, (
        f"{skipped} of {fast_report.cases} cases were skipped as deliberate differences "
        f"({dict(fast_report.skipped)}): a predicate is broader than its row of the table")


def _line(line: str) -> engine.Case:
    return engine.Case("regression", "regression", line, (), 7)


@pytest.mark.parametrize("why,line", ROOT_CAUSES + GUARDS,
                         ids=[w for w, _ in ROOT_CAUSES + GUARDS])
def test_root_cause_reproduction_matches_torch(why, line):
    ours, theirs = Ours(), Torch()
    diffs = engine.compare(engine.run(_line(line), ours), engine.run(_line(line), theirs),
                           loose=True)
    assert diffs == [], f"{why}: {diffs[0].kind}: {diffs[0].detail}\n    {line}"


def test_deliberate_table_matches_the_docs():
    text = (paths.REPO_ROOT / "docs" / "conformance.md").read_text(encoding="utf-8")
    table = text.split("## Deliberate differences", 1)[1]
    documented = re.findall(r"^\| `([a-z0-9-]+)` \|", table, flags=re.M)
    assert sorted(documented) == sorted(d.id for d in DELIBERATE), (
        "docs/conformance.md's table and tests/fuzz/deliberate.py must list the same ids")
    assert len(documented) == len(set(documented))


def test_catalogue_names_are_unique_and_modules_are_course_modules(course):
    names = [e.name for e in ENTRIES]
    assert len(names) == len(set(names))
    assert {e.module for e in ENTRIES} <= {m.name for m in course.modules}


def test_fuzzer_finds_and_minimises_a_planted_bug():
    ref = (paths.REFERENCE / "tensor.py").read_text(encoding="utf-8")
    # the product line of multiplication, however deeply the reference indents it
    lines = re.findall(r"^( *)out = a \* b$", ref, flags=re.M)
    assert len(lines) == 1, f"expected one 'out = a * b' line in tinytorch_ref/tensor.py: {lines}"
    indent = lines[0]
    # a plausible slip: multiplying through float64 (promotes every product)
    buggy = load_variant({"tensor": ref.replace(f"{indent}out = a * b\n",
                                                f"{indent}out = a * b.astype(np.float64)\n")})
    fuzzer = Fuzzer(ours=Ours(buggy))
    entries = [e for e in ENTRIES if e.name == "binary_op"]
    report = fuzzer.run(entries, seed=3, start=0, stop=300)
    dtype_classes = [k for k in report.classes if "|dtype|" in k]
    assert dtype_classes, f"the planted float64 promotion went unnoticed: {report.lines()}"
    _, repro, detail = report.classes[dtype_classes[0]]
    assert "*" in repro and "float64" in detail
    assert len(repro) < 100, f"not minimised: {repro}"


def test_comparison_tolerances_are_tight():
    a = np.array([1.0, 2.0], dtype=np.float32)
    assert engine._close(a, a, "float32")
    assert not engine._close(a, a * (1 + 1e-3), "float32")
    assert not engine._close(a.astype(np.float64), a * (1 + 1e-6), "float64")
    assert not engine._close(np.array([np.nan]), np.array([0.0]), "float32")
    assert not engine._close(np.array([np.inf]), np.array([-np.inf]), "float32")


_TRAJECTORY = ("ps = [p0.requires_grad_()]; opt = optim.SGD(ps, lr=0.1, momentum=0.9, "
               "dampening=0.3)\nfor _ in range(4):\n    opt.zero_grad()\n"
               "    loss = ((p0 ** 4) * 0.25).sum()\n    loss.backward()\n    opt.step()\n"
               "out = p0.detach()\nno_backward = True")


def test_float32_rounding_magnified_by_cancellation_is_no_difference():
    """Found by the long tier (seed 20261202): four SGD steps from 3.78125 cancel to -0.0043;
    PyTorch's fused multiply-add and our multiply-then-add differ by one unit in the last place
    after the first step, and by 0.7 % at the end, both as far from the float64 answer."""
    case = engine.Case("06_optimizers", "optimizer_trajectory", _TRAJECTORY,
                       (("p0", engine.Input("tensor", np.array([0.0, 3.78125], "float32"))),), 0)
    fz = Fuzzer()
    raw = engine.compare(engine.run(case, fz.ours), engine.run(case, fz.torch), loose=True)
    assert [d.kind for d in raw] == ["value"], raw
    assert fz.differences(case) == [] and fz.rounding == 1


def test_rounding_never_covers_a_wrong_value_or_a_non_finite_one():
    def out(dtype: str, *values: float) -> engine.Outcome:
        arr = np.array(values)
        return engine.Outcome(result=[engine.TensorValue(dtype, arr.shape, arr, False)])

    exact = out("float64", 1.0000000001, -1.13e38)
    assert engine.within_rounding(out("float32", 1.0, -1.1300001e38),
                                  out("float32", 1.0000001, -1.13e38), exact)
    # 1e-3 off where PyTorch is exact: a real difference
    assert not engine.within_rounding(out("float32", 1.001, -1.13e38),
                                      out("float32", 1.0, -1.13e38), exact)
    # a finite value where PyTorch overflows (the pow-order bug the long tier found)
    assert not engine.within_rounding(out("float32", 1.0, -1.14e38),
                                      out("float32", 1.0, -np.inf), exact)
    # a widened shadow is only made when the code itself names no narrow dtype
    case = engine.Case("01_tensor", "unary_op", "out = a.float()",
                       (("a", engine.Input("tensor", np.array([1.0], "float32"))),), 0)
    assert engine.widened(case) is None


def test_index_into_empty_result_predicate_reads_literal_lists():
    """Found by the long run (seed 20261208): ``a[[[0, 1]]]`` of a ``(1, 0, 4)`` tensor is a
    list read as a tuple, an out-of-range literal index, and an empty result."""
    row = next(d for d in DELIBERATE if d.id == "out-of-range-index-into-empty-result")

    def case(code: str, shape: tuple[int, ...]) -> engine.Case:
        a = engine.Input("tensor", np.zeros(shape, np.float32))
        return engine.Case("01_tensor", "getitem", code, (("a", a),), 7)

    assert row.applies(case("out = a[[[0, 1]]]", (1, 0, 4)))
    assert row.applies(case("out = a[[0, 5]]", (2, 0)))
    assert not row.applies(case("out = a[[[0, 5]]]", (2, 3)))  # not empty: both raise
    assert not row.applies(case("out = a[5]", (2, 0)))  # an integer: PyTorch checks it


def test_overflowing_variance_predicate_counts_the_rows_length():
    """Found by the long run (seed 20261208): no single value of a float64 row reached 1.3e154,
    but 1.25e154 squared twice in a row of 20 overflows the variance's sum as PyTorch forms it
    (torch gave zeros, ours the true row). The row's length lowers the limit; ordinary values
    stay outside the row."""
    row = next(d for d in DELIBERATE if d.id == "layer-norm-overflowing-variance")

    def case(x: np.ndarray) -> engine.Case:
        return engine.Case("13_transformers", "layer_norm", "out = F.layer_norm(x, [4, 5])",
                           (("x", engine.Input("tensor", x)),), 7)

    big = np.zeros((4, 5))
    big[2, 4] = big[3, 3] = 1.25e154
    assert row.applies(case(big))
    assert not row.applies(case(np.full((4, 5), 1e150)))  # squares sum to 2e301: finite
    assert row.applies(case(np.full((1,), 2e19, np.float32)))
    assert not row.applies(case(np.full((1,), 1e19, np.float32)))
