"""The OAuth client's token cache as a state machine (Hypothesis `RuleBasedStateMachine`),
checked step by step against a small model of what it must do.

The system is one real `OAuth` flow and its `MemoryTokenStorage`, with httpx driving it as the
HTTP transport does, against `Field`: two small authorization servers (`A` and `B`, each with
its metadata, authorize and token endpoints, refresh tokens that work once) and a resource
server that trusts whichever one its Protected Resource Metadata names now, answers 401 for
anything else, and 403 `insufficient_scope` when a call needs `mcp:admin`. Everything is in
process (`httpx.ASGITransport`) and the clock is the machine's, so hours pass in a step.

The rules: a call that needs basic use or the admin scope, time passing (within and past the
client's 30 s early-refresh margin and the tokens' life), the AS forgetting its access
tokens, the AS refusing refreshes (or not), the resource moving to the other AS. The model
says, for each call, which requests the authorization servers must see in order (a refresh,
an authorization with its scopes, a code redeemed) and what the client then holds. Checked
after every step: every call is answered; the servers saw exactly what the model says; no
refresh token is presented after it was used (rotation), no expired access token is sent, and
the client's token is one the current AS issued.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import httpx
from helpers.transports.resume_peer import request_body
from helpers.wire import MODERN, check_client_message, meta
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from mcpkit.store.tokens import MemoryTokenStorage
from mcpkit.transports.oauth.flow import OAuth

BASE = "http://127.0.0.1:8"
RESOURCE = f"{BASE}/mcp"
REDIRECT = "http://127.0.0.1:9/callback"
LIFETIME = 300
MARGIN = 30  # TokenSet.expired's early-refresh margin
READ, ADMIN = "mcp:read", "mcp:admin"


@dataclass
class AS:
    """One authorization server's memory: what it issued and what still works."""

    name: str
    refusing: bool = False
    access: dict[str, tuple[frozenset[str], float]] = field(default_factory=dict)
    refresh: dict[str, frozenset[str]] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)
    codes: dict[str, frozenset[str]] = field(default_factory=dict)


class Field:
    """The two authorization servers and the resource server, as one ASGI app."""

    def __init__(self, clock: Any) -> None:
        self.clock = clock
        self.servers = {"A": AS("A"), "B": AS("B")}
        self.current = "A"
        self.events: list[str] = []
        self.problems: list[str] = []
        self.serial = itertools.count(1)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        body = await request_body(receive)
        path, query = scope["path"], dict(parse_qsl(scope["query_string"].decode()))
        headers = {k.decode(): v.decode() for k, v in scope["headers"]}
        if path == "/mcp":
            return await self._resource(json.loads(body), headers, send)
        if path == "/.well-known/oauth-protected-resource/mcp":
            return await _json(send, 200, {"resource": RESOURCE,
                                           "authorization_servers": [f"{BASE}/{self.current}"]})
        if path.startswith("/.well-known/oauth-authorization-server/"):
            name = path.rsplit("/", 1)[1]
            issuer = f"{BASE}/{name}"
            return await _json(send, 200, {
                "issuer": issuer, "authorization_endpoint": f"{issuer}/authorize",
                "token_endpoint": f"{issuer}/token", "registration_endpoint": f"{issuer}/register",
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
                "authorization_response_iss_parameter_supported": True})
        name, _, endpoint = path.strip("/").partition("/")
        server = self.servers.get(name)
        if server is None:
            return await _json(send, 404, {})
        if endpoint == "register":
            return await _json(send, 201, {"client_id": f"client-{name}",
                                           "token_endpoint_auth_method": "none"})
        if endpoint == "authorize":
            scopes = frozenset(query.get("scope", "").split())
            self.events.append(f"authorize {name} {' '.join(sorted(scopes))}")
            code = f"code-{next(self.serial)}"
            server.codes[code] = scopes
            location = query["redirect_uri"] + "?" + urlencode(
                {"code": code, "state": query["state"], "iss": f"{BASE}/{name}"})
            return await _json(send, 302, {}, [(b"location", location.encode())])
        if endpoint == "token":
            return await self._token(server, dict(parse_qsl(body.decode())), send)
        return await _json(send, 404, {})

    async def _token(self, server: AS, form: dict[str, str], send: Any) -> None:
        if form.get("grant_type") == "authorization_code":
            scopes = server.codes.pop(form.get("code", ""), None)
            if scopes is None:
                self.problems.append("an unknown or used code was redeemed")
                return await _json(send, 400, {"error": "invalid_grant"})
            self.events.append(f"code {server.name}")
        else:
            token = form.get("refresh_token", "")
            if token in server.used:
                self.problems.append(f"a used refresh token was presented to {server.name}")
            if server.refusing or token not in server.refresh:
                self.events.append(f"refresh {server.name} refused")
                return await _json(send, 400, {"error": "invalid_grant"})
            scopes = server.refresh.pop(token)
            server.used.add(token)
            self.events.append(f"refresh {server.name}")
        n = next(self.serial)
        access, refresh = f"{server.name}-access-{n}", f"{server.name}-refresh-{n}"
        server.access[access] = (scopes, self.clock() + LIFETIME)
        server.refresh[refresh] = scopes
        await _json(send, 200, {"access_token": access, "token_type": "Bearer",
                                "refresh_token": refresh, "expires_in": LIFETIME,
                                "scope": " ".join(sorted(scopes))})

    async def _resource(self, message: dict[str, Any], headers: dict[str, str],
                        send: Any) -> None:
        check_client_message(MODERN, message)
        needs = {READ} | ({ADMIN} if message["params"]["name"] == "purge" else set())
        token = headers.get("authorization", "").removeprefix("Bearer ")
        metadata = f'resource_metadata="{BASE}/.well-known/oauth-protected-resource/mcp"'
        for server in self.servers.values():
            issued = server.access.get(token) or (None, None)
            if issued[1] is not None and issued[1] <= self.clock():
                self.problems.append("an expired access token was sent")
        found = self.servers[self.current].access.get(token)
        if found is None or found[1] <= self.clock():
            challenge = f'Bearer {metadata}, scope="{READ}"'
            return await _json(send, 401, {}, [(b"www-authenticate", challenge.encode())])
        if not needs <= found[0]:
            challenge = (f'Bearer {metadata}, error="insufficient_scope", '
                         f'scope="{" ".join(sorted(needs))}"')
            return await _json(send, 403, {}, [(b"www-authenticate", challenge.encode())])
        await _json(send, 200, {"jsonrpc": "2.0", "id": message["id"],
                                "result": {"content": [], "isError": False}})


async def _json(send: Any, status: int, doc: Any,
                headers: list[tuple[bytes, bytes]] | None = None) -> None:
    data = json.dumps(doc).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), *(headers or [])]})
    await send({"type": "http.response.body", "body": data})


@dataclass(frozen=True)
class Held:
    """The model's view of a token set: who issued it, for what, until when."""

    issuer: str
    scopes: frozenset[str]
    expires_at: float
    serial: int
    """Which issue this is (a refresh makes a new one), to tell kept from sent."""


@dataclass
class Model:
    now: float = 1_000_000.0
    current: str = "A"
    known: str | None = None
    held: Held | None = None
    stored: dict[str, Held] = field(default_factory=dict)
    refusing: dict[str, bool] = field(default_factory=lambda: {"A": False, "B": False})
    forgotten: set[int] = field(default_factory=set)
    """Issues whose access token the AS forgot."""
    serials: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def expired(self, held: Held) -> bool:
        return self.now >= held.expires_at - MARGIN

    def accepted(self, held: Held | None, needs: frozenset[str]) -> int:
        if (held is None or held.issuer != self.current or held.serial in self.forgotten
                or held.expires_at <= self.now):
            return 401
        return 200 if needs <= held.scopes else 403

    def issue(self, issuer: str, scopes: frozenset[str]) -> Held:
        held = Held(issuer, scopes, self.now + LIFETIME, next(self.serials))
        self.stored[issuer] = held
        return held

    def refreshed(self, held: Held, events: list[str]) -> Held | None:
        if self.refusing[held.issuer]:
            events.append(f"refresh {held.issuer} refused")
            return None
        events.append(f"refresh {held.issuer}")
        return self.issue(held.issuer, held.scopes)

    def authorized(self, scopes: frozenset[str], events: list[str]) -> Held:
        events += [f"authorize {self.current} {' '.join(sorted(scopes))}",
                   f"code {self.current}"]
        return self.issue(self.current, scopes)

    def call(self, needs: frozenset[str]) -> list[str]:
        """What one call makes the authorization servers see, in order (and the new state)."""
        events: list[str] = []
        if self.held is not None and self.expired(self.held):
            self.held = self.refreshed(self.held, events)
        sent = self.held
        for _ in range(6):
            status = self.accepted(sent, needs)
            if status == 200:
                return events
            if status == 401:
                if self.known != self.current:
                    self.held = None
                self.known = self.current
                kept = self.stored.get(self.current)
                if (kept is not None and not self.expired(kept)
                        and (sent is None or kept.serial != sent.serial)):
                    self.held = kept
                else:
                    fresh = self.refreshed(kept, events) if kept is not None else None
                    if fresh is None:
                        self.stored.pop(self.current, None)
                        fresh = self.authorized(frozenset({READ}), events)
                    self.held = fresh
            else:
                assert self.held is not None
                self.held = self.authorized(self.held.scopes | needs, events)
            sent = self.held
        raise AssertionError("the model loops")


class TokenCache(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.model = Model()
        self.field = Field(lambda: self.model.now)
        self.loop = asyncio.new_event_loop()
        self.storage = MemoryTokenStorage()
        transport = httpx.ASGITransport(app=self.field)
        self.oauth = OAuth(redirect_uri=REDIRECT, redirect_handler=self._open,
                           callback_handler=self._callback, storage=self.storage,
                           clock=lambda: self.model.now, step_up_limit=5,
                           httpx_options={"transport": transport})
        self.http = httpx.AsyncClient(transport=transport, auth=self.oauth)
        self.answer: dict[str, str] = {}
        self.ids = itertools.count(1)

    async def _open(self, url: str) -> None:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=self.field)) as http:
            location = (await http.get(url)).headers["location"]
        self.answer = dict(parse_qsl(urlsplit(location).query))

    async def _callback(self) -> dict[str, str]:
        return self.answer

    def teardown(self) -> None:
        self.loop.run_until_complete(self.http.aclose())
        self.loop.close()

    @rule(admin=st.booleans())
    def call(self, admin: bool) -> None:
        name = "purge" if admin else "whoami"
        before = len(self.field.events)
        expected = self.model.call(frozenset({READ, ADMIN} if admin else {READ}))
        message = {"jsonrpc": "2.0", "id": next(self.ids), "method": "tools/call",
                   "params": {"name": name, "arguments": {}, "_meta": meta()}}
        answer = self.loop.run_until_complete(self.http.post(RESOURCE, json=message))
        assert answer.status_code == 200, (answer.status_code, self.field.events[before:])
        assert self.field.events[before:] == expected

    @rule(seconds=st.sampled_from([5, MARGIN + 1, LIFETIME - MARGIN + 1, LIFETIME + 1, 7200]))
    def time_passes(self, seconds: int) -> None:
        self.model.now += seconds

    @rule()
    def the_as_forgets_its_access_tokens(self) -> None:
        current = self.model.current
        self.field.servers[current].access.clear()
        self.model.forgotten |= {h.serial for h in (self.model.held, *self.model.stored.values())
                                 if h is not None and h.issuer == current}

    @rule(refusing=st.booleans())
    def the_as_refuses_refreshes(self, refusing: bool) -> None:
        self.field.servers[self.model.current].refusing = refusing
        self.model.refusing[self.model.current] = refusing

    @precondition(lambda self: self.model.known is not None)
    @rule()
    def the_resource_moves_to_the_other_as(self) -> None:
        self.model.current = self.field.current = "B" if self.model.current == "A" else "A"

    @invariant()
    def no_used_refresh_token_and_no_expired_token_was_sent(self) -> None:
        assert self.field.problems == []

    @invariant()
    def the_client_holds_what_the_model_holds(self) -> None:
        state = self.oauth._resources.get(RESOURCE)
        tokens = state.tokens if state is not None else None
        held = self.model.held
        assert (tokens is None) == (held is None)
        if tokens is not None and held is not None:
            assert tokens.access_token.startswith(f"{held.issuer}-access-")
            assert frozenset((tokens.scope or "").split()) == held.scopes
            kept = self.loop.run_until_complete(self.storage.load(f"{BASE}/{held.issuer}",
                                                                  RESOURCE))
            assert kept is not None and kept.access_token == tokens.access_token


TokenCache.TestCase.settings = settings(
    max_examples=40, stateful_step_count=25, deadline=None,
    suppress_health_check=[HealthCheck.too_slow])
test_the_oauth_token_cache_follows_its_model = TokenCache.TestCase


def test_the_model_is_not_trivial() -> None:
    """The model predicts a refresh, a step-up and a new sign-in at the other AS."""
    model = Model()
    assert model.call(frozenset({READ})) == ["authorize A mcp:read", "code A"]
    model.now += LIFETIME
    assert model.call(frozenset({READ, ADMIN})) == [
        "refresh A", "authorize A mcp:admin mcp:read", "code A"]
    model.current = "B"
    assert model.call(frozenset({READ})) == ["authorize B mcp:read", "code B"]
    assert replace(model.held, serial=0).issuer == "B"  # type: ignore[arg-type]
