"""`MemoryEventStore`: the ids it issues, what it replays, and the bounds it keeps (no network:
the store is plain data behind async methods)."""

from __future__ import annotations

import logging

import pytest
from helpers.child_memory import run_here, traced

from mcpkit.store.legacy.events import EventReplayError, MemoryEventStore, parse_event_id


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
    # Counted: 1024 bytes a session, 128 a stream, 96 an event besides its data.
    store = MemoryEventStore(max_total_bytes=3200)
    priming = await store.append("quiet", "pQ", b"")
    second = await store.append("quiet", "pQ", b"q" * 300)
    third = await store.append("quiet", "pQ", b"q" * 300)
    assert store.total_bytes == 1024 + 128 + 96 + 2 * 396
    busy = await store.append("busy", "pB", b"b" * 300)  # 3588 bytes: two quiet events go
    assert store.total_bytes == 3588 - 96 - 396
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


MANY_STREAMS = """
    from mcpkit.store.legacy.events import MemoryEventStore
    store = MemoryEventStore(max_events=3)

    async def prepare():
        await store.append("s", "g-warmup", b"")

    async def work():
        for n in range(20_000):
            await store.append("s", f"g{n:016x}", b"")
    """


async def test_streams_that_never_end_are_forgotten_once_their_events_are_evicted() -> None:
    # A session's GET streams never end: each new one, opened and dropped, must not stay.
    assert traced(MANY_STREAMS)["left"] < 20_000  # measured in a process of its own
    store = (await run_here(MANY_STREAMS))["store"]
    assert len(store) == 1 and store.total_bytes == 1024 + 3 * (128 + 96)
    with pytest.raises(EventReplayError, match="no longer kept") as caught:
        await store.replay_after("s", "g0000000000000000.2")
    assert caught.value.kind == "gone"


MANY_SESSIONS = """
    from mcpkit.store.legacy.events import MemoryEventStore
    store = MemoryEventStore(max_total_bytes=4 * (1024 + 128 + 96))

    async def prepare():
        await store.append("warmup", "g0", b"")

    async def work():
        for n in range(5_000):
            await store.append(f"s{n}", "g" + f"{n:016x}", b"")
    """


async def test_sessions_that_never_end_are_forgotten_once_the_total_bound_took_their_events(
) -> None:
    # Sessions that expire without a DELETE, each with a GET stream: only what fits stays.
    assert traced(MANY_SESSIONS)["left"] < 20_000  # measured in a process of its own
    store = (await run_here(MANY_SESSIONS))["store"]
    assert len(store) == 4 and store.total_bytes <= store.max_total_bytes


async def test_a_stream_kept_anew_after_its_events_went_refuses_a_resume_from_before_them(
) -> None:
    store = MemoryEventStore(max_events=2)
    old = await store.append("s", "gA", b"one")
    await store.append("s", "pB", b"x")
    await store.append("s", "pB", b"y")  # gA's only event goes, and gA with it
    again = await store.append("s", "gA", b"two")  # the stream goes on
    with pytest.raises(EventReplayError, match="evicted") as caught:
        await store.replay_after("s", "gA.0")
    assert caught.value.kind == "gone"
    assert (await store.replay_after("s", old)).events == [(again, b"two")]  # nothing missed


async def test_a_session_kept_anew_never_issues_an_id_it_issued_before() -> None:
    store = MemoryEventStore(max_total_bytes=1024 + 128 + 96)
    issued = {await store.append("a", "gA", b"") for _ in range(3)}
    await store.append("b", "gB", b"")  # pushes every event of "a" out, and "a" with them
    assert len(store) == 1
    again = await store.append("a", "gA", b"")
    assert again not in issued
    assert int(again.rpartition(".")[2]) > max(int(i.rpartition(".")[2]) for i in issued)


async def test_the_total_bound_warns_once_however_many_sessions_it_takes_from(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = MemoryEventStore(max_total_bytes=2 * (1024 + 128 + 96))
    with caplog.at_level(logging.WARNING, logger="mcpkit.transport"):
        for n in range(50):
            await store.append(f"s{n}", f"g{n}", b"")
    assert len(caplog.records) == 1 and "max_total_bytes" in caplog.text


@pytest.mark.parametrize("event_id", ["x y.1", "p/1.1", "p\t1.1", "\u00e9.1", "p:1.1", ".1"])
async def test_ids_with_characters_no_stream_id_has_are_invalid(event_id: str) -> None:
    store = MemoryEventStore()
    await store.append("s", "pA", b"")
    with pytest.raises(EventReplayError, match="not an event id") as caught:
        await store.replay_after("s", event_id)
    assert caught.value.kind == "invalid"


async def test_stream_ids_are_letters_digits_dashes_and_underscores() -> None:
    store = MemoryEventStore()
    assert await store.append("s", "p-A_9", b"") == "p-A_9.1"
    for bad in ("", "a b", "a.b", "a\nid: x", "x" * 101):
        with pytest.raises(ValueError, match="stream id"):
            await store.append("s", bad, b"")
    with pytest.raises(ValueError, match="another session"):
        await store.append("t", "p-A_9", b"")
    await store.forget("s")
    assert await store.append("t", "p-A_9", b"") == "p-A_9.1"  # free again once forgotten


def test_bounds_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        MemoryEventStore(max_events=0)
