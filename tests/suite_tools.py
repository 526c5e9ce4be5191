"""Instructor-side helpers: score a package variant against a hidden suite, in-process.

These run trusted code only (the reference, our own buggy fixtures), so no sandbox is needed;
the real grader (autograder.harness) runs student code in a child process instead.

A *variant* is the reference package with one module file replaced: the student-release stub,
a hand-written buggy fixture, or a mutant. Each variant is imported under a fresh package name
so variants never share ``sys.modules`` entries.
"""

from __future__ import annotations

import atexit
import functools
import importlib
import itertools
import shutil
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from autograder import standins as _standins
from autograder.harness.child import _trace_lines
from autograder.harness.mutation import (
    Coverage,
    cases_reaching,
    changed_bodies,
    read_catalogue,
)
from autograder.harness.package import _trusted_bytecode
from autograder.suite import Case, Suite, Timed, TimedResult, compare, run_case
from coursekit import paths

_counter = itertools.count()
_tmp: list[Path] = []


def _variants_root() -> Path:
    """This process's private folder for variant packages (made on first use, removed at exit)."""
    if not _tmp:
        _tmp.append(Path(tempfile.mkdtemp(prefix="tt-variants-")))
        atexit.register(shutil.rmtree, _tmp[0], True)
    return _tmp[0]


def load_suite(module_name: str) -> Suite:
    """Import ``autograder/suites/<module_name>/suite.py`` and return its ``suite``."""
    from autograder.harness.goldens import load_suite as load_suite_file

    return load_suite_file(paths.SUITES / module_name / "suite.py")


def load_variant(replacements: dict[str, str | Path] | None = None) -> ModuleType:
    """Import a copy of tinytorch_ref with some module files replaced.

    Args:
        replacements: ``{"tensor": source_text_or_path}``; ``tensor`` -> ``tensor.py``.
    """
    root, name = _variant_copy(replacements)
    return _import_variant(root, name)


def _variant_copy(replacements: dict[str, str | Path] | None) -> tuple[Path, str]:
    """A variant package's files (``root/name/``), not imported yet."""
    name = f"ttvariant_{next(_counter)}"
    root = _variants_root() / name
    shutil.copytree(paths.REFERENCE, root / name,
                    ignore=shutil.ignore_patterns("__pycache__"))
    for slug, src in (replacements or {}).items():
        text = Path(src).read_text(encoding="utf-8") if isinstance(src, Path) else src
        (root / name / f"{slug}.py").write_text(text, encoding="utf-8")
    # checked-hash bytecode beside each file, compiled once per distinct source in this process
    # (as the grader packages a submission): a variant differs from the reference in one file,
    # and compiling the other twenty again for every variant was most of its import
    _trusted_bytecode(root / name, set(), (paths.REFERENCE,))
    return root, name


def _import_variant(root: Path, name: str) -> ModuleType:
    sys.path.insert(0, str(root))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(root))


@functools.lru_cache(maxsize=None)
def reference_coverage(module_name: str) -> Coverage:
    """The lines of the module's reference file each hidden case runs (``score_case`` on a
    fresh copy of the reference, stand-ins as grading puts them) and the lines its import runs,
    recorded by the sandboxed child's own tracer: the in-process twin of the mutation gate's
    traced control run (:func:`autograder.harness.mutation.case_coverage`)."""
    suite = load_suite(module_name)
    slug = module_name.split("_", 1)[1]
    root, name = _variant_copy(None)
    before = sys.gettrace()
    ran = _trace_lines(str(root / name / f"{slug}.py"))
    try:
        package = _import_variant(root, name)
        imported = frozenset(ran)
        cases: dict[str, frozenset[int]] = {}
        for case in suite.cases:
            ran.clear()
            result = score_case(suite, case, package)
            assert result.passed, f"{module_name}: the reference fails {case.name}"
            cases[case.name] = frozenset(ran)
    finally:
        sys.settrace(before)
        threading.settrace(before)  # type: ignore[arg-type]
    return Coverage(cases, imported)


def cases_reached(module_name: str, source: str) -> set[str] | None:
    """The hidden cases that can tell ``source`` (the module's reference with function bodies
    replaced: a catalogue bug, a stub) from the reference: the mutation gate's rule
    (:func:`autograder.harness.mutation.cases_reaching` over the bodies ``changed_bodies``
    finds, on :func:`reference_coverage`), sound for the same reason: a case that never
    reaches a replaced body runs the reference's code, and cases do not depend on each other.
    None (every case) when ``source`` changes more than function bodies or the import runs
    such a line."""
    slug = module_name.split("_", 1)[1]
    bodies = changed_bodies((paths.REFERENCE / f"{slug}.py").read_text(encoding="utf-8"), source)
    if not bodies:  # (no coverage is traced for it)
        return None
    return cases_reaching(bodies, reference_coverage(module_name))


@dataclass
class CaseResult:
    case: Case
    passed: bool
    message: str

    @property
    def score(self) -> float:
        return self.case.points if self.passed else 0.0


_expected_cache: dict[tuple[str, str], object] = {}


def expected_value(suite: Suite, case: Case) -> object:
    key = (suite.module, case.name)
    if key not in _expected_cache:
        import tinytorch_ref

        _expected_cache[key] = run_case(case, tinytorch_ref)
    return _expected_cache[key]


_payloads: dict[str, dict[str, _standins.Compiled]] = {}


def standin_code(suite: Suite) -> dict[str, _standins.Compiled]:
    """The suite's units as stand-ins, compiled from the repository's reference."""
    if suite.module not in _payloads:
        slug = suite.module.split("_", 1)[1]
        source = (paths.REFERENCE / f"{slug}.py").read_text(encoding="utf-8")
        units = {u.name: u.entries for u in suite.units.values()}
        _payloads[suite.module] = _standins.compile_payloads(_standins.extract(source, units))
    return _payloads[suite.module]


def run_with_standins(suite: Suite, case: Case, package: ModuleType,
                      seed: int | None = None) -> object:
    """``run_case`` with the case's stand-ins in place in ``package`` (as the grading child
    puts them), then put back; the reference itself needs none."""
    units = suite.standins(case)
    if not units or package.__name__ == "tinytorch_ref":
        return run_case(case, package, seed)
    slug = suite.module.split("_", 1)[1]
    module = importlib.import_module(f"{package.__name__}.{slug}")
    code = standin_code(suite)
    restore = _standins.apply(module, [code[u] for u in units], package.__name__)
    try:
        return run_case(case, package, seed)
    finally:
        restore()


def score_variant(suite: Suite, package: ModuleType,
                  only: set[str] | None = None) -> list[CaseResult]:
    """Run every case against ``package`` (with its stand-ins, as grading does) and compare
    with the reference, in-process. A timed case is decided on what it commits, as in a
    reference or mutation run (nothing timed). ``only``: the cases the package can fail
    (:func:`cases_reached`); the others pass without running."""
    return [score_case(suite, case, package) if only is None or case.name in only
            else CaseResult(case, True, "not reached by the change") for case in suite.cases]


def first_lost_case(suite: Suite, package: ModuleType) -> CaseResult | None:
    """The first case (in the suite's order) that ``package`` fails and that is worth points,
    running no case after it; None when it loses no point. For a question that one lost point
    answers ("does this bug cost anything?"), without running the rest of the suite."""
    for case in suite.cases:
        result = score_case(suite, case, package)
        if not result.passed and case.points > 0:
            return result
    return None


def score_case(suite: Suite, case: Case, package: ModuleType) -> CaseResult:
    """One case of :func:`score_variant`."""
    expected = expected_value(suite, case)
    if isinstance(expected, Timed):
        expected = expected.value
    try:
        got = run_with_standins(suite, case, package)
    except Exception as exc:  # noqa: BLE001 - any failure of the variant fails the case
        return CaseResult(case, False, f"{type(exc).__name__}: {exc}")
    if isinstance(got, Timed):
        got = TimedResult(got.value)
    ok, msg = compare(got, expected, case)
    return CaseResult(case, ok, msg)


def total(results: list[CaseResult]) -> float:
    return sum(r.score for r in results)


def public_tests(module_name: str, release_dir: Path | None = None) -> list[tuple[str, object]]:
    """The otter public test functions of a released module as (qualified name, function).

    otter's ``test_case`` decorator is shimmed, so otter is not imported.
    """
    import types

    shim = types.ModuleType("otter.test_files")
    shim.test_case = lambda **_kw: (lambda fn: fn)  # type: ignore[attr-defined]
    saved = {k: sys.modules.get(k) for k in ("otter", "otter.test_files")}
    sys.modules["otter"] = types.ModuleType("otter")
    sys.modules["otter.test_files"] = shim
    out = []
    try:
        for path in sorted(((release_dir or paths.RELEASE) / module_name / "tests").glob("*.py")):
            ns: dict = {}
            exec(compile(path.read_text(), str(path), "exec"), ns)  # noqa: S102 - our own file
            out += [(f"{path.stem}::{k}", v) for k, v in ns.items()
                    if k.startswith("test_") and k != "test_case" and callable(v)]
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    return out


def call_with_globals(fn, namespace: dict) -> None:
    """Call a public test, binding its parameters by name from a module's globals."""
    import inspect

    params = inspect.signature(fn).parameters
    missing = [p for p in params if p not in namespace]
    if missing:
        raise AssertionError(f"public test needs names the module does not define: {missing}")
    fn(**{p: namespace[p] for p in params})


def _catalogue(module_name: str) -> dict:
    """What ``autograder/suites/<module>/bugs.py`` (``paths.bugs_catalogue``) defines."""
    path = paths.bugs_catalogue(module_name)
    assert path.is_file(), f"no buggy catalogue for {module_name}: {path}"
    return read_catalogue(path)


def buggy_catalogue(module_name: str) -> tuple[str, dict[str, list[tuple[str, str]]]]:
    """(slug, {bug name: [(old, new), ...]}) from ``autograder/suites/<module>/bugs.py``."""
    ns = _catalogue(module_name)
    return ns["SLUG"], ns["BUGS"]


def apply_edits(text: str, edits: list[tuple[str, str]], *, what: str = "") -> str:
    """Apply (old, new) edits; each ``old`` must occur exactly once in the current text."""
    for old, new in edits:
        n = text.count(old)
        if n != 1:
            raise AssertionError(f"{what}: edit applies {n} times (expected once); the reference "
                                 f"changed — update the catalogue entry: {old[:60]!r}")
        text = text.replace(old, new)
    return text


def buggy_source(module_name: str, bug: str) -> tuple[str, str]:
    """(slug, source) of one buggy variant built from the current reference."""
    slug, bugs = buggy_catalogue(module_name)
    ref = (paths.REFERENCE / f"{slug}.py").read_text(encoding="utf-8")
    return slug, apply_edits(ref, bugs[bug], what=f"{module_name}/{bug}")


def notebook_namespace(package: ModuleType, upto: int) -> dict:
    """What a module's notebook has in scope: numpy and every module file up to ``upto``."""
    import numpy as np

    from coursekit.course import load_course

    ns: dict = {"np": np}
    for m in load_course().modules:
        if m.number > upto:
            break
        try:
            mod = importlib.import_module(f"{package.__name__}.{m.slug}")
        except ModuleNotFoundError:
            continue
        ns.update({k: v for k, v in vars(mod).items() if not k.startswith("__")})
    return ns


# ----------------------------------------------------------------------------- charges
def unit_of_entry(suite: Suite, entry: str | None) -> str | None:
    """The unit a definition belongs to (``"GPT.forward"`` is in a unit that lists it or
    ``"GPT"``); None when no unit lists it."""
    if entry is None:
        return None
    for u in suite.units.values():
        if entry in u.entries or entry.partition(".")[0] in u.entries:
            return u.name
    return None


def unit_of_line(suite: Suite, source: str, line: int) -> str | None:
    return unit_of_entry(suite, _standins.covering_entry(source, line))


def mutated_units(module_name: str, bug: str) -> set[str]:
    """The units whose definitions a buggy fixture edits (its header comment aside)."""
    slug, bugs = buggy_catalogue(module_name)
    suite = load_suite(module_name)
    ref = (paths.REFERENCE / f"{slug}.py").read_text(encoding="utf-8")
    out: set[str] = set()
    for old, _new in bugs[bug]:
        if old.startswith("# Generated by tito export"):
            continue
        first = ref[: ref.index(old)].count("\n") + 1
        for line in range(first, first + max(1, old.rstrip("\n").count("\n") + 1)):
            unit = unit_of_line(suite, ref, line)
            if unit is not None:
                out.add(unit)
    return out


def dependants(module_name: str) -> dict[str, dict[str, str]]:
    """``DEPENDANTS`` of a buggy catalogue: ``{bug: {case: why it genuinely depends}}``."""
    return dict(_catalogue(module_name).get("DEPENDANTS", {}))
