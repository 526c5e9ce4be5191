"""bench/framework.py compares like with like: both sides compute the same numbers.

Timing is never asserted here (no verdict depends on wall-clock speed); the benchmark's
figures live in docs/performance.md.
"""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

from tito import paths

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
