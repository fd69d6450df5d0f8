"""`MemoryEventStore`: the ids it issues, what it replays, and the bounds it keeps (no network:
the store is plain data behind async methods)."""

from __future__ import annotations

import logging

import pytest

from mcpkit.transports.http_events import EventReplayError, MemoryEventStore, parse_event_id


async def test_ids_name_their_stream_and_rise_across_the_streams_of_a_session() -> None:
    store = MemoryEventStore()
    ids = [await store.append("s1", stream, b"x") for stream in ("pA", "pB", "pA", "gC")]
    assert ids == ["pA.1", "pB.2", "pA.3", "gC.4"]
    assert await store.append("s2", "pD", b"x") == "pD.1"  # another session counts its own
    assert parse_event_id("pA.3") == ("pA", 3)
    assert parse_event_id("pA") is None and parse_event_id("pA.x") is None


async def test_a_replay_holds_only_the_named_streams_later_events_and_says_when_it_ended() -> None:
    store = MemoryEventStore()
    first = await store.append("s", "pA", b"")
    await store.append("s", "pB", b"other stream")
    await store.append("s", "pA", b"one")
    open_replay = await store.replay_after("s", first)
    assert open_replay.stream_id == "pA"
    assert open_replay.events == [("pA.3", b"one")] and not open_replay.ended
    await store.append("s", "pA", b"answer", final=True)
    done = await store.replay_after("s", first)
    assert done.events == [("pA.3", b"one"), ("pA.4", b"answer")] and done.ended
    assert (await store.replay_after("s", "pA.4")).events == []


@pytest.mark.parametrize(("event_id", "words"), [
    ("garbage", "not an event id"),
    ("pA.99", "never issued"),
    ("pX.1", "another session"),
])
async def test_ids_this_session_never_had_are_invalid(event_id: str, words: str) -> None:
    store = MemoryEventStore()
    await store.append("s", "pA", b"")
    await store.append("t", "pX", b"")
    with pytest.raises(EventReplayError, match=words) as caught:
        await store.replay_after("s", event_id)
    assert caught.value.kind == "invalid"


async def test_events_past_the_per_session_count_are_evicted_and_a_resume_before_them_is_gone(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = MemoryEventStore(max_events=2)
    with caplog.at_level(logging.WARNING, logger="mcpkit.transport"):
        ids = [await store.append("s", "pA", b"%d" % i) for i in range(4)]
    assert caplog.text.count("dropped its oldest SSE events") == 1  # once per session
    with pytest.raises(EventReplayError, match="evicted") as caught:
        await store.replay_after("s", ids[0])
    assert caught.value.kind == "gone"
    assert (await store.replay_after("s", ids[1])).events == [(ids[2], b"2"), (ids[3], b"3")]


async def test_the_byte_bound_keeps_the_newest_event_even_when_it_alone_is_larger() -> None:
    store = MemoryEventStore(max_bytes=300)
    await store.append("s", "pA", b"a" * 100)
    big = await store.append("s", "pA", b"b" * 1000)
    with pytest.raises(EventReplayError, match="evicted"):
        await store.replay_after("s", "pA.0")
    assert (await store.replay_after("s", "pA.1")).events == [(big, b"b" * 1000)]


async def test_the_total_bound_takes_from_the_sessions_quiet_longest_first() -> None:
    store = MemoryEventStore(max_total_bytes=1000)  # each event counts 96 bytes besides its data
    priming = await store.append("quiet", "pQ", b"")
    second = await store.append("quiet", "pQ", b"q" * 300)
    third = await store.append("quiet", "pQ", b"q" * 300)
    busy = await store.append("busy", "pB", b"b" * 300)  # 1284 bytes: two quiet events go
    assert store.total_bytes == 792
    with pytest.raises(EventReplayError, match="evicted") as caught:
        await store.replay_after("quiet", priming)
    assert caught.value.kind == "gone"
    assert (await store.replay_after("quiet", second)).events == [(third, b"q" * 300)]
    assert (await store.replay_after("busy", busy)).stream_id == "pB"


async def test_an_ended_stream_whose_events_all_went_is_forgotten_whole() -> None:
    store = MemoryEventStore(max_events=1)
    first = await store.append("s", "pA", b"answer", final=True)
    await store.append("s", "pB", b"next")
    with pytest.raises(EventReplayError, match="no longer kept") as caught:
        await store.replay_after("s", first)
    assert caught.value.kind == "gone"


async def test_forget_drops_a_session_and_its_bytes() -> None:
    store = MemoryEventStore()
    first = await store.append("s", "pA", b"abc")
    await store.append("t", "pT", b"abc")
    kept = store.total_bytes
    await store.forget("s")
    assert 0 < store.total_bytes < kept
    with pytest.raises(EventReplayError, match="no longer kept"):
        await store.replay_after("s", first)
    await store.forget("t")
    await store.forget("never-was")
    assert store.total_bytes == 0


def test_bounds_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        MemoryEventStore(max_events=0)
