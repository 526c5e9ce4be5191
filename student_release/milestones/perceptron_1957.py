"""Milestone 1957 · Rosenblatt's perceptron: one linear unit separates two classes of points.

Run with your package (after exporting modules 01-06)::

    python milestones/perceptron_1957.py                      # your tinytorch

Trains ``Linear(2, 1)`` with a logistic loss and SGD on 400 linearly separable 2-D points and
tests on 400 more (each seed draws its own separating line); passes when test accuracy reaches
the threshold in course.yml on enough of the graded seeds. The training curve is saved as a PNG. Exit code 0 = passed.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# An entry point: the folder you run from and the course folder (your tinytorch, the course's
# tinytorch_data and tinytorch_milestones) come first on the path; _runner is beside this file.
sys.path[:0] = [os.getcwd(), str(Path(__file__).resolve().parents[1])]

from _runner import main

from tinytorch_milestones.recipes import train_perceptron

if __name__ == "__main__":
    sys.exit(main("perceptron_1957", train_perceptron))
