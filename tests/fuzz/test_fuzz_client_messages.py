"""The client's handling of what a server sends, in both eras.

Any message may arrive where the server's messages arrive (a response to no request, an id of
any type, a notification with params of any shape, a request to a client that serves none):
the client routes what is valid, ignores what is not with a warning, answers a server's
request with a result or a JSON-RPC error, and raises nothing but its own errors. Afterwards
the same client still works: a real call on the same connection gets its answer. What the
client sends meanwhile (its answers to the server's requests) is checked against the schema
of the connection's revision.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.sample_server import make_server
from helpers.wire import LEGACY, MODERN, check_client_message, check_server_message
from hypothesis import example, given
from hypothesis import strategies as st
from peer_values import near_miss_messages

from mcpkit.client import Client, ClientOptions
from mcpkit.errors import InvalidRequestError, ProtocolViolation, TransportError
from mcpkit.protocol.codec import Response, classify
from mcpkit.testing import WireRecorder, connect
from mcpkit.transports.stdio.client import StdioServer

ERAS = ["modern", "legacy"]
HOSTILE = [
    {"jsonrpc": "2.0", "id": [1], "result": {}},
    {"jsonrpc": "2.0", "id": {"id": 1}, "error": {"code": -32603, "message": "x"}},
    {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": [1]}},
    {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": {}}},
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": [1]}},
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": {"a": 1}}},
    {"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
     "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": [1]}}},
    {"jsonrpc": "2.0", "id": [1], "method": "ping"},
    {"jsonrpc": "2.0", "id": None, "method": "roots/list"},
    {"jsonrpc": "2.0", "method": 7},
]
"""Messages that once raised TypeError out of the client's router (unhashable ids, tokens and
subscription ids), or made it answer with an id the server never sent."""


async def _decline(*_args: Any) -> dict[str, Any]:
    return {"action": "decline"}


async def _sample(*_args: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}


class _Tracebacks(logging.Handler):
    """Failures inside mcpkit that were caught and logged with their traceback: what a field
    read without its type check causes behind a guard that keeps the connection open."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info is not None:
            self.seen.append(f"{record.name}: {record.getMessage()}: {record.exc_info[1]!r}")


async def _scenario(era: str, messages: list[Any]) -> None:
    tracebacks = _Tracebacks()
    logging.getLogger("mcpkit").addHandler(tracebacks)
    try:
        await _exchange(era, messages)
    finally:
        logging.getLogger("mcpkit").removeHandler(tracebacks)
    assert not tracebacks.seen


async def _exchange(era: str, messages: list[Any]) -> None:
    recorder = WireRecorder()
    logs: list[Any] = []
    client = connect(
        make_server(), recorder=recorder, options=ClientOptions(era=era),  # type: ignore[arg-type]
        elicit=_decline, sample=_sample, roots=[{"uri": "file:///tmp", "name": "tmp"}],
        on_log=lambda entry: logs.append(entry),
    )
    revision = MODERN if era == "modern" else LEGACY
    async with client:
        assert (await client.call_tool("add", {"a": 1, "b": 2}))["structuredContent"] == {"sum": 3}
        # Where the server's messages arrive on this connection: the recorder's tap, then the
        # client's router, as for each message the server itself sends.
        arrive = client.transport._from_server  # type: ignore[union-attr]
        for message in messages:
            try:
                arrive(message)
            except (ProtocolViolation, TransportError):
                pass
            await asyncio.sleep(0)
        for _ in range(5):  # let the answers to the server's requests be written
            await asyncio.sleep(0)
        assert (await client.call_tool("echo", {"text": "still here"}))["content"][0]["text"] \
            == "still here"
        assert "add" in {tool["name"] for tool in await client.list_tools(fresh=True)}
    for direction, message in recorder.messages:
        if direction == "send":
            check_client_message(revision, message)


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("message", HOSTILE, ids=lambda m: str(m)[:60])
def test_a_hostile_message_is_ignored_and_the_client_goes_on(
    era: str, message: dict[str, Any]
) -> None:
    asyncio.run(_scenario(era, [message]))


@pytest.mark.parametrize("era", ERAS)
def test_a_response_with_id_true_does_not_answer_request_1(era: str) -> None:
    """`true` and `1.0` equal 1 in Python: taken as ids, they would answer request 1."""

    async def main() -> None:
        async with connect(make_server(), options=ClientOptions(era=era)) as client:  # type: ignore[arg-type]
            assert "add" in {tool["name"] for tool in await client.list_tools(fresh=True)}
            router = client.transport._router  # type: ignore[union-attr]
            waiting = asyncio.ensure_future(router.request(
                {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {}}))
            await asyncio.sleep(0)
            for forged in (True, 1.0):
                client.transport._from_server(  # type: ignore[union-attr]
                    {"jsonrpc": "2.0", "id": forged, "result": {"forged": True}})
            await asyncio.sleep(0)
            assert not waiting.done()
            waiting.cancel()

    asyncio.run(main())


@pytest.mark.parametrize("era", ERAS)
@given(messages=st.lists(near_miss_messages(), min_size=1, max_size=8))
@example(messages=HOSTILE)
def test_any_server_messages_leave_the_client_working(
    era: str, messages: list[Any]
) -> None:
    asyncio.run(_scenario(era, messages))


RELAY = str(Path(__file__).with_name("injecting_relay.py"))


def _answer_from_the_server(message: dict[str, Any]) -> bool:
    """A response the real server wrote (the relay's injected lines are not schema-checked:
    they are off the schema on purpose)."""
    try:
        decoded = classify(message)
    except InvalidRequestError:
        return False
    return isinstance(decoded, Response) and message not in HOSTILE
NOT_MESSAGES = ["not json", "[1, 2]", '{"jsonrpc": "1.0", "id": 999, "result": {}}', "\udcff",
                '{"jsonrpc": "2.0", "id": 999, "error": null}']
"""Lines that are no message of the connection (999 names no request in flight: a malformed
answer to one that is fails it, `test_a_malformed_answer_to_a_request_in_flight_fails_it`)."""


@pytest.mark.parametrize("era", ERAS)
async def test_hostile_lines_from_a_real_stdio_server_leave_the_client_working(era: str) -> None:
    """Over a real process: lines a server writes before an answer (each of HOSTILE, lines that
    are no message) are ignored, the answer still arrives, and the next call works. A
    TypeError here used to end the stdio reader, failing the call with a closed connection."""
    revision = MODERN if era == "modern" else LEGACY
    methods: dict[Any, str] = {}

    def tap(direction: str, message: dict[str, Any]) -> None:
        if direction == "send":
            check_client_message(revision, message)
            if "id" in message and "method" in message:
                methods[message["id"]] = message["method"]
        elif _answer_from_the_server(message) and message["id"] in methods:
            check_server_message(revision, message, methods[message["id"]])

    lines = [json.dumps(m) for m in HOSTILE] + NOT_MESSAGES
    client = Client(StdioServer([sys.executable, RELAY], stderr="capture", tap=tap),
                    options=ClientOptions(era=era))  # type: ignore[arg-type]
    async with client:
        text = "INJECT:" + json.dumps(lines)
        reply = await client.call_tool("echo", {"text": text})
        assert reply["content"][0]["text"] == text
        assert (await client.call_tool("add", {"a": 4, "b": 5}))["structuredContent"] == {"sum": 9}


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("answer", [
    {"result": []}, {"result": "ok"}, {"error": {"code": "-32603", "message": "x"}},
    {"error": None}, {"result": {}, "error": {"code": 1, "message": "both"}},
], ids=["result-list", "result-string", "code-string", "error-null", "both"])
def test_a_malformed_answer_to_a_request_in_flight_fails_it_at_once(
    era: str, answer: dict[str, Any]
) -> None:
    """Dropping a malformed response would leave its request waiting for an answer that
    already came, until the timeout; it fails now, saying what was wrong."""

    async def main() -> None:
        async with connect(make_server(), options=ClientOptions(era=era)) as client:  # type: ignore[arg-type]
            await client.list_tools()
            router = client.transport._router  # type: ignore[union-attr]
            waiting = asyncio.ensure_future(router.request(
                {"jsonrpc": "2.0", "id": 10_001, "method": "tools/list", "params": {}}))
            await asyncio.sleep(0)
            client.transport._from_server(  # type: ignore[union-attr]
                {"jsonrpc": "2.0", "id": 10_001, **answer})
            with pytest.raises(ProtocolViolation) as info:
                await asyncio.wait_for(waiting, 10)
            assert str(info.value).startswith(
                "tools/list: the server's response is not valid JSON-RPC (")
            assert (await client.call_tool("add", {"a": 1, "b": 1}))["structuredContent"] \
                == {"sum": 2}

    asyncio.run(main())
