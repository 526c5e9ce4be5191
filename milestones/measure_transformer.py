"""Staff tool: accuracy, time and peak memory of the 2017 transformer milestone, per seed.

Usage (from the repository root)::

    python milestones/measure_transformer.py transformer_2017 --seeds 0-9
    python milestones/measure_transformer.py transformer_reversal_2017 --seeds 0-2 --contended

Each seed runs in a fresh ``python`` process (the grader runs each seed as one item of a
sandboxed child, so a fresh process is the honest unit) with the staff reference
``tinytorch_ref`` and ``OPENBLAS_NUM_THREADS=1``: it trains with the recipe on the seed's task
variant, then scores the parameters with the parent's NumPy forward pass on the held-out split.
It reports the metric, the seconds of training (what the sandbox spends; wall clock and CPU)
and of scoring (what the parent spends), and the process's peak resident memory. Training
gets the graded per-seed budget (``0.6 * time_budget_s / 3``), so a run slower than that is
cut short exactly as in grading. ``--contended`` pins the process to
CPU 0 next to a busy loop pinned there too: about half a core, the stand-in for Gradescope's
half vCPU. The figures in docs/milestones.md come from this tool.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import json, resource, sys, time
sys.path.insert(0, {root!r})
import tinytorch_ref
from autograder.milestones import transformer as TR
from autograder.milestones.data import recipes
from tito.course import load_course
ms = next(m for m in load_course().milestones if m.id == {mid!r})
budget = TR.train_budget_s(ms)  # the graded per-seed budget (before narrowing to one seed)
ms = ms.model_copy(update={{"seeds": [{seed}], "min_passing_seeds": 1}})
train_x, train_y, _, _ = TR.task({mid!r}, {seed})
cpu, t0 = time.process_time(), time.perf_counter()
params = recipes().named_parameters(TR.trainer({mid!r})(tinytorch_ref, {seed}, train_x, train_y,
                                                        budget))
train_s, train_cpu = time.perf_counter() - t0, time.process_time() - cpu
rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
t0 = time.perf_counter()
value = TR.score(ms, {{{seed}: params}})["per_seed"][{seed}]
print(json.dumps({{"value": value, "train_s": train_s, "train_cpu_s": train_cpu,
                  "score_s": time.perf_counter() - t0, "train_peak_rss_mb": rss_mb}}))
"""


def _seeds(text: str) -> list[int]:
    if "-" in text:
        lo, hi = text.split("-")
        return list(range(int(lo), int(hi) + 1))
    return [int(s) for s in text.split(",")]


def run_seed(mid: str, seed: int, contended: bool) -> dict[str, float]:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    cmd = [sys.executable, "-c", CHILD.format(root=str(REPO_ROOT), mid=mid, seed=seed)]
    if contended:
        cmd = ["taskset", "-c", "0", *cmd]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=REPO_ROOT,
                          check=False)
    if proc.returncode != 0:
        raise SystemExit(f"seed {seed} failed:\n{proc.stderr[-2000:]}")
    result: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("milestone", choices=["transformer_2017", "transformer_reversal_2017"])
    p.add_argument("--seeds", default="0-2", help="e.g. 0-9 or 0,3,5")
    p.add_argument("--contended", action="store_true",
                   help="pin to CPU 0 next to a busy loop (about half a core)")
    args = p.parse_args(argv)
    busy = None
    if args.contended:
        busy = subprocess.Popen(["taskset", "-c", "0", sys.executable, "-c", "while True: pass"])
    try:
        rows = []
        for seed in _seeds(args.seeds):
            r = run_seed(args.milestone, seed, args.contended)
            rows.append(r)
            print(f"seed {seed}: {r['value']:.4f}  train {r['train_s']:.1f} s "
                  f"({r['train_cpu_s']:.1f} s CPU)  "
                  f"score {r['score_s']:.1f} s  peak RSS {r['train_peak_rss_mb']:.0f} MB",
                  flush=True)
    finally:
        if busy is not None:
            busy.kill()
            busy.wait()
    values = [r["value"] for r in rows]
    secs = [r["train_s"] for r in rows]
    print(f"{args.milestone}{' (contended)' if args.contended else ''}: median "
          f"{statistics.median(values):.4f} (min {min(values):.4f}); train s/seed median "
          f"{statistics.median(secs):.1f} (max {max(secs):.1f}; CPU max "
          f"{max(r['train_cpu_s'] for r in rows):.1f}); score s/seed max "
          f"{max(r['score_s'] for r in rows):.1f}; peak RSS max "
          f"{max(r['train_peak_rss_mb'] for r in rows):.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
