"""`Server.from_fastapi`: a FastAPI application's own routes as tools, called in this process
over ASGI. No socket is opened: connecting one is made to fail for the whole test."""

from __future__ import annotations

import base64
import socket
from typing import Any

import pytest
from helpers.client.schema_tap import SchemaTap
from petstore_app import KEY, PHOTO, create_app
from petstore_calls import check_definitions, text_of

from mcpkit import Server
from mcpkit.openapi import OpenAPIOptions
from mcpkit.testing import connect


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    tried: list[Any] = []

    def refuse(self: socket.socket, address: Any) -> None:
        tried.append(address)
        raise OSError("this test opens no network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    return tried


async def test_a_fastapi_apps_routes_are_tools_called_without_a_network_hop(
        no_network: list[Any]) -> None:
    app = create_app()
    server = Server.from_fastapi(app, options=OpenAPIOptions(headers={"X-Api-Key": KEY}))
    assert (server.name, server.version) == ("Pet Store", "1.2.0")
    tap = SchemaTap()
    async with connect(server, json=True, recorder=tap) as client:
        tools = [item.raw for item in await client.list_tools()]
        assert client.rejected_tools == []
        check_definitions(tools)
        by_name = {t["name"]: t for t in tools}
        # The configured header is configuration's, though FastAPI lists it on every route.
        assert "x-api-key" not in by_name["getPet"]["inputSchema"]["properties"]
        got = (await client.call_tool("getPet", {"pet_id": 2})).raw
        assert got["structuredContent"]["name"] == "Tom"
        missing = (await client.call_tool("getPet", {"pet_id": 99})).raw
        assert "/pets/99 answered 404 Not Found" in text_of(missing)
        listed = (await client.call_tool("listPets", {"status": "sold", "x-request-id": "r9"})).raw
        assert listed["structuredContent"]["request_id"] == "r9"
        assert [p["id"] for p in listed["structuredContent"]["items"]] == [2]
        made = (await client.call_tool("createPet", {"body": {
            "name": "Kit", "owner": {"name": "Bo", "email": "bo@example.com"}}})).raw
        assert made["structuredContent"]["id"] == 3 and app.state.pets[3].name == "Kit"
        refused = (await client.call_tool("createPet", {"body": {
            "name": "Kit", "owner": {"name": "Bo", "email": "nope"}}})).raw
        assert "answered 422 Unprocessable" in text_of(refused)
        photo = (await client.call_tool("getPetPhoto", {"pet_id": 1})).raw
        assert base64.b64decode(photo["content"][0]["data"]) == PHOTO
        before = app.state.requests
        invalid = (await client.call_tool("listPets", {"limit": 0})).raw
        assert invalid["isError"] is True and app.state.requests == before
    tap.assert_clean()
    assert no_network == []


async def test_an_exception_the_app_does_not_handle_is_its_500_as_a_tool_error() -> None:
    app = create_app()

    @app.get("/boom", operation_id="boom")
    async def boom() -> None:
        raise RuntimeError("a bug in the app")

    server = Server.from_fastapi(app)
    async with connect(server) as client:
        result = (await client.call_tool("boom", {})).raw
    assert result["isError"] is True
    assert "boom: GET http://localhost/boom answered 500 Internal Server Error" in text_of(result)


def test_from_fastapi_refuses_what_is_not_an_application_naming_the_alternative() -> None:
    with pytest.raises(TypeError, match="takes a FastAPI application"):
        Server.from_fastapi(object())
