"""A legacy (2025-11-25) server's own requests and notifications, against a real subprocess."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from mcpkit.client import Client, ClientOptions, InputRequest

MakeRaw = Callable[..., Client]


async def test_a_legacy_servers_requests_are_answered_by_the_modern_handlers(
    raw_client: MakeRaw,
) -> None:
    asked: list[InputRequest] = []

    def elicit(request: InputRequest) -> dict[str, Any]:
        asked.append(request)
        return {"action": "accept", "content": {"name": "Ada"}}

    async def sample(request: InputRequest) -> dict[str, Any]:
        asked.append(request)
        return {"role": "assistant", "content": {"type": "text", "text": "Paris"},
                "model": "m"}

    roots = [{"uri": "file:///work", "name": "work"}]
    client = raw_client("legacy-32601", elicit=elicit, sample=sample, roots=roots)
    result = await client.call_tool("ask")
    answers = result["structuredContent"]
    assert answers["elicit"] == {"action": "accept", "content": {"name": "Ada"}}
    assert answers["sample"]["content"]["text"] == "Paris"
    assert answers["roots"] == {"roots": roots}
    assert answers["ping"] == {}
    assert [r.method for r in asked] == ["elicitation/create", "sampling/createMessage"]
    assert asked[0].key is None and asked[0].server == {"name": "raw-legacy", "version": "1"}
    init = client.tap.requests("initialize")[0]["params"]  # type: ignore[attr-defined]
    assert init["capabilities"] == {"elicitation": {"form": {}}, "sampling": {}, "roots": {}}
    assert init["clientInfo"]["name"] == "mcpkit"
    assert "resultType" not in result, "legacy results keep their shape"


async def test_requests_the_client_has_no_handler_for_are_refused_on_the_wire(
    raw_client: MakeRaw,
) -> None:
    client = raw_client("legacy-32601")
    answers = (await client.call_tool("ask"))["structuredContent"]
    for key in ("elicit", "sample", "roots"):
        assert answers[key]["code"] == -32601
    assert answers["ping"] == {}


async def test_legacy_session_logs_reach_on_log(raw_client: MakeRaw) -> None:
    logs: list[tuple[str, Any]] = []
    three = asyncio.Event()

    def on_log(level: str, data: Any, logger: str | None) -> None:
        logs.append((level, data))
        if len(logs) == 3:
            three.set()

    client = raw_client("legacy-32601", on_log=on_log,
                        options=ClientOptions(log_level="warning", probe_timeout=5))
    await client.call_tool("log")
    set_level = client.tap.requests("logging/setLevel")  # type: ignore[attr-defined]
    assert set_level[0]["params"] == {"level": "warning"}
    await asyncio.wait_for(three.wait(), 5)
    assert logs == [("warning", f"message {i}") for i in range(3)]


async def test_listen_on_a_legacy_server_subscribes_and_filters(raw_client: MakeRaw) -> None:
    client = raw_client("legacy-32601")
    async with client.listen(tools=True, uris=["file:///watched"]) as sub:
        assert sub.acknowledged == {"toolsListChanged": True,
                                    "resourceSubscriptions": ["file:///watched"]}
        first = await asyncio.wait_for(sub.__anext__(), 5)
        second = await asyncio.wait_for(sub.__anext__(), 5)
    assert first["method"] == "notifications/resources/updated"
    assert first["params"]["uri"] == "file:///watched"
    assert second["method"] == "notifications/tools/list_changed"
    methods = [m["method"] for m in client.tap.requests()]  # type: ignore[attr-defined]
    assert "resources/subscribe" in methods and "resources/unsubscribe" in methods
    assert "subscriptions/listen" not in methods


async def test_legacy_results_are_complete_and_lists_are_not_cached(raw_client: MakeRaw) -> None:
    client = raw_client("legacy-32601")
    await client.list_tools()
    await client.list_tools()
    assert len(client.tap.requests("tools/list")) == 2  # type: ignore[attr-defined]
    info = await client.discover()
    assert info["supportedVersions"] == ["2025-11-25"]
    assert info["capabilities"]["tools"] == {"listChanged": True}
