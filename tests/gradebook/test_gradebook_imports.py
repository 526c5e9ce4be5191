"""The gradebook never imports student or reference code: it reads results files only."""

from __future__ import annotations

import ast
from pathlib import Path

import gradebook

#: reference and student code, and every layer beside or above the gradebook (the foundation,
#: ``coursekit``, is what it may import of this repository)
FORBIDDEN = {"tinytorch", "tinytorch_ref", "solutions", "student_release", "autograder",
             "coursebuild", "staff", "tito"}


def test_gradebook_imports_only_itself_the_foundation_and_libraries():
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
