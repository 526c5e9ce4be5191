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

    python bench/integrity.py --alternatives     # precision/recall on independent code

The second mode measures what a class of near-identical variants cannot: whether code written
independently stays apart. For every module with alternative implementations
(``tests/fixtures/alternatives/NN_slug/``) it builds one set: the reference, each alternative,
``--buggy`` of the module's plausible bugs (``autograder/suites/NN_slug/bugs.py``: each the
reference with one plausible bug, a copy of the reference in all but a line or two) and a disguised copy (renamed, reordered, padded,
commented: :func:`staff.integrity.synthetic.disguise`) of the reference, of every alternative
and of one buggy variant. A *family* is an implementation and everything derived from it (the
reference, its buggy variants and their copies are one family); pairs inside a family are the
positives, pairs across families are independent. It prints, per module and pooled: precision
and recall of the top-k ranked pairs (k = the number of positive pairs) and of the flagged pairs,
the highest similarity of an independent pair, the lowest of a disguised copy and its original,
and whether every disguised copy ranks above every independent pair.
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

from coursebuild.release import dump_notebook  # noqa: E402
from coursebuild.samples import notebook_with_exports, solution_export_sources  # noqa: E402
from coursekit.course import load_course  # noqa: E402
from staff.integrity import run_integrity  # noqa: E402
from staff.integrity.synthetic import disguise  # noqa: E402
from tests.alternatives import build_alternative  # noqa: E402

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


ALTERNATIVES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "alternatives"


def build_alternatives_set(folder: Path, module_name: str, buggy: int, seed: int
                           ) -> dict[str, str]:
    """Write one module's set of ``.py`` submissions; returns {file stem: family}."""
    from autograder.harness.mutation import read_catalogue
    from coursekit import paths
    from coursekit.course import load_course

    module = load_course().module(module_name)
    sources: dict[str, str] = {"reference": (paths.REFERENCE / f"{module.slug}.py").read_text()}
    family = {"reference": "reference"}
    for path in sorted((ALTERNATIVES / module.name).glob("*.py")):
        sources[f"alt_{path.stem}"] = build_alternative(path)  # the whole module
        family[f"alt_{path.stem}"] = f"alt_{path.stem}"
    catalogue = read_catalogue(paths.bugs_catalogue(module.name))["BUGS"]
    rng = random.Random(f"{seed}/{module.name}")
    bugs = sorted(catalogue)
    for name in sorted(rng.sample(bugs, min(buggy, len(bugs)))):
        text = sources["reference"]
        for old, new in catalogue[name]:
            text = text.replace(old, new, 1)
        sources[f"bug_{name}"] = text
        family[f"bug_{name}"] = "reference"
    originals = [n for n in sources if not n.startswith("bug_")]
    originals += [n for n in sources if n.startswith("bug_")][:1]
    for n, name in enumerate(originals):
        sources[f"copy_of_{name}"] = disguise(sources[name], seed + n)
        family[f"copy_of_{name}"] = family[name]
    for name, text in sources.items():
        (folder / f"{name}.py").write_text(text, encoding="utf-8")
    return family


def alternatives_benchmark(buggy: int, seed: int) -> int:
    """Precision/recall on sets of independent implementations, per module and pooled."""
    from coursekit.course import load_course

    modules = [m.name for m in load_course().modules if (ALTERNATIVES / m.name).is_dir()]
    if not modules:
        print("no alternatives in tests/fixtures/alternatives/")
        return 1
    pooled = {"pos": 0, "hits_topk": 0, "flag_pos": 0, "flag_all": 0, "ok": True}
    print("module          docs pos indep  P@k   R@k  P_flag R_flag max_indep min_copy "
          "copies_above_indep")
    with tempfile.TemporaryDirectory(prefix="tt-integrity-alt-") as tmp:
        for name in modules:
            folder = Path(tmp) / name
            folder.mkdir()
            family = build_alternatives_set(folder, name, buggy, seed)
            res = run_integrity(module=name, inputs=[folder], out=Path(tmp) / f"report-{name}",
                                store=Path(tmp) / f"store-{name}.sqlite", record=False)
            label = [d.label for d in res.docs]
            score = {frozenset((label[p.a], label[p.b])): p.score for p in res.pairs}
            names = sorted(family)
            every = [frozenset((a, b)) for i, a in enumerate(names) for b in names[i + 1:]]
            positive = {p for p in every if len({family[x] for x in p}) == 1}
            ranked = sorted(every, key=lambda p: -score.get(p, 0.0))
            k = len(positive)
            hits = sum(p in positive for p in ranked[:k])
            flagged = {p for p in every if score.get(p, 0.0) >= res.settings.flag_score}
            copies = [frozenset((n, n[len("copy_of_"):])) for n in names
                      if n.startswith("copy_of_")]
            indep = [score.get(p, 0.0) for p in every if p not in positive]
            max_indep = max(indep, default=0.0)
            min_copy = min(score.get(p, 0.0) for p in copies)
            above = min_copy > max_indep
            print(f"{name:<15} {len(names):>4} {k:>3} {len(indep):>5} {hits / k:5.2f} "
                  f"{hits / k:5.2f} {len(flagged & positive) / max(len(flagged), 1):6.2f} "
                  f"{len(flagged & positive) / k:6.2f} {max_indep:9.2f} {min_copy:8.2f} "
                  f"{above}")
            pooled["pos"] += k
            pooled["hits_topk"] += hits
            pooled["flag_pos"] += len(flagged & positive)
            pooled["flag_all"] += len(flagged)
            pooled["ok"] = pooled["ok"] and above
    print(f"pooled: P@k={pooled['hits_topk'] / pooled['pos']:.3f} "
          f"R@k={pooled['hits_topk'] / pooled['pos']:.3f} "
          f"precision_flagged={pooled['flag_pos'] / max(pooled['flag_all'], 1):.3f} "
          f"recall_flagged={pooled['flag_pos'] / pooled['pos']:.3f} "
          f"copies_all_ranked_above_independent={pooled['ok']}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=800)
    ap.add_argument("--copies", type=int, default=20)
    ap.add_argument("--variants", type=int, default=20)
    ap.add_argument("--seed", type=int, default=2027)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--alternatives", action="store_true",
                    help="precision/recall on the alternative implementations instead")
    ap.add_argument("--buggy", type=int, default=4,
                    help="buggy fixtures per module in the --alternatives set")
    args = ap.parse_args()
    if args.alternatives:
        return alternatives_benchmark(args.buggy, args.seed)
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
