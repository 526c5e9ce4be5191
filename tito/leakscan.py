"""Leak scan: prove student_release/ holds no solution code and no hidden test.

Fingerprints come from the sources themselves:

* every significant line inside a solution block of a solution module (code and the written
  answers), unless the same line also appears outside solution blocks (then it is given code);
* every significant line and case name of every hidden suite under ``autograder/suites``;
* solution and test markers themselves.

A significant line has at least 12 characters once stripped and is not a bare comment.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from pathlib import Path

from tito import paths
from tito.course import Course

_MARKERS = re.compile(
    r"BEGIN SOLUTION|END SOLUTION|#\s?SOLUTION\b|#\s?STUB\b|BEGIN HIDDEN|hidden:\s*true",
)
_BEGIN = re.compile(r"^\s*(# )?# BEGIN SOLUTION")
_END = re.compile(r"^\s*(# )?# END SOLUTION")
_WORD = re.compile(r"\w+")
_MIN_LEN = 12
# lines too generic to be a fingerprint: `return False`, `return self`, `raise`, `pass`, ...
_GENERIC = re.compile(r"(return|raise|yield|pass|break|continue)\b ?[\w.]*:?")


def _significant(line: str) -> str | None:
    s = line.strip()
    if len(s) < _MIN_LEN or s.startswith("#") or _GENERIC.fullmatch(s):
        return None
    return s


def solution_lines(source: Path) -> tuple[set[str], set[str]]:
    """(significant lines inside solution blocks, significant lines outside them)."""
    inside: set[str] = set()
    outside: set[str] = set()
    depth = 0
    for raw in source.read_text(encoding="utf-8").splitlines():
        if _BEGIN.match(raw):
            depth += 1
            continue
        if _END.match(raw):
            depth = max(0, depth - 1)
            continue
        # markdown lines in percent files start with "# "; compare their text
        line = raw[2:] if raw.startswith("# ") else raw
        sig = _significant(line)
        if sig is None:
            continue
        (inside if depth else outside).add(sig)
    return inside, outside


def solution_fingerprints(source: Path) -> set[str]:
    """Significant lines found only inside solution blocks of one solution module."""
    inside, outside = solution_lines(source)
    return inside - outside


def _callee(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def suite_fingerprints(suite_file: Path) -> tuple[set[str], set[str]]:
    """(significant source lines, case function names) of a hidden suite."""
    text = suite_file.read_text(encoding="utf-8")
    names = set()
    try:
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef) and any(
                isinstance(d, ast.Call) and _callee(d.func) in ("case", "milestone")
                for d in node.decorator_list
            ):
                names.add(node.name)
    except SyntaxError:
        pass
    lines = set()
    for raw in text.splitlines():
        sig = _significant(raw)
        if sig and not sig.startswith(("import ", "from ", "return ", '"""', "def ", "@")):
            lines.add(sig)
    return lines, names


def _release_lines(path: Path) -> list[tuple[str, str]]:
    """(location, line) pairs of a release file; notebooks by cell."""
    if path.suffix == ".ipynb":
        try:
            nb = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            return [(str(path), "<unreadable notebook>")]
        out = []
        for i, cell in enumerate(nb.get("cells", [])):
            src = cell.get("source", "")
            src = "".join(src) if isinstance(src, list) else src
            out += [(f"{path}: cell {i + 1}", ln) for ln in src.splitlines()]
        return out
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return []
    return [(f"{path}:{n}", ln) for n, ln in enumerate(text.splitlines(), 1)]


def _shipped_data(release_dir: Path) -> set[Path]:
    """Files of ``release_dir/tinytorch_data`` that its ``MANIFEST.json`` lists, byte for byte
    (the same sha256): course data shipped on purpose (the capstone's TinyGPT checkpoint is an
    ``.npz``), never a hidden suite's goldens."""
    try:
        files = json.loads((paths.DATASETS / "MANIFEST.json").read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError):
        return set()
    out = set()
    for rel, meta in files.items():
        path = release_dir / paths.DATASETS.name / rel
        if path.is_file() and hashlib.sha256(path.read_bytes()).hexdigest() == meta.get("sha256"):
            out.add(path)
    return out


def scan(course: Course, release_dir: Path | None = None, *, solutions_dir: Path | None = None,
         suites_dir: Path | None = None) -> list[str]:
    """Return one message per leak found in ``release_dir`` (empty when clean)."""
    release_dir = release_dir or paths.RELEASE
    solutions_dir = solutions_dir or paths.SOLUTIONS
    suites_dir = suites_dir or paths.SUITES
    fingerprints: dict[str, str] = {}
    public: set[str] = set()  # every line of every solution module: released or given code
    given: set[str] = set()  # lines outside solution blocks in any module: not secret
    secret: dict[str, str] = {}
    for m in course.modules:
        src = solutions_dir / m.name / f"{m.name}.py"
        if src.exists():
            inside, outside = solution_lines(src)
            given |= outside
            for line in inside:
                secret.setdefault(line, f"solution code of {m.name}")
            for raw in src.read_text(encoding="utf-8").splitlines():
                public.add(raw.strip())
    # files that ship to students on purpose (tito's exporter and templates, the milestone
    # scripts and recipes, the data loaders): their lines are public, not leaks
    shipped = [*Path(__file__).resolve().parent.rglob("*.py"),
               *(paths.REPO_ROOT / "milestones").glob("*.py"),
               *(paths.REPO_ROOT / "tinytorch_milestones").glob("*.py"),
               *paths.DATASETS.glob("*.py")]
    for tool in sorted(shipped):
        lines = {raw.strip() for raw in tool.read_text(encoding="utf-8").splitlines()}
        public |= lines
        given |= lines
    for line, what in secret.items():
        if line not in given:
            fingerprints[line] = what
    hidden_names: dict[str, str] = {}
    if suites_dir.exists():
        for suite in sorted(suites_dir.glob("*/suite.py")):
            lines, names = suite_fingerprints(suite)
            for line in lines - public:
                fingerprints.setdefault(line, f"hidden suite {suite.parent.name}")
            for name in names:
                if "_" in name and len(name) >= 12:  # distinctive names only
                    hidden_names[name] = suite.parent.name
    name_re = (re.compile(r"\b(" + "|".join(map(re.escape, sorted(hidden_names))) + r")\b")
               if hidden_names else None)
    words_only = all(_WORD.fullmatch(n) for n in hidden_names)  # Python names: always

    problems: list[str] = []
    if not release_dir.exists():
        return problems
    shipped_data = _shipped_data(release_dir)
    for path in sorted(release_dir.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        if path.name in ("suite.py", "goldens.json") or path.suffix in (".npz", ".pkl"):
            if path not in shipped_data:
                problems.append(f"{path}: hidden-suite file in the release")
            continue
        found_lines = _release_lines(path)
        # The whole text first: a line's match is also one of the text (a newline is not a
        # word character, as a line's ends are not), so a file without one is checked only
        # against the fingerprints. A hidden name matches where it is a whole word, so the
        # file's words find them without the slow many-name pattern (0.5 s per scan).
        text = "\n".join(line for _, line in found_lines)
        has_marker = _MARKERS.search(text) is not None
        has_name = (not hidden_names.keys().isdisjoint(_WORD.findall(text)) if words_only
                    else name_re is not None and name_re.search(text) is not None)
        for where, line in found_lines:
            if has_marker and _MARKERS.search(line):
                problems.append(f"{where}: marker left in release: {line.strip()[:60]}")
                continue
            s = line.strip()
            if s in fingerprints:
                problems.append(f"{where}: {fingerprints[s]} leaked: {s[:60]}")
            elif (has_name and name_re and (found := name_re.search(line))
                  and not s.startswith("#")):
                hit = found.group(1)
                problems.append(f"{where}: hidden case name {hit!r} ({hidden_names[hit]})")
    return problems
