"""The resource a protected server checks tokens for is configuration, never a request's word:
a protected app under uvicorn on 127.0.0.1, its keys served by a real key server, each token
minted for one resource, and `Host` headers chosen to lie.

Without `public_url` the resource is the loopback address and port the server listens on; a
policy that lets any host through needs `public_url` before the app is built; a `Host` that
names no host is a 400 before the metadata, the token or the path are looked at.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import uvicorn
from helpers.auth.rs_peers import ISSUER, Issuer, KeyServer, key_server, protected, whoami_server
from helpers.transports.http_peer import Peer, Reply, meta

import mcpkit
from mcpkit.auth.server_config import ProtectedResource
from mcpkit.transports.http_server.auth_jwt import JWTVerifier
from mcpkit.transports.http_server.running import serve_http

PUBLIC = "https://mcp.example.com/mcp"
WELL_KNOWN = "/.well-known/oauth-protected-resource/mcp"
BOUND = 30.0


def make_server() -> mcpkit.Server:
    return whoami_server("resource")


def guarded(keys: KeyServer, **http: Any) -> Any:
    public_url = http.pop("public_url", None)
    return make_server().asgi(path="/mcp", **http, auth=ProtectedResource(
        ISSUER, verifier=JWTVerifier(keys.url + "/jwks"), public_url=public_url))


async def call(url: str, token: str | None, host: str | None = None) -> Reply:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    if host is not None:
        headers["Host"] = host
    async with httpx.AsyncClient(timeout=BOUND) as http:
        peer = Peer(url, http)
        return await peer.post(peer.request_message("tools/call", {
            "name": "whoami", "arguments": {}}), headers)


def ran(reply: Reply) -> bool:
    """Whether the tool ran (the token was taken)."""
    return reply.status == 200 and reply.message["result"]["content"][0]["text"] == "alice"


def audience_refused(reply: Reply) -> bool:
    return reply.status == 401 and (
        'error_description="the token is not intended for this resource (aud)"'
        in reply.headers["www-authenticate"])


async def test_a_token_for_another_resource_is_refused_whatever_host_the_request_names() -> None:
    """The server allows `mcp.example` and listens on 127.0.0.1: its resource is the address it
    listens on. Before, the audience followed the Host: `mcp.example:99999` fell back to
    `http://localhost/mcp`, and `mcp.example` made `http://mcp.example/mcp` good."""
    issuer = Issuer()
    async with key_server(issuer) as keys, protected(guarded(
            keys, allowed_hosts=("mcp.example",))) as url:
        foreign = await call(url, issuer.token("http://localhost/mcp"), "mcp.example:99999")
        assert foreign.status == 400
        assert "names no host[:port]" in foreign.error["message"]
        assert audience_refused(await call(url, issuer.token("http://mcp.example/mcp"),
                                           "mcp.example"))
        assert ran(await call(url, issuer.token(url), "mcp.example"))


async def test_with_any_host_allowed_only_a_token_for_the_public_url_is_taken() -> None:
    issuer = Issuer()
    async with key_server(issuer) as keys, protected(guarded(
            keys, allowed_hosts=("*",), public_url=PUBLIC)) as url:
        other = "http://other-service.example/mcp"
        reply = await call(url, issuer.token(other), "other-service.example")
        assert audience_refused(reply)
        assert (f'resource_metadata="https://mcp.example.com{WELL_KNOWN}"'
                in reply.headers["www-authenticate"])
        assert ran(await call(url, issuer.token(PUBLIC), "other-service.example"))


@pytest.mark.parametrize("hosts", [("*",), ("*.example.com",), ("mcp.example", "*.example.org")])
def test_a_policy_taking_hosts_it_does_not_name_needs_a_public_url_when_built(
        hosts: tuple[str, ...]) -> None:
    server = make_server()
    with pytest.raises(ValueError, match=r"needs ProtectedResource\.public_url") as refused:
        server.asgi(path="/mcp", allowed_hosts=hosts, auth=ProtectedResource(
            ISSUER, verifier=JWTVerifier("http://127.0.0.1:1/jwks")))
    assert "\n" not in str(refused.value)
    server.asgi(path="/mcp", allowed_hosts=hosts, auth=ProtectedResource(  # with one: built
        ISSUER, verifier=JWTVerifier("http://127.0.0.1:1/jwks"), public_url=PUBLIC))


async def test_serving_a_protected_server_elsewhere_than_loopback_needs_a_public_url() -> None:
    """What `mcpkit run --http 0.0.0.0:PORT` would do without `--allow-host` (any host): the
    server is refused before anything is bound, in one line naming the fix."""
    resource = ProtectedResource(ISSUER, verifier=JWTVerifier("http://127.0.0.1:1/jwks"))
    for address in ("0.0.0.0:0/mcp", "10.0.0.5:0/mcp"):
        with pytest.raises(ValueError, match=r"bound to [\d.]+ needs ProtectedResource\."
                                             r"public_url") as refused:
            await serve_http(make_server(), address, auth=resource)
        assert "\n" not in str(refused.value)
    with pytest.raises(ValueError, match=r"needs ProtectedResource\.public_url"):
        await serve_http(make_server(), "127.0.0.1:0/mcp", allowed_hosts=("*.example.com",),
                         auth=resource)


async def test_a_protected_server_with_a_public_url_allows_the_host_it_names() -> None:
    issuer = Issuer()
    lines: list[str] = []
    announced = asyncio.Event()

    def say(line: str) -> None:
        lines.append(line)
        announced.set()

    async with key_server(issuer) as keys:
        resource = ProtectedResource(ISSUER, verifier=JWTVerifier(keys.url + "/jwks"),
                                     public_url=PUBLIC)
        serving = asyncio.create_task(serve_http(make_server(), "127.0.0.1:0/mcp",
                                                 auth=resource, announce=say))
        try:
            async with asyncio.timeout(BOUND):
                await announced.wait()
            url = lines[0].split(" at ")[1].split(" ")[0]
            assert ran(await call(url, issuer.token(PUBLIC), "mcp.example.com"))
            assert (await call(url, issuer.token(PUBLIC), "other.example.com")).status == 403
        finally:
            serving.cancel()
            with pytest.raises(asyncio.CancelledError):
                await serving


async def test_on_loopback_the_resource_is_the_address_listened_on_not_the_host_named() -> None:
    issuer = Issuer()
    async with key_server(issuer) as keys, protected(guarded(keys)) as url:
        port = url.split(":")[2].split("/")[0]
        assert audience_refused(await call(url, issuer.token(f"http://localhost:{port}/mcp"),
                                           f"localhost:{port}"))
        assert ran(await call(url, issuer.token(url), f"localhost:{port}"))
        async with httpx.AsyncClient() as http:
            metadata = await http.get(f"http://127.0.0.1:{port}{WELL_KNOWN}",
                                      headers={"Host": f"localhost:{port}"})
        assert metadata.json()["resource"] == url
        assert metadata.headers["cache-control"] == "no-store"


async def test_metadata_naming_the_public_url_may_be_kept_by_shared_caches() -> None:
    issuer = Issuer()
    async with key_server(issuer) as keys, protected(guarded(keys, public_url=PUBLIC)) as url:
        async with httpx.AsyncClient() as http:
            metadata = await http.get(url.rsplit("/", 1)[0] + WELL_KNOWN)
        assert metadata.json()["resource"] == PUBLIC
        assert metadata.headers["cache-control"] == "public, max-age=3600"


async def test_the_metadata_is_served_only_to_an_allowed_host() -> None:
    issuer = Issuer()
    async with key_server(issuer) as keys, protected(guarded(keys)) as url:
        async with httpx.AsyncClient() as http:
            refused = await http.get(url.rsplit("/", 1)[0] + WELL_KNOWN,
                                     headers={"Host": "evil.example"})
        assert refused.status_code == 403
        assert "'evil.example' is not allowed" in refused.json()["error"]["message"]


async def raw(port: int, request_line: str, host: bytes, *lines: str) -> tuple[int, Any]:
    """One request over a bare socket, for a Host an HTTP library will not send."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        head = (request_line.encode() + b"\r\nHost: " + host + b"\r\n"
                + "".join(f"{line}\r\n" for line in lines).encode() + b"Connection: close\r\n")
        body = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "whoami", "arguments": {}, "_meta": meta()}})
        if request_line.startswith("POST"):
            head += (b"Content-Type: application/json\r\nAccept: application/json, "
                     b"text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: "
                     b"tools/call\r\nMcp-Name: whoami\r\nContent-Length: %d\r\n" % len(body))
        else:
            body = b""
        writer.write(head + b"\r\n" + body)
        await writer.drain()
        async with asyncio.timeout(BOUND):
            data = await reader.read()
    finally:
        writer.close()
    status = int(data.split(b" ", 2)[1])
    payload = data.split(b"\r\n\r\n", 1)[1]
    return status, orjson.loads(payload) if payload else None


@pytest.mark.parametrize("host", [b"mcp.example:99999", b"u@a", b"[::1", b"caf\xe9.example",
                                  b"127.0.0.1:8000:1"])
async def test_a_host_naming_no_host_is_400_before_the_metadata_the_token_or_the_path(
        host: bytes) -> None:
    issuer = Issuer()
    async with key_server(issuer) as keys, protected(guarded(
            keys, allowed_hosts=("*",), public_url=PUBLIC)) as url:
        port = int(url.split(":")[2].split("/")[0])
        token = issuer.token(PUBLIC)
        for request_line, extra in (
                ("POST /mcp HTTP/1.1", [f"Authorization: Bearer {token}"]),
                (f"GET {WELL_KNOWN} HTTP/1.1", []),
                ("GET /nowhere HTTP/1.1", []),
                ("GET /healthz HTTP/1.1", [])):
            status, body = await raw(port, request_line, host, *extra)
            assert status == 400, (request_line, status, body)
            assert body["error"]["code"] == -32600
            assert body["error"]["message"].startswith("Bad Request: the Host header ")
            assert "names no host[:port] (RFC 9112 §3.2)" in body["error"]["message"]


async def test_a_non_ascii_host_under_a_wildcard_policy_is_400_never_500() -> None:
    """Before, such a Host reached the challenge, which could not encode it (500)."""
    async with protected(make_server().asgi(path="/mcp", allowed_hosts=("*",))) as url:
        port = int(url.split(":")[2].split("/")[0])
        assert (await raw(port, "POST /mcp HTTP/1.1", "dé.example".encode()))[0] == 400
        assert (await raw(port, "POST /mcp HTTP/1.1", b"d\xe9.example"))[0] == 400


async def test_a_server_on_a_socket_file_without_a_public_url_answers_500_and_logs_the_fix(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """No loopback address to take the URL from, and none configured: no token can be
    checked, which the operator must fix; the client gets no challenge to act on."""
    issuer = Issuer()
    async with key_server(issuer) as keys:
        path = str(tmp_path / "mcp.sock")
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(path)
        sock.listen()
        runner = uvicorn.Server(uvicorn.Config(guarded(keys), log_level="critical",
                                               lifespan="off"))
        serving = asyncio.create_task(runner.serve(sockets=[sock]))
        try:
            with caplog.at_level(logging.ERROR, "mcpkit.auth"):
                async with httpx.AsyncClient(transport=httpx.AsyncHTTPTransport(uds=path)) as http:
                    for _ in range(2):
                        peer = Peer("http://127.0.0.1/mcp", http)
                        reply = await peer.post(peer.request_message("tools/call", {
                            "name": "whoami", "arguments": {}}), {
                            "Authorization": f"Bearer {issuer.token('http://127.0.0.1/mcp')}"})
                        assert reply.status == 500
                        assert "www-authenticate" not in reply.headers
                        assert "ProtectedResource.public_url" in reply.error["message"]
            logged = [r.getMessage() for r in caplog.records if r.name == "mcpkit.auth"]
            assert len(logged) == 1 and "set ProtectedResource.public_url" in logged[0]
        finally:
            runner.should_exit = True
            async with asyncio.timeout(BOUND):
                await serving
            sock.close()
