"""Grading: hidden-suite API (:mod:`autograder.suite`), per-module hidden suites
(``autograder/suites/NN_slug/suite.py``), the sandboxed grading harness
(:mod:`autograder.harness`) and the Gradescope packaging (:mod:`autograder.gradescope`).

Nothing here imports a student's or the reference package in-process: student and reference
code only ever run in child processes started by the harness.
"""
