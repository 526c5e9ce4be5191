"""``cnn_cifar_1998``: submitted weights, scored in the trusted parent; no child, no student code.

CIFAR-10 cannot be trained inside Gradescope's limits, so students train the fixed network of
``milestones/cnn_cifar_1998.py`` on their own machines (with their own ``tinytorch`` and module
08's binary CIFAR-10 loader) and upload its weights, ``cnn_cifar_1998.npz`` (course.yml
``weights``), with module 09. The grader:

1. finds the file in the submission folder (a regular file, not a link; size capped by
   :func:`size_cap`, derived from the architecture);
2. reads every member's ``.npy`` header from the zip *before* loading any array, and refuses
   names, dtypes or shapes that are not :func:`cifar_shapes` (so a header claiming a huge
   shape never allocates), then loads with ``np.load(..., allow_pickle=False)``, so an object
   array (a pickle) is refused, and refuses NaN or infinite values;
3. runs :func:`forward` (NumPy only: convolution by im2col, batch norm in eval mode with the
   stored running statistics, max pooling, the linear layers) on the CIFAR-10 test batch that
   the grading image downloaded at build time (``setup.sh`` -> :mod:`autograder.gradescope.
   fetch_data`, checked by SHA-256 against course.yml ``test_data``), verified again against
   the digest recorded then;
4. compares the predicted classes with the test labels in this process, with
   :func:`autograder.milestones.grading.evaluate` (course.yml threshold and points).

The test batch lives outside every sandbox (the harness hides its folder), and no sandboxed
process is started for this milestone at all.
"""

from __future__ import annotations

import hashlib
import math
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

#: The architecture (``tinytorch_milestones.recipes.cifar_model`` builds the same network; a
#: test keeps the two equal): three blocks of Conv 3x3 (padding 1) -> BatchNorm2d -> ReLU ->
#: MaxPool 2, then Flatten -> Linear -> ReLU -> Linear to the 10 classes.
CONV_CHANNELS: tuple[int, ...] = (32, 64, 128)
HIDDEN = 256
CLASSES = 10
IMAGE = (3, 32, 32)
BN_EPS = 1e-5
#: Sequential indices: four layers per block (conv, bn, relu, pool), then flatten, fc, relu, fc.
FC1 = 4 * len(CONV_CHANNELS) + 1
FC2 = FC1 + 2
#: Images per forward chunk: bounds the im2col buffer (about 30 MB at the widest layer).
CHUNK = 100
#: Slack per archive member for its .npy header and zip entry (bytes).
MEMBER_SLACK = 4096
TEST_SUMS = "SHA256SUMS"


class BadWeights(ValueError):
    """The submitted weights cannot be used: the message says why (shown to the student)."""


def cifar_shapes() -> dict[str, tuple[int, ...]]:
    """Every array the ``.npz`` must hold, by ``state_dict`` name, with its shape."""
    shapes: dict[str, tuple[int, ...]] = {}
    c_in = IMAGE[0]
    for block, c_out in enumerate(CONV_CHANNELS):
        conv, bn = 4 * block, 4 * block + 1
        shapes[f"{conv}.weight"] = (c_out, c_in, 3, 3)
        shapes[f"{conv}.bias"] = (c_out,)
        for name in ("weight", "bias", "running_mean", "running_var"):
            shapes[f"{bn}.{name}"] = (c_out,)
        c_in = c_out
    side = IMAGE[1] >> len(CONV_CHANNELS)
    shapes[f"{FC1}.weight"] = (HIDDEN, c_in * side * side)
    shapes[f"{FC1}.bias"] = (HIDDEN,)
    shapes[f"{FC2}.weight"] = (CLASSES, HIDDEN)
    shapes[f"{FC2}.bias"] = (CLASSES,)
    return shapes


def size_cap(shapes: Mapping[str, tuple[int, ...]] | None = None) -> int:
    """Largest accepted file: every array in float64 plus a header and zip entry each."""
    shapes = shapes or cifar_shapes()
    return sum(8 * math.prod(s) + MEMBER_SLACK for s in shapes.values())


def find_weights(submission: Path, name: str) -> Path:
    """The submitted ``name`` in the submission folder (at its top or in one subfolder)."""
    folder = submission if submission.is_dir() else submission.parent
    found = [p for p in (folder / name, *sorted(folder.glob(f"*/{name}"))) if p.name == name
             and (p.is_file() or p.is_symlink())]
    if not found:
        raise BadWeights(f"{name} was not submitted: run `python milestones/cnn_cifar_1998.py` "
                         f"(it writes {name}), then upload it together with your notebook "
                         "(`tito submit 09` adds it to the zip)")
    if found[0].is_symlink() or not found[0].is_file():
        raise BadWeights(f"{name} is not a regular file")
    return found[0]


def _read_header(fh: Any, member: str) -> tuple[tuple[int, ...], np.dtype[Any]]:
    try:
        version = np.lib.format.read_magic(fh)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(fh)
        elif version == (2, 0):
            shape, _, dtype = np.lib.format.read_array_header_2_0(fh)
        else:
            raise BadWeights(f"{member}: .npy format version {version} is not supported")
    except BadWeights:
        raise
    except (ValueError, OSError, EOFError, SyntaxError) as exc:
        raise BadWeights(f"{member}: not a NumPy array ({exc})") from exc
    return tuple(int(n) for n in shape), dtype


def read_weights(path: Path, shapes: Mapping[str, tuple[int, ...]] | None = None
                 ) -> dict[str, np.ndarray]:
    """The arrays of ``path`` as float32, after checking names, dtypes, shapes and values.

    Raises:
        BadWeights: one line saying what is wrong (too large, not an .npz, a missing or extra
            name, a wrong dtype or shape, an object array, NaN or infinity).
    """
    shapes = dict(shapes or cifar_shapes())
    label = path.name
    size = path.stat().st_size
    cap = size_cap(shapes)
    if size > cap:
        raise BadWeights(f"{label}: {size} bytes is larger than the {cap} bytes the model's "
                         "weights can take; save only the model's state (the script does)")
    if not zipfile.is_zipfile(path):
        raise BadWeights(f"{label}: not an .npz archive (save it with numpy.savez)")
    try:
        with zipfile.ZipFile(path) as zf:
            members = zf.infolist()
            names = [m.filename.removesuffix(".npy") for m in members]
            missing = sorted(set(shapes) - set(names))
            extra = sorted(set(names) - set(shapes))
            if missing or extra or len(names) != len(set(names)):
                raise BadWeights(
                    f"{label}: the arrays do not match the network of cnn_cifar_1998"
                    + (f"; missing {', '.join(missing[:6])}" if missing else "")
                    + (f"; unexpected {', '.join(extra[:6])}" if extra else "")
                    + ("; a name repeats" if len(names) != len(set(names)) else ""))
            for m, name in zip(members, names, strict=True):
                if not m.filename.endswith(".npy"):
                    raise BadWeights(f"{label}: member {m.filename} is not an .npy array")
                want = shapes[name]
                if m.file_size > 8 * math.prod(want) + MEMBER_SLACK:
                    raise BadWeights(f"{label}: {name} holds {m.file_size} bytes, more than a "
                                     f"{want} float array")
                with zf.open(m) as fh:
                    shape, dtype = _read_header(fh, name)
                if dtype.hasobject or dtype.kind != "f" or dtype.itemsize not in (4, 8):
                    raise BadWeights(f"{label}: {name} has dtype {dtype}, expected float32")
                if shape != want:
                    raise BadWeights(f"{label}: {name} has shape {shape}, expected {want}")
    except zipfile.BadZipFile as exc:
        raise BadWeights(f"{label}: a damaged archive ({exc})") from exc
    out: dict[str, np.ndarray] = {}
    try:
        with np.load(path, allow_pickle=False) as npz:
            for name in shapes:
                arr = np.asarray(npz[name])
                if arr.shape != shapes[name] or arr.dtype.kind != "f":
                    raise BadWeights(f"{label}: {name} changed while it was read")
                if not np.all(np.isfinite(arr)):
                    raise BadWeights(f"{label}: {name} holds NaN or infinite values")
                out[name] = arr.astype(np.float32)
    except BadWeights:
        raise
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
        raise BadWeights(f"{label}: could not be read ({type(exc).__name__}: {exc})") from exc
    return out


# ----------------------------------------------------------------------------- forward pass
def _conv3x3(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(N, C, H, W) -> (N, O, H, W): a 3x3 convolution, stride 1, zero padding 1 (im2col)."""
    n, c, h, wd = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(2, 3))  # N,C,H,W,3,3
    cols = win.transpose(0, 2, 3, 1, 4, 5).reshape(n * h * wd, c * 9)
    out = cols @ w.reshape(w.shape[0], c * 9).T + b
    return np.ascontiguousarray(out.reshape(n, h, wd, -1).transpose(0, 3, 1, 2))


def _batch_norm(x: np.ndarray, p: Mapping[str, np.ndarray], i: int) -> np.ndarray:
    scale = p[f"{i}.weight"] / np.sqrt(p[f"{i}.running_var"] + BN_EPS)
    shift = p[f"{i}.bias"] - p[f"{i}.running_mean"] * scale
    return x * scale[None, :, None, None] + shift[None, :, None, None]


def _max_pool2(x: np.ndarray) -> np.ndarray:
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def forward(params: Mapping[str, np.ndarray], images: np.ndarray) -> np.ndarray:
    """Class logits (N, 10) for uint8 images (N, 3, 32, 32): pixels / 255, then the network
    in eval mode (batch norm with its running statistics), in float32."""
    x = np.asarray(images, dtype=np.float32) / np.float32(255.0)
    for block in range(len(CONV_CHANNELS)):
        conv, bn = 4 * block, 4 * block + 1
        x = _conv3x3(x, params[f"{conv}.weight"], params[f"{conv}.bias"])
        x = np.maximum(_batch_norm(x, params, bn), 0.0)
        x = _max_pool2(x)
    x = x.reshape(len(x), -1)
    x = np.maximum(x @ params[f"{FC1}.weight"].T + params[f"{FC1}.bias"], 0.0)
    return np.asarray(x @ params[f"{FC2}.weight"].T + params[f"{FC2}.bias"])


def predict(params: Mapping[str, np.ndarray], images: np.ndarray) -> np.ndarray:
    """Predicted classes (int64) for ``images``, :data:`CHUNK` images at a time."""
    parts = [forward(params, images[i:i + CHUNK]).argmax(axis=1)
             for i in range(0, len(images), CHUNK)]
    return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, np.int64)


# ----------------------------------------------------------------------------- test data
class MissingTestData(RuntimeError):
    """The grading image has no verified test batch: a course-side problem, never the
    student's."""


def test_batch_path(data_dir: Path | None, test_data: Mapping[str, Any]) -> Path:
    """The verified test file: ``data_dir/<member>``, whose SHA-256 must be the one
    ``fetch_data`` recorded in ``data_dir/SHA256SUMS`` from the checked archive."""
    if data_dir is None:
        raise MissingTestData("no test-data folder was given to the grader")
    member = str(test_data["member"])
    path = data_dir / member
    sums = data_dir / TEST_SUMS
    if not path.is_file() or not sums.is_file():
        raise MissingTestData(f"{path} is not installed (setup.sh downloads it)")
    recorded = {}
    for line in sums.read_text(encoding="ascii").splitlines():
        if line.strip():
            digest, _, rel = line.partition("  ")
            recorded[rel.strip()] = digest.strip()
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    if recorded.get(member) != h.hexdigest():
        raise MissingTestData(f"{path}: SHA-256 differs from the one recorded at setup")
    return path


def score_weights(milestone: Any, submission: Path, data_dir: Path | None
                  ) -> tuple[dict[str, Any], str | None]:
    """The verdict for one submitted-weights milestone, and a grader error (or None).

    ``milestone`` is a course.yml entry (``Milestone``, its mapping, or the harness's
    ``MilestoneInfo``). Bad weights score 0 with the reason; missing test data scores 0 and
    is reported as a grader error. The test labels are read here, in the parent, only.
    """
    from autograder.milestones.data import loaders  # noqa: PLC0415 - course files by path
    from autograder.milestones.grading import evaluate  # noqa: PLC0415

    L = loaders()
    entry = _entry(milestone)
    seeds = list(entry["seeds"])
    try:
        weights = find_weights(submission, str(entry["weights"]))
        params = read_weights(weights)
    except BadWeights as exc:
        verdict = evaluate(entry, {}, np.zeros(1, np.int64))
        verdict["message"] = f"{entry['id']} failed: {exc}."
        return verdict, None
    try:
        images, labels = L.read_cifar10_bin(test_batch_path(data_dir, entry["test_data"]))
    except (MissingTestData, L.DataError, OSError) as exc:
        verdict = evaluate(entry, {}, np.zeros(1, np.int64))
        verdict["message"] = ("This milestone could not be scored because the grader lacks the "
                              "CIFAR-10 test set (a course-side problem; staff will regrade).")
        return verdict, f"{entry['id']}: {exc}"
    pred = predict(params, images)
    verdict = evaluate(entry, dict.fromkeys(seeds, pred), labels)
    verdict["message"] = (f"{weights.name}: " + verdict["message"]
                          + f" (the course's NumPy forward pass on the {len(labels)} CIFAR-10 "
                            "test images)")
    return verdict, None


def _entry(milestone: Any) -> dict[str, Any]:
    """The course.yml mapping of ``milestone`` (from a Milestone, MilestoneInfo or dict)."""
    if isinstance(milestone, Mapping):
        d = dict(milestone)
    elif hasattr(milestone, "model_dump"):
        d = milestone.model_dump()
    else:
        d = {k: getattr(milestone, k) for k in ("id", "title", "metric", "threshold", "seeds",
                                                  "min_passing_seeds", "time_budget_s",
                                                  "points", "dataset", "weights",
                                                  "test_data")}
    d.setdefault("year", 0)
    d.setdefault("requires", [])
    d.setdefault("graded_with", 0)
    d["seeds"] = list(d["seeds"])
    d["dataset"] = d.get("dataset") or "-"
    return d
