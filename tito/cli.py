"""tito — the TinyTorch course command line. Commands forward to plain functions.

Exit codes (every command, see coursekit.errors): 0 success; 1 the work found problems (a leak, a
kill rate below the gate, `course check` problems); 2 bad input, as one line ``tito: ...`` on
stderr.
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path
from typing import Any, Callable

# NOTE: before NumPy loads (BLAS reads it once): the trusted parent's own NumPy work (scoring
# milestones on held-out data, in `tito grade`, a regrade and its local Dask workers) runs BLAS
# on one thread, as the sandboxed children and the Gradescope image do.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import click  # noqa: E402

from coursekit.course import Course, CourseError, Module, load_course  # noqa: E402
from coursekit.errors import Interrupted, UserError  # noqa: E402


def _friendly(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn known input errors into one line and exit code 2."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from coursebuild.release import ReleaseError
        from coursekit.export import ExportError

        try:
            return fn(*args, **kwargs)
        except (CourseError, ExportError, ReleaseError, FileNotFoundError) as exc:
            raise UserError(str(exc)) from None

    return wrapper


def _course(ctx: click.Context) -> Course:
    obj = ctx.ensure_object(dict)
    if "course" not in obj:
        try:
            obj["course"] = load_course(obj.get("course_path"))
        except CourseError as exc:
            raise UserError(str(exc)) from None
    return obj["course"]


class _TitoGroup(click.Group):
    """The ``tito`` group. The gradebook and regrade commands are imported when one of them is
    run or listed: their imports (pandas among them) would add about 0.3 s of CPU to every
    other command."""

    #: command name -> (module, attribute)
    LAZY = {"gradebook": ("gradebook.cli", "gradebook"),
            "regrade": ("staff.regrade.cli", "regrade"),
            "synth-export": ("staff.regrade.cli", "synth_export_cmd")}

    def invoke(self, ctx: click.Context) -> Any:
        """Ctrl-C: stop every child process this command started and say so in one line
        (``tito: interrupted (Ctrl-C) ...``, exit 130), never a traceback."""
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            stopped = 0
            harness = sys.modules.get("autograder.harness.isolation")
            if harness is not None:
                stopped = harness.abort_all()
            raise Interrupted(
                "interrupted (Ctrl-C)" + (f"; stopped {stopped} child process(es)"
                                          if stopped else "")) from None

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.LAZY})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.LAZY and cmd_name not in self.commands:
            import importlib

            module, attr = self.LAZY[cmd_name]
            try:
                command = getattr(importlib.import_module(module), attr)
            except ImportError:  # pragma: no cover - both packages are part of the repo
                return None
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)


@click.group(cls=_TitoGroup)
@click.option("--course", "course_path", type=click.Path(dir_okay=False), default=None,
              envvar="TITO_COURSE", help="course.yml to use (default: the repository's).")
@click.pass_context
def cli(ctx: click.Context, course_path: str | None) -> None:
    """TinyTorch course tools for students and staff."""
    ctx.ensure_object(dict)["course_path"] = course_path


# ----------------------------------------------------------------------------- course
@cli.group()
def course() -> None:
    """Inspect course.yml."""


@course.command("check")
@click.pass_context
def course_check(ctx: click.Context) -> None:
    """Validate course.yml and everything it points at: solution modules and their markers,
    hidden suites and their points, releases, milestones, dates. Exit 1 on any problem.

    Example: tito course check
    """
    from coursebuild.release import span_text
    from staff.check import check_course

    c = _course(ctx)
    rep = check_course(c)
    click.echo(f"{c.course.code} {c.course.name} — {c.course.term}: {len(c.modules)} modules "
               f"(built: {span_text([m.number for m in rep.built])}; declared only: "
               f"{span_text([m.number for m in rep.declared])}), {len(c.milestones)} milestones, "
               f"tracks: {', '.join(t.id for t in c.tracks)}")
    for problem in rep.problems:
        click.echo(f"tito: {problem}", err=True)
    if rep.problems:
        click.echo(f"tito: {len(rep.problems)} problem(s) found", err=True)
        sys.exit(1)


@course.command("syllabus")
@click.option("--track", "track_id", default=None,
              help="Track id from course.yml (default: every track).")
@click.option("-o", "--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder to write into (default: build/syllabus).")
@click.pass_context
@_friendly
def course_syllabus(ctx: click.Context, track_id: str | None, out: Path | None) -> None:
    """Write the syllabus of a track (Markdown and HTML) from course.yml and the lessons.

    Example: tito course syllabus --track foundation
    """
    from coursebuild.syllabus import write_syllabus
    from coursekit import paths

    c = _course(ctx)
    tracks = [c.track(track_id).id] if track_id else [t.id for t in c.tracks]
    for t in tracks:
        md, page = write_syllabus(c, t, out or paths.BUILD / "syllabus")
        click.echo(f"wrote {md} and {page.name}")


@course.command("modules")
@click.pass_context
def course_modules(ctx: click.Context) -> None:
    """List the modules in syllabus order with points and dates."""
    from coursekit.paths import solution_path

    c = _course(ctx)
    for m in c.modules:
        have = "ready" if solution_path(m).exists() else "-"
        click.echo(f"{m.name:<18} {m.tier:<13} {m.points:>5g} pts  due {m.due}  {have}")


@cli.group()
def module() -> None:
    """Author modules."""


@module.command("new")
@click.argument("number", type=int)
@click.argument("slug")
@click.option("--title", default=None, help="Title for a module not yet in course.yml.")
@click.pass_context
@_friendly
def module_new(ctx: click.Context, number: int, slug: str, title: str | None) -> None:
    """Scaffold module NUMBER SLUG: solution module, hidden suite, plausible bugs (and a
    course.yml entry if it has none), a worked example that passes every pipeline check.

    Example: tito module new 14 profiling
    """
    from coursebuild.scaffold import new_module
    from coursekit import paths

    for path in new_module(number=number, slug=slug, title=title,
                           course_file=ctx.obj.get("course_path")):
        click.echo(f"wrote {path.relative_to(paths.REPO_ROOT) if path.is_relative_to(paths.REPO_ROOT) else path}")
    click.echo(f"next: tito sync && tito release {number:02d}, then "
               f"pytest -k {number:02d}_{slug} (contract, authoring, notebook) and "
               f"tito suite-strength {number:02d}; see docs/authoring.md")


# ----------------------------------------------------------------------------- build
@cli.command()
@click.option("--check", is_flag=True, help="Only report modules whose reference is stale.")
@click.pass_context
@_friendly
def sync(ctx: click.Context, check: bool) -> None:
    """Regenerate tinytorch_ref/ from solutions/ (the exporter, reference mode)."""
    from coursebuild.release import sync as do_sync

    changed = do_sync(_course(ctx), check=check)
    if check and changed:
        click.echo("out of sync: " + ", ".join(changed) + " (run: tito sync)", err=True)
        sys.exit(1)
    click.echo(("updated: " + ", ".join(changed)) if changed else "tinytorch_ref is in sync")


def _modules(c: Course, module: str | None, all_: bool, *, suite: bool = True) -> list:
    """The modules a verb works on: MODULE (it must be built) or, with --all, every built one.

    ``suite``: the verb needs the hidden suite too (grading, packaging, suite strength).
    """
    from coursebuild.release import available_modules, built_modules, require_built

    if all_:
        return built_modules(c) if suite else available_modules(c)
    if not module:
        raise UserError("name a MODULE (01, 1, 01_tensor or tensor) or pass --all")
    return [require_built(c, module, suite=suite)]


@cli.command()
@click.argument("module", required=False)
@click.option("--all", "all_", is_flag=True, help="Every module that has a solution.")
@click.pass_context
@_friendly
def release(ctx: click.Context, module: str | None, all_: bool) -> None:
    """Build the otter master and the student release of MODULE, then leak-scan."""
    from coursebuild.release import release as do_release
    from coursebuild.release import sync as do_sync

    c = _course(ctx)
    do_sync(c)
    for r in do_release(c, _modules(c, module, all_, suite=False)):
        click.echo(f"released {r.module}: {r.notebook} ({len(r.tests)} public test files)")
    click.echo("leak scan: clean")


@cli.command()
@click.option("--to", "to", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="The student repository folder (outside this repository).")
@click.option("--as-of", "as_of", default=None,
              help="'YYYY-MM-DD HH:MM' or 'YYYY-MM-DD' in the course time zone (default: now).")
@click.option("--commit", is_flag=True, help="Commit the change when --to is a git work tree.")
@click.pass_context
@_friendly
def publish(ctx: click.Context, to: Path, as_of: str | None, commit: bool) -> None:
    """Publish the modules released by a date into the student repository.

    Modules whose release time has not come appear only as placeholders in the student
    package. Run `tito release --all` first. The course checks run first: a problem in a
    module that would be published (or in the course) refuses the publish, one line per
    problem, exit 1; the leak scan runs on what is published.

    Example: tito publish --to ../cs249-student --as-of "2027-02-03 09:00" --commit
    """
    from coursebuild.release import span_text
    from staff.publish import PublishRefused, parse_as_of
    from staff.publish import publish as do_publish

    c = _course(ctx)
    try:
        res = do_publish(c, to=to, as_of=parse_as_of(c, as_of), commit=commit)
    except PublishRefused as refused:
        for problem in refused.problems:
            click.echo(f"tito: {problem}", err=True)
        click.echo(f"tito: {refused}", err=True)
        sys.exit(1)
    click.echo(f"published modules {span_text([m.number for m in res.released])} as of "
               f"{res.as_of:%Y-%m-%d %H:%M} to {res.target}: {len(res.changed)} file(s) changed"
               + ("; committed" if res.committed else ""))
    for m in res.not_built:
        click.echo(f"note: {m.name} was to be released on {m.release} but is not built "
                   "(no solution module and no hidden suite): not published")
    for problem in res.later:
        click.echo(f"note: not released yet, fix before it is: {problem}")
    if res.upcoming is not None:
        click.echo(f"next: {res.upcoming.name} on {res.upcoming.release}")


@cli.command("leak-scan")
@click.pass_context
def leak_scan(ctx: click.Context) -> None:
    """Scan student_release/ for solution code, markers and hidden tests."""
    from coursebuild.leakscan import scan

    problems = scan(_course(ctx))
    for p in problems:
        click.echo(p, err=True)
    if problems:
        sys.exit(1)
    click.echo("leak scan: clean")


@cli.command()
@click.argument("module")
@click.option("--notebook", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Notebook to export (default: student_release/NN_slug/NN_slug.ipynb).")
@click.option("--package", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Package folder to write into (default: student_release/tinytorch).")
@click.pass_context
@_friendly
def export(ctx: click.Context, module: str, notebook: Path | None, package: Path | None) -> None:
    """Student: copy your notebook's '#| export' cells into your tinytorch package."""
    from coursebuild.release import require_built
    from coursekit import paths
    from coursekit.export import export_module, write_module

    m = require_built(_course(ctx), module, suite=False)
    nb = notebook or paths.RELEASE / m.name / f"{m.name}.ipynb"
    pkg = package or paths.RELEASE / "tinytorch"
    text = export_module(nb, slug=m.slug, number=m.number, title=m.title, mode="student")
    click.echo(f"exported {nb.name} -> {write_module(text, pkg, m.slug)}")


# ----------------------------------------------------------------------------- grading
@cli.command()
@click.argument("module", required=False)
@click.option("--all", "all_", is_flag=True, help="Every module that has a hidden suite.")
@click.option("-o", "--out", type=click.Path(path_type=Path), default=None,
              help="Zip path (default: build/autograder/NN_slug.zip).")
@click.option("--extensions", type=click.Path(path_type=Path, exists=True), default=None,
              help="Extensions CSV (the gradebook's): an extended module stays open until the "
                   "extension passes, so later modules keep grading on the student's own copy.")
@click.option("--jobs", type=click.IntRange(min=1), default=2, show_default=True,
              help="Reference processes at once: with --all, modules built side by side; "
                   "a single module's goldens bank (and the last one's) split into blocks of "
                   "variants. The zips are the same for any number.")
@click.pass_context
@_friendly
def autograder(ctx: click.Context, module: str | None, all_: bool, out: Path | None,
               extensions: Path | None, jobs: int) -> None:
    """Build the Gradescope autograder zip for MODULE: one zip serves the whole term.

    Each submission is graded with the earlier modules whose window has closed by then (due +
    grace + late window, after any extension) on the course's reference, and open ones on the
    student's own upload (or the release stub): decided at grading time, from the dates the zip
    carries. Rebuild only when the course changes (suite, reference, course.yml, extensions).
    """
    from coursekit import paths
    from tito.grading import AutograderError, build_autograders

    c = _course(ctx)

    def target(m: Module) -> Path:
        return out if (out and not all_) else paths.BUILD / "autograder" / f"{m.name}.zip"

    try:
        for built in build_autograders(course=c, modules=_modules(c, module, all_),
                                       out_zip=target, extensions=extensions, jobs=jobs):
            click.echo(f"built {built}")
    except AutograderError as exc:
        raise UserError(str(exc)) from None


@cli.command()
@click.argument("module")
@click.argument("submission", type=click.Path(path_type=Path))
@click.option("-o", "--out", type=click.Path(path_type=Path), default=Path("results.json"),
              show_default=True, help="Where to write results.json.")
@click.option("--metadata", type=click.Path(path_type=Path), default=None,
              help="A submission_metadata.json to record (lateness is the gradebook's job).")
@click.option("--extensions", type=click.Path(path_type=Path, exists=True), default=None,
              help="Extensions CSV (the gradebook's): extended modules stay open longer.")
@click.option("--as-of", "as_of", default=None,
              help="Decide which earlier modules are closed as of this time ('YYYY-MM-DD "
                   "HH:MM' in the course time zone; default: now), e.g. when the submission "
                   "was graded on Gradescope.")
@click.pass_context
@_friendly
def grade(ctx: click.Context, module: str, submission: Path, out: Path,
          metadata: Path | None, extensions: Path | None, as_of: str | None) -> None:
    """Grade one student notebook as Gradescope would; always writes a valid results.json.

    SUBMISSION is the notebook, or the folder of a submission. Earlier modules still open for
    late work come from the student's notebooks uploaded with it: those in the folder, or
    beside the notebook (the lines after the score say which were used and why). Exit 1 when
    part of the result is pending because of a course-side failure (e.g. missing test data).
    """
    from coursebuild.release import require_built
    from coursekit.errors import CourseSideProblem
    from staff.publish import parse_as_of
    from tito.grading import (
        earlier_module_lines,
        grade_submission,
        pending_problem,
        write_config_failure,
    )

    try:
        c = _course(ctx)
        mod = require_built(c, module)
    except (UserError, CourseError) as exc:
        # even a configuration error leaves a valid results.json (score 0, the reason)
        write_config_failure(out, str(exc.format_message() if isinstance(exc, UserError)
                                      else exc))
        raise UserError(str(exc.format_message() if isinstance(exc, UserError) else exc)
                        ) from None
    when = None if as_of is None else parse_as_of(c, as_of)
    results = grade_submission(course=c, module=mod, submission=submission, out=out,
                               metadata=metadata, extensions=extensions, now=when)
    total = sum(t["max_score"] for t in results.get("tests", []))
    click.echo(f"{submission.name}: {results['score']:g} / {total:g} -> {out}")
    for line in earlier_module_lines(results):
        click.echo(line)
    problem = pending_problem(results)
    if problem:
        raise CourseSideProblem(problem)


@cli.command()
@click.argument("module", default="01")
@click.option("-o", "--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder to write class_NN_slug/ into (default: samples/).")
@click.pass_context
@_friendly
def samples(ctx: click.Context, module: str, out: Path | None) -> None:
    """Regenerate the sample class of MODULE (samples/class_NN_slug/) from the release.

    Example: tito samples 03
    """
    from coursebuild.release import require_built
    from coursebuild.samples import write_samples

    c = _course(ctx)
    for folder in write_samples(c, require_built(c, module, suite=False), out):
        click.echo(f"wrote {folder}")


@cli.command("suite-strength")
@click.argument("module", required=False)
@click.option("--all", "all_", is_flag=True, help="Every module that has a hidden suite.")
@click.option("--min-rate", type=float, default=0.9, show_default=True,
              help="Exit 1 when a module's kill rate is below this.")
@click.option("--jobs", type=int, default=2, show_default=True)
@click.pass_context
@_friendly
def suite_strength(ctx: click.Context, module: str | None, all_: bool, min_rate: float,
                   jobs: int) -> None:
    """Mutation-test hidden suites: mutants of the solution lines + the plausible bugs.

    Writes build/mutation/NN_slug.md (survivors listed) and prints the kill rate per module.
    """
    from autograder.harness.mutation import module_mutation
    from coursekit import paths

    c = _course(ctx)
    low = []
    for m in _modules(c, module, all_):
        rep = module_mutation(c, m, jobs=jobs)
        out = paths.BUILD / "mutation" / f"{m.name}.md"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(rep.to_markdown(), encoding="utf-8")
        click.echo(f"{m.name:<18} killed {len(rep.killed):>3} of {rep.total:<3} "
                   f"({rep.rate:6.1%}), {len(rep.equivalent)} equivalent -> {out}")
        if rep.rate < min_rate:
            low.append(m.name)
    if low:
        click.echo(f"below {min_rate:.0%}: {', '.join(low)}", err=True)
        sys.exit(1)


@cli.command()
@click.argument("module")
@click.argument("inputs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--public", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="A folder of known public solutions to compare this term with.")
@click.option("-o", "--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Report folder (default build/integrity/NN_slug; made owner-only).")
@click.option("--store", default=None,
              help="Gradebook store (path or URL) holding earlier terms (default: course.yml's).")
@click.option("--term", default=None, help="This term's label (default: course.yml's term).")
@click.option("--no-record", is_flag=True,
              help="Do not record this term's submissions in the store.")
@click.option("--top", type=int, default=10, show_default=True, help="Pairs printed here.")
@click.pass_context
@_friendly
def integrity(ctx: click.Context, module: str, inputs: tuple[Path, ...], public: Path | None,
              out: Path | None, store: str | None, term: str | None, no_record: bool,
              top: int) -> None:
    """Flag pairs of submissions whose own code is too alike, for staff to read.

    INPUTS are Gradescope "Export Submissions" archives (zip or unpacked) and folders of
    notebooks. Code the course provided never counts. The report (HTML + CSV) is written
    owner-only; it flags, it never changes a grade.

    Example: tito integrity 03 assignment_7003_export.zip --public seen_online/
    """
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from gradebook.errors import GradebookError
    from staff.integrity import IntegrityError, run_integrity

    try:
        res = run_integrity(module=module, inputs=list(inputs), course=_course(ctx),
                            public=public, out=out, store=store, term=term,
                            record=not no_record)
    except (IntegrityError, GradebookError) as exc:
        raise UserError(str(exc)) from None
    current = sum(d.kind == "current" for d in res.docs)
    table = Table(title=f"{len(res.pairs)} pairs of {current} submissions; "
                        f"{len(res.flagged)} flagged (>= {res.settings.flag_score:.0%})")
    for col in ("#", "student A", "student B", "similarity", "shared"):
        table.add_column(col, justify="right" if col in ("#", "similarity", "shared") else "left")
    for rank, p in enumerate(res.pairs[:top], 1):
        table.add_row(str(rank), escape(res.docs[p.a].label), escape(res.docs[p.b].label),
                      f"{p.score:.0%}", str(p.shared))
    console = Console()
    console.print(table)
    if res.groups:
        console.print(f"{len(res.groups)} group(s) of three or more: "
                      + "; ".join(escape(", ".join(res.docs[i].label for i in g))
                                  for g in res.groups))
    if res.unreadable:
        shown = "; ".join(escape(f"{d.label}: {d.problem}") for d in res.unreadable[:10])
        more = f" (and {len(res.unreadable) - 10} more)" if len(res.unreadable) > 10 else ""
        console.print(f"{len(res.unreadable)} submission(s) could not be read and were compared "
                      f"with nothing; every other pair was compared: {shown}{more}")
    console.print(f"report: {res.html}  ({res.csv.name} beside it; owner-only)")
    if res.recorded:
        console.print(f"recorded {res.recorded} submission(s) of this term in the store")


@cli.command()
@click.pass_context
def demo(ctx: click.Context) -> None:
    """The main job on embedded defaults: release, autograders, grade the sample class,
    gradebook and report."""
    from tito.demo import run_demo

    try:
        run_demo(_course(ctx))
    except (CourseError, FileNotFoundError) as exc:
        raise UserError(str(exc)) from None


def main() -> None:
    cli(obj={})


if __name__ == "__main__":
    main()
