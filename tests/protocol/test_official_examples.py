"""The official example messages of 2026-07-28: each validates against its schema type, each
JSON-RPC message decodes through our codec and re-serialises unchanged, each request passes
the envelope checks, and our server answers each client request with the result that request's
method has (validated as that type), or, where the server lacks what the example names, with
the exact error code the spec gives for it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from helpers.sample_server import make_server
from helpers.wire import MODERN, RESULT_TYPES, SPEC_DIR, SPEC_MISSING, check, spec_available

from mcpkit import Server
from mcpkit.protocol.codec import (
    Notification,
    Request,
    Response,
    decode,
    error_message,
    notification_message,
    request_message,
    result_message,
)
from mcpkit.protocol.envelope import read_meta

EXAMPLES = SPEC_DIR / f"examples-{MODERN}"


def examples() -> list[tuple[str, Path]]:
    if not EXAMPLES.is_dir():
        return []
    return [(p.parent.name, p) for p in sorted(EXAMPLES.glob("*/*.json"))]


CASES = examples()
# Only a missing schema folder skips (and under CI it stops the run, see wire.py); a folder with
# the schemas but without the examples fails test_the_official_examples_are_present.
pytestmark = pytest.mark.skipif(not spec_available(), reason=SPEC_MISSING)


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def rebuild(message: Request | Notification | Response) -> dict[str, Any]:
    if isinstance(message, Request):
        return request_message(message.id, message.method, message.params)
    if isinstance(message, Notification):
        return notification_message(message.method, message.params)
    if message.error is not None:
        return error_message(message.id, message.error)
    assert message.id is not None and message.result is not None
    return result_message(message.id, message.result)


def test_the_official_examples_are_present() -> None:
    assert len(CASES) >= 80


@pytest.mark.parametrize(("type_name", "path"), CASES, ids=lambda v: getattr(v, "name", v))
def test_example_validates_against_its_schema_type(type_name: str, path: Path) -> None:
    check(MODERN, type_name, load(path))


MESSAGES = [(t, p) for t, p in CASES if "jsonrpc" in load(p)]


@pytest.mark.parametrize(("type_name", "path"), MESSAGES, ids=lambda v: getattr(v, "name", v))
def test_message_example_round_trips_unchanged_through_the_codec(type_name: str, path: Path) -> None:
    original = load(path)
    raw = path.read_bytes()
    assert rebuild(decode(raw)) == original
    assert orjson.loads(orjson.dumps(rebuild(decode(raw)))) == original


REQUESTS = [(t, p) for t, p in MESSAGES if "method" in load(p) and "id" in load(p)]


@pytest.mark.parametrize(("type_name", "path"), REQUESTS, ids=lambda v: getattr(v, "name", v))
def test_request_example_passes_the_envelope(type_name: str, path: Path) -> None:
    message = decode(path.read_bytes())
    assert isinstance(message, Request)
    meta = read_meta(message.method, message.params)
    assert meta.protocol_version == MODERN


def examples_server() -> Server:
    """The sample server plus the tool, prompt, resource and completions the examples name, so
    that every example request has a result to get."""
    server = make_server()

    @server.tool()
    def get_weather(location: str) -> str:
        """The weather at a place."""
        return f"Sunny in {location}"

    @server.prompt()
    def code_review(code: str) -> str:
        """Review some code."""
        return f"Please review:\n{code}"

    @server.resource("file:///project/src/main.rs", mime_type="text/x-rust")
    def main_rs() -> str:
        """The project's entry point."""
        return "fn main() {}"

    @server.completer()
    def complete(ref: dict[str, Any], argument: dict[str, Any], context: Any) -> list[str]:
        languages = ["python", "pytorch", "rust"]
        return [v for v in languages if v.startswith(argument["value"])]

    return server


# What the sample server alone answers to the examples naming something it does not have.
SAMPLE_SERVER_ERRORS = {
    "call-tool-request.json": -32602,  # unknown tool (ERR-2)
    "get-prompt-request.json": -32602,  # unknown prompt (PRM-6)
    "read-resource-request.json": -32602,  # unknown resource (RES-6), never the retired -32002
    "completion-request.json": -32601,  # no completions offered (CMPL-4)
}
LISTEN = "subscriptions/listen"


def test_every_example_request_has_an_expected_answer() -> None:
    """A new example with a method of its own is not passed over by the tests below."""
    assert REQUESTS
    for _, path in REQUESTS:
        method = load(path)["method"]
        assert method == LISTEN or method in RESULT_TYPES, f"{path.name}: no result type for {method}"
    assert set(SAMPLE_SERVER_ERRORS) <= {p.name for _, p in REQUESTS}


async def answer(server: Server, message: dict[str, Any], wire_factory: Any) -> dict[str, Any]:
    """Our server's first message for `message` (schema-checked as it is sent)."""
    wire = wire_factory(server)
    wire.send(message)
    reply: dict[str, Any] = await wire.next()
    return reply


def assert_listen_acknowledged(message: dict[str, Any], reply: dict[str, Any]) -> None:
    """subscriptions/listen answers first with its acknowledgement, its result only at the end."""
    assert reply.get("method") == "notifications/subscriptions/acknowledged", reply
    params = reply["params"]
    assert params["_meta"]["io.modelcontextprotocol/subscriptionId"] == message["id"]
    assert params["notifications"] == message["params"]["notifications"]


def assert_result_of(message: dict[str, Any], reply: dict[str, Any]) -> None:
    """`reply` is the complete result of `message`'s method, valid as that type."""
    assert reply["id"] == message["id"]
    assert "error" not in reply, reply["error"]
    result = reply["result"]
    assert result["resultType"] == "complete"
    result_type = RESULT_TYPES[message["method"]]
    check(MODERN, result_type, result)
    check(MODERN, f"{result_type}Response", reply)


@pytest.mark.parametrize(("type_name", "path"), REQUESTS, ids=lambda v: getattr(v, "name", v))
async def test_our_server_answers_every_example_request_with_its_result(
    type_name: str, path: Path, wire_factory: Any
) -> None:
    message = load(path)
    reply = await answer(examples_server(), message, wire_factory)
    if message["method"] == LISTEN:
        assert_listen_acknowledged(message, reply)
        return
    assert_result_of(message, reply)
    result = reply["result"]
    if message["method"] == "tools/call":
        assert result["content"] == [{"type": "text", "text": "Sunny in New York"}]
        assert result.get("isError") is not True
    elif message["method"] == "completion/complete":
        assert result["completion"]["values"] == ["python", "pytorch"]


@pytest.mark.parametrize(("type_name", "path"), REQUESTS, ids=lambda v: getattr(v, "name", v))
async def test_the_sample_server_answers_each_example_with_a_result_or_its_exact_error(
    type_name: str, path: Path, wire_factory: Any
) -> None:
    message = load(path)
    reply = await answer(make_server(), message, wire_factory)
    code = SAMPLE_SERVER_ERRORS.get(path.name)
    if code is not None:
        assert reply["id"] == message["id"] and "result" not in reply
        assert reply["error"]["code"] == code, reply["error"]
        check(MODERN, "JSONRPCErrorResponse", reply)
    elif message["method"] == LISTEN:
        assert_listen_acknowledged(message, reply)
    else:
        assert_result_of(message, reply)
