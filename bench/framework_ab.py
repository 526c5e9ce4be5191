"""Before and after in one process: two checkouts' tinytorch_ref and PyTorch, interleaved.

    python bench/framework_ab.py BEFORE_CHECKOUT [WORKLOAD ...] --steps 20

``BEFORE_CHECKOUT`` is a folder holding another version of the repository (``git worktree
add /tmp/before <commit>``, or ``git archive <commit> | tar -x -C /tmp/before``). Its
``tinytorch_ref`` is imported under the name ``tinytorch_before``; this checkout's is the
"after". Every workload of ``bench/framework.py`` is built three times — after, before and
PyTorch, with the same weights and batch — and timed step by step in rotation on the CPU
clock of the process, so that a busy machine slows the three alike; the medians and their
ratios are printed, one line per workload::

    NAME after_ms=A before_ms=B torch_ms=T after/torch=R1 before/torch=R2 after/before=R3

What docs/performance.md's "before" column is measured with.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import types
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
HERE = Path(__file__).resolve().parent


def _framework(package: str, name: str) -> types.ModuleType:
    """bench/framework.py with every ``tinytorch_ref`` read as ``package``."""
    source = (HERE / "framework.py").read_text(encoding="utf-8")
    module = types.ModuleType(name)
    module.__file__ = str(HERE / "framework.py")
    sys.modules[name] = module
    exec(compile(source.replace("tinytorch_ref", package), name, "exec"), module.__dict__)
    return module


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path, help="checkout of the earlier version")
    parser.add_argument("names", nargs="*", help="workloads (default: all)")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args(argv)
    package = args.before / "tinytorch_ref"
    if not (package / "__init__.py").is_file():
        parser.error(f"{args.before}: no tinytorch_ref/ package there")
    with tempfile.TemporaryDirectory(prefix="tt-ab-") as tmp:
        (Path(tmp) / "tinytorch_before").symlink_to(package.resolve())
        sys.path.insert(0, tmp)
        sys.path.insert(0, str(HERE.parent))
        after = _framework("tinytorch_ref", "framework_after")
        before = _framework("tinytorch_before", "framework_before")
        names = args.names or list(after.WORKLOADS)
        print(f"# load average before: {os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)
        for name in names:
            built_after, built_before = after.WORKLOADS[name](), before.WORKLOADS[name]()
            if built_after is None or built_before is None:
                print(f"{name} missing", flush=True)
                continue
            steps = [built_after[0], built_before[0], built_after[1]]
            for _ in range(args.warmup):
                for step in steps:
                    step()
            times: list[list[float]] = [[], [], []]
            for i in range(args.steps):
                for j in (0, 1, 2) if i % 2 == 0 else (2, 1, 0):
                    t0 = time.process_time()
                    steps[j]()
                    times[j].append(time.process_time() - t0)
            a, b, t = (statistics.median(x) * 1e3 for x in times)
            print(f"{name} after_ms={a:.3f} before_ms={b:.3f} torch_ms={t:.3f} "
                  f"after/torch={a / t:.2f} before/torch={b / t:.2f} after/before={a / b:.2f}",
                  flush=True)
        print(f"# load average after: {os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
