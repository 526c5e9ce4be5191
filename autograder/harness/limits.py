"""Grading limits and the course facts the harness needs, as plain data.

The harness runs both in the repository (where ``coursekit.course`` parses course.yml) and inside
the Gradescope container (where only a JSON course snapshot exists), so it takes either a
``coursekit.course.Module`` plus its course, or a plain dict shaped like :func:`module_snapshot`.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from coursekit.course import Course  # noqa: PLC0415 - types only: the zip has no course.py


@dataclass(frozen=True)
class Limits:
    """Time, memory and output limits for one grading run (course.yml ``course.grading``)."""

    test_timeout_s: float = 20.0
    run_timeout_s: float = 540.0
    memory_limit_mb: int = 700
    max_output_kb: int = 64
    import_timeout_s: float | None = None
    variants: int = 64

    @classmethod
    def from_any(cls, obj: Any) -> Limits:
        """From a Limits, a dict, or an object with the course.yml field names."""
        if obj is None:
            return cls()
        if isinstance(obj, Limits):
            return obj
        if isinstance(obj, dict):
            data = obj
        else:
            data = {k: getattr(obj, k) for k in ("test_timeout_s", "run_timeout_s",
                                                 "memory_limit_mb", "max_output_kb",
                                                 "variants")
                    if hasattr(obj, k)}
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        return cls(**known)

    def within(self, course: Limits) -> Limits:
        """These limits, never above the course's (tests may tighten, nobody may loosen);
        the number of variants is always the course's."""
        return replace(
            self,
            test_timeout_s=min(self.test_timeout_s, course.test_timeout_s),
            run_timeout_s=min(self.run_timeout_s, course.run_timeout_s),
            memory_limit_mb=min(self.memory_limit_mb, course.memory_limit_mb),
            max_output_kb=min(self.max_output_kb, course.max_output_kb),
            variants=course.variants,
        )

    @property
    def import_timeout(self) -> float:
        return self.import_timeout_s if self.import_timeout_s is not None else self.test_timeout_s

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class MilestoneInfo:
    """A milestone graded with a module (course.yml ``milestones[]``)."""

    id: str
    title: str
    metric: str
    threshold: float
    seeds: tuple[int, ...]
    min_passing_seeds: int
    time_budget_s: float
    points: float
    dataset: str = ""
    #: a submitted-weights milestone (course.yml ``weights``): the file name students upload;
    #: nothing runs in the sandbox for it, the parent scores the file (``test_data``).
    weights: str = ""
    test_data: dict[str, Any] | None = None
    #: the fixed work per seed (course.yml ``training``: ``epochs`` or ``steps``,
    #: ``batch_size``, ...), what the child's trainer runs; ``time_budget_s`` only caps it
    training: dict[str, int] | None = None


@dataclass(frozen=True)
class ModuleInfo:
    """What grading needs to know about one module."""

    number: int
    slug: str
    title: str
    points: float
    limits: Limits = field(default_factory=Limits)
    milestones: tuple[MilestoneInfo, ...] = ()
    due: str = ""
    course: str = ""
    all_modules: tuple[tuple[int, str], ...] = ()
    #: module number -> when it stops accepting late work (ISO 8601 with offset); a module
    #: missing here, or with an empty time, never closes.
    closes: tuple[tuple[int, str], ...] = ()
    #: slugs of earlier modules whose reference the autograder carries (None: all of them,
    #: as in the repository)
    reference_modules: tuple[str, ...] | None = None

    @property
    def name(self) -> str:
        return f"{self.number:02d}_{self.slug}"

    def closed(self, number: int, now: dt.datetime) -> bool:
        """Whether module ``number`` no longer accepts late work at ``now`` (aware)."""
        text = dict(self.closes).get(number, "")
        if not text:
            return False
        return now >= dt.datetime.fromisoformat(text)

    def closes_text(self, number: int) -> str:
        """When module ``number`` closes, for messages (``never`` when it does not)."""
        text = dict(self.closes).get(number, "")
        if not text:
            return "never (the course accepts late work without limit)"
        return dt.datetime.fromisoformat(text).strftime("%Y-%m-%d %H:%M %Z").strip()

    @property
    def max_score(self) -> float:
        return self.points + sum(m.points for m in self.milestones)

    @classmethod
    def from_any(cls, module: Any, course: Course | None = None) -> ModuleInfo:
        """From a :func:`module_snapshot` dict, a ModuleInfo, or a ``coursekit.course.Module``."""
        if isinstance(module, ModuleInfo):
            return module
        if isinstance(module, dict):
            return cls._from_dict(module)
        if course is None:
            from coursekit.course import load_course  # noqa: PLC0415 - repository side only

            course = load_course()
        return cls._from_dict(module_snapshot(course, module))

    @classmethod
    def _from_dict(cls, d: dict[str, Any]) -> ModuleInfo:
        mod = d.get("module", d)
        ms = tuple(MilestoneInfo(
            id=m["id"], title=m.get("title", m["id"]), metric=m.get("metric", "accuracy"),
            threshold=float(m["threshold"]), seeds=tuple(int(s) for s in m["seeds"]),
            min_passing_seeds=int(m["min_passing_seeds"]),
            time_budget_s=float(m["time_budget_s"]), points=float(m["points"]),
            dataset=m.get("dataset", ""), weights=m.get("weights") or "",
            test_data=dict(m["test_data"]) if m.get("test_data") else None,
            training={str(k): int(v) for k, v in m["training"].items() if v is not None}
            if m.get("training") else None)
            for m in d.get("milestones", []))
        refs = d.get("reference_modules")
        return cls(number=int(mod["number"]), slug=str(mod["slug"]),
                   title=str(mod.get("title", mod["slug"])), points=float(mod["points"]),
                   limits=Limits.from_any(d.get("limits")), milestones=ms,
                   due=str(mod.get("due", "")), course=str(d.get("course", "")),
                   all_modules=tuple((int(m["number"]), str(m["slug"]))
                                     for m in d.get("modules", [])),
                   closes=tuple((int(m["number"]), str(m.get("closes") or ""))
                                for m in d.get("modules", [])),
                   reference_modules=None if refs is None else tuple(str(r) for r in refs))


def module_snapshot(course: Course, module: Any,
                    extended: dict[int, dt.datetime] | None = None) -> dict[str, Any]:
    """The course facts for grading ``module``, as JSON-able data (goes into the zip).

    ``extended`` (``Course.extension_dues``) pushes back when modules close.
    """
    def closes(m: Any) -> str:
        when = course.closes_at(m, extended)
        return when.isoformat() if when is not None else ""

    return {
        "format": 1,
        "course": f"{course.course.code} {course.course.term}",
        "module": {"number": module.number, "slug": module.slug, "title": module.title,
                   "points": module.points, "due": module.due, "release": module.release,
                   "category": module.category, "timezone": course.course.timezone},
        "limits": Limits.from_any(course.course.grading).as_dict(),
        "milestones": [m.model_dump() for m in course.milestones_graded_with(module.number)],
        "modules": [{"number": m.number, "slug": m.slug, "closes": closes(m)}
                    for m in course.modules],
    }
