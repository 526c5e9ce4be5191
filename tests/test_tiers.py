"""Every prefix in tests/conftest.py's TIERS names a test that exists.

The check itself lives in ``pytest_collection_modifyitems`` and runs on a whole-suite
collection; under pytest-xdist it is skipped in the workers (a worker that stops at collection
shows up as a crash without a message), so this test runs a plain collection and reports the
stale prefixes by name.
"""

from __future__ import annotations

import subprocess
import sys

from tito.paths import REPO_ROOT


def test_every_tier_prefix_names_an_existing_test() -> None:
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                           "-p", "no:randomly"], cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=600)
    text = proc.stdout + proc.stderr
    assert "TIERS" not in text, [ln for ln in text.splitlines() if "TIERS" in ln]
    assert proc.returncode == 0, text[-2000:]
