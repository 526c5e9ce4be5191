"""tito's grading verbs, forwarded to the harness and the Gradescope packager.

The CLI never imports student or reference code itself: grading goes through
``autograder.harness`` (sandboxed child, trusted parent), packaging through
``autograder.gradescope``.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from coursekit.course import Course, Module


def grade_submission(*, course: Course, module: Module, submission: Path, out: Path,
                     metadata: Path | None = None, extensions: Path | None = None,
                     now: dt.datetime | None = None) -> dict[str, Any]:
    """Grade one notebook (or a folder with it and the student's open earlier modules) with
    the repository's suite and reference; writes ``out``. ``now``: the time that decides
    which earlier modules are closed (default: the clock)."""
    from autograder.harness.core import grade_module

    return grade_module(course=course, module=module, submission=Path(submission),
                        out=Path(out), metadata=metadata, extensions=extensions, now=now)


def earlier_module_lines(results: dict[str, Any]) -> list[str]:
    """What each earlier module was graded with, for ``tito grade``'s output (results.json
    ``extra_data.earlier_modules``): the course's reference (closed), the student's notebook
    submitted with this one, or the release stub and why."""
    early = (results.get("extra_data") or {}).get("earlier_modules") or {}
    closed = [name for name, r in early.items() if r.get("from") == "reference"]
    lines = []
    if closed:
        lines.append(f"earlier modules on the course's reference (closed): {', '.join(closed)}")
    for name, r in early.items():
        if r.get("from") == "yours":
            lines.append(f"{name}: the student's own {name}.ipynb (open until {r.get('closes')})")
        elif r.get("from") == "stub":
            lines.append(f"{name}: its release stub, because {r.get('why')} (open until "
                         f"{r.get('closes')}); put the student's {name}.ipynb beside the "
                         "notebook, as on Gradescope, to grade with it")
    return lines


def pending_problem(results: dict[str, Any]) -> str | None:
    """One line saying why ``results`` is not (wholly) a score, or None when it is: the run
    failed on the course's side (``extra_data.grader_error``) or tests are pending
    (``extra_data.pending``), with what to do when the cause is known."""
    extra = results.get("extra_data") or {}
    if extra.get("grader_error"):
        return ("not graded, a course-side failure: "
                + str(extra["grader_error"]).splitlines()[0][:400])
    pending = [p for p in extra.get("pending") or [] if isinstance(p, dict)]
    if not pending:
        return None
    whys = "; ".join(str(p.get("why") or p.get("test")) for p in pending[:3])
    line = (f"pending, not a score: {len(pending)} test(s) could not be scored on the course's "
            f"side ({whys})")
    if any("not installed" in str(p.get("why")) or "test-data folder" in str(p.get("why"))
           for p in pending):
        line += ("; install the held-out test data with `python -m "
                 "autograder.gradescope.fetch_data --dest build/grader-data` (or set "
                 "TINYTORCH_GRADER_DATA) and grade again")
    return line


def write_config_failure(out: Path, reason: str) -> None:
    """A valid Gradescope results.json for a run that could not start (bad course setup)."""
    import json

    results = {
        "score": 0.0, "execution_time": 0.0, "visibility": "visible",
        "stdout_visibility": "hidden",
        "output": ("The autograder is misconfigured, so your submission was not graded; it is "
                   "kept and will be graded once course staff fix it. (" + reason + ")"),
        "tests": [{"name": "grader configuration", "score": 0.0, "max_score": 0.0,
                   "status": "failed", "visibility": "visible", "output": reason,
                   "tags": ["grader_error"]}],
        "extra_data": {"grader_error": reason},
    }
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    tmp.replace(out)


def build_autograder(*, course: Course, module: Module, out_zip: Path,
                     extensions: Path | None = None, jobs: int = 1,
                     slots: threading.Semaphore | None = None) -> Path:
    """Build the Gradescope zip for ``module``; returns its path. ``jobs``: reference
    children computing the goldens bank at once; ``slots``: held by each of them (shared by
    zips built at once)."""
    from autograder.gradescope import build_zip

    out_zip.parent.mkdir(parents=True, exist_ok=True)
    result = build_zip(course=course, module=module, out_zip=out_zip, extensions=extensions,
                       jobs=jobs, slots=slots)
    return Path(result) if result else out_zip


class AutograderError(RuntimeError):
    """A module's zip could not be built; one line that names the module."""


def build_autograders(*, course: Course, modules: list[Module],
                      out_zip: Callable[[Module], Path], extensions: Path | None = None,
                      jobs: int = 1) -> Iterator[Path]:
    """Build the zips of ``modules``, yielding each path in the modules' order.

    With ``jobs`` > 1, ``jobs`` modules are built at once (threads: the work is in the
    reference children and in zlib) with ``jobs`` reference children running in all, so one
    module's packing overlaps another's bank. A bank runs in one child, except the last one
    to start (or a single module's): it runs in ``jobs`` blocks of variants, so the end of the
    build (the capstone's 64 Olympics events) still has every core; each extra child costs its
    start (about 0.2 s of CPU), which is why the others do not split. Every zip is the same
    as a one-by-one build. A failure stops the build: no module starts after it, the ones
    under way finish (every zip written is whole) and :class:`AutograderError` names the
    first failing module in order.
    """
    from concurrent.futures import Future, ThreadPoolExecutor

    from autograder.gradescope import PackagingError
    from autograder.harness import isolation

    failed = threading.Event()
    slots = threading.BoundedSemaphore(jobs)
    lock = threading.Lock()
    unstarted = len(modules)

    def one(m: Module) -> Path:
        nonlocal unstarted
        if failed.is_set():
            raise AutograderError(f"{m.name}: not built (an earlier module failed)")
        with lock:
            unstarted -= 1
            last = unstarted == 0
        try:
            return build_autograder(course=course, module=m, out_zip=out_zip(m),
                                    extensions=extensions, jobs=jobs if last else 1,
                                    slots=slots)
        except BaseException as exc:
            failed.set()
            if isinstance(exc, PackagingError):
                raise AutograderError(f"{m.name}: {exc}") from None
            raise

    if jobs <= 1 or len(modules) <= 1:
        for m in modules:
            yield one(m)
        return
    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="autograder")
    try:
        futures: list[Future[Path]] = [pool.submit(one, m) for m in modules]
        for f in futures:
            try:
                path = f.result()
            except BaseException:
                pool.shutdown(wait=False, cancel_futures=True)
                raise
            yield path
    except KeyboardInterrupt:
        isolation.abort_all()  # the reference children of the modules under way; tito exits
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
