"""The capstone's TinyGPT sprint (issue 29 item 3) as the trusted parent grades it: the
reference's ``GPT_RECIPE`` passes the exact-output and perplexity gates and generates faster
than module 13's plain ``generate`` (timed by the parent's plan, both sides through the wire);
doing nothing ranks below it; a text that is not the committed model's greedy text, a model
the perplexity gate catches, and implausible timings publish nothing or zeros."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import tinytorch_ref
from autograder.harness import timing
from autograder.harness.goldens import load_suite
from autograder.suite import Timed, TimedResult
from coursekit import paths
from tests.autograder.test_leaderboard import _run

NAMES = ["GPT tokens/s", "GPT speed-up", "GPT size (KB)"]


def _timed(case: Any, committed: Timed, expected: Any) -> TimedResult:
    """The parent's view of an event: its committed value, and its plan driven in this process
    (the submission's work and the reference baseline's, as child and twin)."""
    summary = timing.drive_in_process(
        case.timing.plan(committed.value, expected, timing.plan_rng()), committed.work,
        lambda data: case.timing.baseline(tinytorch_ref, data))
    return TimedResult(committed.value, summary)


@pytest.fixture(scope="module")
def event() -> SimpleNamespace:
    suite = load_suite(paths.SUITES / "20_capstone" / "suite.py")
    case = next(c for c in suite.cases if c.name == "tinygpt_event")
    committed = case.fn(tinytorch_ref, np.random.default_rng(7))
    expected = case.kept(committed)
    return SimpleNamespace(case=case, mod=SimpleNamespace(**case.fn.__globals__),
                           committed=committed, expected=expected,
                           got=_timed(case, committed, expected))


def _board(event: SimpleNamespace, got: Any) -> tuple[dict[str, float], list[str]]:
    entries, errors = _run(event.mod.tinygpt_leaderboard, got, expected=event.expected)
    return {e["name"]: e["value"] for e in entries}, errors


def test_the_reference_recipe_passes_both_gates_and_beats_plain_generate(event):
    passed, msg = event.case.check(event.got, event.expected)
    assert passed and "held-out perplexity" in msg, msg
    r = event.mod._tinygpt_measure(event.got, event.expected)
    # 116,224 float32 parameters; INT8 keeps tok/pos embeddings, LayerNorms, in_proj and the
    # biases float32 and stores the other Linear weights at 1 byte plus a float32 scale a row
    assert r["base_bytes"] == 4 * 116_224 == 464_896 and r["bytes"] == 235_128
    assert r["perplexity"] <= r["bound"] and abs(r["perplexity"] - r["base_perplexity"]) < 0.01
    board, errors = _board(event, event.got)
    assert list(board) == NAMES and errors == [], (board, errors)
    assert board["GPT speed-up"] > 1.5, board  # the KV cache alone is ~2.5x on CPU time
    assert board["GPT tokens/s"] > 0 and board["GPT size (KB)"] == round(235_128 / 1024, 2)


def test_doing_nothing_ranks_below_the_recipe(event, monkeypatch):
    """``GPT_RECIPE`` all off is module 13's plain generate of the original TinyGPT: it passes
    both gates and its speed-up is about 1, below the reference recipe's."""
    monkeypatch.setattr(tinytorch_ref.capstone, "GPT_RECIPE",
                        {"int8_weights": False, "fused_gelu": False, "kv_cache": False})
    committed = event.case.fn(tinytorch_ref, np.random.default_rng(7))
    plain = _timed(event.case, committed, event.expected)
    assert event.case.check(plain, event.expected)[0]
    nothing, errors = _board(event, plain)
    recipe, _ = _board(event, event.got)
    assert errors == [] and 0.5 < nothing["GPT speed-up"] < 1.5, nothing
    assert nothing["GPT speed-up"] < recipe["GPT speed-up"], (nothing, recipe)
    assert nothing["GPT tokens/s"] < recipe["GPT tokens/s"], (nothing, recipe)
    assert nothing["GPT size (KB)"] == round(464_896 / 1024, 2) > recipe["GPT size (KB)"]


def test_a_text_that_is_not_the_committed_models_fails_the_exact_output_gate(event):
    tokens = event.committed.value["tokens"].copy()
    at = event.mod.GPT_PROMPT + 10
    tokens[0, at] = (tokens[0, at] + 1) % event.mod.GPT_CONFIG["vocab_size"]
    got = TimedResult(dict(event.committed.value, tokens=tokens), event.got.timing)
    passed, msg = event.case.check(got, event.expected)
    assert not passed and f"character {at}" in msg and "not the greedy choice" in msg, msg
    board, _ = _board(event, got)
    assert board["GPT tokens/s"] == 0.0 and board["GPT speed-up"] == 0.0, board


def test_timed_runs_of_another_text_are_refused(event):
    """The committed model is the recipe's, but the timed work returns text no model chose:
    the plan refuses the timing, no entry is published, and the points do not change."""
    def other(prompt: Any) -> np.ndarray:
        return np.concatenate([prompt, np.zeros((1, event.mod.GPT_NEW_TOKENS), np.int64)], 1)

    got = _timed(event.case, Timed(event.committed.value, {"generate": other}), event.expected)
    board, errors = _board(event, got)
    assert board == {} and errors and "not the greedy choice" in errors[0], errors
    passed, msg = event.case.check(got, event.expected)
    assert passed and "speed not measured" in msg, msg


def test_a_model_the_perplexity_gate_catches_scores_zero(event):
    """Halving the head's weights (a bias-free head) keeps every greedy choice, so the text is
    the model's, but flattens its predictions: the perplexity gate fails it."""
    state = dict(event.committed.value["state"])
    key = "head.qweight" if "head.qweight" in state else "head.weight"
    scale = "head.weight_scale" if key == "head.qweight" else key
    state[scale] = state[scale] * np.float32(0.5)
    got = TimedResult(dict(event.committed.value, state=state), event.got.timing)
    passed, msg = event.case.check(got, event.expected)
    assert not passed and "perplexity more than 2% above" in msg, msg
    board, _ = _board(event, got)
    assert board["GPT tokens/s"] == 0.0 and board["GPT speed-up"] == 0.0, board


@pytest.mark.parametrize("why", ["not timed", "faster than any transformer",
                                 "above the plausible"])
def test_implausible_timings_publish_nothing(event, why):
    t = event.got.timing
    n = len(t["baseline_s"])
    timings = {"not timed": None,
               "faster than any transformer": {**t, "submitted_s": [1e-5] * n},
               "above the plausible": {**t, "baseline_s": list(np.asarray(t["submitted_s"])
                                                              * 150)}}
    got = TimedResult(event.committed.value, timings[why])
    board, errors = _board(event, got)
    assert board == {} and errors and why in errors[0], errors
    assert event.case.check(got, event.expected)[0]


def test_the_perplexity_gate_computes_each_model_once_and_never_mixes_two(event):
    """The parent keeps the perplexity of each distinct committed model (a bank's checks and
    a regrade see the same model again and again): the kept value is the one a fresh forward
    pass gives, and a model that differs in one number, or only in its dtype, is its own."""
    g = event.case.fn.__globals__
    kept = g["_PERPLEXITIES"]
    params = {k: np.array(v, dtype=np.float32) for k, v in g["GPT_PARAMS"].items()}
    kept.clear()
    first = g["_gpt_perplexity"](params)
    assert len(kept) == 1
    assert g["_gpt_perplexity"](dict(params)) == first and len(kept) == 1
    kept.clear()
    assert g["_gpt_perplexity"](params) == first  # recomputed: the same value
    other = dict(params)
    other["head.weight"] = params["head.weight"].copy()
    other["head.weight"][0, 0] += 1.0
    assert g["_params_digest"](other) != g["_params_digest"](params)
    assert g["_gpt_perplexity"](other) != first and len(kept) == 2
    as64 = {k: v.astype(np.float64) for k, v in params.items()}
    assert g["_params_digest"](as64) != g["_params_digest"](params)
    for i in range(2 * g["_KEEP_PERPLEXITIES"]):  # bounded: the oldest go first
        shifted = dict(params)
        shifted["head.weight"] = params["head.weight"] + np.float32(i + 2)
        g["_gpt_perplexity"](shifted)
    assert len(kept) == g["_KEEP_PERPLEXITIES"]
    assert g["_params_digest"](params) not in kept
