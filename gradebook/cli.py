"""``tito gradebook``: a thin click layer over :mod:`gradebook.api`.

Every command forwards to a keyword-only function; a :class:`GradebookError` becomes one line
on stderr and exit code 1 (``check`` exits 1 when it finds errors).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from coursekit.errors import UserError
from gradebook import api
from gradebook.errors import GradebookError
from gradebook.ingest import IngestReport

F = TypeVar("F", bound=Callable[..., Any])


def _common(fn: F) -> F:
    """Add ``--store`` and ``--course`` and turn GradebookError into ``tito: ...``, exit 2."""

    @click.option("--course", "course", type=click.Path(dir_okay=False, path_type=Path),
                  default=None, help="course.yml to use (default: the repository's).")
    @click.option("--store", "store", default=None,
                  help="Store: a path, sqlite:/// URL or postgresql:// URL (default: course.gradebook_store).")
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("course") is None:
            kwargs["course"] = _root_course()
        try:
            return fn(*args, **kwargs)
        except GradebookError as exc:
            raise UserError(str(exc)) from None

    return wrapper  # type: ignore[return-value]


def _root_course() -> Any:
    """The course ``tito --course FILE`` (or ``$TITO_COURSE``) chose, when the subcommand's
    own ``--course`` is not given: the loaded course, its path, or None (the default)."""
    ctx = click.get_current_context(silent=True)
    obj = ctx.find_root().obj if ctx is not None else None
    if isinstance(obj, dict):
        return obj.get("course") or obj.get("course_path")
    return None


def _as_of(fn: F) -> F:
    return click.option(
        "--as-of", "as_of", default=None,
        help="Count items due by this time ('YYYY-MM-DD HH:MM', course time zone) or 'final' "
        "for every item. Default: the latest due time of an item graded for half the roster.",
    )(fn)


def _print_ingest(report: IngestReport) -> None:
    verb = "would add" if report.dry_run else "added"
    for f in report.files:
        click.echo(
            f"{f.path}: {verb} {f.new} new, {f.regrades} regrade(s)"
            + (f", {f.pending} pending" if f.pending else "")
            + f"; {f.unchanged} unchanged, {f.duplicates} already ingested"
        )
        for note in f.notes:
            click.echo(f"  note: {note}")
    if report.regrades:
        click.echo("regrades (old -> new):")
        for r in report.regrades:
            click.echo(f"  {r['student_ref']:<28} {r['item']:<24} {r['old']:g} -> {r['new']:g}"
                       f" / {r['max']:g}  (submission {r['submission_id']})")
    if report.pending:
        click.echo("pending (course side: not scored, never a 0; fix the cause, then regrade):")
        for r in report.pending:
            kept = ("no score yet" if r["kept"] is None
                    else f"the recorded {r['kept']:g} stays")
            click.echo(f"  {r['student_ref']:<28} {r['item']:<24} {kept}: {r['why']}")
    click.echo(f"total: {report.added} event(s) {verb}" + (" (dry run: nothing written)"
                                                        if report.dry_run else ""))


@click.group("gradebook")
def gradebook() -> None:
    """Per-module results -> course credit: store, policy, exports, reports."""


@gradebook.command("roster")
@click.argument("csv", type=click.Path(dir_okay=False, path_type=Path))
@_common
def roster_cmd(csv: Path, store: str | None, course: Path | None) -> None:
    """Import the roster CSV (Canvas export format; optional Track and Email columns)."""
    s = api.roster(csv, store=store, course=course)
    if s.unchanged:
        click.echo(f"{csv}: roster unchanged ({s.students} students)")
        return
    tracks = ", ".join(f"{k}: {v}" for k, v in sorted(s.tracks.items()))
    click.echo(f"{csv}: {s.students} students ({tracks})")
    for note in s.skipped:
        click.echo(f"  skipped {note}")


@gradebook.command("ingest")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--module", default=None, help="Module of inputs that do not name one.")
@click.option("--item", default=None, help="Item of a grade CSV (e.g. 03, 03:written).")
@click.option("--dry-run", is_flag=True,
              help="Show what would change (regrade diffs); write nothing.")
@click.option("--accept-inconsistent", "accept", default=None, metavar="REASON",
              help="Record scores outside [0, max] or whose totals disagree anyway; the reason "
                   "and the problems are kept with each such score (audited).")
@_common
def ingest_cmd(paths: tuple[Path, ...], module: str | None, item: str | None, dry_run: bool,
               accept: str | None, store: str | None, course: Path | None) -> None:
    """Ingest results.json files, folders, Gradescope grade CSVs or export archives."""
    kwargs: dict[str, Any] = dict(store=store, course=course, module=module, item=item,
                                  dry_run=dry_run, accept=accept)
    if not sys.stderr.isatty():
        _print_ingest(api.ingest(list(paths), **kwargs))
        return
    from rich.progress import Progress

    with Progress(transient=True) as bar:
        task = bar.add_task("ingesting", total=None)

        def advance(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        report = api.ingest(list(paths), progress=advance, **kwargs)
    _print_ingest(report)


@gradebook.command("extensions")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@_common
def extensions_cmd(file: Path, store: str | None, course: Path | None) -> None:
    """Import extensions/accommodations (student, module, due | hours, reason)."""
    n = api.extensions(file, store=store, course=course)
    click.echo(f"{file}: {n} extension(s) added")
    if n:
        click.echo("note: an extension keeps its module open longer for later modules' grading "
                   "too: rebuild their autograder zips with `tito autograder --all "
                   f"--extensions {file}` and upload them before the extended students submit")


@gradebook.command("manual")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")
@_common
def manual_cmd(file: Path, dry_run: bool, store: str | None, course: Path | None) -> None:
    """Import hand-graded written-question scores (student, module, score)."""
    _print_ingest(api.manual(file, store=store, course=course, dry_run=dry_run))


@gradebook.command("override")
@click.argument("student", required=False)
@click.argument("item", required=False)
@click.argument("score", required=False)
@click.option("--reason", default=None, help="Why (required; shown in explain).")
@click.option("--file", "file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Read overrides from a CSV (student, item, score, reason) instead.")
@_common
def override_cmd(student: str | None, item: str | None, score: str | None, reason: str | None,
                 file: Path | None, store: str | None, course: Path | None) -> None:
    """Set an item's final score for one student (SCORE 'clear' removes the override)."""
    if file is not None:
        _print_ingest(api.overrides_file(file, store=store, course=course))
        return
    if not (student and item and score):
        raise click.UsageError("give STUDENT ITEM SCORE --reason TEXT (or --file CSV)")
    _print_ingest(api.override(student, item, score, reason=reason or "", store=store,
                               course=course))


@gradebook.command("build")
@click.option("-o", "--output", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for grades.csv and scores.csv (default: next to the store).")
@_as_of
@_common
def build_cmd(output: Path | None, as_of: str | None, store: str | None,
              course: Path | None) -> None:
    """Compute credit for every student and write grades.csv and scores.csv."""
    c = api.load_course_any(course)
    if output is None:
        with api.open_store(store, c) as st:
            output = st.path.parent
    built = api.build(store=store, course=c, as_of=as_of, output=output)
    g = built.grades
    cut = "every item" if built.as_of is None else built.as_of.tz_convert(c.tz).strftime(
        "%Y-%m-%d %H:%M")
    click.echo(f"{len(g)} students, items due by {cut}; mean {g['percent'].mean():.2f}%")
    counts = g["letter"].value_counts()
    click.echo("letters: " + ", ".join(f"{k} {counts.get(k, 0)}"
                                       for k in built.frames.policy.letters))
    unresolved = int(built.frames.events["student"].isna().sum())
    if unresolved:
        click.echo(f"warning: {unresolved} event(s) match no roster student; run 'check'",
                   err=True)
    click.echo(f"wrote {output / 'grades.csv'} and {output / 'scores.csv'}")


@gradebook.command("export")
@click.option("--canvas", "fmt", flag_value="canvas", help="Canvas gradebook import CSV.")
@click.option("--gradescope", "fmt", flag_value="gradescope", help="Gradescope-style grade CSV.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option("--with-total", is_flag=True,
              help="Canvas: add the course grade as a last column (Canvas imports it as an "
                   "assignment).")
@click.option("--canvas-ids", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Canvas: item,assignment_id CSV (or a Canvas gradebook export) so headers "
                   "are 'Title (id)' and an import updates the existing assignments.")
@_as_of
@_common
def export_cmd(fmt: str | None, output: Path, with_total: bool, canvas_ids: Path | None,
               as_of: str | None, store: str | None, course: Path | None) -> None:
    """Export grades as a Canvas or Gradescope-style CSV."""
    if fmt is None:
        raise click.UsageError("choose --canvas or --gradescope")
    out = api.export(fmt=fmt, output=output, store=store, course=course, as_of=as_of,
                     with_total=with_total, canvas_ids=canvas_ids)
    click.echo(f"wrote {out}")


@gradebook.command("canvas-ids")
@click.argument("canvas_export", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option("--course", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="course.yml to use.")
def canvas_ids_cmd(canvas_export: Path, output: Path, course: Path | None) -> None:
    """Learn each item's Canvas assignment id from a Canvas gradebook export (after the first
    import), for `export --canvas --canvas-ids`.

    Example: tito gradebook canvas-ids canvas_gradebook.csv -o canvas_assignments.csv
    """
    try:
        ids = api.canvas_ids(source=canvas_export, output=output,
                             course=course if course is not None else _root_course())
    except GradebookError as exc:
        raise UserError(str(exc)) from None
    click.echo(f"wrote {output}: {len(ids)} item(s) with a Canvas assignment id")


@gradebook.command("explain")
@click.argument("student")
@_as_of
@_common
def explain_cmd(student: str, as_of: str | None, store: str | None, course: Path | None) -> None:
    """Every number behind a student's grade (SIS User ID, login or email)."""
    click.echo(api.explain(student, store=store, course=course, as_of=as_of))


@gradebook.command("report")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True)
@_as_of
@_common
def report_cmd(output: Path, as_of: str | None, store: str | None, course: Path | None) -> None:
    """Write a self-contained HTML report with plots."""
    click.echo(f"wrote {api.report(output=output, store=store, course=course, as_of=as_of)}")


@gradebook.command("check")
@_as_of
@_common
def check_cmd(as_of: str | None, store: str | None, course: Path | None) -> None:
    """List problems in the inputs; exit 1 if any is an error."""
    found = api.check(store=store, course=course, as_of=as_of)
    for p in found:
        click.echo(str(p))
    errors = sum(p.level == "error" for p in found)
    click.echo(f"{errors} error(s), {len(found) - errors} warning(s)")
    if errors:
        raise SystemExit(1)


@gradebook.command("load-sample")
@_common
def load_sample_cmd(store: str | None, course: Path | None) -> None:
    """Load the bundled sample term (samples/term) into the store."""
    done = api.load_sample(store=store, course=course)
    for key, value in done.items():
        if isinstance(value, IngestReport):
            click.echo(f"{key}: {value.added} event(s) added")
        else:
            click.echo(f"{key}: {value if isinstance(value, int) else 'ok'}")


def main() -> None:  # pragma: no cover - convenience entry point
    """Run the group standalone: ``python -m gradebook.cli``."""
    gradebook()


if __name__ == "__main__":  # pragma: no cover
    main()
