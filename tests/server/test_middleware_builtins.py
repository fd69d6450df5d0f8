"""The links mcpkit ships: rate limiting (per caller, windows on the server's clock, its answer
and wait), response caching by the results' own `ttlMs`/`cacheScope`, and timing on the
request's OpenTelemetry span. Requests are written on the wire (`ServerWire`), so no client
cache stands between the test and the server; every message is schema-checked."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.client.schema_tap import SchemaTap

from mcpkit import Context, Server, ServerOptions
from mcpkit.server.middleware import (
    RateLimitingMiddleware,
    ResponseCachingMiddleware,
    TimingMiddleware,
    by_client,
)
from mcpkit.server.resources import CacheHint
from mcpkit.store.sqlite import SQLiteStore
from mcpkit.testing import ServerWire

pytestmark = pytest.mark.asyncio


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def counted_server(clock: Clock) -> tuple[Server, dict[str, int]]:
    server = Server("cached", options=ServerOptions(clock=clock))
    runs = {"read": 0, "private": 0, "tool": 0}

    @server.resource("data://shared", cache=CacheHint(30_000, "public"))
    def shared() -> str:
        runs["read"] += 1
        return f"shared {runs['read']}"

    @server.resource("data://mine", cache=CacheHint(30_000, "private"))
    def mine() -> str:
        runs["private"] += 1
        return f"mine {runs['private']}"

    @server.resource("data://fresh")
    def fresh() -> str:
        return "always read"  # read_cache's ttlMs 0: never kept

    @server.tool()
    def ping() -> str:
        runs["tool"] += 1
        return "pong"

    return server, runs


def wire(server: Server, principal: Any = None, name: str = "tests") -> ServerWire:
    return ServerWire(server, tap=SchemaTap(), principal=principal,
                      client_info={"name": name, "version": "1"})


async def test_a_public_read_is_answered_from_the_cache_within_its_ttl_and_read_again_after(
) -> None:
    clock = Clock()
    server, runs = counted_server(clock)
    cache = ResponseCachingMiddleware()
    server.add_middleware(cache)
    one, two = wire(server), wire(server)
    try:
        first = await one.request("resources/read", {"uri": "data://shared"})
        again = await two.request("resources/read", {"uri": "data://shared"})
        assert first["result"]["contents"] == again["result"]["contents"]
        assert runs["read"] == 1 and cache.hits == 1
        clock.now += 30.001
        later = await one.request("resources/read", {"uri": "data://shared"})
        assert later["result"]["contents"][0]["text"] == "shared 2"
        for _ in range(2):
            await one.request("resources/read", {"uri": "data://fresh"})
            await one.request("tools/call", {"name": "ping", "arguments": {}})
        assert runs["tool"] == 2  # tools/call is never cached
    finally:
        one.close()
        two.close()
    assert not one.tap.problems and not two.tap.problems  # type: ignore[union-attr]


async def test_a_private_read_is_kept_for_its_principal_alone_and_never_for_anonymous_callers(
) -> None:
    clock = Clock()
    server, _runs = counted_server(clock)
    server.add_middleware(ResponseCachingMiddleware())
    alice, bob, nobody = wire(server, "alice"), wire(server, "bob"), wire(server)
    try:
        texts = []
        for peer in (alice, alice, bob, nobody, nobody):
            reply = await peer.request("resources/read", {"uri": "data://mine"})
            texts.append(reply["result"]["contents"][0]["text"])
    finally:
        for peer in (alice, bob, nobody):
            peer.close()
    assert texts == ["mine 1", "mine 1", "mine 2", "mine 3", "mine 4"]


async def test_an_announced_change_makes_cached_answers_stale() -> None:
    clock = Clock()
    server, _runs = counted_server(clock)
    server.add_middleware(ResponseCachingMiddleware())
    peer = wire(server)
    try:
        await peer.request("resources/read", {"uri": "data://shared"})
        server.notify_resource_updated("data://shared")
        reread = await peer.request("resources/read", {"uri": "data://shared"})
        assert reread["result"]["contents"][0]["text"] == "shared 2"
        listed = await peer.request("tools/list", {})
        assert [t["name"] for t in listed["result"]["tools"]] == ["ping"]

        @server.tool()
        def pong() -> str:
            return "ping"

        relisted = await peer.request("tools/list", {})
        assert [t["name"] for t in relisted["result"]["tools"]] == ["ping", "pong"]
    finally:
        peer.close()


async def test_lists_are_cached_apart_for_requests_declaring_other_capabilities() -> None:
    clock = Clock()
    server, _ = counted_server(clock)
    cache = ResponseCachingMiddleware()
    server.add_middleware(cache)
    peer = wire(server)
    try:
        await peer.request("tools/list", {})
        await peer.request("tools/list", {}, **{
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}})
        await peer.request("tools/list", {})
        await peer.request("tools/list", {})
    finally:
        peer.close()
    assert (cache.hits, cache.misses) == (2, 2)


async def test_a_result_fresh_for_a_single_millisecond_is_kept_for_that_millisecond() -> None:
    clock = Clock()
    server, runs = counted_server(clock)

    @server.resource("data://blink", cache=CacheHint(1, "public"))
    def blink() -> str:
        runs["read"] += 1
        return f"blink {runs['read']}"

    server.add_middleware(ResponseCachingMiddleware())
    peer = wire(server)
    try:
        texts = []
        for step in (0.0, 0.0005, 0.001):
            clock.now += step
            reply = await peer.request("resources/read", {"uri": "data://blink"})
            texts.append(reply["result"]["contents"][0]["text"])
    finally:
        peer.close()
    assert texts == ["blink 1", "blink 1", "blink 2"]


ASKING = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}


async def test_a_retry_carrying_input_responses_or_a_request_state_is_never_answered_from_the_cache(
) -> None:
    clock = Clock()
    server = Server("asking", options=ServerOptions(clock=clock))
    runs = {"confirmed": 0, "stepped": 0}

    @server.resource("data://confirmed", cache=CacheHint(30_000, "public"))
    async def confirmed(ctx: Context) -> str:
        runs["confirmed"] += 1
        await ctx.elicit("ok", "Show it?")
        return "confirmed"

    @server.resource("data://stepped", cache=CacheHint(30_000, "public"))
    async def stepped(ctx: Context) -> str:
        runs["stepped"] += 1
        if not ctx.state.get("asked"):  # the first round asks; a retry with its state goes on
            ctx.state["asked"] = True
            await ctx.elicit("go", "Go on?")
        return "stepped"

    cache = ResponseCachingMiddleware()
    server.add_middleware(cache)
    alice, bob = wire(server, "alice"), wire(server, "bob")
    try:
        answered = {"uri": "data://confirmed", "inputResponses": {"ok": {"action": "accept"}}}
        for _ in range(2):
            reply = await alice.request("resources/read", answered, **ASKING)
            assert reply["result"]["contents"][0]["text"] == "confirmed"
        first = await alice.request("resources/read", {"uri": "data://stepped"}, **ASKING)
        assert first["result"]["resultType"] == "input_required"
        retry = {"uri": "data://stepped", "requestState": first["result"]["requestState"]}
        for _ in range(2):
            reply = await alice.request("resources/read", retry, **ASKING)
            assert reply["result"]["contents"][0]["text"] == "stepped"
        # The state is alice's: another caller presenting it is refused, not served a copy.
        stolen = await bob.request("resources/read", retry, **ASKING)
    finally:
        alice.close()
        bob.close()
    assert runs == {"confirmed": 2, "stepped": 3}
    assert stolen["error"]["code"] == -32602
    assert cache.hits == 0 and len(cache) == 0
    assert not alice.tap.problems and not bob.tap.problems  # type: ignore[union-attr]


async def test_the_cache_is_bounded_and_refuses_what_it_cannot_cache() -> None:
    clock = Clock()
    server, _ = counted_server(clock)
    cache = ResponseCachingMiddleware(max_entries=2)
    server.add_middleware(cache)
    peer = wire(server)
    try:
        for method in ("tools/list", "resources/list", "prompts/list"):
            await peer.request(method, {})
    finally:
        peer.close()
    assert len(cache) == 2
    with pytest.raises(ValueError, match="caches only"):
        ResponseCachingMiddleware(methods=["tools/call"])


async def test_the_rate_limit_refuses_a_caller_past_its_window_and_says_when_to_retry() -> None:
    clock = Clock()
    clock.now = 1_800_000_000.0  # a window boundary of 60 s
    server, runs = counted_server(clock)
    server.add_middleware(RateLimitingMiddleware(limit=2, per=60, key=by_client))
    a, b = wire(server, name="a"), wire(server, name="b")
    try:
        codes = []
        for peer in (a, a, a, b):
            reply = await peer.request("tools/call", {"name": "ping", "arguments": {}})
            codes.append(reply.get("error", {}).get("code"))
        refused = await a.request("tools/call", {"name": "ping", "arguments": {}})
        clock.now += 20
        still = await a.request("tools/list", {})
        clock.now += 40  # the next window
        again = await a.request("tools/call", {"name": "ping", "arguments": {}})
    finally:
        a.close()
        b.close()
    assert codes == [None, None, -32602, None]
    assert refused["error"]["data"] == {"rateLimit": {"limit": 2, "perS": 60.0},
                                        "retryAfterS": 60}
    assert "more than 2 requests in 60 s" in refused["error"]["message"]
    assert still["error"]["data"]["retryAfterS"] == 40
    assert "result" in again
    assert runs["tool"] == 4
    assert not a.tap.problems  # type: ignore[union-attr]


async def test_the_rate_limit_counts_in_a_store_other_processes_share(tmp_path: Any) -> None:
    clock = Clock()
    store = SQLiteStore(tmp_path / "limits.db", clock=clock)
    first, _ = counted_server(clock)
    second, _ = counted_server(clock)  # another replica, the same file
    for server in (first, second):
        server.add_middleware(RateLimitingMiddleware(limit=3, per=3600, store=store))
    peers = [wire(first), wire(second), wire(first), wire(second)]
    try:
        replies = [await p.request("tools/call", {"name": "ping", "arguments": {}})
                   for p in peers]
    finally:
        for peer in peers:
            peer.close()
        await store.close()
    assert ["error" in r for r in replies] == [False, False, False, True]


async def test_the_default_rate_limit_counts_each_principal_apart_and_anonymous_callers_as_one(
) -> None:
    clock = Clock()
    server, _ = counted_server(clock)
    server.add_middleware(RateLimitingMiddleware(limit=1, per=60))
    peers = [wire(server, "alice"), wire(server, "bob"), wire(server), wire(server),
             wire(server, "alice")]
    try:
        replies = [await p.request("tools/call", {"name": "ping", "arguments": {}})
                   for p in peers]
    finally:
        for peer in peers:
            peer.close()
    assert ["error" in r for r in replies] == [False, False, False, True, True]


async def test_the_rate_limit_checks_its_settings() -> None:
    with pytest.raises(ValueError, match="limit must be a positive integer"):
        RateLimitingMiddleware(limit=0)
    with pytest.raises(ValueError, match="per must be a positive number"):
        RateLimitingMiddleware(per=-1)
    with pytest.raises(TypeError, match="key is a function"):
        RateLimitingMiddleware(key="principal")  # type: ignore[arg-type]


async def test_timing_puts_the_duration_on_the_requests_server_span() -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from mcpkit.tracing import use_tracer_provider

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    server, _ = counted_server(Clock())
    server.add_middleware(TimingMiddleware())
    use_tracer_provider(provider)
    peer = wire(server)
    try:
        await peer.request("tools/call", {"name": "ping", "arguments": {}})
    finally:
        peer.close()
        use_tracer_provider(None)
    spans = [s for s in exporter.get_finished_spans() if s.name == "tools/call ping"]
    assert len(spans) == 1
    duration = spans[0].attributes["mcpkit.handler.duration"]
    assert 0 < duration < (spans[0].end_time - spans[0].start_time) / 1e9
