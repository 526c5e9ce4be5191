"""Course data: shipped files verified by checksum, deterministic generators, real-format readers.

NumPy and the standard library only, so the same file serves the milestone scripts students
run, the grader (loaded before any student code runs) and the tests.

Shipped (``tinytorch_data/MANIFEST.json`` holds sha256, source and license of each file):

* :func:`load_digits` — scikit-learn's 8x8 digits with the course's fixed train/test split;
* :func:`load_fashion_mnist` — a class-balanced Fashion-MNIST subset (6,000 train / 1,000 test
  28x28 images) in the real IDX format, cut from Debian's ``dataset-fashion-mnist``;
* :func:`load_kjv_chars` — Genesis to Ruth of the King James Bible (public domain, about 1 MB
  of ASCII text, one verse a line) with a contiguous train/validation split;
* :func:`load_tinygpt` — the capstone's TinyGPT: module 13's ``GPT`` trained by the course's
  reference on that text's training part (``tinygpt_kjv/train_tinygpt.py``).

Generated (deterministic by seed, nothing stored):

* :func:`separable_2d` — linearly separable points with a margin (1957 perceptron);
* :func:`xor` / :func:`xor_noisy` — the XOR problem (1969);
* :func:`sequence_reversal` / :func:`sequence_sorting` — token sequences and their reversed or
  sorted copies (2017 transformer).

Downloaded by students themselves (never at run time by the course):

* :func:`load_mnist` / :func:`read_idx` — MNIST and Fashion-MNIST IDX files (``.gz`` or not);
* :func:`load_cifar10` / :func:`read_cifar10_bin` — the CIFAR-10 *binary* version's batches
  (``*.bin``, fixed 3,073-byte records parsed with NumPy). The python version (pickled
  batches) is never read: unpickling a file can run code, so a folder holding only that
  version is refused with a message naming the binary archive.

Example:
    >>> x, y = xor()
    >>> x.tolist(), y.tolist()
    ([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]], [0, 1, 1, 0])
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

DATASETS_DIR = Path(__file__).resolve().parent
MANIFEST = DATASETS_DIR / "MANIFEST.json"


class DataError(ValueError):
    """A data file is missing, corrupt or not in the expected format; the message is one line."""


class Split(NamedTuple):
    """A dataset split into train and test arrays."""

    train_x: np.ndarray
    train_y: np.ndarray
    test_x: np.ndarray
    test_y: np.ndarray


# --------------------------------------------------------------------------- shipped files
def manifest() -> dict[str, Any]:
    """The parsed ``MANIFEST.json``."""
    try:
        return json.loads(MANIFEST.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise DataError(f"{MANIFEST}: file not found; restore it with git") from exc


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def verified_path(relpath: str, root: Path | None = None) -> Path:
    """Return ``root/relpath`` after checking its sha256 against the manifest.

    Args:
        relpath: the file's key in ``MANIFEST.json`` ``files``, e.g. ``digits_8x8/digits.csv.gz``.
        root: the datasets directory (tests pass a copy); defaults to this package's folder.

    Raises:
        DataError: unknown file, missing file or checksum mismatch, in one line.
    """
    root = DATASETS_DIR if root is None else root
    files = manifest().get("files", {})
    if relpath not in files:
        raise DataError(f"tinytorch_data/{relpath}: not listed in tinytorch_data/MANIFEST.json")
    path = root / relpath
    if not path.is_file():
        raise DataError(f"tinytorch_data/{relpath}: file not found; restore it with "
                        f"`git checkout -- tinytorch_data/{relpath}`")
    want = files[relpath]["sha256"]
    got = sha256_of(path)
    if got != want:
        raise DataError(f"tinytorch_data/{relpath}: checksum mismatch (expected sha256 "
                        f"{want[:12]}..., got {got[:12]}...); restore it with "
                        f"`git checkout -- tinytorch_data/{relpath}`")
    return path


def load_digits(root: Path | None = None) -> Split:
    """The 8x8 digits (1437 train / 360 test, fixed stratified split), checksum verified.

    Returns:
        ``Split`` with ``train_x`` (1437, 64) and ``test_x`` (360, 64) uint8 pixel values in
        0..16 (row-major 8x8 images), ``train_y`` / ``test_y`` int64 class labels in 0..9.
    """
    rel = "digits_8x8/digits.csv.gz"
    path = verified_path(rel, root)
    with gzip.open(path, "rt", encoding="ascii") as fh:
        header = fh.readline().strip().split(",")
        if header[:2] != ["split", "label"] or len(header) != 66:
            raise DataError(f"tinytorch_data/{rel}: unexpected header {','.join(header[:3])}...")
        rows = [line.rstrip("\n").split(",") for line in fh if line.strip()]
    split = np.array([r[0] for r in rows])
    values = np.array([r[1:] for r in rows], dtype=np.int64)
    labels, pixels = values[:, 0], values[:, 1:].astype(np.uint8)
    train, test = split == "train", split == "test"
    return Split(pixels[train], labels[train], pixels[test], labels[test])


FASHION_MNIST_FILES = {
    "train": ("fashion_mnist/train-images-idx3-ubyte.gz",
              "fashion_mnist/train-labels-idx1-ubyte.gz"),
    "test": ("fashion_mnist/t10k-images-idx3-ubyte.gz",
             "fashion_mnist/t10k-labels-idx1-ubyte.gz"),
}
FASHION_MNIST_CLASSES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
                         "Sneaker", "Bag", "Ankle boot")


def load_fashion_mnist(root: Path | None = None) -> Split:
    """The shipped Fashion-MNIST subset (6000 train / 1000 test, 600 / 100 per class), verified.

    The four files under ``tinytorch_data/fashion_mnist/`` are real gzipped IDX files with the
    standard names, so ``load_mnist(DATASETS_DIR / "fashion_mnist", split)`` reads them too;
    this function adds the sha256 check of ``MANIFEST.json``. Class ``k`` is
    ``FASHION_MNIST_CLASSES[k]``.

    Returns:
        ``Split`` with ``train_x`` (6000, 28, 28) and ``test_x`` (1000, 28, 28) uint8 pixel
        values in 0..255, ``train_y`` / ``test_y`` int64 class labels in 0..9.
    """
    arrays: list[np.ndarray] = []
    for split in ("train", "test"):
        img_rel, lab_rel = FASHION_MNIST_FILES[split]
        images = read_idx(verified_path(img_rel, root))
        labels = read_idx(verified_path(lab_rel, root))
        if images.shape[1:] != (28, 28) or labels.shape != images.shape[:1]:
            raise DataError(f"tinytorch_data/{img_rel}: images {images.shape} and labels "
                            f"{labels.shape} do not match")
        arrays += [images.astype(np.uint8), labels.astype(np.int64)]
    return Split(arrays[0], arrays[1], arrays[2], arrays[3])


class TextSplit(NamedTuple):
    """A text corpus split into a training and a validation part (plain ``str``)."""

    train: str
    validation: str

    @property
    def vocabulary(self) -> str:
        """Every character of both parts once, sorted by code point (a character vocabulary)."""
        return "".join(sorted(set(self.train) | set(self.validation)))


def load_kjv_chars(root: Path | None = None, validation_fraction: float = 0.1) -> TextSplit:
    """Genesis 1:1 to Ruth 4:22 (King James Version), checksum verified, split for language models.

    The text (1,026,921 ASCII characters, 7213 verses, one a line, 62 distinct characters) is cut
    by ``tinytorch_data/kjv_chars/extract_kjv.py`` from Debian's ``bible-kjv-text``. The split is
    contiguous, as for a character language model: the validation part is the last
    ``validation_fraction`` of the text, starting at the first verse that begins at or after
    that point (so no verse is cut in two).

    Args:
        root: the datasets directory (tests pass a copy); defaults to this package's folder.
        validation_fraction: share of the text held out, strictly between 0 and 1.

    Returns:
        ``TextSplit(train, validation)``; ``train + validation`` is the whole text.

    Raises:
        DataError: missing, corrupt or non-ASCII file, in one line.
        ValueError: ``validation_fraction`` outside (0, 1).
    """
    if not 0.0 < validation_fraction < 1.0:
        raise ValueError(f"validation_fraction must be in (0, 1), not {validation_fraction!r}")
    rel = "kjv_chars/kjv.txt.gz"
    path = verified_path(rel, root)
    try:
        text = gzip.decompress(path.read_bytes()).decode("ascii")
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise DataError(f"tinytorch_data/{rel}: not a gzipped ASCII text ({exc})") from exc
    start = int(len(text) * (1.0 - validation_fraction))
    cut = text.find("\n", start) + 1
    if cut <= 0 or cut >= len(text):
        raise DataError(f"tinytorch_data/{rel}: no verse starts after {start} characters; "
                        "use a larger validation_fraction")
    return TextSplit(text[:cut], text[cut:])


class TinyGPT(NamedTuple):
    """A trained GPT as plain data: its architecture, vocabulary and parameters."""

    config: dict[str, int]
    """``vocab_size``, ``context``, ``d_model``, ``n_layers``, ``n_heads``: the arguments of
    module 13's ``GPT(vocab_size, context, d_model, n_layers, n_heads)``."""
    vocabulary: str
    """The characters of the token ids, in id order (the KJV text's, sorted)."""
    params: dict[str, np.ndarray]
    """float32 arrays named as ``GPT.named_parameters()`` names them."""


def load_tinygpt(root: Path | None = None) -> TinyGPT:
    """The capstone's TinyGPT (checksum verified): a character-level GPT of the KJV text.

    Module 13's ``GPT`` with a context of 128 characters, 64-wide, 2 blocks of 4 heads, trained
    by ``tinytorch_data/tinygpt_kjv/train_tinygpt.py`` with the course's reference on the training
    part of :func:`load_kjv_chars` (the validation part is unseen). Read with
    ``allow_pickle=False``: the file holds arrays only.

    Raises:
        DataError: a missing or corrupt file, or one that does not hold a GPT, in one line.
    """
    rel = "tinygpt_kjv/tinygpt_kjv.npz"
    path = verified_path(rel, root)
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {name: np.array(npz[name]) for name in npz.files}
        meta = json.loads(str(arrays.pop("__config__")))
        vocabulary = str(meta.pop("vocabulary"))
        config = {"vocab_size": len(vocabulary), **{k: int(meta[k]) for k in
                                                    ("context", "d_model", "n_layers",
                                                     "n_heads")}}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DataError(f"tinytorch_data/{rel}: not the TinyGPT checkpoint ({exc})") from exc
    if any(a.dtype != np.float32 for a in arrays.values()) or "tok_emb.weight" not in arrays:
        raise DataError(f"tinytorch_data/{rel}: expected float32 GPT parameters")
    return TinyGPT(config, vocabulary, arrays)


# --------------------------------------------------------------------------- generators
def separable_2d(n: int, seed: int, margin: float = 0.1,
                 offset: tuple[float, float] = (-0.3, 0.3)) -> tuple[np.ndarray, np.ndarray]:
    """``n`` points in [-1, 1]^2 labelled by a random line, none closer than ``margin`` to it.

    The line ``w . x + b = 0`` (``|w| = 1``, ``b`` uniform in ``offset``) is drawn from
    ``seed``; points are drawn uniformly and rejected inside the margin, so a linear classifier
    can reach 100%.

    Returns:
        ``x`` (n, 2) float32 and ``y`` (n,) int64 in {0, 1}, both classes present.
    """
    if n < 2:
        raise ValueError("separable_2d needs n >= 2")
    rng = np.random.default_rng(seed)
    angle = rng.uniform(0.0, 2.0 * np.pi)
    w = np.array([np.cos(angle), np.sin(angle)])
    b = rng.uniform(*offset)
    kept: list[np.ndarray] = []
    count = 0
    while count < n:
        pts = rng.uniform(-1.0, 1.0, size=(2 * n, 2))
        pts = pts[np.abs(pts @ w + b) >= margin]
        kept.append(pts)
        count += len(pts)
    x = np.concatenate(kept)[:n]
    y = (x @ w + b > 0).astype(np.int64)
    return x.astype(np.float32), y


def separable_2d_split(seed: int = 1957, n_train: int = 400, n_test: int = 400,
                       margin: float = 0.1, offset: tuple[float, float] = (-0.3, 0.3)) -> Split:
    """Train and test sets drawn from the same separable problem (the graded setting)."""
    x, y = separable_2d(n_train + n_test, seed, margin, offset)
    return Split(x[:n_train], y[:n_train], x[n_train:], y[n_train:])


def xor() -> tuple[np.ndarray, np.ndarray]:
    """The four XOR points: ``x`` (4, 2) float32 corners of the unit square, ``y`` = x1 XOR x2."""
    x = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype=np.float32)
    y = np.array([0, 1, 1, 0], dtype=np.int64)
    return x, y


def xor_noisy(n_per_corner: int, noise: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``4 * n_per_corner`` jittered copies of the XOR corners (Gaussian noise, std ``noise``).

    Labels are those of the corner each point was drawn around.
    """
    base_x, base_y = xor()
    rng = np.random.default_rng(seed)
    x = np.repeat(base_x, n_per_corner, axis=0)
    x = x + rng.normal(0.0, noise, size=x.shape)
    return x.astype(np.float32), np.repeat(base_y, n_per_corner)


def _random_sequences(n: int, length: int, vocab_size: int, seed: int) -> np.ndarray:
    """``n`` sequences of ``length`` tokens drawn uniformly from ``0 .. vocab_size - 1``."""
    for name, value, low in (("n", n, 1), ("length", length, 1), ("vocab_size", vocab_size, 2)):
        if not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, not {value!r}")
    rng = np.random.default_rng(seed)
    return rng.integers(0, vocab_size, size=(n, length), dtype=np.int64)


def sequence_reversal(n: int, length: int = 8, vocab_size: int = 10,
                      seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The reversal task: each target is its source read backwards.

    Tokens are drawn uniformly (with repetition) from ``0 .. vocab_size - 1``; the same ``seed``
    gives the same sources as :func:`sequence_sorting`. A model that reads a source and a
    separator token (e.g. ``vocab_size``) then writes the target is the transformer milestone's
    sanity task.

    Returns:
        ``source`` and ``target``, both (n, length) int64; ``target[i] == source[i][::-1]``.

    Example:
        >>> src, tgt = sequence_reversal(2, length=4, vocab_size=5, seed=1)
        >>> bool((tgt == src[:, ::-1]).all()), src.shape, src.dtype.name
        (True, (2, 4), 'int64')
    """
    source = _random_sequences(n, length, vocab_size, seed)
    return source, np.ascontiguousarray(source[:, ::-1])


def sequence_sorting(n: int, length: int = 8, vocab_size: int = 10,
                     seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The sorting task: each target is its source sorted in ascending order.

    Same sources as :func:`sequence_reversal` for the same arguments.

    Returns:
        ``source`` and ``target``, both (n, length) int64; ``target[i] == sorted(source[i])``.

    Example:
        >>> src, tgt = sequence_sorting(3, length=5, vocab_size=4, seed=2)
        >>> bool((tgt == np.sort(src, axis=1)).all()), bool((np.diff(tgt, axis=1) >= 0).all())
        (True, True)
    """
    source = _random_sequences(n, length, vocab_size, seed)
    return source, np.sort(source, axis=1)


# --------------------------------------------------------------------------- MNIST (IDX)
_IDX_DTYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def _read_maybe_gz(path: Path) -> bytes:
    raw = Path(path).read_bytes()
    if raw[:2] == b"\x1f\x8b":
        return gzip.decompress(raw)
    return raw


def read_idx(path: Path | str) -> np.ndarray:
    """Parse an IDX file (MNIST's format), gzipped or not.

    Layout: two zero bytes, a dtype byte (0x08 = uint8, ...), a byte with the number of
    dimensions, then each dimension as a big-endian uint32, then the data, big-endian,
    row-major. Image files therefore have a 16-byte header, label files an 8-byte header.

    Raises:
        DataError: bad magic, unknown dtype or a size that does not match the header.
    """
    path = Path(path)
    data = _read_maybe_gz(path)
    if len(data) < 4 or data[0] != 0 or data[1] != 0:
        raise DataError(f"{path.name}: not an IDX file (bad magic number)")
    code, ndim = data[2], data[3]
    if code not in _IDX_DTYPES:
        raise DataError(f"{path.name}: unknown IDX data type 0x{code:02x}")
    header = 4 + 4 * ndim
    if len(data) < header:
        raise DataError(f"{path.name}: truncated IDX header")
    dims = tuple(int(d) for d in np.frombuffer(data, dtype=">u4", count=ndim, offset=4))
    dtype = np.dtype(_IDX_DTYPES[code])
    expected = int(np.prod(dims, dtype=np.int64)) * dtype.itemsize
    if len(data) - header != expected:
        raise DataError(f"{path.name}: IDX header says {dims} ({expected} bytes of data) but the "
                        f"file holds {len(data) - header}")
    arr = np.frombuffer(data, dtype=dtype, offset=header).reshape(dims)
    return arr.astype(dtype.newbyteorder("="))


_MNIST_NAMES = {"train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
                "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}


def _find(root: Path, stem: str) -> Path:
    for name in (stem, stem + ".gz", stem.replace("-idx", ".idx")):
        if (root / name).is_file():
            return root / name
    raise DataError(f"{root}: no {stem} or {stem}.gz; download MNIST into this folder first")


def load_mnist(root: Path | str, split: str = "train") -> tuple[np.ndarray, np.ndarray]:
    """MNIST or Fashion-MNIST from the standard IDX file names in ``root``.

    Returns:
        ``images`` (N, 28, 28) uint8 and ``labels`` (N,) int64.
    """
    if split not in _MNIST_NAMES:
        raise ValueError(f"split must be 'train' or 'test', not {split!r}")
    root = Path(root)
    img_stem, lab_stem = _MNIST_NAMES[split]
    images = read_idx(_find(root, img_stem))
    labels = read_idx(_find(root, lab_stem))
    if images.ndim != 3 or labels.ndim != 1 or len(images) != len(labels):
        raise DataError(f"{root}: images {images.shape} and labels {labels.shape} do not match")
    return images.astype(np.uint8), labels.astype(np.int64)


# --------------------------------------------------------------------------- CIFAR-10
_CIFAR_BIN = {"train": [f"data_batch_{i}.bin" for i in range(1, 6)], "test": ["test_batch.bin"]}
_CIFAR_RECORD = 1 + 3 * 32 * 32


def read_cifar10_bin(path: Path | str) -> tuple[np.ndarray, np.ndarray]:
    """One CIFAR-10 binary batch: records of 1 label byte + 3072 pixel bytes (R, G, B planes).

    Returns:
        ``images`` (N, 3, 32, 32) uint8 and ``labels`` (N,) int64.
    """
    path = Path(path)
    raw = np.frombuffer(_read_maybe_gz(path), dtype=np.uint8)
    if raw.size == 0 or raw.size % _CIFAR_RECORD:
        raise DataError(f"{path.name}: size {raw.size} is not a multiple of {_CIFAR_RECORD} "
                        "(1 label byte + 3072 pixel bytes)")
    rec = raw.reshape(-1, _CIFAR_RECORD)
    labels = rec[:, 0].astype(np.int64)
    if labels.max() > 9:
        raise DataError(f"{path.name}: label {int(labels.max())} is not a CIFAR-10 class (0..9)")
    return rec[:, 1:].reshape(-1, 3, 32, 32).copy(), labels


def load_cifar10(root: Path | str, split: str = "train") -> tuple[np.ndarray, np.ndarray]:
    """CIFAR-10 from ``root`` holding the binary version's batches (``*.bin``).

    ``root`` may be the ``cifar-10-batches-bin`` folder itself or the folder it was extracted
    into. The python version (``cifar-10-batches-py``, pickles) is refused, never unpickled.

    Returns:
        ``images`` (N, 3, 32, 32) uint8 (channels first, as Conv2d expects) and ``labels``
        (N,) int64.
    """
    if split not in _CIFAR_BIN:
        raise ValueError(f"split must be 'train' or 'test', not {split!r}")
    root = Path(root)
    for sub in (root, root / "cifar-10-batches-bin"):
        if all((sub / f).is_file() for f in _CIFAR_BIN[split]):
            parts = [read_cifar10_bin(sub / f) for f in _CIFAR_BIN[split]]
            return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]))
    pickled = any((sub / "data_batch_1").is_file() or (sub / "test_batch").is_file()
                  for sub in (root, root / "cifar-10-batches-py"))
    raise DataError(f"{root}: no CIFAR-10 {split} batches ({_CIFAR_BIN[split][0]} ...)"
                    + ("; this is the python (pickled) version, which the course never reads: "
                       "download cifar-10-binary.tar.gz instead" if pickled else
                       "; download cifar-10-binary.tar.gz and extract it into this folder"))


# --------------------------------------------------------------------------- milestone data
def milestone_data(milestone_id: str) -> Split:
    """The data a milestone trains and is graded on (the same for the scripts and the grader).

    * ``perceptron_1957``: :func:`separable_2d_split` with seed 1957, 400 train / 400 test;
    * ``xor_1969``: the four :func:`xor` points, for training and for testing;
    * ``mlp_1986`` and ``cnn_1998``: :func:`load_digits` (1437 train / 360 test);
    * ``cnn_fashion_1998``: :func:`load_fashion_mnist` (6000 train / 1000 test).
    """
    if milestone_id == "perceptron_1957":
        return separable_2d_split(seed=1957, n_train=400, n_test=400, margin=0.1)
    if milestone_id == "xor_1969":
        x, y = xor()
        return Split(x, y, x.copy(), y.copy())
    if milestone_id in ("mlp_1986", "cnn_1998"):
        return load_digits()
    if milestone_id == "cnn_fashion_1998":
        return load_fashion_mnist()
    raise KeyError(f"no data for milestone {milestone_id!r}")


def milestone_task(milestone_id: str, seed: int) -> Split:
    """One variant of a milestone's task: the graded task differs per submission and seed.

    The grader draws ``seed`` from a salted hash of the submission and keeps it (and the test
    split) in the trusted parent; training data alone reaches the sandbox, so neither fixed
    predictions nor pre-trained weights fit an unknown variant, while a network trained from
    scratch is indifferent to it. The milestone scripts train on the same kind of variants.

    * ``perceptron_1957``: a separable problem with its own random line, 0.35-0.6 away from
      the origin (so a unit without its bias cannot fit it), 400 train / 400 test points;
    * ``xor_1969``: XOR turned by a random angle, scaled by 0.9-1.1 and shifted by up to 0.25,
      labels possibly flipped (XNOR); 8 noisy copies of each corner to train on, 25 *other*
      noisy copies of each to test on (noise 0.08 before the move), so test inputs are never
      training inputs (the reference passed 300 of 300 such variants);
    * ``mlp_1986``: the 8x8 digits with the 64 pixels and the 10 class labels each permuted at
      random (the same way for train and test; 1437 / 360 images);
    * ``cnn_1998`` / ``cnn_fashion_1998``: the 8x8 digits / the Fashion-MNIST subset turned by
      a random multiple of 90 degrees, possibly mirrored (:func:`dihedral`; a pixel permutation
      would break the images' neighbourhoods a CNN relies on), with the 10 class labels
      permuted at random (1437 / 360 and 6000 / 1000 images);
    * the 2017 transformer tasks: :func:`transformer_task`.
    """
    rng = np.random.default_rng([int(seed), 7_1957_1969_1986])
    if milestone_id == "perceptron_1957":
        return separable_2d_split(seed=int(rng.integers(2**31)), n_train=400, n_test=400,
                                  margin=0.1, offset=(0.35, 0.6))
    if milestone_id == "xor_1969":
        angle = rng.uniform(0.0, 2.0 * np.pi)
        rot = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
        scale = rng.uniform(0.9, 1.1)
        shift = rng.uniform(-0.25, 0.25, size=2)
        flip = int(rng.integers(2))

        def moved(n_per_corner: int) -> tuple[np.ndarray, np.ndarray]:
            x, y = xor_noisy(n_per_corner, 0.08, seed=int(rng.integers(2**31)))
            x = (x - 0.5) @ rot.T * scale + 0.5 + shift
            return x.astype(np.float32), (y ^ flip).astype(np.int64)

        train_x, train_y = moved(8)
        test_x, test_y = moved(25)
        return Split(train_x, train_y, test_x, test_y)
    if milestone_id == "mlp_1986":
        base = load_digits()
        pixels = rng.permutation(64)
        labels = rng.permutation(10).astype(np.int64)
        return Split(np.ascontiguousarray(base.train_x[:, pixels]), labels[base.train_y],
                     np.ascontiguousarray(base.test_x[:, pixels]), labels[base.test_y])
    if milestone_id in ("cnn_1998", "cnn_fashion_1998"):
        base = load_digits() if milestone_id == "cnn_1998" else load_fashion_mnist()
        turn, flip = int(rng.integers(4)), bool(rng.integers(2))
        labels = rng.permutation(10).astype(np.int64)
        return Split(dihedral(base.train_x, turn, flip), labels[base.train_y],
                     dihedral(base.test_x, turn, flip), labels[base.test_y])
    if milestone_id in TRANSFORMER_MILESTONES:
        return transformer_task(milestone_id, seed)
    raise KeyError(f"no task for milestone {milestone_id!r}")


def dihedral(images: np.ndarray, turn: int, flip: bool) -> np.ndarray:
    """Square images, flat ``(N, S*S)`` or ``(N, S, S)``, turned by ``turn`` quarter turns and
    then mirrored left-right if ``flip``; same shape and dtype.

    A CNN whose kernels and pooling windows are square (and whose image side is divisible by
    every pooling stride) can fit each of the 8 variants exactly as well as the original, so a
    variant changes nothing for honest training but everything for memorised answers.

    Example:
        >>> dihedral(np.arange(4).reshape(1, 4), 1, False).tolist()
        [[1, 3, 0, 2]]
    """
    x = np.asarray(images)
    side = int(round(np.sqrt(x[0].size))) if len(x) else 0
    if side * side != (x[0].size if len(x) else 0):
        raise DataError(f"dihedral: images of {x.shape[1:]} are not square")
    sq = np.rot90(x.reshape(len(x), side, side), k=turn, axes=(1, 2))
    if flip:
        sq = sq[:, :, ::-1]
    return np.ascontiguousarray(sq).reshape(x.shape)


# --------------------------------------------------------------------------- 2017 transformer
#: Sizes of the two tasks of the 2017 transformer milestone (the data side; the model and the
#: training steps are in tinytorch_milestones/recipes.py).
REVERSAL_TASK = {"length": 8, "vocab_size": 10, "n_train": 5000, "n_test": 1000}
KJV_TASK = {"context": 32, "n_test": 1000}
TRANSFORMER_MILESTONES = ("transformer_2017", "transformer_reversal_2017")


def kjv_ids(text: str, vocabulary: str) -> np.ndarray:
    """Character ids of ``text`` in ``vocabulary`` order (``CharTokenizer().train(text)``'s ids
    when the vocabulary is every character of the text, sorted), as uint8.

    Example:
        >>> kjv_ids("abba", "ab").tolist()
        [0, 1, 1, 0]
    """
    table = np.full(128, 255, dtype=np.uint8)
    table[np.frombuffer(vocabulary.encode("ascii"), dtype=np.uint8)] = np.arange(
        len(vocabulary), dtype=np.uint8)
    ids = table[np.frombuffer(text.encode("ascii"), dtype=np.uint8)]
    if ids.size and ids.max() == 255:
        raise DataError("kjv_ids: the text has characters outside the vocabulary")
    return ids


def transformer_task(milestone_id: str, seed: int) -> Split:
    """One variant of a task of the 2017 transformer milestone, drawn from ``seed``.

    The grader keeps ``test_x``/``test_y`` (and the seed that made them) in its trusted process;
    only ``train_x``/``train_y`` reach the code being graded. A variant relabels the tokens, so
    neither fixed predictions nor weights trained elsewhere fit it, while a model trained from
    scratch does not care.

    * ``transformer_reversal_2017``: ``REVERSAL_TASK["n_train"]`` training and
      ``REVERSAL_TASK["n_test"]`` *other* random sources of 8 digits (:func:`sequence_reversal`);
      the target is the source reversed, with its digits renamed by a random permutation of
      0-9: ``y = perm[x[::-1]]``. All arrays (n, 8) int64.
    * ``transformer_2017``: the KJV text (:func:`load_kjv_chars`) as character ids in sorted
      vocabulary order (62 characters), renamed by a random permutation; ``train_x`` is the
      training text's ids but the last and ``train_y`` the same ids shifted by one (the next
      character), both (N,) uint8; ``test_x`` holds ``KJV_TASK["n_test"]`` windows of 32
      characters at random places in the validation text and ``test_y`` their next characters,
      both (n_test, 32) uint8.
    """
    rng = np.random.default_rng([int(seed), 2017])
    if milestone_id == "transformer_reversal_2017":
        length, vocab = REVERSAL_TASK["length"], REVERSAL_TASK["vocab_size"]
        perm = rng.permutation(vocab).astype(np.int64)
        src, tgt = sequence_reversal(REVERSAL_TASK["n_train"] + REVERSAL_TASK["n_test"],
                                     length=length, vocab_size=vocab,
                                     seed=int(rng.integers(2**31)))
        tgt = perm[tgt]
        n = REVERSAL_TASK["n_train"]
        return Split(src[:n], tgt[:n], src[n:], tgt[n:])
    if milestone_id == "transformer_2017":
        kjv = load_kjv_chars()
        vocabulary = kjv.vocabulary
        perm = rng.permutation(len(vocabulary)).astype(np.uint8)
        train = perm[kjv_ids(kjv.train, vocabulary)]
        val = perm[kjv_ids(kjv.validation, vocabulary)]
        ctx = KJV_TASK["context"]
        starts = rng.integers(0, len(val) - ctx, size=KJV_TASK["n_test"])
        windows = val[starts[:, None] + np.arange(ctx + 1)]
        return Split(train[:-1], train[1:], np.ascontiguousarray(windows[:, :-1]),
                     np.ascontiguousarray(windows[:, 1:]))
    raise KeyError(f"no transformer task {milestone_id!r}")
