"""The test run's pytest-xdist scheduler: every test is its own unit of work, except that the
tests of a file that shares state go to one worker together; slow tiers are served first.

It implements the scheduler protocol pytest-xdist asks of ``pytest_xdist_make_scheduler``
(``nodes``, ``collection_is_completed``, ``tests_finished``, ``has_pending``, ``add_node``,
``remove_node``, ``add_node_collection``, ``mark_test_complete``, ``schedule``) on its own state,
and talks to a worker only through the worker controller's calls every scheduler uses
(``send_runtest_some``, ``shutdown``, ``shutting_down``): it subclasses none of xdist's
schedulers and writes none of their internals, so an xdist release that reorganises its own
schedulers does not change this one. (pytest-xdist 3.8's ``loadgroup`` cannot regroup under
pytest 9: it rewrites a node id pytest no longer reads.)
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from xdist.workermanage import parse_tx_spec_config

#: a worker is kept holding at least this many tests: the running one and the next (a pytest
#: worker runs a test only once it knows the one after it, or that it is to shut down)
REFILL_AT = 2


class FileGroups:
    """Units of work from node ids: ``scope(nodeid)`` names the unit a test belongs to;
    ``slow(nodeid)`` whether it is in a slow tier. The queue holds the slow units first, then the
    rest, each part with the larger units first, then in collection order: long tests start
    early and the many short ones fill the end (docs/testing.md, *Parallel runs*)."""

    def __init__(self, config: pytest.Config, scope: Callable[[str], str],
                 slow: Callable[[str], bool]) -> None:
        self.config = config
        self.numnodes = len(parse_tx_spec_config(config))  # the workers the run starts
        self.scope, self.slow = scope, slow
        self.collections: dict[Any, list[str]] = {}   # worker -> its collection (node ids)
        self.index: dict[Any, dict[str, int]] = {}    # worker -> {node id: its index there}
        self.pending: dict[Any, dict[str, None]] = {}  # worker -> its tests not yet done, in order
        self.queue: deque[list[str]] | None = None     # units not yet given out

    # -- the protocol -------------------------------------------------------------------------
    @property
    def nodes(self) -> list[Any]:
        return list(self.pending)

    @property
    def collection_is_completed(self) -> bool:
        return len(self.collections) >= self.numnodes

    @property
    def tests_finished(self) -> bool:
        return (self.collection_is_completed and self.queue is not None and not self.queue
                and all(len(left) < REFILL_AT for left in self.pending.values()))

    @property
    def has_pending(self) -> bool:
        return bool(self.queue) or any(self.pending.values())

    def add_node(self, node: Any) -> None:
        assert node not in self.pending, "a worker was added twice"
        self.pending[node] = {}

    def add_node_collection(self, node: Any, collection: Sequence[str]) -> None:
        self.collections[node] = list(collection)
        self.index[node] = {nodeid: i for i, nodeid in enumerate(collection)}

    def remove_node(self, node: Any) -> str | None:
        """A worker is gone: at shutdown (nothing left) or crashed, in which case the test it was
        running is returned (xdist reports it) and the rest of its work goes back in the queue."""
        left = list(self.pending.pop(node))
        if not left:
            return None
        crashed, rest = left[0], left[1:]
        if rest and self.queue is not None:
            self.queue.appendleft(rest)
        for other in self.nodes:
            self._refill(other)
        return crashed

    def mark_test_complete(self, node: Any, item_index: int, duration: float = 0) -> None:
        self.pending[node].pop(self.collections[node][item_index], None)
        self._refill(node)

    def mark_test_pending(self, item: str) -> None:
        raise NotImplementedError("tests are never handed back to this scheduler")

    def remove_pending_tests_from_node(self, node: Any, indices: Sequence[int]) -> None:
        raise NotImplementedError("tests are never taken back from a worker")

    def schedule(self) -> None:
        if self.queue is not None:  # a worker joined later: give it work
            for node in self.nodes:
                self._refill(node)
            return
        collection = self._common_collection()
        if collection is None:
            return
        self.queue = deque(self.units(collection))
        for node in self.nodes[len(self.queue):]:  # more workers than work
            self.pending.pop(node)
            node.shutdown()
        for node in self.nodes:
            self._refill(node)

    # -- the policy ---------------------------------------------------------------------------
    def units(self, collection: Sequence[str]) -> list[list[str]]:
        """The units of work in the order workers are served."""
        units: dict[str, list[str]] = {}
        for nodeid in collection:
            units.setdefault(self.scope(nodeid), []).append(nodeid)
        slow = {name: any(self.slow(n) for n in ids) for name, ids in units.items()}
        order = sorted(units, key=lambda name: (not slow[name], -len(units[name])))  # stable
        return [units[name] for name in order]

    # -- helpers ------------------------------------------------------------------------------
    def _refill(self, node: Any) -> None:
        """Give ``node`` units until it holds :data:`REFILL_AT` tests; once the queue is empty,
        shut it down (it finishes what it holds)."""
        if node.shutting_down or self.queue is None:
            return
        while self.queue and len(self.pending[node]) < REFILL_AT:
            unit = self.queue.popleft()
            self.pending[node].update(dict.fromkeys(unit))
            node.send_runtest_some([self.index[node][nodeid] for nodeid in unit])
        if not self.queue:
            node.shutdown()

    def _common_collection(self) -> list[str] | None:
        """The collection every worker found; if two differ, a failed collection report (the run
        stops with it) and ``None``."""
        collection, *others = self.collections.values()
        for other in others:
            if other != collection:
                missing = sorted(set(collection) ^ set(other))[:5]
                self.config.hook.pytest_collectreport(report=pytest.CollectReport(
                    nodeid="", outcome="failed", result=[],
                    longrepr=f"xdist workers collected different tests (e.g. {missing}): "
                             "a collection that depends on the process (randomness, time)"))
                return None
        return collection
