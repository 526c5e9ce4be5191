"""Every command of the CLI has a test of success and of one failure (issue 12).

``COMMANDS`` maps each command to a success run and a failure run, done here through click's
runner, or to the test elsewhere that already does it (commands that take minutes: the
demo, mutation testing, a release). ``test_the_table_covers_every_command`` fails when a
command is added without a row.
"""

from __future__ import annotations

import ast
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from coursekit import paths
from tito.cli import cli

TESTS = Path(__file__).resolve().parent
SAMPLE_TERM = paths.SAMPLES / "term"
FULL_01 = paths.SAMPLES / "class_01_tensor" / "s1001_full" / "01_tensor.ipynb"
#: A module course.yml declares but the repository has not built: every module 01-20 is built,
#: so the "not built yet" rows run against a copy of course.yml that declares one more.
UNBUILT = "21"
UNBUILT_COURSE = ["--course", "{tmp}/unbuilt.yml"]
UNBUILT_MODULE = """
  - number: 21
    slug: unbuilt
    title: "Unbuilt"
    tier: capstone
    points: 10
    release: "2027-05-01 09:00"
    due: "2027-05-09 23:59"
"""


def _write_unbuilt_course(tmp: Path) -> None:
    """``tmp/unbuilt.yml``: course.yml with module 21 declared after module 20."""
    text = (paths.REPO_ROOT / "course.yml").read_text(encoding="utf-8")
    head, sep, rest = text.partition("\nmilestones:")
    assert sep, "course.yml has no milestones: section after its modules"
    (tmp / "unbuilt.yml").write_text(head.rstrip("\n") + "\n" + UNBUILT_MODULE + sep + rest,
                                     encoding="utf-8")


def _walk(cmd: click.Command, prefix: tuple[str, ...] = ()) -> list[str]:
    # click's listing API, as `tito --help` uses it: some commands load on first use
    if isinstance(cmd, click.Group):
        ctx = click.Context(cmd)
        subs = [(n, cmd.get_command(ctx, n)) for n in cmd.list_commands(ctx)]
        return [name for sub_name, sub in sorted(subs, key=lambda s: s[0]) if sub is not None
                for name in _walk(sub, prefix + (sub_name,))]
    return [" ".join(prefix)]


def elsewhere(path: str, test: str) -> tuple[str, str]:
    return ("elsewhere", f"{path}::{test}")


# command -> (success, failure); a run is (args, expected exit code, text the output holds),
# with {tmp} replaced by a private folder; or elsewhere(file, test).
COMMANDS: dict[str, tuple] = {
    "course check": ((["course", "check"], 0, "built:"),
                     (["--course", "{tmp}/none.yml", "course", "check"], 2, "file not found")),
    "course modules": ((["course", "modules"], 0, "01_tensor"),
                       (["--course", "{tmp}/none.yml", "course", "modules"], 2, "not found")),
    "course syllabus": ((["course", "syllabus", "-o", "{tmp}"], 0, "syllabus-full.md"),
                        (["course", "syllabus", "--track", "x"], 2, "unknown track")),
    "module new": (elsewhere("tests/test_module_new.py",
                             "test_scaffold_writes_the_module_and_its_course_entry"),
                   (["module", "new", "3", "other_slug"], 2, "declared as 03_layers")),
    "sync": ((["sync", "--check"], 0, "in sync"),
             (["--course", "{tmp}/none.yml", "sync"], 2, "not found")),
    "release": (elsewhere("tests/test_export_release.py",
                          "test_release_is_reproducible_and_checked_in_tree_is_current"),
                ([*UNBUILT_COURSE, "release", UNBUILT], 2, "not built yet")),
    "publish": ((["publish", "--to", "{tmp}/student", "--as-of", "2027-02-01"], 0,
                 "published modules"),
                (["publish", "--to", "{tmp}/s", "--as-of", "someday"], 2, "--as-of")),
    "leak-scan": ((["leak-scan"], 0, "clean"),
                  elsewhere("tests/test_export_release.py",
                            "test_leak_scan_catches_a_solution_line")),
    "export": ((["export", "01", "--notebook", str(FULL_01), "--package", "{tmp}/pkg"], 0,
                "exported"),
               (["export", "01", "--notebook", "{tmp}/missing.ipynb", "--package", "{tmp}/p"],
                2, "file not found")),
    "autograder": (elsewhere("tests/autograder/test_gradescope.py",
                             "test_real_module_01_zip_end_to_end"),
                   ([*UNBUILT_COURSE, "autograder", UNBUILT], 2, "not built yet")),
    "grade": (elsewhere("tests/test_sample_class.py", "test_full_solution_scores_100_percent"),
              ([*UNBUILT_COURSE, "grade", UNBUILT, "{tmp}/x.ipynb", "-o", "{tmp}/r.json"], 2, "not built yet")),
    "samples": ((["samples", "01", "-o", "{tmp}"], 0, "s1001_full"),
                ([*UNBUILT_COURSE, "samples", UNBUILT], 2, "not built yet")),
    "suite-strength": (elsewhere("tests/autograder/test_mutation.py",
                                 "test_every_module_suite_kills_at_least_90_percent"),
                       ([*UNBUILT_COURSE, "suite-strength", UNBUILT], 2, "not built yet")),
    "integrity": (elsewhere("tests/integrity/test_integrity.py", "test_cli_success_and_bad_input"),
                  (["integrity", "01", "{tmp}/missing"], 2, "no such file")),
    "demo": (elsewhere("tests/test_demo.py", "test_demo_releases_builds_grades_and_reports"),
             (["--course", "{tmp}/none.yml", "demo"], 2, "not found")),
    "regrade": (elsewhere("tests/regrade/test_regrade.py",
                          "test_dry_run_exits_zero_and_prints_the_diff"),
                (["regrade", "{tmp}/none.zip", "--module", "03", "--dry-run"], 2, "none.zip")),
    "synth-export": ((["synth-export", "01", "-n", "4", "-o", "{tmp}/e.zip"], 0, "e.zip"),
                     ([*UNBUILT_COURSE, "synth-export", UNBUILT, "-o", "{tmp}/e.zip"], 2, "no hidden suite")),
    "gradebook roster": ((["gradebook", "roster", str(SAMPLE_TERM / "roster.csv"), "--store",
                           "{tmp}/gb.sqlite"], 0, "42 students"),
                         (["gradebook", "roster", "{tmp}/none.csv", "--store", "{tmp}/g.sqlite"],
                          2, "none.csv")),
}
CYCLE = elsewhere("tests/gradebook/test_gradebook_cli.py", "test_full_cycle_through_the_cli")
ONE_LINE = elsewhere("tests/gradebook/test_gradebook_cli.py",
                     "test_errors_are_one_line_with_exit_2")
NO_COURSE = ["--course", "{tmp}/none.yml", "--store", "{tmp}/g.sqlite"]
COMMANDS |= {
    "gradebook build": (CYCLE, ONE_LINE),
    "gradebook explain": (CYCLE, ONE_LINE),
    "gradebook override": (CYCLE, ONE_LINE),
    "gradebook export": (CYCLE, ONE_LINE),
    "gradebook check": (CYCLE, (["gradebook", "check", *NO_COURSE], 2, "not found")),
    "gradebook report": (CYCLE, (["gradebook", "report", "-o", "{tmp}/r.html", *NO_COURSE], 2,
                                 "not found")),
    "gradebook load-sample": (CYCLE, (["gradebook", "load-sample", *NO_COURSE], 2, "not found")),
    "gradebook ingest": (CYCLE, (["gradebook", "ingest", "{tmp}/missing", "--store",
                                  "{tmp}/g.sqlite"], 2, "missing")),
    "gradebook extensions": (CYCLE, (["gradebook", "extensions", "{tmp}/missing.csv",
                                      "--store", "{tmp}/g.sqlite"], 2, "no roster yet")),
    "gradebook manual": (CYCLE, (["gradebook", "manual", "{tmp}/missing.csv", "--store",
                                  "{tmp}/g.sqlite"], 2, "no roster yet")),
    "gradebook canvas-ids": (
        elsewhere("tests/gradebook/test_canvas.py", "test_ids_are_learned_from_a_canvas_export"),
        (["gradebook", "canvas-ids", str(SAMPLE_TERM / "roster.csv"), "-o", "{tmp}/ids.csv"], 2,
         "no column header")),
}


def test_the_table_covers_every_command():
    assert sorted(_walk(cli)) == sorted(COMMANDS)


def _tests_in(path: str) -> set[str]:
    tree = ast.parse((paths.REPO_ROOT / path).read_text(encoding="utf-8"))
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}


RUNS = [(name, kind, run) for name, pair in COMMANDS.items()
        for kind, run in zip(("success", "failure"), pair, strict=True)]


@pytest.mark.parametrize("name,kind,run", RUNS, ids=[f"{n}-{k}" for n, k, _ in RUNS])
def test_command(name, kind, run, tmp_path):
    if run[0] == "elsewhere":
        path, test = run[1].split("::")
        assert test in _tests_in(path), f"{name} {kind}: {run[1]} does not exist"
        return
    args, code, text = run
    if "{tmp}/unbuilt.yml" in args:
        _write_unbuilt_course(tmp_path)
    res = CliRunner().invoke(cli, [a.replace("{tmp}", str(tmp_path)) for a in args])
    assert res.exit_code == code, f"{name} {kind}: exit {res.exit_code}\n{res.output}"
    assert text in res.output, res.output
    if code == 2:
        lines = [ln for ln in res.output.splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith("tito: "), res.output


def test_the_gradebook_and_regrade_commands_load_on_first_use():
    """Every tito command would otherwise pay their imports (pandas: about 0.3 s of CPU)."""
    import subprocess
    import sys

    code = ("import sys\nfrom tito.cli import cli\n"
            "print(sorted(m for m in ('pandas', 'gradebook.cli', 'staff.regrade.cli') "
            "if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=paths.REPO_ROOT).stdout.strip()
    assert out == "[]", out
    res = CliRunner().invoke(cli, ["gradebook", "--help"])
    assert res.exit_code == 0 and "Per-module results" in res.output, res.output
