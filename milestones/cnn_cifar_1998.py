"""Milestone 1998 · LeCun's convolutional network on CIFAR-10, trained on your own machine.

CIFAR-10 (60,000 32x32 colour photos, 10 classes) is too large to train inside the
autograder, so you train here, with your own ``tinytorch`` (modules 01-09) and module 08's
binary CIFAR-10 loader, and upload the weights this script writes::

    python milestones/cnn_cifar_1998.py --download          # first run: fetch + verify CIFAR-10
    python milestones/cnn_cifar_1998.py                     # the full recipe (20 epochs)
    python milestones/cnn_cifar_1998.py --epochs 1 --limit 5000   # a quick try, not graded
    python milestones/cnn_cifar_1998.py --package tinytorch_ref   # staff: the reference

It trains the fixed network of ``recipes.cifar_model`` (three Conv-BatchNorm-ReLU-MaxPool
blocks with 32, 64 and 128 channels, then Linear(2048, 256) -> ReLU -> Linear(256, 10)) with
random crops and flips, prints the test accuracy (your model in eval mode on the 10,000 test
images), saves the curve to ``build/milestones/cnn_cifar_1998.png`` and the weights to
``build/milestones/cnn_cifar_1998.npz``; ``tito submit 09`` puts that file in your upload.
The autograder does not run your code for this milestone: it loads the ``.npz`` (names and
shapes must be the network's), runs the course's own forward pass on the test set and passes
you at course.yml's threshold. Train with the network unchanged, or the file is refused.

Data: ``--data`` (default ``$TINYTORCH_DATA``, else ``~/.cache/tinytorch``) must hold
``cifar-10-binary.tar.gz`` (the *binary* version, checked by SHA-256) or, after a first run,
``cifar-10-batches-bin/``; ``--download`` fetches the archive. Expect hours, not minutes:
NumPy convolutions on a laptop CPU; ``--epochs`` and ``--limit`` trade accuracy for time.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

# An entry point: the folder you run from and the course folder (your tinytorch, the course's
# tinytorch_data and tinytorch_milestones) come first on the path; _runner is beside this file.
sys.path[:0] = [os.getcwd(), str(Path(__file__).resolve().parents[1])]

import numpy as np
from _runner import (
    REPO_ROOT,
    History,
    check_prerequisites,
    import_package,
    milestone_config,
    save_curve,
)

from tinytorch_milestones.recipes import (
    CIFAR_CNN,
    CifarRecipe,
    cifar_state,
    cifar_train_transform,
    fit_cifar,
    predict_cifar,
)

MILESTONE = "cnn_cifar_1998"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Train the CIFAR-10 CNN and write its weights.")
    p.add_argument("--package", default="tinytorch",
                   help="package to train with: tinytorch (yours, default) or tinytorch_ref")
    p.add_argument("--data", type=Path, default=None,
                   help="CIFAR-10 folder (default $TINYTORCH_DATA or ~/.cache/tinytorch)")
    p.add_argument("--download", action="store_true",
                   help="download cifar-10-binary.tar.gz into --data first (checked by SHA-256)")
    p.add_argument("--seed", type=int, default=0, help="training seed (default 0)")
    p.add_argument("--epochs", type=int, default=CIFAR_CNN["epochs"],
                   help=f"epochs (default {CIFAR_CNN['epochs']}, the recipe)")
    p.add_argument("--limit", type=int, default=None,
                   help="train on the first N training images only (a quick try)")
    p.add_argument("--out", type=Path,
                   default=REPO_ROOT / "build" / "milestones" / f"{MILESTONE}.npz",
                   help="where to write the weights (default build/milestones/"
                        f"{MILESTONE}.npz, where `tito submit 09` looks)")
    p.add_argument("--plot", type=Path, default=None,
                   help=f"training curve (default build/milestones/{MILESTONE}.png)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    ns = p.parse_args(argv)
    if ns.epochs < 1 or (ns.limit is not None and ns.limit < 1):
        p.error("--epochs and --limit must be positive")
    return ns


def save_weights(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """Write the ``.npz`` atomically (a partial file never takes the name)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".part")
    with open(tmp, "wb") as fh:
        np.savez(fh, allow_pickle=False, **arrays)
    tmp.replace(path)


def main(argv: list[str] | None = None) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    args = parse_args(argv)
    console = Console()
    ms = milestone_config(MILESTONE)
    tt = import_package(args.package)
    check_prerequisites(tt, MILESTONE, list(ms.requires))
    datasets = tt.data.datasets
    try:
        train_set = datasets.CIFAR10(args.data, train=True,
                                     transform=cifar_train_transform(tt),
                                     download=args.download)
        test_set = datasets.CIFAR10(args.data, train=False)
    except (RuntimeError, ValueError, OSError) as exc:
        console.print(f"[red]CIFAR-10 could not be loaded[/red]: {exc}")
        return 2
    if args.limit is not None:
        train_set.data = train_set.data[:args.limit]
        train_set.targets = train_set.targets[:args.limit]
    recipe: CifarRecipe = {**CIFAR_CNN, "epochs": args.epochs}
    console.print(f"[bold]{ms.year} · {ms.title}[/bold] ({MILESTONE}) with "
                  f"[cyan]{args.package}[/cyan]: {len(train_set)} training images, "
                  f"{args.epochs} epochs; passes at {ms.metric} >= {ms.threshold:g} on the "
                  f"{len(test_set)} test images")
    history = History()
    t0 = time.perf_counter()
    steps = args.epochs * len(train_set)
    with Progress(TextColumn("{task.description}"), BarColumn(),
                  TextColumn("{task.completed}/{task.total} images"),
                  TextColumn("loss {task.fields[loss]:.4f} acc {task.fields[acc]:.3f}"),
                  TimeElapsedColumn(), disable=args.quiet) as progress:
        task = progress.add_task("training", total=steps, loss=float("nan"), acc=0.0)

        def on_epoch(epoch: int, loss: float, acc: float) -> None:
            history.add(epoch, loss, acc)
            progress.update(task, loss=loss, acc=acc)

        def on_batch(n: int) -> None:
            progress.advance(task, n)

        try:
            model = fit_cifar(tt, args.seed, train_set, recipe, on_epoch, on_batch)
        except Exception as exc:  # noqa: BLE001 - report the student's error
            console.print(f"[red]training crashed[/red]: {type(exc).__name__}: {exc}")
            return 1
    try:
        arrays = cifar_state(model)
    except ValueError as exc:
        console.print(f"[red]the weights cannot be submitted[/red]: {exc}")
        return 1
    save_weights(args.out, arrays)
    pred = predict_cifar(tt, model, test_set.data)
    labels = np.asarray(test_set.targets)
    correct = int(np.count_nonzero(pred == labels))
    ok = correct + 1e-9 >= ms.threshold * len(labels)
    colour = "green" if ok else "red"
    console.print(f"  test {ms.metric} [{colour}]{correct / len(labels):.4f}[/{colour}] "
                  f"({correct}/{len(labels)}) after {time.perf_counter() - t0:.0f} s")
    console.print(f"  weights saved to {args.out} (upload it with module 09: tito submit 09)")
    plot = args.plot or REPO_ROOT / "build" / "milestones" / f"{MILESTONE}.png"
    runs: dict[str, Any] = {f"seed {args.seed}": history}
    save_curve(plot, f"{ms.year} · {ms.title} ({args.package})", runs, ms.threshold)
    console.print(f"  training curve saved to {plot}")
    verdict = "[green]PASSED[/green]" if ok else "[red]FAILED[/red]"
    console.print(f"{verdict}: test {ms.metric} {correct / len(labels):.4f} "
                  f"(needed {ms.threshold:g}); the autograder recomputes it from the weights")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
