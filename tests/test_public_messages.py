"""Public failure messages say what came back, not only what to check (issue 11 item 5).

A public check's ``assert`` message must show a value computed from the student's code (an
f-string with at least one ``{...}``: a shape, a dtype or a few values) next to what was
expected and why it matters; "mean(dim=1) averages each row" alone leaves the student guessing.
``VAGUE`` counts, per module, the messages still without one; it may only shrink: a module
that improves fails this test until its count is lowered, and a new module starts at 0.
"""

from __future__ import annotations

import ast

import pytest

from coursebuild.release import available_modules
from coursekit.course import load_course
from coursekit.paths import solution_path

MODULES = available_modules(load_course())

#: module -> public assert messages that show no computed value yet (to be rewritten).
VAGUE: dict[str, int] = {}  # every built module is at 0 (issue 11 item 5)


def vague_messages(source: str) -> list[str]:
    """``line: assert ...`` of every assert in a public test function (``test_*`` at module
    level) whose message interpolates nothing."""
    out = []
    for fn in ast.parse(source).body:
        if not (isinstance(fn, ast.FunctionDef) and fn.name.startswith("test_")):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Assert) and not (
                    node.msg is not None
                    and any(isinstance(n, ast.FormattedValue) for n in ast.walk(node.msg))):
                out.append(f"{node.lineno}: {ast.unparse(node)[:100]}")
    return out


def test_the_rule_reads_messages():
    src = ("def test_a(x):\n    assert x == 1, 'x must be 1'\n"
           "    assert x == 1, f'expected 1, got {x}'\n    assert x\n"
           "def helper(x):\n    assert x, 'not a public check'\n")
    assert [v.split(":")[0] for v in vague_messages(src)] == ["2", "4"]


@pytest.mark.parametrize("module", MODULES, ids=[m.name for m in MODULES])
def test_public_messages_show_what_came_back(module):
    vague = vague_messages(solution_path(module).read_text(encoding="utf-8"))
    allowed = VAGUE.get(module.name, 0)
    assert len(vague) <= allowed, (
        f"{module.name}: {len(vague)} public assert messages show no computed value "
        f"(allowed {allowed}); say what came back (shape, dtype or values) next to what was "
        "expected and why:\n" + "\n".join(vague))
    assert len(vague) == allowed, (
        f"{module.name}: now {len(vague)} vague messages, fewer than {allowed}: lower its "
        "entry in VAGUE (tests/test_public_messages.py)")
