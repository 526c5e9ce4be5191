"""One keyword-only function per ``tito gradebook`` command; the CLI only forwards to these.

``store`` is a path, a ``sqlite:///`` URL or a ``postgresql://`` URL (default:
``course.gradebook_store``, a path relative to the
repository); ``course`` is a path to course.yml, a loaded course, or ``None`` (the default).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from gradebook import csvsafe
from gradebook import frames as fr
from gradebook.errors import GradebookError
from gradebook.identity import RosterIndex
from gradebook.ingest import IngestReport, ScoreRow, Source, parse_inputs, record
from gradebook.inputs import parse_extensions, parse_roster, parse_scores, sha256_file
from gradebook.items import catalogue, policy_from_course, resolve_item
from gradebook.store import Store, current_user, now_utc

if TYPE_CHECKING:
    from coursekit.course import Course, CourseSource

SAMPLE_TERM = Path(__file__).resolve().parent.parent / "samples" / "term"


def load_course_any(course: CourseSource = None) -> Course:
    """A loaded course from a path, ``None`` (the default course.yml) or a course object."""
    from coursekit.course import CourseError, resolve_course

    try:
        return resolve_course(course)
    except CourseError as exc:
        raise GradebookError(str(exc)) from None


def open_store(store: str | Path | None, course: Course) -> Store:
    """Open the store given, or the course's default (relative to the repository)."""
    from coursekit.paths import REPO_ROOT

    url = store if store is not None else course.course.gradebook_store
    return Store(url, root=REPO_ROOT if store is None else Path.cwd())


# ------------------------------------------------------------------------ inputs
@dataclass
class RosterSummary:
    """What a roster import did."""

    path: str
    students: int
    tracks: dict[str, int]
    skipped: list[str] = field(default_factory=list)
    unchanged: bool = False


def roster(csv: Path, *, store: str | Path | None = None, course: CourseSource = None) -> RosterSummary:
    """Import a roster (Canvas export format + optional ``Track``/``Email`` columns).

    The new roster replaces the current one; every import is kept. Importing the same file
    again changes nothing.
    """
    c = load_course_any(course)
    pol = policy_from_course(c)
    parsed = parse_roster(Path(csv), tracks=list(pol.weights), default_track=pol.default_track)
    sha = sha256_file(Path(csv))
    tracks: dict[str, int] = {}
    for r in parsed.rows:
        tracks[r["track"]] = tracks.get(r["track"], 0) + 1
    summary = RosterSummary(str(csv), len(parsed.rows), tracks, parsed.skipped)
    with open_store(store, c) as st, st.transaction() as conn:
        last = conn.execute("SELECT sha256 FROM roster_imports ORDER BY id DESC LIMIT 1").fetchone()
        if last is not None and last[0] == sha:
            summary.unchanged = True
            return summary
        cur = conn.execute(
            "INSERT INTO roster_imports (path, sha256, recorded_at, recorded_by) VALUES (?,?,?,?)",
            (str(csv), sha, now_utc(), current_user()),
        )
        conn.executemany(
            "INSERT INTO roster (import_id, student, name, canvas_id, login, email, section, "
            "track, line) VALUES (?,?,?,?,?,?,?,?,?)",
            [(cur.lastrowid, r["student"], r["name"], r["canvas_id"], r["login"], r["email"],
              r["section"], r["track"], r["line"]) for r in parsed.rows],
        )
    return summary


def _roster_or_fail(st: Store) -> pd.DataFrame:
    ros = st.roster()
    if ros.empty:
        raise GradebookError(
            f"{st.path}: no roster yet; import one first with 'tito gradebook roster ROSTER.csv'"
        )
    return ros


def ingest(
    paths: list[Path], *, store: str | Path | None = None, course: CourseSource = None,
    module: str | None = None, item: str | None = None, dry_run: bool = False,
    progress: Callable[[int, int], None] | None = None, accept: str | None = None,
) -> IngestReport:
    """Ingest results.json files, folders, Gradescope grade CSVs and export archives.

    ``progress(done, total)`` is called as rows are written (the CLI draws a bar with it).
    ``accept`` (a reason) records scores outside [0, max] or with disagreeing totals anyway;
    the reason, the problems and the user are kept in each such event's details.
    """
    c = load_course_any(course)
    if not paths:
        raise GradebookError("ingest: give at least one file or folder")
    if accept is not None and not accept.strip():
        raise GradebookError("ingest: --accept-inconsistent needs a reason")
    sources = parse_inputs([Path(p) for p in paths], course=c, module=module, item=item,
                           accept=accept)
    total = sum(len(s.rows) for s in sources)
    with open_store(store, c) as st:
        return record(st, sources, dry_run=dry_run,
                      progress=None if progress is None else (lambda n: progress(n, total)))


def extensions(file: Path, *, store: str | Path | None = None, course: CourseSource = None) -> int:
    """Import an extensions/accommodations CSV; returns the rows added (0 if seen before)."""
    c = load_course_any(course)
    with open_store(store, c) as st:
        rows = parse_extensions(Path(file), course=c, roster=_roster_or_fail(st))
        sha = sha256_file(Path(file))
        added = 0
        with st.transaction() as conn:
            for r in rows:
                cur = conn.execute(
                    "INSERT OR IGNORE INTO extensions (student, module, due, hours, reason, "
                    "source_path, source_sha256, line, recorded_at, recorded_by) "
                    "VALUES (?,?,?,?,?,?,?,?,?,?)",
                    (r["student"], r["module"], r["due"], r["hours"], r["reason"], str(file),
                     sha, r["line"], now_utc(), current_user()),
                )
                added += cur.rowcount
        return added


def _score_source(
    st: Store, rows: list[dict[str, Any]], *, kind: str, path: str, sha: str, items: pd.DataFrame
) -> Source:
    ros = st.roster().set_index("student")
    points = dict(zip(items["item"], items["points"], strict=True))
    out = []
    for r in rows:
        who = ros.loc[r["student"]]
        details = {"line": r["line"]}
        if r.get("grader"):
            details["grader"] = r["grader"]
        out.append(ScoreRow(
            kind=kind, item=r["item"], score=r["score"],
            max_score=None if r["score"] is None else points[r["item"]],
            sid=r["student"], login=who["login"], email=who["email"] or None, name=who["name"],
            reason=r["reason"] or None, details=details,
        ))
    return Source(path, sha, kind, out)


def manual(file: Path, *, store: str | Path | None = None, course: CourseSource = None,
           dry_run: bool = False) -> IngestReport:
    """Import hand-graded scores (written questions) from a CSV."""
    return _scores_file(Path(file), kind="manual", store=store, course=course, dry_run=dry_run)


def override(
    student: str, item: str, score: str | float | None, *, reason: str,
    store: str | Path | None = None, course: CourseSource = None,
) -> IngestReport:
    """Override one item's final score (item points), or clear it with ``score='clear'``."""
    c = load_course_any(course)
    if not reason or not reason.strip():
        raise GradebookError("override: --reason is required")
    items = catalogue(c)
    points = dict(zip(items["item"], items["points"], strict=True))
    item_id = resolve_item(c, item)
    if item_id not in points:
        raise GradebookError(f"override: item {item_id!r} has no points")
    value: float | None
    if score is None or str(score).lower() == "clear":
        value = None
    else:
        try:
            value = float(score)
        except ValueError:
            raise GradebookError(f"override: SCORE: {score!r} is not a number") from None
        if not 0 <= value <= points[item_id]:
            raise GradebookError(
                f"override: SCORE: {score} is outside 0..{points[item_id]:g} for {item_id}"
            )
    with open_store(store, c) as st:
        res = RosterIndex(_roster_or_fail(st)).lookup(student)
        if res.student is None:
            raise GradebookError(f"override: STUDENT: {res.problem}")
        stamp = now_utc()
        sha = hashlib.sha256(
            f"{res.student}|{item_id}|{value}|{reason}|{stamp}|{current_user()}".encode()
        ).hexdigest()
        row = {"student": res.student, "item": item_id, "score": value, "reason": reason.strip(),
               "line": None}
        src = _score_source(st, [row], kind="override", path="cli:override", sha=sha,
                            items=items)
        return record(st, [src])


def overrides_file(file: Path, *, store: str | Path | None = None, course: CourseSource = None
                   ) -> IngestReport:
    """Import overrides from a CSV (``student, item, score, reason``)."""
    return _scores_file(Path(file), kind="override", store=store, course=course)


def _scores_file(file: Path, *, kind: str, store: str | Path | None, course: CourseSource,
                 dry_run: bool = False) -> IngestReport:
    """Record a CSV of scores (``manual``) or of overrides (``override``: each with a reason)
    as one source."""
    c = load_course_any(course)
    items = catalogue(c)
    with open_store(store, c) as st:
        rows = parse_scores(file, course=c, roster=_roster_or_fail(st), items=items,
                            override=kind == "override")
        src = _score_source(st, rows, kind=kind, path=str(file), sha=sha256_file(file),
                            items=items)
        return record(st, [src], dry_run=dry_run)


# ------------------------------------------------------------------------ outputs
def build(*, store: str | Path | None = None, course: CourseSource = None, as_of: str | None = None,
          output: Path | None = None) -> fr.Built:
    """Compute the gradebook; with ``output`` write ``grades.csv`` and ``scores.csv`` there."""
    c = load_course_any(course)
    with open_store(store, c) as st:
        built = fr.build(st, c, as_of)
    if output is not None:
        out = Path(output)
        out.mkdir(parents=True, exist_ok=True)
        csvsafe.write_frame(built.grades, out / "grades.csv", float_format="%.4f")
        cols = ["student", "item", "category", "points", "score", "max_score", "raw_points",
                "submitted_at", "due_effective", "minutes_late", "tokens", "late_fraction",
                "after_late", "override", "final", "dropped", "extension"]
        csvsafe.write_frame(built.result.scores[cols], out / "scores.csv", float_format="%.4f")
    return built


def export(*, fmt: str, output: Path, store: str | Path | None = None, course: CourseSource = None,
           as_of: str | None = None, with_total: bool = False,
           canvas_ids: Path | None = None) -> Path:
    """Write the Canvas (``fmt='canvas'``) or Gradescope-style (``'gradescope'``) CSV.

    ``with_total`` adds the course grade as a last Canvas column (off by default).
    ``canvas_ids`` (a staff-kept ``item,assignment_id`` CSV or a Canvas gradebook export) makes
    the Canvas headers ``Title (id)`` so an import updates the existing assignments.
    """
    from gradebook import export as ex

    built = build(store=store, course=course, as_of=as_of)
    ids = ex.read_canvas_ids(Path(canvas_ids), built.frames.items) if canvas_ids else None
    frame = (ex.canvas(built, with_total=with_total, assignment_ids=ids) if fmt == "canvas"
             else ex.gradescope(built))
    out = Path(output)
    out.parent.mkdir(parents=True, exist_ok=True)
    csvsafe.write_frame(frame, out)
    return out


def explain(student: str, *, store: str | Path | None = None, course: CourseSource = None,
            as_of: str | None = None) -> str:
    """Every number behind one student's grade, as text."""
    from gradebook import explain as exp

    built = build(store=store, course=course, as_of=as_of)
    res = RosterIndex(built.frames.roster).lookup(student)
    if res.student is None:
        raise GradebookError(f"explain: STUDENT: {res.problem}")
    return exp.explain(built, res.student)


def report(*, output: Path, store: str | Path | None = None, course: CourseSource = None,
           as_of: str | None = None) -> Path:
    """Write the self-contained HTML report."""
    from gradebook import report as rep

    built = build(store=store, course=course, as_of=as_of)
    out = Path(output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(rep.render(built), encoding="utf-8")
    return out


def check(*, store: str | Path | None = None, course: CourseSource = None, as_of: str | None = None
          ) -> list[Any]:
    """Problems in the inputs (see :mod:`gradebook.check`)."""
    from gradebook import check as chk

    c = load_course_any(course)
    with open_store(store, c) as st:
        frames = fr.load(st, c)
        sources = st.sources()
    return chk.problems(frames, sources)


def load_sample(*, store: str | Path | None = None, course: CourseSource = None,
                root: Path = SAMPLE_TERM) -> dict[str, Any]:
    """Load the bundled sample term: roster, results, export, CSVs, extensions, overrides."""
    c = load_course_any(course)
    done: dict[str, Any] = {}
    done["roster"] = roster(root / "roster.csv", store=store, course=c)
    done["results"] = ingest([root / "results"], store=store, course=c)
    done["gradescope"] = ingest([root / "gradescope"], store=store, course=c)
    done["regrade"] = ingest([root / "regrade"], store=store, course=c)
    done["extensions"] = extensions(root / "extensions.csv", store=store, course=c)
    done["manual"] = manual(root / "written.csv", store=store, course=c)
    done["overrides"] = overrides_file(root / "overrides.csv", store=store, course=c)
    return done


def canvas_ids(*, source: Path, output: Path, course: CourseSource = None) -> dict[str, str]:
    """Learn the Canvas assignment id of each item from a Canvas gradebook export and write
    them as ``item,assignment_id`` rows (the file ``export --canvas-ids`` reads)."""
    from gradebook import export as ex
    from gradebook.items import catalogue

    c = load_course_any(course)
    ids = ex.read_canvas_ids(Path(source), catalogue(c))
    out = Path(output)
    out.parent.mkdir(parents=True, exist_ok=True)
    csvsafe.write_rows(out, ["item", "assignment_id"],
                       [[item, ids[item]] for item in catalogue(c)["item"] if item in ids])
    return ids
