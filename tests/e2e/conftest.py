"""End-to-end fixtures: the examples served for real (stdio subprocess, HTTP on 127.0.0.1,
in memory), each client connection's messages checked against the official schema."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.client.schema_tap import SchemaTap, TappedConnector

from mcpkit.client import Client, ClientOptions
from mcpkit.transports.stdio.client import python_server


@pytest.fixture(autouse=True)
def isolated_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A calendar database, an era cache and a user cache folder of the test's own."""
    from mcpkit.client.era import PROCESS_ERAS

    monkeypatch.setenv("CALENDAR_DB", str(tmp_path / "calendar.sqlite3"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    PROCESS_ERAS.clear()
    yield
    PROCESS_ERAS.clear()


@pytest.fixture
async def connect() -> AsyncIterator[Callable[..., Client]]:
    """`connect(kind, target, era=..., **client_kwargs)`: a schema-checked Client."""
    made: list[tuple[Client, SchemaTap]] = []

    def make(kind: str, target: Any, *, era: str = "auto", check_server: bool = True,
             **kwargs: Any) -> Client:
        tap = SchemaTap(check_server=check_server)
        options = kwargs.pop("options", None) or ClientOptions(era=era)  # type: ignore[arg-type]
        if kind == "stdio":
            connector: Any = python_server(str(target), stderr="capture", tap=tap)
        elif kind == "http":
            from mcpkit.transports.http_client.transport import HTTPConnector

            connector = TappedConnector(HTTPConnector(target), tap)
        else:
            from mcpkit.transports.memory import InMemory

            connector = InMemory(target, json=True, tap=tap)
        client = Client(connector, options=options, **kwargs)
        client.tap = tap  # type: ignore[attr-defined]
        made.append((client, tap))
        return client

    yield make
    for client, tap in made:
        await client.close()
        tap.assert_clean()
