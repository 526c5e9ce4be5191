"""``grade()``: one submission in, one valid Gradescope results.json out, always.

The parent (this module) never imports the student's code. It exports the notebook, builds
the graded package in a scratch folder, gets expected values (goldens, or the reference run in
a trusted child), runs the public tests, hidden cases and milestone seeds in a sandboxed child
(:mod:`autograder.harness.supervisor`), and decides every score itself with
:func:`autograder.suite.compare` on decoded plain data. Whatever happens (a broken notebook,
a crash, a grader bug) it writes a valid results.json; a broken submission gets zeros and a
message that says why and what to try.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import platform
import shutil
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from autograder.harness import isolation, milestones
from autograder.harness.goldens import (
    Expected,
    GoldensError,
    compute_expected,
    load_goldens,
    load_suite,
    sha256_file,
)
from autograder.harness.lanes import run_lanes
from autograder.harness.limits import Limits, ModuleInfo
from autograder.harness.package import (
    SubmissionError,
    build_package,
    export_submission,
    find_notebook,
    forbidden_imports,
)
from autograder.harness.package import (
    public_tests as _public_tests,
)
from autograder.harness.supervisor import HARNESS_ROOT, Outcome, RunReport, RunSpec
from autograder.suite import Case, Suite, compare

HARNESS_VERSION = "1.0"
TOP_VISIBILITY = "after_due_date"


class GraderError(RuntimeError):
    """The autograder itself is misconfigured (points, goldens, suite): not the student's fault."""


@dataclass
class _Ctx:
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
    extra: dict[str, Any] = field(default_factory=dict)
    lanes: int = 1
    submission_dir: Path | None = None
    data_dir: Path | None = None


def grade(*, module: Any, submission: Path, suite_path: Path, reference: Path,
          public_tests: Path | None = None, out: Path, limits: Any = None,
          expected: Path | None = None, metadata: Path | None = None,
          stubs: Path | None = None, milestone_dirs: list[Path] | None = None,
          course: Any = None, hide: list[Path] | None = None, lanes: int = 1,
          data_dir: Path | None = None) -> dict[str, Any]:
    """Grade one submission and write Gradescope's results.json to ``out``.

    Args:
        module: a :func:`autograder.harness.limits.module_snapshot` dict, a ModuleInfo, or a
            ``tito.course.Module`` (then ``course`` or course.yml supplies milestones and
            limits).
        submission: the student's notebook, or a folder holding ``NN_slug.ipynb``.
        suite_path: the hidden suite file ``autograder/suites/NN_slug/suite.py``.
        reference: the reference package folder; it may lack the graded module when
            ``expected`` goldens are given.
        public_tests: the release's ``tests/`` folder (0-point feedback), or None.
        out: results.json path; a stale file there is removed first.
        limits: tighter limits (a :class:`Limits` or dict); never looser than the course's.
        expected: goldens JSON built by :func:`autograder.harness.goldens.build_goldens`;
            None runs the reference in a trusted child instead.
        metadata: Gradescope's submission_metadata.json (recorded, never trusted).
        stubs: the student-release ``tinytorch/`` (later modules come from it).
        milestone_dirs: folders searched for milestone providers ``<id>.py``.
        course: the parsed course, when ``module`` is a ``tito.course.Module``.
        hide: extra paths the sandbox must not see (the results folder is always hidden).
        lanes: sandboxed children run side by side, the items dealt round-robin
            (:mod:`autograder.harness.lanes`; ``tito regrade`` uses 2+ for a submission
            whose earlier results timed out).
        data_dir: held-out test data of submitted-weights milestones (course.yml
            ``test_data``, installed by ``setup.sh``); read by this process only and hidden
            from the sandbox. None: those milestones score 0 with a grader error.

    Returns:
        The results dict that was written.
    """
    started = time.monotonic()
    out = Path(out)
    _remove_stale(out)
    try:
        info = ModuleInfo.from_any(module, course)
    except Exception as exc:  # noqa: BLE001 - still write results
        results = _grader_failure(None, f"module facts unreadable: {exc}", started)
        _write(out, results)
        return results
    lim = Limits.from_any(limits).within(info.limits) if limits is not None else info.limits
    ctx = _Ctx(info=info, limits=lim, started=started, lanes=max(1, int(lanes)),
               data_dir=_abs(data_dir))
    scratch = Path(tempfile.mkdtemp(prefix="ttgrade-"))
    try:
        results = _grade(ctx, _abs(submission), _abs(suite_path), _abs(reference),
                         _abs(public_tests), _abs(expected), _abs(metadata), _abs(stubs),
                         [_abs(d) for d in milestone_dirs or
                          [HARNESS_ROOT / "autograder" / "milestones" / "probes"]],
                         scratch, [_abs(out.parent), *[_abs(h) for h in hide or []],
                                   *([ctx.data_dir] if ctx.data_dir else [])])
    except GraderError as exc:
        results = _grader_failure(ctx, str(exc), started)
    except Exception as exc:  # noqa: BLE001 - fail closed with a valid results.json
        tb = traceback.format_exc(limit=8)
        print(tb, file=sys.stderr)
        results = _grader_failure(ctx, f"internal error: {type(exc).__name__}: {exc}", started)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    _write(out, results)
    return results


def _abs(p: Any) -> Any:
    return None if p is None else Path(p).absolute()


def _remove_stale(out: Path) -> None:
    if out.is_symlink() or out.is_file():
        out.unlink()
    elif out.is_dir():
        shutil.rmtree(out)
    out.parent.mkdir(parents=True, exist_ok=True)


def _write(out: Path, results: dict[str, Any]) -> None:
    """Atomic write: a temp file in the same folder, then rename over ``out``."""
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".results-", suffix=".json", dir=out.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(results, fh, indent=1, allow_nan=False)
    os.chmod(tmp, 0o644)
    os.replace(tmp, out)


# ----------------------------------------------------------------------------- the steps
def _grade(ctx: _Ctx, submission: Path, suite_path: Path, reference: Path,
           public_dir: Path | None, goldens: Path | None, metadata: Path | None,
           stubs: Path | None, milestone_dirs: list[Path], scratch: Path,
           hide: list[Path]) -> dict[str, Any]:
    info = ctx.info
    suite = load_suite(suite_path)
    ctx.suite = suite
    ctx.suite_sha = sha256_file(suite_path)
    _check_points(info, suite)
    # submitted-weights milestones run nothing in the sandbox: the parent scores the file
    jobs = milestones.find_jobs(tuple(m for m in info.milestones if not m.weights),
                                milestone_dirs)
    ctx.submission_dir = submission if submission.is_dir() else submission.parent
    if metadata is not None:
        ctx.extra["submission_metadata"] = _metadata_summary(metadata)

    # 1. the student's code, as source text (no student code runs here)
    try:
        notebook, notes = find_notebook(submission, info.name)
        ctx.notes += notes
        ctx.submission_file = notebook.name
        ctx.submission_sha = hashlib.sha256(notebook.read_bytes()).hexdigest()
        source = export_submission(notebook, slug=info.slug, number=info.number,
                                   title=info.title)
    except SubmissionError as exc:
        return _zero(ctx, jobs, f"Your submission could not be graded: {exc}", "export")
    refused = forbidden_imports(source)
    if refused:
        return _zero(ctx, jobs, (
            f"Your {info.slug}.py imports {', '.join(refused)}. TinyTorch is built from NumPy "
            "and the Python standard library only: remove those imports (and the code that "
            "uses them), export again and resubmit."), "forbidden-import")

    # 2. expected values, decided before any student code runs
    try:
        if goldens is not None:
            exp = load_goldens(goldens, suite_path=suite_path)
        else:
            exp = compute_expected(suite_path=suite_path, suite=suite, reference=reference,
                                   slug=info.slug, number=info.number,
                                   all_modules=info.all_modules or ((info.number, info.slug),),
                                   limits=ctx.limits)
    except GoldensError as exc:
        raise GraderError(str(exc)) from exc
    ctx.expected_source = exp.source
    for name, err in exp.errors.items():
        ctx.grader_errors.append(f"reference failed case {name}: {err}")

    # 3. the graded package: reference with the graded module replaced
    pkg_parent = scratch / "pkg"
    pkg_parent.mkdir()
    student_file = build_package(dest=pkg_parent, reference=reference,
                                 module_number=info.number, slug=info.slug,
                                 student_source=source,
                                 all_modules=info.all_modules or ((info.number, info.slug),),
                                 stubs=stubs)

    # 4. run everything in the sandbox
    files, pub = _public_tests(public_dir)
    case_items = [f"case:{c.name}" for c in suite.cases]
    items = [p.item for p in pub] + case_items + [i for j in jobs if j.file for i in j.items()]
    timeouts = {p.item: ctx.limits.test_timeout_s for p in pub}
    timeouts.update({f"case:{c.name}": float(min(c.timeout_s or ctx.limits.test_timeout_s,
                                                   ctx.limits.run_timeout_s))
                     for c in suite.cases})
    for j in jobs:
        timeouts.update({i: j.item_timeout() for i in j.items()})
    hidden_paths = [suite_path.parent, reference, HARNESS_ROOT, *hide]
    if goldens is not None:
        hidden_paths.append(goldens)
    if metadata is not None:
        hidden_paths.append(metadata)
    hidden_paths += [submission if submission.is_dir() else submission.parent]
    report = run_lanes(RunSpec(
        package_parent=pkg_parent, slug=info.slug, suite_file=suite_path, items=items,
        scratch=scratch, item_timeout_s=timeouts, import_timeout_s=ctx.limits.import_timeout,
        run_timeout_s=ctx.limits.run_timeout_s, memory_limit_mb=ctx.limits.memory_limit_mb,
        max_output_kb=ctx.limits.max_output_kb, student_file=student_file,
        public_tests=files,
        milestones=[{"id": j.info.id, "file": str(j.file)} for j in jobs if j.file],
        sandbox=True, hide=hidden_paths), ctx.lanes)
    ctx.isolation = report.isolation
    if ctx.lanes > 1:
        ctx.extra["lanes"] = ctx.lanes

    # 5. decide, in this process, on plain data only
    return _decide(ctx, suite, exp, pub, jobs, report)


def _check_points(info: ModuleInfo, suite: Suite) -> None:
    if suite.module != info.name:
        raise GraderError(f"suite is for {suite.module}, not {info.name}")
    if not math.isclose(suite.total_points, info.points, abs_tol=1e-9):
        raise GraderError(f"suite {suite.module} is worth {suite.total_points:g} points but "
                          f"course.yml gives {info.name} {info.points:g}")


def _case_output(case: Case, verdict: str, outcome: Outcome | None, *, hint: bool = True
                 ) -> str:
    parts = [verdict]
    if outcome is not None and outcome.where:
        parts.append("Where, in your code:\n" + outcome.where)
    if case.hint and hint:
        parts.append(f"Hint: {case.hint}")
    if outcome is not None and outcome.out.strip():
        parts.append("Your code printed:\n" + outcome.out.rstrip())
    return "\n".join(parts)


def _verdict(o: Outcome) -> str:
    if o.status == "error":
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


def _decide(ctx: _Ctx, suite: Suite, exp: Expected, pub: list[Any],
            jobs: list[milestones.MilestoneJob], report: RunReport) -> dict[str, Any]:
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
        text = "passed" if ok else _verdict(o) if o else "not run"
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
            verdict = ("Not scored because of an autograder problem (the reference could not "
                       "run this test). Please tell course staff.")
        elif o is None:
            verdict = "No result arrived for this test."
        elif o.status == "result":
            try:
                passed, msg = compare(o.value, exp.values[c.name], c)
            except Exception as exc:  # noqa: BLE001 - odd data must not crash grading
                passed, msg = False, f"your result could not be compared ({type(exc).__name__})"
            verdict = "Passed." if passed else f"Wrong result: {msg}."
        else:
            verdict = _verdict(o)
        tests.append({
            "name": f"{info.name} · {c.name}", "score": c.points if passed else 0.0,
            "max_score": c.points, "status": "passed" if passed else "failed",
            "visibility": c.visibility,
            "output": _case_output(c, verdict, o, hint=not passed),
            "tags": [*tags_base, "hidden", *c.tags],
        })

    ms_extra: dict[str, Any] = {}
    for j in jobs:
        evaluate = None
        if j.file is not None:
            try:
                evaluate = milestones.load_evaluator(j.file)
            except Exception as exc:  # noqa: BLE001
                ctx.grader_errors.append(f"milestone {j.info.id}: evaluator failed: {exc}")
        if j.file is None:
            ctx.grader_errors.append(f"milestone {j.info.id}: no provider file")
            pts, msg, extra = 0.0, ("This milestone is not graded by this autograder yet; "
                                    "course staff will grade it."), {"seeds": list(j.info.seeds)}
        elif integrity:
            pts, msg, extra = 0.0, "Not scored: the graded code must come from your module.", {}
        else:
            pts, msg, extra = milestones.score(j, report.outcomes, evaluate)
        ms_extra[j.info.id] = extra
        tests.append({"name": f"milestone · {j.info.id} · {j.info.title}", "score": pts,
                      "max_score": j.info.points, "status": "passed" if pts else "failed",
                      "visibility": "after_due_date", "output": msg,
                      "tags": [*tags_base, f"milestone:{j.info.id}"]})
    for m in info.milestones:
        if not m.weights:
            continue
        if integrity:
            pts, msg, extra = 0.0, "Not scored: the graded code must come from your module.", {}
        else:
            assert ctx.submission_dir is not None
            pts, msg, extra, problem = milestones.score_submitted(m, ctx.submission_dir,
                                                                 ctx.data_dir)
            if problem:
                ctx.grader_errors.append(f"milestone {m.id}: {problem}")
        ms_extra[m.id] = extra
        tests.append({"name": f"milestone · {m.id} · {m.title}", "score": pts,
                      "max_score": m.points, "status": "passed" if pts else "failed",
                      "visibility": "after_due_date", "output": msg,
                      "tags": [*tags_base, f"milestone:{m.id}"]})
    if ms_extra:
        ctx.extra["milestones"] = ms_extra
    ctx.extra["run"] = {"launches": report.launches, "elapsed_s": round(report.elapsed_s, 3),
                        "protocol_errors": report.protocol_errors[:20],
                        "child_numpy": report.child_numpy}
    return _results(ctx, tests, _summary(ctx, tests, report, integrity))


def _submission_test(ctx: _Ctx, report: RunReport, integrity: list[str]) -> dict[str, Any]:
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
    if report.import_output.strip():
        text += "\nYour module printed at import:\n" + report.import_output.rstrip()
    return {"name": f"{info.name} · submission", "score": 0, "max_score": 0,
            "status": "passed" if ok else "failed", "visibility": "visible", "output": text,
            "tags": [f"module:{info.name}", "public"]}


def _summary(ctx: _Ctx, tests: list[dict[str, Any]], report: RunReport,
             integrity: list[str]) -> str:
    info = ctx.info
    scored = [t for t in tests if t["max_score"] > 0]
    got = sum(t["score"] for t in scored)
    pub = [t for t in tests if "public" in t["tags"] and not t["name"].endswith("submission")]
    lines = [f"Module {info.number:02d} · {info.title}: {got:g} / {info.max_score:g} points."]
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
    if ctx.grader_errors:
        lines.append("Some tests could not be scored because of an autograder problem; course "
                     "staff have the details.")
    if ctx.notes:
        lines += ctx.notes
    return "\n".join(lines)


def _zero(ctx: _Ctx, jobs: list[milestones.MilestoneJob], message: str,
          reason: str) -> dict[str, Any]:
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
    return _results(ctx, tests, summary)


def _grader_failure(ctx: _Ctx | None, why: str, started: float) -> dict[str, Any]:
    """A valid results.json when the autograder itself is broken (score 0, staff notified)."""
    name = ctx.info.name if ctx else "unknown"
    msg = ("The autograder could not grade this submission because of a problem on the "
           "course's side, not yours. Please tell course staff; your submission is kept.")
    res = {
        "score": 0.0, "execution_time": round(time.monotonic() - started, 3), "output": msg,
        "visibility": "visible", "stdout_visibility": "hidden",
        "tests": [{"name": f"{name} · autograder", "score": 0, "max_score": 0,
                   "status": "failed", "visibility": "visible", "output": msg,
                   "tags": [f"module:{name}", "grader-error"]}],
        "extra_data": {"module": name, "grader_error": why[:2000],
                       "packages": _packages(None), "harness": HARNESS_VERSION},
    }
    return res


def _results(ctx: _Ctx, tests: list[dict[str, Any]], summary: str) -> dict[str, Any]:
    info = ctx.info
    scored_max = math.fsum(t["max_score"] for t in tests)
    if not math.isclose(scored_max, info.max_score, abs_tol=1e-9):
        raise GraderError(f"maximum score {scored_max:g} does not match course.yml "
                          f"({info.max_score:g})")
    score = round(math.fsum(t["score"] for t in tests), 6)
    suite = ctx.suite
    extra: dict[str, Any] = {
        "module": info.name,
        "suite_version": suite.version if suite else "",
        "suite_sha256": ctx.suite_sha,
        "max_score": info.max_score,
        "seeds": {c.name: c.seed() for c in suite.cases} if suite else {},
        "packages": _packages(ctx.extra.get("run", {}).get("child_numpy")),
        "isolation": ctx.isolation,
        "expected_from": ctx.expected_source,
        "limits": ctx.limits.as_dict(),
        "submission": {"file": ctx.submission_file, "sha256": ctx.submission_sha},
        "harness": HARNESS_VERSION,
        **ctx.extra,
    }
    if ctx.grader_errors:
        extra["grader_errors"] = ctx.grader_errors[:20]
    for t in tests:
        t["score"] = float(t["score"])
        t["max_score"] = float(t["max_score"])
    return {"score": score, "execution_time": round(time.monotonic() - ctx.started, 3),
            "output": summary, "visibility": TOP_VISIBILITY, "stdout_visibility": "hidden",
            "tests": tests, "extra_data": extra}


def _packages(child_numpy: str | None) -> dict[str, str]:
    pk = {"python": platform.python_version(), "numpy": np.__version__,
          "platform": platform.platform(terse=True)}
    if child_numpy and child_numpy != np.__version__:
        pk["numpy_child"] = child_numpy
    return pk


def _metadata_summary(path: Path) -> dict[str, Any]:
    """The few submission_metadata.json fields worth recording (never trusted for scores)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"readable": False}
    users = doc.get("users") or []
    return {"id": doc.get("id"), "created_at": doc.get("created_at"),
            "users": [u.get("email") for u in users if isinstance(u, dict)][:10],
            "assignment": (doc.get("assignment") or {}).get("title")}


# ----------------------------------------------------------------------------- repo helpers
def grade_module(*, course: Any, module: Any, submission: Path, out: Path,
                 metadata: Path | None = None, limits: Any = None,
                 expected: Path | None = None, hide: list[Path] | None = None,
                 lanes: int = 1) -> dict[str, Any]:
    """Grade with the repository's layout (``tito grade``): suite, reference, public tests.

    ``module`` is a ``tito.course.Module`` or a :func:`module_snapshot` dict (what a
    ``tito regrade`` task carries to a Dask worker); ``hide`` adds paths the sandbox must not
    see (a regrade's export and output folders) to the repository itself.
    """
    from tito import paths  # noqa: PLC0415 - repository side only

    name = ModuleInfo.from_any(module, course).name
    return grade(module=module, course=course, submission=submission,
                 suite_path=paths.SUITES / name / "suite.py",
                 reference=paths.REFERENCE,
                 public_tests=paths.RELEASE / name / "tests", out=out,
                 limits=limits, expected=expected, metadata=metadata,
                 stubs=paths.RELEASE / "tinytorch",
                 milestone_dirs=[paths.AUTOGRADER / "milestones" / "probes"],
                 hide=[paths.REPO_ROOT, *(hide or [])], lanes=lanes,
                 data_dir=grader_data_dir())


def grader_data_dir() -> Path:
    """Held-out test data for ``tito grade`` in the repository: ``$TINYTORCH_GRADER_DATA``,
    else ``build/grader-data`` (fill it with ``python -m autograder.gradescope.fetch_data``)."""
    from tito import paths  # noqa: PLC0415 - repository side only

    env = os.environ.get("TINYTORCH_GRADER_DATA")
    return Path(env) if env else paths.REPO_ROOT / "build" / "grader-data"


def isolation_methods() -> list[str]:
    """The isolation this machine would use (for ``tito doctor``-style reports)."""
    return isolation.plan().methods()
