"""Run one submission's items in several sandboxed children at once ("lanes").

A submission that loops forever costs one per-test timeout for every test that reaches the
loop, one after another: four looping tests at 10 s hold a grader for 40 s. ``tito regrade``
knows such submissions in advance (their old results show the timeouts) and grades them with
their items dealt round-robin to ``lanes`` children that run side by side, each exactly as
:func:`autograder.harness.supervisor.run_items` runs a list of items (its own scratch folder,
uid, rlimits, per-item timeouts and restarts). The timeouts then overlap, and a looping
submission costs about one timeout per lane instead of one per test.

The outcomes are those of a single child: every item is still run in a fresh, sandboxed child
from the same package, with the same timeouts; only the wall clock is shared. One difference
is documented: each lane has the whole run's time limit (``run_timeout_s``), so a submission
that would use up that limit in one child gets more of its tests run in lanes.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from autograder.harness.home import in_threads
from autograder.harness.supervisor import Outcome, RunReport, RunSpec, run_items


def run_lanes(spec: RunSpec, lanes: int) -> RunReport:
    """``run_items(spec)`` with the items dealt round-robin to ``lanes`` concurrent children."""
    lanes = max(1, min(lanes, len(spec.items)))
    if lanes == 1:
        return run_items(spec)
    groups = [spec.items[i::lanes] for i in range(lanes)]
    reports: list[RunReport | None] = [None] * lanes

    def lane_spec(i: int) -> RunSpec:
        """Each lane gets its own scratch with its own copy of the package, so every lane's
        scratch is readable by its own uid only (as run_items makes it), never 0711."""
        scratch = Path(tempfile.mkdtemp(prefix=f"lane{i}-", dir=spec.scratch))
        pkg = scratch / "pkg"
        shutil.copytree(spec.package_parent, pkg)

        def moved(p: Path | None) -> Path | None:
            return None if p is None else pkg / p.relative_to(spec.package_parent)

        return dataclasses.replace(
            spec, items=groups[i], scratch=scratch, package_parent=pkg,
            student_file=moved(spec.student_file),
            student_files=[pkg / p.relative_to(spec.package_parent)
                           for p in spec.student_files])

    def run(i: int) -> None:
        reports[i] = run_items(lane_spec(i))

    in_threads(run, range(lanes), name="lane")
    done = [r for r in reports if r is not None]
    return merge(spec, done)


def merge(spec: RunSpec, reports: list[RunReport]) -> RunReport:
    """One report from the lanes' reports, as if one child had run every item."""
    first = reports[0]
    fatal = next((r for r in reports if r.fatal is not None), None)
    out = RunReport(
        outcomes={}, fatal=fatal.fatal if fatal else None,
        fatal_where=fatal.fatal_where if fatal else "",
        integrity=list(dict.fromkeys(p for r in reports for p in r.integrity))[:20],
        blocked_imports=list(dict.fromkeys(b for r in reports for b in r.blocked_imports)),
        raw_output="\n".join(r.raw_output for r in reports if r.raw_output),
        import_output=(fatal or first).import_output, isolation=first.isolation,
        sandbox_facts=first.sandbox_facts,
        exposed=list(dict.fromkeys(p for r in reports for p in r.exposed)),
        launches=sum(r.launches for r in reports),
        protocol_errors=[e for r in reports for e in r.protocol_errors][:50],
        elapsed_s=max(r.elapsed_s for r in reports),
        child_numpy=next((r.child_numpy for r in reports if r.child_numpy), None),
        import_lines=set().union(*(r.import_lines for r in reports)),
        moot={k: v for r in reports for k, v in r.moot.items()})
    merged = {k: v for r in reports for k, v in r.outcomes.items()}
    out.outcomes = {item: merged[item] for item in spec.items if item in merged}
    return out


def run_stages(spec: RunSpec, later: list[tuple[list[str], dict[str, Any]]],
               lanes: int = 1, last: Sequence[str] = ()) -> RunReport:
    """``spec``'s items (the first stage), then each later stage's ``(items, standins)``
    in fresh children of its own, sealed (``RunSpec.sealed``), then ``last`` (items of
    ``spec``, run like the first stage in fresh children of their own): one report for all.

    A stage never starts before the one before it has ended (its processes killed, its uid's
    files swept), so nothing a stage's child holds (the reference's code of the units it
    stands in) reaches a child of an earlier or a concurrent stage. Later stages run no public
    test or milestone; every stage shares the run's wall-clock limit (``run_timeout_s``, the
    one limit in wall time). ``last`` is for the long work (the milestones' training): run
    after every case, it is what a run that reaches that limit cuts, never a case of a later
    stage, whose points would otherwise depend on the wall time the training took (the load).
    When the first stage cannot import the module, or a
    run stops early (``RunSpec.stop_after``), the later stages are not run and their items
    get the first stage's fatal error, or ``skipped``.
    """
    start = time.monotonic()
    tail = [i for i in last if i in spec.items]
    head = [i for i in spec.items if i not in set(tail)]
    report = run_lanes(dataclasses.replace(spec, items=head) if tail else spec, lanes)
    stages = [(items, dataclasses.replace(spec, items=items, standins=standins, sealed=True,
                                          public_tests=[], milestone_job={}))
              for items, standins in later if items]
    if tail:
        stages.append((tail, dataclasses.replace(spec, items=tail, public_tests=[])))
    for items, stage_spec in stages:
        remaining = spec.run_timeout_s - (time.monotonic() - start)
        if report.fatal is not None or report.stopped_at or remaining <= 0:
            for item in items:
                if report.fatal is not None:
                    out = Outcome(item, "fatal", message=report.fatal, where=report.fatal_where)
                elif report.stopped_at:
                    out = Outcome(item, "skipped",
                                  message=f"not run: the run stopped at {report.stopped_at}")
                else:
                    out = Outcome(item, "not_run", message=(
                        f"not run: the whole submission used up its {spec.run_timeout_s:g} s "
                        "time limit"))
                report.outcomes[item] = out
            continue
        got = run_lanes(dataclasses.replace(stage_spec, run_timeout_s=remaining), lanes)
        report.outcomes.update(got.outcomes)
        report.launches += got.launches
        report.protocol_errors = (report.protocol_errors + got.protocol_errors)[:50]
        report.stopped_at = report.stopped_at or got.stopped_at
        report.child_numpy = report.child_numpy or got.child_numpy
        report.exposed = list(dict.fromkeys(report.exposed + got.exposed))
        report.import_lines |= got.import_lines
        report.moot.update(got.moot)
    if tail:  # the first stage's items in their own order, as if one child had run them
        first = set(spec.items)
        report.outcomes = ({i: report.outcomes[i] for i in spec.items if i in report.outcomes}
                           | {i: o for i, o in report.outcomes.items() if i not in first})
    report.elapsed_s = time.monotonic() - start
    return report
