"""Resumable 2025-11-25 streams under pressure: what a long-running server keeps (sessions that
end, are deleted or abandon their streams), what a client cannot make it do (forged or odd
`Last-Event-ID`s, several connections for one stream), races between writes, resumes, the
response and cancellation, and shutdown. Each test runs the app under uvicorn on 127.0.0.1;
every server message is schema-checked as it is sent (`resume_peer.Recorder`)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import orjson
import pytest
from helpers.transports.resume_peer import (
    TIMEOUT,
    LegacyClient,
    collect,
    legacy_session,
    results,
    serving,
)
from helpers.transports.resume_server import Gates, app

from mcpkit.protocol.http import SESSION
from mcpkit.store.legacy.events import MemoryEventStore
from mcpkit.transports.legacy.sessions import MemorySessionStore


async def refusal(peer: LegacyClient, last_event_id: str | bytes) -> tuple[int, str]:
    """A GET with this `Last-Event-ID` (any bytes), answered with a JSON-RPC error."""
    response = await peer.client.get(peer.url, headers=peer.get_headers(last_event_id))
    assert response.headers["content-type"] == "application/json"
    return response.status_code, response.json()["error"]["message"]


# -- what a long-running server keeps --------------------------------------------------------------


async def test_sessions_that_abandon_their_get_streams_leave_a_bounded_event_store(
    gates: Gates, http: httpx.AsyncClient
) -> None:
    session_cost = 1024 + 128 + 96  # what the store counts for one session's priming event
    store = MemoryEventStore(max_total_bytes=3 * session_cost)
    async with serving(app(gates, event_store=store)) as (url, _):
        for _ in range(12):
            peer = LegacyClient(url, http)
            await peer.initialize()
            async with peer.get() as (response, stream):
                assert response.status_code == 200
                assert (await asyncio.wait_for(anext(stream), TIMEOUT)).data == ""
            # The client goes away without DELETE: its session expires some day, unannounced.
        assert store.total_bytes <= 3 * session_cost
        assert len(store) == 3  # only sessions whose events still fit are remembered


async def test_delete_cancels_the_sessions_running_requests_and_keeps_nothing_of_them(
    gates: Gates, http: httpx.AsyncClient
) -> None:
    store = MemoryEventStore()
    async with legacy_session(app(gates, event_store=store), http) as (peer, _):
        posting = asyncio.create_task(peer.post(peer.call("late", "l")))
        await gates.wait("started")
        assert (await http.delete(peer.url, headers=peer.headers())).status_code == 200
        await gates.wait("cancelled", 3.0)
        gates.open("go")
        reply = await asyncio.wait_for(posting, TIMEOUT)
        assert reply.status_code == 202 and reply.content == b""  # ended without a response
        assert store.total_bytes == 0 and len(store) == 0
        async with peer.get() as (response, _):
            assert response.status_code == 404


async def test_delete_ends_a_get_carrying_a_resumed_stream_and_its_request(
    gates: Gates, http: httpx.AsyncClient
) -> None:
    store = MemoryEventStore()
    async with legacy_session(app(gates, event_store=store), http) as (peer, recorder):
        async with peer.stream(peer.call("relay", "r")) as (_, stream):
            priming = await asyncio.wait_for(anext(stream), TIMEOUT)
        assert priming.id is not None
        async with peer.get(priming.id) as (_, stream):
            assert results([await asyncio.wait_for(anext(stream), TIMEOUT)]) == [1]
            assert (await http.delete(peer.url, headers=peer.headers())).status_code == 200
            assert await collect(stream) == []  # ended, with no response and no empty event
        await gates.wait("cancelled", 3.0)
        assert recorder.gets()[-1].complete
        assert store.total_bytes == 0 and len(store) == 0


async def test_the_get_stream_of_a_session_that_expired_ends_instead_of_carrying_news(
    gates: Gates, http: httpx.AsyncClient
) -> None:
    now = [0.0]
    sessions = MemorySessionStore(idle_s=60.0, clock=lambda: now[0])
    application = app(gates, session_store=sessions)
    async with legacy_session(application, http) as (peer, _):
        async with peer.get() as (_, stream):
            assert (await asyncio.wait_for(anext(stream), TIMEOUT)).data == ""
            now[0] += 61.0  # a minute without a request: the session expires
            application.server.notify_tools_changed()
            assert await collect(stream, 5.0) == []
        assert (await peer.post(peer.request("ping"))).status_code == 404


# -- what a client cannot make the server do ----------------------------------------------------


async def test_forged_and_odd_last_event_ids_are_refused_with_400_naming_the_header(
    gates: Gates, http: httpx.AsyncClient
) -> None:
    async with legacy_session(app(gates), http) as (peer, _):
        async with peer.stream(peer.call("relay", "r")) as (_, stream):
            priming = await asyncio.wait_for(anext(stream), TIMEOUT)
        real = priming.stream
        for forged in ("../../etc/passwd.1", "p 1.1", "p\t1.1", b"ab\xe9.1", f"{real}.{10**40}",
                       f"{real}.", f"{real}.-1", f"{real}.1e3", "." * 50, "9" * 8000):
            status, text = await refusal(peer, forged)
            assert status == 400, (forged, status, text)
            assert "Last-Event-ID" in text and len(text) < 400, text
        # Well formed but unknown: the store cannot tell a stream it never had from one whose
        # events all went (remembering every id ever issued would grow without bound).
        status, text = await refusal(peer, "x.1")
        assert status == 410 and "no longer kept, or never existed" in text
        gates.open("go")
        gates.open("finish")
        async with peer.get(priming.id) as (response, stream):  # the real id still resumes
            assert response.status_code == 200
            assert results(await collect(stream)) == [1, 2, 3, "relayed"]


async def test_many_resumes_of_one_stream_at_once_leave_one_connection_carrying_it(
    gates: Gates, http: httpx.AsyncClient
) -> None:
    async with legacy_session(app(gates), http) as (peer, recorder):
        async with peer.stream(peer.call("relay", "r")) as (_, stream):
            await asyncio.wait_for(anext(stream), TIMEOUT)
            seen = await asyncio.wait_for(anext(stream), TIMEOUT)

        async def resume() -> list[Any]:
            assert seen.id is not None
            async with peer.get(seen.id) as (response, events):
                assert response.status_code == 200
                return results(await collect(events))

        tasks = [asyncio.create_task(resume()) for _ in range(4)]
        ended: list[list[Any]] = []
        while len(ended) < 3:  # each resume ends the one it took the stream from
            done, _ = await asyncio.wait([t for t in tasks if not t.done()], timeout=TIMEOUT,
                                         return_when=asyncio.FIRST_COMPLETED)
            assert done, "a resume that was taken over did not end"
            ended += [t.result() for t in done]
        assert ended == [[], [], []]
        gates.open("go")
        gates.open("finish")
        (carrier,) = [t for t in tasks if not t.done()]
        assert await asyncio.wait_for(carrier, TIMEOUT) == [2, 3, "relayed"]
        assert all(r.complete for r in recorder.gets())


async def test_a_resume_taking_over_during_a_burst_of_writes_loses_and_repeats_nothing(
    gates: Gates, http: httpx.AsyncClient
) -> None:
    n = 300
    async with legacy_session(app(gates), http) as (peer, _):
        async with peer.stream(peer.call("burst", "b", n=n)) as (_, posted):
            seen = [await asyncio.wait_for(anext(posted), TIMEOUT) for _ in range(2)]
            gates.open("go")  # the tool writes progress 2..n as fast as it can
            seen += [await asyncio.wait_for(anext(posted), TIMEOUT) for _ in range(3)]
            last = seen[-1].id
            assert last is not None
            async with peer.get(last) as (response, resumed):  # the POST is still open
                assert response.status_code == 200
                rest = await collect(resumed)
        assert results(seen + rest) == [*range(1, n + 1), f"{n} sent"]
        ids = [e.id for e in seen + rest]
        assert len(set(ids)) == len(ids)


async def test_a_resume_racing_the_response_gets_every_message_once_whichever_comes_first(
    http: httpx.AsyncClient
) -> None:
    for _ in range(8):
        gates = Gates()
        gates.open("go")
        async with legacy_session(app(gates), http) as (peer, _):
            async with peer.stream(peer.call("relay", "r")) as (_, stream):
                seen = [await asyncio.wait_for(anext(stream), TIMEOUT) for _ in range(2)]
            await gates.wait("sent")
            gates.open("finish")  # the response goes out as the client comes back
            last = seen[-1].id
            assert last is not None
            async with peer.get(last) as (response, stream):
                assert response.status_code == 200
                rest = await collect(stream)
            assert results(seen + rest) == [1, 2, 3, "relayed"]


async def test_cancelling_a_request_while_a_get_carries_its_stream_ends_that_get(
    gates: Gates, http: httpx.AsyncClient
) -> None:
    async with legacy_session(app(gates), http) as (peer, recorder):
        message = peer.call("relay", "r")
        async with peer.stream(message) as (_, stream):
            priming = await asyncio.wait_for(anext(stream), TIMEOUT)
        assert priming.id is not None
        async with peer.get(priming.id) as (_, stream):
            assert results([await asyncio.wait_for(anext(stream), TIMEOUT)]) == [1]
            cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                      "params": {"requestId": message["id"]}}
            assert (await peer.post(cancel)).status_code == 202
            ending = await collect(stream)
        assert len(ending) == 1 and ending[0].data == "" and ending[0].id  # the end, no response
        await gates.wait("cancelled")
        assert recorder.gets()[-1].complete
        async with peer.get(ending[0].id) as (_, stream):  # nothing follows the end
            assert await collect(stream) == []


async def test_a_stream_resumed_on_a_get_still_gets_its_response_once_shutdown_begins(
    gates: Gates, http: httpx.AsyncClient
) -> None:
    application = app(gates)
    async with legacy_session(application, http) as (peer, _):
        async with peer.stream(peer.call("relay", "r")) as (_, stream):
            priming = await asyncio.wait_for(anext(stream), TIMEOUT)
        assert priming.id is not None
        async with peer.get(priming.id) as (_, stream):
            assert results([await asyncio.wait_for(anext(stream), TIMEOUT)]) == [1]
            # The ASGI server calls this as it stops accepting connections, then lets running
            # requests finish: the one this GET carries must still reach its client.
            application.close()
            gates.open("go")
            gates.open("finish")
            assert results(await collect(stream)) == [2, 3, "relayed"]


class FailingStore(MemoryEventStore):
    """A shared store that goes down as a stream's last event is kept."""

    async def append(self, session_id: str, stream_id: str, data: bytes, *,
                     final: bool = False) -> str:
        if final:
            raise ConnectionError("event store unreachable")
        return await super().append(session_id, stream_id, data, final=final)


async def test_a_stream_whose_store_fails_at_the_end_is_not_kept_by_its_session(
    gates: Gates, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    application = app(gates, event_store=FailingStore())
    legacy = application._routes[SESSION].sessions  # type: ignore[attr-defined]
    gates.open("go")
    gates.open("finish")
    async with legacy_session(application, http) as (peer, recorder):
        call = peer.call("relay", "r")
        async with peer.stream(call) as (_, stream):
            events = await collect(stream)
        # The response could not be kept: the stream ends with the request's error instead.
        assert orjson.loads(events[-1].data) == {"jsonrpc": "2.0", "id": call["id"], "error": {
            "code": -32603, "message": "Internal error while serving tools/call"}}
        assert legacy._live == {}  # no stream, no exchange left behind for the session
        # That last event went out without an id (the store kept none); nothing else was wrong.
        assert [f.split(": Event(")[0] for f in recorder.failures] == [
            "POST a 2025-11-25 message went out without an event id"], recorder.failures
        recorder.failures.clear()


async def test_a_configured_session_store_is_used_even_while_it_is_empty(
    gates: Gates, http: httpx.AsyncClient
) -> None:
    sessions = MemorySessionStore(max_sessions=1)
    async with serving(app(gates, session_store=sessions)) as (url, _):
        first, second = LegacyClient(url, http), LegacyClient(url, http)
        await first.initialize()
        await second.initialize()  # its bound of one session ends the first
        assert len(sessions) == 1
        assert (await first.post(first.request("ping"))).status_code == 404
        assert (await second.post(second.request("ping"))).status_code == 200


async def test_shutdown_closes_a_session_stream_with_an_id_and_a_retry_to_resume_it_by(
    gates: Gates, http: httpx.AsyncClient
) -> None:
    application = app(gates, sse_retry_ms=250)
    async with legacy_session(application, http) as (peer, _):
        async with peer.get() as (_, stream):
            priming = await asyncio.wait_for(anext(stream), TIMEOUT)
            application.close()
            (closing,) = await collect(stream)
        assert closing.data == "" and closing.retry == 250
        assert closing.stream == priming.stream and closing.seq > priming.seq
