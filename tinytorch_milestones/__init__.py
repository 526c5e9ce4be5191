"""The milestones' code shared by the scripts students run (``milestones/``) and the grader.

``recipes`` holds the training recipe of each milestone (the only milestone code the sandboxed
child loads); ``mlperf_score`` the 2018 milestone's NumPy scoring. Both use only NumPy and the
package under test, so the student release and the Gradescope zip carry this package as is.
"""
