"""`mcpkit run --auth-upstream` and `mcpkit login` through it, as a person runs them: the
server file protects nothing itself; the command line puts an authorization proxy in front
of node-oidc-provider (no registration, one confidential client). The CLI signs in through
the proxy's consent page and the provider's pages (`form_login.py` as $BROWSER), by Dynamic
Client Registration and by a Client ID Metadata Document served over HTTPS; later commands
refresh (the proxy's tokens live 5 s, under the client's early-refresh margin), and after
`mcpkit logout` the grant is over. The plain route: `--auth-issuer oidc:URL`, a preset for a
provider that issues tokens for the server itself. Mistakes are one line each."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from helpers import HELPERS
from helpers.auth.as_process import started, stopped
from helpers.auth.cimd_host import certificates
from helpers.auth.oidc_process import OIDCProvider
from helpers.auth.proxy_process import CLIENT_ID, CLIENT_SECRET, upstream_for
from helpers.auth.signin_cli import FORM_BROWSER, kept, mcpkit, no_secret_in, tokens_of
from helpers.services import free_port

HERE = Path(__file__).resolve().parent
SERVER = str(HELPERS / "auth" / "upstream_tools.py")
PORT = free_port()
WAIT_S = 30.0


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    return certificates(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def upstream() -> Iterator[OIDCProvider]:
    provider = upstream_for(PORT)
    yield provider
    provider.stop()


def serve(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """`mcpkit run SERVER ARGS` until its metadata answers (bounded)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "run", SERVER, *args], text=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env={**os.environ, "NO_PROXY": "127.0.0.1", **(env or {})})
    deadline = time.monotonic() + WAIT_S
    with httpx.Client(trust_env=False, timeout=2) as http:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise AssertionError(f"mcpkit run ended: {process.stderr.read()[-2000:]}")
            try:
                if http.get(f"http://127.0.0.1:{PORT}/.well-known/oauth-protected-resource/mcp"
                            ).status_code == 200:
                    return process
            except httpx.TransportError:
                pass
            time.sleep(0.1)  # polling a port that is not open yet: no event to wait on
    process.kill()
    raise AssertionError("mcpkit run did not start in time")


@pytest.fixture(scope="module")
def proxied(upstream: OIDCProvider, tls: tuple[Path, Path, Path],
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The server as an operator starts it: the client's secret in an env file, never on the
    command line; the client id from the environment."""
    env_file = tmp_path_factory.mktemp("env") / "proxy.env"
    env_file.write_text(f"MCPKIT_AUTH_UPSTREAM_CLIENT_SECRET='{CLIENT_SECRET}'\n")
    process = serve("--http", f"127.0.0.1:{PORT}/mcp", "--auth-upstream", upstream.issuer,
                    "--auth-scopes", "mcp:read", "--auth-token-lifetime", "5",
                    "--env-file", str(env_file),
                    env={"MCPKIT_AUTH_UPSTREAM_CLIENT_ID": CLIENT_ID,
                         "SSL_CERT_FILE": str(tls[0])})
    yield f"http://127.0.0.1:{PORT}/mcp"
    process.terminate()
    process.wait(10)


@pytest.fixture(scope="module")
def cimd_url(tls: tuple[Path, Path, Path]) -> Iterator[str]:
    process, url = started([sys.executable, str(HELPERS / "auth" / "cimd_host.py"), str(tls[1]),
                            str(tls[2])])
    yield url
    stopped(process)


def cli(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return mcpkit(data, *args, BROWSER=FORM_BROWSER)


def test_login_through_the_proxy_refreshes_in_later_commands_and_logout_ends_it(
        proxied: str, upstream: OIDCProvider, tmp_path: Path) -> None:
    data = tmp_path / "data"
    login = cli(data, "login", proxied)
    assert login.returncode == 0, login.stderr
    origin = proxied.removesuffix("/mcp")
    assert login.stdout.startswith(f"Signed in to {proxied} at {origin}")
    client = next(iter(kept(data)["clients"].values()))
    assert client["source"] == "dcr"
    seen = set()
    for _ in range(2):  # each later command refreshes: the token is within the margin
        call = cli(data, "call", proxied, "whoami")
        assert call.returncode == 0, call.stderr
        assert call.stdout.strip() == f"alice via {client['client_id']} (alice@example.test)"
        seen.add(tokens_of(data, proxied)["refresh_token"])
    assert len(seen) == 2
    asked = cli(data, "call", proxied, "upstream_me", f"userinfo={upstream.issuer}/me")
    assert asked.returncode == 0 and asked.stdout.strip() == "200 alice", asked.stderr
    no_secret_in(data, login.stdout + login.stderr, call.stdout + call.stderr)
    last = tokens_of(data, proxied)
    out = cli(data, "logout", proxied)
    assert out.returncode == 0 and "revoked" in out.stdout, out.stdout + out.stderr
    refused = httpx.post(f"{origin}/oauth/token", trust_env=False, data={
        "grant_type": "refresh_token", "refresh_token": last["refresh_token"],
        "client_id": client["client_id"]})
    assert refused.json()["error"] == "invalid_grant"
    after = cli(data, "call", proxied, "whoami")
    assert after.returncode != 0 and "needs a sign-in" in after.stderr
    assert "mcpkit login" in after.stderr


def test_login_by_a_client_metadata_document_through_the_proxy(
        proxied: str, cimd_url: str, tmp_path: Path) -> None:
    data = tmp_path / "data"
    login = cli(data, "login", proxied, "--client-metadata-url", cimd_url)
    assert login.returncode == 0, login.stderr
    call = cli(data, "call", proxied, "whoami")
    assert call.returncode == 0, call.stderr
    assert call.stdout.strip() == f"alice via {cimd_url} (alice@example.test)"


def test_the_preset_route_checks_the_providers_own_tokens(tmp_path: Path) -> None:
    """`--auth-issuer oidc:URL`: no proxy; tokens node-oidc-provider issues for this server,
    checked against the keys its discovery document names."""
    provider = OIDCProvider.start()
    port = free_port()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "mcpkit", "run", SERVER, "--http", f"127.0.0.1:{port}/mcp",
             "--auth-issuer", f"oidc:{provider.issuer}/.well-known/openid-configuration",
             "--auth-scopes", "mcp:read"], text=True, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, env={**os.environ, "NO_PROXY": "127.0.0.1"})
        try:
            url = f"http://127.0.0.1:{port}/mcp"
            deadline = time.monotonic() + WAIT_S
            prm = None
            while time.monotonic() < deadline and prm is None:
                try:
                    prm = httpx.get(f"http://127.0.0.1:{port}/.well-known/"
                                    "oauth-protected-resource/mcp", trust_env=False).json()
                except httpx.TransportError:
                    time.sleep(0.1)  # not listening yet
            assert prm is not None and prm["authorization_servers"] == [provider.issuer]
            data = tmp_path / "data"
            login = cli(data, "login", url)
            assert login.returncode == 0, login.stderr
            call = cli(data, "call", url, "whoami")
            assert call.returncode == 0 and call.stdout.startswith("alice via "), call.stderr
        finally:
            process.terminate()
            process.wait(10)
    finally:
        provider.stop()


@pytest.mark.parametrize(("args", "env", "says"), [
    (("--auth-upstream", "github"), {}, "add --http"),
    (("--http", "127.0.0.1:0", "--auth-upstream", "gitlab"), {}, "no identity provider preset"),
    (("--http", "127.0.0.1:0", "--auth-upstream", "entra"), {}, "needs the directory"),
    (("--http", "127.0.0.1:0", "--auth-upstream", "github"), {}, "--auth-upstream-client-id"),
    (("--http", "127.0.0.1:0", "--auth-upstream", "github", "--auth-upstream-client-id", "x"),
     {}, "--auth-public-url"),
    (("--http", "127.0.0.1:8765", "--auth-upstream", "github", "--auth-upstream-client-id",
      "x"), {}, "client secret"),
    (("--http", "127.0.0.1:8765", "--auth-upstream", "github", "--auth-issuer",
      "https://a.example"), {}, "give one"),
    (("--http", "127.0.0.1:8765", "--auth-upstream", "github", "--auth-upstream-client-id",
      "x", "--auth-audience", "y"), {}, "go with --auth-issuer"),
    (("--http", "127.0.0.1:8765", "--auth-upstream-client-id", "x"), {},
     "go with --auth-upstream"),
    (("--http", "127.0.0.1:8765", "--auth-upstream", "github", "--auth-upstream-client-id",
      "x", "--auth-token-lifetime", "0"), {}, "expected seconds above zero"),
    (("--http", "127.0.0.1:8765", "--auth-upstream", "github", "--auth-upstream-client-id",
      "x", "--auth-token-lifetime", "100000"), {}, "seconds in 1-86400"),
    (("--http", "127.0.0.1:8765", "--auth-issuer", "github"), {}, "issues no access tokens"),
    (("--http", "127.0.0.1:8765", "--auth-upstream", "http://127.0.0.1:9",
      "--auth-upstream-client-id", "x"), {"MCPKIT_AUTH_UPSTREAM_CLIENT_SECRET": "s"},
     "could not be fetched"),
])
def test_sign_in_mistakes_are_one_line_and_status_2(args: tuple[str, ...], env: dict[str, str],
                                                    says: str) -> None:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MCPKIT_AUTH_")}
    out = subprocess.run([sys.executable, "-m", "mcpkit", "run", SERVER, *args],
                         capture_output=True, text=True, timeout=60, env={**environ, **env})
    assert out.returncode == 2, out.stderr
    assert says in out.stderr and "Traceback" not in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
