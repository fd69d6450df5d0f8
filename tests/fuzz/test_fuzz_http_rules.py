"""The other rules a Streamable HTTP request meets before its body is read, fed any header
bytes: the era it is routed to, content negotiation, and the Host/Origin policy.

Each is a pure function of bytes a client chose. Whatever they are, `route` names one of the
three endpoints, `accepts` and `is_json_content` answer booleans, and `HostPolicy.check` allows
or refuses with a reason and the status it travels with (400 or 403): none raises. The
answers do not depend on the caches in front of them (asked twice, the same answer), and the
loopback policy allows what a local client sends.
"""

from __future__ import annotations

from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st
from peer_values import near_miss_messages

from mcpkit.errors import RPCError
from mcpkit.protocol.codec import classify
from mcpkit.protocol.http import (
    LEGACY,
    MODERN,
    SESSION,
    HostPolicy,
    HostRefusal,
    Status,
    accepts,
    is_json_content,
    route,
)

VALUES = st.none() | st.binary(max_size=60) | st.sampled_from([
    b"application/json", b"text/event-stream", b"application/json;q=0, text/*", b"*/*;q=0.0",
    b"localhost:8000", b"127.0.0.1:\xb2", b"[::1]:7", b"[::1", b"http://localhost:3000",
    b"null", b"localhost\nevil.example", b"2025-11-25", b" 2026-07-28\t",
])
POLICIES = [HostPolicy(), HostPolicy(["*"]), HostPolicy(["example.com:8443", "*.example.org"],
                                                         ["https://app.example.com"])]


@given(st.sampled_from(["POST", "GET", "DELETE", "PUT", ""]), VALUES, VALUES,
       near_miss_messages())
def test_every_request_is_routed_to_one_endpoint(
    method: str, session_id: bytes | None, version: bytes | None, body: Any
) -> None:
    try:
        message = classify(body)
    except RPCError:
        message = None
    assert route(method, session_id, version, message) in (MODERN, LEGACY, SESSION)


@given(VALUES)
@example(b"application/json;q=0")
@example(b"\xff\xfe")
def test_negotiation_answers_any_accept_and_content_type(value: bytes | None) -> None:
    answer = accepts(value)
    assert type(answer) is tuple and all(type(a) is bool for a in answer)
    assert accepts(value) == answer
    if value is not None:
        assert type(is_json_content(value)) is bool
        assert is_json_content(value) == is_json_content(bytes(value))


@given(st.sampled_from(range(len(POLICIES))), VALUES, VALUES)
@example(0, b"localhost:\xb2", None)
@example(0, b"localhost\nlocalhost", None)
@example(0, b"localhost", b"http://localhost\nhttp://evil")
def test_the_host_policy_allows_or_refuses_any_host_and_origin(
    which: int, host: bytes | None, origin: bytes | None
) -> None:
    policy = POLICIES[which]
    answer = policy.check(host, origin)
    assert answer is None or (isinstance(answer, HostRefusal) and answer
                              and answer.status in (Status.BAD_REQUEST, Status.FORBIDDEN))
    assert policy.check(host, origin) == answer
    if host is not None and b"\n" in host:
        assert answer is not None and answer.status == Status.BAD_REQUEST


@given(st.sampled_from(["localhost", "127.0.0.1", "[::1]"]), st.integers(1, 65535))
def test_the_loopback_policy_allows_a_local_client_on_any_port(name: str, port: int) -> None:
    authority = f"{name}:{port}".encode()
    assert HostPolicy().check(authority, None) is None
    assert HostPolicy().check(authority, b"http://" + authority) is None
