"""The layers as drawn in docs/layout.md, checked on every import (also those inside functions).

Bottom to top: the course foundation (``coursekit``: course schema, paths, errors, exporter,
marker grammar, Gradescope export reader); beside each other above it, the grader
(``autograder``), the gradebook (``gradebook``) and the course-building tools (``coursebuild``),
none of which imports another of the three; then the staff workflows (``staff``: regrade,
integrity, publish, synthetic exports); on top the CLI (``tito``). Imports point down: nothing
below the CLI imports ``tito``, and the graph of top-level packages has no cycle.

And production code reads no test fixture (issue 31 item 4): course assets such as the
plausible-bug catalogues live with the code that owns them (``autograder/suites/NN_slug/
bugs.py``), so no production module names a path under ``tests/``.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

from coursekit import paths

ROOT = paths.REPO_ROOT
#: The layers, bottom to top: each package with the layered packages it may import.
BELOW: dict[str, set[str]] = {
    "coursekit": set(),
    "autograder": {"coursekit"},
    "gradebook": {"coursekit"},
    "coursebuild": {"coursekit"},
    "staff": {"coursekit", "autograder", "gradebook", "coursebuild"},
    "tito": {"coursekit", "autograder", "gradebook", "coursebuild", "staff"},
}
#: Top-level folders of Python code that are not packages of the layers: the test tree and
#: the generated student release (its own ``tinytorch`` and ``tito_student``).
NOT_PACKAGES = {"tests", "student_release"}


def imports(path: Path) -> set[str]:
    """Every module ``path`` imports, at any depth of its code: ``import a.b`` gives ``a.b``;
    ``from a.b import c`` gives ``a.b`` and ``a.b.c`` (``c`` may be a module)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module)
            out |= {f"{node.module}.{a.name}" for a in node.names}
    return out


@functools.cache  # each test reads the same packages: parse every file once per run
def modules(package: str) -> dict[str, set[str]]:
    """``{module name: what it imports}`` for every file of ``package``."""
    return {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"):
            imports(p) for p in sorted((ROOT / package).rglob("*.py"))}


def top_level_packages() -> list[str]:
    """Every top-level folder of the repository that holds Python code (tests and the
    generated student release aside)."""
    return sorted(d.name for d in ROOT.iterdir() if d.is_dir() and not d.name.startswith(".")
                  and d.name not in NOT_PACKAGES and any(d.glob("*.py")))


def package_graph(packages: list[str]) -> dict[str, set[str]]:
    """``{package: the other top-level packages it imports}``."""
    return {pkg: {n.split(".")[0] for names in modules(pkg).values() for n in names
                  if n.split(".")[0] in packages and n.split(".")[0] != pkg}
            for pkg in packages}


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """A cycle of ``graph`` as the path that closes it (``[a, b, a]``), or ``[]``."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def test_every_package_of_the_repository_is_seen():
    found = top_level_packages()
    assert set(BELOW) <= set(found), set(BELOW) - set(found)
    assert {"milestones", "datasets", "bench"} <= set(found), found


@pytest.mark.parametrize("package", sorted(BELOW))
def test_each_layer_imports_only_the_layers_below_it(package):
    layered = set(BELOW)
    problems = [f"{mod} imports {name}" for mod, names in modules(package).items()
                for name in sorted(names)
                if name.split(".")[0] in layered - BELOW[package] - {package}]
    assert problems == [], "\n".join(problems)


def test_nothing_below_the_cli_imports_it():
    problems = [f"{mod} imports {name}" for pkg in top_level_packages() if pkg != "tito"
                for mod, names in modules(pkg).items() for name in sorted(names)
                if name.split(".")[0] == "tito"]
    assert problems == [], "\n".join(problems)


def test_the_top_level_packages_import_each_other_without_a_cycle():
    graph = package_graph(top_level_packages())
    assert graph["staff"] >= {"autograder", "gradebook"}, graph  # the graph sees real edges
    assert find_cycle(graph) == [], f"import cycle: {' -> '.join(find_cycle(graph))}"


def test_the_cycle_check_finds_a_cycle():
    """The oracle: a two-package cycle and a longer one are found; a diamond is not a cycle."""
    assert find_cycle({"a": {"b"}, "b": {"a"}}) == ["a", "b", "a"]
    assert find_cycle({"x": {"y"}, "y": {"z"}, "z": {"y"}}) == ["y", "z", "y"]
    assert find_cycle({"t": {"s", "g"}, "s": {"g", "k"}, "g": {"k"}, "k": set()}) == []


def test_only_the_cli_imports_the_staff_workflows():
    users = {mod for pkg in top_level_packages() if pkg not in {"staff", "bench"}
             for mod, names in modules(pkg).items()
             if any(n.split(".")[0] == "staff" for n in names)}
    assert users <= {"tito.cli", "tito.demo"}, sorted(users)


def test_the_check_sees_imports_inside_functions(tmp_path):
    """The oracle: a lazy import (the grader's habit, to keep the Gradescope zip small) counts."""
    src = tmp_path / "m.py"
    src.write_text("def f():\n    from gradebook.csvsafe import neutralise\n    import staff.regrade\n")
    assert {"gradebook.csvsafe", "gradebook.csvsafe.neutralise", "staff.regrade"} <= imports(src)


#: The production packages: what ships, grades, keeps the books or runs the course.
PRODUCTION = ("coursekit", "coursebuild", "tito", "autograder", "gradebook", "staff", "milestones",
              "datasets")
#: Known reads of ``tests/`` still to move, each with what it reads. Shrinks to empty; an
#: entry that no longer reads ``tests/`` fails the check, so it cannot go stale.
KNOWN_READS = {
    # `--alternative MODULE/NAME` trains with an alternative implementation; issue 31 item 6
    # restates the alternatives as the functions they replace, and moves them with it
    "milestones.measure": "tests/fixtures/alternatives",
}
#: ``tests/`` as the first segment of a path: not ``public_tests/``, not ``release/x/tests/``
_TESTS_PATH = re.compile(r"(?<![\w./-])tests/")
#: names that hold the repository's root, so ``ROOT / "tests"`` is the test tree
_ROOTS = re.compile(r"^(REPO_ROOT|ROOT|REPO|repo|repo_root)$")


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                out.add(id(first.value))
    return out


def _is_root(node: ast.AST) -> bool:
    """``REPO_ROOT``, ``paths.REPO_ROOT``, ``Path(__file__).parents[1]``, ``....parent`` of
    ``__file__`` (a folder of the repository, the root as it is usually spelled)."""
    if isinstance(node, ast.Name):
        return bool(_ROOTS.match(node.id))
    of_file = any(isinstance(n, ast.Name) and n.id == "__file__" for n in ast.walk(node))
    if isinstance(node, ast.Attribute):
        return bool(_ROOTS.match(node.attr)) or (node.attr == "parent" and of_file)
    return (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute)
            and node.value.attr == "parents" and of_file)


def _const(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def paths_under_tests(path: Path) -> list[str]:
    """Where ``path`` names a path under the repository's ``tests/`` (docstrings and comments
    aside: they may cite a test): a string with ``tests/`` as its first segment (f-string parts
    too), a ``/`` chain with ``"tests"`` right after the root or followed by ``"fixtures"``, or
    a call with the arguments ``"tests", "fixtures"`` (``Path("tests", "fixtures")``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = _docstrings(tree)
    out = []
    for node in ast.walk(tree):
        text = _const(node)
        div = isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)
        if text is not None and id(node) not in docs and _TESTS_PATH.search(text):
            out.append(f"line {node.lineno}: {text[:60]!r}")
        elif div and _const(node.right) == "tests" and _is_root(node.left):
            out.append(f"line {node.lineno}: <root> / 'tests'")
        elif (div and _const(node.right) == "fixtures" and isinstance(node.left, ast.BinOp)
              and _const(node.left.right) == "tests"):
            out.append(f"line {node.lineno}: 'tests' / 'fixtures'")
        elif isinstance(node, ast.Call):
            args = [_const(a) for a in node.args]
            if any(args[i:i + 2] == ["tests", "fixtures"] for i in range(len(args))):
                out.append(f"line {node.lineno}: ('tests', 'fixtures')")
    return out


def test_no_production_module_names_a_path_under_tests():
    found = {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"):
             paths_under_tests(p) for pkg in PRODUCTION for p in sorted((ROOT / pkg).rglob("*.py"))}
    problems = [f"{mod}: {hit}" for mod, hits in found.items() for hit in hits
                if mod not in KNOWN_READS]
    assert problems == [], "production code reads tests/ (move the asset out of tests/):\n" \
        + "\n".join(problems)
    stale = [mod for mod in KNOWN_READS if not found.get(mod)]
    assert stale == [], f"no longer read tests/; drop them from KNOWN_READS: {stale}"


def test_the_tests_path_check_finds_each_spelling(tmp_path):
    """The oracle: each way the catalogues used to be read is found; what is not the test tree
    (a results key, the release's public tests, a docstring citing a test) is not."""
    src = tmp_path / "m.py"
    src.write_text(
        '"""Checked by tests/test_layers.py (a docstring may cite a test)."""\n'
        "from pathlib import Path\n"
        "from coursekit import paths\n"
        "A = paths.REPO_ROOT / 'tests' / 'fixtures' / 'buggy' / 'x.py'\n"
        "B = Path(__file__).resolve().parents[1] / 'tests'\n"
        "C = Path(__file__).parent / 'fixtures' / 'x'\n"
        "D = other / 'tests' / 'fixtures'\n"
        "def f(m):\n"
        "    '''Reads nothing under tests/.'''\n"
        "    return [f'tests/fixtures/buggy/{m}.py: missing', 'see tests/x.py',\n"
        "            Path('tests', 'fixtures', m)]\n"
        "OK = [paths.RELEASE / 'm' / 'tests', {'tests': []}['tests'], 'public_tests/x.py',\n"
        "      'student_release/m/tests/x.py', 'tests', x.tests_dir / 'fixtures',\n"
        "      notebook.parent / 'tests']\n")
    hits = paths_under_tests(src)
    lines = [int(h.split(":")[0].split()[1]) for h in hits]
    assert sorted(set(lines)) == [4, 5, 7, 10, 11], hits
    assert lines.count(4) == 2 and lines.count(10) == 2, hits  # each spelling of the line
