"""`tito course check`: course.yml and everything it points at, checked in one pass.

course.yml itself is validated on load (schema, cross-references, plausible ranges). This adds
what needs the repository: for every declared module, whether it is built (solution module and
hidden suite, or neither: half a module is a problem), its solution markers
(:mod:`coursebuild.authoring`), that its suite loads, names the module and sums to course.yml's points
with a hint on every case, that its units are declared and found in the reference (every case
grades one, no stand-in cycle), that the reference and the release were regenerated, that a buggy
catalogue exists; that every milestone graded with a built module has its grader; that dates
run in syllabus order; that no category drops all of a track's items (``drop_lowest``); that
the rosters the course uses (the sample term's, the gradebook store's) name only its tracks (a
misspelt track id); and that each track's modules fit its credit hours.

Each problem is one line; :attr:`CheckReport.findings` also says which module a problem is
about (None: the course as a whole), so ``tito publish`` can refuse exactly the modules it
would publish.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from coursebuild.authoring import scan
from coursekit import paths
from coursekit.course import Course, Module
from coursekit.paths import solution_path, suite_path

#: A module's window (release to due) longer than this is probably a typo in a date.
MAX_WINDOW_DAYS = 60
#: The whole term, first release to last due; longer is probably a wrong year.
MAX_TERM_DAYS = 200


@dataclass
class CheckReport:
    built: list[Module] = field(default_factory=list)
    declared: list[Module] = field(default_factory=list)
    #: (module name or None for the whole course, one line)
    findings: list[tuple[str | None, str]] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        """Every problem, one line each."""
        return [text for _, text in self.findings]

    def add(self, module: str | None, lines: list[str]) -> None:
        self.findings += [(module, line) for line in lines]

    def about(self, names: set[str]) -> list[str]:
        """The problems of the modules ``names`` and of the course as a whole."""
        return [text for m, text in self.findings if m is None or m in names]


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
    from coursebuild.release import sync

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
            rep.add(m.name, [f"{m.name}: half built: {missing} is missing"])
            continue
        rep.built.append(m)
        rep.add(m.name, scan(solution_path(m))[1])
        rep.add(m.name, _suite_problems(m))
        if m.name in stale:
            rep.add(m.name, [f"tinytorch_ref/{m.slug}.py: out of date with its solution "
                             "module; run `tito sync`"])
        if not (paths.RELEASE / m.name / f"{m.name}.ipynb").exists():
            rep.add(m.name, [f"student_release/{m.name}: not released; run "
                             f"`tito release {m.number:02d}`"])
        if not paths.bugs_catalogue(m.name).exists():
            rep.add(m.name, [f"autograder/suites/{m.name}/bugs.py: missing (at least five "
                             "plausible bugs the hidden suite must catch)"])
    built = {m.number for m in rep.built}
    for ms in course.milestones:
        # a submitted-weights milestone has no provider: the parent scores the file itself
        if ms.graded_with in built and not ms.weights and not (PROVIDERS_DIR /
                                                                f"{ms.id}.py").exists():
            owner = course.module(ms.graded_with).name
            rep.add(owner, [f"course.yml: milestones {ms.id}: graded with module "
                            f"{ms.graded_with:02d}, which is built, but "
                            f"autograder/milestones/providers/{ms.id}.py is missing"])
    rep.add(None, _dates(course))
    rep.add(None, _drop_problems(course))
    rep.add(None, _roster_track_problems(course))
    rep.add(None, _syllabus_problems(course))
    return rep


def _syllabus_problems(course: Course) -> list[str]:
    """A track whose modules' hours exceed its credit hours; a module of a track that no
    course learning outcome maps to (when course.yml declares outcomes)."""
    from coursebuild.syllabus import HOURS_PER_CREDIT

    out = []
    for i, t in enumerate(course.tracks):
        hours = sum(course.module(n).hours for n in t.modules)
        if hours > t.credits * HOURS_PER_CREDIT:
            out.append(f"course.yml: tracks[{i}]: its modules take {hours:g} hours, more than "
                       f"its {t.credits} credit(s) allow ({t.credits * HOURS_PER_CREDIT} h); "
                       "lower modules' hours, drop modules or add credits")
    if course.outcomes:
        mapped = {n for o in course.outcomes for n in o.modules}
        mapped |= {ms.graded_with for o in course.outcomes for ms in course.milestones
                   if ms.id in o.milestones}
        for m in course.modules:
            if m.number not in mapped and any(m.number in t.modules for t in course.tracks):
                out.append(f"course.yml: outcomes: no course learning outcome maps to module "
                           f"{m.name}; add it to the outcome(s) its work assesses")
    return out


def _drop_problems(course: Course) -> list[str]:
    """A category whose ``drop_lowest`` leaves no item of it counted in some track (the
    policy would quietly keep one: a typo like 25 must not pass)."""
    from gradebook.items import catalogue, policy_from_course, track_items

    items = catalogue(course)
    pol = policy_from_course(course)
    out = []
    for i, cat in enumerate(course.grading.categories):
        if cat.drop_lowest <= 0:
            continue
        for t in course.tracks:
            its = track_items(items, pol, t.id)
            n = int((its["category"] == cat.id).sum())
            if n and cat.drop_lowest >= n:
                out.append(f"course.yml: grading.categories[{i}].drop_lowest: "
                           f"{cat.drop_lowest} would drop every item of {cat.id!r} in track "
                           f"{t.id} ({n} item(s)); at most {n - 1}")
    return out


def _roster_track_problems(course: Course) -> list[str]:
    """Track ids that a roster the course uses names but course.yml does not have (a
    misspelt or renamed track id): the sample term's roster, and the gradebook store's
    current roster when the store exists."""
    import csv

    known = {t.id for t in course.tracks}
    found: dict[str, dict[str, int]] = {}  # roster -> track -> students
    sample = paths.REPO_ROOT / "samples" / "term" / "roster.csv"
    if sample.is_file():
        with open(sample, encoding="utf-8-sig", newline="") as fh:
            for row in csv.DictReader(fh):
                track = (row.get("Track") or "").strip()
                if track:
                    found.setdefault("samples/term/roster.csv", {}).setdefault(track, 0)
                    found["samples/term/roster.csv"][track] += 1
    found.update(_store_roster_tracks(course))
    out = []
    for where, tracks in found.items():
        for track, count in sorted(tracks.items()):
            if track not in known:
                out.append(f"course.yml: tracks: {where} puts {count} student(s) on track "
                           f"{track!r}, which course.yml does not have (tracks: "
                           f"{', '.join(sorted(known))}); is a track id misspelt?")
    return out


def _store_roster_tracks(course: Course) -> dict[str, dict[str, int]]:
    """``{store: {track: students}}`` of the gradebook store's current roster, when the
    course's store is an SQLite file that exists (nothing is created or written)."""
    import sqlite3

    url = course.course.gradebook_store
    if "://" in url and not url.startswith("sqlite:///"):
        return {}
    path = Path(url.removeprefix("sqlite:///")) if url.startswith("sqlite:///") else Path(url)
    path = path if path.is_absolute() else paths.REPO_ROOT / path
    if not path.is_file():
        return {}
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            rows = conn.execute(
                "SELECT track, COUNT(*) FROM roster WHERE import_id = "
                "(SELECT MAX(id) FROM roster_imports) GROUP BY track").fetchall()
    except sqlite3.Error:
        return {}
    shown = path.relative_to(paths.REPO_ROOT) if path.is_relative_to(paths.REPO_ROOT) else path
    return {f"the gradebook store {shown}": {str(t): int(n) for t, n in rows}} if rows else {}
