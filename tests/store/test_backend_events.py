"""The legacy event store's contract on every backend: ids, replay, bounds and the errors
("invalid" and "gone") of `MemoryEventStore`, and on PostgreSQL and Redis a replay served by
a second backend on the same URL (another replica) of events the first one kept."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.store.legacy.events import EventReplayError
from mcpkit.store.legacy.opening import event_store


def _number(event_id: str) -> int:
    return int(event_id.rpartition(".")[2])


async def test_a_stream_replays_what_came_after_an_event(url: str, opened: Any) -> None:
    events = event_store(opened(url))
    first = await events.append("sess1", "post-1", b"")
    second = await events.append("sess1", "post-1", b'{"n":1}')
    other = await events.append("sess1", "get-1", b'{"other":1}')
    last = await events.append("sess1", "post-1", b'{"n":2}', final=True)
    assert [e.partition(".")[0] for e in (first, second, other, last)] == [
        "post-1", "post-1", "get-1", "post-1"]
    numbers = [_number(e) for e in (first, second, other, last)]
    assert numbers == sorted(set(numbers))  # unique within the session, increasing
    replay = await events.replay_after("sess1", first)
    assert replay.stream_id == "post-1"
    assert replay.events == [(second, b'{"n":1}'), (last, b'{"n":2}')]
    assert replay.ended
    running = await events.replay_after("sess1", other)
    assert running.events == [] and not running.ended


async def test_ids_that_cannot_be_resumed_say_why(url: str, opened: Any) -> None:
    events = event_store(opened(url))
    mine = await events.append("s-a", "stream-a", b"x")
    await events.append("s-b", "stream-b", b"y")
    cases = {
        "not-an-id": "invalid",
        "stream-a.99999999999": "invalid",  # never issued
        f"stream-b.{_number(mine)}": "invalid",  # another session's stream
        "stream-zzz.1": "gone",  # no such stream kept
    }
    for event_id, kind in cases.items():
        with pytest.raises(EventReplayError) as caught:
            await events.replay_after("s-a", event_id)
        assert caught.value.kind == kind, event_id
    with pytest.raises(ValueError, match="another session"):
        await events.append("s-a", "stream-b", b"z")
    with pytest.raises(ValueError, match="letters, digits"):
        await events.append("s-a", "bad stream!", b"z")


async def test_the_oldest_events_go_past_the_bounds_and_resuming_before_them_is_gone(
        url: str, opened: Any) -> None:
    events = event_store(opened(url), max_events=3, max_bytes=10_000)
    ids = [await events.append("s", "st", b"%d" % i) for i in range(6)]
    with pytest.raises(EventReplayError) as caught:
        await events.replay_after("s", ids[1])
    assert caught.value.kind == "gone" and "evicted" in str(caught.value)
    replay = await events.replay_after("s", ids[2])  # the newest evicted: all after it kept
    assert replay.events == [(ids[3], b"3"), (ids[4], b"4"), (ids[5], b"5")]
    assert [data for _, data in (await events.replay_after("s", ids[3])).events] == [b"4", b"5"]


async def test_a_large_event_is_kept_alone_and_bytes_are_bounded(url: str, opened: Any) -> None:
    events = event_store(opened(url), max_events=100, max_bytes=1_000)
    small = await events.append("s", "st", b"a" * 10)
    await events.append("s", "st", b"a" * 10)
    big = await events.append("s", "st", b"b" * 5_000)  # over the bound alone: still kept
    with pytest.raises(EventReplayError) as caught:
        await events.replay_after("s", small)
    assert caught.value.kind == "gone"
    after = await events.append("s", "st", b"c")
    assert (await events.replay_after("s", big)).events == [(after, b"c")]


async def test_a_forgotten_session_is_gone(url: str, opened: Any) -> None:
    events = event_store(opened(url))
    first = await events.append("s", "st1", b"1")
    await events.append("s", "st1", b"2")
    await events.forget("s")
    with pytest.raises(EventReplayError) as caught:
        await events.replay_after("s", first)
    assert caught.value.kind == "gone"
    again = await events.append("s", "st1", b"3")  # the stream id is free once forgotten
    assert _number(again) > _number(first)  # and no id is issued twice


async def test_another_replica_replays_the_events_one_kept(shared_url: str, opened: Any) -> None:
    a, b = event_store(opened(shared_url)), event_store(opened(shared_url))
    first = await a.append("sx", "post-9", b"")
    second = await a.append("sx", "post-9", b'{"progress":1}')
    third = await b.append("sx", "post-9", b'{"result":1}', final=True)
    replay = await b.replay_after("sx", first)
    assert replay.events == [(second, b'{"progress":1}'), (third, b'{"result":1}')]
    assert replay.ended
    assert (await a.replay_after("sx", second)).events == [(third, b'{"result":1}')]
    with pytest.raises(ValueError, match="another session"):
        await b.append("sy", "post-9", b"")


async def test_the_total_bound_evicts_the_sessions_quiet_longest(
        shared_url: str, opened: Any) -> None:
    events = event_store(opened(shared_url), max_total_bytes=40_000)
    old = [await events.append("quiet", "q", b"q" * 500)]
    for i in range(200):
        await events.append(f"busy{i % 4}", f"b{i % 4}", b"b" * 500)
    with pytest.raises(EventReplayError) as caught:
        await events.replay_after("quiet", old[0])
    assert caught.value.kind == "gone"
    last = await events.append("busy0", "b0", b"end")
    assert last.startswith("b0.")
