"""The student-facing scripts: exit 0 and a PNG with the reference, exit 1 with a bug."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from milestone_variants import package_root, variant

from coursekit import paths

SCRIPTS = paths.REPO_ROOT / "milestones"


def run_script(name: str, package: str, plot: Path, extra_path: Path | None = None,
               extra_args: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", MPLBACKEND="Agg", COLUMNS="120")
    if extra_path is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(extra_path), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, str(SCRIPTS / f"{name}.py"), "--package", package, "--quiet",
         "--plot", str(plot), *extra_args], capture_output=True, text=True, timeout=1800,
        env=env, cwd=paths.REPO_ROOT)


@pytest.fixture(scope="module")
def xor_run(tmp_path_factory: pytest.TempPathFactory
            ) -> tuple[subprocess.CompletedProcess[str], Path]:
    """The XOR script with the reference and its plot: run once, read by the two tests of that
    run (issue 31 item 7)."""
    plot = tmp_path_factory.mktemp("xor") / "xor_1969.png"
    return run_script("xor_1969", "tinytorch_ref", plot), plot


@pytest.mark.parametrize("name, args", [("perceptron_1957", ()), ("xor_1969", ()),
                                        ("mlp_1986", ()), ("cnn_1998", ()),
                                        ("cnn_fashion_1998", ("--seed", "0"))])
def test_script_passes_with_the_reference_and_saves_a_curve(name: str, args: tuple[str, ...],
                                                            tmp_path: Path,
                                                            request: pytest.FixtureRequest
                                                            ) -> None:
    if name == "xor_1969":
        proc, plot = request.getfixturevalue("xor_run")
    else:
        plot = tmp_path / f"{name}.png"
        proc = run_script(name, "tinytorch_ref", plot, extra_args=args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASSED" in proc.stdout
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_xor_script_shows_the_single_layer_cannot(
        xor_run: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    proc, _ = xor_run
    assert "single layer (no hidden units): best accuracy 0.75" in " ".join(proc.stdout.split())


@pytest.mark.parametrize("name, bug", [("perceptron_1957", "linear_ignores_bias"),
                                       ("xor_1969", "linear_drops_input_grad"),
                                       ("mlp_1986", "adam_never_updates"),
                                       ("cnn_1998", "conv_weight_grad_zero")])
def test_script_fails_with_nonzero_exit_for_a_buggy_package(name: str, bug: str,
                                                            tmp_path: Path) -> None:
    pkg = variant(bug)
    proc = run_script(name, pkg.__name__, tmp_path / "p.png", package_root(pkg))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "FAILED" in proc.stdout


def test_script_with_a_missing_package_says_how_to_fix_it(tmp_path: Path) -> None:
    proc = run_script("xor_1969", "no_such_tinytorch", tmp_path / "p.png")
    assert proc.returncode != 0 and "tito export" in proc.stderr
