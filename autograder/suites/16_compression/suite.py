"""Hidden suite · module 16 (compression). Cases are probes; the trusted parent compares.

Each case returns plain data computed with the package under test ``tt``; the expected value
is the same case run against tinytorch_ref. Points sum to module 16's ``points`` in
course.yml (50). TODO(author): replace these cases with your module's.
"""

from __future__ import annotations

import importlib

import numpy as np

from autograder.suite import Suite, outcome

suite = Suite(module="16_compression", version="2027.1")
case = suite.case


def _module(tt):
    """The module file under test (``tt`` is the package: the student's or the reference)."""
    return importlib.import_module(f"{tt.__name__}.compression")


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


@case(points=10, hint="min maps to low, max to high, linearly; keep the dtype.")
def rescale_maps_min_and_max(tt, rng):
    m = _module(tt)
    x = tt.Tensor(_f32(rng, 4, 5))
    got = m.rescale(x, -2.0, 3.0)
    return [got.numpy(), str(got.dtype)]


@case(points=10, hint="A constant input has range 0: return low everywhere, no NaN.")
def rescale_constant_input(tt, rng):
    m = _module(tt)
    value = float(rng.uniform(-5, 5))
    got = m.rescale(tt.Tensor(np.full((3, 2), value, dtype=np.float32)), 1.0, 2.0)
    return [got.numpy(), list(got.shape)]


@case(points=10, hint="high <= low is not a range: raise ValueError.")
def rescale_refuses_an_empty_range(tt, rng):
    m = _module(tt)
    x = tt.Tensor(_f32(rng, 3))
    return [outcome(m.rescale, x, 1.0, 1.0), outcome(m.rescale, x, 2.0, 1.0)]


@case(points=10, hint="(c[w:] - c[:n + 1 - w]) / w with c the cumulative sum after a leading 0.")
def moving_average_values(tt, rng):
    m = _module(tt)
    x = tt.Tensor(_f32(rng, 17))
    return [m.moving_average(x, w).numpy() for w in (1, 3, 17)]


@case(points=10, hint="A window outside 1..n has no value: raise ValueError.")
def moving_average_refuses_bad_windows(tt, rng):
    m = _module(tt)
    x = tt.Tensor(_f32(rng, 5))
    return [outcome(m.moving_average, x, 0), outcome(m.moving_average, x, 6)]
