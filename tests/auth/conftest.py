"""The real authorization server as a process per test module (`as_process.AuthServer`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from as_process import AuthServer


@pytest.fixture(scope="module")
def auth_server() -> Iterator[AuthServer]:
    server = AuthServer.start()
    yield server
    server.stop()
