"""Every CSV the project writes goes through here: text cannot become a spreadsheet formula.

Names, emails, sections, notes and test names come from exports and rosters that students can
influence (a Gradescope display name is the student's to choose). A cell that starts with
``=``, ``+``, ``-``, ``@`` (or a tab or carriage return, which some spreadsheets skip before
reading one of those) is read by Excel, LibreOffice and Google Sheets as a formula: it can
compute, fetch URLs or run DDE commands when a TA opens the file. Such a text cell is written
with a leading apostrophe (``'=HYPERLINK(...)``), which spreadsheets show as text. Numbers are
left alone: a delta of ``-4`` stays a number.

``tests/test_csv_safety.py`` checks that no other module writes CSV directly.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def _is_number(text: str) -> bool:
    try:
        value = float(text)
    except ValueError:
        return False
    return not math.isnan(value) or text.strip().lower() == "nan"


def neutralise(value: Any) -> Any:
    """A cell value that a spreadsheet will not read as a formula.

    Example:
        >>> neutralise("=1+1"), neutralise("-4"), neutralise(-4.0), neutralise("Ada")
        ("'=1+1", '-4', -4.0, 'Ada')
        >>> neutralise("@SUM(A1)"), neutralise("+1 555 0100 x")
        ("'@SUM(A1)", "'+1 555 0100 x")
    """
    if not isinstance(value, str):
        return value
    if value.startswith(FORMULA_PREFIXES) and not _is_number(value):
        return "'" + value
    return value


def safe_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text cells (and column names) are neutralised."""
    out = frame.copy()
    for col in out.columns:
        if out[col].dtype == object or pd.api.types.is_string_dtype(out[col]):
            out[col] = out[col].map(neutralise)
    out.columns = [neutralise(str(c)) for c in out.columns]
    return out


def write_frame(frame: pd.DataFrame, path: Path, **kwargs: Any) -> Path:
    """``frame.to_csv(path, index=False, **kwargs)`` with every text cell neutralised."""
    safe_frame(frame).to_csv(path, index=False, **kwargs)
    return path


def write_rows(path: Path, header: Sequence[str], rows: Iterable[Sequence[Any]], *,
               lineterminator: str = "\r\n") -> Path:
    """Write a header and rows with :mod:`csv`, every text cell neutralised."""
    with Path(path).open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator=lineterminator)
        writer.writerow([neutralise(h) for h in header])
        for row in rows:
            writer.writerow([neutralise(c) for c in row])
    return Path(path)


def rows_text(header: Sequence[str], rows: Iterable[Sequence[Any]], *,
              lineterminator: str = "\n") -> str:
    """The CSV text of a header and rows, every text cell neutralised."""
    import io

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator=lineterminator)
    writer.writerow([neutralise(h) for h in header])
    for row in rows:
        writer.writerow([neutralise(c) for c in row])
    return buf.getvalue()
