"""Parent side: score a milestone from the predictions the child sent back (k of n seeds).

Runs in the trusted process only. The child never sees the test split; it returns trained
parameters per seed (or nothing, when it crashed or ran out of time), the parent turns them into
predictions with the reference forward pass of the milestone's provider, and this module
computes the metric, applies the threshold and ``min_passing_seeds`` from course.yml, and
awards the milestone's points all or nothing.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

import numpy as np

from coursekit.course import Milestone

#: Metrics computed as the fraction of predictions equal to the labels; ``exact_match``
#: counts a row (e.g. a whole output sequence) as right only when every element is.
ACCURACY_METRICS = ("accuracy", "next_char_accuracy", "exact_match")

#: What a seed left untrained says (:func:`moot_seeds`).
UNTRAINED = "not trained: the seeds before it already decided the verdict"


def moot_seeds(milestone: Milestone | Mapping[str, Any],
               passed: Mapping[int, bool]) -> list[int]:
    """The seeds whose training can no longer change the milestone's k-of-n verdict.

    ``passed`` holds, for the seeds trained so far, whether each reached the threshold (a seed
    that crashed, ran out of time or could not be scored did not). The seeds are read in
    course.yml's order: once ``min_passing_seeds`` of them passed, or more than ``n -
    min_passing_seeds`` failed, every later seed is moot, because the verdict (and the score,
    all or nothing) is then that of training them all. A seed not yet known stops the reading,
    so the answer depends on the seeds' results only, never on the order they arrived in.
    """
    ms = as_milestone(milestone)
    need, n = ms.min_passing_seeds, len(ms.seeds)
    passing = failing = 0
    for i, seed in enumerate(ms.seeds):
        if passing >= need or failing > n - need:
            return list(ms.seeds[i:])
        if seed not in passed:
            return []
        passing, failing = passing + bool(passed[seed]), failing + (not passed[seed])
    return []


def as_milestone(milestone: Milestone | Mapping[str, Any]) -> Milestone:
    """A validated :class:`coursekit.course.Milestone` from itself or from its course.yml mapping."""
    if isinstance(milestone, Milestone):
        return milestone
    return Milestone.model_validate(dict(milestone))


def _check_predictions(pred: Any, test_y: np.ndarray) -> tuple[np.ndarray | None, str]:
    """Plain integer predictions of the right shape, or None and the reason."""
    if not isinstance(pred, np.ndarray):
        if isinstance(pred, list):
            try:
                pred = np.asarray(pred)
            except (ValueError, TypeError):
                return None, "predictions are not a flat list of class numbers"
        else:
            return None, f"predictions are a {type(pred).__name__}, not an array of class numbers"
    if pred.dtype.kind == "f":
        if not np.all(np.isfinite(pred)) or not np.array_equal(pred, np.round(pred)):
            return None, "predictions are not whole class numbers"
        pred = pred.astype(np.int64)
    if pred.dtype.kind not in "iub":
        return None, f"predictions have dtype {pred.dtype}, not integers"
    if pred.shape != test_y.shape:
        return None, f"predictions have shape {pred.shape}, expected {test_y.shape}"
    return pred.astype(np.int64), ""


def evaluate(milestone: Milestone | Mapping[str, Any],
             predictions_by_seed: Mapping[Any, Any],
             test_y: np.ndarray | Mapping[int, np.ndarray],
             untrained: Collection[int] = ()) -> dict[str, Any]:
    """Score one milestone: full points when ``min_passing_seeds`` of its seeds reach threshold.

    Args:
        milestone: the course.yml entry (``Milestone`` or its mapping).
        predictions_by_seed: seed -> the child's predictions for ``test_x`` (shape (N,), ints),
            or ``None`` when that seed crashed, timed out or sent nothing usable. Seeds of the
            milestone that are missing count as ``None``; other seeds are ignored. Keys may be
            ints or their decimal strings (JSON).
        test_y: the true labels, shape (N,) — or (N, L) for ``exact_match`` — or a mapping
            seed -> labels when every seed has its own task variant; never sent to the child.
        untrained: seeds left out because the verdict was decided without them
            (:func:`moot_seeds`): they count as ``None`` and say so.

    Returns:
        ``{"passed", "score", "max_score", "per_seed": {seed: metric or None}, "passing_seeds",
        "seeds", "threshold", "min_passing_seeds", "metric", "message"}``; ``score`` is the
        milestone's points or 0.
    """
    ms = as_milestone(milestone)
    if ms.metric not in ACCURACY_METRICS:
        raise ValueError(f"milestone {ms.id}: metric {ms.metric!r} is not scored from "
                         f"predictions (supported: {', '.join(ACCURACY_METRICS)})")
    per_labels = {int(k): np.asarray(v) for k, v in test_y.items()} if isinstance(
        test_y, Mapping) else dict.fromkeys(ms.seeds, np.asarray(test_y))
    rows = ms.metric == "exact_match"
    for labels in per_labels.values():
        if (labels.ndim not in ((1, 2) if rows else (1,)) or labels.size == 0
                or labels.dtype.kind not in "iub"):
            raise ValueError(f"milestone {ms.id}: test_y must be a non-empty "
                             f"{'1-D or 2-D' if rows else '1-D'} integer array")
    by_seed: dict[int, Any] = {}
    for key, value in predictions_by_seed.items():
        try:
            by_seed[int(key)] = value
        except (TypeError, ValueError):
            continue
    per_seed: dict[int, float | None] = {}
    notes: list[str] = []
    passing: list[int] = []
    for seed in ms.seeds:
        labels = per_labels[seed]
        n = labels.shape[0]
        raw = by_seed.get(seed)
        if seed in untrained:
            per_seed[seed] = None
            notes.append(f"seed {seed}: {UNTRAINED}")
            continue
        if raw is None:
            per_seed[seed] = None
            notes.append(f"seed {seed}: no predictions (crashed or out of time)")
            continue
        pred, why = _check_predictions(raw, labels)
        if pred is None:
            per_seed[seed] = None
            notes.append(f"seed {seed}: {why}")
            continue
        same = pred == labels
        correct = int(np.count_nonzero(same.reshape(n, -1).all(axis=1) if rows else same))
        per_seed[seed] = correct / n
        # NOTE: compare counts, not floats: 396/400 must meet a 0.99 threshold exactly.
        ok = correct + 1e-9 >= ms.threshold * n
        if ok:
            passing.append(seed)
        notes.append(f"seed {seed}: {ms.metric} {correct / n:.4f} ({correct}/{n})"
                     + ("" if ok else " below threshold"))
    passed = len(passing) >= ms.min_passing_seeds
    verdict = "passed" if passed else "failed"
    message = (f"{ms.id} {verdict}: {len(passing)} of {len(ms.seeds)} seeds reached "
               f"{ms.metric} >= {ms.threshold:g} (needed {ms.min_passing_seeds}). "
               + "; ".join(notes))
    return {
        "passed": passed,
        "score": float(ms.points) if passed else 0.0,
        "max_score": float(ms.points),
        "per_seed": per_seed,
        "passing_seeds": passing,
        "seeds": list(ms.seeds),
        "threshold": ms.threshold,
        "min_passing_seeds": ms.min_passing_seeds,
        "metric": ms.metric,
        "message": message,
    }


def k_of_n(milestone: Milestone | Mapping[str, Any],
           verdicts_by_seed: Mapping[int, Mapping[str, Any] | None],
           untrained: Collection[int] = ()) -> dict[str, Any]:
    """Score a milestone whose provider judges each seed itself (the optional ``evaluate``
    hook, e.g. ``mlperf_2018``): full points when ``min_passing_seeds`` of its seeds passed.

    Args:
        verdicts_by_seed: seed -> the hook's ``{"passed": bool, "value": float | None,
            "message": str}``, or ``None`` when that seed crashed, timed out or sent nothing
            usable. Seeds of the milestone that are missing count as ``None``.
        untrained: as for :func:`evaluate`.

    Returns:
        the same dict as :func:`evaluate`; ``per_seed`` holds each seed's ``value``.
    """
    ms = as_milestone(milestone)
    per_seed: dict[int, float | None] = {}
    passing: list[int] = []
    lines: list[str] = []
    for seed in ms.seeds:
        v = verdicts_by_seed.get(seed)
        if seed in untrained:
            per_seed[seed] = None
            lines.append(f"seed {seed}: {UNTRAINED}")
            continue
        if v is None:
            per_seed[seed] = None
            lines.append(f"seed {seed}: no results (crashed or out of time)")
            continue
        value = v.get("value")
        per_seed[seed] = None if value is None else float(value)
        ok = bool(v.get("passed", False))
        if ok:
            passing.append(seed)
        lines.append(f"seed {seed}: {'passed' if ok else 'failed'}: {v.get('message', '')}")
    passed = len(passing) >= ms.min_passing_seeds
    message = (f"{ms.id} {'passed' if passed else 'failed'}: {len(passing)} of {len(ms.seeds)} "
               f"seeds met every target (needed {ms.min_passing_seeds}).\n" + "\n".join(lines))
    return {"passed": passed, "score": float(ms.points) if passed else 0.0,
            "max_score": float(ms.points), "per_seed": per_seed, "passing_seeds": passing,
            "seeds": list(ms.seeds), "threshold": ms.threshold,
            "min_passing_seeds": ms.min_passing_seeds, "metric": ms.metric,
            "message": message}
