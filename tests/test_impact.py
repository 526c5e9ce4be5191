"""``--tier=affected`` (``make test-affected``, the quick local selection): which slow tests a
change needs.

Oracles: hand-made path lists with the scope each must give, a throwaway git repository for
the record's every failure mode, and a real collection in a clone of this repository, compared
with ``--tier=fast`` and ``--tier=all`` counts of the same clone. The rules' assumptions (no
slow test reads docs/, no test file imports another) are checked over the sources.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import impact
import pytest

from coursekit.course import load_course
from coursekit.paths import REPO_ROOT

MODULES, MILESTONES = impact.course_names(load_course())
SHA = "a" * 40


def _scope(*paths: str) -> impact.Scope:
    return impact.classify(list(paths), MODULES, SHA)


def test_paths_no_slow_test_reads_keep_only_the_fast_and_parity_tiers() -> None:
    s = _scope("docs/testing.md", "README.md", ".ci/proven", ".ci/stress")
    assert not s.everything and s.first_module is None and s.test_files == ()
    assert s.keeps("tests/test_course.py", [], set())                      # fast tier
    assert s.keeps("tests/parity/test_fuzz.py", ["parity"], set())
    assert not s.keeps("tests/test_demo.py", ["grading"], set())
    assert not s.keeps("tests/autograder/test_mutation.py", ["mutation"], {20})
    assert "none (only paths no slow test reads)" in s.reason


@pytest.mark.parametrize("path", [
    "assignments/13_transformers/13_transformers.ipynb", "solutions/13_transformers/13_transformers.py",
    "student_release/13_transformers/tests/blocks.py", "autograder/suites/13_transformers/suite.py",
    "tests/fixtures/alternatives/13_transformers/rows64.py", "autograder/suites/13_transformers/bugs.py"])
def test_a_modules_own_file_runs_that_module_later_ones_and_what_names_no_module(path: str) -> None:
    s = _scope(path, "docs/modules.md")
    assert not s.everything and s.first_module == 13
    assert s.keeps("tests/autograder/test_mutation.py", ["mutation"], {13})
    assert s.keeps("tests/autograder/test_mutation.py", ["mutation"], {20})
    assert not s.keeps("tests/autograder/test_mutation.py", ["mutation"], {12})
    assert s.keeps("tests/test_demo.py", ["grading"], set())               # names no module
    assert s.keeps("tests/test_alternatives.py", ["alternatives"], {9, 13})  # the highest counts


def test_the_lowest_changed_module_decides() -> None:
    s = _scope("autograder/suites/19_benchmarking/suite.py", "solutions/04_losses/04_losses.py")
    assert s.first_module == 4
    assert s.keeps("tests/milestones/test_training.py", ["milestone"], {MILESTONES["perceptron_1957"]})


@pytest.mark.parametrize("path", [
    "tinytorch_ref/tensor.py", "autograder/harness/sandbox.py", "tito/cli.py", "course.yml",
    "tests/conftest.py", "tests/autograder/conftest.py", "tests/impact.py", "tests/suite_tools.py",
    "requirements.lock", "Makefile", ".ci/run", "student_release/tinytorch/tensor.py",
    "samples/class_01_tensor/x.ipynb", "tinytorch_milestones/recipes.py", "docsy/x.md",
    "README.md.orig",
    "solutions/13_transformers_old/x.py", "tests/fixtures/buggy/13_transformers.py"])
def test_anything_else_runs_every_test(path: str) -> None:
    s = _scope("docs/testing.md", path)
    assert s.everything and path in s.reason and "every test runs" in s.reason
    assert s.keeps("tests/test_demo.py", ["grading"], set())


def test_a_changed_test_file_runs_its_own_tests() -> None:  # (and its importers: below)
    s = _scope("tests/test_demo.py", "tests/milestones/test_mlperf.py")
    assert not s.everything and s.first_module is None
    assert s.test_files == ("tests/milestones/test_mlperf.py", "tests/test_demo.py")
    assert s.keeps("tests/test_demo.py", ["grading"], set())
    assert s.keeps("tests/milestones/test_mlperf.py", ["milestone"], {19})
    assert not s.keeps("tests/test_sample_class.py", ["grading"], set())


def test_parameters_name_modules_and_milestones() -> None:
    named = lambda nodeid: impact.modules_named(nodeid, MODULES, MILESTONES)  # noqa: E731
    assert named("tests/autograder/test_mutation.py::test_x[07_training]") == {7}
    assert named("tests/test_alternatives.py::test_y[13_transformers-rows64]") == {13}
    assert named("tests/milestones/test_training.py::test_z[sgd_never_updates-xor_1969]") == {
        max(load_course().milestones[1].requires)}
    assert named("tests/autograder/test_adversarial.py::test_corpus[fork_bomb-full]") == set()
    assert named("tests/test_demo.py::test_demo") == set()
    assert named("tests/test_x.py::test_y[01_tensor_extra]") == set()   # whole tokens only
    assert named("tests/milestones/test_mlperf.py::test_script") == {MILESTONES["mlperf_2018"]}
    assert named("tests/milestones/test_transformer.py::test_x[3]") == {13}


def test_the_files_named_for_a_milestone_read_no_later_modules_files() -> None:
    """:data:`impact.FILE_NAMES`: every id is a milestone of course.yml, and the file names no
    module folder after the highest module that milestone needs."""
    for rel, ids in impact.FILE_NAMES.items():
        assert set(ids) <= set(MILESTONES), (rel, ids)
        highest = max(MILESTONES[i] for i in ids)
        text = (REPO_ROOT / rel).read_text(encoding="utf-8")
        later = [m for m, n in MODULES.items() if n > highest and (m in text or
                 f"{n:02d}_" in text)]
        assert later == [], f"{rel} names {later}, after module {highest}"


def test_the_scope_crosses_to_xdist_workers_unchanged() -> None:
    s = _scope("solutions/05_autograd/05_autograd.py", "tests/test_demo.py")
    assert impact.Scope.from_json(s.to_json()) == s


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def _record(repo: Path, commit: str, python: str | None = None) -> None:
    python = python or f"{sys.version_info[0]}.{sys.version_info[1]}"
    (repo / ".ci").mkdir(exist_ok=True)
    (repo / impact.PROVEN).write_text(f"# proven\ncommit {commit}\npython {python}\n")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "a.md").write_text("a\n")
    (root / "tito").mkdir()
    (root / "tito" / "cli.py").write_text("x = 1\n")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "one")
    return root


def test_without_a_usable_record_every_test_runs(repo: Path) -> None:
    assert impact.scope(repo, MODULES).everything                         # no record
    assert "make prove" in impact.scope(repo, MODULES).reason
    (repo / ".ci").mkdir()
    (repo / impact.PROVEN).write_text("commit abc\npython 3.11\n")
    s = impact.scope(repo, MODULES)
    assert s.everything and "field 'commit'" in s.reason and impact.PROVEN in s.reason
    _record(repo, SHA)                                                     # not in this clone
    assert "not in this clone" in impact.scope(repo, MODULES).reason
    head = _git(repo, "rev-parse", "HEAD")
    _record(repo, head, python="2.7")
    s = impact.scope(repo, MODULES)
    assert s.everything and "Python 2.7" in s.reason
    _git(repo, "checkout", "-q", "--orphan", "other")                      # not an ancestor
    _git(repo, "commit", "-q", "-m", "unrelated")
    _record(repo, head)
    assert "not an ancestor of HEAD" in impact.scope(repo, MODULES).reason


def test_the_record_sees_commits_staged_unstaged_deleted_and_untracked_changes(repo: Path) -> None:
    head = _git(repo, "rev-parse", "HEAD")
    _record(repo, head)
    _git(repo, "add", impact.PROVEN)
    _git(repo, "commit", "-q", "-m", "record")
    s = impact.scope(repo, MODULES)
    assert not s.everything and s.changed == (impact.PROVEN,) and s.since == head
    (repo / "docs" / "a.md").write_text("b\n")                            # unstaged
    (repo / "docs" / "new.md").write_text("n\n")                          # untracked
    assert impact.scope(repo, MODULES).changed == (impact.PROVEN, "docs/a.md", "docs/new.md")
    (repo / "tito" / "cli.py").unlink()                                   # deleted
    s = impact.scope(repo, MODULES)
    assert s.everything and "tito/cli.py" in s.reason
    _git(repo, "checkout", "-q", "--", "tito/cli.py")
    (repo / "solutions" / "05_autograd").mkdir(parents=True)
    (repo / "solutions" / "05_autograd" / "05_autograd.py").write_text("y = 2\n")
    _git(repo, "add", "-A")                                               # staged
    assert impact.scope(repo, MODULES).first_module == 5
    (repo / ".gitignore").write_text("build/\n")
    (repo / "build").mkdir()
    (repo / "build" / "out.txt").write_text("ignored\n")
    s = impact.scope(repo, MODULES)
    assert s.everything and ".gitignore" in s.reason                     # .gitignore is code
    assert "build/out.txt" not in s.changed


def _sources(folder: str) -> list[Path]:
    return sorted(p for p in (REPO_ROOT / folder).rglob("*.py") if ".venv" not in p.parts)


def _slow_test_files(pytestconfig: pytest.Config) -> list[Path]:
    # the tests folder's conftest as pytest loaded it (as tests/test_tiers.py finds it)
    root = (REPO_ROOT / "tests" / "conftest.py").resolve()
    conftest = next(p for p in pytestconfig.pluginmanager.get_plugins()
                    if Path(getattr(p, "__file__", "") or "/").resolve() == root)
    stems = tuple(prefix.split("::")[0] for tier, prefixes in conftest.TIERS.items()
                  if tier not in impact.ALWAYS for prefix in prefixes)
    tests = REPO_ROOT / "tests"
    return sorted(p for p in tests.rglob("*.py") if p.relative_to(tests).as_posix().startswith(stems))


def test_no_slow_test_and_no_package_code_reads_docs_or_the_top_readme(
        pytestconfig: pytest.Config) -> None:
    """The inert paths' premise: outside the parity tier nothing names ``docs`` as a path, and
    ``README.md`` is only ever a file the code writes into a folder of its own."""
    files = _slow_test_files(pytestconfig) + [
        p for d in ("coursekit", "coursebuild", "tito", "autograder", "gradebook", "staff",
                    "milestones", "tinytorch_ref", "tinytorch_data", "tinytorch_milestones")
        for p in _sources(d)]
    assert len(files) > 60
    offenders = []
    writes_readme = {"coursebuild/release.py", "coursebuild/samples.py", "tests/test_roles.py"}
    for path in files:
        rel = path.relative_to(REPO_ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value
                if re.fullmatch(r"docs(/[\w./-]*)?", text):
                    offenders.append(f"{rel}: {text!r}")
                elif text == "README.md" and rel not in writes_readme:
                    offenders.append(f"{rel}: {text!r}")
    assert offenders == [], offenders


def test_a_changed_test_file_also_runs_the_test_files_that_import_it() -> None:
    found = impact.with_importers(REPO_ROOT, {"tests/autograder/test_gradescope.py"})
    assert {"tests/autograder/test_gradescope.py", "tests/autograder/test_cifar_grading.py",
            "tests/test_roles.py"} <= found
    assert "tests/test_demo.py" not in found
    assert impact.with_importers(REPO_ROOT, {"tests/test_demo.py"}) == {"tests/test_demo.py"}


def test_importers_are_found_through_every_import_form_and_transitively(tmp_path: Path) -> None:
    tests = tmp_path / "tests" / "sub"
    tests.mkdir(parents=True)
    (tests / "test_a.py").write_text("x = 1\n")
    (tests / "test_b.py").write_text("from tests.sub.test_a import x\n")
    (tests / "test_c.py").write_text("def f():\n    import test_b\n")
    (tests / "test_d.py").write_text("from tests.sub import test_c\n")
    (tests / "test_e.py").write_text("import test_ab\n")
    (tests / "test_f.py").write_text("def broken(:\n")
    assert impact.with_importers(tmp_path, {"tests/sub/test_a.py"}) == {
        f"tests/sub/test_{c}.py" for c in "abcd"}


def _clone_env(clone: Path) -> dict[str, str]:
    """The environment of a pytest run in ``clone``. Its bytecode and pytest's rewritten test
    modules are written beside its files (even where the caller's environment says not to
    write bytecode), so each collection after the first reuses them: four fewer compilations
    and assertion rewrites of the whole suite. (Not under a ``PYTHONPYCACHEPREFIX``: there
    every installed package, PyTorch's included, would be compiled again too.)"""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": str(clone)}


def _collect(clone: Path, tier: str) -> tuple[int, str]:
    env = _clone_env(clone)
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                           f"--tier={tier}", "-p", "no:cacheprovider"], cwd=clone, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    found = re.search(r"(\d+)(?:/\d+)? tests? collected", proc.stdout)
    assert found, proc.stdout[-1000:]
    return int(found.group(1)), proc.stdout


def test_a_real_collection_of_a_clone_keeps_what_each_change_needs(tmp_path: Path) -> None:
    """A clone of this repository (the working tree's tests/ and tito/ copied over it, so a
    change in progress is what runs), its record pointing at its own HEAD. A copy that is not a
    git checkout (a downloaded archive) becomes one first."""
    clone = tmp_path / "clone"
    if (REPO_ROOT / ".git").exists():
        subprocess.run(["git", "clone", "-q", "--shared", str(REPO_ROOT), str(clone)],
                       check=True, timeout=600)
    else:
        shutil.copytree(REPO_ROOT, clone, ignore=shutil.ignore_patterns(
            ".venv", "build", "__pycache__", ".pytest_cache"))
        _git(clone, "init", "-q", "-b", "main")
    for folder in ("tests", "coursekit", "coursebuild", "tito"):
        shutil.copytree(REPO_ROOT / folder, clone / folder, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__"))
    _git(clone, "add", "-A")
    _git(clone, "commit", "-q", "--allow-empty", "-m", "working tree")
    _record(clone, _git(clone, "rev-parse", "HEAD"))
    _git(clone, "add", "-A")
    _git(clone, "commit", "-q", "-m", "record")

    everything, listing = _collect(clone, "all")
    fast, _ = _collect(clone, "fast")
    parity = sum(1 for line in listing.splitlines() if line.startswith("tests/parity/"))
    assert everything > fast + parity > fast > 0 and parity > 0

    (clone / "docs" / "testing.md").write_text("changed\n")
    n, out = _collect(clone, "affected")
    assert n == fast + parity and "only paths no slow test reads" in out, out[-600:]

    suite = clone / "autograder" / "suites" / "20_capstone" / "suite.py"
    suite.write_text(suite.read_text() + "\n# changed\n")
    n, out = _collect(clone, "affected")
    assert fast + parity < n < everything and "module 20 and later" in out
    assert "test_every_module_suite_kills_at_least_90_percent[20_capstone]" in out
    assert "test_every_module_suite_kills_at_least_90_percent[19_benchmarking]" not in out
    assert "tests/test_demo.py::" in out                                   # names no module

    # under pytest-xdist the workers take the controller's scope (a worker never decides it)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "2", "--tier=affected",
                           "-p", "no:cacheprovider",
                           "tests/test_impact.py::test_the_scope_crosses_to_xdist_workers_unchanged",
                           "tests/test_impact.py::test_the_lowest_changed_module_decides"],
                          cwd=clone, env=_clone_env(clone),
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0 and "2 passed" in proc.stdout, proc.stdout[-2000:]
