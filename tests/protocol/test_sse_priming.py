"""SSE blocks that carry only an event id or a reconnection wait (a priming event without a
data line): the client needs both to resume a legacy stream, so they are yielded too."""

from __future__ import annotations

from mcpkit.protocol.framing import SSEDecoder


def test_an_id_and_retry_block_without_data_is_yielded_with_empty_data() -> None:
    events = list(SSEDecoder().feed(b"id: e-1\nretry: 700\n\n"))
    assert events == [("message", "", "e-1", 700)]


def test_the_last_event_id_carries_on_and_retry_belongs_to_its_block() -> None:
    dec = SSEDecoder()
    raw = b'retry: 300\n\ndata: {"a":1}\n\nid: 9\n\ndata: {"b":2}\n\n'
    events = []
    for i in range(len(raw)):  # byte by byte
        events.extend(dec.feed(raw[i : i + 1]))
    assert events == [
        ("message", "", None, 300),
        ("message", '{"a":1}', None, None),
        ("message", "", "9", None),
        ("message", '{"b":2}', "9", None),
    ]


def test_comment_only_blocks_are_still_not_events() -> None:
    assert list(SSEDecoder().feed(b": keep-alive\n\n: again\n\n")) == []
