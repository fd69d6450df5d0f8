"""A shared store stopped and started again under a running backend and a running server:
while it is down every seam fails at once with `StoreUnavailableError` (a real HTTP server
answers 503 with -32603 naming the engine, and keeps serving what needs no store); once it is
back the same pools serve again with no restart, and PostgreSQL still holds every write it
acknowledged before the outage (this test Redis keeps nothing on disk, `--save ''`)."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import httpx
import pytest
from backends import SHARED, Clock, make_url
from http_peer import Peer
from listening import listening
from redeem_server import make_server

from mcpkit.errors import StoreUnavailableError
from mcpkit.server.server import ServerOptions
from mcpkit.store.urls import open_backend

BOUND = 60.0
"""The longest one store call may take before the test fails (it must not hang)."""
CAPS_KEY = "io.modelcontextprotocol/clientCapabilities"


@dataclasses.dataclass
class Note:
    text: str


@pytest.fixture(params=SHARED)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def _fails_fast(call: Any) -> StoreUnavailableError:
    with pytest.raises(StoreUnavailableError) as caught:
        await asyncio.wait_for(call, BOUND)
    return caught.value


async def test_every_seam_fails_fast_while_down_and_recovers_after(
        kind: str, request: pytest.FixtureRequest, tmp_path: Path, restartable: Any) -> None:
    url = make_url(kind, request, tmp_path)
    clock = Clock()
    backend = open_backend(url, clock=clock)
    sessions = backend.sessions(Note)
    events = backend.events()
    try:
        assert await backend.store.add("once:before", b"kept", clock.now + 600)
        assert await sessions.create("s-before", Note("n"))
        before = await events.append("s-before", "st", b"one")
        restartable.service(kind).stop()
        error = await _fails_fast(backend.store.add("once:during", b"", clock.now + 600))
        assert error.code == -32603 and error.data == {"unavailable": kind}
        assert "127.0.0.1" not in str(error) and "cannot be reached" in str(error)
        await _fails_fast(sessions.load("s-before"))
        await _fails_fast(events.append("s-before", "st", b"lost"))
        restartable.service(kind).start()
        assert await asyncio.wait_for(backend.store.add("once:after", b"", clock.now + 600),
                                      BOUND)
        after = await events.append("s-after", "st2", b"two")
        assert (await events.replay_after("s-after", after)).events == []
        if kind == "postgresql":  # acknowledged before the outage: still there
            assert await backend.store.get("once:before") == b"kept"
            assert not await backend.store.add("once:before", b"again", clock.now + 600)
            assert await sessions.load("s-before") == Note("n")
            assert (await events.replay_after("s-before", before)).events == []
    finally:
        restartable.ensure_running()
        await backend.close()


async def test_a_server_answers_503_while_its_store_is_down_and_serves_again_after(
        kind: str, request: pytest.FixtureRequest, tmp_path: Path, restartable: Any) -> None:
    server = make_server(ServerOptions(store=make_url(kind, request, tmp_path)))

    caps = {CAPS_KEY: {"elicitation": {"form": {}}}}
    accept = {"confirm": {"action": "accept", "content": {}}}
    try:
        async with listening(server.asgi()) as srv, httpx.AsyncClient(timeout=BOUND) as http:
            peer = Peer(srv.url, http)

            async def redeem_call(code: str) -> Any:
                first = await peer.post(peer.request_message(
                    "tools/call", {"name": "redeem", "arguments": {"code": code}}, **caps))
                state = first.message["result"]["requestState"]
                return await peer.post(peer.request_message(
                    "tools/call", {"name": "redeem", "arguments": {"code": code},
                                   "inputResponses": accept, "requestState": state}, **caps))

            assert (await redeem_call("A")).message["result"]["content"][0]["text"] == \
                "redeemed A"
            restartable.service(kind).stop()
            down = await redeem_call("B")
            assert down.status == 503
            assert down.error["code"] == -32603 and down.error["data"] == {"unavailable": kind}
            echoed = await peer.post(peer.request_message(
                "tools/call", {"name": "echo", "arguments": {"text": "still up"}}))
            assert echoed.status == 200
            assert echoed.message["result"]["content"][0]["text"] == "still up"
            restartable.service(kind).start()
            again = await redeem_call("C")
            assert again.status == 200
            assert again.message["result"]["content"][0]["text"] == "redeemed C"
    finally:
        restartable.ensure_running()
        assert server.sealer.backend is not None
        await server.sealer.backend.close()
