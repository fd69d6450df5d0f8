"""A shared store stopped, hung and slowed under a running backend and a running server, on
PostgreSQL and on Redis both.

Down (stopped) or hung (its processes stopped with SIGSTOP: connections are still accepted
and nothing is answered), every seam fails within the store's deadline with
`StoreUnavailableError` (a real HTTP server answers 503 with -32603 naming the engine, and
keeps serving what needs no store); once it is back the same pools serve again with no
restart, and PostgreSQL still holds every write it acknowledged before the outage (this test
Redis keeps nothing on disk, `--save ''`). Slow (a proxy that holds every reply back), a store
that answers within the deadline is waited for, and one that answers later fails the same way
as a hung one."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import httpx
import pytest
from backends import SHARED, Clock, make_url
from helpers.transports.http_peer import Peer
from helpers.transports.listening import listening
from helpers.wire import LEGACY
from redeem_server import make_server

from mcpkit import Context
from mcpkit.errors import StoreUnavailableError
from mcpkit.ext.tasks.stores import on_backend
from mcpkit.protocol.extensions import TASKS
from mcpkit.server.options import ServerOptions
from mcpkit.server.sealing import new_state_key
from mcpkit.store.legacy.opening import event_store, session_store
from mcpkit.store.urls import open_backend

BOUND = 60.0
"""The longest one store call may take before the test fails (it must not hang)."""
DEADLINE = 1.0
"""The store URLs' `timeout=` in the hung and slow tests: past it, an operation fails."""
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
    sessions = session_store(backend, Note)
    events = event_store(backend)
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


# -- a store that hangs or answers slowly --------------------------------------------------------


def with_deadline(url: str, seconds: float = DEADLINE) -> str:
    return f"{url}{'&' if '?' in url else '?'}timeout={seconds:g}"


async def test_every_seam_fails_within_the_deadline_while_hung_and_recovers_after(
        kind: str, request: pytest.FixtureRequest, tmp_path: Path, restartable: Any) -> None:
    url = with_deadline(make_url(kind, request, tmp_path))
    clock = Clock()
    backend = open_backend(url, clock=clock)
    sessions = session_store(backend, Note)
    events = event_store(backend)
    tasks = on_backend(backend)
    try:
        assert await backend.store.add("once:before", b"kept", clock.now + 600)
        assert await sessions.create("s-before", Note("n"))
        await events.append("s-before", "st", b"one")
        assert await tasks.get("t-none") is None
        restartable.service(kind).pause()
        calls = [backend.store.add("once:during", b"", clock.now + 600),
                 backend.store.get("once:before"), sessions.load("s-before"),
                 sessions.create("s-during", Note("m")), events.append("s-before", "st", b"x"),
                 tasks.get("t-none")]
        for call in calls:  # each one bounded by the deadline, not by TCP's minutes
            error = await _fails_fast(call)
            assert error.code == -32603 and error.data == {"unavailable": kind}
            assert "cannot be reached" in str(error)
        restartable.service(kind).resume()
        assert await asyncio.wait_for(backend.store.add("once:after", b"", clock.now + 600),
                                      BOUND)
        assert await backend.store.get("once:before") == b"kept"
        assert await sessions.load("s-before") == Note("n")
    finally:
        restartable.ensure_running()
        await tasks.close()
        await backend.close()


async def test_a_server_answers_fast_while_its_store_hangs(
        kind: str, request: pytest.FixtureRequest, tmp_path: Path, restartable: Any) -> None:
    """A task's creation and a legacy initialize need the store: each answers within the
    deadline as it does while the store is down (-32603 naming the engine), while a call that
    needs no store is answered as usual."""
    server = make_server(ServerOptions(store=with_deadline(make_url(kind, request, tmp_path)),
                                       state_keys=(new_state_key(),)))

    @server.tool(task="required")
    async def later(ctx: Context) -> str:
        return "done"

    tasks = {CAPS_KEY: {"extensions": {TASKS: {}}}}
    try:
        async with listening(server.asgi()) as srv, httpx.AsyncClient(timeout=BOUND) as http:
            peer = Peer(srv.url, http)
            created = await peer.post(peer.request_message(
                "tools/call", {"name": "later", "arguments": {}}, **tasks))
            assert created.message["result"]["resultType"] == "task"
            restartable.service(kind).pause()
            task = await peer.post(peer.request_message(
                "tools/call", {"name": "later", "arguments": {}}, **tasks))
            legacy = Peer(srv.url, http)
            legacy.revision = LEGACY
            opened = await legacy.post(legacy.request_message("initialize", {
                "protocolVersion": LEGACY, "capabilities": {},
                "clientInfo": {"name": "hung", "version": "1"}}, with_meta=False), mirror=False)
            # What a store that is down gives: 503 for a modern request; a legacy request's
            # error is HTTP 200, as every error of that era (legacy/http_session.py).
            for reply, status in ((task, 503), (opened, 200)):
                assert reply.status == status
                assert reply.error["code"] == -32603
                assert reply.error["data"] == {"unavailable": kind}
            echoed = await peer.post(peer.request_message(
                "tools/call", {"name": "echo", "arguments": {"text": "still up"}}))
            assert echoed.message["result"]["content"][0]["text"] == "still up"
            restartable.service(kind).resume()
            again = await peer.post(peer.request_message(
                "tools/call", {"name": "later", "arguments": {}}, **tasks))
            assert again.message["result"]["resultType"] == "task"
    finally:
        restartable.ensure_running()
        assert server.sealer.backend is not None
        await server.sealer.backend.close()


class SlowProxy:
    """A TCP relay on 127.0.0.1 in front of a store that holds each reply back `delay`
    seconds before passing it on: a store that is slow, not down."""

    def __init__(self, port: int, delay: float) -> None:
        self.port = port
        self.delay = delay
        self._server: asyncio.Server | None = None
        self._pipes: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> int:
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        return int(self._server.sockets[0].getsockname()[1])

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for pipe in self._pipes:
            pipe.cancel()
        await asyncio.gather(*self._pipes, return_exceptions=True)

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.port)
        for pipe in (self._pipe(reader, up_writer, 0.0), self._pipe(up_reader, writer,
                                                                    self.delay)):
            task = asyncio.create_task(pipe)
            self._pipes.add(task)
            task.add_done_callback(self._pipes.discard)

    @staticmethod
    async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter,
                    delay: float) -> None:
        try:
            while data := await source.read(65536):
                if delay:
                    await asyncio.sleep(delay)
                sink.write(data)
                await sink.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            sink.close()


def through(url: str, port: int) -> str:
    """`url` with its port replaced by `port`."""
    scheme, _, rest = url.partition("://")
    host_port, _, tail = rest.partition("/")
    userinfo, at, host = host_port.rpartition("@")
    return f"{scheme}://{userinfo}{at}{host.rsplit(':', 1)[0]}:{port}/{tail}"


@pytest.mark.parametrize("slow", [False, True])
async def test_a_slow_store_is_waited_for_within_the_deadline_and_refused_past_it(
        kind: str, request: pytest.FixtureRequest, tmp_path: Path, slow: bool) -> None:
    """Each reply held back a twentieth of the deadline (an operation is several round trips):
    a single-use record is still kept and read back. Held back past the deadline: the same
    error as a hung store."""
    base = make_url(kind, request, tmp_path)
    service = request.getfixturevalue("postgres_service" if kind == "postgresql"
                                      else "redis_service")
    delay = DEADLINE * (3.0 if slow else 0.05)
    async with SlowProxy(service.port, delay) as port:
        backend = open_backend(with_deadline(through(base, port)), clock=Clock())
        try:
            if slow:
                error = await _fails_fast(backend.store.add("once:slow", b"v", 2e9))
                assert error.data == {"unavailable": kind}
            else:
                assert await asyncio.wait_for(backend.store.add("once:slow", b"v", 2e9), BOUND)
                assert await asyncio.wait_for(backend.store.get("once:slow"), BOUND) == b"v"
        finally:
            await backend.close()


async def test_the_first_read_of_the_state_keys_is_bounded_while_the_store_hangs(
        kind: str, request: pytest.FixtureRequest, tmp_path: Path, restartable: Any) -> None:
    """Sealing is synchronous, so the shared key ring is read by a thread the caller waits
    for: while the store hangs, at most the deadline, then the same error as a down store."""
    backend = open_backend(with_deadline(make_url(kind, request, tmp_path)), clock=Clock())
    try:
        restartable.service(kind).pause()
        with pytest.raises(StoreUnavailableError) as caught:
            await asyncio.wait_for(asyncio.to_thread(backend.keys.ring, 1e9), BOUND)
        assert caught.value.data == {"unavailable": kind}
        restartable.service(kind).resume()
        for _ in range(20):  # the read begun while it hung may still end in failure
            try:
                await asyncio.wait_for(asyncio.to_thread(backend.keys.ring, 1e9), BOUND)
                break
            except StoreUnavailableError:
                continue
        else:
            raise AssertionError("the key ring was never read once the store was back")
    finally:
        restartable.ensure_running()
        await backend.close()
