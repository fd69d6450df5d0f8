"""The official SDK clients sign in through the authorization proxy in front of
node-oidc-provider (no registration, one confidential client), call a tool, refresh, and are
refused after revocation: the Python SDK (`mcp` 2.3.0 at 2026-07-28 and 1.30.0 at
2025-11-25) and the TypeScript SDK (`@modelcontextprotocol/client` 2.4.0 at 2026-07-28 and
`@modelcontextprotocol/sdk` 1.32.2 at 2025-11-25), each pinned and installed into .cache by
`sdk_process`. The user's browser walks the proxy's consent page and the provider's login and
consent pages (`proxy_walk.Walk`); every message the clients send the server is checked
against the official schema of its era (`proxy_server.py`'s gate, at teardown)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.auth.oidc_process import OIDCProvider
from helpers.auth.proxy_process import ProxiedServer, upstream_for
from helpers.auth.proxy_walk import Walk
from helpers.auth.sdk_process import (
    PYTHON_SDKS,
    SCRIPTS,
    TS_SDKS,
    install_python,
    install_typescript,
    run_client,
)
from helpers.services import free_port

PORT = free_port()
LEGACY = "2025-11-25"
MODERN = "2026-07-28"


@pytest.fixture(scope="module")
def upstream() -> Iterator[OIDCProvider]:
    provider = upstream_for(PORT)
    yield provider
    provider.stop()


@pytest.fixture(scope="module")
def proxied(upstream: OIDCProvider) -> Iterator[ProxiedServer]:
    yield from ProxiedServer.serving(upstream, PORT)


def check(said: list[dict[str, object]], era: str) -> None:
    """What every client run must have said: one sign-in, a call as alice in `era`, a
    refresh that rotated both tokens, and both tokens refused once revoked."""
    assert next(m for m in said if "authorize" in m)["authorize"].startswith(  # type: ignore[union-attr]
        "http://127.0.0.1:")
    assert sum("authorize" in m for m in said) == 1
    first = next(m for m in said if "era" in m)
    assert str(first["whoami"]).startswith("alice via mcp-")
    assert first["era"] == era
    refreshed = next(m for m in said if "refreshed" in m)
    assert refreshed["refreshed"] is True and str(refreshed["whoami"]).startswith("alice via")
    revoked = next(m for m in said if "revoked" in m)
    assert revoked["revoked"] == {"access": 401, "refresh": "invalid_grant"}


@pytest.mark.parametrize("version", PYTHON_SDKS)
async def test_the_python_sdk_signs_in_through_the_proxy(proxied: ProxiedServer,
                                                         version: str) -> None:
    python = install_python(version)
    said = await run_client([str(python), str(SCRIPTS / "python_client.py"), proxied.url],
                            Walk())
    check(said, MODERN if version.startswith("2.") else LEGACY)


async def test_the_python_sdk_2_in_its_legacy_mode_signs_in_through_the_proxy(
        proxied: ProxiedServer) -> None:
    python = install_python(PYTHON_SDKS[0])
    said = await run_client([str(python), str(SCRIPTS / "python_client.py"), proxied.url,
                             "legacy"], Walk())
    check(said, LEGACY)


@pytest.mark.node
@pytest.mark.parametrize("package", sorted(TS_SDKS))
async def test_the_typescript_sdk_signs_in_through_the_proxy(proxied: ProxiedServer,
                                                             package: str) -> None:
    folder = install_typescript()
    # Node finds the packages from the script's folder: a copy lives beside them.
    script = folder / "ts_client.mjs"
    partial = script.with_suffix(f".{os.getpid()}.tmp")
    shutil.copyfile(SCRIPTS / "ts_client.mjs", partial)
    partial.replace(script)
    said = await run_client(["node", str(script), proxied.url, package], Walk(),
                            cwd=Path(folder))
    check(said, MODERN if TS_SDKS[package].startswith("2.") else LEGACY)
