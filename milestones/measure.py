"""Staff tool: time and peak memory of a milestone's training, one fresh process per seed.

Usage (from the repository root)::

    python milestones/measure.py cnn_1998 --seeds 0-9
    python milestones/measure.py cnn_fashion_1998 --seeds 0-2 --contended
    python milestones/measure.py transformer_2017 --seeds 0-9
    python milestones/measure.py cnn_1998 --seeds 0 --alternative 09_spatial/tensordot

Each seed trains in its own ``python`` process (the grader runs each seed as one item of a
sandboxed child, so a fresh process is the honest unit) with the staff reference
``tinytorch_ref`` and ``OPENBLAS_NUM_THREADS=1`` on task variant ``seed``, exactly as graded:
the trained parameters are tested by the parent's reference forward pass on the variant's
held-out split. It reports that metric (accuracy, exact match or next-character accuracy), the
wall-clock and CPU seconds of training (the milestones' caps count CPU seconds), the
seconds of the parent's evaluation, and the training process's peak resident memory. ``--contended``
pins the process to CPU 0 next to a busy loop pinned there too: about half a core, the
stand-in for Gradescope's half vCPU. ``--alternative MODULE/NAME`` trains with
``tests/fixtures/alternatives/MODULE/NAME.py`` (put on the release by ``tests/alternatives.py``)
in place of that module of the reference (correct code written differently, e.g. loops where
the reference is vectorised). The numbers in
docs/milestones.md come from this tool.

It is also the check of the caps' sizing, which no unit test makes (a test's verdict never
depends on how fast a shared machine is): it exits 1 when a seed used more than half of its
CPU cap (``time_budget_s / len(seeds)``), the room course.yml keeps for slower correct code
and for CPU time that grows under load. Run it for the reference and the slowest alternative
after changing a milestone's ``training``, its cap or a recipe.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
ALTERNATIVES = REPO_ROOT / "tests" / "fixtures" / "alternatives"
#: Share of a seed's CPU cap the reference and the alternatives may use (docs/milestones.md).
MAX_CAP_SHARE = 0.5

CHILD = """
import json, resource, sys, time
sys.path.insert(0, {root!r})
import numpy as np
import importlib
sys.path.insert(0, {package_root!r})
package = importlib.import_module({package!r})
from autograder.milestones import _milestone, predict, task, trainer, work
from autograder.milestones.data import recipes
train_x, train_y, test_x, test_y = task({mid!r}, {seed})
fixed = work(_milestone({mid!r}, None))  # course.yml's training and the seed's CPU cap
t0, c0 = time.perf_counter(), time.process_time()
params = recipes().parameters(trainer({mid!r})(package, {seed}, train_x, train_y, fixed))
seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
t0 = time.perf_counter()
pred = predict({mid!r}, params, test_x)
right = np.all(pred == test_y, axis=1) if pred.ndim == 2 else pred == test_y
print(json.dumps({{"accuracy": float(np.mean(right)), "seconds": seconds, "cpu_seconds": cpu,
                  "score_seconds": time.perf_counter() - t0, "peak_rss_mb": rss,
                  "cap_s": fixed["cap_s"]}}))
"""


def _seeds(text: str) -> list[int]:
    if "-" in text:
        lo, hi = text.split("-")
        return list(range(int(lo), int(hi) + 1))
    return [int(s) for s in text.split(",")]


def alternative_package(spec: str, into: Path) -> str:
    """Copy the reference into ``into/ttalt`` with the module file that ``spec``
    (``MODULE/NAME``, e.g. ``09_spatial/tensordot``) names replaced; returns the package name.
    """
    module, _, name = spec.partition("/")
    source = ALTERNATIVES / module / f"{name}.py"
    if not source.is_file():
        known = sorted(f"{p.parent.name}/{p.stem}" for p in ALTERNATIVES.glob("*/*.py"))
        raise SystemExit(f"--alternative {spec}: no {source.relative_to(REPO_ROOT)}; "
                         f"give one of {', '.join(known)}")
    sys.path.insert(0, str(REPO_ROOT))
    from coursekit.course import load_course  # noqa: PLC0415 - staff tool, only with --alternative
    from tests.alternatives import build_alternative  # noqa: PLC0415 - the fixture on its release

    slug = load_course().module(module).slug
    shutil.copytree(REPO_ROOT / "tinytorch_ref", into / "ttalt",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (into / "ttalt" / f"{slug}.py").write_text(build_alternative(source), encoding="utf-8")
    return "ttalt"


def measure(milestone_id: str, seed: int, contended: bool, package: str = "tinytorch_ref",
            package_root: Path = REPO_ROOT) -> dict[str, float]:
    """Train one seed in a fresh process; returns accuracy, seconds, peak RSS (MB) and the
    seed's CPU cap."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    cmd = [sys.executable, "-c", CHILD.format(root=str(REPO_ROOT), mid=milestone_id, seed=seed,
                                              package=package, package_root=str(package_root))]
    busy = None
    if contended:
        cmd = ["taskset", "-c", "0", *cmd]
        busy = subprocess.Popen(["taskset", "-c", "0", sys.executable, "-c", "while True: pass"])
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
    finally:
        if busy is not None:
            busy.kill()
            busy.wait()
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("milestone")
    p.add_argument("--seeds", default="0-2", help="'0-9' or '0,1,2'")
    p.add_argument("--contended", action="store_true",
                   help="share CPU 0 with a busy loop (about half a core)")
    p.add_argument("--alternative", metavar="MODULE/NAME",
                   help="train with tests/fixtures/alternatives/MODULE/NAME.py in place of "
                        "that module of the reference")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="measure-") as tmp:
        package = (alternative_package(args.alternative, Path(tmp)) if args.alternative
                   else "tinytorch_ref")
        root = Path(tmp) if args.alternative else REPO_ROOT
        return _report(args, package, root)


def _report(args: argparse.Namespace, package: str, root: Path) -> int:
    rows = []
    for seed in _seeds(args.seeds):
        r = measure(args.milestone, seed, args.contended, package, root)
        rows.append(r)
        print(f"{args.milestone} seed {seed}: accuracy {r['accuracy']:.4f}, "
              f"{r['seconds']:.1f} s ({r['cpu_seconds']:.2f} s CPU), evaluated in "
              f"{r['score_seconds']:.1f} s, peak RSS "
              f"{r['peak_rss_mb']:.0f} MB", flush=True)
    acc = [r["accuracy"] for r in rows]
    sec = [r["seconds"] for r in rows]
    cpu = [r["cpu_seconds"] for r in rows]
    rss = [r["peak_rss_mb"] for r in rows]
    label = args.milestone + (f" with {args.alternative}" if args.alternative else "")
    print(f"{label}{' (contended)' if args.contended else ''}: accuracy median "
          f"{statistics.median(acc):.3f} (min {min(acc):.3f}); s/seed median "
          f"{statistics.median(sec):.1f} (max {max(sec):.1f}), CPU s/seed median "
          f"{statistics.median(cpu):.2f} (max {max(cpu):.2f}); peak RSS max {max(rss):.0f} MB")
    cap = rows[0]["cap_s"]
    print(f"cap per seed {cap:g} CPU-s: {cap / max(cpu):.1f}x the most a seed used")
    if max(cpu) > MAX_CAP_SHARE * cap:
        print(f"a seed used more than {MAX_CAP_SHARE:.0%} of its cap: raise time_budget_s in "
              "course.yml or shorten the training (docs/milestones.md)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
