"""Figures a lesson states, tied to the cells that compute them (DESIGN invariant 13).

A module's claims live beside its lesson, in ``solutions/NN_slug/claims.yml``::

    - says: "about 2–3× for one sequence"          # text of the lesson
      printed: 'batch 1 .* 128 .* ([\\d.]+)x'        # a regex over what the cells print
      between: [2, 3]                               # the figure's stated range

``says`` is found in the lesson's prose: its markdown, its comments and its written answers,
with line breaks and repeated spaces read as one space. ``printed`` is searched in the text
output of the executed lesson (stdout, and the plain-text value of a cell's last expression)
and must match exactly once; its groups are the figures, in order. The figures hold against:

``value`` (one number or a list, one per group) within ``tolerance`` (absolute) or ``rel``
(relative to the stated value), or ``between: [low, high]``, ``at_least`` or ``at_most`` (one
group). Every stated number is also a number of ``says``: the claim states what the prose
states, not a figure of its own.

Statically (:func:`static_problems`, fast tier): the file parses, every ``says`` is in the
lesson and holds its numbers, every regex compiles with as many groups as figures. After the
lesson ran (:func:`check_outputs`, the notebook tier, quiet and beside a busy process): every
regex matches once and every figure holds. :func:`unclaimed_expectations` finds the figures
of a lesson's ``# Expected`` comments that no claim covers.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

CLAIMS_FILE = "claims.yml"

# A number as the prose writes it: 1,024 / 0.703 / −128 / 2.3 (not the 3 of "x3" or a version).
_NUMBER = re.compile(r"(?<![\w.])[-−]?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?")
_SPACES = re.compile(r"\s+")


class ClaimsError(ValueError):
    """A claims file that cannot be read; the message is one line naming the file and field."""


class Claim(BaseModel):
    """One figure of a lesson and the output that must support it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    says: str = Field(min_length=3, description="Text of the lesson that states the figure.")
    printed: str = Field(min_length=1, description="Regex over the lesson's output; its groups "
                                                   "are the figures.")
    value: float | list[float] | None = Field(None, description="The stated figure(s), one "
                                                                "per group.")
    tolerance: float | None = Field(None, ge=0, description="Absolute tolerance for `value`.")
    rel: float | None = Field(None, gt=0, description="Relative tolerance for `value`.")
    between: tuple[float, float] | None = Field(None, description="The stated range [low, "
                                                                  "high].")
    at_least: float | None = Field(None, description="The stated lower bound.")
    at_most: float | None = Field(None, description="The stated upper bound.")
    why: str = Field("", description="Why the tolerance (optional).")

    @model_validator(mode="after")
    def _one_kind(self) -> Claim:
        kinds = [k for k in ("value", "between", "at_least", "at_most")
                 if getattr(self, k) is not None]
        if kinds not in (["value"], ["between"], ["at_least"], ["at_most"],
                         ["at_least", "at_most"]):
            raise ValueError("give exactly one of value, between, at_least / at_most, got "
                             f"{kinds or 'none'}")
        if (self.tolerance is not None or self.rel is not None) and self.value is None:
            raise ValueError("tolerance and rel apply to value only")
        if self.value is not None and (self.tolerance is None) == (self.rel is None):
            raise ValueError("value needs exactly one of tolerance (absolute) or rel")
        if self.between is not None and self.between[0] > self.between[1]:
            raise ValueError(f"between must be [low, high], got {list(self.between)}")
        return self

    @property
    def stated(self) -> list[float]:
        """The numbers this claim states (each must appear in ``says``)."""
        if self.value is not None:
            return list(self.value) if isinstance(self.value, list) else [self.value]
        if self.between is not None:
            return list(self.between)
        return [v for v in (self.at_least, self.at_most) if v is not None]

    @property
    def groups(self) -> int:
        """How many figures the regex must capture."""
        return len(self.value) if isinstance(self.value, list) else 1

    def holds(self, figures: list[float]) -> str | None:
        """None when ``figures`` support the claim, else what is wrong (one line)."""
        if self.value is not None:
            wanted = self.value if isinstance(self.value, list) else [self.value]
            for got, want in zip(figures, wanted, strict=True):
                slack = self.tolerance if self.tolerance is not None else (
                    (self.rel or 0.0) * abs(want))
                if not abs(got - want) <= slack + 1e-12:
                    how = (f"± {self.tolerance:g}" if self.tolerance is not None
                           else f"± {100 * (self.rel or 0):g} %")
                    return f"printed {got:g}, the lesson says {want:g} {how}"
            return None
        (got,) = figures
        if self.between is not None and not self.between[0] <= got <= self.between[1]:
            return f"printed {got:g}, the lesson says {self.between[0]:g} to {self.between[1]:g}"
        if self.at_least is not None and not got >= self.at_least:
            return f"printed {got:g}, the lesson says at least {self.at_least:g}"
        if self.at_most is not None and not got <= self.at_most:
            return f"printed {got:g}, the lesson says at most {self.at_most:g}"
        return None


def claims_path(solution: Path) -> Path:
    """``solutions/NN_slug/claims.yml`` beside ``solutions/NN_slug/NN_slug.py``."""
    return solution.parent / CLAIMS_FILE


def load_claims(path: Path) -> list[Claim]:
    """The claims of one file (an empty list when it does not exist).

    Raises:
        ClaimsError: unreadable YAML, not a list, or a claim that breaks the schema (the
            message names the file, the claim's index and the field).
    """
    if not path.exists():
        return []
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise ClaimsError(f"{path}: not YAML: {str(err).splitlines()[0]}") from None
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ClaimsError(f"{path}: must be a list of claims, got {type(raw).__name__}")
    claims = []
    for i, item in enumerate(raw):
        try:
            claims.append(Claim.model_validate(item))
        except ValidationError as err:
            first = err.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "claim"
            raise ClaimsError(f"{path}: claims[{i}].{field}: {first['msg']}") from None
    return claims


def prose(solution: Path) -> str:
    """The lesson's prose as one line: markdown, comments and written answers (``# `` lines),
    whitespace collapsed. Code is left out (a figure stated in code is not prose)."""
    parts = []
    for line in solution.read_text(encoding="utf-8").splitlines():
        stripped = line.lstrip()
        if stripped.startswith("#") and not stripped.startswith("# %%"):
            parts.append(stripped.lstrip("#").strip())
    return _SPACES.sub(" ", " ".join(parts))


def numbers(text: str) -> list[float]:
    """Every number written in ``text`` (thousands separators and a Unicode minus allowed)."""
    out = []
    for m in _NUMBER.finditer(text):
        s = m.group().replace(",", "").replace("−", "-")
        try:
            out.append(float(s))
        except ValueError:
            continue
    return out


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def static_problems(solution: Path) -> list[str]:
    """What is wrong with a lesson's claims before running it (one line each)."""
    path = claims_path(solution)
    try:
        claims = load_claims(path)
    except ClaimsError as err:
        return [str(err)]
    text = prose(solution)
    problems = []
    for i, c in enumerate(claims):
        where = f"{path.name}: claims[{i}] ({c.says[:40]!r})"
        says = _SPACES.sub(" ", c.says.strip())
        if says not in text:
            problems.append(f"{where}: `says` is not in the lesson's prose")
        written = numbers(says)
        missing = [v for v in c.stated if not any(_close(v, w) for w in written)]
        if missing:
            problems.append(f"{where}: states {missing} but `says` writes {written}")
        try:
            groups = re.compile(c.printed).groups
        except re.error as err:
            problems.append(f"{where}: `printed` is not a regex: {err}")
            continue
        if groups != c.groups:
            problems.append(f"{where}: `printed` has {groups} groups for {c.groups} figures")
    return problems


def notebook_text(nb: Any) -> str:
    """What the executed notebook's code cells showed, as text: streams as written (a line may
    arrive in several chunks), and the plain-text form of results and displays on lines of
    their own, cell after cell."""
    out = ""
    for cell in nb["cells"]:
        if cell.get("cell_type") != "code":
            continue
        for output in cell.get("outputs", []):
            kind = output.get("output_type")
            if kind == "stream":
                text = output.get("text", "")
            elif kind in ("execute_result", "display_data"):
                text = output.get("data", {}).get("text/plain", "")
                text = "".join(text) if isinstance(text, list) else text
                if out and not out.endswith("\n"):
                    out += "\n"
                text += "\n"
            else:
                continue
            out += "".join(text) if isinstance(text, list) else text
        if out and not out.endswith("\n"):
            out += "\n"
    return out


def check_outputs(solution: Path, output: str) -> list[str]:
    """Every claim of the lesson against ``output`` (``notebook_text`` of its executed
    notebook): the problems, one line each, naming the claim, the figure and what printed."""
    problems = []
    for i, c in enumerate(load_claims(claims_path(solution))):
        where = f"{CLAIMS_FILE}: claims[{i}] ({c.says[:50]!r})"
        found = list(re.finditer(c.printed, output))
        if len(found) != 1:
            problems.append(f"{where}: `printed` matched {len(found)} times, expected once")
            continue
        try:
            figures = [float(g.replace(",", "")) for g in found[0].groups()]
        except (AttributeError, ValueError):
            problems.append(f"{where}: `printed` captured {found[0].groups()}, not numbers")
            continue
        wrong = c.holds(figures)
        if wrong:
            problems.append(f"{where}: {wrong} (printed: {found[0].group().strip()[:120]!r})")
    return problems


_EXPECTED = re.compile(r"^# Expected\b")
_FIGURE = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?:x\b|\s?(?:×|%|ms\b|µs\b|s\b|kB|KB|MB|"
                     r"GB|GFLOP/s|GB/s|FLOP/byte))")


def unclaimed_expectations(solution: Path) -> list[str]:
    """Figures with a unit (``2.3x``, ``19.3 MB``, ``75 %``) in the ``# Expected`` comments
    after the lesson's experiments that no claim's ``says`` covers: a figure about what a cell
    prints must be checked against what it prints. One line each: ``line N: figure``."""
    claims = [_SPACES.sub(" ", c.says.strip()) for c in load_claims(claims_path(solution))]
    lines = solution.read_text(encoding="utf-8").splitlines()
    out = []
    i = 0
    while i < len(lines):
        if not _EXPECTED.match(lines[i]):
            i += 1
            continue
        start = i
        block = []
        while i < len(lines) and lines[i].startswith("#") and not lines[i].startswith("# %%"):
            block.append(lines[i].lstrip("#").strip())
            i += 1
        text = _SPACES.sub(" ", " ".join(block))
        for m in _FIGURE.finditer(text):
            covered = any(says in text and m.start() >= text.index(says)
                          and m.end() <= text.index(says) + len(says) for says in claims)
            if not covered:
                out.append(f"line {start + 1}: {m.group()!r} in {text[:60]!r}...")
    return out
