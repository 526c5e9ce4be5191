"""Milestone 1998 · LeCun's convolutional network reads handwritten digits.

Run with your package (after exporting modules 01-09)::

    python milestones/cnn_1998.py                      # your tinytorch
    python milestones/cnn_1998.py --package tinytorch_ref

Trains a small LeNet-style CNN (two 3x3 convolutions with batch norm, ReLU and max pooling,
then a linear classifier) with cross-entropy, Adam and a cosine learning-rate schedule on the
1437 8x8 digits of scikit-learn's set, and tests on the 360 held-out ones (each seed turns or
mirrors the images and renames the classes, which a network trained from scratch does not
mind). Passes when test
accuracy reaches the threshold in course.yml on enough of the graded seeds. The same network
on 28x28 clothing images: ``python milestones/cnn_fashion_1998.py``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# An entry point: the folder you run from and the course folder (your tinytorch, the course's
# tinytorch_data and tinytorch_milestones) come first on the path; _runner is beside this file.
sys.path[:0] = [os.getcwd(), str(Path(__file__).resolve().parents[1])]

from _runner import main

from tinytorch_milestones.recipes import train_cnn_digits

if __name__ == "__main__":
    sys.exit(main("cnn_1998", train_cnn_digits))
