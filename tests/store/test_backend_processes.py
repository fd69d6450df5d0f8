"""Two `mcpkit run` processes on one PostgreSQL or Redis, one given `--store URL`, the other
MCPKIT_STORE, each with a data folder of its own (so no key file is shared: only the store's
ring can open what the other sealed): a retry asked by one completes on the other, the same
retry sent to both at once completes exactly once, and a legacy session opened on one is
served by the other. Every message the servers send is schema-checked."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from backends import SHARED, make_url
from helpers.transports.http_peer import Peer, ServerProcess

TARGET = str(Path(__file__).with_name("redeem_server.py"))
CAPS = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}
ACCEPT = {"confirm": {"action": "accept", "content": {}}}


@pytest.fixture(params=SHARED)
def replicas(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[list[ServerProcess]]:
    url = make_url(request.param, request, tmp_path)
    started = [
        ServerProcess.start(TARGET, "--store", url,
                            env={"MCPKIT_DATA_DIR": str(tmp_path / "a"), "MCPKIT_STATE_KEYS": ""}),
        ServerProcess.start(TARGET, env={"MCPKIT_STORE": url, "MCPKIT_STATE_KEYS": "",
                                         "MCPKIT_DATA_DIR": str(tmp_path / "b")}),
    ]
    try:
        yield started
    finally:
        for process in started:
            process.stop()


def _redeem(peer: Peer, code: str, **extra: Any) -> dict[str, Any]:
    return peer.request_message("tools/call", {"name": "redeem", "arguments": {"code": code},
                                               **extra}, **CAPS)


async def test_a_retry_asked_by_one_process_completes_once_on_the_other(
        replicas: list[ServerProcess]) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        a, b = (Peer(p.url, http) for p in replicas)
        first = (await a.post(_redeem(a, "P1"))).message["result"]
        assert first["resultType"] == "input_required"
        done = await b.post(_redeem(b, "P1", inputResponses=ACCEPT,
                                    requestState=first["requestState"]))
        assert done.message["result"]["content"][0]["text"] == "redeemed P1"
        again = await a.post(_redeem(a, "P1", inputResponses=ACCEPT,
                                     requestState=first["requestState"]))
        assert again.error["data"] == {"reason": "replayed"}
        for round_ in range(5):  # the same retry at both processes at once: one wins
            state = (await a.post(_redeem(a, f"R{round_}"))).message["result"]["requestState"]
            replies = await asyncio.gather(*(
                peer.post(_redeem(peer, f"R{round_}", inputResponses=ACCEPT, requestState=state))
                for peer in (a, b, a, b)))
            wins = [r for r in replies if "result" in r.message]
            assert len(wins) == 1, [r.message for r in replies]
            assert all(r.error["data"] == {"reason": "replayed"} for r in replies
                       if "error" in r.message)


async def test_a_legacy_session_opened_on_one_process_is_served_by_the_other(
        replicas: list[ServerProcess]) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        a, b = (Peer(p.url, http) for p in replicas)
        await a.initialize()
        b.revision, b.session, b.ids = a.revision, a.session, 100
        called = await b.post(b.request_message(
            "tools/call", {"name": "echo", "arguments": {"text": "across"}}, with_meta=False))
        assert called.status == 200
        assert called.message["result"]["content"][0]["text"] == "across"
