"""Random building blocks for fuzz cases: dtypes, shapes, values, operands.

Values are chosen to be readable in a one-line reproduction (multiples of 1/64, small
integers) and to hit the edges often: zeros, ties, negative numbers, size-0 and 0-d tensors,
and now and then ``nan``, ``inf`` and huge or tiny magnitudes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .engine import Case, Input

FLOAT = ("float32", "float64")
INT = ("int64", "int32", "int16", "int8", "uint8")
# The weights of each dtype when a generator asks for "any" dtype. float16 and complex64 are
# generated on purpose, rarely: the deliberate-differences table skips exactly those cases.
DTYPE_WEIGHTS = {
    "float32": 40, "float64": 14, "int64": 12, "int32": 4, "int16": 2, "int8": 4, "uint8": 5,
    "bool": 6, "float16": 1, "complex64": 1,
}


class Gen:
    """A seeded source of case parts; ``case(...)`` assembles the result."""

    def __init__(self, module: str, entry: str, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.module, self.entry, self.seed = module, entry, seed

    # ------------------------------------------------------------------ basics
    def p(self, prob: float) -> bool:
        return bool(self.rng.random() < prob)

    def choice(self, options: Sequence[Any]) -> Any:
        return options[int(self.rng.integers(len(options)))]

    def int(self, lo: int, hi: int) -> int:
        """An int in [lo, hi] (both ends included)."""
        return int(self.rng.integers(lo, hi + 1))

    def dtype(self, kinds: str = "fiubc") -> str:
        """A dtype name of the given kinds: f float, i signed int, u uint8, b bool, c complex."""
        names = [n for n, _ in DTYPE_WEIGHTS.items() if _kind(n) in kinds]
        weights = np.array([DTYPE_WEIGHTS[n] for n in names], dtype=float)
        return names[int(self.rng.choice(len(names), p=weights / weights.sum()))]

    def shape(self, min_dims: int = 0, max_dims: int = 3, max_side: int = 4,
              zero: float = 0.03) -> tuple[int, ...]:
        nd = self.int(min_dims, max_dims)
        return tuple(0 if self.p(zero) else self.int(1, max_side) for _ in range(nd))

    def broadcast_to(self, shape: tuple[int, ...], bad: float = 0.04) -> tuple[int, ...]:
        """A shape that broadcasts against ``shape`` (or, with probability ``bad``, does not)."""
        drop = self.int(0, len(shape))
        out = [1 if self.p(0.3) else s for s in shape[drop:]]
        if self.p(0.15):
            out = [self.int(1, 3)] + out
        if out and self.p(bad):
            i = self.int(0, len(out) - 1)
            out[i] = out[i] + self.int(1, 2) if out[i] > 1 else 2 + self.int(0, 2)
        return tuple(out)

    def values(self, shape: tuple[int, ...], dtype: str, domain: str | None = None) -> np.ndarray:
        """An array of ``shape``; ``domain``: fine, coarse, special, huge, pos, prob, index:N."""
        n = int(np.prod(shape)) if shape else 1
        kind = _kind(dtype)
        if domain is None:
            domain = self.choice(("fine",) * 6 + ("coarse",) * 3 + ("special",))
        if kind == "b":
            arr = self.rng.random(n) < 0.5
        elif domain.startswith("index:"):
            arr = self.rng.integers(0, int(domain[6:]), n)
        elif kind in "iu":
            if domain == "special":
                info = np.iinfo(dtype)
                pool = np.array([0, 1, info.max, info.min, info.max // 2, 2, 3], dtype=np.int64)
                arr = self.rng.choice(pool, n)
            elif domain == "pos":
                arr = self.rng.integers(1, 6, n)
            else:
                lo = 0 if kind == "u" else -5
                arr = self.rng.integers(lo, 6, n)
        elif domain == "pos":
            arr = self.rng.integers(8, 200, n) / 64.0
        elif domain == "prob":
            arr = self.rng.integers(1, 64, n) / 64.0
        elif domain == "coarse":
            arr = self.rng.integers(-3, 4, n).astype(np.float64)
        elif domain == "special":
            pool = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-30, 100.0, -100.0,
                             0.5, 88.5, -88.5, 1000.0])
            arr = self.rng.choice(pool, n)
        elif domain == "huge":  # magnitudes where squares and cubes overflow (float32, float64)
            # (1.5e19, 1.25e154: the cube's gradient 3x² overflows where x² does not)
            pool = np.array([1e15, -1e15, 3e15, 1e19, 1.5e19, -2e19, 1e20, -1e30, 3e38, 1e103,
                             -1e155, 1.25e154, 1e200, 2.5, -1.5, 0.0])
            arr = self.rng.choice(pool, n)
        else:  # fine
            arr = self.rng.integers(-256, 257, n) / 64.0
        with np.errstate(over="ignore"):
            return np.asarray(arr).astype(dtype).reshape(shape)

    # ------------------------------------------------------------------ inputs
    def tensor(self, shape: tuple[int, ...] | None = None, dtype: str | None = None,
               grad: bool | None = None, domain: str | None = None) -> Input:
        shape = self.shape() if shape is None else shape
        dtype = self.dtype() if dtype is None else dtype
        if grad is None:
            grad = _kind(dtype) == "f" and self.p(0.6)
        return Input("tensor", self.values(shape, dtype, domain), grad)

    def array(self, shape: tuple[int, ...], dtype: str = "float32",
              domain: str | None = "fine") -> Input:
        return Input("array", self.values(shape, dtype, domain))

    def scalar(self, kinds: str = "fib") -> Input:
        """A Python number: bool, int or float."""
        kind = self.choice([k for k in "fffiib" if k in kinds])
        if kind == "b":
            return Input("scalar", self.p(0.5))
        if kind == "i":
            return Input("scalar", self.choice([0, 1, 2, 3, -1, -2, 5, 1000, 2 ** 40]))
        return Input("scalar", self.choice([0.5, 2.0, -1.5, 0.0, 1.0, 2.5, -0.25, 1e10, 1e-10,
                                            float("inf"), float("nan"), 3.0, -2.0]))

    def npscalar(self) -> Input:
        dtype = self.choice(["float64", "float32", "int64", "int32", "bool"])
        value = self.values((), dtype, self.choice(("fine", "coarse")))
        return Input("npscalar", value[()])

    def operand(self, shape: tuple[int, ...], dtype_kinds: str = "fiubc") -> Input:
        """Something to combine with a tensor of ``shape``: a tensor, 0-d tensor or scalar."""
        r = self.rng.random()
        if r < 0.55:
            return self.tensor(self.broadcast_to(shape), self.dtype(dtype_kinds))
        if r < 0.67:
            return self.tensor((), self.dtype(dtype_kinds))
        if r < 0.9:
            return self.scalar()
        return self.npscalar()

    def dim(self, ndim: int, allow_none: bool = False, allow_tuple: bool = False,
            bad: float = 0.03) -> Any:
        """A valid dim of an ``ndim``-d tensor (negative sometimes), None or a tuple."""
        r = self.rng.random()
        if allow_none and r < 0.2:
            return None
        if allow_tuple and r < 0.4:
            k = self.int(0, max(ndim, 0))
            picked = list(self.rng.permutation(ndim)[:k]) if ndim else []
            return tuple(int(d) - (ndim if self.p(0.3) else 0) for d in picked)
        if self.p(bad) or ndim == 0:
            return self.choice([0, -1, ndim, -ndim - 1]) if ndim else self.choice([0, -1, 1])
        d = self.int(0, ndim - 1)
        return d - ndim if self.p(0.3) else d

    # ------------------------------------------------------------------ assembling
    def case(self, code: str, **inputs: Input) -> Case:
        return Case(self.module, self.entry, code, tuple(inputs.items()), self.seed)


def _kind(dtype: str) -> str:
    if dtype == "bool":
        return "b"
    if dtype.startswith("uint"):
        return "u"
    if dtype.startswith("int"):
        return "i"
    if dtype.startswith("complex"):
        return "c"
    return "f"
