"""The course, declared once: course.yml parsed into a typed, validated schema.

Every tito command loads the course through :func:`load_course`. An invalid file raises
:class:`CourseError` whose message is one line naming the file, the field and the problem.
"""

from __future__ import annotations

import csv
import datetime as dt
import math
import re
from pathlib import Path
from typing import TypeAlias
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from coursekit.paths import REPO_ROOT

COURSE_FILE = REPO_ROOT / "course.yml"
_TIME_FORMAT = "%Y-%m-%d %H:%M"


class CourseError(ValueError):
    """course.yml (or a module reference) is invalid; the message is one line."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class GradingLimits(_Strict):
    test_timeout_s: float = Field(20, gt=0, description="CPU-second limit for one hidden test case.")
    run_timeout_s: float = Field(
        540, gt=0, description="Wall-clock limit for grading one submission (Gradescope stops at 600)."
    )
    memory_limit_mb: int = Field(
        700, gt=64, description="Address-space limit for student code (Gradescope gives 768 MB)."
    )
    max_output_kb: int = Field(64, gt=0, description="Student output kept per test case, in KiB.")
    cpu_budget_s: float = Field(
        60, gt=0,
        description="What grading one correct submission of any module may cost: CPU seconds "
                    "of every process of the run, milestone training included. Not a limit "
                    "applied to students: the course's own guard (bench/grading_cpu.py) checks "
                    "the reference and the alternative implementations against it.")
    variants: int = Field(
        64, ge=2, le=1024,
        description="Per-submission variants of every hidden case: each submission's probes "
                    "run with the seeds of one variant (chosen from a salted hash of its "
                    "code); the autograder zip carries expected values for all of them.")


class CourseInfo(_Strict):
    name: str = Field(description="Course name shown in reports and notebooks.")
    code: str = Field(description="Catalogue code, e.g. 'CS 249'.")
    term: str = Field(description="Term label, e.g. 'Spring 2027'.")
    timezone: str = Field(description="IANA time zone of every time in this file.")
    gradebook_store: str = Field(
        "build/gradebook/gradebook.sqlite",
        description="Gradebook store: a path relative to the repository, or a database URL.",
    )
    grading: GradingLimits = Field(default_factory=GradingLimits, description="Grading limits.")

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, v: str) -> str:
        try:
            ZoneInfo(v)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"unknown time zone {v!r}") from exc
        return v


class Tier(_Strict):
    id: str = Field(description="Tier identifier used by modules.")
    title: str = Field(description="Tier title.")


class Module(_Strict):
    number: int = Field(ge=1, le=99, description="Position in the syllabus (01-20).")
    slug: str = Field(pattern=r"^[a-z][a-z0-9_]*$", description="Concept name; also the file name.")
    title: str = Field(description="Title shown to students.")
    tier: str = Field(description="Tier id from `tiers`.")
    category: str = Field("modules", description="Grading category its autograded score counts in.")
    points: float = Field(gt=0, description="Autograded points: the hidden suite's weights sum to it.")
    written_points: float = Field(0, ge=0, description="Hand-graded points of its written questions.")
    hours: float = Field(
        8, gt=0, le=60,
        description="Estimated hours of student work (lesson, code, written questions, its "
                    "milestones): the same in every track; the syllabus adds them up against "
                    "the track's credit hours.")
    release: str = Field(description="Release time, 'YYYY-MM-DD HH:MM' in the course time zone.")
    due: str = Field(description="Due time, 'YYYY-MM-DD HH:MM' in the course time zone.")
    targets: dict[str, float] = Field(
        default_factory=dict,
        description="Named thresholds its hidden suite grades against (module 20's accuracy "
                    "drop and size ratio); the suite names the keys it reads.")

    @field_validator("release", "due")
    @classmethod
    def _time(cls, v: str) -> str:
        try:
            dt.datetime.strptime(v, _TIME_FORMAT)
        except ValueError as exc:
            raise ValueError(f"{v!r} is not a time in the form YYYY-MM-DD HH:MM") from exc
        return v

    @property
    def name(self) -> str:
        """Directory name, e.g. ``01_tensor``."""
        return f"{self.number:02d}_{self.slug}"


class TestData(_Strict):
    """A held-out test file the grading image downloads once, at build time (Gradescope's
    ``setup.sh``), checked by SHA-256 before it is unpacked; never shipped, never in a sandbox."""

    url: str = Field(pattern=r"^(https|file)://", description="Archive to download.")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="SHA-256 of the archive.")
    bytes: int = Field(gt=0, description="Size of the archive in bytes.")
    member: str = Field(pattern=r"^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$",
                        description="The file taken from the archive (a relative path).")


class Training(_Strict):
    """The fixed amount of training the grader runs for one seed of a milestone, and the
    milestone scripts run too (docs/milestones.md). Work, never time: a busy machine trains
    exactly as much as an idle one; ``time_budget_s`` only caps the CPU time it may take."""

    epochs: int | None = Field(
        None, ge=1, description="Passes over the training split (give this or `steps`).")
    steps: int | None = Field(
        None, ge=1, description="Optimizer steps, each on one batch (give this or `epochs`).")
    batch_size: int | None = Field(
        None, ge=1, description="Examples per optimizer step; omitted: the whole training "
                                "split in every step (full batch).")
    finetune_epochs: int | None = Field(
        None, ge=1, description="mlperf_2018: epochs of fine-tuning the pruned model with its "
                                "masks in place, after the `epochs` of the float model.")

    @model_validator(mode="after")
    def _one_unit(self) -> Training:
        if (self.epochs is None) == (self.steps is None):
            raise ValueError("give either epochs or steps (the unit of the fixed work)")
        return self

    def work(self) -> dict[str, int]:
        """The fields that are set, as the plain mapping the trainers read."""
        return {k: int(v) for k, v in self.model_dump(exclude_none=True).items()}


class Milestone(_Strict):
    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$", description="Identifier, e.g. 'xor_1969'.")
    year: int = Field(description="Year of the result being recreated.")
    title: str = Field(description="Title shown to students.")
    requires: list[int] = Field(description="Module numbers the milestone needs.")
    graded_with: int = Field(description="Module whose autograder trains and scores it.")
    dataset: str = Field(description="Dataset name known to the milestone runner.")
    metric: str = Field(description="Metric computed by the grader.")
    threshold: float = Field(description="Minimum metric value to pass.")
    seeds: list[int] = Field(min_length=1, description="Seeds trained; recorded in results.")
    min_passing_seeds: int = Field(ge=1, description="Seeds that must pass (k of n).")
    time_budget_s: float = Field(
        gt=0, description="CPU-second cap for all seeds together (each seed may use its "
                          "share, time_budget_s / len(seeds)); a seed that reaches it fails "
                          "with how far it got. Only a cap: the work is `training`.")
    points: float = Field(gt=0, description="Points when the milestone passes.")
    training: Training | None = Field(
        None, description="The fixed training per seed (epochs or steps, batch size) the "
                          "grader and the scripts run; required unless the milestone grades "
                          "submitted `weights`.")
    criteria: dict[str, float] = Field(
        default_factory=dict,
        description="Further named thresholds a milestone checks besides `threshold` (e.g. "
                    "mlperf_2018's size ratio and accuracy drops); its grader names the keys "
                    "it needs and refuses a course.yml that lacks one.")
    weights: str | None = Field(
        None, pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]*\.npz$",
        description="Trained weights students submit with the graded module (a .npz file "
                    "name). Set, the autograder trains nothing: the trusted parent scores "
                    "these weights with its own forward pass on `test_data`.")
    test_data: TestData | None = Field(
        None, description="Held-out test data the grading image downloads (with `weights`).")

    @model_validator(mode="after")
    def _k_of_n(self) -> Milestone:
        if (self.weights is None) != (self.test_data is None):
            raise ValueError("weights and test_data: give both (a milestone scored from "
                             "submitted weights) or neither")
        if _is_fraction_metric(self.metric) and not 0 < self.threshold <= 1:
            raise ValueError(f"threshold: {self.threshold:g} is not a fraction in (0, 1] "
                             f"for the metric {self.metric!r} (write 0.97, not 97)")
        if self.threshold <= 0:
            raise ValueError(f"threshold: {self.threshold:g} must be positive")
        if self.weights is None and self.training is None:
            raise ValueError("training: required (the epochs or steps and batch size the "
                             "grader trains each seed for)")
        if self.weights is not None and self.training is not None:
            raise ValueError("training: a milestone scored from submitted weights trains "
                             "nothing in the grader; remove training")
        if self.min_passing_seeds > len(self.seeds):
            raise ValueError("min_passing_seeds is larger than the number of seeds")
        if len(set(self.seeds)) != len(self.seeds):
            raise ValueError("seeds repeat")
        return self


def _is_fraction_metric(metric: str) -> bool:
    """Metrics measured as a fraction of examples (accuracy, exact match): thresholds in (0, 1]."""
    return "accuracy" in metric or metric.endswith("match")


class Outcome(_Strict):
    id: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_.-]*$", description="Outcome id, e.g. 'CO1'.")
    text: str = Field(min_length=10, description="What a student who passes can do.")
    modules: list[int] = Field(default_factory=list,
                               description="Modules whose graded work assesses it.")
    milestones: list[str] = Field(default_factory=list,
                                  description="Milestones (ids) that assess it.")
    written: bool = Field(False, description="The modules' written questions assess it (else "
                                             "their autograded code).")


class Category(_Strict):
    id: str = Field(description="Category id, referenced by track weights and modules.")
    title: str = Field(description="Category title in reports.")
    drop_lowest: int = Field(0, ge=0, description="Lowest N items dropped in this category.")


class LatePolicy(_Strict):
    grace_minutes: float = Field(0, ge=0, description="Minutes after the due time that are on time.")
    deduction_per_day: float = Field(
        0.1, ge=0, le=1, description="Fraction of the points lost per started day late."
    )
    max_deduction: float = Field(1.0, ge=0, le=1, description="Cap on the late deduction.")
    tokens: int = Field(0, ge=0, description="Late tokens per student, shared across modules.")
    token_hours: float = Field(24, gt=0, description="Hours of lateness one token forgives.")
    accept_days: float | None = Field(
        None, ge=0,
        description="Days after the due time (plus grace) during which late work is accepted "
                    "(set Gradescope's late due date to it). Until then the module is open: "
                    "its reference never reaches a sandbox, and later modules are graded on "
                    "the student's own copy of it. Default: the days until the deduction "
                    "reaches max_deduction, plus the hours all late tokens can forgive.")

    def window(self) -> dt.timedelta:
        """How long after the due time a module stays open (grace + late acceptance)."""
        if self.accept_days is not None:
            days = float(self.accept_days)
        elif self.deduction_per_day > 0:
            days = math.ceil(self.max_deduction / self.deduction_per_day - 1e-9)
            days += self.tokens * self.token_hours / 24
        else:
            return dt.timedelta.max  # late work is never penalised, so never closed
        return dt.timedelta(minutes=self.grace_minutes, days=days)


class Grading(_Strict):
    categories: list[Category] = Field(min_length=1, description="Grading categories.")
    late: LatePolicy = Field(default_factory=LatePolicy, description="Late policy.")
    letters: dict[str, float] = Field(description="Letter -> minimum percentage, highest first.")
    default_track: str = Field(
        "full", description="Track of a roster row that names none (must be a track id).")
    implausible_late_days: float = Field(
        120, gt=0, description="`gradebook check` flags submissions this many days after the due "
                               "time as a wrong date or module.")

    @field_validator("letters")
    @classmethod
    def _descending(cls, v: dict[str, float]) -> dict[str, float]:
        cuts = list(v.values())
        if not cuts:
            raise ValueError("needs at least one letter")
        if any(a <= b for a, b in zip(cuts, cuts[1:], strict=False)):
            raise ValueError("cutoffs must be listed from highest to lowest, strictly decreasing")
        if cuts[-1] != 0:
            raise ValueError("the lowest letter must have cutoff 0")
        return v


class Track(_Strict):
    id: str = Field(pattern=r"^[a-z][a-z0-9_-]*$",
                   description="Track id, e.g. 'foundation' or 'full' (lower case; roster "
                               "files name it in their Track column).")
    title: str = Field(description="Track title.")
    credits: int = Field(ge=1, description="Credit hours.")
    modules: list[int] = Field(min_length=1, description="Module numbers in this track.")
    weights: dict[str, float] = Field(description="Category id -> weight; weights sum to 1.")


class Integrity(_Strict):
    k: int = Field(12, ge=3, le=100,
                   description="`tito integrity`: syntax-tree tokens per k-gram fingerprint.")
    window: int = Field(6, ge=1, le=100,
                        description="Winnowing window: any match of k + window - 1 tokens is found.")
    max_df: int = Field(10, ge=2, description="Ignore fingerprints shared by more submissions "
                                              "than this (or than max_df_fraction of them).")
    max_df_fraction: float = Field(0.1, gt=0, le=1,
                                   description="Share of submissions above which a fingerprint "
                                               "is a common idiom and ignored.")
    min_shared: int = Field(6, ge=1, description="Fingerprints a pair must share to be listed.")
    flag_score: float = Field(0.6, gt=0, le=1, description="Similarity at which a pair is "
                                                           "flagged for staff review.")


class Course(_Strict):
    course: CourseInfo = Field(description="Name, term, time zone, store and grading limits.")
    tiers: list[Tier] = Field(description="Tiers of the syllabus, in order.")
    modules: list[Module] = Field(min_length=1, description="The modules, in syllabus order.")
    milestones: list[Milestone] = Field(default_factory=list,
                                        description="Historical milestones and thresholds.")
    grading: Grading = Field(description="Categories, late policy, letters, defaults.")
    tracks: list[Track] = Field(min_length=1, description="Tracks a department can adopt.")
    outcomes: list[Outcome] = Field(
        default_factory=list,
        description="Course learning outcomes, each mapped to the modules and milestones that "
                    "assess it (the syllabus's outcome table; curriculum review).")
    integrity: Integrity = Field(default_factory=Integrity,
                                 description="Settings of the code-similarity review (tito "
                                             "integrity); it flags, it never grades.")

    @model_validator(mode="after")
    def _cross_checks(self) -> Course:
        _unique("tiers", [t.id for t in self.tiers])
        _unique("modules", [m.number for m in self.modules], "number")
        _unique("modules", [m.slug for m in self.modules], "slug")
        _unique("milestones", [m.id for m in self.milestones])
        _unique("grading.categories", [c.id for c in self.grading.categories])
        _unique("tracks", [t.id for t in self.tracks])
        numbers = [m.number for m in self.modules]
        if numbers != sorted(numbers):
            raise ValueError("modules: must be listed in syllabus order (by number)")
        tiers = {t.id for t in self.tiers}
        cats = {c.id for c in self.grading.categories}
        for i, m in enumerate(self.modules):
            if m.tier not in tiers:
                raise ValueError(f"modules[{i}].tier: unknown tier {m.tier!r}")
            if m.category not in cats:
                raise ValueError(f"modules[{i}].category: unknown category {m.category!r}")
            if _parse_time(m.due) <= _parse_time(m.release):
                raise ValueError(f"modules[{i}].due: is not after its release {m.release}")
        known = set(numbers)
        for i, ms in enumerate(self.milestones):
            for n in ms.requires:
                if n not in known:
                    raise ValueError(f"milestones[{i}].requires: unknown module {n}")
            if ms.graded_with not in known:
                raise ValueError(f"milestones[{i}].graded_with: unknown module {ms.graded_with}")
            if ms.graded_with < max(ms.requires):
                raise ValueError(
                    f"milestones[{i}].graded_with: module {ms.graded_with} comes before "
                    f"required module {max(ms.requires)}"
                )
        limit = self.course.grading.run_timeout_s
        for n in known:
            budget = sum(ms.time_budget_s for ms in self.milestones if ms.graded_with == n)
            if budget >= limit:
                raise ValueError(f"milestones: the time budgets graded with module {n} add up "
                                 f"to {budget:g} CPU s, not under "
                                 f"course.grading.run_timeout_s ({limit:g} s)")
        if "milestones" not in cats and self.milestones:
            raise ValueError("grading.categories: milestones exist but no 'milestones' category")
        if self.grading.default_track not in {t.id for t in self.tracks}:
            raise ValueError(f"grading.default_track: unknown track {self.grading.default_track!r}")
        for i, t in enumerate(self.tracks):
            for n in t.modules:
                if n not in known:
                    raise ValueError(f"tracks[{i}].modules: unknown module {n}")
            for c in t.weights:
                if c not in cats:
                    raise ValueError(f"tracks[{i}].weights: unknown category {c!r}")
            total = sum(t.weights.values())
            if abs(total - 1.0) > 1e-9:
                raise ValueError(f"tracks[{i}].weights: sum to {total:g}, not 1")
        _unique("outcomes", [o.id for o in self.outcomes])
        milestone_ids = {ms.id for ms in self.milestones}
        for i, o in enumerate(self.outcomes):
            if not o.modules and not o.milestones:
                raise ValueError(f"outcomes[{i}]: {o.id} names no module or milestone that "
                                 "assesses it")
            for n in o.modules:
                if n not in known:
                    raise ValueError(f"outcomes[{i}].modules: unknown module {n}")
            for mid in o.milestones:
                if mid not in milestone_ids:
                    raise ValueError(f"outcomes[{i}].milestones: unknown milestone {mid!r}")
        return self

    # ----------------------------------------------------------------- lookups
    def module(self, ref: str | int) -> Module:
        """Find a module by ``01``, ``1``, ``01_tensor`` or ``tensor``.

        Raises:
            CourseError: no module matches, with the valid choices.
        """
        text = str(ref).strip()
        for m in self.modules:
            if text in (m.slug, m.name) or (text.isdigit() and int(text) == m.number):
                return m
        choices = ", ".join(m.name for m in self.modules)
        raise CourseError(f"unknown module {text!r}; expected one of: {choices}")

    def milestones_graded_with(self, number: int) -> list[Milestone]:
        return [m for m in self.milestones if m.graded_with == number]

    def track(self, track_id: str) -> Track:
        for t in self.tracks:
            if t.id == track_id:
                return t
        raise CourseError(f"unknown track {track_id!r}; expected one of: "
                          + ", ".join(t.id for t in self.tracks))

    def category(self, cat_id: str) -> Category:
        for c in self.grading.categories:
            if c.id == cat_id:
                return c
        raise CourseError(f"unknown category {cat_id!r}")

    @property
    def tz(self) -> ZoneInfo:
        return ZoneInfo(self.course.timezone)

    def local_time(self, text: str) -> dt.datetime:
        """A course time string as an aware datetime in the course time zone."""
        return _parse_time(text).replace(tzinfo=self.tz)

    def closes_at(self, module: Module,
                  extended: dict[int, dt.datetime] | None = None) -> dt.datetime | None:
        """When ``module`` stops accepting late work (due + grace + late window), pushed back
        by the latest extension of anybody (``extended``: :func:`extension_dues`); ``None``
        when it never closes."""
        due = self.local_time(module.due)
        for key in (module.number, 0):
            ext = (extended or {}).get(key)
            if ext is not None and ext > due:
                due = ext
        window = self.grading.late.window()
        if window == dt.timedelta.max:
            return None
        return due + window

    def extension_dues(self, path: Path) -> dict[int, dt.datetime]:
        """The latest extended due time per module from an extensions CSV (the file the
        gradebook ingests: ``student,module,due,hours,reason``; module ``*`` = all).

        Raises:
            CourseError: ``file:line: field: problem`` for a row that cannot be read.
        """
        out: dict[int, dt.datetime] = {}
        try:
            with open(path, encoding="utf-8-sig", newline="") as fh:
                rows = list(csv.DictReader(fh))
        except OSError as exc:
            raise CourseError(f"{path}: {exc.strerror or exc}") from None
        for line, row in enumerate(rows, start=2):
            ref = (row.get("module") or "").strip()
            due_text = (row.get("due") or "").strip()
            hours_text = (row.get("hours") or "").strip()
            mods = self.modules if ref in ("*", "all") else None
            try:
                mods = mods or [self.module(ref)]
                hours = float(hours_text) if hours_text else None
                ext_due = self.local_time(due_text) if due_text else None
            except (CourseError, ValueError) as exc:
                raise CourseError(f"{Path(path).name}:{line}: module/due/hours: {exc}") from None
            for m in mods:
                new = ext_due or (self.local_time(m.due) + dt.timedelta(hours=hours or 0))
                if new > out.get(m.number, self.local_time(m.due)):
                    out[m.number] = new
        return out


def _parse_time(text: str) -> dt.datetime:
    return dt.datetime.strptime(text, _TIME_FORMAT)


def _unique(where: str, values: list, field: str = "id") -> None:
    seen: set = set()
    for v in values:
        if v in seen:
            raise ValueError(f"{where}: duplicate {field} {v!r}")
        seen.add(v)


def _format_error(path: Path, exc: ValidationError) -> str:
    err = exc.errors()[0]
    loc = ".".join(str(p) if not isinstance(p, int) else f"[{p}]" for p in err["loc"])
    loc = re.sub(r"\.\[", "[", loc)
    msg = err["msg"]
    msg = re.sub(r"^(Value error|Assertion failed), ", "", msg)
    if loc:
        return f"{path.name}: {loc}: {msg}"
    return f"{path.name}: {msg}"


#: What a command accepts as its course: a loaded ``Course``, a path to course.yml, or ``None``
#: (the default course.yml); :func:`resolve_course` turns it into a ``Course``.
CourseSource: TypeAlias = "Course | Path | str | None"


def resolve_course(course: CourseSource | object = None) -> Course:
    """A loaded course from a ``Course``, a path to course.yml, or ``None`` (the default).

    Raises:
        CourseError: the file is invalid (one line naming the field).
    """
    if course is not None and hasattr(course, "modules"):
        return course  # type: ignore[return-value]  # a Course, or a test's stand-in
    return load_course(course)  # type: ignore[arg-type]


def load_course(path: Path | str | None = None) -> Course:
    """Load and validate course.yml.

    Args:
        path: the file; defaults to ``$TITO_COURSE`` or the repository's course.yml.

    Raises:
        CourseError: one line naming the file, the field and the problem.
    """
    import os

    p = Path(path or os.environ.get("TITO_COURSE") or COURSE_FILE)
    try:
        # libyaml's safe loader when PyYAML has it: 8x faster, and every test and grading
        # subprocess parses course.yml
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        raw = yaml.load(p.read_text(encoding="utf-8"), Loader=loader)  # noqa: S506 - safe
    except FileNotFoundError as exc:
        raise CourseError(f"{p}: file not found") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise CourseError(f"{p.name}:{where}: {problem}") from exc
    if not isinstance(raw, dict):
        raise CourseError(f"{p.name}: expected a mapping at the top level")
    try:
        return Course.model_validate(raw)
    except ValidationError as exc:
        raise CourseError(_format_error(p, exc)) from exc
