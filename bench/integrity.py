"""Benchmark of `tito integrity` at course scale (not a test: run it, read the numbers).

    python bench/integrity.py --n 800            # one module-01 class of 800 submissions

It builds a synthetic class for module 01 from the solution: every student's version of each
function is one of ``--variants`` variants (the reference with a few live statements inserted
at random places, so two students share a function's code only when they drew the same
variant), and ``--copies`` students hand in a disguised copy (renamed, reordered, padded,
commented) of another student's notebook. It then runs the whole pipeline (read the notebooks,
fingerprint, index, rank, write the report) three times and prints the median wall time, and
how the planted copies ranked: recall of the copies among the flagged pairs, precision of the
flagged pairs, and whether every copy ranks above every pair that is not a copy.
"""

from __future__ import annotations

import argparse
import ast
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tito.course import load_course  # noqa: E402
from tito.integrity import run_integrity  # noqa: E402
from tito.integrity.synthetic import disguise  # noqa: E402
from tito.release import dump_notebook  # noqa: E402
from tito.samples import notebook_with_exports, solution_export_sources  # noqa: E402

LIVE = ["{v} = len(str({n}))", "{v} = max({n}, {m})", "{v} = [{n}] + [{m}]",
        "{v} = abs(-{n})", "{v} = sorted([{m}, {n}])"]


def _function_nodes(tree: ast.Module) -> list[ast.FunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]


def _with_live_statements(fn: ast.FunctionDef, index: int) -> list[ast.stmt]:
    """The body of ``fn`` with 1-3 live statements inserted (variant 0: unchanged)."""
    body = list(fn.body)
    if index == 0:
        return body
    rng = random.Random(f"{fn.name}/{index}")
    for _ in range(rng.randint(1, 3)):
        stmt = ast.parse(rng.choice(LIVE).format(
            v=f"_t{rng.randint(0, 9)}", n=rng.randint(1, 99), m=rng.randint(1, 99))).body[0]
        body.insert(rng.randint(0, len(body) - 1), stmt)
    return body


def build_class(folder: Path, n: int, copies: int, variants: int, seed: int
                ) -> dict[str, str]:
    """Write the class's notebooks; returns {copier: the student they copied}."""
    course = load_course()
    module = course.module("01")
    trees = []
    for cell in solution_export_sources(module):
        lines = cell.splitlines()
        trees.append(ast.parse("\n".join(lines[1:] if lines[0].strip() == "#| export"
                                          else lines)))
    bodies = [[[_with_live_statements(fn, v) for v in range(variants)]
               for fn in _function_nodes(tree)] for tree in trees]
    rng = random.Random(seed)
    originals: dict[str, list[str]] = {}
    for s in range(n - copies):
        mine = []
        for tree, options in zip(trees, bodies, strict=True):
            for fn, choices in zip(_function_nodes(tree), options, strict=True):
                fn.body = choices[rng.randrange(variants)]
            mine.append("#| export\n" + ast.unparse(tree) + "\n")
        originals[f"student_{s:04d}"] = mine
    names = sorted(originals)
    planted: dict[str, str] = {}
    for c in range(copies):
        source = rng.choice(names)
        planted[f"copier_{c:03d}"] = source
        originals[f"copier_{c:03d}"] = [disguise(cell, seed + c) for cell in originals[source]]
    for name, mine in originals.items():
        (folder / f"{name}.ipynb").write_text(dump_notebook(notebook_with_exports(module, mine)),
                                              encoding="utf-8")
    return planted


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=800)
    ap.add_argument("--copies", type=int, default=20)
    ap.add_argument("--variants", type=int, default=20)
    ap.add_argument("--seed", type=int, default=2027)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="tt-integrity-bench-") as tmp:
        root = Path(tmp)
        folder = root / "class"
        folder.mkdir()
        t0 = time.perf_counter()
        planted = build_class(folder, args.n, args.copies, args.variants, args.seed)
        print(f"built {args.n} notebooks in {time.perf_counter() - t0:.1f} s")
        times = []
        for r in range(args.repeats):
            t0 = time.perf_counter()
            res = run_integrity(module="01", inputs=[folder], out=root / f"report{r}",
                                store=root / f"store{r}.sqlite", record=False)
            times.append(time.perf_counter() - t0)
        label = [d.label for d in res.docs]
        copy_pairs = {frozenset((c, s)) for c, s in planted.items()}
        ranked = [frozenset((label[p.a], label[p.b])) for p in res.pairs]
        flagged = {frozenset((label[p.a], label[p.b])) for p in res.flagged}
        found = copy_pairs & flagged
        worst_copy = max((ranked.index(p) for p in copy_pairs if p in ranked), default=-1)
        first_other = next((i for i, p in enumerate(ranked) if p not in copy_pairs), len(ranked))
        print(f"submissions={args.n} median_s={statistics.median(times):.2f} "
              f"runs={[round(t, 2) for t in times]} pairs_listed={len(res.pairs)} "
              f"flagged={len(flagged)}")
        print(f"recall={len(found) / len(copy_pairs):.3f} "
              f"precision={len(found) / max(len(flagged), 1):.3f} "
              f"copies_all_ranked_above_others={worst_copy < first_other and worst_copy >= 0}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
