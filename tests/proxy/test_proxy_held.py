"""Held calls: a 2025-11-25 upstream's call kept running by the proxy between its 2026-07-28
caller's rounds. What the caller holds is a sealed `requestState` naming the call; a call
nobody answers is cancelled upstream after `hold_s`, and a retry after that is told it is gone;
a retry answers its round once; cancelling the caller cancels the upstream call; overlapping
calls each hold a connection of their own, so each question reaches the caller it is for."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest
from helpers.proxy.proxied import Proxied, answer_form

from mcpkit import InputRequest
from mcpkit.errors import (
    InternalError,
    InvalidParamsError,
    RPCError,
)

WAIT_S = 10.0
"""The bound on every wait for something a test started to happen."""


def held_proxy(**options: Any) -> Proxied:
    return Proxied("legacy", **options)


async def first_round(proxied: Proxied, client: Any, tool: str, arguments: dict[str, Any]
                      ) -> dict[str, Any]:
    """A call's first round, driven by hand: the proxy's `input_required` as it came."""
    result = await client.request("tools/call", {"name": tool, "arguments": arguments})
    assert result["resultType"] == "input_required", result
    return result  # type: ignore[no-any-return]


async def retry(client: Any, tool: str, arguments: dict[str, Any], state: str,
                responses: dict[str, Any]) -> dict[str, Any]:
    return await client.request("tools/call", {  # type: ignore[no-any-return]
        "name": tool, "arguments": arguments, "requestState": state,
        "inputResponses": responses})


async def test_the_state_of_a_held_round_is_sealed_and_names_the_held_call() -> None:
    proxied = held_proxy()
    async with proxied.proxy, proxied.client("modern", elicit=answer_form) as client:
        asked = await first_round(proxied, client, "confirm", {"tag": "t1"})
        (key, request), = asked["inputRequests"].items()
        assert request["method"] == "elicitation/create"
        assert request["params"]["message"] == "Go ahead with t1?"
        token = asked["requestState"]
        (held_id,) = proxied.proxy.held._calls  # the one call this process holds
        assert held_id not in token  # sealed, not merely encoded
        opened = proxied.proxy.sealer.open_state(token, None, "tools/call", "confirm",
                                                 {"tag": "t1"}, "test")
        kept = orjson.loads(opened.body)["s"]
        assert kept["h"] == held_id and kept["at"] == proxied.proxy.relay.origin
        assert kept["round"] == 1 and list(kept["asked"]) == [key]
        with pytest.raises(InvalidParamsError, match="integrity"):  # one character changed
            await retry(client, "confirm", {"tag": "t1"}, token[:-2] + "AA",
                        {key: {"action": "accept", "content": {"ok": True}}})
        with pytest.raises(InvalidParamsError, match="arguments"):  # other arguments
            await retry(client, "confirm", {"tag": "t2"}, token,
                        {key: {"action": "accept", "content": {"ok": True}}})
        done = await retry(client, "confirm", {"tag": "t1"}, token,
                           {key: {"action": "accept", "content": {"ok": True}}})
        assert done["content"][0]["text"] == "t1: yes"
        assert len(proxied.proxy.held) == 0
    proxied.assert_clean()


async def test_a_held_call_nobody_answers_is_cancelled_upstream_and_its_retry_is_told_so(
) -> None:
    proxied = held_proxy(hold_s=0.2)
    cancelled = proxied.upstream_tap.seen("notifications/cancelled")

    async def elicit_late(request: InputRequest) -> dict[str, Any]:
        await cancelled.wait()  # the user answers only once the hold is over
        return answer_form(request)

    async with proxied.proxy, proxied.client("modern", elicit=elicit_late) as client:
        async with asyncio.timeout(WAIT_S):
            with pytest.raises(InvalidParamsError) as raised:  # HeldCallGoneError, -32602
                await client.call_tool("confirm", {"tag": "late"})
        cancel = next(m for m in proxied.upstream_tap.sent if m.get("method") == "notifications/cancelled")
        call_id = proxied.upstream_tap.requests("tools/call")[-1]["id"]
        assert cancel["params"]["requestId"] == call_id  # the held call, cancelled upstream
        assert "no longer held" in raised.value.message
        assert "0.2 s" in raised.value.message and "without the requestState" in (
            raised.value.message)
        assert len(proxied.proxy.held) == 0
        # The connection the call held is free again: the next call goes through.
        assert (await client.call_tool("echo", {"text": "after"})).text == "after"
    proxied.assert_clean()


async def test_a_retry_answers_its_round_once() -> None:
    proxied = held_proxy()
    async with proxied.proxy, proxied.client("modern", elicit=answer_form) as client:
        asked = await first_round(proxied, client, "greet", {})
        (key,) = asked["inputRequests"]
        who = {key: {"action": "accept", "content": {"name": "Ada"}}}
        second = await retry(client, "greet", {}, asked["requestState"], who)
        assert second["resultType"] == "input_required"
        assert second["inputRequests"][next(iter(second["inputRequests"]))]["params"][
            "message"] == "Shout at Ada?"
        with pytest.raises(InvalidParamsError, match="answered once"):
            await retry(client, "greet", {}, asked["requestState"], who)
        (loud,) = second["inputRequests"]
        done = await retry(client, "greet", {}, second["requestState"],
                           {loud: {"action": "accept", "content": {"loud": False}}})
        assert done["content"][0]["text"] == "Hello, Ada!"
    proxied.assert_clean()


@pytest.mark.parametrize("upstream_era", ["modern", "legacy"])
async def test_cancelling_a_call_cancels_it_upstream(upstream_era: str, client_era: str) -> None:
    proxied = Proxied(upstream_era)
    events = proxied.upstream.events
    async with proxied.proxy, proxied.client(client_era) as client:
        call = asyncio.ensure_future(client.call_tool("wait_here", {"tag": "c"}))
        async with asyncio.timeout(WAIT_S):
            await events["started:c"].wait()
            call.cancel()
            await events["cancelled:c"].wait()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert (await client.call_tool("echo", {"text": "still here"})).text == "still here"
    proxied.assert_clean()


async def test_cancelling_a_retry_that_waits_on_its_held_call_cancels_the_upstream_call(
) -> None:
    proxied = held_proxy()
    events = proxied.upstream.events
    async with proxied.proxy, proxied.client("modern", elicit=answer_form) as client:
        call = asyncio.ensure_future(
            client.call_tool("confirm", {"tag": "w", "then_wait": True}))
        async with asyncio.timeout(WAIT_S):
            await events["started:w"].wait()  # answered: the retry now waits on the call
            call.cancel()
            await events["cancelled:w"].wait()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert len(proxied.proxy.held) == 0
    proxied.assert_clean()


async def test_overlapping_calls_each_hold_a_connection_so_each_question_reaches_its_caller(
) -> None:
    proxied = held_proxy()
    both = asyncio.Event()
    arrived: list[str] = []

    async def elicit(request: InputRequest) -> dict[str, Any]:
        arrived.append(request.message)
        if len(arrived) == 2:
            both.set()
        await both.wait()  # neither is answered until both calls are held
        return {"action": "accept", "content": {"ok": "yes" in request.message}}

    async with proxied.proxy:
        async with proxied.client("modern", elicit=elicit) as one, proxied.client(
                "legacy", elicit=elicit) as two:
            async with asyncio.timeout(WAIT_S):
                results = await asyncio.gather(
                    one.call_tool("confirm", {"tag": "yes-one"}),
                    two.call_tool("confirm", {"tag": "no-two"}))
        assert [r.text for r in results] == ["yes-one: yes", "no-two: no"]
        assert sorted(arrived) == ["Go ahead with no-two?", "Go ahead with yes-one?"]
        assert proxied.proxy.upstream.connections == 2
    proxied.assert_clean()


async def test_a_call_past_the_connection_limit_waits_then_is_refused_naming_the_limit() -> None:
    proxied = held_proxy(connections=1, wait_s=0.2)
    async with proxied.proxy, proxied.client("modern", elicit=answer_form) as client:
        asked = await first_round(proxied, client, "confirm", {"tag": "hold"})
        with pytest.raises(InternalError) as raised:
            await client.call_tool("echo", {"text": "x"})
        assert "busy" in raised.value.message and "ProxyOptions.connections" in (
            raised.value.message)
        (key,) = asked["inputRequests"]
        done = await retry(client, "confirm", {"tag": "hold"}, asked["requestState"],
                           {key: {"action": "accept", "content": {"ok": True}}})
        assert done["content"][0]["text"] == "hold: yes"
        assert (await client.call_tool("echo", {"text": "x"})).text == "x"
    proxied.assert_clean()


async def test_a_modern_upstreams_round_is_passed_through_its_state_sealed_inside() -> None:
    proxied = Proxied("modern")
    async with proxied.proxy, proxied.client("modern", elicit=answer_form) as client:
        asked = await first_round(proxied, client, "confirm", {"tag": "m"})
        assert list(asked["inputRequests"]) == ["go"]  # the upstream's own key
        upstream_states = [m["result"].get("requestState")
                           for d, m in proxied.upstream_tap.messages
                           if d == "receive" and "result" in m]
        upstream_state = next(s for s in upstream_states if s)
        assert asked["requestState"] != upstream_state
        assert len(proxied.proxy.held) == 0  # nothing is held for a 2026-07-28 upstream
        done = await retry(client, "confirm", {"tag": "m"}, asked["requestState"],
                           {"go": {"action": "accept", "content": {"ok": True}}})
        assert done["content"][0]["text"] == "m: yes"
        retried = proxied.upstream_tap.requests("tools/call")[-1]["params"]
        assert retried["requestState"] == upstream_state
        assert retried["inputResponses"] == {"go": {"action": "accept", "content": {"ok": True}}}
    proxied.assert_clean()


async def test_an_upstream_that_dies_while_its_call_is_held_fails_the_retry_clearly() -> None:
    proxied = held_proxy()
    async with proxied.proxy, proxied.client("modern", elicit=answer_form) as client:
        asked = await first_round(proxied, client, "confirm", {"tag": "dead"})
        (connection,) = [c for c in (proxied.proxy.upstream._main, *proxied.proxy.upstream._others)
                         if c is not None and c.current is not None]
        transport = connection.client.transport
        assert transport is not None
        await transport.close()  # the upstream connection goes away under the held call
        (key,) = asked["inputRequests"]
        with pytest.raises(RPCError) as raised:
            await retry(client, "confirm", {"tag": "dead"}, asked["requestState"],
                        {key: {"action": "accept", "content": {"ok": True}}})
        assert raised.value.code == -32603
        assert "the connection to the upstream server failed" in raised.value.message
    proxied.assert_clean()
