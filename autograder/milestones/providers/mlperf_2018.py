"""Milestone mlperf_2018, trusted parent only (never loaded in the sandbox): ``task(seed)`` builds
one digits variant (only the training split goes to the child), ``predict(params, x)`` is the
float MLP's reference forward pass, ``plan(result, test_x, rng)`` times the KV-cached generation
from outside after the models are committed (prompts drawn then; the uncached baseline run by
the course's reference in the twin), and ``evaluate(result, test_x, test_y)`` judges everything
the trainer committed and the parent measured (sizes, held-out accuracies, sparsity, tokens, the
paired timings' median-ratio interval) against course.yml."""

from autograder.milestones.mlperf import evaluate_seed as evaluate
from autograder.milestones.mlperf import plan, predict, task

__all__ = ["evaluate", "plan", "predict", "task"]
