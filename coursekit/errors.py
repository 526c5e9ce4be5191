"""One error convention for every command (tito, tito gradebook, tito regrade).

Bad input — a wrong argument, file or field, an unknown or unbuilt module — prints one line
``tito: <what is wrong and where>`` on stderr and exits 2. A command whose work found problems
(a leak, a kill rate below the gate, `course check` problems) lists them and exits 1. Success
is 0. Click's own usage errors (a missing argument) also exit 2.
"""

from __future__ import annotations

from typing import Any

import click


class UserError(click.ClickException):
    """Bad input: ``tito: <one line>`` on stderr, exit code 2."""

    exit_code = 2

    def show(self, file: Any = None) -> None:
        click.echo(f"tito: {' '.join(self.format_message().split())}", err=True)


class CourseSideProblem(click.ClickException):
    """The work ran but the course side failed (missing data, a broken reference): ``tito:
    <one line>`` on stderr, exit code 1. The result it wrote is pending, never a score."""

    exit_code = 1

    def show(self, file: Any = None) -> None:
        click.echo(f"tito: {' '.join(self.format_message().split())}", err=True)


class Interrupted(click.ClickException):
    """Ctrl-C: ``tito: interrupted (Ctrl-C) ...`` on stderr, exit code 130 (128 + SIGINT)."""

    exit_code = 130

    def show(self, file: Any = None) -> None:
        click.echo(f"tito: {' '.join(self.format_message().split())}", err=True)
