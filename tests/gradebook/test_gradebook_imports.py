"""The gradebook never imports student or reference code: it reads results files only."""

from __future__ import annotations

import ast
from pathlib import Path

import gradebook

FORBIDDEN = {"tinytorch", "tinytorch_ref", "solutions", "student_release", "autograder"}


def test_gradebook_imports_only_itself_tito_and_libraries():
    package = Path(gradebook.__file__).parent
    for path in sorted(package.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                assert top not in FORBIDDEN, f"{path.name} imports {name}"
                if top == "tito":
                    assert name in ("coursekit.course", "coursekit.paths", "coursekit.errors"), \
                        f"{path.name} imports {name}"
