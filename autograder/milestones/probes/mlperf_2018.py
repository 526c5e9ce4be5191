"""Milestone mlperf_2018: ``probe`` trains, quantizes, prunes and times generation in the sandboxed
child (loaded before any student code runs; it holds the training digits only) and returns raw
arrays and timings; ``evaluate`` checks sizes, accuracies, tokens and the speed-up in the trusted
parent."""

from autograder.milestones.mlperf import make_probe, make_verdict

probe = make_probe()
evaluate = make_verdict()
