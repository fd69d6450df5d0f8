"""Both eras across three replicas sharing PostgreSQL or Redis, behind a round-robin nginx with
no affinity: a modern retry completing on another replica and its replay refused on a third; a
legacy session opened on one replica, its call served by another and its GET stream held by a
third, the mid-call elicitation answered through the first; a legacy stream resumed with
`Last-Event-ID` on another replica; `subscriptions/listen` on one replica hearing a change made
through another. Requests that must land on a given replica go to its own port; the others go
through nginx. Every server message is checked against the official schema (`Peer`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
from helpers.transports.http_peer import Peer
from helpers.wire import LEGACY
from nginx import Cluster

CAPS = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}
ACCEPT = {"confirm": {"action": "accept", "content": {"note": "gift"}}}
WAIT_S = 20.0


def text_of(message: dict[str, Any]) -> str:
    result = message["result"]
    assert result.get("isError") is not True, result
    text: str = result["content"][0]["text"]
    return text


async def next_message(events: AsyncIterator[dict[str, Any]]) -> dict[str, Any]:
    async with asyncio.timeout(WAIT_S):
        return await anext(events)


async def test_nginx_spreads_calls_over_every_replica(replicas: Cluster) -> None:
    async with httpx.AsyncClient(timeout=WAIT_S) as http:
        peer = Peer(replicas.url, http)
        names = set()
        for _ in range(9):
            reply = await peer.post(peer.request_message("tools/call", {
                "name": "whoami", "arguments": {}}))
            assert reply.status == 200, reply.body
            names.add(text_of(reply.message))
    assert names == {"A", "B", "C"}
    assert len(set(replicas.balancer.served_by())) >= 3


async def test_a_retry_completes_on_another_replica_and_its_replay_is_refused_on_a_third(
        replicas: Cluster) -> None:
    a, b, c = replicas.replicas
    async with httpx.AsyncClient(timeout=WAIT_S) as http:
        call = {"name": "redeem", "arguments": {"code": "V1"}}
        first = await Peer(a.url, http).post(
            Peer(a.url, http).request_message("tools/call", call, **CAPS))
        result = first.message["result"]
        assert result["resultType"] == "input_required", result
        assert result["inputRequests"]["confirm"]["method"] == "elicitation/create"
        retry = {**call, "inputResponses": ACCEPT, "requestState": result["requestState"]}
        peer_b = Peer(b.url, http)
        done = await peer_b.post(peer_b.request_message("tools/call", retry, **CAPS))
        assert text_of(done.message) == "redeemed V1 (gift) on B"
        peer_c = Peer(c.url, http)
        replay = await peer_c.post(peer_c.request_message("tools/call", retry, **CAPS))
        error = replay.message["error"]
        assert error["code"] == -32602, error
        assert "already" in error["message"] or "used" in error["message"], error


async def test_a_legacy_session_spans_three_replicas(replicas: Cluster) -> None:
    """Opened on A; its GET stream held by C; its call served by B, whose mid-call
    elicitation the client answers with a POST to A; the answer completes the call on B, and
    a change made on A reaches the GET stream on C."""
    a, b, c = replicas.replicas
    async with httpx.AsyncClient(timeout=WAIT_S) as http:
        opener = Peer(a.url, http)
        await opener.initialize({"elicitation": {}})
        on_b, on_c = Peer(b.url, http), Peer(c.url, http)
        for peer in (on_b, on_c):
            peer.session, peer.revision, peer.ids = opener.session, LEGACY, 10 * (1 + (peer is on_c))
        async with on_c.get_stream() as stream:
            assert stream.status_code == 200, await stream.aread()
            changes = on_c.events(stream)
            call = on_b.request_message("tools/call", {
                "name": "redeem", "arguments": {"code": "L1"}}, with_meta=False)
            async with on_b.stream(call) as events:
                asked = await next_message(events)
                assert asked["method"] == "elicitation/create", asked
                assert "L1" in asked["params"]["message"]
                answer = {"jsonrpc": "2.0", "id": asked["id"],
                          "result": {"action": "accept", "content": {"note": "legacy"}}}
                posted = await opener.post(answer, mirror=False)
                assert posted.status == 202, posted.body
                done = await next_message(events)
                assert done["id"] == call["id"]
                assert text_of(done) == "redeemed L1 (legacy) on B"
            touched = await opener.post(opener.request_message("tools/call", {
                "name": "touch", "arguments": {"uri": "notes://board/1"}}, with_meta=False))
            assert text_of(touched.message) == "touched notes://board/1 on A"
            heard = await next_message(changes)
            assert heard["method"] == "notifications/tools/list_changed", heard


async def test_a_legacy_stream_resumes_with_last_event_id_on_another_replica(
        replicas: Cluster) -> None:
    a, b, c = replicas.replicas
    async with httpx.AsyncClient(timeout=WAIT_S) as http:
        on_a = Peer(a.url, http)
        await on_a.initialize()
        on_b, on_c = Peer(b.url, http), Peer(c.url, http)
        for peer in (on_b, on_c):
            peer.session, peer.revision, peer.ids = on_a.session, LEGACY, 100
        touch = {"name": "touch", "arguments": {"uri": "notes://board/2"}}
        async with on_a.get_stream() as stream:
            ids = event_ids(stream)
            first = await next_message(ids)  # the priming event, before anything happened
            assert first[1] is None
            done = await on_b.post(on_b.request_message("tools/call", touch, with_meta=False))
            assert text_of(done.message) == "touched notes://board/2 on B"
            missed = await next_message(ids)
            assert missed[1] is not None and missed[1]["method"] == (
                "notifications/tools/list_changed")
        # the client lost its connection after the priming event (it says so), and asks C
        headers = {"Last-Event-ID": first[0]}
        async with http.stream("GET", c.url, headers={
                "Accept": "text/event-stream", "Mcp-Session-Id": on_a.session or "",
                "MCP-Protocol-Version": LEGACY, **headers}) as resumed:
            assert resumed.status_code == 200, await resumed.aread()
            again = event_ids(resumed, on_c)
            replayed = await next_message(again)
            assert replayed == missed  # the same event, the same id, from the shared store
            later = await on_b.post(on_b.request_message("tools/call", touch, with_meta=False))
            assert later.status == 200
            carried = await next_message(again)
            assert carried[1] is not None and carried[1]["method"] == (
                "notifications/tools/list_changed")
            assert carried[0] != missed[0]


async def event_ids(response: httpx.Response, peer: Peer | None = None
                    ) -> AsyncIterator[tuple[str, dict[str, Any] | None]]:
    """(event id, message or None for a priming event) of each SSE event with an id."""
    from helpers.wire import check_server_message

    buffer = b""
    async for chunk in response.aiter_bytes():
        buffer += chunk
        while b"\n\n" in buffer:
            block, buffer = buffer.split(b"\n\n", 1)
            event_id, data = None, None
            for line in block.decode().split("\n"):
                if line.startswith("id: "):
                    event_id = line[4:]
                elif line.startswith("data: "):
                    import json

                    data = json.loads(line[6:])
                    check_server_message(LEGACY, data, None)
            if event_id is not None:
                yield event_id, data


async def test_listen_on_one_replica_hears_a_change_made_through_another(
        replicas: Cluster) -> None:
    a, b, _ = replicas.replicas
    async with httpx.AsyncClient(timeout=WAIT_S) as http:
        on_a, on_b = Peer(a.url, http), Peer(b.url, http)
        listen = on_a.request_message("subscriptions/listen", {"notifications": {
            "toolsListChanged": True, "resourceSubscriptions": ["notes://board"]}})
        async with on_a.stream(listen) as events:
            ack = await next_message(events)
            assert ack["method"] == "notifications/subscriptions/acknowledged", ack
            touched = await on_b.post(on_b.request_message("tools/call", {
                "name": "touch", "arguments": {"uri": "notes://board/3"}}))
            assert text_of(touched.message) == "touched notes://board/3 on B"
            heard = [await next_message(events), await next_message(events)]
        methods = {m["method"]: m["params"] for m in heard}
        assert methods["notifications/resources/updated"]["uri"] == "notes://board/3"
        assert "notifications/tools/list_changed" in methods
        for params in methods.values():
            assert params["_meta"]["io.modelcontextprotocol/subscriptionId"] == listen["id"]
