"""Helpers shared by the benchmarks: CPU seconds of every process of a run (a cgroup), and a
course whose submission windows have closed.

**CPU of a run.**
``getrusage(RUSAGE_CHILDREN)`` only counts descendants that were waited for: a grading run's
sandboxed children outlive their launcher and are reaped by init, so their CPU time never
reaches it. A cgroup counts every process started inside it, whoever reaps it. ``run`` puts
the command's process in a fresh cgroup before it starts (v1 ``cpuacct``, or v2: the
``unified`` hierarchy of a hybrid mount, or ``/sys/fs/cgroup`` itself), lets it run, reads
the group's usage once every process in it has exited, and removes the group. Creating a
cgroup needs root; without one the figure is ``getrusage(RUSAGE_CHILDREN)`` of the run and
``complete`` is False.

Used by ``bench/mutation_cost.py`` and ``bench/grading_cpu.py``.

**A closed course** (``closed_course``): course.yml with every date a year earlier, as a TA
regrades after the windows close. Graded before the term, every earlier module would still be
open, and a module-N upload alone would run on the release stubs of 01..N-1 (and train
nothing); closed, they come from the reference, as in the term.
"""

from __future__ import annotations

import datetime as dt
import os
import resource
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Where to try to create a group, in order: (mount, is cgroup v2).
MOUNTS = ((Path("/sys/fs/cgroup/cpuacct"), False), (Path("/sys/fs/cgroup/unified"), True),
          (Path("/sys/fs/cgroup"), True))


class CpuGroup:
    """A cgroup of its own for one run: its CPU usage covers every process started in it."""

    def __init__(self, prefix: str = "tt-bench") -> None:
        self.path: Path | None = None
        self.v2 = False
        if os.geteuid() != 0:
            return
        name = f"{prefix}-{os.getpid()}-{time.monotonic_ns()}"
        for base, v2 in MOUNTS:
            probe = base / ("cgroup.procs" if v2 else "cpuacct.usage")
            if not probe.is_file():
                continue
            try:
                (base / name).mkdir()
            except OSError:
                continue
            self.path, self.v2 = base / name, v2
            return

    def enter(self) -> None:
        """Move the calling process into the group (a child's ``preexec_fn``)."""
        if self.path is not None:
            (self.path / "cgroup.procs").write_text(str(os.getpid()))

    def members(self) -> list[int]:
        """Processes still in the group."""
        if self.path is None:
            return []
        text = (self.path / "cgroup.procs").read_text()
        return [int(pid) for pid in text.split()]

    def cpu_s(self) -> float | None:
        """CPU seconds (user + system) of every process that ran in the group."""
        if self.path is None:
            return None
        if self.v2:
            stat = dict(line.split() for line in (self.path / "cpu.stat").read_text()
                        .splitlines())
            return int(stat["usage_usec"]) / 1e6
        return int((self.path / "cpuacct.usage").read_text()) / 1e9

    def remove(self, wait_s: float = 10.0) -> None:
        """Remove the group once its last processes (sandboxed children still exiting) are
        gone."""
        if self.path is None:
            return
        end = time.monotonic() + wait_s
        while True:
            try:
                self.path.rmdir()
                return
            except OSError:
                if time.monotonic() > end:
                    raise
                time.sleep(0.05)


@dataclass(frozen=True)
class Usage:
    """What ``run`` measured."""

    cpu_s: float
    wall_s: float
    returncode: int
    #: True when ``cpu_s`` comes from a cgroup (every process); False: waited-for ones only
    complete: bool
    stdout: bytes = b""
    stderr: bytes = b""


def run(cmd: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None,
        settle_s: float = 10.0, prefix: str = "tt-bench") -> Usage:
    """Run ``cmd`` to completion in a cgroup of its own and return its CPU and wall seconds.

    After the command exits, waits up to ``settle_s`` for the processes it left behind (a
    sandbox's children being killed) to leave the group, so their CPU time is counted too.
    """
    group = CpuGroup(prefix)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, check=False,
                              preexec_fn=group.enter)  # noqa: PLW1509 - one thread here
        wall = time.perf_counter() - start
        end = time.monotonic() + settle_s
        while group.members() and time.monotonic() < end:
            time.sleep(0.05)
        cpu = group.cpu_s()
    finally:
        group.remove()
    if cpu is not None:
        return Usage(cpu, wall, proc.returncode, True, proc.stdout, proc.stderr)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return Usage(cpu, wall, proc.returncode, False, proc.stdout, proc.stderr)


def closed_course(folder: Path, source: Path | None = None) -> Path:
    """Write ``folder/course.yml``: ``source`` (the repository's course.yml) with every
    module's release and due date one year earlier; return its path (for ``TITO_COURSE``)."""
    import yaml

    source = source or Path(__file__).resolve().parents[1] / "course.yml"
    data = yaml.safe_load(source.read_text(encoding="utf-8"))

    def back(text: str) -> str:
        when = dt.datetime.strptime(text, "%Y-%m-%d %H:%M") - dt.timedelta(days=365)
        return when.strftime("%Y-%m-%d %H:%M")

    for module in data["modules"]:
        for key in ("release", "due"):
            module[key] = back(module[key])
    out = folder / "course.yml"
    out.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return out


def chosen_modules(course: Any, wanted: list[str] | None) -> list[Any]:
    """The built modules of ``course`` (``coursebuild.release.built_modules``), only those
    numbered in ``wanted`` (``["09", "13_transformers"]``) when it is given."""
    from coursebuild.release import built_modules  # noqa: PLC0415 - after the path is set

    modules = built_modules(course)
    if wanted:
        numbers = {int(m.split("_")[0]) for m in wanted}
        modules = [m for m in modules if m.number in numbers]
    return modules

