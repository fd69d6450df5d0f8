"""`HeadMeter`: the size of a request head measured as its bytes arrive, however the reads
split it, and the limit it first goes over; `head_fits`, the scan that passes a whole head
without it, never passes one the meter would refuse."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from mcpkit.protocol.http import Status
from mcpkit.protocol.http_head import HeadMeter, head_fits

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


# -- head_fits: the whole head of one read, scanned in C ------------------------------------------

LINE = st.text(alphabet="ab: \t\r\n", max_size=30).map(str.encode)
"""Header lines with every byte the limits look at: spaces and tabs that fold a line, bare
CRs and LFs that end lines (or heads) early."""


@given(request=st.sampled_from([b"GET / HTTP/1.1", b"POST /mcp HTTP/1.1", b"\r\nGET / HTTP/1.1",
                                b" GET / HTTP/1.1", b"G"]),
       lines=st.lists(LINE, max_size=12), tail=st.binary(max_size=20))
@example(request=b"GET / HTTP/1.1", lines=[b"A: 1", b" folded"], tail=b"")
@example(request=b"GET / HTTP/1.1", lines=[b"A: 1"] * 6, tail=b"")
@example(request=b"G", lines=[b"a"] * 6, tail=b"")
@example(request=b"G", lines=[b"a\nb\nc\nd\ne\nf"], tail=b"")
@example(request=b"GET / HTTP/1.1", lines=[b"A: 1\n\nB: " + b"x" * 70], tail=b"")
def test_a_head_that_fits_is_one_the_meter_passes(request: bytes, lines: list[bytes],
                                                  tail: bytes) -> None:
    data = b"\r\n".join([request, *lines]) + b"\r\n\r\n" + tail
    for max_bytes, headers in ((60, 5), (200, 5), (200, 50), (len(data), 3)):
        if head_fits(data, max_bytes, headers):
            m = HeadMeter(200, max_bytes, headers)
            assert m.feed(data) is not None  # the meter, too, saw the head end in this read
            assert m.overflow is None, (data, max_bytes, headers, m.overflow)


@pytest.mark.parametrize(("data", "why"), [
    (HEAD[:-2], "the head does not end in this read"),
    (b"\r\n" + HEAD, "it does not start with a request line"),
    (b"GET / HTTP/1.1\r\nA: 1\r\n b\r\n\r\n", "a folded line"),
    (b"GET / HTTP/1.1\r\nA: 1\r\n\tb\r\n\r\n", "a line folded with a tab"),
    (b"GET / HTTP/1.1\r\n" + b"A: 1\r\n" * 6 + b"\r\n", "six headers, five allowed"),
    (b"GET / HTTP/1.1\r\nX: " + b"y" * 80 + b"\r\n\r\n", "longer than a line may be"),
    (b"GET / HTTP/1.1\r\nA: 1\nB: 2\r\n\r\n", "a bare LF a lenient parser may end a line at"),
    (b"GET / HTTP/1.1\r\nA: 1\rB: 2\r\n\r\n", "a bare CR inside a line"),
])
def test_a_head_near_or_over_a_limit_goes_to_the_meter(data: bytes, why: str) -> None:
    assert not head_fits(data, 60, 5), why


def test_an_ordinary_head_fits_with_its_body_behind_it() -> None:
    assert head_fits(HEAD + b"body", 60, 5)
    assert head_fits(b"GET / HTTP/1.1\r\n" + b"A: 1\r\n" * 5 + b"\r\n", 60, 5)
