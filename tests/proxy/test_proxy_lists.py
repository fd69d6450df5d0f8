"""The proxy's lists follow the upstream's: an item the upstream adds or drops is added to or
dropped from the proxy's list and its listeners hear of it, in each era on both sides; a
resource the upstream announces updated reaches the proxy's subscribers; an announcement the
upstream makes without a change is passed on as well."""

from __future__ import annotations

import asyncio
from typing import Any

from helpers.proxy.proxied import Proxied

WAIT_S = 10.0


async def _next(sub: Any, method: str) -> dict[str, Any]:
    async with asyncio.timeout(WAIT_S):
        async for note in sub:
            if note["method"] == method:
                return note  # type: ignore[no-any-return]
    raise AssertionError(f"the stream ended before {method}")


async def test_a_tool_the_upstream_adds_is_listed_and_announced(proxied: Proxied,
                                                                client_era: str) -> None:
    async with proxied.client(client_era) as client, client.listen(tools=True) as sub:
        assert "tool_new" not in {t.name for t in await client.list_tools()}
        await client.call_tool("change", {"what": "tool-new"})
        await _next(sub, "notifications/tools/list_changed")
        listed = {t.name: t for t in await client.list_tools(fresh=True)}
        assert listed["tool_new"].description == "added: tool-new"
        assert (await client.call_tool("tool_new")).text == "tool-new"


async def test_a_tool_the_upstream_drops_is_dropped(proxied: Proxied, client_era: str) -> None:
    async with proxied.client(client_era) as client, client.listen(tools=True) as sub:
        proxied.upstream.remove_tool("whoami")
        await _next(sub, "notifications/tools/list_changed")
        assert "whoami" not in {t.name for t in await client.list_tools(fresh=True)}
        assert "whoami" not in proxied.proxy.tools


async def test_prompts_and_resources_the_upstream_adds_are_listed(proxied: Proxied,
                                                                  client_era: str) -> None:
    async with proxied.client(client_era) as client, client.listen(
            prompts=True, resources=True) as sub:
        await client.call_tool("change", {"what": "prompt-hello"})
        await _next(sub, "notifications/prompts/list_changed")
        assert "prompt_hello" in {p.name for p in await client.list_prompts(fresh=True)}
        await client.call_tool("change", {"what": "memo"})
        await _next(sub, "notifications/resources/list_changed")
        listed = {r.uri for r in await client.list_resources(fresh=True)}
        assert "notes://memo" in listed
        assert (await client.read_resource("notes://memo")).text == "memo"


async def test_an_update_the_upstream_announces_reaches_the_proxys_subscribers(
        proxied: Proxied, client_era: str) -> None:
    async with proxied.client(client_era) as client, client.listen(
            uris=["notes://board"]) as sub:
        await client.call_tool("change", {"what": "board"})
        note = await _next(sub, "notifications/resources/updated")
        assert note["params"]["uri"] == "notes://board"


async def test_an_announcement_without_a_change_is_passed_on(proxied: Proxied,
                                                            client_era: str) -> None:
    async with proxied.client(client_era) as client, client.listen(tools=True) as sub:
        before = {t.name for t in await client.list_tools()}  # a legacy session is listening
        proxied.upstream.notify_tools_changed()  # the list itself stays the same
        await _next(sub, "notifications/tools/list_changed")
        assert {t.name for t in await client.list_tools(fresh=True)} == before


async def test_the_proxy_says_when_it_follows_the_upstreams_changes(upstream_era: str) -> None:
    made = Proxied(upstream_era)
    following = made.proxy.catalogue.following
    assert not following.is_set()
    async with made.proxy:
        async with asyncio.timeout(WAIT_S):
            await following.wait()
        assert made.upstream_tap.seen("subscriptions/listen" if upstream_era == "modern"
                                      else "tools/list").is_set()
    assert not following.is_set()  # stopped: nothing is followed any more
    made.assert_clean()
