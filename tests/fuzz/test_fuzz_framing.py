"""NDJSON (the stdio line reader) and SSE (the HTTP client's event parser), fed as a peer could.

A list of messages, framed, yields the same messages whether the bytes come whole, split at any
byte, in random chunks or byte by byte; line endings may be LF or CRLF, and blank
lines and SSE comments may come between them. Bytes after the last message that are not a
message are reported as the codec's error and take nothing from the messages before them. A
line over the limit is `Oversized`, the same however it was split, and the lines around it are
untouched. The SSE event size bound (`BlockSize`) sees an event over the limit however the
stream is chunked.

The streams and what they must yield are written here, from the standards, with nothing of
mcpkit's: each message is a line the standard library's `json` writes, an SSE event is the
`event:`/`data:` lines and blank line of the WHATWG event stream format spelled out below, so a
wrong framing in mcpkit's own writer cannot make its reader look right.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st
from peer_values import json_values

from mcpkit.errors import RPCError
from mcpkit.protocol.codec import decode
from mcpkit.protocol.framing import LineReader, Oversized, SSEDecoder
from mcpkit.transports.http_client.streams import BlockSize

MESSAGES = st.lists(json_values(8), min_size=1, max_size=6)


def json_line(value: Any) -> bytes:
    """One message as NDJSON carries it: compact JSON by the standard library, UTF-8, which
    escapes every line feed and carriage return inside strings."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def event(data: bytes, name: str | None = None) -> bytes:
    """One event of the WHATWG event stream format: an optional `event:` line, one `data:`
    line, and the blank line that dispatches it."""
    return (b"event: " + name.encode() + b"\n" if name is not None else b"") + (
        b"data: " + data + b"\n\n")


def _splits(data: bytes, cuts: list[int]) -> list[bytes]:
    """`data` cut at the given positions (sorted, duplicates allowed: empty chunks)."""
    points = sorted(min(c, len(data)) for c in cuts)
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


def _lines(chunks: list[bytes], max_bytes: int = 1 << 20) -> list[bytes | Oversized]:
    reader = LineReader(max_bytes)
    out: list[bytes | Oversized] = []
    for chunk in chunks:
        out.extend(reader.feed(chunk))
    out.extend(reader.close())
    return out


def _shape(lines: list[bytes | Oversized]) -> list[Any]:
    return [("oversized", line.size) if isinstance(line, Oversized) else line for line in lines]


def _ndjson(values: list[Any], crlf: list[bool], blanks: list[bool]) -> bytes:
    out = b""
    for i, value in enumerate(values):
        if blanks[i % len(blanks)]:
            out += b"\n  \r\n"
        out += json_line(value) + (b"\r\n" if crlf[i % len(crlf)] else b"\n")
    return out


@given(MESSAGES, st.lists(st.booleans(), min_size=1), st.lists(st.booleans(), min_size=1),
       st.lists(st.integers(0, 4000), max_size=8))
def test_ndjson_yields_the_same_messages_however_the_bytes_are_chunked(
    values: list[Any], crlf: list[bool], blanks: list[bool], cuts: list[int]
) -> None:
    data = _ndjson(values, crlf, blanks)
    expected = [json_line(v) for v in values]
    assert _lines([data]) == expected
    assert _lines(_splits(data, cuts)) == expected
    assert _lines([data[i:i + 1] for i in range(len(data))]) == expected


@given(MESSAGES)
def test_ndjson_split_at_every_byte_yields_the_same_messages(values: list[Any]) -> None:
    data = b"".join(json_line(v) + b"\n" for v in values)
    expected = [json_line(v) for v in values]
    for i in range(len(data) + 1):
        assert _lines([data[:i], data[i:]]) == expected, i


@given(MESSAGES, st.binary(min_size=1, max_size=40), st.lists(st.integers(0, 4000), max_size=5))
@example([{"jsonrpc": "2.0", "method": "ping", "id": 1}], b"}", [])
@example([1], b"\xff\xfe", [])
def test_trailing_garbage_is_the_codecs_error_and_keeps_the_messages_before_it(
    values: list[Any], garbage: bytes, cuts: list[int]
) -> None:
    data = b"".join(json_line(v) + b"\n" for v in values) + garbage
    lines = _lines(_splits(data, cuts))
    expected = [json_line(v) for v in values]
    assert lines[: len(expected)] == expected
    rest = lines[len(expected):]
    for line in rest:  # the garbage: nothing, if it was blank, or one more line
        assert isinstance(line, bytes)
        try:
            decode(line)
        except RPCError:
            continue  # reported as the peer's error, as the connection answers it
    assert len(rest) <= garbage.count(b"\n") + 1


@given(st.lists(st.integers(0, 120), min_size=1, max_size=8), st.integers(1, 60),
       st.lists(st.integers(0, 1000), max_size=8))
@example([61, 10], 60, [61])
@example([60], 60, [])
def test_a_line_over_the_limit_is_oversized_however_split_and_spares_its_neighbours(
    sizes: list[int], limit: int, cuts: list[int]
) -> None:
    lines = [b"x" * n for n in sizes]
    data = b"".join(line + b"\n" for line in lines)
    expected = [("oversized", len(line)) if len(line) > limit else line for line in lines if line]
    assert _shape(_lines([data], limit)) == expected
    assert _shape(_lines(_splits(data, cuts), limit)) == expected
    assert _shape(_lines([data[i:i + 1] for i in range(len(data))], limit)) == expected


@given(st.integers(1, 64), st.integers(1, 4000), st.lists(st.integers(1, 500), max_size=20))
def test_a_line_that_never_ends_is_never_buffered_past_the_limit(
    limit: int, total: int, chunk_sizes: list[int]
) -> None:
    """A peer that never sends a newline cannot make the reader hold more than the limit."""
    reader = LineReader(limit)
    sent = 0
    for size in chunk_sizes or [total]:
        assert reader.feed(b"y" * size) == []
        sent += size
        assert len(reader._buf) <= limit
    assert _shape(reader.close()) == ([("oversized", sent)] if sent > limit else [b"y" * sent])


# -- SSE ---------------------------------------------------------------------------------------

EVENT_NAMES = st.none() | st.sampled_from(["message", "update"])


def _events(chunks: list[bytes]) -> list[tuple[str, str, str | None, int | None]]:
    decoder = SSEDecoder()
    return [event for chunk in chunks for event in decoder.feed(chunk)]


def _sse(values: list[Any], names: list[str | None], crlf: bool, comments: bool) -> bytes:
    out = b": keep-alive\n\n" if comments else b""
    for i, value in enumerate(values):
        block = event(json_line(value), names[i % len(names)])
        if crlf:
            block = block.replace(b"\n", b"\r\n")
        out += block + (b":\n" if comments else b"")
    return out


def _datas(events: list[tuple[str, str, str | None, int | None]]) -> list[tuple[str, Any]]:
    return [(name, data) for name, data, _id, _retry in events if data]


@given(MESSAGES, st.lists(EVENT_NAMES, min_size=1), st.booleans(), st.booleans(),
       st.lists(st.integers(0, 4000), max_size=8))
def test_sse_yields_the_same_events_however_the_bytes_are_chunked(
    values: list[Any], names: list[str | None], crlf: bool, comments: bool, cuts: list[int]
) -> None:
    data = _sse(values, names, crlf, comments)
    expected = [(names[i % len(names)] or "message", json_line(v).decode())
                for i, v in enumerate(values)]
    assert _datas(_events([data])) == expected
    assert _datas(_events(_splits(data, cuts))) == expected
    assert _datas(_events([data[i:i + 1] for i in range(len(data))])) == expected


@given(MESSAGES)
def test_sse_split_at_every_byte_yields_the_same_events(values: list[Any]) -> None:
    data = b"".join(event(json_line(v)) for v in values)
    expected = [("message", json_line(v).decode(), None, None) for v in values]
    for i in range(len(data) + 1):
        assert _events([data[:i], data[i:]]) == expected, i


@given(MESSAGES, st.binary(max_size=60), st.lists(st.integers(0, 4000), max_size=5))
@example([1], b"data: {\n\n", [])
@example([1], b"retry: \xc2\xb2\n\n", [])
@example([1], b"retry: \xd9\xa3\nid: 7\n\n", [])
@example([1], b"id\nretry\nevent\ndata\n\n", [])
def test_sse_garbage_after_the_events_is_reported_and_keeps_them(
    values: list[Any], garbage: bytes, cuts: list[int]
) -> None:
    """Whatever follows, the events before it are intact, and the parser raises nothing: what
    the garbage dispatches is data the codec refuses or a well formed event, never an error
    out of the parser itself."""
    head = b"".join(event(json_line(v)) for v in values)
    events = _events(_splits(head + garbage, cuts))
    assert _datas(events)[: len(values)] == [("message", json_line(v).decode()) for v in values]
    for _name, data, event_id, retry in events[len(values):]:
        assert retry is None or (type(retry) is int and retry >= 0)
        assert event_id is None or type(event_id) is str
        if data:
            try:
                decode(data)
            except RPCError:
                pass


@given(st.binary(max_size=400))
def test_sse_parser_takes_any_bytes(data: bytes) -> None:
    for _name, text, event_id, retry in _events([data]):
        assert type(text) is str and (event_id is None or type(event_id) is str)
        assert retry is None or (type(retry) is int and retry >= 0)


def _blocks(sizes: list[int]) -> Iterator[bytes]:
    for n in sizes:
        yield b"data: " + b"z" * n + b"\n\n"


@given(st.lists(st.integers(0, 200), min_size=1, max_size=6), st.integers(20, 150),
       st.lists(st.integers(0, 2000), max_size=8))
@example([100, 1], 50, [])
def test_an_event_over_the_limit_is_seen_however_the_stream_is_chunked(
    sizes: list[int], limit: int, cuts: list[int]
) -> None:
    """The HTTP client fails a stream whose event is over `max_message_bytes`; that must not
    depend on where the network cut the bytes (an event and its successor in one chunk)."""
    stream = b"".join(_blocks(sizes))
    # Byte by byte, a block is largest just before its last line feed arrives.
    largest = max(len(block) for block in _blocks(sizes)) - 1
    for chunks in (_splits(stream, cuts), [stream], [stream[i:i + 1] for i in range(len(stream))]):
        block = BlockSize()
        seen = 0
        for chunk in chunks:
            block.add(chunk)
            seen = max(seen, block.largest)
        assert seen == largest
        assert (seen > limit) == (largest > limit)


def test_an_event_over_the_limit_then_a_small_one_in_one_chunk_is_over_the_limit() -> None:
    """Found by the property above: only the block a chunk left open was measured, so a chunk
    holding a 100-byte event and a small one after it counted 0 against a limit of 50."""
    block = BlockSize()
    block.add(b"data: " + b"z" * 100 + b"\n\n" + b"data: 1\n\n")
    assert block.largest > 50


def test_an_sse_retry_of_digits_outside_ascii_is_ignored_not_raised() -> None:
    """Found by the garbage property: "retry: ²" passed str.isdigit() and int() raised
    ValueError out of the parser, through the HTTP client's reading of a response stream."""
    events = _events([b"retry: \xc2\xb2\ndata: 1\n\nretry: \xd9\xa3\ndata: 2\n\nretry: 25\n\n"])
    assert [(data, retry) for _name, data, _id, retry in events] == [("1", None), ("2", None),
                                                                      ("", 25)]
