"""The pet store, a real FastAPI application under uvicorn on 127.0.0.1, bridged by `mcpkit run
--openapi` in a process of its own and called over Streamable HTTP and over stdio; and the same
store described in OpenAPI 3.0, bridged in this process. Every operation is called, errors
mapped, and every message both sides send checked against the official schema."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator

import pytest
from helpers.client.schema_tap import SchemaTap
from helpers.transports.http_peer import ServerProcess, checked_transport
from helpers.transports.listening import listening
from petstore_app import KEY, create_app
from petstore_calls import PETSTORE, PETSTORE_30, exercise, text_of

from mcpkit import Server
from mcpkit.client import Client
from mcpkit.openapi import OpenAPIOptions
from mcpkit.testing import connect
from mcpkit.transports.stdio.client import StdioServer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Store:
    def __init__(self, app: object, url: str) -> None:
        self.app = app
        self.url = url


@pytest.fixture
async def store() -> AsyncIterator[Store]:
    app = create_app()
    async with listening(app) as served:
        yield Store(app, f"http://127.0.0.1:{served.port}")


def _options(store: Store) -> list[str]:
    # The key is read from the environment, as a deployment would keep it off `ps`.
    return [f"--openapi={PETSTORE}", "--base-url", store.url,
            "--api-header", "X-Api-Key: $PETSTORE_KEY"]


async def test_every_operation_is_callable_through_mcpkit_run_openapi_over_http(
        store: Store) -> None:
    server = ServerProcess.start(*_options(store), env={"PETSTORE_KEY": KEY})
    try:
        assert "petstore.yaml: 7 tools" in server.output()
        # The MCP client's own credentials for the MCP server never travel on to the API.
        transport = checked_transport(server.url, check_server=True,
                                      headers={"Authorization": "Bearer for-the-mcp-server"})
        async with Client(transport) as client:
            await exercise(client, store.app)
        assert not transport.server_checks.problems, transport.server_checks.problems
        assert transport.server_checks.checked > 0
    finally:
        server.stop()


async def test_every_operation_is_callable_through_mcpkit_run_openapi_over_stdio(
        store: Store) -> None:
    tap = SchemaTap()
    connector = StdioServer([sys.executable, "-m", "mcpkit", "run", *_options(store)],
                            cwd=ROOT, env={**os.environ, "PETSTORE_KEY": KEY},
                            stderr="capture", tap=tap)
    async with Client(connector) as client:
        await exercise(client, store.app)
    tap.assert_clean()


async def test_an_openapi_30_document_is_translated_and_every_operation_is_callable(
        store: Store) -> None:
    server = Server.from_openapi(PETSTORE_30, base_url=store.url,
                                 options=OpenAPIOptions(headers={"X-Api-Key": KEY}))
    tap = SchemaTap()
    async with connect(server, json=True, recorder=tap) as client:
        await exercise(client, store.app)
        limit = client.tools["listPets"].raw["inputSchema"]["properties"]["limit"]
        # 3.0's boolean exclusiveMinimum beside minimum is 2020-12's number.
        assert limit == {"type": "integer", "exclusiveMinimum": 0, "maximum": 100,
                         "default": 20}
        # The response's object schema is the output schema itself, its $ref followed.
        page = client.tools["listPets"].raw["outputSchema"]
        assert page["properties"]["request_id"] == {"type": ["string", "null"]}
        assert page["properties"]["items"]["items"] == {"$ref": "#/$defs/Pet"}
        owner = client.tools["getPet"].raw["outputSchema"]["properties"]["owner"]
        assert owner == {"anyOf": [{"allOf": [{"$ref": "#/$defs/Owner"}]}, {"type": "null"}]}
        zero = (await client.call_tool("listPets", {"limit": 0})).raw
        assert zero["isError"] is True and "limit" in text_of(zero)
    tap.assert_clean()


async def test_without_the_configured_key_the_apis_401_is_a_tool_error_naming_it(
        store: Store) -> None:
    server = Server.from_openapi(PETSTORE, base_url=store.url)
    async with connect(server) as client:
        result = (await client.call_tool("getPet", {"petId": 1})).raw
    assert result["isError"] is True
    assert "answered 401 Unauthorized: {\"detail\":\"a valid X-Api-Key header is needed\"}" in (
        text_of(result))
