"""Malformed params are refused from one place, the method table's params check, before any
handler runs: one -32602 naming the method, its target and every wrong place, in both eras,
over a real stream connection with every reply schema-checked."""

from __future__ import annotations

from typing import Any

import pytest
from test_legacy import initialize

from mcpkit import Server
from mcpkit.server.middleware import Middleware


def counting_server() -> tuple[Server, list[str]]:
    """A server whose every function records that it ran."""
    ran: list[str] = []
    server = Server("params")

    @server.tool()
    def add(a: int, b: int) -> int:
        ran.append("add")
        return a + b

    @server.prompt()
    def greet(who: str) -> str:
        ran.append("greet")
        return f"Hello, {who}"

    @server.resource("note://one")
    def one() -> str:
        ran.append("one")
        return "one"

    @server.completer()
    def complete(ref: Any, argument: Any, context: Any) -> list[str]:
        ran.append("complete")
        return ["x"]

    return server, ran


BAD: list[tuple[str, dict[str, Any], str]] = [
    ("tools/call", {"name": 7}, "tools/call: params.name: expected string, got integer 7 "
                                "(the tool's name)"),
    ("tools/call", {"arguments": {"a": 1}}, "tools/call: params.name: missing required property"),
    ("tools/call", {"name": "add", "arguments": [1, 2]},
     "tools/call 'add': params.arguments: expected object, got array"),
    ("prompts/get", {"name": "greet", "arguments": {"who": 3}},
     "prompts/get 'greet': params.arguments.who: expected string, got integer 3 "
     "(arguments: an object of strings, one per argument)"),
    ("prompts/get", {"name": ["greet"]}, "prompts/get: params.name: expected string, got array"),
    ("resources/read", {"uri": {"x": 1}}, "resources/read: params.uri: expected string, got "
                                          "object (the resource's URI)"),
    ("completion/complete", {"ref": {"type": "ref/prompt", "name": "greet"},
                             "argument": {"name": "who"}},
     "completion/complete: params.argument.value: missing required property "
     '(argument: {"name": str, "value": str})'),
    ("completion/complete", {"ref": "greet", "argument": {"name": "who", "value": ""}},
     "completion/complete: params.ref: expected PromptReference object or "
     "ResourceTemplateReference object, got string 'greet'"),
    ("subscriptions/listen", {"notifications": {"toolsListChanged": "yes"}},
     "subscriptions/listen: params.notifications.toolsListChanged: expected boolean, got "
     "string 'yes'"),
    ("subscriptions/listen", {"notifications": {"resourceSubscriptions": ["note://one", 2]}},
     "subscriptions/listen: params.notifications.resourceSubscriptions[1]: expected string, "
     "got integer 2"),
    ("tools/list", {"cursor": 12}, "tools/list: params.cursor: expected string, got integer 12 "
                                   "(the nextCursor of the previous page)"),
]


@pytest.mark.parametrize("method, params, words", BAD, ids=[f"{m}-{i}" for i, (m, _, _) in
                                                          enumerate(BAD)])
async def test_a_malformed_param_is_refused_by_name_before_any_handler_runs(
    wire_factory: Any, method: str, params: dict[str, Any], words: str
) -> None:
    server, ran = counting_server()
    wire = wire_factory(server)
    error = (await wire.request(method, params))["error"]
    assert error["code"] == -32602
    assert error["message"].startswith(words), error["message"]
    assert ran == []


async def test_the_same_requests_well_formed_reach_their_handlers(wire_factory: Any) -> None:
    server, ran = counting_server()
    wire = wire_factory(server)
    replies = [
        await wire.request("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2},
                                          "extra": "kept"}),
        await wire.request("prompts/get", {"name": "greet", "arguments": {"who": "Ann"}}),
        await wire.request("resources/read", {"uri": "note://one"}),
        await wire.request("completion/complete", {"ref": {"type": "ref/prompt", "name": "greet"},
                                                   "argument": {"name": "who", "value": ""}}),
        await wire.request("tools/call", {"name": "add", "arguments": None}),
    ]
    assert [("result" in r) for r in replies] == [True] * 5
    assert replies[0]["result"]["structuredContent"] == {"result": 3}
    assert replies[4]["result"]["isError"] is True  # null arguments: as absent, so a and b lack
    assert ran == ["add", "greet", "one", "complete"]


async def test_a_legacy_request_meets_the_same_check_with_the_same_words(
    wire_factory: Any,
) -> None:
    server, ran = counting_server()
    wire = wire_factory(server)
    await initialize(wire)
    error = (await wire.request("tools/call", {"name": "add", "arguments": [1]},
                                with_meta=False))["error"]
    assert error["code"] == -32602
    assert error["message"].startswith(
        "tools/call 'add': params.arguments: expected object, got array")
    assert ran == []


async def test_a_middleware_sees_the_request_before_its_params_are_checked(
    wire_factory: Any,
) -> None:
    """The check is the method's own guard, inside the middleware chain: a middleware that
    answers a request itself (a cache, a rewrite) keeps doing so, as before the table checked."""
    seen: list[Any] = []

    class Watch(Middleware):
        async def on_request(self, context: Any, call_next: Any) -> Any:
            seen.append(context.params.get("name"))
            return await call_next(context)

    server, ran = counting_server()
    server.add_middleware(Watch())
    wire = wire_factory(server)
    error = (await wire.request("tools/call", {"name": 7}))["error"]
    assert error["code"] == -32602 and seen == [7] and ran == []


@pytest.mark.parametrize("method, params, kind", [
    ("tools/call", {"name": 7}, "tools"),
    ("prompts/get", {"name": None}, "prompts"),
    ("resources/read", {"uri": 1}, "resources"),
    ("completion/complete", {"ref": "x"}, "completions"),
])
async def test_a_server_that_offers_no_such_thing_says_so_before_faulting_the_params(
    wire_factory: Any, method: str, params: dict[str, Any], kind: str
) -> None:
    wire = wire_factory(Server("bare"))
    error = (await wire.request(method, params))["error"]
    assert error["code"] == -32601
    assert error["message"] == f"Method not found: {method} (this server offers no {kind})"
