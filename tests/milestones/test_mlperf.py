"""The 2018 MLPerf-style milestone: the parent's interval and speed-up rule on hand-made timings,
its model checks on tampered results, the trainer as the sandbox runs it and the provider's
plan and evaluate hooks as the parent runs them, the reference passing
every graded seed, plausible module 15-17 bugs failing (no real speed-up, wrong cached tokens,
an accuracy drop over the bound, weights not stored in 8 bits, the wrong weights pruned), and
the script idle and on a core shared with a busy loop. (The parent's own timing of the child,
from outside, is tested in tests/autograder/test_adversarial_round3.py.)"""

from __future__ import annotations

import copy
import json
import math
import os
import runpy
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from milestone_variants import as_the_child, package_root, variant

import tinytorch_ref
from autograder.milestones import mlperf
from coursekit import paths
from coursekit.course import load_course

MS = mlperf.milestone()

#: Bug -> the words of the parent's note that must explain the failure.
BUGS = {"kv_cache_never_reused": "below 5",
        "kv_cache_mask_hides_own_key": "cached generation differs",
        "quantized_linear_drops_bias": "differs from the float model's",
        "quantized_weights_kept_float": "expected an integer array",
        "prune_largest_weights": "drop over 2 points"}
#: The bug only a timing can see (its verdict is read from the script's run, below).
FAKE_CACHE = "kv_cache_never_reused"



@pytest.fixture(scope="module")
def reference_run() -> dict[str, Any]:
    """The reference on every graded seed, the generation timed by the grader's plan in this
    process: measured once per worker, and read by the reference's own test and (its seed 0)
    by the tests of the parent's checks. Module scope also keeps this file's tests on one
    xdist worker (tests/conftest.py, ``_shares_state``): spread over two, each trained seed 0
    again (issue 31 item 7)."""
    return mlperf.run_in_process(tinytorch_ref)


@pytest.fixture
def reference_seed0(reference_run: dict[str, Any]) -> dict[str, Any]:
    """The reference's raw results for seed 0 (a copy: a test may edit it)."""
    return copy.deepcopy(reference_run["results"][0])


def one_seed() -> Any:
    return MS.model_copy(update={"seeds": [0], "min_passing_seeds": 1})


# ----------------------------------------------------------------------------- the tokens
def _tie_model(tie_at: int, vocab: int = 5):
    """A grader's forward pass whose next-token logits favour ``(last id + 1) % vocab``, with
    ``(last + 2) % vocab`` within 1e-7 of it after ``tie_at`` tokens (a near tie)."""

    def logits(tokens: np.ndarray) -> np.ndarray:
        rows = np.zeros((tokens.shape[1], vocab))
        for i, t in enumerate(tokens[0]):
            rows[i, (t + 1) % vocab] = 1.0
            if i + 1 == tie_at:
                rows[i, (t + 2) % vocab] = 1.0 - 1e-7
        return rows

    return logits


def _greedy_run(prompt: list[int], n: int, vocab: int = 5, flip_at: int | None = None):
    out = list(prompt)
    while len(out) < len(prompt) + n:
        out.append((out[-1] + (2 if len(out) == flip_at else 1)) % vocab)
    return np.array(out, dtype=np.int64)


def test_cached_and_uncached_runs_may_part_only_at_a_near_tie() -> None:
    """Two correct float32 paths can pick different tokens of a near tie (the grader's
    prompts are random, so this would fail a correct submission now and then): the runs may
    part there when both tokens are near-greedy and every cached token stays greedy; they may
    not part anywhere else, and without the grader's forward pass they must agree."""
    from tinytorch_milestones.mlperf_score import check_tokens

    prompt = [0, 1, 2]
    uncached = _greedy_run(prompt, 6)
    parted = _greedy_run(prompt, 6, flip_at=5)  # takes the other token of the tie at 5
    gen = {"prompts": np.array([prompt]), "uncached_tokens": uncached[None],
           "cached_tokens": parted[None]}
    assert check_tokens(gen, 6, 5, _tie_model(tie_at=5)) == ""
    assert "differs from uncached in run 0 at position 5" in check_tokens(gen, 6, 5, None)
    # no tie there: the same split is a wrong token
    assert "differs from uncached in run 0 at position 5" in check_tokens(
        gen, 6, 5, _tie_model(tie_at=99))
    # a tie at 5, but the cached run goes wrong later: the greedy check still catches it
    late = parted.copy()
    late[7] = (late[6] + 3) % 5
    gen["cached_tokens"] = late[None]
    assert "token 7" in check_tokens(gen, 6, 5, _tie_model(tie_at=5))


# ----------------------------------------------------------------------------- the interval
def test_median_interval_uses_order_statistics_with_binomial_coverage() -> None:
    v = np.arange(1.0, 11.0)[::-1]  # 10 values, unsorted
    # P(X <= 1) = 11/1024 <= 0.025 < P(X <= 2) = 56/1024, so k = 2: (v(2), v(9)).
    assert mlperf.median_interval(v, 0.95) == (2.0, 9.0)
    assert mlperf.median_interval(v[:6], 0.95) == (5.0, 10.0)  # 1/64 <= 0.025: min and max
    assert mlperf.median_interval(v[:5], 0.95) == (-math.inf, math.inf)  # 1/32 > 0.025
    assert mlperf.median_interval(v, 0.5)[0] > 2.0  # a lower level gives a narrower interval


def _pairs(ratios: list[float], cached: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    c = np.full(len(ratios), cached)
    return np.asarray(ratios) * c, c


def test_a_clear_speedup_passes_at_the_first_look() -> None:
    d = mlperf.speedup_decision(*_pairs([11, 10, 12, 9, 10.5, 11, 10, 10]), 5.0, 0.95, 6)
    assert d["passed"] and d["decided"] and d["used"] == 6 and d["low"] == 9.0


def test_no_speedup_fails_at_the_first_look() -> None:
    d = mlperf.speedup_decision(*_pairs([1.0, 0.97, 1.02, 0.99, 1.01, 0.98] * 2), 5.0, 0.95, 6)
    assert not d["passed"] and d["decided"] and d["used"] == 6 and d["high"] < 5


def test_a_speedup_near_the_threshold_stays_undecided_and_fails() -> None:
    d = mlperf.speedup_decision(*_pairs([4.5, 5.5] * 6), 5.0, 0.95, 6)
    assert not d["passed"] and not d["decided"] and d["used"] == 12
    assert "undecided after 12 pairs" in d["why"]


def test_outliers_of_a_busy_core_do_not_move_the_median_interval() -> None:
    """A few pairs where the competing process hit one run hard: the median still clears."""
    ratios = [10, 11, 2.0, 10.5, 30.0, 9.5, 10, 1.5, 11, 10.2, 9.8, 10.1]
    d = mlperf.speedup_decision(*_pairs(ratios), 5.0, 0.95, 6)
    assert d["passed"] and d["used"] >= 6 and d["low"] >= 5


def test_too_few_pairs_fail_with_the_reason() -> None:
    d = mlperf.speedup_decision(*_pairs([10.0] * 3), 5.0, 0.95, 6)
    assert not d["passed"] and "only 3 pairs" in d["why"]


def test_timing_stops_only_after_min_pairs_once_decided() -> None:
    """The one stopping rule of the grader's plan and the script: never before ``min_pairs``
    pairs, then as soon as the sequential rule decides, either way."""
    decided = mlperf.scoring().timing_decided
    clear, none, near = _pairs([10.0] * 6), _pairs([1.0] * 6), _pairs([4.5, 5.5] * 3)
    assert decided(*clear, 5.0, 0.95, 6) and decided(*none, 5.0, 0.95, 6)
    assert not decided(*near, 5.0, 0.95, 6)
    assert not decided(*(a[:5] for a in clear), 5.0, 0.95, 6)  # clear, but only 5 pairs


@pytest.mark.parametrize("u, c", [([1.0, 2.0], [1.0]), ([1.0, 0.0], [1.0, 1.0]),
                                  ([1.0, float("nan")], [1.0, 1.0]), ([[1.0]], [[1.0]]),
                                  (["a"], ["b"]), ([], [])])
def test_malformed_timings_are_refused(u: Any, c: Any) -> None:
    with pytest.raises(mlperf.scoring().BadResult):
        mlperf.speedup_decision(np.asarray(u), np.asarray(c), 5.0, 0.95, 1)


def test_every_number_comes_from_course_yml() -> None:
    crit = mlperf.criteria(MS)
    assert set(crit) == set(mlperf.CRITERIA)
    raw = next(m for m in load_course().milestones if m.id == "mlperf_2018")
    assert crit == {k: float(v) for k, v in raw.criteria.items() if k in mlperf.CRITERIA}
    broken = MS.model_copy(update={"criteria": {k: v for k, v in MS.criteria.items()
                                                if k != "int8_min_size_ratio"}})
    with pytest.raises(KeyError, match="criteria: missing int8_min_size_ratio"):
        mlperf.criteria(broken)


def test_the_parent_int8_forward_matches_a_float_forward_within_quantization_error() -> None:
    rng = np.random.default_rng(0)
    hidden = int(mlperf.recipes().MLP["hidden"])  # the recipe's width: no model is trained
    w = rng.standard_normal((hidden, 64)).astype(np.float32)
    scale = (np.abs(w).max(axis=1) / 127).astype(np.float32)
    q = np.clip(np.rint(w / scale[:, None]), -127, 127).astype(np.int8)
    state = {"0.qweight": q, "0.weight_scale": scale, "0.weight_zero_point": np.zeros(hidden, np.int8),
             "0.bias": np.zeros(hidden, np.float32), "2.qweight": np.ones((10, hidden), np.int8),
             "2.weight_scale": np.ones(1, np.float32), "2.weight_zero_point": np.zeros(1, np.int8),
             "2.bias": np.arange(10, dtype=np.float32)}
    (w0, _, qp), _ = mlperf.int8_layers(state)
    assert qp is None and np.max(np.abs(w0 - w)) <= scale.max() / 2 + 1e-6
    # int8 weights, float32 scales, int8 zero points, float32 biases: 9 bytes per output row
    assert mlperf.state_bytes(state) == hidden * 64 + hidden * 9 + 10 * hidden + 4 + 1 + 40


# ----------------------------------------------------------------------------- tampered results
def _score(result: Any) -> tuple[bool, str]:
    r = mlperf.score(one_seed(), {0: result})
    return r["passed"], r["message"]


def test_the_reference_results_pass_and_each_tampering_fails_with_its_reason(
        reference_seed0: dict[str, Any]) -> None:
    good = reference_seed0
    ok, msg = _score(good)
    assert ok, msg

    def tampered(edit: Any) -> str:
        bad = copy.deepcopy(good)
        edit(bad)
        passed, why = _score(bad)
        assert not passed, why
        return why

    def one_cached_token(r: Any) -> None:
        r["generation"]["cached_tokens"][3, -1] = (r["generation"]["cached_tokens"][3, -1] + 1) % 65

    def both_runs_wrong(r: Any) -> None:
        for key in ("cached_tokens", "uncached_tokens"):
            r["generation"][key][:, -5:] = (r["generation"][key][:, -5:] + 1) % 65

    def other_prompt(r: Any) -> None:
        for key in ("cached_tokens", "uncached_tokens"):
            r["generation"][key][:, 0] = (r["generation"][key][:, 0] + 1) % 65

    def swapped_clocks(r: Any) -> None:
        g = r["generation"]
        g["uncached_s"], g["cached_s"] = g["cached_s"], g["uncached_s"]

    def float_weights_in_int8(r: Any) -> None:
        r["int8"]["0.qweight"] = r["int8"]["0.qweight"].astype(np.int16)

    def unpruned(r: Any) -> None:
        r["pruned"] = copy.deepcopy(r["float"])

    def nan_weights(r: Any) -> None:
        r["float"]["2.weight"][0, 0] = np.nan

    def int8_bias_lost(r: Any) -> None:
        r["int8"]["0.bias"] = np.zeros_like(r["int8"]["0.bias"])

    def int8_of_other_weights(r: Any) -> None:
        r["int8"]["2.qweight"] = np.roll(r["int8"]["2.qweight"], 1, axis=1)

    def implausibly_fast(r: Any) -> None:
        r["generation"]["cached_s"] = r["generation"]["cached_s"] / 1e6

    def a_problem(r: Any) -> None:
        r["generation"]["problem"] = "implausible measurement: a process started (1)"

    assert "0.bias differs from the float model's" in tampered(int8_bias_lost)
    assert "not the float model's weight quantized" in tampered(int8_of_other_weights)
    assert "run 3 at position 383" in tampered(one_cached_token)
    assert "not the greedy choice" in tampered(both_runs_wrong)
    assert "prompt" in tampered(other_prompt)
    assert "below 5" in tampered(swapped_clocks)
    assert "more than a KV cache can give" in tampered(implausibly_fast)
    assert "a process started" in tampered(a_problem)
    assert "not an 8-bit integer" in tampered(float_weights_in_int8)
    assert "needs 50%" in tampered(unpruned)
    assert "NaN" in tampered(nan_weights)
    assert "no generation" in tampered(lambda r: r.pop("generation"))
    assert "not the recipe's results" in _score([1, 2, 3])[1]


def test_k_of_n_seeds_and_missing_seeds(reference_seed0: dict[str, Any]) -> None:
    good = reference_seed0
    r = mlperf.score(MS, {0: good, 1: None})
    assert not r["passed"] and r["score"] == 0 and r["per_seed"][1] is None
    assert "seed 1: no results" in r["message"] and "seed 2: no results" in r["message"]


# ----------------------------------------------------------------------------- the contract
def _timed(provider: Any, result: Any, train_x: Any, test_x: Any, seed: int,
           package: Any = tinytorch_ref) -> Any:
    """The parent's view of one slot: the committed ``result`` and the provider's plan driven
    in this process (the child's cached work and the reference's uncached work, as the harness
    would run them in the child and the twin)."""
    from autograder.harness import timing
    from autograder.suite import TimedResult

    rec = mlperf.recipes()
    summary = timing.drive_in_process(provider.plan(result, test_x, timing.plan_rng()),
                                      rec.TIMED_WORK["mlperf_2018"](package, seed, train_x),
                                      lambda data: rec.BASELINE_WORK["mlperf_2018"](
                                          tinytorch_ref, data))
    return TimedResult(result, summary)


def test_trainer_measures_as_the_sandboxed_child_runs_it_and_the_provider_judges(
        reference_run: dict[str, Any]) -> None:
    """The child imports tinytorch_milestones.recipes with autograder imports blocked, trains on the
    provider's training half and commits the models; the provider's plan times the generation
    and its evaluate (parent) judges both on its held-out half.

    The child's models are, array for array, those the reference run trained in this process
    for seed 1, so the provider's plan (``mlperf.plan``, the one ``run_in_process`` drives)
    already timed their generation there: that measurement is judged here rather than a second
    one of the same GPT (issue 31 item 7)."""
    from autograder.harness.milestones import load_provider
    from autograder.suite import TimedResult

    provider = load_provider(paths.REPO_ROOT / "autograder" / "milestones" / "providers"
                             / "mlperf_2018.py")
    train_x, train_y, test_x, test_y = provider.task(1)
    with as_the_child() as rmod:
        result = rmod.parameters(rmod.TRAINERS["mlperf_2018"](
            tinytorch_ref, 1, train_x, train_y, mlperf.work(MS)))
    assert set(result) == {"float", "int8", "pruned", "gpt"}  # nothing timed in the child
    assert result["int8"]["0.qweight"].dtype == np.int8
    in_process = reference_run["results"][1]
    for part in result:
        mine, theirs = result[part], in_process[part]
        assert list(mine) == list(theirs), part
        assert all(np.array_equal(mine[k], theirs[k]) and mine[k].dtype == theirs[k].dtype
                   for k in mine), part
    assert provider.plan is mlperf.plan
    timed = TimedResult(result, in_process["generation"])
    gen = timed.timing
    assert gen["problem"] == "" and len(gen["prompts"]) >= MS.criteria["min_pairs"]
    assert len({row.tobytes() for row in gen["prompts"]}) == len(gen["prompts"])  # fresh
    v = provider.evaluate(timed, test_x, test_y)
    assert v["passed"] and v["value"] >= MS.threshold, v["message"]
    acc = np.mean(provider.predict(result, test_x) == test_y)
    assert acc >= MS.criteria["min_float_accuracy"]
    _, _, other_x, other_y = provider.task(2)  # another variant: the same weights do not fit
    assert np.mean(provider.predict(result, other_x) == other_y) < 0.5
    assert not provider.evaluate(timed, other_x, other_y)["passed"]
    untimed = provider.evaluate(result, test_x, test_y)  # no measurement: no speed-up
    assert not untimed["passed"] and "no generation measurements" in untimed["message"]


def test_the_child_gets_no_held_out_digit_and_no_prompt() -> None:
    """The prompts are drawn by the parent's plan after the models are committed: the child's
    task holds training digits and the token count only."""
    train_x, train_y, test_x, test_y = mlperf.task(3)
    assert set(train_x) == {"images", "new_tokens"} and set(test_x) == {"images"}
    assert train_x["new_tokens"] == MS.criteria["new_tokens"]
    seen = {row.tobytes() for row in np.asarray(train_x["images"])}
    assert len(test_y) == 360 and not any(row.tobytes() in seen for row in test_x["images"])
    assert not np.array_equal(mlperf.task(4)[0]["images"], train_x["images"])


def test_the_harness_runs_the_hook_per_slot_and_keeps_only_the_verdict() -> None:
    """prepare -> child_job -> (the child's trainer) -> on_result -> score, as in the zip: the
    child gets training digits and a training seed (no data seed, no prompt, no held-out
    digit); the parent's hook judges each slot on arrival; k of n over the slots."""
    from autograder.harness import milestones as harness_ms
    from autograder.harness import wire
    from autograder.harness.limits import ModuleInfo
    from autograder.harness.supervisor import Outcome

    snap = {"module": {"number": MS.graded_with, "slug": "x", "points": 1},
            "milestones": [MS.model_dump()], "modules": []}
    info = ModuleInfo.from_any(snap).milestones[0]
    folder = paths.REPO_ROOT / "autograder" / "milestones" / "providers"
    (job,) = harness_ms.find_jobs((info,), [folder])
    harness_ms.prepare(job, key="k" * 64, salt="s" * 64)
    child = harness_ms.child_job([job])
    items = job.items()
    for s, item in zip(job.seeds, items, strict=True):
        train_x, train_y = wire.decode(child["inputs"][item])
        assert set(train_x) == {"images", "new_tokens"}
        assert len(train_y) == len(train_x["images"]) == 1437
        assert str(s.data) not in json.dumps(child)
    first = items[0]
    train_x, train_y = wire.decode(child["inputs"][first])
    recipes = mlperf.recipes()
    result = recipes.parameters(recipes.TRAINERS["mlperf_2018"](
        tinytorch_ref, job.seeds[0].train, train_x, train_y, child["work"]["mlperf_2018"]))
    result = wire.decode(wire.encode(result))
    assert harness_ms.on_result(job, first, result) == {  # committed, never timed: refused
        "invalid": "the work was not committed before it was timed (tampering?)"}
    from autograder.suite import TimedResult
    assert harness_ms.on_result(job, first, TimedResult(result, None, "the twin ended")) == {
        "grader_error": "the twin ended"}
    timed = _timed(job.provider, result, train_x, job.held_out[first][0], job.seeds[0].train)
    good = harness_ms.on_result(job, first, timed)
    assert set(good) == {"verdict"} and good["verdict"]["passed"], good
    bad = harness_ms.on_result(job, items[1], timed)  # trained on another variant
    assert not bad["verdict"]["passed"] and "accuracy" in bad["verdict"]["message"]
    outcomes = {first: Outcome(first, "result", value=good),
                items[1]: Outcome(items[1], "result", value=bad)}
    points, msg, extra = harness_ms.score(job, outcomes)
    assert points == 0 and extra["passing"] == 1 and not extra["passed"], msg
    assert "seed 2: no results" in msg and extra["data_seeds"] == [s.data for s in job.seeds]
    outcomes[items[2]] = Outcome(items[2], "result", value=good)
    points, msg, extra = harness_ms.score(job, outcomes)
    assert points == MS.points and extra["passed"], msg


# ----------------------------------------------------------------------------- reference and bugs
def test_reference_passes_every_graded_seed(reference_run: dict[str, Any]) -> None:
    r = reference_run
    assert r["passed"] and r["passing_seeds"] == list(MS.seeds), r["message"]
    # Its CPU seconds against the cap are no verdict here (a shared machine's speed must not
    # decide one): docs/milestones.md has the measured figures.


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_plausible_bug_fails_the_milestone_for_its_reason(bug: str,
                                                         request: pytest.FixtureRequest) -> None:
    """Each bug on seed 0 with the grader's ``run_in_process``. The cache that never reuses is
    read from the script's run of it (``fake_cache_run``: the script scores with that same
    function), not measured a second time: its 12 s of timed generation were the costliest
    run here (issue 31 item 7)."""
    if bug == FAKE_CACHE:
        run = request.getfixturevalue("fake_cache_run")
        assert run["scored_by"] == "grader", run
        r = {"passed": run["passed"], "message": run["message"]}
    else:
        r = mlperf.run_in_process(variant(bug), seeds=[0])
    assert not r["passed"], r["message"]
    assert BUGS[bug] in r["message"], r["message"]


# ----------------------------------------------------------------------------- the script
def _script(package: str, *args: str, extra_path: Path | None = None
            ) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    if extra_path is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(extra_path), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, str(paths.REPO_ROOT / "milestones" / "mlperf_2018.py"),
                           "--package", package, "--seed", "0", "--json", *args],
                          capture_output=True, text=True, timeout=900, env=env,
                          cwd=paths.REPO_ROOT)


@pytest.fixture(scope="module")
def fake_cache_run() -> dict[str, Any]:
    """The script on seed 0 with a cache that recomputes everything, on an idle core (the
    script's default): its JSON line and ``returncode``. Run once, read by the script's test
    and by that bug's plausible-bug test. (Pinned next to a busy loop it took twice the wall
    time for the same verdict; the grader's verdict on that cache under load is
    tests/autograder/test_adversarial_round3.py's.)"""
    pkg = variant(FAKE_CACHE)
    proc = _script(pkg.__name__, extra_path=package_root(pkg))
    assert proc.stdout.strip(), proc.stderr
    return {**json.loads(proc.stdout.strip().splitlines()[-1]), "returncode": proc.returncode,
            "output": proc.stdout + proc.stderr}


def test_script_passes_with_the_reference_and_fails_a_fake_cache(
        fake_cache_run: dict[str, Any]) -> None:
    """Pinned next to a busy loop (``--contended``: half a core, as on Gradescope), the
    reference still clears 5x; on an idle core (the script's default) a cache that recomputes
    everything fails on its ratio: CPU-second pairs, a median interval. (The student release's
    local run, below, also runs idle.)"""
    proc = _script("tinytorch_ref", "--contended")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    good = json.loads(proc.stdout.strip().splitlines()[-1])
    assert good["passed"] and good["speedup"]["0"] >= 5
    bad = fake_cache_run
    assert bad["returncode"] == 1, bad["output"]
    assert bad["speedup"]["0"] < 2 and "below 5" in bad["message"]


def test_script_scores_locally_in_the_student_release(monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path,
                                                      reference_seed0: dict[str, Any]) -> None:
    """Without the grader (the student release), the released script runs the same recipe and
    the shared scoring (``tinytorch_milestones.mlperf_score``) and reaches the grader's
    verdict."""
    folder = paths.RELEASE / "milestones"
    assert (paths.RELEASE / "tinytorch_milestones" / "mlperf_score.py").read_bytes() == (
        paths.REPO_ROOT / "tinytorch_milestones" / "mlperf_score.py").read_bytes()
    for name in [n for n in sys.modules if n.split(".")[0] in ("tinytorch_milestones",
                                                               "tinytorch_data", "_runner")]:
        monkeypatch.delitem(sys.modules, name)
    # the script as students run it: its folder first, then what it puts on the path itself
    monkeypatch.setattr(sys, "path", [str(folder), *sys.path])
    monkeypatch.chdir(tmp_path)
    mod = runpy.run_path(str(folder / "mlperf_2018.py"), run_name="released_mlperf_2018")
    r = mod["run_local"](tinytorch_ref, [0])
    for name in ("tinytorch_milestones.recipes", "tinytorch_milestones.mlperf_score",
                 "tinytorch_data.loaders"):  # the release's copies, not the repository's
        assert Path(sys.modules[name].__file__ or "").is_relative_to(paths.RELEASE), name
    assert r["passed"] and r["per_seed"][0] >= 5, r["message"]
    grader = mlperf.score(one_seed(), {0: reference_seed0})
    assert r["message"].split("KV cache")[0] == grader["message"].split("KV cache")[0]
