"""Deliberate differences from PyTorch: the fuzzer skips exactly the cases these match.

Each entry's ``id`` is a row of the table in ``docs/conformance.md`` (what, why, what the
student should expect); ``tests/parity/test_fuzz.py`` checks that the two lists agree. A
predicate sees the case *before* it runs and answers whether the documented difference
applies, so everything else is still compared.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .engine import Case


@dataclass(frozen=True)
class Deliberate:
    id: str
    applies: Callable[[Case], bool]


def _dtypes(case: Case) -> set[str]:
    out = set()
    for _, inp in case.inputs:
        if inp.kind in ("tensor", "array", "npscalar"):
            out.add(np.asarray(inp.value).dtype.name)
    return out


DELIBERATE: list[Deliberate] = [
    Deliberate("no-float16", lambda c: bool(_dtypes(c) & {"float16", "bfloat16"})),
    Deliberate("no-complex", lambda c: any(d.startswith("complex") for d in _dtypes(c))),
]


def deliberate_for(case: Case) -> str | None:
    """The id of the deliberate difference that covers ``case``, if any."""
    for d in DELIBERATE:
        if d.applies(case):
            return d.id
    return None
