"""The client against our own examples: in memory, over stdio and over HTTP, probed (modern)
and pinned to the legacy era; every message checked against the official schema."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.client.schema_tap import ROOT
from helpers.transports.http_peer import ServerProcess

from mcpkit.client import Client, InputRequest
from mcpkit.errors import NotJSONError

EXAMPLES = ROOT / "examples"
CALENDAR = EXAMPLES / "calendar" / "server.py"
QUICKSTART = EXAMPLES / "quickstart" / "server.py"
WHEN = "2031-03-04T09:30:00+00:00"


@pytest.fixture(scope="module")
def http_urls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Both examples served over HTTP by real `mcpkit run --http` processes."""
    db = tmp_path_factory.mktemp("calendar") / "calendar.sqlite3"
    old = os.environ.get("CALENDAR_DB")
    os.environ["CALENDAR_DB"] = str(db)
    try:
        servers = {name: ServerProcess.start(str(path))
                   for name, path in (("calendar", CALENDAR), ("quickstart", QUICKSTART))}
    finally:
        if old is None:
            os.environ.pop("CALENDAR_DB", None)
        else:
            os.environ["CALENDAR_DB"] = old
    yield {name: s.url for name, s in servers.items()}
    for s in servers.values():
        s.stop()


def target(kind: str, path: Path, urls: dict[str, str]) -> Any:
    if kind == "http":
        return urls[path.parent.name]
    if kind == "memory":
        from mcpkit.cli.target import load_server

        return load_server(str(path))
    return path


KINDS = ["memory", "stdio", "http"]
ERAS = ["auto", "legacy"]


def answer_when(request: InputRequest) -> dict[str, Any]:
    assert "startsAt" in request.schema["properties"]
    return {"action": "accept", "content": {"startsAt": WHEN}}


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("kind", KINDS)
async def test_the_calendar_does_all_five_operations(
    connect: Callable[..., Client], http_urls: dict[str, str], kind: str, era: str
) -> None:
    client = connect(kind, target(kind, CALENDAR, http_urls), era=era)
    info = await client.discover()
    assert client.era == ("legacy" if era == "legacy" else "modern")
    assert client.protocol_version == ("2025-11-25" if era == "legacy" else "2026-07-28")
    assert client.server_info is not None and client.server_info["name"] == "calendar"
    assert {"tools", "resources", "prompts"} <= set(info["capabilities"])
    assert "create_event" in {t["name"] for t in await client.list_tools()}
    title = f"Dentist {kind} {era}"
    created = await client.call_tool("create_event", {"title": title, "startsAt": WHEN})
    assert created.get("isError") is not True, created
    assert created["structuredContent"]["title"] == title
    week = await client.read_resource("calendar://week", fresh=True)
    assert week["contents"][0]["mimeType"] == "application/json"
    json.loads(week["contents"][0]["text"])
    prompt = await client.get_prompt("prepare_week", {"focus": "health"})
    assert "health" in prompt["messages"][0]["content"]["text"]


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("kind", KINDS)
async def test_the_calendar_asks_when_and_the_same_handler_answers_in_both_eras(
    connect: Callable[..., Client], http_urls: dict[str, str], kind: str, era: str
) -> None:
    client = connect(kind, target(kind, CALENDAR, http_urls), era=era, elicit=answer_when)
    created = await client.call_tool("create_event", {"title": "Asked"})
    assert created["structuredContent"]["startsAt"] == WHEN
    calls = client.tap.requests("tools/call")  # type: ignore[attr-defined]
    if era == "legacy":
        assert len(calls) == 1, "a legacy server asks with its own request, mid-call"
    else:
        assert len(calls) == 2 and "requestState" in calls[1]["params"]


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("kind", KINDS)
async def test_an_integer_past_64_bits_is_refused_before_anything_is_sent(
    connect: Callable[..., Client], http_urls: dict[str, str], kind: str, era: str
) -> None:
    client = connect(kind, target(kind, QUICKSTART, http_urls), era=era)
    with pytest.raises(NotJSONError, match=r"tools/call: .*64-bit range goes as a string"):
        await client.call_tool("add", {"a": 2**70, "b": 3})
    with pytest.raises(TypeError):  # still a TypeError, as orjson's own error was
        await client.call_tool("add", {"a": {1, 2}, "b": 3})
    result = await client.call_tool("add", {"a": 2, "b": 3})
    assert result.structured == {"sum": 5}, "the connection is as it was"


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("kind", KINDS)
async def test_the_quickstart_adds(
    connect: Callable[..., Client], http_urls: dict[str, str], kind: str, era: str
) -> None:
    client = connect(kind, target(kind, QUICKSTART, http_urls), era=era)
    assert (await client.call_tool("add", {"a": 2, "b": 3}))["structuredContent"] == {"sum": 5}
    assert (await client.call_tool("echo", {"text": "hi"}))["content"][0]["text"] == "hi"
