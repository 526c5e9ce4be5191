"""The harness reads as its pipeline: each stage imports only its own stage and those below.

A submission goes package → expected values → run in the sandbox → decide → publish, and
``autograder.harness.core.grade`` is the one place that calls the stages in that order
(docs/architecture.md, "The harness"). In import order the sandbox runner sits below the
expected values, which are the suite run against the reference in a trusted child of that
same runner. Every import of every harness file counts, also those inside functions (the
AST walk of tests/test_layers.py), and the harness's import graph has no cycle. An import
inside a function is kept only where it must be (a file run as a script before ``autograder``
is importable, a package ``__init__`` that must not load the grader into the sandboxed
child, the repository side that the Gradescope zip does not carry), and says why on its
line (``# noqa: PLC0415 - why``).
"""

from __future__ import annotations

import ast
from pathlib import Path

from test_layers import imports

HARNESS = Path(__file__).resolve().parents[2] / "autograder" / "harness"
PACKAGE = "autograder.harness"

#: The stages, bottom to top, and the harness modules of each.
STAGES: list[tuple[str, set[str]]] = [
    # shared leaf helpers: plain data, clocks, limits, seeds, process primitives
    ("helpers", {"wire", "clock", "limits", "variants", "lifeline", "isolation", "home",
                 "export_worker"}),
    # package the submission: untrusted notebooks read in capped workers, the graded package
    ("package", {"reader", "package"}),
    # run in the sandbox: the runner, its child, fork server, lanes and the parent's timing
    ("sandbox", {"timing", "child", "zygote", "supervisor", "lanes"}),
    # expected values: goldens and reference runs, the milestones' held-out tasks
    ("expected", {"goldens", "milestones"}),
    # decide every test's score from what came back
    ("decide", {"decide"}),
    # publish: results.json, written atomically, always valid
    ("publish", {"publish"}),
    # the pipeline that calls the stages in order, and the tools over it
    ("pipeline", {"core", "mutation", "__init__"}),
]


def _stage_of() -> dict[str, int]:
    return {mod: i for i, (_, mods) in enumerate(STAGES) for mod in mods}


def harness_imports(path: Path, names: set[str]) -> set[str]:
    """The harness modules ``path`` imports, by file stem (``__init__`` for a name that the
    package itself defines, ``from autograder.harness import grade``)."""
    out = set()
    for name in imports(path):
        parts = name.split(".")
        if parts[:2] != PACKAGE.split(".") or len(parts) < 3:
            continue
        out.add(parts[2] if parts[2] in names else "__init__")
    out.discard(path.stem)
    return out


def graph() -> dict[str, set[str]]:
    files = sorted(HARNESS.glob("*.py"))
    names = {p.stem for p in files}
    return {p.stem: harness_imports(p, names) for p in files}


def test_every_harness_module_has_one_stage_and_every_stage_a_module():
    declared = [m for _, mods in STAGES for m in mods]
    assert len(declared) == len(set(declared)), "a module is in two stages"
    present = set(graph())
    assert present - set(declared) == set(), "harness modules in no stage of STAGES"
    assert set(declared) - present == set(), "STAGES names modules that do not exist"


def test_each_stage_imports_only_its_own_stage_and_those_below():
    stage = _stage_of()
    problems = [f"{mod} ({STAGES[stage[mod]][0]}) imports {dep} ({STAGES[stage[dep]][0]})"
                for mod, deps in sorted(graph().items()) if mod in stage
                for dep in sorted(deps) if dep in stage and stage[dep] > stage[mod]]
    assert problems == [], "imports that point up the pipeline:\n" + "\n".join(problems)


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def test_the_harness_import_graph_has_no_cycle():
    assert cycles(graph()) == []


def test_the_cycle_check_finds_a_cycle_through_a_function_level_import(tmp_path):
    """The oracle: two modules joined by an import inside a function form a cycle."""
    (tmp_path / "a.py").write_text("from autograder.harness import b\n")
    (tmp_path / "b.py").write_text("def f():\n    from autograder.harness.a import g\n")
    names = {"a", "b"}
    g = {p.stem: harness_imports(p, names) for p in sorted(tmp_path.glob("*.py"))}
    assert g == {"a": {"b"}, "b": {"a"}}
    assert cycles(g) == [["a", "b"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


#: The repository's own packages (a lazy import of the standard library or NumPy is a
#: matter of start-up time only, and no cycle can run through it).
OURS = {"autograder", "tito", "coursekit", "gradebook", "staff", "milestones", "tinytorch_data",
        "tinytorch_milestones", "tinytorch_ref"}


def lazy_imports(path: Path) -> list[tuple[int, str]]:
    """``(line, text)`` of every import of the repository's code inside a function or class
    of ``path``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    tree = ast.parse("\n".join(lines))
    top = {id(node) for node in tree.body}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        else:
            continue
        if id(node) not in top and any(n.split(".")[0] in OURS for n in names):
            out.append((node.lineno, lines[node.lineno - 1].strip()))
    return out


def test_an_import_inside_a_function_says_why_on_its_line():
    """A lazy import dodging a cycle is gone with the cycle; the rest say why they stay."""
    problems = [f"{p.name}:{line}: {text}" for p in sorted(HARNESS.glob("*.py"))
                for line, text in lazy_imports(p)
                if "PLC0415 - " not in text or not text.split("PLC0415 - ", 1)[1].strip()]
    assert problems == [], ("imports inside functions without a reason "
                            "(`# noqa: PLC0415 - why`, or move the import to the top):\n"
                            + "\n".join(problems))
