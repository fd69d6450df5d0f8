"""The official MCP Python SDK's client signing in through the authorization proxy, run in an
environment of its own (`mcp==2.3.0`, 2026-07-28, or `mcp==1.30.0`, 2025-11-25:
`sdk_clients.py` makes them): `python python_client.py URL [legacy]`.

It speaks JSON lines with the test on stdout and stdin: `{"authorize": URL}` when the SDK
would open the browser, then it waits for `{"callback": URL}` (where the browser was sent
back to). Then `{"whoami": TEXT}`; the SDK's token is made expired on the client's side (its
own expiry time set in the past, as a later run would find it) and the next call refreshes:
`{"refreshed": BOOL, "whoami": TEXT}`. Last the refresh token is revoked (RFC 7009, at the
revocation endpoint the proxy's metadata names) and the tokens the SDK holds are tried again
by hand: `{"revoked": {"access": STATUS, "refresh": ERROR}}`.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from importlib.metadata import version
from typing import Any

from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

V2 = version("mcp").startswith("2.")
REDIRECT = "http://127.0.0.1:33418/callback"


def say(**fields: Any) -> None:
    print(json.dumps(fields), flush=True)


async def read_line() -> dict[str, Any]:
    line = await asyncio.to_thread(sys.stdin.readline)
    return dict(json.loads(line))


class Memory(TokenStorage):
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


async def redirect(url: str) -> None:
    say(authorize=url)


async def callback() -> Any:
    answer = urllib.parse.parse_qs(urllib.parse.urlsplit((await read_line())["callback"]).query)
    code, state = answer["code"][0], answer.get("state", [None])[0]
    if V2:
        from mcp.shared.auth import AuthorizationCodeResult

        return AuthorizationCodeResult(code=code, state=state, iss=answer.get("iss", [None])[0])
    return code, state


def post(url: str, form: dict[str, str] | None = None, body: bytes | None = None,
         headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    data = body if body is not None else urllib.parse.urlencode(form or {}).encode()
    request = urllib.request.Request(url, data=data, method="POST", headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            raw = answer.read()
            return answer.status, json.loads(raw) if raw else {}
    except urllib.error.HTTPError as exc:
        raw = exc.read()
        try:
            return exc.code, json.loads(raw) if raw else {}
        except ValueError:
            return exc.code, {}


async def main(url: str, legacy: bool) -> None:
    storage = Memory()
    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="python sdk test client", redirect_uris=[REDIRECT],
            grant_types=["authorization_code", "refresh_token"], response_types=["code"],
            token_endpoint_auth_method="none"),
        storage=storage, redirect_handler=redirect, callback_handler=callback)

    async def whoami(call: Any) -> str:
        result = await call("whoami", {})
        return str(result.content[0].text)

    if V2:
        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        async with httpx2.AsyncClient(auth=provider, timeout=30) as http, Client(
                streamable_http_client(url, http_client=http),
                mode="legacy" if legacy else "auto") as client:
            say(whoami=await whoami(client.call_tool), era=client.protocol_version)
            first = storage.tokens
            provider.context.token_expiry_time = time.time() - 1
            again = await whoami(client.call_tool)
    else:
        from mcp import ClientSession
        from mcp.client.streamable_http import streamablehttp_client

        async with streamablehttp_client(url, auth=provider) as (read, write, _), \
                ClientSession(read, write) as session:
            initialized = await session.initialize()
            say(whoami=await whoami(session.call_tool), era=initialized.protocolVersion)
            first = storage.tokens
            provider.context.token_expiry_time = time.time() - 1
            again = await whoami(session.call_tool)
    second = storage.tokens
    assert first is not None and second is not None and storage.client is not None
    say(refreshed=second.refresh_token != first.refresh_token
        and second.access_token != first.access_token, whoami=again)
    origin = url.rsplit("/", 1)[0]
    client_id = storage.client.client_id or ""
    post(f"{origin}/oauth/revoke", {"token": second.refresh_token or "",
                                    "token_type_hint": "refresh_token", "client_id": client_id})
    listing = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}}).encode()
    access, _ = post(url, body=listing, headers={
        "authorization": f"Bearer {second.access_token}", "content-type": "application/json",
        "accept": "application/json, text/event-stream", "mcp-method": "tools/list",
        "mcp-protocol-version": "2026-07-28"})
    _, refresh = post(f"{origin}/oauth/token", {
        "grant_type": "refresh_token", "refresh_token": second.refresh_token or "",
        "client_id": client_id})
    say(revoked={"access": access, "refresh": refresh.get("error")})


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2:] == ["legacy"]))
