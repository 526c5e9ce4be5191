"""`tito samples NN` (issue 12 item 10): every module's sample class shows what its labels say.

Built in memory and scored in-process against the hidden suite (trusted code only): the full
solution scores everything, the untouched release nothing, the partial answer something in
between, the syntax error does not export, the looping function is one the suite calls (with
the loop replaced by an error, the score falls strictly between), the hard exit exits.
"""

from __future__ import annotations

import json

import pytest
from suite_tools import first_lost_case, load_suite, load_variant, score_variant, total

from coursebuild.release import built_modules, dump_notebook
from coursebuild.samples import build_notebook, faults, note
from coursekit.course import load_course
from coursekit.export import ExportError, export_module

COURSE = load_course()
MODULES = built_modules(COURSE)


def _export(module, kind, tmp_path, edit=None) -> str:
    nb = build_notebook(module, kind)
    if edit:
        for cell in nb["cells"]:
            src = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            cell["source"] = edit(src)
    path = tmp_path / f"{kind}.ipynb"
    path.write_text(dump_notebook(nb), encoding="utf-8")
    return export_module(path, slug=module.slug, number=module.number, mode="student")


def _score(module, source) -> float:
    return total(score_variant(load_suite(module.name), load_variant({module.slug: source})))


@pytest.mark.parametrize("module", MODULES, ids=[m.name for m in MODULES])
def test_sample_labels_hold(module, tmp_path):
    full = _score(module, _export(module, "full", tmp_path))
    assert full == module.points
    assert _score(module, _export(module, "untouched", tmp_path)) == 0
    partial = _score(module, _export(module, "partial", tmp_path))
    assert 0 < partial < module.points, (note(module, "partial"), partial)
    with pytest.raises(ExportError, match="cell"):
        _export(module, "syntax_error", tmp_path)
    looping = _export(module, "infinite_loop", tmp_path)
    assert "while True:  # oops: this loop never ends" in looping
    lines = looping.splitlines()
    at = next(i for i, ln in enumerate(lines) if "# oops: this loop never ends" in ln)
    indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
    lines[at + 1] = f"{indent}    raise TimeoutError('stands for the loop')"
    stopped = "\n".join(lines)
    lost = first_lost_case(load_suite(module.name), load_variant({module.slug: stopped}))
    assert lost is not None, f"{faults(module).loop} looping costs nothing"
    assert "os._exit(0)" in _export(module, "hard_exit", tmp_path)
    assert json.dumps(build_notebook(module, "late")) == json.dumps(build_notebook(module, "full"))
