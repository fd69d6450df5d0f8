"""The backends every store contract test runs on, and the opener that closes what it opened.

`url` is one of memory, SQLite, PostgreSQL and Redis (the last two real servers from
tests/helpers/services.py); `shared_url` only the two that replicas share."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from backends import KINDS, SHARED, Clock, make_url

from mcpkit.store.urls import Backend, open_backend


@pytest.fixture
async def opened() -> AsyncIterator[Callable[..., Backend]]:
    """`opened(url, clock=None)` opens a backend, closed when the test ends."""
    backends: list[Backend] = []

    def opener(url: str, clock: Clock | None = None) -> Backend:
        backend = open_backend(url, clock=clock)
        backends.append(backend)
        return backend

    yield opener
    for backend in backends:
        await backend.close()


@pytest.fixture(params=KINDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return make_url(request.param, request, tmp_path)


@pytest.fixture(params=SHARED)
def shared_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return make_url(request.param, request, tmp_path)
