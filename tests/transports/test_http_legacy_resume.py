"""Resumable SSE streams for 2025-11-25 sessions on the HTTP server (LEG-11, LEG-12): priming
events and event ids, resuming a dropped stream with GET + Last-Event-ID, closing connections
early with `retry` (by the handler or in polling mode), with raw clients and mcpkit's own
`Client`; and no resumability at all for 2026-07-28 requests (HTTP-9). Each test runs the app
under uvicorn on 127.0.0.1; every server message is schema-checked as it is sent."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import httpx
import orjson
import pytest
from helpers.transports.resume_peer import (
    TIMEOUT,
    LegacyClient,
    Recorded,
    collect,
    legacy_session,
    results,
    serving,
)
from helpers.transports.resume_server import RETRY_MS, Gates, app
from helpers.wire import LEGACY, MODERN, check_client_message, meta

from mcpkit import Client, ClientOptions, HTTPConnector
from mcpkit.store.legacy.events import MemoryEventStore
from mcpkit.transports.http_server.options import HTTPOptions
from mcpkit.transports.legacy.resume import close_sse_stream


def checked_client(url: str, **handlers: Any) -> Client:
    """mcpkit's `Client` pinned to the 2025-11-25 era; every message it POSTs is checked."""

    async def check(request: httpx.Request) -> None:
        if request.method == "POST":
            check_client_message(LEGACY, orjson.loads(request.content))

    connector = HTTPConnector(url, httpx_options={"event_hooks": {"request": [check]}})
    return Client(connector, options=ClientOptions(era="legacy", timeout=TIMEOUT), **handlers)


# -- ids and priming ----------------------------------------------------------------------------


async def test_a_legacy_post_stream_starts_with_a_priming_event_and_every_event_has_a_rising_id(
    gates: Gates, http: httpx.AsyncClient
) -> None:
    gates.open("finish")
    async with legacy_session(app(gates), http) as (peer, _):
        streams = []
        for n in (2, 3):
            async with peer.stream(peer.call("steps", "t", n=n)) as (response, stream):
                assert response.headers["content-type"] == "text/event-stream"
                streams.append(await collect(stream))
        first = streams[0][0]
        assert first.id is not None and first.data == "" and first.retry is None
        assert results(streams[0]) == [1, 2, "2 steps"]
        assert results(streams[1]) == [1, 2, 3, "3 steps"]
        every = streams[0] + streams[1]
        assert all(event.id for event in every)
        assert len({event.id for event in every}) == len(every)
        assert [e.seq for e in every] == sorted(e.seq for e in every)
        assert {e.stream for e in streams[0]} != {e.stream for e in streams[1]}
        assert len({e.stream for e in streams[0]}) == 1
        # A request that never notifies is still answered with plain JSON.
        reply = await peer.post(peer.call("echo", text="hi"))
        assert reply.headers["content-type"] == "application/json"


async def test_the_session_get_stream_is_primed_and_its_notifications_have_ids(
    gates: Gates, http: httpx.AsyncClient
) -> None:
    application = app(gates)
    async with legacy_session(application, http) as (peer, _):
        async with peer.get() as (response, stream):
            assert response.status_code == 200
            priming = await asyncio.wait_for(anext(stream), TIMEOUT)
            assert priming.id and priming.data == ""
            application.server.notify_tools_changed()
            change = await asyncio.wait_for(anext(stream), TIMEOUT)
        assert change.message == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        assert change.stream == priming.stream and change.seq > priming.seq


async def test_sessions_older_than_2025_11_25_get_ids_but_no_priming_and_no_early_close(
    gates: Gates, http: httpx.AsyncClient
) -> None:
    async with serving(app(gates)) as (url, _):
        peer = LegacyClient(url, http)
        await peer.initialize("2025-06-18")
        async with peer.stream(peer.call("poll_me", "t")) as (_, stream):
            events = await collect(stream)
    assert all(event.data and event.id and event.retry is None for event in events)
    assert results(events) == [1, 2, "closed=False"]


# -- resuming a dropped stream ------------------------------------------------------------------


async def test_a_client_that_drops_a_post_stream_mid_call_gets_exactly_the_missed_messages_on_resume(
    gates: Gates, http: httpx.AsyncClient
) -> None:
    async with legacy_session(app(gates), http) as (peer, recorder):
        async with peer.stream(peer.call("relay", "r")) as (_, stream):
            priming = await asyncio.wait_for(anext(stream), TIMEOUT)
            seen = await asyncio.wait_for(anext(stream), TIMEOUT)
        assert priming.data == "" and results([seen]) == [1]
        gates.open("go")  # progress 2 and 3 go out while nobody listens
        await gates.wait("sent")
        async with peer.get(seen.id) as (response, stream):
            assert response.status_code == 200
            missed = [await asyncio.wait_for(anext(stream), TIMEOUT) for _ in range(2)]
            assert results(missed) == [2, 3]
            gates.open("finish")  # the response arrives live on the resumed stream
            rest = await collect(stream)
        assert results(rest) == ["relayed"]
        resumed = missed + rest
        assert [e.stream for e in resumed] == [seen.stream] * 3
        assert [e.seq for e in resumed] == sorted(e.seq for e in resumed) and resumed[0].seq > seen.seq
        assert recorder.gets()[-1].complete  # the resumed stream ended after the response


class WatchedStore(MemoryEventStore):
    """The memory store, telling the test when a stream's last event was kept."""

    def __init__(self) -> None:
        super().__init__()
        self.ended = asyncio.Event()

    async def append(self, session_id: str, stream_id: str, data: bytes, *,
                     final: bool = False) -> str:
        event_id = await super().append(session_id, stream_id, data, final=final)
        if final:
            self.ended.set()
        return event_id


async def test_resuming_after_the_request_finished_replays_the_rest_and_the_response(
    gates: Gates, http: httpx.AsyncClient
) -> None:
    store = WatchedStore()
    async with legacy_session(app(gates, event_store=store), http) as (peer, _):
        message = peer.call("steps", "s", n=4)
        async with peer.stream(message) as (_, stream):
            priming = await asyncio.wait_for(anext(stream), TIMEOUT)
        gates.open("finish")
        await asyncio.wait_for(store.ended.wait(), TIMEOUT)  # answered while nobody listened
        async with peer.get(priming.id) as (_, stream):
            replay = await collect(stream)
        assert results(replay) == [1, 2, 3, 4, "4 steps"]
        assert replay[-1].message["id"] == message["id"]  # type: ignore[index]
        # Replaying again from the middle gives only what followed.
        async with peer.get(replay[1].id) as (_, stream):
            assert results(await collect(stream)) == [3, 4, "4 steps"]


async def test_a_resume_does_not_conflict_with_the_open_session_stream(
    gates: Gates, http: httpx.AsyncClient
) -> None:
    async with legacy_session(app(gates), http) as (peer, _), \
            peer.get() as (response, _session_stream):
        assert response.status_code == 200
        async with peer.stream(peer.call("relay", "r")) as (_, stream):
            priming = await asyncio.wait_for(anext(stream), TIMEOUT)
        gates.open("go")
        gates.open("finish")
        async with peer.get(priming.id) as (resumed, stream):
            assert resumed.status_code == 200
            assert results(await collect(stream)) == [1, 2, 3, "relayed"]
        async with peer.get() as (second, _):
            assert second.status_code == 409


async def test_a_dropped_session_stream_is_resumed_from_its_last_event_id(
    gates: Gates, http: httpx.AsyncClient
) -> None:
    application = app(gates)
    async with legacy_session(application, http) as (peer, _):
        changed = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        async with peer.get() as (_, stream):
            priming = await asyncio.wait_for(anext(stream), TIMEOUT)
            application.server.notify_tools_changed()
            first = await asyncio.wait_for(anext(stream), TIMEOUT)
            # Resumed while the first connection still looks open: it takes the stream over.
            async with peer.get(priming.id) as (response, resumed):
                assert response.status_code == 200
                replayed = await asyncio.wait_for(anext(resumed), TIMEOUT)
                assert replayed == first and replayed.message == changed
                application.server.notify_tools_changed()
                live = await asyncio.wait_for(anext(resumed), TIMEOUT)
        assert live.message == changed
        assert live.stream == priming.stream and live.seq > replayed.seq


async def test_a_second_resume_takes_the_stream_over_and_the_first_get_ends(
    gates: Gates, http: httpx.AsyncClient
) -> None:
    async with legacy_session(app(gates), http) as (peer, _):
        async with peer.stream(peer.call("relay", "r")) as (_, stream):
            priming = await asyncio.wait_for(anext(stream), TIMEOUT)
        async with peer.get(priming.id) as (_, first):
            assert results([await asyncio.wait_for(anext(first), TIMEOUT)]) == [1]
            async with peer.get(priming.id) as (_, second):
                assert results([await asyncio.wait_for(anext(second), TIMEOUT)]) == [1]
                assert await collect(first) == []  # ended: the stream moved on
                gates.open("go")
                gates.open("finish")
                assert results(await collect(second)) == [2, 3, "relayed"]


async def test_a_request_cancelled_while_its_stream_is_away_resumes_to_an_ended_stream(
    gates: Gates, http: httpx.AsyncClient
) -> None:
    async with legacy_session(app(gates), http) as (peer, _):
        message = peer.call("relay", "r")
        async with peer.stream(message) as (_, stream):
            priming = await asyncio.wait_for(anext(stream), TIMEOUT)
            await asyncio.wait_for(anext(stream), TIMEOUT)
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                  "params": {"requestId": message["id"]}}
        assert (await peer.post(cancel)).status_code == 202
        async with peer.get(priming.id) as (response, stream):
            assert response.status_code == 200
            replay = await collect(stream)
        assert results(replay) == [1]  # progress 1 again, then the end: no response follows


async def test_close_sse_stream_does_nothing_for_a_client_that_accepts_only_json(
    gates: Gates, http: httpx.AsyncClient
) -> None:
    async with legacy_session(app(gates), http) as (peer, _):
        reply = await peer.post(peer.call("poll_me"), accept="application/json")
    assert reply.headers["content-type"] == "application/json"
    assert reply.json()["result"]["content"][0]["text"] == "closed=False"


# -- closing early: the handler's close_sse_stream and polling mode ------------------------------


async def test_close_sse_stream_ends_the_post_after_an_id_and_retry_and_the_get_carries_the_rest(
    gates: Gates, http: httpx.AsyncClient
) -> None:
    async with legacy_session(app(gates), http) as (peer, _):
        async with peer.stream(peer.call("poll_me", "p")) as (_, stream):
            posted = await collect(stream)
        assert results(posted) == [1]
        assert posted[0].data == "" and posted[0].id  # priming first
        closing = posted[-1]
        assert closing.id and closing.retry == RETRY_MS and closing.data == ""
        await gates.wait("closed")
        async with peer.get(closing.id) as (_, stream):
            rest = await collect(stream)
        assert results(rest) == [2, "closed=True"]
        assert all(e.stream == closing.stream and e.seq > closing.seq for e in rest)


async def test_mcpkit_client_follows_a_stream_the_handler_closed_and_answers_a_question_sent_meanwhile(
    gates: Gates
) -> None:
    seen: list[float] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append(value)

    async with serving(app(gates)) as (url, recorder):
        async with checked_client(url, elicit=lambda request: {
                "action": "accept", "content": {"sure": True}}) as client:
            assert client.era == "legacy"
            result = await client.call_tool("poll_me", {}, progress=progress)
            assert result["content"][0]["text"] == "closed=True"
            assert seen == [1, 2]
            asked = await client.call_tool("confirm", {"action": "deploy"})
            assert asked["content"][0]["text"] == "deploy: yes"
        resumes = [r for r in recorder.gets() if r.last_event_id is not None]
        assert len(resumes) == 2 and all(r.status == 200 for r in resumes)
        assert "elicitation/create" in [e.message and e.message.get("method")
                                        for e in resumes[1].events]


async def test_polling_mode_closes_slow_requests_and_mcpkit_client_still_gets_every_message(
    gates: Gates
) -> None:
    seen: list[float] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append(value)

    def on_request(record: Recorded) -> None:
        if record.last_event_id is not None:
            gates.open("go")  # the slow tool goes on once its stream was resumed

    application = app(gates, sse_retry_ms=RETRY_MS, sse_poll_after_s=0.05)
    async with serving(application) as (url, recorder):
        recorder.on_request = on_request
        async with checked_client(url) as client:
            # The slow tool cannot answer before its stream is resumed, so past sse_poll_after_s
            # the POST is closed with an id + retry however loaded the machine is; the client
            # resumes with GET, where the rest and the result arrive.
            result = await client.call_tool("slow", {}, progress=progress)
            assert result["content"][0]["text"] == "slow done"
            assert seen == [1, 2]
        slow_post = next(r for r in recorder.exchanges if r.method == "POST" and r.events)
        assert slow_post.complete
        assert slow_post.events[-1].retry == RETRY_MS and slow_post.events[-1].id
        resumes = [r for r in recorder.gets() if r.last_event_id is not None]
        assert resumes[0].last_event_id == slow_post.events[-1].id
        # Progress 1 went out on the POST or, when the window closed first, on a resume: every
        # message arrives once, in order, wherever the cut fell.
        posted = results(slow_post.events)
        assert posted in ([], [1])
        assert posted + results([e for r in resumes for e in r.events]) == [1, 2, "slow done"]


async def test_a_request_answering_within_the_polling_window_is_plain_json(gates: Gates) -> None:
    # A window longer than any test may run (the suite's per-test timeout): the call cannot
    # outlast it, whatever the machine's load.
    application = app(gates, sse_retry_ms=RETRY_MS, sse_poll_after_s=3600.0)
    async with serving(application) as (url, recorder):
        async with checked_client(url) as client:
            quick = await client.call_tool("echo", {"text": "fast"})
            assert quick["content"][0]["text"] == "fast"
        calls = [r for r in recorder.exchanges if r.method == "POST" and b"fast" in r.body]
        assert [(r.media, r.complete, r.events) for r in calls] == [("application/json", True, [])]
        assert not [r for r in recorder.gets() if r.last_event_id is not None]


async def test_a_polled_call_outlasting_many_rounds_is_followed_to_its_answer(gates: Gates) -> None:
    rounds = 8  # more than the client's limit of resumes in a row that bring nothing new

    def on_request(record: Recorded) -> None:
        if len([r for r in recorder.gets() if r.last_event_id is not None]) >= rounds:
            gates.open("go")

    application = app(gates, sse_retry_ms=RETRY_MS, sse_poll_after_s=0.02)
    async with serving(application) as (url, recorder):
        recorder.on_request = on_request
        async with checked_client(url) as client:
            result = await client.call_tool("slow", {})
            assert result["content"][0]["text"] == "slow done"
        resumes = [r for r in recorder.gets() if r.last_event_id is not None]
        assert len(resumes) >= rounds
        # Every round was closed by the server with a new event id the next one resumed from.
        ids = [r.last_event_id for r in resumes]
        assert len(set(ids)) == len(ids)


# -- no resumability in the modern era ------------------------------------------------------------


async def test_modern_streams_carry_no_event_ids_and_ignore_last_event_id(
    gates: Gates, http: httpx.AsyncClient
) -> None:
    gates.open("finish")
    async with serving(app(gates)) as (url, recorder):
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "steps", "arguments": {"n": 2}, "_meta": meta(progressToken="m")}}
        check_client_message(MODERN, message)
        headers = {"Accept": "application/json, text/event-stream",
                   "Content-Type": "application/json", "MCP-Protocol-Version": MODERN,
                   "Mcp-Method": "tools/call", "Mcp-Name": "steps", "Last-Event-ID": "p1.1"}
        reply = await http.post(url, content=orjson.dumps(message), headers=headers)
        assert reply.status_code == 200 and reply.headers["content-type"] == "text/event-stream"
        assert b"id:" not in reply.content and b"retry:" not in reply.content
        assert results(recorder.exchanges[-1].events) == [1, 2, "2 steps"]
        get = await http.get(url, headers={"Accept": "text/event-stream",
                                           "Last-Event-ID": "p1.1"})
        assert get.status_code == 405


# -- ids that cannot be resumed ---------------------------------------------------------------------


async def test_an_event_id_of_another_session_or_a_malformed_one_is_a_400_that_keeps_the_session(
    gates: Gates, http: httpx.AsyncClient
) -> None:
    gates.open("finish")
    async with serving(app(gates)) as (url, _):
        alice, bob = LegacyClient(url, http), LegacyClient(url, http)
        await alice.initialize()
        await bob.initialize()
        async with alice.stream(alice.call("steps", "a", n=1)) as (_, stream):
            alices = await collect(stream)
        for wrong, words in ((alices[0].id, "another session"), ("nonsense", "not an event id")):
            async with bob.get(wrong) as (response, _):
                assert response.status_code == 400
                body = orjson.loads(await response.aread())
                assert words in body["error"]["message"] and "Last-Event-ID" in body["error"][
                    "message"]
        assert (await bob.post(bob.call("echo", text="still here"))).status_code == 200


async def test_a_bounded_store_evicts_the_oldest_events_and_a_resume_from_before_them_is_410(
    gates: Gates, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    store = MemoryEventStore(max_events=3)
    gates.open("finish")
    async with legacy_session(app(gates, event_store=store), http) as (peer, _):
        with caplog.at_level(logging.WARNING, logger="mcpkit.transport"):
            async with peer.stream(peer.call("steps", "b", n=5)) as (_, stream):
                events = await collect(stream)
        assert results(events) == [1, 2, 3, 4, 5, "5 steps"]
        assert "dropped its oldest SSE events" in caplog.text
        async with peer.get(events[0].id) as (response, _):
            assert response.status_code == 410
            text = orjson.loads(await response.aread())["error"]["message"]
        assert "evicted" in text and "3 events" in text
        async with peer.get(events[-3].id) as (response, stream):  # still kept: resumable
            assert results(await collect(stream)) == [5, "5 steps"]


async def test_delete_forgets_the_sessions_events(gates: Gates, http: httpx.AsyncClient) -> None:
    store = MemoryEventStore()
    gates.open("finish")
    async with legacy_session(app(gates, event_store=store), http) as (peer, _):
        async with peer.stream(peer.call("steps", "d", n=2)) as (_, stream):
            await collect(stream)
        assert store.total_bytes > 0
        assert (await http.delete(peer.url, headers=peer.headers())).status_code == 200
        assert store.total_bytes == 0


def test_polling_options_are_checked() -> None:
    with pytest.raises(ValueError, match="sse_retry_ms"):
        HTTPOptions(sse_retry_ms=-1)
    with pytest.raises(ValueError, match="sse_poll_after_s"):
        HTTPOptions(sse_poll_after_s=-0.5)


async def test_close_sse_stream_outside_a_legacy_http_request_does_nothing() -> None:
    assert await close_sse_stream() is False


@pytest.mark.parametrize("retry_ms", [-1, 1.5, True, "10"])
async def test_close_sse_stream_refuses_a_retry_that_is_not_whole_milliseconds(
    retry_ms: Any
) -> None:
    with pytest.raises(ValueError, match="retry_ms"):
        await close_sse_stream(retry_ms=retry_ms)

