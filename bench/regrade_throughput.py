"""Regrade throughput: submissions per minute, serial, ``--jobs 2`` and a local Dask cluster.

Not a test (no verdict): it measures, and writes the "Regrade throughput" section of
``docs/performance.md`` (other sections of that file are left as they are)::

    OPENBLAS_NUM_THREADS=1 .venv/bin/python bench/regrade_throughput.py
    .venv/bin/python bench/regrade_throughput.py --n 30 --milestone-n 12 --repeat 1

Exports come from the synthetic generator (:mod:`staff.synthetic`, fixed seeds):
module 01 with 30 submissions, without and with one looping submission, and the milestone
module 07 (XOR and MLP milestones are trained in the sandbox). Each configuration regrades the
same export into a fresh folder (a dry run: nothing reused). The machine is shared, so the
load average is recorded next to the figures, and ``--repeat`` takes the median.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import resource
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

from benchlib import closed_course  # noqa: E402 - bench/benchlib.py

SECTION = "## Regrade throughput"
STANDING = "standing"  # the "Dask, 2 workers" column
NO_LOOP = {"correct": 0.55, "buggy": 0.2, "untouched": 0.1, "late": 0.1, "corrupt": 0.05}


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _tree_cpu() -> float:
    """CPU seconds of this process and every process below it (with what each has reaped):
    the regrade, its workers or a standing cluster's, and their grading children."""
    from autograder.harness import clock, isolation

    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in [os.getpid(), *isolation.descendants(os.getpid())]:
        st = clock.stat_fields(f"/proc/{pid}/stat")
        if st is not None:  # utime, stime, cutime, cstime: fields 14-17
            total += sum(int(v) for v in st[11:15]) / tick
    return total


@dataclass
class Cell:
    """One regrade: its wall time and what it cost."""

    seconds: float
    count: int
    busy: float          # CPU of the whole process tree / wall time: cores kept busy
    parent_ms: float     # the regrade process's own CPU per submission (RUSAGE_SELF)
    first_s: float       # seconds from the call to the first submission's result
    load: float          # 1-minute load average when the run started


def _run(export: Path, *, jobs: int, scheduler: Any, course: Path | None = None) -> Cell:
    from staff.regrade.core import regrade

    first: list[float] = []

    def done(_row: Any) -> None:
        if not first:
            first.append(time.monotonic())

    with tempfile.TemporaryDirectory(prefix="tt-bench-") as tmp:
        load = os.getloadavg()[0]
        cpu0, self0 = _tree_cpu(), resource.getrusage(resource.RUSAGE_SELF)
        start = time.monotonic()
        report = regrade(export=export, out=Path(tmp) / "out", dry_run=True, jobs=jobs,
                         scheduler=scheduler, course=course,
                         on_done=done)
        elapsed = time.monotonic() - start
        self1 = resource.getrusage(resource.RUSAGE_SELF)
        busy = (_tree_cpu() - cpu0) / elapsed
    failed = [r.key for r in report.rows if not r.graded]
    if failed:  # a figure from refused or failed gradings would be meaningless
        raise SystemExit(f"not graded (course side): {failed[:3]}: {report.rows[0].notes[-1:]}")
    n = len(report.rows)
    parent = (self1.ru_utime + self1.ru_stime - self0.ru_utime - self0.ru_stime) / n
    return Cell(elapsed, n, busy, 1000 * parent, first[0] - start, load)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=30, help="submissions for module 01")
    ap.add_argument("--milestone-n", type=int, default=12, help="submissions for module 07")
    ap.add_argument("--repeat", type=int, default=1, help="runs per cell (median)")
    ap.add_argument("--no-dask", action="store_true")
    ap.add_argument("--write", type=Path, default=REPO / "docs" / "performance.md")
    args = ap.parse_args()
    from staff.synthetic import synth_export

    configs: list[tuple[str, int, Any]] = [("--jobs 1", 1, None), ("--jobs 2", 2, None)]
    rows = []
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="tt-bench-exports-") as tmp:
        if not args.no_dask:
            # A standing cluster of two single-threaded workers (what --scheduler ADDRESS
            # uses), reached over TLS like a real one, started (and warmed) for its run only:
            # its scheduler lives in this process and would add its CPU to the other
            # columns' parent figures. local:2, which also starts and stops its cluster inside
            # the regrade, is timed as its own column.
            configs += [("Dask, 2 workers", 1, STANDING), ("Dask local:2 (incl. start)", 1,
                                                            "local:2")]
        course = closed_course(Path(tmp))
        exports = [
            ("01_tensor", args.n, 0, synth_export(module="01", n=args.n, out=Path(tmp) / "a.zip",
                                                  seed=11, mix=NO_LOOP).path),
            ("01_tensor", args.n, 1, synth_export(module="01", n=args.n, out=Path(tmp) / "b.zip",
                                                  seed=11, mix=NO_LOOP, looping=1).path),
            ("07_training (milestones)", args.milestone_n, 0,
             synth_export(module="07", n=args.milestone_n, out=Path(tmp) / "c.zip", seed=11,
                          mix=NO_LOOP).path),
        ]
        for name, n, loops, path in exports:
            cells: dict[str, list[Cell]] = {c[0]: [] for c in configs}
            for _ in range(args.repeat):  # interleaved: a change in load hits every column
                for label, jobs, scheduler in configs:
                    if scheduler == STANDING:
                        cell = _standing(path, course, Path(tmp))
                    else:
                        cell = _run(path, jobs=jobs, scheduler=scheduler, course=course)
                    cells[label].append(cell)
                    print(f"{name:<26} looping={loops} {label:<28} {cell.seconds:6.1f} s "
                          f"{60 * cell.count / cell.seconds:6.1f}/min  busy {cell.busy:.2f}  "
                          f"parent {cell.parent_ms:.0f} ms/submission  first result "
                          f"{cell.first_s:.1f} s  load {cell.load:.1f}", flush=True)
            rows.append((name, n, loops, [(label, _median(cells[label])) for label, *_ in
                                          configs]))
    load_after = os.getloadavg()
    _write(args.write, rows, configs, load_before, load_after, args)
    return 0


def _standing(export: Path, course: Path, tmp: Path) -> Cell:
    """One run on a standing cluster of two workers, started and warmed before it is timed."""
    from staff.regrade.dask import Target, local_cluster
    from staff.synthetic import synth_export

    cluster, security = local_cluster(2)
    try:
        creds = {}
        for name, pem in (("ca.pem", security.tls_ca_file),
                          ("client.pem", security.tls_client_cert),
                          ("client.key", security.tls_client_key)):
            creds[name] = tmp / name
            creds[name].write_text(pem, encoding="ascii")
            creds[name].chmod(0o600)
        standing = Target(cluster.scheduler_address, str(creds["ca.pem"]),
                          str(creds["client.pem"]), str(creds["client.key"]))
        warm = synth_export(module="01", n=2, out=tmp / "w.zip", seed=1,
                            mix={"correct": 1.0}).path
        _run(warm, jobs=1, scheduler=standing, course=course)  # imports, as a standing one has
        return _run(export, jobs=1, scheduler=standing, course=course)
    finally:
        cluster.close()


def _median(cells: list[Cell]) -> Cell:
    """The run of median wall time (its own costs beside it: one run, not a mix)."""
    return sorted(cells, key=lambda c: c.seconds)[(len(cells) - 1) // 2]


def _write(path: Path, rows: list, configs: list, before: tuple, after: tuple,
           args: argparse.Namespace) -> None:
    head = " | ".join(f"{c[0]}" for c in configs)
    lines = [SECTION, "",
             "Submissions regraded per minute (`tito regrade --dry-run`, a fresh output folder, "
             "nothing reused), on synthetic exports from `staff/synthetic.py` (fixed "
             "seeds: correct, buggy, untouched, late and corrupt uploads; \"1 looping\" adds one "
             "submission with an infinite loop, whose tests time out at the course's "
             "`test_timeout_s`; its old results show the timeouts, so the regrade starts it "
             "first and runs its tests in lanes). Each cell is the median of "
             f"{args.repeat} run(s), the configurations interleaved.", "",
             f"Machine: {os.cpu_count()} cores ({_cpu()}), Python {platform.python_version()}; "
             f"load average {before[0]:.1f} before and {after[0]:.1f} after (the machine is "
             "shared: compare the columns of one row, not rows of different runs).", "",
             "Each cell: submissions per minute (wall seconds); busy cores (CPU of the "
             "regrade's whole process tree over the wall time); the regrade process's own CPU "
             "per submission (`RUSAGE_SELF`; with a Dask cluster of this process, the "
             "scheduler's share is in it); seconds to the first result; the 1-minute load "
             "average when the run started. Busy cores and parent CPU are CPU times, so they "
             "hold under load; the rates and speed-ups need a quiet machine.", "",
             f"| export | submissions | looping | {head} |",
             "|---|---:|---:|" + "---:|" * len(configs)]
    for name, n, loops, cells in rows:
        vals = " | ".join(
            f"{60 * c.count / c.seconds:.0f}/min ({c.seconds:.0f} s); {c.busy:.1f} cores; "
            f"{c.parent_ms:.0f} ms; first {c.first_s:.1f} s; load {c.load:.1f}"
            for _, c in cells)
        lines.append(f"| {name} | {n} | {loops} | {vals} |")
    cell = {(name, loops, label): c for name, _n, loops, cells in rows for label, c in cells}
    for name, _n, loops, _c in rows:
        one, two = cell.get((name, loops, "--jobs 1")), cell.get((name, loops, "--jobs 2"))
        if one and two:
            lines += ["", f"{name}, {loops} looping: `--jobs 2` is "
                      f"{one.seconds / two.seconds:.2f}× `--jobs 1` (goal ≥ 1.7 on a quiet "
                      f"machine); parent CPU per submission {two.parent_ms:.0f} ms against "
                      f"{one.parent_ms:.0f} ms (goal: within 20 %)."]
    loop = cell.get(("01_tensor", 1, "--jobs 2"))
    if loop is not None:
        goal = 60 * loop.count / loop.seconds
        lines += ["", f"Goal: at least 60/min for module 01 with `--jobs 2` and one looping "
                  f"submission in {args.n}: **{goal:.0f}/min, "
                  f"{'met' if goal >= 60 else 'not met'}** in this run."]
    ratios = [(cell[(name, loops, "--jobs 2")].seconds
               / cell[(name, loops, "Dask, 2 workers")].seconds)
              for name, _n, loops, _c in rows if (name, loops, "Dask, 2 workers") in cell]
    if ratios:
        lines += [f"Dask (a standing cluster of two single-threaded workers on the same two "
                  f"cores, `--scheduler tls://...`) reaches {min(ratios):.0%}–"
                  f"{max(ratios):.0%} of the throughput of `--jobs 2` (goal: within 15 %, i.e. "
                  "at least 85 %). `local:2` also pays for starting and stopping its workers "
                  "in every run."]
    base = cell.get(("01_tensor", 0, "--jobs 2"))
    loop = cell.get(("01_tensor", 1, "--jobs 2"))
    if base and loop:
        lines += ["", f"One looping submission in {args.n} adds "
                  f"{loop.seconds - base.seconds:.0f} s to module 01 at `--jobs 2` (goal: "
                  "15 s; its looping tests cost 10 CPU-s each, see below)."]
    lines += ["", "Reproduce: `OPENBLAS_NUM_THREADS=1 .venv/bin/python "
              f"bench/regrade_throughput.py --n {args.n} --milestone-n {args.milestone_n} "
              f"--repeat {args.repeat}` (needs `pip install '.[dask]'` for the Dask column).", ""]
    text = path.read_text(encoding="utf-8") if path.exists() else "# Performance\n\n"
    block = "\n".join(lines)
    pattern = re.compile(rf"^{re.escape(SECTION)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _m: block + "\n", text)
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
