"""Lean milestone training for end-to-end grading tests whose verdict does not depend on how
long a milestone trains (how long changes the CI time, not what a run decides): one seed slot,
a short fixed training, and a threshold low enough that the short training passes. The
sandbox, the training in the child and the scoring in the parent stay the real ones."""

from __future__ import annotations

from typing import Any

#: One seed slot and a short fixed training per milestone that trains in the grader.
LEAN_TRAINING = {"xor_1969": {"steps": 100}, "mlp_1986": {"epochs": 3, "batch_size": 32},
                 "cnn_1998": {"epochs": 1, "batch_size": 32},
                 "cnn_fashion_1998": {"epochs": 1, "batch_size": 64},
                 "transformer_reversal_2017": {"steps": 60, "batch_size": 32},
                 "transformer_2017": {"steps": 60, "batch_size": 16}}
LEAN_THRESHOLD = 0.25


def lean_milestones(course_data: dict[str, Any]) -> dict[str, Any]:
    """``course_data`` (course.yml as loaded) with each milestone of :data:`LEAN_TRAINING`
    made lean, in place; returned for chaining."""
    for ms in course_data["milestones"]:
        if ms["id"] in LEAN_TRAINING:
            ms.update(training=LEAN_TRAINING[ms["id"]], seeds=[0], min_passing_seeds=1,
                      threshold=LEAN_THRESHOLD)
    return course_data
