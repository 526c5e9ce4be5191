"""Small CIFAR-10 batches in the real binary format (1 label byte + 3,072 pixel bytes per
record), with a task a few epochs of the real network learn: each class has its own colour
and a bright square in its own place, under strong pixel noise."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

TRAIN = [f"data_batch_{i}.bin" for i in range(1, 6)]
TEST = "test_batch.bin"


def images(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(n, 3, 32, 32)`` uint8 images and their int64 labels (balanced, shuffled)."""
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.arange(n) % 10).astype(np.int64)
    palette = np.random.default_rng(1998).integers(40, 216, size=(10, 3))
    x = rng.normal(0.0, 45.0, size=(n, 3, 32, 32)) + palette[labels][:, :, None, None]
    for i, k in enumerate(labels):
        r, c = divmod(int(k), 5)
        x[i, :, 4 + 12 * r:12 + 12 * r, 2 + 6 * c:8 + 6 * c] += 60.0
    return np.clip(np.rint(x), 0, 255).astype(np.uint8), labels


def batch_bytes(x: np.ndarray, y: np.ndarray) -> bytes:
    """The binary version's records: label byte, then the red, green and blue planes."""
    rec = np.concatenate([y.astype(np.uint8)[:, None], x.reshape(len(x), -1)], axis=1)
    return rec.tobytes()


def write_cifar(root: Path, n_train: int, n_test: int, seed: int = 0) -> Path:
    """``root/cifar-10-batches-bin/`` with five training batches, the test batch and the
    ``SHA256SUMS`` module 08's ``CIFAR10`` writes after extracting a verified archive."""
    folder = root / "cifar-10-batches-bin"
    folder.mkdir(parents=True, exist_ok=True)
    x, y = images(n_train, seed)
    sums = []
    for i, name in enumerate(TRAIN):
        part = slice(i * n_train // 5, (i + 1) * n_train // 5)
        (folder / name).write_bytes(batch_bytes(x[part], y[part]))
    xt, yt = images(n_test, seed + 1)
    (folder / TEST).write_bytes(batch_bytes(xt, yt))
    for name in (*TRAIN, TEST):
        sums.append(f"{hashlib.sha256((folder / name).read_bytes()).hexdigest()}  {name}")
    (folder / "SHA256SUMS").write_text("\n".join(sums) + "\n", encoding="ascii")
    return folder
