"""Mutation gate cost: CPU and wall seconds of each module's mutation run, and its verdicts.

    python bench/mutation_cost.py                       # every module with a suite, once
    python bench/mutation_cost.py 01 05 10 13 --runs 3 --reports build/mut-after
    python bench/mutation_cost.py 01 05 --reports build/mut-after --compare build/mut-before

Each run is what the CI gate runs (``module_mutation`` without the verdict cache, two
mutants at a time) in a fresh interpreter, so nothing is shared between runs. CPU seconds
are those of every process of the run, the sandboxed children included (they outlive their
launcher and are reaped by init, so ``getrusage`` of the run would miss them): the run is
put in its own cgroup (v1 ``cpuacct`` or v2, root only) and its usage read at the end.
Without a cgroup the figure is ``getrusage(RUSAGE_CHILDREN)`` of the run and says
``partial``. CPU seconds do not grow when other work shares the machine; wall seconds do.

``--reports DIR`` writes each module's verdicts (killed and surviving mutant ids with the
kill reasons: ``MutationReport.to_json``) to ``DIR/<module>.json``; ``--compare DIR``
checks them against an earlier run's and exits 1 on any difference. One line per run, then
per module the medians; ``--markdown`` prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import benchlib  # noqa: E402 - bench/benchlib.py

from coursekit import paths  # noqa: E402
from coursekit.course import load_course  # noqa: E402

_RUN = (
    "import json, sys\n"
    "from autograder.harness.mutation import module_mutation\n"
    "from coursekit.course import load_course\n"
    "c = load_course()\n"
    "rep = module_mutation(c, c.module(sys.argv[1]), jobs=int(sys.argv[2]), use_cache=False)\n"
    "json.dump(rep.to_json(), sys.stdout)\n"
)


def run_once(module: str, jobs: int) -> tuple[float, float, bool, dict]:
    """(cpu_s, wall_s, cpu is complete, report json) of one mutation run of ``module``."""
    env = {**os.environ, "TT_MUTATION_CACHE": "off", "OPENBLAS_NUM_THREADS": "1",
           "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    usage = benchlib.run([sys.executable, "-c", _RUN, module, str(jobs)], cwd=ROOT, env=env,
                          prefix="tt-mutation-cost")
    if usage.returncode != 0:
        raise SystemExit(f"{module}: the mutation run failed: "
                         f"{usage.stderr.decode(errors='replace')[-800:]}")
    return usage.cpu_s, usage.wall_s, usage.complete, json.loads(usage.stdout.decode())


def _differences(old: dict, new: dict) -> list[str]:
    out = []
    for key in ("killed", "survived", "equivalent"):
        a = {row[0] for row in old[key]}
        b = {row[0] for row in new[key]}
        if a != b:
            out.append(f"{key}: only before {sorted(a - b)[:5]}, only after {sorted(b - a)[:5]}")
    if old["reasons"] != new["reasons"]:
        diff = sorted(k for k in set(old["reasons"]) | set(new["reasons"])
                      if old["reasons"].get(k) != new["reasons"].get(k))
        out.append("reasons differ for " + ", ".join(
            f"{k} ({old['reasons'].get(k)} -> {new['reasons'].get(k)})" for k in diff[:8]))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("modules", nargs="*", help="default: every module with a hidden suite")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2, help="mutants at a time (the gate's 2)")
    ap.add_argument("--reports", type=Path, help="write each module's verdicts here")
    ap.add_argument("--compare", type=Path, help="compare verdicts with this folder's")
    ap.add_argument("--markdown", action="store_true")
    ns = ap.parse_args(argv)
    course = load_course()
    mods = ([course.module(m) for m in ns.modules] if ns.modules else
            [m for m in course.modules if (paths.SUITES / m.name / "suite.py").is_file()])
    rows = []
    bad = 0
    for m in mods:
        cpus, walls, complete, report = [], [], True, {}
        for i in range(ns.runs):
            cpu, wall, full, rep = run_once(m.name, ns.jobs)
            if report and _differences(report, rep):
                print(f"{m.name}: run {i + 1} gave other verdicts than run 1: "
                      f"{_differences(report, rep)}")
                bad += 1
            report = report or rep
            complete = complete and full
            cpus.append(cpu)
            walls.append(wall)
            print(f"{m.name} run={i + 1} cpu_s={cpu:.1f}{'' if full else ' (partial)'} "
                  f"wall_s={wall:.1f}", flush=True)
        n = len(report["killed"]) + len(report["survived"])
        rows.append((m.name, n, statistics.median(cpus), statistics.median(walls), complete))
        print(f"{m.name} mutants={n} killed={len(report['killed'])} "
              f"cpu_s_median={rows[-1][2]:.1f} wall_s_median={rows[-1][3]:.1f}", flush=True)
        if ns.reports:
            ns.reports.mkdir(parents=True, exist_ok=True)
            (ns.reports / f"{m.name}.json").write_text(json.dumps(report, indent=1) + "\n")
        if ns.compare:
            old_file = ns.compare / f"{m.name}.json"
            if not old_file.is_file():
                print(f"{m.name}: no earlier verdicts in {ns.compare}")
                bad += 1
            else:
                diff = _differences(json.loads(old_file.read_text()), report)
                print(f"{m.name}: verdicts " + ("identical" if not diff else
                                                 "DIFFER: " + "; ".join(diff)), flush=True)
                bad += bool(diff)
    if ns.markdown:
        print("\n| module | mutants | CPU (s) | wall (s) |\n|---|---|---|---|")
        for name, n, cpu, wall, full in rows:
            print(f"| {name} | {n} | {cpu:.1f}{'' if full else ' (partial)'} | {wall:.1f} |")
        print(f"| total | {sum(r[1] for r in rows)} | {sum(r[2] for r in rows):.1f} | "
              f"{sum(r[3] for r in rows):.1f} |")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
