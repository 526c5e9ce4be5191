"""Milestone 1998 · LeCun's convolutional network on Fashion-MNIST (28x28 clothing images).

Run with your package (after exporting modules 01-09)::

    python milestones/cnn_fashion_1998.py                      # your tinytorch

Trains the network of ``cnn_1998.py`` (two 3x3 convolutions with batch norm, ReLU and max
pooling, then a linear classifier) on the course's Fashion-MNIST subset, 6000 training images
(600 per class), and tests on 1000 held-out ones (each seed turns or mirrors the images and
renames the classes, which a network trained from scratch does not mind). Passes when test accuracy reaches the
threshold in course.yml on enough of the graded seeds.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# An entry point: the folder you run from and the course folder (your tinytorch, the course's
# tinytorch_data and tinytorch_milestones) come first on the path; _runner is beside this file.
sys.path[:0] = [os.getcwd(), str(Path(__file__).resolve().parents[1])]

from _runner import main

from tinytorch_milestones.recipes import train_cnn_fashion

if __name__ == "__main__":
    sys.exit(main("cnn_fashion_1998", train_cnn_fashion))
