"""Shared fixtures: a server driven over a real stream connection, with every outgoing
message checked against the official schema of its revision; and the helper folders handed on
to the processes tests start."""

from __future__ import annotations

import os
import tempfile
from collections.abc import AsyncIterator
from typing import Any

import pytest

# With the schema checks' hooks (the pytest_* names): under CI a run without the schemas stops
# at start; elsewhere the header warns and the summary counts the checks made (0: they were off).
from helpers.wire import (  # noqa: F401
    LEGACY,
    MODERN,
    check_server_message,
    meta,
    pytest_configure,
    pytest_report_header,
    pytest_sessionfinish,
    pytest_terminal_summary,
    pytest_testnodedown,
)

from mcpkit.testing import ServerWire

pytest_plugins = [
    "helpers.real_parts",  # every real part required under CI; elsewhere the skips counted last
    "helpers.hypothesis_profiles",  # local (derandomized), ci (a fresh seed, a time budget), long
    "helpers.services",  # real PostgreSQL and Redis: postgres_url, redis_url, restartable
    "helpers.failure_reports",  # a failure pytest cannot format still reports (CPython 3.11's ast)
]

CLIENT_INFO = "io.modelcontextprotocol/clientInfo"


_DATA_DIR = tempfile.TemporaryDirectory(prefix="mcpkit-test-data-")
"""The run's data folder (removed when the run's process ends)."""


def pytest_sessionstart(session: pytest.Session) -> None:
    """Give the processes tests start the folders pytest's `pythonpath` gives the tests.

    A fake server run as a script (`python tests/helpers/client/raw_server.py`), the relay in front of
    one, and `mcpkit call` with the server it runs import helper modules by name (fake_wire,
    wire) as the tests do. Each inherits this process's environment, so PYTHONPATH is set here,
    once, for all of them.
    """
    folders = [str(path) for path in session.config.getini("pythonpath")]
    inherited = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([*folders, *([inherited] if inherited else [])])
    # A server given no state keys keeps its key ring in the user's data folder: the run's
    # servers (and the ones it starts) share one in a folder of the run's own, never the home.
    if "MCPKIT_DATA_DIR" not in os.environ:
        os.environ["MCPKIT_DATA_DIR"] = _DATA_DIR.name


class Wire(ServerWire):
    """A client's view of one stream connection to a server (mcpkit.testing's ServerWire), every
    message the server sends checked against the schema of the connection's revision: modern,
    or legacy once an `initialize` has been sent."""

    def __init__(self, server: Any) -> None:
        super().__init__(server, tap=self._check, client_info=meta()[CLIENT_INFO])
        self.revision = MODERN

    def _check(self, direction: str, message: dict[str, Any]) -> None:
        if direction == "send":
            if "id" in message and message.get("method") == "initialize":
                self.revision = LEGACY
            return
        request_method = self.methods.get(message.get("id")) if "method" not in message else None
        check_server_message(self.revision, message, request_method)


@pytest.fixture
async def wire_factory() -> AsyncIterator[Any]:
    wires: list[Wire] = []

    def make(server: Any) -> Wire:
        w = Wire(server)
        wires.append(w)
        return w

    yield make
    for w in wires:
        w.close()
