"""coursekit: the course foundation every other layer imports down into.

The course schema (``course``), where things live (``paths``), the CLI's error classes and
exit codes (``errors``), the exporter (``export``), the notebook marker grammar (``markers``)
and the Gradescope export reader (``gradescope_export``). It imports nothing of this
repository above it; the Gradescope zip carries the files the grader needs.
"""
