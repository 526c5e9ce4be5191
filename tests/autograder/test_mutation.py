"""Mutation testing: mutant generation, kill accounting, and the per-module CI gate."""

from __future__ import annotations

import shutil
import textwrap

import pytest

from autograder.harness.mutation import generate_mutants, run_mutation
from tests.autograder.conftest import REF, SUITE

SAMPLE = textwrap.dedent('''
    import numpy as np

    def f(x, n):
        """Docstring with 1 + 2 is not mutated."""
        if n > 0 and x is not None:
            return np.sum(x, axis=0, keepdims=True) + n * 2
        return -x

    def __repr__():
        return 1 + 1

    def g(x):
        return x - 1  # pragma: no mutate
''')


def test_mutant_kinds_and_exclusions():
    muts = generate_mutants(SAMPLE)
    descs = {m.description for m in muts}
    assert {"Gt -> GtE", "And -> Or", "IsNot -> Is", "Add -> Sub", "Mult -> Div",
            "drop right operand of Add", "drop USub", "0 -> 1", "2 -> 3",
            "axis=0 -> axis=1", "keepdims=True -> False"} <= descs
    assert all(m.line not in (10, 13) for m in muts), "repr and pragma lines are skipped"
    assert len({m.id for m in muts}) == len(muts)
    for m in muts:
        compile(m.source, m.id, "exec")


def test_kill_rate_on_the_stand_in_module(tmp_path):
    rep = run_mutation(suite_path=SUITE, reference=REF, slug="mini", number=1,
                       all_modules=((1, "mini"), (2, "later")))
    assert rep.total == 5 and len(rep.killed) == 3
    assert {m.line for m in rep.survived} == {28}, "add() is untested by the stand-in suite"
    assert "Surviving mutants" in rep.to_markdown()

    suite_dir = tmp_path / "01_mini"
    shutil.copytree(SUITE.parent, suite_dir)
    (suite_dir / "equivalent_mutants.txt").write_text(
        "# add() is outside the graded surface\n"
        + "\n".join(m.id for m in rep.survived) + "\n")
    (suite_dir / "bugs.py").write_text(
        "BUGS = {'sum_is_mean': ('float(self.data.sum())', 'float(self.data.mean())')}\n")
    rep2 = run_mutation(suite_path=suite_dir / "suite.py", reference=REF, slug="mini",
                        number=1, all_modules=((1, "mini"), (2, "later")))
    assert rep2.rate == 1.0 and len(rep2.equivalent) == 2
    assert any(m.id == "bug:sum_is_mean" for m in rep2.killed)


@pytest.mark.slow
@pytest.mark.xfail(strict=False, reason=(
    "issue 4 gate: module 01's suite kills ~63% of reference mutants (< 90%); the suite "
    "owner adds cases or lists equivalent mutants, then this xfail comes off"))
def test_every_module_suite_kills_at_least_90_percent(course):
    from tito import paths

    rates = {}
    for m in course.modules:
        suite = paths.SUITES / m.name / "suite.py"
        if not suite.is_file():
            continue
        rep = run_mutation(suite_path=suite, reference=paths.REFERENCE, slug=m.slug,
                           number=m.number,
                           all_modules=tuple((x.number, x.slug) for x in course.modules))
        rates[m.name] = (rep.rate, [s.id for s in rep.survived][:10])
    assert rates, "no module has a hidden suite"
    low = {k: v for k, v in rates.items() if v[0] < 0.9}
    assert not low, f"kill rate below 90%: {low}"
