"""Page faults per training step, with and without module 01's memory policy (issue 35).

    python bench/page_faults.py                      # every workload of bench/framework.py
    python bench/page_faults.py cnn28 cnn32 --steps 30

``tinytorch_ref/tensor.py`` calls ``_keep_freed_memory()`` at import, so that glibc keeps freed
memory for reuse instead of handing it back to the kernel after every training step (module
01, section 6). This tool measures what that changes. For each policy (``with``: the checkout
as it is; ``without``: a copy of ``tinytorch_ref`` whose ``tensor.py`` does not make the call,
imported first) it runs a fresh Python process, builds each workload there, and prints one line
per workload::

    POLICY NAME ours faults=F sys_ms=S cpu_ms=C | torch faults=F sys_ms=S cpu_ms=C | ratio=R

``faults`` is the process's minor page faults (``ru_minflt``) per step, ``sys_ms`` its system
time and ``cpu_ms`` its CPU time per step, each over ``--steps`` steps of one framework alone
after ``--warmup`` steps; ``ratio`` is ``bench/framework.py``'s same-run ratio (the two
frameworks alternating step by step, CPU clock). Both frameworks live in the one process, so
PyTorch's figures show what the policy does to it too. docs/performance.md records a run.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CALL = "\n_keep_freed_memory()\n"


def without_policy(dest: Path) -> Path:
    """A copy of ``tinytorch_ref`` under ``dest`` whose import leaves glibc's defaults alone;
    returns the folder to put first on ``sys.path``."""
    package = dest / "tinytorch_ref"
    shutil.copytree(ROOT / "tinytorch_ref", package,
                    ignore=shutil.ignore_patterns("__pycache__"))
    tensor = package / "tensor.py"
    text = tensor.read_text(encoding="utf-8")
    if text.count(CALL) != 1:
        raise SystemExit(f"{tensor}: expected one line '_keep_freed_memory()', found "
                         f"{text.count(CALL)}")
    tensor.write_text(text.replace(CALL, "\n"), encoding="utf-8")
    return dest


def measure(names: list[str], steps: int, warmup: int, policy: str) -> list[str]:
    """One line per workload, measured in this process (see the module docstring)."""
    import tinytorch_ref  # noqa: PLC0415 - the copy chosen by the parent, already imported

    copy = not Path(tinytorch_ref.__file__).resolve().is_relative_to(ROOT)
    if copy != (policy == "without"):
        raise SystemExit(f"policy {policy!r} but tinytorch_ref imported from "
                         f"{tinytorch_ref.__file__}")
    sys.path.insert(1, str(ROOT / "bench"))
    import framework  # noqa: PLC0415 - after the path (and the package) are chosen

    lines = []
    for name in names:
        pair = framework.WORKLOADS[name]()
        if pair is None:
            lines.append(f"{name} missing")
            continue
        cells = []
        for step in pair:
            for _ in range(warmup):
                step()
            before, cpu0 = resource.getrusage(resource.RUSAGE_SELF), time.process_time()
            for _ in range(steps):
                step()
            after, cpu1 = resource.getrusage(resource.RUSAGE_SELF), time.process_time()
            cells.append(f"faults={(after.ru_minflt - before.ru_minflt) / steps:.0f} "
                         f"sys_ms={(after.ru_stime - before.ru_stime) / steps * 1e3:.2f} "
                         f"cpu_ms={(cpu1 - cpu0) / steps * 1e3:.2f}")
        ours_ms, torch_ms = framework.time_pair(*pair, steps=steps, warmup=warmup,
                                                clock=time.process_time)
        lines.append(f"{name} ours {cells[0]} | torch {cells[1]} | "
                     f"ratio={ours_ms / torch_ms:.2f}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="workloads (default: all of bench/framework.py)")
    parser.add_argument("--steps", type=int, default=30, help="timed steps per workload")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--policy", choices=["with", "without"],
                        help="measure in this process with this policy (internal)")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.warmup < 1:
        parser.error("--steps and --warmup must be at least 1")
    if args.policy:
        for line in measure(args.names, args.steps, args.warmup, args.policy):
            print(f"{args.policy} {line}", flush=True)
        return 0
    sys.path.insert(0, str(ROOT / "bench"))
    import framework  # noqa: PLC0415 - only for the workload names

    names = args.names or list(framework.WORKLOADS)
    unknown = [n for n in names if n not in framework.WORKLOADS]
    if unknown:
        parser.error(f"unknown workload(s): {', '.join(unknown)}")
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    with tempfile.TemporaryDirectory(prefix="tt-page-faults-") as tmp:
        first = {"with": str(ROOT), "without": str(without_policy(Path(tmp)))}
        for policy in ("without", "with"):
            code = (f"import sys; sys.path.insert(0, {first[policy]!r}); "
                    "import tinytorch_ref; "
                    f"sys.path.insert(1, {str(ROOT / 'bench')!r}); "
                    "import page_faults; sys.exit(page_faults.main(sys.argv[1:]))")
            cmd = [sys.executable, "-c", code, *names, "--steps", str(args.steps),
                   "--warmup", str(args.warmup), "--policy", policy]
            proc = subprocess.run(cmd, env=env, check=False)
            if proc.returncode:
                return proc.returncode
    return 0


if __name__ == "__main__":
    sys.exit(main())
