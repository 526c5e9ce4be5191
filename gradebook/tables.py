"""Typed access to DataFrame cells and rows.

pandas-stubs types ``frame.at[row, col]`` as the union of every scalar pandas knows and
``to_dict("records")`` as ``dict[Hashable, Any]``; a column's dtype, and so a cell's type, is
known only at run time. These helpers return exactly what pandas returns, typed so the callers
can say what they expect (``float(cell(...))``) without a cast at every use.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, cast

import pandas as pd


def cell(frame: pd.DataFrame, row: Hashable, column: str) -> Any:
    """``frame.at[row, column]``.

    Args:
        frame: any frame.
        row: an index label.
        column: a column name.

    Returns:
        The cell's value, as pandas returns it.
    """
    return frame.at[row, column]


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """``frame.to_dict("records")``: one dict per row, keyed by column name.

    Args:
        frame: a frame whose column names are strings (every frame in the gradebook).

    Returns:
        The rows, in order.
    """
    return cast("list[dict[str, Any]]", frame.to_dict("records"))
