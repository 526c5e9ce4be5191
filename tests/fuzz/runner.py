"""Run many fuzz cases, group the differences into classes, minimise one case per class.

A *class* is ``entry | kind of difference | input signature`` (dtypes and kinds of the
inputs, e.g. ``binary_op|dtype|int64,float``): cases that differ for the same reason share one.
Case ``i`` of a run with seed ``s`` is generated from ``(s, i)`` alone, so any case can be
regenerated, and a run can be split over processes.
"""

from __future__ import annotations

import multiprocessing as mp
import time
import zlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import engine
from .catalogue import ENTRIES, Entry
from .deliberate import deliberate_for
from .gen import Gen
from .namespaces import Ours, Torch


def built_modules() -> set[str]:
    """Course modules whose reference file exists (``tinytorch_ref/<slug>.py``)."""
    from pathlib import Path

    import tinytorch_ref

    root = Path(tinytorch_ref.__file__).parent
    return {e.module for e in ENTRIES if (root / f"{e.module.split('_', 1)[1]}.py").exists()}


def select(modules: Iterable[str] | None = None) -> list[Entry]:
    """Entries of the given modules (``"01"`` or ``"01_tensor"``), default every built one."""
    built = built_modules()
    chosen = [e for e in ENTRIES if e.module in built]
    if modules:
        wanted = {m.split("_")[0].zfill(2) for m in modules}
        chosen = [e for e in chosen if e.module[:2] in wanted]
    return chosen


def case_for(entries: list[Entry], seed: int, index: int) -> Any:
    """Case ``index`` of a run: the entry is drawn by weight, then the entry generates."""
    case_seed = zlib.crc32(f"{seed}:{index}".encode())
    cumulative = np.cumsum([e.weight for e in entries])
    pick = np.random.default_rng(case_seed).random() * cumulative[-1]
    e = entries[min(int(np.searchsorted(cumulative, pick, side="right")), len(entries) - 1)]
    return e.make(Gen(e.module, e.name, case_seed))


@dataclass
class Report:
    cases: int = 0
    compared: int = 0
    skipped: Counter = field(default_factory=Counter)
    rounding: int = 0  # compared cases whose float32 values differ only as roundings
    per_entry: Counter = field(default_factory=Counter)
    classes: dict[str, tuple[int, str, str]] = field(default_factory=dict)  # key -> count, repro, detail
    seconds: float = 0.0

    def merge(self, other: Report) -> None:
        self.cases += other.cases
        self.compared += other.compared
        self.rounding += other.rounding
        self.skipped.update(other.skipped)
        self.per_entry.update(other.per_entry)
        for key, (n, repro, detail) in other.classes.items():
            if key in self.classes:
                m, r, d = self.classes[key]
                self.classes[key] = (m + n, r, d)
            else:
                self.classes[key] = (n, repro, detail)

    def lines(self) -> list[str]:
        out = []
        for key in sorted(self.classes):
            n, repro, detail = self.classes[key]
            out.append(f"{key} ({n}x): {detail}\n    {repro}")
        return out

    def summary(self) -> str:
        skipped = ", ".join(f"{k} {v}" for k, v in sorted(self.skipped.items())) or "none"
        return (f"{self.cases} cases, {self.compared} compared, skipped as deliberate "
                f"differences: {skipped}; {self.rounding} agreed within float32 rounding "
                f"of the float64 answer; {len(self.classes)} classes of difference; "
                f"{self.seconds:.1f} s")


class Fuzzer:
    def __init__(self, ours: Ours | None = None, torch_lib: Torch | None = None) -> None:
        self.ours = ours or Ours()
        self.torch = torch_lib or Torch()
        self.rounding = 0  # value differences judged float32 rounding (see differences)

    def differences(self, case: engine.Case) -> list[engine.Difference]:
        """How the two libraries differ on ``case``. Float32 values that differ only as two
        roundings of the same computation (judged against PyTorch in float64,
        :func:`engine.within_rounding`) are no difference."""
        ours, theirs = engine.run(case, self.ours), engine.run(case, self.torch)
        loose = engine.computes_in_float32(case)
        diffs = engine.compare(ours, theirs, loose=loose)
        if diffs and loose and all(d.kind.endswith("value") for d in diffs):
            wide = engine.widened(case)
            if wide is not None and engine.within_rounding(ours, theirs,
                                                           engine.run(wide, self.torch)):
                self.rounding += 1
                return []
        return diffs

    def run(self, entries: list[Entry], seed: int, start: int, stop: int,
            minimise: bool = True) -> Report:
        rep = Report()
        t0 = time.perf_counter()
        for i in range(start, stop):
            case = case_for(entries, seed, i)
            rep.cases += 1
            skip = deliberate_for(case)
            if skip:
                rep.skipped[skip] += 1
                continue
            rep.compared += 1
            rep.per_entry[case.entry] += 1
            before = self.rounding
            diffs = self.differences(case)
            rep.rounding += self.rounding - before
            if not diffs:
                continue
            d = diffs[0]
            key = f"{case.module[:2]} {case.entry}|{d.kind}|{case.signature()}"
            if key in rep.classes:
                n, r, det = rep.classes[key]
                rep.classes[key] = (n + 1, r, det)
                continue
            small = case
            detail = d.detail
            if minimise:
                small = engine.minimise(case, d.kind, self.differences)
                again = [x for x in self.differences(small) if x.kind == d.kind]
                detail = again[0].detail if again else detail
            rep.classes[key] = (1, small.repro(), detail)
        rep.seconds = time.perf_counter() - t0
        return rep


def _worker(args: tuple[list[str], int, int, int, bool]) -> Report:
    modules, seed, start, stop, minimise = args
    return Fuzzer().run(select(modules), seed, start, stop, minimise)


def fuzz(n: int, seed: int = 0, modules: list[str] | None = None, jobs: int = 1,
         minimise: bool = True, progress: Any = None, report_path: Any = None) -> Report:
    """Run ``n`` cases (in chunks, over ``jobs`` processes) and merge the reports.

    ``progress`` (e.g. ``sys.stderr``) receives one line per finished chunk; ``report_path``
    is rewritten after each chunk with every class found so far.
    """
    t0 = time.perf_counter()
    Torch()  # import torch once, before any worker is forked
    chunk = max(1, min(10000, n // max(jobs * 4, 1) or 1))
    bounds = [(s, min(n, s + chunk)) for s in range(0, n, chunk)]
    work = [(modules or [], seed, a, b, minimise) for a, b in bounds]
    rep = Report()

    def merged(part: Report) -> None:
        rep.merge(part)
        if progress is not None:
            print(f"[fuzz] {rep.cases}/{n} cases, {len(rep.classes)} classes, "
                  f"{time.perf_counter() - t0:.0f} s", file=progress, flush=True)
        if report_path is not None:
            from pathlib import Path

            Path(report_path).write_text("\n".join(rep.lines() + [rep.summary()]) + "\n",
                                         encoding="utf-8")

    if jobs <= 1:
        for args in work:
            merged(_worker(args))
    else:
        with mp.get_context("fork").Pool(jobs) as pool:
            for part in pool.imap_unordered(_worker, work):
                merged(part)
    rep.seconds = time.perf_counter() - t0
    return rep
