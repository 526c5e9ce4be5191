"""``tito regrade``: a Gradescope export graded again with the course's autograder.

``core`` is the verb (pre-flight, output folder, resumable records, the gradebook ingest):
``export`` reads an export, ``diff`` compares old and new results, ``report`` writes and
prints the report; ``run`` schedules the submissions, slowest first, over local worker
processes (``pool``, each a ``worker``) or a Dask cluster (``dask``, ``dask_nodes``: TLS,
mutual authentication); ``task`` is one submission's grading; ``cli`` is the command line
(see docs/regrade.md).
"""
