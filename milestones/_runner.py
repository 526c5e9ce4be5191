"""Shared driver of the milestone scripts: arguments, progress bar, curve, pass/fail, exit code.

Each script names its milestone and its recipe; this file does the rest the same way for all
of them. Every seed trains on its own variant of the task
(``tinytorch_data.loaders.milestone_task``), as the grader does (which picks its own variants and seeds); the threshold, seeds, the fixed
training (epochs or steps, batch size) and the CPU cap per seed come from course.yml. Each seed
prints the held-out metric the grader computes, the steps done and the CPU seconds they took
(training only, the clock the grader's cap uses); a seed over the cap fails, as it would when
graded.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

# NOTE: BLAS reads its thread count when NumPy loads. One thread, as in the grader's sandbox
# (and fastest at these sizes): the same seeds then train the same parameters here and there.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ.setdefault("MPLBACKEND", "Agg")

import numpy as np  # noqa: E402

#: The course folder (the repository, or a student's release): the scripts put it on the path.
REPO_ROOT = Path(__file__).resolve().parent.parent


@dataclass
class History:
    """One training run's curve: per reported epoch, loss and training accuracy."""

    epochs: list[int] = field(default_factory=list)
    loss: list[float] = field(default_factory=list)
    accuracy: list[float] = field(default_factory=list)

    def add(self, epoch: int, loss: float, acc: float) -> None:
        self.epochs.append(epoch)
        self.loss.append(loss)
        self.accuracy.append(acc)


def staff() -> bool:
    """True in the course repository (tito and the reference package are there), False in
    the student release."""
    return importlib.util.find_spec("tito") is not None and (REPO_ROOT / "course.yml").is_file()


def add_package_option(p: argparse.ArgumentParser) -> None:
    """``--package``: offered to staff (to run the reference); students train their own."""
    p.add_argument("--package", default="tinytorch",
                   help="package to train with: tinytorch (yours, default) or tinytorch_ref"
                   if staff() else argparse.SUPPRESS)


def add_seed_options(p: argparse.ArgumentParser) -> None:
    """``--seed`` (repeatable) and ``--variant`` (one per ``--seed``)."""
    p.add_argument("--seed", type=int, action="append", dest="seeds",
                   help="seed to train (repeatable); default: the graded seeds in course.yml")
    p.add_argument("--variant", type=int, action="append", dest="variants",
                   help="the task variant each --seed trains on (repeatable, one per --seed; "
                        "default: the seed's own number). A graded slot's training seed and "
                        "variant reproduce its result (staff: extra_data.milestones)")


def seed_pairs(p: argparse.ArgumentParser, args: argparse.Namespace,
               default: list[int]) -> list[tuple[int, int]]:
    """``[(training seed, task variant), ...]`` from ``--seed``/``--variant``."""
    seeds = args.seeds or list(default)
    if args.variants is None:
        return [(s, s) for s in seeds]
    if not args.seeds or len(args.variants) != len(args.seeds):
        p.error("--variant: give one per --seed")
    return list(zip(seeds, args.variants, strict=True))


def parse_args(milestone_id: str, argv: list[str] | None = None
               ) -> tuple[argparse.ArgumentParser, argparse.Namespace]:
    p = argparse.ArgumentParser(description=f"Run milestone {milestone_id} with your package.")
    add_package_option(p)
    add_seed_options(p)
    p.add_argument("--plot", type=Path, default=None,
                   help=f"where to save the training curve (default build/milestones/"
                        f"{milestone_id}.png)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p, p.parse_args(argv)


def import_package(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        fix = ("Run `tito export` first, or pass --package tinytorch_ref for the staff reference"
               if staff() else "Export each module it needs first: `python export.py NN` (or "
               "`tito module export NN`)")
        raise SystemExit(f"cannot import package {name!r}: {exc}. {fix}.") from exc


#: A stub's message (``raise NotImplementedError("module 05: implement backward ...")``), also
#: when the string starts on the line after the parenthesis.
_STUB = re.compile(r"NotImplementedError\(\s*(?:#[^\n]*\n\s*)?[\"']module (\d+): implement "
                   r"([^\"'(]+?)[\s\"'(]")


def stubs_in(package: ModuleType) -> dict[int, list[str]]:
    """Module number -> the functions still stubs in ``package``'s files (what is left)."""
    found: dict[int, set[str]] = {}
    for path in sorted(Path(package.__file__ or "").parent.glob("*.py")):
        for number, name in _STUB.findall(path.read_text(encoding="utf-8")):
            found.setdefault(int(number), set()).add(name.strip())
    return {n: sorted(names) for n, names in sorted(found.items())}


def check_prerequisites(package: ModuleType, milestone_id: str, requires: list[int]) -> None:
    """Exit (status 2) naming the required modules still stubs, before any training."""
    left = {n: names for n, names in stubs_in(package).items() if n in requires}
    if not left:
        return
    need = ", ".join(f"{n:02d}" for n in sorted(requires))
    todo = "; ".join(f"module {n:02d}: {', '.join(names[:3])}"
                     + (f" and {len(names) - 3} more" if len(names) > 3 else "")
                     for n, names in left.items())
    print(f"{milestone_id} needs modules {need}; still stubs in {package.__name__} — {todo}. "
          "Finish them, export (`python export.py NN` or `tito module export NN`) and run "
          "again.", file=sys.stderr)
    raise SystemExit(2)


def cap_s(ms: Any) -> float:
    """The grader's CPU-second cap for one seed: ``time_budget_s / len(seeds)``."""
    return float(ms.time_budget_s) / len(ms.seeds)


def fixed_work(ms: Any) -> dict[str, Any]:
    """The ``work`` the grader gives the trainer: course.yml ``training`` (epochs or steps,
    batch size) and the seed's CPU cap ``cap_s``."""
    t = ms.training
    fixed = t.work() if hasattr(t, "work") else {k: v for k, v in dict(t).items()
                                                  if v is not None}
    return {**fixed, "cap_s": cap_s(ms)}


def describe_work(work: dict[str, Any], steps: int) -> str:
    """``30 epochs of batch 32 (1,350 steps)`` / ``400 full-batch steps``."""
    batch = f"batch {work['batch_size']}" if work.get("batch_size") else "full batch"
    if "epochs" in work:
        extra = (f" + {work['finetune_epochs']} of fine-tuning"
                 if work.get("finetune_epochs") else "")
        return f"{work['epochs']} epochs{extra} of {batch} ({steps:,} steps)"
    return f"{steps:,} steps of {batch}"


class Meter:
    """CPU seconds of training as the grader counts them: the trainer's ``on_step`` records
    when each step ended; the time the script itself spends after a step on the curve (the
    training accuracy of an epoch, the progress bar) is left out. ``trace`` holds (steps
    done, training CPU s) after each step."""

    def __init__(self) -> None:
        self.t0 = time.process_time()
        self.left_out = 0.0
        self.last: float | None = None
        self.steps = 0
        self.trace: list[tuple[int, float]] = []

    def on_step(self, done: int) -> None:
        now = time.process_time()
        self.steps = done
        self.last = now
        self.trace.append((done, now - self.t0 - self.left_out))

    def resume(self) -> None:
        """The script's own work since the last step ends here (it is not training)."""
        now = time.process_time()
        if self.last is not None:
            self.left_out += now - self.last
            self.last = now

    @property
    def cpu_s(self) -> float:
        return self.trace[-1][1] if self.trace else 0.0

    def steps_within(self, cap: float) -> int:
        """Steps done when ``cap`` CPU seconds of training were used up."""
        return max((done for done, cpu in self.trace if cpu <= cap), default=0)


def cpu_verdict(meter: Meter, total: int, cap: float) -> tuple[bool, str]:
    """``(within the cap, the text a seed's line ends with)``."""
    text = f"{meter.steps:,} of {total:,} steps in {meter.cpu_s:.2f} CPU-s"
    if meter.cpu_s <= cap:
        return True, text + f" (the grader allows {cap:g})"
    return False, (text + f": over the grader's {cap:g} CPU-s per seed, which would stop it "
                   f"after {meter.steps_within(cap):,} steps and fail this seed (CPU time of "
                   "this computer; profile one training step with module 14's profiler)")


def milestone_config(milestone_id: str) -> Any:
    """The milestone's entry of course.yml; in the student release (no course.yml, no tito),
    the copy ``milestones.json`` that ``tito release`` writes next to this file."""
    try:
        from tito.course import load_course
    except ImportError:
        import json
        from types import SimpleNamespace

        table = Path(__file__).resolve().parent / "milestones.json"
        for entry in json.loads(table.read_text(encoding="utf-8")):
            if entry["id"] == milestone_id:
                return SimpleNamespace(**entry)
        raise SystemExit(f"milestone {milestone_id!r} is not in {table.name}") from None
    for ms in load_course().milestones:
        if ms.id == milestone_id:
            return ms
    raise SystemExit(f"milestone {milestone_id!r} is not in course.yml")


def save_curve(path: Path, title: str, runs: dict[str, History], threshold: float,
               xlabel: str = "epoch") -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(10, 4))
    for label, h in runs.items():
        ax_loss.plot(h.epochs, h.loss, label=label)
        ax_acc.plot(h.epochs, h.accuracy, label=label)
    ax_loss.set(title="training loss", xlabel=xlabel, ylabel="loss")
    ax_acc.axhline(threshold, color="gray", linestyle="--", label=f"threshold {threshold:g}")
    ax_acc.set(title="training accuracy", xlabel=xlabel, ylabel="accuracy", ylim=(0, 1.02))
    ax_loss.legend(fontsize=8)
    ax_acc.legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def train_with_progress(label: str, total: int, quiet: bool,
                        run: Callable[[Callable[[int, float, float], None],
                                       Callable[[int], None]], Any]
                        ) -> tuple[Any, History, Meter]:
    """Call ``run(on_epoch, on_step)`` under a rich progress bar of ``total`` steps; returns
    its result (the trained model), the curve and the :class:`Meter` of its steps and CPU
    time."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    history = History()
    meter = Meter()
    with Progress(TextColumn("{task.description}"), BarColumn(),
                  TextColumn("{task.completed}/{task.total} steps"),
                  TextColumn("loss {task.fields[loss]:.4f} acc {task.fields[acc]:.3f}"),
                  TimeElapsedColumn(), disable=quiet, transient=False) as progress:
        task = progress.add_task(label, total=total, loss=float("nan"), acc=0.0)

        def on_epoch(epoch: int, loss: float, acc: float) -> None:
            history.add(epoch, loss, acc)
            progress.update(task, completed=min(meter.steps, total), loss=loss, acc=acc)
            meter.resume()

        result = run(on_epoch, meter.on_step)
    return result, history, meter


def seed_label(seed: int, variant: int) -> str:
    return f"seed {seed}" if seed == variant else f"seed {seed} on variant {variant}"


def main(milestone_id: str, train: Callable[..., Any],
         argv: list[str] | None = None,
         extra: Callable[[ModuleType, argparse.Namespace, dict[str, History]], bool]
         | None = None) -> int:
    """Run a milestone for each seed, save the curve, print the verdict; returns the exit code.

    Seed ``s`` trains with seed ``s`` on task variant ``s`` (``--variant`` picks another) for
    course.yml's fixed work and is tested on that variant's held-out split.
    ``extra(package, args, runs)`` may add curves (XOR's single layer) and returns False if
    its own check failed.
    """
    from rich.console import Console

    from tinytorch_data.loaders import milestone_task
    from tinytorch_milestones.recipes import FEATURES, predict, total_steps

    parser, args = parse_args(milestone_id, argv)
    console = Console()
    ms = milestone_config(milestone_id)
    pairs = seed_pairs(parser, args, list(ms.seeds))
    tt = import_package(args.package)
    check_prerequisites(tt, milestone_id, list(ms.requires))
    need = min(ms.min_passing_seeds, len(pairs))
    work = fixed_work(ms)
    runs: dict[str, History] = {}
    passing = 0
    for i, (seed, variant) in enumerate(pairs):
        train_x, train_y, test_x, test_y = milestone_task(milestone_id, variant)
        total = total_steps(work, len(train_y))
        if i == 0:
            console.print(f"[bold]{ms.year} · {ms.title}[/bold] ({milestone_id}) with "
                          f"[cyan]{args.package}[/cyan]: {ms.metric} >= {ms.threshold:g} on "
                          f"{need} of {len(pairs)} seeds; each trains "
                          f"{describe_work(work, total)}, within {cap_s(ms):g} CPU-s")
        label = seed_label(seed, variant)

        def run(cb: Callable[[int, float, float], None], step: Callable[[int], None],
                s: int = seed, x: np.ndarray = train_x, y: np.ndarray = train_y) -> Any:
            return train(tt, s, x, y, work, on_epoch=cb, on_step=step)

        try:
            model, hist, meter = train_with_progress(label, total, args.quiet, run)
            pred = np.asarray(predict(tt, model, FEATURES[milestone_id](test_x)))
        except Exception as exc:  # noqa: BLE001 - report the student's error, fail the seed
            console.print(f"  {label}: [red]crashed[/red]: {type(exc).__name__}: {exc}")
            continue
        runs[label] = hist
        pred = pred.reshape(-1)
        correct = int(np.count_nonzero(pred == test_y)) if pred.shape == test_y.shape else 0
        in_time, cpu_text = cpu_verdict(meter, total, cap_s(ms))
        ok = correct + 1e-9 >= ms.threshold * len(test_y) and in_time
        passing += ok
        colour = "green" if ok else "red"
        console.print(f"  {label}: test {ms.metric} [{colour}]{correct / len(test_y):.4f}"
                      f"[/{colour}] ({correct}/{len(test_y)}); {cpu_text}")
    extra_ok = extra(tt, args, runs) if extra is not None else True
    plot = args.plot or REPO_ROOT / "build" / "milestones" / f"{milestone_id}.png"
    if runs:
        save_curve(plot, f"{ms.year} · {ms.title} ({args.package})", runs, ms.threshold)
        console.print(f"  training curve saved to {plot}")
    passed = passing >= need and extra_ok
    verdict = "[green]PASSED[/green]" if passed else "[red]FAILED[/red]"
    console.print(f"{verdict}: {passing} of {len(pairs)} seeds reached {ms.metric} >= "
                  f"{ms.threshold:g} within the CPU cap (needed {need})")
    return 0 if passed else 1
