"""Shipped data verified by checksum; generators deterministic and solvable."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from tinytorch_data import loaders as L


def test_manifest_lists_every_shipped_data_file_with_checksum_source_and_license() -> None:
    files = L.manifest()["files"]
    shipped = {p.relative_to(L.DATASETS_DIR).as_posix()
               for p in L.DATASETS_DIR.rglob("*") if p.suffix in (".gz", ".npz", ".csv")}
    assert shipped == set(files), "every data file in tinytorch_data/ is listed in MANIFEST.json"
    for rel, entry in files.items():
        assert L.sha256_of(L.DATASETS_DIR / rel) == entry["sha256"], f"{rel}: checksum"
        assert (L.DATASETS_DIR / rel).stat().st_size == entry["bytes"]
        assert entry["source"] and entry["license"], f"{rel}: source and license recorded"


def test_digits_have_the_recorded_fixed_split() -> None:
    d = L.load_digits()
    assert d.train_x.shape == (1437, 64) and d.test_x.shape == (360, 64)
    assert d.train_x.dtype == np.uint8 and d.train_y.dtype == np.int64
    assert d.train_x.max() == 16 and d.train_x.min() == 0
    assert np.bincount(d.test_y).tolist() == [36] * 10, "stratified: 36 test images per class"
    assert set(np.unique(d.train_y).tolist()) == set(range(10))


def _copy(tmp_path: Path) -> Path:
    shutil.copytree(L.DATASETS_DIR / "digits_8x8", tmp_path / "digits_8x8")
    return tmp_path


def test_corrupt_digits_file_fails_with_one_line_checksum_error(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    f = root / "digits_8x8" / "digits.csv.gz"
    data = bytearray(f.read_bytes())
    data[100] ^= 0xFF
    f.write_bytes(bytes(data))
    with pytest.raises(L.DataError) as err:
        L.load_digits(root)
    msg = str(err.value)
    assert "checksum mismatch" in msg and "digits.csv.gz" in msg and "\n" not in msg


def test_missing_digits_file_fails_with_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(L.DataError, match="file not found"):
        L.load_digits(tmp_path)


def test_unlisted_file_is_refused() -> None:
    with pytest.raises(L.DataError, match="not listed"):
        L.verified_path("digits_8x8/other.csv.gz")


def test_separable_2d_is_deterministic_by_seed() -> None:
    a, b = L.separable_2d(300, 5), L.separable_2d(300, 5)
    c = L.separable_2d(300, 6)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    assert not np.array_equal(a[0], c[0])
    assert a[0].dtype == np.float32 and a[0].shape == (300, 2) and set(a[1].tolist()) == {0, 1}


@pytest.mark.parametrize("seed", [0, 1, 1957])
def test_separable_2d_is_solved_exactly_by_the_classic_perceptron_rule(seed: int) -> None:
    """Novikoff: with a margin the perceptron rule converges, so 100% is achievable."""
    x, y = L.separable_2d(400, seed, margin=0.1)
    xb = np.hstack([x.astype(np.float64), np.ones((len(x), 1))])
    t = 2 * y - 1
    w = np.zeros(3)
    for _ in range(1000):
        wrong = np.flatnonzero(np.sign(xb @ w) != t)
        if wrong.size == 0:
            break
        w += t[wrong[0]] * xb[wrong[0]]
    assert np.all(np.sign(xb @ w) == t)


def test_xor_points_and_noisy_variant() -> None:
    x, y = L.xor()
    assert (x.astype(int)[:, 0] ^ x.astype(int)[:, 1]).tolist() == y.tolist()
    xn, yn = L.xor_noisy(25, 0.1, seed=3)
    assert xn.shape == (100, 2) and yn.shape == (100,) and np.bincount(yn).tolist() == [50, 50]
    assert np.array_equal(xn, L.xor_noisy(25, 0.1, seed=3)[0])
    # Each noisy point is nearest to the corner whose label it carries.
    nearest = np.argmin(((xn[:, None, :] - x[None]) ** 2).sum(-1), axis=1)
    assert np.mean(y[nearest] == yn) > 0.99


@pytest.mark.parametrize("mid", ["perceptron_1957", "xor_1969", "mlp_1986"])
def test_milestone_data_has_matching_shapes(mid: str) -> None:
    train_x, train_y, test_x, test_y = L.milestone_data(mid)
    assert len(train_x) == len(train_y) and len(test_x) == len(test_y)
    assert train_x.shape[1:] == test_x.shape[1:]


def test_unknown_milestone_data_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        L.milestone_data("nope")


def test_fashion_mnist_subset_is_class_balanced_28x28_idx() -> None:
    d = L.load_fashion_mnist()
    assert d.train_x.shape == (6000, 28, 28) and d.test_x.shape == (1000, 28, 28)
    assert d.train_x.dtype == np.uint8 and d.train_y.dtype == np.int64
    assert np.bincount(d.train_y).tolist() == [600] * 10
    assert np.bincount(d.test_y).tolist() == [100] * 10
    assert d.train_x.max() == 255 and d.train_x.min() == 0
    # The shipped files are plain IDX under the standard names: the generic reader agrees.
    x, y = L.load_mnist(L.DATASETS_DIR / "fashion_mnist", "test")
    assert np.array_equal(x, d.test_x) and np.array_equal(y, d.test_y)
    # No test image is a copy of a training image (the subset keeps the official split).
    train_keys = {img.tobytes() for img in d.train_x}
    assert not any(img.tobytes() in train_keys for img in d.test_x)
    assert len(L.FASHION_MNIST_CLASSES) == 10


def test_corrupt_fashion_mnist_file_fails_with_one_line_checksum_error(tmp_path: Path) -> None:
    shutil.copytree(L.DATASETS_DIR / "fashion_mnist", tmp_path / "fashion_mnist")
    f = tmp_path / "fashion_mnist" / "t10k-labels-idx1-ubyte.gz"
    data = bytearray(f.read_bytes())
    data[-12] ^= 0x01
    f.write_bytes(bytes(data))
    with pytest.raises(L.DataError) as err:
        L.load_fashion_mnist(tmp_path)
    msg = str(err.value)
    assert "checksum mismatch" in msg and "t10k-labels-idx1-ubyte.gz" in msg and "\n" not in msg
