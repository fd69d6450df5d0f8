"""The client's pure authorization rules: challenges, discovery orders, metadata checks, PKCE,
the RFC 9207 table, scope choice and step-up limits, and which URLs may be opened or fetched."""

from __future__ import annotations

import base64
import hashlib
import ipaddress

import pytest

from mcpkit.auth.client_authorization import (
    Pending,
    Pkce,
    authorization_url,
    read_callback,
    require_pkce,
)
from mcpkit.auth.client_challenge import bearer_challenge, parse_www_authenticate, sent_scheme
from mcpkit.auth.client_discovery import (
    as_metadata_urls,
    canonical_resource,
    prm_urls,
    read_as_metadata,
    read_prm,
    resource_matches,
)
from mcpkit.auth.client_scopes import StepUps, initial_scope, step_up_scope
from mcpkit.auth.client_targets import check_address, check_authorization_url, check_fetch_url
from mcpkit.errors import AuthError

# -- WWW-Authenticate -------------------------------------------------------------------------


def test_a_bearer_challenge_gives_its_metadata_url_scopes_and_error() -> None:
    found = bearer_challenge('Bearer error="insufficient_scope", scope="files:read files:write", '
                             'resource_metadata="https://mcp.example.com/.well-known/x"')
    assert found is not None
    assert found.insufficient_scope
    assert found.scope == ("files:read", "files:write")
    assert found.resource_metadata == "https://mcp.example.com/.well-known/x"


def test_the_bearer_challenge_is_found_among_others_and_escapes_are_read() -> None:
    challenges = parse_www_authenticate(
        'Basic dXNlcjpwYXNz, Bearer realm="a \\"quoted\\" realm", error=invalid_token, '
        'DPoP algs="ES256"')
    assert [c.scheme for c in challenges] == ["basic", "bearer", "dpop"]
    assert challenges[1].params == {"realm": 'a "quoted" realm', "error": "invalid_token"}
    assert bearer_challenge(['DPoP algs="ES256"', 'Bearer scope="a"']).scope == ("a",)


def test_a_dpop_request_reads_the_error_of_the_dpop_challenge() -> None:
    # What a resource server answers a DPoP request whose token lacks a scope (RFC 9449 §7.1):
    # the error in the DPoP challenge, a plain Bearer one beside it.
    header = ['DPoP resource_metadata="https://mcp.example.com/.well-known/oauth-protected-'
              'resource/mcp", scope="mcp:admin", error="insufficient_scope", algs="ES256 EdDSA"',
              'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-'
              'resource/mcp", scope="mcp:admin"']
    found = bearer_challenge(header, "dpop")
    assert found is not None and found.scheme == "dpop" and found.insufficient_scope
    assert found.scope == ("mcp:admin",)
    # Not knowing the scheme sent, the challenge that carries an error still wins.
    assert bearer_challenge(header).insufficient_scope
    # A Bearer request reads the Bearer challenge, and its metadata URL comes from either.
    bearer = bearer_challenge(['DPoP algs="ES256"',
                               'Bearer error="invalid_token", resource_metadata="https://x/m"'],
                              "bearer")
    assert bearer is not None and bearer.error == "invalid_token"
    only_dpop_names_it = bearer_challenge(['Bearer error="insufficient_scope"',
                                           'DPoP resource_metadata="https://x/m"'], "bearer")
    assert only_dpop_names_it is not None and only_dpop_names_it.resource_metadata == "https://x/m"
    assert sent_scheme("DPoP abc") == "dpop" and sent_scheme(None) is None


def test_a_quoted_string_that_never_ends_is_no_value() -> None:
    challenges = parse_www_authenticate('Bearer error="invalid_token", scope="a b')
    assert challenges[0].params == {"error": "invalid_token"}


def test_no_challenge_or_an_absent_scope_reads_as_none() -> None:
    assert bearer_challenge(None) is None
    assert bearer_challenge("Basic realm=x") is None
    found = bearer_challenge("Bearer")
    assert found is not None and found.scope is None and found.resource_metadata is None


# -- discovery orders -----------------------------------------------------------------------------


def test_prm_urls_start_with_the_challenge_then_path_inserted_then_root() -> None:
    assert prm_urls("https://mcp.example.com/public/mcp", "https://mcp.example.com/custom") == [
        "https://mcp.example.com/custom",
        "https://mcp.example.com/.well-known/oauth-protected-resource/public/mcp",
        "https://mcp.example.com/.well-known/oauth-protected-resource",
    ]
    assert prm_urls("https://mcp.example.com") == [
        "https://mcp.example.com/.well-known/oauth-protected-resource"]


def test_as_metadata_urls_follow_the_spec_order_with_and_without_a_path() -> None:
    assert as_metadata_urls("https://auth.example.com/tenant1") == [
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example.com/.well-known/openid-configuration/tenant1",
        "https://auth.example.com/tenant1/.well-known/openid-configuration",
    ]
    assert as_metadata_urls("https://auth.example.com") == [
        "https://auth.example.com/.well-known/oauth-authorization-server",
        "https://auth.example.com/.well-known/openid-configuration",
    ]


@pytest.mark.parametrize(("server", "resource", "matches"), [
    ("http://localhost:3000/mcp", "http://localhost:3000/mcp", True),
    ("http://localhost:3000/mcp", "http://localhost:3000", True),
    ("http://LOCALHOST:3000/mcp/", "http://localhost:3000/mcp", True),
    ("https://a.example/mcp", "https://a.example:443/mcp", True),
    ("http://localhost:3000/mcp", "https://evil.example.com/mcp", False),
    ("http://localhost:3000/mcp", "http://localhost:3001/mcp", False),
    ("http://localhost:3000/mcpx", "http://localhost:3000/mcp", False),
    ("http://localhost:3000/mcp", "http://localhost:3000/mcp/sub", False),
])
def test_a_prm_resource_speaks_for_its_origin_and_paths_below(server: str, resource: str,
                                                              matches: bool) -> None:
    assert resource_matches(server, resource) is matches


def test_a_prm_for_another_server_is_refused_naming_both() -> None:
    doc = {"resource": "https://evil.example.com/mcp", "authorization_servers": ["https://as"]}
    with pytest.raises(AuthError, match=r"evil\.example\.com.*not for 'http://localhost:3000/mcp'"):
        read_prm(doc, "http://localhost:3000/.well-known/oauth-protected-resource/mcp",
                 "http://localhost:3000/mcp")


def test_a_prm_without_authorization_servers_is_refused() -> None:
    with pytest.raises(AuthError, match="no authorization_servers"):
        read_prm({"resource": "https://a.example/mcp", "authorization_servers": []}, "u",
                 "https://a.example/mcp")


def test_as_metadata_naming_another_issuer_gives_no_endpoint() -> None:
    doc = {"issuer": "https://attacker.example.com", "authorization_endpoint": "https://x/a"}
    with pytest.raises(AuthError, match=r"names the issuer 'https://attacker\.example\.com'"):
        read_as_metadata(doc, "https://as.example/.well-known/oauth-authorization-server",
                         "https://as.example")


def test_the_issuer_check_is_exact_not_normalised() -> None:
    with pytest.raises(AuthError):
        read_as_metadata({"issuer": "https://as.example/"}, "u", "https://as.example")
    metadata = read_as_metadata({"issuer": "https://as.example",
                                 "authorization_response_iss_parameter_supported": True},
                                "u", "https://as.example")
    assert metadata.iss_parameter_supported


def test_the_canonical_resource_is_lowercase_without_default_port_fragment_or_slash() -> None:
    assert canonical_resource("HTTPS://MCP.Example.com:443/Path/#frag") == (
        "https://mcp.example.com/Path")
    with pytest.raises(AuthError):
        canonical_resource("ftp://x/y")


# -- PKCE and the authorization response ----------------------------------------------------------


def test_pkce_s256_is_the_hash_of_the_verifier() -> None:
    pkce = Pkce.from_random(bytes(range(32)))
    digest = hashlib.sha256(pkce.verifier.encode()).digest()
    assert pkce.challenge == base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    assert len(pkce.verifier) >= 43 and pkce.method == "S256"
    with pytest.raises(ValueError):
        Pkce.from_random(b"short")


def test_an_as_that_does_not_list_s256_is_refused() -> None:
    with pytest.raises(AuthError, match="does not publish code_challenge_methods_supported"):
        require_pkce(None, "https://as.example")
    with pytest.raises(AuthError, match="does not support PKCE with S256"):
        require_pkce(("plain",), "https://as.example")
    require_pkce(("plain", "S256"), "https://as.example")


def pending(iss_supported: bool) -> Pending:
    return Pending("https://as.example", iss_supported, "st", Pkce.from_random(bytes(32)),
                   "http://127.0.0.1:9/cb", "https://mcp.example/mcp", "a b", "cid",
                   "https://as.example/authorize?tenant=1")


def test_the_authorization_url_carries_pkce_state_resource_and_scope() -> None:
    url = authorization_url(pending(True))
    assert url.startswith("https://as.example/authorize?tenant=1&response_type=code")
    for part in ("code_challenge_method=S256", "state=st", "client_id=cid", "scope=a+b",
                 "resource=https%3A%2F%2Fmcp.example%2Fmcp"):
        assert part in url


@pytest.mark.parametrize(("supported", "iss", "accepted"), [
    (True, "https://as.example", True),
    (True, None, False),
    (False, "https://as.example", True),
    (False, None, True),
    (True, "https://as.example/", False),
    (False, "https://AS.example", False),
    (False, "https://evil.example.com", False),
])
def test_the_rfc9207_table(supported: bool, iss: str | None, accepted: bool) -> None:
    params = {"code": "the-code", "state": "st", "iss": iss}
    if accepted:
        assert read_callback(pending(supported), params) == "the-code"
    else:
        with pytest.raises(AuthError, match="iss"):
            read_callback(pending(supported), params)


def test_an_error_from_another_issuer_is_not_shown() -> None:
    params = {"error": "access_denied", "error_description": "click http://phish",
              "state": "st", "iss": "https://evil.example.com"}
    with pytest.raises(AuthError) as caught:
        read_callback(pending(False), params)
    assert "phish" not in str(caught.value) and "access_denied" not in str(caught.value)


def test_a_wrong_or_missing_state_is_refused_and_a_trusted_error_is_named() -> None:
    with pytest.raises(AuthError, match="state"):
        read_callback(pending(False), {"code": "c", "state": "other"})
    with pytest.raises(AuthError, match="state"):
        read_callback(pending(False), {"code": "c"})
    with pytest.raises(AuthError, match="access_denied"):
        read_callback(pending(False), {"error": "access_denied", "state": "st"})


# -- scopes -------------------------------------------------------------------------------------


def test_the_initial_scope_follows_the_spec_order() -> None:
    assert initial_scope(("a",), ("b", "c"), None, want_refresh=True) == "a"
    assert initial_scope(None, ("b", "c"), None, want_refresh=True) == "b c"
    assert initial_scope(None, None, None, want_refresh=True) is None
    assert initial_scope(("a",), None, ("a", "offline_access"), want_refresh=True) == (
        "a offline_access")
    assert initial_scope(("a",), None, ("a", "offline_access"), want_refresh=False) == "a"


def test_a_step_up_asks_for_the_union() -> None:
    assert step_up_scope("mcp:basic", ("mcp:write", "mcp:basic")) == "mcp:basic mcp:write"
    assert step_up_scope(None, ("x",)) == "x"


def test_step_ups_are_bounded_per_resource_and_operation_and_reset_on_success() -> None:
    limits = StepUps(2)
    assert limits.allow("r", "tools/call a") and limits.allow("r", "tools/call a")
    assert not limits.allow("r", "tools/call a")
    assert limits.allow("r", "tools/call b") and limits.allow("other", "tools/call a")
    limits.succeeded("r", "tools/call a")
    assert limits.allow("r", "tools/call a")


# -- targets ------------------------------------------------------------------------------------


@pytest.mark.parametrize("url", [
    "javascript:alert(1)", "data:text/html,x", "file:///etc/passwd", "http://as.example/a",
    "https://user:pw@as.example/a", "https:///nohost",
])
def test_unsafe_authorization_urls_are_refused(url: str) -> None:
    with pytest.raises(AuthError, match="refused"):
        check_authorization_url(url)


def test_https_and_loopback_http_authorization_urls_are_accepted() -> None:
    for url in ("https://as.example/authorize", "http://127.0.0.1:8/a", "http://localhost/a",
                "http://[::1]:9/a"):
        check_authorization_url(url)


def test_fetches_refuse_private_link_local_and_loopback_outside_development() -> None:
    with pytest.raises(AuthError, match="link-local"):
        check_fetch_url("https://169.254.169.254/latest", allow_loopback=True)
    with pytest.raises(AuthError, match="private"):
        check_fetch_url("https://10.1.2.3/x", allow_loopback=True)
    with pytest.raises(AuthError, match="loopback"):
        check_fetch_url("http://127.0.0.1:5/x", allow_loopback=False)
    assert check_fetch_url("http://127.0.0.1:5/x", allow_loopback=True) == "127.0.0.1"
    with pytest.raises(AuthError, match="private"):
        check_address(ipaddress.ip_address("::ffff:192.168.0.1"), "https://n.example/x",
                      allow_loopback=True)
    check_address(ipaddress.ip_address("93.184.216.34"), "https://n.example/x",
                  allow_loopback=False)
