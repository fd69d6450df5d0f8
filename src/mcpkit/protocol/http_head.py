"""How big an HTTP/1.1 request head may grow, measured as its bytes arrive, without I/O.

An HTTP parser keeps a header it has not finished in memory; neither httptools nor h11 has a
bound of its own on a header's size or on how many there are (h11 bounds only the whole head,
and answers 400 past it). `HeadMeter` is fed the raw bytes of a connection before the parser
sees them, while a request head is being read, and says when the head is over a limit: the
whole head (`max_bytes`), one line of it (`max_line_bytes`: the request line or one header),
or the number of header lines (`max_headers`). The listener (`mcpkit.transports.http_server.limits`)
then answers 431 (414 for the request line) and closes, so the parser's buffer goes with the
connection. It refuses one shape too, a folded header line (400), which parsers and proxies
join differently. The meter reads nothing but line ends and line starts: it does not parse,
and it stops at the blank line that ends the head, whatever comes after it in the same read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mcpkit.protocol.http import Status

__all__ = [
    "HeadMeter",
    "HeadOverflow",
    "head_fits",
    "head_pattern",
]

def head_pattern(max_headers: int) -> re.Pattern[bytes]:
    """`head_fits` as one scan in C: `pattern.match(data, 0, max_bytes)` matches exactly when
    `head_fits(data, max_bytes, max_headers)` is true. The listener compiles it once per
    server and runs it on the first read of every request. Its repeats are possessive (a line
    holds no CR, so none need give back what it took): that makes the scan as fast as the
    three of `bytes.find`, a fold search and `bytes.count` that it replaces."""
    return re.compile(rb"[A-Za-z][^\r\n]*+\r\n(?:[^ \t\r\n][^\r\n]*+\r\n){0,%d}+\r\n"
                      % max_headers)


def head_fits(data: bytes, max_bytes: int, max_headers: int) -> bool:
    """Whether `data`, the first bytes of a request head, hold all of it within the limits a
    `HeadMeter` with `max_headers` and a line limit of at least `max_bytes` applies: a request
    line, at most `max_headers` header lines, none folded, each line ended by CRLF with no
    bare CR or LF in it, and the blank line that ends the head, all within `max_bytes` (so no
    line of it can be over a limit either).

    The cheap way to meter the head of an ordinary client, which comes whole in one read: one
    scan of the bytes in C (`head_pattern`) and no copy, where the meter does Python work per
    line. False says nothing about the head: the meter then decides. The scan ends the head at
    its first CRLF CRLF, where the meter and any parser end it too: no line of a head it passes
    holds a bare line end that a lenient parser could take for one."""
    return head_pattern(max_headers).match(data, 0, max_bytes) is not None


@dataclass(frozen=True, slots=True)
class HeadOverflow:
    """Which limit a head went over, and the words that tell the client."""

    status: int
    reason: str


class HeadMeter:
    """The running measure of one request head, fed raw bytes as they arrive.

    `feed(data)` returns how many bytes of `data` belonged to the head once its end was seen
    (the rest is body, or the next request), None while the head goes on; and raises nothing:
    a head over a limit sets `overflow`, which the caller checks after each feed."""

    __slots__ = ("_line", "_lines", "_max_bytes", "_max_headers", "_max_line", "_tail",
                 "overflow", "size")

    def __init__(self, max_bytes: int, max_line_bytes: int, max_headers: int) -> None:
        self._max_bytes = max_bytes
        self._max_line = max_line_bytes
        self._max_headers = max_headers
        self.size = 0
        """Bytes of the head seen so far."""
        self._line = 0
        """Bytes of the line not ended yet."""
        self._lines = 0
        """Lines ended so far (the request line, then one per header)."""
        self._tail = b""
        """The last bytes fed, to find a head's end split between two reads."""
        self.overflow: HeadOverflow | None = None

    def feed(self, data: bytes) -> int | None:
        end = self._end_in(data)
        part = data if end is None else data[:end]
        self.size += len(part)
        if self._folded(part):
            return end
        lines = part.split(b"\n")  # the first continues the line before; the last is unended
        if len(lines) > 1:
            self._line += len(lines[0])
            if self._line_over():
                return end
            self._lines += 1
            self._line = max(map(len, lines[1:-1]), default=0)
            if self._line_over():
                return end
            self._lines += len(lines) - 2
        self._line = (self._line if len(lines) == 1 else 0) + len(lines[-1])
        if end is None:
            self._line_over()
            self._tail = (self._tail + data)[-3:]
        if self.overflow is None:
            self._check_totals(end is not None)
        return end

    def _end_in(self, data: bytes) -> int | None:
        """Where the blank line that ends the head finishes in `data` (CRLF CRLF, or the bare
        LF line ends a lenient parser takes), counting bytes carried from the last read."""
        # Looked for only as far as the head may still go: the rest of a read that is all body
        # (or all of a head too big) is not scanned, nor copied.
        seen = self._tail + data[:self._max_bytes - self.size + 4]
        crlf = seen.find(b"\r\n\r\n")
        stop = crlf + 4 if crlf >= 0 else len(seen)
        ends = [stop] if crlf >= 0 else []
        ends += [i + len(mark) for mark in (b"\n\n", b"\n\r\n")
                 if (i := seen.find(mark, 0, stop)) >= 0]
        if not ends:
            return None
        return max(min(ends) - len(self._tail), 0)

    def _folded(self, part: bytes) -> bool:
        """A header line that begins with a space or tab continues the one before (obs-fold,
        RFC 9112 5.2): parsers and proxies join it, or not, each their own way. So is one
        just after the request line, where it would hide a header from some of them."""
        at_start = self._lines > 0 and self._line == 0 and part[:1] in (b" ", b"\t")
        if not (at_start or b"\n " in part or b"\n\t" in part):
            return False
        self.overflow = HeadOverflow(Status.BAD_REQUEST, (
            "Bad Request: a header line begins with whitespace (obs-fold); send each header "
            "on one line"))
        return True

    def _line_over(self) -> bool:
        if self._line <= self._max_line:
            return False
        if self._lines == 0:
            self.overflow = HeadOverflow(Status.URI_TOO_LONG, (
                f"URI Too Long: the request line is over {self._max_line} bytes"))
        else:
            self.overflow = HeadOverflow(Status.HEADERS_TOO_LARGE, (
                f"Request Header Fields Too Large: a header line is over {self._max_line} "
                "bytes"))
        return True

    def _check_totals(self, ended: bool) -> None:
        # The request line and, once the head ended, the blank line are not headers.
        headers = self._lines - 1 - (1 if ended else 0)
        if headers > self._max_headers:
            self.overflow = HeadOverflow(Status.HEADERS_TOO_LARGE, (
                f"Request Header Fields Too Large: more than {self._max_headers} headers"))
        elif self.size > self._max_bytes:
            self.overflow = HeadOverflow(Status.HEADERS_TOO_LARGE, (
                f"Request Header Fields Too Large: the request head is over {self._max_bytes} "
                "bytes"))
