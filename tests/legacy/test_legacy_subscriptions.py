"""What a 2025-11-25 session may subscribe to: a served URI, of bounded length and count.

A session costs nothing to open, so each unbounded subscription list was memory any client
could take; these run over the schema-checked wire of one session.
"""

from __future__ import annotations

from typing import Any

from helpers.sample_server import make_server

from mcpkit.legacy.subscriptions import MAX_SUBSCRIPTIONS, MAX_URI_CHARS


async def opened(wire_factory: Any) -> Any:
    wire = wire_factory(make_server())
    await wire.request("initialize", {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "legacy-client", "version": "1.0"},
    }, with_meta=False)
    wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return wire


async def subscribe(wire: Any, uri: str) -> dict[str, Any]:
    reply: dict[str, Any] = await wire.request("resources/subscribe", {"uri": uri}, with_meta=False)
    return reply


async def test_a_uri_no_resource_serves_is_not_found(wire_factory: Any) -> None:
    wire = await opened(wire_factory)
    reply = await subscribe(wire, "test://nothing-here")
    assert reply["error"]["code"] == -32002
    assert "test://nothing-here" in reply["error"]["message"]
    # A static resource and a URI a template matches are both served.
    assert (await subscribe(wire, "test://static"))["result"] == {}
    assert (await subscribe(wire, "test://item/7/data"))["result"] == {}


async def test_an_overlong_uri_is_refused_by_its_length(wire_factory: Any) -> None:
    wire = await opened(wire_factory)
    uri = "test://item/" + "x" * MAX_URI_CHARS + "/data"  # the template would match it
    reply = await subscribe(wire, uri)
    assert reply["error"]["code"] == -32602
    assert f"{len(uri)} characters" in reply["error"]["message"]


async def test_a_session_holds_a_bounded_number_of_subscriptions(wire_factory: Any) -> None:
    wire = await opened(wire_factory)
    for n in range(MAX_SUBSCRIPTIONS):
        assert (await subscribe(wire, f"test://item/{n}/data"))["result"] == {}
    # The same URI again is no new subscription, so it is still accepted.
    assert (await subscribe(wire, "test://item/0/data"))["result"] == {}
    refused = await subscribe(wire, "test://static")
    assert refused["error"]["code"] == -32602
    assert f"already holds {MAX_SUBSCRIPTIONS} subscriptions" in refused["error"]["message"]
    # Unsubscribing makes room again, and the session still hears what it holds.
    await wire.request("resources/unsubscribe", {"uri": "test://item/0/data"}, with_meta=False)
    assert (await subscribe(wire, "test://static"))["result"] == {}
