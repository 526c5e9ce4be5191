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

And code is found by name (issue 31 item 4): the shipped data and the milestone recipes are
packages (``tinytorch_data``, ``tinytorch_milestones``); no module loads the repository's own
code by file path except the harness's loads of a file a grading names (``LOADS_BY_PATH``), and
only entry points edit ``sys.path`` (``PATH_ENTRY_POINTS``), each listed with why.
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
    assert {"milestones", "tinytorch_data", "tinytorch_milestones", "bench"} <= set(found), found


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
              "tinytorch_data", "tinytorch_milestones")
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


# ----------------------------------------------------------------------------- how code is found
#: Where code is looked for: the production packages, the milestone scripts and the benchmarks.
FOUND_BY_PATH_SCOPE = (*PRODUCTION, "bench")
#: Production files that import a file by path (``spec_from_file_location``,
#: ``SourceFileLoader``), each with why. The repository's own packages are imported by name
#: (``tinytorch_data``, ``tinytorch_milestones``, ``autograder.milestones``...); what remains
#: names a file a grading was handed. An entry that loads nothing by path any more fails.
LOADS_BY_PATH = {
    "autograder/harness/home.py": "import_file: the hidden suite a grading names (suites live in "
    "autograder/suites/NN_slug/ folders, not packages: every one is a suite.py; a zip's or a "
    "test's copy, and the sandboxed child's, by path so that nothing on the submission's side of "
    "sys.path can shadow it) and milestone providers, looked up as <id>.py in the folders a "
    "grading names (milestone_dirs: the zip's, a test's): a plugin folder",
    "autograder/harness/export_worker.py": "the untrusted-notebook reader runs as python -I -S -B "
    "with no site-packages and no repository on its path, by design: it loads the "
    "standard-library-only reader it is handed (the exporter it imports as coursekit.export "
    "from the job's root)",
}
#: Files that edit ``sys.path`` outside an ``if __name__ == "__main__":`` block: entry points,
#: each with why. Every other module finds its imports as installed packages.
_SCRIPT = "a milestone script run as a program (python milestones/ID.py, students included): " \
    "the course folder (tinytorch, tinytorch_data, tinytorch_milestones) and the folder run from"
_BENCH = "a benchmark run as a program (make bench), not a module anything imports"
PATH_ENTRY_POINTS = {
    "autograder/gradescope/run.py": "run_autograder's entry on Gradescope: the zip's source "
    "folder is not installed",
    "autograder/harness/child.py": "the sandboxed child process (its main): the harness root "
    "before anything trusted is imported, then the package under test's folder",
    "autograder/harness/zygote.py": "the fork server process: the harness root, as a fresh "
    "child's load_trusted puts it",
    "autograder/harness/export_worker.py": "the untrusted-notebook reader process (its main, run "
    "as python -I -S -B): the job's root, which holds the exporter package (coursekit), before "
    "it imports it",
    "coursebuild/templates/student_tito.py": "the students' tito command (a program of its own in "
    "their release): their course folder and tools/",
    "milestones/measure.py": "a staff script run as a program: --alternative builds on the "
    "tests' alternatives (KNOWN_READS)",
    **{f"milestones/{name}.py": _SCRIPT for name in (
        "perceptron_1957", "xor_1969", "mlp_1986", "cnn_1998", "cnn_fashion_1998",
        "cnn_cifar_1998", "transformer_2017", "transformer_reversal_2017", "mlperf_2018")},
    **{f"bench/{name}.py": _BENCH for name in (
        "framework", "framework_ab", "grading_cost", "grading_cpu", "integrity",
        "mutation_cost", "page_faults", "regrade_acceptance", "regrade_throughput")},
}
_PATH_EDITS = {"insert", "append", "extend", "remove", "pop", "clear"}


def _is_sys_path(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "path"
            and isinstance(node.value, ast.Name) and node.value.id == "sys")


def _main_guarded(tree: ast.Module) -> set[int]:
    """Ids of the nodes inside a module-level ``if __name__ == "__main__":``."""
    out: set[int] = set()
    for stmt in tree.body:
        test = stmt.test if isinstance(stmt, ast.If) else None
        if (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name)
                and test.left.id == "__name__" and len(test.comparators) == 1
                and _const(test.comparators[0]) == "__main__"):
            out |= {id(n) for s in stmt.body for n in ast.walk(s)}
    return out


def how_code_is_found(path: Path) -> tuple[list[int], list[int]]:
    """``(lines that import a file by path, lines that edit sys.path outside a __main__
    guard)`` of ``path``: ``spec_from_file_location`` / ``SourceFileLoader`` however spelled,
    ``sys.path.insert/append/...`` calls, assignments to ``sys.path`` or a slice of it."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    guarded = _main_guarded(tree)
    loaders = {"spec_from_file_location", "SourceFileLoader"}
    loaders |= {a.asname for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                for a in node.names if a.name in loaders and a.asname}
    by_path, edits = [], []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            fn = node.func
            name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
            if name in loaders:
                by_path.append(node.lineno)
            elif (isinstance(fn, ast.Attribute) and fn.attr in _PATH_EDITS
                  and _is_sys_path(fn.value) and id(node) not in guarded):
                edits.append(node.lineno)
        elif isinstance(node, (ast.Assign, ast.AugAssign)) and id(node) not in guarded:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(_is_sys_path(t) or (isinstance(t, ast.Subscript) and _is_sys_path(t.value))
                   for t in targets):
                edits.append(node.lineno)
    return by_path, edits


@functools.cache
def _found() -> dict[str, tuple[list[int], list[int]]]:
    return {p.relative_to(ROOT).as_posix(): how_code_is_found(p)
            for pkg in FOUND_BY_PATH_SCOPE for p in sorted((ROOT / pkg).rglob("*.py"))}


def test_the_repository_s_own_code_is_imported_by_name_not_loaded_by_path():
    found = _found()
    problems = [f"{f}: line {n} imports a file by path (import the package by name, or add "
                "the file to LOADS_BY_PATH with why)"
                for f, (lines, _) in found.items() if f not in LOADS_BY_PATH for n in lines]
    assert problems == [], "\n".join(problems)
    stale = [f for f in LOADS_BY_PATH if not found.get(f, ([], []))[0]]
    assert stale == [], f"load nothing by path any more; drop them from LOADS_BY_PATH: {stale}"


def test_only_entry_points_edit_sys_path():
    found = _found()
    problems = [f"{f}: line {n} edits sys.path outside an entry point"
                for f, (_, lines) in found.items() if f not in PATH_ENTRY_POINTS for n in lines]
    assert problems == [], "\n".join(problems)
    stale = [f for f in PATH_ENTRY_POINTS if not found.get(f, ([], []))[1]]
    assert stale == [], f"edit sys.path no more; drop them from PATH_ENTRY_POINTS: {stale}"


def test_the_code_finding_check_sees_each_spelling(tmp_path):
    """The oracle: each way of loading a file or editing the path is found, under a
    ``__main__`` guard the edits are not; reading sys.path or a string naming it is nothing."""
    src = tmp_path / "m.py"
    src.write_text(
        "import importlib.util, sys\n"
        "from importlib.machinery import SourceFileLoader\n"
        "from importlib.util import spec_from_file_location as sffl, spec_from_file_location\n"
        "a = importlib.util.spec_from_file_location('x', 'x.py')\n"
        "b = spec_from_file_location('y', 'y.py')\n"
        "c = SourceFileLoader('z', 'z.py'); d = sffl('w', 'w.py')\n"
        "sys.path.insert(0, 'a')\n"
        "def f():\n"
        "    sys.path.append('b')\n"
        "    sys.path[:0] = ['c']\n"
        "    sys.path = ['d']\n"
        "    sys.path += ['e']\n"
        "ok = [p for p in sys.path], 'sys.path.insert(0, x)', len(sys.path)\n"
        "if __name__ == '__main__':\n"
        "    sys.path.insert(0, 'f')\n")
    by_path, edits = how_code_is_found(src)
    assert by_path == [4, 5, 6, 6], by_path
    assert sorted(edits) == [7, 9, 10, 11, 12], edits
