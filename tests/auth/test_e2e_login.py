"""`mcpkit login`, the client commands over its tokens, and `mcpkit logout`, as a person runs
them: real processes all the way. The authorization server is authlib's (`authorization_server
.py`, auto-approving), the MCP server is mcpkit's resource server (`protected_server.py`: JWKS
or introspection), `mcpkit` runs as a subprocess, and the "browser" is `follow_login.py`, which
loads the authorization URL and follows the redirect to the CLI's loopback listener.

Each test has a data folder of its own (MCPKIT_DATA_DIR), so its tokens are its own. Every
client message the CLI sends is checked against the schema by the protected server."""

from __future__ import annotations

import base64
import json
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.auth.as_process import AuthServer, ProtectedServer
from helpers.auth.signin_cli import kept, mcpkit, no_secret_in, tokens_of


@pytest.fixture(scope="module")
def jwt_server(auth_server: AuthServer) -> Iterator[ProtectedServer]:
    yield from ProtectedServer.serving(auth_server, "jwt")


@pytest.fixture(scope="module")
def introspected(auth_server: AuthServer) -> Iterator[ProtectedServer]:
    yield from ProtectedServer.serving(auth_server, "introspection")


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tmp_path / "data"


def test_login_then_call_uses_the_kept_token(auth_server: AuthServer, jwt_server: ProtectedServer,
                                             data: Path) -> None:
    url = jwt_server.url
    before = len(auth_server.requests())
    login = mcpkit(data, "login", url)
    assert login.returncode == 0, login.stderr
    assert login.stdout.startswith(f"Signed in to {url} at {auth_server.issuer} (scopes: mcp:read")
    assert "Opening the browser" in login.stderr
    seen = auth_server.requests()[before:]
    authorize = next(r for r in seen if r["endpoint"] == "authorize")
    token = next(r for r in seen if r["endpoint"] == "token")
    assert authorize["code_challenge_method"] == "S256" and authorize["code_challenge"]
    assert authorize["resource"] == url and authorize["redirect_uri"].startswith(
        "http://127.0.0.1:")
    assert token["grant_type"] == "authorization_code" and token["code_verifier"]
    assert token["resource"] == url
    assert stat.S_IMODE((data / "tokens.json").stat().st_mode) == 0o600

    call = mcpkit(data, "call", url, "whoami")
    assert call.returncode == 0, call.stderr
    assert call.stdout.strip() == f"alice via {authorize['client_id']} with mcp:read"
    status = mcpkit(data, "auth", "status", "--json")
    shown = json.loads(status.stdout)["signins"]
    assert [(s["resource"], s["issuer"], s["mode"], s["refreshToken"]) for s in shown] == [
        (url, auth_server.issuer, "browser", True)]
    no_secret_in(data, login.stdout, login.stderr, call.stdout, call.stderr, status.stdout)


def test_logout_forgets_and_the_next_command_says_to_log_in(
        auth_server: AuthServer, jwt_server: ProtectedServer, data: Path) -> None:
    url = jwt_server.url
    assert mcpkit(data, "login", url).returncode == 0
    out = mcpkit(data, "logout", url)
    assert out.returncode == 0 and out.stdout.startswith(f"Signed out of {url}")
    assert kept(data)["tokens"] == {}
    assert "not signed in" in mcpkit(data, "auth", "status").stdout
    refused = mcpkit(data, "tools", url)
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        f"mcpkit tools: {url} needs a sign-in at {auth_server.issuer} (none is kept for it, or "
        f"the kept one has expired or was revoked); run `mcpkit login {url}`")
    again = mcpkit(data, "logout", url)
    assert again.returncode == 0 and "nothing was kept" in again.stderr


def test_a_grant_revoked_at_the_server_ends_the_next_command_with_the_login_to_run(
        auth_server: AuthServer, jwt_server: ProtectedServer, data: Path) -> None:
    # The kept access token no longer passes and the refresh is refused (invalid_grant), as
    # after a revocation at the authorization server: the command cannot open a browser, so it
    # ends naming the server and the exact command, and keeps nothing it could not use.
    url = jwt_server.url
    assert mcpkit(data, "login", url).returncode == 0
    tokens_file = data / "tokens.json"
    stored = kept(data)
    for by_resource in stored["tokens"].values():
        for tokens in by_resource.values():
            tokens["access_token"], tokens["refresh_token"] = "revoked-at", "revoked-rt"
    tokens_file.write_text(json.dumps(stored))
    tokens_file.chmod(0o600)
    before = len(auth_server.requests("token"))
    out = mcpkit(data, "call", url, "whoami")
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert out.stderr.strip() == (
        f"mcpkit call: {url} needs a sign-in at {auth_server.issuer} (none is kept for it, or "
        f"the kept one has expired or was revoked); run `mcpkit login {url}`")
    refreshes = auth_server.requests("token")[before:]
    assert [r["grant_type"] for r in refreshes] == ["refresh_token"]  # tried once, refused
    assert mcpkit(data, "login", url).returncode == 0  # and the command it names works
    assert mcpkit(data, "call", url, "whoami").returncode == 0


def test_no_browser_prints_the_url_and_times_out_in_one_line(
        auth_server: AuthServer, jwt_server: ProtectedServer, data: Path) -> None:
    before = len(auth_server.requests("authorize"))
    out = mcpkit(data, "login", jwt_server.url, "--no-browser", "--timeout", "0.5")
    assert out.returncode == 1
    assert f"Open this URL in a browser to sign in:\n  {auth_server.issuer}/authorize?" in out.stderr
    assert "within 0.5 s" in out.stderr and "Traceback" not in out.stderr
    assert len(auth_server.requests("authorize")) == before  # the "browser" never ran


def test_a_refused_consent_is_one_clear_line(auth_server: AuthServer,
                                             jwt_server: ProtectedServer, data: Path) -> None:
    auth_server.consent("deny")
    try:
        out = mcpkit(data, "login", jwt_server.url)
    finally:
        auth_server.consent("auto")
    assert out.returncode == 1
    assert "refused the sign-in: 'access_denied'" in out.stderr and "Traceback" not in out.stderr
    assert not (data / "signins.json").exists()


def test_a_refused_token_is_refreshed_with_rotation(auth_server: AuthServer,
                                                    introspected: ProtectedServer,
                                                    data: Path) -> None:
    url = introspected.url
    assert mcpkit(data, "login", url).returncode == 0
    first = tokens_of(data, url)
    assert mcpkit(data, "call", url, "whoami").returncode == 0
    auth_server.revoke_all()  # introspection now says inactive: the RS answers 401
    before = len(auth_server.requests("token"))
    call = mcpkit(data, "call", url, "whoami")
    assert call.returncode == 0, call.stderr
    assert call.stdout.startswith("alice via ")
    grants = [r["grant_type"] for r in auth_server.requests("token")[before:]]
    assert grants == ["refresh_token"]
    second = tokens_of(data, url)
    assert second["access_token"] != first["access_token"]
    assert second["refresh_token"] != first["refresh_token"]  # rotated, and the new one kept


def test_an_expired_token_is_refreshed_before_it_is_sent(data: Path) -> None:
    short = AuthServer.start("--ttl", "5")  # below the client's early-refresh margin
    server = ProtectedServer.start(short, "jwt")
    try:
        assert mcpkit(data, "login", server.url).returncode == 0
        before = len(short.requests("token"))
        call = mcpkit(data, "call", server.url, "whoami")
        assert call.returncode == 0, call.stderr
        # Each request finds the token within the margin, so each refreshes: never a new
        # authorization, and every refresh token works once (the AS refuses a reused one).
        grants = [r["grant_type"] for r in short.requests("token")[before:]]
        assert grants and set(grants) == {"refresh_token"}
        assert server.schema_report()["problems"] == []
    finally:
        server.stop()
        short.stop()


def _kid(token: str) -> str:
    header = token.split(".")[0]
    return str(json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)))["kid"])


def test_a_new_signing_key_is_fetched_on_its_unknown_kid(
        auth_server: AuthServer, jwt_server: ProtectedServer, data: Path) -> None:
    url = jwt_server.url
    assert mcpkit(data, "login", url).returncode == 0
    assert mcpkit(data, "tools", url).returncode == 0  # the RS has the JWKS cached now
    old_kid = _kid(tokens_of(data, url)["access_token"])
    new_kid = auth_server.rotate()
    assert mcpkit(data, "login", url).returncode == 0
    assert _kid(tokens_of(data, url)["access_token"]) == new_kid != old_kid
    call = mcpkit(data, "call", url, "whoami")
    assert call.returncode == 0, call.stderr


def test_a_pre_registered_client_is_used_and_kept(auth_server: AuthServer,
                                                  jwt_server: ProtectedServer,
                                                  data: Path) -> None:
    client = auth_server.register(redirect_uris=["http://127.0.0.1/callback"],
                                  grant_types=["authorization_code", "refresh_token"],
                                  token_endpoint_auth_method="client_secret_post")
    # Registered for client_secret_post, but the CLI is not told so: refused, with the fix.
    wrong = mcpkit(data, "login", jwt_server.url, "--client-id", client["client_id"],
                   MCPKIT_CLIENT_SECRET=client["client_secret"])
    assert wrong.returncode == 1 and "invalid_client" in wrong.stderr
    assert "--auth-method" in wrong.stderr and client["client_secret"] not in wrong.stderr
    before = len(auth_server.requests())
    out = mcpkit(data, "login", jwt_server.url, "--client-id", client["client_id"],
                 "--auth-method", "client_secret_post",
                 MCPKIT_CLIENT_SECRET=client["client_secret"])
    assert out.returncode == 0, out.stderr
    seen = auth_server.requests()[before:]
    assert {r["client_id"] for r in seen if r["endpoint"] == "authorize"} == {client["client_id"]}
    token = next(r for r in seen if r["endpoint"] == "token")
    assert token["client_secret_in_body"] and not token["basic_auth"]
    assert kept(data)["clients"][auth_server.issuer]["client_id"] == client["client_id"]
    call = mcpkit(data, "call", jwt_server.url, "whoami")
    assert call.stdout.strip() == f"alice via {client['client_id']} with mcp:read"
    no_secret_in(data, out.stdout, out.stderr, call.stdout, call.stderr)
    assert client["client_secret"] not in out.stdout + out.stderr


def test_client_credentials_mode_signs_in_a_machine(auth_server: AuthServer,
                                                    jwt_server: ProtectedServer,
                                                    data: Path) -> None:
    machine = auth_server.register(grant_types=["client_credentials"],
                                   token_endpoint_auth_method="client_secret_basic")
    out = mcpkit(data, "login", jwt_server.url, "--client-credentials", "--client-id",
                 machine["client_id"], "--json", MCPKIT_CLIENT_SECRET=machine["client_secret"])
    assert out.returncode == 0, out.stderr
    said = json.loads(out.stdout)
    assert said["signedIn"] is True and said["refreshToken"] is False
    assert "Opening the browser" not in out.stderr
    call = mcpkit(data, "call", jwt_server.url, "whoami")
    assert call.returncode == 0, call.stderr
    assert call.stdout.strip() == f"{machine['client_id']} via {machine['client_id']} with mcp:read"
    status = json.loads(mcpkit(data, "auth", "status", "--json").stdout)
    assert [s["mode"] for s in status["signins"]] == ["client-credentials"]
    assert machine["client_secret"] not in out.stdout + out.stderr + call.stdout + call.stderr
    no_secret_in(data, out.stdout, out.stderr, call.stdout, call.stderr)


@pytest.mark.parametrize(("args", "says"), [
    (("login", "127.0.0.1:9/mcp"), "is not an http(s) URL"),
    (("login", "http://127.0.0.1:9/mcp", "--client-credentials"), "needs --client-id"),
    (("login", "http://127.0.0.1:9/mcp", "--client-credentials", "--client-id", "x",
      "--client-secret", "s", "--application-type", "web"), "are for a browser sign-in"),
])
def test_usage_mistakes_are_one_line_and_status_2(data: Path, args: tuple[str, ...],
                                                 says: str) -> None:
    out = mcpkit(data, *args)
    assert out.returncode == 2 and says in out.stderr and "Traceback" not in out.stderr
