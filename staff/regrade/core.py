"""Regrade Gradescope "Export Submissions" archives (``tito regrade``): one module or a term.

Each export is a zip (or its unpacked folder) holding ``assignment_<id>_export/`` with
``submission_metadata.yml`` (read by :mod:`coursekit.gradescope_export`, the one reader every command
uses) and one ``submission_<id>/`` folder per active submission. For every record,
:func:`regrade`:

1. reads the submission's regular files (symlinks are never followed) and builds a task of
   plain data (:mod:`staff.regrade.task`): the module's course facts, the fingerprint of
   the grading files, the files and the record's ``submission_metadata.json``;
2. grades it in a private staging folder with the harness (sandboxed child, trusted parent),
   in worker processes (``jobs``) or on a Dask cluster (``scheduler``), slowest first;
3. writes ``OUTDIR/submission_<id>/`` (``submission_metadata.json``, ``results.json`` and the
   ``regrade.json`` record that makes the run resumable) and compares old and new scores.

A rerun of the same command reuses every submission whose record matches its task's
fingerprint (same files, metadata, suite, reference, harness and course limits) and grades only
the rest, so a killed regrade loses nothing and grades nothing twice; the report is a function
of the inputs and the results only, identical to an uninterrupted run's.

Everything that can make ``--apply`` refuse (the gradebook's parse of each export, a student
in two records, the store) is checked before grading starts; a dry run reports it. A
course-side failure is never a score: the submission is reported as not graded and ``--apply``
keeps its old score. Bad input raises :class:`RegradeError` with one line naming the file and
the field.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import secrets
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coursekit.gradescope_export import (
    ExportRecord,
    Student,
    duplicate_students,
    load_metadata_yaml,
    parse_records,
)
from gradebook.errors import GradebookError
from staff.regrade.diff import (
    SubmissionDiff,
    diff_tests,
    timed_out_tests,
)
from staff.regrade.errors import RegradeError, RegradeInterrupted
from staff.regrade.export import (
    METADATA_YML,
    Export,
    Unit,
    _notebook_notes,
    check_module,
    detect_module,
    expand_exports,
    find_metadata,
    locate_notebook,
    open_export,
    peek_export,
    submission_metadata,
)
from staff.regrade.report import (
    RegradeReport,
    _atomic_json,
    _order,
    render,
    write_report,
)

if TYPE_CHECKING:
    from coursekit.course import Course, CourseSource

__all__ = ["ExportRecord", "Student", "load_metadata_yaml", "parse_records", "RegradeError",
           "RegradeInterrupted", "regrade", "open_export", "peek_export", "find_metadata",
           "locate_notebook", "diff_tests", "render", "write_report"]


RECORD_FILE = "regrade.json"


RUNS_LOG = "regrade_runs.jsonl"


RECORD_FORMAT = 1


# ----------------------------------------------------------------------------- the verb
def default_outdir(module_name: str, export: Path) -> Path:
    """``build/regrade/<module>-<export name>/``."""
    from coursekit import paths

    stem = export.name[:-4] if export.name.endswith(".zip") else export.name
    return paths.BUILD / "regrade" / f"{module_name}-{stem or 'export'}"


def _load_course(course: CourseSource) -> Course:
    from coursekit.course import CourseError, resolve_course

    try:
        return resolve_course(course)
    except CourseError as exc:
        raise RegradeError(str(exc)) from None


def resolve_module(course: Course, ref: str) -> Any:
    """The module to regrade; it must have a hidden suite.

    Raises:
        RegradeError: unknown module, or no suite to grade with.
    """
    from coursekit import paths

    try:
        mod = course.module(ref)
    except ValueError as exc:
        raise RegradeError(f"--module: {exc}") from None
    suite = paths.SUITES / mod.name / "suite.py"
    if not suite.is_file():
        raise RegradeError(f"--module {mod.name}: no hidden suite at "
                           f"{suite.relative_to(paths.REPO_ROOT)}; nothing to grade with")
    return mod


def _private_dir(path: Path) -> Path:
    """Create ``path`` (and missing parents) readable by its owner only (0700)."""
    missing = []
    p = path
    while not p.exists():
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        d.mkdir(mode=0o700)
    os.chmod(path, 0o700)
    return path


def _lock(outdir: Path) -> int:
    """Hold ``OUTDIR/.lock`` for the run: two regrades never write one folder at once.

    Raises:
        RegradeError: another running regrade holds it.
    """
    import fcntl

    fd = os.open(outdir / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise RegradeError(f"{outdir}: another tito regrade is writing this folder; wait for "
                           "it, or give another -o") from None
    return fd


def _remove_stale_work(outdir: Path) -> list[str]:
    """Remove work folders left by regrades that were killed (their pid is gone)."""
    notes = []
    for d in sorted(outdir.glob(".work-*")):
        m = re.match(r"\.work-(\d+)-", d.name)
        if m and Path(f"/proc/{m.group(1)}").exists() and int(m.group(1)) != os.getpid():
            continue
        shutil.rmtree(d, ignore_errors=True)
        notes.append(d.name)
    return notes


def regrade(*, export: Path | list[Path], module: str | None = None, course: CourseSource = None,
            out: Path | None = None, dry_run: bool = False, apply: bool = False,
            store: str | Path | None = None, jobs: int = 1, scheduler: Any = None,
            on_start: Callable[[int], None] | None = None,
            on_done: Callable[[SubmissionDiff], None] | None = None,
            accept_inconsistent: str | None = None, accept_drops: str | None = None,
            now: dt.datetime | None = None) -> RegradeReport:
    """Regrade every active submission of one or more exports and compare with the old scores.

    Args:
        export: an export ``.zip``, its unpacked folder, a folder of exports, or a list of any
            of these (a whole term: every module in one run and one report).
        module: ``01``, ``1``, ``01_tensor`` or ``tensor`` for every export; None tells each
            export's module from its old results.
        course: course.yml path, a loaded course, or None (the default).
        out: where results and reports go (default ``build/regrade/<module>-<export>/``, or
            ``build/regrade/<folder>/`` or ``term/`` for several exports). A rerun with the
            same ``out`` reuses every finished submission. With ``dry_run`` and no ``out``: a
            private temporary folder, removed at the end (give ``out`` to resume a dry run).
        dry_run: grade and diff only; never touch the gradebook; no reports unless ``out``.
        apply: ingest the exports and the new results into the gradebook store.
        store: the gradebook store (default: course.yml's ``gradebook_store``).
        jobs: submissions graded at once on this machine (each in its own sandboxed child).
        scheduler: ``local:N`` (a local cluster of N single-threaded workers, TLS on
            loopback), a TLS scheduler address with credentials
            (:class:`staff.regrade.dask.Target`), or a plain ``tcp://`` address with
            ``Target(..., insecure=True)``; a plain string is a Target without credentials.
            None grades on this machine.
        on_start: called once with the number of submissions.
        on_done: called with each submission's diff as it finishes (also reused ones).
        accept_inconsistent: a reason to record, with ``apply``, old scores (or new results)
            that fail the gradebook's consistency checks anyway, as ``gradebook ingest
            --accept-inconsistent`` does (audited in each such event).
        accept_drops: a reason to record, with ``apply``, lower scores graded with release
            stubs of still-open earlier modules (held back otherwise; audited in each
            regrade event).
        now: the time that decides which earlier modules are closed, for every submission of
            the run (default: the clock when the regrade starts).

    Returns:
        The report (rows ordered: not graded, drops, rises, unchanged, no old score).

    Raises:
        RegradeError: bad input (one line naming the file and field); nothing was graded.
        RegradeInterrupted: Ctrl-C or a kill; every child is stopped, finished submissions
            are kept in the output folder.
        gradebook.errors.GradebookError: the gradebook refused the ingest (nothing written).
    """
    from autograder.harness.limits import module_snapshot
    from staff.regrade.run import (
        Starting,
        Task,
        estimate,
        lanes_for,
        read_record,
        run_tasks,
    )
    from staff.regrade.task import grader_fingerprint, payload_fingerprint, read_submission

    _read_record = read_record

    if dry_run and apply:
        raise RegradeError("--dry-run and --apply exclude each other: review with --dry-run, "
                           "then run again with --apply")
    if jobs < 1:
        raise RegradeError(f"--jobs: {jobs} is not a positive number of workers")
    for flag, reason in (("--accept-inconsistent", accept_inconsistent),
                         ("--accept-drops", accept_drops)):
        if reason is not None and not reason.strip():
            raise RegradeError(f"{flag}: give the reason (it is recorded with each score)")
        if reason is not None and not apply:
            raise RegradeError(f"{flag} only matters with --apply")
    when = now or dt.datetime.now(dt.timezone.utc)
    if scheduler is not None:
        from staff.regrade.dask import check_scheduler

        scheduler = check_scheduler(scheduler)
    started = time.monotonic()
    c = _load_course(course)
    fixed = resolve_module(c, module) if module is not None else None
    sources = expand_exports(export if isinstance(export, list) else [Path(export)])

    # 1. every export, parsed and checked, before anything is written or graded
    exports = [peek_export(p) for p in sources]
    names = [fixed.name if fixed else detect_module(e, c) for e in exports]
    mods = [fixed or resolve_module(c, n) for n in names]
    for e, m in zip(exports, mods, strict=True):
        check_module(e, m.name, c)
    preflight = _preflight(exports, mods, c, apply=apply, store=store,
                           accept=accept_inconsistent)

    # 2. the output folder (0700) and a private work folder inside it
    if out is not None:
        outdir = Path(out).absolute()
    elif dry_run:
        import tempfile

        outdir = Path(tempfile.mkdtemp(prefix="tt-regrade-dry-"))  # 0700; removed at the end
    elif len(sources) == 1:
        outdir = default_outdir(mods[0].name, sources[0]).absolute()
    else:
        from coursekit import paths

        given = export if isinstance(export, list) else [Path(export)]
        name = Path(given[0]).name if len(given) == 1 else "term"  # a folder of exports
        outdir = paths.BUILD / "regrade" / (name or "term")
    keep = out is not None or not dry_run
    _private_dir(outdir)
    lock = _lock(outdir)
    notes: list[str] = []
    stale = _remove_stale_work(outdir)
    work = _private_dir(outdir / f".work-{os.getpid()}-{secrets.token_hex(3)}")
    interrupted: RegradeInterrupted | None = None
    hide = (str(work), str(outdir), *(str(p.absolute()) for p in sources))
    # the workers (or the cluster) start while the export is unpacked and the tasks are made
    starting = Starting(jobs, scheduler, hide)
    try:
        units = _units(sources, exports, mods, outdir, work)
        tasks: list[Task] = []
        limits = c.course.grading
        for unit in units:
            snap = module_snapshot(c, unit.module)
            grader = grader_fingerprint(snap)
            schedule = decision(snap, when)
            dups = duplicate_students(unit.export.records)
            for rec in unit.export.records:
                folder = _private_dir(unit.folder / rec.key)
                source = unit.export.root / rec.key
                files, tnotes = read_submission(source)
                tnotes += _notebook_notes(source, unit.module.name)
                if not source.is_dir():
                    tnotes.append(f"no {rec.key}/ folder in the export: graded as an empty "
                                  "submission")
                tnotes += [f"{n.split('/', 1)[-1]} is a symbolic link in the archive: not "
                           "followed" for n in unit.export.skipped_links
                           if f"/{rec.key}/" in f"/{n}"]
                for st, other in dups.get(rec.key, []):
                    tnotes.append(f"{st.sid or st.email} is also in {other}: --apply refuses "
                                  "an export that names a student twice")
                meta = submission_metadata(rec, module=unit.module, course=c,
                                           assignment_id=unit.export.assignment_id)
                _atomic_json(folder / "submission_metadata.json", meta)
                predicted = timed_out_tests(rec.old_results)
                base = {"format": 1, "grader": grader, "module": snap, "key": rec.key,
                        "metadata": meta, "lanes": lanes_for(predicted), **schedule}
                fingerprint = payload_fingerprint({**base, "files": files})
                del files  # read again when the task is sent: memory stays bounded
                cost = estimate(rec.old_results, _read_record(folder),
                                float(limits.test_timeout_s))
                tasks.append(Task(unit, rec, base, source, fingerprint, tnotes, cost, folder))
        if on_start:
            on_start(len(tasks))
        rows, reused, graded_now, interrupted = run_tasks(
            tasks, jobs=jobs, scheduler=scheduler, hide=hide, on_done=on_done, outdir=outdir,
            started=starting)
        if interrupted is not None:
            if not keep:
                interrupted = RegradeInterrupted(interrupted.signum, 0, len(tasks), "",
                                                 interrupted.stopped)
            raise interrupted
        rows.sort(key=_order)
        notes += preflight
        for unit in units:
            exp = unit.export
            notes += [f"{unit.prefix}{name}/ is not in {METADATA_YML}: skipped"
                      for name in exp.stray_folders]
            history = sum(len(r.history) for r in exp.records)
            if history:
                notes.append(f"{unit.prefix or ''}{history} earlier submission(s) in :history: "
                             "not regraded (the active one counts, as on Gradescope)")
            mine = [r for r in rows if r.module == unit.module.name]
            broken = sum(1 for r in mine if r.outcome == "zero")
            if len(mine) > 1 and broken == len(mine):
                notes.append(f"none of the {len(mine)} submissions of {exp.location} could be "
                             f"graded: check that the export is for {unit.module.name} before "
                             "applying anything")
        report = RegradeReport(
            units=[{"module": u.module.name, "export": str(u.export.source),
                    "metadata": u.export.location, "folder": u.prefix.rstrip("/")}
                   for u in units],
            rows=rows, dry_run=dry_run, outdir=str(outdir) if keep else None, notes=notes,
            jobs=jobs, scheduler=None if scheduler is None else str(scheduler), reused=reused,
            graded_now=graded_now)
        if keep:
            write_report(report, outdir)
        if apply:
            report.ingest = _ingest(report, units, outdir=outdir, course=c, store=store,
                                    accept=accept_inconsistent, accept_drops=accept_drops)
            write_report(report, outdir)
        report.elapsed_s = time.monotonic() - started
        _log_run(outdir if keep else None, report, stale)
        return report
    finally:
        starting.close()
        shutil.rmtree(work, ignore_errors=True)
        os.close(lock)
        if not keep:
            shutil.rmtree(outdir, ignore_errors=True)


def decision(snapshot: dict[str, Any], now: dt.datetime) -> dict[str, Any]:
    """What a task carries to decide its earlier modules: the run's decision time (one for
    every submission, whatever worker grades it) and the earlier modules still open then (in
    the task's fingerprint: a finished task is reused only while the same modules are open)."""
    from autograder.harness.limits import ModuleInfo

    info = ModuleInfo.from_any(snapshot)
    open_now = [f"{n:02d}_{slug}" for n, slug in info.all_modules
                if n < info.number and not info.closed(n, now)]
    return {"now": now.astimezone(dt.timezone.utc).isoformat(), "open_earlier": open_now}


def _units(sources: list[Path], exports: list[Export], mods: list[Any], outdir: Path,
           work: Path) -> list[Unit]:
    """Re-open each export under the run's work folder and give it its output folder."""
    units: list[Unit] = []
    used: set[str] = set()
    for src, mod in zip(sources, mods, strict=True):
        exp = open_export(src, workdir=work)
        if len(sources) == 1:
            units.append(Unit(name="", module=mod, export=exp, folder=outdir, prefix=""))
            continue
        stem = src.name[:-4] if src.name.endswith(".zip") else src.name
        name = f"{mod.name}-{stem or 'export'}"
        i = 2
        while name in used:
            name, i = f"{mod.name}-{stem}-{i}", i + 1
        used.add(name)
        units.append(Unit(name=name, module=mod, export=exp,
                          folder=_private_dir(outdir / name), prefix=f"{name}/"))
    return units


def _preflight(exports: list[Export], mods: list[Any], course: Course, *, apply: bool,
               store: str | Path | None, accept: str | None = None) -> list[str]:
    """Everything that would make ``--apply`` refuse, found before grading starts.

    With ``apply`` the first problem raises; otherwise each becomes a note ("--apply would
    refuse: ...") that every dry run prints.

    Raises:
        RegradeError: with ``apply``, the first problem.
    """
    from gradebook.ingest import parse_export

    problems: list[str] = []
    parsed = []
    for exp, mod in zip(exports, mods, strict=True):
        try:
            parsed.append(parse_export(exp.source, course=course, module=mod.name,
                                       accept=accept))
        except GradebookError as exc:
            problems.append(str(exc))
    if apply and not problems:
        try:
            from gradebook.api import open_store
            from gradebook.ingest import record

            with open_store(store, course) as st:
                record(st, parsed, dry_run=True)
        except GradebookError as exc:
            problems.append(str(exc))
        except Exception as exc:  # noqa: BLE001 - a store that cannot be opened or read
            problems.append(f"gradebook store: {type(exc).__name__}: {exc}")
    if apply and problems:
        raise RegradeError(f"--apply would be refused, so nothing was graded: {problems[0]}")
    return [f"--apply would refuse: {p}" for p in problems]


def _log_run(outdir: Path | None, report: RegradeReport, stale: list[str]) -> None:
    if outdir is None:
        return
    line = {"finished_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "elapsed_s": round(report.elapsed_s, 2), "jobs": report.jobs,
            "scheduler": report.scheduler, "graded": report.graded_now,
            "reused": report.reused, "submissions": len(report.rows),
            "stale_work_removed": stale}
    with (outdir / RUNS_LOG).open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(line) + "\n")


def _ingest(report: RegradeReport, units: list[Unit], *, outdir: Path, course: Course,
            store: str | Path | None, accept: str | None = None,
            accept_drops: str | None = None) -> dict[str, Any]:
    """Record the old scores (the exports themselves) and then the new results.

    Two transactions, each all-or-nothing and idempotent: an export's rows are skipped when it
    was ingested before, and a new result equal to the recorded one is skipped, so running
    ``--apply`` twice records nothing the second time. A changed score becomes a ``regrade``
    event whose details hold the previous event and the diff. Submissions not graded (course
    side) are left out: their old score stays. So are drops graded with release stubs of
    open earlier modules, unless ``accept_drops`` names why they are right: then each such
    event's details hold ``accepted_drop`` (reason, user, the stub modules).
    """
    from gradebook.api import open_store
    from gradebook.ingest import parse_export, parse_results_file, record
    from gradebook.store import current_user, store_label

    old_sources = [parse_export(u.export.source.absolute(), course=course,
                                module=u.module.name, accept=accept) for u in units]
    held = [r for r in report.rows if r.stub_drop] if accept_drops is None else []
    held_keys = {(r.module, r.key) for r in held}
    new_sources = []
    for r in sorted(report.rows, key=lambda r: (r.module, r.key)):
        if not (r.results and r.graded) or (r.module, r.key) in held_keys:
            continue
        src = parse_results_file(outdir / r.results, course=course, module=r.module,
                                 accept=accept)
        if r.stub_drop:
            for row in src.rows:
                row.details["accepted_drop"] = {"reason": accept_drops, "by": current_user(),
                                                "stub_modules": r.stubs}
        new_sources.append(src)
    counts = ("new", "regrades", "unchanged", "duplicates")
    with open_store(store, course) as st:
        old = record(st, old_sources)
        new = record(st, new_sources)
    if store is None:
        from coursekit import paths

        where = store_label(course.course.gradebook_store, paths.REPO_ROOT)
    else:
        where = store_label(store, Path.cwd())
    return {
        "store": str(where),
        "export": {k: sum(getattr(f, k) for f in old.files) for k in counts},
        "results": {k: sum(getattr(f, k) for f in new.files) for k in counts},
        "regrade_events": new.regrades,
        "not_applied": [r.key for r in report.rows if not r.graded],
        "held_back": [{"module": r.module, "submission": r.key, "old": r.old_score,
                       "new": r.new_score, "stub_modules": r.stubs} for r in held],
        "accepted_drops": None if accept_drops is None else {
            "reason": accept_drops, "rows": sum(1 for r in report.rows if r.stub_drop)},
        "pending": new.pending,
    }
