"""The resource server's `JWTVerifier` against a real key server (`rs_peers.KeyServer` under
uvicorn on 127.0.0.1) that is slow, down, never done, re-keyed under the same `kid`, or signs
what an access token is not (and an introspection endpoint that never finishes its answer);
the protected app under uvicorn too. Counts, never clocks: each
test waits on the requests it made and the fetches the key server saw."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import pytest
from helpers.auth.rs_peers import ISSUER, Issuer, KeyServer, key_server, protected, whoami_server
from helpers.transports.http_peer import Peer, Reply

import mcpkit
from mcpkit.auth.server_config import ProtectedResource
from mcpkit.transports.http_server.auth_introspection import IntrospectionVerifier
from mcpkit.transports.http_server.auth_jwt import JWTVerifier

BOUND = 30.0
"""The longest any group of requests here may take before the test fails."""


def make_server() -> mcpkit.Server:
    return whoami_server("jwks")


class Entered:
    """The protected app, counting the requests that reach it, so a test can wait until all
    of its requests are inside before it lets the key server answer."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.count = 0
        self.wanted = 0
        self.reached = asyncio.Event()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.count += 1
            if self.count >= self.wanted:
                self.reached.set()
        await self.app(scope, receive, send)


class Clock:
    """The verifier's clock, moved by the test."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def call(url: str, token: str) -> Reply:
    async with httpx.AsyncClient(timeout=BOUND) as http:
        peer = Peer(url, http)
        return await peer.post(peer.request_message("tools/call", {
            "name": "whoami", "arguments": {}}), {"Authorization": f"Bearer {token}"})


def subject(reply: Reply) -> str:
    assert reply.status == 200, (reply.status, reply.headers)
    text: str = reply.message["result"]["content"][0]["text"]
    return text


def www_authenticate(reply: Reply) -> str:
    assert reply.status == 401, reply.status
    return str(reply.headers["www-authenticate"])


Serve = Callable[[Any], Awaitable[tuple[str, "Entered"]]]


@pytest.fixture
async def served() -> AsyncIterator[Serve]:
    """Serve a protected app checking tokens with the verifier given; (its URL, the app)."""
    async with contextlib.AsyncExitStack() as stack:
        async def serve(verifier: Any) -> tuple[str, Entered]:
            app = Entered(make_server().asgi(path="/mcp", auth=ProtectedResource(
                ISSUER, verifier=verifier)))
            return await stack.enter_async_context(protected(app)), app

        yield serve


@contextlib.asynccontextmanager
async def released(keys: KeyServer) -> AsyncIterator[None]:
    """Whatever happens in the block, the key server's held answers go at its end, so it can
    shut down."""
    try:
        yield
    finally:
        assert keys.hold is not None
        keys.hold.set()


async def gather_inside(app: Entered, calls: list[Awaitable[Reply]], keys: KeyServer
                        ) -> list[Reply]:
    """Run `calls` at once; release the key server once every one is inside the app."""
    app.wanted = app.count + len(calls)
    app.reached.clear()
    tasks = [asyncio.ensure_future(c) for c in calls]
    async with asyncio.timeout(BOUND):
        await app.reached.wait()
        assert keys.hold is not None
        keys.hold.set()
        return list(await asyncio.gather(*tasks))


async def test_concurrent_requests_share_one_fetch_of_a_slow_key_set(served: Serve) -> None:
    issuer = Issuer()
    async with key_server(issuer, hold=asyncio.Event()) as keys:
        url, app = await served(JWTVerifier(keys.url + "/jwks"))
        token = issuer.token(url)
        replies = await gather_inside(app, [call(url, token) for _ in range(6)], keys)
        assert [subject(r) for r in replies] == ["alice"] * 6
        assert keys.jwks_fetches == 1


async def test_a_key_set_that_fails_is_503_for_every_waiter_then_for_the_backoff_alone(
        served: Serve) -> None:
    issuer = Issuer()
    clock = Clock()
    async with key_server(issuer, hold=asyncio.Event(), jwks_status=500) as keys:
        url, app = await served(JWTVerifier(keys.url + "/jwks", failure_backoff_s=60,
                                            clock=clock))
        token = issuer.token(url)
        replies = await gather_inside(app, [call(url, token) for _ in range(6)], keys)
        assert [r.status for r in replies] == [503] * 6
        assert all("www-authenticate" not in r.headers for r in replies)
        assert [r.headers["retry-after"] for r in replies] == ["60"] * 6
        assert keys.jwks_fetches == 1
        clock.now += 30  # within the backoff: answered at once, nothing fetched
        again = await call(url, token)
        assert (again.status, again.headers["retry-after"]) == (503, "30")
        assert keys.jwks_fetches == 1
        keys.jwks_status = 200
        clock.now += 31  # past it: one fetch, and the keys are back
        assert subject(await call(url, token)) == "alice"
        assert keys.jwks_fetches == 2


async def test_keys_past_their_lifetime_serve_while_one_fetch_renews_them(
        served: Serve) -> None:
    issuer = Issuer()
    clock = Clock()
    async with key_server(issuer, cache_control="max-age=60") as keys:
        url, _ = await served(JWTVerifier(keys.url + "/jwks", clock=clock))
        token = issuer.token(url)
        assert subject(await call(url, token)) == "alice"
        keys.hold, keys.arrived = asyncio.Event(), asyncio.Event()  # slow from now on
        clock.now += 61
        async with released(keys), asyncio.timeout(BOUND):
            assert [subject(r) for r in await asyncio.gather(
                *(call(url, token) for _ in range(3)))] == ["alice"] * 3
            await keys.arrived.wait()  # the renewal, held while the three were answered
        assert keys.jwks_fetches == 2


async def test_a_key_set_that_never_answers_ends_every_wait_with_one_fetch(
        served: Serve) -> None:
    issuer = Issuer()
    async with key_server(issuer, hold=asyncio.Event()) as keys:
        url, _ = await served(JWTVerifier(keys.url + "/jwks", timeout_s=0.5))
        token = issuer.token(url)
        async with released(keys), asyncio.timeout(BOUND):
            replies = await asyncio.gather(*(call(url, token) for _ in range(3)))
        assert [r.status for r in replies] == [503] * 3
        assert keys.jwks_fetches == 1


async def test_a_key_set_sent_a_byte_at_a_time_is_cut_off_at_the_timeout(
        served: Serve) -> None:
    """Each byte comes well within the read timeout, so only a bound on the whole fetch
    ends it."""
    issuer = Issuer()
    async with key_server(issuer, hold=asyncio.Event(), trickle=True) as keys:
        url, _ = await served(JWTVerifier(keys.url + "/jwks", timeout_s=0.5))
        async with released(keys), asyncio.timeout(BOUND):
            reply = await call(url, issuer.token(url))
        assert reply.status == 503


async def test_an_introspection_answer_sent_a_byte_at_a_time_is_cut_off_at_the_timeout(
        served: Serve) -> None:
    issuer = Issuer()
    async with key_server(issuer, hold=asyncio.Event(), trickle=True) as keys:
        url, _ = await served(IntrospectionVerifier(keys.url + "/introspect", "rs", "rs-secret",
                                                    issuer=ISSUER, timeout_s=0.5))
        async with released(keys), asyncio.timeout(BOUND):
            reply = await call(url, "opaque-1")
        assert reply.status == 503
        assert keys.introspections == 1


async def test_a_key_set_over_512_kib_is_not_read_to_its_end(served: Serve) -> None:
    issuer = Issuer()
    async with key_server(issuer, padding=600 * 1024) as keys:
        url, _ = await served(JWTVerifier(keys.url + "/jwks"))
        assert (await call(url, issuer.token(url))).status == 503


async def test_a_key_replaced_under_its_kid_is_fetched_once_and_forgeries_fetch_no_more(
        served: Serve) -> None:
    issuer = Issuer()
    async with key_server(issuer) as keys:
        url, _ = await served(JWTVerifier(keys.url + "/jwks", refresh_interval_s=3600))
        assert subject(await call(url, issuer.token(url))) == "alice"
        assert keys.jwks_fetches == 1
        kid = issuer.rekey()
        assert subject(await call(url, issuer.token(url, subject="bob"))) == "bob"
        assert keys.jwks_fetches == 2
        for _ in range(3):
            forged = issuer.token(url, key=Issuer().keys[0], kid=kid)
            assert 'the token\'s signature does not verify' in www_authenticate(
                await call(url, forged))
        assert keys.jwks_fetches == 2


@pytest.mark.parametrize(("typ", "accepted"), [
    ("at+jwt", True), ("application/at+jwt", True), ("AT+JWT", True),
    ("JWT", False), (None, False), ("dpop+jwt", False),
])
async def test_only_a_token_marked_as_an_access_token_is_taken(
        served: Serve, typ: str | None, accepted: bool) -> None:
    issuer = Issuer()
    async with key_server(issuer) as keys:
        url, _ = await served(JWTVerifier(keys.url + "/jwks"))
        reply = await call(url, issuer.token(url, typ=typ))
        if accepted:
            assert subject(reply) == "alice"
        else:
            assert "error=\"invalid_token\"" in www_authenticate(reply)
            assert "RFC 9068" in reply.headers["www-authenticate"]


@pytest.mark.parametrize("typ", ["JWT", None])
async def test_typ_none_takes_tokens_of_an_authorization_server_that_does_not_mark_them(
        served: Serve, typ: str | None) -> None:
    issuer = Issuer()
    async with key_server(issuer) as keys:
        url, _ = await served(JWTVerifier(keys.url + "/jwks", typ=None))
        assert subject(await call(url, issuer.token(url, typ=typ))) == "alice"


@pytest.mark.parametrize("claim", [
    '"exp":NaN', '"exp":Infinity', '"exp":1e400', '"exp":-Infinity',
    '"exp":1' + "0" * 400, '"exp":4102444800,"nbf":NaN', '"exp":4102444800,"iat":NaN',
    '"exp":-5',
])
async def test_a_signed_token_whose_times_are_no_times_is_refused(
        served: Serve, claim: str) -> None:
    issuer = Issuer()
    async with key_server(issuer) as keys:
        url, _ = await served(JWTVerifier(keys.url + "/jwks"))
        token = issuer.sign(
            f'{{"iss":"{ISSUER}","sub":"mallory","aud":"{url}",{claim}}}'.encode())
        challenge = www_authenticate(await call(url, token))
        name = claim.rsplit(",", 1)[-1].split(":")[0].strip('"')
        assert (f'error_description="the token\'s {name} is not a time: a finite number of '
                'seconds from 1970 to 9999"') in challenge
