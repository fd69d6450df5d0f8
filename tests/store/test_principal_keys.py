"""Principals in every engine that keeps them: a task's owner and a legacy session's principal
are stored and read back in the one spelling every engine holds (PostgreSQL refused the old
`issuer\\0subject`), and what was kept in the old spelling (in SQLite or Redis, which took it)
reads back as the same principal, so its owner still sees it."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from backends import Clock
from helpers.wire import MODERN, check_server_message

from mcpkit import Context, Server
from mcpkit.ext.tasks.records import TaskRecord
from mcpkit.ext.tasks.stores import on_backend
from mcpkit.legacy.session import LegacyState
from mcpkit.protocol.extensions import TASKS
from mcpkit.server.options import ServerOptions
from mcpkit.server.sealing import principal_key
from mcpkit.store.legacy.opening import session_store
from mcpkit.store.legacy.sessions import SessionOwner
from mcpkit.testing import ServerWire

ALICE = {"iss": "https://as.example", "sub": "alice"}
OLD = "https://as.example\0alice"


def task(task_id: str, owner: str, clock: Clock) -> TaskRecord:
    return TaskRecord(task_id, owner=owner, tool="slow", arguments={}, status="working",
                      created_at=clock.now, updated_at=clock.now, ttl_ms=60_000,
                      poll_interval_ms=500)


async def test_a_tasks_owner_is_kept_on_every_engine_and_the_old_spelling_reads_as_today(
        url: str, opened: Any) -> None:
    clock = Clock()
    backend = opened(url, clock)
    store = on_backend(backend)
    try:
        await store.create(task("now", principal_key(ALICE), clock))
        got = await store.get("now")
        assert got is not None and got.owner == principal_key(ALICE)
        if url != "memory":  # memory keeps objects, never an earlier version's text
            await store.create(task("before", OLD, clock))
            kept = await store.get("before")
            assert kept is not None and kept.owner == principal_key(ALICE)
    finally:
        await store.close()


@pytest.mark.parametrize("principal", [principal_key(ALICE), OLD])
async def test_a_legacy_sessions_principal_is_kept_on_every_engine(
        url: str, opened: Any, principal: str) -> None:
    sessions = session_store(opened(url, Clock()), LegacyState)
    owner = SessionOwner(f"principal:{principal_key(ALICE)}", authenticated=True)
    state = LegacyState("2025-11-25", {}, {"name": "c", "version": "1"}, principal=principal)
    assert await sessions.create("s1", state, owner, owner_limit=10)
    loaded = await sessions.load("s1")
    assert loaded is not None and loaded.principal == principal_key(ALICE)


async def test_a_task_id_no_engine_can_hold_is_invalid_params_not_an_internal_error(
        url: str, caplog: pytest.LogCaptureFixture) -> None:
    """A client names the task: an id with a NUL reached PostgreSQL, which refused the query
    (-32603 and a traceback). No issued id holds one, so it is refused before any store."""
    caplog.set_level(logging.WARNING, "mcpkit")
    server = Server("tasks", options=ServerOptions(store=url))

    @server.tool(task="required")
    async def job(ctx: Context) -> str:
        return "done"

    wire = ServerWire(server)
    caps = {"io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}}}
    try:
        reply = await wire.request("tasks/get", {"taskId": "a\u0000b"}, **caps)
        check_server_message(MODERN, reply, "tasks/get")
        assert reply["error"]["code"] == -32602
        assert "without NUL or lone surrogates" in reply["error"]["message"]
    finally:
        wire.close()
        if server.sealer.backend is not None:
            await server.sealer.backend.close()
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
