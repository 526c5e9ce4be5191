"""Which slow tests a change needs (``pytest --tier=affected``, ``make test-affected``: the
quick local selection; CI's ``make test`` runs every tier).

The fast tier always runs whole: it holds the module contracts (invariant 2, docs/architecture.md), the
leak scan, the harness, the gradebook. Of the slow tiers, a run keeps the tests whose inputs
changed since the last commit on which *every* tier passed in a clean clone, recorded in
``.ci/proven`` by ``make prove`` (docs/testing.md, *The quick local selection*). The rules
only ever widen: whatever they cannot place runs everything.

* No usable record (missing, unreadable, another Python, a commit this clone does not have or
  that is not an ancestor of HEAD, no git): every test runs.
* A changed path under ``docs/``, the top ``README.md``, the record itself or ``.ci/stress``
  needs no slow test: no slow test reads them except the parity tier's, and the parity tier
  (seconds in all) always runs. ``tests/test_impact.py`` checks that no slow test file and no
  package code names a ``docs`` path.
* A changed file that belongs to one module (its notebook, solution, released folder, hidden
  suite, buggy catalogue or alternatives) runs the slow tests of that module and of every
  later one (a module builds on the ones before it, never on later ones), those of the
  milestones that need any of them, and every slow test that names no module.
* A changed test file (``tests/**/test_*.py``) runs its own tests and those of every test file
  that imports it (some share their helpers that way).
* Anything else (the reference package, the harness, the CLI, course.yml, a conftest, the
  requirements, the Makefile, ...) runs every test.

A slow test names a module or a milestone through its parameters (``[07_training-explicit]``,
``[xor_1969-args1]``) or its file (the files about one milestone's task, :data:`FILE_NAMES`); a
milestone stands for the highest module it requires or is graded with.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

PROVEN = ".ci/proven"

#: files, and folders (ending in /), that no slow test outside the parity tier reads
INERT = ("docs/", "README.md", PROVEN, ".ci/stress")
#: slow tiers that run in every scope (cheap, and they read docs/)
ALWAYS = ("parity",)

#: where a module's own files live; ``{m}`` is its folder name, e.g. ``07_training`` (the
#: suite's folder holds its buggy catalogue, ``bugs.py``, too)
MODULE_PATHS = ("assignments/{m}/", "solutions/{m}/", "student_release/{m}/",
                "autograder/suites/{m}/", "tests/fixtures/alternatives/{m}/")

#: test files about one milestone's task, whose parameters need not name it
FILE_NAMES = {"tests/milestones/test_mlperf.py": ("mlperf_2018",),
              "tests/milestones/test_transformer.py": ("transformer_2017",
                                                       "transformer_reversal_2017"),
              "tests/milestones/test_cifar.py": ("cnn_cifar_1998",)}

_TEST_FILE = re.compile(r"^tests/(.+/)?test_[^/]+\.py$")


@dataclass(frozen=True)
class Scope:
    """What a run keeps of the slow tiers; ``reason`` says why, in one line."""

    everything: bool
    reason: str
    since: str | None = None
    first_module: int | None = None
    test_files: tuple[str, ...] = ()
    changed: tuple[str, ...] = field(default=(), repr=False)

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> "Scope":
        data = json.loads(text)
        data["test_files"] = tuple(data["test_files"])
        data["changed"] = tuple(data["changed"])
        return cls(**data)

    def keeps(self, test_file: str, tiers: list[str], modules: set[int]) -> bool:
        """Whether a test runs: ``test_file`` relative to the repository, its tiers (none: the
        fast tier), and the modules its parameters name (see :func:`modules_named`)."""
        if not tiers or self.everything or any(t in ALWAYS for t in tiers):
            return True
        if test_file in self.test_files:
            return True
        if self.first_module is None:
            return False
        return not modules or max(modules) >= self.first_module


@dataclass(frozen=True)
class Proven:
    commit: str
    python: str


def read_proven(path: Path) -> Proven:
    """The record ``make prove`` writes; ValueError names the file and the field."""
    fields: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition(" ")
            fields[key] = value.strip()
    commit = fields.get("commit", "")
    if not re.fullmatch(r"[0-9a-f]{40}", commit):
        raise ValueError(f"{path}: field 'commit' must be a full 40-hex commit id, got {commit!r}")
    python = fields.get("python", "")
    if not re.fullmatch(r"\d+\.\d+", python):
        raise ValueError(f"{path}: field 'python' must be like 3.11, got {python!r}")
    return Proven(commit, python)


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, timeout=120)


def changed_since(repo: Path, commit: str) -> list[str] | str:
    """The paths that differ between ``commit`` and the working tree (staged or not, deleted,
    untracked and not ignored), or a one-line reason why they cannot be known."""
    try:
        if _git(repo, "cat-file", "-e", f"{commit}^{{commit}}").returncode != 0:
            return f"the proven commit {commit[:12]} is not in this clone"
        if _git(repo, "merge-base", "--is-ancestor", commit, "HEAD").returncode != 0:
            return f"the proven commit {commit[:12]} is not an ancestor of HEAD"
        diff = _git(repo, "diff", "--name-only", "--no-renames", "-z", commit)
        new = _git(repo, "ls-files", "--others", "--exclude-standard", "-z")
    except (OSError, subprocess.SubprocessError) as exc:
        return f"git failed: {exc}"
    if diff.returncode or new.returncode:
        return f"git diff failed: {(diff.stderr or new.stderr).strip()[:200]}"
    return sorted({p for p in (diff.stdout + new.stdout).split("\0") if p})


def _under(path: str, spec: str) -> bool:
    """Whether ``path`` is the file ``spec`` or lies in the folder ``spec`` (ending in /)."""
    return path == spec or (spec.endswith("/") and path.startswith(spec))


def module_of(path: str, modules: dict[str, int]) -> int | None:
    """The module a path belongs to (its number), or None."""
    for name, number in modules.items():
        if any(_under(path, pattern.format(m=name)) for pattern in MODULE_PATHS):
            return number
    return None


def classify(paths: list[str], modules: dict[str, int], since: str | None = None) -> Scope:
    """The scope a set of changed paths needs (the rules in this module's docstring)."""
    first: int | None = None
    tests: set[str] = set()
    for path in paths:
        if any(_under(path, spec) for spec in INERT):
            continue
        number = module_of(path, modules)
        if number is not None:
            first = number if first is None else min(first, number)
        elif _TEST_FILE.match(path):
            tests.add(path)
        else:
            return Scope(True, f"{path} changed since {_short(since)}: every test runs",
                         since, changed=tuple(paths))
    parts = []
    if first is not None:
        parts.append(f"module {first:02d} and later")
    if tests:
        parts.append(f"{len(tests)} changed test file(s)")
    what = " + ".join(parts) if parts else "none (only paths no slow test reads)"
    return Scope(False, f"{len(paths)} path(s) changed since {_short(since)}; slow tests: "
                        f"{what}; fast and parity tiers: all", since, first,
                 tuple(sorted(tests)), tuple(paths))


def _short(commit: str | None) -> str:
    return f"the proven commit {commit[:12]}" if commit else "the proven commit"


def scope(repo: Path, modules: dict[str, int]) -> Scope:
    """The scope of a run in ``repo``: from ``.ci/proven`` and git, or everything."""
    record = repo / PROVEN
    if not record.is_file():
        return Scope(True, f"no {PROVEN} (make prove writes it): every test runs")
    try:
        proven = read_proven(record)
    except (OSError, ValueError) as exc:
        return Scope(True, f"{exc}: every test runs")
    here = f"{sys.version_info[0]}.{sys.version_info[1]}"
    if proven.python != here:
        return Scope(True, f"{PROVEN} was proven on Python {proven.python}, this is {here}: "
                           "every test runs")
    paths = changed_since(repo, proven.commit)
    if isinstance(paths, str):
        return Scope(True, f"{paths}: every test runs")
    found = classify(paths, modules, proven.commit)
    if found.test_files:
        found = replace(found, test_files=tuple(sorted(with_importers(repo, set(found.test_files)))))
    return found


def _imported(tree: ast.AST) -> set[str]:
    """The last part of every name a file imports (``tests.autograder.test_x`` -> ``test_x``)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.rsplit(".", 1)[-1] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.update(a.name for a in node.names)
            if node.module:
                names.add(node.module.rsplit(".", 1)[-1])
    return names


def with_importers(repo: Path, files: set[str]) -> set[str]:
    """``files`` and every test file that imports one of them, directly or through another."""
    imports: dict[str, set[str]] = {}
    for path in sorted((repo / "tests").rglob("test_*.py")):
        try:
            imports[path.relative_to(repo).as_posix()] = _imported(
                ast.parse(path.read_text(encoding="utf-8")))
        except (OSError, SyntaxError, ValueError):
            continue  # it fails its own collection, in the fast tier
    found = set(files)
    while True:
        stems = {Path(f).stem for f in found}
        more = {f for f, names in imports.items() if f not in found and names & stems}
        if not more:
            return found
        found |= more


def course_names(course: Any) -> tuple[dict[str, int], dict[str, int]]:
    """Module folder names -> numbers, and milestone ids -> the highest module each needs."""
    modules = {m.name: m.number for m in course.modules}
    milestones = {s.id: max([*s.requires, s.graded_with]) for s in course.milestones}
    return modules, milestones


def modules_named(nodeid: str, modules: dict[str, int], milestones: dict[str, int]) -> set[int]:
    """The modules a test names, by its parameters or by its file (:data:`FILE_NAMES`); a
    milestone names the highest module it needs."""
    tokens = list(FILE_NAMES.get(nodeid.split("::", 1)[0], ()))
    if "[" in nodeid:
        tokens += re.split(r"[-\[\]]", nodeid[nodeid.index("["):])
    found: set[int] = set()
    for token in tokens:
        if token in modules:
            found.add(modules[token])
        elif token in milestones:
            found.add(milestones[token])
    return found
