"""Milestone mlperf_2018, trusted parent only (never loaded in the sandbox): ``task(seed)`` builds
one digits variant and the parent's prompt (only the training split and the prompt go to the
child), ``predict(params, x)`` is the float MLP's reference forward pass, and the optional hook
``evaluate(result, test_x, test_y)`` judges everything the trainer returned (sizes, held-out
accuracies, sparsity, tokens, the paired timings' median-ratio interval) against course.yml."""

from autograder.milestones.mlperf import evaluate_seed as evaluate
from autograder.milestones.mlperf import predict, task

__all__ = ["evaluate", "predict", "task"]
