"""Mutation testing: mutant generation, kill accounting, and the per-module CI gate."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from autograder.harness.limits import Limits
from autograder.harness.mutation import Mutant, catalogue_bugs, generate_mutants, run_mutation
from tests.autograder.conftest import CORRECT, REF, SUITE

SAMPLE = textwrap.dedent('''
    import numpy as np

    def f(x, n):
        """Docstring with 1 + 2 is not mutated."""
        if n > 0 and x is not None:
            return np.sum(x, axis=0, keepdims=True) + n * 2
        return -x

    def __repr__():
        return 1 + 1

    def g(x):
        return x - 1  # pragma: no mutate
''')


def test_mutant_kinds_and_exclusions():
    muts = generate_mutants(SAMPLE)
    descs = {m.description for m in muts}
    assert {"Gt -> GtE", "And -> Or", "IsNot -> Is", "Add -> Sub", "Mult -> Div",
            "drop right operand of Add", "drop USub", "0 -> 1", "2 -> 3",
            "axis=0 -> axis=1", "keepdims=True -> False"} <= descs
    assert all(m.line not in (10, 13) for m in muts), "repr and pragma lines are skipped"
    assert len({m.id for m in muts}) == len(muts)
    for m in muts:
        compile(m.source, m.id, "exec")


def test_mutant_ids_name_the_function_and_survive_edits_elsewhere():
    """An id is ``kind@qualname+k:col:change`` with ``k`` counted from the function's first line
    of code: a longer docstring, a new function above or a class around it moves no id (the
    equivalent-mutant lists are kept by hand), and a line added inside the function moves only
    the ids below it in that function."""
    ids = [m.id for m in generate_mutants(SAMPLE)]
    assert "op@f+0:7:Gt -> GtE" in ids, ids
    edited = SAMPLE.replace('"""Docstring with 1 + 2 is not mutated."""',
                            '"""Docstring with 1 + 2 is not mutated.\n\n    More words.\n    """')
    edited = "def added_above(y):\n    return y * 2\n\n" + edited
    moved = [m.id for m in generate_mutants(edited)]
    assert [i for i in moved if not i.split("@")[1].startswith("added_above")] == ids
    assert {m.line for m in generate_mutants(edited)} != {m.line for m in generate_mutants(SAMPLE)}
    grown = SAMPLE.replace("    if n > 0 and x is not None:",
                           "    y = 1 + 1\n    if n > 0 and x is not None:")
    assert grown != SAMPLE
    regrown = {m.id for m in generate_mutants(grown)}
    assert {"op@f+0:8:Add -> Sub", "op@f+1:7:Gt -> GtE", "drop@f+3:11:drop USub"} <= regrown


def _fresh_copy_mutants(source: str, limit: int | None = None) -> list[tuple]:
    """The mutants as made before generation worked in place: one deep copy of the module
    per mutant (the oracle for :func:`generate_mutants`)."""
    import ast
    import copy

    from autograder.harness.mutation import _candidates, _in_functions, _skippable, mutant_id, sites

    tree = ast.parse(source)
    where = sites(tree)
    out: list[tuple] = []
    seen: set[str] = set()
    for i, node in enumerate(_in_functions(tree)):
        if _skippable(node, source.splitlines()):
            continue
        for kind, text, fn in _candidates(node):
            mid = mutant_id(kind, where[id(node)], node, text)
            if mid in seen:
                continue
            seen.add(mid)
            new = copy.deepcopy(tree)
            target = _in_functions(new)[i]
            result = fn(target)
            if isinstance(result, tuple):
                holder = next(p for p in ast.walk(new) for _, v in ast.iter_fields(p)
                              if v is target or (isinstance(v, list) and target in v))
                for name, v in ast.iter_fields(holder):
                    if v is target:
                        setattr(holder, name, result[1])
                    elif isinstance(v, list) and any(x is target for x in v):
                        v[[j for j, x in enumerate(v) if x is target][0]] = result[1]
            text_src = ast.unparse(ast.fix_missing_locations(new))
            try:
                compile(text_src, "<mutant>", "exec")
            except SyntaxError:
                continue
            out.append((mid, text, node.lineno, text_src))
            if limit is not None and len(out) >= limit:
                return out
    return out


def test_mutants_made_in_place_are_those_of_a_fresh_copy_each():
    """Generation changes one tree and puts it back: every mutant's source is what a fresh
    copy of the module per mutant gives, and the module is left as it was."""
    from coursekit import paths

    real = (paths.REFERENCE / "activations.py").read_text(encoding="utf-8")
    kinds = set()
    for source, limit in ((SAMPLE, None), (real, 80)):
        got = [(m.id, m.description, m.line, m.source)
               for m in generate_mutants(source, limit=limit)]
        assert got == _fresh_copy_mutants(source, limit)
        kinds |= {mid.split("@")[0] for mid, *_ in got}
    assert kinds == {"op", "drop", "const", "axis"}, kinds


def test_a_mutant_compiles_as_its_whole_module_does():
    """The compile check of a mutant compiles only the top-level statement it changes, after
    the module's ``__future__`` imports: it fails exactly where compiling the whole text
    fails (a syntax error; a named expression in an annotation, an error under ``from
    __future__ import annotations``), and where the unchanged text does not compile every
    check compiles the whole text."""
    import ast

    from autograder.harness.mutation import _Unparsed

    good = "\n\ndef f(x):\n    return x + 1\n"
    pieces = [good, good.replace("x + 1", "x +"), good.replace("x + 1", "x + 2"),
              good.replace("return", "def g(y: (z := 1)):\n        pass\n    return")]
    for head in ("from __future__ import annotations\n", ""):
        text = _Unparsed(ast.parse(head + "x = 1\n" + good))
        check = text.checker()
        i = len(text.pieces) - 1
        failed = []
        for piece in pieces:
            try:
                compile(text.with_piece(i, piece), "<t>", "exec")
                whole = ""
            except SyntaxError as exc:
                whole = exc.msg
            try:
                check(piece, i)
                alone = ""
            except SyntaxError as exc:
                alone = exc.msg
            assert alone == whole, (piece, alone, whole)
            failed.append(bool(whole))
        assert failed == [False, True, False, True]
    broken = _Unparsed(ast.parse("def f():\n    return 1\n\n\ndef g():\n    nonlocal q\n"))
    with pytest.raises(SyntaxError):
        broken.checker()(broken.pieces[0], 0)


def test_a_mutant_package_is_the_package_build_package_makes(tmp_path):
    """Hard links to one base package plus the mutated file: the same files, bytes and
    bytecode as ``build_package(student_source=...)``, none for the mutated module."""
    import importlib.util

    from autograder.harness.mutation import _mutant_package
    from autograder.harness.package import build_package
    from coursekit import paths

    course, _ = _modules_with_suites()
    mods = tuple((m.number, m.slug) for m in course.modules)
    source = (paths.REFERENCE / "autograd.py").read_text(encoding="utf-8") + "\nX = 1\n"
    for d in ("base", "copy", "linked"):
        (tmp_path / d).mkdir()
    build_package(dest=tmp_path / "base", reference=paths.REFERENCE, module_number=5,
                  slug="autograd", student_source=None, all_modules=mods)
    build_package(dest=tmp_path / "copy", reference=paths.REFERENCE, module_number=5,
                  slug="autograd", student_source=source, all_modules=mods)
    _mutant_package(tmp_path / "base", tmp_path / "linked", slug="autograd", source=source)

    def tree(root):
        return {p.relative_to(root).as_posix(): p.read_bytes() if p.is_file() else None
                for p in sorted(root.rglob("*"))}

    assert tree(tmp_path / "linked") == tree(tmp_path / "copy")
    pkg = tmp_path / "linked" / "tinytorch"
    pyc = Path(importlib.util.cache_from_source(str(pkg / "autograd.py"), optimization=""))
    assert (pkg / "autograd.py").read_text() == source and not pyc.exists()
    assert (pkg / "tensor.py").stat().st_ino == (
        tmp_path / "base" / "tinytorch" / "tensor.py").stat().st_ino
    assert (pkg / "autograd.py").stat().st_nlink == 1


def test_kill_rate_on_the_stand_in_module(tmp_path):
    rep = run_mutation(suite_path=SUITE, reference=REF, slug="mini", number=1,
                       all_modules=((1, "mini"), (2, "later")))
    assert rep.total == 5 and len(rep.killed) == 3
    assert {m.line for m in rep.survived} == {28}, "add() is untested by the stand-in suite"
    assert rep.timed_out == [] and set(rep.reasons) == {m.id for m in rep.killed}
    assert set(rep.reasons.values()) <= {"wrong value", "raised"}, rep.reasons
    assert "Surviving mutants" in rep.to_markdown()

    suite_dir = tmp_path / "01_mini"
    shutil.copytree(SUITE.parent, suite_dir)
    (suite_dir / "equivalent_mutants.txt").write_text(
        "# add() is outside the graded surface\n"
        + "\n".join(m.id for m in rep.survived) + "\n")
    catalogue = tmp_path / "buggy.py"
    catalogue.write_text(
        "BUGS = {'sum_is_mean': [('float(self.data.sum())', 'float(self.data.mean())')]}\n")
    source = (REF / "mini.py").read_text(encoding="utf-8")
    rep2 = run_mutation(suite_path=suite_dir / "suite.py", reference=REF, slug="mini",
                        number=1, all_modules=((1, "mini"), (2, "later")),
                        bugs=catalogue_bugs(catalogue, source))
    assert rep2.rate == 1.0 and len(rep2.equivalent) == 2
    assert any(m.id == "bug:sum_is_mean" for m in rep2.killed)


LOOPS = CORRECT.replace("        return float(self.data.sum())",
                        "        while True:\n            pass")
SLEEPS = CORRECT.replace("        return float(self.data.sum())",
                         "        import time\n        time.sleep(3600)")
WRONG = CORRECT.replace("return float(self.data.sum())", "return float(self.data.mean())")


def test_a_mutant_that_never_stops_is_killed_by_timeout_and_recorded_so():
    """Deadlines are CPU seconds: the busy loop is stopped after its 0.5 CPU-s whatever the
    machine's load; the sleeper (no CPU) by the wall-clock backstop. A wrong value outranks a
    timeout as the reason."""
    assert LOOPS != CORRECT and SLEEPS != CORRECT and WRONG != CORRECT
    both = WRONG.replace("    def numpy(self):\n",
                         "    def numpy(self):\n        while True:\n            pass\n")
    bugs = [Mutant("bug:loops", "loops", 17, LOOPS), Mutant("bug:sleeps", "sleeps", 17, SLEEPS),
            Mutant("bug:wrong_and_loops", "both", 17, both)]
    lim = Limits(test_timeout_s=0.5, run_timeout_s=120.0, import_timeout_s=10.0)
    rep = run_mutation(suite_path=SUITE, reference=REF, slug="mini", number=1,
                       all_modules=((1, "mini"), (2, "later")), bugs=bugs, lines=set(),
                       limits=lim)
    assert rep.reasons == {"bug:loops": "timeout", "bug:sleeps": "timeout",
                           "bug:wrong_and_loops": "wrong value"}
    assert [m.id for m in rep.timed_out] == ["bug:loops", "bug:sleeps"]
    assert "## Killed by timeout" in rep.to_markdown()


def test_control_run_refuses_a_verdict_when_the_unmutated_module_fails(tmp_path):
    ref = tmp_path / "ref"
    shutil.copytree(REF, ref)
    # passes the trusted reference run, fails in the sandbox (which refuses this import):
    # stands for an environment in which every mutant would be "killed" for nothing
    (ref / "mini.py").write_text(CORRECT.replace(
        "import numpy as np\n", "import numpy as np\n\nimport autograder.suite\n"),
        encoding="utf-8")
    with pytest.raises(RuntimeError, match="unmutated reference fails"):
        run_mutation(suite_path=SUITE, reference=ref, slug="mini", number=1,
                     all_modules=((1, "mini"), (2, "later")), bugs=[], lines=set())


def test_mutation_cache_is_keyed_by_every_input(tmp_path, monkeypatch):
    """A cached verdict is reused only for byte-identical inputs; any change runs again."""
    from autograder.harness import mutation as mut
    from coursekit import paths

    course, suited = _modules_with_suites()
    module = suited[0]
    key = mut.inputs_digest(course, module, max_mutants=None, limits=mut.MUTANT_LIMITS)
    assert key == mut.inputs_digest(course, module, max_mutants=None,
                                    limits=mut.MUTANT_LIMITS)
    assert key != mut.inputs_digest(course, module, max_mutants=3, limits=mut.MUTANT_LIMITS)
    assert key != mut.inputs_digest(course, module, max_mutants=None, limits=Limits())
    fake = tmp_path / "repo"
    for sub in ("tinytorch_ref", "autograder", "coursekit", "coursebuild", "solutions"):
        shutil.copytree(paths.REPO_ROOT / sub, fake / sub,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    monkeypatch.setattr(paths, "REPO_ROOT", fake)
    monkeypatch.setattr(paths, "REFERENCE", fake / "tinytorch_ref")
    monkeypatch.setattr(paths, "AUTOGRADER", fake / "autograder")
    monkeypatch.setattr(paths, "SUITES", fake / "autograder" / "suites")
    monkeypatch.setattr(paths, "SOLUTIONS", fake / "solutions")
    monkeypatch.setattr(paths, "BUILD", fake / "build")
    base = mut.inputs_digest(course, module, max_mutants=None, limits=mut.MUTANT_LIMITS)
    assert base == key, "the digest depends on contents, not on where the clone lives"
    edits = [fake / "tinytorch_ref" / f"{module.slug}.py",
             fake / "autograder" / "suites" / module.name / "suite.py",
             paths.bugs_catalogue(module.name),
             fake / "autograder" / "harness" / "supervisor.py",
             fake / "solutions" / module.name / f"{module.name}.py"]
    for f in edits:
        before = f.read_bytes()
        f.write_bytes(before + b"\n# edited\n")
        assert mut.inputs_digest(course, module, max_mutants=None,
                                 limits=mut.MUTANT_LIMITS) != base, f
        f.write_bytes(before)

    # a stored report is returned only under its own key; a stale or corrupt one is a miss
    cache = fake / "build" / "c.json"
    rep = mut.MutationReport(module=module.name, killed=[Mutant("op@L1", "d", 1, "")],
                             reasons={"op@L1": "timeout"})
    mut._cache_save(cache, base, rep)
    hit = mut._cache_load(cache, base)
    assert hit is not None and hit.cached == base and hit.to_json() == rep.to_json()
    assert mut._cache_load(cache, "0" * 64) is None
    cache.write_text("{not json")
    assert mut._cache_load(cache, base) is None
    monkeypatch.setenv(mut.CACHE_ENV, "off")
    assert mut._cache_file(module) is None


def _modules_with_suites():
    from coursekit import paths
    from coursekit.course import load_course

    course = load_course()
    return course, [m for m in course.modules if (paths.SUITES / m.name / "suite.py").is_file()]


_COURSE, _SUITED = _modules_with_suites()


@pytest.mark.slow
@pytest.mark.parametrize("module", _SUITED, ids=[m.name for m in _SUITED])
def test_every_module_suite_kills_at_least_90_percent(module):
    """Issue 4 gate: mutants of the solution lines + the plausible bugs; >= 90% killed.

    The report lands in build/mutation/<module>.md. Mutants listed as equivalent must still
    exist (a stale list would silently hide survivors when the reference moves).
    """
    from autograder.harness.mutation import module_mutation
    from coursekit import paths

    rep = module_mutation(_COURSE, module)
    out = paths.BUILD / "mutation" / f"{module.name}.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(rep.to_markdown(), encoding="utf-8")
    eq_file = paths.SUITES / module.name / "equivalent_mutants.txt"
    listed = set()
    if eq_file.is_file():
        listed = {ln.split("#")[0].strip() for ln in eq_file.read_text().splitlines()} - {""}
    assert {m.id for m in rep.equivalent} == listed, (
        f"stale ids in {eq_file.name}: {sorted(listed - {m.id for m in rep.equivalent})}")
    assert any(m.id.startswith("bug:") for m in rep.killed), "plausible bugs were not run"
    assert rep.rate >= 0.9, (f"{module.name}: kill rate {rep.rate:.1%} < 90%; survivors: "
                             f"{[m.id for m in rep.survived][:10]} (report: {out})")
    # one bug, one charge: the case that kills a mutant grades the unit the mutant is in
    from autograder.harness.goldens import load_suite

    suite = load_suite(paths.SUITES / module.name / "suite.py")
    source = (paths.REFERENCE / f"{module.slug}.py").read_text(encoding="utf-8")
    foreign = rep.foreign_kills(suite, source)
    assert foreign == [], (f"{module.name}: mutants killed first by another unit's case "
                           f"(mutant, its unit, case, case's unit): {foreign[:10]}")


# ----------------------------------------------------------------------------- case selection
SCALED = CORRECT + textwrap.dedent('''

    def _default_scale():
        return 2


    SCALE = _default_scale()


    def make_scaler():
        def scaler(x, k=3 + 1):
            return x * k
        return scaler


    def scaled(x):
        return make_scaler()(x) * SCALE
''')
SCALED_CASE = textwrap.dedent('''

    @suite.case(points=1, hint="Scaled by the default and the module's scale.")
    def scaled_value(tt, rng):
        return tt.scaled(float(rng.integers(1, 9)))  # (tt.mini.scaled)
''')


def _scaled_module(tmp_path: Path) -> tuple[Path, Path]:
    """The stand-in module with a function run at import time (module-level state) and a
    nested function's default argument, and a suite whose last case alone reaches them."""
    ref = tmp_path / "ref"
    shutil.copytree(REF, ref)
    (ref / "mini.py").write_text(SCALED, encoding="utf-8")
    init = ref / "__init__.py"
    init.write_text(init.read_text(encoding="utf-8").replace(
        "from .mini import Vec, add, total", "from .mini import Vec, add, scaled, total"),
        encoding="utf-8")
    suite_dir = tmp_path / "01_mini"
    suite_dir.mkdir()
    (suite_dir / "suite.py").write_text(SUITE.read_text(encoding="utf-8") + SCALED_CASE,
                                        encoding="utf-8")
    return ref, suite_dir / "suite.py"


def test_case_selection_keeps_every_verdict_with_import_time_code_and_defaults(
        tmp_path, monkeypatch):
    """The coverage-guided run gives the full run's report, mutant by mutant: a mutant in a
    function the import runs (``SCALE``) runs every case (it is killed by the last one, which
    no line of the function reaches), a mutant of a nested default runs only the case that
    reaches its ``def``. Catalogue bugs (whole-source edits): one of the module-level
    assignment and one of the function the import calls run every case, one of a nested
    function the cases that call its enclosing function, one of a method the cases that call
    it, and one of a function no case calls survives without a run. Ignoring what the import
    ran gives another report: the oracle sees a wrong selection."""
    from autograder.harness import mutation as mut

    ref, suite_path = _scaled_module(tmp_path)
    lines = {i for i, text in enumerate(SCALED.splitlines(), 1)
             if "return 2" in text or "k=3 + 1" in text or "x * k" in text}
    def bug(name: str, old: str, new: str) -> Mutant:
        assert SCALED.count(old) == 1
        return Mutant(f"bug:{name}", name, 0, SCALED.replace(old, new))

    bugs = [bug("scale_plus_one", "SCALE = _default_scale()", "SCALE = _default_scale() + 1"),
            bug("default_scale_three", "return 2", "return 3"),
            bug("scaler_adds", "return x * k", "return x + k"),
            bug("sum_is_mean", "float(self.data.sum())", "float(self.data.mean())"),
            bug("total_of_two", "return sum(xs)", "return sum(xs[:2])"),
            bug("add_subtracts", "return a + b", "return a - b")]
    kw = {"suite_path": suite_path, "reference": ref, "slug": "mini", "number": 1,
          "all_modules": ((1, "mini"), (2, "later")), "lines": lines, "bugs": bugs}
    full = run_mutation(select=False, **kw)
    chosen: dict[str, set[str] | None] = {}
    real_select = mut.select_cases

    def spy(m, coverage):
        chosen[m.id] = real_select(m, coverage)
        return chosen[m.id]

    monkeypatch.setattr(mut, "select_cases", spy)
    selected = run_mutation(select=True, **kw)
    assert selected.to_json() == full.to_json()
    assert len(full.killed) >= 10 and [m.id for m in full.survived] == ["bug:add_subtracts"]
    assert set(full.killed_by.values()) == {"scaled_value", "sum_value",
                                            "total_of_empty_raises"}
    assert full.killed_by["bug:sum_is_mean"] == "sum_value"
    # the catalogue's bugs: one at module level and one in a function the import calls run
    # every case; one in a nested function runs the cases that call its enclosing function
    assert chosen["bug:scale_plus_one"] is None and chosen["bug:default_scale_three"] is None
    assert chosen["bug:scaler_adds"] == {"scaled_value"}
    assert chosen["bug:sum_is_mean"] == {"sum_value"}
    assert chosen["bug:total_of_two"] == {"total_of_empty_raises"}
    assert chosen["bug:add_subtracts"] == set()  # no case calls add(): it survives unrun
    at_import = [mid for mid in chosen if "@_default_scale+" in mid]
    default = [mid for mid in chosen if "@make_scaler.scaler+-1:" in mid]
    assert at_import and default
    assert all(chosen[mid] is None for mid in at_import), chosen
    assert all(chosen[mid] == {"scaled_value"} for mid in default), chosen

    real_coverage = mut.case_coverage

    def forget_the_import(**kw):
        cov = real_coverage(**kw)
        return mut.Coverage(cov.cases, frozenset())

    monkeypatch.setattr(mut, "case_coverage", forget_the_import)
    wrong = run_mutation(select=True, **kw)
    assert {m.id for m in wrong.survived} == {*at_import, "bug:default_scale_three",
                                              "bug:add_subtracts"}
    assert wrong.to_json() != full.to_json()


def test_statement_spans_hold_decorators_and_continuation_lines():
    """A node's span is its innermost statement's whole extent, so a line event CPython
    reports for any part of it (a folded constant, a continuation line) falls inside."""
    import ast

    from autograder.harness.mutation import statement_spans

    src = textwrap.dedent('''
        def f(x):
            y = (x +
                 1)
            @deco(2)
            def g(k=3):
                return k
            return (1,
                    2)
    ''')
    tree = ast.parse(src)
    spans = statement_spans(tree)
    got = sorted((n.lineno, n.value, spans[id(n)]) for n in ast.walk(tree)
                 if isinstance(n, ast.Constant) and isinstance(n.value, int))
    assert got == [(4, 1, (3, 4)), (5, 2, (5, 7)), (6, 3, (5, 7)), (8, 1, (8, 9)),
                   (9, 2, (8, 9))], got
    muts = generate_mutants(src)
    assert {m.span for m in muts if "@f+0" in m.id} == {(3, 4)}


CLASSY = textwrap.dedent('''
    """A module."""
    import numpy as np

    LIMIT = 3


    class Box:
        """A box."""
        size = 2

        def __init__(self, n=1):
            self.n = n  # a comment

        def area(self):
            """Its area."""
            return self.n * self.size

        @property
        def items(self):
            yield self.n


    def make(n):
        def inner(k=4):
            return k + n
        return inner()
''')


@pytest.mark.parametrize(("old", "new", "bodies"), [
    ("return self.n * self.size", "return self.n + self.size", ((17, 17),)),
    ("return inner()", "return inner() - 1", ((25, 27),)),
    ("return k + n", "return k - n", ((25, 27),)),
    ("self.n = n  # a comment", "self.n = n  # another comment", ()),
    ("self.n = n  # a comment", "self.n = (\n            n)", ()),
    ("return self.n * self.size", "x = 1\n        return self.n * self.size * x", ((17, 17),)),
    ("LIMIT = 3", "LIMIT = 4", None),
    ("size = 2", "size = 3", None),
    ("def __init__(self, n=1)", "def __init__(self, n=2)", None),
    ("def inner(k=4)", "def inner(k=5)", ((25, 27),)),
    ('"""Its area."""', '"""Its surface."""', None),
    ("@property", "@staticmethod", None),
    ("yield self.n", "return self.n", None),
    ("class Box:", "class Box(object):", None),
    ("import numpy as np", "import numpy", None),
    ("return self.n * self.size", "return self.n * self.size\n\n    def extra(self):\n"
     "        return 0", None),
    ("return self.n * self.size", "return self.n *", None),
])
def test_changed_bodies_are_the_replaced_function_bodies_only(old, new, bodies):
    """A whole-source bug's reach (``changed_bodies``): the reference's lines of the function
    bodies it replaces (a nested function's default is part of its enclosing body); a bug
    that changes only comments or layout replaces none; anything that runs or is seen at
    import (module and class statements, defaults and decorators of a method, docstrings, a
    generator made a plain function, bases, a new method) or does not parse gives None."""
    from autograder.harness.mutation import changed_bodies

    assert CLASSY.count(old) == 1
    lines = CLASSY.splitlines()
    assert lines[16].strip() == "return self.n * self.size" and lines[24].startswith("    def")
    assert changed_bodies(CLASSY, CLASSY.replace(old, new)) == bodies
    assert changed_bodies(CLASSY, CLASSY) == ()


def _real_module_kwargs(name: str, every: int | None = None, limit: int | None = None):
    from autograder.harness.mutation import MUTANT_LIMITS
    from coursekit import paths
    from coursekit.export import solution_line_numbers
    from coursekit.paths import solution_path

    module = _COURSE.module(name)
    source = (paths.REFERENCE / f"{module.slug}.py").read_text(encoding="utf-8")
    lines = solution_line_numbers(solution_path(module), slug=module.slug,
                                  number=module.number, title=module.title)
    if every:  # a sample of lines spread over the module's units (and so its stages)
        lines = {m.line for m in generate_mutants(source, lines=lines)[::every]}
    bugs = catalogue_bugs(paths.bugs_catalogue(module.name), source)
    return {"suite_path": paths.SUITES / module.name / "suite.py",
            "reference": paths.REFERENCE, "slug": module.slug, "number": module.number,
            "all_modules": tuple((x.number, x.slug) for x in _COURSE.modules),
            "lines": lines, "max_mutants": limit, "bugs": bugs, "limits": MUTANT_LIMITS}


@pytest.mark.slow
@pytest.mark.parametrize(("name", "every", "limit"), [("01_tensor", None, 10),
                                                       ("12_attention", 36, None)])
def test_case_selection_gives_the_full_runs_report_on_real_modules(name, every, limit,
                                                                  monkeypatch):
    """Module 01 and module 12 (units staged with stand-ins), on a sample of their AST
    mutants and every bug of their catalogues: the coverage-guided run's report (killed,
    survived, reasons, killed_by) is the full run's, and the selection does leave cases
    out, for AST mutants and for bugs. (A selection that keeps only the later half of the
    cases that reach a change gives module 12 another report; so does a selection that
    ignores what the import runs, the hand-made module's.)"""
    from autograder.harness import mutation as mut

    kw = _real_module_kwargs(name, every, limit)
    full = run_mutation(select=False, **kw)
    sizes: dict[str, int] = {}
    real_select = mut.select_cases

    def spy(m, coverage):
        got = real_select(m, coverage)
        sizes[m.id] = -1 if got is None else len(got)
        return got

    monkeypatch.setattr(mut, "select_cases", spy)
    selected = run_mutation(select=True, **kw)
    assert selected.to_json() == full.to_json()
    assert full.total >= 25 and full.killed
    n_cases = len(mut.load_suite(kw["suite_path"]).cases)
    for bugs in (True, False):
        assert any(0 <= k < n_cases for mid, k in sizes.items()
                   if mid.startswith("bug:") == bugs), sizes


def test_the_traced_run_sees_the_same_lines_in_a_fresh_child_and_a_forked_one(tmp_path):
    """``fork=False``: the coverage a fresh interpreter records is the fork server child's,
    and it names the lines the cases and the import really run."""
    import contextlib
    import tempfile

    from autograder.harness import mutation as mut
    from autograder.harness.goldens import compute_expected, load_suite, standin_payloads
    from autograder.harness.package import build_package
    from autograder.harness.supervisor import start_zygote

    ref, suite_path = _scaled_module(tmp_path)
    suite = load_suite(suite_path)
    modules = ((1, "mini"), (2, "later"))
    exp = compute_expected(suite_path=suite_path, suite=suite, reference=ref, slug="mini",
                           number=1, all_modules=modules, limits=mut.MUTANT_LIMITS)
    got = []
    with contextlib.ExitStack() as stack:
        base = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        build_package(dest=base, reference=ref, module_number=1, slug="mini",
                      student_source=None, all_modules=modules)
        for zygote in (None, stack.enter_context(start_zygote(suite_file=suite_path))):
            got.append(mut.case_coverage(
                mutant=Mutant("control:traced", "", 0, SCALED), suite=suite,
                suite_path=suite_path, exp=exp, base=base, slug="mini",
                limits=mut.MUTANT_LIMITS, payloads=standin_payloads(suite, ref / "mini.py"),
                zygote=zygote))
    assert got[0] == got[1] and got[0] is not None
    lines = SCALED.splitlines()

    def at(text):
        return next(i for i, t in enumerate(lines, 1) if text in t)

    assert {at("return 2"), at("SCALE = _default_scale()")} <= got[0].imported
    assert at("return x * k") in got[0].cases["scaled_value"]
    assert not any(at("return x * k") in got[0].cases[c] for c in got[0].cases
                   if c != "scaled_value")
    assert at("return float(self.data.sum())") in got[0].cases["sum_value"]
