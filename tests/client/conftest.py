"""Fixtures for the client's tests: schema-checked connections to in-memory and stdio servers."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.client.schema_tap import RAW_SERVER, SchemaTap

from mcpkit.client import ClientOptions
from mcpkit.client.client import Client as CoreClient
from mcpkit.clients import Client
from mcpkit.transports.memory import InMemory
from mcpkit.transports.stdio.client import StdioServer


@pytest.fixture
def taps() -> Iterator[list[SchemaTap]]:
    """Every tap made in a test is checked when the test ends."""
    made: list[SchemaTap] = []
    yield made
    for tap in made:
        tap.assert_clean()


@pytest.fixture
async def clients() -> AsyncIterator[list[Client]]:
    made: list[Client] = []
    yield made
    for client in made:
        await client.close()


@pytest.fixture
def memory_client(taps: list[SchemaTap], clients: list[Client]) -> Callable[..., Client]:
    def make(server: Any, *, json: bool = False, options: ClientOptions | None = None,
             **kwargs: Any) -> Client:
        tap = SchemaTap()
        taps.append(tap)
        client = Client(InMemory(server, json=json, tap=tap), options=options, **kwargs)
        client.tap = tap  # type: ignore[attr-defined]
        clients.append(client)
        return client

    return make


@pytest.fixture
def raw_log(tmp_path: Path) -> Path:
    return tmp_path / "raw.log"


@pytest.fixture
def raw_client(
    taps: list[SchemaTap], clients: list[Client], raw_log: Path
) -> Callable[..., Client]:
    """A Client on `raw_server.py MODE`, a real subprocess."""

    def make(mode: str, *, options: ClientOptions | None = None, core: bool = False,
             **kwargs: Any) -> Client:
        """`core`: the core `mcpkit.client.Client`, without the extensions' halves."""
        tap = SchemaTap(check_server=False)
        taps.append(tap)
        connector = StdioServer(
            [sys.executable, RAW_SERVER, mode], env={"RAW_SERVER_LOG": str(raw_log)},
            stderr="capture", tap=tap,
        )
        cls = CoreClient if core else Client
        client = cls(connector, options=options or ClientOptions(probe_timeout=5), **kwargs)
        client.tap = tap  # type: ignore[attr-defined]
        clients.append(client)
        return client

    return make


@pytest.fixture(autouse=True)
def fresh_era_memory() -> Iterator[None]:
    """Each test probes for itself: no era remembered from an earlier test."""
    from mcpkit.client.era import PROCESS_ERAS

    PROCESS_ERAS.clear()
    yield
    PROCESS_ERAS.clear()
