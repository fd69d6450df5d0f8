"""The proxy in front of a hostile upstream (tests/helpers/proxy/hostile_server.py, a real process on
stdio, in each era): whatever the upstream answers a call with, whatever notifications it
writes meanwhile, whatever it asks in the middle of the call (2025-11-25) and whatever tool
list it announces, every message the proxy sends its client passes the official schema of the
client's revision, the proxy answers the next call, and nothing inside mcpkit fails behind a
guard (no traceback logged). The caller gets a result or one of mcpkit's own errors.

One proxy, upstream process and client per era pair for the whole module, on one event loop
the examples run on in turn (`Stage`): starting a process per example would measure Python's
start-up, not the proxy.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from helpers.proxy.hostile import Bugs, Hostile
from hypothesis import example, given
from hypothesis import strategies as st
from peer_values import json_values

from mcpkit import Client
from mcpkit.errors import MCPError
from mcpkit.types.constants import LOG_LEVELS

PNG = "iVBORw0KGgo="
WAIT_S = 20.0

_TEXT = st.text(max_size=6) | json_values(1)
_BLOCK = st.fixed_dictionaries({}, optional={
    "type": st.sampled_from(["text", "image", "audio", "resource_link", "resource", "tool_use",
                             "video"]) | json_values(1),
    "text": _TEXT, "data": st.sampled_from([PNG, "!!"]) | json_values(1), "mimeType": _TEXT,
    "uri": st.sampled_from(["x://a"]) | json_values(1), "name": _TEXT,
    "resource": st.fixed_dictionaries({}, optional={
        "uri": st.just("x://a") | json_values(1), "text": _TEXT,
        "blob": st.sampled_from([PNG, "!"]) | json_values(1)}) | json_values(2),
    "annotations": st.fixed_dictionaries({}, optional={
        "audience": st.lists(st.sampled_from(["user", "assistant", "robot"]), max_size=2)
        | json_values(1), "priority": json_values(1)}) | json_values(2),
    "_meta": json_values(2), "size": json_values(1),
}) | json_values(2)
RESULTS = st.fixed_dictionaries({}, optional={
    "content": st.lists(_BLOCK, max_size=3) | json_values(2),
    "structuredContent": json_values(3), "isError": json_values(1), "_meta": json_values(3),
    "resultType": st.sampled_from(["complete", "input_required", "later"]) | json_values(1),
    "inputRequests": st.dictionaries(st.text(max_size=3), json_values(3), max_size=2),
    "requestState": _TEXT,
})
ERRORS = st.fixed_dictionaries(
    {"code": st.integers(-32800, -32000) | st.sampled_from([-32002, -32042, 0]) | json_values(1)},
    optional={"message": json_values(1), "data": json_values(3)})
ANSWERS = RESULTS | ERRORS.map(lambda e: {"error": e}) | json_values(2).map(
    lambda v: {"error": v})
NOTES = st.fixed_dictionaries({
    "jsonrpc": st.just("2.0"),
    "method": st.sampled_from(["notifications/progress", "notifications/message",
                               "notifications/cancelled", "notifications/tools/list_changed",
                               "notifications/resources/updated", "notifications/other"]),
}, optional={"params": st.fixed_dictionaries({}, optional={
    "progressToken": st.just("$token"), "progress": json_values(1), "total": json_values(1),
    "message": _TEXT, "level": st.sampled_from(LOG_LEVELS) | json_values(1),
    "data": json_values(2), "logger": _TEXT, "requestId": json_values(1), "uri": _TEXT,
}) | json_values(2)})
_SCHEMA = st.just({"type": "object", "properties": {"name": {"type": "string"}}}) | json_values(3)
ASKS = st.fixed_dictionaries({
    "method": st.sampled_from(["elicitation/create", "sampling/createMessage", "roots/list",
                               "ping", "tools/list"]),
    "params": st.fixed_dictionaries({}, optional={
        "message": _TEXT, "mode": st.sampled_from(["form", "url", "other"]) | json_values(1),
        "requestedSchema": _SCHEMA, "url": st.sampled_from(["https://ok.example/x", "nope:"])
        | json_values(1), "elicitationId": _TEXT,
        "messages": st.lists(st.fixed_dictionaries({}, optional={
            "role": st.sampled_from(["user", "assistant", "system"]),
            "content": _BLOCK}), max_size=2) | json_values(2),
        "maxTokens": json_values(1), "includeContext": _TEXT,
        "tools": json_values(3), "modelPreferences": json_values(3)}),
})
TOOLS = st.fixed_dictionaries({}, optional={
    "name": st.sampled_from(["t1", "t2", "echo", "bad name"]) | json_values(1),
    "inputSchema": st.just({"type": "object"}) | _SCHEMA,
    "outputSchema": st.just({"type": "object"}) | json_values(2),
    "title": _TEXT, "description": _TEXT, "annotations": json_values(2),
    "icons": json_values(2), "_meta": json_values(2),
}) | json_values(2)


class Stage:
    """One proxy in front of one hostile upstream, and one client of it, on a loop of its own."""

    def __init__(self, mode: str, client_era: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.hostile = Hostile(mode)
        self.bugs = Bugs()
        self.client: Client = self.hostile.client(client_era)
        self.run(self.hostile.proxy.start())
        self.run(self.client.connect())

    def run(self, work: Any) -> Any:
        return self.loop.run_until_complete(asyncio.wait_for(work, WAIT_S))

    def close(self) -> None:
        self.run(self.client.close())
        self.run(self.hostile.proxy.aclose())
        self.loop.close()

    async def call(self, answer: Any, notes: list[Any], asks: list[Any]) -> None:
        hostile, client = self.hostile, self.client
        await hostile.arm(client, **{"tools/call": answer}, notes=notes, asks=asks)
        try:
            await hostile.go(client, progress=lambda *a: None, log=lambda *a: None)
        except MCPError:
            pass  # a result, or one of mcpkit's own errors: both are fine

    async def relist(self, tools: list[Any]) -> None:
        hostile, client = self.hostile, self.client
        await hostile.arm(client, **{"tools/list": {"tools": tools}})
        async with client.listen(tools=True) as sub:
            await client.call_tool("announce", {"method": "notifications/tools/list_changed"})
            async for note in sub:
                if note["method"] == "notifications/tools/list_changed":
                    break
        await client.list_tools(fresh=True)

    def check(self) -> None:
        assert self.run(self.client.call_tool("echo", {"text": "alive"})).text == "alive"
        self.bugs.assert_none()
        problems = self.hostile.tap.problems
        assert not problems, problems


@pytest.fixture(scope="module", params=[("legacy", "modern"), ("legacy", "legacy"),
                                        ("modern", "modern"), ("modern", "legacy")],
                ids=lambda p: f"{p[0]}-upstream-{p[1]}-client")
def stage(request: pytest.FixtureRequest) -> Iterator[Stage]:
    made = Stage(*request.param)
    with made.bugs:
        yield made
    made.close()


@given(answer=ANSWERS, notes=st.lists(NOTES, max_size=3), asks=st.lists(ASKS, max_size=2))
@example(answer={"content": [{"type": "video"}]}, notes=[], asks=[])
@example(answer={"resultType": "input_required", "inputRequests": {"k": 1}}, notes=[], asks=[])
@example(answer={"error": {"code": "x"}}, notes=[{"jsonrpc": "2.0", "method":
         "notifications/progress", "params": {"progressToken": "$token", "progress": "x"}}],
         asks=[{"method": "elicitation/create", "params": {"message": 1}}])
def test_whatever_a_call_gets_upstream_its_caller_gets_a_schema_valid_answer(
        stage: Stage, answer: Any, notes: list[Any], asks: list[Any]) -> None:
    json.dumps([answer, notes, asks])  # what the upstream is armed with is JSON
    stage.run(stage.call(answer, notes, asks))
    stage.check()


@given(tools=st.lists(TOOLS, max_size=4))
@example(tools=[{"name": "t1", "inputSchema": {"type": "object"}, "icons": [{"src": 1}]}])
def test_whatever_tool_list_the_upstream_announces_the_proxys_list_is_schema_valid(
        stage: Stage, tools: list[Any]) -> None:
    stage.run(stage.relist(tools))
    stage.check()
