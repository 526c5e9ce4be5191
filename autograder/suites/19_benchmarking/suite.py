"""Hidden suite · module 19 (benchmarking). Cases are probes; the trusted parent compares.

Each case returns plain data computed with the package under test ``tt``; the expected value
is the same case run against tinytorch_ref. Every latency, duration, size, seed and report
value comes from ``rng``. No case depends on the speed of the machine: statistics run on
synthetic timing arrays, and the scenarios run on a fake clock that moves only when the fake
system under test "works". Points sum to module 19's ``points`` (50).
"""

from __future__ import annotations

import copy
import importlib
from typing import Any

import numpy as np

from autograder.suite import Suite, outcome

suite = Suite(module="19_benchmarking", version="2027.2")
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
VALIDATE = suite.unit("validate_report", "validate_report")
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
           "and the list non-empty, else ValueError.")
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
           "and max, under exactly these keys, as Python numbers; no latencies: ValueError.")
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
           "1): ValueError.")
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
           "percentiles of stats (np.percentile) as floats; bad arguments: ValueError.")
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
           "minus timer() before; bad arguments: ValueError.")
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
           "return n / seconds; bad arguments: ValueError.")
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
           "Tensor), concatenate the scores, and module 07's accuracy against the labels.")
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
           "query of every run (None offline).")
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
           "inconclusive; also confidence, threshold and pairs.")
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
def _report(rng):
    acc = float(rng.uniform(0.8, 0.99))
    p = sorted(rng.uniform(0.5, 5.0, size=5).tolist())
    value = float(rng.uniform(1.0, 3.0))
    tput = float(rng.uniform(100.0, 5000.0))
    return {"schema": "tinytorch-benchmark/1",
            "system": {"name": f"box{_int(rng, 1, 99)}", "python": "3.11.9", "numpy": "2.4.6",
                       "machine": "x86_64 Linux (2 CPUs)"},
            "model": "gpt",
            "results": [{"scenario": "SingleStream", "status": "VALID",
                         "metric": "p90_latency_ms", "value": value,
                         "ci": [value - 0.1, value + 0.2], "confidence": 0.95,
                         "runs": _int(rng, 2, 9), "accuracy": acc, "accuracy_target": acc - 0.05,
                         "latency_ms": {"count": _int(rng, 50, 500), "mean": p[2], "p50": p[1],
                                        "p90": p[2], "p99": p[3], "min": p[0], "max": p[4]}},
                        {"scenario": "Offline", "status": "INVALID",
                         "metric": "samples_per_second", "value": tput,
                         "ci": [tput * 0.9, tput * 1.1], "confidence": 0.9, "runs": 3,
                         "accuracy": acc, "accuracy_target": min(1.0, acc + 0.01),
                         "latency_ms": None}],
            "comparisons": [{"name": "kv", "ratio": 6.0, "ci": [5.5, float("inf")],
                             "confidence": 0.95, "threshold": 5.0, "pairs": 9,
                             "verdict": "pass"}]}


@case(unit=VALIDATE, points=7,
      hint="validate_report: check in the table's order and raise ReportError(field, problem) at "
           "the first problem: field paths like results[1].ci or results[0].latency_ms.count; "
           "numbers are finite ints/floats, never bools; status and verdict must match "
           "accuracy/target and ci/threshold.")
def validate_report_fields(tt, rng):
    b = _b(tt)
    base = _report(rng)

    def field(report):
        try:
            b.validate_report(report)
        except b.ReportError as err:
            return [err.field, isinstance(err, ValueError)]
        return None

    edits = [
        lambda r: None,  # valid
        lambda r: r.update(schema="tinytorch-benchmark/2"),
        lambda r: r.pop("system"),
        lambda r: r["system"].update(numpy=2.4),
        lambda r: r["system"].pop("machine"),
        lambda r: r.update(model=""),
        lambda r: r.update(results={"0": 1}),
        lambda r: r.update(results=[]),
        lambda r: r.update(results=r["results"][1:]),  # valid: one result
        lambda r: r["results"][0].update(runs=2, accuracy=1.0),  # valid: closed bounds
        lambda r: r["results"][1].update(accuracy=0.0, accuracy_target=0.0,
                                         status="VALID"),  # valid: accuracy == target
        lambda r: r["results"][0]["latency_ms"].update(count=1),  # valid
        lambda r: r["results"][0]["latency_ms"].update(min=0.0),  # valid
        lambda r: r["comparisons"][0].update(ci=[6.0, 6.0], pairs=1),  # valid
        lambda r: r["results"].append("Offline"),
        lambda r: r["results"][0].update(scenario=["SingleStream"]),
        lambda r: r["results"][0].update(metric="samples_per_second"),
        lambda r: r["results"][1].update(value=0.0),
        lambda r: r["results"][1].update(value=float("nan")),
        lambda r: r["results"][0].update(value=True),
        lambda r: r["results"][0].update(ci=[r["results"][0]["value"] + 0.01, 9.0]),
        lambda r: r["results"][0].update(ci=[1.0]),
        lambda r: r["results"][1].update(ci=[1.0, float("inf")]),
        lambda r: r["results"][0].update(confidence=1.0),
        lambda r: r["results"][1].update(runs=2.0),
        lambda r: r["results"][0].update(runs=True),
        lambda r: r["results"][0].update(runs=1),
        lambda r: r["results"][0].update(accuracy=1.2),
        lambda r: r["results"][1].update(accuracy_target=-0.1),
        lambda r: r["results"][0].update(status="INVALID"),
        lambda r: r["results"][1].update(status="VALID"),
        lambda r: r["results"][0].update(latency_ms=None),
        lambda r: r["results"][0]["latency_ms"].update(count=0),
        lambda r: r["results"][0]["latency_ms"].pop("p99"),
        lambda r: r["results"][0]["latency_ms"].update(p50=r["results"][0]["latency_ms"]["max"]
                                                       + 1.0),
        lambda r: r["results"][1].update(latency_ms={"count": 1}),
        lambda r: r.update(comparisons={}),
        lambda r: r["comparisons"][0].update(name=None),
        lambda r: r["comparisons"][0].update(ratio=-6.0),
        lambda r: r["comparisons"][0].update(ci=[7.0, 5.0]),
        lambda r: r["comparisons"][0].update(ci=[float("nan"), 5.0]),
        lambda r: r["comparisons"][0].update(pairs=0),
        lambda r: r["comparisons"][0].update(threshold=0.0),
        lambda r: r["comparisons"][0].update(verdict="fail"),
        lambda r: r["comparisons"][0].update(ci=[float("-inf"), float("inf")],
                                             verdict="inconclusive"),  # valid
        lambda r: r.pop("comparisons"),  # valid: comparisons are optional
    ]
    out = []
    # Which edits, in which order, varies per variant (so the answer list does too).
    for i in rng.permutation(len(edits))[:int(rng.integers(len(edits) - 8, len(edits) + 1))]:
        report = copy.deepcopy(base)
        edits[int(i)](report)
        out.append(field(report))
    out.append(field([base]))
    return out
