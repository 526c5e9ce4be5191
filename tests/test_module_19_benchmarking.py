"""Instructor tests for module 19 beyond the hidden suite, with independent oracles: Student's t
quantiles against published tables and the distribution function against numerical
integration of the density; LoadGen's percentile rule as properties (hypothesis) and against
MLPerf's results.cc formula; the coverage of the t- and bootstrap intervals on seeded
simulations; the report's round trip (infinities included), its one-line errors naming the file
and the field, atomic saving, the command line, and the plot. No verdict depends on the speed
of the machine."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tinytorch_ref as tt
from coursekit import paths
from tinytorch_ref import benchmarking as B

# Two-sided 95 % (p = 0.975) and one-sided 95 % (p = 0.95) quantiles from a published t-table
# (e.g. NIST/SEMATECH e-Handbook, table 1.3.6.7.2), to the digits printed there.
T_TABLE = {(0.975, 1): 12.706, (0.975, 2): 4.303, (0.975, 4): 2.776, (0.975, 9): 2.262,
           (0.975, 29): 2.045, (0.975, 100): 1.984, (0.95, 5): 2.015, (0.95, 10): 1.812,
           (0.995, 3): 5.841, (0.995, 20): 2.845, (0.9, 7): 1.415}


@pytest.mark.parametrize("p, df", sorted(T_TABLE))
def test_t_quantile_matches_the_published_table(p, df):
    assert round(B.t_quantile(p, df), 3) == T_TABLE[p, df]
    assert B.t_quantile(1 - p, df) == -B.t_quantile(p, df)


def test_t_quantile_tends_to_the_normal_quantile():
    assert abs(B.t_quantile(0.975, 10**6) - 1.959964) < 1e-5


CLOSED_FORMS = {  # Student's t distribution functions with 1, 2 and 3 degrees of freedom
    1: lambda t: 0.5 + math.atan(t) / math.pi,
    2: lambda t: 0.5 + t / (2.0 * math.sqrt(2.0 + t * t)),
    3: lambda t: 0.5 + (t / (math.sqrt(3.0) * (1.0 + t * t / 3.0)) + math.atan(t / math.sqrt(3.0)))
    / math.pi,
}


@pytest.mark.parametrize("df", sorted(CLOSED_FORMS))
def test_t_cdf_matches_closed_forms(df):
    for t in (-30.0, -3.0, -1.0, -0.25, 0.0, 0.7, 2.5, 12.0):
        assert abs(B.t_cdf(t, df) - CLOSED_FORMS[df](t)) < 1e-12, (df, t)


@pytest.mark.parametrize("df", [7, 30])
def test_t_cdf_equals_the_integral_of_the_density(df):
    grid = np.linspace(-80.0, 0.0, 800_001)  # the tail beyond -80 is below 1e-11 here
    log_c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    density = np.exp(log_c - (df + 1) / 2 * np.log1p(grid**2 / df))
    for t in (-3.0, -1.0, -0.25):
        mask = grid <= t
        integral = np.trapezoid(density[mask], grid[mask])
        assert abs(B.t_cdf(t, df) - integral) < 1e-8, (df, t)
        assert abs(B.t_cdf(-t, df) - (1 - B.t_cdf(t, df))) < 1e-12


@given(st.lists(st.floats(0.0, 1e3, allow_nan=False), min_size=1, max_size=60),
       st.floats(0.0, 99.999))
def test_percentile_is_a_real_latency_that_p_percent_do_not_exceed(values, p):
    got = B.latency_percentile(values, p)
    assert got in values
    v = np.asarray(values)
    assert np.mean(v <= got) > p / 100 or math.isclose(np.mean(v <= got), p / 100)
    assert np.mean(v < got) <= p / 100 + 1e-12


def test_percentile_follows_loadgen_results_cc():
    """MLPerf's loadgen/results.cc: ``sample_latencies[sample_count * percentile]`` on sorted
    latencies, percentile as a fraction, truncated to an index."""
    rng = np.random.default_rng(0)
    for n in (1, 2, 9, 10, 64, 1024):
        lat = rng.lognormal(size=n)
        for p in (50, 90, 95, 97, 99, 99.9):
            assert B.latency_percentile(lat, p) == np.sort(lat)[int(n * p / 100)]


def test_intervals_cover_the_true_value_at_their_nominal_rate():
    rng = np.random.default_rng(1)
    t_hits = boot_hits = 0
    trials = 400
    for k in range(trials):
        x = rng.normal(10.0, 2.0, size=12)
        _, low, high = B.t_interval(x, 0.9)
        t_hits += low <= 10.0 <= high
        blow, bhigh = B.bootstrap_ci(x, np.mean, confidence=0.9, n_resamples=400, seed=k)
        boot_hits += blow <= 10.0 <= bhigh
    assert 0.86 <= t_hits / trials <= 0.94  # exact for normal data: 0.90
    assert 0.80 <= boot_hits / trials <= 0.94  # the percentile bootstrap undercovers a little


def _report() -> dict:
    return {"schema": B.SCHEMA, "system": B.system_info("ci"), "model": "m",
            "results": [{"scenario": "Offline", "status": "VALID", "metric": "samples_per_second",
                         "value": 10.0, "ci": [9.0, 11.0], "confidence": 0.95, "runs": 3,
                         "accuracy": 0.9, "accuracy_target": 0.8, "latency_ms": None}],
            "comparisons": [{"name": "few pairs", "ratio": 7.0, "ci": [-math.inf, math.inf],
                             "confidence": 0.95, "threshold": 5.0, "pairs": 5,
                             "verdict": "inconclusive"}]}


def test_report_round_trip_keeps_infinite_intervals(tmp_path):
    path = B.save_report(_report(), tmp_path / "r.json")
    text = path.read_text()
    assert "Infinity" not in text and '"-inf"' in text  # valid JSON, no NaN/Infinity tokens
    json.loads(text)
    assert B.load_report(path) == _report()
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temporary file left


@pytest.mark.parametrize("content, where", [
    ("{not json", "json: not JSON: Expecting property name enclosed in double quotes at line 1"),
    ('{"schema": "tinytorch-benchmark/1"}', "system: must be an object"),
    ('[1, 2]', "report: must be an object, got list"),
])
def test_load_report_errors_are_one_line_naming_file_and_field(tmp_path, content, where):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(B.ReportError) as info:
        B.load_report(path)
    assert str(info.value) == f"{path}: {where}" and "\n" not in str(info.value)


def test_missing_file_is_one_line(tmp_path):
    with pytest.raises(B.ReportError, match=r"missing\.json: file: cannot read it"):
        B.load_report(tmp_path / "missing.json")


def test_save_refuses_an_invalid_report_and_leaves_the_old_file(tmp_path):
    path = B.save_report(_report(), tmp_path / "r.json")
    before = path.read_bytes()
    broken = _report()
    broken["results"][0]["status"] = "INVALID"  # accuracy 0.9 >= 0.8: the gate says VALID
    with pytest.raises(B.ReportError, match=r"r\.json: results\[0\]\.status: must be 'VALID'"):
        B.save_report(broken, path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_command_line_checks_and_plots(tmp_path):
    good = B.save_report(_report(), tmp_path / "good.json")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**_report(), "model": ""}))
    png = tmp_path / "out.png"

    def run(*args):
        return subprocess.run([sys.executable, "-m", "tinytorch_ref.benchmarking", *map(str, args)],
                              cwd=paths.REPO_ROOT, capture_output=True, text=True, timeout=120,
                              env={**__import__("os").environ, "MPLBACKEND": "Agg"})

    ok = run("check", good)
    assert ok.returncode == 0 and "valid tinytorch-benchmark/1 report" in ok.stdout
    no = run("check", bad)
    assert no.returncode == 1 and no.stderr.strip() == f"{bad}: model: must be a non-empty string"
    assert run("check").returncode == 2
    plotted = run("plot", good, png)
    assert plotted.returncode == 0, plotted.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_marks_invalid_results(tmp_path):
    report = _report()
    invalid = dict(report["results"][0], status="INVALID", accuracy=0.5)
    single = {"scenario": "SingleStream", "status": "VALID", "metric": "p90_latency_ms",
              "value": 2.0, "ci": [1.5, 2.5], "confidence": 0.95, "runs": 3, "accuracy": 0.9,
              "accuracy_target": 0.8,
              "latency_ms": {"count": 9, "mean": 1.5, "p50": 1.2, "p90": 2.0, "p99": 3.0,
                             "min": 1.0, "max": 3.0}}
    report["results"] += [invalid, single]
    fig = B.plot_report(report, tmp_path / "r.png")
    left, right = fig.axes
    assert [t.get_text() for t in right.get_xticklabels()] == ["#0 VALID", "#1 INVALID"]
    hatches = [bar.get_hatch() for bar in right.patches]
    assert hatches == [None, "//"]
    assert sorted(bar.get_height() for bar in left.patches) == [1.2, 2.0, 3.0]
    assert (tmp_path / "r.png").read_bytes()[:4] == b"\x89PNG"


def test_a_real_model_benchmark_produces_a_valid_report():
    tt.manual_seed(0)
    model = tt.nn.Sequential(tt.nn.Linear(4, 8), tt.nn.ReLU(), tt.nn.Linear(8, 3))
    x = np.random.default_rng(0).standard_normal((30, 4)).astype(np.float32)

    def sut(batch):
        with tt.no_grad():
            return model(tt.Tensor(batch))

    labels = sut(x).numpy().argmax(-1)  # the model's own predictions: accuracy 1
    results = [B.run_scenario(sut, x, labels, "SingleStream", accuracy_target=1.0, runs=2,
                              queries=20, warmup=2),
               B.run_scenario(sut, x, labels, "Offline", accuracy_target=1.0, runs=3,
                              batch_size=8)]
    report = B.make_report("ci", "tiny mlp", results)
    assert [r["status"] for r in report["results"]] == ["VALID", "VALID"]
    assert report["results"][0]["latency_ms"]["count"] == 40
