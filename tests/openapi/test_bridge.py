"""What the bridge makes of operations and of the API's answers: rules, names, resources and
templates, configured headers, and every way an answer can go wrong, bounded in time and size.

The APIs here are real ASGI applications (the FastAPI pet store, and small ones that answer
slowly, hugely or off their document) called in this process through `asgi_client`; the MCP
side is a real server and client in memory, every message checked against the official schema.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from helpers.client.schema_tap import SchemaTap
from openapi_docs import document, one_get, operation
from petstore_app import KEY, PHOTO, create_app
from petstore_calls import PETSTORE, text_of

from mcpkit import Server
from mcpkit.client import Client
from mcpkit.errors import RPCError
from mcpkit.openapi import OpenAPIError, OpenAPIOptions, Rule, add_openapi, asgi_client
from mcpkit.testing import connect

KEYED = {"X-Api-Key": KEY}


@pytest.fixture
async def checked() -> AsyncIterator[Callable[[Server], Any]]:
    """Connect to a server with every message checked against the official schema."""
    taps: list[SchemaTap] = []

    def open_client(server: Server) -> Client:
        tap = SchemaTap()
        taps.append(tap)
        return connect(server, json=True, recorder=tap)

    yield open_client
    for tap in taps:
        tap.assert_clean()


# -- rules and names ------------------------------------------------------------------------


def test_rules_pick_tools_resources_templates_and_exclusions_first_match_winning() -> None:
    app = create_app()
    options = OpenAPIOptions(headers=KEYED, rules=[
        Rule("exclude", tags=["tools"]),
        Rule("exclude", methods=["DELETE"]),
        Rule("resource", methods=["GET"]),
    ])
    server = Server("store")
    bridged = add_openapi(server, PETSTORE, client=asgi_client(app), options=options)
    # listPets takes only optional query parameters besides none in its path: a resource.
    assert sorted(bridged.tools) == ["createPet", "updatePet"]
    assert bridged.resources == ["api://pets", "api://pets/{petId}", "api://pets/{petId}/photo"]
    assert bridged.templates == ["api://pets/{petId}", "api://pets/{petId}/photo"]
    assert bridged.excluded == ["DELETE /pets/{petId} (deletePet)", "GET /echo (echo)"]
    assert bridged.summary().endswith("2 tools, 1 resources, 2 resource templates, 2 excluded")
    only_path = add_openapi(Server("s"), PETSTORE, client=asgi_client(app), options=OpenAPIOptions(
        rules=[Rule("tool", path=r"^/pets/\{petId\}$"), Rule("exclude")]))
    assert only_path.tools == ["getPet", "updatePet", "deletePet"]
    by_id = add_openapi(Server("s"), PETSTORE, client=asgi_client(app), options=OpenAPIOptions(
        rules=[Rule("exclude", operations=["getPet", "echo"])]))
    assert "getPet" not in by_id.tools and "listPets" in by_id.tools


def test_a_resource_rule_passes_over_an_operation_no_uri_can_name() -> None:
    doc = document({"/search": {"get": operation("search", parameters=[
        {"name": "q", "in": "query", "required": True, "schema": {"type": "string"}}])}})
    bridged = add_openapi(Server("s"), doc, base_url="http://127.0.0.1:1",
                          options=OpenAPIOptions(rules=[Rule("resource")]))
    assert bridged.tools == ["search"] and bridged.resources == []


def test_rules_and_options_refuse_what_they_cannot_mean_when_made() -> None:
    with pytest.raises(ValueError, match="expected one of tool, resource, exclude"):
        Rule("prompt")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="FETCH is no HTTP method"):
        Rule("tool", methods=["FETCH"])
    with pytest.raises(TypeError, match=r"write \['pets'\]"):
        Rule("tool", tags="pets")
    with pytest.raises(ValueError, match="not a regular expression"):
        Rule("tool", path="(")
    with pytest.raises(ValueError, match="timeout_s=0"):
        OpenAPIOptions(timeout_s=0)
    with pytest.raises(ValueError, match="names its scheme"):
        OpenAPIOptions(resource_prefix="pets")


def test_names_come_from_operation_ids_made_valid_unique_or_made_up() -> None:
    doc = document({
        "/a": {"get": operation("list pets/by-owner!"), "post": operation("list_pets_by-owner")},
        "/b/{id}": {"get": operation(None, parameters=[
            {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}])},
        "/c": {"get": operation("x" * 300), "put": operation("renamed")},
    })
    server = Server("s")
    bridged = add_openapi(server, doc, base_url="http://127.0.0.1:1",
                          options=OpenAPIOptions(names={"renamed": "put_c"}))
    assert bridged.tools == ["list_pets_by-owner", "list_pets_by-owner_2", "get_b_id",
                             "x" * 120, "put_c"]
    with pytest.raises(OpenAPIError, match="names operation ids the document does not have: "
                                           "nope"):
        add_openapi(Server("s"), doc, base_url="http://127.0.0.1:1",
                    options=OpenAPIOptions(names={"nope": "x"}))
    with pytest.raises(ValueError, match="'bad name' is not a tool name"):
        add_openapi(Server("s"), doc, base_url="http://127.0.0.1:1",
                    options=OpenAPIOptions(names={"renamed": "bad name"}))


def test_an_operation_named_as_a_tool_the_server_has_is_refused_naming_the_fix() -> None:
    server = Server("s")

    @server.tool()
    def getA() -> str:
        return "mine"

    with pytest.raises(OpenAPIError, match=r"a tool named 'getA' is already registered; name it "
                                           r"otherwise with OpenAPIOptions\(names=...\)"):
        add_openapi(server, one_get(), base_url="http://127.0.0.1:1")


def test_a_document_without_servers_needs_a_base_url_said_in_one_line() -> None:
    with pytest.raises(OpenAPIError, match=r"no base URL for GET /a \(getA\): it names no "
                                           r"servers; pass base_url="):
        Server.from_openapi(one_get())
    relative = dict(one_get(), servers=[{"url": "/v1"}])
    with pytest.raises(OpenAPIError, match="its server URL '/v1' is relative"):
        Server.from_openapi(relative)


async def test_server_variables_take_their_defaults(checked: Callable[[Server], Any]) -> None:
    seen: list[str] = []

    async def api(scope: dict[str, Any], receive: Any, send: Any) -> None:
        seen.append(f"{scope['path']}")
        await _answer(send, 200, b"{}", b"application/json")

    doc = dict(one_get(), servers=[{"url": "http://localhost/{version}/x",
                                    "variables": {"version": {"default": "v2"}}}])
    server = Server.from_openapi(doc, client=asgi_client(api, base_url=""))
    async with checked(server) as client:
        await client.call_tool("getA", {})
    assert seen == ["/v2/x/a"]


# -- resources -------------------------------------------------------------------------------


async def test_get_operations_read_as_resources_and_templates_within_their_checks(
        checked: Callable[[Server], Any]) -> None:
    app = create_app()
    server = Server.from_openapi(PETSTORE, client=asgi_client(app), options=OpenAPIOptions(
        headers=KEYED, rules=[Rule("resource", methods=["GET"])]))
    async with checked(server) as client:
        templates = {t["uriTemplate"]: t for t in [item.raw for item in await client.list_resource_templates()]}
        assert templates["api://pets/{petId}"]["mimeType"] == "application/json"
        assert templates["api://pets/{petId}/photo"]["mimeType"] == "image/png"
        pet = (await client.read_resource("api://pets/2")).raw
        (contents,) = pet["contents"]
        assert contents["mimeType"] == "application/json" and '"name":"Tom"' in contents["text"]
        photo = (await client.read_resource("api://pets/1/photo")).raw
        assert photo["contents"][0]["mimeType"] == "image/png"
        listed = (await client.read_resource("api://pets")).raw
        assert '"Rex"' in listed["contents"][0]["text"]
        before = app.state.requests
        with pytest.raises(RPCError) as missing:
            await client.read_resource("api://pets/99")
        assert missing.value.code == -32602 and "api://pets/99" in str(missing.value)
        with pytest.raises(RPCError, match=r"petId.*expected integer") as bad:
            await client.read_resource("api://pets/seven")
        assert bad.value.code == -32602
        with pytest.raises(RPCError, match="minimum"):
            await client.read_resource("api://pets/0")
        assert app.state.requests == before + 1  # only the 404 was asked of the API


async def test_a_resources_error_status_is_an_internal_error_naming_it(
        checked: Callable[[Server], Any]) -> None:
    server = Server.from_openapi(PETSTORE, client=asgi_client(create_app()),
                                 options=OpenAPIOptions(rules=[Rule("resource")]))
    async with checked(server) as client:
        with pytest.raises(RPCError) as refused:
            await client.read_resource("api://pets/1")
    assert refused.value.code == -32603
    assert "api://pets/1" in str(refused.value) and "answered 401 Unauthorized" in str(
        refused.value)


# -- answers -------------------------------------------------------------------------------


async def _answer(send: Callable[[dict[str, Any]], Awaitable[None]], status: int, body: bytes,
                  content_type: bytes) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", content_type)]})
    await send({"type": "http.response.body", "body": body})


def _app(answer: Callable[[Any], Awaitable[None]]) -> Any:
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        assert scope["type"] == "http"
        await answer(send)

    return app


async def _call(checked: Callable[[Server], Any], doc: dict[str, Any], app: Any,
                options: OpenAPIOptions | None = None, name: str = "getA",
                arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    server = Server.from_openapi(doc, client=asgi_client(app), options=options)
    async with checked(server) as client:
        return (await client.call_tool(name, arguments or {})).raw  # type: ignore[no-any-return]


async def test_json_off_the_documented_schema_is_a_tool_error_not_a_broken_promise(
        checked: Callable[[Server], Any]) -> None:
    doc = one_get({"type": "object", "properties": {"n": {"type": "integer"}},
                   "required": ["n"]})
    off = await _call(checked, doc, _app(lambda send: _answer(
        send, 200, b'{"n": "three"}', b"application/json")))
    assert off["isError"] is True
    assert "answered 200 with JSON that does not match the response schema of its document: "\
           "['n']: 'three' is not of type 'integer'" in text_of(off)
    not_json = await _call(checked, doc, _app(lambda send: _answer(
        send, 200, b"<html>", b"text/html")))
    assert "answered 200 without the JSON body its document promises (content type "\
           "text/html)" in text_of(not_json)
    broken = await _call(checked, doc, _app(lambda send: _answer(
        send, 200, b'{"n": ', b"application/json")))
    assert "with a body that is not the JSON its content type says" in text_of(broken)


async def test_an_error_body_is_quoted_bounded_and_stripped_of_control_characters(
        checked: Callable[[Server], Any]) -> None:
    body = b"\x1b[31mboom\x1b[0m\x07 " + b"x" * 5000
    result = await _call(checked, one_get(), _app(lambda send: _answer(
        send, 503, body, b"text/plain")), OpenAPIOptions(error_excerpt_chars=40))
    text = text_of(result)
    assert result["isError"] is True and "answered 503 Service Unavailable: " in text
    assert "\x1b" not in text and "\x07" not in text
    assert text.endswith("..." ) and len(text.split(": ", 2)[-1]) <= 43


async def test_an_answer_past_the_size_bound_is_refused_as_it_streams(
        checked: Callable[[Server], Any]) -> None:
    async def endless(send: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/octet-stream")]})
        for _ in range(64):
            await send({"type": "http.response.body", "body": b"z" * 1024, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    result = await _call(checked, one_get(), _app(endless),
                         OpenAPIOptions(max_response_bytes=10_000))
    assert result["isError"] is True
    assert "answered 200 with more than 10000 bytes (OpenAPIOptions.max_response_bytes)" in (
        text_of(result))


async def test_an_api_that_never_answers_is_a_tool_error_after_the_timeout(
        checked: Callable[[Server], Any]) -> None:
    held = asyncio.Event()

    async def never(send: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
        held.set()
        await asyncio.Event().wait()

    result = await _call(checked, one_get(), _app(never), OpenAPIOptions(timeout_s=0.2))
    assert held.is_set()
    assert result["isError"] is True
    assert "getA: GET http://localhost/a: no answer within 0.2 s (OpenAPIOptions.timeout_s)" in (
        text_of(result))


async def test_an_api_that_cannot_be_reached_is_a_tool_error_naming_the_failure(
        checked: Callable[[Server], Any]) -> None:
    server = Server.from_openapi(one_get(), base_url="http://127.0.0.1:1/v1")
    async with checked(server) as client:
        result = (await client.call_tool("getA", {})).raw
    assert result["isError"] is True
    assert text_of(result).startswith("getA: GET http://127.0.0.1:1/v1/a failed: ConnectError")


async def test_binary_and_text_answers_become_content_blocks(
        checked: Callable[[Server], Any]) -> None:
    doc = one_get()
    pdf = await _call(checked, doc, _app(lambda send: _answer(
        send, 200, b"%PDF-1.7 binary\x00", b"application/pdf")))
    (block,) = pdf["content"]
    assert block["type"] == "resource"
    assert block["resource"]["uri"] == "http://localhost/a"
    assert block["resource"]["mimeType"] == "application/pdf"
    text = await _call(checked, doc, _app(lambda send: _answer(
        send, 200, "caf\xe9".encode("latin-1"), b"text/plain; charset=latin-1")))
    assert text["content"] == [{"type": "text", "text": "caf\xe9"}]
    image = await _call(checked, doc, _app(lambda send: _answer(send, 200, PHOTO,
                                                                  b"image/png")))
    assert image["content"][0]["type"] == "image"


async def test_configured_headers_win_over_the_clients_and_reach_every_request(
        checked: Callable[[Server], Any]) -> None:
    app = create_app()
    client = asgi_client(app)
    client.headers["X-Api-Key"] = "a stale key"
    server = Server.from_openapi(PETSTORE, client=client,
                                 options=OpenAPIOptions(headers={"X-Api-Key": KEY}))
    async with checked(server) as mcp:
        echoed = (await mcp.call_tool("echo", {})).raw
    assert echoed["structuredContent"]["headers"]["x-api-key"] == KEY
