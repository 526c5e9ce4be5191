"""Child-side probe for milestone perceptron_1957, loaded by the harness before any student code runs."""

from autograder.milestones import make_probe

probe = make_probe("perceptron_1957")
