"""Gradescope packaging: :func:`build_zip` makes the autograder zip for one module.

Zip layout (reproducible: sorted entries, fixed timestamps)::

    setup.sh, run_autograder     from templates/ (run_autograder -> autograder/gradescope/run.py)
    requirements.txt             NumPy pinned as in the repository's requirements.txt
    course.json                  course snapshot: module, points, limits, milestones, when
                                 each module closes (open/closed is decided at grading time)
    goldens.json                 the bank: expected values of every hidden case in every
                                 variant, and the variant salt (wire-format JSON)
    manifest.json                every file with its SHA-256, versions, build facts
    autograder/                  suite API, harness, this package, the module's hidden suite,
                                 milestone providers graded with the module
    tito/export.py               the one exporter (+ an empty tito/__init__.py)
    reference/                   the package minus the graded module: every earlier module's
                                 reference (read by the trusted parent and the timing twin
                                 only), release stubs for later modules
    stubs/                       the release stubs of the earlier modules (an earlier module
                                 still open at grading time, without an upload of the
                                 student's own copy, uses its stub) and of the graded module
                                 (the timing twin's package uses it)
    public_tests/                the release's public tests (0-point feedback)
    report_schema/benchmarking.py  a suite with ``needs_report_schema`` only (module 20): module
                                 19's report schema extracted from the reference, read by the
                                 trusted parent only (``autograder.milestones.report_schema``)

The graded module's reference file is not shipped (goldens replace it). One zip serves the
whole term: which earlier modules are graded on their reference is decided when each
submission is graded, from the close times in ``course.json`` and the grading machine's clock
(:func:`autograder.harness.core.grade`); an earlier module still open for late work is built
from the student's own notebook or its release stub, and its reference never reaches the
sandbox, which sees only the package the harness builds in a scratch folder. Rebuild a zip only
when the course changes (a suite, the reference, course.yml, an extension that moves a close
time).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import tempfile
import threading
import zipfile
from pathlib import Path
from typing import Any

TEMPLATES = Path(__file__).with_name("templates")
_FIXED_TIME = (2020, 1, 1, 0, 0, 0)


class PackagingError(RuntimeError):
    """The autograder cannot be built (missing suite, failing reference, bad points)."""


def _numpy_pin(requirements: Path) -> str:
    for line in requirements.read_text(encoding="utf-8").splitlines():
        if re.match(r"^numpy\s*==", line.strip(), re.I):
            return line.strip()
    raise PackagingError(f"{requirements.name}: no 'numpy==' pin")


def _pins(requirements: Path, *, with_course: bool) -> str:
    """numpy's pin; with milestones also pydantic's and PyYAML's (the course schema)."""
    pins = [_numpy_pin(requirements)]
    if with_course:
        for line in requirements.read_text(encoding="utf-8").splitlines():
            if re.match(r"^(pydantic|pyyaml)\s*==", line.strip(), re.I):
                pins.append(line.strip())
    return "\n".join(pins)


def _milestone_files(repo: Path) -> dict[str, bytes]:
    """What milestone grading needs: the provider package, the training recipes, the data
    (with its checksums), and the course schema the providers read thresholds from."""
    out: dict[str, bytes] = {}
    for p in sorted((repo / "autograder" / "milestones").glob("*.py")):
        out[f"autograder/milestones/{p.name}"] = p.read_bytes()
    # the course packages milestone grading imports: the recipes (the one piece of milestone
    # code the sandbox loads, training only) with the 2018 scoring, and the data with its
    # checksums
    for package in ("tinytorch_milestones", "tinytorch_data"):
        root = repo / package
        for p in sorted(root.rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc":
                out[f"{package}/{p.relative_to(root).as_posix()}"] = p.read_bytes()
    for name in ("paths.py", "course.py"):
        out[f"tito/{name}"] = (repo / "tito" / name).read_bytes()
    out["course.yml"] = (repo / "course.yml").read_bytes()
    return out


def build_zip(module: Any, out_zip: Path, *, course: Any = None, suite_path: Path | None = None,
              reference: Path | None = None, public_tests: Path | None = None,
              stubs: Path | None = None, requirements: Path | None = None,
              milestone_dir: Path | None = None, extensions: Path | None = None,
              jobs: int = 1,
              slots: threading.Semaphore | None = None) -> Path:
    """Build the Gradescope autograder zip for ``module``; returns ``out_zip``.

    Args:
        module: a ``tito.course.Module`` (with ``course``, or course.yml is loaded) or a
            module snapshot dict (then every path argument must be given).
        out_zip: where to write the zip.
        course: the parsed course for a ``Module``.
        suite_path, reference, public_tests, stubs, requirements, milestone_dir: override the
            repository locations (tests use stand-ins).
        extensions: the gradebook's extensions CSV (extended modules close later).
        jobs: reference children computing the goldens bank at once (the zip is the same).
        slots: shared by zips built at once, each reference child holds one while it runs.

    Raises:
        PackagingError: the suite does not match course.yml, or the reference fails a case.
    """
    from autograder.harness.goldens import GoldensError, build_goldens, load_suite
    from autograder.harness.limits import ModuleInfo, module_snapshot

    if isinstance(module, dict):
        snap = dict(module)
    else:
        if course is None:
            from tito.course import load_course

            course = load_course()
        extended = course.extension_dues(Path(extensions)) if extensions is not None else None
        snap = module_snapshot(course, module, extended)
    snap.pop("reference_modules", None)  # decided at grading time, from the close times
    info = ModuleInfo.from_any(snap)
    name = info.name
    repo = Path(__file__).resolve().parents[2]
    suite_path = suite_path or repo / "autograder" / "suites" / name / "suite.py"
    reference = reference or repo / "tinytorch_ref"
    public_tests = public_tests or repo / "student_release" / name / "tests"
    stubs = stubs or repo / "student_release" / "tinytorch"
    requirements = requirements or repo / "requirements.txt"
    milestone_dir = milestone_dir or repo / "autograder" / "milestones" / "providers"
    if not suite_path.is_file():
        raise PackagingError(f"no hidden suite for {name} at {suite_path}")
    suite = load_suite(suite_path)
    if suite.module != name or abs(suite.total_points - info.points) > 1e-9:
        raise PackagingError(f"suite {suite.module} is worth {suite.total_points:g} points; "
                             f"course.yml gives {name} {info.points:g}")

    files: dict[str, bytes] = {}
    tmp = Path(tempfile.mkdtemp(prefix="ttzip-"))
    try:
        goldens = tmp / "goldens.json"
        try:
            build_goldens(suite_path=suite_path, reference=reference, out=goldens,
                          slug=info.slug, number=info.number,
                          all_modules=info.all_modules or ((info.number, info.slug),),
                          limits=info.limits, jobs=jobs, slots=slots)
        except GoldensError as exc:
            raise PackagingError(str(exc)) from exc
        files["goldens.json"] = goldens.read_bytes()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    files["setup.sh"] = (TEMPLATES / "setup.sh").read_bytes()
    files["run_autograder"] = (TEMPLATES / "run_autograder").read_bytes()
    course_data = bool(info.milestones) or suite.needs_course_data or suite.needs_report_schema
    files["requirements.txt"] = (_pins(requirements, with_course=course_data) + "\n").encode()
    files["course.json"] = json.dumps(snap, indent=1, sort_keys=True).encode()
    ag = repo / "autograder"
    files["autograder/__init__.py"] = (ag / "__init__.py").read_bytes()
    files["autograder/suite.py"] = (ag / "suite.py").read_bytes()
    for p in sorted((ag / "harness").glob("*.py")):
        files[f"autograder/harness/{p.name}"] = p.read_bytes()
    for p in sorted((ag / "gradescope").glob("*.py")):
        files[f"autograder/gradescope/{p.name}"] = p.read_bytes()
    files[f"autograder/suites/{name}/suite.py"] = suite_path.read_bytes()
    for m in info.milestones:
        prov = milestone_dir / f"{m.id}.py"
        if prov.is_file():
            files[f"autograder/milestones/providers/{m.id}.py"] = prov.read_bytes()
    files["tito/__init__.py"] = b'"""The exporter (and, with milestones, the course schema)."""\n'
    files["tito/export.py"] = (repo / "tito" / "export.py").read_bytes()
    if course_data and (repo / "autograder" / "milestones" / "__init__.py").is_file():
        files.update(_milestone_files(repo))
    files.update(_reference_files(reference, stubs, info))
    if suite.needs_report_schema:
        from autograder.milestones.report_schema import ZIP_PATH, SchemaSourceError, extract

        source = reference / "benchmarking.py"
        try:
            files[ZIP_PATH] = extract(source.read_text(encoding="utf-8"), source.name).encode()
        except (OSError, SchemaSourceError) as exc:
            raise PackagingError(f"{name} checks benchmark reports, but module 19's schema "
                                 f"cannot be taken from {source}: {exc}") from exc
    if public_tests.is_dir():
        for p in sorted(public_tests.glob("*.py")):
            files[f"public_tests/{p.name}"] = p.read_bytes()
    files["manifest.json"] = json.dumps({
        "module": name, "suite_version": suite.version,
        "files": {k: hashlib.sha256(v).hexdigest() for k, v in sorted(files.items())},
    }, indent=1, sort_keys=True).encode()

    out_zip = Path(out_zip)
    out_zip.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for arc in sorted(files):
            zi = zipfile.ZipInfo(arc, date_time=_FIXED_TIME)
            executable = arc in ("setup.sh", "run_autograder")
            zi.external_attr = (0o100755 if executable else 0o100644) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(zi, files[arc])
    # whole or not at all: an interrupted build leaves the previous zip (or none)
    part = out_zip.with_name(f".{out_zip.name}.{os.getpid()}-{threading.get_ident()}.part")
    try:
        part.write_bytes(buf.getvalue())
        os.replace(part, out_zip)
    finally:
        part.unlink(missing_ok=True)
    return out_zip


def _reference_files(reference: Path, stubs: Path, info: Any) -> dict[str, bytes]:
    """reference/: infrastructure + every earlier module's reference; release stubs for later
    modules; the graded module: none. stubs/: the release stubs of the earlier modules (used
    for an earlier module that is still open when a submission is graded) and of the graded
    module (the trusted twin that times baselines imports it in place of the solution, see
    :mod:`autograder.harness.timing`)."""
    numbers = {slug: n for n, slug in info.all_modules}
    out: dict[str, bytes] = {}
    for p in sorted(reference.rglob("*")):
        if not p.is_file() or "__pycache__" in p.parts or p.suffix == ".pyc":
            continue
        rel = p.relative_to(reference).as_posix()
        n = numbers.get(p.stem) if p.parent == reference else None
        stub = stubs / p.name
        if n == info.number:
            # replaced by goldens: the graded module's solution never ships; its public
            # release stub does (the trusted twin that times baselines imports it instead)
            if stub.is_file():
                out[f"stubs/{p.name}"] = stub.read_bytes()
            continue
        if n is not None and n < info.number:
            if not stub.is_file():
                raise PackagingError(f"module {p.stem} has no release stub {stub} for the "
                                     "weeks it is still open: run tito release first")
            out[f"stubs/{p.name}"] = stub.read_bytes()
        elif n is not None and n > info.number:
            if stub.is_file():
                out[f"reference/{rel}"] = stub.read_bytes()
            continue
        out[f"reference/{rel}"] = p.read_bytes()
    return out
