"""The middleware chain (`mcpkit.server.middleware`): the order of links and hooks, what a link
sees, short-circuits, rewrites, exceptions passing up through it, both eras, and calls a
handler makes of its own server. Every message the server sends is checked against the
official schema."""

from __future__ import annotations

import copy
import logging
from typing import Any

import pytest
from helpers.client.schema_tap import SchemaTap

from mcpkit import Context, Server, ToolError
from mcpkit.client import ClientOptions
from mcpkit.errors import InternalError, InvalidParamsError, RPCError
from mcpkit.server.middleware import (
    CallNext,
    ErrorHandlingMiddleware,
    Middleware,
    MiddlewareContext,
)
from mcpkit.testing import ServerWire, connect
from mcpkit.types.constants import CLIENT_CAPABILITIES_KEY, MODERN_VERSION, PROTOCOL_VERSION_KEY

pytestmark = pytest.mark.asyncio


def app() -> Server:
    server = Server("mw")

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool()
    def broken() -> str:
        raise LookupError("no such row")

    @server.resource("data://motd")
    def motd() -> str:
        return "hello"

    @server.prompt()
    def greet(name: str) -> str:
        return f"Hello, {name}"

    return server


class Recorder(Middleware):
    def __init__(self, tag: str, seen: list[str]) -> None:
        self.tag, self.seen = tag, seen

    async def on_request(self, context: MiddlewareContext, call_next: CallNext) -> dict[str, Any]:
        self.seen.append(f"{self.tag}:request:{context.method}")
        result = await call_next(context)
        self.seen.append(f"{self.tag}:request:done")
        return result

    async def on_call_tool(self, context: MiddlewareContext, call_next: CallNext
                           ) -> dict[str, Any]:
        self.seen.append(f"{self.tag}:call_tool:{context.name}")
        return await call_next(context)


async def test_links_run_in_the_order_added_and_the_wider_hook_wraps_the_narrower() -> None:
    server, seen = app(), []
    server.add_middleware(Recorder("a", seen))
    server.add_middleware(Recorder("b", seen))
    tap = SchemaTap()
    async with connect(server, recorder=tap) as client:
        seen.clear()
        assert (await client.call_tool("add", {"a": 1, "b": 2})).structured == {"result": 3}
    assert seen == ["a:request:tools/call", "a:call_tool:add", "b:request:tools/call",
                    "b:call_tool:add", "b:request:done", "a:request:done"]
    assert not tap.problems


async def test_each_narrow_hook_runs_for_its_own_method_only() -> None:
    server, seen = app(), []

    class Hooks(Middleware):
        async def on_read_resource(self, context: MiddlewareContext, call_next: CallNext
                                   ) -> dict[str, Any]:
            seen.append(f"read {context.uri}")
            return await call_next(context)

        async def on_get_prompt(self, context: MiddlewareContext, call_next: CallNext
                                ) -> dict[str, Any]:
            seen.append(f"prompt {context.name}")
            return await call_next(context)

        async def on_list_tools(self, context: MiddlewareContext, call_next: CallNext
                                ) -> dict[str, Any]:
            seen.append("list tools")
            return await call_next(context)

        async def on_list_prompts(self, context: MiddlewareContext, call_next: CallNext
                                  ) -> dict[str, Any]:
            seen.append("list prompts")
            return await call_next(context)

        async def on_list_resources(self, context: MiddlewareContext, call_next: CallNext
                                    ) -> dict[str, Any]:
            seen.append("list resources")
            return await call_next(context)

    server.add_middleware(Hooks())
    async with connect(server) as client:
        await client.read_resource("data://motd")
        await client.get_prompt("greet", {"name": "Ada"})
        await client.list_tools()
        await client.list_prompts()
        await client.list_resources()
        await client.call_tool("add", {"a": 1, "b": 1})
    assert seen == ["read data://motd", "prompt greet", "list tools", "list prompts",
                    "list resources"]


async def test_a_link_sees_the_principal_the_client_info_and_the_era_of_each_request() -> None:
    seen: list[tuple[Any, ...]] = []
    server = app()

    @server.middleware("tools/call")
    async def look(context: MiddlewareContext, call_next: CallNext) -> dict[str, Any]:
        seen.append((context.principal, (context.client_info or {}).get("name"), context.era,
                     context.depth, context.tool.name if context.tool else None))
        return await call_next(context)

    async with connect(server, principal="alice", client_info={"name": "me", "version": "1"}
                       ) as client:
        await client.call_tool("add", {"a": 1, "b": 1})
    async with connect(server, options=ClientOptions(era="legacy"),
                       client_info={"name": "old", "version": "1"}) as client:
        await client.call_tool("add", {"a": 1, "b": 1})
        await client.list_tools()
    assert seen == [("alice", "me", "modern", 0, "add"), (None, "old", "legacy", 0, "add")]


async def test_a_link_may_answer_without_calling_on() -> None:
    server, calls = Server("short"), []

    @server.tool()
    def expensive() -> str:
        calls.append(1)
        return "computed"

    @server.middleware("tools/call")
    async def canned(context: MiddlewareContext, call_next: CallNext) -> dict[str, Any]:
        return {"resultType": "complete", "content": [{"type": "text", "text": "canned"}]}

    tap = SchemaTap()
    async with connect(server, recorder=tap) as client:
        assert (await client.call_tool("expensive", {})).text == "canned"
    assert calls == []
    assert not tap.problems


async def test_rewritten_arguments_are_checked_against_the_input_schema() -> None:
    server = app()

    @server.middleware("tools/call")
    async def double(context: MiddlewareContext, call_next: CallNext) -> dict[str, Any]:
        args = dict(context.arguments or {})
        args["a"] = args.get("a", 0) * 2 if isinstance(args.get("a"), int) else "not a number"
        return await call_next(context.copy(params={**context.params, "arguments": args}))

    async with connect(server) as client:
        assert (await client.call_tool("add", {"a": 5, "b": 1})).structured == {"result": 11}
        refused = await client.call_tool("add", {"a": "x", "b": 1})
    assert refused.is_error and "Invalid arguments for tool 'add'" in refused.text


async def test_a_handlers_exception_passes_up_the_chain_and_is_answered_as_without_it() -> None:
    server, seen = app(), []

    @server.middleware()
    async def watch(context: MiddlewareContext, call_next: CallNext) -> dict[str, Any]:
        try:
            return await call_next(context)
        except Exception as exc:
            seen.append(type(exc).__name__)
            raise

    plain = app()
    async with connect(server) as client, connect(plain) as other:
        chained = await client.call_tool("broken", {})
        bare = await other.call_tool("broken", {})
    assert seen == ["LookupError"]
    assert chained.is_error and bare.is_error
    assert chained.text.split("(error id")[0] == bare.text.split("(error id")[0]
    assert "tool 'broken' failed" in chained.text
    assert "no such row" not in chained.text  # no message leaks without expose_errors


async def test_error_mapping_turns_an_exception_type_into_a_tool_error_or_a_json_rpc_error(
) -> None:
    server = app()

    @server.resource("data://secret")
    def secret() -> str:
        raise PermissionError("you may not read it")

    server.add_middleware(ErrorHandlingMiddleware({
        LookupError: ToolError,
        PermissionError: lambda exc: InvalidParamsError(f"refused: {exc}"),
    }))
    async with connect(server) as client:
        mapped = await client.call_tool("broken", {})
        with pytest.raises(InvalidParamsError, match="refused: you may not read it"):
            await client.read_resource("data://secret")
    assert mapped.is_error and mapped.text == "no such row"


async def test_error_mapping_refuses_a_table_that_is_not_of_exceptions() -> None:
    with pytest.raises(TypeError, match="not an exception class"):
        ErrorHandlingMiddleware({"LookupError": ToolError})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="neither an exception class nor a function"):
        ErrorHandlingMiddleware({LookupError: 3})  # type: ignore[dict-item]


async def test_a_resource_or_prompt_that_raises_is_still_minus_32603_naming_it_under_a_chain(
) -> None:
    server = app()

    @server.resource("data://bad")
    def bad() -> str:
        raise RuntimeError("disk gone")

    @server.prompt()
    def sour() -> str:
        raise RuntimeError("nope")

    server.add_middleware(Recorder("a", []))
    async with connect(server) as client:
        with pytest.raises(InternalError, match="resource 'data://bad' failed") as read:
            await client.read_resource("data://bad")
        with pytest.raises(InternalError, match="prompt 'sour' failed") as got:
            await client.get_prompt("sour")
    assert "errorId" in read.value.data and "errorId" in got.value.data


async def test_a_tool_error_raised_by_a_link_is_the_calls_is_error_result() -> None:
    server = app()

    @server.middleware("tools/call")
    async def deny(context: MiddlewareContext, call_next: CallNext) -> dict[str, Any]:
        raise ToolError(f"{context.name} is switched off today")

    async with connect(server) as client:
        result = await client.call_tool("add", {"a": 1, "b": 2})
    assert result.is_error and result.text == "add is switched off today"


async def test_the_chain_sees_only_requests_whose_envelope_and_method_are_right() -> None:
    server, seen = app(), []

    @server.middleware()
    async def note(context: MiddlewareContext, call_next: CallNext) -> dict[str, Any]:
        seen.append(context.method)
        return await call_next(context)

    wire = ServerWire(server)
    try:
        unknown = await wire.request("no/such/method", {})
        bare = await wire.request("tools/list", {}, with_meta=False)
        unknown_tool = await wire.request("tools/call", {"name": "nope", "arguments": {}})
    finally:
        wire.close()
    assert unknown["error"]["code"] == -32601
    assert bare["error"]["code"] == -32602
    assert unknown_tool["error"]["code"] == -32602
    assert seen == ["tools/call"]  # an unknown tool is refused after the chain, by the method


async def test_a_function_link_for_some_methods_leaves_the_others_alone() -> None:
    server, seen = app(), []

    @server.middleware("prompts/get")
    async def only_prompts(context: MiddlewareContext, call_next: CallNext) -> dict[str, Any]:
        seen.append(context.method)
        return await call_next(context)

    async with connect(server) as client:
        await client.call_tool("add", {"a": 1, "b": 1})
        await client.get_prompt("greet", {"name": "x"})
    assert seen == ["prompts/get"]


async def test_add_middleware_refuses_what_is_not_a_link() -> None:
    with pytest.raises(TypeError, match="takes a Middleware or a function"):
        Server("x").add_middleware(42)  # type: ignore[arg-type]


async def test_calls_a_handler_makes_of_its_own_server_go_through_the_chain_one_level_deeper(
) -> None:
    server, seen = app(), []

    @server.tool()
    async def total(ctx: Context) -> str:
        first = await ctx.call_tool("add", {"a": 2, "b": 3})
        motd = await ctx.read_resource("data://motd")
        prompt = await ctx.get_prompt("greet", {"name": "Ada"})
        return (f"{first['structuredContent']['result']} {motd['contents'][0]['text']} "
                f"{prompt['messages'][0]['content']['text']}")

    @server.middleware()
    async def note(context: MiddlewareContext, call_next: CallNext) -> dict[str, Any]:
        seen.append((context.method, context.depth))
        return await call_next(context)

    async with connect(server) as client:
        seen.clear()
        assert (await client.call_tool("total", {})).text == "5 hello Hello, Ada"
    assert seen == [("tools/call", 0), ("tools/call", 1), ("resources/read", 1),
                    ("prompts/get", 1)]


async def test_an_own_call_is_checked_as_a_clients_call_is() -> None:
    server = app()
    outcome: dict[str, Any] = {}

    @server.tool()
    async def probe(ctx: Context) -> str:
        outcome["bad"] = await ctx.call_tool("add", {"a": "x"})
        try:
            await ctx.call_tool("no_such_tool")
        except RPCError as exc:
            outcome["unknown"] = exc.code
        return "done"

    async with connect(server) as client:
        assert (await client.call_tool("probe", {})).text == "done"
    assert outcome["bad"]["isError"] is True
    assert "Invalid arguments for tool 'add'" in outcome["bad"]["content"][0]["text"]
    assert outcome["unknown"] == -32602


async def test_a_tool_calling_itself_stops_at_the_depth_bound_with_an_error_naming_it() -> None:
    server = Server("loop")
    depths: list[int] = []

    @server.tool()
    async def again(ctx: Context) -> str:
        depths.append(ctx.depth)
        await ctx.call_tool("again")
        return "never"

    async with connect(server) as client:
        with pytest.raises(InternalError, match=r"tools/call 'again' would be nested 9 deep.*"
                                                r"max_call_depth is 8"):
            await client.call_tool("again", {})
    assert depths == list(range(9))


async def test_an_own_call_needs_the_scopes_its_target_needs() -> None:
    server = Server("scoped")

    @server.tool(scopes=["admin"])
    def wipe() -> str:
        return "wiped"

    @server.tool()
    async def relay(ctx: Context) -> str:
        return str((await ctx.call_tool("wipe"))["content"][0]["text"])

    class Principal:
        subject = "u1"

        def __init__(self, scopes: set[str]) -> None:
            self.scopes = scopes

        def grants(self, needed: Any) -> bool:
            return set(needed) <= self.scopes

    async with connect(server, principal=Principal({"admin"})) as client:
        assert (await client.call_tool("relay", {})).text == "wiped"
    async with connect(server, principal=Principal(set())) as client:
        with pytest.raises(InvalidParamsError, match="needs the scope\\(s\\) admin"):
            await client.call_tool("relay", {})


async def test_an_own_call_that_asks_for_input_asks_in_the_callers_round() -> None:
    from mcpkit import Elicited

    server = Server("asking")

    @server.tool()
    async def confirm(ctx: Context) -> str:
        answer: Elicited = await ctx.elicit("ok", "Really?", {"sure": bool})
        return "yes" if answer.content and answer.content.get("sure") else "no"

    @server.tool()
    async def wrapper(ctx: Context) -> str:
        inner = await ctx.call_tool("confirm")
        return f"wrapped {inner['content'][0]['text']}"

    asked: list[str] = []

    async def answer(request: Any) -> dict[str, Any]:
        asked.append(request.message)
        return {"action": "accept", "content": {"sure": True}}

    tap = SchemaTap()
    async with connect(server, recorder=tap, elicit=answer) as client:
        assert (await client.call_tool("wrapper", {})).text == "wrapped yes"
    async with connect(server, options=ClientOptions(era="legacy"), elicit=answer
                       ) as client:
        assert (await client.call_tool("wrapper", {})).text == "wrapped yes"
    assert asked == ["Really?", "Really?"]
    assert not tap.problems


async def test_a_plain_request_pays_for_no_chain() -> None:
    server = app()
    assert server.chain is None
    server.add_middleware(Recorder("a", []))
    assert server.chain is not None and len(server.chain.links) == 1


async def test_middleware_logs_through_the_request_log_and_timing(caplog: pytest.LogCaptureFixture
                                                                  ) -> None:
    from mcpkit.server.middleware import LoggingMiddleware, TimingMiddleware

    server = app()
    server.add_middleware(LoggingMiddleware(include_params=True))
    server.add_middleware(TimingMiddleware(slow_s=0.0))
    caplog.set_level(logging.INFO, logger="mcpkit")
    async with connect(server, principal="alice", client_info={"name": "me", "version": "2"}
                       ) as client:
        await client.call_tool("add", {"a": 1, "b": 2})
        with pytest.raises(InvalidParamsError):
            await client.get_prompt("greet", {})
    lines = [r.getMessage() for r in caplog.records if r.name in ("mcpkit.requests",
                                                                   "mcpkit.timing")]
    assert any(line.startswith("tools/call 'add' from principal alice (me 2, modern) "
                               '{"name":"add","arguments":{"a":1,"b":2}}: complete in')
               for line in lines), lines
    assert any(line.startswith("prompts/get 'greet' from principal alice (me 2, modern)")
               and "error -32602" in line for line in lines), lines
    slow = [r for r in caplog.records if r.name == "mcpkit.timing"
            and r.getMessage().startswith("tools/call 'add' took")]
    assert slow and slow[0].levelno == logging.WARNING  # past slow_s


class Opaque:
    """An argument that is not JSON: what a handler may pass its own server."""

    def __repr__(self) -> str:
        return "<opaque>"


async def test_the_request_log_names_a_nameless_client_the_depth_and_what_a_handler_raised(
        caplog: pytest.LogCaptureFixture) -> None:
    from mcpkit.server.middleware import LoggingMiddleware, TimingMiddleware

    server = app()

    @server.tool()
    async def odd(ctx: Context) -> str:
        inner = await ctx.call_tool("add", {"a": Opaque(), "b": 1})
        return "refused" if inner.get("isError") else "served"

    server.add_middleware(LoggingMiddleware(include_params=True))
    server.add_middleware(TimingMiddleware())
    caplog.set_level(logging.INFO, logger="mcpkit")
    wire = ServerWire(server, tap=SchemaTap())
    # No clientInfo in `_meta` (a SHOULD): the line says nothing of the client.
    bare = {PROTOCOL_VERSION_KEY: MODERN_VERSION, CLIENT_CAPABILITIES_KEY: {}}
    replies = []
    try:
        for number, (method, params) in enumerate([
                ("tools/list", {}), ("tools/call", {"name": "odd", "arguments": {}}),
                ("tools/call", {"name": "broken", "arguments": {}})], start=1):
            wire.send({"jsonrpc": "2.0", "id": number, "method": method,
                       "params": {**params, "_meta": bare}})
            replies.append(await wire.next())
    finally:
        wire.close()
    assert replies[1]["result"]["content"][0]["text"] == "refused"
    assert replies[2]["result"]["isError"] is True
    logged = [r.getMessage() for r in caplog.records if r.name == "mcpkit.requests"]
    timed = [r.getMessage() for r in caplog.records if r.name == "mcpkit.timing"]
    assert logged[0].startswith("tools/list (modern) {}: complete in"), logged
    assert logged[1].startswith(
        "tools/call 'add' (modern, depth 1) "
        '{"name":"add","arguments":{"a":"<opaque>","b":1}}: raised ToolError in'), logged
    assert logged[3].startswith("tools/call 'broken' (modern) "
                                '{"name":"broken","arguments":{}}: raised LookupError in'), logged
    assert timed[0].startswith("tools/list took "), timed
    assert not wire.tap.problems  # type: ignore[union-attr]


async def test_a_link_may_pass_on_another_context_and_the_handler_gets_that_one() -> None:
    server = app()

    @server.tool()
    def caller(ctx: Context) -> str:
        return str(ctx.principal)

    @server.middleware("tools/call")
    async def as_service(context: MiddlewareContext, call_next: CallNext) -> dict[str, Any]:
        inner = copy.copy(context.ctx)
        inner.principal = "service-account"  # a link mapping callers to a service's account
        return await call_next(context.copy(ctx=inner))

    async with connect(server, principal="alice") as client:
        assert (await client.call_tool("caller", {})).text == "service-account"
