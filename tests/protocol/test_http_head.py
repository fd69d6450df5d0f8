"""`HeadMeter`: the size of a request head measured as its bytes arrive, however the reads
split it, and the limit it first goes over."""

from __future__ import annotations

import pytest

from mcpkit.protocol.http import Status
from mcpkit.protocol.http_head import HeadMeter

BAD_REQUEST, HEADERS_TOO_LARGE, URI_TOO_LONG = (
    Status.BAD_REQUEST, Status.HEADERS_TOO_LARGE, Status.URI_TOO_LONG)

HEAD = b"POST /mcp HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\n"


def meter(max_bytes: int = 200, line: int = 60, headers: int = 5) -> HeadMeter:
    return HeadMeter(max_bytes, line, headers)


@pytest.mark.parametrize("cut", range(1, len(HEAD)))
def test_the_end_of_a_head_is_found_wherever_the_reads_split_it(cut: int) -> None:
    m = meter()
    first = m.feed(HEAD[:cut])
    if first is not None:  # the whole head was in the first read
        assert first == len(HEAD[:cut]) == len(HEAD)
        return
    assert m.feed(HEAD[cut:] + b"body") == len(HEAD) - cut
    assert m.overflow is None and m.size == len(HEAD)


def test_body_bytes_after_the_head_are_not_counted() -> None:
    m = meter(max_bytes=len(HEAD))
    assert m.feed(HEAD + b"x" * 10_000) == len(HEAD)
    assert m.overflow is None


def test_bare_line_feeds_end_a_head_too() -> None:
    assert meter().feed(b"GET / HTTP/1.1\nHost: a\n\nrest") == len(b"GET / HTTP/1.1\nHost: a\n\n")


@pytest.mark.parametrize(("data", "status", "words"), [
    (b"GET /" + b"x" * 70, URI_TOO_LONG, "request line is over 60"),
    (b"GET / HTTP/1.1\r\nX: " + b"y" * 70, HEADERS_TOO_LARGE, "header line is over 60"),
    (b"GET / HTTP/1.1\r\n" + b"A: 1\r\n" * 6, HEADERS_TOO_LARGE, "more than 5 headers"),
    (b"GET / HTTP/1.1\r\n" + b"A: " + b"z" * 50 + b"\r\n" * 1 + b"B: " + b"z" * 50 + b"\r\n"
     + b"C: " + b"z" * 50 + b"\r\n" + b"D: " + b"z" * 50, HEADERS_TOO_LARGE, "over 200 bytes"),
    (b"GET / HTTP/1.1\r\nA: 1\r\n\tfolded\r\n", BAD_REQUEST, "obs-fold"),
])
def test_each_limit_is_named_when_it_is_passed(data: bytes, status: int, words: str) -> None:
    m = meter()
    m.feed(data)
    assert m.overflow is not None
    assert m.overflow.status == status and words in m.overflow.reason


def test_a_long_line_is_caught_across_many_small_reads() -> None:
    m = meter()
    m.feed(b"GET / HTTP/1.1\r\nX: ")
    for _ in range(100):
        m.feed(b"y")
        if m.overflow is not None:
            break
    assert m.overflow is not None and m.overflow.status == HEADERS_TOO_LARGE
    assert m.size < 100


def test_a_fold_split_from_its_line_end_by_a_read_is_caught() -> None:
    m = meter()
    m.feed(b"GET / HTTP/1.1\r\nA: 1\r\n")
    assert m.overflow is None
    m.feed(b" more\r\n\r\n")
    assert m.overflow is not None and m.overflow.status == BAD_REQUEST


def test_exactly_at_the_limits_passes() -> None:
    head = b"GET / HTTP/1.1\r\n" + b"".join(b"H%d: v\r\n" % n for n in range(5)) + b"\r\n"
    m = meter(max_bytes=len(head))
    assert m.feed(head) == len(head)
    assert m.overflow is None
