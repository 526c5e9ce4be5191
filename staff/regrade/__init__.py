"""``tito regrade``: a Gradescope export graded again with the course's autograder.

``core`` reads the export and writes the regraded one; ``run`` schedules submissions over local
lanes, ``dask`` and ``dask_nodes`` over a Dask cluster (TLS, mutual authentication); ``task`` is
one submission's grading; ``cli`` is the command line (see docs/regrade.md).
"""
