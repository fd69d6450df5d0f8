"""Health and readiness probes on a real uvicorn on 127.0.0.1: answered before the Host,
Origin and auth checks, in JSON, at configurable paths; readiness says 503 with a reason while
the shared broker's Redis is down and 200 again once it is back, without a restart."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
import uvicorn

from mcpkit import Server
from mcpkit.server.broker import SharedBroker
from mcpkit.transports.http_server.app import HTTPApp
from mcpkit.transports.http_server.health import HealthPaths
from mcpkit.transports.http_server.options import HTTPOptions


def make_server(broker: Any = None) -> Server:
    server = Server("probed", broker=broker)

    @server.tool()
    def echo(text: str) -> str:
        return text

    return server


@asynccontextmanager
async def serving(app: HTTPApp) -> AsyncIterator[str]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    runner = uvicorn.Server(uvicorn.Config(app, log_level="error", lifespan="on"))
    task = asyncio.create_task(runner.serve(sockets=[sock]))
    try:
        async with asyncio.timeout(10):
            while not runner.started:
                await asyncio.sleep(0.01)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        runner.should_exit = True
        await asyncio.wait_for(task, 10)
        sock.close()


async def test_probes_answer_json_before_host_origin_and_auth_checks() -> None:
    app = HTTPApp(make_server(), HTTPOptions(path="/mcp"))
    async with serving(app) as url, httpx.AsyncClient() as http:
        foreign = {"Host": "10.1.2.3:8080", "Origin": "https://evil.example"}
        health = await http.get(url + "/healthz", headers=foreign)
        assert health.status_code == 200
        assert health.headers["content-type"] == "application/json"
        assert health.json() == {"status": "ok"}
        ready = await http.get(url + "/readyz", headers=foreign)
        assert (ready.status_code, ready.json()) == (200, {"status": "ready"})
        head = await http.head(url + "/readyz")
        assert head.status_code == 200 and head.content == b""
        # the same foreign Host on the MCP path is refused: the probes are the exception
        mcp = await http.post(url + "/mcp", headers=foreign, json={})
        assert mcp.status_code == 403
        # a POST to a probe path is not a probe
        assert (await http.post(url + "/healthz", json={})).status_code == 404


async def test_probe_paths_are_configurable_and_can_be_turned_off() -> None:
    app = HTTPApp(make_server(), HTTPOptions(
        path="/mcp", health=HealthPaths(health="/live", ready=None)))
    async with serving(app) as url, httpx.AsyncClient() as http:
        assert (await http.get(url + "/live")).json() == {"status": "ok"}
        assert (await http.get(url + "/healthz")).status_code == 404
        assert (await http.get(url + "/readyz")).status_code == 404


async def test_readiness_follows_the_broker_down_and_back(restartable: Any) -> None:
    service = restartable.redis
    broker = SharedBroker.from_url(service.url, "readyz")
    app = HTTPApp(make_server(broker), HTTPOptions(path="/mcp"))
    async with serving(app) as url, httpx.AsyncClient(timeout=10) as http:
        assert (await http.get(url + "/readyz")).status_code == 200
        service.stop()
        ready = await http.get(url + "/readyz")
        assert ready.status_code == 503
        body = ready.json()
        assert body["status"] == "unavailable"
        assert "broker" in body["reason"] and "Redis" in body["reason"]
        assert "127.0.0.1" not in body["reason"]
        assert (await http.get(url + "/healthz")).status_code == 200  # up, just not ready
        service.start()
        status = 0
        for _ in range(100):  # bounded: the listener retries within 2 s
            status = (await http.get(url + "/readyz")).status_code
            if status == 200:
                break
            await asyncio.sleep(0.1)
        assert status == 200
    await broker.aclose()


@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
async def test_a_probe_is_not_an_mcp_request(path: str) -> None:
    """The probe's answer is not JSON-RPC: a load balancer reads only its status."""
    app = HTTPApp(make_server(), HTTPOptions())  # path=None: every other path is MCP
    async with serving(app) as url, httpx.AsyncClient() as http:
        body = (await http.get(url + path)).json()
        assert "jsonrpc" not in body and body["status"] in ("ok", "ready")
