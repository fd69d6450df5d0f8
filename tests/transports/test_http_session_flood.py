"""A flood of 2025-11-25 sessions against a real uvicorn on 127.0.0.1: the creation rate per
client (429), the live sessions per client, the store's policy when full (an anonymous create
never ends an authenticated session; 503 when nothing may make room), idle expiry, and which
address a client counts as (forwarded headers only from a proxy named trusted).

Clients come from distinct loopback addresses (127.0.0.2, 127.0.0.3, ...), each its own client;
an authenticated one carries a bearer token that a small middleware, as an authentication
middleware would, turns into the request's principal (`PRINCIPAL_SCOPE_KEY`). Every message
either side sends is schema-checked (`Peer`). The creation rate in these tests is tiny (one
token per 1000 s) so a burst is used up whatever the machine's speed; the store policy is
also tested without a server, on its own clock.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from helpers.transports.http_peer import Peer, Reply
from helpers.transports.listening import BOUND, listening
from helpers.wire import LEGACY

from mcpkit import Server
from mcpkit.legacy.session_quota import SessionLimits
from mcpkit.protocol.http import PRINCIPAL_SCOPE_KEY
from mcpkit.store.legacy.sessions import MemorySessionStore, SessionOwner
from mcpkit.transports.http_server.limits import ListenerLimits

SMALL = SessionLimits(per_client=3, rate_per_s=0.001, burst=2, max_sessions=5,
                      limit_loopback=True)
"""Small limits, held for loopback clients too: every client of these tests is one."""


def app_with(**options: Any) -> Any:
    """A server's app (`server.asgi(**options)`) behind a bearer-token middleware."""
    server = Server("flood", "1.0.0")

    @server.tool()
    def echo(text: str) -> str:
        """Answer at once."""
        return text

    inner = server.asgi(**options)

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            token = dict(scope["headers"]).get(b"authorization", b"")
            if token.startswith(b"Bearer "):
                scope = {**scope, PRINCIPAL_SCOPE_KEY: token[7:].decode()}
        await inner(scope, receive, send)

    return app


class Client:
    """One 2025-11-25 client from its own loopback address (and token, when it has one)."""

    def __init__(self, url: str, address: str = "127.0.0.1", token: str | None = None,
                 headers: dict[str, str] | None = None) -> None:
        extra = {**({"Authorization": f"Bearer {token}"} if token else {}), **(headers or {})}
        self.http = httpx.AsyncClient(
            timeout=BOUND, headers=extra,
            transport=httpx.AsyncHTTPTransport(local_address=address))
        self.url = url

    async def open(self) -> tuple[Peer, Reply]:
        """Send initialize; once it opened a session, notifications/initialized too."""
        peer = Peer(self.url, self.http)
        peer.revision = LEGACY
        reply = await peer.post(peer.request_message("initialize", {
            "protocolVersion": LEGACY, "capabilities": {},
            "clientInfo": {"name": "flood", "version": "1.0"}}, with_meta=False), mirror=False)
        if reply.status == 200:
            peer.session = reply.headers["mcp-session-id"]
            note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            assert (await peer.post(note, mirror=False)).status == 202
        return peer, reply

    async def session(self) -> Peer:
        peer, reply = await self.open()
        assert reply.status == 200, reply.body
        return peer

    async def aclose(self) -> None:
        await self.http.aclose()


async def answers(peer: Peer) -> int:
    """The status a session's tools/list gets: 200 while the session lives, 404 once ended."""
    reply = await peer.post(peer.request_message("tools/list", with_meta=False), mirror=False)
    if reply.status == 200:
        assert [tool["name"] for tool in reply.message["result"]["tools"]] == ["echo"]
    return reply.status


@pytest.fixture
async def clients() -> AsyncIterator[list[Client]]:
    made: list[Client] = []
    yield made
    for client in made:
        await client.aclose()


def refused(reply: Reply, status: int) -> int:
    """Check a refused initialize: `status`, a JSON-RPC error naming why, and a Retry-After;
    returns the Retry-After."""
    assert reply.status == status, reply.body
    assert reply.error["code"] in (-32600, -32603)
    retry = int(reply.headers["retry-after"])
    assert retry >= 1
    return retry


async def test_an_anonymous_flood_cannot_end_an_authenticated_session(
        clients: list[Client]) -> None:
    async with listening(app_with(sessions=SMALL)) as site:
        alice = Client(site.url, token="alice")
        clients.append(alice)
        hers = await alice.session()
        first: list[Peer] = []
        for n in range(2, 10):  # eight anonymous clients, each over its burst
            flood = Client(site.url, f"127.0.0.{n}")
            clients.append(flood)
            first.append(await flood.session())
            await flood.session()
            _, third = await flood.open()
            assert "opens sessions faster than" in third.error["message"]
            assert refused(third, 429) >= 1
        # Sixteen anonymous sessions went through a store of five: the oldest anonymous ones
        # made room, never Alice's.
        assert await answers(hers) == 200
        assert await answers(first[0]) == 404
        assert await answers(first[-1]) == 200


async def test_a_store_of_authenticated_sessions_refuses_anonymous_creates_with_503(
        clients: list[Client]) -> None:
    async with listening(app_with(sessions=SMALL)) as site:
        theirs = []
        for name in ("p1", "p2", "p3", "p4", "p5"):
            client = Client(site.url, token=name)
            clients.append(client)
            theirs.append(await client.session())
        anonymous = Client(site.url, "127.0.0.2")
        clients.append(anonymous)
        _, reply = await anonymous.open()
        assert refused(reply, 503) == SMALL.full_retry_after_s
        assert "none can make room for an anonymous one" in reply.error["message"]
        assert [await answers(peer) for peer in theirs] == [200] * 5
        # An authenticated create may end the least recently used authenticated session.
        late = Client(site.url, token="p6")
        clients.append(late)
        await late.session()
        assert [await answers(peer) for peer in theirs] == [404, 200, 200, 200, 200]


async def test_a_client_over_its_session_limit_ends_only_its_own_oldest(
        clients: list[Client]) -> None:
    limits = SessionLimits(per_client=3, rate_per_s=0.001, burst=10, max_sessions=50,
                           limit_loopback=True)
    async with listening(app_with(sessions=limits)) as site:
        other = Client(site.url, "127.0.0.3")
        busy = Client(site.url, "127.0.0.2")
        clients += [other, busy]
        kept = await other.session()
        mine = [await busy.session() for _ in range(4)]
        assert [await answers(peer) for peer in mine] == [404, 200, 200, 200]
        assert await answers(kept) == 200


async def test_a_session_idle_longer_than_session_idle_s_ends(clients: list[Client]) -> None:
    async with listening(app_with(session_idle_s=1.0)) as site:
        client = Client(site.url)
        clients.append(client)
        peer = await client.session()
        assert await answers(peer) == 200
        await asyncio.sleep(1.5)  # past the idle time: only ever more certainly so
        reply = await peer.post(peer.request_message("tools/list", with_meta=False),
                                mirror=False)
        assert reply.status == 404 and "ended or expired" in reply.error["message"]


@pytest.mark.parametrize("trusted", [(), ("127.0.0.1",)])
async def test_x_forwarded_for_counts_only_from_a_trusted_proxy(
        clients: list[Client], trusted: tuple[str, ...]) -> None:
    limits = SessionLimits(per_client=10, rate_per_s=0.001, burst=2, limit_loopback=True)
    async with listening(app_with(sessions=limits),
                         ListenerLimits(trusted_proxies=trusted)) as site:
        statuses = []
        for n in range(3):
            client = Client(site.url, headers={"X-Forwarded-For": f"198.51.100.{n + 1}"})
            clients.append(client)
            statuses.append((await client.open())[1].status)
    # Untrusted, the three are one client (127.0.0.1) over its burst; through a trusted
    # proxy, three clients.
    assert statuses == ([200, 200, 429] if not trusted else [200, 200, 200])


async def test_by_default_clients_on_this_host_are_not_rate_limited_but_the_policy_holds(
        clients: list[Client]) -> None:
    limits = SessionLimits(per_client=2, rate_per_s=0.001, burst=2, max_sessions=3)
    async with listening(app_with(sessions=limits)) as site:
        alice = Client(site.url, token="alice")
        local = Client(site.url, "127.0.0.2")
        clients += [alice, local]
        hers = [await alice.session(), await alice.session()]
        _, limited = await alice.open()  # a principal is limited wherever it connects from
        refused(limited, 429)
        mine = [await local.session() for _ in range(4)]  # past burst and per-client
        assert [await answers(peer) for peer in mine] == [404, 404, 404, 200]
        assert [await answers(peer) for peer in hers] == [200, 200]


# -- the store's policy, without a server -----------------------------------------------------

ANNA = SessionOwner("principal:anna", authenticated=True)


def owner(n: int) -> SessionOwner:
    return SessionOwner(f"address:10.0.0.{n}")


async def test_the_store_ends_anonymous_sessions_first_and_never_for_an_anonymous_create(
        ) -> None:
    now = [0.0]
    store: MemorySessionStore[str] = MemorySessionStore(max_sessions=3, clock=lambda: now[0])
    assert await store.create("anna-1", "a", ANNA)
    assert await store.create("anon-1", "b", owner(1))
    assert await store.create("anna-2", "c", ANNA)
    now[0] += 1
    assert await store.create("anon-2", "d", owner(2))  # ends anon-1, the one anonymous
    assert await store.load("anon-1") is None
    assert await store.load("anna-1") == "a"
    assert await store.create("anna-3", "e", ANNA)  # ends anon-2
    assert await store.load("anon-2") is None
    assert not await store.create("anon-3", "f", owner(3))  # nothing it may end
    assert len(store) == 3 and await store.load("anon-3") is None
    # The least recently used authenticated session makes room for an authenticated create.
    await store.load("anna-1")
    assert await store.create("bo-1", "g", SessionOwner("principal:bo", authenticated=True))
    assert await store.load("anna-2") is None and await store.load("anna-1") == "a"


async def test_an_owner_at_its_limit_ends_its_own_least_recently_used() -> None:
    store: MemorySessionStore[str] = MemorySessionStore(max_sessions=10)
    for name in ("x1", "x2", "x3"):
        assert await store.create(name, name, owner(1), owner_limit=3)
    assert await store.create("y1", "y1", owner(2), owner_limit=3)
    await store.load("x1")
    assert await store.create("x4", "x4", owner(1), owner_limit=3)
    assert await store.load("x2") is None
    assert store.owned(owner(1)) == 3 and store.owned(owner(2)) == 1
    assert await store.delete("x1") and store.owned(owner(1)) == 2


async def test_idle_sessions_are_swept_before_anything_is_ended() -> None:
    now = [0.0]
    store: MemorySessionStore[str] = MemorySessionStore(max_sessions=2, idle_s=10,
                                                        clock=lambda: now[0])
    assert await store.create("anna", "a", ANNA)
    assert await store.create("old", "b", owner(1))
    now[0] = 11.0
    assert await store.create("new", "c", owner(2))  # both idle ones swept: nothing refused
    assert len(store) == 1 and store.owned(ANNA) == 0


# -- the loopback exemption: what it allows, what it does not ---------------------------------


async def test_a_web_page_cannot_flood_through_the_loopback_exemption(
        clients: list[Client]) -> None:
    """The browser reaches loopback too, but its requests carry their page's Origin: refused
    with 403 before any session is made, so the exemption is a local process's alone."""
    limits = SessionLimits(per_client=2, rate_per_s=0.001, burst=2, max_sessions=3)
    async with listening(app_with(sessions=limits)) as site:
        earlier = Client(site.url, "127.0.0.2")
        page = Client(site.url, "127.0.0.3", headers={"Origin": "http://evil.example"})
        clients += [earlier, page]
        theirs = await earlier.session()
        statuses = {(await page.open())[1].status for _ in range(10)}
        assert statuses == {403}
        assert await answers(theirs) == 200


@pytest.mark.parametrize("limit_loopback", [False, True])
async def test_limit_loopback_keeps_a_local_flood_from_ending_another_clients_session(
        clients: list[Client], limit_loopback: bool) -> None:
    """By default an anonymous process on this host opens sessions unlimited (benchmarks,
    test suites, a proxy here that sends no X-Forwarded-For), so once the store is full its
    flood ends the least recently used anonymous session, another client's included;
    `limit_loopback=True` gives it the share of any client, and the flood ends only its own."""
    limits = SessionLimits(per_client=2, rate_per_s=0.001, burst=2, max_sessions=3,
                           limit_loopback=limit_loopback)
    async with listening(app_with(sessions=limits)) as site:
        earlier = Client(site.url, "127.0.0.2")
        flood = Client(site.url, "127.0.0.3")
        clients += [earlier, flood]
        theirs = await earlier.session()
        opened = [(await flood.open())[1].status for _ in range(6)]
        if limit_loopback:
            assert opened == [200, 200, 429, 429, 429, 429]
            assert await answers(theirs) == 200
        else:
            assert opened == [200] * 6
            assert await answers(theirs) == 404
