"""Grading cost: seconds to grade one submission, build time per module, peak memory per run.

    python bench/grading_cost.py                 # every built module (a few minutes)
    python bench/grading_cost.py --modules 01 07 --runs 3

For every built module (a solution module and a hidden suite) it measures, as an instructor or
Gradescope would run them:

* ``release_s`` and ``autograder_s``: wall time of ``tito release NN`` and
  ``tito autograder NN`` (one run each: they rewrite the generated trees in place, which are
  reproducible, so the tree does not change);
* ``grade_s``: the median wall time of ``--runs`` runs of ``tito grade NN`` on a complete,
  correct submission (the solution's code in the released notebook, as ``tito samples``
  builds it), including the sandboxed hidden suite and, for modules that grade milestones,
  the milestone training;
* ``grade_mb``: the peak resident memory of the largest process of a grading run (the
  grader or its sandboxed child), from ``getrusage(RUSAGE_CHILDREN)`` of a fresh wrapper;
* for every milestone script (``milestones/*.py --package tinytorch_ref``), its wall time and
  peak memory the same way.

One line per measurement, then a Markdown table for docs/performance.md (``--markdown``).
Goal (issue 14): every run under 512 MB; release + autograder for all 20 modules under 60 s.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tito.course import load_course  # noqa: E402
from tito.release import built_modules  # noqa: E402
from tito.samples import build_notebook  # noqa: E402

TITO = str(Path(sys.executable).parent / "tito")

_MEASURE = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, "
    "stderr=subprocess.DEVNULL).returncode\n"
    "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, rc)\n"
)


def measure(cmd: list[str], cwd: Path = ROOT) -> tuple[float, float, int]:
    """(wall seconds, peak RSS in MB of the largest descendant, exit code) of ``cmd``."""
    out = subprocess.run([sys.executable, "-c", _MEASURE, *cmd], cwd=cwd, check=True,
                         capture_output=True, text=True).stdout.split()
    return float(out[0]), int(out[1]) / 1024.0, int(out[2])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modules", nargs="*", help="module numbers (default: every built one)")
    parser.add_argument("--runs", type=int, default=3, help="grading runs per module (median)")
    parser.add_argument("--no-build", action="store_true", help="skip release/autograder")
    parser.add_argument("--no-milestones", action="store_true",
                        help="skip the milestone scripts")
    parser.add_argument("--markdown", action="store_true", help="also print Markdown tables")
    args = parser.parse_args(argv)
    course = load_course()
    modules = built_modules(course)
    if args.modules:
        wanted = {int(m.split("_")[0]) for m in args.modules}
        modules = [m for m in modules if m.number in wanted]
    rows = []
    with tempfile.TemporaryDirectory(prefix="grading-cost-") as tmp:
        for m in modules:
            row: dict[str, float | str] = {"module": m.name}
            if not args.no_build:
                row["release_s"] = measure([TITO, "release", m.name])[0]
                row["autograder_s"] = measure([TITO, "autograder", m.name])[0]
            nb = Path(tmp) / f"{m.name}.ipynb"
            nb.write_text(json.dumps(build_notebook(m, "full")), encoding="utf-8")
            times, peaks, score = [], [], ""
            for i in range(args.runs):
                res = Path(tmp) / f"results-{m.name}-{i}.json"
                wall, mb, _ = measure([TITO, "grade", m.name, str(nb), "-o", str(res)])
                times.append(wall)
                peaks.append(mb)
                data = json.loads(res.read_text())
                score = f"{data['score']:g}/{sum(t['max_score'] for t in data['tests']):g}"
            row.update(grade_s=statistics.median(times), grade_mb=max(peaks), score=score)
            rows.append(row)
            print(json.dumps(row), flush=True)
    milestones = []
    for m in [] if args.no_milestones else course.milestones:
        script = ROOT / "milestones" / f"{m.id}.py"
        if not script.exists():
            continue
        wall, mb, rc = measure([sys.executable, str(script), "--package", "tinytorch_ref",
                                "--quiet", "--plot", str(ROOT / "build" / "milestones" /
                                                         f"{m.id}-cost.png")])
        milestones.append({"milestone": m.id, "seconds": wall, "peak_mb": mb,
                           "passed": rc == 0})
        print(json.dumps(milestones[-1]), flush=True)
    if args.markdown:
        print("\n| module | release (s) | autograder (s) | grade, median (s) | peak RSS (MB) | "
              "score |\n|---|---|---|---|---|---|")
        for r in rows:
            print(f"| {r['module']} | {r.get('release_s', 0):.1f} | {r.get('autograder_s', 0):.1f}"
                  f" | {r['grade_s']:.1f} | {r['grade_mb']:.0f} | {r['score']} |")
        if not args.no_build:
            total = sum(float(r["release_s"]) + float(r["autograder_s"]) for r in rows)
            print(f"\nrelease + autograder, all {len(rows)} modules: {total:.0f} s")
        print("\n| milestone | seconds | peak RSS (MB) | passed |\n|---|---|---|---|")
        for ms in milestones:
            print(f"| {ms['milestone']} | {ms['seconds']:.1f} | {ms['peak_mb']:.0f} | "
                  f"{ms['passed']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
