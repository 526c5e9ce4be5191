"""The contract every released module keeps (invariants 2 and 11), parametrized over the course.

For each module with a solution and a hidden suite: the suite's points equal course.yml's;
every case has a hint; the reference scores 100 %; the untouched release scores 0 and every
failure names the stub; every plausible bug in ``autograder/suites/<module>/bugs.py`` loses
points, only in its own unit's cases and the dependants it declares, and the first case it
fails names its unit in the hint; every definition students write is in one unit; the public
tests pass on the reference and fail on the stub.
"""

from __future__ import annotations

import pytest
from suite_tools import (
    buggy_catalogue,
    buggy_source,
    call_with_globals,
    cases_reached,
    dependants,
    first_lost_case,
    load_suite,
    load_variant,
    mutated_units,
    notebook_namespace,
    public_tests,
    score_variant,
    total,
    unit_of_line,
)

import tinytorch_ref
from autograder import standins
from autograder.harness.mutation import run_order
from coursebuild.release import available_modules
from coursekit import paths
from coursekit.course import load_course
from coursekit.export import solution_line_numbers
from coursekit.paths import solution_path

COURSE = load_course()
MODULES = [m for m in available_modules(COURSE) if (paths.SUITES / m.name / "suite.py").exists()]
IDS = [m.name for m in MODULES]
BUGS = [(m, bug) for m in MODULES for bug in buggy_catalogue(m.name)[1]]


def test_every_released_module_has_a_suite_and_bugs():
    for m in available_modules(COURSE):
        assert (paths.SUITES / m.name / "suite.py").exists(), f"{m.name} has no hidden suite"
        assert paths.bugs_catalogue(m.name).exists(), f"{m.name} has no buggy catalogue"


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_suite_points_match_course_and_cases_have_hints(module):
    suite = load_suite(module.name)
    assert suite.total_points == module.points
    assert suite.module == module.name
    for case in suite.cases:
        assert case.points > 0 and case.hint.strip(), f"{case.name}: needs points and a hint"


def _released_docstrings(module) -> dict[str, str]:
    """What students are told of each definition: its released signature (the ``def`` or
    ``class`` header as written, defaults included) and its docstring, for every top-level
    definition and class member of the released module file, by qualified name
    (``"GPT.forward"``)."""
    import ast

    text = (paths.RELEASE / "tinytorch" / f"{module.slug}.py").read_text("utf-8")
    lines = text.splitlines()
    tree = ast.parse(text)

    def told(node: ast.FunctionDef | ast.ClassDef) -> str:
        header = "\n".join(lines[node.lineno - 1:node.body[0].lineno - 1])
        return header + "\n" + (ast.get_docstring(node) or "")

    out: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out[node.name] = told(node)
        if isinstance(node, ast.ClassDef):
            for sub in node.body:
                if isinstance(sub, ast.FunctionDef):
                    out[f"{node.name}.{sub.name}"] = told(sub)
    return out


def _public_check_sources(module) -> dict[str, str]:
    """Every public check of the module (``test_*`` functions of its released tests) by name,
    with its source."""
    import ast

    out: dict[str, str] = {}
    for path in sorted((paths.RELEASE / module.name / "tests").glob("*.py")):
        text = path.read_text("utf-8")
        for node in ast.parse(text).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
                out[node.name] = ast.get_source_segment(text, node) or ""
    return out


def _words(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_every_hidden_case_checks_only_what_the_student_was_told(module):
    """Issue 28 item 4: each case says where the behaviour it grades is stated — a released
    signature or docstring, or a public check — and quotes the words; every quote must be
    there (a default is stated by the signature the student keeps). A case that
    checks something no docstring or public check states loses its points after the due date
    for a reason the student could not know."""
    docs, checks = _released_docstrings(module), _public_check_sources(module)
    problems = []
    for case in load_suite(module.name).cases:
        if not case.stated:
            problems.append(f"{case.name}: says nowhere what it checks (stated=...)")
        for place, quote in case.stated:
            if place.startswith("test:"):
                text = checks.get(place[5:])
                kind = "public check"
            else:
                text = docs.get(place)
                kind = "docstring of"
            if text is None:
                problems.append(f"{case.name}: no {kind} {place} in the release")
            elif _words(quote) not in _words(text):
                problems.append(f"{case.name}: the {kind} {place} does not say {quote!r}")
    assert problems == [], "\n".join(problems)


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
    # first_lost_case (what the authoring checks ask) stops at the full run's first lost case
    first = first_lost_case(load_suite(module.name), stub)
    expected = next(r for r in results if r.case.points > 0)
    assert first is not None and (first.case.name, first.message) == (expected.case.name,
                                                                       expected.message)


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_at_least_five_plausible_bugs(module):
    assert len(buggy_catalogue(module.name)[1]) >= 5


@pytest.mark.parametrize("module,bug", BUGS, ids=[f"{m.name}-{b}" for m, b in BUGS])
def test_buggy_variant_is_charged_by_its_own_unit(module, bug):
    """One bug, one charge (invariant 11, docs/architecture.md): the bug loses points; every case it fails
    grades the unit the bug is in, or is a dependant its catalogue declares (with why); the
    first case it fails, in the order a run meets them, is one of its own unit's, and that
    case's hint names the unit."""
    suite = load_suite(module.name)
    slug, source = buggy_source(module.name, bug)
    # only the cases that run a body the bug replaces can fail (the mutation gate's rule;
    # test_case_selection_keeps_every_verdict_of_a_full_run checks it on real bugs)
    results = score_variant(suite, load_variant({slug: source}),
                            only=cases_reached(module.name, source))
    assert total(results) < module.points, f"{bug} survived the hidden suite of {module.name}"
    own = mutated_units(module.name, bug)
    declared = dependants(module.name).get(bug, {})
    failed = [r for r in results if not r.passed]
    listing = "\n".join(f"  {r.case.name} (grades {r.case.unit}, {r.case.points:g} points)"
                        for r in failed)
    assert own, f"{bug} edits no unit's definition"
    foreign = [r.case.name for r in failed if r.case.unit not in own
               and r.case.name not in declared]
    assert foreign == [], (f"{bug} (in {', '.join(sorted(own))}) also fails cases of other "
                           f"units: {foreign}; it fails:\n{listing}\nrun those cases with the "
                           "reference's unit (Suite.unit uses=, or standins=) or declare them "
                           "in DEPENDANTS with why")
    stale = sorted(set(declared) - {r.case.name for r in failed})
    assert stale == [], f"DEPENDANTS of {bug} lists cases it does not fail: {stale}"
    assert all(why.strip() for why in declared.values()), f"{bug}: say why each case depends"
    first = next(r for r in (by_name(results)[c.name] for c in run_order(suite))
                 if not r.passed)
    assert first.case.unit in own, (f"the first case {bug} fails is {first.case.name} "
                                    f"({first.case.unit}), not one of {sorted(own)}'s")
    names = unit_words(suite.units[first.case.unit])
    assert any(w.lower() in first.case.hint.lower() for w in names), (
        f"{first.case.name}'s hint names none of {sorted(names)}: {first.case.hint!r}")


#: Modules whose every catalogue bug is also scored on the whole suite, to check the case
#: selection the test above uses: stand-ins between units (05), layers built on earlier
#: modules (03), cases that train a model (09).
SELECTION_ORACLE = ("03_layers", "05_autograd", "09_spatial")


@pytest.mark.parametrize("module_name", SELECTION_ORACLE)
def test_case_selection_keeps_every_verdict_of_a_full_run(module_name):
    """``cases_reached`` leaves out only cases a bug cannot fail: for every catalogue bug of
    these modules every case the whole suite fails is a selected one (the selected cases run
    as in the whole suite), while it leaves cases out; a change outside function bodies
    selects every case."""
    suite = load_suite(module_name)
    left_out = 0
    for bug in buggy_catalogue(module_name)[1]:
        slug, source = buggy_source(module_name, bug)
        only = cases_reached(module_name, source)
        assert only is not None, f"{bug} is scored on every case: it changes more than bodies"
        full = score_variant(suite, load_variant({slug: source}))
        missed = [r.case.name for r in full if not r.passed and r.case.name not in only]
        assert missed == [], f"{bug} fails cases the selection leaves out: {missed}"
        left_out += len(suite.cases) - len(only)
    assert left_out > 0
    reference = (paths.REFERENCE / f"{slug}.py").read_text(encoding="utf-8")
    assert cases_reached(module_name, reference + "\nEXTRA = 1\n") is None


def by_name(results):
    return {r.case.name: r for r in results}


def unit_words(unit) -> set[str]:
    """How a hint may name a unit: its name, its entries, their class and member names, and
    a private Function's public name (``_LayerNormFn`` -> ``LayerNorm``)."""
    words = {unit.name}
    for e in unit.entries:
        cls, _, member = e.partition(".")
        words |= {e, cls}
        if member and not member.startswith("__"):
            words.add(member.lstrip("_"))
        core = cls.lstrip("_")
        words.add(core[:-2] if core.endswith("Fn") else core)
    return {w for w in words if len(w) > 2}


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_every_hint_names_the_unit_its_case_grades(module):
    suite = load_suite(module.name)
    silent = [c.name for c in suite.cases
              if not any(w.lower() in c.hint.lower() for w in unit_words(suite.units[c.unit]))]
    assert silent == [], f"{module.name}: hints that name none of their unit's definitions"


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_every_definition_students_write_is_in_exactly_one_unit(module):
    """Every top-level definition (or class member) with solution lines belongs to a unit of
    the suite, every case grades a declared unit, and stand-ins form no cycle."""
    suite = load_suite(module.name)
    assert suite.check_units() == []
    assert suite.units, f"{module.name}: declare the module's units (Suite.unit)"
    source = (paths.REFERENCE / f"{module.slug}.py").read_text(encoding="utf-8")
    lines = solution_line_numbers(solution_path(module), slug=module.slug,
                                  number=module.number, title=module.title)
    uncovered = sorted({standins.covering_entry(source, n) or f"line {n}" for n in lines
                        if unit_of_line(suite, source, n) is None})
    assert uncovered == [], f"{module.name}: solution code in no unit: {uncovered}"
    standins.extract(source, {u.name: u.entries for u in suite.units.values()})
    graded = {c.unit for c in suite.cases}
    assert set(suite.units) <= graded, f"units with no case: {set(suite.units) - graded}"


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
