"""Old and new results of one submission compared: the row of the regrade report
(:class:`SubmissionDiff`) with the scored tests that changed, the timeouts, and why a
submission was unusable or not graded (course side).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from coursekit.gradescope_export import (
    ExportRecord,
    Student,
)
from staff.regrade.export import Unit


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
