"""The 2017 transformer milestone's parent side: the task variants and the reference decoding.

Two course.yml entries, graded with module 13, under the one milestone contract of
:mod:`autograder.milestones` (providers ``transformer_reversal_2017.py`` and
``transformer_2017.py``):

* ``transformer_reversal_2017`` — write a sequence of 8 digits backwards (renamed digits);
  metric ``exact_match``: the share of held-out sources whose whole reversal is right, by
  greedy decoding;
* ``transformer_2017`` — a character-level GPT on the King James text; metric
  ``next_char_accuracy`` over every position of held-out windows of the validation text.

Per seed, :func:`task` draws a variant (``tinytorch_data/loaders.py`` ``transformer_task``); the
sandboxed child trains module 13's ``GPT`` on the training split with the recipe of
``tinytorch_milestones.recipes`` and returns the trained parameters by name; the trusted parent
runs :mod:`autograder.milestones.gpt_forward` on the held-out split (:func:`predict`). The held-out
split never enters the child.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from autograder.milestones import gpt_forward
from autograder.milestones.data import loaders, recipes

IDS: tuple[str, ...] = ("transformer_2017", "transformer_reversal_2017")

Split = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _check(milestone_id: str) -> None:
    if milestone_id not in IDS:
        raise KeyError(f"{milestone_id!r} is not a task of the 2017 transformer milestone")


def task(milestone_id: str, seed: int) -> Split:
    """One variant: ``(train_x, train_y, test_x, test_y)``; only the training split may be sent
    to the child."""
    _check(milestone_id)
    return tuple(loaders().transformer_task(milestone_id, int(seed)))


@functools.lru_cache(maxsize=None)
def vocab_size(milestone_id: str) -> int:
    """The GPT's vocabulary for a task: 10 digits and the separator, or the 62 KJV characters."""
    _check(milestone_id)
    data = loaders()
    if milestone_id == "transformer_reversal_2017":
        return int(data.REVERSAL_TASK["vocab_size"]) + 1
    return len(data.load_kjv_chars().vocabulary)


def model_config(milestone_id: str) -> dict[str, int]:
    """``gpt_forward.gpt_logits`` keyword arguments for a task (sizes from the recipe)."""
    r = recipes().gpt_recipe(milestone_id)
    return {"vocab_size": vocab_size(milestone_id), "context": r["context"],
            "d_model": r["d_model"], "n_layers": r["n_layers"], "n_heads": r["n_heads"]}


def predict(milestone_id: str, params: Any, x: np.ndarray) -> np.ndarray:
    """What the trained ``params`` answer for held-out inputs ``x`` (reference forward pass).

    * reversal: greedy decoding after ``[source, SEP]``, one token at a time — (N, 8) int64;
    * KJV: the most likely next character at every position of each window — (N, 32) int64.

    Raises:
        gpt_forward.BadParameters: the parameters do not fit the recipe's GPT.
    """
    cfg = model_config(milestone_id)
    x = np.asarray(x, dtype=np.int64)
    if milestone_id == "transformer_2017":
        return gpt_forward.gpt_logits(params, x, **cfg).argmax(axis=-1).astype(np.int64)
    seq = np.concatenate([x, np.full((len(x), 1), cfg["vocab_size"] - 1, dtype=np.int64)], axis=1)
    for _ in range(x.shape[1]):
        nxt = gpt_forward.gpt_logits(params, seq, **cfg)[:, -1].argmax(axis=-1)
        seq = np.concatenate([seq, nxt[:, None].astype(np.int64)], axis=1)
    return seq[:, x.shape[1] + 1:]
