"""A Gradescope "Export Submissions" archive, read for a regrade: unpacked safely (no
absolute or ``..`` paths, no links followed, no zip bombs), its records parsed by
:mod:`coursekit.gradescope_export` (the one reader every command uses), its module told or checked,
each record's ``submission_metadata.json`` rebuilt, and the notebook the harness will grade
located.
"""

from __future__ import annotations

import secrets
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from coursekit import gradescope_export as gs
from coursekit.gradescope_export import (
    ExportRecord,
    GradescopeExportError,
    load_metadata_yaml,
    parse_records,
)
from staff.regrade.errors import RegradeError

if TYPE_CHECKING:
    from coursekit.course import Course

METADATA_YML = gs.METADATA_YML


SUBMISSION_KEY = gs.SUBMISSION_KEY


MAX_UNPACKED_BYTES = 2 * 1024**3  # an export of notebooks is far smaller; refuse zip bombs


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
