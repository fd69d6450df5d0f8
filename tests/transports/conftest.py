"""Shared fixtures of the transport tests: the `features` server process (one per test module)
for the HTTP tests, and for the resumable-stream tests the gates their tools wait on and a plain
HTTP client for the requests a test writes by hand."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from helpers.transports.http_peer import FEATURES, Peer, ServerProcess
from helpers.transports.resume_peer import TIMEOUT
from helpers.transports.resume_server import Gates


@pytest.fixture(scope="module")
def features() -> Iterator[ServerProcess]:
    server = ServerProcess.start(FEATURES)
    yield server
    server.stop()


@pytest.fixture
def gates() -> Gates:
    return Gates()


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=TIMEOUT) as client:
        yield client


@pytest.fixture
async def legacy(features: ServerProcess, http: httpx.AsyncClient) -> Peer:
    """A 2025-11-25 session, initialized, on the module's features server."""
    peer = Peer(features.url, http)
    await peer.initialize()
    return peer
