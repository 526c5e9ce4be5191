"""The contract every released module keeps (invariant 2), parametrized over the course.

For each module with a solution and a hidden suite: the suite's points equal course.yml's;
every case has a hint; the reference scores 100 %; the untouched release scores 0 and every
failure names the stub; every plausible bug in ``tests/fixtures/buggy/<module>.py`` loses
points; the public tests pass on the reference and fail on the stub.
"""

from __future__ import annotations

import pytest
from suite_tools import (
    buggy_catalogue,
    buggy_source,
    call_with_globals,
    load_suite,
    load_variant,
    notebook_namespace,
    public_tests,
    score_variant,
    total,
)

import tinytorch_ref
from tito import paths
from tito.course import load_course
from tito.release import available_modules

COURSE = load_course()
MODULES = [m for m in available_modules(COURSE) if (paths.SUITES / m.name / "suite.py").exists()]
IDS = [m.name for m in MODULES]
BUGS = [(m, bug) for m in MODULES for bug in buggy_catalogue(m.name)[1]]


def test_every_released_module_has_a_suite_and_bugs():
    for m in available_modules(COURSE):
        assert (paths.SUITES / m.name / "suite.py").exists(), f"{m.name} has no hidden suite"
        assert (paths.REPO_ROOT / "tests" / "fixtures" / "buggy" / f"{m.name}.py").exists()


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_suite_points_match_course_and_cases_have_hints(module):
    suite = load_suite(module.name)
    assert suite.total_points == module.points
    assert suite.module == module.name
    for case in suite.cases:
        assert case.points > 0 and case.hint.strip(), f"{case.name}: needs points and a hint"


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_reference_scores_full_marks(module):
    results = score_variant(load_suite(module.name), tinytorch_ref)
    assert [(r.case.name, r.message) for r in results if not r.passed] == []


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_untouched_release_scores_zero_and_names_the_stub(module):
    stub = load_variant({module.slug: paths.RELEASE / "tinytorch" / f"{module.slug}.py"})
    results = score_variant(load_suite(module.name), stub)
    assert total(results) == 0, [r.case.name for r in results if r.passed]
    tag = f"module {module.number:02d}: implement"
    assert all(tag in r.message for r in results), [r.message for r in results
                                                    if tag not in r.message]


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_at_least_five_plausible_bugs(module):
    assert len(buggy_catalogue(module.name)[1]) >= 5


@pytest.mark.parametrize("module,bug", BUGS, ids=[f"{m.name}-{b}" for m, b in BUGS])
def test_buggy_variant_loses_points(module, bug):
    slug, source = buggy_source(module.name, bug)
    results = score_variant(load_suite(module.name), load_variant({slug: source}))
    assert total(results) < module.points, f"{bug} survived the hidden suite of {module.name}"


PUBLIC = [(m, name, fn) for m in MODULES for name, fn in public_tests(m.name)]


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_release_has_public_tests(module):
    assert len(public_tests(module.name)) >= 2


@pytest.mark.parametrize("module,name,fn", PUBLIC, ids=[f"{m.name}-{n}" for m, n, _ in PUBLIC])
def test_public_test_passes_on_reference(module, name, fn):
    call_with_globals(fn, notebook_namespace(tinytorch_ref, module.number))


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_public_tests_only_need_names_the_grader_binds(module):
    """The grader binds a public test's parameters from the graded module's globals (plus
    ``np``/``numpy``: autograder/harness/child.py), not from the whole notebook: a name the
    module file does not define or import fails the check for every student on Gradescope."""
    import importlib
    import inspect

    names = set(vars(importlib.import_module(f"tinytorch_ref.{module.slug}"))) | {"np", "numpy"}
    missing = {name: sorted(set(inspect.signature(fn).parameters) - names)
               for name, fn in public_tests(module.name)}
    assert {k: v for k, v in missing.items() if v} == {}, (
        "import these names in the module's export cells (noqa: F401 - for checks)")


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_public_tests_fail_on_the_stub(module):
    stub = load_variant({module.slug: paths.RELEASE / "tinytorch" / f"{module.slug}.py"})
    ns = notebook_namespace(stub, module.number)
    passed = []
    for name, fn in public_tests(module.name):
        try:
            call_with_globals(fn, ns)
        except (AssertionError, NotImplementedError):
            continue
        passed.append(name)
    assert passed == [], f"public tests pass on the untouched stub: {passed}"
