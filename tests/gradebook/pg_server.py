"""A throwaway PostgreSQL cluster for the gradebook tests: Unix socket only, in a temp dir.

``initdb`` + ``pg_ctl`` from the Debian ``postgresql`` package (``/usr/lib/postgresql/<ver>/bin``,
or ``$PG_BINDIR``). The server listens on no TCP port (``listen_addresses=''``), only on a
socket in its own temp dir, trusts local connections, and runs without fsync (the tests kill
clients, never the server). PostgreSQL refuses to run as root, so under root the server
binaries run as the ``postgres`` user (``runuser``) and the temp dir belongs to that user; the
cluster's superuser is named after the user running the tests, so ``postgresql:///db?host=DIR``
connects without naming a user.
"""

from __future__ import annotations

import getpass
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

INSTALL_HINT = "apt-get install postgresql"


class PgUnavailable(RuntimeError):
    """The server binaries are missing or the cluster would not start (one-line reason)."""


def find_bindir(env: Mapping[str, str] = os.environ,
                lib: Path = Path("/usr/lib/postgresql")) -> Path:
    """The directory holding ``initdb``/``pg_ctl``/``postgres``: ``$PG_BINDIR``, the newest
    ``<lib>/<ver>/bin``, or wherever ``initdb`` is on ``$PATH``.

    Raises:
        PgUnavailable: none found; the message says ``apt-get install postgresql``.
    """
    candidates: list[Path] = []
    if env.get("PG_BINDIR"):
        candidates.append(Path(env["PG_BINDIR"]))
    versions = sorted(lib.glob("*/bin"),
                      key=lambda p: int(re.sub(r"\D", "", p.parent.name) or 0), reverse=True)
    candidates += versions
    on_path = shutil.which("initdb", path=env.get("PATH", ""))
    if on_path:
        candidates.append(Path(on_path).resolve().parent)
    for bindir in candidates:
        if all((bindir / b).is_file() for b in ("initdb", "pg_ctl", "postgres")):
            return bindir
    raise PgUnavailable(
        f"PostgreSQL server binaries (initdb, pg_ctl) not found: {INSTALL_HINT}")


@dataclass
class PgServer:
    """A running throwaway cluster; :meth:`url` names a database on it."""

    bindir: Path
    base: Path
    superuser: str
    run_as: list[str] = field(default_factory=list)
    _dbs: int = 0

    @property
    def socket_dir(self) -> Path:
        return self.base / "sock"

    @property
    def data_dir(self) -> Path:
        return self.base / "data"

    def url(self, dbname: str, *, style: str = "query") -> str:
        """A URL for ``dbname``: ``postgresql:///db?host=DIR`` (``style='query'``) or
        ``postgresql://user@%2Fsocket%2Fdir/db`` (``style='host'``, the socket dir as host)."""
        if style == "host":
            return f"postgresql://{self.superuser}@{quote(str(self.socket_dir), safe='')}/{dbname}"
        return f"postgresql:///{dbname}?host={self.socket_dir}"

    def create_database(self, prefix: str = "gb") -> str:
        """A new empty database; returns its URL."""
        import psycopg

        self._dbs += 1
        name = f"{prefix}_{self._dbs}"
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        """Stop the server (immediately) and remove its files."""
        subprocess.run(self.run_as + [str(self.bindir / "pg_ctl"), "stop", "-D",
                                      str(self.data_dir), "-m", "immediate", "-s"],
                       capture_output=True, check=False, timeout=600)
        shutil.rmtree(self.base, ignore_errors=True)


def _run(cmd: list[str], what: str) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=1800)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise PgUnavailable(f"{what} failed ({done.returncode}): {tail[0]}")


def start() -> PgServer:
    """Start a throwaway cluster (a few seconds); the caller must :meth:`PgServer.stop` it.

    Raises:
        PgUnavailable: no server binaries (the message says ``apt-get install postgresql``),
            or the cluster would not initialise or start.
    """
    bindir = find_bindir()
    base = Path(tempfile.mkdtemp(prefix="gb-pg-"))  # short: socket paths max ~100 bytes
    run_as: list[str] = []
    if os.geteuid() == 0:
        runuser = shutil.which("runuser") or shutil.which("setpriv")
        if runuser is None:
            raise PgUnavailable("running as root and neither runuser nor setpriv is available")
        run_as = ([runuser, "-u", "postgres", "--"] if runuser.endswith("runuser") else
                  [runuser, "--reuid=postgres", "--regid=postgres", "--init-groups"])
        shutil.chown(base, "postgres", "postgres")
    server = PgServer(bindir, base, getpass.getuser(), run_as)
    for sub in ("sock",):
        (base / sub).mkdir()
        if run_as:
            shutil.chown(base / sub, "postgres", "postgres")
    try:
        _run(run_as + [str(bindir / "initdb"), "-D", str(server.data_dir), "-U",
                       server.superuser, "--auth=trust", "-E", "UTF8", "--no-locale",
                       "--no-sync"], "initdb")
        options = (f"-k {server.socket_dir} -c listen_addresses='' -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off")
        _run(run_as + [str(bindir / "pg_ctl"), "start", "-D", str(server.data_dir), "-w",
                       "-t", "600", "-s", "-l", str(base / "server.log"), "-o", options],
             "pg_ctl start")
    except BaseException:
        server.stop()
        raise
    deadline = time.monotonic() + 600
    while not (server.socket_dir / ".s.PGSQL.5432").exists():  # pg_ctl -w already waited
        if time.monotonic() > deadline:  # pragma: no cover
            server.stop()
            raise PgUnavailable("the PostgreSQL server did not open its socket in 600 s")
        time.sleep(0.05)
    return server
