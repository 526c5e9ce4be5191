"""``tito regrade EXPORT --module MODULE``: the click command over :mod:`staff.regrade.core`.

Register with ``cli.add_command(regrade, "regrade")``. Exit codes: 0 done (broken
submissions are graded zero with a message, which is not an error); 1 ``--apply`` recorded
everything except drops graded with release stubs, which it held back (one line says so); 2
bad input, one line on stderr naming the file and the field; 128 + the signal (130 for Ctrl-C, 143 for kill) when
interrupted, with one line saying what was kept.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click


class RegradeUsageError(click.ClickException):
    """Bad input: ``tito: <one line>`` on stderr, exit code 2."""

    exit_code = 2

    def show(self, file: Any = None) -> None:
        click.echo(f"tito: {self.format_message()}", err=True)


def _course_from(ctx: click.Context) -> Any:
    """The course the ``tito`` group loaded or was pointed at (``--course``), else None."""
    obj = ctx.find_root().obj
    if isinstance(obj, dict):
        return obj.get("course") or obj.get("course_path")
    return None


class RegradeHeldBack(RegradeUsageError):
    """``--apply`` recorded everything but drops it must not record unasked: exit code 1."""

    exit_code = 1


@click.command("regrade")
@click.argument("exports", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-m", "--module", "module", default=None,
              help="The module of every export: 01, 1, 01_tensor or tensor (default: told "
                   "from each export's old results).")
@click.option("--dry-run", is_flag=True,
              help="Grade and show the diff only; the gradebook is not touched and nothing "
                   "is kept unless -o is given.")
@click.option("-o", "--out", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Folder for results and regrade_report.csv/.json (default: "
                   "build/regrade/<module>-<export>/); a rerun reuses what it finished.")
@click.option("--apply", is_flag=True,
              help="Also ingest the export and the new results into the gradebook "
                   "(idempotent; changed scores become regrade events).")
@click.option("--store", default=None,
              help="Gradebook store path or sqlite:/// URL (default: course.yml's).")
@click.option("--accept-inconsistent", "accept_inconsistent", default=None, metavar="REASON",
              help="With --apply: record old scores (and new results) outside [0, max] or "
                   "whose totals disagree anyway, as `gradebook ingest` does; the reason and "
                   "the problems are kept with each such score (audited).")
@click.option("--accept-drops", "accept_drops", default=None, metavar="REASON",
              help="With --apply: also record lower scores graded with the release stub of "
                   "an earlier module still open (held back otherwise); the reason is kept "
                   "with each such regrade event (audited).")
@click.option("--as-of", "as_of", default=None,
              help="Decide which earlier modules are closed as of this time ('YYYY-MM-DD "
                   "HH:MM' in the course time zone) for every submission; default: when the "
                   "regrade starts.")
@click.option("-j", "--jobs", type=int, default=1, show_default=True,
              help="Submissions graded at once on this machine.")
@click.option("--scheduler", default=None, metavar="ADDRESS|local:N",
              help="Grade on a Dask cluster: local:N (N local workers, TLS on loopback) or a "
                   "scheduler address (tls://host:8786, with --tls-*). Needs pip install "
                   "'.[dask]'.")
@click.option("--tls-ca-file", default=None, metavar="FILE",
              help="With --scheduler tls://...: the CA certificate the cluster's certificates "
                   "are signed by (default: Dask's distributed.comm.tls.ca-file).")
@click.option("--tls-cert", default=None, metavar="FILE",
              help="With --scheduler tls://...: your certificate, signed by that CA.")
@click.option("--tls-key", default=None, metavar="FILE",
              help="With --scheduler tls://...: your certificate's private key (mode 600).")
@click.option("--insecure", is_flag=True,
              help="Allow a plain tcp:// scheduler address: unencrypted, and anyone who can "
                   "reach the scheduler can run code on it. Only on a network you control.")
@click.pass_context
def regrade(ctx: click.Context, exports: tuple[Path, ...], module: str | None, dry_run: bool,
            out: Path | None, apply: bool, store: str | None, accept_inconsistent: str | None,
            accept_drops: str | None, as_of: str | None, jobs: int,
            scheduler: str | None, tls_ca_file: str | None, tls_cert: str | None,
            tls_key: str | None, insecure: bool) -> None:
    """TA: regrade Gradescope "Export Submissions" EXPORTS (.zip files, their folders, or a
    folder of them: a whole term in one run) and show what changed: old score, new score,
    delta and the tests that changed. Ctrl-C stops every grading at once; run the same
    command again to finish (finished submissions are reused)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    from coursekit.course import CourseError
    from staff.regrade.core import RegradeError, RegradeInterrupted
    from staff.regrade.core import regrade as run_regrade

    try:
        from gradebook.errors import GradebookError
    except ImportError:  # pragma: no cover - the gradebook is part of the repository
        GradebookError = RegradeError  # type: ignore[misc,assignment]  # noqa: N806

    console = Console(width=None if sys.stdout.isatty() else 160)
    progress = Progress("[progress.description]{task.description}", BarColumn(),
                        MofNCompleteColumn(), TimeElapsedColumn(),
                        console=Console(stderr=True), transient=True)
    task: list[Any] = []

    def started(total: int) -> None:
        task.append(progress.add_task("grading", total=total))

    def done(row: Any) -> None:
        verb = "reused" if row.reused else "graded"
        progress.update(task[0], advance=1, description=f"{verb} {row.key}")

    target: Any = scheduler
    if scheduler is None and (tls_ca_file or tls_cert or tls_key or insecure):
        raise RegradeUsageError("--tls-ca-file, --tls-cert, --tls-key and --insecure go with "
                                "--scheduler ADDRESS")
    if scheduler is not None:
        from staff.regrade.dask import Target

        target = Target(scheduler, tls_ca_file, tls_cert, tls_key, insecure)
    try:
        with progress:
            report = run_regrade(export=list(exports), module=module, course=_course_from(ctx),
                                 out=out, dry_run=dry_run, apply=apply, store=store, jobs=jobs,
                                 scheduler=target, on_start=started, on_done=done,
                                 accept_inconsistent=accept_inconsistent,
                                 accept_drops=accept_drops, now=_as_of(ctx, as_of))
    except (RegradeError, GradebookError, CourseError) as exc:
        raise RegradeUsageError(str(exc)) from None
    except RegradeInterrupted as stop:
        click.echo(f"tito: {stop}", err=True)
        ctx.exit(stop.exit_code)

    from staff.regrade.core import render

    render(report, console)
    if report.dry_run:
        click.echo("dry run: the gradebook was not touched" + (
            f"; results in {report.outdir}" if report.outdir else "; no files kept"))
    else:
        click.echo(f"results: {report.outdir}")
        click.echo(f"report:  {', '.join(report.report_files)}")
    if report.ingest is not None:
        ing = report.ingest
        ex, res = ing["export"], ing["results"]
        click.echo(f"gradebook {ing['store']}: old scores from the export: {ex['new']} new, "
                   f"{ex['duplicates'] + ex['unchanged']} already recorded; new results: "
                   f"{res['regrades']} regrade event(s), {res['new']} new, "
                   f"{res['unchanged'] + res['duplicates']} unchanged")
        if ing.get("accepted_drops"):
            click.echo(f"recorded {ing['accepted_drops']['rows']} drop(s) graded with release "
                       f"stubs, as accepted: {ing['accepted_drops']['reason']}")
        held = ing.get("held_back") or []
        if held:
            stubs = sorted({m for h in held for m in h["stub_modules"]})
            raise RegradeHeldBack(
                f"held back {len(held)} lower score(s) graded with the release stub of "
                f"{', '.join(stubs)} (still open: the students did not upload them); their "
                "old scores stay and everything else was recorded. Regrade after those "
                "modules close, or pass --accept-drops REASON to record them (audited)")
    elif not report.dry_run:
        click.echo("not applied: review the diff, then run again with --apply to record it "
                   "in the gradebook")


def _as_of(ctx: click.Context, text: str | None) -> Any:
    """``--as-of`` as an aware time in the course's zone (None: the regrade's start)."""
    if text is None:
        return None
    from coursekit.course import CourseError, resolve_course
    from staff.publish import parse_as_of

    try:
        return parse_as_of(resolve_course(_course_from(ctx)), text)
    except CourseError as exc:
        raise RegradeUsageError(str(exc)) from None


@click.command("synth-export")
@click.argument("module")
@click.option("-n", "--submissions", "n", type=int, default=30, show_default=True,
              help="Records in the export.")
@click.option("-o", "--out", type=click.Path(path_type=Path, dir_okay=False), required=True,
              help="The export .zip to write (NAME-roster.csv goes beside it).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--looping", type=int, default=0, show_default=True,
              help="Exactly this many submissions with an infinite loop.")
@click.option("--duplicated", type=int, default=0, show_default=True,
              help="Group records naming a student who also submitted alone.")
@click.pass_context
def synth_export_cmd(ctx: click.Context, module: str, n: int, out: Path, seed: int,
                     looping: int, duplicated: int) -> None:
    """Staff: write a synthetic Gradescope export of MODULE in the real format (correct, buggy,
    untouched, late, corrupt, off-roster, looping and duplicated records, BigDecimal scores)
    to try ``tito regrade`` on."""
    from coursekit.course import CourseError
    from staff.regrade.core import RegradeError
    from staff.synthetic import synth_export

    if n < 1:
        raise RegradeUsageError(f"--submissions: {n} is not a positive number")
    try:
        made = synth_export(module=module, n=n, out=out, seed=seed, looping=looping,
                            duplicated=duplicated, course=_course_from(ctx))
    except (RegradeError, CourseError) as exc:
        raise RegradeUsageError(str(exc)) from None
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(made.kinds().items()))
    click.echo(f"wrote {made.path} ({n} submissions of {made.module}: {kinds}) and "
               f"{made.roster}")
