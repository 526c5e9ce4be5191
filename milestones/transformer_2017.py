"""Milestone 2017 · Attention is all you need: your GPT reverses sequences and writes KJV English.

Run with your package (after exporting modules 01-13)::

    python milestones/transformer_2017.py                       # both tasks, your tinytorch
    python milestones/transformer_2017.py --task kjv --seed 0   # one task, one seed
    python milestones/transformer_2017.py --package tinytorch_ref

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
import os
import sys
from pathlib import Path
from typing import Any

# An entry point: the folder you run from and the course folder (your tinytorch, the course's
# tinytorch_data and tinytorch_milestones) come first on the path; _runner is beside this file.
sys.path[:0] = [os.getcwd(), str(Path(__file__).resolve().parents[1])]

from _runner import (  # _runner pins BLAS to one thread before NumPy loads
    REPO_ROOT,
    History,
    add_package_option,
    add_seed_options,
    cap_s,
    check_prerequisites,
    cpu_verdict,
    describe_work,
    fixed_work,
    import_package,
    milestone_config,
    np,
    save_curve,
    seed_label,
    seed_pairs,
    train_with_progress,
)

from tinytorch_data.loaders import kjv_ids, load_kjv_chars, transformer_task
from tinytorch_milestones.recipes import (
    gpt_recipe,
    greedy_reversal,
    prefix_predictions,
    task_vocab_size,
    total_steps,
    train_kjv,
    train_reversal,
)

TASKS = {"reversal": "transformer_reversal_2017", "kjv": "transformer_2017"}
PROMPT = "And God said"
SAMPLE_CHARS = 200


def parse_args(argv: list[str] | None = None
               ) -> tuple[argparse.ArgumentParser, argparse.Namespace]:
    p = argparse.ArgumentParser(description="Run the 2017 transformer milestone with your package.")
    add_package_option(p)
    p.add_argument("--task", choices=["reversal", "kjv", "both"], default="both")
    add_seed_options(p)
    p.add_argument("--plot", type=Path, default=None,
                   help="where to save the training curves (default build/milestones/<id>.png; "
                        "with both tasks, <plot>-<task>.png)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p, p.parse_args(argv)


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


def run_task(tt: Any, task: str, pairs: list[tuple[int, int]] | None, plot: Path | None,
             quiet: bool, console: Any) -> bool:
    mid = TASKS[task]
    ms = milestone_config(mid)
    pairs = pairs or [(s, s) for s in ms.seeds]
    need = min(ms.min_passing_seeds, len(pairs))
    work = fixed_work(ms)
    total = total_steps(work, 0)
    recipe = gpt_recipe(mid)
    console.print(f"[bold]{ms.year} · {ms.title}[/bold] ({mid}): {ms.metric} >= "
                  f"{ms.threshold:g} on {need} of {len(pairs)} seeds; each trains "
                  f"{describe_work(work, total)}, within {cap_s(ms):g} CPU-s")
    runs: dict[str, History] = {}
    passing = 0
    for seed, variant in pairs:
        train_x, train_y, test_x, test_y = transformer_task(mid, variant)
        trained: dict[str, Any] = {}
        label = seed_label(seed, variant)

        def run(cb: Any, step: Any, s: int = seed, tx: np.ndarray = train_x,
                ty: np.ndarray = train_y, box: dict[str, Any] = trained) -> Any:
            fit = train_reversal if task == "reversal" else train_kjv
            box["model"] = fit(tt, s, tx, ty, work, on_epoch=cb, on_step=step)
            return box["model"]

        try:
            model, hist, meter = train_with_progress(f"{task} {label}", total, quiet, run)
            if task == "reversal":
                pred = greedy_reversal(tt, model, test_x, task_vocab_size(mid, train_x,
                                                                          train_y) - 1)
            else:
                pred = prefix_predictions(tt, model, test_x)
        except Exception as exc:  # noqa: BLE001 - report the student's error, fail the seed
            console.print(f"  {label}: [red]crashed[/red]: {type(exc).__name__}: {exc}")
            continue
        runs[label] = hist
        if pred.shape != test_y.shape:
            console.print(f"  {label}: [red]predictions of shape {pred.shape}[/red]")
            continue
        same = pred == test_y
        right = same.all(axis=1) if task == "reversal" else same
        correct, n = int(right.sum()), right.size
        in_time, cpu_text = cpu_verdict(meter, total, cap_s(ms))
        ok = correct + 1e-9 >= ms.threshold * n and in_time
        passing += ok
        colour = "green" if ok else "red"
        console.print(f"  {label}: held-out {ms.metric} [{colour}]{correct / n:.4f}"
                      f"[/{colour}] ({correct}/{n}); {cpu_text}")
        if task == "kjv" and (seed, variant) == pairs[0]:
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
    console.print(f"{verdict}: {passing} of {len(pairs)} seeds reached {ms.metric} >= "
                  f"{ms.threshold:g} within the CPU cap (needed {need})")
    return passed


def main(argv: list[str] | None = None) -> int:
    from rich.console import Console

    parser, args = parse_args(argv)
    pairs = seed_pairs(parser, args, []) if args.seeds or args.variants else None
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
        results.append(run_task(tt, task, pairs, plot, args.quiet, console))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
