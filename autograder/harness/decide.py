"""Decide: every test's score, from what came back of the sandbox, in the trusted parent.

The fourth stage of the pipeline (:mod:`autograder.harness.core`). :func:`decider` is the
on-arrival decision the run calls with each decoded result (compare with the expected value,
or evaluate a milestone's parameters on its held-out split; the data is then dropped);
:func:`decide` turns the run's report into Gradescope's tests and the summary at the top of
the results, and :func:`refused` does it for a submission that could not be run at all.
:class:`Grading` is the record of one grading that the stages fill in and
:mod:`autograder.harness.publish` writes out; :class:`GraderError` is a course-side failure
of the whole run.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder.harness import milestones
from autograder.harness.goldens import Expected
from autograder.harness.limits import Limits, ModuleInfo
from autograder.harness.supervisor import Outcome, RunReport
from autograder.suite import Case, Suite, TimedResult, compare

#: What a case's ``publish`` may add to one test: characters of output, bytes of extra_data JSON.
MAX_PUBLISHED_TEXT = 4000
MAX_PUBLISHED_BYTES = 64 * 1024


@dataclass(frozen=True)
class Verdict:
    """The parent's decision on one case, made as its result arrived (the data is dropped)."""

    passed: bool
    message: str
    #: The suite's leaderboard case only: ``entries(value, expected)`` computed on arrival, or the
    #: problem that stopped it (the data itself is dropped like every other case's).
    board: list[Any] | str | None = None
    #: A case with ``publish``: ``(text, data)`` computed on arrival and checked (size, JSON),
    #: or the problem that stopped it; None when it published nothing.
    published: tuple[str, dict[str, Any]] | str | None = None
    #: A timed case the grader itself could not time (course-side): why, for staff.
    grader_error: str = ""


class GraderError(RuntimeError):
    """The autograder itself is misconfigured (points, goldens, suite): not the student's fault."""


@dataclass
class Grading:
    """The record of one grading: what the stages learn, and results.json reports."""

    info: ModuleInfo
    limits: Limits
    started: float
    suite: Suite | None = None
    suite_sha: str = ""
    notes: list[str] = field(default_factory=list)
    isolation: list[str] = field(default_factory=list)
    submission_sha: str = ""
    submission_file: str = ""
    expected_source: str = ""
    grader_errors: list[str] = field(default_factory=list)
    #: tests that could not be scored for a course-side reason: ``{"test", "why"}`` each
    pending: list[dict[str, str]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    seeds: dict[str, int] = field(default_factory=dict)
    lanes: int = 1
    reference_bank: bool = False
    submission_dir: Path | None = None
    data_dir: Path | None = None
    leaderboard: list[dict[str, Any]] = field(default_factory=list)
    #: Still-open earlier modules: one line for the top of the results, one paragraph for the
    #: submission test, and the numbers that came from their release stubs (and why).
    earlier_line: str = ""
    earlier_detail: str = ""
    stub_modules: dict[int, str] = field(default_factory=dict)


PENDING_TEXT = ("Not scored yet: a problem on the course's side (not yours) stopped this test; "
                "course staff have been told and will grade it. This is not a zero.")


def _needs_stub(message: str, stubs: dict[int, str]) -> str:
    """Why a failure is not the student's when it is a stub of an earlier module that came
    from its release stub in this run (``NotImplementedError: module 03: implement ...``)."""
    m = _STUB_ERROR.search(message)
    if m is None or int(m.group(1)) not in stubs:
        return ""
    what = f" ({m.group(2)})" if m.group(2) else ""
    return (f"Not run: this needs module {m.group(1)}{what}, which came from its "
            f"unfinished release stub in this run because {stubs[int(m.group(1))]}: nothing "
            "to fix in this notebook (see 'submission').")


_STUB_ERROR = re.compile(r"module (\d\d): implement ?([A-Za-z_][\w.]*)?")


def decider(suite: Suite, exp: Expected, jobs: list[milestones.MilestoneJob]) -> Any:
    """The parent's on-arrival decision: compare a case's data with the expected value, or
    evaluate a milestone's parameters on its held-out split; the data itself is dropped."""
    cases = {c.name: c for c in suite.cases}
    boards = suite.boards()
    by_item = {i: j for j in jobs for i in j.items()}

    def decide(item: str, value: Any) -> Any:
        kind, _, name = item.partition(":")
        if kind == "case":
            c = cases[name]
            if name not in exp.values:
                return Verdict(False, "no expected value")
            if c.timing is not None and not isinstance(value, TimedResult):
                return Verdict(False, "this test's work was not committed before it was timed "
                                      "(tampering?)")
            if isinstance(value, TimedResult) and value.problem:
                return Verdict(False, "not scored: the grader could not time this test (an "
                                      "autograder problem; course staff have the details)",
                               grader_error=f"{name}: {value.problem}"[:400])
            passed, msg = compare(value, exp.values[name], c)
            board: list[Any] | str | None = None
            for board_case, entries in boards:
                if name != board_case:
                    continue
                try:
                    board = list(entries(value, exp.values[name]))
                except Exception as exc:  # noqa: BLE001 - odd data must not crash grading
                    board = f"{type(exc).__name__}: {exc}"
            published = checked_publish(c, value, exp.values[name]) if c.publish is not None else None
            return Verdict(bool(passed), str(msg), board, published)
        if kind == "milestone":
            return milestones.on_result(by_item[item], item, value)
        return value is True

    return decide


def checked_publish(case: Case, value: Any, expected: Any
                    ) -> tuple[str, dict[str, Any]] | str | None:
    """``case.publish(value, expected)``, checked: text within ``MAX_PUBLISHED_TEXT``, data a
    JSON object within ``MAX_PUBLISHED_BYTES``; a problem comes back as one line of text."""
    assert case.publish is not None
    try:
        got = case.publish(value, expected)
        if got is None:
            return None
        text, data = got
        if not isinstance(text, str) or not isinstance(data, dict):
            return "publish: expected (text, dict)"
        size = len(json.dumps(data, allow_nan=False, separators=(",", ":")).encode())
    except Exception as exc:  # noqa: BLE001 - odd data must not crash grading
        return f"publish: {type(exc).__name__}: {exc}"[:300]
    if size > MAX_PUBLISHED_BYTES:
        return f"publish: {size} bytes of data (at most {MAX_PUBLISHED_BYTES})"
    return text[:MAX_PUBLISHED_TEXT], data


def _case_output(case: Case, verdict: str, outcome: Outcome | None, *, hint: bool = True,
                 standins: tuple[str, ...] = ()) -> str:
    parts = [verdict]
    if outcome is not None and outcome.where:
        parts.append("Where, in your code:\n" + outcome.where)
    if hint and case.unit:
        parts.append(f"This test grades {case.unit}" + (
            f"; it ran with the course's own {_and(standins)} (each graded by its own tests)."
            if standins else "."))
    if case.hint and hint:
        parts.append(f"Hint: {case.hint}")
    if outcome is not None and outcome.out.strip():
        parts.append("Your code printed:\n" + outcome.out.rstrip())
    return "\n".join(parts)


def _and(names: tuple[str, ...]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _verdict(o: Outcome, stubs: dict[int, str] | None = None) -> str:
    if o.status == "error":
        elsewhere = _needs_stub(o.message, stubs or {})
        if elsewhere:
            return elsewhere
        if o.message.startswith("NotImplementedError"):
            return f"Not implemented yet ({o.message}). Replace the stub's raise with your code."
        return f"Your code raised {o.message}"
    if o.status == "timeout":
        return f"Timed out: {o.message}"
    if o.status == "crashed":
        return f"Crashed: {o.message}"
    if o.status == "fatal":
        return f"Not run: your module could not be imported ({o.message})"
    if o.status == "protocol":
        return f"No valid result: {o.message}"
    if o.status == "not_run":
        return o.message
    return o.message or o.status


def decide(ctx: Grading, suite: Suite, exp: Expected, pub: list[Any],
           jobs: list[milestones.MilestoneJob], report: RunReport
           ) -> tuple[list[dict[str, Any]], str]:
    """Gradescope's tests of a run (the submission check, public tests, hidden cases,
    milestones) and the summary at the top of the results; course-side problems go to the
    record (``grader_errors``, ``pending``), as do the leaderboard and the run's facts."""
    info = ctx.info
    tags_base = [f"module:{info.name}"]
    tests: list[dict[str, Any]] = []
    integrity = list(report.integrity)
    if report.blocked_imports:
        integrity.append("tried to import " + ", ".join(sorted(set(report.blocked_imports))))
    tests.append(_submission_test(ctx, report, integrity))

    for p in pub:
        o = report.outcomes.get(p.item)
        ok = o is not None and o.status == "result"
        text = "passed" if ok else _verdict(o, ctx.stub_modules) if o else "not run"
        if o is not None and o.out.strip():
            text += "\nYour code printed:\n" + o.out.rstrip()
        tests.append({"name": f"{info.name} · public · {p.label}", "score": 0, "max_score": 0,
                      "status": "passed" if ok else "failed", "visibility": "visible",
                      "output": text, "tags": [*tags_base, "public"]})

    for c in suite.cases:
        o = report.outcomes.get(f"case:{c.name}")
        passed = False
        if integrity:
            verdict = ("Not scored: the graded code must come from your own module "
                       f"({'; '.join(integrity[:3])}).")
        elif c.name not in exp.values:
            verdict = PENDING_TEXT
        elif o is None:
            verdict = "No result arrived for this test."
        elif o.status == "result" and isinstance(o.value, Verdict) and o.value.grader_error:
            verdict = o.value.message[0].upper() + o.value.message[1:] + "."
            ctx.grader_errors.append(o.value.grader_error)
        elif o.status == "result" and isinstance(o.value, Verdict):
            passed = o.value.passed
            verdict = "Passed." if passed else f"Wrong result: {o.value.message}."
        else:
            verdict = _verdict(o, ctx.stub_modules)
        stub_failure = o is not None and bool(_needs_stub(o.message, ctx.stub_modules))
        output = _case_output(c, verdict, o, hint=not (passed or stub_failure),
                              standins=suite.standins(c))
        published = (o.value.published if not integrity and o is not None
                     and isinstance(o.value, Verdict) else None)
        if isinstance(published, tuple):
            output += "\n" + published[0]
        elif isinstance(published, str):
            ctx.grader_errors.append(f"{c.name}: {published}")
        test: dict[str, Any] = {
            "name": f"{info.name} · {c.name}", "score": c.points if passed else 0.0,
            "max_score": c.points, "status": "passed" if passed else "failed",
            "visibility": c.visibility, "output": output,
            "tags": [*tags_base, "hidden", *c.tags],
        }
        if isinstance(published, tuple):
            test["extra_data"] = published[1]
        if not integrity and c.name not in exp.values:
            _pend(ctx, test, f"the reference could not run case {c.name}: "
                             f"{exp.errors.get(c.name, 'no expected value')}")
        tests.append(test)

    if suite.boards() and not integrity:
        ctx.leaderboard = leaderboard(ctx, suite, report)

    ms_extra: dict[str, Any] = {}
    for j in jobs:
        problem = ""
        if j.file is None:
            problem = next((e for e in ctx.grader_errors
                            if e.startswith(f"milestone {j.info.id}:")), "")
            if not problem:
                problem = f"milestone {j.info.id}: no provider file"
                ctx.grader_errors.append(problem)
            pts, msg, extra = 0.0, PENDING_TEXT, {"seeds": list(j.info.seeds)}
        elif integrity:
            pts, msg, extra = 0.0, "Not scored: the graded code must come from your module.", {}
        else:
            try:
                pts, msg, extra = milestones.score(j, report.outcomes)
                ctx.grader_errors += [f"milestone {j.info.id}: {e}"
                                      for e in extra.pop("grader_errors", [])]
            except Exception as exc:  # noqa: BLE001 - a scoring bug is the course's problem
                problem = (f"milestone {j.info.id}: scoring failed: "
                           f"{type(exc).__name__}: {exc}"[:300])
                ctx.grader_errors.append(problem)
                pts, msg, extra = 0.0, PENDING_TEXT, {}
        ms_extra[j.info.id] = extra
        tests.append(_milestone_test(ctx, j.info, pts, msg, problem))
    for m in info.milestones:
        if not m.weights:
            continue
        problem = ""
        if integrity:
            pts, msg, extra = 0.0, "Not scored: the graded code must come from your module.", {}
        else:
            assert ctx.submission_dir is not None
            pts, msg, extra, why = milestones.score_submitted(m, ctx.submission_dir,
                                                             ctx.data_dir)
            if why:
                problem = f"milestone {m.id}: {why}"
                ctx.grader_errors.append(problem)
        ms_extra[m.id] = extra
        tests.append(_milestone_test(ctx, m, pts, msg, problem))
    if ms_extra:
        ctx.extra["milestones"] = ms_extra
    ctx.extra["run"] = {"launches": report.launches, "elapsed_s": round(report.elapsed_s, 3),
                        "protocol_errors": report.protocol_errors[:20],
                        "child_numpy": report.child_numpy}
    return tests, _summary(ctx, tests, report, integrity)


def _pend(ctx: Grading, test: dict[str, Any], why: str) -> None:
    """Mark ``test`` as pending: it failed for a course-side reason, so it is not a score
    (tag ``pending``; the gradebook records its item as pending, never as 0)."""
    test["tags"] = [*test["tags"], "pending"]
    test["status"] = "failed"
    test["score"] = 0.0
    if not test["output"].startswith(PENDING_TEXT):
        test["output"] = PENDING_TEXT + "\n" + test["output"]
    ctx.pending.append({"test": test["name"], "why": why[:300]})


def _milestone_test(ctx: Grading, m: Any, pts: float, msg: str, problem: str) -> dict[str, Any]:
    """A milestone's test: scored, or pending when ``problem`` (a course-side failure)."""
    test = {"name": f"milestone · {m.id} · {m.title}", "score": pts, "max_score": m.points,
            "status": "passed" if pts else "failed", "visibility": "after_due_date",
            "output": msg, "tags": [f"module:{ctx.info.name}", f"milestone:{m.id}"]}
    if problem:
        _pend(ctx, test, problem)
    return test


def leaderboard(ctx: Grading, suite: Suite, report: RunReport) -> list[dict[str, Any]]:
    """Gradescope ``leaderboard`` entries from the suite's leaderboard cases, computed here in
    the parent, in the suite's order; none of a case that sent no result, and no malformed
    entry (a ``grader_errors`` note says why)."""
    board: list[dict[str, Any]] = []
    several = len(suite.boards()) > 1
    for name, _ in suite.boards():
        o = report.outcomes.get(f"case:{name}")
        if o is None or o.status != "result" or not isinstance(o.value, Verdict):
            continue
        where = f"leaderboard ({name})" if several else "leaderboard"
        if isinstance(o.value.board, str):
            ctx.grader_errors.append(f"{where}: {o.value.board}")
            continue
        entries = o.value.board or []
        good = [e for e in entries if isinstance(e, dict) and isinstance(e.get("name"), str)
                and isinstance(e.get("value"), (int, float)) and not isinstance(e["value"], bool)
                and math.isfinite(e["value"]) and e.get("order") in ("asc", "desc")
                and all(e["name"] != b["name"] for b in board)]
        if len(good) != len(entries):
            ctx.grader_errors.append(f"{where}: malformed entries dropped")
        board += [{"name": e["name"], "value": float(e["value"]), "order": e["order"]}
                  for e in good]
    return board


def _submission_test(ctx: Grading, report: RunReport, integrity: list[str]) -> dict[str, Any]:
    """A visible 0-point check: did the notebook export and import cleanly?"""
    info = ctx.info
    if report.fatal:
        text = (f"Your {info.slug}.py could not be imported: {report.fatal}\n"
                + (f"Where, in your code:\n{report.fatal_where}\n" if report.fatal_where else "")
                + "Restart the kernel, run every cell top to bottom, fix the first error, "
                "save, and resubmit.")
        ok = False
    elif integrity:
        text = ("Your module was imported, but the graded code does not come from it: "
                + "; ".join(integrity[:5]) + ". Implement the functions in your own notebook "
                "(no torch/jax/tensorflow, no copies of the reference).")
        ok = False
    else:
        text = f"Your notebook exported and {info.slug}.py imported cleanly."
        ok = True
    if ctx.notes:
        text += "\nNote: " + " ".join(ctx.notes)
    if ctx.earlier_detail:
        text += "\n" + ctx.earlier_detail
    if report.import_output.strip():
        text += "\nYour module printed at import:\n" + report.import_output.rstrip()
    return {"name": f"{info.name} · submission", "score": 0, "max_score": 0,
            "status": "passed" if ok else "failed", "visibility": "visible", "output": text,
            "tags": [f"module:{info.name}", "public"]}


def _summary(ctx: Grading, tests: list[dict[str, Any]], report: RunReport,
             integrity: list[str]) -> str:
    info = ctx.info
    scored = [t for t in tests if t["max_score"] > 0]
    got = sum(t["score"] for t in scored)
    pub = [t for t in tests if "public" in t["tags"] and not t["name"].endswith("submission")]
    lines = [f"Module {info.number:02d} · {info.title}: {got:g} / {info.max_score:g} points."]
    if ctx.earlier_line:
        lines.append(ctx.earlier_line)
    if pub:
        ok = sum(1 for t in pub if t["status"] == "passed")
        lines.append(f"Public tests: {ok} of {len(pub)} passed (feedback only, no points).")
    failed = [t for t in scored if t["status"] == "failed"]
    if report.fatal:
        lines.append(f"Your module could not be imported: {report.fatal}")
    elif integrity:
        lines.append("The graded code did not come from your module; see 'submission'.")
    elif failed:
        lines.append(f"{len(failed)} graded test(s) did not pass; each one says why and what "
                     "to try. Start with the public tests in your notebook.")
    if ctx.pending:
        points = sum(t["max_score"] for t in tests if "pending" in t["tags"])
        lines.insert(0, f"PENDING: {len(ctx.pending)} test(s) worth {points:g} points could not "
                        "be scored because of a problem on the course's side (not yours); "
                        "course staff will grade them. The score below is not final.")
    elif ctx.grader_errors:
        lines.append("Part of this feedback could not be produced because of an autograder "
                     "problem; course staff have the details (your score is not affected).")
    if ctx.notes:
        lines += ctx.notes
    return "\n".join(lines)


def refused(ctx: Grading, jobs: list[milestones.MilestoneJob], message: str,
            reason: str) -> tuple[list[dict[str, Any]], str]:
    """Zero for every graded test, one visible message: the submission itself is unusable."""
    info = ctx.info
    assert ctx.suite is not None
    tests: list[dict[str, Any]] = [{
        "name": f"{info.name} · submission", "score": 0, "max_score": 0, "status": "failed",
        "visibility": "visible", "output": message, "tags": [f"module:{info.name}", "public"]}]
    for c in ctx.suite.cases:
        tests.append({"name": f"{info.name} · {c.name}", "score": 0.0, "max_score": c.points,
                      "status": "failed", "visibility": c.visibility,
                      "output": f"Not run: {message}",
                      "tags": [f"module:{info.name}", "hidden", *c.tags]})
    for m in [j.info for j in jobs] + [m for m in info.milestones if m.weights]:
        tests.append({"name": f"milestone · {m.id} · {m.title}", "score": 0.0,
                      "max_score": m.points, "status": "failed",
                      "visibility": "after_due_date", "output": f"Not run: {message}",
                      "tags": [f"module:{info.name}", f"milestone:{m.id}"]})
    ctx.extra["refused"] = reason
    summary = f"Module {info.number:02d} · {info.title}: 0 / {info.max_score:g} points.\n{message}"
    return tests, summary


