"""Expected values: the suite run against the reference, in a trusted child.

The reference runs in its own trusted child process (never in the deciding parent, so a
reference bug that hangs or crashes cannot take grading down). Two ways to get expected values
for a submission's variant (:mod:`autograder.harness.variants`):

* a **reference run** for that variant's seeds (``tito grade``, ``tito regrade``: the
  repository has the reference);
* a **shared bank** (:func:`shared_expected`, ``tito regrade``): every variant in one
  reference run, the first time a process needs the module, kept in memory for the rest of
  the process (one trusted child per module instead of one per submission);
* a **bank** of goldens, one expected value per case and variant, computed when the
  autograder zip is built (Gradescope: the graded module's reference never ships, and grading
  costs no reference run). Goldens are JSON in the wire format of
  :mod:`autograder.harness.wire` (never pickle), tied to the exact suite they were computed
  from by SHA-256, so stale goldens are refused. The bank also holds the variant salt; the
  sandbox never sees the file.

A bank is refused when a case gives the same expected value in two variants
(:func:`check_variation`): a constant would pass that case for some submissions.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import tempfile
import threading
from collections import Counter, OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder.harness import isolation, variants, wire
from autograder.harness.home import import_file
from autograder.harness.limits import Limits
from autograder.harness.package import build_package, sha256_file
from autograder.harness.supervisor import RunSpec, run_items
from autograder.harness.variants import salt_from_reference
from autograder.standins import StandinError, payloads_for
from autograder.suite import Suite, TimedResult

FORMAT = 2


class GoldensError(RuntimeError):
    """Goldens are missing, stale or unreadable: an autograder build problem, not a student's."""


@dataclass
class Expected:
    """Expected values per case name for one variant; ``errors`` names cases the reference
    itself failed; ``seeds`` are the case seeds the values belong to."""

    values: dict[str, Any]
    errors: dict[str, str] = field(default_factory=dict)
    suite_sha256: str = ""
    source: str = "reference-run"
    seeds: dict[str, int] = field(default_factory=dict)


def load_suite(suite_path: Path) -> Suite:
    """Import a hidden suite file (trusted instructor code) and return its ``suite``."""
    try:
        mod = import_file(f"suite_{suite_path.parent.name}", suite_path)
    except FileNotFoundError:
        raise GoldensError(f"cannot load suite {suite_path}") from None
    suite = getattr(mod, "suite", None)
    if not isinstance(suite, Suite):
        raise GoldensError(f"{suite_path} defines no Suite named 'suite'")
    return suite


def case_seeds(suite: Suite, variant: int | None, salt: str) -> dict[str, int]:
    """Each case's seed in ``variant`` (None: the cases' base seeds)."""
    return {c.name: c.seed(variant, salt) for c in suite.cases}


def _reference_run(*, suite_path: Path, suite: Suite, reference: Path, slug: str, number: int,
                   all_modules: tuple[tuple[int, str], ...], limits: Limits,
                   items: dict[str, tuple[str, int]], scratch_root: Path | None = None,
                   whole: bool = False) -> dict[str, Any]:
    """Run ``items`` ({item: (case name, seed)}) against the reference; item -> Outcome.

    A result is what its case keeps of it (:meth:`autograder.suite.Case.kept`; a case with a
    ``shortcut`` runs that, which computes it directly), or all of it with ``whole`` (tests
    that replay a case's check on the reference's own answer, and the shortcuts' check).
    """
    suite_path, reference = suite_path.absolute(), reference.absolute()
    by_name = {c.name: c for c in suite.cases}

    def kept(item: str, value: Any) -> Any:
        if whole:  # a timed case's whole answer is what it committed (nothing is timed here)
            return value.value if isinstance(value, TimedResult) else value
        case = by_name[items[item][0]]
        return value if case.shortcut is not None else case.kept(value)

    scratch = Path(tempfile.mkdtemp(prefix="ttref-", dir=scratch_root))
    timeout = {c.name: float(c.timeout_s or limits.test_timeout_s) for c in suite.cases}
    try:
        pkg_parent = scratch / "pkg"
        pkg_parent.mkdir()
        build_package(dest=pkg_parent, reference=reference, module_number=number, slug=slug,
                      student_source=None, all_modules=all_modules)
        report = run_items(RunSpec(
            package_parent=pkg_parent, slug=slug, suite_file=suite_path, items=list(items),
            scratch=scratch, item_timeout_s={i: timeout[n] for i, (n, _) in items.items()},
            import_timeout_s=limits.import_timeout,
            run_timeout_s=max(limits.run_timeout_s, 1.0),
            memory_limit_mb=limits.memory_limit_mb, max_output_kb=limits.max_output_kb,
            sandbox=False, seeds={i: s for i, (_, s) in items.items()}, on_result=kept,
            shortcuts=not whole))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return report.outcomes


def compute_expected(*, suite_path: Path, suite: Suite, reference: Path, slug: str,
                     number: int, all_modules: tuple[tuple[int, str], ...], limits: Limits,
                     scratch_root: Path | None = None, seeds: dict[str, int] | None = None
                     ) -> Expected:
    """Run every case against the reference in a trusted child process.

    Args:
        seeds: each case's seed (a variant's, from :func:`case_seeds`); None: base seeds.
    """
    chosen = seeds or case_seeds(suite, None, "")
    items = {f"case:{c.name}": (c.name, chosen[c.name]) for c in suite.cases}
    outcomes = _reference_run(suite_path=suite_path, suite=suite, reference=reference,
                              slug=slug, number=number, all_modules=all_modules,
                              limits=limits, items=items, scratch_root=scratch_root)
    exp = Expected(values={}, suite_sha256=sha256_file(suite_path), seeds=dict(chosen))
    for c in suite.cases:
        o = outcomes[f"case:{c.name}"]
        if o.status == "result":
            exp.values[c.name] = o.value
        else:
            exp.errors[c.name] = f"{o.status}: {o.message}"
    return exp


#: Shared banks kept per process (a whole-term regrade grades up to 20 modules, one at a time).
SHARED_BANKS = 8
_SHARED: OrderedDict[tuple[Any, ...], dict[str, tuple[str, Any]]] = OrderedDict()
_SHARED_LOCK = threading.Lock()
_SHARED_BUSY: dict[tuple[Any, ...], threading.Lock] = {}


def shared_expected(*, suite_path: Path, suite: Suite, reference: Path, slug: str, number: int,
                    all_modules: tuple[tuple[int, str], ...], limits: Limits, salt: str,
                    count: int, variant: int) -> Expected:
    """:func:`compute_expected` for ``case_seeds(suite, variant, salt)``, from a bank of every
    variant computed in one reference run and kept for the rest of this process.

    The bank's run is the one :func:`compute_bank` makes (``case:NAME@V`` items, the case's
    own timeouts, one trusted child); each case keeps its own status, so a case the reference
    fails in one variant is that variant's error, exactly as in a run for that variant alone.
    A bank is kept only when every case of every variant gave a result (an interrupted or
    failing run is used for this call and computed again by the next). The key holds the
    suite's and the reference package's SHA-256, so an edited file is never served from an
    old bank. While one thread computes a bank, another that needs it runs its own variant
    alone (:func:`compute_expected`) instead of leaving a core idle.
    """
    suite_sha = sha256_file(suite_path)
    key = (suite_sha, reference_digest(reference), slug, number, tuple(all_modules), limits,
           salt, count)
    with _SHARED_LOCK:
        bank = _SHARED.get(key)
        if bank is not None:
            _SHARED.move_to_end(key)
        busy = _SHARED_BUSY.setdefault(key, threading.Lock())
    if bank is None:
        if not busy.acquire(blocking=False):
            return compute_expected(suite_path=suite_path, suite=suite, reference=reference,
                                    slug=slug, number=number, all_modules=all_modules,
                                    limits=limits, seeds=case_seeds(suite, variant, salt))
        try:
            with _SHARED_LOCK:
                bank = _SHARED.get(key)  # kept by another thread since the look above
            if bank is None:
                bank = _bank_run(suite_path=suite_path, suite=suite, reference=reference,
                                 slug=slug, number=number, all_modules=all_modules,
                                 limits=limits, salt=salt, count=count)
                if all(status == "result" for status, _ in bank.values()):
                    with _SHARED_LOCK:
                        _SHARED[key] = bank
                        while len(_SHARED) > SHARED_BANKS:
                            _SHARED.popitem(last=False)
        finally:
            busy.release()
    exp = Expected(values={}, suite_sha256=suite_sha, seeds=case_seeds(suite, variant, salt))
    for c in suite.cases:
        status, data = bank[f"case:{c.name}@{variant}"]
        if status == "result":
            exp.values[c.name] = wire.decode(data)
        else:
            exp.errors[c.name] = f"{status}: {data}"
    return exp


def _bank_run(*, suite_path: Path, suite: Suite, reference: Path, slug: str, number: int,
              all_modules: tuple[tuple[int, str], ...], limits: Limits, salt: str,
              count: int) -> dict[str, tuple[str, Any]]:
    """Every case of every variant in one reference child: item -> (status, wire data or
    the message)."""
    outcomes = _variants_run(suite_path=suite_path, suite=suite, reference=reference,
                             slug=slug, number=number, all_modules=all_modules, limits=limits,
                             salt=salt, variants=range(count), count=count)
    return {item: ("result", wire.encode(o.value)) if o.status == "result"
            else (o.status, o.message) for item, o in outcomes.items()}


def _item(case: str, variant: int, k: int = 0) -> str:
    """The item of ``case`` in ``variant`` under a bank's ``k``-th salt (``case:NAME@V``, and
    ``case:NAME@V~K`` for the other salts of :func:`compute_banks`; the child runs the case
    named before the last ``@``)."""
    return f"case:{case}@{variant}" + (f"~{k}" if k else "")


def _variants_run(*, suite_path: Path, suite: Suite, reference: Path, slug: str, number: int,
                  all_modules: tuple[tuple[int, str], ...], limits: Limits, salt: str,
                  variants: range, count: int, whole: bool = False,
                  salts: Sequence[str] = ()) -> dict[str, Any]:
    """The items (:func:`_item`) of ``variants`` in one reference child, each with the case's
    own timeout; the whole run may take the bank's limit (``count`` variants' worth, for each
    salt), so a block is never stricter than one child running every variant. ``salts``: the
    salts after ``salt`` whose items run in the same child (:func:`compute_banks`)."""
    every = (salt, *salts)
    items = {_item(c.name, v, k): (c.name, c.seed(v, s))
             for k, s in enumerate(every) for v in variants for c in suite.cases}
    per_run = Limits(test_timeout_s=limits.test_timeout_s,
                     run_timeout_s=max(limits.run_timeout_s, 1.0) * max(1, count) * len(every),
                     memory_limit_mb=limits.memory_limit_mb, max_output_kb=4,
                     import_timeout_s=limits.import_timeout_s)
    return _reference_run(suite_path=suite_path, suite=suite, reference=reference, slug=slug,
                          number=number, all_modules=all_modules, limits=per_run, items=items,
                          whole=whole)


@dataclass
class Bank:
    """Goldens for every variant: ``cases[name][v]`` is the wire-encoded expected value."""

    salt: str
    count: int
    cases: dict[str, list[Any]]
    suite_sha256: str = ""
    #: The stand-ins the suite's cases run with (:func:`autograder.standins.payloads_for`):
    #: the reference's code of those units, for the stages that hold it (never the others).
    standins: dict[str, Any] = field(default_factory=dict)

    def expected(self, variant: int, suite: Suite) -> Expected:
        """Decoded expected values of one variant (only that variant is decoded)."""
        if not 0 <= variant < self.count:
            raise GoldensError(f"variant {variant} is not in the bank (0..{self.count - 1})")
        try:
            values = {name: wire.decode(vals[variant]) for name, vals in self.cases.items()}
        except (wire.WireError, IndexError, TypeError) as exc:
            raise GoldensError(f"goldens: bad case data ({exc})") from exc
        return Expected(values=values, suite_sha256=self.suite_sha256, source="goldens",
                        seeds=case_seeds(suite, variant, self.salt))


def variant_blocks(variants: int, jobs: int) -> list[range]:
    """``range(variants)`` cut into at most ``jobs`` contiguous blocks of near-equal size."""
    n = max(1, min(jobs, variants))  # n <= variants: no block is empty
    return [range(variants * i // n, variants * (i + 1) // n) for i in range(n)]


def compute_bank(*, suite_path: Path, suite: Suite, reference: Path, slug: str, number: int,
                 all_modules: tuple[tuple[int, str], ...], limits: Limits, variants: int,
                 salt: str, jobs: int = 1, slots: threading.Semaphore | None = None,
                 whole: bool = False) -> Bank:
    """Every case in every variant (``case:NAME@V`` items), in reference children: what each
    case keeps of the reference's answer (:meth:`autograder.suite.Case.kept`), checked to vary.

    Args:
        jobs: reference children run at once, each on one contiguous block of variants (a
            case's value depends only on its seed, so the bank is the same for any ``jobs``;
            each child pays its own start, about 0.2 s of CPU).
        slots: held by each child while it runs, when several banks are computed at once
            (``tito autograder --all --jobs N``: N children in all, not N per bank).
        whole: the bank holds the reference's whole answers (tests that replay each case's
            check on them); the variation check still compares what the cases keep.
    """
    return compute_banks(suite_path=suite_path, suite=suite, reference=reference, slug=slug,
                         number=number, all_modules=all_modules, limits=limits,
                         variants=variants, salts=(salt,), jobs=jobs, slots=slots,
                         whole=whole)[0]


def compute_banks(*, suite_path: Path, suite: Suite, reference: Path, slug: str, number: int,
                  all_modules: tuple[tuple[int, str], ...], limits: Limits, variants: int,
                  salts: Sequence[str], jobs: int = 1, slots: threading.Semaphore | None = None,
                  whole: bool = False) -> list[Bank]:
    """:func:`compute_bank` for each of ``salts``, every salt's variants in the same reference
    children (one start, one package, one import of the reference and the suite for all of
    them); each bank is the one :func:`compute_bank` gives for its salt alone. A case with a
    shortcut is checked against its whole answer in variant 0 of the first salt."""
    if not salts:
        raise ValueError("compute_banks needs at least one salt")
    salt, others = salts[0], tuple(salts[1:])

    def run(block: range) -> dict[str, Any]:
        with slots or contextlib.nullcontext():
            return _variants_run(suite_path=suite_path, suite=suite, reference=reference,
                                 slug=slug, number=number, all_modules=all_modules,
                                 limits=limits, salt=salt, variants=block, count=variants,
                                 whole=whole, salts=others)

    shortcut_cases = [c for c in suite.cases if c.shortcut is not None] if not whole else []

    def whole_answers() -> dict[str, Any]:
        """Variant 0 of every case with a shortcut, run whole: the shortcut's check."""
        with slots or contextlib.nullcontext():
            return _reference_run(
                suite_path=suite_path, suite=suite, reference=reference, slug=slug,
                number=number, all_modules=all_modules, limits=limits, whole=True,
                items={f"case:{c.name}@0": (c.name, c.seed(0, salt)) for c in shortcut_cases})

    blocks = variant_blocks(variants, jobs)
    outcomes: dict[str, Any] = {}
    checked: dict[str, Any] = {}
    if len(blocks) == 1 and not shortcut_cases:
        outcomes = run(blocks[0])
    else:
        pool = ThreadPoolExecutor(max_workers=len(blocks) + 1, thread_name_prefix="goldens")
        try:
            parts = [pool.submit(run, b) for b in blocks]
            check = pool.submit(whole_answers) if shortcut_cases else None
            for part in parts:
                outcomes.update(part.result())
            if check is not None:
                checked = check.result()
        except KeyboardInterrupt:
            isolation.abort_all()  # the other blocks' children too; tito is exiting
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
    suite_sha = sha256_file(suite_path)
    banks = []
    for k, s in enumerate(salts):
        cases: dict[str, list[Any]] = {c.name: [] for c in suite.cases}
        for v in range(variants):
            for c in suite.cases:
                o = outcomes[_item(c.name, v, k)]
                if o.status != "result":
                    raise GoldensError(f"the reference fails case {c.name!r} in variant {v}"
                                       + (f" of salt {k}" if k else "")
                                       + f" ({o.status}: {o.message}); fix the suite or the "
                                       "reference before packaging")
                cases[c.name].append(wire.encode(o.value))
        banks.append(Bank(salt=s, count=variants, cases=cases, suite_sha256=suite_sha))
    for c in shortcut_cases:
        o = checked[f"case:{c.name}@0"]
        if o.status != "result":
            raise GoldensError(f"the reference fails case {c.name!r} in variant 0 run whole "
                               f"({o.status}: {o.message}); fix the suite or the reference "
                               "before packaging")
        if wire.encode(c.kept(o.value)) != banks[0].cases[c.name][0]:
            raise GoldensError(f"case {c.name!r}: its shortcut does not give what the case "
                               "keeps of the reference's whole answer (variant 0); fix the "
                               "shortcut in the suite")
    for k, bank in enumerate(banks):
        problems = check_variation(kept_bank(bank, suite) if whole else bank)
        if problems:
            raise GoldensError((f"salt {k}: " if k else "") + "; ".join(problems[:5]))
    return banks


def kept_bank(bank: Bank, suite: Suite) -> Bank:
    """A bank of whole answers (``compute_bank(whole=True)``) as packaging keeps it."""
    by_name = {c.name: c for c in suite.cases}
    cases = {name: [wire.encode(by_name[name].kept(wire.decode(v))) for v in values]
             for name, values in bank.cases.items()}
    return Bank(salt=bank.salt, count=bank.count, cases=cases, suite_sha256=bank.suite_sha256)


def check_variation(bank: Bank) -> list[str]:
    """Cases whose expected value repeats across variants (a constant could pass them)."""
    out = []
    for name, values in bank.cases.items():
        counts = Counter(json.dumps(v, sort_keys=True, separators=(",", ":")) for v in values)
        top = max(counts.values()) if counts else 0
        if top > 1:
            out.append(f"case {name!r} gives the same expected value in {top} of "
                       f"{bank.count} variants: draw what it probes from rng (sizes, values, "
                       "which argument), so a constant answer cannot pass it")
    return out


def save_goldens(bank: Bank, path: Path, *, module: str, suite_version: str,
                 reference_sha256: str = "") -> Path:
    """Write a bank as JSON (wire format)."""
    doc = {"format": FORMAT, "module": module, "suite_version": suite_version,
           "suite_sha256": bank.suite_sha256, "reference_sha256": reference_sha256,
           "variants": bank.count, "salt": bank.salt, "cases": bank.cases,
           "standins": bank.standins}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, separators=(",", ":"), allow_nan=False), encoding="utf-8")
    return path


def load_goldens(path: Path, *, suite_path: Path) -> Bank:
    """Read a bank and check it belongs to this exact suite file."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise GoldensError(f"goldens {path.name} cannot be read: {exc}") from exc
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise GoldensError(f"goldens {path.name}: unknown format (rebuild the autograder)")
    if doc.get("suite_sha256") != sha256_file(suite_path):
        raise GoldensError(f"goldens {path.name} were built from a different suite; rebuild "
                           "the autograder")
    try:
        count = int(doc["variants"])
        salt = str(doc["salt"])
        cases = {str(k): list(v) for k, v in doc["cases"].items()}
        standins = {str(k): dict(v) for k, v in (doc.get("standins") or {}).items()}
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise GoldensError(f"goldens {path.name}: bad bank ({exc})") from exc
    if count < 1 or any(len(v) != count for v in cases.values()):
        raise GoldensError(f"goldens {path.name}: every case needs {count} variants")
    return Bank(salt=salt, count=count, cases=cases, suite_sha256=doc["suite_sha256"],
                standins=standins)


def standin_payloads(suite: Suite, reference_file: Path) -> dict[str, Any]:
    """The suite's stand-ins, extracted from the reference module file.

    Raises:
        GoldensError: the file is missing or lacks a unit's definition.
    """
    if not any(suite.standins(c) for c in suite.cases):
        return {}
    try:
        return payloads_for(suite, reference_file.read_text(encoding="utf-8"))
    except (OSError, StandinError) as exc:
        raise GoldensError(f"stand-ins of {suite.module}: {exc}") from exc


def reference_digest(reference: Path) -> str:
    """One SHA-256 over every .py file of a reference package (sorted by name)."""
    h = hashlib.sha256()
    for p in sorted(reference.rglob("*.py")):
        h.update(p.relative_to(reference).as_posix().encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def build_goldens(*, suite_path: Path, reference: Path, out: Path, slug: str, number: int,
                  all_modules: tuple[tuple[int, str], ...], limits: Limits | None = None,
                  variants: int | None = None, jobs: int = 1,
                  slots: threading.Semaphore | None = None) -> Path:
    """Compute the bank of expected values from the reference and save it as goldens JSON.

    ``variants`` defaults to the limits' (course.yml ``course.grading.variants``); the salt
    is derived from ``reference/<slug>.py``; ``jobs``, ``slots``: as :func:`compute_bank`
    (the bank does not depend on them).
    """
    suite = load_suite(suite_path)
    lim = limits or Limits()
    bank = compute_bank(suite_path=suite_path, suite=suite, reference=reference, slug=slug,
                        number=number, all_modules=all_modules, limits=lim,
                        variants=variants or lim.variants,
                        salt=salt_from_reference(reference / f"{slug}.py"), jobs=jobs,
                        slots=slots)
    bank.standins = standin_payloads(suite, reference / f"{slug}.py")
    return save_goldens(bank, out, module=suite.module, suite_version=suite.version,
                        reference_sha256=reference_digest(reference))


# ----------------------------------------------------------------------------- the stage
@dataclass
class ForVariant:
    """The expected stage's product: the submission's variant and that variant's values."""

    expected: Expected
    #: the stand-ins' payloads (:mod:`autograder.standins`) the child gets
    standins: dict[str, Any]
    #: the submission key (:func:`autograder.harness.variants.submission_key`) and the salt
    key: str
    salt: str
    variant: int
    count: int
    #: ``extra_data.variant``
    record: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        self.record = {"index": self.variant, "of": self.count,
                       "key": f"source-sha256:{self.key[:16]}"}


def expected_for(source: str, *, suite: Suite, suite_path: Path, goldens: Path | None,
                 reference: Path, slug: str, number: int,
                 all_modules: tuple[tuple[int, str], ...], limits: Limits,
                 shared: bool = False) -> ForVariant:
    """The expected stage: the variant of the graded module's ``source`` and its expected
    values, from the goldens bank when one is given, else from the reference in a trusted
    child (one run for this variant, or with ``shared`` a bank of every variant kept for the
    rest of the process: :func:`shared_expected`). Decided before any student code runs.

    Raises:
        GoldensError: no goldens and no reference to run, or goldens that do not fit.
    """
    key = variants.submission_key(source)
    if goldens is not None:
        bank = load_goldens(goldens, suite_path=suite_path)
        variant = variants.variant_index(key, bank.salt, bank.count)
        return ForVariant(bank.expected(variant, suite), bank.standins, key, bank.salt,
                          variant, bank.count)
    ref_file = reference / f"{slug}.py"
    if not ref_file.is_file():
        raise GoldensError(f"no goldens and no reference {ref_file.name} to run")
    salt, count = salt_from_reference(ref_file), limits.variants
    payloads = standin_payloads(suite, ref_file)
    variant = variants.variant_index(key, salt, count)
    if shared:
        exp = shared_expected(suite_path=suite_path, suite=suite, reference=reference,
                              slug=slug, number=number, all_modules=all_modules,
                              limits=limits, salt=salt, count=count, variant=variant)
    else:
        exp = compute_expected(suite_path=suite_path, suite=suite, reference=reference,
                               slug=slug, number=number, all_modules=all_modules,
                               limits=limits, seeds=case_seeds(suite, variant, salt))
    return ForVariant(exp, payloads, key, salt, variant, count)
