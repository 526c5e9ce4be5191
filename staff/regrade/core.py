"""Regrade Gradescope "Export Submissions" archives (``tito regrade``): one module or a term.

Each export is a zip (or its unpacked folder) holding ``assignment_<id>_export/`` with
``submission_metadata.yml`` (read by :mod:`coursekit.gradescope_export`, the one reader every command
uses) and one ``submission_<id>/`` folder per active submission. For every record,
:func:`regrade`:

1. reads the submission's regular files (symlinks are never followed) and builds a task of
   plain data (:mod:`staff.regrade.task`): the module's course facts, the fingerprint of
   the grading files, the files and the record's ``submission_metadata.json``;
2. grades it in a private staging folder with the harness (sandboxed child, trusted parent),
   in threads (``jobs``) or on a Dask cluster (``scheduler``), slowest first;
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
import signal
import threading
import time
import zipfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from coursekit import gradescope_export as gs
from coursekit.gradescope_export import (
    ExportRecord,
    GradescopeExportError,
    Student,
    duplicate_students,
    load_metadata_yaml,
    parse_records,
)
from gradebook.errors import GradebookError

if TYPE_CHECKING:
    from coursekit.course import Course, CourseSource

__all__ = ["ExportRecord", "Student", "load_metadata_yaml", "parse_records", "RegradeError",
           "RegradeInterrupted", "regrade", "open_export", "peek_export", "find_metadata",
           "locate_notebook", "diff_tests", "render", "write_report"]

METADATA_YML = gs.METADATA_YML
SUBMISSION_KEY = gs.SUBMISSION_KEY
REPORT_STEM = "regrade_report"
RECORD_FILE = "regrade.json"
RUNS_LOG = "regrade_runs.jsonl"
RECORD_FORMAT = 1
MAX_UNPACKED_BYTES = 2 * 1024**3  # an export of notebooks is far smaller; refuse zip bombs


class RegradeError(ValueError):
    """Bad input: ``str(err)`` is one line naming the file and the field."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))


class RegradeInterrupted(Exception):
    """Ctrl-C or a kill stopped the regrade; every grading child is gone.

    Attributes:
        signum: the signal.
        kept: submissions finished and recorded in the output folder (this run and earlier).
        remaining: submissions a rerun of the same command will grade.
        outdir: where they are.
    """

    def __init__(self, signum: int, kept: int, remaining: int, outdir: str,
                 stopped: int) -> None:
        self.signum, self.kept, self.remaining, self.outdir = signum, kept, remaining, outdir
        self.stopped = stopped
        try:
            name = signal.Signals(signum).name
        except ValueError:
            name = str(signum)
        if outdir:
            kept_text = (f"kept {kept} finished submission(s) in {outdir}; run the same "
                         f"command again to grade the other {remaining}")
        else:
            kept_text = ("nothing was kept (a dry run without -o works in a temporary folder; "
                         "give -o DIR to make it resumable)")
        super().__init__(f"interrupted ({name}): stopped {stopped} running grading(s) and "
                         f"every child process; {kept_text}")

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


# ----------------------------------------------------------------------------- data
@dataclass
class Export:
    """A located and parsed export."""

    source: Path
    location: str
    root: Path
    records: list[ExportRecord]
    assignment_id: str | None = None
    stray_folders: list[str] = field(default_factory=list)
    skipped_links: list[str] = field(default_factory=list)


@dataclass
class Unit:
    """One export regraded for one module, and the folder its submissions go to."""

    name: str
    module: Any
    export: Export
    folder: Path
    prefix: str  # "" (one export) or "<name>/" (a term): results paths relative to OUTDIR


@dataclass
class TestChange:
    """A scored test whose status or score differs between the old and the new results."""

    name: str
    old_status: str | None
    new_status: str | None
    old_score: float | None
    new_score: float | None

    def label(self, module: str = "") -> str:
        """``matmul_batched: failed -> passed`` (``module · `` prefix dropped)."""
        name = self.name
        prefix = f"{module} · "
        if module and name.startswith(prefix):
            name = name[len(prefix):]
        return f"{name}: {self.old_status or 'absent'} -> {self.new_status or 'absent'}"


@dataclass
class SubmissionDiff:
    """Old and new grade of one submission.

    ``outcome`` is ``scored`` (graded), ``zero`` (the submission itself is unusable: zero with
    a message, which is a score) or ``error`` (the course side failed: no new score, and
    ``--apply`` keeps the old one).
    """

    module: str
    key: str
    submission_id: str
    students: list[Student]
    old_score: float | None
    new_score: float | None
    max_score: float
    outcome: str = "scored"
    changes: list[TestChange] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    results: str | None = None
    timed_out: int = 0
    seconds: float = 0.0
    reused: bool = False
    #: earlier modules that were still open and came from their release stub (the student
    #: did not upload them): a drop may come from that, not from this module
    stubs: list[str] = field(default_factory=list)

    @property
    def graded(self) -> bool:
        """Whether a score was decided (also a zero for an unusable submission)."""
        return self.outcome != "error"

    @property
    def delta(self) -> float | None:
        """New minus old score (None without an old score or a new one)."""
        if self.old_score is None or self.new_score is None:
            return None
        return round(self.new_score - self.old_score, 6)

    @property
    def stub_drop(self) -> bool:
        """A lower score graded with release stubs of open earlier modules: not recorded by
        ``--apply`` unless the TA accepts such drops (``--accept-drops REASON``)."""
        d = self.delta
        return self.graded and bool(self.stubs) and d is not None and d < 0

    def to_json(self) -> dict[str, Any]:
        """Plain data for regrade_report.json (nothing that depends on timing)."""
        return {
            "module": self.module, "submission": self.key,
            "submission_id": self.submission_id,
            "students": [asdict(s) for s in self.students], "old_score": self.old_score,
            "new_score": self.new_score, "max_score": self.max_score, "delta": self.delta,
            "outcome": self.outcome, "graded": self.graded, "timed_out_tests": self.timed_out,
            "changed_tests": [asdict(c) for c in self.changes], "notes": self.notes,
            "stub_modules": self.stubs, "results": self.results,
        }


@dataclass
class RegradeReport:
    """Everything one regrade did.

    :meth:`to_json` (``regrade_report.json``) depends only on the inputs and the results: a
    run killed and resumed writes the same report as an uninterrupted one. Timing and how the
    work was done (jobs, scheduler, reused) are attributes, printed and logged to
    ``regrade_runs.jsonl``.
    """

    units: list[dict[str, str]]
    rows: list[SubmissionDiff]
    dry_run: bool
    outdir: str | None
    notes: list[str] = field(default_factory=list)
    ingest: dict[str, Any] | None = None
    report_files: list[str] = field(default_factory=list)
    jobs: int = 1
    scheduler: str | None = None
    elapsed_s: float = 0.0
    reused: int = 0
    graded_now: int = 0

    @property
    def module(self) -> str:
        """The module (or ``a, b, ...`` for a term)."""
        return ", ".join(dict.fromkeys(u["module"] for u in self.units))

    @property
    def export(self) -> str:
        return ", ".join(u["export"] for u in self.units)

    def summary(self) -> dict[str, int]:
        """Counts: submissions, up, down, same, no_old_score, zero, not_graded, slow, ..."""
        deltas = [r.delta for r in self.rows if r.graded]
        return {
            "submissions": len(self.rows),
            "up": sum(1 for d in deltas if d is not None and d > 0),
            "down": sum(1 for d in deltas if d is not None and d < 0),
            "same": sum(1 for d in deltas if d == 0),
            "no_old_score": sum(1 for r in self.rows if r.graded and r.old_score is None),
            "zero": sum(1 for r in self.rows if r.outcome == "zero"),
            "not_graded": sum(1 for r in self.rows if not r.graded),
            "slow": sum(1 for r in self.rows if r.timed_out),
            "stub_drops": sum(1 for r in self.rows if r.stub_drop),
            "test_changes": sum(len(r.changes) for r in self.rows),
        }

    def to_json(self) -> dict[str, Any]:
        """Plain data for regrade_report.json."""
        return {
            "format": 2, "exports": self.units, "dry_run": self.dry_run,
            "outdir": self.outdir, "summary": self.summary(), "notes": self.notes,
            "slow": [{"module": r.module, "submission": r.key, "timed_out_tests": r.timed_out}
                     for r in self.rows if r.timed_out],
            "ingest": self.ingest, "submissions": [r.to_json() for r in self.rows],
        }


# ----------------------------------------------------------------------------- the archive
def _members(zf: zipfile.ZipFile, zip_path: Path) -> tuple[list[zipfile.ZipInfo], list[str]]:
    """The members to extract, and the symlinks left out.

    Raises:
        RegradeError: an absolute or ``..`` path, or more than 2 GB unpacked.
    """
    skipped: list[str] = []
    total = 0
    members = []
    for info in zf.infolist():
        name = info.filename.replace("\\", "/")
        parts = PurePosixPath(name).parts
        if name.startswith("/") or ".." in parts or (parts and ":" in parts[0]):
            raise RegradeError(f"{zip_path}: {info.filename}: unsafe path in the archive")
        if parts and parts[0] in gs.SKIP_DIRS:
            continue
        if (info.external_attr >> 16) & 0o170000 == 0o120000:  # a symlink: never follow
            skipped.append(name)
            continue
        total += info.file_size
        if total > MAX_UNPACKED_BYTES:
            raise RegradeError(f"{zip_path}: unpacks to more than "
                               f"{MAX_UNPACKED_BYTES // 1024**3} GB; not a notebook export")
        members.append(info)
    return members, skipped


def _unpack(zip_path: Path, dest: Path) -> list[str]:
    """Extract a zip after checking every member (no absolute or ``..`` paths, no links).

    Returns:
        The symlink members left out.
    """
    try:
        zf = gs.open_zip(zip_path)
    except GradescopeExportError as exc:
        raise RegradeError(str(exc)) from None
    with zf:
        members, skipped = _members(zf, zip_path)
        try:
            for info in members:
                zf.extract(info, dest)
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            raise RegradeError(f"{zip_path}: damaged archive ({exc})") from None
    return skipped


def open_export(path: Path, *, workdir: Path) -> Export:
    """Locate and parse an export zip or folder (a zip is unpacked under ``workdir``).

    Raises:
        RegradeError: not an export, unreadable or invalid YAML, a bad record field.
    """
    path = Path(path)
    if not path.exists():
        raise RegradeError(f"{path}: no such file or folder")
    skipped: list[str] = []
    try:
        if path.is_file():
            dest = workdir / f"export-{secrets.token_hex(4)}"
            dest.mkdir(parents=True, mode=0o700)
            skipped = _unpack(path, dest)
            meta = gs.find_metadata(dest, shown=str(path))
            location = f"{path}!{meta.relative_to(dest).as_posix()}"
        else:
            meta = gs.find_metadata(path)
            location = str(meta)
        try:
            text = meta.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise RegradeError(f"{location}: cannot be read ({exc})") from None
        records = parse_records(load_metadata_yaml(text, location), location)
    except GradescopeExportError as exc:
        raise RegradeError(str(exc)) from None
    root = meta.parent
    known = {r.key for r in records}
    stray = sorted(p.name for p in root.iterdir()
                   if p.is_dir() and SUBMISSION_KEY.match(p.name) and p.name not in known)
    assignment_id = None
    for part in (root.name, *(p.name for p in root.parents)):
        m = gs.ASSIGNMENT_DIR.match(part)
        if m:
            assignment_id = m.group(1)
            break
    return Export(source=path, location=location, root=root, records=records,
                  assignment_id=assignment_id, stray_folders=stray, skipped_links=skipped)


def peek_export(path: Path) -> Export:
    """Read an export's records without unpacking anything (a zip is read in place).

    Raises:
        RegradeError: not an export, unreadable or invalid YAML, a bad record field.
    """
    try:
        if Path(path).is_file():
            with gs.open_zip(Path(path)) as zf:
                _members(zf, Path(path))
        records, location = gs.read_records(Path(path))
    except GradescopeExportError as exc:
        raise RegradeError(str(exc)) from None
    return Export(source=Path(path), location=location, root=Path(path), records=records)


def expand_exports(paths: list[Path]) -> list[Path]:
    """The exports named on the command line: each a zip, an export folder, or a folder of
    them (its ``*.zip`` files and export subfolders, in name order).

    Raises:
        RegradeError: a path that does not exist, or a folder with no export in it.
    """
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if not p.exists():
            raise RegradeError(f"{p}: no such file or folder")
        if p.is_file() or gs.depth_walk(p):
            out.append(p)
            continue
        inner = sorted(c for c in p.iterdir()
                       if (c.is_file() and c.suffix == ".zip" and not c.is_symlink())
                       or (c.is_dir() and not c.is_symlink() and gs.depth_walk(c)))
        if not inner:
            raise RegradeError(f"{p}: no {METADATA_YML} in it or two folders below, and no "
                               "export .zip or export folder inside; is this a Gradescope "
                               "'Export Submissions' archive?")
        out += inner
    seen: set[Path] = set()
    unique = []
    for p in out:
        if p.resolve() not in seen:
            seen.add(p.resolve())
            unique.append(p)
    return unique


def check_module(export: Export, module_name: str, course: Course) -> None:
    """Refuse an export whose old results say they are for another module.

    Raises:
        RegradeError: naming the record and ``extra_data.module``.
    """
    for rec in export.records:
        extra = (rec.old_results or {}).get("extra_data") or {}
        ref = extra.get("module") if isinstance(extra, dict) else None
        if not ref:
            continue
        try:
            name = course.module(str(ref)).name
        except ValueError:
            name = str(ref)
        if name != module_name:
            raise RegradeError(
                f"{export.location}: {rec.key}: :results: extra_data.module is {ref}, not "
                f"{module_name}; is this the export of another assignment?")


def detect_module(export: Export, course: Course) -> str:
    """The module an export is for: its old results' ``extra_data.module``, else the
    assignment title ("Module 03 · Layers").

    Raises:
        RegradeError: neither tells (pass ``--module``).
    """
    ref = gs.export_module(export.records)
    if ref is None:
        raise RegradeError(f"{export.location}: cannot tell which module this export is for "
                           "(no record has results naming it); pass --module")
    try:
        return str(course.module(str(ref)).name)
    except ValueError as exc:
        raise RegradeError(f"{export.location}: {exc}") from None


# ----------------------------------------------------------------------------- grading
def submission_metadata(record: ExportRecord, *, module: Any, course: Course,
                        assignment_id: str | None) -> dict[str, Any]:
    """Gradescope's ``submission_metadata.json`` rebuilt from one YAML record."""
    if record.assignment:
        assignment = dict(record.assignment)
    else:
        assignment = {"title": f"Module {module.number:02d} · {module.title}",
                      "total_points": float(module.points), "group_submission":
                      len(record.students) > 1}
        if assignment_id is not None:
            assignment["id"] = int(assignment_id)
        try:
            assignment["release_date"] = course.local_time(module.release).isoformat()
            assignment["due_date"] = course.local_time(module.due).isoformat()
        except (AttributeError, ValueError):
            pass
    return {
        "id": int(record.submission_id),
        "created_at": record.created_at,
        "assignment": assignment,
        "submission_method": "upload",
        "users": [{"name": s.name, "sid": s.sid, "email": s.email} for s in record.students],
        "previous_submissions": [
            {"submission_time": h.get("created_at"), "score": h.get("score"),
             "autograder_error": h.get("autograder_error")} for h in record.history
        ],
        "regrade": {"source": "tito regrade", "old_score": record.old_score},
    }


def find_metadata(folder: Path, *, shown: str | None = None) -> Path:
    """The export's ``submission_metadata.yml`` in an unpacked folder.

    Raises:
        RegradeError: none at depth <= 2, or several at the same depth.
    """
    try:
        return gs.find_metadata(folder, shown=shown)
    except GradescopeExportError as exc:
        raise RegradeError(str(exc)) from None


def locate_notebook(folder: Path, module_name: str) -> tuple[Path | None, list[str]]:
    """The notebook the harness would grade in a submission folder, and notes for the TA
    (never raises; a notebook that is a symbolic link is not followed: None)."""
    from autograder.harness.package import SubmissionError, find_notebook

    if not folder.is_dir() or folder.is_symlink():
        return None, [f"no {folder.name}/ folder in the export: graded as an empty submission"]
    try:
        notebook, notes = find_notebook(folder, module_name)
    except SubmissionError as exc:
        return None, [str(exc)]
    if notebook.is_symlink():
        return None, [f"{notebook.name} is a symbolic link: not followed"]
    return notebook, list(notes)


def _notebook_notes(folder: Path, module_name: str) -> list[str]:
    """The harness's notes on which notebook it will grade (a renamed one), for the TA."""
    from autograder.harness.package import SubmissionError, find_notebook

    if not folder.is_dir() or folder.is_symlink():
        return []
    try:
        notebook, notes = find_notebook(folder, module_name)
    except SubmissionError:
        return []  # the harness says why in the results; the row shows it
    return [] if notebook.is_symlink() else list(notes)


def _scored(results: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    tests = (results or {}).get("tests") or []
    out: dict[str, dict[str, Any]] = {}
    for i, t in enumerate(tests if isinstance(tests, list) else []):
        if isinstance(t, dict):
            out[str(t.get("name") or f"test {i + 1}")] = t
    return out


def _f(value: Any) -> float | None:
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


def _status(t: dict[str, Any]) -> str:
    if t.get("status"):
        return str(t["status"])
    score, top = _f(t.get("score")) or 0.0, _f(t.get("max_score")) or 0.0
    return "passed" if score >= top else "failed"


def diff_tests(old: dict[str, Any] | None, new: dict[str, Any] | None) -> list[TestChange]:
    """Scored tests (max_score > 0 on either side) whose status or score changed.

    0-point public feedback tests are left out. No old results -> no per-test changes.
    """
    if not old:
        return []
    before, after = _scored(old), _scored(new)
    changes = []
    for name in list(before) + [n for n in after if n not in before]:
        a, b = before.get(name), after.get(name)
        if max(_f((a or {}).get("max_score")) or 0.0, _f((b or {}).get("max_score")) or 0.0) <= 0:
            continue
        sa, sb = (_status(a) if a else None), (_status(b) if b else None)
        va, vb = (_f(a.get("score")) if a else None), (_f(b.get("score")) if b else None)
        same_score = va is not None and vb is not None and abs(va - vb) < 1e-9
        if sa == sb and (same_score or va == vb):
            continue
        changes.append(TestChange(name, sa, sb, va, vb))
    return changes


def _problem(results: dict[str, Any]) -> str | None:
    """Why a submission could not be graded, as the harness told the student."""
    for t in results.get("tests") or []:
        if (isinstance(t, dict) and str(t.get("name", "")).endswith("· submission")
                and t.get("status") == "failed"):
            return str(t.get("output") or "").strip().splitlines()[0] or None
    if not results.get("tests"):
        lines = str(results.get("output") or "").strip().splitlines()
        return lines[-1] if lines else None
    return None


_TIMED_OUT = ("Timed out:", "not run: the whole submission used up")


def timed_out_tests(results: dict[str, Any] | None) -> int:
    """Tests that hit a time limit (a per-test timeout, or the run's time was used up)."""
    count = 0
    for t in (results or {}).get("tests") or []:
        text = str(t.get("output") or "") if isinstance(t, dict) else ""
        if any(m in text for m in _TIMED_OUT):
            count += 1
    return count


def build_row(unit: Unit, record: ExportRecord, results: dict[str, Any] | None,
              notes: list[str], *, error: str | None = None) -> SubmissionDiff:
    """The diff of one submission from its new results (or the course-side error)."""
    from staff.regrade.task import course_side_failure

    module = unit.module
    notes = list(notes)
    if record.old_results is None:
        notes.append("no old results in the export: no per-test comparison")
    if error is None and results is not None:
        error = course_side_failure(results)
    rel = f"{unit.prefix}{record.key}/results.json"
    if error is not None or results is None:
        return SubmissionDiff(
            module=module.name, key=record.key, submission_id=record.submission_id,
            students=record.students, old_score=record.old_score, new_score=None,
            max_score=float(module.points), outcome="error",
            notes=[*notes, f"not graded: {error or 'no results'} (course side; the old score "
                           "stays)"], results=None)
    problem = _problem(results)
    if problem and problem not in notes:
        notes = [n for n in notes if n not in problem] + [problem]
    stubs, stub_note = stub_modules(results)
    if stub_note:
        notes.append(stub_note)
    extra = results.get("extra_data") or {}
    top = _f(extra.get("max_score")) if isinstance(extra, dict) else None
    if top is None:
        top = sum(_f(t.get("max_score")) or 0.0 for t in results.get("tests") or []
                  if isinstance(t, dict)) or float(module.points)
    return SubmissionDiff(
        module=module.name, key=record.key, submission_id=record.submission_id,
        students=record.students, old_score=record.old_score,
        new_score=_f(results.get("score")) or 0.0, max_score=top,
        outcome="zero" if problem else "scored",
        changes=diff_tests(record.old_results, results), notes=notes, results=rel,
        timed_out=timed_out_tests(results), stubs=stubs)


def stub_modules(results: dict[str, Any]) -> tuple[list[str], str]:
    """Earlier modules the harness took from their release stub (still open, not uploaded),
    and a note for the TA saying so (empty when none)."""
    early = (results.get("extra_data") or {}).get("earlier_modules") or {}
    stubs = sorted(name for name, r in early.items()
                   if isinstance(r, dict) and r.get("from") == "stub")
    if not stubs:
        return [], ""
    closes = sorted({str(early[n].get("closes")) for n in stubs if early[n].get("closes")})
    return stubs, (f"graded with the release stub of {', '.join(stubs)} (still open until "
                   f"{'; '.join(closes) or '?'} and not in this submission): tests that need "
                   "them fail, so a lower score may come from that; --apply holds such drops "
                   "back unless --accept-drops")


def _order(row: SubmissionDiff) -> tuple[int, float, str, int, str]:
    """Not graded first, then drops (they need review), rises, unchanged, no old score."""
    d = row.delta
    if not row.graded:
        rank, d = 0, 0.0
    elif d is None:
        rank, d = 3, 0.0
    else:
        rank = 2 if d == 0 else 1
    return (rank, d, row.module, len(row.key), row.key)


# ----------------------------------------------------------------------------- reports
CSV_COLUMNS = ["module", "submission_id", "name", "sid", "email", "old_score", "new_score",
               "max_score", "delta", "outcome", "changed_tests", "notes", "results"]


def _g(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def write_report(report: RegradeReport, outdir: Path) -> list[Path]:
    """Write ``regrade_report.csv`` (one row per submitter) and ``regrade_report.json``.

    The CSV goes through :mod:`gradebook.csvsafe`: names and notes from the export cannot
    become spreadsheet formulas. Both files are replaced atomically.
    """
    from gradebook import csvsafe

    outdir.mkdir(parents=True, exist_ok=True, mode=0o700)
    csv_path, json_path = outdir / f"{REPORT_STEM}.csv", outdir / f"{REPORT_STEM}.json"
    report.report_files = [str(csv_path), str(json_path)]
    rows = []
    for row in report.rows:
        for s in row.students:
            rows.append([row.module, row.submission_id, s.name, s.sid, s.email,
                         _g(row.old_score), _g(row.new_score), _g(row.max_score),
                         _g(row.delta), row.outcome,
                         "; ".join(c.label(row.module) for c in row.changes),
                         " | ".join(row.notes), row.results or ""])
    tmp = csv_path.with_name(f".{csv_path.name}.{os.getpid()}")
    csvsafe.write_rows(tmp, CSV_COLUMNS, rows)
    os.replace(tmp, csv_path)
    _atomic_json(json_path, report.to_json())
    return [csv_path, json_path]


def _short(note: str) -> str:
    for prefix in ("Your submission could not be graded: ", "Not run: "):
        if note.startswith(prefix):
            return note[len(prefix):]
    return note


def render(report: RegradeReport, console: Any, *, max_changes: int = 4) -> None:
    """Print the diff table and a summary line with rich.

    Every cell is a :class:`rich.text.Text`: names and notes from an export are shown as they
    are, never read as markup (``[bold]`` in a name is text, ``[/x]`` cannot crash the table).
    """
    from rich.table import Table
    from rich.text import Text

    many = len({u["module"] for u in report.units}) > 1
    title = f"Regrade {report.module}: {report.export}" + (" (dry run)" if report.dry_run
                                                          else "")
    table = Table(title=Text(title), show_lines=False)
    cols = [("module", "left")] if many else []
    cols += [("student", "left"), ("SID", "left"), ("email", "left"), ("old", "right"),
             ("new", "right"), ("Δ", "right"), ("tests that changed", "left"),
             ("note", "left")]
    for col, just in cols:
        table.add_column(col, justify=just, overflow="fold")  # type: ignore[arg-type]
    for row in report.rows:
        d = row.delta
        style = "" if d is None or d == 0 else ("green" if d > 0 else "bold red")
        if not row.graded:
            delta = Text("not graded", style="bold yellow")
        else:
            delta = Text("new" if d is None else (f"{d:+g}" if d else "0"), style=style)
            if row.stub_drop:
                delta.append(" (stub)", style="bold yellow")
        labels = [c.label(row.module) for c in row.changes]
        if row.outcome == "zero" and len(labels) > 1:
            labels = [f"{len(labels)} scored tests changed (not run)"]
        elif len(labels) > max_changes:
            labels = labels[:max_changes] + [f"... {len(labels) - max_changes} more"]
        cells = [Text(row.module)] if many else []
        cells += [Text("\n".join(s.name or "?" for s in row.students)),
                  Text("\n".join(s.sid for s in row.students)),
                  Text("\n".join(s.email for s in row.students)),
                  Text("—" if row.old_score is None else f"{row.old_score:g}"),
                  Text("—" if row.new_score is None else f"{row.new_score:g}/{row.max_score:g}"),
                  delta, Text("\n".join(labels)),
                  Text("\n".join(_short(n) for n in row.notes),
                       style="yellow" if row.outcome != "scored" else "")]
        table.add_row(*cells)
    console.print(table)
    s = report.summary()
    console.print(Text(
        f"{s['submissions']} submission(s): {s['down']} down, {s['up']} up, {s['same']} "
        f"unchanged, {s['no_old_score']} without an old score; {s['zero']} unusable (zero "
        f"with a message); {s['not_graded']} not graded (course side, old score kept); "
        f"{s['test_changes']} test change(s)"))
    if s["stub_drops"]:
        stubs = sorted({m for r in report.rows if r.stub_drop for m in r.stubs})
        console.print(Text(
            f"{s['stub_drops']} drop(s) were graded with the release stub of "
            f"{', '.join(stubs)} (still open, not uploaded): each row's note says so; --apply "
            "holds them back unless --accept-drops REASON", style="bold yellow"))
    how = f"scheduler {report.scheduler}" if report.scheduler else f"{report.jobs} job(s)"
    console.print(Text(f"{report.elapsed_s:.1f} s with {how}: {report.graded_now} graded now, "
                       f"{report.reused} reused from an earlier run of this regrade"))
    slow = [r for r in report.rows if r.timed_out]
    if slow:
        console.print(Text(f"slow: {len(slow)} submission(s) hit a time limit (graded first, "
                           "each capped at the course's run timeout): " + ", ".join(
                               f"{r.key} ({r.timed_out} test(s) timed out"
                               + (f", {r.seconds:.0f} s" if r.seconds else "") + ")"
                               for r in slow[:8]) + (" ..." if len(slow) > 8 else "")))
    for note in report.notes:
        console.print(Text(f"note: {note}"))


def _atomic_json(path: Path, doc: Any) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
    tmp.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)


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
    from staff.regrade.run import Task, estimate, lanes_for, read_record, run_tasks
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
            tasks, jobs=jobs, scheduler=scheduler, hide=(str(work), str(outdir),
                                                         *(str(p.absolute()) for p in sources)),
            on_done=on_done, outdir=outdir)
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
