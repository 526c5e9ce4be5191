"""`tito module new NN slug`: a new module that already passes every pipeline check.

It writes a complete worked example an author then rewrites section by section, keeping it
green: the solution module (lesson, two functions with docstring scaffolds, solution blocks and
stubs, a public check after each section, a measured experiment, three written questions), the
hidden suite (cases summing to the module's points), and five plausible bugs. A module that is
not yet in course.yml gets an entry (after the last module, released five days after it); one
that is declared there keeps its entry. Nothing is overwritten.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from coursekit import paths
from coursekit.course import COURSE_FILE, Course, CourseError, Module, load_course

TEMPLATES = Path(__file__).resolve().parent / "templates"
_SLUG = re.compile(r"^[a-z][a-z0-9_]*$")


def _fill(template: str, module: Module) -> str:
    share = module.points / 5
    text = (TEMPLATES / template).read_text(encoding="utf-8")
    values = {"__NN__": f"{module.number:02d}", "__SLUG__": module.slug,
              "__TITLE__": module.title, "__NAME__": module.name,
              "__POINTS__": f"{module.points:g}"}
    for i in range(1, 6):
        values[f"__P{i}__"] = f"{share:g}"
    for key, value in values.items():
        text = text.replace(key, value)
    return text


def _course_entry(course: Course, number: int, slug: str, title: str) -> str:
    last = course.modules[-1]
    # five days after the last module, as the schedule steps: release and due both move on
    release = course.local_time(last.release) + dt.timedelta(days=5)
    due = max(course.local_time(last.due) + dt.timedelta(days=5), release + dt.timedelta(days=7))
    fmt = "%Y-%m-%d %H:%M"
    return (f"  - number: {number}\n    slug: {slug}\n    title: {title!r}\n"
            f"    tier: {last.tier}\n    points: {last.points:g}\n"
            f"    written_points: {last.written_points:g}\n    hours: {last.hours:g}\n"
            f"    release: \"{release.strftime(fmt)}\"\n    due: \"{due.strftime(fmt)}\"\n")


def add_to_course(course_file: Path, course: Course, number: int, slug: str, title: str) -> None:
    """Insert a module entry after the last one in course.yml (validated before writing)."""
    text = course_file.read_text(encoding="utf-8")
    marker = re.search(r"^milestones:", text, re.MULTILINE)
    if marker is None:
        raise CourseError(f"{course_file.name}: no 'milestones:' section to insert before")
    head = text[: marker.start()].rstrip("\n") + "\n"
    new = head + _course_entry(course, number, slug, title) + "\n" + text[marker.start():]
    tmp = course_file.with_name(f".{course_file.name}.new")
    tmp.write_text(new, encoding="utf-8")
    try:
        load_course(tmp)
    except CourseError:
        tmp.unlink()
        raise
    tmp.replace(course_file)


def new_module(*, number: int, slug: str, title: str | None = None,
               course_file: Path | None = None) -> list[Path]:
    """Scaffold module ``number`` ``slug``; returns the files written (course.yml first if
    it changed).

    Raises:
        CourseError: a bad slug or number, a module declared under another slug, or files that
            already exist (nothing is written then).
    """
    course_file = Path(course_file or COURSE_FILE)
    if not _SLUG.match(slug):
        raise CourseError(f"slug {slug!r}: use lower-case letters, digits and _ (e.g. "
                          "'profiling')")
    if not 1 <= number <= 99:
        raise CourseError(f"module number {number}: must be between 1 and 99")
    course = load_course(course_file)
    declared = next((m for m in course.modules if m.number == number), None)
    written: list[Path] = []
    if declared is not None and declared.slug != slug:
        raise CourseError(f"course.yml: module {number} is declared as {declared.name}, not "
                          f"{number:02d}_{slug}")
    if declared is None:
        if any(m.slug == slug for m in course.modules):
            raise CourseError(f"course.yml: slug {slug!r} is taken by another module")
        if number <= course.modules[-1].number:
            raise CourseError(f"module {number}: a new module goes after the last one "
                              f"({course.modules[-1].number:02d}); renumbering is by hand")
        name = f"{number:02d}_{slug}"
        targets = _targets(name)
        _refuse_existing(targets)
        add_to_course(course_file, course, number, slug, title or slug.replace("_", " ").title())
        written.append(course_file)
        course = load_course(course_file)
        declared = course.module(number)
    module = declared
    targets = _targets(module.name)
    _refuse_existing(targets)
    for template, target in zip(("module_solution.py.tmpl", "module_suite.py.tmpl",
                                 "module_buggy.py.tmpl"), targets, strict=True):
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(_fill(template, module), encoding="utf-8")
        written.append(target)
    return written


def _targets(name: str) -> list[Path]:
    return [paths.SOLUTIONS / name / f"{name}.py", paths.SUITES / name / "suite.py",
            paths.bugs_catalogue(name)]


def _refuse_existing(targets: list[Path]) -> None:
    existing = [t for t in targets if t.exists()]
    if existing:
        shown = ", ".join(str(t.relative_to(paths.REPO_ROOT)) for t in existing)
        raise CourseError(f"{shown}: already exists; tito module new never overwrites")
