"""`listen()` and the cache together, against an mcpkit Server in memory."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from helpers.client.client_server import make_server

from mcpkit import Server
from mcpkit.client import Client, ClientOptions

MakeClient = Callable[..., Client]


async def next_note(sub: Any) -> dict[str, Any]:
    return await asyncio.wait_for(sub.__anext__(), 5)  # type: ignore[no-any-return]


async def test_a_fresh_read_is_served_from_the_cache_and_fresh_bypasses_it(
    memory_client: MakeClient,
) -> None:
    client = memory_client(make_server())
    first = await client.read_resource("mem://counter")
    again = await client.read_resource("mem://counter")
    assert first["contents"][0]["text"] == again["contents"][0]["text"] == "read 1"
    assert (await client.read_resource("mem://counter", fresh=True))["contents"][0]["text"] == \
        "read 2"
    await client.read_resource("mem://uncached")
    await client.read_resource("mem://uncached")
    reads = [r["params"]["uri"] for r in client.tap.requests("resources/read")]  # type: ignore[attr-defined]
    assert reads == ["mem://counter", "mem://counter", "mem://uncached", "mem://uncached"]


async def test_discover_is_cached_from_the_probe(memory_client: MakeClient) -> None:
    client = memory_client(make_server())
    await client.connect()
    await client.discover()
    await client.discover()
    assert len(client.tap.requests("server/discover")) == 1  # type: ignore[attr-defined]


async def test_a_list_changed_notification_drops_the_cached_list(
    memory_client: MakeClient,
) -> None:
    server = make_server()
    client = memory_client(server)
    before = {t["name"] for t in await client.list_tools()}
    async with client.listen(tools=True) as sub:
        assert sub.acknowledged == {"toolsListChanged": True}
        server.add_tool(lambda: "new", name="brand_new", description="Added while listening.")
        note = await next_note(sub)
    assert note["method"] == "notifications/tools/list_changed"
    assert note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == \
        client.tap.requests("subscriptions/listen")[0]["id"]  # type: ignore[attr-defined]
    after = {t["name"] for t in await client.list_tools()}
    assert after == before | {"brand_new"}
    assert len(client.tap.requests("tools/list")) == 2  # type: ignore[attr-defined]


async def test_a_resource_update_drops_the_cached_read(memory_client: MakeClient) -> None:
    server = make_server()
    client = memory_client(server)
    assert (await client.read_resource("mem://counter"))["contents"][0]["text"] == "read 1"
    async with client.listen(uris=["mem://counter"]) as sub:
        assert sub.acknowledged == {"resourceSubscriptions": ["mem://counter"]}
        server.notify_resource_updated("mem://counter")
        note = await next_note(sub)
    assert note["params"]["uri"] == "mem://counter"
    assert (await client.read_resource("mem://counter"))["contents"][0]["text"] == "read 2"


async def test_closing_a_subscription_cancels_the_listen_request(
    memory_client: MakeClient,
) -> None:
    client = memory_client(make_server())
    sub = await client.listen(tools=True, prompts=True).start()
    await sub.close()
    listen_id = client.tap.requests("subscriptions/listen")[0]["id"]  # type: ignore[attr-defined]
    cancels = [m for m in client.tap.sent  # type: ignore[attr-defined]
               if m.get("method") == "notifications/cancelled"]
    assert [c["params"]["requestId"] for c in cancels] == [listen_id]
    assert [n async for n in sub] == [], "a closed subscription yields nothing more"


async def test_only_what_the_server_can_send_is_acknowledged(memory_client: MakeClient) -> None:
    server = Server("bare")

    @server.tool()
    def one() -> str:
        """One tool."""
        return "1"

    client = memory_client(server)
    async with client.listen(tools=True, prompts=True, uris=["x://y"]) as sub:
        assert sub.requested == {"toolsListChanged": True, "promptsListChanged": True,
                                 "resourceSubscriptions": ["x://y"]}
        assert sub.acknowledged == {"toolsListChanged": True}


async def test_the_server_closing_ends_the_iteration(memory_client: MakeClient) -> None:
    server = make_server()
    client = memory_client(server, options=ClientOptions(era="modern"))
    async with client.listen(tools=True) as sub:
        server.broker.close()
        assert [n async for n in sub] == []



async def test_an_expired_cursor_drops_the_cached_pages_and_lists_again_from_the_top() -> None:
    from mcpkit.client.cache import ResultCache
    from mcpkit.client.paging import list_all
    from mcpkit.errors import InvalidParamsError

    def page(names: list[str], cursor: str | None) -> dict[str, Any]:
        out: dict[str, Any] = {"resultType": "complete", "prompts": [{"name": n} for n in names],
                               "ttlMs": 60_000, "cacheScope": "public"}
        if cursor is not None:
            out["nextCursor"] = cursor
        return out

    cache = ResultCache()
    cache.put("prompts/list", None, page(["a", "b"], "old-2"))  # still fresh, but stale
    asked: list[str | None] = []

    async def fetch(cursor: str | None) -> dict[str, Any]:
        asked.append(cursor)
        if cursor == "old-2":
            raise InvalidParamsError("prompts/list: invalid or expired cursor")
        return page(["a", "b"], "new-2") if cursor is None else page(["c"], None)

    items, _ = await list_all(fetch, cache, "prompts/list", "prompts")
    assert [i["name"] for i in items] == ["a", "b", "c"]
    assert asked == ["old-2", None, "new-2"]
    assert cache.get("prompts/list")["nextCursor"] == "new-2"  # type: ignore[index]


async def test_an_empty_string_cursor_is_followed_and_a_repeating_one_stops() -> None:
    from mcpkit.client.paging import list_all
    from mcpkit.errors import ProtocolViolation

    pages = {None: ("", ["a"]), "": ("z", ["b"]), "z": (None, ["c"])}

    async def fetch(cursor: str | None) -> dict[str, Any]:
        nxt, names = pages[cursor]
        out: dict[str, Any] = {"tools": [{"name": n, "inputSchema": {"type": "object"}}
                                         for n in names]}
        if nxt is not None:
            out["nextCursor"] = nxt
        return out

    items, _ = await list_all(fetch, None, "tools/list", "tools")
    assert [i["name"] for i in items] == ["a", "b", "c"]
    pages["z"] = ("", ["c"])
    with pytest.raises(ProtocolViolation, match="repeats"):
        await list_all(fetch, None, "tools/list", "tools")


async def test_an_unknown_tool_error_drops_the_cached_tool_list(memory_client: MakeClient) -> None:
    from mcpkit.errors import InvalidParamsError

    server = make_server()
    client = memory_client(server)
    await client.list_tools()
    server.remove_tool("fail")
    with pytest.raises(InvalidParamsError):
        await client.call_tool("fail", {"reason": "gone"})
    assert "fail" not in {t["name"] for t in await client.list_tools()}
    assert len(client.tap.requests("tools/list")) == 2  # type: ignore[attr-defined]
