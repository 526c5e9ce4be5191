"""Cut the course's Fashion-MNIST subset from Debian's ``dataset-fashion-mnist`` package.

Run once on a Debian/Ubuntu machine (nothing else is needed: NumPy and the standard library)::

    apt-get install -y dataset-fashion-mnist     # the full set, /usr/share/datasets/fashion-mnist
    python tinytorch_data/fashion_mnist/extract_fashion_mnist.py

The subset is class-balanced and drawn with ``numpy.random.default_rng(1998)``: 600 training
images per class from the 60,000 training images and 100 test images per class from the
10,000 test images (6,000 train / 1,000 test), kept in their original relative order. It is
written in the real IDX format, gzipped, under the standard file names, so any MNIST loader
(``tinytorch_data.loaders.read_idx``, module 08's ``FashionMNIST``) reads it unchanged. The
output is byte-for-byte reproducible (gzip header without name or mtime, level 9); update the sha256 in
``tinytorch_data/MANIFEST.json`` if it ever changes.

Source: Fashion-MNIST, Copyright (c) 2017 Zalando SE, MIT (Expat) license,
https://github.com/zalandoresearch/fashion-mnist (Debian package version
0.0~git20200523.55506a9-1). The input files are checked against the sha256 below first.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import struct
import sys
from pathlib import Path

import numpy as np

SOURCE = Path("/usr/share/datasets/fashion-mnist")
OUT = Path(__file__).resolve().parent
SEED = 1998
PER_CLASS = {"train": 600, "t10k": 100}
# sha256 of the Debian package's files (dataset-fashion-mnist 0.0~git20200523.55506a9-1).
SOURCE_SHA256 = {
    "train-images-idx3-ubyte.gz":
        "b0564c3eedabfbf835052cff8503ea422014ce006caf5b757f851416ee8300c7",
    "train-labels-idx1-ubyte.gz":
        "0ae29f65d86684f32d1b9c85147786c547b9c6aebcaf235f0400a0cce308b056",
    "t10k-images-idx3-ubyte.gz":
        "cc1d090a38ace84dfa1aa66e3ada7c336ef481a96936906477e6dd344da56eaa",
    "t10k-labels-idx1-ubyte.gz":
        "8d3605d196f4be44669e46906da9733c8131fef761fdbfec72c424d5222f1a05",
}


def read_source(name: str) -> bytes:
    """The decompressed bytes of one Debian file, after checking its sha256."""
    path = SOURCE / name
    if not path.is_file():
        sys.exit(f"{path}: not found; apt-get install -y dataset-fashion-mnist")
    raw = path.read_bytes()
    if hashlib.sha256(raw).hexdigest() != SOURCE_SHA256[name]:
        sys.exit(f"{path}: sha256 differs from the version this subset was cut from")
    return gzip.decompress(raw)


def parse(images_raw: bytes, labels_raw: bytes) -> tuple[np.ndarray, np.ndarray]:
    """IDX3 images (magic 0x803, N, 28, 28) and IDX1 labels (magic 0x801, N)."""
    magic, n, rows, cols = struct.unpack(">IIII", images_raw[:16])
    lmagic, ln = struct.unpack(">II", labels_raw[:8])
    assert (magic, lmagic, rows, cols) == (0x803, 0x801, 28, 28) and n == ln
    images = np.frombuffer(images_raw, dtype=np.uint8, offset=16).reshape(n, rows, cols)
    labels = np.frombuffer(labels_raw, dtype=np.uint8, offset=8)
    return images, labels


def gz(raw: bytes) -> bytes:
    """gzip with a fixed header (no file name, mtime 0) so the bytes are reproducible."""
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as fh:
        fh.write(raw)
    return buf.getvalue()


def main() -> None:
    rng = np.random.default_rng(SEED)
    for prefix, per_class in PER_CLASS.items():
        images, labels = parse(read_source(f"{prefix}-images-idx3-ubyte.gz"),
                               read_source(f"{prefix}-labels-idx1-ubyte.gz"))
        keep = np.sort(np.concatenate([
            rng.choice(np.flatnonzero(labels == c), size=per_class, replace=False)
            for c in range(10)]))
        sub_x, sub_y = images[keep], labels[keep]
        n = len(keep)
        img = struct.pack(">IIII", 0x803, n, 28, 28) + sub_x.tobytes()
        lab = struct.pack(">II", 0x801, n) + sub_y.tobytes()
        for name, data in ((f"{prefix}-images-idx3-ubyte.gz", img),
                           (f"{prefix}-labels-idx1-ubyte.gz", lab)):
            blob = gz(data)
            (OUT / name).write_bytes(blob)
            print(f"{name}: {n} records, {len(blob)} bytes, "
                  f"sha256 {hashlib.sha256(blob).hexdigest()}")


if __name__ == "__main__":
    main()
