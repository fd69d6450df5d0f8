"""The pet store's every operation called through a real MCP client, and what each must answer;
shared by the tests that serve the bridge over HTTP, over stdio and in memory.

The store (`petstore_app.py`) runs in the test's own process, under uvicorn or over ASGI, so
its request count is there to read: a call refused by the tool's input schema must leave it
unchanged. Every tool definition is held to the official MCP schema of the revision and to
mcpkit's own schema compiler, and the client must have rejected none.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import orjson
from helpers.wire import MODERN, check, spec_available
from petstore_app import PHOTO

from mcpkit.client import Client
from mcpkit.schema.raw import prepare_raw_schema

HERE = Path(__file__).resolve().parent
PETSTORE = HERE / "petstore.yaml"
PETSTORE_30 = HERE / "petstore30.yaml"
TOOLS = {"listPets", "createPet", "getPet", "updatePet", "deletePet", "getPetPhoto", "echo"}


def text_of(result: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in result["content"])


def check_definitions(tools: list[dict[str, Any]]) -> None:
    """Each tool definition valid against the official schema and compiled by mcpkit."""
    assert spec_available(), "the official MCP schema is needed to check the tool definitions"
    for tool in tools:
        check(MODERN, "Tool", tool)
        prepare_raw_schema(tool["inputSchema"], f"{tool['name']}: input schema")
        assert tool["inputSchema"]["type"] == "object"
        if "outputSchema" in tool:
            prepare_raw_schema(tool["outputSchema"], f"{tool['name']}: output schema")
            assert tool["outputSchema"]["type"] == "object"


async def exercise(client: Client, app: Any) -> None:
    """Every operation of the store through `client`, and its answer checked."""
    tools = [item.raw for item in await client.list_tools()]
    assert client.rejected_tools == []
    assert {t["name"] for t in tools} == TOOLS
    check_definitions(tools)
    by_name = {t["name"]: t for t in tools}
    assert by_name["getPet"]["annotations"]["readOnlyHint"] is True
    assert by_name["deletePet"]["annotations"]["destructiveHint"] is True
    assert by_name["listPets"]["title"] == "List the pets"
    # A credential parameter the document's security scheme names is never an argument.
    assert "X-Api-Key" not in orjson.dumps(by_name["listPets"]["inputSchema"]).decode()
    # The id is read-only: the body of createPet has no id to send.
    create_schema = by_name["createPet"]["inputSchema"]
    assert "id" not in create_schema["$defs"]["Pet"]["properties"]

    listed = (await client.call_tool("listPets", {"status": "available", "tag": ["dog", "cat"],
                                                 "X-Request-Id": "req-1"})).raw
    assert not listed.get("isError"), listed
    assert listed["structuredContent"]["request_id"] == "req-1"
    assert [p["name"] for p in listed["structuredContent"]["items"]] == ["Rex"]

    got = (await client.call_tool("getPet", {"petId": 2})).raw
    assert got["structuredContent"]["owner"] == {"name": "Ada", "email": "ada@example.com"}

    missing = (await client.call_tool("getPet", {"petId": 99})).raw
    assert missing["isError"] is True
    assert "GET " in text_of(missing) and "/pets/99 answered 404 Not Found" in text_of(missing)
    assert "no pet 99" in text_of(missing)

    created = (await client.call_tool("createPet", {"body": {
        "name": "Kit", "status": "pending", "tags": ["cat", "young"],
        "owner": {"name": "Bo", "email": "bo@example.com"}}})).raw
    assert not created.get("isError"), created
    kit = created["structuredContent"]
    assert kit["owner"]["email"] == "bo@example.com" and kit["status"] == "pending"
    assert app.state.pets[kit["id"]].tags == ["cat", "young"]

    refused = (await client.call_tool("createPet", {"body": {
        "name": "Odd", "owner": {"name": "Bo", "email": "no-at-sign"}}})).raw
    assert refused["isError"] is True
    assert "answered 422 Unprocessable" in text_of(refused)
    assert "an email address has an @" in text_of(refused)

    updated = (await client.call_tool("updatePet", {"petId": kit["id"], "body": {
        "name": "Kitty", "status": "sold"}})).raw
    assert updated["structuredContent"]["name"] == "Kitty"

    deleted = (await client.call_tool("deletePet", {"petId": kit["id"]})).raw
    assert not deleted.get("isError") and text_of(deleted) == "204 No Content"
    gone = (await client.call_tool("getPet", {"petId": kit["id"]})).raw
    assert "answered 404" in text_of(gone)

    photo = (await client.call_tool("getPetPhoto", {"petId": 1})).raw
    (block,) = photo["content"]
    assert block["type"] == "image" and block["mimeType"] == "image/png"
    assert base64.b64decode(block["data"]) == PHOTO

    echoed = (await client.call_tool("echo", {})).raw
    headers = echoed["structuredContent"]["headers"]
    assert headers["x-api-key"] == "test-key-7"
    # Nothing of the MCP client's own requests reaches the API.
    assert not {"authorization", "mcp-protocol-version", "mcp-session-id", "cookie"} & set(headers)

    before = app.state.requests
    for name, arguments in [
        ("getPet", {"petId": "seven"}),          # not an integer
        ("getPet", {"petId": 0}),                # below the minimum of 1
        ("listPets", {"status": "lost"}),        # not in the enum
        ("listPets", {"limit": 500}),            # above the maximum
        ("createPet", {"body": {"name": ""}}),   # shorter than minLength
        ("createPet", {"body": {"name": "A", "owner": {"name": "B"}}}),  # owner lacks email
        ("getPet", {"petId": 1, "extra": True}),  # an argument the operation does not take
        ("listPets", {"X-Request-Id": "a\r\nInjected: yes"}),  # no header carries a line break
    ]:
        result = (await client.call_tool(name, arguments)).raw
        assert result["isError"] is True, (name, arguments, result)
        assert f"Invalid arguments for tool {name!r}" in text_of(result), result
    assert app.state.requests == before, "a refused call reached the API"
