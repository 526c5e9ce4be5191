"""Expected values ("publish mode"): the suite run against the reference, in a child.

The reference runs in its own trusted child process (never in the deciding parent, so a
reference bug that hangs or crashes cannot take grading down). Results are kept as goldens:
a JSON file in the wire format of :mod:`autograder.harness.wire` (never pickle), tied to the
exact suite and reference they were computed from by SHA-256, so stale goldens are refused.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder.harness import wire
from autograder.harness.limits import Limits
from autograder.harness.package import build_package
from autograder.harness.supervisor import RunSpec, run_items
from autograder.suite import Suite

FORMAT = 1


class GoldensError(RuntimeError):
    """Goldens are missing, stale or unreadable: an autograder build problem, not a student's."""


@dataclass
class Expected:
    """Expected values per case name; ``errors`` names cases the reference itself failed."""

    values: dict[str, Any]
    errors: dict[str, str] = field(default_factory=dict)
    suite_sha256: str = ""
    source: str = "reference-run"


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_suite(suite_path: Path) -> Suite:
    """Import a hidden suite file (trusted instructor code) and return its ``suite``."""
    spec = importlib.util.spec_from_file_location(f"suite_{suite_path.parent.name}", suite_path)
    if spec is None or spec.loader is None:
        raise GoldensError(f"cannot load suite {suite_path}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    suite = getattr(mod, "suite", None)
    if not isinstance(suite, Suite):
        raise GoldensError(f"{suite_path} defines no Suite named 'suite'")
    return suite


def compute_expected(*, suite_path: Path, suite: Suite, reference: Path, slug: str,
                     number: int, all_modules: tuple[tuple[int, str], ...], limits: Limits,
                     scratch_root: Path | None = None) -> Expected:
    """Run every case against the reference in a trusted child process."""
    suite_path, reference = suite_path.absolute(), reference.absolute()
    scratch = Path(tempfile.mkdtemp(prefix="ttref-", dir=scratch_root))
    try:
        pkg_parent = scratch / "pkg"
        pkg_parent.mkdir()
        build_package(dest=pkg_parent, reference=reference, module_number=number, slug=slug,
                      student_source=None, all_modules=all_modules)
        items = [f"case:{c.name}" for c in suite.cases]
        timeouts = {f"case:{c.name}": float(c.timeout_s or limits.test_timeout_s)
                    for c in suite.cases}
        report = run_items(RunSpec(
            package_parent=pkg_parent, slug=slug, suite_file=suite_path, items=items,
            scratch=scratch, item_timeout_s=timeouts, import_timeout_s=limits.import_timeout,
            run_timeout_s=limits.run_timeout_s, memory_limit_mb=limits.memory_limit_mb,
            max_output_kb=limits.max_output_kb, sandbox=False))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    exp = Expected(values={}, suite_sha256=sha256_file(suite_path))
    for c in suite.cases:
        o = report.outcomes[f"case:{c.name}"]
        if o.status == "result":
            exp.values[c.name] = o.value
        else:
            exp.errors[c.name] = f"{o.status}: {o.message}"
    return exp


def save_goldens(exp: Expected, path: Path, *, module: str, suite_version: str,
                 reference_sha256: str = "") -> Path:
    """Write goldens as JSON (wire format). Refuses when the reference failed a case."""
    if exp.errors:
        first = next(iter(exp.errors.items()))
        raise GoldensError(f"the reference fails case {first[0]!r} ({first[1]}); fix the "
                           "suite or the reference before packaging")
    doc = {"format": FORMAT, "module": module, "suite_version": suite_version,
           "suite_sha256": exp.suite_sha256, "reference_sha256": reference_sha256,
           "cases": {name: wire.encode(v) for name, v in exp.values.items()}}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, separators=(",", ":"), allow_nan=False), encoding="utf-8")
    return path


def load_goldens(path: Path, *, suite_path: Path) -> Expected:
    """Read goldens and check they belong to this exact suite file."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise GoldensError(f"goldens {path.name} cannot be read: {exc}") from exc
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise GoldensError(f"goldens {path.name}: unknown format")
    if doc.get("suite_sha256") != sha256_file(suite_path):
        raise GoldensError(f"goldens {path.name} were built from a different suite; rebuild "
                           "the autograder")
    try:
        values = {str(k): wire.decode(v) for k, v in doc["cases"].items()}
    except (wire.WireError, KeyError, AttributeError) as exc:
        raise GoldensError(f"goldens {path.name}: bad case data ({exc})") from exc
    return Expected(values=values, suite_sha256=doc["suite_sha256"], source="goldens")


def reference_digest(reference: Path) -> str:
    """One SHA-256 over every .py file of a reference package (sorted by name)."""
    h = hashlib.sha256()
    for p in sorted(reference.rglob("*.py")):
        h.update(p.relative_to(reference).as_posix().encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def build_goldens(*, suite_path: Path, reference: Path, out: Path, slug: str, number: int,
                  all_modules: tuple[tuple[int, str], ...], limits: Limits | None = None
                  ) -> Path:
    """Compute expected values from the reference and save them as goldens JSON."""
    suite = load_suite(suite_path)
    lim = limits or Limits()
    exp = compute_expected(suite_path=suite_path, suite=suite, reference=reference, slug=slug,
                           number=number, all_modules=all_modules, limits=lim)
    return save_goldens(exp, out, module=suite.module, suite_version=suite.version,
                        reference_sha256=reference_digest(reference))
