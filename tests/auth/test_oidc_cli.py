"""`mcpkit login`, the client commands after it, step-up and `mcpkit logout`, as a person runs
them against node-oidc-provider (real processes all the way; the user at its login and consent
pages is `form_login.py`, as $BROWSER). The provider's access tokens live 5 s, under the
client's early-refresh margin, so every later command refreshes: a sign-in that cannot be
refreshed by a later process fails here. Every client message the CLI sends is checked
against the schema by the protected server."""

from __future__ import annotations

import json
import os
import pty
import select
import shlex
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from helpers import HELPERS
from helpers.auth.as_process import ProtectedServer, started, stopped
from helpers.auth.cimd_host import certificates
from helpers.auth.oidc_process import OIDCProvider
from helpers.auth.signin_cli import FORM_BROWSER, kept, mcpkit, tokens_of
from joserfc.jwk import ECKey

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    return certificates(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def oidc(tls: tuple[Path, Path, Path]) -> Iterator[OIDCProvider]:
    yield from OIDCProvider.serving(ttl=5, ca_file=tls[0])


@pytest.fixture(scope="module")
def rs(oidc: OIDCProvider) -> Iterator[ProtectedServer]:
    yield from ProtectedServer.serving(oidc, "jwt")


@pytest.fixture(scope="module")
def cimd_url(tls: tuple[Path, Path, Path]) -> Iterator[str]:
    process, url = started([sys.executable, str(HELPERS / "auth" / "cimd_host.py"), str(tls[1]),
                            str(tls[2])])
    yield url
    stopped(process)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tmp_path / "data"


def cli(data: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return mcpkit(data, *args, BROWSER=FORM_BROWSER, **env)


def signed_in_ok(out: subprocess.CompletedProcess[str]) -> None:
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Signed in to ")


def refreshes(data: Path, rs: ProtectedServer, times: int = 2) -> None:
    """Later commands, each refreshing (the token is always within the margin)."""
    seen = set()
    for _ in range(times):
        call = cli(data, "call", rs.url, "whoami")
        assert call.returncode == 0, call.stderr
        assert call.stdout.startswith("alice via ")
        seen.add(tokens_of(data, rs.url)["refresh_token"])
    assert len(seen) == times  # rotated by each refresh, and the new one kept


def test_a_dcr_sign_in_refreshes_in_later_commands(oidc: OIDCProvider, rs: ProtectedServer,
                                                   data: Path) -> None:
    login = cli(data, "login", rs.url)
    signed_in_ok(login)
    assert kept(data)["clients"][oidc.issuer]["source"] == "dcr"
    assert stat.S_IMODE((data / "tokens.json").stat().st_mode) == 0o600
    refreshes(data, rs)


def test_a_cimd_sign_in_refreshes_in_later_commands(oidc: OIDCProvider, rs: ProtectedServer,
                                                    cimd_url: str, data: Path) -> None:
    login = cli(data, "login", rs.url, "--client-metadata-url", cimd_url)
    signed_in_ok(login)
    client = kept(data)["clients"][oidc.issuer]
    assert (client["client_id"], client["source"]) == (cimd_url, "cimd")
    refreshes(data, rs)
    call = cli(data, "call", rs.url, "whoami")
    assert call.stdout.strip().startswith(f"alice via {cimd_url} with")


def test_client_id_wins_over_a_kept_registration(oidc: OIDCProvider, rs: ProtectedServer,
                                                 data: Path) -> None:
    signed_in_ok(cli(data, "login", rs.url))  # a DCR client is kept for the issuer now
    mine = oidc.register(redirect_uris=["http://127.0.0.1/callback"], application_type="native",
                         grant_types=["authorization_code", "refresh_token"],
                         token_endpoint_auth_method="client_secret_post")
    login = cli(data, "login", rs.url, "--client-id", mine["client_id"], "--auth-method",
                "client_secret_post", MCPKIT_CLIENT_SECRET=mine["client_secret"])
    signed_in_ok(login)
    assert kept(data)["clients"][oidc.issuer]["client_id"] == mine["client_id"]
    call = cli(data, "call", rs.url, "whoami")  # a refresh, as the same client
    assert call.returncode == 0, call.stderr
    assert call.stdout.strip().startswith(f"alice via {mine['client_id']} with")


def test_a_failed_login_keeps_the_previous_sign_in(rs: ProtectedServer, data: Path) -> None:
    signed_in_ok(cli(data, "login", rs.url))
    before = kept(data)
    # The provider shows its own error page for an unknown client: nothing comes back.
    failed = cli(data, "login", rs.url, "--client-id", "nobody-registered-this",
                 "--timeout", "3")
    assert failed.returncode == 1 and "Traceback" not in failed.stderr
    assert "within 3 s" in failed.stderr
    assert kept(data) == before
    assert json.loads((data / "signins.json").read_text())["signins"]
    refreshes(data, rs, times=1)


def test_a_403_at_no_terminal_names_the_login_then_it_reaches_the_tool(
        rs: ProtectedServer, data: Path) -> None:
    signed_in_ok(cli(data, "login", rs.url))
    refused = cli(data, "call", rs.url, "purge", "--no-input")
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    said = refused.stderr.strip().splitlines()
    assert len(said) == 1
    command = shlex.split(said[0].split("`")[1])
    assert command[:3] == ["mcpkit", "login", rs.url] and command[3] == "--scope"
    assert {"mcp:read", "mcp:admin"} <= set(command[4].split())
    signed_in_ok(cli(data, *command[1:]))
    purge = cli(data, "call", rs.url, "purge")
    assert purge.returncode == 0, purge.stderr
    assert purge.stdout.strip() == "purged"
    assert {"mcp:read", "mcp:admin"} <= set(tokens_of(data, rs.url)["scope"].split())


def test_a_403_at_a_terminal_offers_a_new_sign_in_and_runs_the_call(
        rs: ProtectedServer, data: Path) -> None:
    signed_in_ok(cli(data, "login", rs.url))
    environ = {**os.environ, "MCPKIT_DATA_DIR": str(data), "BROWSER": FORM_BROWSER,
               "NO_PROXY": "127.0.0.1"}
    controller, terminal = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "mcpkit", "call", rs.url, "purge"],
                               stdin=terminal, stdout=subprocess.PIPE, stderr=terminal,
                               env=environ)
    os.close(terminal)
    screen = b""
    try:
        while b"[Y/n]" not in screen:
            ready, _, _ = select.select([controller], [], [], 60)
            assert ready, f"no question within 60 s: {screen!r}"
            screen += os.read(controller, 4096)
        assert b"mcp:admin" in screen
        os.write(controller, b"y\n")
        out, _ = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(controller)
    assert process.returncode == 0, screen.decode(errors="replace")
    assert out.decode().strip() == "purged"
    assert "mcp:admin" in tokens_of(data, rs.url)["scope"].split()


def test_dpop_sign_in_keeps_its_key_and_refreshes_bound(rs: ProtectedServer,
                                                        data: Path) -> None:
    signed_in_ok(cli(data, "login", rs.url, "--dpop"))
    signins = data / "signins.json"
    assert stat.S_IMODE(signins.stat().st_mode) == 0o600
    entry = json.loads(signins.read_text())["signins"][rs.url]
    assert entry["dpop_key"]["kty"] == "EC" and "d" in entry["dpop_key"]
    assert tokens_of(data, rs.url)["token_type"].lower() == "dpop"
    refreshes(data, rs)  # each refresh proves the same key, so the binding holds
    assert tokens_of(data, rs.url)["token_type"].lower() == "dpop"


def test_machine_sign_in_with_a_private_key(oidc: OIDCProvider, rs: ProtectedServer,
                                            data: Path, tmp_path: Path) -> None:
    key = ECKey.generate_key("P-256")
    machine = oidc.register(grant_types=["client_credentials"], response_types=[],
                            redirect_uris=[], scope="mcp:read",
                            token_endpoint_auth_method="private_key_jwt",
                            jwks={"keys": [key.as_dict(private=False)]})
    key_file = tmp_path / "client.pem"
    key_file.write_bytes(key.as_pem(private=True))
    login = cli(data, "login", rs.url, "--client-credentials", "--client-id",
                machine["client_id"], "--private-key", str(key_file))
    signed_in_ok(login)
    for _ in range(2):  # past the 5 s token: a new one, signed with the kept key's path
        call = cli(data, "call", rs.url, "whoami")
        assert call.returncode == 0, call.stderr
        assert call.stdout.startswith(f"{machine['client_id']} via {machine['client_id']}")


def test_logout_revokes_the_grant_at_the_provider(oidc: OIDCProvider, rs: ProtectedServer,
                                                  data: Path) -> None:
    signed_in_ok(cli(data, "login", rs.url))
    tokens = tokens_of(data, rs.url)
    client_id = kept(data)["clients"][oidc.issuer]["client_id"]
    out = cli(data, "logout", rs.url)
    assert out.returncode == 0, out.stderr
    assert f"revoked at {oidc.issuer}" in out.stdout
    assert kept(data)["tokens"] == {}
    with httpx.Client(trust_env=False) as http:
        refreshed = http.post(f"{oidc.issuer}/token", data={
            "grant_type": "refresh_token", "refresh_token": tokens["refresh_token"],
            "client_id": client_id})
    assert refreshed.status_code == 400 and refreshed.json()["error"] == "invalid_grant"


def test_application_type_reaches_the_registration(rs: ProtectedServer, data: Path) -> None:
    # Only a native client may come back to another loopback port than it registered (RFC
    # 8252 §7.3): the provider holds a web client to its exact redirect URI. So a second
    # sign-in (another free port) works as native and not as web.
    web, native = data / "web", data / "native"
    signed_in_ok(cli(web, "login", rs.url, "--application-type", "web"))
    again = cli(web, "login", rs.url, "--timeout", "3")
    assert again.returncode == 1 and "within 3 s" in again.stderr
    signed_in_ok(cli(native, "login", rs.url, "--application-type", "native"))
    signed_in_ok(cli(native, "login", rs.url))
