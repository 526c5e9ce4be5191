"""TLS credentials for the Dask tests, made with the commands in docs/regrade.md ("TLS
credentials"), and separately started Dask processes (a scheduler, workers) on loopback."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

DASK = Path(sys.executable).with_name("dask")


def credentials(folder: Path) -> dict[str, Path]:
    """A CA and keys for the scheduler, a worker and the TA, made with the commands in
    docs/regrade.md ("TLS credentials")."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.fail("openssl is not installed (apt-get install -y openssl); docs/regrade.md's "
                    "commands need it and this test must not be skipped")
    folder.mkdir()

    def run(*args: str) -> None:
        subprocess.run([openssl, *args], cwd=folder, check=True, capture_output=True)

    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "30", "-subj",
        "/CN=tinytorch-grading-ca", "-keyout", "ca.key", "-out", "ca.pem")
    for who in ("scheduler", "worker", "ta"):
        run("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={who}", "-keyout",
            f"{who}.key", "-out", f"{who}.csr")
        run("x509", "-req", "-in", f"{who}.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "30", "-out", f"{who}.pem")
    for key in folder.glob("*.key"):
        key.chmod(0o600)
    return {p.name: p for p in folder.iterdir()}


def tls_flags(files: dict[str, Path], who: str) -> list[str]:
    return ["--tls-ca-file", str(files["ca.pem"]), "--tls-cert", str(files[f"{who}.pem"]),
            "--tls-key", str(files[f"{who}.key"])]


def start(args: list[str], log: Path, **kw: object) -> subprocess.Popen[bytes]:
    """``dask ARGS`` in a session of its own (stopped whole by :func:`stop`)."""
    with log.open("ab") as fh:
        return subprocess.Popen([str(DASK), *args], stdout=fh, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True,
                                **kw)  # type: ignore[call-overload]


def scheduler(folder: Path, files: dict[str, Path]) -> tuple[subprocess.Popen[bytes], str]:
    """A TLS scheduler on a free loopback port, no dashboard; its process and address."""
    sched_file = folder / "scheduler.json"
    proc = start(["scheduler", "--host", "127.0.0.1", "--port", "0", "--protocol", "tls",
                  "--no-dashboard", "--scheduler-file", str(sched_file),
                  *tls_flags(files, "scheduler")], folder / "scheduler.log")
    end = time.monotonic() + 120  # a hang guard
    while not (sched_file.exists() and sched_file.stat().st_size):
        if proc.poll() is not None or time.monotonic() > end:
            raise AssertionError((folder / "scheduler.log").read_text())
        time.sleep(0.1)
    return proc, json.loads(sched_file.read_text())["address"]


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    """Kill each process's whole session (a worker's nanny and its worker process)."""
    for p in procs:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()
