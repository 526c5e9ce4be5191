"""The reference forward passes, in NumPy, for the parent's evaluation of trained parameters.

The sandbox returns only what its training produced: the model's parameters and buffers by
name (``tinytorch_milestones/recipes.py`` ``parameters``: ``named_parameters()`` then
``named_buffers()``, PyTorch layouts, a linear layer's weight is (out, in)). The trusted parent
runs them through these functions on held-out data the sandbox never saw, so an accuracy can
only come from weights the student's framework trained, and the architecture is the course's
whatever the student's ``forward`` did. Nothing here is shipped to students or imported in the
sandbox. :mod:`autograder.milestones.gpt_forward` is the 2017 GPT's.

Every function checks the names, shapes and finiteness of what it uses and raises
:class:`BadParameters` with a message for the student otherwise; names the model does not use
(a buffer of the student's own, say) are ignored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

#: BatchNorm2d's default ``eps`` (PyTorch's).
BN_EPS = 1e-5
#: Images per CNN forward pass (bounds the im2col buffers).
CHUNK = 250


class BadParameters(ValueError):
    """The returned parameters do not fit the milestone's model; the message says how."""


def as_params(params: Any, shapes: Mapping[str, tuple[int, ...]], dtype: Any = np.float64,
              model: str = "the model") -> dict[str, np.ndarray]:
    """``params[name]`` as ``dtype`` arrays of exactly ``shapes[name]``, or BadParameters."""
    if not isinstance(params, Mapping):
        raise BadParameters(f"expected a mapping of parameter names to arrays, got "
                            f"{type(params).__name__}")
    missing = [n for n in shapes if n not in params]
    if missing:
        raise BadParameters(f"{model}'s parameters {missing[:4]} are missing (got "
                            f"{[str(k) for k in list(params)[:6]]})")
    out = {}
    for name, shape in shapes.items():
        p = params[name]
        if not isinstance(p, np.ndarray) or p.dtype.kind not in "fiu":
            raise BadParameters(f"parameter {name} is not a numeric array")
        if tuple(p.shape) != tuple(shape):
            raise BadParameters(f"parameter {name} has shape {tuple(p.shape)}, {model}'s has "
                                f"{tuple(shape)}")
        a = p.astype(dtype)
        if not np.all(np.isfinite(a)):
            raise BadParameters(f"parameter {name} holds NaN or infinite values")
        out[name] = a
    return out


def _linear_shapes(prefix: str, fan_in: int, fan_out: int) -> dict[str, tuple[int, ...]]:
    return {f"{prefix}weight": (fan_out, fan_in), f"{prefix}bias": (fan_out,)}


def mlp_shapes(sizes: Sequence[int]) -> dict[str, tuple[int, ...]]:
    """Names and shapes of ``Linear(sizes[0], sizes[1])`` alone (``weight``, ``bias``) or of
    ``Sequential(Linear, activation, Linear, ...)`` (``0.weight``, ``0.bias``, ``2.weight``...)."""
    pairs = list(zip(sizes[:-1], sizes[1:], strict=True))
    if len(pairs) == 1:
        return _linear_shapes("", *pairs[0])
    shapes: dict[str, tuple[int, ...]] = {}
    for i, (fan_in, fan_out) in enumerate(pairs):
        shapes.update(_linear_shapes(f"{2 * i}.", fan_in, fan_out))
    return shapes


def mlp_logits(params: Any, x: np.ndarray, sizes: Sequence[int], hidden: str) -> np.ndarray:
    """Logits of a stack of linear layers with ``hidden`` ("relu" | "sigmoid") between them."""
    p = list(as_params(params, mlp_shapes(sizes)).values())
    h = np.asarray(x, dtype=np.float64)
    for i in range(0, len(p), 2):
        h = h @ p[i].T + p[i + 1]
        if i + 2 < len(p):
            if hidden == "relu":
                h = np.maximum(h, 0.0)
            elif hidden == "sigmoid":
                h = 1.0 / (1.0 + np.exp(-np.clip(h, -60.0, 60.0)))
            else:
                raise ValueError(f"unknown activation {hidden!r}")
    return h


def cnn_shapes(image_size: int, channels: tuple[int, int]) -> dict[str, tuple[int, ...]]:
    """Names and shapes of ``tinytorch_milestones.recipes.cnn_model``: ``Conv2d(1, c1, 3,
    padding=1) -> BatchNorm2d(c1) -> ReLU -> MaxPool2d(2) -> Conv2d(c1, c2, 3, padding=1) -> ReLU ->
    MaxPool2d(2) -> Flatten -> Linear(c2 * (S/4)^2, 10)``, BatchNorm's running statistics
    included."""
    c1, c2 = channels
    side = image_size // 4
    return {"0.weight": (c1, 1, 3, 3), "0.bias": (c1,),
            "1.weight": (c1,), "1.bias": (c1,), "1.running_mean": (c1,), "1.running_var": (c1,),
            "4.weight": (c2, c1, 3, 3), "4.bias": (c2,),
            **_linear_shapes("8.", c2 * side * side, 10)}


def _conv3x3(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cross-correlation with padding 1, stride 1: (N, C, H, W) -> (N, O, H, W)."""
    n, c, h, wd = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    cols = np.stack([xp[:, :, i:i + h, j:j + wd] for i in range(3) for j in range(3)],
                    axis=2)  # (N, C, 9, H, W)
    out = np.einsum("nckhw,ock->nohw", cols, w.reshape(w.shape[0], c, 9), optimize=True)
    return out + b[None, :, None, None]


def _maxpool2(x: np.ndarray) -> np.ndarray:
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def cnn_logits(params: Any, images: np.ndarray, channels: tuple[int, int]) -> np.ndarray:
    """Class logits (N, 10) of the recipe's CNN in evaluation mode (BatchNorm uses its running
    statistics) for images (N, 1, S, S)."""
    x = np.asarray(images, dtype=np.float64)
    if x.ndim != 4 or x.shape[1] != 1 or x.shape[2] != x.shape[3] or x.shape[2] % 4:
        raise ValueError(f"images must be (N, 1, S, S) with S divisible by 4, got {x.shape}")
    p = as_params(params, cnn_shapes(x.shape[2], channels), model="the CNN")
    if np.any(p["1.running_var"] < 0):
        raise BadParameters("parameter 1.running_var holds negative variances")
    scale = p["1.weight"] / np.sqrt(p["1.running_var"] + BN_EPS)
    shift = p["1.bias"] - p["1.running_mean"] * scale
    parts = []
    for lo in range(0, len(x), CHUNK):
        h = _conv3x3(x[lo:lo + CHUNK], p["0.weight"], p["0.bias"])
        h = _maxpool2(np.maximum(h * scale[None, :, None, None] + shift[None, :, None, None],
                                 0.0))
        h = _maxpool2(np.maximum(_conv3x3(h, p["4.weight"], p["4.bias"]), 0.0))
        parts.append(h.reshape(len(h), -1) @ p["8.weight"].T + p["8.bias"])
    return np.concatenate(parts) if parts else np.zeros((0, 10))


def classes(logits: np.ndarray) -> np.ndarray:
    """Class predictions: ``logit > 0`` for one output, the arg-max otherwise (int64)."""
    if logits.shape[1] == 1:
        return (logits[:, 0] > 0).astype(np.int64)
    return logits.argmax(axis=1).astype(np.int64)
