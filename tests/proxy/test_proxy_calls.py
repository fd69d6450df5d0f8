"""Calls through the proxy, for each era of upstream and each era of caller: what the upstream
lists is what the proxy lists, its tools, resources, prompts and completion answer through it,
and its questions, progress and log messages reach the caller in the caller's era."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.proxy.proxied import Proxied, answer_form, answer_sample

from mcpkit import Client, InvalidParamsError, RPCError
from mcpkit.errors import MissingRequiredClientCapabilityError


def _tool_calls(client: Client) -> list[dict[str, Any]]:
    tap = client._core.connector.tap  # type: ignore[union-attr]
    return tap.requests("tools/call")  # type: ignore[no-any-return]


async def test_the_proxy_lists_what_the_upstream_lists(proxied: Proxied, client_era: str) -> None:
    upstream = proxied.upstream
    async with proxied.client(client_era) as client:
        tools = {t.name: t for t in await client.list_tools()}
        assert set(tools) == set(upstream.tools)
        for name, tool in upstream.tools.items():
            wire = {k: v for k, v in tools[name].raw.items() if k != "execution"}
            assert wire == tool.definition, name
        resources = await client.list_resources()
        assert [r.raw for r in resources] == [r.definition for r in upstream.resources.values()]
        templates = await client.list_resource_templates()
        assert [t.raw for t in templates] == [t.definition for t in upstream.templates]
        prompts = {p.name: p.raw for p in await client.list_prompts()}
        assert prompts == {n: p.definition for n, p in upstream.prompts.items()}
        assert prompts["letter"]["arguments"] == [
            {"name": "first-name", "description": "Who it is for", "required": True}]


async def test_a_proxy_serves_under_the_upstreams_name_and_instructions(
        proxied: Proxied, client_era: str) -> None:
    async with proxied.client(client_era) as client:
        info = await client.discover()
        assert client.server_info == {"name": "upstream", "version": "3.1.4",
                                      "title": "The proxied server"}
        assert client.instructions == "A server the proxy's tests stand behind."
        assert set(info["capabilities"]) >= {"tools", "resources", "prompts", "completions"}


async def test_tools_resources_prompts_and_completion_answer_through_the_proxy(
        proxied: Proxied, client_era: str) -> None:
    async with proxied.client(client_era) as client:
        assert (await client.call_tool("echo", {"text": "hi"})).text == "hi"
        added = await client.call_tool("add", {"a": 2, "b": 3})
        assert added.structured == {"sum": 5} and not added.is_error
        assert (await client.read_resource("notes://board")).text == "the board"
        read = await client.read_resource("notes://item/7")
        assert read.text == "item 7" and read.contents[0].uri == "notes://item/7"
        welcome = await client.get_prompt("welcome", {"name": "Ada"})
        assert welcome.messages[0].content.text == "Welcome, Ada!"  # type: ignore[union-attr]
        letter = await client.get_prompt("letter", {"first-name": "Grace"})
        assert [m.role for m in letter.messages] == ["user", "assistant"]
        assert letter.messages[0].content.text == "Dear Grace,"  # type: ignore[union-attr]
        done = await client.complete({"type": "ref/prompt", "name": "welcome"}, "name", "a")
        assert done["values"] == ["Ada", "Alan"]


async def test_arguments_the_upstream_would_refuse_are_refused_by_the_proxy(
        proxied: Proxied, client_era: str) -> None:
    async with proxied.client(client_era) as client:
        refused = await client.call_tool("add", {"a": "two", "b": 3})
        assert refused.is_error and "'add'" in refused.text
        assert proxied.upstream_tap.requests("tools/call") == []  # never went upstream


async def test_an_upstream_error_reaches_the_caller_as_its_own(proxied: Proxied,
                                                               client_era: str) -> None:
    async with proxied.client(client_era) as client:
        with pytest.raises(InvalidParamsError) as raised:
            await client.call_tool("refuse")
    assert raised.value.message == "refuse: refused by the upstream"
    assert raised.value.data == {"why": "always"}


async def test_what_the_upstream_would_refuse_the_proxy_refuses_as_it_would(
        proxied: Proxied, client_era: str) -> None:
    async with proxied.client(client_era) as client:
        with pytest.raises(InvalidParamsError) as raised:
            await client.get_prompt("welcome", {})
        assert "missing required argument(s): name" in raised.value.message
        with pytest.raises(InvalidParamsError, match="Unknown tool"):
            await client.call_tool("no_such_tool")


async def test_a_tool_that_asks_twice_takes_two_rounds_in_the_callers_era(
        proxied: Proxied, client_era: str) -> None:
    asked: list[str] = []

    def elicit(request: Any) -> dict[str, Any]:
        asked.append(request.message)
        return answer_form(request)

    progress: list[tuple[Any, ...]] = []
    logs: list[tuple[Any, ...]] = []
    async with proxied.client(client_era, elicit=elicit,
                              on_log=lambda *a: logs.append(a)) as client:
        result = await client.call_tool("greet", progress=lambda *a: progress.append(a))
        assert result.text == "HELLO, ADA!"
        assert asked == ["Who are you?", "Shout at Ada?"]
        sent = _tool_calls(client)
        assert len(sent) == (3 if client_era == "modern" else 1)
        if client_era == "modern":  # the retries carry the sealed state of each round
            assert all(isinstance(m["params"].get("requestState"), str) for m in sent[1:])
        assert progress and all(p[1] == 3 for p in progress)
        assert ("info", "greeting someone", "upstream") in logs


async def test_a_declined_question_is_the_upstreams_to_answer(proxied: Proxied,
                                                              client_era: str) -> None:
    async with proxied.client(client_era,
                              elicit=lambda request: {"action": "decline"}) as client:
        assert (await client.call_tool("greet")).text == "Hello, stranger!"


async def test_sampling_and_roots_questions_reach_the_caller(proxied: Proxied,
                                                             client_era: str) -> None:
    roots = [{"uri": "file:///work", "name": "work"}]
    async with proxied.client(client_era, sample=answer_sample, roots=roots) as client:
        assert (await client.call_tool("pick")).text == "Paris in file:///work"


async def test_a_question_the_caller_cannot_answer_is_refused(proxied: Proxied,
                                                              client_era: str) -> None:
    async with proxied.client(client_era) as client:  # no elicitation handler
        with pytest.raises(RPCError) as raised:
            await client.call_tool("greet")
    if proxied.upstream_era == "modern":
        # The caller's capabilities travel upstream with the call: the upstream refuses.
        assert isinstance(raised.value, MissingRequiredClientCapabilityError)
        assert "elicitation" in raised.value.message
    else:
        # A 2025-11-25 upstream asked anyway; the proxy refused its request, naming why, and
        # the upstream's call failed on that.
        assert raised.value.code == -32603
        assert "the proxy cannot ask this: its caller did not declare elicitation" in (
            raised.value.message)
