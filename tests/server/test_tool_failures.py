"""A tool, resource or prompt that raises: what the client is told and what the log keeps.

An uncaught exception in a tool is `isError: true` naming the tool with an error id, in a
resource or prompt a -32603 naming it with the same kind of id; the traceback goes to the log
under that id. `ServerOptions.expose_errors` adds the exception's type and message. What a
handler raises on purpose (`ToolError`, an `RPCError`) and what is no failure at all (an input
round, a cancellation) keep their meaning. In process over the stream connection, and over a
real `mcpkit run` subprocess for the text and the log line on its stderr.
"""

from __future__ import annotations

import asyncio
import logging
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers.transports.http_peer import Peer, ServerProcess
from helpers.transports.stdio_peer import StdioPeer

from mcpkit import Context, Server, ToolError
from mcpkit.errors import InternalError, InvalidParamsError, MissingRequiredClientCapabilityError
from mcpkit.protocol.http import http_status
from mcpkit.server.options import ServerOptions

FAILING = str(Path(__file__).parent / "failing_server.py")
SECRET = "postgres://admin:hunter2@db"
ERROR_ID = re.compile(r"\(error id ([0-9a-f]{12})\)")


def failing_server(*, expose: bool = False) -> Server:
    server = Server("failing", options=ServerOptions(expose_errors=expose))

    @server.tool()
    def explode() -> str:
        """A plain tool, run in a worker thread, failing as a bug does."""
        raise RuntimeError(f"cannot connect to {SECRET}")

    @server.tool()
    async def explode_async(ctx: Context) -> str:
        """An async tool taking the context (so it runs in an input round) failing."""
        raise KeyError(SECRET)

    @server.tool()
    def refuse() -> str:
        """A failure the tool means, in its own words."""
        raise ToolError("the printer is out of paper")

    @server.tool()
    def bad_params() -> str:
        """A JSON-RPC error the tool raises on purpose."""
        raise InvalidParamsError("bad_params: the sheet size is not one this printer takes")

    @server.tool()
    def needs_sampling() -> str:
        """A missing client capability, raised on purpose."""
        raise MissingRequiredClientCapabilityError(
            {"sampling": {}}, "needs_sampling needs the client capability sampling"
        )

    @server.tool()
    async def asks(ctx: Context) -> str:
        """Asks the user, so the first call is an input round, not a failure."""
        try:
            await ctx.elicit("name", "Your name?", {"name": str})
        except Exception:  # a broad except in a tool must not swallow the round
            return "swallowed"
        return "answered"

    @server.tool()
    async def hangs() -> str:
        """Waits until cancelled."""
        await asyncio.Event().wait()
        return "never"

    @server.tool()
    def fine() -> str:
        return "still here"

    @server.resource("failing://report")
    def report() -> str:
        raise LookupError(f"no report in {SECRET}")

    @server.resource("failing://gone")
    def gone() -> str | None:
        return None

    @server.prompt()
    def brief() -> str:
        raise ValueError(f"no brief in {SECRET}")

    return server


def error_id_in(text: str) -> str:
    found = ERROR_ID.search(text)
    assert found is not None, text
    return found.group(1)


def is_error_text(reply: dict[str, Any]) -> str:
    assert "error" not in reply, reply
    result = reply["result"]
    assert result["isError"] is True
    assert result["resultType"] == "complete"
    [block] = result["content"]
    assert block["type"] == "text"
    text: str = block["text"]
    return text


@pytest.mark.parametrize(
    ("tool", "exc_type"), [("explode", "RuntimeError"), ("explode_async", "KeyError")]
)
async def test_an_uncaught_exception_is_is_error_naming_the_tool_with_an_id_and_no_secret(
    wire_factory: Any, caplog: pytest.LogCaptureFixture, tool: str, exc_type: str
) -> None:
    wire = wire_factory(failing_server())
    with caplog.at_level(logging.ERROR, logger="mcpkit.server"):
        reply = await wire.request("tools/call", {"name": tool})
    text = is_error_text(reply)
    error_id = error_id_in(text)
    assert text.startswith(f"tool {tool!r} failed (error id {error_id})")
    assert "hunter2" not in str(reply) and exc_type not in text
    [record] = [r for r in caplog.records if error_id in r.getMessage()]
    assert re.fullmatch(rf"tool {tool!r} failed \(error id {error_id}\) \(\d+ frames of mcpkit "
                        r"calling it left out\)", record.getMessage()), record.getMessage()
    assert record.levelno == logging.ERROR and record.exc_info is not None
    assert record.exc_info[0].__name__ == exc_type
    assert "hunter2" in caplog.text  # the traceback and the message are in the log
    assert (await wire.request("tools/call", {"name": "fine"}))["result"]["content"] == [
        {"type": "text", "text": "still here"}
    ]


@pytest.mark.parametrize(("method", "params", "function"), [
    ("tools/call", {"name": "explode"}, "explode"),
    ("tools/call", {"name": "explode_async"}, "explode_async"),
    ("resources/read", {"uri": "failing://report"}, "report"),
    ("prompts/get", {"name": "brief"}, "brief"),
])
async def test_the_logged_traceback_starts_at_the_handler_not_in_mcpkit(
    wire_factory: Any, caplog: pytest.LogCaptureFixture, method: str, params: dict[str, Any],
    function: str,
) -> None:
    import traceback

    import mcpkit

    wire = wire_factory(failing_server())
    with caplog.at_level(logging.ERROR, logger="mcpkit.server"):
        await wire.request(method, params)
    [record] = [r for r in caplog.records if "failed (error id" in r.getMessage()]
    assert record.exc_info is not None
    frames = traceback.extract_tb(record.exc_info[2])
    package = str(Path(mcpkit.__file__).parent)
    assert frames[0].filename == __file__ and frames[0].name == function
    assert not [f for f in frames if f.filename.startswith(package)], frames
    left_out = int(re.search(r"\((\d+) frames of mcpkit", record.getMessage())[1])  # type: ignore[index]
    assert left_out >= 1  # mcpkit's frames were there (the one running the tool at least)


async def test_each_failure_has_an_id_of_its_own(wire_factory: Any) -> None:
    wire = wire_factory(failing_server())
    ids = {error_id_in(is_error_text(await wire.request("tools/call", {"name": "explode"})))
           for _ in range(5)}
    assert len(ids) == 5


async def test_expose_errors_puts_the_exception_type_and_message_in_the_text(
    wire_factory: Any,
) -> None:
    wire = wire_factory(failing_server(expose=True))
    text = is_error_text(await wire.request("tools/call", {"name": "explode"}))
    error_id = error_id_in(text)
    assert text == (
        f"tool 'explode' failed (error id {error_id}): RuntimeError: cannot connect to {SECRET}"
    )
    text = is_error_text(await wire.request("tools/call", {"name": "explode_async"}))
    assert text.endswith(f"): KeyError: {SECRET!r}")


@pytest.mark.parametrize("expose", [False, True])
async def test_a_tool_error_keeps_its_own_words_either_way(wire_factory: Any, expose: bool) -> None:
    wire = wire_factory(failing_server(expose=expose))
    text = is_error_text(await wire.request("tools/call", {"name": "refuse"}))
    assert text == "the printer is out of paper"


async def test_rpc_errors_a_tool_raises_on_purpose_stay_json_rpc_errors(wire_factory: Any) -> None:
    wire = wire_factory(failing_server(expose=True))
    bad = await wire.request("tools/call", {"name": "bad_params"})
    assert bad["error"] == {
        "code": -32602, "message": "bad_params: the sheet size is not one this printer takes"}
    lacking = await wire.request("tools/call", {"name": "needs_sampling"})
    assert lacking["error"]["code"] == -32021
    assert lacking["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}


async def test_an_input_round_is_no_failure_even_under_a_broad_except(wire_factory: Any) -> None:
    wire = wire_factory(failing_server())
    reply = await wire.request(
        "tools/call", {"name": "asks"},
        **{"io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}},
    )
    result = reply["result"]
    assert result["resultType"] == "input_required" and "isError" not in result
    assert list(result["inputRequests"]) and result["requestState"]


async def test_a_cancelled_tool_sends_nothing_not_even_an_error(wire_factory: Any) -> None:
    wire = wire_factory(failing_server())
    wire.send({"jsonrpc": "2.0", "id": "slow", "method": "tools/call",
               "params": {"name": "hangs", "_meta": wire.meta()}})
    await asyncio.sleep(0)  # the call starts before it is cancelled
    wire.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": "slow", "reason": "no longer needed"}})
    after = await wire.request("tools/call", {"name": "fine"})
    assert after["result"]["content"][0]["text"] == "still here"
    assert wire.inbox.empty() and wire.notifications == []


async def test_a_resource_that_raises_is_a_json_rpc_error_naming_it_with_an_id(
    wire_factory: Any, caplog: pytest.LogCaptureFixture
) -> None:
    wire = wire_factory(failing_server())
    with caplog.at_level(logging.ERROR, logger="mcpkit.server"):
        reply = await wire.request("resources/read", {"uri": "failing://report"})
    error = reply["error"]
    assert error["code"] == -32603
    error_id = error_id_in(error["message"])
    assert error["message"].startswith(f"resource 'failing://report' failed (error id {error_id})")
    assert error["data"] == {"uri": "failing://report", "errorId": error_id}
    assert "hunter2" not in str(reply) and "LookupError" not in str(reply)
    assert f"resource 'failing://report' failed (error id {error_id})" in caplog.text
    assert "LookupError: no report in" in caplog.text
    missing = await wire.request("resources/read", {"uri": "failing://gone"})
    assert missing["error"]["code"] == -32602  # not found stays not found


async def test_a_prompt_that_raises_is_a_json_rpc_error_naming_it_with_an_id(
    wire_factory: Any, caplog: pytest.LogCaptureFixture
) -> None:
    wire = wire_factory(failing_server())
    with caplog.at_level(logging.ERROR, logger="mcpkit.server"):
        reply = await wire.request("prompts/get", {"name": "brief"})
    error = reply["error"]
    assert error["code"] == -32603
    error_id = error_id_in(error["message"])
    assert error["message"].startswith(f"prompt 'brief' failed (error id {error_id})")
    assert error["data"] == {"name": "brief", "errorId": error_id}
    assert "hunter2" not in str(reply)
    assert f"prompt 'brief' failed (error id {error_id})" in caplog.text


async def test_expose_errors_names_the_exception_of_a_resource_and_a_prompt(
    wire_factory: Any,
) -> None:
    wire = wire_factory(failing_server(expose=True))
    read = (await wire.request("resources/read", {"uri": "failing://report"}))["error"]
    assert read["message"].endswith(f"): LookupError: no report in {SECRET}")
    got = (await wire.request("prompts/get", {"name": "brief"}))["error"]
    assert got["message"].endswith(f"): ValueError: no brief in {SECRET}")


async def test_a_legacy_session_gets_the_same_failures(wire_factory: Any) -> None:
    """The 2025-11-25 adapter serves the same handlers, so the same rule reaches its wire."""
    wire = wire_factory(failing_server())
    opened = await wire.request("initialize", {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "legacy-client", "version": "1.0"}}, with_meta=False)
    assert opened["result"]["protocolVersion"] == "2025-11-25"
    wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    tool = await wire.request("tools/call", {"name": "explode", "arguments": {}}, with_meta=False)
    assert tool["result"]["isError"] is True
    assert tool["result"]["content"][0]["text"].startswith("tool 'explode' failed (error id ")
    read = await wire.request("resources/read", {"uri": "failing://report"}, with_meta=False)
    assert read["error"]["code"] == -32603
    assert read["error"]["data"]["errorId"] == error_id_in(read["error"]["message"])


# -- over a real `mcpkit run` subprocess ----------------------------------------------------------


async def test_over_stdio_the_text_and_the_log_line_carry_the_same_id() -> None:
    peer = await StdioPeer.start(FAILING)
    try:
        tool = is_error_text(await peer.request("tools/call", {"name": "explode"}))
        read = (await peer.request("resources/read", {"uri": "failing://report"}))["error"]
        still = await peer.request("tools/call", {"name": "fine"})
    finally:
        code, stderr = await peer.close()
    assert code == 0
    assert still["result"]["content"][0]["text"] == "still here"
    log = stderr.decode()
    for text, head in ((tool, "tool 'explode'"), (read["message"], "resource 'failing://report'")):
        error_id = error_id_in(text)
        assert "hunter2" not in text
        line = f"{head} failed (error id {error_id})"
        assert text.startswith(line)
        after = log[log.index(line):]
        assert after.splitlines()[1] == "Traceback (most recent call last):"
    assert f"RuntimeError: cannot connect to {SECRET}" in log


async def test_over_stdio_expose_errors_shows_the_exception() -> None:
    peer = await StdioPeer.start(FAILING, env={"FAILING_EXPOSE": "1"})
    try:
        text = is_error_text(await peer.request("tools/call", {"name": "explode"}))
    finally:
        code, stderr = await peer.close()
    assert code == 0
    error_id = error_id_in(text)
    assert text.endswith(f"): RuntimeError: cannot connect to {SECRET}")
    assert f"tool 'explode' failed (error id {error_id})" in stderr.decode()


# -- over Streamable HTTP, a real `mcpkit run --http` on 127.0.0.1 ------------------------------


async def test_over_http_a_raising_tool_is_is_error_and_a_raising_resource_is_its_error() -> None:
    server = ServerProcess.start(FAILING)
    try:
        async with httpx.AsyncClient(timeout=20) as client:
            peer = Peer(server.url, client)
            tool = await peer.post(peer.request_message("tools/call", {"name": "explode"}))
            read = await peer.post(
                peer.request_message("resources/read", {"uri": "failing://report"}))
        log = server.output()
    finally:
        server.stop()
    assert tool.status == 200
    text = is_error_text(tool.message)
    assert "hunter2" not in text
    assert f"tool 'explode' failed (error id {error_id_in(text)})" in log
    assert read.status == http_status(InternalError.code)
    assert read.error["code"] == -32603 and "hunter2" not in read.error["message"]
    error_id = error_id_in(read.error["message"])
    assert read.error["data"] == {"uri": "failing://report", "errorId": error_id}
    assert f"resource 'failing://report' failed (error id {error_id})" in log
