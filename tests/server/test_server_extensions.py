"""The extension API: declaring an extension, the methods it adds, and the per-request gate."""

from __future__ import annotations

from typing import Any

import pytest
from test_legacy import initialize

from mcpkit import Context, Server
from mcpkit.protocol.extensions import check_extension_id, is_reserved

EXT = "com.example/search"
CAPS = "io.modelcontextprotocol/clientCapabilities"


def declaring(*idents: str, **settings: Any) -> dict[str, Any]:
    """The `_meta` extra of a request declaring `idents` (with `settings` for each)."""
    return {CAPS: {"extensions": {i: dict(settings) for i in idents}}}


def searching_server() -> Server:
    server = Server("ext")
    server.extension(EXT, {"maxResults": 5})

    async def search(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        settings = ctx.client_extension(EXT)
        return {"resultType": "complete", "hits": [params.get("q")], "asked": settings}

    server.add_method("com.example/search", search, extension=EXT)
    return server


async def test_discover_offers_the_declared_extensions(wire_factory: Any) -> None:
    wire = wire_factory(searching_server())
    caps = (await wire.request("server/discover"))["result"]["capabilities"]
    assert caps["extensions"] == {EXT: {"maxResults": 5}}


async def test_a_server_without_extensions_offers_none(wire_factory: Any) -> None:
    wire = wire_factory(Server("bare"))
    caps = (await wire.request("server/discover"))["result"]["capabilities"]
    assert "extensions" not in caps


async def test_declaring_again_replaces_the_settings_and_the_cached_discover(
        wire_factory: Any) -> None:
    server = searching_server()
    wire = wire_factory(server)
    await wire.request("server/discover")
    server.extension(EXT, {"maxResults": 9})
    caps = (await wire.request("server/discover"))["result"]["capabilities"]
    assert caps["extensions"][EXT] == {"maxResults": 9}


async def test_an_added_method_answers_a_request_that_declares_its_extension(
        wire_factory: Any) -> None:
    wire = wire_factory(searching_server())
    reply = await wire.request("com.example/search", {"q": "mcp"}, **declaring(EXT, deep=True))
    assert reply["result"]["hits"] == ["mcp"]
    assert reply["result"]["asked"] == {"deep": True}
    assert reply["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "ext"


async def test_an_added_method_refuses_a_request_that_did_not_declare_it(
        wire_factory: Any) -> None:
    wire = wire_factory(searching_server())
    reply = await wire.request("com.example/search", {"q": "mcp"})
    assert reply["error"]["code"] == -32021
    assert reply["error"]["data"]["requiredCapabilities"] == {"extensions": {EXT: {}}}
    assert EXT in reply["error"]["message"]
    # Declaring some other extension is no better: the check is for this one.
    other = await wire.request("com.example/search", {}, **declaring("org.other/thing"))
    assert other["error"]["code"] == -32021


async def test_the_gate_reads_each_request_alone(wire_factory: Any) -> None:
    wire = wire_factory(searching_server())
    first = await wire.request("com.example/search", {"q": "a"}, **declaring(EXT))
    assert "result" in first
    second = await wire.request("com.example/search", {"q": "b"})
    assert second["error"]["code"] == -32021


async def test_a_handler_asks_whether_this_request_declared_an_extension(
        wire_factory: Any) -> None:
    server = Server("ext")
    server.extension(EXT)
    seen: list[bool] = []

    @server.tool()
    def probe(ctx: Context) -> str:
        seen.append(ctx.client_supports(EXT))
        return "ok"

    wire = wire_factory(server)
    await wire.request("tools/call", {"name": "probe", "arguments": {}}, **declaring(EXT))
    await wire.request("tools/call", {"name": "probe", "arguments": {}})
    bad = {CAPS: {"extensions": {EXT: "yes"}}}  # settings must be an object
    await wire.request("tools/call", {"name": "probe", "arguments": {}}, **bad)
    assert seen == [True, False, False]


async def test_extension_methods_are_not_served_to_legacy_sessions(wire_factory: Any) -> None:
    wire = wire_factory(searching_server())
    await initialize(wire)
    reply = await wire.request("com.example/search", {"q": "x"}, with_meta=False)
    assert reply["error"]["code"] == -32601


@pytest.mark.parametrize("ident", [
    "com.example/search", "io.modelcontextprotocol/tasks", "io.modelcontextprotocol/ui",
    "com.example.mcp/tool", "a1.b-2/x.y_z",
])
def test_valid_identifiers(ident: str) -> None:
    assert check_extension_id(ident) == ident


@pytest.mark.parametrize(("ident", "says"), [
    ("search", "prefix/name"),
    ("com.example/", "prefix/name"),
    ("1com.example/x", "prefix/name"),
    ("com.example-/x", "prefix/name"),
    ("com.example/-x", "prefix/name"),
    ("io.modelcontextprotocol/mine", "reserved"),
    ("dev.mcp/mine", "reserved"),
    ("org.modelcontextprotocol.api/x", "reserved"),
    ("com.MCP.tools/x", "reserved"),
])
def test_invalid_identifiers_are_refused_with_the_reason(ident: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        check_extension_id(ident)
    with pytest.raises(ValueError, match=says):
        Server("x").extension(ident)


def test_reserved_prefixes_follow_the_second_label() -> None:
    assert is_reserved("io.modelcontextprotocol/tasks")
    assert is_reserved("dev.mcp/x")
    assert not is_reserved("com.example.mcp/x")
    assert not is_reserved("mcp/x")


def test_registration_errors_say_what_to_do() -> None:
    server = Server("x")

    async def handler(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return {"resultType": "complete"}

    with pytest.raises(ValueError, match=r"declare the extension 'com.example/search' first"):
        server.add_method("com.example/search", handler, extension=EXT)
    server.extension(EXT)
    with pytest.raises(ValueError, match="already served"):
        server.add_method("tools/call", handler, extension=EXT)
    with pytest.raises(ValueError, match="non-empty string"):
        server.add_method("", handler, extension=EXT)
    with pytest.raises(TypeError, match="settings are a JSON object"):
        server.extension(EXT, ["not", "a", "mapping"])  # type: ignore[arg-type]
    server.add_method("com.example/search", handler, extension=EXT)
    with pytest.raises(ValueError, match="already served"):
        server.add_method("com.example/search", handler, extension=EXT)
