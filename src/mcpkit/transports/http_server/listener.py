"""What the HTTP listener refuses before the app sees a request: heads that are too big, clients
too slow to send one, bodies that stall, and more connections than the server can carry.

uvicorn has no limit on a request head: its httptools parser keeps a header it has not finished
in memory however long it grows (one 64 MiB header was taken whole), and h11 bounds only the
whole head, answering 400 past it. Nor does uvicorn time out a client that opens a connection
and never finishes its head, or stops half-way through a body: each holds a connection, and
its buffers, for as long as it likes. So `run_http` serves with a protocol of ours, a subclass
of uvicorn's own for httptools (`LimitedHttpTools`) or h11 (`LimitedH11`), which meters each
head as its bytes arrive (`mcpkit.protocol.http_head.HeadMeter`) and times the head and the
body. What uvicorn's public configuration already does (its bound on concurrent connections
and tasks, the keep-alive timeout, which proxies' forwarded headers are believed) is set through
that configuration, from the same `ListenerLimits` (`mcpkit.transports.http_server.limits`;
`uvicorn_settings`).

Importing this module imports uvicorn; only `run_http` and tests do.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any, Final

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from mcpkit.errors import InvalidRequestError
from mcpkit.protocol.codec import encode
from mcpkit.protocol.http import Status
from mcpkit.protocol.http_head import HeadMeter, head_pattern
from mcpkit.protocol.rejections import error_response
from mcpkit.transports.http_server.limits import ListenerLimits

__all__ = [
    "LimitedH11",
    "LimitedHttpTools",
    "protocol_for",
    "uvicorn_settings",
]

log = logging.getLogger("mcpkit.transport")

LINGER_S: Final = 1.0
"""How long a refused connection's input is still read, and dropped, before it closes."""


def _refusal(status: int, reason: str, phrase: bytes,
             default_headers: list[tuple[bytes, bytes]]) -> bytes:
    """A complete response the listener writes itself (no app is running for the request):
    uvicorn's default headers (the date), the JSON-RPC error every refusal of the endpoint
    carries, and `connection: close`."""
    body = encode(error_response(None, InvalidRequestError(reason)))
    head = b"".join(b"%s: %s\r\n" % pair for pair in default_headers)
    return (b"HTTP/1.1 %d %s\r\n%scontent-type: application/json\r\ncontent-length: %d\r\n"
            b"connection: close\r\n\r\n%s" % (status, phrase, head, len(body), body))


_PHRASES: Final = {400: b"Bad Request", 408: b"Request Timeout", 414: b"URI Too Long",
                   431: b"Request Header Fields Too Large"}


_IDLE: Final = 0
_HEAD: Final = 1
_BODY: Final = 2
_LINGER: Final = 3
"""A connection's phase: between requests (only uvicorn's keep-alive timeout applies), reading
a head, reading a body the app waits for, or refused and lingering before it closes."""


class _Guard:
    """The part shared by both protocols: a head metered and timed from its first byte, a body
    timed between its pieces. The subclass tells it when a head ended (`_head_done`) and when
    a request's whole body came (`_body_done`).

    The clock is one timer per connection, not one per read: each phase sets a deadline (an
    attribute), and the timer either finds the deadline passed or sets itself again. It is
    never set further ahead than the shorter of the two timeouts, so a deadline set after it
    (always at least that far ahead) is never earlier than the timer: no timeout fires late.
    A head that comes whole in one read (as every head of an ordinary client does) is measured
    with a few scans of its bytes in C; only a head split across reads, or one near a limit,
    goes through the `HeadMeter`."""

    # Set by uvicorn's protocol this is mixed into.
    transport: asyncio.Transport
    loop: asyncio.AbstractEventLoop
    cycle: Any
    flow: Any
    client: tuple[str, int] | None
    config: Any
    server_state: Any

    limits: ListenerLimits = ListenerLimits()
    """Set per server by `protocol_for`, with the figures below taken from it once."""
    _head_s: float = limits.header_timeout_s
    _body_s: float = limits.body_timeout_s
    _period: float = min(_head_s, _body_s)
    _whole_head: int = min(limits.max_header_line_bytes, limits.max_header_bytes)
    """The longest head `_head` may pass: no line of it can be over the limit."""
    _head: re.Pattern[bytes] = head_pattern(limits.max_headers)
    """`head_fits` for these limits, one C scan: `_head.match(data, 0, _whole_head)`."""
    _meter: HeadMeter | None
    _timer: asyncio.TimerHandle | None
    _phase: int
    _deadline: float

    def _guard_start(self) -> None:
        self._meter = None
        self._timer = None
        # A connection that never sends a byte is held no longer than a slow head.
        self._phase = _HEAD
        now = self.loop.time()
        self._deadline = now + self._head_s
        self._wake(now)

    def _wake(self, now: float) -> None:
        """Set the timer for the deadline or the shorter timeout from now, whichever is first."""
        when = now + self._period
        if self._phase != _IDLE and self._deadline < when:
            when = self._deadline
        self._timer = self.loop.call_at(when, self._tick)

    def _tick(self) -> None:
        """The connection's one timer: a deadline passed times its phase out; otherwise the
        timer is set again (`_wake`)."""
        self._timer = None
        if self.transport.is_closing():
            return
        now = self.loop.time()
        phase = self._phase
        if phase == _IDLE or now < self._deadline:
            self._wake(now)
        elif phase == _HEAD:
            self._head_timed_out()
        elif phase == _BODY:
            self._body_timed_out()
        else:
            self.transport.close()

    def _metered(self, data: bytes) -> bool:
        """Meter `data` before the parser sees it; False once the request was refused."""
        phase = self._phase
        if phase == _BODY:
            self._deadline = self.loop.time() + self._body_s
            return True
        if phase == _LINGER:
            return False
        meter = self._meter
        if meter is None:
            self._phase = _HEAD
            self._deadline = self.loop.time() + self._head_s
            if self._head.match(data, 0, self._whole_head) is not None:
                return True
            meter = self._meter = self._new_meter()
        meter.feed(data)
        overflow = meter.overflow
        if overflow is None:
            return True
        log.warning("refused a request head from %s: %s", self._peer(), overflow.reason)
        self._close_with(overflow.status, overflow.reason, answer=True)
        return False

    def _after_feed(self, data: bytes) -> None:
        """A head measured whole that the parser did not end (a shape the scan did not
        foresee): from here the meter counts what comes, as though all of `data` were head."""
        if self._phase == _HEAD and self._meter is None and data:
            meter = self._meter = self._new_meter()
            meter.size = len(data)

    def _new_meter(self) -> HeadMeter:
        limits = self.limits
        return HeadMeter(limits.max_header_bytes, limits.max_header_line_bytes,
                         limits.max_headers)

    def _head_done(self) -> None:
        """The parser read a whole head: the body (if any) is timed from here."""
        self._meter = None
        self._phase = _BODY
        self._deadline = self.loop.time() + self._body_s

    def _body_done(self) -> None:
        """A request's whole body came; until the next request begins only uvicorn's
        keep-alive timeout applies."""
        self._phase = _IDLE
        self._meter = None

    def _guard_end(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._meter = None

    def _head_timed_out(self) -> None:
        if self._meter is None or self._meter.size == 0:
            self.transport.close()  # nothing was asked: nothing to answer
            return
        log.warning("closed a connection from %s: its request head took over %s s",
                    self._peer(), self.limits.header_timeout_s)
        self._close_with(Status.REQUEST_TIMEOUT, f"Request Timeout: the request head did not come "
                         f"within {self.limits.header_timeout_s} s", answer=True)

    def _body_timed_out(self) -> None:
        cycle = self.cycle
        if self.flow.read_paused or (cycle is not None and getattr(
                cycle, "waiting_for_100_continue", False)):
            # The app is the one not reading yet: the client is not slow.
            now = self.loop.time()
            self._deadline = now + self._body_s
            self._wake(now)
            return
        log.warning("closed a connection from %s: its request body stopped for over %s s",
                    self._peer(), self.limits.body_timeout_s)
        # Answered only while the app has not: after its response a 408 would read as the
        # answer to a request the client has not sent.
        self._close_with(Status.REQUEST_TIMEOUT, f"Request Timeout: the request body stopped for "
                         f"over {self.limits.body_timeout_s} s",
                         answer=cycle is None or not cycle.response_started)

    def _close_with(self, status: int, reason: str, answer: bool) -> None:
        """Close the connection, answering `status` first when `answer` and no response is
        under way on it (a head pipelined behind a stream is refused by closing); the app, if
        one runs for the request, sees a disconnect."""
        cycle = self.cycle
        streaming = cycle is not None and cycle.response_started and not cycle.response_complete
        if cycle is not None and not cycle.response_complete:
            cycle.disconnected = True
            cycle.message_event.set()
        self._guard_end()
        transport = self.transport
        if not answer or streaming or not transport.can_write_eof():
            transport.close()
            return
        transport.write(_refusal(status, reason, _PHRASES[status],
                                 self.server_state.default_headers))
        # A lingering close: closing with the client's bytes unread would reset the
        # connection, and a reset can destroy the answer before the client reads it. So our
        # side ends after the answer, and what still comes is read and dropped, unparsed, for
        # a moment; then the connection closes.
        transport.write_eof()
        self._phase = _LINGER
        self.flow.resume_reading()
        self._deadline = self.loop.time() + LINGER_S
        self._timer = self.loop.call_at(self._deadline, self._tick)

    def _peer(self) -> str:
        return f"{self.client[0]}:{self.client[1]}" if self.client else "an unknown peer"


def _httptools_class() -> type[Any] | None:
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:  # the `fast` extra is not installed
        return None

    class LimitedHttpTools(_Guard, HttpToolsProtocol):
        """uvicorn's httptools protocol with the listener's limits (see the module)."""

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._guard_start()

        def connection_lost(self, exc: Exception | None) -> None:
            self._guard_end()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self.parser is None:  # uvicorn's after the connection was lost
                return  # type: ignore[unreachable]
            if self._phase == _IDLE and self._head.match(data, 0, self._whole_head) is not None:
                # The next request's head, whole in this read (`_metered`'s first case, in
                # line: every request but a connection's first comes this way).
                self._phase = _HEAD
                self._deadline = self.loop.time() + self._head_s
            elif not self._metered(data):
                return
            before = self.cycle
            super().data_received(data)
            cycle = self.cycle
            if cycle is not before:
                # A head ended in this read (the last one, when it held several requests):
                # read from uvicorn's state after the parse, not from one more callback of
                # each request. A request begun after it has its head metered from the next
                # read, as the first one's would be.
                self._meter = None
                if cycle.more_body and self.scope is cycle.scope:
                    self._phase = _BODY
                    self._deadline = self.loop.time() + self._body_s
                else:
                    self._phase = _IDLE
            elif self._phase == _BODY:
                # A body that came in pieces: its last one ended the request in this read
                # (uvicorn's own callback cleared more_body), read here rather than from one
                # more callback of each request.
                if cycle is not None and not cycle.more_body:
                    self._body_done()
            elif self._phase == _HEAD and self._meter is None:
                self._after_feed(data)

    return LimitedHttpTools


class _StrictConnection(h11.Connection):
    """h11's connection, refusing a head with both Content-Length and Transfer-Encoding: h11
    goes by the latter and keeps the connection open, while a proxy in front may go by the
    former, and read the rest as another request (request smuggling). httptools refuses it
    itself, as both do two different Content-Length values. Raising h11's own error makes
    uvicorn answer 400 and close, before any app runs."""

    def next_event(self) -> Any:
        event = super().next_event()
        if type(event) is h11.Request:
            names = {name for name, _ in event.headers}
            if b"content-length" in names and b"transfer-encoding" in names:
                raise h11.RemoteProtocolError("Content-Length with Transfer-Encoding")
        return event


class LimitedH11(_Guard, H11Protocol):
    """uvicorn's h11 protocol with the listener's limits (see the module); h11's own bound on
    a head (`h11_max_incomplete_event_size`) is set to the same size, for what arrives
    pipelined behind a request, which the meter does not see."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.conn = _StrictConnection(h11.SERVER, self.limits.max_header_bytes)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._guard_start()

    def connection_lost(self, exc: Exception | None) -> None:
        self._guard_end()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._metered(data):
            super().data_received(data)
            if self._phase == _HEAD and self._meter is None:
                self._after_feed(data)

    def handle_events(self) -> None:
        before = self.conn.their_state
        super().handle_events()
        after = self.conn.their_state
        if after is h11.SEND_BODY and before is not h11.SEND_BODY:
            self._head_done()
        elif after in (h11.DONE, h11.MUST_CLOSE) and self._phase in (_HEAD, _BODY):
            self._body_done()


LimitedHttpTools = _httptools_class()


def protocol_for(limits: ListenerLimits, parser: str = "auto") -> type[Any]:
    """The protocol class to serve with under `limits`: httptools' when it is installed (as
    uvicorn's own "auto" choice), else h11's; `parser` "h11" or "httptools" picks one."""
    base: type[Any] | None = LimitedH11 if parser == "h11" else LimitedHttpTools
    if base is None:
        if parser == "httptools":
            raise ValueError("the httptools parser is not installed (pip install mcpkit[fast])")
        base = LimitedH11
    return type(base.__name__, (base,), {
        "limits": limits, "_head_s": limits.header_timeout_s, "_body_s": limits.body_timeout_s,
        "_period": min(limits.header_timeout_s, limits.body_timeout_s),
        "_whole_head": min(limits.max_header_line_bytes, limits.max_header_bytes),
        "_head": head_pattern(limits.max_headers), "__module__": __name__})


def uvicorn_settings(limits: ListenerLimits, parser: str = "auto") -> dict[str, Any]:
    """The `uvicorn.Config` keywords that serve under `limits`."""
    return {
        "http": protocol_for(limits, parser),
        "limit_concurrency": limits.max_connections,
        "timeout_keep_alive": limits.keep_alive_s,
        "h11_max_incomplete_event_size": limits.max_header_bytes,
        "proxy_headers": bool(limits.trusted_proxies),
        "forwarded_allow_ips": list(limits.trusted_proxies) or None,
    }
