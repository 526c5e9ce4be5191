"""Gradescope's "Export Submissions" archive is read in one place: ``coursekit.gradescope_export``.

The gradebook's ingest, ``tito regrade`` and ``tito integrity`` all locate and parse
``submission_metadata.yml`` through it, so they cannot disagree about what an export says.
"""

from __future__ import annotations

import ast

import pytest

from coursekit import gradescope_export as gs
from coursekit import paths

PACKAGES = ("coursekit", "coursebuild", "autograder", "gradebook", "staff", "tito")


def _docstring_ids(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def test_only_the_reader_names_the_metadata_file():
    reader = paths.REPO_ROOT / "coursekit" / "gradescope_export.py"
    found = []
    for pkg in PACKAGES:
        for path in sorted((paths.REPO_ROOT / pkg).rglob("*.py")):
            if path == reader:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            docs = _docstring_ids(tree)
            for node in ast.walk(tree):
                if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                        and id(node) not in docs and gs.METADATA_YML in node.value):
                    found.append(f"{path.relative_to(paths.REPO_ROOT)}:{node.lineno}")
    assert found == [], f"read the export through coursekit.gradescope_export: {found}"


def _export(root, depth: int) -> None:
    folder = root.joinpath(*[f"level{i}" for i in range(depth)])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / gs.METADATA_YML).write_text(
        "submission_1:\n  :submitters:\n  - :name: Ada\n    :sid: '1'\n"
        "  :created_at: 2026-01-01 10:00:00.000000000 +00:00\n  :score: 5.0\n",
        encoding="utf-8")


@pytest.mark.parametrize("depth, found", [(0, True), (2, True), (3, False)])
def test_ingest_regrade_and_integrity_find_the_same_exports(tmp_path, depth, found):
    from gradebook.errors import GradebookError
    from gradebook.ingest import parse_export
    from staff.integrity.corpus import is_export
    from staff.regrade.core import RegradeError, find_metadata

    _export(tmp_path, depth)
    assert is_export(tmp_path) is found
    if found:
        assert find_metadata(tmp_path) == gs.find_metadata(tmp_path)
        return
    with pytest.raises(gs.GradescopeExportError, match=f"^{tmp_path}: no {gs.METADATA_YML}"):
        gs.find_metadata(tmp_path)
    with pytest.raises(RegradeError, match=f"^{tmp_path}: no {gs.METADATA_YML}"):
        find_metadata(tmp_path)
    with pytest.raises(GradebookError, match=gs.METADATA_YML):
        parse_export(tmp_path, course=None, module="01_tensor")  # type: ignore[arg-type]


def test_a_bad_field_is_one_line_naming_the_file_and_the_field(tmp_path):
    (tmp_path / gs.METADATA_YML).write_text("submission_7:\n  :created_at: 2026-01-01\n",
                                            encoding="utf-8")
    with pytest.raises(gs.GradescopeExportError) as err:
        gs.read_records(tmp_path)
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith(str(tmp_path / gs.METADATA_YML)) and "submission_7" in message
    assert ":submitters:" in message, message
