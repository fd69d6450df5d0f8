"""Servers made of servers: `mount` (live, delegating) and `include` (a copy), with names,
URIs and prompts namespaced, collisions refused in one line, list changes and resource
updates forwarded, extensions merged and completion delegated. Every message is checked
against the official schema."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from helpers.client.schema_tap import SchemaTap

from mcpkit import Context, Elicited, Server, ToolResult
from mcpkit.client import ClientOptions
from mcpkit.server.composition import namespaced_uri, plain_uri
from mcpkit.server.middleware import CallNext, MiddlewareContext
from mcpkit.testing import ServerWire, connect
from mcpkit.types.constants import SERVER_INFO_KEY

pytestmark = pytest.mark.asyncio


def billing() -> Server:
    server = Server("billing")

    @server.tool()
    def pay(amount: int) -> str:
        return f"paid {amount}"

    @server.tool()
    async def whoami(ctx: Context) -> str:
        return f"{ctx.server.name} at depth {ctx.depth}"

    @server.resource("invoice://latest", mime_type="text/plain")
    def latest() -> str:
        return "invoice 7"

    @server.resource("invoice://{year}/{number}")
    def invoice(year: str, number: str) -> str:
        return f"invoice {year}/{number}"

    @server.prompt()
    def remind(customer: str) -> str:
        return f"Remind {customer} to pay"

    @server.completer()
    def complete(ref: dict[str, Any], argument: dict[str, Any], context: Any) -> list[str]:
        return [c for c in ("acme", "apex") if c.startswith(argument["value"])]

    return server


@pytest.mark.parametrize("uri, namespaced", [
    ("invoice://latest", "invoice://billing/latest"),
    ("invoice://{year}/{n}", "invoice://billing/{year}/{n}"),
    ("file:///srv/a.txt", "file://billing//srv/a.txt"),
    ("urn:isbn:123", "urn:billing/isbn:123"),
    ("data://", "data://billing/"),
])
async def test_a_namespaced_uri_keeps_its_scheme_and_reverses_exactly(uri: str, namespaced: str
                                                                      ) -> None:
    assert namespaced_uri("billing", uri) == namespaced
    assert plain_uri("billing", namespaced) == uri
    assert plain_uri("other", namespaced) is None


async def test_a_mounted_servers_tools_resources_and_prompts_are_listed_and_served_namespaced(
) -> None:
    main = Server("main")

    @main.tool()
    def hello() -> str:
        return "hi"

    main.mount(billing(), namespace="billing")
    tap = SchemaTap()
    async with connect(main, recorder=tap) as client:
        names = [t.name for t in await client.list_tools()]
        assert names == ["hello", "billing_pay", "billing_whoami"]
        assert (await client.call_tool("billing_pay", {"amount": 3})).text == "paid 3"
        # The mounted server serves its own calls: its Context, at the client's depth.
        assert (await client.call_tool("billing_whoami", {})).text == "billing at depth 0"
        resources = [r.uri for r in await client.list_resources()]
        assert resources == ["invoice://billing/latest"]
        templates = [t.uri_template for t in await client.list_resource_templates()]
        assert templates == ["invoice://billing/{year}/{number}"]
        read = await client.read_resource("invoice://billing/2026/7")
        assert read.text == "invoice 2026/7"
        assert read.contents[0].uri == "invoice://billing/2026/7"
        latest = await client.read_resource("invoice://billing/latest")
        assert (latest.contents[0].uri, latest.text) == ("invoice://billing/latest", "invoice 7")
        prompt = await client.get_prompt("billing_remind", {"customer": "Ada"})
        assert prompt.messages[0].content.text == "Remind Ada to pay"
        done = await client.complete({"type": "ref/prompt", "name": "billing_remind"},
                                     "customer", "a")
        assert done["values"] == ["acme", "apex"]
    assert main.capabilities()["completions"] == {}
    assert not tap.problems


async def test_a_mounts_later_registrations_appear_live_and_an_include_is_a_copy() -> None:
    main, live, copied = Server("main"), billing(), billing()
    main.mount(live, namespace="live")
    main.include(copied, prefix="copy")

    @live.tool()
    def refund(amount: int) -> str:
        return f"refunded {amount}"

    @copied.tool()
    def void() -> str:
        return "voided"

    @live.prompt()
    def thank(customer: str) -> str:
        return f"Thank {customer}"

    @live.resource("receipt://{number}")
    def receipt(number: str) -> str:
        return f"receipt {number}"

    @live.resource("receipt://latest")
    def last_receipt() -> str:
        return "receipt 9"

    live.remove_tool("pay")
    # A prompt taken out of the mounted server's registry, announced, goes here too.
    del live.prompts["remind"]
    live.notify_prompts_changed()
    assert "live_refund" in main.tools and "live_pay" not in main.tools
    assert "copy_void" not in main.tools and "copy_pay" in main.tools
    assert sorted(main.prompts) == ["copy_remind", "live_thank"]
    async with connect(main) as client:
        assert (await client.call_tool("live_refund", {"amount": 2})).text == "refunded 2"
        assert [p.name for p in await client.list_prompts()] == ["copy_remind", "live_thank"]
        thanked = await client.get_prompt("live_thank", {"customer": "Ada"})
        assert thanked.messages[0].content.text == "Thank Ada"
        assert (await client.read_resource("receipt://live/7")).text == "receipt 7"
        assert (await client.read_resource("receipt://live/latest")).text == "receipt 9"
        # An included tool runs as the including server's own.
        assert (await client.call_tool("copy_whoami", {})).text == "main at depth 0"
        assert (await client.read_resource("invoice://copy/2025/1")).text == "invoice 2025/1"


async def test_collisions_are_refused_at_mount_time_in_one_line_naming_each() -> None:
    main = Server("main")

    @main.tool(name="billing_pay")
    def taken() -> str:
        return "mine"

    @main.resource("invoice://billing/latest")
    def mine() -> str:
        return "mine"

    @main.prompt(name="billing_remind")
    def own_prompt() -> str:
        return "mine"

    with pytest.raises(ValueError) as refused:
        main.mount(billing(), namespace="billing")
    message = str(refused.value)
    assert "\n" not in message
    assert message == ("mount('billing', 'billing') into 'main' collides: tool 'billing_pay', "
                       "resource 'invoice://billing/latest', prompt 'billing_remind' already "
                       "registered here")
    assert list(main.tools) == ["billing_pay"]  # nothing was half mounted


async def test_a_later_registration_that_would_collide_where_it_is_mounted_is_refused() -> None:
    main, child = Server("main"), billing()
    main.mount(child, namespace="billing")

    @main.tool(name="billing_refund")
    def own() -> str:
        return "main's"

    with pytest.raises(ValueError, match="tool 'refund' of server 'billing' would be "
                                         "'billing_refund' in server 'main'"):
        @child.tool()
        def refund() -> str:
            return "child's"

    assert "refund" not in child.tools
    with pytest.raises(ValueError, match="a tool named 'billing_pay' is already registered"):
        main.add_tool(lambda: "x", name="billing_pay")


async def test_mounting_refuses_a_bad_namespace_and_a_cycle() -> None:
    main, child = Server("main"), billing()
    with pytest.raises(ValueError, match="namespace 'bad name'"):
        main.mount(child, namespace="bad name")
    main.mount(child, namespace="b")
    with pytest.raises(ValueError, match="a server cannot hold itself"):
        child.mount(main, namespace="m")
    with pytest.raises(ValueError, match="a server cannot hold itself"):
        main.mount(main)
    with pytest.raises(TypeError, match="takes a Server"):
        main.mount("billing")  # type: ignore[arg-type]


async def test_list_changes_and_resource_updates_of_a_mount_reach_listeners_namespaced() -> None:
    main, child = Server("main"), billing()
    main.mount(child, namespace="billing")
    wire = ServerWire(main, tap=SchemaTap())
    try:
        wire.send({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": {
            "_meta": wire.meta(), "notifications": {
                "toolsListChanged": True,
                "resourceSubscriptions": ["invoice://billing/latest"]}}})
        ack = await wire.next()
        assert ack["method"] == "notifications/subscriptions/acknowledged"

        @child.tool()
        def refund() -> str:
            return "r"

        changed = await wire.next()
        assert changed["method"] == "notifications/tools/list_changed"
        child.notify_resource_updated("invoice://latest")
        updated = await wire.next()
        assert updated["method"] == "notifications/resources/updated"
        assert updated["params"]["uri"] == "invoice://billing/latest"
    finally:
        wire.close()
    assert not wire.tap.problems  # type: ignore[union-attr]


class Heard(SchemaTap):
    """A schema tap that says when the client hears that the tool list changed."""

    def __init__(self) -> None:
        super().__init__()
        self.changed = asyncio.Event()

    def __call__(self, direction: str, message: dict[str, Any]) -> None:
        super().__call__(direction, message)
        if direction == "receive" and message.get("method") == "notifications/tools/list_changed":
            self.changed.set()


async def test_a_legacy_client_hears_a_mounts_changes_and_is_served_as_a_modern_one() -> None:
    main, child = Server("main"), billing()
    main.mount(child, namespace="billing")
    tap = Heard()
    async with connect(main, options=ClientOptions(era="legacy"), recorder=tap) as client:
        assert (await client.call_tool("billing_pay", {"amount": 1})).text == "paid 1"

        @child.tool()
        def refund() -> str:
            return "r"

        await asyncio.wait_for(tap.changed.wait(), 10)
        assert (await client.call_tool("billing_refund", {})).text == "r"
    assert not tap.problems


async def test_a_mounted_servers_middleware_and_lifespan_are_its_own() -> None:
    events: list[str] = []

    @asynccontextmanager
    async def life(server: Server) -> AsyncIterator[str]:
        events.append(f"enter {server.name}")
        yield f"{server.name} pool"
        events.append(f"exit {server.name}")

    main, child = Server("main", lifespan=life), Server("child", lifespan=life)

    @child.tool()
    def pool(ctx: Context) -> str:
        return str(ctx.lifespan_context)

    @child.middleware("tools/call")
    async def child_only(context: MiddlewareContext, call_next: CallNext) -> dict[str, Any]:
        events.append(f"child chain {context.name}")
        return await call_next(context)

    @main.middleware("tools/call")
    async def main_only(context: MiddlewareContext, call_next: CallNext) -> dict[str, Any]:
        events.append(f"main chain {context.name}")
        return await call_next(context)

    main.mount(child, namespace="c")
    async with connect(main) as client:
        assert (await client.call_tool("c_pool", {})).text == "child pool"
    assert events == ["enter main", "enter child", "main chain c_pool", "child chain pool",
                      "exit child", "exit main"]


async def test_extensions_and_their_methods_are_merged_and_differing_settings_collide() -> None:
    main, child = Server("main"), billing()
    child.extension("com.example/ledger", {"v": 1})

    async def balance(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return {"resultType": "complete", "balance": 42, "from": ctx.server.name}

    child.add_method("com.example/ledger.balance", balance, extension="com.example/ledger")
    other = Server("other")
    other.extension("com.example/ledger", {"v": 2})
    main.mount(child, namespace="billing")
    assert main.extensions.offered["com.example/ledger"] == {"v": 1}
    wire = ServerWire(main)
    try:
        reply = await wire.request("com.example/ledger.balance", {}, **{
            "io.modelcontextprotocol/clientCapabilities": {
                "extensions": {"com.example/ledger": {}}}})
    finally:
        wire.close()
    assert reply["result"]["balance"] == 42 and reply["result"]["from"] == "billing"
    with pytest.raises(ValueError, match=r"extension 'com\.example/ledger' \(offered by both "
                                         r"with different settings\)"):
        main.mount(other, namespace="other")


async def test_mounts_nest_and_an_include_of_a_mounting_server_still_delegates() -> None:
    top, middle, leaf = Server("top"), Server("middle"), billing()
    middle.mount(leaf, namespace="leaf")
    top.include(middle, prefix="mid")
    outer = Server("outer")
    outer.mount(top, namespace="top")
    async with connect(outer) as client:
        assert (await client.call_tool("top_mid_leaf_pay", {"amount": 9})).text == "paid 9"
        assert (await client.call_tool("top_mid_leaf_whoami", {})).text == "billing at depth 0"
        read = await client.read_resource("invoice://top/mid/leaf/2024/2")
        assert read.text == "invoice 2024/2"
        assert read.contents[0].uri == "invoice://top/mid/leaf/2024/2"
        assert [p.name for p in await client.list_prompts()] == ["top_mid_leaf_remind"]
        prompt = await client.get_prompt("top_mid_leaf_remind", {"customer": "Bo"})
        assert prompt.messages[0].content.text == "Remind Bo to pay"


async def test_a_later_registration_is_refused_where_it_would_collide_two_mounts_up() -> None:
    outer, top, leaf = Server("outer"), Server("top"), billing()
    top.mount(leaf, namespace="leaf")
    outer.mount(top, namespace="top")

    @outer.tool(name="top_leaf_refund")
    def own() -> str:
        return "outer's"

    with pytest.raises(ValueError, match="tool 'leaf_refund' of server 'top' would be "
                                         "'top_leaf_refund' in server 'outer'"):
        @leaf.tool()
        def refund() -> str:
            return "leaf's"

    assert "refund" not in leaf.tools and "leaf_refund" not in top.tools


async def test_a_mount_without_a_namespace_serves_the_names_and_uris_as_they_are() -> None:
    main = Server("main")
    main.mount(billing())
    async with connect(main) as client:
        assert [t.name for t in await client.list_tools()] == ["pay", "whoami"]
        assert [r.uri for r in await client.list_resources()] == ["invoice://latest"]
        assert [p.name for p in await client.list_prompts()] == ["remind"]
        assert (await client.call_tool("pay", {"amount": 4})).text == "paid 4"
        assert (await client.read_resource("invoice://2026/1")).text == "invoice 2026/1"


async def test_a_uri_without_a_scheme_cannot_be_namespaced_and_the_error_says_why() -> None:
    with pytest.raises(ValueError, match="URI 'latest' has no scheme to keep before a "
                                         "namespace"):
        namespaced_uri("billing", "latest")
    assert plain_uri("billing", "latest") is None


async def test_a_mounted_tools_own_meta_is_kept_and_speaks_for_the_server_asked() -> None:
    main, child = Server("main"), Server("child")

    @child.tool()
    def traced() -> ToolResult:
        return ToolResult("done", meta={"com.example/trace": "t1"})

    main.mount(child, namespace="c")
    wire = ServerWire(main, tap=SchemaTap())
    try:
        reply = await wire.request("tools/call", {"name": "c_traced", "arguments": {}})
    finally:
        wire.close()
    assert reply["result"]["_meta"] == {"com.example/trace": "t1", SERVER_INFO_KEY: main.info}
    assert not wire.tap.problems  # type: ignore[union-attr]


async def test_the_server_info_a_mounted_servers_link_stamps_on_its_results_is_the_one_asked(
) -> None:
    child = Server("child")

    @child.prompt()
    def hello() -> str:
        return "Hello"

    @child.resource("note://today")
    def today() -> str:
        return "today"

    @child.middleware()
    async def stamp(context: MiddlewareContext, call_next: CallNext) -> dict[str, Any]:
        result = await call_next(context)  # a trace id, and this server's info as the core has
        return {**result, "_meta": {"com.example/trace": "t1", **context.server.result_meta}}

    main = Server("main")
    main.mount(child, namespace="c")
    wire = ServerWire(main, tap=SchemaTap())
    try:
        prompt = await wire.request("prompts/get", {"name": "c_hello"})
        read = await wire.request("resources/read", {"uri": "note://c/today"})
    finally:
        wire.close()
    expected = {"com.example/trace": "t1", SERVER_INFO_KEY: main.info}
    assert prompt["result"]["_meta"] == expected
    assert read["result"]["_meta"] == expected
    assert read["result"]["contents"][0]["uri"] == "note://c/today"
    assert not wire.tap.problems  # type: ignore[union-attr]


async def test_a_mounted_resource_that_asks_for_input_asks_the_client_through_the_mount() -> None:
    main, child = Server("main"), Server("child")

    @child.resource("report://monthly")
    async def monthly(ctx: Context) -> str:
        answer: Elicited = await ctx.elicit("month", "Which month?", {"month": str})
        return f"report of {answer.content['month'] if answer.content else None}"

    main.mount(child, namespace="v")
    asked: list[str] = []

    async def answer(request: Any) -> dict[str, Any]:
        asked.append(request.message)
        return {"action": "accept", "content": {"month": "July"}}

    tap = SchemaTap()
    async with connect(main, recorder=tap, elicit=answer) as client:
        read = await client.read_resource("report://v/monthly")
    assert (read.contents[0].uri, read.text) == ("report://v/monthly", "report of July")
    assert asked == ["Which month?"]
    assert not tap.problems
