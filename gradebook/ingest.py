"""Ingest score files into the store: results.json, Gradescope grade CSVs and export archives.

Every path is parsed completely first (a bad file stops the ingest before anything is
written, with one line naming the file and the field); then all rows are classified against
the store and written in ONE transaction:

- ``duplicate``: this file already recorded this (student, item) -> skipped (idempotence);
- ``unchanged``: an earlier event for the same submission already has this score, max and
  suite version -> skipped;
- ``regrade``: the same submission was recorded before with a different score -> recorded with
  kind ``regrade`` and its diff (shown by ``--dry-run`` before it is applied);
- ``new``: recorded with the source's kind.

A results.json test tagged ``milestone:<id>`` scores the milestone item; every other test
scores the module's autograded item (``public`` tests carry 0 points). An item one of whose
tests is tagged ``pending`` (the autograder could not score it for a course-side reason), and
every item of a results.json whose ``extra_data.grader_error`` says the run itself failed, is
recorded as ``pending``: no score, never a 0, listed by ``check`` until a regrade scores it
(DESIGN invariant 12).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from coursekit import gradescope_export as gs
from gradebook.errors import GradebookError, where
from gradebook.identity import RosterIndex
from gradebook.inputs import read_csv_rows, sha256_file
from gradebook.store import Store, current_user, now_utc
from gradebook.tables import records

if TYPE_CHECKING:
    from coursekit.course import Course

GRADE_CSV_REQUIRED = ["SID", "Email", "Total Score", "Max Points", "Status", "Submission Time"]
#: A results.json or submission_metadata.json larger than this is refused unread (the grader
#: caps every test's output; a real one is far smaller).
MAX_JSON_BYTES = 64 * 1024 * 1024
SLOW_HOOK = "GRADEBOOK_TEST_ROW_DELAY"  # seconds to sleep between written rows (tests only)
TOLERANCE = 1e-6  # scores are rounded to 6 decimals by the harness
PENDING = "pending"  # the event kind of a course-side failure (gradebook.policy.PENDING)


@dataclass
class ScoreRow:
    """One score for one student and item, as a source states it."""

    kind: str
    item: str
    score: float | None
    max_score: float | None
    sid: str | None = None
    login: str | None = None
    email: str | None = None
    name: str | None = None
    submitted_at: str | None = None
    submission_id: str | None = None
    suite_version: str | None = None
    reason: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    tests: list[dict[str, Any]] = field(default_factory=list)

    @property
    def student_ref(self) -> str:
        """The identity key of the row in the store (``sid:...``, ``login:...``, ``email:...``)."""
        if self.sid:
            return f"sid:{self.sid}"
        if self.login:
            return f"login:{self.login.lower()}"
        return f"email:{(self.email or '').lower()}"


@dataclass
class Source:
    """One parsed input file."""

    path: str
    sha256: str
    kind: str
    rows: list[ScoreRow]
    notes: list[str] = field(default_factory=list)


@dataclass
class FileResult:
    """What ingesting one source did."""

    path: str
    kind: str
    new: int = 0
    regrades: int = 0
    unchanged: int = 0
    duplicates: int = 0
    pending: int = 0
    notes: list[str] = field(default_factory=list)


@dataclass
class IngestReport:
    """The outcome of one ingest (or dry run)."""

    files: list[FileResult]
    regrades: list[dict[str, Any]]
    dry_run: bool = False
    #: items recorded as pending (course side, no score): student_ref, item, why, source
    pending: list[dict[str, Any]] = field(default_factory=list)

    @property
    def added(self) -> int:
        """Events written (or, in a dry run, that would be written)."""
        return sum(f.new + f.regrades + f.pending for f in self.files)


# ----------------------------------------------------------------------- parsing
def parse_time(value: object, tz: Any, what: str) -> str:
    """A submission time (ISO string, Gradescope string or datetime) as ISO UTC.

    Raises:
        GradebookError: missing, unparseable, or a year outside 2000-2100.
    """
    if value is None or value == "":
        raise GradebookError(f"{what}: missing")
    try:
        stamp = pd.Timestamp(value)  # type: ignore[arg-type]
    except (ValueError, TypeError):
        raise GradebookError(f"{what}: {value!r} is not a time") from None
    if pd.isna(stamp):
        raise GradebookError(f"{what}: {value!r} is not a time")
    if stamp.tzinfo is None:
        stamp = stamp.tz_localize(tz)
    if not 2000 <= stamp.year <= 2100:
        raise GradebookError(f"{what}: impossible date {value!r}")
    return stamp.tz_convert("UTC").isoformat()


def _num(value: object, what: str) -> float:
    if isinstance(value, bool) or value is None:
        raise GradebookError(f"{what}: missing or not a number")
    try:
        out = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise GradebookError(f"{what}: {value!r} is not a number") from None
    if math.isnan(out) or math.isinf(out):
        raise GradebookError(f"{what}: {value!r} is not a finite number")
    return out


def _module_name(course: Course, ref: object, what: str) -> str:
    try:
        return str(course.module(str(ref)).name)
    except ValueError as exc:
        raise GradebookError(f"{what}: {exc}") from None


def results_rows(
    results: Any, *, course: Course, users: list[dict[str, Any]], submitted_at: str,
    submission_id: str | None, kind: str, what: str, module: str | None = None,
    fallback_score: float | None = None, declared_score: float | None = None,
    accept: str | None = None,
) -> list[ScoreRow]:
    """Turn one results.json document into score rows (one per user and item).

    Args:
        results: the parsed results.json (a dict), or ``None`` when the autograder wrote none.
        course: the loaded course.
        users: dicts with ``sid``/``email``/``name`` (and optionally ``login``).
        submitted_at: ISO UTC submission time.
        submission_id: the Gradescope submission id, if known.
        kind: event kind to record.
        what: location prefix for errors.
        module: the module, when the caller knows it (``--module``).
        fallback_score: the submission's score when ``results`` is missing.
        declared_score: the score the source says the student saw (an export's ``:score:``);
            it must agree with the results.
        accept: a reason to record scores that fail the consistency checks anyway (audited:
            the reason, the problems and the user are kept in the event's details).

    Returns:
        Score rows.

    Raises:
        GradebookError: the module cannot be told, a test lacks a score, a tag is unknown, or
            (without ``accept``) a score outside [0, max] or totals that disagree.
    """
    milestones = {ms.id: ms for ms in course.milestones}
    problems: list[str] = []
    if results is None:
        if module is None:
            raise GradebookError(f"{what}: no :results: to tell the module from, and the "
                                 "export names none; pass --module (e.g. --module 03)")
        mod = course.module(module)
        per_item: dict[str, list[float]] = {mod.name: [fallback_score or 0.0, float(mod.points)]}
        if not 0 <= (fallback_score or 0.0) <= mod.points + TOLERANCE:
            problems.append(f"{what}: :score: {fallback_score:g} is outside 0..{mod.points:g}")
        tests: list[dict[str, Any]] = []
        suite = None
        note = "no results.json (autograder failed?): submission score used"
    else:
        if not isinstance(results, dict):
            raise GradebookError(f"{what}: expected a JSON object")
        extra = results.get("extra_data") or {}
        raw_tests = results.get("tests") or []
        if not isinstance(raw_tests, list):
            raise GradebookError(f"{what}: tests: expected a list")
        tag_modules = {
            t[len("module:"):]
            for test in raw_tests if isinstance(test, dict)
            for t in test.get("tags") or [] if isinstance(t, str) and t.startswith("module:")
        }
        only_tag = next(iter(tag_modules)) if len(tag_modules) == 1 else None
        name = extra.get("module") or module or only_tag
        if not name:
            raise GradebookError(
                f"{what}: extra_data.module: missing and no test carries a module tag; pass "
                "--module to say which module these results are for"
            )
        mod = course.module(_module_name(course, name, f"{what}: extra_data.module"))
        suite = extra.get("suite_version")
        suite = None if suite is None else str(suite)
        per_item = {mod.name: [0.0, 0.0]}
        tests = []
        for i, test in enumerate(raw_tests):
            loc = f"{what}: tests[{i}]"
            if not isinstance(test, dict):
                raise GradebookError(f"{loc}: expected an object")
            score = _num(test.get("score"), f"{loc}.score")
            max_score = _num(test.get("max_score", 0.0), f"{loc}.max_score")
            if max_score < 0:
                raise GradebookError(f"{loc}.max_score: {max_score:g} is negative")
            if not 0 <= score <= max_score + TOLERANCE:
                problems.append(f"{loc}.score: {score:g} is outside 0..{max_score:g}")
            tags = [str(t) for t in test.get("tags") or []]
            item = mod.name
            for tag in tags:
                if tag.startswith("module:") and tag[7:] != mod.name:
                    raise GradebookError(
                        f"{loc}.tags: {tag} but the results are for module {mod.name}"
                    )
                if tag.startswith("milestone:"):
                    mid = tag.split(":", 1)[1]
                    if mid not in milestones:
                        raise GradebookError(f"{loc}.tags: unknown milestone {mid!r}")
                    item = f"milestone:{mid}"
            status = test.get("status") or ("passed" if score >= max_score else "failed")
            per_item.setdefault(item, [0.0, 0.0])
            per_item[item][0] += score
            per_item[item][1] += max_score
            tests.append({"name": str(test.get("name") or f"test {i + 1}"), "score": score,
                          "max_score": max_score, "status": str(status), "tags": tags})
        top = results.get("score")
        top_score = None if top is None else _num(top, f"{what}: score")
        if not raw_tests:
            per_item[mod.name] = [top_score or 0.0, float(mod.points)]
            if not 0 <= (top_score or 0.0) <= mod.points + TOLERANCE:
                problems.append(f"{what}: score: {top_score:g} is outside 0..{mod.points:g}")
        elif top_score is not None:
            summed = math.fsum(v[0] for v in per_item.values())
            if abs(top_score - summed) > TOLERANCE:
                problems.append(f"{what}: score: {top_score:g} but its tests sum to {summed:g} "
                                "(Gradescope shows the student the top-level score)")
                if accept:  # record what the student saw: the difference goes to the module
                    per_item[mod.name][0] += top_score - summed
        if declared_score is not None:
            total = math.fsum(v[0] for v in per_item.values())
            if abs(declared_score - total) > TOLERANCE:
                problems.append(f"{what}: :score: {declared_score:g} but its :results: give "
                                f"{total:g} (a score changed by hand in Gradescope?)")
        note = ""
        pending = _pending_items(results, extra, per_item, course, mod)
    if results is None:
        pending = {}
    if not users:
        raise GradebookError(f"{what}: users: no submitter")
    details: dict[str, Any] = {"note": note} if note else {}
    if problems:
        if not accept:
            raise GradebookError(f"{problems[0]}; refused (pass --accept-inconsistent REASON "
                                 "to record it anyway, audited)")
        details["accepted"] = {"reason": accept, "by": current_user(), "problems": problems}
    rows: list[ScoreRow] = []
    for user in users:
        for item, (score, max_score) in per_item.items():
            why = pending.get(item)
            rows.append(ScoreRow(
                kind=PENDING if why else kind, item=item, score=None if why else score,
                max_score=max_score,
                sid=user.get("sid") or None, login=user.get("login") or None,
                email=user.get("email") or None, name=user.get("name") or None,
                submitted_at=submitted_at, submission_id=submission_id, suite_version=suite,
                details={**details, "pending": why, "source_kind": kind} if why
                else dict(details),
                tests=tests if item == mod.name else [],
            ))
    return rows


def _pending_items(results: dict[str, Any], extra: Any, per_item: dict[str, list[float]],
                   course: Course, mod: Any) -> dict[str, list[str]]:
    """Items of ``results`` that are pending (course side), each with why.

    Tests tagged ``pending`` make their item pending; ``extra_data.grader_error`` (the run
    itself failed) makes every item of the module pending (its milestones included); results
    of an older harness, without ``extra_data.pending``, with ``grader_errors`` too.
    """
    extra = extra if isinstance(extra, dict) else {}
    if extra.get("grader_error"):
        why = [f"autograder error: {str(extra['grader_error']).splitlines()[0][:300]}"]
        per_item.clear()
        per_item[mod.name] = [0.0, float(mod.points)]
        for m in course.milestones_graded_with(mod.number):
            per_item[f"milestone:{m.id}"] = [0.0, float(m.points)]
        return {item: why for item in per_item}
    errors = extra.get("grader_errors")
    if "pending" not in extra and isinstance(errors, list) and errors:
        return {item: [str(e)[:300] for e in errors[:5]] for item in per_item}
    reasons = {str(p.get("test")): str(p.get("why") or "") for p in extra.get("pending") or []
               if isinstance(p, dict)}
    out: dict[str, list[str]] = {}
    for test in results.get("tests") or []:
        tags = [str(t) for t in (test.get("tags") or [])] if isinstance(test, dict) else []
        if "pending" not in tags:
            continue
        ms = next((t.split(":", 1)[1] for t in tags if t.startswith("milestone:")), None)
        item = f"milestone:{ms}" if ms else mod.name
        name = str(test.get("name") or "")
        out.setdefault(item, []).append(f"{name}: {reasons.get(name) or 'not scored'}"[:300])
    return out


def _users(raw: Any, what: str) -> list[dict[str, Any]]:
    if not isinstance(raw, list) or not raw:
        raise GradebookError(f"{what}: missing or empty")
    users = []
    for i, u in enumerate(raw):
        if not isinstance(u, dict):
            raise GradebookError(f"{what}[{i}]: expected an object")
        user = {k.lstrip(":"): ("" if v is None else str(v).strip()) for k, v in u.items()}
        if not (user.get("sid") or user.get("email") or user.get("login")):
            raise GradebookError(f"{what}[{i}]: no sid, email or login")
        users.append(user)
    return users


def read_json(path: Path) -> Any:
    """A JSON file, bounded: too large, too deeply nested or invalid is one line naming it.

    Raises:
        GradebookError: the file is over :data:`MAX_JSON_BYTES`, not UTF-8, not JSON, or
            nested beyond what Python's parser takes.
    """
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise GradebookError(f"{path}: cannot be read ({exc.strerror})") from None
    if size > MAX_JSON_BYTES:
        raise GradebookError(f"{path}: is {size / 2**20:.0f} MB, more than "
                             f"{MAX_JSON_BYTES // 2**20} MB; not a results file")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise GradebookError(f"{path}: invalid JSON ({exc})") from None
    except RecursionError:
        raise GradebookError(f"{path}: invalid JSON (nested too deeply)") from None


def parse_results_file(path: Path, *, course: Course, module: str | None = None,
                       accept: str | None = None) -> Source:
    """Parse a results.json and its sibling submission_metadata.json.

    Raises:
        GradebookError: invalid JSON, no sibling metadata, or a bad field.
    """
    sha = sha256_file(path)
    results = read_json(path)
    meta_path = path.parent / "submission_metadata.json"
    if not meta_path.is_file():
        raise GradebookError(
            f"{path}: no submission_metadata.json beside it (it gives the student and the "
            "submission time)"
        )
    meta = read_json(meta_path)
    if not isinstance(meta, dict):
        raise GradebookError(f"{meta_path}: expected a JSON object")
    users = _users(meta.get("users"), f"{meta_path}: users")
    submitted = parse_time(meta.get("created_at"), course.tz, f"{meta_path}: created_at")
    sub_id = meta.get("id")
    rows = results_rows(
        results, course=course, users=users, submitted_at=submitted,
        submission_id=None if sub_id is None else str(sub_id), kind="results_json",
        what=str(path), module=module, accept=accept,
    )
    return Source(str(path), sha, "results_json", rows)


def parse_export(path: Path, *, course: Course, module: str | None = None,
                 accept: str | None = None) -> Source:
    """Parse a Gradescope "Export Submissions" archive (zip) or its unpacked folder.

    Read with :mod:`coursekit.gradescope_export`, the reader ``tito regrade`` uses too. Each record's
    ``:results:`` (that submission's results.json) gives its scores; a record without results
    is scored from ``:score:`` (needs ``--module``). Only the active submission is scored (as
    Gradescope does); earlier ones in ``:history:`` are counted in the notes.

    Raises:
        GradebookError: invalid YAML, a record without submitters or time, a student in two
            records, or a score that fails the checks of :func:`results_rows`.
    """
    try:
        text, loc = gs.read_metadata(path)
        records = gs.parse_records(gs.load_metadata_yaml(text, loc), loc)
    except gs.GradescopeExportError as exc:
        raise GradebookError(str(exc)) from None
    sha = sha256_file(path) if path.is_file() else hashlib.sha256(text.encode()).hexdigest()
    dup = gs.duplicate_message(records, loc)
    if dup:
        raise GradebookError(dup)
    module = module or gs.export_module(records)
    rows: list[ScoreRow] = []
    history = 0
    for rec in records:
        what = f"{loc}: {rec.key}"
        users = [{"sid": s.sid, "email": s.email, "name": s.name} for s in rec.students]
        submitted = parse_time(rec.created_at, course.tz, f"{what}: :created_at")
        rows += results_rows(
            rec.old_results, course=course, users=users, submitted_at=submitted,
            submission_id=rec.submission_id, kind="gradescope_export", what=what, module=module,
            fallback_score=rec.old_score,
            declared_score=rec.old_score if rec.old_results else None, accept=accept,
        )
        history += len(rec.history)
    notes = [f"{history} earlier submission(s) in :history: not scored (the active one counts)"]
    return Source(str(path), sha, "gradescope_export", rows, notes if history else [])


def infer_item(course: Course, path: Path) -> str:
    """Tell the item of a Gradescope grade CSV from its file name.

    ``Module_03_Layers_scores.csv`` -> ``03_layers``; ``03_written_scores.csv`` ->
    ``03_layers:written``; a milestone id in the name -> that milestone.

    Raises:
        GradebookError: no module or several modules match.
    """
    stem = path.stem.lower()
    for ms in course.milestones:
        if ms.id in stem:
            return f"milestone:{ms.id}"
    hits = {m.name for m in course.modules if m.slug in re.split(r"[^a-z0-9]+", stem)}
    for number in re.findall(r"(?<!\d)(\d{1,2})(?!\d)", stem):
        for m in course.modules:
            if m.number == int(number):
                hits.add(m.name)
    if len(hits) != 1:
        raise GradebookError(
            f"{path}: cannot tell the module from the file name ({len(hits)} match); "
            "pass --item (e.g. --item 03 or --item 03:written)"
        )
    name = hits.pop()
    return f"{name}:written" if "written" in stem else name


def parse_grade_csv(path: Path, *, course: Course, item: str | None = None,
                    accept: str | None = None) -> Source:
    """Parse a Gradescope per-assignment grade CSV ("Download Grades").

    ``Total Score`` out of ``Max Points`` scores the item (``--item``, or told from the file
    name). Rows whose Status is not ``Graded`` (``Missing``, ``Ungraded``) hold no score; they
    are counted in the notes, not recorded.

    Raises:
        GradebookError: a missing column, an unparseable score or time.
    """
    from gradebook.items import resolve_item

    target = resolve_item(course, item) if item else infer_item(course, path)
    sha = sha256_file(path)
    rows: list[ScoreRow] = []
    skipped: dict[str, int] = {}
    seen: dict[str, int] = {}
    for line, r in read_csv_rows(path, GRADE_CSV_REQUIRED):
        status = r["Status"] or "Missing"
        if status.lower() != "graded" or not r["Total Score"]:
            skipped[status] = skipped.get(status, 0) + 1
            continue
        if not (r["SID"] or r["Email"]):
            raise GradebookError(f"{where(path, line, 'SID/Email')}: both empty")
        key = (r["SID"] or r["Email"]).lower()
        if key in seen:
            raise GradebookError(f"{where(path, line, 'SID/Email')}: duplicate row for {key!r} "
                                 f"(also on line {seen[key]})")
        seen[key] = line
        name = " ".join(x for x in (r.get("First Name", ""), r.get("Last Name", "")) if x)
        total = _num(r["Total Score"], where(path, line, "Total Score"))
        top = _num(r["Max Points"], where(path, line, "Max Points"))
        details: dict[str, Any] = {}
        if top <= 0:
            raise GradebookError(f"{where(path, line, 'Max Points')}: {top:g} is not positive")
        if not 0 <= total <= top + TOLERANCE:
            problem = f"{where(path, line, 'Total Score')}: {total:g} is outside 0..{top:g}"
            if not accept:
                raise GradebookError(f"{problem}; refused (pass --accept-inconsistent REASON "
                                     "to record it anyway, audited)")
            details["accepted"] = {"reason": accept, "by": current_user(), "problems": [problem]}
        rows.append(ScoreRow(
            kind="gradescope_csv", item=target, score=total, max_score=top, details=details,
            sid=r["SID"] or None, email=r["Email"] or None, name=name or None,
            submitted_at=parse_time(r["Submission Time"], course.tz,
                                    where(path, line, "Submission Time")),
            submission_id=r.get("Submission ID") or None,
        ))
    notes = [f"{n} row(s) with status {s!r}: no score recorded" for s, n in sorted(skipped.items())]
    return Source(str(path), sha, "gradescope_csv", rows, notes)


def collect(paths: Iterable[Path]) -> list[tuple[str, Path]]:
    """Expand the paths given on the command line into typed inputs.

    Files: ``*.json`` -> results, ``*.csv`` -> Gradescope grade CSV, ``*.zip`` -> export
    archive. Folders: an export folder if it holds ``submission_metadata.yml`` (at most two
    levels down), else every ``results.json``, ``*.zip`` and ``*.csv`` below it, in sorted
    order, except inside an export folder met on the way (a folder holding
    ``submission_metadata.yml``): that folder is one export, and its ``submission_<id>/``
    folders, which hold what students uploaded, are never searched (a student's own
    ``results.json`` or ``.zip`` is not a score). Symbolic links are not followed. A CSV in a
    folder that is not a Gradescope grade CSV (by its header) is reported as ignored; other
    files are not inputs. A folder with none of these is an error.

    Raises:
        GradebookError: a path does not exist, has an unknown type, or a folder holds nothing.
    """
    out: list[tuple[str, Path]] = []
    for p in paths:
        if not p.exists():
            raise GradebookError(f"{p}: no such file or folder")
        if p.is_dir():
            if gs.depth_walk(p):
                out.append(("export", p))
                continue
            found = _walk_folder(p)
            if not found:
                raise GradebookError(
                    f"{p}: no results.json, export archive, grade CSV or metadata inside"
                )
            out += found
        elif p.suffix == ".json":
            out.append(("results", p))
        elif p.suffix == ".csv":
            out.append(("csv", p))
        elif p.suffix == ".zip":
            out.append(("export", p))
        else:
            raise GradebookError(
                f"{p}: unknown input type (expected .json, .csv, .zip or a folder)"
            )
    return out


def _walk_folder(root: Path) -> list[tuple[str, Path]]:
    """The inputs below ``root`` (see :func:`collect`): results first, then exports, then CSVs."""
    results: list[Path] = []
    exports: list[Path] = []
    csvs: list[Path] = []
    stack = [root]
    while stack:
        folder = stack.pop()
        if folder != root and (folder / gs.METADATA_YML).is_file():
            exports.append(folder)  # an unpacked export: students' uploads are below it
            continue
        try:
            entries = list(folder.iterdir())
        except OSError:
            continue
        for entry in entries:
            if entry.is_symlink():
                continue
            if entry.is_dir():
                stack.append(entry)
            elif not entry.is_file():
                continue
            elif entry.name == "results.json":
                results.append(entry)
            elif entry.suffix == ".zip":
                exports.append(entry)
            elif entry.suffix == ".csv":
                csvs.append(entry)
    return ([("results", f) for f in sorted(results)] + [("export", f) for f in sorted(exports)]
            + [("csv" if _is_grade_csv(f) else "ignored", f) for f in sorted(csvs)])


def _is_grade_csv(path: Path) -> bool:
    with path.open(encoding="utf-8-sig", errors="replace") as fh:
        header = {h.strip() for h in fh.readline(64 * 1024).split(",")}
    return set(GRADE_CSV_REQUIRED) <= header


def parse_inputs(
    paths: Iterable[Path], *, course: Course, module: str | None = None, item: str | None = None,
    accept: str | None = None,
) -> list[Source]:
    """Parse every input; the first bad file raises (nothing has been written yet).

    ``accept`` is the audited reason to record scores that fail the consistency checks
    (outside [0, max], totals that disagree); without it such a file is refused.
    """
    sources = []
    for kind, p in collect(paths):
        if kind == "results":
            sources.append(parse_results_file(p, course=course, module=module, accept=accept))
        elif kind == "csv":
            sources.append(parse_grade_csv(p, course=course, item=item, accept=accept))
        elif kind == "ignored":
            sources.append(Source(str(p), sha256_file(p), "ignored", [],
                                  ["not a Gradescope grade CSV (no Total Score/SID header): "
                                   "ignored"]))
        else:
            sources.append(parse_export(p, course=course, module=module, accept=accept))
    for src in sources:
        keys: set[tuple[str, str]] = set()
        for row in src.rows:
            key = (row.student_ref, row.item)
            if key in keys:
                raise GradebookError(f"{src.path}: duplicate score for {row.student_ref} "
                                     f"{row.item} in one file (two submissions?)")
            keys.add(key)
    return sources


# ----------------------------------------------------------------------- writing
def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _same(a: object, b: object) -> bool:
    if _missing(a) or _missing(b):
        return _missing(a) and _missing(b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(float(a) - float(b)) < 1e-9
    return a == b


def record(
    store: Store, sources: list[Source], *, dry_run: bool = False,
    progress: Callable[[int], None] | None = None,
) -> IngestReport:
    """Classify every row against the store and write the new ones in one transaction.

    Args:
        store: the open store.
        sources: parsed inputs.
        dry_run: classify and report only; write nothing.
        progress: called with the number of rows handled so far.

    Returns:
        What was (or would be) recorded, with every regrade's diff.
    """
    delay = float(os.environ.get(SLOW_HOOK, "0") or 0)
    files: list[FileResult] = []
    regrades: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    recorded_at, recorded_by = now_utc(), current_user()

    def run(conn: Any) -> None:
        seen = store.seen_hashes()
        events = store.events()
        index = RosterIndex(store.roster())

        def who(sid: Any, login: Any, email: Any, ref: str) -> str:
            # the roster student when known, so formats that name a student differently (email
            # in results.json, SID in an export) still meet; else the raw identity
            return index.resolve(sid, login, email).student or ref

        history: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for ev in records(events):
            if ev["kind"] != "override":
                person = who(ev["sid"], ev["login"], ev["email"], ev["student_ref"])
                history.setdefault((person, ev["item"]), []).append(ev)
        handled = 0
        for src in sources:
            res = FileResult(src.path, src.kind, notes=list(src.notes))
            for row in src.rows:
                handled += 1
                key = (src.sha256, row.student_ref, row.item)
                if key in seen:
                    res.duplicates += 1
                    continue
                seen.add(key)
                person = who(row.sid, row.login, row.email, row.student_ref)
                past = history.get((person, row.item), [])
                if row.submission_id is not None:
                    same_sub = [e for e in past if e["submission_id"] == row.submission_id]
                else:
                    same_sub = past[-1:] if row.kind == "manual" else []
                kind = row.kind
                details = dict(row.details)
                if any(_same(e["score"], row.score) and _same(e["max_score"], row.max_score)
                       and _same(e["suite_version"], row.suite_version)
                       and (e["kind"] == PENDING) == (row.kind == PENDING) for e in same_sub):
                    res.unchanged += 1
                    continue
                # a pending event is not a score: it is no "previous score" to regrade from
                same_sub = [e for e in same_sub if e["kind"] != PENDING]
                if row.kind == PENDING:
                    res.pending += 1
                    pending.append({"student_ref": row.student_ref, "name": row.name,
                                    "item": row.item, "submission_id": row.submission_id,
                                    "why": (row.details.get("pending") or [""])[0],
                                    "kept": next((e["score"] for e in reversed(past)
                                                  if e["kind"] != PENDING), None),
                                    "source": src.path})
                elif same_sub:
                    prev = same_sub[-1]
                    details.update(previous_event=int(prev["event_id"]),
                                   previous_score=prev["score"], previous_max=prev["max_score"],
                                   previous_suite=prev["suite_version"], source_kind=row.kind,
                                   diff=(row.score or 0.0) - (prev["score"] or 0.0))
                    if row.kind != "manual":
                        kind = "regrade"
                        res.regrades += 1
                        regrades.append({"student_ref": row.student_ref, "name": row.name,
                                         "item": row.item, "submission_id": row.submission_id,
                                         "old": prev["score"], "new": row.score,
                                         "max": row.max_score, "source": src.path})
                    else:
                        res.new += 1
                else:
                    res.new += 1
                event = {
                    "kind": kind, "student_ref": row.student_ref, "sid": row.sid,
                    "login": row.login, "email": row.email, "name": row.name, "item": row.item,
                    "score": row.score, "max_score": row.max_score,
                    "submitted_at": row.submitted_at, "submission_id": row.submission_id,
                    "suite_version": row.suite_version, "source_path": src.path,
                    "source_sha256": src.sha256, "recorded_at": recorded_at,
                    "recorded_by": recorded_by, "reason": row.reason,
                    "details": json.dumps(details, sort_keys=True) if details else None,
                }
                history.setdefault((person, row.item), []).append(
                    {**event, "event_id": -1}
                )
                if conn is not None:
                    event_id = store.insert_event(conn, event)
                    if event_id and row.tests:
                        store.insert_tests(conn, event_id, row.tests)
                    if delay:
                        time.sleep(delay)
                if progress:
                    progress(handled)
            if conn is not None:
                store.insert_source(conn, path=src.path, sha256=src.sha256, kind=src.kind,
                                    added=res.new + res.regrades + res.pending,
                                    note="; ".join(res.notes))
            files.append(res)

    if dry_run:
        run(None)
    else:
        with store.transaction() as conn:
            run(conn)
    return IngestReport(files, regrades, dry_run, pending)
