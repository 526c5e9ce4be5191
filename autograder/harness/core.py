"""``grade()``: one submission in, one valid Gradescope results.json out, always.

The parent (this module) never imports the student's code. It writes a provisional
results.json before anything else (so a run that is killed, or a disk that fills up, still
leaves a valid one), exports the notebooks in a memory-capped worker, picks the submission's
variant (:mod:`autograder.harness.variants`), gets that variant's expected values (goldens, or
the reference run in a trusted child), builds the graded package in a scratch folder (an
earlier module's reference only once its submission window has closed), runs the public
tests, hidden cases and milestone seeds in a sandboxed child
(:mod:`autograder.harness.supervisor`), decides every score itself with
:func:`autograder.suite.compare` on decoded plain data as each result arrives (and drops the
data), and replaces the provisional results.json atomically. A broken submission gets zeros
and a message that says why and what to try.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import platform
import re
import shutil
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from autograder.harness import isolation, milestones, timing, variants
from autograder.harness.goldens import (
    Expected,
    GoldensError,
    case_seeds,
    compute_expected,
    load_goldens,
    load_suite,
    sha256_file,
    shared_expected,
    standin_payloads,
)
from autograder.harness.lanes import run_stages
from autograder.harness.limits import Limits, ModuleInfo
from autograder.harness.package import (
    SubmissionError,
    build_package,
    earlier_notebooks,
    export_notebooks,
    find_notebook,
)
from autograder.harness.package import (
    public_tests as _public_tests,
)
from autograder.harness.supervisor import (
    HARNESS_ROOT,
    Outcome,
    RunReport,
    RunSpec,
    SandboxUnavailable,
)
from autograder.standins import StandinError, stage_plan
from autograder.suite import Case, Suite, TimedResult, compare

HARNESS_VERSION = "2.0"
TOP_VISIBILITY = "after_due_date"
#: Space kept free next to results.json while student code runs, so the final write succeeds
#: even when the submission fills the disk (released just before writing).
RESERVE_BYTES = 4 * 1024 * 1024
#: What a case's ``publish`` may add to one test: characters of output, bytes of extra_data JSON.
MAX_PUBLISHED_TEXT = 4000
MAX_PUBLISHED_BYTES = 64 * 1024
#: The results.json fields that say how a run went rather than what it graded: wall-clock and
#: CPU seconds, and the uid the sandbox ran as (``*`` is any key). Everything else (scores,
#: statuses, outputs, metrics, seeds, steps) is a function of the submission, its variant and
#: the course only, the same under any load and on any worker (docs/grading.md, "What can and
#: cannot change a grade"); tests/autograder/test_under_load.py checks it.
RUN_FACTS: tuple[tuple[str, ...], ...] = (
    ("execution_time",), ("extra_data", "run", "elapsed_s"), ("extra_data", "sandbox"),
    ("extra_data", "milestones", "*", "cpu_s"), ("extra_data", "schedule", "decided_at"))


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


def grade(*, module: Any, submission: Path, suite_path: Path, reference: Path,
          public_tests: Path | None = None, out: Path, limits: Any = None,
          expected: Path | None = None, metadata: Path | None = None,
          stubs: Path | None = None, milestone_dirs: list[Path] | None = None,
          course: Any = None, hide: list[Path] | None = None,
          now: dt.datetime | None = None, lanes: int = 1,
          data_dir: Path | None = None, reference_bank: bool = False) -> dict[str, Any]:
    """Grade one submission and write Gradescope's results.json to ``out``.

    Args:
        module: a :func:`autograder.harness.limits.module_snapshot` dict, a ModuleInfo, or a
            ``tito.course.Module`` (then ``course`` or course.yml supplies milestones and
            limits).
        submission: the student's notebook, or a folder holding ``NN_slug.ipynb`` (and the
            student's notebooks of earlier modules that are still open).
        suite_path: the hidden suite file ``autograder/suites/NN_slug/suite.py``.
        reference: the reference package folder; it may lack the graded module when
            ``expected`` goldens are given.
        public_tests: the release's ``tests/`` folder (0-point feedback), or None.
        out: results.json path; a provisional one is written there first.
        limits: tighter limits (a :class:`Limits` or dict); never looser than the course's.
        expected: a goldens bank built by :func:`autograder.harness.goldens.build_goldens`;
            None runs the reference in a trusted child instead.
        metadata: Gradescope's submission_metadata.json (recorded, never trusted).
        stubs: the student-release ``tinytorch/`` (later modules, and earlier ones that are
            still open and were not submitted, come from it).
        milestone_dirs: folders searched for milestone providers ``<id>.py``.
        course: the parsed course, when ``module`` is a ``tito.course.Module``.
        hide: paths the sandbox must not see; with a minimal root it sees nothing of the host
            anyway, without one they are recorded when other users could read them.
        now: the time that decides which earlier modules are closed (aware; default: this
            machine's clock). Only a trusted caller gives one (``tito regrade`` fixes one time
            for its whole run; ``run.py --now`` simulates a date); nothing of the submission
            or its metadata can move it. Recorded in ``extra_data.schedule``.
        lanes: sandboxed children run side by side, the items dealt round-robin
            (:mod:`autograder.harness.lanes`; ``tito regrade`` uses 2+ for a submission
            whose earlier results timed out).
        data_dir: held-out test data of submitted-weights milestones (course.yml
            ``test_data``, installed by ``setup.sh``); read by this process only and hidden
            from the sandbox. None: those milestones score 0 with a grader error.
        reference_bank: without ``expected``, take the variant's expected values from a
            bank of every variant, computed in one reference run and kept for the rest of
            this process (:func:`autograder.harness.goldens.shared_expected`; ``tito
            regrade``), instead of a reference run for this variant alone.

    Returns:
        The results dict that was written.
    """
    started = time.monotonic()
    out = Path(out)
    when = now or dt.datetime.now(dt.timezone.utc)
    if when.tzinfo is None:
        raise ValueError("grade(now=...): give an aware time (with its UTC offset)")
    try:
        info = ModuleInfo.from_any(module, course)
    except Exception as exc:  # noqa: BLE001 - still write results
        results = _grader_failure(None, f"module facts unreadable: {exc}", started)
        _write(out, results, None)
        return results
    lim = Limits.from_any(limits).within(info.limits) if limits is not None else info.limits
    ctx = _Ctx(info=info, limits=lim, started=started, lanes=max(1, int(lanes)),
               reference_bank=reference_bank, data_dir=_abs(data_dir))
    if any(n < info.number for n, _ in info.all_modules):
        ctx.extra["schedule"] = _schedule_record(when, now is not None)
    reserve = _provisional(out, ctx)
    scratch = Path(tempfile.mkdtemp(prefix="ttgrade-"))
    try:
        results = _grade(ctx, _abs(submission), _abs(suite_path), _abs(reference),
                         _abs(public_tests), _abs(expected), _abs(metadata), _abs(stubs),
                         [_abs(d) for d in milestone_dirs or
                          [HARNESS_ROOT / "autograder" / "milestones" / "providers"]],
                         scratch, [_abs(out.parent), *[_abs(h) for h in hide or []],
                                   *([ctx.data_dir] if ctx.data_dir else [])], when)
    except GraderError as exc:
        results = _grader_failure(ctx, str(exc), started)
    except Exception as exc:  # noqa: BLE001 - fail closed with a valid results.json
        if isinstance(exc, isolation.Aborted) or isolation.ABORT.is_set():
            # interrupted (Ctrl-C, kill): the caller says so in one line and discards this
            results = _grader_failure(ctx, f"interrupted: {exc}", started)
        else:
            print(traceback.format_exc(limit=8), file=sys.stderr)
            results = _grader_failure(ctx, f"internal error: {type(exc).__name__}: {exc}",
                                      started)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    _write(out, results, reserve)
    return results


def _abs(p: Any) -> Any:
    return None if p is None else Path(p).absolute()


def _provisional(out: Path, ctx: _Ctx) -> Path | None:
    """Before any student code runs: a valid results.json (a course-side "did not finish"),
    written atomically over any stale one, and a reserve file that keeps room for the real
    results even if the submission fills the disk. Returns the reserve (or None)."""
    if out.is_symlink():
        out.unlink()
    elif out.is_dir():
        shutil.rmtree(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    doc = _grader_failure(ctx, "grading did not finish: the grading process was stopped "
                          "before it could write its results", ctx.started)
    doc["extra_data"]["provisional"] = True
    _atomic_write(out, _dumps(doc))
    reserve = out.parent / f".results-reserve-{os.getpid()}-{id(ctx):x}"
    try:
        fd = os.open(reserve, os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o600)
        try:
            os.posix_fallocate(fd, 0, RESERVE_BYTES)
        finally:
            os.close(fd)
        return reserve
    except OSError:
        reserve.unlink(missing_ok=True)
        return None


def _dumps(results: dict[str, Any]) -> bytes:
    return json.dumps(results, indent=1, allow_nan=False).encode("utf-8")


def _atomic_write(out: Path, data: bytes) -> None:
    """A temp file in the same folder, flushed, then renamed over ``out``."""
    fd, tmp = tempfile.mkstemp(prefix=".results-", suffix=".json", dir=out.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _write(out: Path, results: dict[str, Any], reserve: Path | None) -> None:
    """Replace results.json atomically. The reserve is released first; if the write still
    fails (a full disk), a short course-side failure is tried, and failing that the
    provisional results.json stays: there is always a valid one."""
    out.parent.mkdir(parents=True, exist_ok=True)
    data = _dumps(results)
    if reserve is not None:
        reserve.unlink(missing_ok=True)
    try:
        _atomic_write(out, data)
        return
    except OSError as exc:
        print(f"results.json could not be written ({exc}); keeping a short one",
              file=sys.stderr)
    short = {k: results[k] for k in ("score", "execution_time", "visibility",
                                     "stdout_visibility") if k in results}
    short.update({"output": "The results of this run were too large to store on the grading "
                  "machine (its disk was full). Please tell course staff.",
                  "tests": [], "extra_data": {"grader_error": "results.json write failed"}})
    short["score"] = 0.0
    try:
        _atomic_write(out, _dumps(short))
    except OSError:
        pass  # the provisional results.json is still there and valid


# ----------------------------------------------------------------------------- the steps
def _grade(ctx: _Ctx, submission: Path, suite_path: Path, reference: Path,
           public_dir: Path | None, goldens: Path | None, metadata: Path | None,
           stubs: Path | None, milestone_dirs: list[Path], scratch: Path,
           hide: list[Path], now: dt.datetime) -> dict[str, Any]:
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
    if isolation.plan().refuse:
        raise GraderError(str(isolation.plan().refuse))

    # 1. the student's code, as source text, read in a memory-capped worker
    try:
        notebook, notes = find_notebook(submission, info.name)
    except SubmissionError as exc:
        return _zero(ctx, jobs, f"Your submission could not be graded: {exc}", "export")
    ctx.notes += notes
    ctx.submission_file = notebook.name
    try:
        ctx.submission_sha = sha256_file(notebook)
    except OSError as exc:
        return _zero(ctx, jobs, f"Your submission could not be graded: {notebook.name}: "
                     f"cannot be read ({exc.strerror})", "export")
    all_modules = info.all_modules or ((info.number, info.slug),)
    open_earlier = [(n, slug) for n, slug in all_modules
                    if n < info.number and not _reference_usable(info, n, slug, now)]
    found = earlier_notebooks(submission, info.number, all_modules)
    wanted = {info.slug: (notebook, info.number, info.title)}
    wanted.update({slug: (found[n], n, slug) for n, slug in open_earlier if n in found})
    try:
        exported = export_notebooks(wanted)
    except RuntimeError as exc:
        raise GraderError(str(exc)) from exc
    mine = exported[info.slug]
    if mine.source is None:
        return _zero(ctx, jobs, f"Your submission could not be graded: {mine.error}", "export")
    source = mine.source
    if mine.forbidden:
        return _zero(ctx, jobs, (
            f"Your {info.slug}.py imports {', '.join(mine.forbidden)}. TinyTorch is built from "
            "NumPy and the Python standard library only: remove those imports (and the code "
            "that uses them), export again and resubmit."), "forbidden-import")

    # 2. the variant and its expected values, decided before any student code runs
    key = variants.submission_key(source)
    try:
        if goldens is not None:
            bank = load_goldens(goldens, suite_path=suite_path)
            salt, count = bank.salt, bank.count
            variant = variants.variant_index(key, salt, count)
            exp = bank.expected(variant, suite)
            payloads = bank.standins
            del bank
        else:
            ref_file = reference / f"{info.slug}.py"
            if not ref_file.is_file():
                raise GoldensError(f"no goldens and no reference {ref_file.name} to run")
            salt, count = variants.salt_from_reference(ref_file), ctx.limits.variants
            payloads = standin_payloads(suite, ref_file)
            variant = variants.variant_index(key, salt, count)
            if ctx.reference_bank:
                exp = shared_expected(suite_path=suite_path, suite=suite, reference=reference,
                                      slug=info.slug, number=info.number,
                                      all_modules=all_modules, limits=ctx.limits, salt=salt,
                                      count=count, variant=variant)
            else:
                exp = compute_expected(suite_path=suite_path, suite=suite, reference=reference,
                                       slug=info.slug, number=info.number,
                                       all_modules=all_modules, limits=ctx.limits,
                                       seeds=case_seeds(suite, variant, salt))
    except GoldensError as exc:
        raise GraderError(str(exc)) from exc
    ctx.expected_source = exp.source
    ctx.seeds = dict(exp.seeds)
    ctx.extra["variant"] = {"index": variant, "of": count, "key": f"source-sha256:{key[:16]}"}
    for name, err in exp.errors.items():
        ctx.grader_errors.append(f"reference failed case {name}: {err}")

    # 3. milestones: this submission's seeds and task variants (held-out splits stay here)
    for j in jobs:
        if j.file is None:
            continue
        try:
            milestones.prepare(j, key=key, salt=salt)
        except Exception as exc:  # noqa: BLE001 - a provider bug is the course's problem
            ctx.grader_errors.append(f"milestone {j.info.id}: provider failed: "
                                     f"{type(exc).__name__}: {exc}"[:300])
            j.file = None

    # 4. the graded package: earlier modules from the reference only once closed
    earlier, student_files = _earlier_modules(ctx, open_earlier, exported)
    pkg_parent = scratch / "pkg"
    pkg_parent.mkdir()
    try:
        student_file = build_package(dest=pkg_parent, reference=reference,
                                     module_number=info.number, slug=info.slug,
                                     student_source=source, all_modules=all_modules,
                                     stubs=stubs, earlier=earlier)
    except FileNotFoundError as exc:
        raise GraderError(str(exc)) from exc
    pkg = pkg_parent / "tinytorch"

    # 5. run everything in the sandbox; each result is decided here as it arrives
    files, pub = _public_tests(public_dir)
    try:
        case_items, later = stage_plan(suite, payloads)
    except StandinError as exc:
        raise GraderError(str(exc)) from exc
    ms_items = [i for j in jobs if j.file for i in j.items()]
    items = [p.item for p in pub] + case_items + ms_items
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
    decide = _decider(suite, exp, jobs)
    planner, twin = _timing(ctx, suite, exp, jobs, suite_path, reference, stubs, scratch,
                            all_modules)
    hidden_paths.append(scratch / "twinpkg")
    try:
        report = run_stages(RunSpec(
            package_parent=pkg_parent, slug=info.slug, suite_file=suite_path, items=items,
            scratch=scratch, item_timeout_s=timeouts,
            import_timeout_s=ctx.limits.import_timeout,
            run_timeout_s=ctx.limits.run_timeout_s,
            memory_limit_mb=ctx.limits.memory_limit_mb,
            max_output_kb=ctx.limits.max_output_kb, student_file=student_file,
            student_files=[pkg / f"{slug}.py" for slug in student_files],
            public_tests=files, milestone_job=milestones.child_job(jobs),
            sandbox=True, hide=hidden_paths,
            seeds={f"case:{name}": seed for name, seed in exp.seeds.items()},
            on_result=decide, timing=planner, twin=twin), later, ctx.lanes,
            last=ms_items)  # every case first: a run at its wall limit cuts training only
    except SandboxUnavailable as exc:
        raise GraderError(str(exc)) from exc
    ctx.isolation = report.isolation
    ctx.extra["sandbox"] = report.sandbox_facts
    if report.exposed:
        ctx.extra["exposed_to_sandbox"] = report.exposed[:20]
    if ctx.lanes > 1:
        ctx.extra["lanes"] = ctx.lanes

    # 6. decide, in this process, on plain data only
    return _decide(ctx, suite, exp, pub, jobs, report)


def _timing(ctx: _Ctx, suite: Suite, exp: Any, jobs: list[milestones.MilestoneJob],
            suite_path: Path, reference: Path, stubs: Path | None, scratch: Path,
            all_modules: tuple[tuple[int, str], ...]
            ) -> tuple[timing.Planner | None, timing.TwinJob | None]:
    """How the parent times this run's timed items (:mod:`autograder.harness.timing`): each
    timed case's plan gets its committed value and its expected value; each timed milestone's
    plan (the provider's ``plan``) its committed result and its task. The twin's package is
    the course's reference folder (a Gradescope zip ships every earlier module's reference),
    with the graded module and any module the folder lacks replaced by its release stub:
    every earlier module is the reference's whether or not it is still open for late work,
    so the baseline is the same on every date. Trusted code only, run outside the sandbox and
    kept root-only in the scratch (hidden from the sandbox: an open module's reference there
    never reaches student code)."""
    cases = {c.name: c for c in suite.cases if c.timing is not None}
    by_item = {i: j for j in jobs if j.file is not None and j.plan is not None
               for i in j.items()}
    if not cases and not by_item:
        return None, None

    def planner(item: str, value: Any) -> timing.PlanGen | None:
        kind, _, name = item.partition(":")
        if kind == "case" and name in cases:
            spec = cases[name].timing
            if spec is None or name not in exp.values:
                return None
            return spec.plan(value, exp.values[name], timing.plan_rng())
        if kind == "milestone" and item in by_item:
            return milestones.plan(by_item[item], item, value, timing.plan_rng())
        return None

    twin_parent = scratch / "twinpkg"
    twin_parent.mkdir()
    os.chmod(twin_parent, 0o700)
    info = ctx.info
    try:
        stub = (stubs / f"{info.slug}.py") if stubs is not None else None
        graded = (stub.read_text(encoding="utf-8") if stub is not None and stub.is_file()
                  else None if (reference / f"{info.slug}.py").is_file()
                  else f'"""Module {info.number:02d}: not in the grader\'s twin."""\n')
        build_package(dest=twin_parent, reference=reference, module_number=info.number,
                      slug=info.slug, all_modules=all_modules, stubs=stubs,
                      student_source=graded,
                      earlier={slug: None for n, slug in all_modules if n < info.number
                               and not (reference / f"{slug}.py").is_file()})
    except (FileNotFoundError, OSError) as exc:
        ctx.grader_errors.append(f"timed work: no reference package for the baseline: {exc}"
                                 [:300])
        return planner, None
    recipes = str(milestones.RECIPES) if by_item else ""
    ids = sorted({j.info.id for j in by_item.values()})
    return planner, timing.TwinJob(package_parent=twin_parent, suite_file=suite_path,
                                   recipes=recipes, milestone_ids=ids)


def _reference_usable(info: ModuleInfo, number: int, slug: str, now: dt.datetime) -> bool:
    """An earlier module's reference may reach the sandbox only once its window has closed,
    decided here at grading time from the close times the course facts carry and ``now`` (the
    grading machine's clock, or a time the trusted caller gives; never anything of the
    submission). An old zip that lists the references it ships is also held to that list."""
    if info.reference_modules is not None and slug not in info.reference_modules:
        return False
    return info.closed(number, now)


def _schedule_record(now: dt.datetime, given: bool) -> dict[str, str]:
    """``extra_data.schedule``: the time that decided which earlier modules were closed."""
    return {"decided_at": now.astimezone(dt.timezone.utc).isoformat(timespec="seconds"),
            "clock": "given by the grading command" if given else "grading machine's clock",
            "rule": "an earlier module is graded on the course's reference once it no longer "
                    "accepts late work (its close time in course.yml, after extensions)"}


def _earlier_modules(ctx: _Ctx, open_earlier: list[tuple[int, str]],
                     exported: dict[str, Any]) -> tuple[dict[str, str | None], list[str]]:
    """Which copy of each still-open earlier module the package gets, and what the student is
    told about it: one short line at the top of the results (``ctx.earlier_line``) and one
    paragraph in the ``submission`` test naming every stub and why (``ctx.earlier_detail``).
    Returns ``({slug: student source or None for the stub}, [slugs of student copies])``."""
    info = ctx.info
    earlier: dict[str, str | None] = {}
    mine: list[str] = []
    record: dict[str, Any] = {}
    yours: list[int] = []
    stubs: list[tuple[int, str]] = []
    closed: list[str] = []
    for n, slug in ((n, s) for n, s in (info.all_modules or ()) if n < info.number):
        name = f"{n:02d}_{slug}"
        closes = info.closes_text(n)
        if (n, slug) not in open_earlier:
            record[name] = {"from": "reference", "closed": closes}
            closed.append(f"{n:02d}")
            continue
        got = exported.get(slug)
        if got is not None and got.source is not None and not got.forbidden:
            earlier[slug] = got.source
            mine.append(slug)
            record[name] = {"from": "yours", "closes": closes}
            yours.append(n)
            continue
        earlier[slug] = None
        if got is None:
            why = f"you did not upload {name}.ipynb with this notebook"
        elif got.forbidden:
            why = f"your {name}.ipynb imports {', '.join(got.forbidden)}"
        else:
            why = f"your {name}.ipynb could not be read ({got.error})"
        record[name] = {"from": "stub", "closes": closes, "why": why}
        stubs.append((n, why))
    if closed:
        ctx.notes.append(
            f"Module{'s' if len(closed) > 1 else ''} {', '.join(closed)} no longer accept"
            f"{'' if len(closed) > 1 else 's'} late work, so this module was graded with the "
            "course's reference of them: an earlier bug is not charged twice.")
    if record:
        ctx.extra["earlier_modules"] = record
    if yours or stubs:
        names = {n: f"{n:02d}_{s}" for n, s in info.all_modules or ()}
        opened = sorted(yours + [n for n, _ in stubs])
        last = max(opened, key=lambda n: dict(info.closes).get(n, "9999"))
        ctx.stub_modules = {n: why for n, why in stubs}
        used = []
        if yours:
            used.append(f"your own {_ranges(yours)}")
        if stubs:
            used.append(f"the unfinished release stub{'s' if len(stubs) > 1 else ''} of "
                        f"{_ranges([n for n, _ in stubs])}")
        one = len(opened) == 1
        ctx.earlier_line = (f"Earlier module{'' if one else 's'} {_ranges(opened)} "
                            f"{'is' if one else 'are'} still open for late work: this run used "
                            f"{' and '.join(used)} (see 'submission').")
        text = (f"Module{'' if one else 's'} {_ranges(opened)} {'is' if one else 'are'} still "
                f"open for late work ({'' if one else 'the last '}until "
                f"{info.closes_text(last)}), so ")
        if yours:
            text += ("this module was graded with your own "
                     + ", ".join(f"{names[n]}.ipynb" for n in yours)
                     + " in place of the course's reference")
        if stubs:
            text += ("; " if yours else "") + (
                "the unfinished release stub was used for "
                + "; ".join(f"{names[n]} ({why})" for n, why in stubs)
                + ": tests that need them fail, and say so. Upload those notebooks together "
                "with this one, or wait until they close")
        ctx.earlier_detail = (text + ". Once they close, the course's reference is used and "
                              "this module can be regraded on it.")
    return earlier, mine


def _ranges(numbers: list[int]) -> str:
    """``1, 2, 3, 5`` -> ``01-03, 05`` (module numbers)."""
    runs: list[tuple[int, int]] = []
    for n in sorted(numbers):
        if runs and runs[-1][1] == n - 1:
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    return ", ".join(f"{a:02d}" if a == b else f"{a:02d}–{b:02d}" for a, b in runs)


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


def _decider(suite: Suite, exp: Expected, jobs: list[milestones.MilestoneJob]) -> Any:
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
            published = _publish(c, value, exp.values[name]) if c.publish is not None else None
            return Verdict(bool(passed), str(msg), board, published)
        if kind == "milestone":
            return milestones.on_result(by_item[item], item, value)
        return value is True

    return decide


def _publish(case: Case, value: Any, expected: Any) -> tuple[str, dict[str, Any]] | str | None:
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


def _check_points(info: ModuleInfo, suite: Suite) -> None:
    if suite.module != info.name:
        raise GraderError(f"suite is for {suite.module}, not {info.name}")
    if not math.isclose(suite.total_points, info.points, abs_tol=1e-9):
        raise GraderError(f"suite {suite.module} is worth {suite.total_points:g} points but "
                          f"course.yml gives {info.name} {info.points:g}")


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
        ctx.leaderboard = _leaderboard(ctx, suite, report)

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
    return _results(ctx, tests, _summary(ctx, tests, report, integrity))


PENDING_TEXT = ("Not scored yet: a problem on the course's side (not yours) stopped this test; "
                "course staff have been told and will grade it. This is not a zero.")


def _pend(ctx: _Ctx, test: dict[str, Any], why: str) -> None:
    """Mark ``test`` as pending: it failed for a course-side reason, so it is not a score
    (tag ``pending``; the gradebook records its item as pending, never as 0)."""
    test["tags"] = [*test["tags"], "pending"]
    test["status"] = "failed"
    test["score"] = 0.0
    if not test["output"].startswith(PENDING_TEXT):
        test["output"] = PENDING_TEXT + "\n" + test["output"]
    ctx.pending.append({"test": test["name"], "why": why[:300]})


def _milestone_test(ctx: _Ctx, m: Any, pts: float, msg: str, problem: str) -> dict[str, Any]:
    """A milestone's test: scored, or pending when ``problem`` (a course-side failure)."""
    test = {"name": f"milestone · {m.id} · {m.title}", "score": pts, "max_score": m.points,
            "status": "passed" if pts else "failed", "visibility": "after_due_date",
            "output": msg, "tags": [f"module:{ctx.info.name}", f"milestone:{m.id}"]}
    if problem:
        _pend(ctx, test, problem)
    return test


def _leaderboard(ctx: _Ctx, suite: Suite, report: RunReport) -> list[dict[str, Any]]:
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
    if ctx.earlier_detail:
        text += "\n" + ctx.earlier_detail
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
        "seeds": dict(ctx.seeds),
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
    # always present (empty when nothing is pending): a reader can tell this harness's
    # results, whose pending tests are tagged, from older ones
    extra["pending"] = ctx.pending[:50]
    for t in tests:
        t["score"] = float(t["score"])
        t["max_score"] = float(t["max_score"])
    results = {"score": score, "execution_time": round(time.monotonic() - ctx.started, 3),
               "output": summary, "visibility": TOP_VISIBILITY, "stdout_visibility": "hidden",
               "tests": tests, "extra_data": extra}
    if ctx.leaderboard:
        results["leaderboard"] = ctx.leaderboard
    return results


def without_run_facts(results: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``results`` without its :data:`RUN_FACTS`: what two gradings of the same
    submission must agree on exactly."""
    out = json.loads(json.dumps(results))

    def drop(node: Any, path: tuple[str, ...]) -> None:
        if not isinstance(node, dict) or not path:
            return
        keys = list(node) if path[0] == "*" else [path[0]]
        for key in keys:
            if len(path) == 1:
                node.pop(key, None)
            else:
                drop(node.get(key), path[1:])

    for path in RUN_FACTS:
        drop(out, path)
    return out


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
                 lanes: int = 1, extensions: Path | None = None,
                 now: dt.datetime | None = None, reference_bank: bool = False
                 ) -> dict[str, Any]:
    """Grade with the repository's layout (``tito grade``): suite, reference, public tests.

    ``module`` is a ``tito.course.Module`` or a :func:`module_snapshot` dict (what a
    ``tito regrade`` task carries to a Dask worker); ``hide`` adds paths the sandbox must not
    see (a regrade's export and output folders) to the repository itself. ``extensions``
    (the CSV the gradebook ingests) keeps an extended module open for everyone until the
    extension has passed too. ``reference_bank``: see :func:`grade` (``tito regrade``
    grades many submissions of a module in one process).
    """
    from autograder.harness.limits import module_snapshot  # noqa: PLC0415
    from tito import paths  # noqa: PLC0415 - repository side only

    name = ModuleInfo.from_any(module, course).name
    snap: Any = module
    if extensions is not None and not isinstance(module, dict):
        snap = module_snapshot(course, module, course.extension_dues(Path(extensions)))
    return grade(module=snap, course=course, submission=submission,
                 suite_path=paths.SUITES / name / "suite.py",
                 reference=paths.REFERENCE,
                 public_tests=paths.RELEASE / name / "tests", out=out,
                 limits=limits, expected=expected, metadata=metadata,
                 stubs=paths.RELEASE / "tinytorch",
                 milestone_dirs=[paths.AUTOGRADER / "milestones" / "providers"],
                 hide=[paths.REPO_ROOT, *(hide or [])], lanes=lanes, now=now,
                 data_dir=grader_data_dir(), reference_bank=reference_bank)


def grader_data_dir() -> Path:
    """Held-out test data for ``tito grade`` in the repository: ``$TINYTORCH_GRADER_DATA``,
    else ``build/grader-data`` (fill it with ``python -m autograder.gradescope.fetch_data``)."""
    from tito import paths  # noqa: PLC0415 - repository side only

    env = os.environ.get("TINYTORCH_GRADER_DATA")
    return Path(env) if env else paths.REPO_ROOT / "build" / "grader-data"
