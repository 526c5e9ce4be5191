"""Grading CPU guard (issue 35): grading one module costs at most ``grading.cpu_budget_s``.

    python bench/grading_cpu.py                       # every built module, reference + alternatives
    python bench/grading_cpu.py --modules 09 13 --runs 3 --markdown
    python bench/grading_cpu.py --no-alternatives     # the reference only

For every built module it runs ``tito grade NN NOTEBOOK -o results.json``, as Gradescope does,
on

* the **reference**: the solution's code in the released notebook (``tito samples``' complete
  notebook), and
* each **alternative** implementation (``tests/fixtures/alternatives/NN_slug/*.py``: correct
  code written apart from the reference, loops and other decompositions, often slower), put on
  the release by ``tests/alternatives.py``, as a notebook whose first export cell holds the
  whole module,

with a course whose windows have closed (``benchlib.closed_course``: earlier modules come from
the reference and the milestones graded with the module train, as in the term). Each run sits
in a cgroup of its own (``benchlib.run``), so its figure is the CPU time of **every** process
of the run: the grader, its sandboxed children (which outlive their launcher: ``getrusage``
misses them) and the milestone training, whatever work the milestones are set to do in
course.yml. CPU seconds do not grow when other work shares the machine; wall seconds do.

One line per run, then per notebook the median over ``--runs``; ``--markdown`` prints the table
of docs/performance.md. Exit status 1 when a median exceeds the budget (``--budget``, default
``grading.cpu_budget_s`` of course.yml), when the reference scores 0 (it did not grade: a stale
release?) or an alternative less than the reference, or when the CPU figure is incomplete (no
cgroup: run as root); 0 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import benchlib  # noqa: E402 - bench/benchlib.py

from coursebuild.samples import build_notebook, dump_notebook, notebook_with_exports  # noqa: E402
from coursekit.course import Module, load_course  # noqa: E402
from coursekit.markers import EXPORT_DIRECTIVE, is_export_source  # noqa: E402
from tests.alternatives import build_alternative  # noqa: E402

TITO = str(Path(sys.executable).parent / "tito")
ALTERNATIVES = ROOT / "tests" / "fixtures" / "alternatives"
REFERENCE = "reference"


@dataclass(frozen=True)
class Run:
    """One grading run: which notebook, its CPU and wall seconds, and its score."""

    module: str
    implementation: str  # "reference" or the alternative's name
    cpu_s: float
    wall_s: float
    score: float
    max_score: float
    complete: bool


def alternative_notebook(module: Module, path: Path) -> dict:
    """The released notebook with the alternative at ``path``, put on the release (a complete
    module file), as its first export cell and every other export cell empty: what the grader
    exports is that module."""
    release = build_notebook(module, "untouched")
    n_exports = sum(1 for c in release["cells"] if c["cell_type"] == "code"
                    and is_export_source("".join(c["source"])))
    source = build_alternative(path)
    return notebook_with_exports(module, [f"{EXPORT_DIRECTIVE}\n{source}"]
                                 + [f"{EXPORT_DIRECTIVE}\n"] * (n_exports - 1))


def notebooks(module: Module, alternatives: bool) -> list[tuple[str, dict]]:
    """``(implementation, notebook)`` pairs to grade for ``module``."""
    out = [(REFERENCE, build_notebook(module, "full"))]
    if alternatives:
        for path in sorted((ALTERNATIVES / module.name).glob("*.py")):
            out.append((path.stem, alternative_notebook(module, path)))
    return out


def grade_once(module: Module, implementation: str, notebook: Path, course: Path,
               out: Path) -> Run:
    """Grade ``notebook`` once in a cgroup of its own; read the score from results.json."""
    env = {**os.environ, "TITO_COURSE": str(course), "OPENBLAS_NUM_THREADS": "1",
           "OMP_NUM_THREADS": "1"}
    usage = benchlib.run([TITO, "grade", module.name, str(notebook), "-o", str(out)], cwd=ROOT,
                         env=env, prefix="tt-grading-cpu")
    if usage.returncode != 0 or not out.is_file():
        raise SystemExit(f"{module.name} ({implementation}): tito grade failed (exit "
                         f"{usage.returncode}): {usage.stderr.decode(errors='replace')[-600:]}")
    data = json.loads(out.read_text(encoding="utf-8"))
    max_score = sum(float(t.get("max_score", 0)) for t in data["tests"])
    return Run(module.name, implementation, usage.cpu_s, usage.wall_s, float(data["score"]),
               max_score, usage.complete)


def measure(modules: list[Module], *, runs: int, alternatives: bool) -> list[list[Run]]:
    """For every module and notebook, ``runs`` grading runs (one list per notebook)."""
    results: list[list[Run]] = []
    with tempfile.TemporaryDirectory(prefix="tt-grading-cpu-") as tmp:
        folder = Path(tmp)
        course = benchlib.closed_course(folder)
        for m in modules:
            for name, nb in notebooks(m, alternatives):
                path = folder / f"{m.name}-{name}.ipynb"
                path.write_text(dump_notebook(nb), encoding="utf-8")
                row = []
                for i in range(runs):
                    run = grade_once(m, name, path, course, folder / f"{m.name}-{name}-{i}.json")
                    row.append(run)
                    print(f"{m.name} {name} run={i + 1} cpu_s={run.cpu_s:.1f}"
                          f"{'' if run.complete else ' (partial)'} wall_s={run.wall_s:.1f} "
                          f"score={run.score:g}/{run.max_score:g}", file=sys.stderr, flush=True)
                results.append(row)
    return results


def verdicts(results: list[list[Run]], budget: float) -> list[str]:
    """Every reason the guard fails (empty: it passes)."""
    problems = []
    reference = {row[0].module: max(r.score for r in row) for row in results
                 if row[0].implementation == REFERENCE}
    for row in results:
        first = row[0]
        cpu = statistics.median(r.cpu_s for r in row)
        label = f"{first.module} ({first.implementation})"
        if not all(r.complete for r in row):
            problems.append(f"{label}: CPU time of the sandboxed children not counted (no "
                            "cgroup: run as root)")
        if cpu > budget:
            problems.append(f"{label}: {cpu:.1f} CPU-s, over the budget of {budget:g}")
        if first.implementation == REFERENCE and first.score == 0:
            problems.append(f"{label}: scored 0: the notebook did not grade (run it with tito "
                            "grade to see why; is the release current?)")
        best = reference.get(first.module)
        if best is not None and min(r.score for r in row) < best:
            problems.append(f"{label}: scored {min(r.score for r in row):g}, the reference "
                            f"{best:g}")
    return problems


def markdown(results: list[list[Run]], budget: float) -> str:
    lines = ["| module | implementation | CPU (s) | wall (s) | score | within budget |",
             "|---|---|---|---|---|---|"]
    for row in results:
        first = row[0]
        cpu = statistics.median(r.cpu_s for r in row)
        wall = statistics.median(r.wall_s for r in row)
        lines.append(f"| {first.module} | {first.implementation} | {cpu:.1f} | {wall:.1f} | "
                     f"{first.score:g}/{first.max_score:g} | "
                     f"{'yes' if cpu <= budget else '**no**'} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modules", nargs="*", help="module numbers (default: every built one)")
    parser.add_argument("--runs", type=int, default=1, help="grading runs per notebook (median)")
    parser.add_argument("--no-alternatives", action="store_true",
                        help="grade the reference only")
    parser.add_argument("--budget", type=float,
                        help="CPU seconds per run (default: grading.cpu_budget_s of course.yml)")
    parser.add_argument("--markdown", action="store_true", help="also print the Markdown table")
    args = parser.parse_args(argv)
    course = load_course()
    modules = benchlib.chosen_modules(course, args.modules)
    budget = args.budget if args.budget is not None else course.course.grading.cpu_budget_s
    print(f"# load average before: {os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)
    results = measure(modules, runs=args.runs, alternatives=not args.no_alternatives)
    print(f"# load average after: {os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)
    for row in results:
        print(json.dumps({"module": row[0].module, "implementation": row[0].implementation,
                          "cpu_s": round(statistics.median(r.cpu_s for r in row), 2),
                          "wall_s": round(statistics.median(r.wall_s for r in row), 2),
                          "score": row[0].score, "max_score": row[0].max_score,
                          "complete": all(r.complete for r in row)}), flush=True)
    if args.markdown:
        print("\n" + markdown(results, budget))
    problems = verdicts(results, budget)
    for p in problems:
        print(f"FAIL {p}", flush=True)
    print(f"{'FAILED' if problems else 'OK'}: {len(results)} notebooks, budget {budget:g} CPU-s",
          flush=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
