"""The conformance client's behaviour for the authorization extensions (not scored by the suite,
required by scripts/conformance): machine grants and DPoP.

`client.py` hands every scenario named in `EXTENSIONS` to `run`. Each one builds the
authorization the scenario's context calls for and then does what every auth scenario asks
once authorized: list the tools and call one.

- `auth/client-credentials-basic`, `auth/client-credentials-jwt`: `MachineAuth` with the
  client credentials grant, authenticated by secret (client_secret_basic) or by a signed JWT
  (private_key_jwt with the scenario's PEM key);
- `auth/enterprise-managed-authorization`: the IdP's ID token exchanged for an ID-JAG, then
  the jwt-bearer grant at the MCP server's AS;
- `auth/wif-jwt-bearer`: the jwt-bearer grant with the workload JWT the scenario supplies;
- `auth/dpop`, `auth/dpop-nonce`: the authorization code flow (`mcpkit.transports.oauth.flow.
  OAuth`, run headlessly: the authorization URL is fetched and its redirect read) with a DPoP
  key, so the token request and every MCP request carry a proof.

Imports: `mcpkit`'s public client API, the transports' auth flows, httpx and the standard
library.
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from mcpkit import Client, ClientOptions, HTTPConnector
from mcpkit.store.tokens import MemoryTokenStorage
from mcpkit.transports.oauth.dpop import DPoPSigner
from mcpkit.transports.oauth.flow import OAuth
from mcpkit.transports.oauth.grants import (
    ClientCredentials,
    ClientCredentialsGrant,
    EnterpriseGrant,
    MachineGrant,
    WorkloadIdentityGrant,
)
from mcpkit.transports.oauth.machine import MachineAuth

__all__ = ["EXTENSIONS", "run"]

REVISION = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", "2026-07-28")
MODERN = REVISION >= "2026-07-28"


def context() -> dict[str, Any]:
    raw = os.environ.get("MCP_CONFORMANCE_CONTEXT")
    return json.loads(raw) if raw else {}


def options() -> ClientOptions:
    if MODERN:
        return ClientOptions(era="auto", timeout=60.0)
    return ClientOptions(era="legacy", legacy_version=REVISION, timeout=60.0)


async def authorized_calls(url: str, auth: httpx.Auth) -> None:
    """List the tools and call the scenario's one, every request authorized by `auth`."""
    connector = HTTPConnector(url, auth=auth)
    async with Client(connector, client_info={"name": "mcpkit-conformance-client",
                                              "version": "1.0.0"}, options=options()) as c:
        await c.list_tools()
        await c.call_tool("test-tool", {})


def client_credentials_grant(ctx: dict[str, Any]) -> MachineGrant:
    if "private_key_pem" in ctx:
        return ClientCredentialsGrant(ClientCredentials(
            ctx["client_id"], private_key=ctx["private_key_pem"],
            signing_alg=ctx.get("signing_algorithm")))
    return ClientCredentialsGrant(ClientCredentials(ctx["client_id"],
                                                    client_secret=ctx["client_secret"]))


def enterprise_grant(ctx: dict[str, Any]) -> MachineGrant:
    return EnterpriseGrant(
        client=ClientCredentials(ctx["client_id"], client_secret=ctx["client_secret"]),
        idp_token_endpoint=ctx["idp_token_endpoint"],
        id_token=ctx["idp_id_token"],
        idp_client=ClientCredentials(ctx["idp_client_id"], auth_method="none"),
        idp_issuer=ctx.get("idp_issuer"),
    )


def workload_grant(ctx: dict[str, Any]) -> MachineGrant:
    client = ClientCredentials(ctx["client_id"], auth_method="none") if "client_id" in ctx \
        else None
    return WorkloadIdentityGrant(assertion=ctx["valid_jwt"], client=client)


async def machine(url: str, grant: MachineGrant) -> None:
    auth = MachineAuth(grant)
    try:
        await authorized_calls(url, auth)
    finally:
        await auth.aclose()


async def with_dpop(url: str) -> None:
    """The authorization code flow, headless, with DPoP on the token and MCP requests: the
    suite's authorization endpoint redirects at once, so "opening" the URL is one GET whose
    `Location` (never followed) holds the callback's query."""
    answer: dict[str, str] = {}
    async with httpx.AsyncClient(follow_redirects=False, timeout=30.0) as browser:

        async def open_in_browser(authorization_url: str) -> None:
            location = (await browser.get(authorization_url)).headers.get("location", "")
            answer.clear()
            answer.update(httpx.URL(location).params.items())

        async def callback() -> dict[str, str]:
            return dict(answer)

        auth = OAuth(redirect_uri="http://localhost:3000/callback",
                     redirect_handler=open_in_browser, callback_handler=callback,
                     client_name="mcpkit-conformance-client", storage=MemoryTokenStorage(),
                     dpop=DPoPSigner())
        await authorized_calls(url, auth)


Extension = Callable[[str], Awaitable[None]]
EXTENSIONS: dict[str, Extension] = {
    "auth/client-credentials-basic": lambda url: machine(url,
                                                         client_credentials_grant(context())),
    "auth/client-credentials-jwt": lambda url: machine(url, client_credentials_grant(context())),
    "auth/enterprise-managed-authorization": lambda url: machine(url, enterprise_grant(context())),
    "auth/wif-jwt-bearer": lambda url: machine(url, workload_grant(context())),
    "auth/dpop": with_dpop,
    "auth/dpop-nonce": with_dpop,
}


async def run(name: str, url: str) -> None:
    await EXTENSIONS[name](url)
