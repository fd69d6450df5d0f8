"""mcpkit as the client of a hostile stdio server (hostile_stdio.py, a real subprocess).

The server sends what no correct one would: a 100 MB response, a line that never ends,
responses to ids never sent and duplicates, requests the 2026-07-28 era forbids, a flood of
them while it reads nothing, catalogues of 100,000 tools or endless pages, schemas nested too
deep, cyclic, or pointing at remote URLs (a listener of the test records any connection), and
silence. Each time the client fails the one call with an error naming its own limit (or
rejects the tool with a reason), stays within its memory (the peak resident set of a client
process of its own, measured_client.py), follows no remote `$ref`, and the connection still
works afterwards. Every message the client sends
is checked against the official schema (SchemaTap).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest
from helpers import HELPERS
from helpers.client.hostile_probes import Listener, grown_mib, measured
from helpers.client.schema_tap import SchemaTap

from mcpkit.client import Client, ClientOptions
from mcpkit.errors import ProtocolViolation, RequestTimeoutError, TransportError
from mcpkit.transports.stdio.client import StdioServer

HOSTILE = str(HELPERS / "client" / "hostile_stdio.py")
MIB = 1024 * 1024


def hostile(catalogue: str, tap: SchemaTap, **options: Any) -> Client:
    server = StdioServer([sys.executable, HOSTILE, catalogue], stderr="discard", tap=tap,
                         shutdown_timeout=0.5)
    return Client(server, options=ClientOptions(era="modern", **options))


@pytest.fixture
def tap() -> AsyncIterator[SchemaTap]:
    made = SchemaTap(check_server=False)  # the server is off the schema on purpose
    yield made  # type: ignore[misc]
    made.assert_clean()


async def test_a_100_mb_response_fails_its_call_at_once_naming_the_limit() -> None:
    report = await measured({"connect": "stdio", "catalogue": "plain", "options": {"timeout": 60},
                             "calls": [{"tool": "huge", "arguments": {"size": 100 * MIB}},
                                       {"tool": "other"}]})
    huge, other = report["calls"]
    assert re.match(r"TransportError: tools/call: the server's response is 10485\d+ bytes, "
                        r"over the 4194304-byte limit \(max_message_bytes\)", huge["error"]), huge
    assert other["text"] == "tool other"
    assert grown_mib(huge) < 40, "the 100 MB were read through, not held"


async def test_a_line_that_never_ends_is_bounded_and_the_call_times_out() -> None:
    report = await measured({"connect": "stdio", "catalogue": "plain", "options": {"timeout": 2},
                             "calls": [{"tool": "endless", "arguments": {"budget": 64 * MIB}}]})
    (endless,) = report["calls"]
    assert endless["error"].startswith(
        "RequestTimeoutError: tools/call: no response within 2 s"), endless
    assert grown_mib(endless) < 40, "64 MiB without a newline were dropped as they came"


async def test_a_server_that_never_answers_is_timed_out_and_cancelled(tap: SchemaTap) -> None:
    async with hostile("plain", tap, timeout=0.5) as client:
        with pytest.raises(RequestTimeoutError, match=r"no response within 0.5 s"):
            await client.call_tool("silent")
        assert (await client.call_tool("other"))["content"][0]["text"] == "tool other"
    cancelled = [m for m in tap.sent if m.get("method") == "notifications/cancelled"]
    assert len(cancelled) == 1, "the timed-out call is cancelled on the wire"


async def test_strays_and_duplicates_do_not_answer_anything_else(
    tap: SchemaTap, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "mcpkit.client")
    async with hostile("plain", tap) as client:
        result = await client.call_tool("strays")
        assert result["content"][0]["text"] == "first", "the first answer wins; the second drops"
        assert (await client.call_tool("other"))["content"][0]["text"] == "tool other"
    refused = [r.getMessage() for r in caplog.records if "ignored a message" in r.getMessage()]
    assert len(refused) == 4, "ids of the wrong type (0.5, true, a list, an object) are named"


async def test_requests_a_2026_server_may_not_send_get_method_not_found(tap: SchemaTap) -> None:
    async with hostile("plain", tap) as client:
        await client.call_tool("ask")
        replies = json.loads((await client.call_tool("replies"))["content"][0]["text"])
    for n in range(4):  # ping too: the era has none, and `{}` is no 2026-07-28 result
        assert replies[f"srv-{n}"]["error"]["code"] == -32601
    answers = [m for m in tap.sent if "method" not in m]
    assert len(answers) == 4, "each answer was checked against the schema by the tap"


async def test_a_flood_of_requests_while_not_reading_stays_bounded() -> None:
    report = await measured({"connect": "stdio", "catalogue": "plain", "calls": [
        {"tool": "flood", "arguments": {"count": 400_000}}, {"tool": "other"}]})
    flood, other = report["calls"]
    assert flood.get("text") == "flooded 400000", flood
    assert other["text"] == "tool other"
    grown = grown_mib(flood)
    assert grown < 30, f"{grown:.0f} MiB held for answers the server never read (68 MB unbounded)"
    assert any("answers to its requests are dropped" in line for line in report["warnings"])


async def test_a_catalogue_of_100000_tools_in_one_line_is_refused_by_size(tap: SchemaTap) -> None:
    async with hostile("many:100000", tap) as client:
        with pytest.raises(TransportError, match=r"tools/list: the server's response is \d+ "
                           r"bytes, over the 4194304-byte limit \(max_message_bytes\)"):
            await client.list_tools()


async def test_a_paged_catalogue_past_the_bound_stops_before_vetting_more(
    tap: SchemaTap,
) -> None:
    async with hostile("pages:100000:500", tap, max_list_items=2000) as client:
        with pytest.raises(ProtocolViolation, match=r"tools/list: the server lists more than "
                           r"2000 tools \(ClientOptions.max_list_items\); stopped paging "
                           r"after 2500"):
            await client.list_tools()
    assert len(tap.requests("tools/list")) == 5, "the fifth page was the one past the bound"


async def test_pages_with_fresh_cursors_for_ever_stop_at_the_bound(tap: SchemaTap) -> None:
    async with hostile("endless-pages", tap, max_list_items=1000) as client:
        with pytest.raises(ProtocolViolation, match=r"ClientOptions.max_list_items"):
            await client.list_tools()


async def test_within_the_bound_a_paged_catalogue_is_listed_whole(tap: SchemaTap) -> None:
    async with hostile("pages:3000:1000", tap, max_list_items=3000) as client:
        assert len(await client.list_tools()) == 3000


@pytest.mark.parametrize("bad", [0, -1, True, 1.5])
def test_max_list_items_must_be_a_positive_integer(bad: Any) -> None:
    with pytest.raises(ValueError, match="max_list_items must be a positive integer"):
        ClientOptions(max_list_items=bad)


async def test_deep_and_cyclic_schemas_are_rejected_with_reasons(tap: SchemaTap) -> None:
    async with hostile("deep:300", tap) as client:
        assert [t["name"] for t in await client.list_tools()] == ["fine"]
        assert "deeper than 64 levels" in client.rejected_tools[0].reason
    async with hostile("cyclic", tap) as client:
        assert [t["name"] for t in await client.list_tools()] == ["fine"]
        reasons = {r.name: r.reason for r in client.rejected_tools}
        assert set(reasons) == {"cyclic", "loop"}
        assert all("would never end" in reason for reason in reasons.values())


async def test_remote_references_are_never_followed(tap: SchemaTap) -> None:
    listener = Listener()
    async with listener as url:
        async with hostile(f"remote:{url}", tap, validate_output=True) as client:
            assert [t["name"] for t in await client.list_tools()] == ["fine"]
            reasons = {r.name: r.reason for r in client.rejected_tools}
            assert set(reasons) == {"ref", "dialect", "based", "output"}
            assert "remote references are never fetched" in reasons["ref"]
            assert "unsupported dialect" in reasons["dialect"]
        await asyncio.sleep(0)
    assert listener.connections == 0, "nothing connected to the URLs the schemas named"


async def test_a_legacy_server_flooding_requests_gets_64_answered_at_once() -> None:
    """A 2025-11-25 server may send requests, each a handler call (perhaps a person asked
    something): past `MAX_SERVER_REQUESTS` in progress, one more is refused on the spot."""
    from helpers.wire import LEGACY, check_client_message

    from mcpkit.client.routing import MAX_SERVER_REQUESTS, StreamRouter

    written: list[dict[str, Any]] = []
    release = asyncio.Event()
    calls = 0

    async def handler(method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        nonlocal calls
        calls += 1
        await release.wait()
        return {"roots": []}

    router = StreamRouter(written.append)
    router.set_request_handler(handler)
    for n in range(100):
        router.receive({"jsonrpc": "2.0", "id": f"r{n}", "method": "roots/list"})
    await asyncio.sleep(0)
    assert calls == MAX_SERVER_REQUESTS == 64
    refused = [m for m in written if "error" in m]
    assert len(refused) == 36 and all(m["error"]["code"] == -32603 for m in refused)
    assert "already answering 64 requests" in refused[0]["error"]["message"]
    release.set()
    for _ in range(10):
        await asyncio.sleep(0)
    assert sum("result" in m for m in written) == 64
    router.receive({"jsonrpc": "2.0", "id": "again", "method": "roots/list"})
    for _ in range(10):
        await asyncio.sleep(0)
    assert written[-1] == {"jsonrpc": "2.0", "id": "again", "result": {"roots": []}}
    for message in written:
        check_client_message(LEGACY, message)


@pytest.mark.parametrize(("head", "fails"), [
    (b'{"jsonrpc":"2.0","id":"a-1","result":{"content":[{"text":"xxx', True),
    (b'{"id": "a-1", "jsonrpc": "2.0", "error": {"code": -32603, "message": "xx', True),
    (b'{"jsonrpc":"2.0","id":"a-1","method":"roots/list","params":{"x":"xxx', False),
    (b'{"jsonrpc":"2.0","result":{"id":"a-1","content":"xxx', False),
    (b'{"jsonrpc":"2.0","id":"a-2","result":{"content":"xxx', False),
    (b'{"jsonrpc":"2.0","id":1,"result":{"content":"xxx', False),
])
async def test_an_oversized_line_fails_only_the_request_its_opening_answers(
    head: bytes, fails: bool
) -> None:
    """The id is read only where an encoder writes it first, at the top level, before a
    result or an error: a request of the server with the same id, an `id` inside the
    result, another id, or the integer 1 for the string "a-1" leave the request waiting."""
    from helpers.transports.http_peer import meta
    from helpers.wire import MODERN, check_client_message

    from mcpkit.client.routing import StreamRouter

    router = StreamRouter(lambda message: check_client_message(MODERN, message))
    call = asyncio.ensure_future(router.request({
        "jsonrpc": "2.0", "id": "a-1", "method": "tools/call",
        "params": {"name": "x", "arguments": {}, "_meta": meta()}}))
    await asyncio.sleep(0)
    router.oversized(head, 5 * MIB, 4 * MIB)
    await asyncio.sleep(0)
    assert call.done() is fails
    if fails:
        with pytest.raises(TransportError, match=r"tools/call: the server's response is 5242880 "
                           r"bytes, over the 4194304-byte limit \(max_message_bytes\)"):
            call.result()
    else:
        call.cancel()
