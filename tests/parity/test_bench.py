"""bench/framework.py compares like with like: both sides compute the same numbers.

Timing is never asserted here (no verdict depends on wall-clock speed); the benchmark's
figures live in docs/performance.md.
"""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

from coursekit import paths

pytestmark = pytest.mark.parity


def _bench():
    spec = importlib.util.spec_from_file_location("bench_framework",
                                                  paths.REPO_ROOT / "bench" / "framework.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_framework"] = module
    spec.loader.exec_module(module)
    return module


BENCH = _bench()
TRAINING = ["mlp", "cnn8", "cnn28", "cnn32", "gpt"]


@pytest.mark.parametrize("name", TRAINING)
def test_training_workloads_take_the_same_first_step(name):
    pair = BENCH.WORKLOADS[name]()
    if pair is None:
        import tinytorch_ref as tt

        needed = {"cnn8": hasattr(tt.nn, "Conv2d"), "cnn28": hasattr(tt.nn, "Conv2d"),
                  "cnn32": hasattr(tt.nn, "Conv2d"),
                  "gpt": BENCH._gpt_class() is not None, "mlp": True}[name]
        assert not needed, f"{name}: its modules are built but the workload reports missing"
        return
    ours, theirs = pair
    a, b = ours(), theirs()  # the same weights and batch: the same loss before any update
    assert np.isclose(a, b, rtol=1e-4), f"{name}: first losses differ: {a} vs {b}"
    a, b = ours(), theirs()  # and after one Adam step
    assert np.isclose(a, b, rtol=1e-3), f"{name}: second losses differ: {a} vs {b}"


def test_matmul_workload_multiplies_the_same_matrices():
    ours, theirs = BENCH.matmul1k()
    np.testing.assert_allclose(ours().numpy(), theirs().numpy(), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("name", ["generate", "generate_kv"])
def test_generation_workloads_decode_the_same_tokens(name):
    pair = BENCH.WORKLOADS[name]()
    assert pair is not None, f"{name}: modules 13 and 17 are built but the workload is missing"
    ours, theirs = pair
    a, b = ours(), theirs()
    assert a.shape == (1, 1 + BENCH.NEW_TOKENS)
    np.testing.assert_array_equal(a, b)


def test_missing_workloads_print_missing_and_the_run_succeeds(capsys, monkeypatch):
    monkeypatch.setitem(BENCH.WORKLOADS, "gpt", lambda: None)  # as before module 13 existed
    assert BENCH.main(["gpt", "--runs", "1"]) == 0
    assert capsys.readouterr().out.strip() == "gpt missing"


def test_bench_refuses_unknown_workloads_and_too_few_steps():
    with pytest.raises(SystemExit):
        BENCH.main(["nope"])
    with pytest.raises(SystemExit):
        BENCH.main(["mlp", "--steps", "5"])


def test_documented_ratios_are_one_table_with_every_workload():
    recorded = BENCH.documented_ratios()
    assert sorted(recorded) == sorted(BENCH.WORKLOADS), (
        f"docs/performance.md's Framework speed table must record every workload of "
        f"bench/framework.py once: {sorted(recorded)} vs {sorted(BENCH.WORKLOADS)}")
    assert all(0 < r < 10 for r in recorded.values()), recorded


def test_documented_ratios_stop_at_the_end_of_the_first_table(tmp_path):
    """Later tables of the section (other figures, other columns) are not the guard's."""
    doc = tmp_path / "performance.md"
    doc.write_text("## Framework speed\n\n| workload | what | ratio |\n|---|---|---|\n"
                   "| `mlp` | a step | 0.7 (0.7/0.7/0.7) |\n| `gpt` | a step | 1.1 |\n\n"
                   "Another figure:\n\n| workload | ratio, quiet |\n|---|---|\n"
                   "| `mlp` | 0.5 |\n| `cnn8` | 0.9 |\n\n## Next\n", encoding="utf-8")
    assert BENCH.documented_ratios(doc) == {"mlp": 0.7, "gpt": 1.1}


def test_guard_reads_the_table_and_fails_a_regression(tmp_path, capsys, monkeypatch):
    doc = tmp_path / "performance.md"
    doc.write_text("# x\n\n## Framework speed\n\n| workload | ratio | met |\n|---|---|---|\n"
                   "| `mlp` | 0.01 (0.01/0.01/0.01) | yes |\n\n## Next\n", encoding="utf-8")
    assert BENCH.documented_ratios(doc) == {"mlp": 0.01}
    # a recorded ratio of 0.01 cannot hold within 2x: the guard must say so and exit 1
    assert BENCH.main(["mlp", "--runs", "1", "--steps", "5", "--warmup", "1", "--clock", "cpu",
                       "--guard", "2", "--doc", str(doc)]) == 1
    out = capsys.readouterr().out
    assert "guard mlp" in out and "REGRESSED" in out and "FAIL mlp" in out


def test_every_workload_stays_within_twice_its_documented_ratio():
    """Issue 35: a 2x regression of any ratio fails. Same-run ratios of medians on the CPU
    clock (both frameworks alternate step by step in one process, one thread each), so a busy
    machine slows both alike; few steps keep it cheap, the factor of 2 absorbs the noise."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, str(paths.REPO_ROOT / "bench" / "framework.py"),
                           "--runs", "1", "--steps", "7", "--warmup", "2", "--clock", "cpu",
                           "--guard", "2"], capture_output=True, text=True, env=env,
                          check=False)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("guard ")]
    assert len(lines) == len(BENCH.documented_ratios()), proc.stdout + proc.stderr[-2000:]
    assert proc.returncode == 0, proc.stdout


def test_before_and_after_runs_two_checkouts_in_one_process(capsys):
    spec = importlib.util.spec_from_file_location("bench_framework_ab",
                                                  paths.REPO_ROOT / "bench" / "framework_ab.py")
    assert spec and spec.loader
    ab = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ab)
    # this checkout against itself: both copies build the same workload and both time it
    assert ab.main([str(paths.REPO_ROOT), "mlp", "--steps", "3", "--warmup", "1"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith("mlp after_ms=") and "before/torch=" in line, line


def test_page_faults_measures_both_policies_on_the_named_workloads():
    """bench/page_faults.py (docs/performance.md's memory-policy table): one line per policy
    and workload, 'without' first, from a copy of the package whose import skips the policy."""
    import os
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, str(paths.REPO_ROOT / "bench" / "page_faults.py"),
                           "mlp", "--steps", "2", "--warmup", "1"], capture_output=True,
                          text=True, check=False,
                          env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.strip().splitlines()
    assert [ln.split()[:2] for ln in lines] == [["without", "mlp"], ["with", "mlp"]], lines
    for line in lines:
        assert "ours faults=" in line and "| torch faults=" in line and "ratio=" in line, line
