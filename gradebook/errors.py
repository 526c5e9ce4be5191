"""The one error type of the gradebook: a one-line message naming the file and the field."""

from __future__ import annotations


class GradebookError(ValueError):
    """Bad input or a bad request; ``str(err)`` is one line a TA can act on.

    Example:
        ``roster.csv:7: SIS User ID: empty``
    """

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))


def where(path: object, line: int | None = None, field: str | None = None) -> str:
    """Format a location prefix: ``file:line: field``.

    Args:
        path: the input file (any object with a useful ``str``).
        line: 1-based line (or row) number, if known.
        field: the column or key at fault, if known.

    Returns:
        The prefix without a trailing colon, e.g. ``roster.csv:7: SIS User ID``.
    """
    text = str(path)
    if line is not None:
        text += f":{line}"
    if field:
        text += f": {field}"
    return text
