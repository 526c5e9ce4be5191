"""Milestone 1986 · Rumelhart, Hinton & Williams: a backprop MLP reads handwritten digits.

Run with your package (after exporting modules 01-07)::

    python milestones/mlp_1986.py                      # your tinytorch

Trains 64 -> 64 (ReLU) -> 10 with cross-entropy and Adam on 1437 8x8 digits and tests on the
360 held-out ones (scikit-learn's digits, shipped in tinytorch_data/ with a checksum; each seed
shuffles the pixel order and the class names, which a network trained from scratch does not
mind). Passes when test accuracy reaches the threshold in course.yml on enough of the graded
seeds.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# An entry point: the folder you run from and the course folder (your tinytorch, the course's
# tinytorch_data and tinytorch_milestones) come first on the path; _runner is beside this file.
sys.path[:0] = [os.getcwd(), str(Path(__file__).resolve().parents[1])]

from _runner import main

from tinytorch_milestones.recipes import train_mlp

if __name__ == "__main__":
    sys.exit(main("mlp_1986", train_mlp))
