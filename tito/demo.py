"""``make demo``: the main job end to end on the embedded defaults.

1. sync the reference and release every module that has a solution (leak scan included);
2. build the Gradescope autograder zip of every module with a hidden suite;
3. grade the bundled sample class for module 01 (full, untouched, partial, syntax error,
   infinite loop, hard exit, late) exactly as ``tito grade`` does, then one finished sample
   submission of each other tier (its first built module that grades no milestone; the
   capstone's results.json carries the Gradescope leaderboard);
4. build the gradebook from the sample term plus those results; export Canvas CSV, write the
   HTML report;
5. regrade a synthetic Gradescope export of module 01 (``tito synth-export``: correct, buggy,
   untouched, late and corrupt work, a student in two records) as a dry run, and show the diff;
6. print a table of the scores and the paths written.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from coursebuild.release import available_modules, dump_notebook, release, sync
from coursebuild.samples import STUDENTS, build_notebook, earlier_full_notebooks
from coursekit import paths
from coursekit.course import Course, Module
from tito.grading import build_autograder, grade_submission


def run_demo(course: Course, *, out_root: Path | None = None, console: Console | None = None
             ) -> dict:
    """Run the demo; returns a summary dict (paths and scores) for tests."""
    if console is None:
        console = Console()
        if console.width < 120:  # not a wide terminal (e.g. a log file): do not wrap tables
            console = Console(width=120)
    out_root = out_root or paths.BUILD / "demo"
    if out_root.exists():
        shutil.rmtree(out_root)
    out_root.mkdir(parents=True)
    summary: dict = {"paths": {}, "scores": {}}
    t0 = time.perf_counter()

    mods = available_modules(course)
    with console.status("syncing the reference and releasing modules"):
        sync(course)
        release(course, mods)
    console.print(f"[green]released[/] {len(mods)} modules: "
                  + ", ".join(m.name for m in mods) + " (leak scan clean)")
    summary["paths"]["release"] = str(paths.RELEASE)

    zips = []
    with console.status("building Gradescope autograders"):
        for m in mods:
            if (paths.SUITES / m.name / "suite.py").exists():
                zips.append(build_autograder(course=course, module=m,
                                             out_zip=out_root / "autograder" / f"{m.name}.zip"))
    console.print(f"[green]built[/] {len(zips)} autograder zips in {out_root / 'autograder'}")
    summary["paths"]["autograders"] = [str(z) for z in zips]

    module = course.module(1)
    class_dir = paths.SAMPLES / f"class_{module.name}"
    results_dir = out_root / "results" / module.name
    table = Table(title=f"Sample class · {module.name} (graded in a sandbox, as on Gradescope)")
    for col in ("student", "submission", "score", "time", "first message"):
        table.add_column(col)
    for s in STUDENTS:
        sub = class_dir / s.folder
        dest = results_dir / s.folder
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copy(sub / "submission_metadata.json", dest / "submission_metadata.json")
        with console.status(f"grading {s.folder}"):
            res = grade_submission(course=course, module=module,
                                   submission=sub / f"{module.name}.ipynb",
                                   out=dest / "results.json",
                                   metadata=sub / "submission_metadata.json")
        max_score = sum(t.get("max_score", 0) for t in res.get("tests", []))
        failing = [t for t in res.get("tests", []) if t.get("status") == "failed"]
        why = (failing[0].get("output", "") if failing else "").strip().splitlines()
        table.add_row(f"{s.sid} {s.kind}", s.note, f"{res['score']:g}/{max_score:g}",
                      f"{res.get('execution_time', 0):.1f}s", (why[0][:70] if why else ""))
        summary["scores"][s.folder] = res["score"]
    console.print(table)
    summary["paths"]["results"] = str(results_dir)
    _grade_tier_samples(course, mods, module, out_root, console, summary)

    from gradebook import api as gb

    store = out_root / "gradebook.sqlite"
    with console.status("building the gradebook"):
        gb.load_sample(store=store, course=course)
        gb.ingest([results_dir], store=store, course=course)
        built = gb.build(store=store, course=course)
        canvas = out_root / "canvas.csv"
        gb.export(fmt="canvas", output=canvas, store=store, course=course)
        report = out_root / "report.html"
        gb.report(output=report, store=store, course=course)
    summary["paths"].update(store=str(store), canvas=str(canvas), report=str(report))
    _print_gradebook(console, built)
    late = next(s for s in STUDENTS if s.kind == "late")
    console.print(f"[bold]tito gradebook explain {late.sid}[/] (the late submission):")
    console.print(gb.explain(late.sid, store=store, course=course), markup=False,
                  highlight=False)

    from staff.regrade.core import regrade, render
    from staff.synthetic import synth_export

    with console.status("regrading a synthetic Gradescope export"):
        made = synth_export(module="01", n=12, out=out_root / "regrade" / "export.zip",
                            seed=2027, course=course, duplicated=1,
                            mix={"correct": 0.5, "buggy": 0.25, "untouched": 0.1,
                                 "late": 0.1, "corrupt": 0.05})
        regraded = regrade(export=made.path, course=course, dry_run=True,
                           out=out_root / "regrade" / "out", jobs=2)
    render(regraded, console)
    summary["paths"]["regrade"] = str(out_root / "regrade" / "out")
    summary["regrade"] = regraded.summary()

    paths_table = Table(title="Written")
    paths_table.add_column("what")
    paths_table.add_column("where")
    for k, v in summary["paths"].items():
        paths_table.add_row(k, "\n".join(v) if isinstance(v, list) else v)
    console.print(paths_table)
    console.print(f"demo finished in {time.perf_counter() - t0:.0f} s")
    (out_root / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    return summary


def tier_sample_modules(course: Course, built: list[Module]) -> list[Module]:
    """Per tier (course.yml order), its first built module with a hidden suite that grades no
    milestone (fast to grade)."""
    graded = {ms.graded_with for ms in course.milestones}
    picks = []
    for tier in course.tiers:
        cands = [m for m in built if m.tier == tier.id and m.number not in graded
                 and (paths.SUITES / m.name / "suite.py").exists()]
        if cands:
            picks.append(cands[0])
    return picks


def _grade_tier_samples(course: Course, built: list[Module], done: Module, out_root: Path,
                        console: Console, summary: dict) -> None:
    """Grade the full sample submission of one module per tier (``done``'s class is graded)."""
    table = Table(title="One finished sample submission per tier (graded as on Gradescope)")
    for col in ("tier", "module", "score", "time", "leaderboard"):
        table.add_column(col)
    summary["tiers"] = {}
    for m in tier_sample_modules(course, built):
        if m.number == done.number:
            continue
        dest = out_root / "tiers" / m.name
        dest.mkdir(parents=True, exist_ok=True)
        # a finished student uploads their earlier modules too: those still open (before the
        # term, all of them) are graded on these copies, closed ones on the reference
        files = {f"{m.name}.ipynb": dump_notebook(build_notebook(m, "full")),
                 **earlier_full_notebooks(course, m)}
        for name, text in files.items():
            (dest / name).write_text(text, encoding="utf-8")
        with console.status(f"grading a finished {m.name}"):
            res = grade_submission(course=course, module=m, submission=dest,
                                   out=dest / "results.json")
        board = ", ".join(f"{e['name']} {e['value']:g}" for e in res.get("leaderboard", []))
        table.add_row(m.tier, m.name, f"{res['score']:g}/{m.points:g}",
                      f"{res.get('execution_time', 0):.1f}s", board or "-")
        summary["tiers"][m.name] = {"score": res["score"],
                                    "leaderboard": res.get("leaderboard", [])}
    console.print(table)


def _print_gradebook(console: Console, built: object) -> None:
    """A short view of the built gradebook: a few students' credit per track."""
    frame = getattr(built, "grades", None)
    if frame is None or not hasattr(frame, "head"):
        console.print("[green]gradebook built[/]")
        return
    console.print(f"[green]gradebook built[/]: {len(frame)} students")
    table = Table(title="Gradebook (first 10 students)")
    cols = [c for c in ("student", "name", "track", "percent", "letter") if c in frame.columns]
    for c in cols:
        table.add_column(str(c))
    for _, row in frame.head(10).iterrows():  # names are text, never rich markup
        table.add_row(*[Text(f"{row[c]:.1f}" if isinstance(row[c], float) else str(row[c]))
                        for c in cols])
    console.print(table)
