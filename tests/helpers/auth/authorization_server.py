"""A real OAuth 2.1 authorization server for the end-to-end tests, on authlib, in its own process.

`python tests/helpers/auth/authorization_server.py [--consent auto|deny|page] [--ttl SECONDS]` listens
on 127.0.0.1 on a free port and prints one JSON line on stdout once it accepts connections:
`{"issuer": ..., "introspection_client_id": ..., "introspection_client_secret": ...}` (the
credentials a resource server uses for RFC 7662). Then it serves until stopped:

- RFC 8414 metadata at `/.well-known/oauth-authorization-server` (S256 the only PKCE method,
  RFC 9207 `iss` in authorization responses);
- `/authorize`: the authorization code grant, PKCE required; with `--consent auto` (the
  default) the consent step answers at once with the redirect to the client's redirect_uri,
  so a headless "browser" that follows redirects completes the flow; `deny` answers
  `access_denied`; `page` shows a form to approve;
- `/token`: authorization_code, refresh_token (rotated: each works once) and
  client_credentials, with `resource` (RFC 8707) as the JWT access token's `aud`;
- `/register` (RFC 7591), `/introspect` (RFC 7662), `/jwks`;
- `/admin/rotate` (or SIGHUP): a new signing key; `{"keep": false}` drops the old ones.
  `/admin/consent` changes the consent answer, `/admin/revoke` revokes every access token
  issued so far (introspection says inactive), `/admin/log` lists what the token and
  authorization endpoints were asked (names and non-secret values only).

It is a test fixture, not a product: its state is in memory and dies with the process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import signal
import socket
from collections import defaultdict
from typing import Any
from urllib.parse import parse_qsl, urlencode

import uvicorn
from authlib.common.urls import add_params_to_uri
from authlib.oauth2 import AuthorizationServer
from authlib.oauth2.rfc6749 import JsonPayload, JsonRequest, OAuth2Payload, OAuth2Request
from authlib.oauth2.rfc6749.errors import OAuth2Error
from authlib.oauth2.rfc7591 import ClientRegistrationEndpoint
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oauth2.rfc7662 import IntrospectionEndpoint
from authlib.oauth2.rfc9207 import IssuerParameter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from helpers.auth.as_models import (
    AuthorizationCodeGrant,
    ClientCredentialsGrant,
    RefreshTokenGrant,
    Registry,
    SigningKeys,
    TestClient,
    TokenGenerator,
    User,
)

__all__ = ["build_app", "main"]

SCOPES = ("mcp:read", "mcp:write", "mcp:admin", "calendar:read", "calendar:write")


class Answer:
    """What authlib's core hands back, as Starlette will send it; `location` is what the
    RFC 9207 extension edits to add `iss`."""

    def __init__(self, status: int, body: Any, headers: list[tuple[str, str]]) -> None:
        self.status, self.body, self.headers = status, body, dict(headers)

    @property
    def location(self) -> str | None:
        return self.headers.get("Location")

    @location.setter
    def location(self, value: str) -> None:
        self.headers["Location"] = value

    def response(self) -> Response:
        body = json.dumps(self.body) if isinstance(self.body, dict) else (self.body or "")
        return Response(body, self.status, self.headers)


class FormPayload(OAuth2Payload):  # type: ignore[misc]
    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self._list: dict[str, list[str]] = defaultdict(list)
        for name, value in pairs:
            self._list[name].append(value)
        self._data = {name: values[0] for name, values in self._list.items()}

    @property
    def data(self) -> dict[str, str]:
        return self._data

    @property
    def datalist(self) -> dict[str, list[str]]:
        return self._list


class FormRequest(OAuth2Request):  # type: ignore[misc]
    """A Starlette request, its body already read, as authlib's core reads requests."""

    def __init__(self, request: Request, body: bytes) -> None:
        super().__init__(request.method, str(request.url), headers=request.headers)
        self._query = dict(request.query_params)
        form = parse_qsl(body.decode("utf-8", "replace")) if request.method == "POST" else []
        self._form = dict(form)
        self.payload = FormPayload([*request.query_params.multi_items(), *form])

    @property
    def args(self) -> dict[str, str]:
        return self._query

    @property
    def form(self) -> dict[str, str]:
        return self._form


class BodyJsonPayload(JsonPayload):  # type: ignore[misc]
    def __init__(self, data: Any) -> None:
        self._data = data

    @property
    def data(self) -> Any:
        return self._data


class Server(AuthorizationServer):  # type: ignore[misc]
    """authlib's framework-free server, bound to this process's registry and keys."""

    def __init__(self, issuer: str, ttl: int, alg: str) -> None:
        super().__init__(scopes_supported=list(SCOPES))
        self.issuer = issuer
        self.registry = Registry()
        self.keys = SigningKeys(alg)
        self.consent = "auto"
        self.log: list[dict[str, Any]] = []
        self.register_token_generator("default", TokenGenerator(issuer, self.keys, ttl))
        for grant in (AuthorizationCodeGrant, RefreshTokenGrant, ClientCredentialsGrant):
            grant.registry = self.registry
        self.register_grant(AuthorizationCodeGrant, [CodeChallenge(required=True)])
        self.register_grant(RefreshTokenGrant)
        self.register_grant(ClientCredentialsGrant)
        self.register_extension(Issuer(issuer))
        self.register_endpoint(Registration(self))
        self.register_endpoint(Introspection(self))
        secret = secrets.token_urlsafe(24)
        self.introspector = TestClient("resource-server", secret, {
            "token_endpoint_auth_method": "client_secret_basic", "grant_types": []})
        self.registry.clients[self.introspector.client_id] = self.introspector

    def query_client(self, client_id: str) -> TestClient | None:
        return self.registry.clients.get(client_id)

    def save_token(self, token: dict[str, Any], request: Any) -> None:
        self.registry.save(token, request.client, request.user)

    def create_oauth2_request(self, request: Any) -> Any:
        return request  # already a FormRequest: the body was read by the async endpoint

    def create_json_request(self, request: Any) -> Any:
        return request

    def handle_response(self, status: int, body: Any, headers: Any) -> Answer:
        return Answer(status, body, list(headers))

    def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
        pass

    def metadata(self) -> dict[str, Any]:
        base = self.issuer
        return {
            "issuer": base,
            "authorization_endpoint": f"{base}/authorize",
            "token_endpoint": f"{base}/token",
            "registration_endpoint": f"{base}/register",
            "jwks_uri": f"{base}/jwks",
            "introspection_endpoint": f"{base}/introspect",
            "scopes_supported": list(SCOPES),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token",
                                      "client_credentials"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none", "client_secret_basic",
                                                      "client_secret_post"],
            "introspection_endpoint_auth_methods_supported": ["client_secret_basic"],
            "authorization_response_iss_parameter_supported": True,
        }


class Issuer(IssuerParameter):  # type: ignore[misc]
    def __init__(self, issuer: str) -> None:
        self.issuer = issuer

    def get_issuer(self) -> str:
        return self.issuer


class Registration(ClientRegistrationEndpoint):  # type: ignore[misc]
    """Open registration (no initial access token), as MCP clients expect of DCR."""

    def authenticate_token(self, request: Any) -> bool:
        return True

    def get_server_metadata(self) -> dict[str, Any]:
        return dict(self.server.metadata())

    def generate_client_secret(self, request: Any) -> str | None:
        method = (request.payload.data or {}).get("token_endpoint_auth_method")
        return None if method == "none" else secrets.token_urlsafe(24)

    def save_client(self, client_info: dict[str, Any], client_metadata: dict[str, Any],
                    request: Any) -> TestClient:
        client = TestClient(client_info["client_id"], client_info.get("client_secret"),
                            dict(client_metadata))
        self.server.registry.clients[client.client_id] = client
        return client


class Introspection(IntrospectionEndpoint):  # type: ignore[misc]
    CLIENT_AUTH_METHODS = ["client_secret_basic"]

    def query_token(self, token_string: str, token_type_hint: str | None) -> Any:
        return self.server.registry.access(token_string)

    def check_permission(self, token: Any, client: TestClient, request: Any) -> bool:
        return client.client_id == self.server.introspector.client_id

    def introspect_token(self, token: Any) -> dict[str, Any]:
        return {"active": True, "client_id": token.client_id, "token_type": "Bearer",
                "scope": token.scope, "sub": token.subject, "aud": token.audience,
                "iss": self.server.issuer, "iat": token.issued_at,
                "exp": token.issued_at + token.expires_in}


LOGGED = ("grant_type", "client_id", "resource", "scope", "code_challenge_method",
          "redirect_uri", "response_type")


def _note(server: Server, endpoint: str, request: FormRequest) -> None:
    data = request.payload.datalist
    entry: dict[str, Any] = {"endpoint": endpoint}
    entry.update({k: data[k] if len(data[k]) > 1 else data[k][0] for k in LOGGED if k in data})
    entry["code_challenge"] = "code_challenge" in data
    entry["code_verifier"] = "code_verifier" in data
    entry["basic_auth"] = request.headers.get("authorization", "").lower().startswith("basic ")
    entry["client_secret_in_body"] = "client_secret" in data
    server.log.append(entry)


def build_app(server: Server) -> Starlette:
    """The HTTP face of `server`: each endpoint reads the body, then hands authlib a request."""

    async def metadata(request: Request) -> Response:
        return JSONResponse(server.metadata())

    async def authorize(request: Request) -> Response:
        oauth = FormRequest(request, await request.body())
        _note(server, "authorize", oauth)
        try:
            grant = server.get_consent_grant(oauth, end_user=User())
        except OAuth2Error as error:
            if getattr(error, "redirect_uri", None):  # a checked redirect_uri: tell the client
                answer = server.handle_error_response(oauth, error)
                answer.location = add_params_to_uri(answer.location, {"iss": server.issuer})
                return answer.response()  # type: ignore[no-any-return]
            # never redirect to a URI the client has not registered
            return JSONResponse({"error": error.error, "error_description": error.description},
                                400)
        decision = oauth.form.get("decision") if request.method == "POST" else None
        if server.consent == "page" and decision is None:
            fields = urlencode(dict(oauth.payload.data))
            return HTMLResponse(f'<form method="post" action="/authorize?{fields}">'
                                '<button name="decision" value="approve">Approve</button>'
                                '<button name="decision" value="deny">Deny</button></form>')
        approved = decision == "approve" if decision else server.consent == "auto"
        answer = server.create_authorization_response(
            oauth, grant_user=User() if approved else None, grant=grant)
        return answer.response()  # type: ignore[no-any-return]

    async def token(request: Request) -> Response:
        oauth = FormRequest(request, await request.body())
        _note(server, "token", oauth)
        return server.create_token_response(oauth).response()  # type: ignore[no-any-return]

    async def register(request: Request) -> Response:
        try:
            body = json.loads(await request.body() or b"null")
        except ValueError:
            return JSONResponse({"error": "invalid_client_metadata",
                                 "error_description": "the body is not JSON"}, 400)
        json_request = JsonRequest(request.method, str(request.url), request.headers)
        json_request.payload = BodyJsonPayload(body if isinstance(body, dict) else None)
        answer = server.create_endpoint_response("client_registration", json_request)
        return answer.response()  # type: ignore[no-any-return]

    async def introspect(request: Request) -> Response:
        oauth = FormRequest(request, await request.body())
        answer = server.create_endpoint_response("introspection", oauth)
        return answer.response()  # type: ignore[no-any-return]

    async def jwks(request: Request) -> Response:
        return JSONResponse(server.keys.jwks(), headers={"Cache-Control": "max-age=3600"})

    async def rotate(request: Request) -> Response:
        options = json.loads(await request.body() or b"{}")
        return JSONResponse({"kid": server.keys.rotate(keep=bool(options.get("keep", True)))})

    async def consent(request: Request) -> Response:
        server.consent = json.loads(await request.body())["consent"]
        return JSONResponse({"consent": server.consent})

    async def revoke(request: Request) -> Response:
        for issued in server.registry.tokens:
            issued.access_revoked = True
        return JSONResponse({"revoked": len(server.registry.tokens)})

    async def log(request: Request) -> Response:
        return JSONResponse({"requests": server.log})

    return Starlette(routes=[
        Route("/.well-known/oauth-authorization-server", metadata),
        Route("/authorize", authorize, methods=["GET", "POST"]),
        Route("/token", token, methods=["POST"]),
        Route("/register", register, methods=["POST"]),
        Route("/introspect", introspect, methods=["POST"]),
        Route("/jwks", jwks),
        Route("/admin/rotate", rotate, methods=["POST"]),
        Route("/admin/consent", consent, methods=["POST"]),
        Route("/admin/revoke", revoke, methods=["POST"]),
        Route("/admin/log", log),
    ])


async def _serve(args: argparse.Namespace) -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    issuer = f"http://127.0.0.1:{sock.getsockname()[1]}"
    server = Server(issuer, args.ttl, args.alg)
    server.consent = args.consent
    signal.signal(signal.SIGHUP, lambda *_: server.keys.rotate())
    runner = uvicorn.Server(uvicorn.Config(build_app(server), log_level="warning",
                                           lifespan="off"))
    serving = asyncio.create_task(runner.serve(sockets=[sock]))
    for _ in range(500):  # started: uvicorn accepts on the socket already listening
        if runner.started or serving.done():
            break
        await asyncio.sleep(0.01)
    print(json.dumps({"issuer": issuer,
                      "introspection_client_id": server.introspector.client_id,
                      "introspection_client_secret": server.introspector.client_secret}),
          flush=True)
    await serving


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--consent", choices=("auto", "deny", "page"), default="auto")
    parser.add_argument("--ttl", type=int, default=3600, help="access token lifetime (s)")
    parser.add_argument("--alg", choices=("RS256", "ES256"), default="RS256")
    asyncio.run(_serve(parser.parse_args(argv)))


if __name__ == "__main__":
    main()
