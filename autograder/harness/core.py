"""The grading pipeline: one submission in, one valid Gradescope results.json out, always.

:func:`grade` is the one place that calls the harness's stages, in order (docs/architecture.md,
"The harness"):

1. **package** the submission (:mod:`autograder.harness.package`): the notebook exported in
   a memory-capped worker, the graded package laid out in a scratch folder (an earlier
   module's reference only once its submission window has closed);
2. **expected** values (:mod:`autograder.harness.goldens`): the submission's variant
   (:mod:`autograder.harness.variants`) and that variant's values, from goldens or the
   reference run in a trusted child; the milestones' tasks (:mod:`autograder.harness.milestones`);
3. **run** the public tests, hidden cases and milestone seeds in the sandbox
   (:mod:`autograder.harness.lanes`, :mod:`autograder.harness.supervisor`), each result
   decided as it arrives and its data dropped;
4. **decide** every test's score (:mod:`autograder.harness.decide`), in this process, on
   decoded plain data only;
5. **publish** results.json (:mod:`autograder.harness.publish`): a provisional one before any
   student code runs, replaced atomically at the end.

The parent (this process) never imports the student's code. A broken submission gets zeros
and a message that says why and what to try; a course-side failure, a results.json that says
so (invariants 4 and 12).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograder.harness import isolation, milestones, publish, timing
from autograder.harness.decide import GraderError, Grading, decide, decider, refused
from autograder.harness.goldens import Expected, ForVariant, GoldensError, expected_for, load_suite
from autograder.harness.home import HARNESS_ROOT
from autograder.harness.lanes import run_stages
from autograder.harness.limits import Limits, ModuleInfo, module_snapshot
from autograder.harness.package import (
    Packaged,
    PackageError,
    Refused,
    build_package,
    package_submission,
    sha256_file,
)
from autograder.harness.supervisor import RunReport, RunSpec, SandboxUnavailable
from autograder.standins import StandinError, stage_plan
from autograder.suite import Suite

if TYPE_CHECKING:
    from coursekit.course import Course  # noqa: PLC0415 - types only: the zip has no course.py

__all__ = ["GraderError", "grade", "grade_module", "grader_data_dir"]


def grade(*, module: Any, submission: Path, suite_path: Path, reference: Path,
          public_tests: Path | None = None, out: Path, limits: Any = None,
          expected: Path | None = None, metadata: Path | None = None,
          stubs: Path | None = None, milestone_dirs: list[Path] | None = None,
          course: Course | None = None, hide: list[Path] | None = None,
          now: dt.datetime | None = None, lanes: int = 1,
          data_dir: Path | None = None, reference_bank: bool = False) -> dict[str, Any]:
    """Grade one submission and write Gradescope's results.json to ``out``.

    Args:
        module: a :func:`autograder.harness.limits.module_snapshot` dict, a ModuleInfo, or a
            ``coursekit.course.Module`` (then ``course`` or course.yml supplies milestones and
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
        course: the parsed course, when ``module`` is a ``coursekit.course.Module``.
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
        results = publish.grader_failure(None, f"module facts unreadable: {exc}", started)
        publish.write(out, results, None)
        return results
    lim = Limits.from_any(limits).within(info.limits) if limits is not None else info.limits
    ctx = Grading(info=info, limits=lim, started=started, lanes=max(1, int(lanes)),
               reference_bank=reference_bank, data_dir=_abs(data_dir))
    if any(n < info.number for n, _ in info.all_modules):
        ctx.extra["schedule"] = _schedule_record(when, now is not None)
    reserve = publish.provisional(out, ctx)
    scratch = Path(tempfile.mkdtemp(prefix="ttgrade-"))
    try:
        results = _grade(ctx, _abs(submission), _abs(suite_path), _abs(reference),
                         _abs(public_tests), _abs(expected), _abs(metadata), _abs(stubs),
                         [_abs(d) for d in milestone_dirs or
                          [HARNESS_ROOT / "autograder" / "milestones" / "providers"]],
                         scratch, [_abs(out.parent), *[_abs(h) for h in hide or []],
                                   *([ctx.data_dir] if ctx.data_dir else [])], when)
    except GraderError as exc:
        results = publish.grader_failure(ctx, str(exc), started)
    except Exception as exc:  # noqa: BLE001 - fail closed with a valid results.json
        if isinstance(exc, isolation.Aborted) or isolation.ABORT.is_set():
            # interrupted (Ctrl-C, kill): the caller says so in one line and discards this
            results = publish.grader_failure(ctx, f"interrupted: {exc}", started)
        else:
            print(traceback.format_exc(limit=8), file=sys.stderr)
            results = publish.grader_failure(ctx, f"internal error: {type(exc).__name__}: {exc}",
                                      started)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    publish.write(out, results, reserve)
    return results


def _abs(p: Any) -> Any:
    return None if p is None else Path(p).absolute()


# ----------------------------------------------------------------------------- the stages
def _grade(ctx: Grading, submission: Path, suite_path: Path, reference: Path,
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

    # 1. package: the student's code, read in a memory-capped worker, in the graded package
    pkg_parent = scratch / "pkg"
    pkg_parent.mkdir()
    try:
        packaged = package_submission(submission, info, now=now, reference=reference,
                                      stubs=stubs, public_dir=public_dir, dest=pkg_parent)
    except Refused as exc:
        ctx.submission_file, ctx.submission_sha = exc.file, exc.sha256
        return publish.results(ctx, *refused(ctx, jobs, str(exc), exc.reason))
    except PackageError as exc:
        raise GraderError(str(exc)) from exc
    ctx.submission_file, ctx.submission_sha = packaged.notebook.name, packaged.sha256
    ctx.notes += packaged.notes

    # 2. expected: the variant and its values, decided before any student code runs
    try:
        chosen = expected_for(packaged.source, suite=suite, suite_path=suite_path,
                              goldens=goldens, reference=reference, slug=info.slug,
                              number=info.number,
                              all_modules=info.all_modules or ((info.number, info.slug),),
                              limits=ctx.limits, shared=ctx.reference_bank)
    except GoldensError as exc:
        raise GraderError(str(exc)) from exc
    exp = chosen.expected
    ctx.expected_source = exp.source
    ctx.seeds = dict(exp.seeds)
    ctx.extra["variant"] = chosen.record
    for name, err in exp.errors.items():
        ctx.grader_errors.append(f"reference failed case {name}: {err}")
    # the milestones' seeds and task variants (their held-out splits stay here)
    for j in jobs:
        if j.file is None:
            continue
        try:
            milestones.prepare(j, key=chosen.key, salt=chosen.salt)
        except Exception as exc:  # noqa: BLE001 - a provider bug is the course's problem
            ctx.grader_errors.append(f"milestone {j.info.id}: provider failed: "
                                     f"{type(exc).__name__}: {exc}"[:300])
            j.file = None
    earlier = packaged.earlier
    if earlier.note:
        ctx.notes.append(earlier.note)
    if earlier.record:
        ctx.extra["earlier_modules"] = earlier.record
    ctx.earlier_line, ctx.earlier_detail = earlier.line, earlier.detail
    ctx.stub_modules = earlier.stubs

    # 3. run everything in the sandbox; each result is decided as it arrives
    report = _run(ctx, suite, chosen, jobs, packaged, suite_path=suite_path,
                  reference=reference, goldens=goldens, metadata=metadata, stubs=stubs,
                  scratch=scratch, hide=hide, submission=submission)

    # 4. decide, in this process, on plain data only; 5. publish
    return publish.results(ctx, *decide(ctx, suite, exp, packaged.public, jobs, report))


def _run(ctx: Grading, suite: Suite, chosen: ForVariant, jobs: list[milestones.MilestoneJob],
         packaged: Packaged, *, suite_path: Path, reference: Path, goldens: Path | None,
         metadata: Path | None, stubs: Path | None, scratch: Path, hide: list[Path],
         submission: Path) -> RunReport:
    """The run stage: the public tests, hidden cases and milestone seeds in sandboxed
    children (in lanes, stand-in stages apart), with their limits, the paths the sandbox
    must not see and the parent's timing of timed items."""
    info, exp = ctx.info, chosen.expected
    pub = packaged.public
    try:
        case_items, later = stage_plan(suite, chosen.standins)
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
    planner, twin = _timing(ctx, suite, exp, jobs, suite_path, reference, stubs, scratch,
                            info.all_modules or ((info.number, info.slug),))
    hidden_paths.append(scratch / "twinpkg")
    try:
        report = run_stages(RunSpec(
            package_parent=packaged.package_parent, slug=info.slug, suite_file=suite_path,
            items=items, scratch=scratch, item_timeout_s=timeouts,
            import_timeout_s=ctx.limits.import_timeout,
            run_timeout_s=ctx.limits.run_timeout_s,
            memory_limit_mb=ctx.limits.memory_limit_mb,
            max_output_kb=ctx.limits.max_output_kb, student_file=packaged.student_file,
            student_files=packaged.student_files,
            public_tests=packaged.public_files, milestone_job=milestones.child_job(jobs),
            sandbox=True, hide=hidden_paths,
            seeds={f"case:{name}": seed for name, seed in exp.seeds.items()},
            on_result=decider(suite, exp, jobs),
            moot=milestones.moot_items(jobs) if ms_items else None,
            timing=planner, twin=twin), later,
            ctx.lanes, last=ms_items)  # every case first: a wall-limit cut hits training only
    except SandboxUnavailable as exc:
        raise GraderError(str(exc)) from exc
    ctx.isolation = report.isolation
    ctx.extra["sandbox"] = report.sandbox_facts
    if report.exposed:
        ctx.extra["exposed_to_sandbox"] = report.exposed[:20]
    if ctx.lanes > 1:
        ctx.extra["lanes"] = ctx.lanes
    return report


def _timing(ctx: Grading, suite: Suite, exp: Expected, jobs: list[milestones.MilestoneJob],
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


def _schedule_record(now: dt.datetime, given: bool) -> dict[str, str]:
    """``extra_data.schedule``: the time that decided which earlier modules were closed."""
    return {"decided_at": now.astimezone(dt.timezone.utc).isoformat(timespec="seconds"),
            "clock": "given by the grading command" if given else "grading machine's clock",
            "rule": "an earlier module is graded on the course's reference once it no longer "
                    "accepts late work (its close time in course.yml, after extensions)"}


def _check_points(info: ModuleInfo, suite: Suite) -> None:
    if suite.module != info.name:
        raise GraderError(f"suite is for {suite.module}, not {info.name}")
    if not math.isclose(suite.total_points, info.points, abs_tol=1e-9):
        raise GraderError(f"suite {suite.module} is worth {suite.total_points:g} points but "
                          f"course.yml gives {info.name} {info.points:g}")


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
def grade_module(*, course: Course | None, module: Any, submission: Path, out: Path,
                 metadata: Path | None = None, limits: Any = None,
                 expected: Path | None = None, hide: list[Path] | None = None,
                 lanes: int = 1, extensions: Path | None = None,
                 now: dt.datetime | None = None, reference_bank: bool = False
                 ) -> dict[str, Any]:
    """Grade with the repository's layout (``tito grade``): suite, reference, public tests.

    ``module`` is a ``coursekit.course.Module`` or a :func:`module_snapshot` dict (what a
    ``tito regrade`` task carries to a Dask worker); ``hide`` adds paths the sandbox must not
    see (a regrade's export and output folders) to the repository itself. ``extensions``
    (the CSV the gradebook ingests) keeps an extended module open for everyone until the
    extension has passed too. ``reference_bank``: see :func:`grade` (``tito regrade``
    grades many submissions of a module in one process).
    """
    from coursekit import paths  # noqa: PLC0415 - repository side: the zip carries no coursekit.paths

    name = ModuleInfo.from_any(module, course).name
    snap: Any = module
    if extensions is not None and not isinstance(module, dict):
        if course is None:  # a Module needs its course for the close times
            raise ValueError("grade_module: extensions with a course Module need its course")
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
    from coursekit import paths  # noqa: PLC0415 - repository side: the zip carries no coursekit.paths

    env = os.environ.get("TINYTORCH_GRADER_DATA")
    return Path(env) if env else paths.REPO_ROOT / "build" / "grader-data"
