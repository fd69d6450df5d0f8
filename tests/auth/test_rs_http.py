"""The resource server over real HTTP: a protected mcpkit server under uvicorn on 127.0.0.1,
its keys and introspection served by a real peer (`rs_peers`), every refusal checked for its
exact status and challenge, every MCP message the server sends checked against the schema."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from helpers.auth.rs_peers import ISSUER, Issuer, KeyServer, key_server, protected
from helpers.store_urls import KINDS, make_url
from helpers.transports.http_peer import Peer

import mcpkit
from mcpkit.auth.dpop import DPoPKey
from mcpkit.auth.server_config import DPoPSettings, ProtectedResource
from mcpkit.server.options import ServerOptions
from mcpkit.server.sealing import new_state_key
from mcpkit.transports.http_server.auth_introspection import IntrospectionVerifier
from mcpkit.transports.http_server.auth_jwt import JWTVerifier


def make_server(store: str | None = None) -> mcpkit.Server:
    server = mcpkit.Server("protected", options=ServerOptions(state_keys=(new_state_key(),),
                                                              store=store))

    @server.tool()
    def whoami(ctx: mcpkit.Context) -> str:
        """The caller's subject, as the verified token says."""
        return f"{ctx.principal.subject} {sorted(ctx.principal.scopes)}"

    @server.tool(scopes=["files:read", "files:write"])
    def write_file(name: str) -> str:
        return f"wrote {name}"

    @server.tool()
    def new_cart(ctx: mcpkit.Context) -> str:
        return ctx.mint_handle("cart", {"items": 1})

    @server.tool()
    def open_cart(handle: str, ctx: mcpkit.Context) -> str:
        return str(ctx.open_handle("cart", handle))

    @server.tool()
    async def rename(ctx: mcpkit.Context) -> str:
        """Asks for the new name: its retry carries a requestState sealed for the caller."""
        answer = (await ctx.ask({"name": mcpkit.Elicit("New name?", {"name": str})}))["name"]
        return f"{ctx.principal.subject} renamed to {answer['name']}"

    return server


class Setup:
    def __init__(self, issuer: Issuer, keys: KeyServer, url: str) -> None:
        self.issuer = issuer
        self.keys = keys
        self.url = url
        self.origin = url.rsplit("/", 1)[0]
        self.metadata = f"{self.origin}/.well-known/oauth-protected-resource/mcp"

    def token(self, **kw: Any) -> str:
        return self.issuer.token(kw.pop("audience", self.url), **kw)

    def challenge(self, error: str | None = None, description: str | None = None,
                  scope: str | None = "mcp:read") -> str:
        parts = [f'resource_metadata="{self.metadata}"']
        if scope:
            parts.append(f'scope="{scope}"')
        if error:
            parts.append(f'error="{error}"')
        if description:
            parts.append(f'error_description="{description}"')
        return "Bearer " + ", ".join(parts)


def resource(keys: KeyServer, **kw: Any) -> ProtectedResource:
    return ProtectedResource(ISSUER, verifier=kw.pop("verifier", None)
                             or JWTVerifier(keys.url + "/jwks", refresh_interval_s=3600),
                             scopes_supported=("mcp:read",),
                             scope_hierarchy={"files:admin": ["files:write", "files:read"]},
                             dpop=kw.pop("dpop", DPoPSettings(algorithms=("ES256",))), **kw)


@pytest.fixture
async def setup() -> AsyncIterator[Setup]:
    issuer = Issuer()
    async with key_server(issuer) as keys:
        app = make_server().asgi(path="/mcp", auth=resource(keys))
        async with protected(app) as url:
            yield Setup(issuer, keys, url)


@pytest.fixture(params=KINDS)
async def on_every_store(request: pytest.FixtureRequest, tmp_path: Path
                         ) -> AsyncIterator[Setup]:
    """`setup`, its server keeping its state in each engine in turn: the legacy sessions a
    principal opens and the DPoP proofs it used are stored under the principal's key."""
    issuer = Issuer()
    server = make_server(make_url(request.param, request, tmp_path))
    try:
        async with key_server(issuer) as keys, \
                protected(server.asgi(path="/mcp", auth=resource(keys))) as url:
            yield Setup(issuer, keys, url)
    finally:
        if server.sealer.backend is not None:
            await server.sealer.backend.close()


async def call(url: str, token: str | None, tool: str, arguments: dict[str, Any] | None = None,
               scheme: str = "Bearer", extra: dict[str, str] | None = None) -> Any:
    async with httpx.AsyncClient() as http:
        peer = Peer(url, http)
        headers = {"Authorization": f"{scheme} {token}"} if token else {}
        headers.update(extra or {})
        return await peer.post(peer.request_message("tools/call", {
            "name": tool, "arguments": arguments or {}}), headers)


def challenges(reply: Any) -> list[str]:
    return reply.headers.get_list("www-authenticate")


async def test_a_request_without_a_token_is_challenged_with_the_metadata_and_scopes(
        setup: Setup) -> None:
    reply = await call(setup.url, None, "whoami")
    assert reply.status == 401
    assert challenges(reply) == [setup.challenge(),
                                 f'DPoP resource_metadata="{setup.metadata}", algs="ES256"']
    assert reply.body == b""


async def test_the_metadata_is_served_without_a_token_at_both_well_known_paths(
        setup: Setup) -> None:
    async with httpx.AsyncClient() as http:
        for path in ("/.well-known/oauth-protected-resource/mcp",
                     "/.well-known/oauth-protected-resource"):
            response = await http.get(setup.origin + path)
            assert response.status_code == 200, path
            assert response.json() == {
                "resource": setup.url, "authorization_servers": [ISSUER],
                "bearer_methods_supported": ["header"], "scopes_supported": ["mcp:read"],
                "dpop_signing_alg_values_supported": ["ES256"]}
        assert (await http.get(setup.origin + "/.well-known/oauth-protected-resource/other")
                ).status_code == 404
        assert (await http.post(setup.origin + "/.well-known/oauth-protected-resource")
                ).status_code == 405


async def test_a_valid_token_reaches_the_tool_as_ctx_principal(setup: Setup) -> None:
    reply = await call(setup.url, setup.token(scope="mcp:read"), "whoami")
    assert reply.status == 200
    assert reply.message["result"]["content"][0]["text"] == "alice ['mcp:read']"


def _unsigned(claims: dict[str, Any]) -> str:
    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(orjson.dumps(value)).rstrip(b"=").decode()
    return f"{part({'alg': 'none', 'typ': 'at+jwt', 'kid': 'k1'})}.{part(claims)}."


BAD_TOKENS = {
    "wrong audience": (lambda s: s.token(audience="https://other.example/mcp"),
                       "the token is not intended for this resource (aud)"),
    "expired": (lambda s: s.token(lifetime=-120), "the token has expired (exp)"),
    "not yet valid": (lambda s: s.token(nbf=int(__import__("time").time()) + 600),
                      "the token is not valid yet (nbf)"),
    "bad signature": (lambda s: s.issuer.token(s.url, key=Issuer().keys[0], kid="k1"),
                      "the token's signature does not verify"),
    "alg none": (lambda s: _unsigned({"iss": ISSUER, "sub": "mallory", "aud": s.url,
                                      "exp": 2**33}),
                 "the token's algorithm 'none' is not accepted"),
    "unknown kid": (lambda s: s.issuer.token(s.url, key=Issuer().keys[0], kid="nope"),
                    "the token is signed by a key this resource does not know (kid)"),
    "wrong issuer": (lambda s: s.token(issuer="https://evil.example"),
                     "the token was not issued by an authorization server this resource "
                     "trusts (iss)"),
    "not a jwt": (lambda s: "abc.def", "the token is not a JWT"),
}


@pytest.mark.parametrize("case", list(BAD_TOKENS))
async def test_a_bad_token_is_refused_with_401_invalid_token(setup: Setup, case: str) -> None:
    make, description = BAD_TOKENS[case]
    reply = await call(setup.url, make(setup), "whoami")
    assert reply.status == 401
    assert challenges(reply)[0] == setup.challenge("invalid_token", description)
    assert reply.body == b""


async def test_insufficient_scope_is_403_naming_every_scope_the_tool_needs(setup: Setup) -> None:
    reply = await call(setup.url, setup.token(scope="mcp:read files:read"), "write_file",
                       {"name": "a"})
    assert reply.status == 403
    assert challenges(reply)[0] == setup.challenge(
        "insufficient_scope", "this request needs the scopes files:read files:write",
        scope="files:read files:write")


async def test_a_broader_scope_covers_the_narrower_ones_it_implies(setup: Setup) -> None:
    reply = await call(setup.url, setup.token(scope="files:admin"), "write_file", {"name": "a"})
    assert reply.status == 200
    assert reply.message["result"]["content"][0]["text"] == "wrote a"


async def test_a_handle_minted_for_one_principal_is_refused_for_another(setup: Setup) -> None:
    alice, bob = setup.token(subject="alice"), setup.token(subject="bob")
    handle = (await call(setup.url, alice, "new_cart")).message["result"]["content"][0]["text"]
    assert (await call(setup.url, alice, "open_cart", {"handle": handle})
            ).message["result"]["content"][0]["text"] == "{'items': 1}"
    refused = await call(setup.url, bob, "open_cart", {"handle": handle})
    assert refused.status == 200
    assert "error" in refused.message or refused.message["result"]["isError"] is True


async def test_a_request_state_sealed_for_one_principal_is_refused_for_another(
        setup: Setup) -> None:
    alice, bob = setup.token(subject="alice"), setup.token(subject="bob")
    capable = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
    async with httpx.AsyncClient() as http:
        peer = Peer(setup.url, http)

        async def send(token: str, **extra: Any) -> Any:
            return await peer.post(peer.request_message("tools/call", {
                "name": "rename", "arguments": {}, **extra}, **capable),
                {"Authorization": f"Bearer {token}"})

        asked = (await send(alice)).message["result"]
        assert asked["resultType"] == "input_required"
        retry = {"requestState": asked["requestState"], "inputResponses": {
            "name": {"action": "accept", "content": {"name": "Ada"}}}}
        refused = await send(bob, **retry)  # another caller's token, the same sealed state
        assert refused.status == 400 and refused.message["error"]["code"] == -32602
        assert "Ada" not in str(refused.message)  # nothing of the sealed round comes back
        done = await send(alice, **retry)
        assert done.message["result"]["content"][0]["text"] == "alice renamed to Ada"


async def test_a_legacy_session_answers_only_the_principal_that_opened_it(
        on_every_store: Setup) -> None:
    setup = on_every_store
    alice, bob = setup.token(subject="alice"), setup.token(subject="bob")
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {alice}"}) as http:
        peer = Peer(setup.url, http)
        await peer.initialize()
        listed = await peer.post(peer.request_message("tools/list", with_meta=False),
                                 mirror=False)
        assert listed.status == 200
        stolen = await peer.post(peer.request_message("tools/list", with_meta=False),
                                 {"Authorization": f"Bearer {bob}"}, mirror=False)
        assert stolen.status == 404
        called = await peer.post(peer.request_message(
            "tools/call", {"name": "whoami", "arguments": {}}, with_meta=False), mirror=False)
        assert called.message["result"]["content"][0]["text"] == "alice []"


async def test_a_legacy_initialize_needs_a_token_too(setup: Setup) -> None:
    async with httpx.AsyncClient() as http:
        response = await http.post(setup.url, content=orjson.dumps({
            "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"}}}),
            headers={"content-type": "application/json",
                     "accept": "application/json, text/event-stream"})
    assert response.status_code == 401
    assert response.headers.get_list("www-authenticate")[0] == setup.challenge()


async def test_a_rotated_key_is_fetched_once_and_made_up_kids_fetch_nothing_more(
        setup: Setup) -> None:
    assert (await call(setup.url, setup.token(), "whoami")).status == 200
    assert setup.keys.jwks_fetches == 1
    setup.issuer.rotate()
    assert (await call(setup.url, setup.token(), "whoami")).status == 200
    assert setup.keys.jwks_fetches == 2
    for _ in range(3):
        forged = setup.issuer.token(setup.url, key=Issuer().keys[0], kid="made-up")
        assert (await call(setup.url, forged, "whoami")).status == 401
    assert setup.keys.jwks_fetches == 2


# -- DPoP ------------------------------------------------------------------------------------


async def dpop_call(url: str, token: str, proof: str, tool: str = "whoami") -> Any:
    return await call(url, token, tool, scheme="DPoP", extra={"DPoP": proof})


async def test_a_dpop_bound_token_with_its_proof_is_accepted_and_a_replay_refused(
        on_every_store: Setup) -> None:
    setup = on_every_store
    key = DPoPKey.generate()
    token = setup.token(cnf={"jkt": key.thumbprint()})
    proof = key.proof("POST", setup.url, access_token=token)
    assert (await dpop_call(setup.url, token, proof)).status == 200
    replayed = await dpop_call(setup.url, token, proof)
    assert replayed.status == 401
    assert challenges(replayed)[0] == (
        f'DPoP resource_metadata="{setup.metadata}", error="invalid_dpop_proof", '
        'error_description="this DPoP proof was used before", algs="ES256"')


@pytest.mark.parametrize(("htm", "where"), [("GET", ""), ("POST", "/other")])
async def test_a_dpop_proof_for_another_method_or_url_is_refused(
        setup: Setup, htm: str, where: str) -> None:
    key = DPoPKey.generate()
    token = setup.token(cnf={"jkt": key.thumbprint()})
    reply = await dpop_call(setup.url, token, key.proof(htm, setup.url + where,
                                                        access_token=token))
    assert reply.status == 401
    why = "the DPoP proof is not for method POST" if htm == "GET" else (
        "the DPoP proof is for another URL")
    assert challenges(reply) == [
        f'DPoP resource_metadata="{setup.metadata}", error="invalid_dpop_proof", '
        f'error_description="{why}", algs="ES256"',
        f'Bearer resource_metadata="{setup.metadata}"']


async def test_a_dpop_bound_token_sent_as_bearer_is_refused(setup: Setup) -> None:
    key = DPoPKey.generate()
    token = setup.token(cnf={"jkt": key.thumbprint()})
    reply = await call(setup.url, token, "whoami")
    assert reply.status == 401
    assert challenges(reply)[0] == setup.challenge(
        "invalid_token", "this token is bound to a DPoP key: send it as 'DPoP <token>' with a "
        "proof", scope=None)


async def test_a_bearer_token_sent_with_the_dpop_scheme_is_refused(setup: Setup) -> None:
    key = DPoPKey.generate()
    token = setup.token()
    reply = await dpop_call(setup.url, token, key.proof("POST", setup.url, access_token=token))
    assert reply.status == 401
    assert 'error="invalid_token"' in challenges(reply)[0]


async def test_a_proof_by_another_key_than_the_tokens_is_refused(setup: Setup) -> None:
    bound, other = DPoPKey.generate(), DPoPKey.generate()
    token = setup.token(cnf={"jkt": bound.thumbprint()})
    reply = await dpop_call(setup.url, token, other.proof("POST", setup.url, access_token=token))
    assert reply.status == 401
    assert 'error="invalid_dpop_proof"' in challenges(reply)[0]


async def test_a_required_nonce_is_challenged_then_accepted() -> None:
    issuer = Issuer()
    async with key_server(issuer) as keys:
        app = make_server().asgi(path="/mcp", auth=resource(
            keys, dpop=DPoPSettings(nonce=True, algorithms=("ES256",))))
        async with protected(app) as url:
            key = DPoPKey.generate()
            token = issuer.token(url, cnf={"jkt": key.thumbprint()})
            first = await dpop_call(url, token, key.proof("POST", url, access_token=token))
            assert first.status == 401
            assert 'error="use_dpop_nonce"' in challenges(first)[0]
            nonce = first.headers["dpop-nonce"]
            again = await dpop_call(url, token, key.proof("POST", url, access_token=token,
                                                           nonce=nonce))
            assert again.status == 200


# -- introspection ---------------------------------------------------------------------------


async def test_introspected_tokens_are_accepted_cached_and_inactive_ones_refused() -> None:
    issuer = Issuer()
    async with key_server(issuer) as keys:
        verifier = IntrospectionVerifier(keys.url + "/introspect", "rs", "rs-secret",
                                         issuer=ISSUER)
        app = make_server().asgi(path="/mcp", auth=resource(keys, verifier=verifier))
        async with protected(app) as url:
            keys.active["opaque-1"] = {"sub": "carol", "aud": url, "scope": "mcp:read",
                                       "exp": 2**33}
            for _ in range(2):
                reply = await call(url, "opaque-1", "whoami")
                assert reply.message["result"]["content"][0]["text"] == "carol ['mcp:read']"
            assert keys.introspections == 1
            refused = await call(url, "opaque-2", "whoami")
            assert refused.status == 401
            assert 'error="invalid_token", error_description="the token is not active ' in (
                challenges(refused)[0])
            keys.active["opaque-3"] = {"sub": "dave", "aud": "https://other.example/mcp",
                                       "exp": 2**33}
            assert 'the token is not intended for this resource (aud)' in challenges(
                await call(url, "opaque-3", "whoami"))[0]


async def test_an_unreachable_jwks_is_503_not_a_challenge() -> None:
    issuer = Issuer()
    async with key_server(issuer) as keys:
        dead = keys.url + "/nothing-here"
    app = make_server().asgi(path="/mcp", auth=ProtectedResource(
        ISSUER, verifier=JWTVerifier(dead, timeout_s=2)))
    async with protected(app) as url:
        reply = await call(url, issuer.token(url), "whoami")
        assert reply.status == 503
        assert reply.headers["retry-after"] == "5"
        assert "www-authenticate" not in reply.headers
