"""Fixtures of the scale-out tests: a `Cluster` (three replicas behind nginx) per engine.

`cluster` is module-scoped and parametrised over PostgreSQL and Redis, so each scenario runs
once on each; a test that kills a replica leaves it to `cluster` to start it again before the
next. `calendar_cluster` runs the calendar example instead, for the write-load fault test.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from nginx import ROOT, Cluster, nginx_binary

ENGINES = ["postgres", "redis"]


def _cluster(request: pytest.FixtureRequest, target: str | None = None) -> Iterator[Cluster]:
    nginx_binary()  # skip (or fail under CI) before starting anything
    url: str = request.getfixturevalue(f"{request.param}_url")
    cluster = Cluster(request.param, url, *([target] if target else []))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="module", params=ENGINES)
def cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    yield from _cluster(request)


@pytest.fixture
def replicas(cluster: Cluster) -> Iterator[Cluster]:
    """`cluster` with every replica running at the start and at the end of the test."""
    cluster.ensure_running()
    yield cluster
    cluster.ensure_running()


@pytest.fixture(scope="module", params=ENGINES)
def calendar_cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    yield from _cluster(request, str(ROOT / "examples" / "calendar" / "server.py"))
