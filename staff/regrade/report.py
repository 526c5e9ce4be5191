"""The regrade report: :class:`RegradeReport` (what one regrade did), its files
(``regrade_report.csv`` through :mod:`gradebook.csvsafe`, ``regrade_report.json``) and the
table printed for the TA.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from staff.regrade.diff import SubmissionDiff

REPORT_STEM = "regrade_report"


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
