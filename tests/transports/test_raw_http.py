"""The HTTP listener against hostile bytes, over bare sockets: heads too big or too many, a
folded header, the shapes of request smuggling, slow senders, clients that leave early and
bodies that stop half-way, and more connections than the server takes.

Every case runs against a real uvicorn on 127.0.0.1 (port 0), served as `run_http` serves
(`listening`), with httptools and with h11; most with small limits and short timeouts,
and the 64 MiB head against `mcpkit run --http` with the defaults. Each asserts the status,
checks every message of ours against the official schema, and shows that the server still
answers a plain request afterwards. Timeouts are short so the tests are quick; nothing is
asserted about how long anything took, only that the answer came before a generous bound.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from helpers.transports.http_peer import FEATURES, Peer, ServerProcess
from helpers.transports.listening import BOUND, Listening, listening
from helpers.wire import MODERN, check_server_message

from mcpkit import Server
from mcpkit.transports.http_server.limits import ListenerLimits
from mcpkit.transports.http_server.listener import protocol_for, uvicorn_settings
from mcpkit.transports.http_server.options import HTTPOptions

LIMITS = ListenerLimits(max_header_bytes=8192, max_header_line_bytes=2048, max_headers=20,
                        header_timeout_s=0.5, body_timeout_s=0.5)

DISCOVER = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {
    "_meta": {"io.modelcontextprotocol/protocolVersion": MODERN,
              "io.modelcontextprotocol/clientCapabilities": {},
              "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}}}})


def head(*lines: str, length: int | None = len(DISCOVER), method: str = "POST") -> bytes:
    """A request head for `DISCOVER` with the given header lines after the usual ones."""
    usual = [f"{method} /mcp HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json",
             "Accept: application/json, text/event-stream", f"MCP-Protocol-Version: {MODERN}",
             "Mcp-Method: server/discover"]
    if length is not None:
        usual.append(f"Content-Length: {length}")
    return ("\r\n".join([*usual, *lines]) + "\r\n\r\n").encode("latin-1")


# -- the one raw helper ---------------------------------------------------------------------------

@dataclass
class Answer:
    """What came back on one connection: each response (status, headers, body), whether the
    server closed the connection before the bound, and how many bytes were sent."""

    responses: list[tuple[int, dict[str, str], bytes]]
    closed: bool
    sent: int

    @property
    def statuses(self) -> list[int]:
        return [status for status, _, _ in self.responses]

    def message(self, index: int = 0, method: str | None = None) -> dict[str, Any]:
        """Response `index`'s JSON-RPC message, checked against the schema (as the answer to
        `method`, if it answers one)."""
        message = orjson.loads(self.responses[index][2])
        assert isinstance(message, dict)
        check_server_message(MODERN, message, method)
        return message


def _responses(data: bytes) -> list[tuple[int, dict[str, str], bytes]]:
    out = []
    while data.startswith(b"HTTP/1.1 "):
        top, _, rest = data.partition(b"\r\n\r\n")
        lines = top.decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in lines[1:])}
        size = int(headers.get("content-length", "0"))
        out.append((int(lines[0].split()[1]), headers, rest[:size]))
        data = rest[size:]
    return out


async def exchange(port: int, pieces: Iterable[bytes], *, pause: float = 0.0) -> Answer:
    """Send `pieces` on a fresh connection, one after another (`pause` seconds apart),
    stopping as soon as the server answers or closes, then read until the server closes (at
    most `BOUND`). `pieces` may be a generator: what is never sent is never made."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    received = bytearray()
    closed = asyncio.Event()

    async def read() -> None:
        with contextlib.suppress(ConnectionError):
            while chunk := await reader.read(65536):
                received.extend(chunk)
        closed.set()

    reading = asyncio.create_task(read())
    sent = 0
    try:
        for piece in pieces:
            if received or closed.is_set():
                break
            writer.write(piece)
            try:
                await writer.drain()
            except ConnectionError:
                break
            sent += len(piece)
            await asyncio.sleep(pause)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(closed.wait(), BOUND)
    finally:
        reading.cancel()
        writer.close()
    return Answer(_responses(bytes(received)), closed.is_set(), sent)


# -- the server under test ------------------------------------------------------------------------

def echo_app() -> Any:
    """The app `server.asgi()` makes for a server with one tool."""
    server = Server("raw-http", "1.0.0")

    @server.tool()
    def echo(text: str) -> str:
        """Answer at once."""
        return text

    return server.asgi()


@pytest.fixture(params=["httptools", "h11"])
async def site(request: pytest.FixtureRequest) -> AsyncIterator[Listening]:
    async with listening(echo_app(), LIMITS, request.param) as where:
        yield where


async def still_answers(url: str) -> None:
    """A plain request on a new connection is served (its answer schema-checked)."""
    async with httpx.AsyncClient(timeout=BOUND) as http:
        peer = Peer(url, http)
        reply = await peer.post(peer.request_message("server/discover"))
    assert reply.status == 200, reply.body
    assert reply.message["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"]


# -- heads too big -----------------------------------------------------------------------------

EARLY = 16 * 1024 * 1024
"""Less than this of a 64 MiB head is sent before the refusal stops the sender: what the
kernel's socket buffers take before the server reads, and the pieces sent while the answer
is on its way, not the whole head."""


def streamed_header(total: int, piece: int = 64 * 1024) -> Iterator[bytes]:
    """A head whose one header goes on for `total` bytes, made piece by piece as it is sent."""
    yield b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Huge: "
    for _ in range(total // piece):
        yield b"a" * piece


async def test_a_header_streamed_without_end_is_refused_431(site: Listening) -> None:
    answer = await exchange(site.port, streamed_header(64 * 1024 * 1024))
    assert answer.statuses == [431] and answer.closed
    assert "header line is over 2048 bytes" in answer.message()["error"]["message"]
    assert answer.sent < EARLY
    await still_answers(site.url)


async def test_a_head_over_its_total_is_refused_431(site: Listening) -> None:
    lines = [f"X-Pad-{n}: {'b' * 1000}" for n in range(12)]  # each line fits, 12 KB in all
    answer = await exchange(site.port, [head(*lines) + DISCOVER])
    assert answer.statuses == [431] and answer.closed
    assert "head is over 8192 bytes" in answer.message()["error"]["message"]
    await still_answers(site.url)


async def test_too_many_headers_are_refused_431(site: Listening) -> None:
    answer = await exchange(site.port, [head(*[f"X-{n}: 1" for n in range(30)]) + DISCOVER])
    assert answer.statuses == [431] and answer.closed
    assert "more than 20 headers" in answer.message()["error"]["message"]
    await still_answers(site.url)


async def test_one_oversized_header_is_refused_431(site: Listening) -> None:
    answer = await exchange(site.port, [head("Authorization: Bearer " + "t" * 3000) + DISCOVER])
    assert answer.statuses == [431] and answer.closed
    assert "header line is over 2048 bytes" in answer.message()["error"]["message"]
    await still_answers(site.url)


async def test_an_oversized_request_line_is_refused_414(site: Listening) -> None:
    answer = await exchange(site.port, [b"GET /mcp?" + b"q" * 3000 + b" HTTP/1.1\r\n\r\n"])
    assert answer.statuses == [414] and answer.closed
    assert "request line is over 2048 bytes" in answer.message()["error"]["message"]
    await still_answers(site.url)


async def test_a_head_just_under_the_limits_is_served(site: Listening) -> None:
    lines = [f"X-{n}: {'c' * 300}" for n in range(13)]  # 20 headers in all, under 8 KiB
    answer = await exchange(site.port, [head(*lines, "Connection: close") + DISCOVER])
    assert answer.statuses == [200]
    assert answer.message(0, "server/discover")["result"]


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


async def test_a_64_mib_header_is_refused_and_leaves_no_memory_behind() -> None:
    # `mcpkit run --http` with its defaults: the 64 KiB head limit of `ListenerLimits`.
    served = ServerProcess.start(FEATURES)
    try:
        await still_answers(served.url)
        before = _rss_kib(served.proc.pid)
        answer = await exchange(served.port, streamed_header(64 * 1024 * 1024))
        assert answer.statuses == [431] and answer.closed
        assert answer.sent < EARLY
        await still_answers(served.url)
        # Without a limit the parser keeps the whole header (RSS up by over 100 MiB).
        assert _rss_kib(served.proc.pid) - before < 16 * 1024
    finally:
        served.stop()


# -- smuggling shapes: refused, and nothing read after them -------------------------------------

NEXT = b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
"""A second request hidden where a body would be."""

SMUGGLED = {
    "content-length-and-chunked": head("Transfer-Encoding: chunked", length=5)
    + b"0\r\n\r\n" + NEXT,
    "chunked-and-content-length": head("Transfer-Encoding: chunked", "Content-Length: 5",
                                       length=None) + b"0\r\n\r\n" + NEXT,
    "two-content-lengths": head("Content-Length: 40", length=0) + NEXT,
    "obs-fold": head("X-Folded: one", " two", length=0) + NEXT,
}


@pytest.mark.parametrize("shape", SMUGGLED)
async def test_smuggling_shapes_get_400_and_no_second_request(site: Listening,
                                                              shape: str) -> None:
    answer = await exchange(site.port, [SMUGGLED[shape]])
    assert answer.statuses == [400], answer.responses  # one answer: NEXT was never read
    assert answer.closed
    await still_answers(site.url)


async def test_the_obs_fold_refusal_says_why(site: Listening) -> None:
    answer = await exchange(site.port, [SMUGGLED["obs-fold"]])
    assert "obs-fold" in answer.message()["error"]["message"]


# -- slow senders, early leavers, bodies that stop --------------------------------------------

async def test_a_head_never_finished_gets_408_and_the_connection_closes(
        site: Listening) -> None:
    answer = await exchange(site.port, [head()[:60]])
    assert answer.statuses == [408] and answer.closed
    assert "request head did not come within 0.5 s" in answer.message()["error"]["message"]
    await still_answers(site.url)


async def test_a_head_sent_a_byte_at_a_time_is_timed_from_its_first_byte(
        site: Listening) -> None:
    # Each byte would reset an idle timer; the head's own timer is not reset.
    answer = await exchange(site.port, (bytes([b]) for b in head()), pause=0.05)
    assert answer.statuses == [408] and answer.closed
    assert answer.sent < len(head())
    await still_answers(site.url)


async def test_a_connection_that_sends_nothing_is_closed_without_an_answer(
        site: Listening) -> None:
    answer = await exchange(site.port, [])
    assert answer.responses == [] and answer.closed
    await still_answers(site.url)


async def test_a_body_that_came_in_pieces_leaves_its_connection_open_past_the_body_timeout(
        site: Listening) -> None:
    """The body's timer stops with its last piece: the connection, idle after the answer, is
    kept (uvicorn's keep-alive decides) past the body timeout and serves the next request."""
    reader, writer = await asyncio.open_connection("127.0.0.1", site.port)
    try:
        writer.write(head() + DISCOVER[:20])
        await writer.drain()
        await asyncio.sleep(0.1)  # the rest in a read of its own
        writer.write(DISCOVER[20:])
        await writer.drain()
        first = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), BOUND)
        assert first.startswith(b"HTTP/1.1 200")
        size = int(_responses(first)[0][1]["content-length"])
        await asyncio.wait_for(reader.readexactly(size), BOUND)
        await asyncio.sleep(2 * LIMITS.body_timeout_s)  # past the body timeout, idle
        writer.write(head() + DISCOVER)
        await writer.drain()
        second = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), BOUND)
        assert second.startswith(b"HTTP/1.1 200")
    finally:
        writer.close()


async def test_a_body_that_stops_half_way_gets_408(site: Listening) -> None:
    answer = await exchange(site.port, [head() + DISCOVER[:20]])
    assert answer.statuses == [408] and answer.closed
    assert "request body stopped" in answer.message()["error"]["message"]
    await still_answers(site.url)


async def test_a_client_that_leaves_mid_head_or_mid_body_leaves_the_server_answering(
        site: Listening) -> None:
    for partial in (head()[:30], head() + DISCOVER[:10]):
        _, writer = await asyncio.open_connection("127.0.0.1", site.port)
        writer.write(partial)
        await writer.drain()
        writer.close()
        await writer.wait_closed()
    await still_answers(site.url)


async def test_two_requests_in_one_read_are_both_metered_and_served(site: Listening) -> None:
    answer = await exchange(site.port, [head() + DISCOVER + head("Connection: close")
                                        + DISCOVER])
    assert answer.statuses == [200, 200]
    for index in (0, 1):
        assert answer.message(index, "server/discover")["result"]


async def _served(reader: asyncio.StreamReader) -> int:
    """Read one response (status line, headers, the body its length names): its status."""
    top = (await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), BOUND)).decode("latin-1")
    size = next((int(line.split(":", 1)[1]) for line in top.split("\r\n")
                 if line.lower().startswith("content-length:")), 0)
    await asyncio.wait_for(reader.readexactly(size), BOUND)
    return int(top.split()[1])


async def test_after_requests_served_a_head_that_stops_on_the_same_connection_gets_408(
        site: Listening) -> None:
    # The connection's one timer was set while it served the first requests: it still times
    # the head that begins after them, from that head's first byte.
    reader, writer = await asyncio.open_connection("127.0.0.1", site.port)
    try:
        for _ in range(3):
            writer.write(head() + DISCOVER)
            assert await _served(reader) == 200
        writer.write(head()[:40])
        rest = await asyncio.wait_for(reader.read(), BOUND)  # until the server closes
    finally:
        writer.close()
    answer = Answer(_responses(rest), True, 40)
    assert answer.statuses == [408]
    assert "request head did not come" in answer.message()["error"]["message"]


@pytest.mark.parametrize("parser", ["httptools", "h11"])
async def test_one_timer_serves_a_connection_however_many_requests_it_carries(
        parser: str) -> None:
    # Each head and each body has its timeout, yet the clock is one timer per connection:
    # the requests set deadlines, not timers. Both timeouts are longer than the test's bound,
    # so the timer set when the connection opened never needs setting again.
    limits = ListenerLimits(header_timeout_s=BOUND * 3, body_timeout_s=BOUND * 3)
    timers = 0

    class Counting(protocol_for(limits, parser)):  # type: ignore[misc]
        def _wake(self, now: float) -> None:
            nonlocal timers
            timers += 1
            super()._wake(now)

    settings = {**uvicorn_settings(limits, parser), "http": Counting}
    async with listening(echo_app(), settings=settings) as site:
        reader, writer = await asyncio.open_connection("127.0.0.1", site.port)
        try:
            for _ in range(20):
                writer.write(head())
                await writer.drain()
                writer.write(DISCOVER)  # the body in a read of its own
                assert await _served(reader) == 200
        finally:
            writer.close()
    assert timers == 1


# -- too many connections ---------------------------------------------------------------------

@pytest.mark.parametrize("parser", ["httptools", "h11"])
async def test_past_the_connection_limit_a_request_gets_503(parser: str) -> None:
    limits = ListenerLimits(max_connections=2, header_timeout_s=BOUND * 3)
    async with listening(echo_app(), limits, parser) as site:
        idle = [await asyncio.open_connection("127.0.0.1", site.port) for _ in range(2)]
        await _until(lambda: len(site.state.connections) == 2)
        answer = await exchange(site.port, [head("Connection: close") + DISCOVER])
        assert answer.statuses == [503]
        for _, writer in idle:
            writer.close()
        await _until(lambda: len(site.state.connections) == 0)
        await still_answers(site.url)


async def _until(condition: object) -> None:
    """Wait (bounded) until the server's state shows `condition`."""
    assert callable(condition)
    for _ in range(int(BOUND / 0.01)):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the server's state never got there")


# -- the options ---------------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [{"max_headers": 0}, {"max_header_bytes": 1.5},
                                 {"header_timeout_s": 0}, {"body_timeout_s": True},
                                 {"max_connections": 0}, {"trusted_proxies": "10.0.0.1"}])
def test_listener_limits_that_cannot_work_are_refused_at_once(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="ListenerLimits"):
        ListenerLimits(**bad)


@pytest.mark.parametrize("idle", [0, -1, "600", None])
def test_a_session_idle_time_that_is_no_duration_is_refused(idle: Any) -> None:
    with pytest.raises(ValueError, match="session_idle_s"):
        HTTPOptions(session_idle_s=idle)


def test_uvicorn_gets_the_limits_it_has_settings_for() -> None:
    settings = uvicorn_settings(ListenerLimits(max_connections=7, keep_alive_s=65.0))
    assert settings["limit_concurrency"] == 7 and settings["timeout_keep_alive"] == 65.0
    assert settings["proxy_headers"] is True  # a proxy on this host, as uvicorn's default
    assert settings["forwarded_allow_ips"] == ["127.0.0.1"]
    trusted = uvicorn_settings(ListenerLimits(trusted_proxies=("10.0.0.0/8",)))
    assert trusted["proxy_headers"] is True and trusted["forwarded_allow_ips"] == ["10.0.0.0/8"]
    assert uvicorn_settings(ListenerLimits(trusted_proxies=()))["proxy_headers"] is False
    assert settings["http"].limits.max_headers == 100


async def test_a_host_sent_twice_gets_400(site: Listening) -> None:
    answer = await exchange(site.port, [head("Host: evil.example", "Connection: close")
                                        + DISCOVER])
    assert answer.statuses == [400]
    if answer.responses[0][1].get("content-type") == "application/json":  # h11 refuses it itself
        assert "Host" in answer.message()["error"]["message"]
    await still_answers(site.url)


async def test_serve_http_applies_the_limits_it_is_given() -> None:
    from mcpkit.transports.http_server.running import serve_http

    server = Server("given-limits", "1.0.0")
    announced: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(serve_http(
        server, "127.0.0.1:0/mcp", listener=ListenerLimits(max_headers=12),
        announce=lambda line: announced.done() or announced.set_result(
            re.findall(r"http://\S+", line)[0])))
    try:
        url = await asyncio.wait_for(announced, BOUND)
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        answer = await exchange(port, [head(*[f"X-{n}: 1" for n in range(7)]) + DISCOVER])
        assert answer.statuses == [431]
        assert "more than 12 headers" in answer.message()["error"]["message"]
        await still_answers(url)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(task, BOUND)
