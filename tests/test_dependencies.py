"""One list of direct dependencies (pyproject.toml) and one of exact versions (requirements.lock).

``make setup`` installs the project with its extras under the lock's constraints; a dependency
the lock does not pin, or pins outside the range pyproject.toml allows, would install a version
no other machine has (or fail to resolve on a fresh one).
"""

from __future__ import annotations

import tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from autograder.gradescope import _pins
from coursekit import paths

PYPROJECT = tomllib.loads((paths.REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
LOCK = paths.REPO_ROOT / "requirements.lock"


def lock_pins() -> dict[str, str]:
    out = {}
    for line in LOCK.read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"requirements.lock: {line!r} is not an exact pin"
            out[canonicalize_name(name)] = version
    return out


def direct() -> list[Requirement]:
    project = PYPROJECT["project"]
    reqs = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        reqs += extra
    return [Requirement(r) for r in reqs]


def test_pyproject_is_the_one_list_of_direct_dependencies():
    assert not (paths.REPO_ROOT / "requirements.txt").exists(), \
        "direct dependencies live in pyproject.toml only"
    assert set(PYPROJECT["project"]["optional-dependencies"]) >= {"test", "dev", "dask"}


def test_the_lock_pins_every_direct_dependency_inside_its_range():
    pins = lock_pins()
    problems = []
    for req in direct():
        version = pins.get(canonicalize_name(req.name))
        if version is None:
            problems.append(f"{req.name}: not in requirements.lock")
        elif not req.specifier.contains(version, prereleases=True):
            problems.append(f"{req.name}: the lock pins {version}, outside {req.specifier}")
        for extra in req.extras:  # psycopg[binary] -> psycopg-binary
            if canonicalize_name(f"{req.name}-{extra}") not in pins:
                problems.append(f"{req.name}[{extra}]: {req.name}-{extra} not in the lock")
    assert problems == [], "\n".join(problems)


def test_the_gradescope_zip_pins_what_the_lock_pins():
    pins = lock_pins()
    assert _pins(LOCK, with_course=False) == f"numpy=={pins['numpy']}"
    assert _pins(LOCK, with_course=True).splitlines() == [
        f"numpy=={pins['numpy']}", f"pydantic=={pins['pydantic']}", f"PyYAML=={pins['pyyaml']}"]


def test_setup_installs_the_project_under_the_lock():
    makefile = (paths.REPO_ROOT / "Makefile").read_text(encoding="utf-8")
    assert "pip install -q -c requirements.lock --no-build-isolation -e '.[test,dev]'" in makefile
