"""`tito publish`: what students may see as of a date, written into their repository.

``student_release/`` holds every built module; students get them week by week. Publishing as
of a time (default: now, in the course's time zone) writes a student repository folder with:

* the notebooks and public checks of the modules whose ``release`` time has come;
* the student package: their stub files, the facades, and for every module not yet released a
  *placeholder* that defines the same public names (so ``import tinytorch`` works) and raises
  "module NN is released on ..." when one is used, with none of the module's text;
* README, ``modules.json``, ``export.py`` and the milestones whose modules are all released.

The folder is then made to match exactly (files that are no longer published are removed;
``.git`` is left alone), the leak scan runs on it, and with ``commit`` a folder that is a git
work tree gets one commit. Publishing the same date twice changes nothing.

Before anything is written, the course checks run (``tito course check``): a problem of a
module that would be published (half built, no plausible bugs, stale reference, not
released...) or of the course as a whole refuses the publish with one line per problem
(:class:`PublishRefused`); a module whose release time has come but that is not built at all
is named in the result (``not_built``), never skipped silently.
"""

from __future__ import annotations

import ast
import datetime as dt
import filecmp
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from coursebuild.release import ReleaseError, built_modules, write_student_extras
from coursekit import paths
from coursekit.course import Course, CourseError, Module

_TIME = "%Y-%m-%d %H:%M"


@dataclass
class PublishResult:
    """What one publish did."""

    as_of: dt.datetime
    released: list[Module]
    upcoming: Module | None
    target: Path
    changed: list[str] = field(default_factory=list)   # relative paths added, changed or removed
    committed: bool = False
    #: modules whose release time has come but that are not built (nothing to publish)
    not_built: list[Module] = field(default_factory=list)
    #: course check problems of modules not released yet (published later, once fixed)
    later: list[str] = field(default_factory=list)


class PublishRefused(ReleaseError):
    """The course checks found problems in what would be published: nothing was written.
    ``problems`` holds one line each."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__(f"{len(problems)} course check problem(s) in what would be published; "
                         "nothing was published (fix them, or run `tito course check`)")


def parse_as_of(course: Course, text: str | None) -> dt.datetime:
    """``YYYY-MM-DD HH:MM`` (or ``YYYY-MM-DD``, meaning 23:59) in the course time zone."""
    if text is None:
        return dt.datetime.now(course.tz).replace(second=0, microsecond=0)
    raw = text.strip()
    for fmt, fill in ((_TIME, ""), ("%Y-%m-%d", " 23:59")):
        try:
            return dt.datetime.strptime(raw + fill, _TIME if fill else fmt).replace(
                tzinfo=course.tz)
        except ValueError:
            continue
    raise CourseError(f"--as-of {text!r}: expected YYYY-MM-DD or 'YYYY-MM-DD HH:MM'")


def placeholder_source(stub_file: Path, module: Module, course: Course) -> str:
    """A module file that defines the public names of ``stub_file`` and nothing else."""
    tree = ast.parse(stub_file.read_text(encoding="utf-8"))
    when = f"{module.release} ({course.course.timezone})"
    lines = [f'"""Module {module.number:02d} · {module.title}: released on {when}.',
             "",
             "A placeholder that keeps `import tinytorch` working until then; using anything from",
             f"it says when it arrives. `python export.py {module.number:02d}` replaces it with "
             "your code.",
             '"""', "", "from __future__ import annotations", "",
             f"_MESSAGE = {f'module {module.number:02d} ({module.title}) is released on {when}'!r}",
             "", "",
             "class _Unreleased:",
             "    def __init__(self, *args: object, **kwargs: object) -> None:",
             "        raise NotImplementedError(_MESSAGE)", "", "",
             "def _unreleased(*args: object, **kwargs: object) -> None:",
             "    raise NotImplementedError(_MESSAGE)", ""]
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and not node.name.startswith("__"):
            lines += ["", f"class {node.name}(_Unreleased):", "    pass", ""]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines += ["", f"{node.name} = _unreleased", ""]
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name) and not t.id.startswith("__"):
                    lines.append(f"{t.id} = _unreleased")
    return "\n".join(lines).rstrip("\n") + "\n"


def build_tree(course: Course, dest: Path, as_of: dt.datetime) -> list[Module]:
    """Write the student repository as of ``as_of`` into the empty folder ``dest``."""
    built = built_modules(course)
    released = [m for m in built if course.local_time(m.release) <= as_of
                and (paths.RELEASE / m.name).is_dir()]
    for m in released:
        shutil.copytree(paths.RELEASE / m.name, dest / m.name)
    shutil.copytree(paths.RELEASE / "tinytorch", dest / "tinytorch",
                    ignore=shutil.ignore_patterns("__pycache__"))
    names = {m.number for m in released}
    for m in course.modules:
        stub = dest / "tinytorch" / f"{m.slug}.py"
        if m.number not in names and stub.exists():
            stub.write_text(placeholder_source(stub, m, course), encoding="utf-8")
    write_student_extras(course, dest)
    return released


def _sync(src: Path, dst: Path) -> list[str]:
    """Make ``dst`` hold exactly ``src``'s files (``.git`` untouched); returns what changed."""
    changed: list[str] = []
    dst.mkdir(parents=True, exist_ok=True)
    wanted = {p.relative_to(src) for p in src.rglob("*") if p.is_file()}
    for p in sorted(dst.rglob("*"), reverse=True):
        rel = p.relative_to(dst)
        if rel.parts[0] == ".git":
            continue
        if p.is_file() and rel not in wanted:
            p.unlink()
            changed.append(f"- {rel.as_posix()}")
        elif p.is_dir() and not any(p.iterdir()):
            p.rmdir()
    for rel in sorted(wanted):
        target = dst / rel
        if target.is_file() and filecmp.cmp(src / rel, target, shallow=False):
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        changed.append(f"{'~' if target.exists() else '+'} {rel.as_posix()}")
        shutil.copy2(src / rel, target)
    return changed


def check_before_publishing(course: Course, as_of: dt.datetime) -> tuple[list[str], list[str]]:
    """``tito course check``'s problems that block publishing as of ``as_of`` (those of the
    modules released by then, and of the course as a whole), and the others (modules released
    later: they do not block this week's release)."""
    from staff.check import check_course

    rep = check_course(course)
    due = {m.name for m in course.modules if course.local_time(m.release) <= as_of}
    blocking = rep.about(due)
    return blocking, [p for p in rep.problems if p not in blocking]


def publish(course: Course, *, to: Path, as_of: dt.datetime, commit: bool = False,
            check: bool = True) -> PublishResult:
    """Publish what students may see at ``as_of`` into the folder ``to``.

    Raises:
        PublishRefused: the course checks found problems in what would be published (one line
            each; nothing was written). ``check=False`` skips them (tests of the tree only).
        ReleaseError: the leak scan found something, or git refused the commit.
        CourseError: ``to`` is inside the course repository (a student repository is separate).
    """
    from coursebuild.leakscan import scan

    to = Path(to).resolve()
    if to == paths.REPO_ROOT or paths.REPO_ROOT in to.parents:
        raise CourseError(f"--to {to}: the student repository must be outside the course "
                          "repository")
    later: list[str] = []
    if check:
        blocking, later = check_before_publishing(course, as_of)
        if blocking:
            raise PublishRefused(blocking)
    with tempfile.TemporaryDirectory(prefix="tt-publish-") as tmp:
        tree = Path(tmp) / "student"
        tree.mkdir()
        released = build_tree(course, tree, as_of)
        problems = scan(course, tree)
        if problems:
            raise ReleaseError(f"leak scan failed, nothing published: {problems[0]}")
        changed = _sync(tree, to)
    upcoming = next((m for m in built_modules(course)
                     if course.local_time(m.release) > as_of), None)
    not_built = [m for m in course.modules if course.local_time(m.release) <= as_of
                 and m not in built_modules(course)]
    result = PublishResult(as_of, released, upcoming, to, changed, not_built=not_built,
                           later=later)
    if commit:
        result.committed = _commit(to, as_of, released)
    return result


def _commit(repo: Path, as_of: dt.datetime, released: list[Module]) -> bool:
    if not (repo / ".git").exists():
        raise ReleaseError(f"--commit: {repo} is not a git work tree (git init it first)")

    def git(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)

    git("add", "-A")
    if git("diff", "--cached", "--quiet").returncode == 0:
        return False
    names = ", ".join(m.name for m in released) or "no modules"
    who = [] if git("config", "user.email").stdout.strip() else [
        "-c", "user.name=course staff", "-c", "user.email=staff@localhost"]
    proc = git(*who, "commit", "-q", "-m", f"Publish as of {as_of.strftime(_TIME)}: {names}")
    if proc.returncode != 0:
        raise ReleaseError(f"git commit in {repo} failed: {proc.stderr.strip().splitlines()[-1:]}")
    return True
