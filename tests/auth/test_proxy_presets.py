"""The identity provider presets against the fields each provider publishes in its discovery
document (`provider_documents.py`, recorded; no provider is reached): every endpoint the
preset fills in for a tenant is the one the document names, what the proxy asks for is among
the scopes the provider supports, it authenticates by a method the provider lists, PKCE S256
is among its methods where it lists them, and the claims that become the principal are ones
the provider issues. The resource-server route of each preset names the same issuer and
keys."""

from __future__ import annotations

import pytest
from helpers.auth.provider_documents import DOCUMENTS, TENANTS

from mcpkit.auth.proxy.presets import PRESETS, discovered, issuer, parse_spec, preset, upstream

ENDPOINTS = ("issuer", "authorization_endpoint", "token_endpoint", "userinfo_endpoint",
             "jwks_uri", "revocation_endpoint")


def _document(name: str) -> dict[str, object]:
    tenant = TENANTS[name] or ""
    return {k: v.replace("{tenant}", tenant) if isinstance(v, str) else v
            for k, v in DOCUMENTS[name].items()}


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_each_presets_endpoints_are_those_the_provider_publishes(name: str) -> None:
    doc = _document(name)
    made = upstream(name, TENANTS[name], client_id="c", client_secret="s")
    for field in ENDPOINTS:
        assert getattr(made, field) == doc.get(field), field


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_each_preset_asks_for_what_the_provider_supports(name: str) -> None:
    doc, chosen = _document(name), preset(name)
    assert set(chosen.scopes) <= set(doc["scopes_supported"])  # type: ignore[arg-type]
    methods = doc.get("token_endpoint_auth_methods_supported")
    if methods is not None:
        assert chosen.auth_method in methods  # type: ignore[operator]
    pkce = doc.get("code_challenge_methods_supported")
    if pkce is not None:
        assert "S256" in pkce  # type: ignore[operator]
    issued = set(doc.get("claims_supported", ())) | set(doc.get("id_token_claims", ())) | \
        set(doc.get("user_fields", ()))  # type: ignore[arg-type]
    assert chosen.claims.subject in issued
    for kept in (chosen.claims.email, chosen.claims.name):
        assert kept is None or kept in issued


@pytest.mark.parametrize("name", ["entra", "auth0", "okta", "keycloak"])
def test_the_resource_server_route_of_a_preset_names_the_same_issuer_and_keys(
        name: str) -> None:
    doc, found = _document(name), issuer(name, TENANTS[name])
    assert (found.issuer, found.jwks_uri) == (doc["issuer"], doc["jwks_uri"])


def test_github_and_google_take_the_proxy_route_only() -> None:
    for name in ("github", "google"):
        with pytest.raises(ValueError, match="authorization proxy"):
            issuer(name)


def test_an_openid_provider_by_url_takes_its_endpoints_from_its_document() -> None:
    made = upstream(*parse_spec("https://sso.example.com/realms/a"), client_id="c",
                    client_secret="s")
    assert made.discovery_url == "https://sso.example.com/realms/a/.well-known/" \
        "openid-configuration"
    doc = {k: v.replace("{tenant}", "https://sso.example.com/realms/a")
           for k, v in DOCUMENTS["keycloak"].items() if isinstance(v, str)}
    resolved = discovered(made, doc)
    assert resolved.token_endpoint == "https://sso.example.com/realms/a/protocol/" \
        "openid-connect/token"
    assert resolved.issuer == "https://sso.example.com/realms/a"
    with pytest.raises(ValueError, match="names the issuer"):
        discovered(made, {**doc, "issuer": "https://evil.example.com"})
    with pytest.raises(ValueError, match="no authorization or token endpoint"):
        discovered(made, {"issuer": "https://sso.example.com/realms/a"})


@pytest.mark.parametrize(("spec", "says"), [
    ("entra", "needs the directory"), ("entra:a/b", "no path"), ("auth0:dev x.auth0.com", "must be"),
    ("github:acme", "takes no tenant"), ("keycloak:http://sso.example.com/realms/a", "https"),
    ("nope", "no identity provider preset"),
])
def test_a_spec_that_names_no_provider_is_refused_naming_the_fix(spec: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        upstream(*parse_spec(spec), client_id="c", client_secret="s")


def test_every_preset_is_recorded_or_is_the_any_provider_one() -> None:
    assert set(PRESETS) == set(DOCUMENTS) | {"oidc"}
