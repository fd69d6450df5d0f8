"""Sync tools run in worker threads: one blocked in its thread never holds up another, since a
thread is started whenever work waits and none is idle. Over a real stream connection."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from helpers.wire import meta

from mcpkit import Context, Server

GATE = 30.0  # a bound on each wait, never reached when the behaviour holds


def call(request_id: str, name: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": name, "arguments": {}, "_meta": meta()}}


async def test_a_sync_tool_blocked_in_its_thread_does_not_hold_up_the_next_one(
    wire_factory: Any,
) -> None:
    server = Server("threads-test")
    started = threading.Event()
    released = threading.Event()

    @server.tool()
    def hold() -> str:
        """Blocks its thread until `release` runs."""
        started.set()
        return "released" if released.wait(GATE) else "never released"

    @server.tool()
    def release() -> str:
        """Lets `hold` finish; it can only run in a thread of its own."""
        released.set()
        return "done"

    wire = wire_factory(server)
    wire.send(call("h", "hold"))
    assert await asyncio.to_thread(started.wait, GATE)  # hold now occupies its thread
    wire.send(call("r", "release"))
    replies = {}
    for _ in range(2):
        reply = await wire.next(timeout=GATE)
        replies[reply["id"]] = reply["result"]["content"][0]["text"]
    assert replies == {"r": "done", "h": "released"}


# -- a plain handler's Context reports from its worker thread ----------------------------------

LOG_LEVEL = "io.modelcontextprotocol/logLevel"


async def test_a_plain_tool_reports_progress_and_logs_from_its_thread_in_order(
    wire_factory: Any,
) -> None:
    server = Server("threads-test")

    @server.tool()
    def work(ctx: Context) -> str:
        """Blocks in its thread while it reports."""
        ctx.info("starting")
        for step in range(1, 4):
            ctx.report_progress(step, 3, f"step {step}")
        ctx.warning({"left": 0}, logger="work")
        ctx.debug("below the asked level: not sent")
        return threading.current_thread().name

    wire = wire_factory(server)
    reply = await wire.request("tools/call", {"name": "work"}, progressToken="p",
                               **{LOG_LEVEL: "info"})
    assert reply["result"]["content"][0]["text"].startswith("mcpkit-worker-")
    sent = [(n["method"], n["params"].get("data", n["params"].get("progress")))
            for n in wire.notifications]  # all before the result, in the order reported
    assert sent == [("notifications/message", "starting"), ("notifications/progress", 1),
                    ("notifications/progress", 2), ("notifications/progress", 3),
                    ("notifications/message", {"left": 0})]
    assert wire.notifications[-1]["params"]["logger"] == "work"


async def test_a_plain_resource_and_prompt_log_from_their_threads(wire_factory: Any) -> None:
    server = Server("threads-test")

    @server.resource("note://today")
    def today(ctx: Context) -> str:
        ctx.info("reading")
        return "today"

    @server.prompt()
    def plan(ctx: Context) -> str:
        ctx.info("planning")
        return "plan"

    wire = wire_factory(server)
    await wire.request("resources/read", {"uri": "note://today"}, **{LOG_LEVEL: "info"})
    assert [n["params"]["data"] for n in wire.notifications] == ["reading"]
    await wire.request("prompts/get", {"name": "plan"}, **{LOG_LEVEL: "info"})
    assert [n["params"]["data"] for n in wire.notifications] == ["planning"]


async def test_a_plain_tools_bad_progress_raises_in_its_own_thread(wire_factory: Any) -> None:
    server = Server("threads-test")

    @server.tool()
    def backwards(ctx: Context) -> str:
        ctx.report_progress(2)
        try:
            ctx.report_progress(1)
        except ValueError as exc:
            return str(exc)
        return "accepted"

    wire = wire_factory(server)
    reply = await wire.request("tools/call", {"name": "backwards"}, progressToken="p")
    assert reply["result"]["content"][0]["text"] == (
        "tools/call: progress must increase with each report (1 after 2)")


async def test_reporting_from_a_thread_the_handler_started_is_refused_in_one_line(
    wire_factory: Any,
) -> None:
    server = Server("threads-test")

    @server.tool()
    def spawns(ctx: Context) -> str:
        said: list[str] = []

        def side() -> None:
            try:
                ctx.info("from a thread of its own")
            except RuntimeError as exc:
                said.append(str(exc))

        helper = threading.Thread(target=side)
        helper.start()
        helper.join(GATE)
        return said[0] if said else "sent"

    wire = wire_factory(server)
    reply = await wire.request("tools/call", {"name": "spawns"}, **{LOG_LEVEL: "info"})
    text = reply["result"]["content"][0]["text"]
    assert text.startswith("tools/call: the context reports from the thread running the handler")
    assert wire.notifications == []


async def test_an_async_tool_still_awaits_its_reports(wire_factory: Any) -> None:
    server = Server("threads-test")

    @server.tool()
    async def chatty(ctx: Context) -> str:
        await ctx.info("one")
        await ctx.report_progress(1)
        await ctx.debug("not asked for")  # nothing to send is still awaitable
        return "done"

    wire = wire_factory(server)
    await wire.request("tools/call", {"name": "chatty"}, progressToken=7, **{LOG_LEVEL: "info"})
    assert [n["method"] for n in wire.notifications] == ["notifications/message",
                                                          "notifications/progress"]


# -- a plain tool declared never to wait runs on the event loop -------------------------------

async def test_a_plain_tool_declared_not_to_block_runs_on_the_loops_thread(
    wire_factory: Any,
) -> None:
    server = Server("threads-test")
    loop_thread = threading.get_ident()

    @server.tool(blocking=False)
    def quick() -> str:
        """Never waits."""
        return "loop" if threading.get_ident() == loop_thread else threading.current_thread().name

    @server.tool()
    def default() -> str:
        """Left to the default."""
        return "loop" if threading.get_ident() == loop_thread else "a worker"

    wire = wire_factory(server)
    quick_reply = await wire.request("tools/call", {"name": "quick"})
    default_reply = await wire.request("tools/call", {"name": "default"})
    assert quick_reply["result"]["content"][0]["text"] == "loop"
    assert default_reply["result"]["content"][0]["text"] == "a worker"


async def test_a_plain_tool_on_the_loop_reports_in_order_before_its_result(
    wire_factory: Any,
) -> None:
    server = Server("threads-test")

    @server.tool(blocking=False)
    def work(ctx: Context) -> str:
        """Reports without awaiting: the reports are sent once it returns."""
        ctx.info("starting")
        for step in range(1, 3):
            ctx.report_progress(step, 2)
        ctx.debug("below the asked level: not sent")
        return "done"

    @server.tool(blocking=False)
    def fails(ctx: Context) -> str:
        """Reports, then fails: the report still goes out, before the error result."""
        ctx.info("about to fail")
        raise RuntimeError("no")

    wire = wire_factory(server)
    reply = await wire.request("tools/call", {"name": "work"}, progressToken="p",
                               **{LOG_LEVEL: "info"})
    assert reply["result"]["content"][0]["text"] == "done"
    sent = [(n["method"], n["params"].get("data", n["params"].get("progress")))
            for n in wire.notifications]
    assert sent == [("notifications/message", "starting"), ("notifications/progress", 1),
                    ("notifications/progress", 2)]
    reply = await wire.request("tools/call", {"name": "fails"}, **{LOG_LEVEL: "info"})
    assert reply["result"]["isError"] is True
    assert [n["params"]["data"] for n in wire.notifications] == ["about to fail"]


def test_blocking_is_refused_where_it_cannot_hold() -> None:
    server = Server("threads-test")

    async def coroutine() -> str:
        return "x"

    def plain() -> str:
        return "x"

    with pytest.raises(ValueError, match="tool 'coroutine': blocking must be True or False, "
                                         "and True only for a plain function"):
        server.add_tool(coroutine, blocking=True)
    with pytest.raises(ValueError, match="tool 'plain': blocking must be True or False"):
        server.add_tool(plain, blocking="no")  # type: ignore[typeddict-item]
    server.add_tool(coroutine, blocking=False)  # what a coroutine does anyway
    assert server.tools["coroutine"].blocking is False
