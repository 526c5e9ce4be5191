"""Gradebook: per-module results -> course credit.

Data flows through the package in this order:

``ingest`` / ``inputs`` (parse files) -> ``store`` (append-only SQLite events) ->
``frames`` (the store as DataFrames) -> ``policy`` (pure functions: lateness, tokens,
extensions, overrides, drops, weights, letters) -> ``export`` / ``explain`` / ``report`` /
``check``. ``cli`` is a thin click layer over keyword-only functions in ``api``.

The gradebook never imports student or reference code: it reads results files only.
"""

from gradebook.errors import GradebookError

__all__ = ["GradebookError"]
