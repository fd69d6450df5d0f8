"""`TaskOptions.store` strings are read by the one store URL grammar (`parse_store_url` with
paths), so a task store and `ServerOptions.store` take the same URLs and refuse the same way:
an SQLite file written by path or by URL is the same file, `memory` is memory in either
spelling, a shared URL opens that engine, and a string of no known form is a `StoreURLError`
(an `MCPError` and a `ValueError`) naming the setting and every accepted form."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from mcpkit.errors import MCPError
from mcpkit.ext.tasks.engines.memory import MemoryTaskStore
from mcpkit.ext.tasks.engines.postgres import PostgresTaskStore
from mcpkit.ext.tasks.engines.redis import RedisTaskStore
from mcpkit.ext.tasks.engines.sqlite import SQLiteTaskStore
from mcpkit.ext.tasks.records import TaskRecord
from mcpkit.ext.tasks.stores import store_for
from mcpkit.store.urls import STORE_FORMS, StoreURLError


def _record(task_id: str) -> TaskRecord:
    now = time.time()
    return TaskRecord(task_id, owner="alice", tool="slow", arguments={}, status="working",
                      created_at=now, updated_at=now, ttl_ms=60_000, poll_interval_ms=500)


@pytest.mark.parametrize("spelling", ["{path}", "sqlite:///{path}", "sqlite:{path}"])
async def test_an_sqlite_file_named_by_path_or_url_is_the_same_file(
        tmp_path: Path, spelling: str) -> None:
    path = tmp_path / "tasks.db"
    writer = store_for(spelling.format(path=path), time.time)
    assert isinstance(writer, SQLiteTaskStore)
    try:
        await writer.create(_record("t1"))
    finally:
        await writer.close()
    reader = SQLiteTaskStore(path)
    try:
        kept = await reader.get("t1")
        assert kept is not None and kept.owner == "alice"
    finally:
        await reader.close()


@pytest.mark.parametrize("spelling", ["memory", "memory:", "MEMORY://"])
def test_memory_in_any_spelling_the_store_url_grammar_reads_is_this_process(
        spelling: str) -> None:
    assert isinstance(store_for(spelling, time.time), MemoryTaskStore)


@pytest.mark.parametrize(("url", "engine"), [("postgresql://u@127.0.0.1:1/db", PostgresTaskStore),
                                             ("postgres://u@127.0.0.1:1/db", PostgresTaskStore),
                                             ("redis://127.0.0.1:1/0", RedisTaskStore)])
def test_a_shared_url_opens_that_engine_connecting_to_nothing_yet(url: str, engine: type) -> None:
    assert isinstance(store_for(url, time.time), engine)


@pytest.mark.parametrize("bad", ["mysql://h/db", "redis:h", "", "  ", "sqlite", "memory:x"])
def test_a_string_of_no_known_form_is_refused_naming_the_setting_and_the_forms(
        bad: str) -> None:
    with pytest.raises(StoreURLError) as caught:
        store_for(bad, time.time)
    message = str(caught.value)
    assert isinstance(caught.value, MCPError) and isinstance(caught.value, ValueError)
    assert repr(bad) in message and "TaskOptions.store" in message
    assert STORE_FORMS in message and "path of an SQLite file" in message
    assert "TaskStore instance" in message


@pytest.mark.parametrize(("bad", "reason"), [("sqlite://host/x.db", "has no host"),
                                             ("sqlite:", "name the file")])
def test_a_malformed_sqlite_url_says_what_is_wrong_with_it(bad: str, reason: str) -> None:
    with pytest.raises(StoreURLError, match=reason) as caught:
        store_for(bad, time.time)
    assert "TaskOptions.store" in str(caught.value)
