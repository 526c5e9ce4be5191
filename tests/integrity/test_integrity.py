"""`tito integrity`: disguised copies rank above independent work; provided code never counts."""

from __future__ import annotations

import csv
import stat
import subprocess
from itertools import combinations
from pathlib import Path

import pytest
import toy_course
from click.testing import CliRunner

from coursebuild.samples import notebook_with_exports, solution_export_sources
from coursekit import paths
from coursekit.course import load_course
from staff.integrity import IntegrityError, run_integrity
from staff.integrity.corpus import attach_prints, provided_document, read_folder
from staff.integrity.fingerprint import fingerprints, normalise
from staff.integrity.match import Settings, compare
from staff.integrity.synthetic import DISGUISES, disguise
from tito.cli import cli

COURSE = load_course()
S = Settings()


def _prints(source: str) -> set[int]:
    return {p.hash for p in fingerprints(normalise(source), k=S.k, w=S.window)}


@pytest.mark.parametrize("name", sorted(DISGUISES))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_each_disguise_leaves_the_fingerprints_unchanged(name, seed):
    for style in toy_course.STUDENTS:
        source = toy_course.solution(style)
        assert _prints(DISGUISES[name](source, seed)) == _prints(source), (name, style)


def test_disguises_change_the_text_but_not_the_behaviour():
    source = toy_course.solution("numpy_a")
    copy = disguise(source, 5)
    assert copy != source and "mean" in copy
    import numpy as np

    ns_a: dict = {}
    ns_b: dict = {}
    exec(source.replace("#| export", ""), ns_a)
    exec(copy.replace("#| export", ""), ns_b)
    v = np.array([2.0, -1.0, 4.0, 0.5])
    for fn in ("mean", "variance", "softmax", "top_k"):
        assert np.allclose(ns_a[fn](v) if fn != "top_k" else ns_a[fn](v, 2),
                           ns_b[fn](v) if fn != "top_k" else ns_b[fn](v, 2))


def test_a_real_change_of_code_changes_fingerprints():
    source = toy_course.solution("loops")
    changed = source.replace("acc += (x - m) ** 2", "acc += abs(x - m)")
    assert _prints(changed) != _prints(source)


def _class(tmp_path: Path, copies: dict[str, str]) -> Path:
    """Folder of notebooks: the four independent students plus disguised copies."""
    folder = tmp_path / "subs"
    folder.mkdir()
    for style in toy_course.STUDENTS:
        (folder / f"{style}.ipynb").write_text(toy_course.notebook(toy_course.solution(style)))
    for i, (name, style) in enumerate(copies.items()):
        text = disguise(toy_course.solution(style), 100 + i)
        (folder / f"{name}.ipynb").write_text(toy_course.notebook(text))
    (folder / "untouched.ipynb").write_text(toy_course.notebook(toy_course.RELEASE))
    return folder


def _run(tmp_path: Path, inputs: list[Path], **kw):
    release = toy_course.write_release(tmp_path / "release")
    kw.setdefault("store", tmp_path / "gb.sqlite")
    return run_integrity(module="01", inputs=inputs, course=COURSE, out=tmp_path / "report",
                         release_root=release, **kw)


def test_disguised_copies_rank_above_every_independent_pair(tmp_path):
    copies = {"copy_of_loops": "loops", "copy_of_numpy_a": "numpy_a",
              "copy_of_numpy_b": "numpy_b", "copy_of_functional": "functional"}
    res = _run(tmp_path, [_class(tmp_path, copies)])
    label = {i: d.label for i, d in enumerate(res.docs)}
    copy_pairs = {frozenset((c, s)) for c, s in copies.items()}
    independent = {frozenset(p) for p in combinations(toy_course.STUDENTS, 2)}
    score = {frozenset((label[p.a], label[p.b])): p.score for p in res.pairs}
    lowest_copy = min(score.get(p, 0.0) for p in copy_pairs)
    highest_independent = max(score.get(p, 0.0) for p in independent)
    assert lowest_copy >= 0.9, score
    assert lowest_copy > highest_independent, (lowest_copy, highest_independent)
    flagged = {frozenset((label[p.a], label[p.b])) for p in res.flagged}
    assert copy_pairs <= flagged and not flagged & independent


def test_provided_code_never_counts(tmp_path):
    res = _run(tmp_path, [_class(tmp_path, {})])
    untouched = next(d for d in res.docs if d.label == "untouched")
    assert untouched.prints == []
    assert all("untouched" not in (res.docs[p.a].label, res.docs[p.b].label) for p in res.pairs)


def test_real_module_release_and_solution_are_not_flagged(tmp_path):
    """Module 01: the untouched release, a full and a partial solution share only scaffold."""
    m = COURSE.module("01")
    folder = tmp_path / "m01"
    folder.mkdir()
    (folder / "untouched.ipynb").write_text(
        (paths.RELEASE / m.name / f"{m.name}.ipynb").read_text(encoding="utf-8"))
    from coursebuild.release import dump_notebook

    (folder / "full.ipynb").write_text(dump_notebook(
        notebook_with_exports(m, solution_export_sources(m))))
    docs = read_folder(folder, kind="current", k=S.k, w=S.window)
    provided = provided_document(paths.RELEASE / m.name / f"{m.name}.ipynb", k=S.k, w=S.window)
    attach_prints(docs, provided.hashes)
    by = {d.label: d for d in docs}
    assert by["untouched"].prints == [] and len(by["full"].prints) > 50
    assert compare(docs, S) == []
    partial = solution_export_sources(m, "partial")
    (folder / "partial.ipynb").write_text(dump_notebook(notebook_with_exports(m, partial)))
    docs = read_folder(folder, kind="current", k=S.k, w=S.window)
    attach_prints(docs, provided.hashes)
    labels = [{docs[p.a].label, docs[p.b].label} for p in compare(docs, S)]
    assert labels == [{"full", "partial"}]  # the same code, so it is a match; nothing else


def test_clusters_of_three_or_more(tmp_path):
    copies = {"ring_1": "numpy_b", "ring_2": "numpy_b"}
    res = _run(tmp_path, [_class(tmp_path, copies)])
    groups = [{res.docs[i].label for i in g} for g in res.groups]
    assert groups == [{"numpy_b", "ring_1", "ring_2"}]


def test_earlier_terms_and_public_solutions(tmp_path):
    spring = tmp_path / "spring"
    spring.mkdir()
    for style in ("loops", "numpy_a"):
        (spring / f"{style}.ipynb").write_text(toy_course.notebook(toy_course.solution(style)))
    first = _run(tmp_path, [spring], term="Spring 2026")
    assert first.recorded == 2 and first.pairs == []
    again = _run(tmp_path, [spring], term="Spring 2026")
    assert again.recorded == 0  # idempotent

    public = tmp_path / "public"
    public.mkdir()
    (public / "blog_post.py").write_text(toy_course.solution("functional").replace(
        "#| export\n", ""))
    (public / "forum.py").write_text(toy_course.solution("functional").replace("#| export\n", ""))
    fall = tmp_path / "fall"
    fall.mkdir()
    (fall / "reuses_spring.ipynb").write_text(
        toy_course.notebook(disguise(toy_course.solution("loops"), 9)))
    (fall / "from_blog.ipynb").write_text(
        toy_course.notebook(disguise(toy_course.solution("functional"), 4)))
    (fall / "honest.ipynb").write_text(toy_course.notebook(toy_course.solution("numpy_b")))
    res = _run(tmp_path, [fall], term="Fall 2026", public=public)
    found = {frozenset((res.docs[p.a].label, res.docs[p.b].label)) for p in res.flagged}
    assert frozenset(("reuses_spring", "Spring 2026: loops")) in found
    assert frozenset(("from_blog", "public: blog_post")) in found
    assert frozenset(("public: blog_post", "public: forum")) not in found  # never compared
    assert not any("honest" in pair for pair in map(lambda f: " ".join(f), found))


def test_report_is_private_names_inputs_and_neutralises_formulas(tmp_path):
    folder = _class(tmp_path, {"=HYPERLINK(\"x\")": "loops"})
    res = _run(tmp_path, [folder])
    assert stat.S_IMODE(res.html.parent.stat().st_mode) == 0o700
    for f in (res.html, res.csv):
        assert stat.S_IMODE(f.stat().st_mode) == 0o600
    text = res.html.read_text(encoding="utf-8")
    assert str(folder) in text and "changes no grade" in text and "<script" not in text
    rows = list(csv.reader(res.csv.open(encoding="utf-8")))
    cells = [c for row in rows[1:] for c in row]
    assert "'=HYPERLINK(\"x\")" in cells and not any(c.startswith("=") for c in cells)


def test_report_renders_in_headless_chromium(tmp_path):
    from browser import chromium
    from browser import flags as browser_flags

    res = _run(tmp_path, [_class(tmp_path, {"copy": "numpy_a"})])
    flags = browser_flags(tmp_path / "profile")
    dom = subprocess.run([chromium(), *flags, "--dump-dom", res.html.as_uri()],
                         capture_output=True, text=True, timeout=1800).stdout
    assert 'id="pair-1"' in dom and "<mark>" in dom
    shot = tmp_path / "shot.png"
    subprocess.run([chromium(), *flags, f"--screenshot={shot}", "--window-size=1400,1800",
                    res.html.as_uri()], capture_output=True, timeout=1800)
    assert shot.is_file() and shot.stat().st_size > 20_000


def _export(path: Path, subs: list[tuple[str, str, str]]) -> Path:
    """A Gradescope export zip: Ruby-symbol YAML and one folder per (name, sid, notebook)."""
    import zipfile

    lines = []
    with zipfile.ZipFile(path, "w") as zf:
        for i, (name, sid, text) in enumerate(subs):
            key = f"submission_{9000 + i}"
            zf.writestr(f"assignment_77_export/{key}/01_tensor.ipynb", text)
            lines += [f"{key}:", "  :submitters:", f"  - :name: {name}", f"    :sid: {sid}",
                      f"    :email: {sid.lower()}@example.edu",
                      "  :created_at: 2027-01-25 17:59:00.000000000 -05:00",
                      "  :score: !ruby/object:BigDecimal 18:0.50e2", "  :history: []"]
        zf.writestr("assignment_77_export/submission_metadata.yml", "\n".join(lines) + "\n")
    return path


def test_gradescope_export_labels_students(tmp_path):
    release = toy_course.write_release(tmp_path / "release")
    nb = toy_course.notebook
    export = _export(tmp_path / "export.zip", [
        ("Ada Lovelace", "S1", nb(toy_course.solution("loops"))),
        ("Alan Turing", "S2", nb(toy_course.solution("numpy_a"))),
        ("Eve Copy", "S9", nb(disguise(toy_course.solution("loops"), 1)))])
    res = run_integrity(module="01", inputs=[export], course=COURSE, out=tmp_path / "r",
                        store=tmp_path / "gb.sqlite", release_root=release)
    top = res.pairs[0]
    assert {res.docs[top.a].label, res.docs[top.b].label} == {"Ada Lovelace <S1>",
                                                               "Eve Copy <S9>"}
    assert [d.student for d in res.docs] == ["S1", "S2", "S9"]


def test_cli_success_and_bad_input(tmp_path, monkeypatch):
    folder = _class(tmp_path, {"copy": "numpy_a"})
    release = toy_course.write_release(tmp_path / "release")
    monkeypatch.setattr(paths, "RELEASE", release)
    runner = CliRunner()
    ok = runner.invoke(cli, ["integrity", "01", str(folder), "-o", str(tmp_path / "out"),
                             "--store", str(tmp_path / "gb.sqlite")])
    assert ok.exit_code == 0, ok.output
    assert "flagged" in ok.output and "copy" in ok.output
    bad = runner.invoke(cli, ["integrity", "01", str(tmp_path / "missing"),
                              "--store", str(tmp_path / "gb.sqlite")])
    assert bad.exit_code == 2
    assert bad.output.strip().count("\n") == 0 and "missing: no such file" in bad.output


def test_bad_inputs_raise_one_line(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(IntegrityError, match="no notebooks"):
        _run(tmp_path, [empty])
    with pytest.raises(IntegrityError, match="at least one"):
        _run(tmp_path, [])


def test_a_broken_notebook_is_listed_and_the_rest_compared(tmp_path):
    """A notebook that is not JSON names itself in the report; it stops nobody's comparison."""
    folder = _class(tmp_path, {"copy": "numpy_a"})
    (folder / "a.ipynb").write_text("{not json")
    res = _run(tmp_path, [folder])
    broken = next(d for d in res.docs if d.label == "a")
    assert "a.ipynb: is not valid notebook JSON" in broken.problem and broken.prints == []
    assert [d.label for d in res.unreadable] == ["a"]
    top = res.flagged[0]
    assert {res.docs[top.a].label, res.docs[top.b].label} == {"copy", "numpy_a"}
    html = res.html.read_text(encoding="utf-8")
    assert "Inputs with notes" in html and "a.ipynb: is not valid notebook JSON" in html


def test_syntax_errors_still_compare(tmp_path):
    folder = _class(tmp_path, {})
    text = toy_course.solution("loops").replace("def mean(xs):", "def mean(xs)")
    (folder / "broken_copy.ipynb").write_text(toy_course.notebook(text))
    res = _run(tmp_path, [folder])
    labels = {frozenset((res.docs[p.a].label, res.docs[p.b].label)) for p in res.flagged}
    assert frozenset(("broken_copy", "loops")) in labels
