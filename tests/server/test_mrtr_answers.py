"""What a handler's questions look like on the wire and what it gets back from their answers:
a form's values checked against a JSON Schema form, a URL elicitation's whole result, a
sampling question offering tools. Over a real stream connection, every message schema-checked."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcpkit import Context, Server
from mcpkit.server.asking import Sample

CAPS_KEY = "io.modelcontextprotocol/clientCapabilities"
ALL_CAPS = {"elicitation": {"form": {}, "url": {}}, "sampling": {"tools": {}}}
FORM = {"type": "object", "properties": {
    "seats": {"type": "integer", "minimum": 1, "maximum": 9},
    "extras": {"type": "array", "items": {"type": "string", "enum": ["wifi", "meal"]},
               "minItems": 1, "maxItems": 2},
}, "required": ["seats"]}
WEATHER = {"name": "get_weather", "description": "The weather in a city",
           "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}


def make_server() -> Server:
    server = Server("answers-test", "1.0.0")

    @server.tool()
    async def reserve(ctx: Context) -> str:
        """Asks how many seats and which extras, with a JSON Schema form."""
        answer = await ctx.elicit("booking", "How many seats?", FORM)
        return json.dumps(answer.content)

    @server.tool()
    async def pay(ctx: Context) -> str:
        """Sends the user to a payment page and reports the client's whole answer."""
        answer = await ctx.elicit_url("payment", "Pay on our site", "https://pay.example/1")
        return json.dumps({"action": answer.action, "raw": answer.raw})

    @server.tool()
    async def forecast(ctx: Context) -> str:
        """Asks the client's model, offering it a tool."""
        answers = await ctx.ask({"model": Sample("Weather in Paris?", max_tokens=50,
                                                 tools=[WEATHER])})
        return str(answers["model"].text)

    return server


async def call(wire: Any, name: str, caps: dict[str, Any] | None = None,
               **extra: Any) -> dict[str, Any]:
    params = {"name": name, "arguments": {}, **extra}
    return await wire.request("tools/call", params,
                              **{CAPS_KEY: ALL_CAPS if caps is None else caps})


def completed_text(reply: dict[str, Any]) -> str:
    result = reply["result"]
    assert result["resultType"] == "complete", result
    return str(result["content"][0]["text"])


async def test_a_form_answer_within_the_forms_bounds_reaches_the_handler(
    wire_factory: Any,
) -> None:
    wire = wire_factory(make_server())
    answer = {"action": "accept", "content": {"seats": 2, "extras": ["meal"]}}
    reply = await call(wire, "reserve", inputResponses={"booking": answer})
    assert json.loads(completed_text(reply)) == {"seats": 2, "extras": ["meal"]}


@pytest.mark.parametrize(("content", "fragment"), [
    ({"seats": 2.5}, "seats: expected an integer, got number"),
    ({"seats": 2, "extras": []}, "extras: number of choices out of range"),
    ({"seats": 2, "extras": ["wifi", "meal", "wifi"]}, "extras: number of choices out of range"),
], ids=["fraction-for-integer", "fewer-than-min-items", "more-than-max-items"])
async def test_a_form_answer_outside_the_forms_bounds_is_invalid_params_naming_the_field(
    wire_factory: Any, content: dict[str, Any], fragment: str,
) -> None:
    # The client's answer is untrusted input: the handler never sees a value its form refused.
    wire = wire_factory(make_server())
    reply = await call(wire, "reserve",
                       inputResponses={"booking": {"action": "accept", "content": content}})
    assert reply["error"]["code"] == -32602, reply
    message = reply["error"]["message"]
    assert "inputResponses['booking']" in message and fragment in message
    assert "result" not in reply


async def test_a_url_elicitation_hands_the_handler_the_clients_whole_answer(
    wire_factory: Any,
) -> None:
    wire = wire_factory(make_server())
    first = (await call(wire, "pay"))["result"]
    assert first["inputRequests"]["payment"] == {"method": "elicitation/create", "params": {
        "mode": "url", "message": "Pay on our site", "url": "https://pay.example/1"}}
    answer = {"action": "accept", "_meta": {"example.com/receipt": "r-1"}}
    reply = await call(wire, "pay", inputResponses={"payment": answer},
                       requestState=first["requestState"])
    assert json.loads(completed_text(reply)) == {"action": "accept", "raw": answer}


async def test_a_sampling_question_offering_tools_sends_them_and_needs_sampling_tools(
    wire_factory: Any,
) -> None:
    wire = wire_factory(make_server())
    first = (await call(wire, "forecast"))["result"]
    assert first["inputRequests"]["model"] == {"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "Weather in Paris?"}}],
        "maxTokens": 50, "tools": [WEATHER]}}
    # A client that can sample but not with tools is told exactly what it lacks (MRTR: the
    # sampling.tools capability is needed for tool-enabled sampling).
    refused = await call(wire, "forecast", caps={"sampling": {}})
    assert refused["error"]["code"] == -32021
    assert refused["error"]["data"] == {"requiredCapabilities": {"sampling": {"tools": {}}}}
