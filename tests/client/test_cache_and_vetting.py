"""The TTL cache's rules with an injected clock, and the vetting of untrusted tool definitions."""

from __future__ import annotations

import logging
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from mcpkit.client import Client, ClientOptions
from mcpkit.client.cache import ResultCache
from mcpkit.client.tools import MAX_SCHEMA_DEPTH, MAX_SCHEMA_NODES, risky_pattern, vet_tool
from mcpkit.errors import ProtocolViolation

MakeRaw = Callable[..., Client]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def page(ttl: Any = 1000, **extra: Any) -> dict[str, Any]:
    return {"resultType": "complete", "tools": [], "ttlMs": ttl, "cacheScope": "public", **extra}


# -- the cache --------------------------------------------------------------------------------


def test_a_result_is_fresh_for_ttl_ms_and_then_gone() -> None:
    clock = Clock()
    cache = ResultCache(clock)
    cache.put("tools/list", None, page(1500))
    clock.now += 1.4
    assert cache.get("tools/list") is not None
    clock.now += 0.2
    assert cache.get("tools/list") is None


@pytest.mark.parametrize("ttl", [0, -5, None, "60", 1.5])
def test_zero_negative_missing_or_malformed_ttls_store_nothing(ttl: Any) -> None:
    cache = ResultCache(Clock())
    result = page(ttl)
    if ttl is None:
        del result["ttlMs"]
    cache.put("tools/list", None, result)
    assert len(cache) == 0


def test_entries_are_keyed_by_method_and_shaping_param() -> None:
    cache = ResultCache(Clock())
    cache.put("tools/list", "c1", page(cursor="c1"))
    cache.put("resources/read", "a://x", page())
    assert cache.get("tools/list") is None, "another cursor is another entry"
    assert cache.get("prompts/list", "c1") is None
    assert cache.get("tools/list", "c1") == page(cursor="c1")


def test_list_changed_drops_that_list_and_updated_drops_related_reads() -> None:
    cache = ResultCache(Clock())
    for cursor in (None, "p2"):
        cache.put("tools/list", cursor, page())
        cache.put("prompts/list", cursor, page())
    for uri in ("file:///a", "file:///a/b.txt", "file:///ab", "file:///c"):
        cache.put("resources/read", uri, page())
    cache.invalidate({"method": "notifications/tools/list_changed"})
    assert cache.get("tools/list") is None and cache.get("tools/list", "p2") is None
    assert cache.get("prompts/list") is not None
    cache.invalidate({"method": "notifications/resources/updated",
                      "params": {"uri": "file:///a/b.txt"}})
    assert cache.get("resources/read", "file:///a/b.txt") is None
    assert cache.get("resources/read", "file:///a") is None, "what contains it changed too"
    assert cache.get("resources/read", "file:///ab") is not None
    assert cache.get("resources/read", "file:///c") is not None


def test_the_cache_is_bounded() -> None:
    cache = ResultCache(Clock(), max_entries=3)
    for i in range(10):
        cache.put("resources/read", f"u{i}", page())
    assert len(cache) <= 3 and cache.get("resources/read", "u9") is not None


# -- vetting tool definitions -------------------------------------------------------------


def tool(schema: Any, **extra: Any) -> dict[str, Any]:
    return {"name": "t", "inputSchema": schema, **extra}


def nested(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"x": schema}}
    return schema


@pytest.mark.parametrize(("definition", "reason"), [
    ({"inputSchema": {"type": "object"}}, "no name"),
    (tool(None), "not an object"),
    (tool({"type": "array"}), '"type": "object"'),
    (tool({"type": "object", "properties": {"a": {"$ref": "https://evil.example/s.json"}}}),
     "points outside the schema"),
    (tool({"type": "object", "properties": {"a": {"$ref": "other.json#/x"}}}),
     "points outside the schema"),
    (tool({"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}}),
     "does not resolve"),
    (tool({"type": "object", "properties": {"a": {"$ref": "#nowhere"}}}), "names no $anchor"),
    (tool({"$schema": "https://example.com/dialect", "type": "object"}), "unsupported dialect"),
    (tool({"type": "object", "properties": {"a": {"type": "strin"}}}), "not a valid JSON Schema"),
    (tool(nested(MAX_SCHEMA_DEPTH + 1)), "deeper than"),
    (tool({"type": "object", "properties": {f"p{i}": {"type": "string"}
                                            for i in range(MAX_SCHEMA_NODES + 1)}}),
     "more than"),
    (tool({"type": "object", "properties": {"a": {"type": "number", "x-mcp-header": "A"}}}),
     "x-mcp-header"),
    (tool({"type": "object"}, outputSchema={"$ref": "http://x/y"}), "outputSchema"),
    # A loop that never descends into the value: no validator could finish checking it.
    (tool({"type": "object"}, outputSchema={"$ref": "#/$defs/a",
                                            "$defs": {"a": {"$ref": "#/$defs/a"}}}),
     "leads back to where it started"),
    # Twenty definitions, each referring twice to the next: 2**20 subschemas once followed.
    (tool({"type": "object", "properties": {"v": {"$ref": "#/$defs/d0"}},
           "$defs": {f"d{i}": {"anyOf": [{"$ref": f"#/$defs/d{i + 1}"}] * 2} for i in range(20)}
           | {"d20": {"type": "string"}}}),
     "too costly to check"),
])
def test_unusable_tool_definitions_are_rejected_with_a_reason(
    definition: dict[str, Any], reason: str
) -> None:
    found = vet_tool(definition)
    assert found is not None and reason in found


def test_rich_2020_12_schemas_with_local_references_are_kept() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"id": {"$anchor": "ident", "type": "string", "minLength": 1}},
        "properties": {"a": {"$ref": "#/$defs/id"}, "b": {"$ref": "#ident"},
                       "c": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                       "d": {"type": "string", "x-mcp-header": "Region"}},
        "if": {"required": ["a"]}, "then": {"required": ["b"]},
        "additionalProperties": False,
    }
    assert vet_tool(tool(schema)) is None
    assert vet_tool(tool({"$schema": "http://json-schema.org/draft-07/schema#",
                          "type": "object", "definitions": {"x": {"type": "string"}},
                          "properties": {"x": {"$ref": "#/definitions/x"}}})) is None
    assert vet_tool(tool({"type": "object", "$id": "https://example.com/root",
                          "properties": {"x": {"$ref": "https://example.com/root#/$defs/y"}},
                          "$defs": {"y": {"type": "string"}}})) is None


async def test_the_client_keeps_usable_tools_verbatim_and_reports_the_rest(
    raw_client: MakeRaw,
) -> None:
    from helpers.client.raw_server import TOOLS

    client = raw_client("modern")
    tools = await client.list_tools()
    assert [t["name"] for t in tools] == ["plain", "with_refs", "typed_out", "bad_output"]
    assert tools[1] == TOOLS[1], "every keyword preserved"
    rejected = {r.name: r.reason for r in client.rejected_tools}
    assert set(rejected) == {"remote_ref", "not_object", "(unnamed)", "bad_header",
                             "bad_dialect", "invalid_schema"}
    assert "remote references are never fetched" in rejected["remote_ref"]


async def test_a_fresh_tool_list_is_served_from_the_cache_until_bypassed(
    raw_client: MakeRaw,
) -> None:
    client = raw_client("modern")
    await client.list_tools()
    await client.list_tools()
    assert len(client.tap.requests("tools/list")) == 1  # type: ignore[attr-defined]
    assert client.rejected_tools, "rejections are remembered with the cached page"
    await client.list_tools(fresh=True)
    assert len(client.tap.requests("tools/list")) == 2  # type: ignore[attr-defined]
    uncached = raw_client("modern", options=ClientOptions(cache=False))
    await uncached.list_tools()
    await uncached.list_tools()
    assert len(uncached.tap.requests("tools/list")) == 2  # type: ignore[attr-defined]


async def test_structured_content_is_checked_against_the_output_schema_when_asked(
    raw_client: MakeRaw,
) -> None:
    client = raw_client("modern", options=ClientOptions(validate_output=True))
    await client.list_tools()
    assert (await client.call_tool("typed_out"))["structuredContent"] == {"n": 1}
    with pytest.raises(ProtocolViolation, match=r"'bad_output'.*outputSchema at n"):
        await client.call_tool("bad_output")
    trusting = raw_client("modern")
    await trusting.list_tools()
    assert (await trusting.call_tool("bad_output"))["structuredContent"] == {"n": "one"}


@contextmanager
def deadline(seconds: int, what: str) -> Iterator[None]:
    """Fails the test when the body has not returned after `seconds`.

    A regex holds the interpreter lock while it backtracks, so no thread or task could time it
    out; `re` does check for signals while it runs, so an alarm interrupts it.
    """

    def expired(signum: int, frame: Any) -> None:
        raise AssertionError(f"{what} did not return within {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    # The suite's per-test timeout (pytest-timeout) runs on the same timer: put it back after.
    outer, _ = signal.setitimer(signal.ITIMER_REAL, seconds)
    started = time.monotonic()
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer:
            signal.setitimer(signal.ITIMER_REAL, max(outer - (time.monotonic() - started), 0.001))


async def test_a_server_regex_prone_to_backtracking_never_hangs_the_output_check(
    raw_client: MakeRaw, caplog: pytest.LogCaptureFixture,
) -> None:
    client = raw_client("regex", options=ClientOptions(validate_output=True))
    with caplog.at_level(logging.WARNING, logger="mcpkit.client"):
        tools = await client.list_tools()
        assert {"nested", "keys"} <= {t["name"] for t in tools}
        with deadline(10, "checking 'nested'"):
            result = await client.call_tool("nested")
        assert result["structuredContent"] == {"s": "a" * 40 + "!"}
        with deadline(10, "checking 'keys'"):
            await client.call_tool("keys")
        await client.call_tool("nested")
    warnings = [r.getMessage() for r in caplog.records if "not checked" in r.getMessage()]
    assert len(warnings) == 2, "one warning per tool, not per call"
    assert "'nested'" in warnings[0] and "'^(a+)+$'" in warnings[0]
    assert "'keys'" in warnings[1] and "'^(a|aa)+$'" in warnings[1]


async def test_ordinary_output_patterns_are_still_enforced(raw_client: MakeRaw) -> None:
    client = raw_client("regex", options=ClientOptions(validate_output=True))
    await client.list_tools()
    assert (await client.call_tool("word", {"s": "abc"}))["structuredContent"] == {"s": "abc"}
    with pytest.raises(ProtocolViolation, match=r"'word'.*outputSchema at s.*does not match"):
        await client.call_tool("word", {"s": "ABC"})
    assert (await client.call_tool("month", {"s": "2024-07"}))["structuredContent"]
    with pytest.raises(ProtocolViolation, match=r"'month'.*outputSchema at s"):
        await client.call_tool("month", {"s": "July"})
    assert [t["name"] for t in await client.list_tools()] == ["nested", "keys", "word", "month"]
    rejected = {r.name: r.reason for r in client.rejected_tools}
    assert "'(unclosed' does not compile" in rejected["broken_key"]


@pytest.mark.parametrize(("pattern", "risky"), [
    ("^(a+)+$", True), ("(a|aa)*", True), ("^(\\w+\\s?)*$", True), ("(a+){2,30}", True),
    ("(?=(x*)*y)", True), ("(?>(a|aa)+)", True),
    ("^[a-z]+$", False), ("\\d{4}-\\d{2}", False), ("^(https?|ftp)://", False),
    ("(?:x|y)+", False), ("^(ab){3}$", False),
])
def test_regexes_prone_to_catastrophic_backtracking_are_found_by_their_shape(
    pattern: str, risky: bool,
) -> None:
    schema = {"type": "object", "properties": {"s": {"type": "string", "pattern": pattern}}}
    assert (risky_pattern(schema) == pattern) is risky
    keys = {"type": "object", "patternProperties": {pattern: {}}}
    assert (risky_pattern(keys) == pattern) is risky


def test_only_regex_places_count_as_patterns() -> None:
    names = {"type": "object", "properties": {"pattern": {"type": "string"},
                                               "patternProperties": {"type": "object"}}}
    assert risky_pattern(names) is None
    data = {"type": "object", "const": {"pattern": "(a+)+"}, "default": {"pattern": "(a+)+"}}
    assert risky_pattern(data) is None
    under_defs = {"$defs": {"x": {"pattern": "(a+)+"}}, "$ref": "#/$defs/x"}
    assert risky_pattern(under_defs) == "(a+)+"


def test_a_deadline_gives_the_suites_own_timer_back() -> None:
    """The per-test timeout shares SIGALRM's timer: a deadline must not switch it off."""
    signal.setitimer(signal.ITIMER_REAL, 300)
    try:
        with deadline(10, "nothing"):
            pass
        remaining, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 0 < remaining <= 300
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
