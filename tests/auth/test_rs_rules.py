"""The resource server's pure rules, with no event loop: scopes and their hierarchy, claims,
challenges, the metadata document and canonical URIs, the configuration's checks; and the
lists a scoped principal sees (through the public in-memory API)."""

from __future__ import annotations

import pytest

import mcpkit
from mcpkit.auth.server_challenges import ChallengeSettings, challenge_refusal
from mcpkit.auth.server_claims import check_claims, claims_scopes, token_jkt
from mcpkit.auth.server_config import DPoPSettings, Principal, ProtectedResource
from mcpkit.auth.server_metadata import canonical_resource, metadata_document, metadata_url
from mcpkit.auth.server_scopes import ScopeHierarchy, check_scopes
from mcpkit.errors import InvalidTokenError
from mcpkit.server.options import ServerOptions
from mcpkit.server.scopes import operation_scopes
from mcpkit.transports.http_server.auth_jwt import JWTVerifier, cache_seconds

ISS = "https://as.example"
AUD = "https://mcp.example/mcp"


def test_a_hierarchy_is_transitive_and_names_what_is_missing_in_order() -> None:
    tree = ScopeHierarchy({"admin": ["files:write"], "files:write": ["files:read"]})
    assert tree.expand({"admin"}) == {"admin", "files:write", "files:read"}
    assert tree.missing({"files:write"}, ["files:read", "files:write"]) == ()
    assert tree.missing({"files:read"}, ["files:read", "files:write", "x"]) == ("files:write", "x")


def test_a_hierarchy_that_loops_is_refused() -> None:
    with pytest.raises(ValueError, match="cycle"):
        ScopeHierarchy({"a": ["b"], "b": ["a"]})


@pytest.mark.parametrize("bad", ["a b", "", 'q"uote', "back\\slash", 3])
def test_a_scope_that_is_no_scope_token_is_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="is not a scope"):
        check_scopes([bad], "scopes_supported")  # type: ignore[list-item]


def test_claims_pass_inside_the_leeway_and_fail_just_past_it() -> None:
    claims = {"iss": ISS, "aud": [AUD, "other"], "exp": 1000, "nbf": 900, "iat": 900}
    check_claims(claims, issuers=(ISS,), audience=AUD, now=1029, leeway_s=30)
    with pytest.raises(InvalidTokenError, match=r"expired \(exp\)"):
        check_claims(claims, issuers=(ISS,), audience=AUD, now=1030, leeway_s=30)
    with pytest.raises(InvalidTokenError, match=r"not valid yet \(nbf\)"):
        check_claims(claims, issuers=(ISS,), audience=AUD, now=869, leeway_s=30)


def test_a_token_without_exp_or_with_a_string_time_is_refused() -> None:
    with pytest.raises(InvalidTokenError, match="no expiry"):
        check_claims({"iss": ISS, "aud": AUD}, issuers=(ISS,), audience=AUD, now=0, leeway_s=0)
    with pytest.raises(InvalidTokenError, match="exp is not a number"):
        check_claims({"iss": ISS, "aud": AUD, "exp": "9"}, issuers=(ISS,), audience=AUD, now=0,
                     leeway_s=0)


def test_the_issuer_is_compared_exactly() -> None:
    with pytest.raises(InvalidTokenError, match=r"\(iss\)"):
        check_claims({"iss": ISS + "/", "aud": AUD, "exp": 10}, issuers=(ISS,), audience=AUD,
                     now=0, leeway_s=0)


def test_scopes_come_from_scope_text_or_an_scp_list_and_cnf_must_name_a_thumbprint() -> None:
    assert claims_scopes({"scope": "a b  c"}) == {"a", "b", "c"}
    assert claims_scopes({"scp": ["a", 3, "b c"]}) == {"a"}
    assert token_jkt({}) is None
    assert token_jkt({"cnf": {"jkt": "abc"}}) == "abc"
    with pytest.raises(InvalidTokenError, match="cnf"):
        token_jkt({"cnf": {"x5t#S256": "abc"}})


def test_a_description_cannot_break_out_of_its_quoted_parameter() -> None:
    refusal = challenge_refusal(ChallengeSettings("https://m/.well-known/x"), "invalid_token",
                                'bad "token"\r\nSet-Cookie: a=b')
    assert refusal.status == 401
    assert refusal.headers == ((b"www-authenticate", b'Bearer resource_metadata='
                                b'"https://m/.well-known/x", error="invalid_token", '
                                b'error_description="bad ?token???Set-Cookie: a=b"'),)


def test_canonical_uris_and_the_path_inserted_metadata_url() -> None:
    assert canonical_resource("HTTPS://MCP.Example:443/mcp/") == "https://mcp.example/mcp"
    assert canonical_resource("http://[::1]:8080") == "http://[::1]:8080"
    assert metadata_url("https://mcp.example/tenant/mcp") == (
        "https://mcp.example/.well-known/oauth-protected-resource/tenant/mcp")
    for bad in ("ftp://x/mcp", "https://x/mcp#frag", "https://x/mcp?q=1", "https://u:p@x/"):
        with pytest.raises(ValueError, match="public_url"):
            canonical_resource(bad)


def test_offline_access_is_never_advertised_in_the_metadata() -> None:
    document = metadata_document(AUD, [ISS], scopes_supported=["mcp", "offline_access"])
    assert document["scopes_supported"] == ["mcp"]


def test_the_configuration_is_checked_when_built() -> None:
    verifier = JWTVerifier("https://as.example/jwks")
    with pytest.raises(ValueError, match="issuers"):
        ProtectedResource((), verifier=verifier)
    with pytest.raises(ValueError, match="verifier is required"):
        ProtectedResource(ISS)
    with pytest.raises(ValueError, match="'none'"):
        DPoPSettings(algorithms=("none",))
    with pytest.raises(ValueError, match="only asymmetric"):
        JWTVerifier("https://as.example/jwks", algorithms=("HS256",))
    assert ProtectedResource(ISS, verifier=verifier, public_url="https://MCP.example/mcp/"
                             ).public_url == "https://mcp.example/mcp"


def test_jwks_cache_lifetimes_follow_the_headers_within_bounds() -> None:
    bounds = {"default": 300.0, "floor": 30.0, "ceiling": 3600.0}
    assert cache_seconds({"cache-control": "public, max-age=600"}, 0, **bounds) == 600
    assert cache_seconds({"cache-control": "max-age=1"}, 0, **bounds) == 30
    assert cache_seconds({"cache-control": "max-age=999999"}, 0, **bounds) == 3600
    assert cache_seconds({"cache-control": "no-store"}, 0, **bounds) == 30
    assert cache_seconds({}, 0, **bounds) == 300


def test_a_principal_repr_shows_no_claims() -> None:
    principal = Principal("alice", claims={"email": "alice@example.com"})
    assert "alice@example.com" not in repr(principal)


def _server(scoped: bool) -> mcpkit.Server:
    server = mcpkit.Server("lists", options=ServerOptions(scoped_lists=scoped))

    @server.tool()
    def open_tool() -> str:
        return "open"

    @server.tool(scopes=["admin"])
    def admin_tool() -> str:
        return "admin"

    @server.prompt(scopes=["admin"])
    def admin_prompt() -> str:
        return "hi"

    @server.resource("res://secret", scopes=["admin"])
    def secret() -> str:
        return "s"

    return server


@pytest.mark.parametrize(("scoped", "granted", "shown"), [
    (True, {"other"}, ["open_tool"]),
    (True, {"super"}, ["open_tool", "admin_tool"]),
    (False, {"other"}, ["open_tool", "admin_tool"]),
])
async def test_lists_leave_out_what_the_principal_is_not_granted_when_asked(
        scoped: bool, granted: set[str], shown: list[str]) -> None:
    server = _server(scoped)
    principal = Principal("p", scopes=frozenset(granted),
                          hierarchy=ScopeHierarchy({"super": ["admin"]}))
    from helpers.wire import MODERN, check_server_message, meta

    from mcpkit.protocol.codec import Request

    def listing(method: str) -> Request:
        return Request(1, method, {"_meta": meta()})

    tools = await server.handle(listing("tools/list"), principal=principal)
    check_server_message(MODERN, tools, "tools/list")
    assert [t["name"] for t in tools["result"]["tools"]] == shown
    prompts = await server.handle(listing("prompts/list"), principal=principal)
    assert len(prompts["result"]["prompts"]) == (len(shown) - 1)
    anonymous = await server.handle(listing("tools/list"))
    assert len(anonymous["result"]["tools"]) == 2


def test_the_scopes_an_operation_needs_are_read_from_what_it_names() -> None:
    server = _server(False)
    assert operation_scopes(server, "tools/call", {"name": "admin_tool"}) == ("admin",)
    assert operation_scopes(server, "tools/call", {"name": "open_tool"}) == ()
    assert operation_scopes(server, "resources/read", {"uri": "res://secret"}) == ("admin",)
    assert operation_scopes(server, "tools/call", {"name": "nope"}) == ()
    with pytest.raises(ValueError, match="tool 'bad'"):
        server.add_tool(lambda: 1, "bad", scopes=["a b"])
