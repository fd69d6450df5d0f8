"""Spans over Streamable HTTP, both eras: the servers run under a real uvicorn on 127.0.0.1 in
this process (so their spans reach the same in-memory exporter), the client is mcpkit's HTTP
transport. A server span's parent is the trace context in `_meta`, else the request's
`traceparent` header; what HTTP adds (peer address and port, the HTTP version, a legacy
session's id) is on both sides' spans.

Every message the client sends and the servers answer is checked against the official schema
of its era (`checked_transport(..., check_server=True)`, `Peer`)."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from helpers.transports.http_peer import Peer, checked_transport
from helpers.transports.resume_peer import on_free_port
from opentelemetry.trace import SpanKind
from span_capture import Spans

from mcpkit import Server
from mcpkit.client import Client, ClientOptions

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
HEADER_PARENT = "00f067aa0ba902b7"
META_PARENT = "b7ad6b7169203331"


def weather_server() -> Server:
    server = Server("weather", "1.0.0")

    @server.tool()
    async def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    return server


@contextlib.asynccontextmanager
async def checked_client(url: str, era: str) -> AsyncIterator[Client]:
    transport = checked_transport(url, check_server=True)
    async with Client(transport, options=ClientOptions(era=era)) as client:
        yield client
    assert not transport.server_checks.problems, transport.server_checks.problems


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_one_trace_across_two_http_servers(spans: Spans, era: str) -> None:
    weather = weather_server()
    planner = Server("planner", "1.0.0")
    sessions: dict[str, Any] = {}
    async with on_free_port(weather.asgi()) as weather_url:

        @planner.tool()
        async def plan_trip(city: str) -> str:
            """Plan a trip: asks the weather server first."""
            async with checked_client(weather_url, era) as nested:
                sessions["inner"] = getattr(nested.transport, "session_id", None)
                result = await nested.call_tool("get_weather", {"city": city})
            return f"pack for: {result['content'][0]['text']}"

        async with on_free_port(planner.asgi()) as planner_url, \
                checked_client(planner_url, era) as client:
            sessions["outer"] = getattr(client.transport, "session_id", None)
            result = await client.call_tool("plan_trip", {"city": "Oslo"})
    assert result["content"][0]["text"] == "pack for: sunny in Oslo"

    chain = [spans.one("tools/call plan_trip", SpanKind.CLIENT),
             spans.one("tools/call plan_trip", SpanKind.SERVER),
             spans.one("tools/call get_weather", SpanKind.CLIENT),
             spans.one("tools/call get_weather", SpanKind.SERVER)]
    assert len({s.context.trace_id for s in chain}) == 1
    for parent, child in itertools.pairwise(chain):
        assert child.parent.span_id == parent.context.span_id, (parent.name, child.name)

    urls = {"plan_trip": planner_url, "get_weather": weather_url}
    for span in chain:
        tool = span.name.split(" ", 1)[1]
        assert span.attributes["network.transport"] == "tcp"
        assert span.attributes["network.protocol.name"] == "http"
        assert span.attributes["mcp.protocol.version"] == (
            "2026-07-28" if era == "modern" else "2025-11-25")
        if span.kind == SpanKind.CLIENT:
            assert span.attributes["server.address"] == "127.0.0.1"
            assert span.attributes["server.port"] == urlsplit(urls[tool]).port
        else:
            assert span.attributes["client.address"] == "127.0.0.1"
            assert isinstance(span.attributes["client.port"], int)
            assert span.attributes["network.protocol.version"] == "1.1"
    if era == "legacy":
        assert sessions["outer"] and sessions["inner"]
        for span in chain:
            side = "outer" if span.name.endswith("plan_trip") else "inner"
            assert span.attributes["mcp.session.id"] == sessions[side]
    else:
        assert all("mcp.session.id" not in span.attributes for span in chain)


async def _post_with_trace_headers(url: str, message_trace: dict[str, str]) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        peer = Peer(url, http)
        message = peer.request_message(
            "tools/call", {"name": "get_weather", "arguments": {"city": "Lima"}}, **message_trace)
        reply = await peer.post(message, headers={
            "traceparent": f"00-{TRACE_ID}-{HEADER_PARENT}-01", "baggage": "via=header"})
        assert reply.status == 200 and "result" in reply.message


async def test_without_meta_the_http_traceparent_header_is_the_parent(spans: Spans) -> None:
    async with on_free_port(weather_server().asgi()) as url:
        await _post_with_trace_headers(url, {})
    span = spans.one("tools/call get_weather", SpanKind.SERVER)
    assert f"{span.context.trace_id:032x}" == TRACE_ID
    assert f"{span.parent.span_id:016x}" == HEADER_PARENT


async def test_the_meta_trace_context_wins_over_the_http_header(spans: Spans) -> None:
    other_trace = "0af7651916cd43dd8448eb211c80319c"
    async with on_free_port(weather_server().asgi()) as url:
        await _post_with_trace_headers(
            url, {"traceparent": f"00-{other_trace}-{META_PARENT}-01"})
    span = spans.one("tools/call get_weather", SpanKind.SERVER)
    assert f"{span.context.trace_id:032x}" == other_trace
    assert f"{span.parent.span_id:016x}" == META_PARENT


async def test_a_header_from_another_request_does_not_leak_into_the_next(spans: Spans) -> None:
    # The scope handed down for one request is taken back when it is answered: a request
    # without trace headers on the same connection starts a trace of its own.
    async with on_free_port(weather_server().asgi()) as url:
        await _post_with_trace_headers(url, {})
        async with httpx.AsyncClient(timeout=10) as http:
            peer = Peer(url, http)
            reply = await peer.post(peer.request_message(
                "tools/call", {"name": "get_weather", "arguments": {"city": "Rome"}}))
            assert "result" in reply.message
    first, second = spans.named("tools/call get_weather")
    assert f"{first.context.trace_id:032x}" == TRACE_ID
    assert second.parent is None and second.context.trace_id != first.context.trace_id
