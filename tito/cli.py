"""tito — the TinyTorch course command line. Commands forward to plain functions.

Exit codes: 0 success; 1 the work failed (e.g. a leak found); 2 bad input (one line on stderr).
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import Any, Callable

import click

from tito.course import Course, CourseError, load_course


class UserError(click.ClickException):
    exit_code = 2

    def show(self, file: Any = None) -> None:
        click.echo(f"tito: {self.format_message()}", err=True)


def _friendly(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn known input errors into one line and exit code 2."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from tito.export import ExportError
        from tito.release import ReleaseError

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


@click.group()
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
    """Validate course.yml and summarise it."""
    c = _course(ctx)
    click.echo(f"{c.course.code} {c.course.name} — {c.course.term}: {len(c.modules)} modules, "
               f"{len(c.milestones)} milestones, tracks: {', '.join(t.id for t in c.tracks)}")


@course.command("modules")
@click.pass_context
def course_modules(ctx: click.Context) -> None:
    """List the modules in syllabus order with points and dates."""
    from tito.release import solution_path

    c = _course(ctx)
    for m in c.modules:
        have = "ready" if solution_path(m).exists() else "-"
        click.echo(f"{m.name:<18} {m.tier:<13} {m.points:>5g} pts  due {m.due}  {have}")


# ----------------------------------------------------------------------------- build
@cli.command()
@click.option("--check", is_flag=True, help="Only report modules whose reference is stale.")
@click.pass_context
@_friendly
def sync(ctx: click.Context, check: bool) -> None:
    """Regenerate tinytorch_ref/ from solutions/ (the exporter, reference mode)."""
    from tito.release import sync as do_sync

    changed = do_sync(_course(ctx), check=check)
    if check and changed:
        click.echo("out of sync: " + ", ".join(changed) + " (run: tito sync)", err=True)
        sys.exit(1)
    click.echo(("updated: " + ", ".join(changed)) if changed else "tinytorch_ref is in sync")


def _modules(c: Course, module: str | None, all_: bool) -> list:
    from tito.release import available_modules

    if all_:
        return available_modules(c)
    if not module:
        raise UserError("name a MODULE (01, 1, 01_tensor or tensor) or pass --all")
    return [c.module(module)]


@cli.command()
@click.argument("module", required=False)
@click.option("--all", "all_", is_flag=True, help="Every module that has a solution.")
@click.pass_context
@_friendly
def release(ctx: click.Context, module: str | None, all_: bool) -> None:
    """Build the otter master and the student release of MODULE, then leak-scan."""
    from tito.release import release as do_release
    from tito.release import sync as do_sync

    c = _course(ctx)
    do_sync(c)
    for r in do_release(c, _modules(c, module, all_)):
        click.echo(f"released {r.module}: {r.notebook} ({len(r.tests)} public test files)")
    click.echo("leak scan: clean")


@cli.command("leak-scan")
@click.pass_context
def leak_scan(ctx: click.Context) -> None:
    """Scan student_release/ for solution code, markers and hidden tests."""
    from tito.leakscan import scan

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
    from tito import paths
    from tito.export import export_module, write_module

    m = _course(ctx).module(module)
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
              help="Extensions CSV (the gradebook's): an extended module stays open, so its "
                   "reference is left out of later modules' zips until the extension passes.")
@click.pass_context
@_friendly
def autograder(ctx: click.Context, module: str | None, all_: bool, out: Path | None,
               extensions: Path | None) -> None:
    """Build the Gradescope autograder zip for MODULE.

    Earlier modules whose submission window has closed (due + grace + late window, after any
    extension) are graded on the course's reference; open ones on the student's own upload.
    Rebuild after a module closes.
    """
    from tito import paths
    from tito.grading import build_autograder

    c = _course(ctx)
    mods = [m for m in _modules(c, module, all_) if (paths.SUITES / m.name).exists()]
    for m in mods:
        target = out if (out and not all_) else paths.BUILD / "autograder" / f"{m.name}.zip"
        built = build_autograder(course=c, module=m, out_zip=target, extensions=extensions)
        click.echo(f"built {built}")


@cli.command()
@click.argument("module")
@click.argument("submission", type=click.Path(path_type=Path))
@click.option("-o", "--out", type=click.Path(path_type=Path), default=Path("results.json"),
              show_default=True, help="Where to write results.json.")
@click.option("--metadata", type=click.Path(path_type=Path), default=None,
              help="A submission_metadata.json to record (lateness is the gradebook's job).")
@click.option("--extensions", type=click.Path(path_type=Path, exists=True), default=None,
              help="Extensions CSV (the gradebook's): extended modules stay open longer.")
@click.pass_context
@_friendly
def grade(ctx: click.Context, module: str, submission: Path, out: Path,
          metadata: Path | None, extensions: Path | None) -> None:
    """Grade one student notebook; always writes a valid results.json."""
    from tito.grading import grade_submission, write_config_failure

    try:
        c = _course(ctx)
        mod = c.module(module)
    except (UserError, CourseError) as exc:
        # even a configuration error leaves a valid results.json (score 0, the reason)
        write_config_failure(out, str(exc.format_message() if isinstance(exc, UserError)
                                      else exc))
        raise UserError(str(exc.format_message() if isinstance(exc, UserError) else exc)
                        ) from None
    results = grade_submission(course=c, module=mod, submission=submission, out=out,
                               metadata=metadata, extensions=extensions)
    total = sum(t["max_score"] for t in results.get("tests", []))
    click.echo(f"{submission.name}: {results['score']:g} / {total:g} -> {out}")


@cli.command()
@click.argument("module", default="01")
@click.pass_context
@_friendly
def samples(ctx: click.Context, module: str) -> None:
    """Regenerate the sample class of MODULE (samples/class_NN_slug/) from the release."""
    from tito.samples import write_samples

    c = _course(ctx)
    for folder in write_samples(c, c.module(module)):
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
    from tito import paths

    c = _course(ctx)
    mods = [m for m in _modules(c, module, all_) if (paths.SUITES / m.name / "suite.py").exists()]
    low = []
    for m in mods:
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
@click.pass_context
def demo(ctx: click.Context) -> None:
    """The main job on embedded defaults: release, autograders, grade the sample class,
    gradebook and report."""
    from tito.demo import run_demo

    try:
        run_demo(_course(ctx))
    except (CourseError, FileNotFoundError) as exc:
        raise UserError(str(exc)) from None


def _register_optional() -> None:
    try:
        from gradebook.cli import gradebook as gradebook_group
    except ImportError:  # pragma: no cover - the gradebook package is part of the repo
        return
    cli.add_command(gradebook_group, "gradebook")
    from autograder.regrade_cli import regrade as regrade_cmd

    cli.add_command(regrade_cmd, "regrade")


_register_optional()


def main() -> None:
    cli(obj={})


if __name__ == "__main__":
    main()
