"""Issue 33 ("grading trust, round 3"), attack 7: another local user and the regrade's Dask.

Before this round ``tito regrade --scheduler local:N`` started a LocalCluster with Dask's
default comms (plain TCP, no authentication) and the scheduler's HTTP server: an unprivileged
user (uid 65534) connected a ``distributed.Client`` during a regrade, ran
``run_on_scheduler(os.geteuid)`` and got 0, and wrote files as root.

Here the same attacker, run as uid 65534 with every listening port of the regrade's processes
in hand, tries: a Dask client over plain TCP, a Dask client over TLS with a certificate of its
own, a raw TLS handshake without one, and plain HTTP. It must reach nothing: no code of its
runs (the scheduler would write a marker file as root), no HTTP answers, and the regrade's
results are those of the same regrade graded with ``--jobs``. A control runs the same attacker
against a Dask cluster with the old settings and must get in, so the attacker is real.

The scheduler address checks (``tcp://`` needs ``--insecure``, ``tls://`` needs credentials)
and a TLS scheduler reached with certificates made as docs/regrade.md says are tested below.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from tls_files import credentials

from staff.regrade.core import RegradeError, regrade
from staff.regrade.dask import DaskRunner, Target, check_scheduler
from staff.synthetic import synth_export
from tito.cli import cli

NO_LOOP = {"correct": 0.6, "buggy": 0.4}

ATTACK = textwrap.dedent('''
    import asyncio, json, os, socket, ssl, sys
    import cloudpickle, distributed, distributed.comm.tcp
    from distributed import Client
    from distributed.security import Security
    ports, marker = json.loads(sys.argv[1]), sys.argv[2]
    own = Security.temporary()
    # Everything is imported: now become uid 65534 (nobody), before any socket is opened.
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)
    assert (os.getuid(), os.geteuid(), os.getgid()) == (65534, 65534, 65534)
    try:
        open(marker + ".probe", "w")
        sys.exit("still able to write in a root-only folder")
    except PermissionError:
        pass

    def evil():
        import os
        with open(marker, "w") as fh:
            fh.write(str(os.geteuid()))
        return os.geteuid()

    import signal

    def alarm(signum, frame):
        raise TimeoutError("no answer")

    signal.signal(signal.SIGALRM, alarm)

    def dask(address, **kw):
        # a Dask client waits forever for a handshake an HTTP server never sends: bound it
        signal.alarm(8)  # Client(timeout=3s) plus one remote call, with room for a busy machine
        try:
            try:
                client = Client(address, timeout="3s", **kw)
            except Exception as exc:
                return "refused: " + type(exc).__name__
            try:
                return "ran as uid %s" % client.run_on_scheduler(evil)
            except Exception as exc:
                return "connected, then: " + type(exc).__name__
        finally:
            signal.alarm(0)

    def raw(port, tls):
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=3)
            if tls:
                ctx = ssl.create_default_context()
                ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
                sock = ctx.wrap_socket(sock)
            sock.sendall(b"GET /info/main/workers.html HTTP/1.0\\r\\nHost: x\\r\\n\\r\\n")
            data = sock.recv(200)
            return "answered: %r" % data[:40] if data else "closed"
        except Exception as exc:
            return "refused: " + type(exc).__name__

    def tries(port):
        return {
            "dask_tcp": dask("tcp://127.0.0.1:%d" % port),
            "dask_tls_own_cert": dask("tls://127.0.0.1:%d" % port, security=own),
            "tls_no_cert": raw(port, True),
            "http": raw(port, False),
        }

    # One forked attacker per port, side by side: a port that never answers costs its bound
    # once, not once per port. Nothing has started a thread or an event loop yet (checked),
    # so fork is safe; an attacker that fails fails the whole attack (never a "refused").
    import threading
    assert threading.active_count() == 1, threading.enumerate()
    kids = {}
    for port in ports:
        rd, wr = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(rd)
            code = 1
            try:
                with os.fdopen(wr, "w") as fh:
                    fh.write(json.dumps(tries(port)))
                code = 0
            finally:
                os._exit(code)
        os.close(wr)
        kids[port] = (pid, rd)
    out = {}
    for port, (pid, rd) in kids.items():
        with os.fdopen(rd) as fh:
            text = fh.read()
        if os.waitpid(pid, 0)[1] != 0:
            sys.exit("the attacker against port %d failed" % port)
        out[port] = json.loads(text)
    print(json.dumps(out))
''')


def _descendants(root: int) -> list[int]:
    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat", "rb") as fh:
                    ppid = int(fh.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            kids.setdefault(ppid, []).append(int(d))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += kids.get(pid, [])
    return out


def listeners(root: int) -> set[tuple[str, int]]:
    """(address, port) of every listening TCP socket held by ``root`` or a descendant."""
    inodes: set[str] = set()
    for pid in _descendants(root):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    found = set()
    for table in ("tcp", "tcp6"):
        with open(f"/proc/net/{table}", encoding="ascii") as fh:
            for line in fh.read().splitlines()[1:]:
                f = line.split()
                if f[3] == "0A" and f[9] in inodes:  # LISTEN
                    addr, port = f[1].split(":")
                    found.add((addr, int(port, 16)))
    return found


def attack_as_nobody(ports: list[int], marker: Path) -> dict:
    """The attacker, as uid 65534, against every port; what each try got.

    The interpreter may live where other users cannot run it (pyenv under /root, 0700), so
    the attacker starts as root, imports what it needs, and becomes uid 65534 before it opens
    any socket (the control test shows it still gets in where Dask's defaults are used).
    """
    assert os.geteuid() == 0, "the second-uid attack needs root to become nobody (CI runs " \
                              "as root)"
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "OPENBLAS_NUM_THREADS": "1",
           "DASK_LOGGING__DISTRIBUTED": "critical"}
    out = subprocess.run([sys.executable, "-c", ATTACK, json.dumps(ports), str(marker)],
                         env=env, cwd="/", capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_attacker_gets_into_a_cluster_with_dasks_defaults(tmp_path):
    """The control: the old ``local:N`` settings let uid 65534 run code as root."""
    import logging

    from distributed import Client, LocalCluster

    before = listeners(os.getpid())
    cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                           dashboard_address=None, silence_logs=logging.ERROR, memory_limit=0)
    client = Client(cluster)
    try:
        ports = sorted(p for _, p in listeners(os.getpid()) - before)
        scheduler = int(cluster.scheduler_address.rsplit(":", 1)[1])
        got = attack_as_nobody(ports, tmp_path / "marker")
    finally:
        client.close()
        cluster.close()
    assert got[str(scheduler)]["dask_tcp"] == "ran as uid 0"
    assert (tmp_path / "marker").read_text() == "0"
    assert any("HTTP/1.1" in v["http"] for v in got.values())  # the scheduler's http routes


def test_a_second_uid_cannot_reach_a_local_regrade(tmp_path):
    made = synth_export(module="01", n=3, out=tmp_path / "export.zip", seed=5, mix=NO_LOOP)
    local = regrade(export=made.path, out=tmp_path / "local", jobs=2)
    marker = tmp_path / "marker"
    before = listeners(os.getpid())
    seen: dict = {}

    def during(row) -> None:
        if seen:
            return
        seen["listeners"] = listeners(os.getpid()) - before
        seen["attack"] = attack_as_nobody(sorted(p for _, p in seen["listeners"]), marker)

    dask = regrade(export=made.path, out=tmp_path / "dask", scheduler="local:2", on_done=during)
    # one scheduler, and a nanny and a worker per worker process: all on loopback, no HTTP
    assert len(seen["listeners"]) == 5, seen["listeners"]
    assert {addr for addr, _ in seen["listeners"]} == {"0100007F"}
    for port, tries in seen["attack"].items():
        for how, outcome in tries.items():
            assert not outcome.startswith(("ran", "connected", "answered")), (port, how, outcome)
    assert not marker.exists()
    assert [r.to_json() for r in dask.rows] == [r.to_json() for r in local.rows]


# ----------------------------------------------------------------------------- addresses
@pytest.mark.parametrize(("spec", "kw", "needle"), [
    ("tcp://grader1:8786", {}, "pass --insecure on a network you control"),
    ("grader1:8786", {}, "plain comms"),
    ("ws://grader1:8786", {}, "plain comms"),
    ("tls://grader1:8786", {}, "needs TLS credentials: --tls-ca-file, --tls-cert, --tls-key"),
    ("tls://grader1:8786", {"tls_ca_file": "ca.pem"}, "--tls-cert, --tls-key"),
    ("tls://grader1:8786", {"insecure": True}, "--insecure is for a plain tcp:// address"),
    ("tcp://grader1:8786", {"insecure": True, "tls_cert": "x.pem"}, "write it as tls://"),
    ("local:2", {"insecure": True}, "always makes its own TLS credentials"),
    ("inproc://127.0.0.1", {}, "in-process address"),
])
def test_an_unprotected_scheduler_address_is_refused(spec, kw, needle):
    with pytest.raises(RegradeError, match=needle.replace("(", r"\(").replace(".", r"\.")):
        check_scheduler(spec, **kw)


def test_insecure_is_the_tas_explicit_choice():
    assert check_scheduler("tcp://grader1:8786", insecure=True) == Target(
        "tcp://grader1:8786", insecure=True)


def test_a_tls_scheduler_is_reached_with_credentials_and_only_with_them(tmp_path):
    files = credentials(tmp_path / "tls")
    sched_file = tmp_path / "scheduler.json"
    dask = Path(sys.executable).with_name("dask")
    proc = subprocess.Popen(
        [str(dask), "scheduler", "--host", "127.0.0.1", "--port", "0", "--protocol", "tls",
         "--no-dashboard", "--scheduler-file", str(sched_file),
         "--tls-ca-file", str(files["ca.pem"]), "--tls-cert", str(files["scheduler.pem"]),
         "--tls-key", str(files["scheduler.key"])],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            if sched_file.exists() and sched_file.stat().st_size:
                break
            time.sleep(0.1)
        address = json.loads(sched_file.read_text())["address"]
        assert address.startswith("tls://127.0.0.1:")
        good = DaskRunner(Target(address, str(files["ca.pem"]), str(files["ta.pem"]),
                                 str(files["ta.key"])))
        try:
            assert good.client.run_on_scheduler(os.getpid) == proc.pid
        finally:
            good.close()
        with pytest.raises(RegradeError, match="cannot connect"):
            DaskRunner(Target(address.replace("tls://", "tcp://"), insecure=True))
        files["ta.key"].chmod(0o644)
        with pytest.raises(RegradeError, match="chmod 600"):
            check_scheduler(address, tls_ca_file=str(files["ca.pem"]),
                            tls_cert=str(files["ta.pem"]), tls_key=str(files["ta.key"]))
    finally:
        proc.kill()
        proc.wait()


def test_the_cli_refuses_a_plain_scheduler_in_one_line(tmp_path):
    made = synth_export(module="01", n=1, out=tmp_path / "export.zip", seed=5, mix=NO_LOOP)
    res = CliRunner().invoke(cli, ["regrade", str(made.path), "--module", "01",
                                   "--scheduler", "tcp://127.0.0.1:9", "--dry-run"])
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert res.exit_code == 2 and len(lines) == 1, res.output
    assert lines[0].startswith("tito: --scheduler tcp://127.0.0.1:9") and "--insecure" in lines[0]
    res = CliRunner().invoke(cli, ["regrade", str(made.path), "--module", "01", "--insecure"])
    assert res.exit_code == 2 and "go with --scheduler" in res.output
