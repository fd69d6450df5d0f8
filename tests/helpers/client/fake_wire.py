"""What a hand-written fake server sends, checked against the official schema as it is sent.

The fakes the client tests run as processes (raw_server.py, asking_server.py,
url_elicit_server.py) write raw JSON-RPC, so nothing else checks their messages, and a fake
that sends an invalid message can hide a client bug (the client accepting what it should refuse)
or fail a test for the wrong reason. `FakeWire.send` validates each message with tests/helpers/wire.py
before writing it. A message off the schema is not sent: the fake names the problem on stderr
and exits with status 70, so the test fails, and the client's error repeats that stderr. A
message a test needs off the schema is sent with `off_schema="why"`; it must then really be off
the schema (a mark that no longer applies fails the same way).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import Any

from helpers.wire import LEGACY, NOTIFICATION_TYPES, check, check_server_message, spec_available

EXIT_OFF_SCHEMA = 70


def problem_of(revision: str, message: dict[str, Any], method: str | None) -> str | None:
    """Why `message` is not a valid server message of `revision` (None when it is)."""
    if method is not None and revision == LEGACY and method == "server/discover":
        method = None  # the probe is not a 2025-11-25 method: only the envelope is checked
    try:
        if "method" in message and "id" not in message \
                and message["method"] not in NOTIFICATION_TYPES \
                and message["method"] != "notifications/tasks":  # the extension's: wire.py
            # One tests/helpers/wire.py does not list (notifications/elicitation/complete): the union.
            check(revision, "JSONRPCMessage", message)
            check(revision, "ServerNotification", message)
        else:
            check_server_message(revision, message, method)
        error = message.get("error")
        if revision == LEGACY and isinstance(error, dict) and error.get("code") == -32042:
            check(revision, "URLElicitationRequiredError", message)
    except AssertionError as exc:
        return str(exc)
    return None


class FakeWire:
    """The writing side of one fake: `received` notes each request's method (to check the
    result answering it), `send` checks and writes one message a line."""

    def __init__(self, name: str, revision: str) -> None:
        self.name = name
        self.revision = revision
        self.methods: dict[Any, str] = {}
        self.lock = threading.Lock()

    def received(self, message: Any) -> None:
        if isinstance(message, dict) and "method" in message and "id" in message:
            with self.lock:
                self.methods[json.dumps(message["id"])] = message["method"]

    def send(self, message: dict[str, Any], *, off_schema: str | None = None) -> None:
        with self.lock:
            method = None
            if "method" not in message and "id" in message:
                method = self.methods.pop(json.dumps(message["id"]), None)
            problem = problem_of(self.revision, message, method)
            if off_schema is not None:
                problem = None if problem is not None or not spec_available() else (
                    f"marked off the schema ({off_schema}), but it is a valid message")
            if problem is not None:
                sys.stdout.flush()
                sys.stderr.write(f"{self.name}: refusing to send a message off the "
                                 f"{self.revision} schema: {problem}\n")
                sys.stderr.flush()
                os._exit(EXIT_OFF_SCHEMA)  # from any thread: the whole fake stops
            sys.stdout.write(json.dumps(message) + "\n")
            sys.stdout.flush()
