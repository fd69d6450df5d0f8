"""Request ids in a 2025-11-25 HTTP session, against a real `mcpkit run --http` process: a
`notifications/cancelled` whose `requestId` names no request is accepted and ignored, and an id
already in use by a running request is refused, while the running request goes on."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from http_peer import Peer, ServerProcess

BAD_REQUEST_IDS = [
    pytest.param([1], id="list"),
    pytest.param({"id": 1}, id="object"),
    pytest.param(1.0, id="float"),
    pytest.param(True, id="bool"),
    pytest.param(None, id="null"),
    pytest.param("x" * 1_000_000, id="huge-string"),
]
"""`requestId`s that name no request. The running request has id 1, so 1.0 and true (equal to
1 in Python, and hashed alike) would cancel it if they were taken for ids."""


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=15) as client:
        yield client


@pytest.fixture
async def legacy(features: ServerProcess, client: httpx.AsyncClient) -> Peer:
    peer = Peer(features.url, client)
    await peer.initialize()
    return peer


def gate_call(request_id: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": "gate", "arguments": {}, "_meta": {"progressToken": "held"}}}


async def open_gate(peer: Peer) -> None:
    opened = await peer.post(peer.request_message(
        "tools/call", {"name": "open_gate", "arguments": {}}, with_meta=False), mirror=False)
    assert opened.status == 200
    assert opened.message["result"] == {"content": [{"type": "text", "text": "open"}]}


async def through(events: AsyncIterator[dict[str, Any]], request_id: Any) -> None:
    """The gate call's stream ends with its own result."""
    final = await asyncio.wait_for(anext(events), 10)
    assert final["id"] == request_id
    assert final["result"] == {"content": [{"type": "text", "text": "through"}]}


@pytest.mark.parametrize("bad", BAD_REQUEST_IDS)
async def test_a_cancel_naming_no_request_is_accepted_and_the_request_completes(
    features: ServerProcess, legacy: Peer, bad: Any
) -> None:
    logged = len(features.output())
    async with legacy.stream(gate_call(1)) as events:
        progress = await asyncio.wait_for(anext(events), 10)
        assert progress["method"] == "notifications/progress"
        note = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": bad}}
        accepted = await legacy.post(note, mirror=False, check_client=False)
        assert (accepted.status, accepted.body) == (202, b"")
        await open_gate(legacy)
        await through(events, 1)
    # The session still serves, and the server logged no traceback for the notification.
    ping = await legacy.post(legacy.request_message("ping", with_meta=False), mirror=False)
    assert ping.message["result"] == {}
    log = features.output()[logged:]
    assert "Traceback" not in log, log
    assert "x" * 100 not in log


async def test_an_id_in_use_by_a_running_request_is_refused_and_the_first_completes(
    legacy: Peer,
) -> None:
    async with legacy.stream(gate_call(7)) as events:
        progress = await asyncio.wait_for(anext(events), 10)
        assert progress["method"] == "notifications/progress"
        again = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                 "params": {"name": "echo", "arguments": {"text": "second"}}}
        refused = await legacy.post(again, mirror=False)
        assert refused.status == 400
        assert refused.message["id"] == 7
        assert refused.error["code"] == -32600
        assert refused.error["message"] == (
            "Invalid request: id 7 is already in use by a request in flight in this session")
        await open_gate(legacy)
        await through(events, 7)
    # Its request answered, id 7 is free again.
    reused = await legacy.post({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "echo", "arguments": {"text": "again"}}}, mirror=False)
    assert reused.message["result"] == {"content": [{"type": "text", "text": "again"}]}


async def test_the_same_id_in_another_session_is_not_in_use(
    features: ServerProcess, legacy: Peer
) -> None:
    # In flight is per session: another client may number its requests the same way.
    async with httpx.AsyncClient(timeout=15) as other_client:
        other = Peer(features.url, other_client)
        await other.initialize()
        async with legacy.stream(gate_call(7)) as events:
            assert (await asyncio.wait_for(anext(events), 10))["method"] == (
                "notifications/progress")
            echoed = await other.post({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                                       "params": {"name": "echo", "arguments": {"text": "mine"}}},
                                      mirror=False)
            assert echoed.message["result"] == {"content": [{"type": "text", "text": "mine"}]}
            await open_gate(other)
            await through(events, 7)
