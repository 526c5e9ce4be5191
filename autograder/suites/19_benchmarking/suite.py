"""Hidden suite · module 19 (benchmarking). Cases are probes; the trusted parent compares.

Each case returns plain data computed with the package under test ``tt``; the expected value
is the same case run against tinytorch_ref. Every latency, duration, size, seed and report
value comes from ``rng``. No case depends on the speed of the machine: statistics run on
synthetic timing arrays, and the scenarios run on a fake clock that moves only when the fake
system under test "works". Points sum to module 19's ``points`` (50).
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

from autograder.suite import Suite, outcome

suite = Suite(module="19_benchmarking", version="2027.3")
case = suite.case
PERCENTILE = suite.unit("latency_percentile", "latency_percentile")
SUMMARY = suite.unit("latency_summary", "latency_summary", uses=(PERCENTILE,))
T_INTERVAL = suite.unit("t_interval", "t_interval")
BOOTSTRAP = suite.unit("bootstrap_ci", "bootstrap_ci")
SINGLE_STREAM = suite.unit("single_stream", "single_stream")
OFFLINE = suite.unit("offline", "offline")
ACCURACY = suite.unit("evaluate_accuracy", "evaluate_accuracy")
RUN_SCENARIO = suite.unit("run_scenario", "run_scenario",
                          uses=(PERCENTILE, SUMMARY, T_INTERVAL, SINGLE_STREAM, OFFLINE, ACCURACY))
VERDICT = suite.unit("speedup_verdict", "speedup_verdict", uses=(T_INTERVAL,))
GATE = suite.unit("check_gate", "check_gate")
LATENCY = suite.unit("check_latency", "check_latency")
VERDICT_CHECK = suite.unit("check_verdict", "check_verdict")
RTOL, ATOL = 1e-9, 1e-12


def _b(tt):
    """The module file under test (``tt`` is the package: the student's or the reference)."""
    return importlib.import_module(f"{tt.__name__}.benchmarking")


def _int(rng, low, high):
    return int(rng.integers(low, high + 1))


def _latencies(rng, n):
    """Skewed, realistic latencies (ms): a log-normal body and a few slow outliers."""
    body = rng.lognormal(mean=0.0, sigma=0.3, size=n)
    slow = rng.random(n) < 0.05
    return (body + slow * rng.uniform(2.0, 10.0, size=n)).tolist()


class _Clock:
    """A fake clock, and fake systems under test that advance it when called."""

    def __init__(self):
        self.now = 0.0
        self.calls = []

    def __call__(self):
        return self.now

    def sut(self, durations, classes=3, per_sample=0.0):
        """Call k takes ``durations[k % len] + per_sample * batch``; predicts the class stored
        in feature 0 of each sample (so accuracy is set by the data)."""
        state = {"k": 0}

        def fn(batch):
            batch = np.asarray(batch)
            self.calls.append((batch.shape, float(batch[0, 0])))
            self.now += durations[state["k"] % len(durations)] + per_sample * len(batch)
            state["k"] += 1
            return np.eye(classes)[batch[:, 0].astype(np.int64) % classes]

        return fn


def _samples(rng, n, classes=3, features=2):
    """Samples whose feature 0 is the class the fake SUT predicts, and labels that agree with
    it for a random share of them."""
    x = rng.standard_normal((n, features))
    x[:, 0] = rng.integers(0, classes, size=n)
    labels = x[:, 0].astype(np.int64).copy()
    wrong = rng.random(n) < rng.uniform(0.05, 0.4)
    labels[wrong] = (labels[wrong] + 1) % classes
    return x, labels


# ----------------------------------------------------------------------------- statistics (19)
@case(unit=PERCENTILE, points=5, rtol=RTOL, atol=ATOL,
      hint="latency_percentile: sort the latencies and take index int(n * percentile / 100) "
           "(0-based, multiply before dividing, no interpolation); percentile must be in [0, 100) "
           "and the list non-empty, else ValueError.",
      stated={
          "latency_percentile": (
              "``sorted(latencies)[int(n * percentile / 100)]`` as a Python float",
              "ValueError: no latencies, or ``percentile`` outside ``[0, 100)``.",
              "Return ``float(values[int(n * percentile / 100)])``.",
              "Dividing by 100 *after* multiplying keeps ``n · p`` exact for whole numbers",
          ),
      })
def latency_percentile_loadgen_rule(tt, rng):
    b = _b(tt)
    out = []
    for n in (1, _int(rng, 5, 13), 100, _int(rng, 900, 1100)):
        lat = _latencies(rng, n)
        ps = [0, 50, 90, 99, 99.9, float(rng.uniform(0, 100)), _int(rng, 1, 99)]
        out.append([b.latency_percentile(lat, p) for p in ps])
    hundred = rng.permutation(np.arange(1.0, 101.0))
    out.append([b.latency_percentile(hundred, p) for p in (29, 57, 58, 14)])
    out.append([outcome(b.latency_percentile, [], 50),
                outcome(b.latency_percentile, [1.0, 2.0], 100),
                outcome(b.latency_percentile, [1.0, 2.0], -0.5)])
    return out


@case(unit=SUMMARY, points=4, rtol=RTOL, atol=ATOL,
      hint="latency_summary: count (an int), mean, then p50, p90 and p99 by LoadGen's rule, min "
           "and max, under exactly these keys, as Python numbers; no latencies: ValueError.",
      stated={
          "latency_summary": (
              '``{"count": int, "mean", "p50", "p90", "p99", "min", "max": float}`` in the unit of the latencies (Python numbers).',
              "ValueError: no latencies.",
              "``count = len(values)``, ``mean = float(values.mean())``; ``p50``, ``p90``, ``p99`` with your ``latency_percentile``; ``float`` of ``values.min()`` and ``values.max()``.",
          ),
      })
def latency_summary_fields(tt, rng):
    b = _b(tt)
    out: list[Any] = []
    for n in (_int(rng, 1, 4), _int(rng, 20, 60), _int(rng, 300, 500)):
        summary = b.latency_summary(np.asarray(_latencies(rng, n)))
        out.append([summary, type(summary["count"]).__name__, type(summary["p90"]).__name__])
    out.append(outcome(b.latency_summary, []))
    return out


@case(unit=T_INTERVAL, points=5, rtol=1e-9, atol=1e-12,
      hint="t_interval: mean ± t_quantile((1 + confidence) / 2, n - 1) * s / sqrt(n) with the "
           "sample standard deviation s (ddof=1); fewer than 2 values or a confidence outside (0, "
           "1): ValueError.",
      stated={
          "t_interval": (
              "``(mean, low, high)`` Python floats: ``mean ∓ t_quantile((1 + confidence) / 2, n - 1) · s / sqrt(n)``, with ``s`` the sample standard deviation (``ddof=1``).",
              "ValueError: fewer than two values, or ``confidence`` outside (0, 1).",
          ),
      })
def t_interval_values(tt, rng):
    b = _b(tt)
    out = []
    for n, c in [(2, 0.95), (_int(rng, 3, 6), 0.9), (_int(rng, 7, 15), 0.99),
                 (_int(rng, 20, 40), float(rng.uniform(0.5, 0.99)))]:
        values = (rng.standard_normal(n) * rng.uniform(0.1, 5.0) + rng.uniform(1, 50)).tolist()
        out.append(list(b.t_interval(values, confidence=c)))
    out.append(list(b.t_interval(np.array([4.0, 4.0, 4.0]))))  # no spread: a point
    out.append([outcome(b.t_interval, [1.0]), outcome(b.t_interval, [1.0, 2.0], 0.0),
                outcome(b.t_interval, [1.0, 2.0], 1.0)])
    return out


@case(unit=BOOTSTRAP, points=5, rtol=RTOL, atol=ATOL,
      hint="bootstrap_ci: idx = np.random.default_rng(seed).integers(0, n, size=(n_resamples, "
           "n)); stats = statistic(values[idx], axis=1); the 100(1-c)/2 and 100(1+c)/2 "
           "percentiles of stats (np.percentile) as floats; bad arguments: ValueError.",
      stated={
          "bootstrap_ci": (
              "statistic: called as ``statistic(array, axis=1)`` on a ``(n_resamples, n)`` array",
              "``(low, high)``: the ``100·(1−c)/2`` and ``100·(1+c)/2`` percentiles (``np.percentile``, linear) of the resampled statistics, as Python floats.",
              "ValueError: no values, ``n_resamples < 1`` or ``confidence`` outside (0, 1).",
              "``idx = np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))``.",
              "``stats = statistic(v[idx], axis=1)``",
              "``low, high = np.percentile(stats, [100 * (1 - confidence) / 2, 100 * (1 + confidence) / 2])``; return them as floats.",
          ),
      })
def bootstrap_ci_percentile_method(tt, rng):
    b = _b(tt)

    def p99(a, axis):
        return np.percentile(a, 99, axis=axis)

    out = []
    values = _latencies(rng, _int(rng, 30, 80))
    for statistic, c in [(np.median, 0.95), (np.mean, float(rng.uniform(0.6, 0.99))), (p99, 0.9)]:
        seed = _int(rng, 0, 10_000)
        out.append(list(b.bootstrap_ci(values, statistic, confidence=c,
                                       n_resamples=_int(rng, 50, 400), seed=seed)))
    out.append(list(b.bootstrap_ci(np.asarray(values[:5]))))  # the defaults
    out.append(list(b.bootstrap_ci(values[:4], np.mean, n_resamples=1, seed=_int(rng, 0, 99))))
    out.append([outcome(b.bootstrap_ci, []), outcome(b.bootstrap_ci, [1.0], n_resamples=0),
                outcome(b.bootstrap_ci, [1.0, 2.0], confidence=1.5)])
    return out


# ----------------------------------------------------------------------------- scenarios (12)
@case(unit=SINGLE_STREAM, points=5, rtol=RTOL, atol=ATOL,
      hint="single_stream: warmup untimed queries first (samples 0, 1, ... cycling), then each "
           "query q sends samples[q % n : q % n + 1] (a batch of one) and records timer() after "
           "minus timer() before; bad arguments: ValueError.",
      stated={
          "single_stream": (
              "samples: an array ``(n, ...)``; query ``q`` sends sample ``q % n`` (cycling).",
              "queries: timed queries (>= 1); warmup: untimed queries first (>= 0), samples ``0, 1, ...`` (cycling too).",
              "``queries`` latencies, ``timer()`` after the call minus ``timer()`` before, in order.",
              "ValueError: ``queries < 1``, ``warmup < 0`` or no samples.",
              "``for q in range(warmup): sut(samples[q % n : q % n + 1])``.",
              "For each ``q`` of ``range(queries)``: ``x = samples[q % n : q % n + 1]`` (slice the batch *before* reading the clock); ``start = timer()``; ``sut(x)``; append ``timer() - start``.",
          ),
      })
def single_stream_fake_clock(tt, rng):
    b = _b(tt)
    n, warmup, queries = _int(rng, 2, 5), _int(rng, 0, 4), _int(rng, 6, 14)
    samples = rng.standard_normal((n, 3))
    clock = _Clock()
    durations = rng.uniform(0.001, 0.01, size=warmup + queries).tolist()
    latencies = b.single_stream(clock.sut(durations), samples, queries, warmup=warmup,
                                timer=clock)
    one = b.single_stream(clock.sut([0.25]), samples[:1], 1, warmup=0, timer=clock)
    errors = [one, outcome(b.single_stream, clock.sut([0.0]), samples, 0),
              outcome(b.single_stream, clock.sut([0.0]), samples, 3, warmup=-1),
              outcome(b.single_stream, clock.sut([0.0]), samples[:0], 3)]
    return [latencies, clock.calls[:warmup + queries], errors]


@case(unit=OFFLINE, points=4, rtol=RTOL, atol=ATOL,
      hint="offline: warmup untimed calls on samples[:batch_size], then read the clock once "
           "before and once after sending every sample in batches (the last may be smaller); "
           "return n / seconds; bad arguments: ValueError.",
      stated={
          "offline": (
              "batch_size: samples per call (>= 1; the last batch may be smaller); warmup: untimed calls on the first batch.",
              "``n / (timer() after the last batch - timer() before the first)``, a Python float.",
              "ValueError: ``batch_size < 1``, ``warmup < 0`` or no samples.",
              "``warmup`` times: ``sut(samples[:batch_size])``.",
              "``start = timer()``; for ``i`` in ``range(0, n, batch_size)``: ``sut(samples[i:i + batch_size])``; ``seconds = timer() - start``.",
          ),
      })
def offline_fake_clock(tt, rng):
    b = _b(tt)
    n, batch, warmup = _int(rng, 10, 40), _int(rng, 3, 9), _int(rng, 1, 3)
    samples = rng.standard_normal((n, 2))
    clock = _Clock()
    durations = rng.uniform(0.01, 0.1, size=20).tolist()
    rate = b.offline(clock.sut(durations, per_sample=0.002), samples, batch, warmup=warmup,
                     timer=clock)
    calls = [shape for shape, _ in clock.calls]
    one = b.offline(clock.sut([0.5]), samples[:1], 1, warmup=0, timer=clock)
    errors = [one, outcome(b.offline, clock.sut([0.0]), samples, 0),
              outcome(b.offline, clock.sut([0.0]), samples, 2, warmup=-1),
              outcome(b.offline, clock.sut([0.0]), samples[:0], 2)]
    return [rate, calls, errors]


@case(unit=ACCURACY, points=3, rtol=RTOL, atol=ATOL,
      hint="evaluate_accuracy: every sample once in batches of batch_size (the SUT may return a "
           "Tensor), concatenate the scores, and module 07's accuracy against the labels.",
      stated={
          "evaluate_accuracy": (
              "Accuracy mode: every sample once, in batches, untimed; the fraction classified right.",
              "``scores = [np.asarray(_as_array(sut(samples[i:i + batch_size])))`` for ``i`` in ``range(0, len(samples), batch_size)]``; return module 07's ``accuracy(np.concatenate( scores), labels)``.",
              "the SUT may return a Tensor",
          ),
      })
def evaluate_accuracy_batches(tt, rng):
    b = _b(tt)
    n = _int(rng, 11, 90)
    x, labels = _samples(rng, n, classes=4)
    clock = _Clock()
    plain = clock.sut([0.0], classes=4)

    def as_tensor(batch):
        return tt.Tensor(plain(batch).astype(np.float32))

    got = b.evaluate_accuracy(as_tensor, x, labels, batch_size=_int(rng, 3, 17))
    return [got, float(np.mean(x[:, 0] == labels)), [s for s, _ in clock.calls]]


# ----------------------------------------------------------------------------- results (12)
@case(unit=RUN_SCENARIO, points=7, rtol=1e-9, atol=1e-9,
      hint="run_scenario: accuracy first (untimed); per run: single stream -> p90 of the run's "
           "latencies x 1000 (ms), offline -> samples/s; t_interval of the run metrics gives "
           "value and ci; status VALID iff accuracy >= target; latency_ms summarises every timed "
           "query of every run (None offline).",
      stated={
          "run_scenario": (
              '``{"scenario", "status", "metric", "value", "ci": [low, high], "confidence", "runs", "accuracy", "accuracy_target", "latency_ms"}``',
              "``value``/``ci`` are ``t_interval`` of the per-run metrics (single stream: each run's p90 in **milliseconds**, ``1000 ×`` the timer's seconds; offline: each run's samples/s); ``status`` is ``\"VALID\"`` when ``accuracy >= accuracy_target`` else ``\"INVALID\"``; ``latency_ms`` is ``latency_summary`` of every single-stream latency of every run in ms (``None`` for Offline).",
              "ValueError: an unknown scenario (the message lists ``SCENARIOS``) or ``runs < 2``.",
              "Check ``scenario`` and ``runs``; ``acc = evaluate_accuracy(sut, samples, labels, batch_size)`` (accuracy mode first, untimed).",
              "For each run: single stream — ``ms = [1000.0 * s for s in single_stream(sut, samples, queries, warmup, timer)]``, keep them all, and the run's metric is ``latency_percentile(ms, 90)``; offline — ``offline(sut, samples, batch_size, warmup, timer)``.",
          ),
      })
def run_scenario_gates_and_summarises(tt, rng):
    b = _b(tt)
    x, labels = _samples(rng, _int(rng, 12, 24))
    acc = float(np.mean(x[:, 0] == labels))
    out = []
    for scenario, target, runs, queries in [("SingleStream", acc - 0.01, 2, _int(rng, 5, 15)),
                                            ("Offline", acc + 0.01, _int(rng, 2, 4), 1),
                                            ("SingleStream", acc, 3, _int(rng, 100, 140))]:
        clock = _Clock()
        durations = rng.uniform(0.0005, 0.004, size=37).tolist()
        result = b.run_scenario(clock.sut(durations, per_sample=0.0001), x, labels, scenario,
                                accuracy_target=target, runs=runs,
                                queries=queries, batch_size=_int(rng, 4, 9),
                                warmup=_int(rng, 1, 3), confidence=float(rng.uniform(0.8, 0.99)),
                                timer=clock)
        out.append(result)
    errors = [outcome(b.run_scenario, _Clock().sut([0.0]), x, labels, "Server",
                      accuracy_target=0.5),
              outcome(b.run_scenario, _Clock().sut([0.0]), x, labels, "Offline",
                      accuracy_target=0.5, runs=1)]
    return [out, errors]


@case(unit=VERDICT, points=5, rtol=RTOL, atol=ATOL,
      hint="speedup_verdict: (low, high) = median_ci(ratios, confidence) (module 14); ratio = the "
           "median; verdict pass if low >= threshold, else fail if high < threshold, else "
           "inconclusive; also confidence, threshold and pairs.",
      stated={
          "speedup_verdict": (
              '``{"ratio": median, "ci": [low, high], "confidence", "threshold", "pairs": n, "verdict"}`` with ``(low, high) = median_ci(ratios, confidence)`` (module 14) and ``verdict`` ``"pass"`` if ``low >= threshold``, ``"fail"`` if ``high < threshold``, else ``"inconclusive"``.',
              "``ratio = float(np.median(ratios))``; decide the verdict in the order pass, fail, inconclusive.",
          ),
      })
def speedup_verdict_cases(tt, rng):
    b = _b(tt)
    out = []
    threshold = float(rng.uniform(2.0, 6.0))
    for center, n in [(threshold * 1.3, _int(rng, 9, 20)), (threshold * 0.7, _int(rng, 9, 20)),
                      (threshold, _int(rng, 9, 20)), (threshold * 2.0, 5)]:
        ratios = (center * (1.0 + 0.05 * rng.standard_normal(n))).tolist()
        out.append(b.speedup_verdict(ratios, threshold, confidence=float(rng.uniform(0.8, 0.95))))
    exact = [threshold] * 6  # low == threshold: pass (>=)
    out.append(b.speedup_verdict(exact, threshold, confidence=0.9)["verdict"])
    edge = [threshold - 1.0] * 3 + [threshold] * 3  # high == threshold: not a fail
    out.append(b.speedup_verdict(edge, threshold, confidence=0.9)["verdict"])
    return out


# ----------------------------------------------------------------------------- report (7)
# validate_report is provided: it walks the schema's table and calls the three checks students
# write, each graded on its own, with the arguments its docstring pins (a result or comparison
# whose other fields are already checked, and its path).
def _field(b, fn, *args):
    """The field a ReportError names (and that it is a ValueError), or None: no error."""
    try:
        fn(*args)
    except b.ReportError as err:
        return [err.field, isinstance(err, ValueError)]
    return None


def _at(rng, kind):
    return f"{kind}[{_int(rng, 0, 9)}]"


@case(unit=GATE, points=2,
      hint="check_gate: recompute the status, VALID when accuracy >= accuracy_target (exactly at "
           "the target too), INVALID otherwise, and raise ReportError on f'{at}.status' when the "
           "result's status (a missing one too) is not that.",
      stated={
          "check_gate": (
              'ReportError: on field ``f"{at}.status"`` unless ``result["status"]`` is ``"VALID"`` when ``accuracy >= accuracy_target`` and ``"INVALID"`` otherwise (a missing status too)',
              "exactly at the target is VALID (``>=``)",
          ),
          "_need": "Raise ``ReportError(field, problem)`` unless ``ok`` (provided).",
      })
def check_gate_recomputes_status(tt, rng):
    b = _b(tt)
    out = []
    for _ in range(16):
        acc = float(rng.uniform(0.0, 1.0))
        target = float([acc, rng.uniform(0.0, 1.0), min(1.0, acc + 1e-9),
                        max(0.0, acc - 1e-9)][int(rng.integers(4))])
        result: dict[str, Any] = {"accuracy": acc, "accuracy_target": target}
        status = ["VALID", "INVALID", None, "valid", "PASS"][int(rng.integers(5))]
        if status is not None:
            result["status"] = status
        out.append(_field(b, b.check_gate, result, _at(rng, "results")))
    return out


def _latency(rng):
    p = sorted(rng.uniform(0.5, 5.0, size=5).tolist())
    return {"count": _int(rng, 50, 500), "mean": float(np.mean(p)), "p50": p[1], "p90": p[2],
            "p99": p[3], "min": p[0], "max": p[4]}


@case(unit=LATENCY, points=3,
      hint="check_latency: Offline needs latency_ms None; SingleStream a dict with an integer "
           "count >= 1 and mean, p50, p90, p99, min, max numbers >= 0 (never bools or NaN), in "
           "that order, then min <= p50 <= p90 <= p99 <= max; the field names the key "
           "(results[0].latency_ms.count) or latency_ms itself.",
      stated={
          "check_latency": (
              'ReportError: Offline with ``latency_ms`` not None (field ``f"{at}.latency_ms"``); SingleStream with ``latency_ms`` not a dict (the same field), ``count`` not an integer >= 1 (``f"{at}.latency_ms.count"``), one of ``mean``, ``p50``, ``p90``, ``p99``, ``min``, ``max`` not a number >= 0 (``f"{at}.latency_ms.p90"``...), or ``min <= p50 <= p90 <= p99 <= max`` broken (field ``f"{at}.latency_ms"``).',
              '``_integer(lat.get("count"), ..., 1)``; for each of the six keys, in that order: ``_number(lat.get(key), ..., 0.0, math.inf)``.',
              '``order = [lat[k] for k in ("min", "p50", "p90", "p99", "max")]``; ``_need(order == sorted(order), f"{at}.latency_ms", ...)``.',
              "``_number`` already refuses bools and NaN.",
          ),
      })
def check_latency_fields_and_order(tt, rng):
    b = _b(tt)
    keys = ["mean", "p50", "p90", "p99", "min", "max"]

    def key():
        return keys[int(rng.integers(len(keys)))]

    def swap(lat, a, c):
        lat[a], lat[c] = lat[c], lat[a]

    edits = [
        lambda r: None,  # valid
        lambda r: r["latency_ms"].update(count=1),  # valid
        lambda r: r["latency_ms"].update(min=0.0),  # valid
        lambda r: r["latency_ms"].update(p50=r["latency_ms"]["p90"]),  # valid: ties
        lambda r: r.update(scenario="Offline", latency_ms=None),  # valid
        lambda r: r.update(scenario="Offline"),
        lambda r: r.update(latency_ms=None),
        lambda r: r.update(latency_ms=list(r["latency_ms"].values())),
        lambda r: r["latency_ms"].update(count=0),
        lambda r: r["latency_ms"].pop("count"),
        lambda r: r["latency_ms"].update(count=True),
        lambda r: r["latency_ms"].update(count=float(r["latency_ms"]["count"])),
        lambda r: r["latency_ms"].pop(key()),
        lambda r: r["latency_ms"].update({key(): -float(rng.uniform(0.1, 1.0))}),
        lambda r: r["latency_ms"].update({key(): True}),
        lambda r: r["latency_ms"].update({key(): float("nan")}),
        lambda r: r["latency_ms"].update({key(): str(r["latency_ms"]["p50"])}),
        lambda r: swap(r["latency_ms"], "p50", "p90"),
        lambda r: swap(r["latency_ms"], "min", "p50"),
        lambda r: swap(r["latency_ms"], "p99", "max"),
        lambda r: r["latency_ms"].update(min=r["latency_ms"]["max"] + 1.0),
    ]
    out = []
    # Which edits, in which order, varies per variant (so the answer list does too).
    for i in rng.permutation(len(edits))[:int(rng.integers(len(edits) - 5, len(edits) + 1))]:
        result = {"scenario": "SingleStream", "latency_ms": _latency(rng)}
        edits[int(i)](result)
        out.append(_field(b, b.check_latency, result, _at(rng, "results")))
    return out


@case(unit=VERDICT_CHECK, points=2,
      hint="check_verdict: the verdict must be what the interval says against the threshold: "
           "pass when low >= threshold, fail when high < threshold, inconclusive otherwise "
           "(high == threshold too; infinite bounds allowed); raise ReportError on "
           "f'{at}.verdict'.",
      stated={
          "check_verdict": (
              "comparison: one comparison whose ``ci`` (two numbers, low <= high, infinities allowed) and ``threshold`` (> 0) are already checked",
              'ReportError: on field ``f"{at}.verdict"`` unless ``comparison["verdict"]`` equals ``_verdict(low, high, threshold)`` (given: ``"pass"`` if ``low >= threshold``, ``"fail"`` if ``high < threshold``, else ``"inconclusive"``).',
          ),
      })
def check_verdict_recomputes_verdict(tt, rng):
    b = _b(tt)
    out = []
    for _ in range(16):
        t = float(rng.uniform(1.0, 10.0))
        d = float(rng.uniform(0.1, 2.0))
        ci = [[t, t + d], [t + d, float("inf")], [t - 2 * d, t - d], [float("-inf"), t - d],
              [t - d, t + d], [t - d, t], [float("-inf"), float("inf")],
              [t + d, t + 2 * d]][int(rng.integers(8))]
        comparison: dict[str, Any] = {"ci": ci, "threshold": t}
        verdict = ["pass", "fail", "inconclusive", None, "PASS"][int(rng.integers(5))]
        if verdict is not None:
            comparison["verdict"] = verdict
        out.append(_field(b, b.check_verdict, comparison, _at(rng, "comparisons")))
    return out
