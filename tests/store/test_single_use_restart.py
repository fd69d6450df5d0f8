"""Single use survives a restart by default: a `mcpkit run --http` process given no store at
all (no `--store`, no MCPKIT_STORE, no state keys) redeems a retry and is stopped; the same
command started again refuses the replay, because the single-use records live beside the key
ring in the user's data folder. `--store memory` opts out, and then only the process that
redeemed remembers it. Real processes, restarted; every server message schema-checked
(`Peer`)."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import httpx
from helpers.transports.http_peer import Peer, ServerProcess

TARGET = str(Path(__file__).with_name("redeem_server.py"))
CAPS = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}
ACCEPT = {"confirm": {"action": "accept", "content": {}}}


def _redeem(peer: Peer, code: str, **extra: Any) -> dict[str, Any]:
    return peer.request_message("tools/call", {"name": "redeem", "arguments": {"code": code},
                                               **extra}, **CAPS)


async def _ask_and_redeem(env: dict[str, str], *run: str) -> dict[str, Any]:
    """One process: ask, redeem, stop. The retry it redeemed."""
    first = ServerProcess.start(TARGET, *run, env=env)
    try:
        async with httpx.AsyncClient(timeout=30) as http:
            peer = Peer(first.url, http)
            asked = (await peer.post(_redeem(peer, "V1"))).message["result"]
            assert asked["resultType"] == "input_required"
            retry = {"inputResponses": ACCEPT, "requestState": asked["requestState"]}
            done = await peer.post(_redeem(peer, "V1", **retry))
            assert done.message["result"]["content"][0]["text"] == "redeemed V1"
    finally:
        # uvicorn ends a drained server by raising the signal again: -SIGTERM, or 0
        assert first.stop() in (0, -signal.SIGTERM)
    return retry


async def _replay(env: dict[str, str], retry: dict[str, Any], *run: str) -> dict[str, Any]:
    again = ServerProcess.start(TARGET, *run, env=env)
    try:
        async with httpx.AsyncClient(timeout=30) as http:
            peer = Peer(again.url, http)
            return (await peer.post(_redeem(peer, "V1", **retry))).message
    finally:
        again.stop()


async def test_a_replay_to_a_restarted_server_with_no_store_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = {"MCPKIT_DATA_DIR": str(data), "MCPKIT_STATE_KEYS": "", "MCPKIT_STORE": ""}
    retry = await _ask_and_redeem(env)
    assert (data / "single-use.sqlite3").is_file() and (data / "state-keys").is_file()
    replayed = await _replay(env, retry)
    assert replayed["error"]["code"] == -32602, replayed
    assert replayed["error"]["data"] == {"reason": "replayed"}
    assert "already used" in replayed["error"]["message"]


async def test_a_server_that_opts_out_with_a_memory_store_forgets_across_restarts(
        tmp_path: Path) -> None:
    env = {"MCPKIT_DATA_DIR": str(tmp_path / "data"), "MCPKIT_STATE_KEYS": "",
           "MCPKIT_STORE": ""}
    retry = await _ask_and_redeem(env, "--store", "memory")
    replayed = await _replay(env, retry, "--store", "memory")
    assert replayed["result"]["content"][0]["text"] == "redeemed V1", replayed
    assert not (tmp_path / "data" / "single-use.sqlite3").exists()
