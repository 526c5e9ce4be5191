"""The notebook marker grammar: one parser for every tool that reads a solution module.

A solution module (jupytext percent, ``solutions/NN_slug/NN_slug.py``) marks what students
write and what they get. (This file ships to students beside the exporter, so it spells no
marker out: below, ``SOL`` stands for the word of :data:`SOLUTION_WORD`, ``STB`` for
:data:`STUB_WORD`.)

* ``# %%`` starts a cell (``# %% [markdown]`` a markdown cell, ``# %% [raw]`` a raw one);
* ``#| export`` as the first non-blank line makes a code cell part of the package;
* a solution block runs from ``# BEGIN SOL`` (or ``# BEGIN SOL NO PROMPT``) to ``# END SOL``,
  each marker alone on its line; blocks may nest; in a markdown cell of a percent file (a
  written answer) the markers are commented once more (``# # BEGIN SOL``);
* a one-line solution: code ending in ``# SOL`` (or ``# SOL NO PROMPT``) is solution code on
  that line alone (otter's one-line marker);
* a stub line ends in ``# STB``: what students get in place of a block (the reference drops it);
* hidden tests (otter's hidden markers, :data:`LEAK`) never reach students either.

The exporter, the release, the leak scan, the samples and the authoring check all read the
markers through :func:`tag_lines`, so what one calls solution code every other one does too.
Standard library only: the Gradescope zip and the student release carry this file beside the
exporter.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

SOLUTION_WORD = "SOL" + "UTION"
STUB_WORD = "ST" + "UB"
EXPORT_DIRECTIVE = "#| export"

#: a block's opening line; ``np`` is set for ``NO PROMPT`` (the block ships nothing)
BEGIN = re.compile(rf"^\s*# BEGIN {SOLUTION_WORD}(?P<np> NO PROMPT)?\s*$")
END = re.compile(rf"^\s*# END {SOLUTION_WORD}\s*$")
#: the same markers in a markdown cell of a percent file (one more ``# `` in front)
BEGIN_COMMENTED = re.compile(rf"^\s*(# )?# BEGIN {SOLUTION_WORD}(?P<np> NO PROMPT)?\s*$")
END_COMMENTED = re.compile(rf"^\s*(# )?# END {SOLUTION_WORD}\s*$")
#: a one-line solution marker at the end of a code line
ONE_LINE = re.compile(rf"\s*# {SOLUTION_WORD}(?P<np> NO PROMPT)?\s*$")
STUB = re.compile(rf"\s*# {STUB_WORD}\s*$")
CELL = re.compile(r"^# %%(.*)$")
#: any marker text: what must never reach students (the leak scan's marker check)
_HIDDEN = "HID" + "DEN"
LEAK = re.compile(rf"BEGIN {SOLUTION_WORD}|END {SOLUTION_WORD}|#\s?{SOLUTION_WORD}\b"
                  rf"|#\s?{STUB_WORD}\b|BEGIN {_HIDDEN}|{_HIDDEN.lower()}:\s*true")

Kind = Literal["begin", "end", "stub", "solution", "given"]


@dataclass(frozen=True)
class Tagged:
    """One source line as the grammar reads it.

    ``kind``: ``begin``/``end`` (a block marker), ``stub`` (a stub line), ``solution``
    (inside a block, or a one-line solution), ``given`` (everything else). ``text`` is the line
    without its one-line marker; ``depth`` the blocks open around it (a marker counts the
    depth after it); ``number`` is 1-based; ``prompt`` is False for ``NO PROMPT`` markers.
    """

    number: int
    kind: Kind
    text: str
    depth: int
    prompt: bool = True


@dataclass(frozen=True)
class Tags:
    """Every line tagged, and where the blocks do not balance."""

    lines: list[Tagged]
    #: 1-based lines of an END without a BEGIN
    stray_ends: list[int]
    #: 1-based lines of BEGINs never closed
    unclosed: list[int]

    @property
    def balanced(self) -> bool:
        return not self.stray_ends and not self.unclosed


def tag_lines(lines: Iterable[str], *, commented: bool = False) -> Tags:
    """Tag every line of a solution module (or of one cell's source).

    Args:
        lines: the source lines.
        commented: also read markers commented once more (``# # BEGIN ...``), as the written
            answers of a percent file's markdown cells carry them.

    A stray END is reported and does not close anything; the lines after it are read as if
    it were not there.
    """
    begin, end = (BEGIN_COMMENTED, END_COMMENTED) if commented else (BEGIN, END)
    out: list[Tagged] = []
    opened: list[int] = []
    stray: list[int] = []
    for n, line in enumerate(lines, 1):
        m = begin.match(line)
        if m:
            opened.append(n)
            out.append(Tagged(n, "begin", line, len(opened), prompt=not m.group("np")))
            continue
        if end.match(line):
            if opened:
                opened.pop()
            else:
                stray.append(n)
            out.append(Tagged(n, "end", line, len(opened)))
            continue
        if STUB.search(line):
            out.append(Tagged(n, "stub", line, len(opened)))
            continue
        one = ONE_LINE.search(line)
        text = line[:one.start()] if one else line
        solution = bool(opened) or (one is not None and bool(text.strip()))
        out.append(Tagged(n, "solution" if solution else "given", text, len(opened),
                          prompt=not (one and one.group("np"))))
    return Tags(out, stray, opened)


def is_export_source(source: str) -> bool:
    """True when a code cell's first non-blank line is the ``#| export`` directive."""
    for line in source.splitlines():
        if line.strip():
            return line.strip() == EXPORT_DIRECTIVE
    return False


def strip_stub_markers(source: str) -> str:
    """``source`` with the stub marker taken off each stub line (the line kept)."""
    return "\n".join(STUB.sub("", ln) for ln in source.split("\n"))
