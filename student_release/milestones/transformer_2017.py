"""Milestone 2017 · Attention is all you need: your GPT reverses sequences and writes KJV English.

Run with your package (after exporting modules 01-13)::

    python milestones/transformer_2017.py                       # both tasks, your tinytorch
    python milestones/transformer_2017.py --task kjv --seed 0   # one task, one seed

Two tasks, graded as two milestone entries (thresholds and seeds in course.yml):

* **reversal** (``transformer_reversal_2017``): a 2-layer GPT reads 8 digits and a separator
  and writes them backwards, each digit renamed (a different renaming per seed); it passes when
  the share of held-out sequences written back exactly right reaches the threshold.
* **kjv** (``transformer_2017``): a character-level GPT reads 32 characters of the King James
  Bible (Genesis to Ruth) and predicts each next one; it passes when next-character accuracy
  on the held-out end of the text (Judges and Ruth) reaches the threshold. It then writes a
  sample with your ``GPT.generate`` and your module-10 ``CharTokenizer``.

Your model is tested the way the grader tests it: never with a token it should not see yet
(the reversal is decoded greedily from the model's own outputs; each KJV position is predicted
from its prefix alone). The grader goes one step further: your sandboxed code returns only the
trained parameters, and a reference forward pass measures them on text your code never saw.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from typing import Any

from _runner import (  # _runner pins BLAS to one thread before NumPy loads
    REPO_ROOT,
    History,
    add_package_option,
    check_prerequisites,
    import_package,
    milestone_config,
    np,
    save_curve,
    train_with_progress,
)
from recipes import (
    GPT_KJV,
    GPT_REVERSAL,
    greedy_reversal,
    prefix_predictions,
    task_vocab_size,
    train_kjv,
    train_reversal,
)

from datasets.loaders import kjv_ids, load_kjv_chars, transformer_task

TASKS = {"reversal": "transformer_reversal_2017", "kjv": "transformer_2017"}
PROMPT = "And God said"
SAMPLE_CHARS = 200


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Run the 2017 transformer milestone with your package.")
    add_package_option(p)
    p.add_argument("--task", choices=["reversal", "kjv", "both"], default="both")
    p.add_argument("--seed", type=int, action="append", dest="seeds",
                   help="seed to train (repeatable); default: the graded seeds in course.yml")
    p.add_argument("--plot", type=Path, default=None,
                   help="where to save the training curves (default build/milestones/<id>.png; "
                        "with both tasks, <plot>-<task>.png)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p.parse_args(argv)


def kjv_sample(tt: Any, model: Any, train_x: np.ndarray) -> str:
    """A sample of the trained KJV model, encoded and decoded with your CharTokenizer."""
    tokenization = importlib.import_module(f"{tt.__name__}.tokenization")
    kjv = load_kjv_chars()
    tok = tokenization.CharTokenizer().train(kjv.train + kjv.validation)
    # This seed's variant renames every character: variant id = perm[sorted-vocabulary id].
    base = kjv_ids(kjv.train[:-1], kjv.vocabulary)
    perm = np.zeros(len(kjv.vocabulary), dtype=np.int64)
    perm[base] = np.asarray(train_x, dtype=np.int64)
    inverse = np.argsort(perm)
    prompt = perm[np.asarray(tok.encode(PROMPT), dtype=np.int64)][None, :]
    model.eval()
    out = model.generate(tt.Tensor(prompt), max_new_tokens=SAMPLE_CHARS, temperature=0.8,
                         top_k=10)
    model.train()
    return str(tok.decode([int(i) for i in inverse[np.asarray(out.numpy())[0]]]))


def run_task(tt: Any, task: str, seeds: list[int] | None, plot: Path | None, quiet: bool,
             console: Any) -> bool:
    mid = TASKS[task]
    ms = milestone_config(mid)
    seeds = seeds or list(ms.seeds)
    need = min(ms.min_passing_seeds, len(seeds))
    budget = 0.6 * ms.time_budget_s / len(ms.seeds)
    recipe = GPT_REVERSAL if task == "reversal" else GPT_KJV
    reports = -(-recipe["steps"] // recipe["steps_per_report"])
    console.print(f"[bold]{ms.year} · {ms.title}[/bold] ({mid}): {ms.metric} >= "
                  f"{ms.threshold:g} on {need} of {len(seeds)} seeds, {recipe['steps']} steps "
                  f"({budget:.0f} s at most) per seed")
    runs: dict[str, History] = {}
    passing = 0
    for seed in seeds:
        train_x, train_y, test_x, test_y = transformer_task(mid, seed)
        trained: dict[str, Any] = {}

        def run(cb: Any, s: int = seed, tx: np.ndarray = train_x, ty: np.ndarray = train_y,
                ex: np.ndarray = test_x, box: dict[str, Any] = trained) -> np.ndarray:
            if task == "reversal":
                model = train_reversal(tt, s, tx, ty, budget, on_epoch=cb)
                sep = task_vocab_size(mid, tx, ty) - 1
                pred = greedy_reversal(tt, model, ex, sep)
            else:
                model = train_kjv(tt, s, tx, ty, budget, on_epoch=cb)
                pred = prefix_predictions(tt, model, ex)
            box["model"] = model
            return pred

        try:
            pred, hist, secs = train_with_progress(f"{task} seed {seed}", reports, quiet, run)
        except Exception as exc:  # noqa: BLE001 - report the student's error, fail the seed
            console.print(f"  seed {seed}: [red]crashed[/red]: {type(exc).__name__}: {exc}")
            continue
        runs[f"seed {seed}"] = hist
        if pred.shape != test_y.shape:
            console.print(f"  seed {seed}: [red]predictions of shape {pred.shape}[/red]")
            continue
        same = pred == test_y
        right = same.all(axis=1) if task == "reversal" else same
        correct, n = int(right.sum()), right.size
        ok = correct + 1e-9 >= ms.threshold * n
        passing += ok
        colour = "green" if ok else "red"
        console.print(f"  seed {seed}: held-out {ms.metric} [{colour}]{correct / n:.4f}"
                      f"[/{colour}] ({correct}/{n}) in {secs:.1f} s")
        if task == "kjv" and seed == seeds[0]:
            try:
                text = kjv_sample(tt, trained["model"], train_x)
                console.print(f"  sample (temperature 0.8, top-k 10):\n[italic]{text}[/italic]")
            except Exception as exc:  # noqa: BLE001 - the sample is a bonus; say why it failed
                console.print(f"  no sample: {type(exc).__name__}: {exc}")
    out = plot or REPO_ROOT / "build" / "milestones" / f"{mid}.png"
    if runs:
        save_curve(out, f"{ms.year} · {ms.title} ({tt.__name__})", runs, ms.threshold,
                   xlabel=f"training steps / {recipe['steps_per_report']}")
        console.print(f"  training curve saved to {out}")
    passed = passing >= need
    verdict = "[green]PASSED[/green]" if passed else "[red]FAILED[/red]"
    console.print(f"{verdict}: {passing} of {len(seeds)} seeds reached {ms.metric} >= "
                  f"{ms.threshold:g} (needed {need})")
    return passed


def main(argv: list[str] | None = None) -> int:
    from rich.console import Console

    args = parse_args(argv)
    console = Console()
    tt = import_package(args.package)
    tasks = ["reversal", "kjv"] if args.task == "both" else [args.task]
    for task in tasks:
        mid = TASKS[task]
        check_prerequisites(tt, mid, list(milestone_config(mid).requires))
    results = []
    for task in tasks:
        plot = args.plot
        if plot is not None and len(tasks) > 1:
            plot = plot.with_name(f"{plot.stem}-{task}{plot.suffix}")
        results.append(run_task(tt, task, args.seeds, plot, args.quiet, console))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
