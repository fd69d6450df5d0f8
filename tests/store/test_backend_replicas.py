"""Servers ("replicas") sharing one PostgreSQL or Redis store URL: a retry sealed by one opens
on another with no configured keys (the shared state key ring), a single-use retry counts once
across all of them, the ring rotates without a retry failing, and MCPKIT_STATE_KEYS still
overrides the shared ring. Every message the servers send is checked against the schema."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcpkit import Context, Server
from mcpkit.errors import StateRejected
from mcpkit.protocol.request_state import KeyRing
from mcpkit.server.options import ServerOptions
from mcpkit.server.sealing import STATE_KEYS_ENV, Sealer
from mcpkit.store.shared_ring import SharedRing, rotated, sealing_and_open
from mcpkit.store.urls import open_backend

CAPS_KEY = "io.modelcontextprotocol/clientCapabilities"
CAPS = {"elicitation": {"form": {}}}
ACCEPT = {"confirm": {"action": "accept", "content": {}}}


def replica(url: str) -> Server:
    server = Server("replica", options=ServerOptions(store=url))

    @server.tool()
    async def redeem(code: str, ctx: Context) -> str:
        """A one-time action: its confirmation counts once, on whichever replica."""
        answer = await ctx.elicit("confirm", f"Redeem {code}?", single_use=True)
        return f"redeemed {code}" if answer.accepted else "kept"

    return server


async def _call(wire: Any, **extra: Any) -> dict[str, Any]:
    params = {"name": "redeem", "arguments": {"code": "V1"}, **extra}
    return await wire.request("tools/call", params, **{CAPS_KEY: CAPS})


async def test_a_retry_sealed_on_one_replica_completes_on_another_once(
        shared_url: str, wire_factory: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(STATE_KEYS_ENV, raising=False)
    servers = [replica(shared_url) for _ in range(3)]
    try:
        a, b, c = (wire_factory(s) for s in servers)
        first = (await _call(a))["result"]
        assert first["resultType"] == "input_required"
        done = await _call(b, inputResponses=ACCEPT, requestState=first["requestState"])
        assert done["result"]["content"][0]["text"] == "redeemed V1"
        replay = await _call(c, inputResponses=ACCEPT, requestState=first["requestState"])
        assert replay["error"]["code"] == -32602
        assert replay["error"]["data"] == {"reason": "replayed"}
        keys = servers[0].sealer.backend.keys  # type: ignore[union-attr]
        assert keys.source.read() is not None  # sealed with the ring in the store, not a file
    finally:
        for server in servers:
            assert server.sealer.backend is not None
            await server.sealer.backend.close()


async def test_configured_keys_override_the_shared_ring(
        shared_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    key = KeyRing.key_text(b"k" * 32)
    monkeypatch.setenv(STATE_KEYS_ENV, key)
    sealer = Sealer(ServerOptions(store=shared_url))
    try:
        token = KeyRing([key], lambda n: b"\0" * n).seal(b"p", b"body")
        assert sealer.ring.open(b"p", token, "test", "token")[0] == b"body"
        assert sealer.backend is not None and sealer.backend.keys is not None
        assert sealer.backend.keys.source.read() is None  # the shared ring was never made
    finally:
        assert sealer.backend is not None
        await sealer.backend.close()


def test_replicas_starting_at_once_share_the_first_ring(shared_url: str) -> None:
    rings = [open_backend(shared_url).keys for _ in range(3)]
    try:
        records = {ring.load() for ring in rings}
        assert len(records) == 1
        token = rings[0].ring(1_000.0).seal(b"p", b"x")
        assert all(r.ring(1_000.0).open(b"p", token, "test", "token")[0] == b"x" for r in rings)
    finally:
        for ring in rings:
            ring.close()


def test_a_rotation_publishes_the_key_before_it_seals(shared_url: str) -> None:
    now = 2_000_000_000.0
    a, b = open_backend(shared_url).keys, open_backend(shared_url).keys
    assert isinstance(a, SharedRing) and isinstance(b, SharedRing)
    try:
        a.load()
        b.load()
        old_token = a.ring(now).seal(b"p", b"old")
        a.rotate(now, keep=600, lead=30)
        # Before the lead is over, A still seals with the old key, which B (not yet refreshed)
        # opens; the new key opens on B as soon as B has read the record.
        early = a.ring(now + 10).seal(b"p", b"early")
        assert b.ring(now + 10).open(b"p", early, "test", "token")[0] == b"early"
        b.load()  # B's periodic refresh
        late = a.ring(now + 31).seal(b"p", b"late")
        assert b.ring(now + 31).open(b"p", late, "test", "token")[0] == b"late"
        assert b.ring(now + 31).open(b"p", old_token, "test", "token")[0] == b"old"  # retired, still opening
        with pytest.raises(StateRejected, match="does not have"):  # past lead + keep
            b.ring(now + 700).open(b"p", old_token, "test", "token")[0]
    finally:
        a.close()
        b.close()


def test_rotation_keeps_the_new_key_out_of_sealing_until_its_time() -> None:
    first = json.dumps({"keys": [{"key": KeyRing.key_text(b"a" * 32), "from": 0.0,
                                  "until": None}]})
    record = rotated(first, 100.0, keep=50, lead=20, random_bytes=lambda n: b"b" * n)
    a, b = KeyRing.key_text(b"a" * 32), KeyRing.key_text(b"b" * 32)
    assert sealing_and_open(record, 110.0) == (a, b)  # b opens, a still seals
    assert sealing_and_open(record, 120.0) == (b, a)  # b seals from 120
    assert sealing_and_open(record, 170.0) == (b,)  # a retired at 120 + 50
    again = rotated(record, 200.0, keep=50, lead=20, random_bytes=lambda n: b"c" * n)
    assert [k["key"] for k in json.loads(again)["keys"]] == [
        KeyRing.key_text(b"c" * 32), b]  # a, past its date, dropped
    with pytest.raises(ValueError):
        rotated(first, 0.0, keep=-1, lead=0)


async def test_a_legacy_session_opened_on_one_replica_is_served_by_another(
        shared_url: str) -> None:
    import httpx
    from helpers.transports.http_peer import Peer
    from helpers.transports.listening import listening

    servers = [replica(shared_url), replica(shared_url)]
    try:
        async with listening(servers[0].asgi()) as one, listening(servers[1].asgi()) as two, \
                httpx.AsyncClient(timeout=30) as http:
            first = Peer(one.url, http)
            await first.initialize()
            second = Peer(two.url, http)
            second.revision, second.session, second.ids = first.revision, first.session, 10
            listed = await second.post(second.request_message("tools/list", with_meta=False))
            assert listed.status == 200
            assert [t["name"] for t in listed.message["result"]["tools"]] == ["redeem"]
            ended = await http.delete(two.url, headers={"Mcp-Session-Id": first.session or "",
                                                        "MCP-Protocol-Version": "2025-11-25"})
            assert ended.status_code in (200, 204)
            gone = await first.post(first.request_message("tools/list", with_meta=False))
            assert gone.status == 404  # ended through the other replica
    finally:
        for server in servers:
            assert server.sealer.backend is not None
            await server.sealer.backend.close()


def test_mcpkit_keys_rotate_rotates_the_shared_ring(shared_url: str) -> None:
    import subprocess
    import sys

    ring = open_backend(shared_url).keys
    assert isinstance(ring, SharedRing)
    try:
        before = json.loads(ring.load())["keys"]
        done = subprocess.run(
            [sys.executable, "-m", "mcpkit", "keys", "rotate", "--store", shared_url,
             "--keep", "600", "--lead", "45"], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert "seals in 45 s" in done.stderr and "1 older key(s) still open" in done.stderr
        after = json.loads(ring.load())["keys"]
        assert len(after) == 2 and after[1]["key"] == before[0]["key"]
        assert after[0]["from"] - after[1]["until"] == -600  # retired 600 s after it seals
    finally:
        ring.close()
    down = subprocess.run(
        [sys.executable, "-m", "mcpkit", "keys", "rotate", "--store", "redis://127.0.0.1:1/0"],
        capture_output=True, text=True, timeout=60)
    assert down.returncode == 1 and "cannot be reached" in down.stderr
