"""Faults behind the load balancer, on PostgreSQL and on Redis.

- A replica SIGKILLed in the middle of a bounded load of calendar writes through nginx: every
  write acknowledged to a client is in the calendar afterwards, and clients that retry a
  failed write reach the other replicas.
- The store restarted mid-run: while it is down, requests that need it fail (after the store's
  own connect timeout, not the client's) with a clear error (and readiness says 503), a request that needs no state is still served;
  once it is back the same replica processes, never restarted, serve those requests again.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from helpers.transports.http_peer import Peer, mirrored
from helpers.wire import LEGACY, check_server_message, meta
from nginx import Cluster

WRITES = 60
CLIENTS = 4
KILL_AFTER = 15
RETRIES = 6
CAPS = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}


def tomorrow() -> str:
    return (datetime.now(UTC) + timedelta(days=1)).replace(microsecond=0).isoformat()


async def test_a_replica_killed_during_writes_loses_no_acknowledged_write(
        calendar_cluster: Cluster) -> None:
    cluster = calendar_cluster
    cluster.ensure_running()
    victim = cluster.replicas[1]
    acknowledged: list[str] = []
    refusals: list[str] = []
    retried = 0
    after_kill = 0
    killed = asyncio.Event()
    queue: asyncio.Queue[int] = asyncio.Queue()
    for n in range(WRITES):
        queue.put_nowait(n)

    async def client(http: httpx.AsyncClient) -> None:
        nonlocal retried, after_kill
        peer = Peer(cluster.url, http)
        while not queue.empty():
            n = queue.get_nowait()
            call = peer.request_message("tools/call", {"name": "create_event", "arguments": {
                "title": f"load {cluster.engine} {n}", "startsAt": tomorrow()}})
            for attempt in range(RETRIES):
                try:  # nginx answers 502 for a request the killed replica held: retried
                    raw = await http.post(cluster.url, content=json.dumps(call),
                                          headers=mirrored(call))
                except httpx.TransportError:
                    raw = None
                reply = (peer._reply(raw, raw.content, "tools/call")
                         if raw is not None and raw.status_code == 200 else None)
                result = reply.message.get("result") if reply is not None else None
                if result is not None and not result.get("isError"):
                    acknowledged.append(result["structuredContent"]["id"])
                    after_kill += killed.is_set()
                    break
                if result is not None:  # a tool error is no acknowledgement: retried too
                    refusals.append(result["content"][0]["text"])
                retried += 1
                await asyncio.sleep(0.05 * (attempt + 1))
            else:
                raise AssertionError(f"write {n} failed {RETRIES} times; tool errors: {refusals}")
            if len(acknowledged) == KILL_AFTER and not killed.is_set():
                victim.kill()
                killed.set()

    async with httpx.AsyncClient(timeout=20) as http:
        await asyncio.gather(*(client(http) for _ in range(CLIENTS)))
        assert killed.is_set() and not victim.running
        assert len(acknowledged) == WRITES
        assert after_kill >= WRITES - KILL_AFTER - CLIENTS  # the others took the rest
        peer = Peer(cluster.url, http)
        week = await peer.post(peer.request_message("resources/read",
                                                    {"uri": "calendar://week"}))
        stored = {e["id"] for e in json.loads(week.message["result"]["contents"][0]["text"])}
    assert set(acknowledged) <= stored, set(acknowledged) - stored
    cluster.ensure_running()


async def _redeem_state(peer: Peer) -> dict[str, Any]:
    reply = await peer.post(peer.request_message("tools/call", {
        "name": "redeem", "arguments": {"code": "S1"}}, **CAPS))
    return reply.message


async def test_the_store_restarted_mid_run_fails_fast_and_the_replicas_recover(
        replicas: Cluster, restartable: Any) -> None:
    service = restartable.service(replicas.engine)
    pids = [r.proc.pid for r in replicas.replicas if r.proc is not None]
    a = replicas.replicas[0]
    async with httpx.AsyncClient(timeout=20) as http:
        peer = Peer(replicas.url, http)
        asked = await _redeem_state(peer)
        assert asked["result"]["resultType"] == "input_required"
        service.stop()
        try:
            # a retry needs the single-use store; a legacy initialize the session store. Each
            # fails with the store's own error, after its connect timeout: a request that hung
            # instead would end in the HTTP client's timeout (20 s), an httpx error, not these.
            retry = await peer.post(peer.request_message("tools/call", {
                "name": "redeem", "arguments": {"code": "S1"}, "inputResponses": {
                    "confirm": {"action": "accept", "content": {"note": "n"}}},
                "requestState": asked["result"]["requestState"]}, **CAPS))
            error = retry.message.get("error") or {}
            assert error.get("code") == -32603, retry.message
            assert "unavailable" in error.get("message", "").lower(), error
            legacy = await http.post(replicas.url, json={
                "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"}}},
                headers={"Accept": "application/json, text/event-stream"})
            assert legacy.status_code == 200, legacy.text  # legacy errors travel with 200
            check_server_message(LEGACY, legacy.json(), "initialize")
            refused = legacy.json()["error"]
            assert refused["code"] == -32603 and "unavailable" in refused["message"].lower()
            assert refused["data"]["unavailable"], refused
            # what needs no state is still served, by any replica
            who = await peer.post(peer.request_message("tools/call", {
                "name": "whoami", "arguments": {}}))
            assert who.message["result"]["content"][0]["text"] in ("A", "B", "C")
            ready = await http.get(f"http://127.0.0.1:{a.port}/readyz")
            assert ready.status_code == 503 and ready.json()["status"] == "unavailable"
        finally:
            service.start()
        statuses: list[int] = []
        async with asyncio.timeout(30):  # each replica reports ready again once it reconnects
            while statuses != [200, 200, 200]:
                statuses = [(await http.get(f"http://127.0.0.1:{r.port}/readyz")).status_code
                            for r in replicas.replicas]
                if statuses != [200, 200, 200]:
                    await asyncio.sleep(0.2)
        asked = await _redeem_state(peer)
        done = await peer.post(peer.request_message("tools/call", {
            "name": "redeem", "arguments": {"code": "S1"}, "inputResponses": {
                "confirm": {"action": "accept", "content": {"note": "back"}}},
            "requestState": asked["result"]["requestState"]}, **CAPS))
        assert done.message["result"]["content"][0]["text"].startswith("redeemed S1 (back)")
        legacy_peer = Peer(replicas.url, http)
        await legacy_peer.initialize()
    assert [r.proc.pid for r in replicas.replicas if r.proc is not None] == pids
    assert meta()  # the modern requests above carried the test _meta
