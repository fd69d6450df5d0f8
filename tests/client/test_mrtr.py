"""The multi round-trip loop against a real subprocess that answers `input_required` by hand."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest
from helpers.client.raw_server import ECHO_STATE, TRICKY_STATE

from mcpkit.client import Client, ClientOptions, InputRequest, InputRoundsExceededError
from mcpkit.errors import ProtocolViolation

MakeRaw = Callable[..., Client]


def answer_name(*names: str) -> Callable[[InputRequest], dict[str, Any]]:
    queue = list(names)
    asked: list[InputRequest] = []

    def elicit(request: InputRequest) -> dict[str, Any]:
        asked.append(request)
        return {"action": "accept", "content": {"name": queue.pop(0)}}

    elicit.asked = asked  # type: ignore[attr-defined]
    return elicit


async def sample(request: InputRequest) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "Paris"},
            "model": "test-model", "stopReason": "endTurn"}


def calls(client: Client, tool: str) -> list[dict[str, Any]]:
    tap = client.tap  # type: ignore[attr-defined]
    return [m for m in tap.requests("tools/call") if m["params"]["name"] == tool]


async def test_a_server_that_asks_twice_gets_two_rounds_and_its_exact_state(
    raw_client: MakeRaw,
) -> None:
    elicit = answer_name("Ada", "Lovelace")
    client = raw_client("modern", elicit=elicit)
    result = await client.call_tool("ask_twice")
    assert result["structuredContent"]["name"] == "Ada Lovelace"
    sent = calls(client, "ask_twice")
    assert len(sent) == 3
    assert len({m["id"] for m in sent}) == 3, "each round uses a new id"
    assert "requestState" not in sent[0]["params"]
    assert sent[1]["params"]["requestState"] == "s1"
    assert sent[2]["params"]["requestState"] == TRICKY_STATE + "Ada"
    assert list(sent[1]["params"]["inputResponses"]) == ["first"]
    assert list(sent[2]["params"]["inputResponses"]) == ["second"]
    assert [r.key for r in elicit.asked] == ["first", "second"]  # type: ignore[attr-defined]
    assert elicit.asked[0].origin == "tools/call 'ask_twice'"  # type: ignore[attr-defined]


async def test_elicitation_and_sampling_asked_at_once_are_answered_together(
    raw_client: MakeRaw,
) -> None:
    client = raw_client("modern", elicit=answer_name("Grace"), sample=sample)
    result = await client.call_tool("elicit_and_sample")
    assert result["structuredContent"]["who"] == "Grace"
    assert result["structuredContent"]["capital"] == "Paris"
    retry = calls(client, "elicit_and_sample")[1]["params"]
    assert set(retry["inputResponses"]) == {"who", "capital"}
    assert "requestState" not in retry, "no requestState was given, none is invented"


async def test_a_request_state_only_result_is_retried_at_once_with_the_state_alone(
    raw_client: MakeRaw,
) -> None:
    client = raw_client("modern")
    result = await client.call_tool("state_only")
    seen = result["structuredContent"]
    assert seen["requestState"] == "opaque+/=="
    assert seen["hasInputResponses"] is False


async def test_request_state_is_echoed_byte_for_byte(raw_client: MakeRaw, raw_log: Any) -> None:
    confirm = {"action": "accept", "content": {"confirmed": True}}
    client = raw_client("modern", elicit=lambda r: confirm)
    result = await client.call_tool("echo_state")
    assert result["structuredContent"]["requestState"] == ECHO_STATE
    # What arrived at the server, as bytes decoded by the server itself.
    received = [json.loads(line.split(" ", 1)[1]) for line in raw_log.read_text().splitlines()]
    retries = [m for m in received if m.get("method") == "tools/call"
               and "requestState" in m["params"]]
    assert [m["params"]["requestState"] for m in retries] == [ECHO_STATE]


async def test_state_and_responses_stay_with_their_own_request(raw_client: MakeRaw) -> None:
    """An unrelated call made while the first waits for input carries neither (MRTR-15)."""
    gate = asyncio.Event()
    unrelated: dict[str, Any] = {}

    async def elicit(request: InputRequest) -> dict[str, Any]:
        unrelated.update((await client.call_tool("plain"))["structuredContent"])
        gate.set()
        return {"action": "accept", "content": {"confirmed": True}}

    client = raw_client("modern", elicit=elicit)
    result = await client.call_tool("echo_state")
    assert gate.is_set()
    assert unrelated["hasRequestState"] is False and unrelated["hasInputResponses"] is False
    assert result["structuredContent"]["requestState"] == ECHO_STATE


async def test_a_missing_form_default_is_filled_before_answering(raw_client: MakeRaw) -> None:
    client = raw_client("modern", elicit=answer_name("Linus"))
    result = await client.call_tool("defaults")
    content = result["structuredContent"]["inputResponses"]["form"]["content"]
    assert content == {"name": "Linus", "age": 30, "verified": True}


async def test_a_default_that_breaks_its_own_field_is_ignored_not_the_whole_form(
    raw_client: MakeRaw,
) -> None:
    asked: list[InputRequest] = []

    def elicit(request: InputRequest) -> dict[str, Any]:
        asked.append(request)
        return {"action": "accept", "content": {"email": "ada@example.com"}}

    client = raw_client("modern", elicit=elicit)
    result = await client.call_tool("bad_defaults")
    properties = asked[0].schema["properties"]
    assert "default" not in properties["email"] and "default" not in properties["age"]
    assert properties["age"]["maximum"] == 130, "the field's limits stay"
    assert properties["city"]["default"] == "Oslo", "a default that fits is kept"
    content = result["structuredContent"]["inputResponses"]["form"]["content"]
    assert content == {"email": "ada@example.com", "city": "Oslo"}, "200 is never sent"


async def test_a_round_asking_more_than_the_cap_is_refused_naming_count_and_limit(
    raw_client: MakeRaw,
) -> None:
    client = raw_client("modern", elicit=answer_name(*["x"] * 40))
    result = await client.call_tool("many_inputs", {"count": 32})
    assert result["structuredContent"]["answered"] == 32
    with pytest.raises(ProtocolViolation, match=r"'many_inputs'.*asks for 33 inputs in one "
                                                r"round; at most 32"):
        await client.call_tool("many_inputs", {"count": 33})
    assert len(calls(client, "many_inputs")) == 3, "nothing was answered for the refused round"


async def test_url_mode_and_roots_go_to_their_own_handlers(raw_client: MakeRaw) -> None:
    seen: list[InputRequest] = []

    def elicit_url(request: InputRequest) -> dict[str, Any]:
        seen.append(request)
        return {"action": "accept"}

    roots = [{"uri": "file:///home/me/project", "name": "project"}]
    client = raw_client("modern", elicit_url=elicit_url, roots=roots)
    url = await client.call_tool("url")
    assert seen[0].mode == "url" and seen[0].url == "https://example.com/login"
    assert url["structuredContent"]["inputResponses"]["login"] == {"action": "accept"}
    listed = await client.call_tool("roots")
    assert listed["structuredContent"]["inputResponses"]["r"] == {"roots": roots}
    caps = calls(client, "url")[0]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
    assert caps == {"elicitation": {"url": {}}, "roots": {}}


async def test_prompts_and_reads_take_rounds_and_the_retried_read_is_not_cached(
    raw_client: MakeRaw,
) -> None:
    client = raw_client("modern", elicit=answer_name("owls", "yes", "yes"))
    prompt = await client.get_prompt("topic")
    assert prompt["messages"][0]["content"]["text"] == "About owls"
    first = await client.read_resource("mrtr://needs-input")
    second = await client.read_resource("mrtr://needs-input")
    assert first["contents"][0]["text"] == second["contents"][0]["text"] == "after input"
    reads = client.tap.requests("resources/read")  # type: ignore[attr-defined]
    assert len(reads) == 4, "a result reached through input rounds is never served from cache"


async def test_a_task_for_a_request_that_did_not_declare_tasks_is_an_error(
        raw_client: MakeRaw) -> None:
    client = raw_client("modern")
    with pytest.raises(ProtocolViolation, match=r"did not declare io\.modelcontextprotocol/tasks"):
        await client.call_tool("weird_type")


async def test_a_server_that_never_stops_asking_hits_the_round_limit(raw_client: MakeRaw) -> None:
    client = raw_client("modern", options=ClientOptions(max_rounds=3))
    with pytest.raises(InputRoundsExceededError, match="after 3 rounds"):
        await client.call_tool("endless")
    sent = calls(client, "endless")
    assert len(sent) == 4
    # Each retry carries the state of the round before it, never an older one.
    assert [m["params"].get("requestState") for m in sent] == [
        None, f"again-{sent[0]['id']}", f"again-{sent[1]['id']}", f"again-{sent[2]['id']}"]


async def test_without_handlers_nothing_is_declared_and_a_server_asking_anyway_is_reported(
    raw_client: MakeRaw,
) -> None:
    client = raw_client("modern")
    with pytest.raises(ProtocolViolation, match="did not declare"):
        await client.call_tool("elicit_and_sample")
    first = calls(client, "elicit_and_sample")[0]
    assert first["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] == {}
    assert len(calls(client, "elicit_and_sample")) == 1, "no retry without the answers"


async def test_a_handler_that_declines_sends_the_decline(raw_client: MakeRaw) -> None:
    client = raw_client("modern", elicit=lambda r: {"action": "decline"})
    result = await client.call_tool("no_state")
    assert result["structuredContent"]["inputResponses"] == {"ok": {"action": "decline"}}
    assert result["structuredContent"]["hasRequestState"] is False
