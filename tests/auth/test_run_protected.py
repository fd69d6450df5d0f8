"""`mcpkit run --http --auth-issuer URL` protects a server file that has no authorization code
in it: the calendar example (examples/calendar/server.py, whose `create_event` needs
`calendar:write`), behind node-oidc-provider and behind the authlib authorization server, with
JWTs checked against the keys its metadata names or opaque tokens by introspection, configured
by options or by MCPKIT_AUTH_* variables. Then `mcpkit login` and `mcpkit call` reach the
write tool, which needs a scope beyond the first sign-in's."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from helpers.auth.as_process import AuthServer
from helpers.auth.oidc_process import OIDCProvider
from helpers.auth.signin_cli import FORM_BROWSER, mcpkit, tokens_of
from helpers.transports.http_peer import ServerProcess

ROOT = Path(__file__).resolve().parents[2]
CALENDAR = str(ROOT / "examples" / "calendar" / "server.py")
WHEN = "2031-03-04T09:30:00Z"


@pytest.fixture
def calendar_db(tmp_path: Path) -> dict[str, str]:
    return {"CALENDAR_DB": str(tmp_path / "calendar.sqlite3")}


def run_calendar(*args: str, env: dict[str, str]) -> ServerProcess:
    return ServerProcess.start(CALENDAR, *args, env=env)


def test_the_calendar_behind_oidc_reaches_its_write_tool_after_a_step_up(
        oidc: OIDCProvider, calendar_db: dict[str, str], tmp_path: Path) -> None:
    server = run_calendar("--auth-issuer", oidc.issuer, "--auth-scopes", "calendar:read",
                          env=calendar_db)
    data = tmp_path / "data"
    try:
        anonymous = httpx.post(server.url, json={}, headers={"accept": "application/json"})
        assert anonymous.status_code == 401
        assert "resource_metadata=" in anonymous.headers["www-authenticate"]
        login = mcpkit(data, "login", server.url, BROWSER=FORM_BROWSER)
        assert login.returncode == 0, login.stderr
        assert "calendar:write" not in tokens_of(data, server.url)["scope"]
        read = mcpkit(data, "read", server.url, "calendar://week", "--json")
        assert read.returncode == 0, read.stderr
        write = ("call", server.url, "create_event", "title=Dentist", f"startsAt={WHEN}",
                 "--no-input")
        refused = mcpkit(data, *write)
        assert refused.returncode == 1 and "calendar:write" in refused.stderr
        command = shlex.split(refused.stderr.split("`")[1])
        assert {"calendar:read", "calendar:write"} <= set(command[4].split())
        again = mcpkit(data, *command[1:], BROWSER=FORM_BROWSER)
        assert again.returncode == 0, again.stderr
        created = mcpkit(data, *write, "--json")
        assert created.returncode == 0, created.stderr
        assert "Dentist" in created.stdout
    finally:
        server.stop()


def test_env_variables_protect_with_introspection_at_the_authlib_server(
        calendar_db: dict[str, str], tmp_path: Path) -> None:
    auth = AuthServer.start()
    try:
        server = run_calendar(env={
            **calendar_db, "MCPKIT_AUTH_ISSUER": auth.issuer,
            "MCPKIT_AUTH_INTROSPECTION": auth.introspection_url,
            "MCPKIT_AUTH_CLIENT_ID": auth.introspection_client_id,
            "MCPKIT_AUTH_CLIENT_SECRET": auth.introspection_client_secret})
        try:
            machine = auth.register(grant_types=["client_credentials"],
                                    token_endpoint_auth_method="client_secret_basic",
                                    scope="calendar:read calendar:write")
            data = tmp_path / "data"
            login = mcpkit(data, "login", server.url, "--client-credentials", "--client-id",
                           machine["client_id"], "--scope", "calendar:write",
                           MCPKIT_CLIENT_SECRET=machine["client_secret"])
            assert login.returncode == 0, login.stderr
            created = mcpkit(data, "call", server.url, "create_event", "title=Standup",
                             f"startsAt={WHEN}", "--json")
            assert created.returncode == 0, created.stderr
            assert "Standup" in created.stdout
            # A token for another server (RFC 8707 audience) is refused here: the default
            # audience is the URL served.
            other = httpx.post(f"{auth.issuer}/token", auth=(machine["client_id"],
                                                             machine["client_secret"]),
                               data={"grant_type": "client_credentials",
                                     "resource": "http://127.0.0.1:9/elsewhere"})
            assert other.status_code == 200, other.text
            refused = httpx.post(server.url, json={}, headers={
                "authorization": f"Bearer {other.json()['access_token']}",
                "accept": "application/json"})
            assert refused.status_code == 401
        finally:
            server.stop()
    finally:
        auth.stop()


@pytest.mark.parametrize(("args", "env", "says"), [
    (("--auth-issuer", "http://127.0.0.1:9"), {}, "add --http"),
    (("--http", "127.0.0.1:0", "--auth-audience", "x"), {}, "together with --auth-issuer"),
    (("--http", "127.0.0.1:0", "--auth-issuer", "http://127.0.0.1:9",
      "--auth-introspection", "http://127.0.0.1:9/i"), {}, "needs --auth-client-id"),
    (("--http", "127.0.0.1:0"), {"MCPKIT_AUTH_ISSUER": "auth.example.com"}, "is not the"),
    (("--http", "127.0.0.1:0", "--auth-issuer", "http://127.0.0.1:9"), {},
     "could not be fetched"),
])
def test_protection_mistakes_are_one_line_and_status_2(
        calendar_db: dict[str, str], args: tuple[str, ...], env: dict[str, str],
        says: str) -> None:
    out = subprocess.run([sys.executable, "-m", "mcpkit", "run", CALENDAR, *args],
                         capture_output=True, text=True, timeout=60,
                         env={**__import__("os").environ, **calendar_db, **env})
    assert out.returncode == 2, out.stderr
    assert says in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_an_issuer_whose_metadata_names_another_is_refused(oidc: OIDCProvider,
                                                           calendar_db: dict[str, str]) -> None:
    out = subprocess.run([sys.executable, "-m", "mcpkit", "run", CALENDAR, "--http",
                          "127.0.0.1:0", "--auth-issuer", oidc.issuer + "/"],
                         capture_output=True, text=True, timeout=60,
                         env={**__import__("os").environ, **calendar_db})
    assert out.returncode == 2
    assert f"names the issuer {oidc.issuer!r}" in out.stderr


def test_a_protected_server_off_loopback_needs_its_public_url(
        oidc: OIDCProvider, calendar_db: dict[str, str]) -> None:
    # Refused before anything is bound: off loopback, only configuration names the resource.
    out = subprocess.run([sys.executable, "-m", "mcpkit", "run", CALENDAR, "--http",
                          "0.0.0.0:0", "--auth-issuer", oidc.issuer],
                         capture_output=True, text=True, timeout=60,
                         env={**__import__("os").environ, **calendar_db})
    assert out.returncode != 0
    assert "public_url" in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_the_public_url_option_is_the_resource_whatever_the_host_header_says(
        oidc: OIDCProvider, calendar_db: dict[str, str]) -> None:
    public = "https://calendar.example/mcp"
    server = run_calendar("--auth-issuer", oidc.issuer, "--allow-host", "calendar.example",
                          env={**calendar_db, "MCPKIT_AUTH_PUBLIC_URL": public})
    try:
        base = server.url.rsplit("/mcp", 1)[0]
        for host in ("calendar.example", server.url.split("/")[2]):
            answer = httpx.get(f"{base}/.well-known/oauth-protected-resource/mcp",
                               headers={"host": host})
            assert answer.status_code == 200, answer.text
            assert answer.json()["resource"] == public
        refused = httpx.post(server.url, json={}, headers={"accept": "application/json"})
        assert refused.status_code == 401
        assert ('resource_metadata="https://calendar.example/.well-known/'
                'oauth-protected-resource/mcp"') in refused.headers["www-authenticate"]
    finally:
        server.stop()
