"""Milestone cnn_1998: ``probe`` trains in the sandboxed child (loaded before any student
code runs; it holds the training data and test inputs, never the test labels); ``evaluate``
gives the k-of-n verdict in the trusted parent."""

from autograder.milestones import make_probe, make_verdict

probe = make_probe("cnn_1998")
evaluate = make_verdict("cnn_1998")
