"""The Dask scheduler and worker of ``tito regrade --scheduler local:N``: no HTTP server.

Dask's scheduler serves HTTP (the dashboard when it is on, and always its ``http.routes``:
``/info``, ``/json``, ``/metrics``, ``/health``, a ``/proxy`` to the workers) on port 8787, and
every worker serves ``/metrics`` and ``/health``, even with the dashboard off. None of it is
needed to regrade, and none of it is authenticated. These subclasses start no HTTP server at
all, so the only listeners left are Dask's TLS comms (see :mod:`staff.regrade.dask`).
Imported only when a Dask cluster is used (Dask is an optional extra).
"""

from __future__ import annotations

from typing import Any

from distributed import Scheduler, Worker
from distributed.http.routing import RoutingApplication


class _NoHTTP:
    """``start_http_server`` that starts nothing: no socket, no routes."""

    http_application: RoutingApplication
    http_server: Any

    def start_http_server(self, routes: Any, dashboard_address: Any, default_port: int = 0,
                          ssl_options: Any = None) -> None:
        self.http_application = RoutingApplication([])
        self.http_server = None


class NoHTTPScheduler(_NoHTTP, Scheduler):
    """A Dask scheduler without its HTTP server."""


class NoHTTPWorker(_NoHTTP, Worker):
    """A Dask worker without its HTTP server."""
