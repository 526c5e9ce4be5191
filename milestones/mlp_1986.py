"""Milestone 1986 · Rumelhart, Hinton & Williams: a backprop MLP reads handwritten digits.

Run with your package (after exporting modules 01-07)::

    python milestones/mlp_1986.py                      # your tinytorch
    python milestones/mlp_1986.py --package tinytorch_ref

Trains 64 -> 64 (ReLU) -> 10 with cross-entropy and Adam on 1437 8x8 digits and tests on the
360 held-out ones (scikit-learn's digits, shipped in datasets/ with a checksum; each seed
shuffles the pixel order and the class names, which a network trained from scratch does not
mind). Passes when test accuracy reaches the threshold in course.yml on enough of the graded
seeds.
"""

from __future__ import annotations

import sys

from _runner import main
from recipes import train_mlp

if __name__ == "__main__":
    sys.exit(main("mlp_1986", train_mlp))
