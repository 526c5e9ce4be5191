"""Grading cost: seconds to grade one submission, build time per module, peak memory per run.

    python bench/grading_cost.py                 # every built module (a few minutes)
    python bench/grading_cost.py --modules 01 07 --runs 3

For every built module (a solution module and a hidden suite) it measures, as an instructor or
Gradescope would run them:

* ``release_s`` and ``autograder_s``: wall time of ``tito release NN`` and
  ``tito autograder NN`` (one run each: they rewrite the generated trees in place, which are
  reproducible, so the tree does not change), and ``release_cpu_s``/``autograder_cpu_s``,
  their CPU seconds (every process of the run: a busy machine stretches the wall time, not
  these);
* for all of them at once (every built module, no ``--modules``), ``tito release --all`` and
  ``tito autograder --all`` the way an instructor builds a term (``build_all``: wall and CPU
  seconds of each, default ``--jobs``): the goal's figure;
* ``grade_s``: the median wall time of ``--runs`` runs of ``tito grade NN`` on a complete,
  correct submission (the solution's code in the released notebook, as ``tito samples``
  builds it), including the sandboxed hidden suite and, for modules that grade milestones,
  the milestone training;
* ``grade_mb``: the peak resident memory of the largest process of a grading run (the
  grader or its sandboxed child), from ``getrusage(RUSAGE_CHILDREN)`` of a fresh wrapper;
* for every milestone script (``milestones/*.py --package tinytorch_ref``), its wall time and
  peak memory the same way.

One line per measurement, then a Markdown table for docs/performance.md (``--markdown``).
Goal (issue 14): every run under 512 MB; release + autograder for all 20 modules under 60 s
(``tito release --all`` + ``tito autograder --all``, wall time on a quiet machine).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from benchlib import chosen_modules  # noqa: E402 - bench/benchlib.py

from coursebuild.samples import build_notebook  # noqa: E402
from coursekit.course import load_course  # noqa: E402

TITO = str(Path(sys.executable).parent / "tito")

_MEASURE = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, "
    "stderr=subprocess.DEVNULL).returncode\n"
    "r = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(time.perf_counter() - t, r.ru_maxrss, rc, r.ru_utime + r.ru_stime)\n"
)


def measure(cmd: list[str], cwd: Path = ROOT, env: dict[str, str] | None = None
            ) -> tuple[float, float, int, float]:
    """(wall seconds, peak RSS in MB of the largest descendant, exit code, CPU seconds of
    every descendant) of ``cmd``."""
    out = subprocess.run([sys.executable, "-c", _MEASURE, *cmd], cwd=cwd, check=True,
                         capture_output=True, text=True, env=env).stdout.split()
    return float(out[0]), int(out[1]) / 1024.0, int(out[2]), float(out[3])


def _built(cmd: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of a build command, which must succeed. ``tito release`` runs with
    the repository's course.yml whatever ``TITO_COURSE`` says: it rewrites student_release/
    in place, whose README and modules.json carry the course's dates (the work is the same)."""
    env = None
    if cmd[1] == "release":
        env = {k: v for k, v in os.environ.items() if k != "TITO_COURSE"}
    wall, _, rc, cpu = measure(cmd, env=env)
    if rc != 0:
        raise SystemExit(f"{' '.join(cmd[1:])} failed (exit {rc}); run it to see why")
    return wall, cpu


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
    modules = chosen_modules(course, args.modules)
    rows = []
    with tempfile.TemporaryDirectory(prefix="grading-cost-") as tmp:
        for m in modules:
            row: dict[str, float | str] = {"module": m.name}
            if not args.no_build:
                row["release_s"], row["release_cpu_s"] = _built([TITO, "release", m.name])
                row["autograder_s"], row["autograder_cpu_s"] = _built([TITO, "autograder",
                                                                       m.name])
            nb = Path(tmp) / f"{m.name}.ipynb"
            nb.write_text(json.dumps(build_notebook(m, "full")), encoding="utf-8")
            times, peaks, score = [], [], ""
            for i in range(args.runs):
                res = Path(tmp) / f"results-{m.name}-{i}.json"
                wall, mb, _, _ = measure([TITO, "grade", m.name, str(nb), "-o", str(res)])
                times.append(wall)
                peaks.append(mb)
                data = json.loads(res.read_text())
                score = f"{data['score']:g}/{sum(t['max_score'] for t in data['tests']):g}"
            row.update(grade_s=statistics.median(times), grade_mb=max(peaks), score=score)
            rows.append(row)
            print(json.dumps(row), flush=True)
    build_all: dict[str, float] = {}
    if not args.no_build and not args.modules:
        for verb in ("release", "autograder"):
            build_all[f"{verb}_s"], build_all[f"{verb}_cpu_s"] = _built([TITO, verb, "--all"])
        print(json.dumps({"build_all": build_all}), flush=True)
    milestones = []
    for m in [] if args.no_milestones else course.milestones:
        script = ROOT / "milestones" / f"{m.id}.py"
        if not script.exists():
            continue
        usage = subprocess.run([sys.executable, str(script), "--help"], capture_output=True,
                               text=True, check=False).stdout
        quiet = ["--quiet"] if "--quiet" in usage else []  # mlperf_2018 has neither flag
        plot = (["--plot", str(ROOT / "build" / "milestones" / f"{m.id}-cost.png")]
                if "--plot" in usage else [])
        wall, mb, rc, _ = measure([sys.executable, str(script), "--package", "tinytorch_ref",
                                   *quiet, *plot])
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
            cpu = sum(float(r["release_cpu_s"]) + float(r["autograder_cpu_s"]) for r in rows)
            print(f"\nrelease + autograder, {len(rows)} modules one command each: {total:.0f} s "
                  f"({cpu:.0f} s of CPU)")
        if build_all:
            print(f"tito release --all: {build_all['release_s']:.1f} s "
                  f"({build_all['release_cpu_s']:.1f} s of CPU); tito autograder --all: "
                  f"{build_all['autograder_s']:.1f} s ({build_all['autograder_cpu_s']:.1f} s of "
                  f"CPU); together {build_all['release_s'] + build_all['autograder_s']:.0f} s")
        print("\n| milestone | seconds | peak RSS (MB) | passed |\n|---|---|---|---|")
        for ms in milestones:
            print(f"| {ms['milestone']} | {ms['seconds']:.1f} | {ms['peak_mb']:.0f} | "
                  f"{ms['passed']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
