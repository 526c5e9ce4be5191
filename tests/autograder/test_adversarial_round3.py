"""Issue 33, "grading trust, round 3", attacks 1-4: nothing a grade or a leaderboard value
depends on is timed, sized or decided inside the student's process.

Each attack is rewritten here as an extra ``#| export`` cell in a real, finished submission
(the earlier modules' finished notebooks uploaded with it, as students do while those modules
are open) and graded with ``tito grade``, exactly as staff grade:

1. module 20: a clock patched in the child (``time.thread_time`` and every other clock) that
   stands still while the grader's timing of the optimised model runs, which gave
   ``Speed-up 999,999.99``: the parent times the child from outside, so the Speed-up stays the
   honest one;
2. module 19: module 17's cache that never reuses anything (right tokens, no speed-up) with
   module 19's ``single_stream`` wrapped to divide the cached model's latencies by 20, which
   turned the MLPerf-style milestone from 0 to 10 points: the parent times the generation, on
   prompts it draws after the commit, and the milestone stays at 0;
3. module 20: the size read from the student's dtypes: a float16 copy of the baseline as the
   "optimised" model with a baseline whose ``state_dict`` returns float64 (+6 points before),
   and a float128 baseline (8x "compression"): the parent counts bytes at the itemsizes it
   fixes against the reference's float32 baseline, and float128 cannot cross the wire;
4. module 10: ``save`` writing nothing and ``load`` returning the tokenizer kept in memory
   (+2 points before): the parent reads the saved file, and ``load`` reads a file the suite
   wrote itself.

And issue 27 item 3: the MLPerf-style milestone's verdict, the one grade that depends on a
speed, is the same idle and on one core shared with a busy loop (half a CPU, as on Gradescope),
with a margin no noise of
a CPU-time ratio measured from outside comes near.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from coursekit import paths
from coursekit.course import load_course
from tests.autograder.conftest import attacked_submission

COURSE = load_course()
MODULE = {m.number: m for m in COURSE.modules}
MLPERF = next(m for m in COURSE.milestones if m.id == "mlperf_2018")
NEVER_REUSED = ("        keep = min(common_prefix_length(self.tokens, ids), t - 1)\n",
                "        keep = 0\n")

#: Attack 1: every clock of the child advances a nanosecond a reading while the grader times
#: the optimised model (the old event's loop: its local ``which`` was 1), so its time is ~0.
FROZEN_CLOCKS = '''
import sys as _sys
import time as _time

_ticks = [0]

def _rigged(real):
    def clock(*args):
        frame = _sys._getframe(1)
        for _ in range(4):
            if frame is None:
                break
            if frame.f_locals.get("which") == 1 or "submitted" in frame.f_code.co_name:
                _ticks[0] += 1  # a nanosecond a reading: "timed" work that costs nothing
                return _ticks[0] if isinstance(real(), int) else _ticks[0] * 1e-9
            frame = frame.f_back
        return real(*args)
    return clock

for _name in ("thread_time", "process_time", "perf_counter", "monotonic", "time"):
    for _suffix in ("", "_ns"):
        setattr(_time, _name + _suffix, _rigged(getattr(_time, _name + _suffix)))
'''

#: Attack 2: module 19's single_stream reports a twentieth of any cached model's latency.
SINGLE_STREAM_DIVIDED = '''
def _holds_a_cache(obj, depth=0):
    if type(obj).__name__ == "CachedGPT":
        return True
    cells = getattr(obj, "__closure__", None) or ()
    return depth < 3 and any(_holds_a_cache(c.cell_contents, depth + 1) for c in cells)

_honest_single_stream = single_stream

def single_stream(sut, samples, queries, warmup=0, timer=None, **kw):
    got = _honest_single_stream(sut, samples, queries, warmup=warmup,
                                **({"timer": timer} if timer is not None else {}), **kw)
    return [t / 20 for t in got] if _holds_a_cache(sut) else got
'''

#: Attack 3a: a float16 copy as the "optimised" model, and float64 arrays from every other
#: model's state_dict (the baseline's, then 4x "smaller" than float64).
FLOAT16_COPY = '''
import copy as _copy
import numpy as _np
from tinytorch import nn as _nn

_honest_state_dict = _nn.Module.state_dict

def _state_dict(self, *args, **kwargs):
    state = _honest_state_dict(self, *args, **kwargs)
    if getattr(self, "_half", False):
        return state
    out = {}
    for name, value in state.items():
        arr = _np.asarray(getattr(value, "data", value))
        out[name] = arr.astype(_np.float64) if arr.dtype == _np.float32 else value
    return out

_nn.Module.state_dict = _state_dict

def _half_forward(layer):
    def forward(x):
        h = _np.asarray(x.data, dtype=_np.float16) @ layer.weight.data.T + layer.bias.data
        return Tensor(h.astype(_np.float32))
    return forward

def optimize(model, train_x, train_y, **kwargs):
    half = _copy.deepcopy(model)
    for layer in half.modules():
        if isinstance(layer, _nn.Linear):
            layer.weight.data = layer.weight.data.astype(_np.float16)
            layer.bias.data = layer.bias.data.astype(_np.float16)
            layer.forward = _half_forward(layer)
    half._half = True
    return half
'''

#: Attack 3b: the baseline's state_dict in float128 (16 bytes an entry: 8x "compression").
FLOAT128_BASELINE = '''
import numpy as _np
from tinytorch import nn as _nn

_honest_state_dict = _nn.Module.state_dict

def _state_dict(self, *args, **kwargs):
    state = _honest_state_dict(self, *args, **kwargs)
    out = {}
    for name, value in state.items():
        arr = _np.asarray(getattr(value, "data", value))
        out[name] = arr.astype(_np.longdouble) if arr.dtype == _np.float32 else value
    return out

_nn.Module.state_dict = _state_dict
'''

#: Attack 4: save writes nothing; load returns the tokenizer kept in memory.
HOLLOW_SAVE = '''
_kept = {}

def _save_nothing(self, path):
    _kept["last"] = self

def _load_kept(cls, path):
    return _kept["last"]

Tokenizer.save = _save_nothing
Tokenizer.load = classmethod(_load_kept)
'''


def _submission(module: Any, attack: str, tmp_path: Path,
                earlier: dict[str, tuple[str, str]] | None = None) -> Path:
    """A finished notebook of ``module`` with ``attack``, and the earlier modules' finished
    notebooks (``earlier``: a text replacement in one)."""
    return attacked_submission(COURSE, module, attack, tmp_path / "submission",
                               earlier=earlier)


def _lean_course(tmp_path: Path, *, mlperf_seeds: list[int] | None = None) -> Path:
    """course.yml with the MLPerf-style milestone on ``mlperf_seeds`` only (k = all of them)."""
    data = yaml.safe_load((paths.REPO_ROOT / "course.yml").read_text(encoding="utf-8"))
    for m in data["milestones"]:
        if m["id"] == "mlperf_2018" and mlperf_seeds is not None:
            budget = m["time_budget_s"] / len(m["seeds"]) * len(mlperf_seeds)
            m.update(seeds=mlperf_seeds, min_passing_seeds=len(mlperf_seeds),
                     time_budget_s=budget)
    out = tmp_path / "course.yml"
    out.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return out


def _grade(module: Any, submission: Path, tmp_path: Path, *, course: Path | None = None,
           prefix: tuple[str, ...] = ()) -> dict[str, Any]:
    out = tmp_path / "out" / "results.json"
    args = ["--course", str(course)] if course is not None else []
    proc = subprocess.run([*prefix, sys.executable, "-m", "tito.cli", *args, "grade",
                           module.name, str(submission), "-o", str(out)], capture_output=True,
                          text=True, cwd=paths.REPO_ROOT, timeout=2400)
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text(encoding="utf-8"))


def _test(res: dict[str, Any], name: str) -> dict[str, Any]:
    return next(t for t in res["tests"] if t["name"].endswith(name))


def _board(res: dict[str, Any]) -> dict[str, float]:
    return {e["name"]: e["value"] for e in res.get("leaderboard", [])}


# ----------------------------------------------------------------------------- attack 1
def test_a_clock_frozen_in_the_child_leaves_the_speed_up_honest(tmp_path: Path) -> None:
    res = _grade(MODULE[20], _submission(MODULE[20], FROZEN_CLOCKS, tmp_path), tmp_path)
    assert res["score"] == MODULE[20].points, [t["output"][:300] for t in res["tests"]
                                               if t["status"] == "failed"]
    board = _board(res)
    # INT8 in NumPy answers a single query about 3x slower than float32 (0.34x measured):
    # nowhere near 999,999.99, and within course.yml's plausible bound in any case
    assert 0.05 < board["Speed-up"] < 2.0, board
    assert board["Olympics score"] < 3.0, board
    assert "speed not measured" not in _test(res, "olympics_event")["output"]


# ----------------------------------------------------------------------------- attack 2
def test_a_wrapped_single_stream_cannot_make_a_cache_that_never_reuses_pass(tmp_path: Path
                                                                            ) -> None:
    sub = _submission(MODULE[19], SINGLE_STREAM_DIVIDED, tmp_path,
                      earlier={"17_": NEVER_REUSED})
    res = _grade(MODULE[19], sub, tmp_path, course=_lean_course(tmp_path, mlperf_seeds=[0, 1]))
    ms = _test(res, "MLPerf-style benchmarking")
    assert ms["score"] == 0 and "below 5" in ms["output"], ms["output"]
    got = res["extra_data"]["milestones"]["mlperf_2018"]
    assert got["values"]["0"] is not None and got["values"]["0"] < 2.0, got  # ~0.9x, measured
    # k = 2 of 2: seed 0's failure decided the verdict, so seed 1 was never trained
    assert got["untrained"] == [1] and got["values"]["1"] is None, got


# ----------------------------------------------------------------------------- attack 3
def test_a_float16_copy_against_a_float64_baseline_is_not_smaller(tmp_path: Path) -> None:
    res = _grade(MODULE[20], _submission(MODULE[20], FLOAT16_COPY, tmp_path), tmp_path)
    event = _test(res, "olympics_event")
    assert event["score"] == 0 and "needs at least 3.5x smaller" in event["output"], \
        event["output"]
    assert "1.00x smaller (19240 of 19240 bytes)" in event["output"], event["output"]
    board = _board(res)
    digits = {"Olympics score", "Accuracy (%)", "Speed-up", "Size (KB)"}
    if "speed not measured" in event["output"]:
        # The child's float16 forward pass may answer a fresh digit otherwise than the parent's
        # pass of the committed arrays: the timing is refused, and docs/grading.md publishes
        # none of that event's entries (the TinyGPT event's stay), with a note saying why.
        assert not digits & set(board), board
        notes = res.get("extra_data", {}).get("grader_errors", [])
        assert any("leaderboard (olympics_event)" in n for n in notes), notes
    else:
        assert board.get("Size (KB)") == 18.79, board  # the reference's float32 bytes, not 4x less


def test_a_float128_baseline_cannot_cross_the_wire(tmp_path: Path) -> None:
    res = _grade(MODULE[20], _submission(MODULE[20], FLOAT128_BASELINE, tmp_path), tmp_path)
    event = _test(res, "olympics_event")
    assert event["score"] == 0 and "float128 is not plain data" in event["output"], \
        event["output"]
    assert "leaderboard" not in res  # no entry at all, let alone a score of 2.83


# ----------------------------------------------------------------------------- attack 4
def test_a_save_that_writes_nothing_loses_the_round_trip(tmp_path: Path) -> None:
    res = _grade(MODULE[10], _submission(MODULE[10], HOLLOW_SAVE, tmp_path), tmp_path)
    case = _test(res, "bpe_round_trip_and_errors")
    assert case["score"] == 0 and "save wrote no file" in case["output"], case["output"]
    lost = sum(t["max_score"] - t["score"] for t in res["tests"] if "hidden" in t["tags"])
    assert lost == case["max_score"], [t["name"] for t in res["tests"] if t["status"] == "failed"]


# ----------------------------------------------------------------------------- issue 27, item 3
#: Every run's interval for the median speed-up (95 %) must lie this far from the threshold:
#: at or above 1.5x it for the reference (measured: 10.7-11.9x, threshold 5x), at or below
#: half of it for a cache that never reuses (measured: 0.85-0.89x). A CPU-time ratio read from
#: outside moved by about 1 % between an idle machine and one core shared with two busy loops;
#: a verdict would need a 50 % error to flip.
MARGIN = 1.5


def _busy_core(n: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen(["taskset", "-c", "0", sys.executable, "-c", "while True: pass"])
            for _ in range(n)]


@pytest.mark.parametrize("variant", ["reference", "kv_cache_never_reused"],
                         ids=["mlperf_2018-reference", "mlperf_2018-kv_cache_never_reused"])
def test_the_speed_up_verdict_is_the_same_idle_and_under_load(variant: str,
                                                              tmp_path: Path) -> None:
    """Graded idle, then pinned with the child, the twin and the parent to CPU 0 next to a busy
    loop (half a CPU, Gradescope's share): the same points both times, each interval clear of
    the threshold by the margin. (One loaded run with one loop: a second run repeated the
    first's verdict and interval, and a second loop, measured earlier with the same verdicts
    and intervals, made the loaded run a third longer; both are CI time, issue 31 item 7.)"""
    assert os.cpu_count()
    bug = {"17_": NEVER_REUSED} if variant != "reference" else None
    sub = _submission(MODULE[19], "", tmp_path, earlier=bug)
    course = _lean_course(tmp_path, mlperf_seeds=[0])
    seen = []
    for i, loaded in enumerate((False, True)):
        busy = _busy_core(1) if loaded else []
        try:
            run = tmp_path / f"run{i}"
            run.mkdir()
            res = _grade(MODULE[19], sub, run, course=course,
                         prefix=("taskset", "-c", "0") if loaded else ())
        finally:
            for b in busy:
                b.kill()
                b.wait()
        ms = _test(res, "MLPerf-style benchmarking")
        low, high = (float(x) for x in ms["output"].split("interval [")[1].split("]")[0]
                     .split(", "))
        seen.append((loaded, ms["score"], low, high))
    points = {score for _, score, _, _ in seen}
    if variant == "reference":
        assert points == {MLPERF.points}, seen
        assert all(low >= MARGIN * MLPERF.threshold for _, _, low, _ in seen), seen
    else:
        assert points == {0}, seen
        assert all(high <= MLPERF.threshold / 2 for _, _, _, high in seen), seen
    print(f"{variant}: " + "; ".join(f"{'loaded' if ld else 'idle'} [{lo:.2f}, {hi:.2f}]"
                                     for ld, _, lo, hi in seen))
    assert np.isfinite([lo for _, _, lo, _ in seen]).all()
