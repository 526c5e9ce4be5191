"""Issue 33 ("grading trust, round 3"), attacks 5 and 6: notebooks that attack `tito integrity`.

Before this round one notebook could stop the report for the whole module (a helper returning
``1+1+...+1`` with 1,500 terms killed the recursive fingerprinting with ``RecursionError``,
and the traceback named no file), and a 9 MB literal in a cell that is never exported drove
the command to 4.3 GB. Now every notebook is parsed in a capped reader process
(:mod:`autograder.harness.reader`) with iterative tree walks.

Each corpus entry adds one attacker's notebook to a class of four independent solutions and an
honest copy. The attacker's notebook is itself a copy of one of them (``loops``) with the attack
added. Every entry must leave the rest of the report exactly as it is without the attacker
(same pairs, same scores, same CSV rows). Then either the attacker's code is still compared
(its copy is flagged) or, when the file cannot be read at all, it is listed in the report with
the reason, naming the file.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import toy_course

from coursekit.course import load_course
from staff.integrity import IntegrityResult, run_integrity

COURSE = load_course()
REPO = Path(__file__).resolve().parents[2]
ATTACKER = "attacker"


def _cell(source: str) -> dict:
    return {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
            "source": source}


def copy_of_loops(*, in_export: str = "", extra_cells: tuple[str, ...] = ()) -> dict:
    """The attacker's notebook: ``loops``'s solution (plus ``in_export`` in its export cell)
    and ``extra_cells`` after it (cells that are never exported, so grading ignores them)."""
    nb = json.loads(toy_course.notebook(toy_course.solution("loops") + in_export))
    nb["cells"] += [_cell(src) for src in extra_cells]
    return nb


def deep_sum(terms: int) -> str:
    return "\n\ndef helper():\n    return " + "+".join(["1"] * terms) + "\n"


HUGE_LITERAL = "X = [" + "0," * 4_500_000 + "]\n"   # 9 MB


def _write(nb: dict) -> Callable[[Path], None]:
    return lambda path: path.write_text(json.dumps(nb), encoding="utf-8")


def _bytes(data: bytes) -> Callable[[Path], None]:
    return lambda path: path.write_bytes(data)


def _nested_metadata(path: Path) -> None:
    nb = json.loads(toy_course.notebook(toy_course.solution("loops")))
    text = json.dumps(nb)
    depth = 200_000
    path.write_text(text[:-1] + ', "x": ' + "[" * depth + "]" * depth + "}", encoding="utf-8")


def _over_size_limit(path: Path) -> None:
    nb = copy_of_loops()
    nb["cells"][1]["outputs"] = [{"output_type": "stream", "name": "stdout",
                                  "text": "x" * (21 * 1024 * 1024)}]
    path.write_text(json.dumps(nb), encoding="utf-8")


@dataclass(frozen=True)
class Hostile:
    """One attacker's notebook and what the report must do with it."""

    id: str
    write: Callable[[Path], None]
    compared: bool          # its own code is still compared (its copy of loops is flagged)
    says: str = ""          # in its notes (compared) or in the reason it was not (listed)


CORPUS = [
    # attack 5 of issue 33: the recursive walk died; now walked with an explicit stack
    Hostile("sum_of_1500_ones_in_the_export_cell", _write(copy_of_loops(in_export=deep_sum(1500))),
            compared=True),
    Hostile("sum_of_1500_ones_in_a_cell_never_exported",
            _write(copy_of_loops(extra_cells=(deep_sum(1500),))), compared=True),
    # CPython refuses this tree (RecursionError while building it): read as tokens instead
    Hostile("sum_of_20000_ones", _write(copy_of_loops(extra_cells=(deep_sum(20_000),))),
            compared=True),
    Hostile("parentheses_nested_5000_deep",
            _write(copy_of_loops(extra_cells=("x = " + "(" * 5000 + "1" + ")" * 5000,))),
            compared=True),
    # attack 6 of issue 33: the parser needs gigabytes; the cell is left out, the rest compared
    Hostile("literal_of_9_mb_in_a_cell_never_exported",
            _write(copy_of_loops(extra_cells=(HUGE_LITERAL,))), compared=True,
            says="is too large to read (a huge literal?): left out"),
    Hostile("notebook_json_nested_200000_deep", _nested_metadata, compared=False,
            says=f"{ATTACKER}.ipynb: is too deeply nested to read"),
    Hostile("not_json", _bytes(b'{"cells": [oops'), compared=False,
            says=f"{ATTACKER}.ipynb: is not valid notebook JSON"),
    Hostile("not_utf8", _bytes(b'{"cells": []}\xff\xfe'), compared=False,
            says=f"{ATTACKER}.ipynb: is not UTF-8 text"),
    Hostile("cell_source_not_text", _bytes(json.dumps(
        {"cells": [{"cell_type": "code", "source": {"x": 1}}]}).encode()), compared=False,
        says=f"{ATTACKER}.ipynb: cell 1 source is not text"),
    Hostile("over_20_mb_of_outputs", _over_size_limit, compared=False,
            says=f"{ATTACKER}.ipynb: is 21 MB, more than 20 MB"),
]


def _class(folder: Path) -> Path:
    folder.mkdir(parents=True)
    for style in toy_course.STUDENTS:
        (folder / f"{style}.ipynb").write_text(toy_course.notebook(toy_course.solution(style)))
    from staff.integrity.synthetic import disguise

    (folder / "copy.ipynb").write_text(toy_course.notebook(
        disguise(toy_course.solution("numpy_a"), 7)))
    return folder


def _run(root: Path, folder: Path, **kw) -> IntegrityResult:
    release = toy_course.write_release(root / "release")
    kw.setdefault("store", root / "gb.sqlite")
    return run_integrity(module="01", inputs=[folder], course=COURSE, out=root / "report",
                         release_root=release, **kw)


def _pairs(res: IntegrityResult) -> dict[frozenset[str], float]:
    return {frozenset((res.docs[p.a].label, res.docs[p.b].label)): round(p.score, 9)
            for p in res.pairs}


def _csv_rows(res: IntegrityResult) -> list[tuple[str, ...]]:
    with res.csv.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    return sorted((r["student_a"], r["student_b"], r["similarity"], r["flagged"]) for r in rows
                  if ATTACKER not in (r["student_a"], r["student_b"]))


@pytest.fixture(scope="module")
def honest(tmp_path_factory) -> IntegrityResult:
    root = tmp_path_factory.mktemp("honest")
    return _run(root, _class(root / "subs"))


@pytest.mark.parametrize("attack", CORPUS, ids=[a.id for a in CORPUS])
def test_a_hostile_notebook_changes_nothing_else_in_the_report(tmp_path, honest, attack):
    folder = _class(tmp_path / "subs")
    attack.write(folder / f"{ATTACKER}.ipynb")
    res = _run(tmp_path, folder)

    others = {k: v for k, v in _pairs(res).items() if ATTACKER not in k}
    assert others == _pairs(honest)
    assert _csv_rows(res) == _csv_rows(honest)
    me = next(d for d in res.docs if d.label == ATTACKER)
    html = res.html.read_text(encoding="utf-8")
    if attack.compared:
        assert not me.problem and me.prints
        assert _pairs(res).get(frozenset((ATTACKER, "loops")), 0) >= 0.9, me.notes
        assert [d.label for d in res.unreadable] == []
        if attack.says:
            assert any(attack.says in n for n in me.notes), me.notes
            assert attack.says in html
    else:
        assert me.problem.startswith(attack.says), me.problem
        assert "\n" not in me.problem and me.prints == []
        assert [d.label for d in res.unreadable] == [ATTACKER]
        assert "Inputs with notes" in html and attack.says in html
    assert res.recorded == len(res.docs) - (not attack.compared)


def test_a_hostile_notebook_kept_from_an_earlier_term_is_read_the_same_way(tmp_path):
    """Earlier terms' code comes back from the gradebook store: it is fingerprinted in the
    capped readers too, so a term recorded before this round cannot stop a later one."""
    fall = _class(tmp_path / "fall")
    _write(copy_of_loops(in_export=deep_sum(1500)))(fall / f"{ATTACKER}.ipynb")
    _run(tmp_path, fall, term="fall")
    spring = tmp_path / "spring"
    spring.mkdir()
    (spring / "loops_again.ipynb").write_text(toy_course.notebook(toy_course.solution("loops")))
    (spring / "numpy_b.ipynb").write_text(toy_course.notebook(toy_course.solution("numpy_b")))
    res = _run(tmp_path, spring, term="spring")
    pairs = _pairs(res)
    assert pairs[frozenset(("loops_again", f"fall: {ATTACKER}"))] >= 0.9
    assert not res.unreadable


MEASURE = textwrap.dedent('''
    import json, resource, sys
    from pathlib import Path
    sys.path.insert(0, sys.argv[1])
    import toy_course
    from coursekit.course import load_course
    from staff.integrity import run_integrity
    root, folder = Path(sys.argv[2]), Path(sys.argv[3])
    release = toy_course.write_release(root / "release")
    res = run_integrity(module="01", inputs=[folder], course=load_course(), out=root / "rep",
                        release_root=release, store=root / "gb.sqlite")
    print(json.dumps({
        "self_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "readers_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
        "notes": {d.label: d.notes for d in res.docs if d.notes},
        "flagged": sorted(sorted((res.docs[p.a].label, res.docs[p.b].label))
                          for p in res.flagged)}))
''')


def _measure(root: Path, folder: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", MEASURE, str(Path(__file__).parent), str(root),
                          str(folder)], capture_output=True, text=True, cwd=REPO, check=True)
    return json.loads(out.stdout)


def test_a_9_mb_literal_leaves_the_commands_memory_where_it_was(tmp_path):
    """Peak RSS of the `tito integrity` process with and without the attacker's notebook
    (each run in a fresh process, the notebook written by this one): the parse that used to
    take 4.3 GB happens in a reader capped at 512 MB, and the command's own peak moves by less
    than the notebook's size."""
    without = _measure(tmp_path / "a", _class(tmp_path / "a" / "subs"))
    folder = _class(tmp_path / "b" / "subs")
    _write(copy_of_loops(extra_cells=(HUGE_LITERAL,)))(folder / f"{ATTACKER}.ipynb")
    with_it = _measure(tmp_path / "b", folder)
    assert with_it["self_mb"] - without["self_mb"] < 32, (without, with_it)
    assert with_it["readers_mb"] <= 512 + 16, with_it
    assert [ATTACKER, "loops"] in with_it["flagged"]
    assert "left out" in with_it["notes"][ATTACKER][0]


def test_the_command_says_which_notebook_it_could_not_read(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from coursekit import paths
    from tito.cli import cli

    folder = _class(tmp_path / "subs")
    (folder / f"{ATTACKER}.ipynb").write_bytes(b'{"cells": [oops')
    monkeypatch.setattr(paths, "RELEASE", toy_course.write_release(tmp_path / "release"))
    res = CliRunner().invoke(cli, ["integrity", "01", str(folder), "-o", str(tmp_path / "out"),
                                   "--store", str(tmp_path / "gb.sqlite")])
    assert res.exit_code == 0, res.output
    said = " ".join(res.output.split())
    assert "1 submission(s) could not be read and were compared with nothing" in said
    assert f"{ATTACKER}: {ATTACKER}.ipynb: is not valid notebook JSON" in said
    assert "flagged" in said and "copy" in said
