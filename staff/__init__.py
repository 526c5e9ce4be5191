"""Staff workflows: what course staff run on many submissions, above the grader and the gradebook.

One subpackage or module per verb, as otter-grader keeps its commands: ``staff.regrade`` (a
Gradescope export graded again, on every core or a Dask cluster), ``staff.integrity`` (similarity
screening across submissions and terms), ``staff.synthetic`` (synthetic exports for tests and
benchmarks). They import down into the grader (``autograder``), the gradebook (``gradebook``)
and the course foundation; the grader and the gradebook never import them (docs/layout.md,
``tests/test_layers.py``).
"""
