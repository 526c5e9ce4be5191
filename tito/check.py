"""`tito course check`: course.yml and everything it points at, checked in one pass.

course.yml itself is validated on load (schema, cross-references, plausible ranges). This adds
what needs the repository: for every declared module, whether it is built (solution module and
hidden suite, or neither: half a module is a problem), its solution markers
(:mod:`tito.authoring`), that its suite loads, names the module and sums to course.yml's points
with a hint on every case, that its units are declared and found in the reference (every case
grades one, no stand-in cycle), that the reference and the release were regenerated, that a buggy
catalogue exists; that every milestone graded with a built module has its grader; that dates
run in syllabus order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tito import paths
from tito.authoring import scan
from tito.course import Course, Module
from tito.release import solution_path, suite_path

#: A module's window (release to due) longer than this is probably a typo in a date.
MAX_WINDOW_DAYS = 60
#: The whole term, first release to last due; longer is probably a wrong year.
MAX_TERM_DAYS = 200


@dataclass
class CheckReport:
    built: list[Module] = field(default_factory=list)
    declared: list[Module] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _suite_problems(module: Module) -> list[str]:
    from autograder.harness.goldens import load_suite

    where = f"autograder/suites/{module.name}/suite.py"
    try:
        suite = load_suite(suite_path(module))
    except Exception as exc:  # noqa: BLE001 - any failure to load is the problem to report
        return [f"{where}: does not load ({type(exc).__name__}: {exc})"]
    out = []
    if suite.module != module.name:
        out.append(f"{where}: Suite(module={suite.module!r}) should be {module.name!r}")
    if abs(suite.total_points - module.points) > 1e-9:
        out.append(f"{where}: cases sum to {suite.total_points:g} points, course.yml "
                   f"modules[{module.number}].points says {module.points:g}")
    for case in suite.cases:
        if case.points <= 0:
            out.append(f"{where}: case {case.name}: has {case.points:g} points")
        if not case.hint.strip():
            out.append(f"{where}: case {case.name}: has no hint for students")
    out += [f"{where}: {p}" for p in suite.check_units()]
    if suite.units:
        from autograder.standins import StandinError, extract  # noqa: PLC0415

        try:
            extract(paths.REFERENCE.joinpath(f"{module.slug}.py").read_text(encoding="utf-8"),
                    {u.name: u.entries for u in suite.units.values()})
        except (OSError, StandinError) as exc:
            out.append(f"{where}: units: {exc}")
    return out


def _dates(course: Course) -> list[str]:
    out = []
    mods = course.modules
    for a, b in zip(mods, mods[1:], strict=False):
        if course.local_time(b.release) < course.local_time(a.release):
            out.append(f"course.yml: modules {b.name}: released {b.release}, before "
                       f"{a.name} ({a.release}); releases follow the syllabus order")
        if course.local_time(b.due) < course.local_time(a.due):
            out.append(f"course.yml: modules {b.name}: due {b.due}, before {a.name} ({a.due})")
    for m in mods:
        days = (course.local_time(m.due) - course.local_time(m.release)).days
        if days > MAX_WINDOW_DAYS:
            out.append(f"course.yml: modules {m.name}: open {days} days (release {m.release}, "
                       f"due {m.due}); is a date wrong?")
    span = (course.local_time(mods[-1].due) - course.local_time(mods[0].release)).days
    if span > MAX_TERM_DAYS:
        out.append(f"course.yml: the term runs {span} days from the first release to the last "
                   "due date; is a year wrong?")
    return out


def check_course(course: Course) -> CheckReport:
    """Every problem found, one line each (file: field or line: what is wrong)."""
    from autograder.milestones import PROVIDERS_DIR
    from tito.release import sync

    rep = CheckReport()
    stale = set(sync(course, check=True))
    for m in course.modules:
        has_solution, has_suite = solution_path(m).exists(), suite_path(m).exists()
        if not has_solution and not has_suite:
            rep.declared.append(m)
            continue
        if has_solution != has_suite:
            missing = (f"autograder/suites/{m.name}/suite.py" if has_solution
                       else f"solutions/{m.name}/{m.name}.py")
            rep.problems.append(f"{m.name}: half built: {missing} is missing")
            continue
        rep.built.append(m)
        rep.problems += scan(solution_path(m))[1]
        rep.problems += _suite_problems(m)
        if m.name in stale:
            rep.problems.append(f"tinytorch_ref/{m.slug}.py: out of date with its solution "
                                "module; run `tito sync`")
        if not (paths.RELEASE / m.name / f"{m.name}.ipynb").exists():
            rep.problems.append(f"student_release/{m.name}: not released; run "
                                f"`tito release {m.number:02d}`")
        if not (paths.REPO_ROOT / "tests" / "fixtures" / "buggy" / f"{m.name}.py").exists():
            rep.problems.append(f"tests/fixtures/buggy/{m.name}.py: missing (at least five "
                                "plausible bugs the hidden suite must catch)")
    built = {m.number for m in rep.built}
    for ms in course.milestones:
        # a submitted-weights milestone has no provider: the parent scores the file itself
        if ms.graded_with in built and not ms.weights and not (PROVIDERS_DIR /
                                                                f"{ms.id}.py").exists():
            rep.problems.append(f"course.yml: milestones {ms.id}: graded with module "
                                f"{ms.graded_with:02d}, which is built, but "
                                f"autograder/milestones/providers/{ms.id}.py is missing")
    rep.problems += _dates(course)
    return rep
