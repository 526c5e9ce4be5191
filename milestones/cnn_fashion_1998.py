"""Milestone 1998 · LeCun's convolutional network on Fashion-MNIST (28x28 clothing images).

Run with your package (after exporting modules 01-09)::

    python milestones/cnn_fashion_1998.py                      # your tinytorch
    python milestones/cnn_fashion_1998.py --package tinytorch_ref

Trains the network of ``cnn_1998.py`` (two 3x3 convolutions with batch norm, ReLU and max
pooling, then a linear classifier) on the course's Fashion-MNIST subset, 6000 training images
(600 per class), and tests on 1000 held-out ones (each seed turns or mirrors the images and
renames the classes, which a network trained from scratch does not mind). Passes when test accuracy reaches the
threshold in course.yml on enough of the graded seeds.
"""

from __future__ import annotations

import sys

from _runner import main
from recipes import train_cnn_fashion

if __name__ == "__main__":
    sys.exit(main("cnn_fashion_1998", train_cnn_fashion))
