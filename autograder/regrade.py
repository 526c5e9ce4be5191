"""Regrade a module from a Gradescope "Export Submissions" archive (``tito regrade``).

The export is a zip (or its unpacked folder) holding ``assignment_<id>_export/`` (sometimes one
folder deeper) with ``submission_metadata.yml`` and one ``submission_<id>/`` folder per active
submission. The YAML maps each folder name to a record with Ruby-symbol keys: ``:submitters:``
(``:name:``, ``:sid:``, ``:email:``), ``:created_at:``, ``:score:``, ``:results:`` (the
results.json Gradescope holds) and ``:history:``.

For every record, :func:`regrade` writes ``submission_<id>/submission_metadata.json`` (from the
YAML record), grades the submission folder with the harness
(:func:`autograder.harness.core.grade_module`: sandboxed child, trusted parent, always a valid
results.json) into ``OUTDIR/submission_<id>/results.json``, and compares the new results with
the export's: old score, new score, delta and the scored tests whose status or score changed.

- ``dry_run``: grade into a temporary folder (or ``out`` when given) and report; the gradebook
  is never opened.
- otherwise: keep the results and write ``regrade_report.csv`` and ``regrade_report.json``.
- ``apply``: also ingest the export (the old scores; skipped as duplicates when already there)
  and the new results into the gradebook in one call of :func:`gradebook.api.ingest`, which is
  idempotent and records every changed score as a ``regrade`` event with its diff.

Bad input raises :class:`RegradeError` with one line naming the file and the field.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import re
import shutil
import tempfile
import time
import zipfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

METADATA_YML = "submission_metadata.yml"
REPORT_STEM = "regrade_report"
SUBMISSION_KEY = re.compile(r"^submission_(\d+)$")
ASSIGNMENT_DIR = re.compile(r"^assignment_(\d+)_export$")
MAX_UNPACKED_BYTES = 2 * 1024**3  # an export of notebooks is far smaller; refuse zip bombs
MAX_DEPTH = 2  # submission_metadata.yml lies at most two folders below the export root
_SKIP_DIRS = {"__MACOSX", ".ipynb_checkpoints"}


class RegradeError(ValueError):
    """Bad input: ``str(err)`` is one line naming the file and the field."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))


# ----------------------------------------------------------------------------- data
@dataclass(frozen=True)
class Student:
    """One submitter as the export names them."""

    name: str
    sid: str
    email: str


@dataclass
class ExportRecord:
    """One active submission in the export."""

    key: str
    submission_id: str
    students: list[Student]
    created_at: str
    old_score: float | None
    old_results: dict[str, Any] | None
    history: list[dict[str, Any]] = field(default_factory=list)
    assignment: dict[str, Any] | None = None


@dataclass
class Export:
    """A located and parsed export."""

    source: Path
    location: str
    root: Path
    records: list[ExportRecord]
    assignment_id: str | None = None
    stray_folders: list[str] = field(default_factory=list)


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
    """Old and new grade of one submission."""

    key: str
    submission_id: str
    students: list[Student]
    old_score: float | None
    new_score: float
    max_score: float
    changes: list[TestChange] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    results: str | None = None
    graded: bool = True

    @property
    def delta(self) -> float | None:
        """New minus old score (None when the export held no old score)."""
        if self.old_score is None:
            return None
        return round(self.new_score - self.old_score, 6)

    def to_json(self) -> dict[str, Any]:
        """Plain data for regrade_report.json."""
        return {
            "submission": self.key, "submission_id": self.submission_id,
            "students": [asdict(s) for s in self.students], "old_score": self.old_score,
            "new_score": self.new_score, "max_score": self.max_score, "delta": self.delta,
            "graded": self.graded, "changed_tests": [asdict(c) for c in self.changes],
            "notes": self.notes, "results": self.results,
        }


@dataclass
class RegradeReport:
    """Everything one regrade did."""

    module: str
    export: str
    metadata: str
    rows: list[SubmissionDiff]
    dry_run: bool
    outdir: str | None
    jobs: int
    elapsed_s: float = 0.0
    notes: list[str] = field(default_factory=list)
    ingest: dict[str, Any] | None = None
    report_files: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, int]:
        """Counts: submissions, up, down, same, no_old_score, not_graded, test_changes."""
        deltas = [r.delta for r in self.rows]
        return {
            "submissions": len(self.rows),
            "up": sum(1 for d in deltas if d is not None and d > 0),
            "down": sum(1 for d in deltas if d is not None and d < 0),
            "same": sum(1 for d in deltas if d == 0),
            "no_old_score": sum(1 for d in deltas if d is None),
            "not_graded": sum(1 for r in self.rows if not r.graded),
            "test_changes": sum(len(r.changes) for r in self.rows),
        }

    def to_json(self) -> dict[str, Any]:
        """Plain data for regrade_report.json."""
        return {
            "module": self.module, "export": self.export, "metadata": self.metadata,
            "dry_run": self.dry_run, "outdir": self.outdir, "jobs": self.jobs,
            "elapsed_s": round(self.elapsed_s, 2), "summary": self.summary(),
            "notes": self.notes, "ingest": self.ingest,
            "submissions": [r.to_json() for r in self.rows],
        }


# ----------------------------------------------------------------------------- the YAML
class _SafeRubyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that reads Ruby-tagged nodes (``!ruby/...``) as plain data.

    Only the safe constructors exist: a ``!!python/...`` tag is an error, never code.
    """


def _ruby_node(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    value = loader.construct_scalar(node)  # type: ignore[arg-type]
    if suffix.endswith("BigDecimal") and isinstance(value, str):  # Ruby: '18:0.5e2'
        try:
            return float(value.rsplit(":", 1)[-1])
        except ValueError:
            return value
    return value


_SafeRubyLoader.add_multi_constructor("!", _ruby_node)


def _plain(value: Any) -> Any:
    """Strip Ruby-symbol colons from keys; datetimes become ISO strings."""
    if isinstance(value, dict):
        return {(k.lstrip(":") if isinstance(k, str) else str(k)): _plain(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    return value


def load_metadata_yaml(text: str, where: str) -> dict[str, Any]:
    """Parse ``submission_metadata.yml`` safely; keys lose their Ruby-symbol colons.

    Raises:
        RegradeError: invalid YAML, or not a mapping of submission folders.
    """
    try:
        data = yaml.load(text, Loader=_SafeRubyLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f"line {mark.line + 1}: " if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise RegradeError(f"{where}: invalid YAML ({at}{problem})") from None
    data = _plain(data)
    if not isinstance(data, dict):
        raise RegradeError(f"{where}: expected a mapping of submission_<id> folders to records, "
                           f"found {type(data).__name__}")
    if not data:
        raise RegradeError(f"{where}: no submissions in the export")
    return data


def _number(value: Any, what: str) -> float | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise RegradeError(f"{what}: {value!r} is not a number")
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise RegradeError(f"{what}: {value!r} is not a number") from None
    if out != out or out in (float("inf"), float("-inf")):
        raise RegradeError(f"{what}: {value!r} is not a finite number")
    return out


def parse_records(data: dict[str, Any], where: str) -> list[ExportRecord]:
    """Validate the YAML records, in folder order.

    Raises:
        RegradeError: a key that is not ``submission_<id>``, or a bad field (named).
    """
    records = []
    for key in sorted(data, key=lambda k: (len(str(k)), str(k))):
        what = f"{where}: {key}"
        match = SUBMISSION_KEY.match(str(key))
        if not match:
            raise RegradeError(f"{what}: not a submission_<id> key")
        rec = data[key]
        if not isinstance(rec, dict):
            raise RegradeError(f"{what}: expected a mapping with :submitters:, :created_at:, "
                               ":score:")
        raw = rec.get("submitters")
        if not isinstance(raw, list) or not raw:
            raise RegradeError(f"{what}: :submitters: missing or empty")
        students = []
        for i, s in enumerate(raw):
            if not isinstance(s, dict):
                raise RegradeError(f"{what}: :submitters:[{i}]: expected a mapping")
            st = Student(*(str(s.get(k) or "").strip() for k in ("name", "sid", "email")))
            if not (st.sid or st.email):
                raise RegradeError(f"{what}: :submitters:[{i}]: no :sid: or :email:")
            students.append(st)
        created = rec.get("created_at")
        if created is None or str(created).strip() == "":
            raise RegradeError(f"{what}: :created_at: missing")
        results = rec.get("results")
        if results is not None and not isinstance(results, dict):
            raise RegradeError(f"{what}: :results: expected a mapping (a results.json)")
        history = rec.get("history") or []
        if not isinstance(history, list):
            raise RegradeError(f"{what}: :history: expected a list")
        assignment = rec.get("assignment")
        records.append(ExportRecord(
            key=str(key), submission_id=match.group(1), students=students,
            created_at=str(created).strip(), old_score=_number(rec.get("score"),
                                                               f"{what}: :score:"),
            old_results=results or None,
            history=[h for h in history if isinstance(h, dict)],
            assignment=assignment if isinstance(assignment, dict) else None,
        ))
    return records


# ----------------------------------------------------------------------------- the archive
def _depth_walk(root: Path, depth: int = MAX_DEPTH) -> list[Path]:
    """Every ``submission_metadata.yml`` at most ``depth`` folders below ``root``."""
    found: list[Path] = []
    level = [root]
    for _ in range(depth + 1):
        nxt: list[Path] = []
        for folder in level:
            candidate = folder / METADATA_YML
            if candidate.is_file():
                found.append(candidate)
            try:
                nxt += sorted(p for p in folder.iterdir()
                              if p.is_dir() and not p.is_symlink() and p.name not in _SKIP_DIRS
                              and not SUBMISSION_KEY.match(p.name))
            except OSError:
                continue
        if found:
            return found
        level = nxt
    return found


def find_metadata(folder: Path, *, shown: str | None = None) -> Path:
    """The export's ``submission_metadata.yml`` (the shallowest, at depth <= 2).

    Raises:
        RegradeError: none, or several at the same depth.
    """
    shown = shown or str(folder)
    found = _depth_walk(folder)
    if not found:
        raise RegradeError(f"{shown}: no {METADATA_YML} in it or two folders below; is this a "
                           "Gradescope 'Export Submissions' archive?")
    if len(found) > 1:
        names = ", ".join(p.relative_to(folder).as_posix() for p in found[:4])
        raise RegradeError(f"{shown}: several exports inside ({names}); pass one of them")
    return found[0]


def _unpack(zip_path: Path, dest: Path) -> None:
    """Extract a zip after checking every member (no absolute or ``..`` paths, no links)."""
    try:
        zf = zipfile.ZipFile(zip_path)
    except zipfile.BadZipFile:
        raise RegradeError(f"{zip_path}: not a zip archive (expected a Gradescope "
                           "'Export Submissions' .zip or its unpacked folder)") from None
    except OSError as exc:
        raise RegradeError(f"{zip_path}: cannot be read ({exc.strerror})") from None
    with zf:
        total = 0
        members = []
        for info in zf.infolist():
            name = info.filename.replace("\\", "/")
            parts = PurePosixPath(name).parts
            if name.startswith("/") or ".." in parts or (parts and ":" in parts[0]):
                raise RegradeError(f"{zip_path}: {info.filename}: unsafe path in the archive")
            if parts and parts[0] in _SKIP_DIRS:
                continue
            if (info.external_attr >> 16) & 0o170000 == 0o120000:  # a symlink: never follow
                continue
            total += info.file_size
            if total > MAX_UNPACKED_BYTES:
                raise RegradeError(f"{zip_path}: unpacks to more than "
                                   f"{MAX_UNPACKED_BYTES // 1024**3} GB; not a notebook export")
            members.append(info)
        try:
            for info in members:
                zf.extract(info, dest)
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            raise RegradeError(f"{zip_path}: damaged archive ({exc})") from None


def open_export(path: Path, *, workdir: Path) -> Export:
    """Locate and parse an export zip or folder (a zip is unpacked under ``workdir``).

    Raises:
        RegradeError: not an export, unreadable or invalid YAML, a bad record field.
    """
    path = Path(path)
    if not path.exists():
        raise RegradeError(f"{path}: no such file or folder")
    if path.is_file():
        dest = workdir / "export"
        dest.mkdir(parents=True, exist_ok=True)
        _unpack(path, dest)
        meta = find_metadata(dest, shown=str(path))
        location = f"{path}!{meta.relative_to(dest).as_posix()}"
    else:
        meta = find_metadata(path)
        location = str(meta)
    try:
        text = meta.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RegradeError(f"{location}: cannot be read ({exc})") from None
    records = parse_records(load_metadata_yaml(text, location), location)
    root = meta.parent
    known = {r.key for r in records}
    stray = sorted(p.name for p in root.iterdir()
                   if p.is_dir() and SUBMISSION_KEY.match(p.name) and p.name not in known)
    assignment_id = None
    for part in (root.name, *(p.name for p in root.parents)):
        m = ASSIGNMENT_DIR.match(part)
        if m:
            assignment_id = m.group(1)
            break
    return Export(source=path, location=location, root=root, records=records,
                  assignment_id=assignment_id, stray_folders=stray)


def check_module(export: Export, module_name: str, course: Any) -> None:
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


# ----------------------------------------------------------------------------- grading
def submission_metadata(record: ExportRecord, *, module: Any, course: Any,
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


def locate_notebook(folder: Path, module_name: str) -> tuple[Path | None, list[str]]:
    """The notebook the harness will grade, and notes for the TA (never raises)."""
    from autograder.harness.package import SubmissionError, find_notebook

    if not folder.is_dir():
        return None, [f"no {folder.name}/ folder in the export: graded as an empty submission"]
    try:
        notebook, notes = find_notebook(folder, module_name)
    except SubmissionError as exc:
        return None, [str(exc)]
    return notebook, notes


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


def _fallback_results(module: Any, message: str) -> dict[str, Any]:
    return {"score": 0.0, "execution_time": 0.0, "output": message,
            "visibility": "after_due_date", "stdout_visibility": "hidden",
            "tests": [{"name": f"{module.name} · submission", "score": 0.0,
                       "max_score": 0.0, "status": "failed", "visibility": "visible",
                       "output": message, "tags": [f"module:{module.name}", "public"]}],
            "extra_data": {"module": module.name, "regrade_error": message}}


def grade_record(*, course: Any, module: Any, export: Export, record: ExportRecord,
                 outdir: Path) -> SubmissionDiff:
    """Grade one submission folder into ``outdir/submission_<id>/`` and diff it (never raises
    for a broken submission: the harness writes a zero with a message)."""
    from autograder.harness.core import grade_module

    target = outdir / record.key
    target.mkdir(parents=True, exist_ok=True)
    meta = target / "submission_metadata.json"
    meta.write_text(json.dumps(submission_metadata(record, module=module, course=course,
                                                   assignment_id=export.assignment_id),
                               indent=1) + "\n", encoding="utf-8")
    folder = export.root / record.key
    _notebook, notes = locate_notebook(folder, module.name)
    out = target / "results.json"
    try:
        results = grade_module(course=course, module=module, submission=folder, out=out,
                               metadata=meta)
    except Exception as exc:  # noqa: BLE001 - the harness should not raise; never crash here
        results = _fallback_results(module, f"grading failed: {type(exc).__name__}: {exc}")
        out.write_text(json.dumps(results, indent=1), encoding="utf-8")
    if not out.is_file():  # pragma: no cover - the harness always writes one
        results = _fallback_results(module, "the grader wrote no results.json")
        out.write_text(json.dumps(results, indent=1), encoding="utf-8")
    problem = _problem(results)
    graded = problem is None
    if problem and problem not in notes:
        notes = [n for n in notes if n not in problem] + [problem]
    new_score = _f(results.get("score")) or 0.0
    extra = results.get("extra_data") or {}
    top = _f(extra.get("max_score")) if isinstance(extra, dict) else None
    if top is None:
        top = sum(_f(t.get("max_score")) or 0.0 for t in results.get("tests") or []
                  if isinstance(t, dict)) or float(module.points)
    if record.old_results is None:
        notes.append("no old results in the export: no per-test comparison")
    return SubmissionDiff(key=record.key, submission_id=record.submission_id,
                          students=record.students, old_score=record.old_score,
                          new_score=new_score, max_score=top,
                          changes=diff_tests(record.old_results, results), notes=notes,
                          results=out.relative_to(outdir).as_posix(), graded=graded)


def _order(row: SubmissionDiff) -> tuple[int, float, str]:
    """Drops first (they need review), then rises, then unchanged, then no old score."""
    d = row.delta
    if d is None:
        return (2, 0.0, row.key)
    return (1 if d == 0 else 0, d, row.key)


# ----------------------------------------------------------------------------- reports
CSV_COLUMNS = ["submission_id", "name", "sid", "email", "old_score", "new_score", "max_score",
               "delta", "changed_tests", "notes", "results"]


def _g(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def write_report(report: RegradeReport, outdir: Path) -> list[Path]:
    """Write ``regrade_report.csv`` (one row per submitter) and ``regrade_report.json``."""
    outdir.mkdir(parents=True, exist_ok=True)
    csv_path, json_path = outdir / f"{REPORT_STEM}.csv", outdir / f"{REPORT_STEM}.json"
    report.report_files = [str(csv_path), str(json_path)]
    with csv_path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(CSV_COLUMNS)
        for row in report.rows:
            for s in row.students:
                w.writerow([row.submission_id, s.name, s.sid, s.email, _g(row.old_score),
                            _g(row.new_score), _g(row.max_score), _g(row.delta),
                            "; ".join(c.label(report.module) for c in row.changes),
                            " | ".join(row.notes), row.results or ""])
    json_path.write_text(json.dumps(report.to_json(), indent=1) + "\n", encoding="utf-8")
    return [csv_path, json_path]


def _short(note: str) -> str:
    for prefix in ("Your submission could not be graded: ", "Not run: "):
        if note.startswith(prefix):
            return note[len(prefix):]
    return note


def render(report: RegradeReport, console: Any, *, max_changes: int = 4) -> None:
    """Print the diff table and a summary line with rich."""
    from rich.table import Table
    from rich.text import Text

    title = f"Regrade {report.module}: {report.export}" + (" (dry run)" if report.dry_run
                                                          else "")
    table = Table(title=title, show_lines=False)
    for col, just in (("student", "left"), ("SID", "left"), ("email", "left"),
                      ("old", "right"), ("new", "right"), ("Δ", "right"),
                      ("tests that changed", "left"), ("note", "left")):
        table.add_column(col, justify=just, overflow="fold")  # type: ignore[arg-type]
    for row in report.rows:
        d = row.delta
        style = "" if d is None or d == 0 else ("green" if d > 0 else "bold red")
        delta = Text("new" if d is None else (f"{d:+g}" if d else "0"), style=style)
        labels = [c.label(report.module) for c in row.changes]
        if not row.graded and len(labels) > 1:
            labels = [f"{len(labels)} scored tests changed (not run)"]
        elif len(labels) > max_changes:
            labels = labels[:max_changes] + [f"... {len(labels) - max_changes} more"]
        table.add_row("\n".join(s.name or "?" for s in row.students),
                      "\n".join(s.sid for s in row.students),
                      "\n".join(s.email for s in row.students),
                      "—" if row.old_score is None else f"{row.old_score:g}",
                      f"{row.new_score:g}/{row.max_score:g}", delta, "\n".join(labels),
                      Text("\n".join(_short(n) for n in row.notes),
                           style="yellow" if not row.graded else ""))
    console.print(table)
    s = report.summary()
    console.print(f"{s['submissions']} submission(s): {s['down']} down, {s['up']} up, "
                  f"{s['same']} unchanged, {s['no_old_score']} without an old score; "
                  f"{s['not_graded']} could not be graded (zero with a message); "
                  f"{s['test_changes']} test change(s); {report.elapsed_s:.1f} s with "
                  f"{report.jobs} job(s)")
    for note in report.notes:
        console.print(f"note: {note}")


# ----------------------------------------------------------------------------- the verb
def default_outdir(module_name: str, export: Path) -> Path:
    """``build/regrade/<module>-<export name>/``."""
    from tito import paths

    stem = export.name[:-4] if export.name.endswith(".zip") else export.name
    return paths.BUILD / "regrade" / f"{module_name}-{stem or 'export'}"


def _load_course(course: Any) -> Any:
    from tito.course import CourseError, resolve_course

    try:
        return resolve_course(course)
    except CourseError as exc:
        raise RegradeError(str(exc)) from None


def resolve_module(course: Any, ref: str) -> Any:
    """The module to regrade; it must have a hidden suite.

    Raises:
        RegradeError: unknown module, or no suite to grade with.
    """
    from tito import paths

    try:
        mod = course.module(ref)
    except ValueError as exc:
        raise RegradeError(f"--module: {exc}") from None
    suite = paths.SUITES / mod.name / "suite.py"
    if not suite.is_file():
        raise RegradeError(f"--module {mod.name}: no hidden suite at "
                           f"{suite.relative_to(paths.REPO_ROOT)}; nothing to grade with")
    return mod


def regrade(*, export: Path, module: str, course: Any = None, out: Path | None = None,
            dry_run: bool = False, apply: bool = False, store: str | Path | None = None,
            jobs: int = 1,
            on_start: Callable[[int], None] | None = None,
            on_done: Callable[[SubmissionDiff], None] | None = None) -> RegradeReport:
    """Regrade every active submission of an export and compare with the old scores.

    Args:
        export: the export ``.zip`` or its unpacked folder.
        module: ``01``, ``1``, ``01_tensor`` or ``tensor``.
        course: course.yml path, a loaded course, or None (the default).
        out: where results and reports go (default ``build/regrade/<module>-<export>/``;
            with ``dry_run`` a temporary folder that is removed, unless ``out`` is given).
        dry_run: grade and diff only; never touch the gradebook, no reports unless ``out``.
        apply: ingest the export and the new results into the gradebook store.
        store: the gradebook store (default: course.yml's ``gradebook_store``).
        jobs: submissions graded in parallel (each grading runs in its own sandboxed child).
        on_start: called once with the number of submissions.
        on_done: called with each submission's diff as it finishes.

    Returns:
        The report (rows ordered: drops, rises, unchanged, no old score).

    Raises:
        RegradeError: bad input (one line naming the file and field); nothing was written.
        gradebook.errors.GradebookError: the gradebook refused the ingest (nothing written).
    """
    if dry_run and apply:
        raise RegradeError("--dry-run and --apply exclude each other: review with --dry-run, "
                           "then run again with --apply")
    if jobs < 1:
        raise RegradeError(f"--jobs: {jobs} is not a positive number of workers")
    started = time.monotonic()
    c = _load_course(course)
    mod = resolve_module(c, module)
    export = Path(export)
    work = Path(tempfile.mkdtemp(prefix="tt-regrade-"))
    try:
        exp = open_export(export, workdir=work)
        check_module(exp, mod.name, c)
        keep = out is not None or not dry_run
        outdir = Path(out) if out is not None else (
            work / "results" if dry_run else default_outdir(mod.name, export))
        outdir = outdir.absolute()
        outdir.mkdir(parents=True, exist_ok=True)
        if on_start:
            on_start(len(exp.records))
        rows: list[SubmissionDiff] = []
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(grade_record, course=c, module=mod, export=exp, record=r,
                                   outdir=outdir) for r in exp.records]
            for fut in as_completed(futures):
                row = fut.result()
                rows.append(row)
                if on_done:
                    on_done(row)
        rows.sort(key=_order)
        notes = [f"{name}/ is not in {METADATA_YML}: skipped" for name in exp.stray_folders]
        history = sum(len(r.history) for r in exp.records)
        if history:
            notes.append(f"{history} earlier submission(s) in :history: not regraded "
                         "(the active one counts, as on Gradescope)")
        broken = sum(1 for r in rows if not r.graded)
        if len(rows) > 1 and broken == len(rows):
            notes.append(f"none of the {len(rows)} submissions could be graded: check that "
                         f"the export is for {mod.name} before applying anything")
        report = RegradeReport(module=mod.name, export=str(export), metadata=exp.location,
                               rows=rows, dry_run=dry_run,
                               outdir=str(outdir) if keep else None, jobs=jobs, notes=notes)
        if keep:
            write_report(report, outdir)
        if apply:
            report.ingest = _ingest(report, exp, outdir=outdir, course=c, store=store)
        report.elapsed_s = time.monotonic() - started
        if keep:
            write_report(report, outdir)
        return report
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _ingest(report: RegradeReport, exp: Export, *, outdir: Path, course: Any,
            store: str | Path | None) -> dict[str, Any]:
    """Record the old scores (the export itself) and then the new results.

    Two ingests, each one all-or-nothing and idempotent: the export's rows are skipped when
    it was ingested before, and a new result equal to the recorded one is skipped, so running
    ``--apply`` twice records nothing the second time. A changed score becomes a ``regrade``
    event whose details hold the previous event and the diff.
    """
    from gradebook.api import ingest
    from gradebook.store import store_label

    results = [outdir / r.results for r in sorted(report.rows, key=lambda r: r.key)
               if r.results]
    counts = ("new", "regrades", "unchanged", "duplicates")
    old = ingest([exp.source.absolute()], store=store, course=course, module=report.module)
    new = ingest(results, store=store, course=course, module=report.module)
    if store is None:
        from tito import paths

        where = store_label(course.course.gradebook_store, paths.REPO_ROOT)
    else:
        where = store_label(store, Path.cwd())
    return {
        "store": str(where),
        "export": {k: sum(getattr(f, k) for f in old.files) for k in counts},
        "results": {k: sum(getattr(f, k) for f in new.files) for k in counts},
        "regrade_events": new.regrades,
    }
