"""The Client's public methods against an mcpkit Server in memory, in both eras."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from helpers.client.client_server import make_server

from mcpkit import Context, Server
from mcpkit.client import Client, ClientOptions, RequestTimeoutError
from mcpkit.errors import InvalidParamsError, ResourceNotFoundError
from mcpkit.server.asking import Elicit, Sample

MakeClient = Callable[..., Client]
TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


@pytest.fixture(params=["objects", "json"])
def make(request: pytest.FixtureRequest, memory_client: MakeClient) -> MakeClient:
    """Each test runs with objects handed over and with a real JSON round trip."""
    return lambda server, **kw: memory_client(server, json=request.param == "json", **kw)


@pytest.fixture(params=["modern", "legacy"])
def era(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def test_the_five_core_operations_work_in_both_eras(make: MakeClient, era: str) -> None:
    client = make(make_server(), options=ClientOptions(era=era))  # type: ignore[arg-type]
    info = await client.discover()
    assert client.era == era
    assert info["capabilities"]["tools"] == {"listChanged": True}
    assert client.server_info == {"name": "client-tests", "version": "2.0.0"}
    assert client.instructions == "Test server."
    assert "add" in {t["name"] for t in await client.list_tools()}
    result = await client.call_tool("add", {"a": 2, "b": 3})
    assert result["structuredContent"] == {"sum": 5}
    read = await client.read_resource("mem://items/x")
    assert read["contents"] == [{"uri": "mem://items/x", "mimeType": "text/plain", "text": "item x"}]
    prompt = await client.get_prompt("greet", {"name": "Ada"})
    assert prompt["messages"][0]["content"] == {"type": "text", "text": "Hello, Ada!"}
    assert (await client.complete({"type": "ref/prompt", "name": "greet"}, "name", "al"))[
        "values"] == ["alice", "albert"]


async def test_the_probe_finds_our_dual_era_server_modern(make: MakeClient) -> None:
    client = make(make_server())
    await client.connect()
    assert (client.era, client.protocol_version) == ("modern", "2026-07-28")
    assert [m["method"] for m in client.tap.requests()] == ["server/discover"]  # type: ignore[attr-defined]


async def test_every_page_of_every_list_is_fetched(make: MakeClient, era: str) -> None:
    server = make_server(page_size=2)
    client = make(server, options=ClientOptions(era=era))  # type: ignore[arg-type]
    tools = await client.list_tools()
    assert [t["name"] for t in tools] == list(server.tools)
    assert len(client.tap.requests("tools/list")) == 5  # 10 tools, 2 a page  # type: ignore[attr-defined]
    assert [r["name"] for r in await client.list_resources()] == ["counter", "uncached"]
    assert [t["uriTemplate"] for t in await client.list_resource_templates()] == [
        "mem://items/{name}"]
    assert [p["name"] for p in await client.list_prompts()] == ["greet"]


async def test_errors_arrive_as_their_classes_in_both_eras(make: MakeClient, era: str) -> None:
    client = make(make_server(), options=ClientOptions(era=era))  # type: ignore[arg-type]
    with pytest.raises(InvalidParamsError, match="nope"):
        await client.call_tool("nope")
    with pytest.raises(ResourceNotFoundError) as caught:
        await client.read_resource("mem://missing")
    assert caught.value.uri == "mem://missing"
    failed = await client.call_tool("fail", {"reason": "because"})
    assert failed["isError"] is True and "because" in failed["content"][0]["text"]


async def test_every_request_declares_version_capabilities_and_client_info(
    make: MakeClient,
) -> None:
    client = make(make_server(), client_info={"name": "host", "version": "3"},
                  elicit=lambda r: {"action": "cancel"},
                  options=ClientOptions(trace_context=lambda: {"traceparent": TRACEPARENT,
                                                               "baggage": "k=v"}))
    seen = (await client.call_tool("whoami"))["structuredContent"]
    assert seen["info"] == {"name": "host", "version": "3"}
    assert seen["caps"] == {"elicitation": {"form": {}}}
    assert seen["trace"] == {"traceparent": TRACEPARENT, "baggage": "k=v"}
    for request in client.tap.requests():  # type: ignore[attr-defined]
        meta = request["params"]["_meta"]
        assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
        assert meta["io.modelcontextprotocol/clientCapabilities"] == {"elicitation": {"form": {}}}


async def test_a_malformed_trace_context_is_left_out(make: MakeClient) -> None:
    client = make(make_server(), options=ClientOptions(
        trace_context=lambda: {"traceparent": "not-a-trace", "tracestate": "a=b"}))
    assert (await client.call_tool("whoami"))["structuredContent"]["trace"] == {}


async def test_progress_and_log_callbacks_see_their_own_call(make: MakeClient) -> None:
    client = make(make_server())
    progress: list[tuple[float, float | None, str | None]] = []
    logs: list[tuple[str, Any, str | None]] = []
    result = await client.call_tool(
        "work", {"steps": 3}, progress=lambda p, t, m: progress.append((p, t, m)),
        log=lambda level, data, logger: logs.append((level, data, logger)),
    )
    assert result["content"][0]["text"] == "worked"
    assert progress == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
    assert logs == [("info", "starting 3 steps", "work")], "debug is below the default info"
    meta = client.tap.requests("tools/call")[0]["params"]["_meta"]  # type: ignore[attr-defined]
    assert meta["io.modelcontextprotocol/logLevel"] == "info" and "progressToken" in meta


async def test_logs_are_not_requested_unless_asked_for(make: MakeClient) -> None:
    client = make(make_server())
    await client.call_tool("work")
    meta = client.tap.requests("tools/call")[0]["params"]["_meta"]  # type: ignore[attr-defined]
    assert "io.modelcontextprotocol/logLevel" not in meta and "progressToken" not in meta


async def test_legacy_log_level_is_set_for_the_session_and_reaches_on_log(
    make: MakeClient,
) -> None:
    logs: list[Any] = []
    client = make(make_server(), on_log=lambda level, data, logger: logs.append((level, data)),
                  options=ClientOptions(era="legacy", log_level="debug"))
    await client.call_tool("work", {"steps": 1})
    assert client.tap.requests("logging/setLevel")[0]["params"] == {"level": "debug"}  # type: ignore[attr-defined]
    assert logs == [("info", "starting 1 steps"), ("debug", "done")]


async def test_cancelling_a_call_cancels_it_on_the_server(make: MakeClient, era: str) -> None:
    server = make_server()
    client = make(server, options=ClientOptions(era=era))  # type: ignore[arg-type]
    call = asyncio.ensure_future(client.call_tool("wait_forever"))
    await asyncio.wait_for(server.started.wait(), 5)  # type: ignore[attr-defined]
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    await asyncio.wait_for(server.cancelled.wait(), 5)  # type: ignore[attr-defined]
    cancels = [m for m in client.tap.sent if m.get("method") == "notifications/cancelled"]  # type: ignore[attr-defined]
    assert cancels[0]["params"]["requestId"] == client.tap.requests("tools/call")[0]["id"]  # type: ignore[attr-defined]
    assert (await client.call_tool("add", {"a": 1, "b": 1}))["structuredContent"] == {"sum": 2}


async def test_a_timed_out_call_raises_and_is_cancelled_on_the_server(make: MakeClient) -> None:
    server = make_server()
    client = make(server)
    with pytest.raises(RequestTimeoutError, match=r"tools/call: no response within 0\.2 s"):
        await client.call_tool("wait_forever", timeout=0.2)
    await asyncio.wait_for(server.cancelled.wait(), 5)  # type: ignore[attr-defined]


async def test_output_validation_accepts_what_matches(make: MakeClient) -> None:
    client = make(make_server(), options=ClientOptions(validate_output=True))
    await client.list_tools()
    assert (await client.call_tool("add", {"a": 1, "b": 2}))["structuredContent"] == {"sum": 3}


async def test_a_transport_object_can_be_given_directly(make: MakeClient) -> None:
    from mcpkit.transports.memory import MemoryTransport

    async with Client(MemoryTransport(make_server())) as client:
        assert client.era == "modern"
        assert (await client.call_tool("add", {"a": 4, "b": 4}))["structuredContent"] == {"sum": 8}


def asking_server() -> Any:
    server = Server("asking")

    @server.tool()
    async def introduce(ctx: Context) -> str:
        """Asks for a name and a capital at once, then for a greeting."""
        both = await ctx.ask({"who": Elicit("Who are you?", {"name": str}),
                              "capital": Sample("Capital of France?", max_tokens=20)})
        greeting = await ctx.elicit("greeting", "How do you greet?", {"word": str})
        return f"{greeting['word']} {both['who']['name']}, {both['capital'].text}"

    return server


async def test_the_servers_own_asking_api_takes_two_rounds_in_both_eras(
    make: MakeClient, era: str
) -> None:
    answers = iter([{"name": "Ada"}, {"word": "Hello"}])

    def elicit(request: Any) -> dict[str, Any]:
        return {"action": "accept", "content": next(answers)}

    def sample(request: Any) -> dict[str, Any]:
        return {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"}

    client = make(asking_server(), elicit=elicit, sample=sample,
                  options=ClientOptions(era=era))  # type: ignore[arg-type]
    result = await client.call_tool("introduce")
    assert result["content"][0]["text"] == "Hello Ada, Paris"
    calls = client.tap.requests("tools/call")  # type: ignore[attr-defined]
    if era == "modern":
        assert len(calls) == 3 and len({c["id"] for c in calls}) == 3
        assert set(calls[1]["params"]["inputResponses"]) == {"who", "capital"}
        assert set(calls[2]["params"]["inputResponses"]) == {"greeting"}
        assert calls[1]["params"]["requestState"] != calls[2]["params"]["requestState"]
    else:
        assert len(calls) == 1


async def test_trace_context_comes_from_opentelemetry_when_installed(
    make: MakeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys
    import types

    from mcpkit.client import otel_trace_context

    fake = types.ModuleType("opentelemetry.propagate")
    fake.inject = lambda carrier: carrier.update(traceparent=TRACEPARENT)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "opentelemetry", types.ModuleType("opentelemetry"))
    monkeypatch.setitem(sys.modules, "opentelemetry.propagate", fake)
    client = make(make_server(), options=ClientOptions(trace_context=otel_trace_context))
    assert (await client.call_tool("whoami"))["structuredContent"]["trace"] == {
        "traceparent": TRACEPARENT}
