"""Fixtures of the first-hour command-line tests: the test server over HTTP on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from cli_run import SERVER
from helpers.transports.http_peer import ServerProcess


@pytest.fixture(scope="module")
def http_server() -> Iterator[str]:
    """`mcpkit run first_hour_server.py --http 127.0.0.1:0`; its URL."""
    server = ServerProcess.start(SERVER)
    yield server.url
    server.stop()
