"""The reference forward pass, in NumPy, for the parent's evaluation of trained parameters.

The sandbox returns only the parameters its training produced; the trusted parent runs them
through these functions on held-out data the sandbox never saw. Nothing here is shipped to
students or imported in the sandbox. PyTorch layout: a linear layer's weight is (out, in).

Each function checks every shape and that all values are finite, and raises
:class:`BadParameters` with a message for the student otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


class BadParameters(ValueError):
    """The returned parameters do not fit the milestone's model; the message says how."""


def as_params(params: Any, shapes: Sequence[tuple[int, ...]]) -> list[np.ndarray]:
    """``params`` as float64 arrays of exactly ``shapes``, or BadParameters."""
    if not isinstance(params, (list, tuple)):
        raise BadParameters(f"expected a list of {len(shapes)} parameter arrays, got "
                            f"{type(params).__name__}")
    if len(params) != len(shapes):
        raise BadParameters(f"expected {len(shapes)} parameter arrays (the model's "
                            f"parameters() in order), got {len(params)}")
    out = []
    for i, (p, shape) in enumerate(zip(params, shapes, strict=True)):
        if not isinstance(p, np.ndarray) or p.dtype.kind not in "fiu":
            raise BadParameters(f"parameter {i} is not a numeric array")
        if tuple(p.shape) != tuple(shape):
            raise BadParameters(f"parameter {i} has shape {tuple(p.shape)}, the model's has "
                                f"{tuple(shape)}")
        a = p.astype(np.float64)
        if not np.all(np.isfinite(a)):
            raise BadParameters(f"parameter {i} holds NaN or infinite values")
        out.append(a)
    return out


def mlp_shapes(sizes: Sequence[int]) -> list[tuple[int, ...]]:
    """Parameter shapes of ``Linear(sizes[0], sizes[1]) -> ... -> Linear(.., sizes[-1])``."""
    shapes: list[tuple[int, ...]] = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:], strict=True):
        shapes += [(fan_out, fan_in), (fan_out,)]
    return shapes


def mlp_logits(params: Any, x: np.ndarray, sizes: Sequence[int], hidden: str) -> np.ndarray:
    """Logits of a stack of linear layers with ``hidden`` ("relu" | "sigmoid") between them."""
    ps = as_params(params, mlp_shapes(sizes))
    h = np.asarray(x, dtype=np.float64)
    for i in range(0, len(ps), 2):
        h = h @ ps[i].T + ps[i + 1]
        if i + 2 < len(ps):
            if hidden == "relu":
                h = np.maximum(h, 0.0)
            elif hidden == "sigmoid":
                h = 1.0 / (1.0 + np.exp(-np.clip(h, -60.0, 60.0)))
            else:
                raise ValueError(f"unknown activation {hidden!r}")
    return h


def classes(logits: np.ndarray) -> np.ndarray:
    """Class predictions: ``logit > 0`` for one output, the arg-max otherwise (int64)."""
    if logits.shape[1] == 1:
        return (logits[:, 0] > 0).astype(np.int64)
    return logits.argmax(axis=1).astype(np.int64)
