"""Run one reproduction line (as the fuzzer prints it) in both libraries and show both."""

from __future__ import annotations

from typing import Any

from .namespaces import Ours, Torch


def run_line(line: str, lib: Any) -> Any:
    scope = dict(lib.names)
    try:
        exec(line, scope)  # noqa: S102 - a line the fuzzer printed
    except Exception as exc:  # noqa: BLE001
        return f"raised {type(exc).__name__}: {exc}"
    return lib.normalise(scope.get("out"))


def show(line: str) -> str:
    return f"ours:  {run_line(line, Ours())!r}\ntorch: {run_line(line, Torch())!r}"
