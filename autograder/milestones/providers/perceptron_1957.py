"""Milestone perceptron_1957, trusted parent only (never loaded in the sandbox): ``task(seed)`` builds
one variant of the task (only its training split goes to the child) and ``predict(params, x)``
is the reference forward pass the returned parameters are tested with on the held-out split."""

from autograder.milestones import make_provider

task, predict = make_provider("perceptron_1957")
