"""Milestone 1969 · Minsky & Papert's XOR: one layer cannot, a hidden layer can.

Run with your package (after exporting modules 01-07)::

    python milestones/xor_1969.py                      # your tinytorch

First a single ``Linear(2, 1)`` is trained on the four XOR points: no line separates them, so
its best accuracy stays at 75% or below (shown, and checked). Then ``Linear(2, 8) -> Sigmoid
-> Linear(8, 1)`` is trained, for each seed on noisy copies of a turned, shifted (and maybe
flipped) XOR, and must classify other noisy copies it never saw (threshold in course.yml).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from types import ModuleType

# An entry point: the folder you run from and the course folder (your tinytorch, the course's
# tinytorch_data and tinytorch_milestones) come first on the path; _runner is beside this file.
sys.path[:0] = [os.getcwd(), str(Path(__file__).resolve().parents[1])]

import numpy as np
from _runner import History, fixed_work, main, milestone_config, train_with_progress

from tinytorch_data.loaders import milestone_data
from tinytorch_milestones.recipes import predict, total_steps, train_xor

SINGLE_LAYER_CEILING = 0.75


def single_layer_cannot(tt: ModuleType, args: argparse.Namespace,
                        runs: dict[str, History]) -> bool:
    """Train one linear unit on XOR and report its best training accuracy (at most 75%)."""
    from rich.console import Console

    x, y, _, _ = milestone_data("xor_1969")
    seed = (args.seeds or [0])[0]
    work = fixed_work(milestone_config("xor_1969"))
    try:
        model, hist, _ = train_with_progress(
            "single layer", total_steps(work, len(y)), args.quiet,
            lambda cb, step: train_xor(tt, seed, x, y, work, on_epoch=cb, on_step=step,
                                       hidden=0))
        pred = predict(tt, model, x)
    except Exception as exc:  # noqa: BLE001 - report, fail
        Console().print(f"  single layer: [red]crashed[/red]: {type(exc).__name__}: {exc}")
        return False
    best = max([*hist.accuracy, float(np.mean(pred == y))])
    runs["single Linear(2, 1)"] = hist
    ok = best <= SINGLE_LAYER_CEILING
    Console().print(f"  single layer (no hidden units): best accuracy {best:.2f} "
                    + ("<= 0.75: a line cannot separate XOR" if ok else
                       "> 0.75: impossible for one linear unit, so something is wrong"))
    return ok


if __name__ == "__main__":
    sys.exit(main("xor_1969", train_xor, extra=single_layer_cannot))
