"""The one reader of Gradescope's "Export Submissions" metadata, for every command.

``tito gradebook ingest``, ``tito regrade`` (its dry run, its pre-flight checks and its
``--apply``) and ``tito integrity`` read an export through this module only (it is part of the
foundation, below the gradebook and the staff workflows), so they can never disagree about what an
export says (a Ruby ``BigDecimal`` score read by one and refused by the other, issue 12).

An export is a ``.zip`` (or the folder it unpacks to) holding ``assignment_<id>_export/``
(sometimes one folder deeper) with ``submission_metadata.yml`` and one ``submission_<id>/``
folder per active submission. The YAML is Ruby-flavoured: keys are symbols (``:submitters:``,
``:created_at:``, ``:score:``, ``:results:``, ``:history:``) and some nodes carry ``!ruby/...``
tags. It is read with a safe-loader subclass that turns Ruby tags into plain data (a
``!ruby/object:BigDecimal 18:0.5e2`` score becomes ``50.0``); any other tag (``!!python/...``)
is an "invalid YAML" error, never code. The loader is libyaml's (``yaml.CSafeLoader``) when
PyYAML was built with it: the same safe constructors, several times faster on a large export
(a regrade reads the file three times before it grades anything).

``submission_metadata.yml`` is looked for at most two folders below the zip root or the folder
given, never inside a ``submission_<id>/`` folder (a student may upload a file of that name);
the shallowest one wins and two at the same depth are an error.
"""

from __future__ import annotations

import datetime as dt
import re
import zipfile
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

try:
    from yaml import CSafeLoader as _SafeLoader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _SafeLoader  # type: ignore[assignment]

METADATA_YML = "submission_metadata.yml"
SUBMISSION_KEY = re.compile(r"^submission_(\d+)$")
ASSIGNMENT_DIR = re.compile(r"^assignment_(\d+)_export$")
MAX_DEPTH = 2  # submission_metadata.yml lies at most two folders below the export root
SKIP_DIRS = frozenset({"__MACOSX", ".ipynb_checkpoints"})


class GradescopeExportError(ValueError):
    """The export cannot be read; ``str(err)`` is one line naming the file and the field
    (``export.zip!assignment_1_export/submission_metadata.yml: submission_7: :submitters:
    missing``)."""


# ----------------------------------------------------------------------------- the YAML
class RubyYamlLoader(_SafeLoader):
    """A safe loader (libyaml's when available) that reads Ruby-tagged nodes (``!ruby/...``)
    as plain data.

    Only the safe constructors exist: a ``!!python/...`` tag is an error, never code.
    """


def bigdecimal(text: str) -> float | None:
    """A Ruby ``BigDecimal`` dump (``18:0.5e2``, ``0.5e2``) as a float; None if it is not one.

    Example:
        >>> bigdecimal("18:0.50e2"), bigdecimal("27:0.4625e2"), bigdecimal("lots")
        (50.0, 46.25, None)
    """
    try:
        value = Decimal(text.strip().rsplit(":", 1)[-1])
    except (InvalidOperation, ValueError):
        return None
    return float(value) if value.is_finite() else None


def _ruby_node(loader: _SafeLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    value = loader.construct_scalar(node)  # type: ignore[arg-type]
    if suffix.endswith("BigDecimal") and isinstance(value, str):
        number = bigdecimal(value)
        return value if number is None else number
    return value


RubyYamlLoader.add_multi_constructor("!", _ruby_node)


def plain(value: Any) -> Any:
    """Strip Ruby-symbol colons from keys; datetimes become ISO strings."""
    if isinstance(value, dict):
        return {(k.lstrip(":") if isinstance(k, str) else str(k)): plain(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    return value


def load_metadata_yaml(text: str, where: str) -> dict[str, Any]:
    """Parse ``submission_metadata.yml`` safely; keys lose their Ruby-symbol colons.

    Raises:
        GradescopeExportError: invalid YAML, or not a mapping of submission folders.
    """
    try:
        data = yaml.load(text, Loader=RubyYamlLoader)  # noqa: S506 - a safe loader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f"line {mark.line + 1}: " if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise GradescopeExportError(f"{where}: invalid YAML ({at}{problem})") from None
    except RecursionError:
        raise GradescopeExportError(f"{where}: invalid YAML (nested too deeply)") from None
    try:
        data = plain(data)
    except RecursionError:
        raise GradescopeExportError(f"{where}: invalid YAML (nested too deeply)") from None
    if not isinstance(data, dict):
        raise GradescopeExportError(f"{where}: expected a mapping of submission_<id> folders to "
                                    f"records, found {type(data).__name__}")
    if not data:
        raise GradescopeExportError(f"{where}: no submissions in the export")
    return data


# ----------------------------------------------------------------------------- records
@dataclass(frozen=True)
class Student:
    """One submitter as the export names them."""

    name: str
    sid: str
    email: str

    @property
    def key(self) -> str:
        """The identity the gradebook files this student under (SID, else email)."""
        return f"sid:{self.sid}" if self.sid else f"email:{self.email.lower()}"


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


def number(value: Any, what: str) -> float | None:
    """A score field as a finite float (None when empty).

    Raises:
        GradescopeExportError: not a number, or not finite.
    """
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise GradescopeExportError(f"{what}: {value!r} is not a number")
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise GradescopeExportError(f"{what}: {value!r} is not a number") from None
    if out != out or out in (float("inf"), float("-inf")):
        raise GradescopeExportError(f"{what}: {value!r} is not a finite number")
    return out


def parse_records(data: dict[str, Any], where: str) -> list[ExportRecord]:
    """Validate the YAML records, in submission-id order.

    Raises:
        GradescopeExportError: a key that is not ``submission_<id>``, or a bad field (named).
    """
    records = []
    for key in sorted(data, key=lambda k: (len(str(k)), str(k))):
        what = f"{where}: {key}"
        match = SUBMISSION_KEY.match(str(key))
        if not match:
            raise GradescopeExportError(f"{what}: not a submission_<id> key")
        rec = data[key]
        if not isinstance(rec, dict):
            raise GradescopeExportError(f"{what}: expected a mapping with :submitters:, :created_at:, "
                                        ":score:")
        raw = rec.get("submitters")
        if not isinstance(raw, list) or not raw:
            raise GradescopeExportError(f"{what}: :submitters: missing or empty")
        students = []
        for i, s in enumerate(raw):
            if not isinstance(s, dict):
                raise GradescopeExportError(f"{what}: :submitters:[{i}]: expected a mapping")
            st = Student(*(str(s.get(k) or "").strip() for k in ("name", "sid", "email")))
            if not (st.sid or st.email):
                raise GradescopeExportError(f"{what}: :submitters:[{i}]: no :sid: or :email:")
            students.append(st)
        created = rec.get("created_at")
        if created is None or str(created).strip() == "":
            raise GradescopeExportError(f"{what}: :created_at: missing")
        results = rec.get("results")
        if results is not None and not isinstance(results, dict):
            raise GradescopeExportError(f"{what}: :results: expected a mapping (a results.json)")
        history = rec.get("history") or []
        if not isinstance(history, list):
            raise GradescopeExportError(f"{what}: :history: expected a list")
        assignment = rec.get("assignment")
        records.append(ExportRecord(
            key=str(key), submission_id=match.group(1), students=students,
            created_at=str(created).strip(),
            old_score=number(rec.get("score"), f"{what}: :score:"),
            old_results=results or None,
            history=[h for h in history if isinstance(h, dict)],
            assignment=assignment if isinstance(assignment, dict) else None,
        ))
    return records


def duplicate_students(records: list[ExportRecord]) -> dict[str, list[tuple[Student, str]]]:
    """Students named in more than one record: record key -> [(student, other record key)].

    Gradescope keeps one active submission per student, so a student in two records (a group
    submission and a solo one, or an edited export) cannot be given one score: the gradebook
    refuses such an export, and the regrade reports it before grading.
    """
    seen: dict[str, str] = {}
    out: dict[str, list[tuple[Student, str]]] = {}
    for rec in records:
        for st in rec.students:
            keys = {st.key} | ({f"email:{st.email.lower()}"} if st.email else set())
            for k in sorted(keys):
                first = seen.setdefault(k, rec.key)
                if first != rec.key:
                    out.setdefault(rec.key, []).append((st, first))
                    out.setdefault(first, []).append((st, rec.key))
                    break
    return {k: list(dict.fromkeys(v)) for k, v in out.items()}


def duplicate_message(records: list[ExportRecord], where: str) -> str | None:
    """One line naming the first student found in two records, or None."""
    order = {r.key: i for i, r in enumerate(records)}
    dups = duplicate_students(records)
    for rec in records:
        for st, other in dups.get(rec.key, []):
            if order[other] > order[rec.key]:
                who = st.sid or st.email
                return (f"{where}: {rec.key} and {other} both name {who} ({st.name or '?'}); "
                        "Gradescope keeps one active submission per student: remove one record "
                        "or fix the group in Gradescope and export again")
    return None


# ----------------------------------------------------------------------------- locating
def depth_walk(root: Path, depth: int = MAX_DEPTH) -> list[Path]:
    """Every ``submission_metadata.yml`` at the shallowest depth <= ``depth`` below ``root``."""
    level = [root]
    for _ in range(depth + 1):
        found: list[Path] = []
        nxt: list[Path] = []
        for folder in level:
            candidate = folder / METADATA_YML
            if candidate.is_file() and not candidate.is_symlink():
                found.append(candidate)
            try:
                nxt += sorted(p for p in folder.iterdir()
                              if p.is_dir() and not p.is_symlink() and p.name not in SKIP_DIRS
                              and not SUBMISSION_KEY.match(p.name))
            except OSError:
                continue
        if found:
            return found
        level = nxt
    return []


def find_metadata(folder: Path, *, shown: str | None = None) -> Path:
    """The export's ``submission_metadata.yml`` in an unpacked folder.

    Raises:
        GradescopeExportError: none at depth <= 2, or several at the same depth.
    """
    shown = shown or str(folder)
    found = depth_walk(folder)
    if not found:
        raise GradescopeExportError(f"{shown}: no {METADATA_YML} in it or two folders below; is this a "
                                    "Gradescope 'Export Submissions' archive?")
    if len(found) > 1:
        names = ", ".join(p.relative_to(folder).as_posix() for p in found[:4])
        raise GradescopeExportError(f"{shown}: several exports inside ({names}); pass one of them")
    return found[0]


def metadata_member(names: list[str], shown: str) -> str:
    """The zip member that is the export's ``submission_metadata.yml`` (same rules).

    Raises:
        GradescopeExportError: none at depth <= 2, or several at the same depth.
    """
    best: dict[int, list[str]] = {}
    for name in names:
        parts = PurePosixPath(name.replace("\\", "/")).parts
        if not parts or parts[-1] != METADATA_YML or len(parts) - 1 > MAX_DEPTH:
            continue
        if any(p in SKIP_DIRS or SUBMISSION_KEY.match(p) for p in parts[:-1]):
            continue
        best.setdefault(len(parts) - 1, []).append(name)
    if not best:
        raise GradescopeExportError(f"{shown}: no {METADATA_YML} in it or two folders below; is this a "
                                    "Gradescope 'Export Submissions' archive?")
    top = sorted(best[min(best)])
    if len(top) > 1:
        raise GradescopeExportError(f"{shown}: several exports inside ({', '.join(top[:4])}); "
                                    "pass one of them")
    return top[0]


def open_zip(path: Path) -> zipfile.ZipFile:
    """Open an export archive.

    Raises:
        GradescopeExportError: not a zip, or unreadable.
    """
    try:
        return zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise GradescopeExportError(f"{path}: not a zip archive (expected a Gradescope "
                                    "'Export Submissions' .zip or its unpacked folder)") from None
    except OSError as exc:
        raise GradescopeExportError(f"{path}: cannot be read ({exc.strerror})") from None


def read_metadata(path: Path) -> tuple[str, str]:
    """The text of an export's ``submission_metadata.yml`` and where it was found.

    ``path`` is the export zip (read in place, nothing unpacked) or an unpacked folder. The
    location is ``export.zip!assignment_1_export/submission_metadata.yml`` for a zip.

    Raises:
        GradescopeExportError: no such path, not an export, unreadable text.
    """
    path = Path(path)
    if not path.exists():
        raise GradescopeExportError(f"{path}: no such file or folder")
    if path.is_file():
        with open_zip(path) as zf:
            member = metadata_member(zf.namelist(), str(path))
            location = f"{path}!{member}"
            try:
                return zf.read(member).decode("utf-8"), location
            except (zipfile.BadZipFile, OSError, EOFError, UnicodeDecodeError) as exc:
                raise GradescopeExportError(f"{location}: cannot be read ({exc})") from None
    meta = find_metadata(path)
    try:
        return meta.read_text(encoding="utf-8"), str(meta)
    except (OSError, UnicodeDecodeError) as exc:
        raise GradescopeExportError(f"{meta}: cannot be read ({exc})") from None


def read_records(path: Path) -> tuple[list[ExportRecord], str]:
    """Every record of an export (zip or folder), and the metadata's location.

    Raises:
        GradescopeExportError: as :func:`read_metadata`, :func:`load_metadata_yaml`,
            :func:`parse_records`.
    """
    text, location = read_metadata(path)
    return parse_records(load_metadata_yaml(text, location), location), location


def export_module(records: list[ExportRecord]) -> str | None:
    """The module an export is for: what its old results name (``extra_data.module``), else
    the number in its assignment title ("Module 03 · Layers"), else None."""
    for rec in records:
        extra = (rec.old_results or {}).get("extra_data")
        if isinstance(extra, dict) and extra.get("module"):
            return str(extra["module"])
    for rec in records:
        title = str((rec.assignment or {}).get("title") or "")
        m = re.search(r"\bmodule\s*0*(\d{1,2})\b", title, re.IGNORECASE)
        if m:
            return m.group(1)
    return None
