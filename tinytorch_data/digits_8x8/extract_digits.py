"""Regenerate ``digits.csv.gz`` from scikit-learn's bundled copy of the UCI 8x8 digits.

Run once, in a throwaway environment with scikit-learn installed (scikit-learn is not a
dependency of the course)::

    python -m venv /tmp/sk && /tmp/sk/bin/pip install scikit-learn numpy
    /tmp/sk/bin/python tinytorch_data/digits_8x8/extract_digits.py

The output is byte-for-byte reproducible (gzip mtime 0, a fixed stratified split drawn with
``numpy.random.default_rng(1986)``): 1437 train and 360 test images, 36 test images per class.
Update the sha256 in ``tinytorch_data/MANIFEST.json`` if the file ever changes.
"""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits

OUT = Path(__file__).with_name("digits.csv.gz")
TEST_PER_CLASS = 36
SPLIT_SEED = 1986


def main() -> None:
    bunch = load_digits()
    x = bunch.data.astype(np.uint8)  # (1797, 64), values 0..16
    y = bunch.target.astype(np.uint8)
    rng = np.random.default_rng(SPLIT_SEED)
    split = np.zeros(len(y), dtype=np.uint8)  # 0 = train, 1 = test
    for c in range(10):
        idx = np.flatnonzero(y == c)
        split[rng.choice(idx, size=TEST_PER_CLASS, replace=False)] = 1
    text = io.StringIO()
    text.write("split,label," + ",".join(f"p{i}" for i in range(64)) + "\n")
    for s, lab, row in zip(split, y, x, strict=True):
        text.write(("test" if s else "train") + f",{lab}," + ",".join(map(str, row)) + "\n")
    raw = text.getvalue().encode("ascii")
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as gz:
        gz.write(raw)
    OUT.write_bytes(buf.getvalue())
    print(f"wrote {OUT} ({len(buf.getvalue())} bytes): "
          f"{int((split == 0).sum())} train, {int(split.sum())} test")


if __name__ == "__main__":
    main()
