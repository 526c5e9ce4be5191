"""tito — your command line for the course week (student edition).

    tito module start 05         copy module 05 into work/ and say how to open it
    tito module test 05          run module 05's public checks on your notebook
    tito module export 05        copy your code into your tinytorch package
    tito milestone run xor_1969  check prerequisites, train, PASSED or FAILED
    tito status                  modules done, milestones unlocked, what is next
    tito submit 05               check, export and build the files to upload

Install it once from this folder with ``pip install -e .`` (or run ``python tito_student.py``).
Everything here works offline, with the files of this folder only.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import shutil
import subprocess
import sys
import types
import zipfile
from pathlib import Path
from zoneinfo import ZoneInfo

HERE = Path(__file__).resolve().parent
WORK = HERE / "work"
SUBMIT = HERE / "submit"
_STUB = re.compile(r"NotImplementedError\(\s*[\"']module (\d+): implement ([^\"'(]+)")
_PLACEHOLDER = "is released on"


class StudentError(Exception):
    """Something the student can fix: the message says what to do next."""


# ----------------------------------------------------------------------------- course data
def modules() -> list[dict]:
    try:
        return json.loads((HERE / "modules.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise StudentError(f"modules.json is missing or broken ({exc}); pull the course "
                           "repository again") from None


def module(ref: str) -> dict:
    mods = modules()
    for m in mods:
        if ref in (m["name"], m["slug"]) or (ref.isdigit() and int(ref) == m["number"]):
            return m
    names = ", ".join(m["name"] for m in mods) or "none yet"
    raise StudentError(f"unknown or unreleased module {ref!r}; released: {names}")


def milestones() -> list[dict]:
    path = HERE / "milestones" / "milestones.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else []


def notebook(m: dict) -> Path:
    """Your notebook of module ``m``: the copy in work/ once started, else the release's."""
    started = WORK / m["name"] / f"{m['name']}.ipynb"
    return started if started.exists() else HERE / m["name"] / f"{m['name']}.ipynb"


def _now(m: dict) -> dt.datetime:
    return dt.datetime.now(ZoneInfo(m.get("timezone", "UTC")))


def _time(m: dict, key: str) -> dt.datetime:
    return dt.datetime.strptime(m[key], "%Y-%m-%d %H:%M").replace(
        tzinfo=ZoneInfo(m.get("timezone", "UTC")))


def stubs_left(m: dict) -> list[str] | None:
    """Functions of ``m`` still unimplemented in your package (None: it is a placeholder)."""
    path = HERE / "tinytorch" / f"{m['slug']}.py"
    if not path.exists():
        return None
    text = path.read_text(encoding="utf-8")
    if _PLACEHOLDER in text and "_MESSAGE" in text:
        return None
    return sorted({name.strip() for _, name in _STUB.findall(text)})


# ----------------------------------------------------------------------------- checks
def _code_cells(path: Path) -> list[str]:
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise StudentError(f"{path.name}: not a readable notebook ({exc}); restore it from "
                           "the release folder") from None
    out = []
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code":
            src = cell.get("source", "")
            out.append("".join(src) if isinstance(src, list) else src)
    return out


def run_checks(path: Path) -> tuple[list[tuple[str, bool, str]], str | None]:
    """Run the notebook's cells top to bottom (as "Run All" does), then its public checks.

    Returns:
        ``[(check, passed, message)]`` and the error of the cell that stopped the run, if any.
    """
    import os

    os.chdir(path.parent)
    sys.path.insert(0, str(HERE))
    ns: dict = {"__name__": "__main__"}
    stopped = None
    for i, src in enumerate(_code_cells(path), 1):
        if "grader.check(" in src or "otter.Notebook(" in src or re.search(r"^\s*import otter",
                                                                           src, re.M):
            continue
        code = "\n".join("" if ln.lstrip().startswith(("%", "!")) else ln
                         for ln in src.splitlines())
        try:
            exec(compile(code, f"{path.name}, code cell {i}", "exec"), ns)  # noqa: S102
        except Exception as exc:  # noqa: BLE001 - report it as Jupyter would
            stopped = f"code cell {i} raised {type(exc).__name__}: {exc}"
            break
    shim = types.ModuleType("otter.test_files")
    shim.test_case = lambda **_kw: (lambda fn: fn)  # type: ignore[attr-defined]
    sys.modules.setdefault("otter", types.ModuleType("otter"))
    sys.modules["otter.test_files"] = shim
    results = []
    for test_file in sorted((path.parent / "tests").glob("*.py")):
        tests: dict = {}
        exec(compile(test_file.read_text(encoding="utf-8"), str(test_file), "exec"), tests)
        for name, fn in tests.items():
            if not (name.startswith("test_") and callable(fn) and name != "test_case"):
                continue
            import inspect

            params = list(inspect.signature(fn).parameters)
            missing = [p for p in params if p not in ns]
            label = f"{test_file.stem}: {name}"
            if missing:
                results.append((label, False, f"needs {', '.join(missing)}, which the notebook "
                                              "did not define (did a cell above fail?)"))
                continue
            try:
                fn(**{p: ns[p] for p in params})
            except Exception as exc:  # noqa: BLE001 - the message is the feedback
                results.append((label, False, f"{type(exc).__name__}: {exc}"))
            else:
                results.append((label, True, ""))
    return results, stopped


# ----------------------------------------------------------------------------- verbs
def cmd_start(args: argparse.Namespace) -> int:
    m = module(args.module)
    if not (HERE / m["name"]).is_dir():
        raise StudentError(f"{m['name']} is not in this folder yet (released {m['release']}); "
                           "pull the course repository")
    dest = WORK / m["name"]
    if dest.exists():
        print(f"{m['name']} is already started: {dest / (m['name'] + '.ipynb')} (your work is "
              "never overwritten)")
    else:
        shutil.copytree(HERE / m["name"], dest)
        print(f"started {m['name']}: copied the release into {dest}")
    print(f"open it with:  jupyter lab {dest.relative_to(HERE) / (m['name'] + '.ipynb')}\n"
          f"then fill in the functions that raise NotImplementedError, section by section; "
          f"`tito module test {m['number']:02d}` runs the checks from here. Due {m['due']}.")
    return 0


def cmd_test(args: argparse.Namespace) -> int:
    m = module(args.module)
    nb = notebook(m)
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "_checks", str(nb)],
                          capture_output=True, text=True, timeout=args.timeout)
    if proc.returncode not in (0, 1):
        raise StudentError(f"the checks could not run: {proc.stderr.strip()[-300:]}")
    report = json.loads(proc.stdout)
    passed = sum(ok for _, ok, _ in report["results"])
    for name, ok, message in report["results"]:
        print(f"  {'PASS' if ok else 'FAIL'}  {name}" + (f"\n        {message}" if message else ""))
    if report["stopped"]:
        print(f"  the run stopped early: {report['stopped']}")
    total = len(report["results"])
    print(f"{m['name']}: {passed} of {total} public checks pass ({nb.relative_to(HERE)})")
    return 0 if passed == total and total and not report["stopped"] else 1


def export(m: dict) -> Path:
    """Export your notebook of ``m`` into tinytorch/ and import it (raises StudentError)."""
    sys.path.insert(0, str(HERE / "tools"))
    from coursekit.export import ExportError, export_module, missing_definitions, write_module

    nb = notebook(m)
    try:
        text = export_module(nb, slug=m["slug"], number=m["number"], title=m["title"],
                             mode="student")
    except ExportError as exc:
        raise StudentError(str(exc)) from None
    problem = missing_definitions(text, m.get("names", []), notebook=nb.name,
                                  number=m["number"])
    if problem:
        raise StudentError(f"{problem}; nothing was written")
    target = write_module(text, HERE / "tinytorch", m["slug"])
    check = subprocess.run([sys.executable, "-c", f"import tinytorch.{m['slug']}"], cwd=HERE,
                           capture_output=True, text=True)
    if check.returncode != 0:
        last = (check.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise StudentError(f"wrote {target.relative_to(HERE)}, but it does not import: {last}; "
                           "the grader would give 0 points. Run the notebook top to bottom in "
                           "a fresh kernel to find the cell, fix it and export again")
    return target


def cmd_export(args: argparse.Namespace) -> int:
    m = module(args.module)
    target = export(m)
    left = stubs_left(m) or []
    print(f"exported {notebook(m).relative_to(HERE)} -> {target.relative_to(HERE)} (imports "
          "cleanly)" + (f"; still to write: {', '.join(left)}" if left else ""))
    return 0


def prerequisites(ms: dict) -> list[str]:
    """What keeps milestone ``ms`` from training with your package (empty: nothing)."""
    by_number = {m["number"]: m for m in modules()}
    problems = []
    for n in ms.get("requires", []):
        m = by_number.get(n)
        if m is None:
            problems.append(f"module {n:02d} is not released yet")
            continue
        left = stubs_left(m)
        if left is None:
            problems.append(f"{m['name']} is not exported (run `tito module export {n:02d}`)")
        elif left:
            shown = ", ".join(left[:4]) + (" ..." if len(left) > 4 else "")
            problems.append(f"{m['name']} still has stubs: {shown}")
    return problems


def cmd_milestone(args: argparse.Namespace) -> int:
    table = {ms["id"]: ms for ms in milestones()}
    if args.name not in table:
        raise StudentError(f"unknown or locked milestone {args.name!r}; unlocked: "
                           f"{', '.join(table) or 'none yet'}")
    problems = prerequisites(table[args.name])
    if problems:
        raise StudentError(f"{args.name} needs modules {', '.join(f'{n:02d}' for n in table[args.name]['requires'])}: "
                           + "; ".join(problems))
    cmd = [sys.executable, str(HERE / "milestones" / f"{args.name}.py"), *args.rest]
    return subprocess.run(cmd, cwd=HERE).returncode


def cmd_status(args: argparse.Namespace) -> int:
    mods = modules()
    print(f"{'module':<18} {'state':<42} due")
    upcoming = None
    for m in mods:
        left = stubs_left(m)
        if left is None:
            state = "not exported yet"
        elif left:
            state = f"{len(left)} function(s) to write"
        else:
            state = "done (exported, no stubs left)"
        started = "started, " if (WORK / m["name"]).exists() else ""
        days = (_time(m, "due") - _now(m)).total_seconds() / 86400
        when = f"{m['due']} ({days:.1f} days left)" if days >= 0 else f"{m['due']} (past)"
        print(f"{m['name']:<18} {started + state:<42} {when}")
        if days >= 0 and (left is None or left) and upcoming is None:
            upcoming = m
    unlocked = [ms for ms in milestones() if not prerequisites(ms)]
    print("milestones ready to run: " + (", ".join(ms["id"] for ms in unlocked) or "none yet"))
    if upcoming is not None:
        print(f"next: finish {upcoming['name']} (due {upcoming['due']}): "
              f"`tito module start {upcoming['number']:02d}` if you have not")
    return 0


def cmd_submit(args: argparse.Namespace) -> int:
    m = module(args.module)
    code = cmd_test(argparse.Namespace(module=args.module, timeout=args.timeout))
    if code != 0:
        print("warning: some public checks fail; the hidden suite will find the same problems. "
              "Submitting anyway builds the files (partial credit counts).")
    export(m)
    out = SUBMIT / m["name"]
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    files = [notebook(m)]
    # earlier modules travel with it: the grader uses them while their windows are open
    files += [notebook(e) for e in modules() if e["number"] < m["number"]
              and notebook(e).exists()]
    # trained weights of milestones scored from a file (e.g. cnn_cifar_1998.npz with 09)
    for ms in milestones():
        if ms.get("weights") and ms.get("graded_with") == m["number"]:
            weights = HERE / "build" / "milestones" / ms["weights"]
            if weights.is_file():
                files.append(weights)
            else:
                print(f"warning: {weights.relative_to(HERE)} not found: milestone {ms['id']} "
                      f"scores 0 without it (python milestones/{ms['id']}.py writes it)")
    for f in files:
        shutil.copy2(f, out / f.name)
    archive = SUBMIT / f"{m['name']}.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for f in sorted(out.iterdir()):
            zf.write(f, f.name)
    print(f"upload {archive.relative_to(HERE)} (or the {len(files)} file(s) in "
          f"{out.relative_to(HERE)}/) to the Gradescope assignment for {m['name']} before "
          f"{m['due']}")
    return 0


def _checks_worker(path: str) -> int:
    """Run the checks in this (child) process; print only the JSON report on stdout."""
    import contextlib
    import io
    import os

    os.environ.setdefault("MPLBACKEND", "Agg")
    with contextlib.redirect_stdout(io.StringIO()):
        results, stopped = run_checks(Path(path))
    print(json.dumps({"results": results, "stopped": stopped}))
    return 0 if all(ok for _, ok, _ in results) and not stopped else 1


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tito", description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n".join(__doc__.splitlines()[2:9]))
    sub = p.add_subparsers(dest="verb", required=True)
    mod = sub.add_parser("module", help="start, test or export a module")
    msub = mod.add_subparsers(dest="action", required=True)
    for name, fn, text in (("start", cmd_start, "copy the module into work/"),
                           ("test", cmd_test, "run the public checks on your notebook"),
                           ("export", cmd_export, "copy your code into tinytorch/")):
        sp = msub.add_parser(name, help=text, description=f"{text}. Example: tito module {name} 05")
        sp.add_argument("module", help="01, 1, 01_tensor or tensor")
        sp.add_argument("--timeout", type=float, default=900, help=argparse.SUPPRESS)
        sp.set_defaults(fn=fn)
    ms = sub.add_parser("milestone", help="run a milestone with your package")
    mssub = ms.add_subparsers(dest="action", required=True)
    run = mssub.add_parser("run", help="check prerequisites, train, PASSED or FAILED",
                           description="Check prerequisites, then train. Example: tito "
                                       "milestone run xor_1969 --seed 1")
    run.add_argument("name")
    run.add_argument("rest", nargs=argparse.REMAINDER, help="passed to the script (--seed, --plot)")
    run.set_defaults(fn=cmd_milestone)
    st = sub.add_parser("status", help="what is done and what is next",
                        description="Modules done, milestones unlocked, what is next. "
                                    "Example: tito status")
    st.set_defaults(fn=cmd_status)
    sm = sub.add_parser("submit", help="check, export and build the files to upload",
                        description="Run the checks, export, and build submit/NN_slug.zip "
                                    "to upload to Gradescope. Example: tito submit 05")
    sm.add_argument("module")
    sm.add_argument("--timeout", type=float, default=900, help=argparse.SUPPRESS)
    sm.set_defaults(fn=cmd_submit)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["_checks"]:
        return _checks_worker(argv[1])
    args = parser().parse_args(argv)
    try:
        return int(args.fn(args))
    except StudentError as exc:
        print(f"tito: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
