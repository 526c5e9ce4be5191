"""Every released stub sits under a full docstring scaffold (issue 2/3, STYLE rule 4).

A stub is a function of a student package file whose body raises
``NotImplementedError("module NN: implement ...")``. Its docstring must say what the function
does (a first line) and carry APPROACH, EXAMPLE (with expected output) and HINT sections.
"""

from __future__ import annotations

import ast

import pytest

from coursebuild.release import available_modules
from coursekit import paths
from coursekit.course import load_course

MODULES = available_modules(load_course())
SECTIONS = ("APPROACH", "EXAMPLE", "HINT")


def _stubs(source: str) -> list[tuple[str, ast.FunctionDef]]:
    out = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            owner = node.name + "."
            members = node.body
        elif isinstance(node, ast.Module):
            owner = ""
            members = node.body
        else:
            continue
        for fn in members:
            if not isinstance(fn, ast.FunctionDef):
                continue
            for sub in ast.walk(fn):
                if (isinstance(sub, ast.Raise) and isinstance(sub.exc, ast.Call)
                        and getattr(sub.exc.func, "id", "") == "NotImplementedError"
                        and sub.exc.args and isinstance(sub.exc.args[0], ast.Constant)
                        and "implement" in str(sub.exc.args[0].value)):
                    out.append((owner + fn.name, fn))
                    break
    return out


@pytest.mark.parametrize("module", MODULES, ids=[m.name for m in MODULES])
def test_every_stub_has_a_full_docstring_scaffold(module):
    source = (paths.RELEASE / "tinytorch" / f"{module.slug}.py").read_text(encoding="utf-8")
    stubs = _stubs(source)
    assert stubs, f"{module.name}: no stubs found in the student package file"
    missing = []
    for name, fn in stubs:
        doc = ast.get_docstring(fn) or ""
        lacks = [s for s in SECTIONS if s not in doc.upper()]
        if not doc.strip() or lacks:
            missing.append(f"{name}: {'no docstring' if not doc.strip() else ', '.join(lacks)}")
    assert missing == [], f"{module.name}: stubs without a full scaffold:\n" + "\n".join(missing)
