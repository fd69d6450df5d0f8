"""The conventions as data (span names, attributes, which codes fail which side), and the
exception boundary's span for what reaches it unanswered: an unexpected exception, a
cancellation. No wire here: `serve` is called as `Server.handle` calls it."""

from __future__ import annotations

import asyncio

import pytest
from opentelemetry.trace import SpanKind, StatusCode
from span_capture import Spans

from mcpkit.protocol.codec import Request
from mcpkit.server.dispatch import serve
from mcpkit.tracing import Attr, use_tracer_provider
from mcpkit.tracing.conventions import CALLER_ERRORS, MAX_TARGET, failed, request_attributes


@pytest.mark.parametrize(("method", "params", "name", "extra"), [
    ("tools/call", {"name": "get_weather"}, "tools/call get_weather",
     {Attr.TOOL_NAME: "get_weather", Attr.OPERATION: "execute_tool"}),
    ("prompts/get", {"name": "summary"}, "prompts/get summary", {Attr.PROMPT_NAME: "summary"}),
    # A URI is an attribute, never part of the name (too many values for a span name).
    ("resources/read", {"uri": "file:///a.txt"}, "resources/read",
     {Attr.RESOURCE_URI: "file:///a.txt"}),
    ("resources/subscribe", {"uri": "file:///a.txt"}, "resources/subscribe",
     {Attr.RESOURCE_URI: "file:///a.txt"}),
    ("tools/list", {}, "tools/list", {}),
    # What a peer sent malformed is not recorded.
    ("tools/call", {"name": ["x"]}, "tools/call", {Attr.OPERATION: "execute_tool"}),
    ("resources/read", {"uri": 7}, "resources/read", {}),
    ("tools/call", None, "tools/call", {}),
])
def test_a_request_names_its_span_and_gives_its_attributes(
    method: str, params: dict[str, object] | None, name: str, extra: dict[str, str]
) -> None:
    got_name, attributes = request_attributes(method, 7, params)
    assert got_name == name
    assert attributes == {Attr.METHOD: method, Attr.REQUEST_ID: "7", **extra}


def test_a_hostile_target_stays_out_of_the_span_name_and_is_cut() -> None:
    name, attributes = request_attributes("tools/call", "a", {"name": "x" * 100_000})
    assert name == "tools/call"
    assert len(attributes[Attr.TOOL_NAME]) == 1024
    fits, _ = request_attributes("tools/call", "a", {"name": "y" * MAX_TARGET})
    assert fits == "tools/call " + "y" * MAX_TARGET


def test_no_request_id_no_attribute() -> None:
    assert Attr.REQUEST_ID not in request_attributes("tools/list", None, {})[1]


@pytest.mark.parametrize("code", sorted(CALLER_ERRORS))
def test_a_caller_s_error_fails_the_client_only(code: int) -> None:
    assert failed(code, server=False) and not failed(code, server=True)


@pytest.mark.parametrize("code", [-32603, -32000, -32020, -32021, -32022, -32042, -32099, 1])
def test_other_codes_fail_both_sides(code: int) -> None:
    assert failed(code, server=False) and failed(code, server=True)


def test_use_tracer_provider_refuses_what_is_not_a_provider() -> None:
    with pytest.raises(TypeError, match="expected an OpenTelemetry TracerProvider, not str"):
        use_tracer_provider("console")


async def _boom() -> dict[str, object]:
    raise RuntimeError("disk on fire")


async def test_an_unexpected_exception_is_kept_on_the_server_span(spans: Spans) -> None:
    request = Request(3, "tools/list", {})
    response = await serve(request, _boom())
    assert response["error"]["code"] == -32603
    assert "disk on fire" not in str(response)
    span = spans.one("tools/list", SpanKind.SERVER)
    assert span.attributes[Attr.ERROR_TYPE] == "-32603"
    assert span.status.status_code == StatusCode.ERROR
    events = [e for e in span.events if e.name == "exception"]
    assert [(e.attributes["exception.type"], e.attributes["exception.message"])
            for e in events] == [("RuntimeError", "disk on fire")]


async def test_a_cancelled_request_ends_its_span(spans: Spans) -> None:
    started = asyncio.Event()

    async def forever() -> dict[str, object]:
        started.set()
        await asyncio.Event().wait()
        return {}

    task = asyncio.create_task(serve(Request(4, "tools/list", {}), forever()))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    span = spans.one("tools/list", SpanKind.SERVER)
    assert span.attributes[Attr.ERROR_TYPE] == "asyncio.exceptions.CancelledError"
    assert span.status.status_code == StatusCode.ERROR
    assert span.end_time is not None
