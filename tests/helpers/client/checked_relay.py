"""Runs a stdio server command and relays its messages, checking both directions against the
official schema of the connection's era.

`mcpkit call` runs its server as a child process and speaks to it over pipes, where no test can
look; put this relay in front (`python checked_relay.py python -m mcpkit run server.py`) and
every line the client writes is checked as a client message before the server reads it, every
line the server writes is checked as a server message (the result of the method it answers)
before the client reads it. The era is modern until the client sends `initialize`. A message off
the schema is not passed on: the relay names it on stderr and exits with status 70 (as the
hand-written fakes do, fake_wire.py), so the call fails and its error repeats the reason.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from typing import IO, Any

from helpers.client.fake_wire import EXIT_OFF_SCHEMA, FakeWire
from helpers.wire import LEGACY, MODERN, check_client_message


def refuse(wire: FakeWire, side: str, problem: str) -> None:
    """Stop the relay (and so the call) naming a message of `side` off the schema."""
    sys.stderr.write(f"{wire.name}: the {side} sent a message off the {wire.revision} schema: "
                     f"{problem}\n")
    sys.stderr.flush()
    os._exit(EXIT_OFF_SCHEMA)


def client_side(wire: FakeWire, source: IO[bytes], server_stdin: IO[bytes]) -> None:
    """Client to server: note the era and each request's method, check, pass the line on."""
    for line in source:
        if not line.strip():
            continue
        try:
            message: Any = json.loads(line)
        except ValueError:
            refuse(wire, "client", f"a line that is not JSON: {line[:200]!r}")
        if isinstance(message, dict) and message.get("method") == "initialize":
            wire.revision = LEGACY
        elif isinstance(message, dict) and message.get("method") == "server/discover":
            wire.revision = MODERN
        try:
            check_client_message(wire.revision, message)
        except AssertionError as exc:
            refuse(wire, "client", str(exc))
        wire.received(message)
        server_stdin.write(line)
        server_stdin.flush()
    server_stdin.close()  # the client is done: so is the server


def main(argv: list[str]) -> int:
    if not argv:
        sys.stderr.write("usage: checked_relay.py SERVER-COMMAND...\n")
        return 2
    wire = FakeWire("checked-relay", MODERN)
    child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    threading.Thread(target=client_side, args=(wire, sys.stdin.buffer, child.stdin),
                     daemon=True).start()
    for line in child.stdout:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            refuse(wire, "server", f"a line that is not JSON: {line[:200]!r}")
        wire.send(message)  # checked as a server message of the era, or the relay stops
    return child.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
