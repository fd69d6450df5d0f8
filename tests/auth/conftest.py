"""The real authorization servers as processes per test module: authlib's (`as_process.
AuthServer`) and node-oidc-provider (`oidc_process.OIDCProvider`), with a protected mcpkit
server trusting the latter (`oidc_rs`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from helpers.auth.as_process import AuthServer, ProtectedServer
from helpers.auth.oidc_process import OIDCProvider


@pytest.fixture(scope="module")
def auth_server() -> Iterator[AuthServer]:
    server = AuthServer.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def oidc() -> Iterator[OIDCProvider]:
    yield from OIDCProvider.serving()


@pytest.fixture(scope="module")
def rs(oidc: OIDCProvider) -> Iterator[ProtectedServer]:
    """The protected server, checking JWTs of `oidc` (a module's own `oidc` counts)."""
    yield from ProtectedServer.serving(oidc, "jwt")
