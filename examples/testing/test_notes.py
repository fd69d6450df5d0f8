"""Tests of the notes server (notes.py beside this file), as docs/testing-servers.md shows them.

    pytest examples/testing
"""

import json
import os
from pathlib import Path
from typing import Any

import pytest
from notes import make_server

from mcpkit import ClientOptions, InputRequest
from mcpkit.testing import ServerWire, WireRecorder, connect

pytestmark = pytest.mark.asyncio


async def test_a_note_is_kept_and_listed() -> None:
    async with connect(make_server()) as client:
        result = await client.call_tool("add_note", {"title": "milk", "text": "2 litres"})
        assert result.text == "kept 'milk'"
        index = await client.read_resource("notes://index")
        assert index.text == "milk"


def answer_with(text: str | None) -> Any:
    """An elicitation handler that answers the form with `text`, or declines."""

    def elicit(request: InputRequest) -> dict[str, Any]:
        assert "text" in request.schema["properties"]
        if text is None:
            return {"action": "decline"}
        return {"action": "accept", "content": {"text": text}}

    return elicit


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_the_text_is_asked_for_when_missing(era: str) -> None:
    options = ClientOptions(era=era)  # type: ignore[arg-type]
    async with connect(make_server(), elicit=answer_with("eggs"), options=options) as client:
        result = await client.call_tool("add_note", {"title": "shopping"})
        assert result.text == "kept 'shopping'"
        assert client.era == era


async def test_a_declined_question_keeps_nothing() -> None:
    async with connect(make_server(), elicit=answer_with(None)) as client:
        result = await client.call_tool("add_note", {"title": "secret"})
        assert result.is_error
        assert "got no text" in result.text
        assert (await client.read_resource("notes://index")).text == ""


async def test_keeping_a_note_is_logged() -> None:
    logs: list[tuple[str, Any, str | None]] = []
    on_log = lambda level, data, logger: logs.append((level, data, logger))  # noqa: E731
    async with connect(make_server(), on_log=on_log, json=True) as client:
        await client.call_tool("add_note", {"title": "milk", "text": "2 litres"})
    assert logs == [("info", "kept 'milk'", "notes")]


SCHEMAS = Path(os.environ.get("MCPKIT_SPEC_DIR", "schemas"))


def validator(revision: str) -> Any:
    """A validator of any JSON-RPC message of `revision`, from the official schema file."""
    from jsonschema import Draft202012Validator

    path = SCHEMAS / f"schema-{revision}.json"
    if not path.is_file():
        pytest.skip(f"put the official {path.name} in {SCHEMAS} (or set MCPKIT_SPEC_DIR)")
    schema = json.loads(path.read_text(encoding="utf-8"))
    return Draft202012Validator({"$schema": schema["$schema"], "$defs": schema["$defs"],
                                 "$ref": "#/$defs/JSONRPCMessage"})


@pytest.mark.parametrize(("era", "revision"), [("modern", "2026-07-28"),
                                               ("legacy", "2025-11-25")])
async def test_every_message_fits_the_official_schema(era: str, revision: str) -> None:
    check = validator(revision)
    recorder = WireRecorder()
    options = ClientOptions(era=era)  # type: ignore[arg-type]
    async with connect(make_server(), json=True, recorder=recorder,
                       elicit=answer_with("eggs"), options=options) as client:
        await client.call_tool("add_note", {"title": "shopping"})
        await client.read_resource("notes://index")
    assert recorder.received, "the server sent nothing"
    for direction, message in recorder.messages:
        problems = [error.message for error in check.iter_errors(message)]
        assert not problems, f"{direction} {message}: {problems}"


async def test_the_server_answers_bytes_that_are_not_json_with_a_parse_error() -> None:
    wire = ServerWire(make_server())
    try:
        wire.send_raw(b"{not json\n")
        reply = await wire.next()
        assert reply["error"]["code"] == -32700
        reply = await wire.request("tools/call", {"name": "add_note",
                                                  "arguments": {"title": "a", "text": "b"}})
        assert reply["result"]["content"][0]["text"] == "kept 'a'"
    finally:
        wire.close()


async def test_arguments_off_the_schema_are_a_tool_error_and_an_unknown_tool_is_32602() -> None:
    wire = ServerWire(make_server())
    try:
        reply = await wire.request("tools/call", {"name": "add_note", "arguments": {"title": 7}})
        assert reply["result"]["isError"] is True
        assert "arguments.title: expected string" in reply["result"]["content"][0]["text"]
        reply = await wire.request("tools/call", {"name": "no_such_tool", "arguments": {}})
        assert reply["error"]["code"] == -32602
    finally:
        wire.close()
