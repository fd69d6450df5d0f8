"""`Server.add_tool_filter`: per-request predicates over `tools/list`, whose pages are never
served to a caller the filter judged otherwise, and which leave `tools/call` alone."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit import Context, Server

EXT = "com.example/hidden"
CAPS = "io.modelcontextprotocol/clientCapabilities"
DECLARING = {CAPS: {"extensions": {EXT: {}}}}


def hiding_server(page_size: int = 100) -> Server:
    """`secret` is listed only to requests declaring EXT; `plain` to everyone."""
    from mcpkit import ServerOptions

    server = Server("filters", options=ServerOptions(page_size=page_size))

    @server.tool()
    def plain() -> str:
        return "plain"

    @server.tool()
    def secret() -> str:
        return "secret"

    def admits(tool: Any, ctx: Context) -> bool:
        return tool.name != "secret" or ctx.client_supports(EXT)

    server.add_tool_filter(admits)
    return server


def names(reply: dict[str, Any]) -> list[str]:
    return [tool["name"] for tool in reply["result"]["tools"]]


async def test_a_filter_hides_a_tool_from_the_callers_it_refuses(wire_factory: Any) -> None:
    wire = wire_factory(hiding_server())
    assert names(await wire.request("tools/list")) == ["plain"]
    assert names(await wire.request("tools/list", **DECLARING)) == ["plain", "secret"]


async def test_a_cached_page_is_never_served_to_the_other_kind_of_caller(
        wire_factory: Any) -> None:
    wire = wire_factory(hiding_server())
    # Each kind asks twice, in alternation: a cache keyed by the offset alone would hand the
    # second caller the first one's page.
    for _ in range(2):
        assert names(await wire.request("tools/list", **DECLARING)) == ["plain", "secret"]
        assert names(await wire.request("tools/list")) == ["plain"]


async def test_pages_follow_the_filtered_list(wire_factory: Any) -> None:
    server = hiding_server(page_size=1)

    @server.tool()
    def tail() -> str:
        return "tail"

    wire = wire_factory(server)
    first = await wire.request("tools/list")
    assert names(first) == ["plain"]
    second = await wire.request("tools/list", {"cursor": first["result"]["nextCursor"]})
    assert names(second) == ["tail"] and "nextCursor" not in second["result"]


async def test_a_hidden_tool_can_still_be_called(wire_factory: Any) -> None:
    wire = wire_factory(hiding_server())
    reply = await wire.request("tools/call", {"name": "secret", "arguments": {}})
    assert reply["result"]["content"][0]["text"] == "secret"


async def test_adding_a_filter_drops_the_pages_cached_before_it(wire_factory: Any) -> None:
    server = Server("late")

    @server.tool()
    def shown() -> str:
        return "x"

    wire = wire_factory(server)
    assert names(await wire.request("tools/list")) == ["shown"]
    server.add_tool_filter(lambda tool, ctx: False)
    assert names(await wire.request("tools/list")) == []


def test_a_filter_must_be_callable() -> None:
    with pytest.raises(TypeError, match="callable"):
        Server("bad").add_tool_filter("not a function")  # type: ignore[arg-type]

