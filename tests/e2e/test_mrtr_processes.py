"""Stateless continuation with real processes: the calendar asks when an event starts, and
whichever process gets the retry completes it; legacy clients are asked mid-call instead.
Over stdio and over HTTP, every server message checked against the official schema."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers.transports.http_peer import ACCEPT, Peer, ServerProcess
from helpers.transports.stdio_peer import StdioPeer, meta

from mcpkit.server.sealing import new_state_key

CALENDAR = "examples/calendar/server.py"
KEY = new_state_key()
ELICITATION = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
STARTS_AT_FORM = {"type": "object", "properties": {"startsAt": {"type": "string",
                                                                "format": "date-time"}},
                  "required": ["startsAt"]}


def tomorrow() -> str:
    return (datetime.now(UTC) + timedelta(days=1)).replace(microsecond=0).isoformat()


def create_event(request_id: int, **extra: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {
        "name": "create_event", "arguments": {"title": "Dentist"}, "_meta": meta(**ELICITATION),
        **extra}}


def read_week(request_id: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "resources/read",
            "params": {"uri": "calendar://week", "_meta": meta()}}


def check_question(result: dict[str, Any]) -> str:
    assert result["resultType"] == "input_required"
    asked = result["inputRequests"]["startsAt"]
    assert asked["method"] == "elicitation/create"
    assert asked["params"]["requestedSchema"] == STARTS_AT_FORM
    assert "Dentist" in asked["params"]["message"]
    return str(result["requestState"])


# -- stdio ---------------------------------------------------------------------------------------


async def stdio_exchange(env: dict[str, str], message: dict[str, Any]) -> dict[str, Any]:
    """One request to a fresh `mcpkit run` process, which then exits cleanly."""
    peer = await StdioPeer.start(CALENDAR, env=env)
    try:
        peer.send(message)
        reply = await peer.read()
        code, stderr = await peer.close()
        assert code == 0, stderr
        return reply
    finally:
        await peer.kill()


async def test_three_stdio_processes_ask_complete_and_read(tmp_path: Path) -> None:
    env = {"CALENDAR_DB": str(tmp_path / "cal.sqlite3"), "MCPKIT_STATE_KEYS": KEY}
    state = check_question((await stdio_exchange(env, create_event(1)))["result"])
    answer = {"startsAt": {"action": "accept", "content": {"startsAt": tomorrow()}}}
    stranger = {**env, "MCPKIT_STATE_KEYS": new_state_key()}
    refused = await stdio_exchange(stranger, create_event(2, inputResponses=answer,
                                                          requestState=state))
    assert refused["error"]["code"] == -32602
    assert "key this server does not have" in refused["error"]["message"]
    done = (await stdio_exchange(env, create_event(3, inputResponses=answer,
                                                   requestState=state)))["result"]
    event = done["structuredContent"]
    assert event["title"] == "Dentist" and event["startsAt"] == answer["startsAt"]["content"][
        "startsAt"]
    week = (await stdio_exchange(env, read_week(4)))["result"]["contents"][0]["text"]
    assert event["id"] in week


async def test_a_legacy_stdio_client_is_asked_mid_call(tmp_path: Path) -> None:
    env = {"CALENDAR_DB": str(tmp_path / "cal.sqlite3"), "MCPKIT_STATE_KEYS": KEY}
    peer = await StdioPeer.start(CALENDAR, env=env)
    try:
        init = await peer.request("initialize", {
            "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "old", "version": "1"}}, with_meta=False)
        assert init["result"]["protocolVersion"] == "2025-11-25"
        peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        peer.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                   "params": {"name": "create_event", "arguments": {"title": "Dentist"}}})
        asked = await peer.read()
        assert asked["method"] == "elicitation/create"
        assert asked["params"]["requestedSchema"] == STARTS_AT_FORM
        when = tomorrow()
        peer.send({"jsonrpc": "2.0", "id": asked["id"],
                   "result": {"action": "accept", "content": {"startsAt": when}}})
        reply = await peer.read()
        assert reply["id"] == 2 and "resultType" not in reply["result"]
        assert reply["result"]["structuredContent"]["startsAt"] == when
        code, stderr = await peer.close()
        assert code == 0, stderr
    finally:
        await peer.kill()


async def test_the_project_client_completes_the_calendar_in_both_eras(tmp_path: Path) -> None:
    from mcpkit.client import Client, ClientOptions, InputRequest
    from mcpkit.transports.stdio.client import python_server

    asked: list[InputRequest] = []

    def elicit(request: InputRequest) -> dict[str, Any]:
        asked.append(request)
        return {"action": "accept", "content": {"startsAt": tomorrow()}}

    env = {"CALENDAR_DB": str(tmp_path / "cal.sqlite3"), "MCPKIT_STATE_KEYS": KEY}
    for era in ("modern", "legacy"):
        server = python_server(CALENDAR, env=env, stderr="discard")
        async with Client(server, elicit=elicit, options=ClientOptions(era=era)) as client:
            result = await client.call_tool("create_event", {"title": f"Dentist ({era})"})
        assert result["structuredContent"]["title"] == f"Dentist ({era})"
    assert [r.key for r in asked] == ["startsAt", None]  # a legacy request has no key
    assert all(r.schema == STARTS_AT_FORM for r in asked)


# -- HTTP ----------------------------------------------------------------------------------------


@pytest.fixture
def calendar_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("CALENDAR_DB", str(tmp_path / "cal.sqlite3"))
    monkeypatch.setenv("MCPKIT_STATE_KEYS", KEY)
    yield


async def http_exchange(message: dict[str, Any]) -> dict[str, Any]:
    """One request to a fresh `mcpkit run --http` process, stopped afterwards."""
    process = await asyncio.to_thread(ServerProcess.start, CALENDAR)
    try:
        async with httpx.AsyncClient(timeout=20) as client:
            reply = await Peer(process.url, client).post(message)
        assert reply.status == 200, reply.body
        return reply.message
    finally:
        await asyncio.to_thread(process.stop)


async def test_three_http_processes_ask_complete_and_read(calendar_env: None) -> None:
    state = check_question((await http_exchange(create_event(1)))["result"])
    answer = {"startsAt": {"action": "accept", "content": {"startsAt": tomorrow()}}}
    done = (await http_exchange(create_event(2, inputResponses=answer,
                                             requestState=state)))["result"]
    assert done["structuredContent"]["title"] == "Dentist"
    week = (await http_exchange(read_week(3)))["result"]["contents"][0]["text"]
    assert done["structuredContent"]["id"] in week


async def test_a_legacy_http_client_is_asked_on_the_post_stream(calendar_env: None) -> None:
    process = await asyncio.to_thread(ServerProcess.start, CALENDAR)
    try:
        async with httpx.AsyncClient(timeout=20) as client:
            peer = Peer(process.url, client)
            await peer.initialize({"elicitation": {}})
            call = peer.request_message("tools/call", {
                "name": "create_event", "arguments": {"title": "Dentist"}}, with_meta=False)
            when = tomorrow()
            async with peer.stream(call) as events:
                asked = await anext(events)
                assert asked["method"] == "elicitation/create"
                assert asked["params"]["requestedSchema"] == STARTS_AT_FORM
                answered = await peer.post(
                    {"jsonrpc": "2.0", "id": asked["id"],
                     "result": {"action": "accept", "content": {"startsAt": when}}},
                    {"Accept": ACCEPT}, mirror=False)
                assert answered.status == 202, answered.body
                reply = await anext(events)
            assert reply["id"] == call["id"]
            assert reply["result"]["structuredContent"]["startsAt"] == when
    finally:
        await asyncio.to_thread(process.stop)
