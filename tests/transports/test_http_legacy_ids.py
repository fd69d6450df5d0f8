"""Request ids and the other fields a 2025-11-25 client sends over HTTP, against a real `mcpkit
run --http` process: a `notifications/cancelled` whose `requestId` names no request is accepted
and ignored, an id already in use by a running request is refused while the running request
goes on, and a field of the wrong type (in initialize, `_meta` of any request, the level of
logging/setLevel, the uri of a subscription, the cursor of a list) is refused with -32602
naming it and what came, with no traceback in the server's log and the session serving on."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from helpers.transports.hostile_ids import BAD_REQUEST_IDS
from helpers.transports.http_peer import Peer, ServerProcess
from helpers.wire import LEGACY


def gate_call(request_id: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": "gate", "arguments": {}, "_meta": {"progressToken": "held"}}}


async def open_gate(peer: Peer) -> None:
    opened = await peer.post(peer.request_message(
        "tools/call", {"name": "open_gate", "arguments": {}}, with_meta=False), mirror=False)
    assert opened.status == 200
    assert opened.message["result"] == {"content": [{"type": "text", "text": "open"}]}


async def through(events: AsyncIterator[dict[str, Any]], request_id: Any) -> None:
    """The gate call's stream ends with its own result."""
    final = await asyncio.wait_for(anext(events), 10)
    assert final["id"] == request_id
    assert final["result"] == {"content": [{"type": "text", "text": "through"}]}


@pytest.mark.parametrize("bad", BAD_REQUEST_IDS)
async def test_a_cancel_naming_no_request_is_accepted_and_the_request_completes(
    features: ServerProcess, legacy: Peer, bad: Any
) -> None:
    logged = len(features.output())
    async with legacy.stream(gate_call(1)) as events:
        progress = await asyncio.wait_for(anext(events), 10)
        assert progress["method"] == "notifications/progress"
        note = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": bad}}
        accepted = await legacy.post(note, mirror=False, check_client=False)
        assert (accepted.status, accepted.body) == (202, b"")
        await open_gate(legacy)
        await through(events, 1)
    # The session still serves, and the server logged no traceback for the notification.
    ping = await legacy.post(legacy.request_message("ping", with_meta=False), mirror=False)
    assert ping.message["result"] == {}
    log = features.output()[logged:]
    assert "Traceback" not in log, log
    assert "x" * 100 not in log


async def test_an_id_in_use_by_a_running_request_is_refused_and_the_first_completes(
    legacy: Peer,
) -> None:
    async with legacy.stream(gate_call(7)) as events:
        progress = await asyncio.wait_for(anext(events), 10)
        assert progress["method"] == "notifications/progress"
        again = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                 "params": {"name": "echo", "arguments": {"text": "second"}}}
        refused = await legacy.post(again, mirror=False)
        assert refused.status == 400
        assert refused.message["id"] == 7
        assert refused.error["code"] == -32600
        assert refused.error["message"] == (
            "Invalid request: id 7 is already in use by a request in flight in this session")
        await open_gate(legacy)
        await through(events, 7)
    # Its request answered, id 7 is free again.
    reused = await legacy.post({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "echo", "arguments": {"text": "again"}}}, mirror=False)
    assert reused.message["result"] == {"content": [{"type": "text", "text": "again"}]}


async def test_the_same_id_in_another_session_is_not_in_use(
    features: ServerProcess, legacy: Peer
) -> None:
    # In flight is per session: another client may number its requests the same way.
    async with httpx.AsyncClient(timeout=15) as other_client:
        other = Peer(features.url, other_client)
        await other.initialize()
        async with legacy.stream(gate_call(7)) as events:
            assert (await asyncio.wait_for(anext(events), 10))["method"] == (
                "notifications/progress")
            echoed = await other.post({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                                       "params": {"name": "echo", "arguments": {"text": "mine"}}},
                                      mirror=False)
            assert echoed.message["result"] == {"content": [{"type": "text", "text": "mine"}]}
            await open_gate(other)
            await through(events, 7)


# -- fields a legacy client sends, each type-checked where it is read ---------------------------

_ABSENT: Any = object()
"""A member left out of the message altogether."""


def initialize_message(**params: Any) -> dict[str, Any]:
    """An initialize whose params are the usual ones with `params` put in (or taken out)."""
    base: dict[str, Any] = {"protocolVersion": LEGACY, "capabilities": {},
                            "clientInfo": {"name": "legacy-tests", "version": "1.0"}}
    for key, value in params.items():
        if value is _ABSENT:
            base.pop(key)
        else:
            base[key] = value
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": base}

BAD_INITIALIZE = [
    pytest.param({"protocolVersion": [1]}, "params.protocolVersion must be a string, not an "
                 "array", id="protocolVersion-array"),
    pytest.param({"protocolVersion": _ABSENT}, "params.protocolVersion must be a string, not "
                 "missing", id="protocolVersion-missing"),
    pytest.param({"capabilities": "all"}, "params.capabilities must be an object, not a "
                 "string", id="capabilities-string"),
    pytest.param({"capabilities": {"elicitation": [1]}}, "params.capabilities.elicitation must "
                 "be an object, not an array", id="elicitation-array"),
    pytest.param({"capabilities": {"elicitation": True}}, "params.capabilities.elicitation must "
                 "be an object, not a boolean", id="elicitation-bool"),
    pytest.param({"capabilities": {"elicitation": {"url": "yes"}}}, "params.capabilities."
                 "elicitation.url must be an object, not a string", id="elicitation-url-string"),
    pytest.param({"capabilities": {"elicitation": {"form": 1}}}, "params.capabilities."
                 "elicitation.form must be an object, not an integer", id="elicitation-form-int"),
    pytest.param({"capabilities": {"roots": "listChanged"}}, "params.capabilities.roots must "
                 "be an object, not a string", id="roots-string"),
    pytest.param({"capabilities": {"sampling": []}}, "params.capabilities.sampling must be an "
                 "object, not an array", id="sampling-array"),
    pytest.param({"capabilities": {"experimental": 5}}, "params.capabilities.experimental must "
                 "be an object, not an integer", id="experimental-int"),
    pytest.param({"capabilities": {"tasks": 1.5}}, "params.capabilities.tasks must be an "
                 "object, not a number", id="tasks-float"),
    pytest.param({"clientInfo": ["me"]}, "params.clientInfo must be an object, not an array",
                 id="clientInfo-array"),
    pytest.param({"clientInfo": {"name": 5, "version": "1.0"}}, "params.clientInfo.name must "
                 "be a string, not an integer", id="clientInfo-name-int"),
    pytest.param({"clientInfo": {"name": "me", "version": [1, 0]}}, "params.clientInfo.version "
                 "must be a string, not an array", id="clientInfo-version-array"),
    pytest.param({"_meta": 5}, "params._meta must be an object, not an integer", id="meta-int"),
    pytest.param({"_meta": ["progressToken"]}, "params._meta must be an object, not an array",
                 id="meta-array"),
]


@pytest.mark.parametrize(("params", "reason"), BAD_INITIALIZE)
async def test_an_initialize_with_a_field_of_the_wrong_type_is_refused_naming_it(
    features: ServerProcess, http: httpx.AsyncClient, params: dict[str, Any], reason: str
) -> None:
    logged = len(features.output())
    peer = Peer(features.url, http)
    peer.revision = LEGACY
    refused = await peer.post(initialize_message(**params), mirror=False, check_client=False)
    # A legacy request's error travels with 200; no session was opened for it.
    assert refused.status == 200
    assert "mcp-session-id" not in refused.headers
    assert refused.message["id"] == 1
    assert refused.error == {"code": -32602, "message": f"initialize: {reason}"}
    # The same client may still open a session, and the refusal left no traceback behind.
    await peer.initialize()
    ping = await peer.post(peer.request_message("ping", with_meta=False), mirror=False)
    assert ping.message["result"] == {}
    log = features.output()[logged:]
    assert "Traceback" not in log, log


SESSION_METHODS = [
    ("ping", {}),
    ("logging/setLevel", {"level": "info"}),
    ("resources/subscribe", {"uri": "memo://notes/today"}),
    ("resources/unsubscribe", {"uri": "memo://notes/today"}),
    ("tools/list", {}),
    ("tools/call", {"name": "echo", "arguments": {"text": "hi"}}),
    ("resources/list", {}),
    ("resources/templates/list", {}),
    ("resources/read", {"uri": "memo://notes/today"}),
    ("prompts/list", {}),
    ("prompts/get", {"name": "greet", "arguments": {"name": "Ada"}}),
]
"""Every request a session serves, with params that succeed: only `_meta` is wrong."""

BAD_META = [
    pytest.param([1], "an array", id="array"),
    pytest.param("held", "a string", id="string"),
    pytest.param(7, "an integer", id="integer"),
    pytest.param(False, "a boolean", id="bool"),
]


async def answered(peer: Peer, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """The response of one session request sent as is (it is meant to be off the schema)."""
    peer.ids += 1
    reply = await peer.post({"jsonrpc": "2.0", "id": peer.ids, "method": method,
                             "params": params}, mirror=False, check_client=False)
    assert reply.status == 200, reply.body
    assert reply.message["id"] == peer.ids
    return reply.message


async def still_answers(features: ServerProcess, peer: Peer, logged: int) -> None:
    """The session serves on, and the server logged no traceback since `logged`."""
    call = await peer.post(peer.request_message("tools/call", {
        "name": "echo", "arguments": {"text": "after"}}, with_meta=False), mirror=False)
    assert call.message["result"] == {"content": [{"type": "text", "text": "after"}]}
    log = features.output()[logged:]
    assert "Traceback" not in log, log


@pytest.mark.parametrize(("method", "params"), SESSION_METHODS, ids=[m for m, _ in SESSION_METHODS])
async def test_a_session_request_whose_meta_is_no_object_is_refused_naming_it(
    features: ServerProcess, legacy: Peer, method: str, params: dict[str, Any]
) -> None:
    # A _meta that is not an object was dropped unread: the progress token the client meant to
    # send was lost without a word.
    logged = len(features.output())
    message = await answered(legacy, method, {**params, "_meta": [1]})
    assert message["error"] == {
        "code": -32602, "message": f"{method}: params._meta must be an object, not an array"}
    await still_answers(features, legacy, logged)


@pytest.mark.parametrize(("bad", "kind"), BAD_META)
async def test_a_tool_call_whose_meta_is_no_object_is_refused_whatever_it_is(
    features: ServerProcess, legacy: Peer, bad: Any, kind: str
) -> None:
    logged = len(features.output())
    message = await answered(legacy, "tools/call", {
        "name": "echo", "arguments": {"text": "hi"}, "_meta": bad})
    assert message["error"] == {
        "code": -32602, "message": f"tools/call: params._meta must be an object, not {kind}"}
    await still_answers(features, legacy, logged)


LEVELS = "debug, info, notice, warning, error, critical, alert, emergency"


@pytest.mark.parametrize(("params", "found"), [
    pytest.param({}, "missing", id="missing"),
    pytest.param({"level": ["info"]}, "an array", id="array"),
    pytest.param({"level": {"name": "info"}}, "an object", id="object"),
    pytest.param({"level": 3}, "an integer", id="integer"),
    pytest.param({"level": None}, "null", id="null"),
    pytest.param({"level": "loud"}, "'loud'", id="unknown"),
    pytest.param({"level": "x" * 10_000}, repr("x" * 64), id="huge"),
])
async def test_a_set_level_with_a_bad_level_is_refused_naming_the_field_and_what_came(
    features: ServerProcess, legacy: Peer, params: dict[str, Any], found: str
) -> None:
    logged = len(features.output())
    message = await answered(legacy, "logging/setLevel", params)
    assert message["error"] == {"code": -32602, "message": (
        f"logging/setLevel: params.level must be one of {LEVELS}, not {found}")}
    await still_answers(features, legacy, logged)


@pytest.mark.parametrize("method", ["resources/subscribe", "resources/unsubscribe"])
@pytest.mark.parametrize(("params", "found"), [
    pytest.param({}, "missing", id="missing"),
    pytest.param({"uri": ["memo://notes/today"]}, "an array", id="array"),
    pytest.param({"uri": 1}, "an integer", id="integer"),
])
async def test_a_subscription_with_a_bad_uri_is_refused_naming_the_field_and_what_came(
    features: ServerProcess, legacy: Peer, method: str, params: dict[str, Any], found: str
) -> None:
    logged = len(features.output())
    message = await answered(legacy, method, params)
    assert message["error"] == {
        "code": -32602, "message": f"{method}: params.uri must be a string, not {found}"}
    await still_answers(features, legacy, logged)


LIST_METHODS = ["tools/list", "resources/list", "resources/templates/list", "prompts/list"]


@pytest.mark.parametrize("method", LIST_METHODS)
@pytest.mark.parametrize(("cursor", "reason"), [
    pytest.param([1], "params.cursor: expected string, got array (the nextCursor of the "
                 "previous page)", id="array"),
    pytest.param({"page": 2}, "params.cursor: expected string, got object (the nextCursor of "
                 "the previous page)", id="object"),
    pytest.param(2, "params.cursor: expected string, got integer 2 (the nextCursor of the "
                 "previous page)", id="integer"),
    pytest.param(True, "params.cursor: expected string, got boolean true (the nextCursor of "
                 "the previous page)", id="bool"),
    pytest.param("!!", "invalid cursor '!!'", id="not-base64"),
    pytest.param("y" * 10_000, f"invalid cursor {'y' * 64!r}", id="huge"),
])
async def test_a_list_with_a_bad_cursor_is_refused_naming_it(
    features: ServerProcess, legacy: Peer, method: str, cursor: Any, reason: str
) -> None:
    logged = len(features.output())
    message = await answered(legacy, method, {"cursor": cursor})
    assert message["error"] == {"code": -32602, "message": f"{method}: {reason}"}
    await still_answers(features, legacy, logged)
