"""`Client.request`: a call sent by hand, in each era, answered as the server sent it: an
`input_required` round comes back unanswered (a proxy answers it itself), the call's progress
and log messages reach `progress=` and `log=`, and `timeout=` bounds the wait."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from mcpkit import Context, Elicit, Server
from mcpkit.client import Client, ClientOptions
from mcpkit.errors import RequestTimeoutError


def server() -> Server:
    srv = Server("by-hand")

    @srv.tool()
    async def ask(ctx: Context) -> str:
        await ctx.report_progress(1, 2, "before asking")
        await ctx.warning("about to ask", logger="by-hand")
        answer = (await ctx.ask({"who": Elicit("Who?", {"name": str})}))["who"]
        return f"hi {answer['name']}"

    @srv.tool()
    async def stall() -> str:
        await asyncio.sleep(60)
        return "late"

    return srv


async def test_a_round_comes_back_unanswered_and_the_retry_completes_it(
        memory_client: Callable[..., Client]) -> None:
    client = memory_client(server(), elicit=lambda request: {"action": "decline"},
                           options=ClientOptions(era="modern"))
    progress: list[tuple[Any, ...]] = []
    logs: list[tuple[Any, ...]] = []
    asked = await client.request("tools/call", {"name": "ask"},
                                 progress=lambda *a: progress.append(a),
                                 log=lambda *a: logs.append(a), log_level="warning")
    assert asked["resultType"] == "input_required"
    assert asked["inputRequests"]["who"]["method"] == "elicitation/create"
    assert progress == [(1, 2, "before asking")]
    assert logs == [("warning", "about to ask", "by-hand")]
    sent = client.tap.requests("tools/call")[-1]["params"]["_meta"]
    assert sent["io.modelcontextprotocol/logLevel"] == "warning" and "progressToken" in sent
    done = await client.request("tools/call", {
        "name": "ask", "requestState": asked["requestState"],
        "inputResponses": {"who": {"action": "accept", "content": {"name": "Ada"}}}})
    assert done["content"][0]["text"] == "hi Ada"


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_timeout_bounds_the_wait_of_a_request_by_hand(
        memory_client: Callable[..., Client], era: str) -> None:
    client = memory_client(server(), options=ClientOptions(era=era))  # type: ignore[arg-type]
    with pytest.raises(RequestTimeoutError):
        await client.request("tools/call", {"name": "stall"}, timeout=0.2)
