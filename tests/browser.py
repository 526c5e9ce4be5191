"""Headless Chromium for tests that render HTML reports (never skipped: CI installs it)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.fail("chromium is not installed (apt-get install -y chromium); the report test "
                "needs it and must not be skipped")


def flags(profile: Path) -> list[str]:
    """Flags for a headless run on a closed network, with a private profile folder."""
    return ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            f"--user-data-dir={profile}"]
