"""``python -m fuzz``: the long tier of the differential fuzzer (see ``runner.py``)."""

from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fuzz", description=__doc__)
    parser.add_argument("--cases", type=int, default=100_000, help="number of cases")
    parser.add_argument("--seed", type=int, default=0, help="run seed (case i: from seed, i)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--module", action="append", help="only these modules (01, 02_activations, ...)")
    parser.add_argument("--no-minimise", action="store_true", help="report cases unminimised")
    parser.add_argument("--repro", help="run one reproduction line in both libraries and print")
    parser.add_argument("--report", help="rewrite this file with the classes found after each chunk")
    args = parser.parse_args(argv)
    from .runner import fuzz

    if args.repro:
        from .repro import show

        print(show(args.repro))
        return 0
    rep = fuzz(args.cases, seed=args.seed, modules=args.module, jobs=args.jobs,
               minimise=not args.no_minimise, progress=sys.stderr, report_path=args.report)
    for line in rep.lines():
        print(line)
    print(rep.summary())
    print("per entry: " + ", ".join(f"{k} {v}" for k, v in sorted(rep.per_entry.items())))
    return 1 if rep.classes else 0


if __name__ == "__main__":
    sys.exit(main())
