"""Hidden-suite API: weighted test *cases* whose results the trusted parent decides.

A hidden suite is a Python file ``autograder/suites/NN_slug/suite.py`` that builds one
:class:`Suite` and registers cases on it::

    suite = Suite(module="01_tensor", version="2027.1")

    @suite.case(points=2, hint="Broadcasting aligns shapes from the right.")
    def add_broadcasts_row_over_matrix(tt, rng):
        a = tt.Tensor(rng.standard_normal((3, 4)).astype(np.float32))
        b = tt.Tensor(rng.standard_normal((4,)).astype(np.float32))
        return (a + b).numpy()

A case is a *probe*, not an assertion. It runs in the sandboxed child with ``tt`` bound to the
package under test (the student's view of ``tinytorch``) and ``rng`` a NumPy Generator, and
returns **plain data**: ``None``, bool, int, float, str, NumPy arrays and lists/tuples/dicts of
these. The same function run against ``tinytorch_ref`` with the same seed gives the expected
value. The parent process, which never runs student code, compares the two with
:func:`compare` and decides the score.

Per-submission variants: when grading, ``rng`` is seeded per submission (one of the course's
``variants``, chosen from a hash of the submission with a salt the sandbox cannot read), so a
case must draw what it probes from ``rng``: sizes, values, which dtype or which bad argument.
The autograder build refuses a case whose expected value is the same in two variants
(:func:`autograder.harness.goldens.check_variation`): a constant answer would pass it. Decide
nothing in the probe (no ``np.allclose``, no ``a < b`` verdicts): return the numbers and let
the parent compare them with the reference's, or give the case a ``check`` that runs in the
parent.

Units and stand-ins (one bug, one charge): a suite names the *units* of its module, each a set of
the module's top-level definitions (or class members, ``"GPT.forward"``) that its own cases
grade, and the units each one is built from::

    LN = suite.unit("LayerNorm", "_LayerNormFn", "layer_norm", "LayerNorm")
    BLOCK = suite.unit("TransformerBlock", "TransformerBlock", uses=(LN,))

    @suite.case(points=4, unit=BLOCK, hint="...")
    def block_forward(tt, rng): ...

A case grades its ``unit``; while it runs, every unit that unit ``uses`` (transitively) is the
course's reference, put in place of the student's by the child (:mod:`autograder.standins`),
so a bug in LayerNorm costs LayerNorm's cases and not the block's. ``standins=`` on a case
overrides the derived set (``()``: the case needs the student's own sub-units). Cases run in
*stages* (:meth:`Suite.stages`): a unit's own cases always run, in a process of their own,
before any process that holds its reference.

Timed work: a case whose grade or leaderboard value depends on how fast the submission runs never
reads a clock. It returns :class:`Timed` (the value it commits to, and the named work the
parent may run on it); its ``timing`` (:class:`Timing`) is a plan that runs in the trusted
parent, chooses fresh inputs after the commit, and has the parent time each run of the work in
the child from outside (and the same work of the reference in a trusted twin process), see
:mod:`autograder.harness.timing`. Its ``check``, ``publish`` and leaderboard get a
:class:`TimedResult`: the committed value and what the plan measured.

Outcomes a case wants to test as data: return ``"ValueError"`` from an ``except`` clause, or
``x.shape`` as a tuple. Exceptions escaping a case fail it, with the exception type and message
shown to the student (never the case source or the expected value). The suite's code is
public in effect (it runs in the sandbox, where a submission can read its bytecode): nothing
in it may be worth hiding, and its hints never contain expected values.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

Visibility = Literal["hidden", "after_due_date", "after_published", "visible"]
Checker = Callable[[Any, Any], "tuple[bool, str]"]
#: ``publish(value, expected) -> (text, data) | None``: what the trusted parent shows the student
#: from a case's result besides the verdict (``text`` added to the test's output, JSON-safe
#: ``data`` in the test's ``extra_data``); None publishes nothing.
Publisher = Callable[[Any, Any], "tuple[str, dict[str, Any]] | None"]
#: ``expected(reference's value) -> what check, publish and the leaderboard need of it``: the
#: expected value the goldens keep (and the variation check compares); None keeps it all.
Keeper = Callable[[Any], Any]
#: ``shortcut(tt, rng) -> what expected(fn(tt, rng)) keeps``, computed without the rest of the
#: case's work: run instead of the case in reference runs and goldens builds only (never on a
#: submission); every build checks it against the whole case in one variant.
Shortcut = Callable[[Any, np.random.Generator], Any]


# --------------------------------------------------------------------------- timed work
@dataclass(frozen=True)
class Timed:
    """What a timed case (or a milestone's timed work) returns in the child.

    ``value`` is plain data, sent to the parent before anything is timed (the commitment: the
    model's arrays, say); ``work`` maps names to functions ``f(input) -> plain data`` that run
    on the committed objects. The parent then asks for runs of the work, one input at a time,
    chosen after the commitment, and times each run itself (:mod:`autograder.harness.timing`).
    """

    value: Any
    work: Mapping[str, Callable[[Any], Any]]


@dataclass(frozen=True)
class Run:
    """A plan's request: time ``work`` on ``input`` in the submission's child
    (``side="submission"``) or in the trusted twin (``side="baseline"``)."""

    side: Literal["submission", "baseline"]
    work: str
    input: Any


@dataclass(frozen=True)
class Baseline:
    """A plan's request to (re)build the twin's work: the twin runs the timing's ``baseline``
    builder with the reference package and ``data`` (plain data the parent chose)."""

    data: Any


@dataclass(frozen=True)
class Measured:
    """What the parent measured of one :class:`Run`: CPU seconds of the process tree that ran
    it (read from outside), and the work's output (decoded plain data), or why there is none
    (``error``: the work raised; ``implausible``: the measurement cannot be trusted, e.g. a
    process started during the run)."""

    cpu_s: float
    output: Any = None
    error: str = ""
    implausible: str = ""


#: ``plan(committed value, expected, rng)``: a generator run in the trusted parent that yields
#: :class:`Baseline` and :class:`Run` requests, is sent a :class:`Measured` for every Run, and
#: returns a plain-data summary (what the check, publish and leaderboard read).
Plan = Callable[[Any, Any, "np.random.Generator"],
                "Generator[Run | Baseline, Measured | None, Any]"]


@dataclass(frozen=True)
class Timing:
    """How the parent times a case: ``plan`` (parent) and ``baseline`` (the twin:
    ``baseline(reference package, data) -> {name: work}``, run with the course's reference
    and nothing of the submission)."""

    plan: Plan
    baseline: Callable[[Any, Any], Mapping[str, Callable[[Any], Any]]] | None = None


@dataclass(frozen=True)
class TimedResult:
    """What the parent's check, publish and leaderboard get for a timed case: the committed
    ``value``, the plan's summary (``timing``; None when the run timed nothing: reference and
    mutation runs), and ``problem``: why the grader itself could not time it (course-side)."""

    value: Any
    timing: Any = None
    problem: str = ""


@dataclass(frozen=True)
class Unit:
    """A part of the module that its own cases grade: top-level names of the module
    (``"layer_norm"``, ``"LayerNorm"``) or class members (``"GPT.forward"``), and the other
    units it is built from (``uses``), which its cases run with the reference's version of."""

    name: str
    entries: tuple[str, ...]
    uses: tuple[str, ...] = ()


@dataclass(frozen=True)
class Case:
    """One weighted hidden test case."""

    name: str
    fn: Callable[..., Any]
    points: float
    hint: str = ""
    visibility: Visibility = "after_due_date"
    rtol: float = 1e-5
    atol: float = 1e-6
    check_dtype: bool = True
    check: Checker | None = None
    timeout_s: float | None = None
    tags: tuple[str, ...] = ()
    publish: Publisher | None = None
    expected: Keeper | None = None
    timing: Timing | None = None
    shortcut: Shortcut | None = None
    #: The unit this case grades (a :class:`Unit` name; "" in a suite without units).
    unit: str = ""
    #: Units put in place by the reference while the case runs; None: every unit its unit
    #: uses, transitively (:meth:`Suite.standins`).
    standins: tuple[str, ...] | None = None
    #: Where the student was told what this case checks, as ``(place, quote)`` pairs: a place
    #: is a definition of the module (``"GPT.forward"``), whose released signature or docstring
    #: contains the quote, or ``"test:<name>"``, a public check of the module whose source
    #: contains it.
    #: Nothing is graded in secret (issue 28): ``tests/test_module_contract.py`` checks every
    #: quote is where its case says.
    stated: tuple[tuple[str, str], ...] = ()

    def kept(self, value: Any) -> Any:
        """The part of the reference's ``value`` this case's check uses (all of it by
        default): what goldens store and what a submission's value is compared with. A timed
        case's expected value is its committed value (timings never go into goldens)."""
        if isinstance(value, (Timed, TimedResult)):
            value = value.value
        return value if self.expected is None else self.expected(value)

    def seed(self, variant: int | None = None, salt: str = "") -> int:
        """The case's seed: stable across runs, machines and Python versions.

        Without ``variant`` it is the case's base seed (instructor tests, mutation testing);
        with one it is that variant's seed, ``salt`` keeping it unpredictable to anyone who
        does not hold the salt (the grading sandbox never does).
        """
        if variant is None:
            return int.from_bytes(hashlib.sha256(self.name.encode()).digest()[:4], "little")
        text = f"tinytorch-case-seed\0{salt}\0{int(variant)}\0{self.name}".encode()
        return int.from_bytes(hashlib.sha256(text).digest()[:8], "little")


#: A leaderboard event: ``(case name, entries(value, expected))``.
Board = tuple[str, Callable[[Any, Any], list[dict[str, Any]]]]


@dataclass
class Suite:
    """A module's hidden suite: an ordered, named collection of weighted cases."""

    module: str
    version: str
    cases: list[Case] = field(default_factory=list)
    #: ``(case name, entries(value, expected) -> [{"name", "value", "order"}])``, or a tuple
    #: of such pairs (one per event, each with its own columns): the trusted parent turns each
    #: named case's decoded result (and the reference's for the same variant) into entries of
    #: results.json's Gradescope ``leaderboard``, in this order; raising publishes none of that
    #: case's entries.
    leaderboard: Board | tuple[Board, ...] | None = None
    #: The suite reads the shipped data (``tinytorch_data``), ``autograder.milestones`` and
    #: course.yml (as milestone grading does): the Gradescope zip then carries them, as for a
    #: milestone.
    needs_course_data: bool = False
    #: The parent checks benchmark reports with module 19's schema: the Gradescope zip then
    #: carries the reference's validator, extracted for the parent only
    #: (:mod:`autograder.milestones.report_schema`).
    needs_report_schema: bool = False
    #: The module's units, by name, in declaration order (:meth:`unit`).
    units: dict[str, Unit] = field(default_factory=dict)

    def unit(self, name: str, *entries: str, uses: tuple[Unit | str, ...] = ()) -> Unit:
        """Declare a unit: ``entries`` are top-level names of the module or ``Class.member``
        names; ``uses`` the units (declared before) it is built from. Returns the unit, to
        pass as a case's ``unit``."""
        if not name or name in self.units:
            raise ValueError(f"{self.module}: unit name {name!r} is empty or declared twice")
        if not entries:
            raise ValueError(f"{self.module}: unit {name!r} names no definitions")
        for e in entries:
            for other in self.units.values():
                if any(_overlap(e, t) for t in other.entries):
                    raise ValueError(f"{self.module}: {e} is already part of unit "
                                     f"{other.name!r}")
        names = tuple(u.name if isinstance(u, Unit) else str(u) for u in uses)
        for used in names:
            if used not in self.units:
                raise ValueError(f"{self.module}: unit {name!r} uses {used!r}, which is not "
                                 "declared before it")
        declared = Unit(name, tuple(entries), names)
        self.units[name] = declared
        return declared

    def standins(self, case: Case) -> tuple[str, ...]:
        """The units that are the reference's while ``case`` runs, in declaration order."""
        if case.standins is not None:
            return case.standins
        if not case.unit:
            return ()
        seen: set[str] = set()
        todo = list(self.units[case.unit].uses)
        while todo:
            u = todo.pop()
            if u not in seen:
                seen.add(u)
                todo += self.units[u].uses
        return tuple(u for u in self.units if u in seen)

    def stages(self) -> list[list[Case]]:
        """The cases in the order they run, cut where a fresh process must start.

        Stage 0 holds the cases with no stand-ins (the public tests run with it; the
        milestones after the last stage). A case with stand-ins runs in a later stage than every case that grades one of
        them, so no process ever runs a unit's own case while it holds that unit's reference,
        and none runs one after a process that held it. Within a stage, suite order.
        """
        grader: dict[str, list[Case]] = {}
        for c in self.cases:
            grader.setdefault(c.unit, []).append(c)
        level: dict[str, int] = {}

        def depth(c: Case, path: tuple[str, ...] = ()) -> int:
            if c.name in level:
                return level[c.name]
            if c.name in path:
                raise ValueError(f"{self.module}: stand-ins form a cycle through {c.name!r}")
            d = 0
            for u in self.standins(c):
                for g in grader.get(u, []):
                    d = max(d, depth(g, (*path, c.name)) + 1)
                d = max(d, 1)
            level[c.name] = d
            return d

        for c in self.cases:
            depth(c)
        out: list[list[Case]] = [[] for _ in range(max(level.values(), default=0) + 1)]
        for c in self.cases:
            out[level[c.name]].append(c)
        return out

    def check_units(self) -> list[str]:
        """Problems with the suite's units and cases (empty when every case names a declared
        unit and every stand-in is a declared unit other than the case's own)."""
        problems = []
        for c in self.cases:
            if self.units and c.unit not in self.units:
                problems.append(f"case {c.name!r} grades no declared unit ({c.unit!r})")
            for u in self.standins(c) if c.unit in self.units or c.standins else ():
                if u not in self.units:
                    problems.append(f"case {c.name!r}: stand-in {u!r} is not a declared unit")
                elif u == c.unit:
                    problems.append(f"case {c.name!r} stands in its own unit {u!r}")
        try:
            self.stages()
        except ValueError as exc:
            problems.append(str(exc))
        return problems

    def case(
        self,
        points: float,
        *,
        name: str | None = None,
        hint: str = "",
        visibility: Visibility = "after_due_date",
        rtol: float = 1e-5,
        atol: float = 1e-6,
        check_dtype: bool = True,
        check: Checker | None = None,
        timeout_s: float | None = None,
        tags: tuple[str, ...] = (),
        publish: Publisher | None = None,
        expected: Keeper | None = None,
        timing: Timing | None = None,
        shortcut: Shortcut | None = None,
        unit: Unit | str = "",
        standins: tuple[Unit | str, ...] | None = None,
        stated: Mapping[str, str | tuple[str, ...]] | None = None,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register ``fn(tt, rng) -> plain data`` as a case worth ``points``; ``publish`` (run
        in the parent, like ``check``) adds what the student should see of the result;
        ``expected`` (with ``check``) keeps only what the check uses of the reference's answer
        (values that differ from run to run stay out of the goldens); ``timing`` makes it a
        timed case (``fn`` returns :class:`Timed`; it needs a ``check``, which gets a
        :class:`TimedResult`); ``shortcut`` (with ``expected``) computes what ``expected``
        keeps directly, for the reference's runs: the goldens of a case whose reference answer
        costs work the check never reads (a trained and optimised model of which only the
        baseline is kept); ``unit`` is the unit it grades, ``standins`` overrides the units it
        runs with the reference's version of (default: every unit its unit uses); ``stated``
        maps each place that tells the student what the case checks (a definition whose
        docstring says it, or ``"test:<public check>"``) to the words it says it with (one
        quote or a tuple of them)."""
        unit_name = unit.name if isinstance(unit, Unit) else str(unit)
        if unit_name and unit_name not in self.units:
            raise ValueError(f"{self.module}: unit {unit_name!r} is not declared")
        chosen = None if standins is None else tuple(
            u.name if isinstance(u, Unit) else str(u) for u in standins)

        quotes = tuple((place, q) for place, qs in (stated or {}).items()
                       for q in ((qs,) if isinstance(qs, str) else tuple(qs)))

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            case_name = name or fn.__name__
            if any(c.name == case_name for c in self.cases):
                raise ValueError(f"{self.module}: duplicate case name {case_name!r}")
            if points < 0:
                raise ValueError(f"{self.module}: case {case_name!r} has negative points")
            if timing is not None and check is None:
                raise ValueError(f"{self.module}: timed case {case_name!r} needs a check")
            if shortcut is not None and expected is None:
                raise ValueError(f"{self.module}: case {case_name!r} has a shortcut but no "
                                 "expected= keeper: the shortcut computes what it keeps")
            self.cases.append(
                Case(case_name, fn, float(points), hint, visibility, rtol, atol, check_dtype,
                     check, timeout_s, tuple(tags), publish, expected, timing, shortcut,
                     unit_name, chosen, quotes)
            )
            return fn

        return register

    def boards(self) -> tuple[Board, ...]:
        """The leaderboard's events, in order: ``((case name, entries), ...)``."""
        if self.leaderboard is None:
            return ()
        if len(self.leaderboard) == 2 and isinstance(self.leaderboard[0], str):
            return (self.leaderboard,)
        return tuple(self.leaderboard)

    @property
    def total_points(self) -> float:
        return math.fsum(c.points for c in self.cases)

    def get(self, name: str) -> Case:
        for c in self.cases:
            if c.name == name:
                return c
        raise KeyError(name)


def _overlap(a: str, b: str) -> bool:
    """Whether two unit entries name the same code (``"GPT"`` covers ``"GPT.forward"``)."""
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


def run_case(case: Case, tt: Any, seed: int | None = None, *, shortcut: bool = False) -> Any:
    """Run one case against package ``tt`` with a generator seeded by ``seed`` (default: the
    case's base seed); with ``shortcut`` (the reference's runs only), a case that has one
    runs its shortcut, whose answer is already what the case keeps."""
    rng = np.random.default_rng(case.seed() if seed is None else int(seed))
    if shortcut and case.shortcut is not None:
        return case.shortcut(tt, rng)
    return case.fn(tt, rng)


# --------------------------------------------------------------------------- comparison
# Runs in the trusted parent on plain data only. Messages never include expected values.

def compare(got: Any, expected: Any, case: Case) -> tuple[bool, str]:
    """Decide whether ``got`` matches ``expected`` under the case's tolerances.

    Returns:
        (passed, message); the message describes the difference without revealing the
        expected value (shapes and dtypes are named, values are not).
    """
    if case.check is not None:
        return case.check(got, expected)
    return _compare(got, expected, case, "result")


def compare_values(got: Any, expected: Any, *, rtol: float = 1e-5, atol: float = 1e-6,
                   check_dtype: bool = True, where: str = "result") -> tuple[bool, str]:
    """:func:`compare` with explicit tolerances: for a case's ``check`` to compare the parts it
    does not treat specially (it runs in the parent, like every comparison)."""
    probe = Case(where, _no_probe, 0.0, rtol=rtol, atol=atol, check_dtype=check_dtype)
    return _compare(got, expected, probe, where)


def _no_probe(tt: Any, rng: Any) -> None:  # pragma: no cover - never run
    return None


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)


def _compare(got: Any, exp: Any, case: Case, where: str) -> tuple[bool, str]:
    if isinstance(exp, np.ndarray):
        if not isinstance(got, np.ndarray):
            return False, f"{where}: expected an array, got {type(got).__name__}"
        if got.shape != exp.shape:
            return False, f"{where}: shape {got.shape} is wrong (expected {exp.shape})"
        if case.check_dtype and got.dtype != exp.dtype:
            return False, f"{where}: dtype {got.dtype} is wrong (expected {exp.dtype})"
        if exp.dtype.kind in "biuUSO" or got.dtype.kind in "USO":
            if not np.array_equal(got, exp):
                bad = int(np.sum(got != exp)) if got.shape == exp.shape else got.size
                return False, f"{where}: {bad} of {exp.size} elements differ"
            return True, ""
        g = got.astype(np.float64)
        e = exp.astype(np.float64)
        if np.array_equal(np.isnan(g), np.isnan(e)) is False:
            return False, f"{where}: NaN where a number was expected (or the reverse)"
        close = np.isclose(g, e, rtol=case.rtol, atol=case.atol, equal_nan=True)
        if not close.all():
            idx = tuple(int(i) for i in np.argwhere(~close)[0])
            err = float(np.nanmax(np.abs(g - e)))
            return False, (f"{where}: {int((~close).sum())} of {close.size} values are off "
                           f"(first at index {idx}; max abs error {err:.3g})")
        return True, ""
    if isinstance(exp, bool) or exp is None or isinstance(exp, str):
        if type(got) is not type(exp) or got != exp:
            shown = repr(got) if isinstance(got, (bool, type(None), str)) else type(got).__name__
            if isinstance(got, str) and len(shown) > 80:
                shown = shown[:77] + "..."
            return False, f"{where}: got {shown}, which is not what the reference gives"
        return True, ""
    if _is_number(exp):
        if not _is_number(got):
            return False, f"{where}: expected a number, got {type(got).__name__}"
        if isinstance(exp, (int, np.integer)):
            if not isinstance(got, (int, np.integer)):
                return False, f"{where}: expected an integer, got {type(got).__name__} {got!r}"
            if int(got) != int(exp):
                return False, f"{where}: the integer {int(got)} is not what the reference gives"
            return True, ""
        if not math.isclose(float(got), float(exp), rel_tol=case.rtol, abs_tol=case.atol):
            if math.isnan(float(got)) and math.isnan(float(exp)):
                return True, ""
            return False, f"{where}: the number {float(got):.6g} is not what the reference gives"
        return True, ""
    if isinstance(exp, (list, tuple)):
        if not isinstance(got, (list, tuple)):
            return False, f"{where}: expected a sequence, got {type(got).__name__}"
        if len(got) != len(exp):
            return False, f"{where}: has {len(got)} items (expected {len(exp)})"
        for i, (g, e) in enumerate(zip(got, exp, strict=True)):
            ok, msg = _compare(g, e, case, f"{where}[{i}]")
            if not ok:
                return ok, msg
        return True, ""
    if isinstance(exp, dict):
        if not isinstance(got, dict):
            return False, f"{where}: expected a mapping, got {type(got).__name__}"
        if set(got) != set(exp):
            return False, f"{where}: keys {sorted(map(str, got))} are wrong"
        for k in exp:
            ok, msg = _compare(got[k], exp[k], case, f"{where}[{k!r}]")
            if not ok:
                return ok, msg
        return True, ""
    return False, f"{where}: unsupported expected type {type(exp).__name__} (suite bug)"


def outcome(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> str:
    """``"ok"`` or the name of the exception ``fn(*args, **kwargs)`` raised.

    ``NotImplementedError`` (an unfinished stub, and a subclass of RuntimeError) propagates, so
    a stub never passes a case that expects an error.
    """
    try:
        fn(*args, **kwargs)
    except NotImplementedError:
        raise
    except Exception as exc:  # noqa: BLE001 - the exception type is the answer
        return type(exc).__name__
    return "ok"
