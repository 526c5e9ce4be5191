"""Real-format readers (MNIST IDX, CIFAR-10 binary and python batches) on tiny fixtures."""

from __future__ import annotations

import gzip
import pickle
import struct
from pathlib import Path

import numpy as np
import pytest

from tinytorch_data import loaders as L


def write_idx_images(path: Path, images: np.ndarray, gz: bool = False) -> None:
    """IDX3: magic 0x00000803, then N, rows, cols as big-endian uint32 (16-byte header)."""
    n, r, c = images.shape
    raw = struct.pack(">IIII", 0x00000803, n, r, c) + images.astype(np.uint8).tobytes()
    path.write_bytes(gzip.compress(raw) if gz else raw)


def write_idx_labels(path: Path, labels: np.ndarray, gz: bool = False) -> None:
    """IDX1: magic 0x00000801, then N as big-endian uint32 (8-byte header)."""
    raw = struct.pack(">II", 0x00000801, len(labels)) + labels.astype(np.uint8).tobytes()
    path.write_bytes(gzip.compress(raw) if gz else raw)


@pytest.fixture()
def mnist_dir(tmp_path: Path) -> tuple[Path, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(5, 28, 28), dtype=np.uint8)
    labels = np.array([3, 1, 4, 1, 5], dtype=np.uint8)
    write_idx_images(tmp_path / "train-images-idx3-ubyte.gz", images, gz=True)
    write_idx_labels(tmp_path / "train-labels-idx1-ubyte.gz", labels, gz=True)
    write_idx_images(tmp_path / "t10k-images-idx3-ubyte", images[:2])
    write_idx_labels(tmp_path / "t10k-labels-idx1-ubyte", labels[:2])
    return tmp_path, images, labels


def test_idx_headers_are_16_and_8_bytes(mnist_dir: tuple[Path, np.ndarray, np.ndarray]) -> None:
    root, _, _ = mnist_dir
    assert (root / "t10k-images-idx3-ubyte").stat().st_size == 16 + 2 * 28 * 28
    assert (root / "t10k-labels-idx1-ubyte").stat().st_size == 8 + 2


def test_load_mnist_reads_gzipped_and_plain_idx(
        mnist_dir: tuple[Path, np.ndarray, np.ndarray]) -> None:
    root, images, labels = mnist_dir
    x, y = L.load_mnist(root, "train")
    assert x.dtype == np.uint8 and x.shape == (5, 28, 28) and np.array_equal(x, images)
    assert y.dtype == np.int64 and y.tolist() == labels.tolist()
    xt, yt = L.load_mnist(root, "test")
    assert np.array_equal(xt, images[:2]) and yt.tolist() == [3, 1]


def test_read_idx_handles_big_endian_multibyte_types(tmp_path: Path) -> None:
    values = np.arange(6, dtype=np.int32).reshape(2, 3) - 2
    raw = struct.pack(">BBBBII", 0, 0, 0x0C, 2, 2, 3) + values.astype(">i4").tobytes()
    (tmp_path / "x.idx").write_bytes(raw)
    out = L.read_idx(tmp_path / "x.idx")
    assert out.tolist() == values.tolist() and out.dtype == np.int32


@pytest.mark.parametrize("raw, why", [
    (b"\x01\x00\x08\x01\x00\x00\x00\x01\x00", "bad magic"),
    (b"\x00\x00\x07\x01\x00\x00\x00\x01\x00", "unknown IDX data type"),
    (b"\x00\x00\x08\x01\x00\x00\x00\x05\x00", "header says"),
])
def test_malformed_idx_is_a_clear_error(tmp_path: Path, raw: bytes, why: str) -> None:
    (tmp_path / "bad").write_bytes(raw)
    with pytest.raises(L.DataError, match=why):
        L.read_idx(tmp_path / "bad")


def test_missing_mnist_files_name_what_to_download(tmp_path: Path) -> None:
    with pytest.raises(L.DataError, match="train-images-idx3-ubyte"):
        L.load_mnist(tmp_path)


def _cifar_records(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (rng.integers(0, 256, size=(n, 3, 32, 32), dtype=np.uint8),
            rng.integers(0, 10, size=n).astype(np.int64))


def test_cifar10_binary_batches(tmp_path: Path) -> None:
    root = tmp_path / "cifar-10-batches-bin"
    root.mkdir()
    want_x, want_y = [], []
    for i, name in enumerate([f"data_batch_{k}.bin" for k in range(1, 6)] + ["test_batch.bin"]):
        x, y = _cifar_records(3, i)
        rec = np.concatenate([y.astype(np.uint8)[:, None], x.reshape(3, -1)], axis=1)
        (root / name).write_bytes(rec.tobytes())
        if name != "test_batch.bin":
            want_x.append(x)
            want_y.append(y)
    x, y = L.load_cifar10(tmp_path, "train")
    assert x.shape == (15, 3, 32, 32) and x.dtype == np.uint8
    assert np.array_equal(x, np.concatenate(want_x)) and np.array_equal(y, np.concatenate(want_y))
    assert L.load_cifar10(tmp_path, "test")[0].shape == (3, 3, 32, 32)


def test_cifar10_binary_with_wrong_size_is_refused(tmp_path: Path) -> None:
    (tmp_path / "b.bin").write_bytes(b"\x00" * 3000)
    with pytest.raises(L.DataError, match="multiple of 3073"):
        L.read_cifar10_bin(tmp_path / "b.bin")


class _Evil:
    """Unpickling this writes a marker file: proof that the loader never unpickles."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple:
        return (Path.write_text, (self.marker, "pwned"))


def test_cifar10_python_version_is_refused_never_unpickled(tmp_path: Path) -> None:
    """The python version's pickled batches are refused by name, and nothing in them runs."""
    root = tmp_path / "cifar-10-batches-py"
    root.mkdir()
    marker = tmp_path / "marker"
    for name in [f"data_batch_{k}" for k in range(1, 6)] + ["test_batch"]:
        (root / name).write_bytes(pickle.dumps({b"data": _Evil(marker)}, protocol=2))
    for split in ("train", "test"):
        with pytest.raises(L.DataError, match="pickled.*cifar-10-binary.tar.gz"):
            L.load_cifar10(tmp_path, split)
    assert not marker.exists()
    assert not hasattr(L, "read_cifar10_pickle")


def test_missing_cifar_names_what_to_download(tmp_path: Path) -> None:
    with pytest.raises(L.DataError, match="data_batch_1"):
        L.load_cifar10(tmp_path, "train")
