"""The same asking handlers served to a 2025-11-25 client: the session sends real requests to
the client mid-call and reruns the handler with the answers."""

from __future__ import annotations

from typing import Any

from test_mrtr_server import ROOTS, SAMPLED, make_server

from mcpkit import Context


async def initialize(wire: Any, capabilities: dict[str, Any]) -> None:
    reply = await wire.request("initialize", {
        "protocolVersion": "2025-11-25", "capabilities": capabilities,
        "clientInfo": {"name": "legacy-client", "version": "1.0"}}, with_meta=False)
    assert reply["result"]["protocolVersion"] == "2025-11-25"
    wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


def start_call(wire: Any, request_id: int, name: str, arguments: dict[str, Any] | None = None
               ) -> None:
    wire.methods[request_id] = "tools/call"
    wire.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
               "params": {"name": name, "arguments": arguments or {}}})


def answer(wire: Any, request: dict[str, Any], result: dict[str, Any]) -> None:
    wire.send({"jsonrpc": "2.0", "id": request["id"], "result": result})


async def test_a_legacy_client_answers_elicitation_mid_call(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    await initialize(wire, {"elicitation": {}})
    start_call(wire, 7, "test_input_required_result_elicitation")
    asked = await wire.next()
    assert asked["method"] == "elicitation/create" and "id" in asked
    assert asked["params"]["requestedSchema"]["required"] == ["name"]
    answer(wire, asked, {"action": "accept", "content": {"name": "Grace"}})
    reply = await wire.next()
    assert reply["id"] == 7
    assert reply["result"] == {"content": [{"type": "text", "text": "Hello, Grace!"}]}


async def test_a_legacy_decline_reaches_the_handler(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    await initialize(wire, {"elicitation": {}})
    start_call(wire, 1, "test_input_required_result_elicitation")
    answer(wire, await wire.next(), {"action": "decline"})
    assert (await wire.next())["result"]["content"][0]["text"] == "No name (decline)"


async def test_a_legacy_client_is_asked_round_after_round(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    await initialize(wire, {"elicitation": {}})
    start_call(wire, 2, "test_input_required_result_multi_round")
    first = await wire.next()
    assert first["params"]["message"].startswith("Step 1")
    answer(wire, first, {"action": "accept", "content": {"name": "Ada"}})
    second = await wire.next()
    assert second["params"]["message"].startswith("Step 2") and second["id"] != first["id"]
    answer(wire, second, {"action": "accept", "content": {"color": "teal"}})
    assert (await wire.next())["result"]["content"][0]["text"] == "Ada likes teal"


async def test_a_legacy_client_gets_each_kind_of_request_in_turn(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    await initialize(wire, {"elicitation": {}, "sampling": {}, "roots": {}})
    start_call(wire, 3, "test_input_required_result_multiple_inputs")
    results = {"elicitation/create": {"action": "accept", "content": {"name": "Lin"}},
               "sampling/createMessage": SAMPLED, "roots/list": ROOTS}
    seen = []
    for _ in range(3):
        request = await wire.next()
        seen.append(request["method"])
        answer(wire, request, results[request["method"]])
    assert sorted(seen) == sorted(results)
    assert (await wire.next())["result"]["content"][0]["text"] == "Paris. Lin (1 roots)"


async def test_a_legacy_client_without_the_capability_gets_an_error_not_a_request(
    wire_factory: Any
) -> None:
    wire = wire_factory(make_server())
    await initialize(wire, {})
    reply = await wire.request("tools/call", {"name": "needs_sampling", "arguments": {}},
                               with_meta=False)
    assert reply["error"]["code"] == -32021
    assert reply["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}


async def test_a_legacy_client_error_answer_fails_the_call_naming_it(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    await initialize(wire, {"sampling": {}})
    start_call(wire, 4, "test_input_required_result_sampling")
    asked = await wire.next()
    wire.send({"jsonrpc": "2.0", "id": asked["id"],
               "error": {"code": -1, "message": "User rejected sampling"}})
    reply = await wire.next()
    assert reply["error"]["code"] == -32603
    assert "sampling/createMessage" in reply["error"]["message"]
    assert "User rejected sampling" in reply["error"]["message"]


async def test_url_elicitation_carries_an_elicitation_id_for_legacy_clients(
    wire_factory: Any
) -> None:
    server = make_server()

    @server.tool()
    async def connect_bank(ctx: Context) -> str:
        answer = await ctx.elicit_url("bank", "Link your bank", "https://bank.example/link")
        return f"consent: {answer.action}"

    wire = wire_factory(server)
    await initialize(wire, {"elicitation": {"form": {}, "url": {}}})
    start_call(wire, 5, "connect_bank")
    asked = await wire.next()
    assert asked["params"]["mode"] == "url" and asked["params"]["elicitationId"]
    answer(wire, asked, {"action": "accept"})
    assert (await wire.next())["result"]["content"][0]["text"] == "consent: accept"


async def test_a_handler_that_never_stops_asking_is_stopped(wire_factory: Any) -> None:
    server = make_server()

    @server.tool()
    async def endless(ctx: Context) -> str:
        n = ctx.state.get("n", 0)
        ctx.state["n"] = n + 1
        await ctx.elicit(f"q{n}", "Again?")
        return "unreachable"

    wire = wire_factory(server)
    await initialize(wire, {"elicitation": {}})
    start_call(wire, 6, "endless")
    for _ in range(100):
        message = await wire.next()
        if "method" not in message:
            break
        answer(wire, message, {"action": "accept", "content": {}})
    assert message["id"] == 6
    assert "still asked for input after 16 rounds" in message["error"]["message"]
