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


def _modules_with_suites():
    from tito import paths
    from tito.course import load_course

    course = load_course()
    return course, [m for m in course.modules if (paths.SUITES / m.name / "suite.py").is_file()]


_COURSE, _SUITED = _modules_with_suites()


@pytest.mark.slow
@pytest.mark.parametrize("module", _SUITED, ids=[m.name for m in _SUITED])
def test_every_module_suite_kills_at_least_90_percent(module):
    """Issue 4 gate: mutants of the solution lines + the plausible bugs; >= 90% killed.

    The report lands in build/mutation/<module>.md. Mutants listed as equivalent must still
    exist (a stale list would silently hide survivors when the reference moves).
    """
    from autograder.harness.mutation import module_mutation
    from tito import paths

    rep = module_mutation(_COURSE, module)
    out = paths.BUILD / "mutation" / f"{module.name}.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(rep.to_markdown(), encoding="utf-8")
    eq_file = paths.SUITES / module.name / "equivalent_mutants.txt"
    listed = set()
    if eq_file.is_file():
        listed = {ln.split("#")[0].strip() for ln in eq_file.read_text().splitlines()} - {""}
    assert {m.id for m in rep.equivalent} == listed, (
        f"stale ids in {eq_file.name}: {sorted(listed - {m.id for m in rep.equivalent})}")
    assert any(m.id.startswith("bug:") for m in rep.killed), "plausible bugs were not run"
    assert rep.rate >= 0.9, (f"{module.name}: kill rate {rep.rate:.1%} < 90%; survivors: "
                             f"{[m.id for m in rep.survived][:10]} (report: {out})")
