"""The authorization proxy's state across replicas: two server processes behind one public
URL (as behind a balancer), sharing a store, take turns at every step of a sign-in, so each
step reaches another process than the one before. The registration, the pending
authorization, the upstream state, the code, the refresh token and the revocation all live
in the store, and the signing keys come from the shared state key ring: on SQLite (one host's
processes sharing a file), PostgreSQL and Redis. One replica is killed (SIGKILL) in the
middle of the sign-in and started again; the other finishes what it began."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers.auth.oidc_process import OIDCProvider
from helpers.auth.proxy_process import ProxiedServer, upstream_for
from helpers.auth.proxy_walk import RawClient, Walk, list_tools, pkce, query_of
from helpers.services import free_port

PORTS = (free_port(), free_port())


@pytest.fixture(scope="module")
def upstream() -> Iterator[OIDCProvider]:
    provider = upstream_for(PORTS[0])  # one public URL: the callback is the balancer's
    yield provider
    provider.stop()


@pytest.fixture(params=["sqlite", "postgres", "redis"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:{tmp_path / 'state.db'}"
    return str(request.getfixturevalue(f"{request.param}_url"))


def replica(upstream: OIDCProvider, port: int, store: str) -> ProxiedServer:
    return ProxiedServer.start(upstream, port, store=store, public_port=PORTS[0])


def alternating() -> Callable[[str], str]:
    """Each request to the public URL goes to the other replica than the last one did."""
    turns = itertools.cycle(PORTS)
    public = f"http://127.0.0.1:{PORTS[0]}"

    def route(url: str) -> str:
        if not url.startswith(public):
            return url  # the upstream's own pages
        return f"http://127.0.0.1:{next(turns)}" + url[len(public):]
    return route


def at(port: int, url: str) -> str:
    return url.replace(f"127.0.0.1:{PORTS[0]}", f"127.0.0.1:{port}", 1)


def test_every_step_of_a_sign_in_may_reach_another_replica(upstream: OIDCProvider,
                                                           store: str) -> None:
    first = replica(upstream, PORTS[0], store)
    second = replica(upstream, PORTS[1], store)
    servers = [first, second]
    try:
        raw = RawClient(second.origin)
        raw.register()  # registered at the second, used at both
        route = alternating()
        verifier, challenge = pkce()
        authorize = raw.authorization_url(challenge).replace(second.origin, first.origin)
        walk = Walk()
        # To the consent page on one replica, then kill that one: the other takes the rest.
        consent_page = walk.http.get(route(authorize))
        assert consent_page.status_code == 200 and "Allow access" in consent_page.text
        killed_port = int(str(consent_page.url).split(":")[2].split("/")[0])
        victim = first if killed_port == PORTS[0] else second
        victim.process.kill()
        victim.process.wait(10)
        survivor = second if victim is first else first
        back = walk.to(authorize, raw.redirect_uri,
                       route=lambda url: at(int(survivor.origin.rsplit(":", 1)[1]), url))
        restarted = replica(upstream, killed_port, store)
        servers = [survivor, restarted]
        # The code from the survivor is redeemed at the restarted replica.
        raw.origin = restarted.origin
        tokens = raw.redeem(back, verifier)
        assert tokens.status_code == 200, tokens.text
        access, refresh = tokens.json()["access_token"], tokens.json()["refresh_token"]
        for server in servers:  # the keys are the shared ring's: both take the token
            listed = list_tools(server.url, access)
            assert listed.status_code == 200, listed.text
        raw.origin = survivor.origin
        renewed = raw.token(grant_type="refresh_token", refresh_token=refresh)
        assert renewed.status_code == 200, renewed.text
        raw.origin = restarted.origin  # the spent one, at the other replica: a replay
        replayed = raw.token(grant_type="refresh_token", refresh_token=refresh)
        assert replayed.json()["error"] == "invalid_grant"
        for server in servers:  # ...which revoked the grant everywhere
            assert list_tools(server.url, renewed.json()["access_token"]).status_code == 401
        assert query_of(back)["iss"] == f"http://127.0.0.1:{PORTS[0]}"
    finally:
        for server in servers:
            server.stop()
