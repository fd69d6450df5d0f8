"""The fields of each identity provider's published discovery document that its preset
depends on, as the providers publish them (recorded from their public documents; the tests
reach no provider). A tenant's own value is written `{tenant}` where the preset fills it in.

- Google: https://accounts.google.com/.well-known/openid-configuration
- Microsoft Entra ID: https://login.microsoftonline.com/{tenant}/v2.0/.well-known/
  openid-configuration (the `common` document, with `{tenantid}` in its issuer)
- Auth0: https://{domain}/.well-known/openid-configuration
- Okta: https://{domain}/oauth2/default/.well-known/openid-configuration (a custom
  authorization server; `default` is the one every org has)
- Keycloak: https://{host}/realms/{realm}/.well-known/openid-configuration
- GitHub publishes no discovery document for OAuth apps: its documentation's endpoints
  ("Authorizing OAuth apps", the web application flow; the REST API's `GET /user`).
"""

from __future__ import annotations

from typing import Any

__all__ = ["DOCUMENTS", "TENANTS"]

TENANTS = {
    "google": None,
    "entra": "8eaef023-2b34-4da1-9baa-8bc8c9d6a490",
    "auth0": "dev-pmgzfvrxbdwvrh3h.us.auth0.com",
    "okta": "dev-486191.okta.com/oauth2/default",
    "keycloak": "https://keycloak.gawron.cloud/realms/webentwicklung",
    "github": None,
}
"""A tenant of each, as written in the preset's spec (`entra:...`, `auth0:...`)."""

DOCUMENTS: dict[str, dict[str, Any]] = {
    "google": {
        "issuer": "https://accounts.google.com",
        "authorization_endpoint": "https://accounts.google.com/o/oauth2/v2/auth",
        "token_endpoint": "https://oauth2.googleapis.com/token",
        "userinfo_endpoint": "https://openidconnect.googleapis.com/v1/userinfo",
        "revocation_endpoint": "https://oauth2.googleapis.com/revoke",
        "jwks_uri": "https://www.googleapis.com/oauth2/v3/certs",
        "scopes_supported": ["openid", "email", "profile"],
        "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"],
        "claims_supported": ["aud", "email", "email_verified", "exp", "family_name",
                             "given_name", "iat", "iss", "name", "picture", "sub"],
        "code_challenge_methods_supported": ["plain", "S256"],
    },
    "entra": {
        "issuer": "https://login.microsoftonline.com/{tenant}/v2.0",
        "authorization_endpoint":
            "https://login.microsoftonline.com/{tenant}/oauth2/v2.0/authorize",
        "token_endpoint": "https://login.microsoftonline.com/{tenant}/oauth2/v2.0/token",
        "userinfo_endpoint": "https://graph.microsoft.com/oidc/userinfo",
        "jwks_uri": "https://login.microsoftonline.com/{tenant}/discovery/v2.0/keys",
        "scopes_supported": ["openid", "profile", "email", "offline_access"],
        "token_endpoint_auth_methods_supported": ["client_secret_post", "private_key_jwt",
                                                  "client_secret_basic"],
        "claims_supported": ["sub", "iss", "aud", "exp", "iat", "auth_time", "acr", "nonce",
                             "preferred_username", "name", "tid", "ver", "at_hash", "c_hash",
                             "email"],
        # Entra's ID tokens also carry `oid` (the user's object id, the same for every app of
        # the tenant) and, once the app's manifest asks for them, `groups`: its token
        # reference documents both, though claims_supported lists neither.
        "id_token_claims": ["oid", "groups"],
    },
    "auth0": {
        "issuer": "https://{tenant}/",
        "authorization_endpoint": "https://{tenant}/authorize",
        "token_endpoint": "https://{tenant}/oauth/token",
        "userinfo_endpoint": "https://{tenant}/userinfo",
        "jwks_uri": "https://{tenant}/.well-known/jwks.json",
        "revocation_endpoint": "https://{tenant}/oauth/revoke",
        "scopes_supported": ["openid", "profile", "offline_access", "name", "given_name",
                             "family_name", "nickname", "email", "email_verified", "picture",
                             "created_at", "identities", "phone", "address"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post",
                                                  "private_key_jwt"],
        "code_challenge_methods_supported": ["S256", "plain"],
        "claims_supported": ["aud", "auth_time", "created_at", "email", "email_verified",
                             "exp", "family_name", "given_name", "iat", "identities", "iss",
                             "name", "nickname", "phone_number", "picture", "sub"],
    },
    "okta": {
        "issuer": "https://{tenant}",
        "authorization_endpoint": "https://{tenant}/v1/authorize",
        "token_endpoint": "https://{tenant}/v1/token",
        "userinfo_endpoint": "https://{tenant}/v1/userinfo",
        "jwks_uri": "https://{tenant}/v1/keys",
        "revocation_endpoint": "https://{tenant}/v1/revoke",
        "scopes_supported": ["openid", "profile", "email", "address", "phone",
                             "offline_access", "device_sso"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post",
                                                  "client_secret_jwt", "private_key_jwt",
                                                  "none"],
        "claims_supported": ["iss", "ver", "sub", "aud", "iat", "exp", "jti", "auth_time",
                             "amr", "idp", "nonce", "name", "nickname", "preferred_username",
                             "given_name", "middle_name", "family_name", "email",
                             "email_verified", "profile", "zoneinfo", "locale", "address",
                             "phone_number", "picture", "website", "gender", "birthdate",
                             "updated_at", "at_hash", "c_hash"],
        "code_challenge_methods_supported": ["S256"],
    },
    "keycloak": {
        "issuer": "{tenant}",
        "authorization_endpoint": "{tenant}/protocol/openid-connect/auth",
        "token_endpoint": "{tenant}/protocol/openid-connect/token",
        "userinfo_endpoint": "{tenant}/protocol/openid-connect/userinfo",
        "jwks_uri": "{tenant}/protocol/openid-connect/certs",
        "revocation_endpoint": "{tenant}/protocol/openid-connect/revoke",
        "scopes_supported": ["openid", "email", "offline_access", "basic", "organization",
                             "address", "service_account", "microprofile-jwt", "roles",
                             "phone", "web-origins", "profile", "acr"],
        "token_endpoint_auth_methods_supported": ["private_key_jwt", "client_secret_basic",
                                                  "client_secret_post", "tls_client_auth",
                                                  "client_secret_jwt"],
        "claims_supported": ["aud", "sub", "iss", "auth_time", "name", "given_name",
                             "family_name", "preferred_username", "email", "acr"],
        "code_challenge_methods_supported": ["plain", "S256"],
    },
    "github": {
        "authorization_endpoint": "https://github.com/login/oauth/authorize",
        "token_endpoint": "https://github.com/login/oauth/access_token",
        "userinfo_endpoint": "https://api.github.com/user",
        # The REST API's user object: `id` (a number, stable for the account), `login` (the
        # handle, which the user may change), `email` (public email, may be null).
        "user_fields": ["id", "login", "email"],
        "scopes_supported": ["read:user", "user:email"],
    },
}
