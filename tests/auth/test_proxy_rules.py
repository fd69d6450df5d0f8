"""The authorization proxy's rules without I/O: what may be registered as a redirect URI and
what matches one (RFC 8252 loopback ports), registrations and client metadata documents,
the authorization request's checks in the order that decides where a refusal may go, the
consent page (escaped, unframeable, CSRF-bound), the tokens it signs, and its
configuration's refusals."""

from __future__ import annotations

import pytest

from mcpkit.auth.proxy import AuthProxy, ClaimMap, ProxyLimits, Upstream
from mcpkit.auth.proxy.authorize import (
    check_request,
    client_redirect,
    granted_scopes,
    parse_query,
    redirect_with,
)
from mcpkit.auth.proxy.clients import (
    ClientRecord,
    check_document_url,
    check_redirect_uri,
    client_from_document,
    client_from_registration,
    redirect_matches,
)
from mcpkit.auth.proxy.consent import (
    PAGE_HEADERS,
    browser_binding,
    consent_page,
    csrf_token,
    read_cookie,
    set_cookie,
)
from mcpkit.auth.proxy.metadata import authorization_server_metadata, metadata_path
from mcpkit.auth.proxy.tokens import (
    SigningKeys,
    issue_access_token,
    pkce_challenge,
    pkce_matches,
    read_access_token,
)
from mcpkit.errors import InvalidTokenError, OAuthRequestError
from mcpkit.protocol.request_state import KeyRing

LIMITS = ProxyLimits()
RESOURCE = "https://mcp.example.com/mcp"
CHALLENGE = pkce_challenge("v" * 43)


def upstream(**changes: object) -> Upstream:
    fields: dict[str, object] = {"name": "Acme SSO", "client_id": "proxy",
                                 "client_secret": "s3cret",
                                 "discovery_url": "https://sso.example.com/.well-known/"
                                 "openid-configuration"}
    fields.update(changes)
    return Upstream(**fields)  # type: ignore[arg-type]


def registered(*uris: str, method: str = "none") -> ClientRecord:
    return client_from_registration(
        {"redirect_uris": list(uris), "token_endpoint_auth_method": method,
         "grant_types": ["authorization_code", "refresh_token"], "client_name": "App"},
        client_id="mcp-1", secret_hash="h", now=0.0, limits=LIMITS)


# -- redirect URIs --------------------------------------------------------------------------


@pytest.mark.parametrize("uri", [
    "https://app.example.com/callback", "http://127.0.0.1:8765/callback",
    "http://[::1]:9000/cb", "http://localhost:3000/callback", "com.example.app:/oauth",
])
def test_these_redirect_uris_may_be_registered(uri: str) -> None:
    assert check_redirect_uri(uri) == uri


@pytest.mark.parametrize(("uri", "why"), [
    ("http://app.example.com/callback", "must be https"),
    ("https://app.example.com/cb#frag", "no fragment"),
    ("javascript:alert(1)", "https, http on a loopback"),
    ("data:text/html,hi", "https, http on a loopback"),
    ("file:///etc/passwd", "https, http on a loopback"),
    ("myapp:/callback", "reverse domain name"),
    ("https://user:pw@app.example.com/cb", "credentials"),
    ("https://app.example.com/ cb", "without spaces"),
    ("https:///nohost", "names no host"),
    ("", "at most"),
])
def test_these_redirect_uris_are_refused_naming_the_rule(uri: str, why: str) -> None:
    with pytest.raises(OAuthRequestError, match=why) as caught:
        check_redirect_uri(uri)
    assert caught.value.error == "invalid_redirect_uri"


def test_a_redirect_uri_matches_exactly_and_a_loopback_ip_on_any_port() -> None:
    registered_uris = ("https://app.example.com/cb", "http://127.0.0.1:4000/callback",
                       "http://localhost:5000/callback")
    assert redirect_matches(registered_uris, "https://app.example.com/cb")
    assert not redirect_matches(registered_uris, "https://app.example.com/cb/")
    assert not redirect_matches(registered_uris, "https://app.example.com/cb?x=1")
    assert not redirect_matches(registered_uris, "https://APP.example.com/cb")
    # RFC 8252 §7.3: a native app's loopback IP literal, any port, the same path.
    assert redirect_matches(registered_uris, "http://127.0.0.1:61234/callback")
    assert not redirect_matches(registered_uris, "http://127.0.0.1:61234/other")
    assert not redirect_matches(registered_uris, "https://127.0.0.1:61234/callback")
    # localhost is a name, not an IP literal: exact only.
    assert not redirect_matches(registered_uris, "http://localhost:5001/callback")


def test_a_registration_is_checked_and_a_public_one_keeps_no_secret() -> None:
    public = registered("http://127.0.0.1:1/cb")
    assert public.auth_method == "none" and public.secret_hash is None and public.refreshes
    confidential = registered("https://app.example.com/cb", method="client_secret_basic")
    assert confidential.secret_hash == "h"
    assert ClientRecord.from_json(confidential.to_json()) == confidential
    for doc, code in [
        ({"redirect_uris": []}, "invalid_redirect_uri"),
        ({"redirect_uris": ["https://a.example/cb"] * 1, "grant_types": ["implicit"]},
         "invalid_client_metadata"),
        ({"redirect_uris": ["https://a.example/cb"], "response_types": ["token"]},
         "invalid_client_metadata"),
        ({"redirect_uris": ["https://a.example/cb"], "token_endpoint_auth_method":
          "private_key_jwt"}, "invalid_client_metadata"),
        ({"redirect_uris": ["https://a.example/cb"], "client_name": "x" * 500},
         "invalid_client_metadata"),
        ({"redirect_uris": [f"https://a.example/{i}" for i in range(11)]},
         "invalid_redirect_uri"),
        (["not", "an", "object"], "invalid_client_metadata"),
    ]:
        with pytest.raises(OAuthRequestError) as caught:
            client_from_registration(doc, client_id="c", secret_hash=None, now=0,
                                     limits=LIMITS)
        assert caught.value.error == code, doc


def test_a_client_metadata_document_must_name_its_own_url_and_hold_no_secret() -> None:
    url = "https://app.example.com/oauth/client.json"
    doc = {"client_id": url, "client_name": "App", "redirect_uris": ["http://127.0.0.1/cb"]}
    record = client_from_document(doc, url, limits=LIMITS)
    assert record.source == "cimd" and record.auth_method == "none"
    with pytest.raises(OAuthRequestError, match="names another client_id"):
        client_from_document({**doc, "client_id": "https://evil.example/client.json"}, url,
                             limits=LIMITS)
    with pytest.raises(OAuthRequestError, match="public clients"):
        client_from_document({**doc, "token_endpoint_auth_method": "client_secret_post"}, url,
                             limits=LIMITS)
    for bad in ("http://app.example.com/c.json", "https://app.example.com",
                "https://app.example.com/a/../c.json", "https://u@app.example.com/c.json",
                "https://app.example.com/c.json#x"):
        with pytest.raises(OAuthRequestError) as caught:
            check_document_url(bad)
        assert caught.value.error == "invalid_client"


# -- the authorization request ---------------------------------------------------------------


def test_a_parameter_given_twice_is_refused() -> None:
    assert parse_query("a=1&b=") == {"a": "1", "b": ""}
    with pytest.raises(OAuthRequestError, match="more than once"):
        parse_query("client_id=a&client_id=b")


def test_an_unregistered_redirect_uri_is_refused_before_anything_is_redirected() -> None:
    client = registered("https://app.example.com/cb", "https://app.example.com/cb2")
    assert client_redirect(client, {"redirect_uri": "https://app.example.com/cb"})
    with pytest.raises(OAuthRequestError, match="nothing is sent there"):
        client_redirect(client, {"redirect_uri": "https://evil.example/cb"})
    with pytest.raises(OAuthRequestError, match="registered several"):
        client_redirect(client, {})
    only = registered("https://app.example.com/cb")
    assert client_redirect(only, {}) == "https://app.example.com/cb"


def _params(**changes: str | None) -> dict[str, str]:
    params: dict[str, str | None] = {"response_type": "code", "code_challenge": CHALLENGE,
                                     "code_challenge_method": "S256", "state": "s"}
    params.update(changes)
    return {k: v for k, v in params.items() if v is not None}


@pytest.mark.parametrize(("changes", "error"), [
    ({"code_challenge": None}, "invalid_request"),
    ({"code_challenge_method": "plain"}, "invalid_request"),
    ({"code_challenge_method": None}, "invalid_request"),
    ({"code_challenge": "short"}, "invalid_request"),
    ({"response_type": "token"}, "unsupported_response_type"),
    ({"resource": "https://other.example.com/mcp"}, "invalid_target"),
    ({"scope": "files:delete"}, "invalid_scope"),
    ({"request": "eyJ..."}, "request_not_supported"),
])
def test_the_rest_of_the_request_is_refused_with_the_oauth_error(
        changes: dict[str, str | None], error: str) -> None:
    client = registered("https://app.example.com/cb")
    with pytest.raises(OAuthRequestError) as caught:
        check_request(client, "https://app.example.com/cb", _params(**changes),
                      resource=RESOURCE, scopes_supported=("mcp:read",))
    assert caught.value.error == error


def test_a_good_request_names_this_resource_and_the_scopes_granted() -> None:
    client = registered("https://app.example.com/cb")
    request = check_request(client, "https://app.example.com/cb",
                            _params(resource=RESOURCE + "/", scope="mcp:read offline_access"),
                            resource=RESOURCE, scopes_supported=("mcp:read", "mcp:admin"))
    assert request.resource == RESOURCE and request.scopes == ("mcp:read",)
    assert granted_scopes(None, ("a", "b", "offline_access")) == ("a", "b")
    assert granted_scopes("offline_access", ("a",)) == ()
    assert redirect_with("https://a.example/cb?x=1", {"code": "c", "state": None}) == \
        "https://a.example/cb?x=1&code=c"


# -- the consent page ------------------------------------------------------------------------


def test_the_consent_page_escapes_what_others_wrote_and_cannot_be_framed() -> None:
    client = ClientRecord("mcp-1", ("https://app.example.com/cb",), "none",
                          ("authorization_code",),
                          client_name='<script>alert(1)</script>\u202eevil"')
    page = consent_page(client=client, redirect_uri="https://app.example.com/cb?x=<b>",
                        scopes=("mcp:read", "<img>"), resource=RESOURCE, resource_name=None,
                        upstream="GitHub", action="https://mcp.example.com/oauth/consent",
                        pending="p1", csrf="t1").decode()
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "\u202e" not in page and "<img>" not in page
    assert "not verified" in page and "GitHub" in page and "https://app.example.com" in page
    assert page.index('value="allow"') < page.index('value="deny"')  # the first form allows
    headers = dict(PAGE_HEADERS)
    assert headers[b"x-frame-options"] == b"DENY"
    assert b"frame-ancestors 'none'" in headers[b"content-security-policy"]
    assert b"script-src" not in headers[b"content-security-policy"]  # default-src 'none'
    assert headers[b"cache-control"] == b"no-store"
    assert headers[b"referrer-policy"] == b"same-origin"  # the decision's Origin is not null
    document = ClientRecord("https://app.example.com/c.json", ("https://app.example.com/cb",),
                            "none", ("authorization_code",), client_name="App", source="cimd")
    shown = consent_page(client=document, redirect_uri="https://app.example.com/cb",
                         scopes=(), resource=RESOURCE, resource_name="Files", upstream="Google",
                         action="/a", pending="p", csrf="t").decode()
    assert "identified by <code>app.example.com</code>" in shown and "Files" in shown


def test_the_csrf_token_is_bound_to_the_pending_request_and_the_browser() -> None:
    key = b"k" * 32
    token = csrf_token(key, "pending-1", "browser-a")
    assert token == csrf_token(key, "pending-1", "browser-a")
    assert token != csrf_token(key, "pending-2", "browser-a")
    assert token != csrf_token(key, "pending-1", "browser-b")
    assert token != csrf_token(b"j" * 32, "pending-1", "browser-a")
    assert browser_binding("a") != browser_binding("b")
    cookie = set_cookie("a" * 48, True, 60).decode()
    assert cookie.startswith("__Host-mcpkit-proxy=") and "HttpOnly" in cookie
    assert "SameSite=Lax" in cookie and "Secure" in cookie and "Path=/" in cookie
    assert read_cookie(f"x=1; __Host-mcpkit-proxy={'a' * 48}", True) == "a" * 48
    assert read_cookie(f"mcpkit-proxy={'a' * 48}", True) is None  # the prefix over https
    assert read_cookie("mcpkit-proxy=short", False) is None


# -- tokens ----------------------------------------------------------------------------------


def test_pkce_s256_matches_only_its_verifier() -> None:
    verifier = "a" * 43
    assert pkce_matches(verifier, pkce_challenge(verifier))
    assert not pkce_matches("b" * 43, pkce_challenge(verifier))
    assert not pkce_matches("a" * 42, pkce_challenge("a" * 42))  # too short to be one
    assert not pkce_matches("a" * 43 + " ", pkce_challenge(verifier))


def test_access_tokens_are_signed_by_the_rings_derived_key_and_follow_its_rotation() -> None:
    old = KeyRing([b"o" * 32], bytes)
    rotated = KeyRing([b"n" * 32, b"o" * 32], bytes)
    purpose = b"test"
    keys_old = SigningKeys.derived(old.derived(purpose))
    keys_new = SigningKeys.derived(rotated.derived(purpose))
    assert keys_old.keys[0].kid == keys_new.keys[1].kid  # the same key from the same secret
    token = issue_access_token(keys_old, issuer="https://i", audience=RESOURCE, subject="u",
                               client_id="c", scopes=("a",), grant="g", jti="j", now=100,
                               ttl_s=60, identity={"subject": "u", "email": "u@x",
                                                   "token": "never copied"})
    claims = read_access_token(keys_new, token)  # signed before the rotation, still good
    assert claims["aud"] == RESOURCE and claims["gid"] == "g" and claims["exp"] == 160
    assert claims["email"] == "u@x" and "token" not in claims
    with pytest.raises(InvalidTokenError, match="key"):
        read_access_token(SigningKeys.derived(KeyRing([b"x" * 32], bytes).derived(purpose)),
                          token)
    forged = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    with pytest.raises(InvalidTokenError):
        read_access_token(keys_old, forged)
    jwks = keys_new.jwks()
    assert len(jwks["keys"]) == 2 and all("d" not in k for k in jwks["keys"])


# -- configuration and metadata ----------------------------------------------------------------


def test_the_configuration_refuses_what_cannot_work_naming_the_field() -> None:
    with pytest.raises(ValueError, match="client secret"):
        upstream(client_secret=None)
    with pytest.raises(ValueError, match="discovery_url, or authorization_endpoint"):
        upstream(discovery_url=None)
    with pytest.raises(ValueError, match="ID token"):
        upstream(discovery_url=None, authorization_endpoint="https://x/a",
                 token_endpoint="https://x/t")
    with pytest.raises(ValueError, match="https"):
        upstream(discovery_url="http://sso.example.com/.well-known/openid-configuration")
    with pytest.raises(ValueError, match=r"ClaimMap\.subject"):
        ClaimMap(subject="")
    with pytest.raises(ValueError, match="code_ttl_s"):
        ProxyLimits(code_ttl_s=0)
    with pytest.raises(ValueError, match="refresh_token_ttl_s"):
        ProxyLimits(access_token_ttl_s=100, refresh_token_ttl_s=10)
    with pytest.raises(ValueError, match="public_url"):
        AuthProxy(upstream(), public_url="http://mcp.example.com/mcp")
    with pytest.raises(ValueError, match="no MCP client can register"):
        AuthProxy(upstream(), public_url=RESOURCE, dynamic_registration=False,
                  client_documents=False)
    assert "s3cret" not in repr(upstream()) and "s3cret" not in repr(
        AuthProxy(upstream(), public_url=RESOURCE))


def test_the_metadata_names_the_proxys_endpoints_and_only_s256() -> None:
    proxy = AuthProxy(upstream(), public_url=RESOURCE, scopes_supported=("mcp:read",))
    doc = authorization_server_metadata(proxy)
    assert doc["issuer"] == "https://mcp.example.com"
    assert doc["authorization_endpoint"] == "https://mcp.example.com/oauth/authorize"
    assert doc["code_challenge_methods_supported"] == ["S256"]
    assert doc["authorization_response_iss_parameter_supported"] is True
    assert doc["client_id_metadata_document_supported"] is True
    assert doc["registration_endpoint"] == "https://mcp.example.com/oauth/register"
    assert metadata_path(proxy.issuer_url) == "/.well-known/oauth-authorization-server"
    pathed = AuthProxy(upstream(), public_url=RESOURCE, issuer="https://mcp.example.com/auth",
                       dynamic_registration=False)
    assert metadata_path(pathed.issuer_url) == "/.well-known/oauth-authorization-server/auth"
    assert "registration_endpoint" not in authorization_server_metadata(pathed)
    assert pathed.callback_url == "https://mcp.example.com/auth/oauth/callback"
