"""stdio at its edges, against a real `mcpkit run` subprocess: peer fields of the wrong type,
a request id reused while its request runs, a reader that goes away, stdin that is a regular
file, and a last line with no newline."""

from __future__ import annotations

import asyncio
import os
import select
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from helpers import HELPERS
from helpers.transports.hostile_ids import BAD_REQUEST_IDS
from helpers.transports.stdio_peer import ROOT, StdioPeer, meta
from helpers.wire import MODERN, check_server_message

from mcpkit import Server
from mcpkit.transports.stream import StreamConnection

FEATURES = str(HELPERS / "transports" / "servers" / "http_features.py")
QUICKSTART = "examples/quickstart/server.py"



@pytest.fixture
async def gated() -> AsyncIterator[StdioPeer]:
    peer = await StdioPeer.start(FEATURES)
    yield peer
    await peer.kill()


def call(request_id: Any, tool: str, **extra_meta: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": tool, "arguments": {}, "_meta": meta(**extra_meta)}}


async def hold_gate(peer: StdioPeer, request_id: Any) -> None:
    """Start the `gate` call as `request_id` and wait until it runs (its progress report)."""
    peer.send(call(request_id, "gate", progressToken="held"))
    progress = await peer.read()
    assert progress["method"] == "notifications/progress"
    assert progress["params"]["progressToken"] == "held"


async def open_gate_and_collect(peer: StdioPeer, held: Any) -> None:
    """Open the gate (request "open") and check both answers, in whichever order they come."""
    peer.send(call("open", "open_gate"))
    replies = await peer.read_by_id(2)
    assert set(replies) == {held, "open"}
    assert replies["open"]["result"]["content"][0]["text"] == "open"
    assert replies[held]["result"]["content"][0]["text"] == "through"


async def legacy_initialize(peer: StdioPeer) -> None:
    init = await peer.request("initialize", {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "old", "version": "1"}}, with_meta=False)
    assert init["result"]["protocolVersion"] == "2025-11-25"
    peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


async def finish(peer: StdioPeer) -> bytes:
    """The process still serves; then stdin closes and it exits 0 without a traceback."""
    discover = await peer.request("server/discover")
    assert discover["result"]["resultType"] == "complete"
    code, stderr = await peer.close()
    assert code == 0, stderr
    assert b"Traceback" not in stderr, stderr.decode(errors="replace")
    return stderr


@pytest.mark.parametrize("bad", BAD_REQUEST_IDS)
async def test_a_cancel_naming_no_request_is_ignored_and_the_request_completes(
    gated: StdioPeer, bad: Any
) -> None:
    await hold_gate(gated, 1)
    gated.send_raw(orjson.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                    "params": {"requestId": bad}}) + b"\n")
    # No reply to the notification: the next two messages are the two tool results.
    await open_gate_and_collect(gated, 1)
    stderr = await finish(gated)
    if type(bad) is not str and bad is not None:
        assert f"a request id of type {type(bad).__name__} names no request".encode() in stderr
    assert b"x" * 100 not in stderr  # a huge id is never copied into the log


@pytest.mark.parametrize("params", [
    pytest.param({"requestId": [1], "reason": {"nested": [1]}}, id="legacy-list"),
    pytest.param({"requestId": {"id": 1}}, id="legacy-object"),
    pytest.param({"requestId": 1.0}, id="legacy-float"),
])
async def test_a_legacy_connection_ignores_a_cancel_naming_no_request(
    gated: StdioPeer, params: dict[str, Any]
) -> None:
    await legacy_initialize(gated)
    gated.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "gate", "arguments": {}, "_meta": {"progressToken": "held"}}})
    assert (await gated.read())["method"] == "notifications/progress"
    gated.send_raw(orjson.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                    "params": params}) + b"\n")
    gated.send({"jsonrpc": "2.0", "id": "open", "method": "tools/call",
                   "params": {"name": "open_gate", "arguments": {}}})
    replies = await gated.read_by_id(2)
    assert replies["open"]["result"] == {"content": [{"type": "text", "text": "open"}]}
    assert replies[1]["result"] == {"content": [{"type": "text", "text": "through"}]}
    code, stderr = await gated.close()
    assert code == 0 and b"Traceback" not in stderr, stderr.decode(errors="replace")


@pytest.mark.parametrize(("token", "kind"), [
    pytest.param([1], "an array", id="list"),
    pytest.param({"t": 1}, "an object", id="object"),
    pytest.param(1.5, "a number", id="float"),
    pytest.param(False, "a boolean", id="bool"),
])
async def test_a_legacy_progress_token_of_the_wrong_type_is_refused_by_name(
    gated: StdioPeer, token: Any, kind: str
) -> None:
    await legacy_initialize(gated)
    gated.ids += 1
    gated.send({"jsonrpc": "2.0", "id": gated.ids, "method": "tools/call", "params": {
        "name": "echo", "arguments": {"text": "hi"}, "_meta": {"progressToken": token}}})
    refused = await gated.read()
    assert refused["id"] == gated.ids
    assert refused["error"] == {"code": -32602, "message": (
        f"tools/call: params._meta.progressToken must be a string or an integer, not {kind}")}
    echoed = await gated.request("tools/call", {"name": "echo", "arguments": {"text": "on"}},
                                 with_meta=False)
    assert echoed["result"] == {"content": [{"type": "text", "text": "on"}]}


async def test_a_cancel_naming_the_request_still_cancels_it(gated: StdioPeer) -> None:
    # The other side of the checks above: a well-typed id is still honoured.
    await hold_gate(gated, 1)
    gated.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": 1}})
    gated.ids = 1  # the next request is 2: id 1 is not reused here
    discover = await gated.request("server/discover")
    assert discover["result"]["resultType"] == "complete"
    assert gated.proc.stdin is not None
    gated.proc.stdin.close()
    assert await gated.rest() == []  # nothing, ever, for the cancelled request 1


async def test_an_id_in_use_by_a_running_request_is_refused_and_the_first_completes(
    gated: StdioPeer,
) -> None:
    await hold_gate(gated, 7)
    gated.send(call(7, "echo"))
    refused = await gated.read()
    assert refused["id"] == 7
    assert refused["error"]["code"] == -32600
    assert refused["error"]["message"] == (
        "Invalid request: id 7 is already in use by a request in flight")
    await open_gate_and_collect(gated, 7)
    # Once the first request 7 is answered its id is free again.
    gated.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "echo", "arguments": {"text": "again"}, "_meta": meta()}})
    assert (await gated.read())["result"]["content"][0]["text"] == "again"
    await finish(gated)


async def test_an_unexpected_error_on_one_message_is_answered_and_serving_goes_on(
    wire_factory: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # No message known today makes the stream raise; this one is made to, to show that such a
    # fault costs that message alone, not the connection.
    def broken(self: StreamConnection, request: Any) -> None:
        raise RuntimeError("a fault while starting a request")

    server = Server("guarded", "1.0.0")

    @server.tool()
    async def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    wire = wire_factory(server)
    start = StreamConnection._start
    monkeypatch.setattr(StreamConnection, "_start", broken)
    reply = await wire.request("tools/list")
    assert reply["error"] == {"code": -32603, "message": "Internal error while receiving tools/list"}
    assert "a fault while starting a request" in caplog.text
    monkeypatch.setattr(StreamConnection, "_start", start)
    answer = await wire.request("tools/call", {"name": "echo", "arguments": {"text": "on"}})
    assert answer["result"]["content"][0]["text"] == "on"


def _read_line(stream: Any, timeout: float = 30) -> bytes:
    ready, _, _ = select.select([stream], [], [], timeout)
    assert ready, "no answer from the server"
    line: bytes = stream.readline()
    return line


def test_a_reader_that_goes_away_ends_nothing_but_the_answers() -> None:
    """When the client closes stdout the server stops writing (no error per message), goes on
    until stdin closes, and exits 0 with nothing on stderr."""
    proc = subprocess.Popen([sys.executable, "-m", "mcpkit", "run", QUICKSTART], cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        first = {"jsonrpc": "2.0", "id": 1, "method": "server/discover",
                 "params": {"_meta": meta()}}
        proc.stdin.write(orjson.dumps(first) + b"\n")
        proc.stdin.flush()
        reply = orjson.loads(_read_line(proc.stdout))
        check_server_message(MODERN, reply, "server/discover")
        assert reply["id"] == 1
        proc.stdout.close()
        for i in range(2, 202):
            request = {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
                "name": "add", "arguments": {"a": i, "b": 1}, "_meta": meta()}}
            proc.stdin.write(orjson.dumps(request) + b"\n")
        proc.stdin.close()
        code = proc.wait(30)
        assert proc.stderr is not None
        stderr = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 0
    assert stderr == b""


def test_requests_on_a_regular_file_for_stdin_are_all_answered(tmp_path: Path) -> None:
    requests = [{"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
        "name": "add", "arguments": {"a": i, "b": 10}, "_meta": meta()}} for i in range(1, 51)]
    requests.append({"jsonrpc": "2.0", "id": "last", "method": "server/discover",
                     "params": {"_meta": meta()}})
    script = tmp_path / "requests.jsonl"
    script.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in requests))
    with script.open("rb") as stdin:
        done = subprocess.run([sys.executable, "-m", "mcpkit", "run", QUICKSTART], cwd=ROOT,
                              stdin=stdin, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert b"Traceback" not in done.stderr
    replies = {}
    for line in done.stdout.splitlines():
        message = orjson.loads(line)
        method = "server/discover" if message.get("id") == "last" else "tools/call"
        check_server_message(MODERN, message, method)
        replies[message["id"]] = message
    assert set(replies) == {r["id"] for r in requests}
    for i in range(1, 51):
        assert replies[i]["result"]["structuredContent"] == {"sum": i + 10}
    assert replies["last"]["result"]["resultType"] == "complete"


def test_stdin_from_dev_null_is_an_empty_input() -> None:
    done = subprocess.run([sys.executable, "-m", "mcpkit", "run", QUICKSTART], cwd=ROOT,
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def test_a_closed_stdin_is_an_empty_input() -> None:
    # fd 0 closed before start: no later descriptor (the wire's, the event loop's) may take it.
    done = subprocess.run([sys.executable, "-m", "mcpkit", "run", QUICKSTART], cwd=ROOT,
                          stdin=None, capture_output=True, timeout=60,
                          preexec_fn=lambda: os.close(0))
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def test_a_stdin_that_cannot_be_read_ends_serving_with_one_warning(tmp_path: Path) -> None:
    with (tmp_path / "write-only").open("wb") as stdin:
        done = subprocess.run([sys.executable, "-m", "mcpkit", "run", QUICKSTART], cwd=ROOT,
                              stdin=stdin, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == b""
    lines = done.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and "stdin cannot be read" in lines[0], lines


async def test_a_last_line_without_a_newline_is_still_answered() -> None:
    peer = await StdioPeer.start(QUICKSTART)
    try:
        peer.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "add", "arguments": {"a": 1, "b": 2}, "_meta": meta()}})
        peer.methods[2] = "tools/call"
        peer.send_raw(orjson.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                    "params": {"name": "add", "arguments": {"a": 20, "b": 22},
                                               "_meta": meta()}}))
        assert peer.proc.stdin is not None
        peer.proc.stdin.close()
        replies = {m["id"]: m for m in await asyncio.wait_for(peer.rest(), 30)}
        assert replies[1]["result"]["structuredContent"] == {"sum": 3}
        assert replies[2]["result"]["structuredContent"] == {"sum": 42}
        assert set(replies) == {1, 2}
        assert await asyncio.wait_for(peer.proc.wait(), 30) == 0
    finally:
        await peer.kill()
