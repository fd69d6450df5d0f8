"""NDJSON and SSE framing, fed whole, byte by byte and with trailing bytes."""

from __future__ import annotations

import pytest

from mcpkit.protocol.framing import LineReader, Oversized, SSEDecoder, sse_event

STREAM = b'{"a":1}\n{"b":2}\r\n\n{"c":3}\n'


def test_lines_fed_whole() -> None:
    assert LineReader().feed(STREAM) == [b'{"a":1}', b'{"b":2}', b'{"c":3}']


def test_lines_fed_byte_by_byte() -> None:
    reader = LineReader()
    out = []
    for i in range(len(STREAM)):
        out.extend(reader.feed(STREAM[i : i + 1]))
    assert out == [b'{"a":1}', b'{"b":2}', b'{"c":3}']


def test_trailing_bytes_wait_for_their_newline_or_for_close() -> None:
    reader = LineReader()
    assert reader.feed(b'{"a":1}\n{"b"') == [b'{"a":1}']
    assert reader.feed(b":2}") == []
    assert reader.close() == [b'{"b":2}']


def test_oversized_line_is_dropped_without_buffering_it_and_reading_goes_on() -> None:
    reader = LineReader(max_bytes=10)
    out = reader.feed(b"x" * 8)
    out += reader.feed(b"y" * 100)
    assert reader._buf == bytearray()  # nothing held while dropping
    out += reader.feed(b'z\n{"ok":1}\n')
    assert len(out) == 2
    assert isinstance(out[0], Oversized) and out[0].size == 109
    assert out[1] == b'{"ok":1}'


def test_oversized_line_arriving_whole_is_refused() -> None:
    out = LineReader(max_bytes=4).feed(b"123456\n12\n")
    assert isinstance(out[0], Oversized) and out[1] == b"12"


def test_sse_event_is_one_data_line() -> None:
    assert sse_event(b'{"a":1}') == b'data: {"a":1}\n\n'
    assert sse_event(b"{}", "message") == b"event: message\ndata: {}\n\n"


def test_sse_decoder_ignores_comments_and_handles_split_chunks() -> None:
    raw = b': keep-alive\n\nevent: message\nid: 7\ndata: {"x":1}\n\ndata: {"y":2}\r\n\r\n'
    dec = SSEDecoder()
    events = []
    for i in range(len(raw)):
        events.extend(dec.feed(raw[i : i + 1]))
    assert [(e[0], e[1]) for e in events] == [("message", '{"x":1}'), ("message", '{"y":2}')]
    assert events[0][2] == "7"


# The event stream examples of the WHATWG HTML standard (section 9.2.5, "Parsing an event
# stream", and the examples after it), with the events the standard says a client dispatches.
WHATWG_STREAMS = [
    (b"data: YHOO\ndata: +2\ndata: 10\n\n", [("message", "YHOO\n+2\n10", None, None)]),
    (b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\n"
     b"data:  third event\n\n",
     [("message", "first event", "1", None), ("message", "second event", "", None),
      ("message", " third event", "", None)]),
    # The last block has no blank line after it: the stream ended, nothing is dispatched.
    (b"data\n\ndata\ndata\n\ndata:", [("message", "", None, None), ("message", "\n", None, None)]),
    # "The following stream fires two identical events" (one space after the colon is dropped).
    (b"data:test\n\ndata: test\n\n", [("message", "test", None, None)] * 2),
]


@pytest.mark.parametrize(("stream", "events"), WHATWG_STREAMS, ids=range(len(WHATWG_STREAMS)))
def test_the_whatwg_example_streams_dispatch_the_events_the_standard_gives(
        stream: bytes, events: list[tuple[str, str, str | None, int | None]]) -> None:
    assert list(SSEDecoder().feed(stream)) == events
    byte_by_byte = SSEDecoder()
    assert [e for i in range(len(stream)) for e in byte_by_byte.feed(stream[i:i + 1])] == events
