"""The caches of header values are bounded in entries and in the length of what they keep: a
client sending ever new long values (Accept, Content-Type, Host, Origin, the mirrored headers)
cannot make them hold its bytes, and a value answers the same whether it was cached or not."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mcpkit.errors import HeaderMismatchError
from mcpkit.protocol import http, http_mirror
from mcpkit.protocol.codec import Request
from mcpkit.protocol.headers import MAX_CACHED_VALUE, read_headers
from mcpkit.protocol.http import (
    CACHE_ENTRIES,
    POLICY_ENTRIES,
    HostPolicy,
    Status,
    accepts,
    check_request_headers,
    is_json_content,
)
from mcpkit.protocol.http_mirror import SEEN_ENTRIES

LONG = MAX_CACHED_VALUE + 1


def distinct(prefix: bytes, count: int, size: int) -> Iterator[bytes]:
    """`count` different values of `size` bytes, each starting with `prefix`."""
    for n in range(count):
        value = prefix + b"%d;" % n
        yield value + b"x" * (size - len(value))


@pytest.fixture(autouse=True)
def empty_caches() -> Iterator[None]:
    saved = (dict(http._ACCEPT_CACHE), dict(http._JSON_CONTENT),
             dict(http_mirror._PLAIN_SEEN), dict(http_mirror._NAMES_SEEN))
    for cache in (http._ACCEPT_CACHE, http_mirror._PLAIN_SEEN, http_mirror._NAMES_SEEN):
        cache.clear()
    yield
    for cache, before in zip((http._ACCEPT_CACHE, http._JSON_CONTENT, http_mirror._PLAIN_SEEN,
                              http_mirror._NAMES_SEEN), saved, strict=True):
        cache.clear()
        cache.update(before)


def kept_bytes(cache: dict[object, object]) -> int:
    total = 0
    for key in cache:
        parts = key if isinstance(key, tuple) else (key,)
        total += sum(len(p) for p in parts if isinstance(p, bytes))
    return total


def test_long_accept_values_are_judged_but_never_kept() -> None:
    for value in distinct(b"application/json, text/event-stream; q=1; v=", 500, LONG * 20):
        assert accepts(value) == (True, True)
    for value in distinct(b"text/html; v=", 500, LONG):
        assert accepts(value) == (False, False)
    assert http._ACCEPT_CACHE == {}


def test_short_accept_values_fill_at_most_the_cache_and_answer_alike() -> None:
    for value in distinct(b"text/event-stream;v=", 3 * CACHE_ENTRIES, 40):
        assert accepts(value) == (False, True)
        assert len(http._ACCEPT_CACHE) <= CACHE_ENTRIES
    assert accepts(b"application/json") == (True, False)
    assert accepts(b"application/json") == (True, False)  # cached now, the same answer
    assert accepts(None) == (True, True)


def test_content_types_are_bounded_and_the_usual_ones_stay_known() -> None:
    before = kept_bytes(http._JSON_CONTENT)
    for value in distinct(b"application/json; charset=utf-8; v=", 500, LONG * 10):
        assert is_json_content(value)
    assert kept_bytes(http._JSON_CONTENT) == before
    for value in distinct(b"text/plain; v=", 3 * CACHE_ENTRIES, 30):
        assert not is_json_content(value)
        assert len(http._JSON_CONTENT) <= CACHE_ENTRIES
    assert is_json_content(None) and is_json_content(b"application/json")
    assert not is_json_content(b"text/plain")


def test_the_host_policy_keeps_no_long_value_and_at_most_its_entries() -> None:
    policy = HostPolicy()
    for origin in distinct(b"http://evil.example/", 300, LONG * 8):
        reason = policy.check(b"127.0.0.1:8000", origin)
        assert reason is not None and reason.status == Status.FORBIDDEN
    for host in distinct(b"evil-", 300, LONG):
        assert policy.check(host, None) is not None
    assert policy._cache == {}
    for n in range(3 * POLICY_ENTRIES):
        assert policy.check(b"localhost:%d" % n, None) is None
        assert len(policy._cache) <= POLICY_ENTRIES
    assert policy.check(b"localhost:1", b"http://localhost:1") is None


def test_a_long_allowed_value_is_allowed_each_time() -> None:
    name = "a" * LONG + ".example.com"
    policy = HostPolicy([name])
    for _ in range(3):
        assert policy.check(name.encode(), None) is None
    assert policy._cache == {}


def _tools_call(name: str) -> Request:
    return Request(1, "tools/call", {"name": name, "arguments": {},
                                     "_meta": {"io.modelcontextprotocol/protocolVersion":
                                               "2026-07-28"}})


def test_mirrored_values_are_bounded_in_length_and_entries() -> None:
    for n in range(300):
        name = f"tool-{n}-" + "n" * LONG
        headers = read_headers([(b"mcp-method", b"tools/call"), (b"mcp-name", name.encode()),
                                (b"mcp-protocol-version", b"2026-07-28")])
        check_request_headers(headers, _tools_call(name))
    assert kept_bytes(http_mirror._NAMES_SEEN) == 0
    for n in range(3 * SEEN_ENTRIES):
        name = f"t{n}"
        headers = read_headers([(b"mcp-method", b"tools/call"), (b"mcp-name", name.encode()),
                                (b"mcp-protocol-version", b"2026-07-28")])
        check_request_headers(headers, _tools_call(name))
        assert len(http_mirror._NAMES_SEEN) <= SEEN_ENTRIES
    assert len(http_mirror._PLAIN_SEEN) <= SEEN_ENTRIES


def test_a_long_mismatched_value_is_still_refused() -> None:
    name = "n" * LONG
    headers = read_headers([(b"mcp-method", b"tools/call"), (b"mcp-name", b"other"),
                            (b"mcp-protocol-version", b"2026-07-28")])
    with pytest.raises(HeaderMismatchError, match="does not match body value"):
        check_request_headers(headers, _tools_call(name))
    long_method = read_headers([(b"mcp-method", b"tools/call" + b" " * LONG + b"\x01"),
                                (b"mcp-protocol-version", b"2026-07-28")])
    with pytest.raises(HeaderMismatchError, match="invalid character"):
        check_request_headers(long_method, _tools_call("x"))


def test_repeated_host_and_origin_keep_every_value() -> None:
    headers = read_headers([(b"host", b"evil.example"), (b"host", b"127.0.0.1"),
                            (b"origin", b"http://a"), (b"origin", b"http://b"),
                            (b"origin", b"http://c")])
    assert headers.host == b"evil.example\n127.0.0.1"
    assert headers.origin == b"http://a\nhttp://b\nhttp://c"
    policy = HostPolicy(["*"], ["*"])  # allowing everything still refuses a repeat
    host_twice = policy.check(headers.host, None)
    assert host_twice is not None and host_twice.status == Status.BAD_REQUEST
    origin_thrice = policy.check(b"127.0.0.1", headers.origin)
    assert origin_thrice is not None and origin_thrice.status == Status.FORBIDDEN
    assert "appears 3 times" in origin_thrice
