"""Spans on both sides of an in-memory connection, in both eras: one trace from the caller's
span through the client and the server into a nested client call the tool makes, the
attributes of the MCP conventions, and how errors are recorded.

Every message either side sends is checked against the official schema of its era
(`SchemaTap` on each connection, `wire_factory` for the hand-written requests)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest
from helpers.client.schema_tap import SchemaTap
from opentelemetry import baggage, context
from opentelemetry.trace import SpanKind, StatusCode
from span_capture import Spans

from mcpkit import Server, ToolError
from mcpkit.client import Client, ClientOptions
from mcpkit.errors import InvalidParamsError
from mcpkit.transports.memory import InMemory

MODERN = "2026-07-28"
LEGACY = "2025-11-25"


def weather_server() -> Server:
    server = Server("weather", "1.0.0")

    @server.tool()
    async def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    @server.tool()
    async def refuse(city: str) -> str:
        """Always reports a failure the model can read."""
        raise ToolError(f"no station in {city}")

    @server.resource("weather://stations")
    async def stations() -> str:
        """Fails unexpectedly."""
        raise RuntimeError("the station list is unreachable")

    @server.prompt()
    async def report(city: str) -> str:
        """A weather report prompt."""
        return f"Report the weather in {city}."

    return server


def planner_server(weather: Server, taps: list[SchemaTap], era: str) -> Server:
    """A server whose tool asks the weather server, as an agent's tool would."""
    server = Server("planner", "1.0.0")

    @server.tool()
    async def plan_trip(city: str) -> str:
        """Plan a trip: asks the weather server first."""
        tap = SchemaTap()
        taps.append(tap)
        async with Client(InMemory(weather, tap=tap), options=ClientOptions(era=era)) as nested:
            result = await nested.call_tool("get_weather", {"city": city})
        return f"pack for: {result['content'][0]['text']}"

    return server


def hex_ids(span: Any) -> tuple[str, str]:
    ctx = span.get_span_context()
    return f"{ctx.trace_id:032x}", f"{ctx.span_id:016x}"


def traceparent(span: Any) -> str:
    """The W3C `traceparent` naming `span` (version 00, the span's own flags)."""
    ctx = span.get_span_context()
    return f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{ctx.trace_flags:02x}"


def parent_of(span: Any) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def connected(server: Server, tap: SchemaTap, era: str, **options: Any) -> Client:
    return Client(InMemory(server, tap=tap), options=ClientOptions(era=era, **options))


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_one_trace_from_the_caller_through_a_nested_call(spans: Spans, era: str) -> None:
    taps: list[SchemaTap] = []
    tap = SchemaTap()
    planner = planner_server(weather_server(), taps, era)
    with spans.tracer.start_as_current_span("agent turn") as turn:
        async with connected(planner, tap, era) as client:
            result = await client.call_tool("plan_trip", {"city": "Oslo"})
    assert result["content"][0]["text"] == "pack for: sunny in Oslo"
    tap.assert_clean()
    for nested in taps:
        nested.assert_clean()

    outer_client = spans.one("tools/call plan_trip", SpanKind.CLIENT)
    outer_server = spans.one("tools/call plan_trip", SpanKind.SERVER)
    inner_client = spans.one("tools/call get_weather", SpanKind.CLIENT)
    inner_server = spans.one("tools/call get_weather", SpanKind.SERVER)
    chain = [turn, outer_client, outer_server, inner_client, inner_server]
    assert len({s.get_span_context().trace_id for s in chain}) == 1
    for parent, child in itertools.pairwise(chain):
        assert parent_of(child) == parent.get_span_context().span_id, (parent.name, child.name)
    assert outer_server.parent.is_remote and inner_server.parent.is_remote
    assert not outer_client.parent.is_remote and not inner_client.parent.is_remote

    # What went on the wire is the client span's own context (META-10).
    call = tap.requests("tools/call")[0]
    assert call["params"]["_meta"]["traceparent"] == traceparent(outer_client)
    nested_call = taps[0].requests("tools/call")[0]
    assert nested_call["params"]["_meta"]["traceparent"] == traceparent(inner_client)

    version = MODERN if era == "modern" else LEGACY
    for span, wire_id in ((outer_client, call["id"]), (outer_server, call["id"]),
                          (inner_client, nested_call["id"]), (inner_server, nested_call["id"])):
        assert span.status.status_code == StatusCode.UNSET
        attributes = dict(span.attributes)
        assert attributes.pop("jsonrpc.request.id") == str(wire_id)
        assert attributes.pop("mcp.protocol.version") == version
        name = span.name.split(" ", 1)[1]
        assert attributes == {"mcp.method.name": "tools/call", "gen_ai.tool.name": name,
                              "gen_ai.operation.name": "execute_tool"}, span.name


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_a_tool_error_is_recorded_as_tool_error_on_both_sides(spans: Spans,
                                                                     era: str) -> None:
    tap = SchemaTap()
    async with connected(weather_server(), tap, era) as client:
        result = await client.call_tool("refuse", {"city": "Atlantis"})
    assert result["isError"] is True
    tap.assert_clean()
    for kind in (SpanKind.CLIENT, SpanKind.SERVER):
        span = spans.one("tools/call refuse", kind)
        assert span.attributes["error.type"] == "tool_error"
        assert "rpc.response.status_code" not in span.attributes
        assert span.status.status_code == StatusCode.ERROR


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_a_caller_error_fails_the_client_span_but_not_the_server_span(
    spans: Spans, era: str
) -> None:
    tap = SchemaTap()
    async with connected(weather_server(), tap, era) as client:
        with pytest.raises(InvalidParamsError) as caught:
            await client.call_tool("no_such_tool", {})
    tap.assert_clean()
    client_span = spans.one("tools/call no_such_tool", SpanKind.CLIENT)
    assert client_span.attributes["error.type"] == "-32602"
    assert client_span.attributes["rpc.response.status_code"] == "-32602"
    assert client_span.status.status_code == StatusCode.ERROR
    assert client_span.status.description == caught.value.message
    # The server served the request correctly: it names the code, but did not fail.
    server_span = spans.one("tools/call no_such_tool", SpanKind.SERVER)
    assert server_span.attributes["rpc.response.status_code"] == "-32602"
    assert "error.type" not in server_span.attributes
    assert server_span.status.status_code == StatusCode.UNSET


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_an_internal_error_fails_both_spans(
    spans: Spans, era: str
) -> None:
    tap = SchemaTap()
    async with connected(weather_server(), tap, era) as client:
        with pytest.raises(Exception) as caught:
            await client.read_resource("weather://stations")
    assert getattr(caught.value, "code", None) == -32603
    tap.assert_clean()
    for kind in (SpanKind.CLIENT, SpanKind.SERVER):
        span = spans.one("resources/read", kind)
        assert span.attributes["mcp.resource.uri"] == "weather://stations"
        assert span.attributes["error.type"] == "-32603"
        assert span.attributes["rpc.response.status_code"] == "-32603"
        assert span.status.status_code == StatusCode.ERROR
    # The client's span holds only what the client saw: no traceback crossed the wire.
    assert not spans.one("resources/read", SpanKind.CLIENT).events


async def test_a_prompt_span_is_named_by_the_prompt(spans: Spans) -> None:
    tap = SchemaTap()
    async with connected(weather_server(), tap, "modern") as client:
        await client.get_prompt("report", {"city": "Lima"})
    tap.assert_clean()
    for kind in (SpanKind.CLIENT, SpanKind.SERVER):
        span = spans.one("prompts/get report", kind)
        assert span.attributes["gen_ai.prompt.name"] == "report"
        assert "gen_ai.operation.name" not in span.attributes


async def test_a_version_the_server_does_not_serve_fails_the_server_span(
    spans: Spans, wire_factory: Callable[[Server], Any]
) -> None:
    # -32022 is in the server-error range: the convention counts it against the server.
    wire = wire_factory(weather_server())
    reply = await wire.request("tools/list", {}, **{
        "io.modelcontextprotocol/protocolVersion": "2099-01-01"})
    assert reply["error"]["code"] == -32022
    span = spans.one("tools/list", SpanKind.SERVER)
    assert span.attributes["error.type"] == "-32022"
    assert span.attributes["jsonrpc.request.id"] == str(reply["id"])
    assert span.status.status_code == StatusCode.ERROR


async def test_the_server_span_continues_the_trace_a_hand_written_request_names(
    spans: Spans, wire_factory: Callable[[Server], Any]
) -> None:
    wire = wire_factory(weather_server())
    trace_id, parent = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    reply = await wire.request("tools/call", {"name": "get_weather", "arguments": {
        "city": "Quito"}}, traceparent=f"00-{trace_id}-{parent}-01", baggage="tenant=acme")
    assert "result" in reply
    span = spans.one("tools/call get_weather", SpanKind.SERVER)
    assert f"{span.context.trace_id:032x}" == trace_id
    assert f"{span.parent.span_id:016x}" == parent


async def test_an_explicit_trace_context_is_the_client_span_s_parent(spans: Spans) -> None:
    # ClientOptions(trace_context=...) still decides which trace a request joins; what goes
    # out is the client span's context, a child of the one given, with its baggage.
    trace_id, parent = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
    given = {"traceparent": f"00-{trace_id}-{parent}-01", "baggage": "tenant=acme"}
    tap = SchemaTap()
    seen: list[dict[str, Any]] = []
    server = weather_server()

    @server.tool()
    async def whoami() -> str:
        """Reports the baggage the server's context holds."""
        seen.append(dict(baggage.get_all()))
        return "ok"

    async with connected(server, tap, "modern", trace_context=lambda: given) as client:
        await client.call_tool("get_weather", {"city": "Bern"})
        await client.call_tool("whoami", {})
    tap.assert_clean()
    client_span = spans.one("tools/call get_weather", SpanKind.CLIENT)
    assert f"{client_span.context.trace_id:032x}" == trace_id
    assert f"{client_span.parent.span_id:016x}" == parent
    sent = tap.requests("tools/call")[0]["params"]["_meta"]
    assert sent["traceparent"] == traceparent(client_span)
    assert sent["baggage"] == "tenant=acme"
    assert seen == [{"tenant": "acme"}]


async def test_the_caller_s_baggage_reaches_the_handler(spans: Spans) -> None:
    seen: list[dict[str, Any]] = []
    server = Server("bags", "1.0.0")

    @server.tool()
    async def look() -> str:
        """Reports the baggage the handler runs with."""
        seen.append(dict(baggage.get_all()))
        return "ok"

    tap = SchemaTap()
    token = context.attach(baggage.set_baggage("user.tier", "gold"))
    try:
        async with connected(server, tap, "modern") as client:
            await client.call_tool("look", {})
    finally:
        context.detach(token)
    tap.assert_clean()
    assert seen == [{"user.tier": "gold"}]
    assert tap.requests("tools/call")[0]["params"]["_meta"]["baggage"] == "user.tier=gold"


async def test_each_request_has_its_own_span_and_the_client_span_ends_on_a_timeout(
    spans: Spans,
) -> None:
    import asyncio

    server = Server("slow", "1.0.0")
    release = asyncio.Event()

    @server.tool()
    async def wait() -> str:
        """Waits until released."""
        await release.wait()
        return "done"

    tap = SchemaTap()
    async with connected(server, tap, "modern", timeout=0.2) as client:
        await client.list_tools()
        with pytest.raises(Exception) as caught:
            await client.call_tool("wait", {})
        release.set()
    span = spans.one("tools/call wait", SpanKind.CLIENT)
    assert span.attributes["error.type"] == f"{type(caught.value).__module__}." \
        f"{type(caught.value).__qualname__}"
    assert span.status.status_code == StatusCode.ERROR
    assert next(s.name for s in spans.finished() if s.kind == SpanKind.CLIENT) == "tools/list"
