"""The rules of legacy session creation without a server: the token bucket per client, who a
request counts as, and the refusals' statuses, messages and Retry-After."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from helpers.wire import LEGACY, check_server_message

from mcpkit.legacy.session_quota import (
    CreationRate,
    SessionLimits,
    exempt,
    owner_of,
    rate_refusal,
    store_full_refusal,
)
from mcpkit.protocol.http import PRINCIPAL_SCOPE_KEY


def test_a_burst_then_the_steady_rate() -> None:
    rate = CreationRate(SessionLimits(rate_per_s=2.0, burst=3))
    assert [rate.take("a", 0.0) for _ in range(3)] == [None, None, None]
    assert rate.take("a", 0.0) == pytest.approx(0.5)
    assert rate.take("a", 0.25) == pytest.approx(0.25)  # half a token came back meanwhile
    assert rate.take("a", 0.5) is None
    assert rate.take("b", 0.5) is None  # another client has its own bucket


def test_a_refused_take_spends_nothing_and_a_quiet_client_refills_to_its_burst() -> None:
    rate = CreationRate(SessionLimits(rate_per_s=1.0, burst=2))
    rate.take("a", 0.0), rate.take("a", 0.0)
    for _ in range(5):
        assert rate.take("a", 0.0) is not None
    assert [rate.take("a", 100.0) for _ in range(3)][:2] == [None, None]


def test_the_table_of_buckets_is_bounded() -> None:
    rate = CreationRate(SessionLimits(burst=1, max_clients=3))
    for n in range(10):
        rate.take(f"c{n}", 0.0)
    assert len(rate._buckets) == 3
    assert rate.take("c0", 0.0) is None  # forgotten: a full bucket again
    assert rate.take("c9", 0.0) is not None  # remembered: still empty


@pytest.mark.parametrize(("scope", "key", "authenticated"), [
    ({PRINCIPAL_SCOPE_KEY: "alice", "client": ("10.0.0.1", 5)}, "principal:alice", True),
    ({PRINCIPAL_SCOPE_KEY: {"iss": "https://idp", "sub": "42"}}, "principal:", True),
    ({"user": SimpleNamespace(is_authenticated=True, identity="bob")}, "principal:bob", True),
    ({"user": SimpleNamespace(is_authenticated=False, identity=""), "client": ("10.0.0.1", 5)},
     "address:10.0.0.1", False),
    ({"client": ("2001:db8:1:2:3:4:5:6", 5)}, "address:2001:db8:1:2::/64", False),
    ({"client": ("::ffff:192.0.2.7", 5)}, "address:192.0.2.7", False),
    ({"client": None}, "address:unknown", False),
    ({"client": ("/run/mcp.sock", 0)}, "address:/run/mcp.sock", False),
])
def test_who_a_request_counts_as(scope: dict[str, Any], key: str, authenticated: bool) -> None:
    owner = owner_of(scope)
    assert owner.key.startswith(key) and owner.authenticated is authenticated


@pytest.mark.parametrize(("scope", "free"), [
    ({"client": ("127.0.0.1", 5)}, True), ({"client": ("::1", 5)}, True),
    ({"client": ("127.0.0.9", 5)}, True), ({"client": ("10.0.0.1", 5)}, False),
    ({"client": ("127.0.0.1", 5), PRINCIPAL_SCOPE_KEY: "alice"}, False),
    ({"client": None}, False), ({"client": ("/run/mcp.sock", 0)}, False),
])
def test_only_anonymous_loopback_clients_are_free_of_the_client_limits(
        scope: dict[str, Any], free: bool) -> None:
    assert exempt(scope, owner_of(scope), SessionLimits()) is free
    assert exempt(scope, owner_of(scope), SessionLimits(limit_loopback=True)) is False


def test_forwarded_headers_are_not_read() -> None:
    scope = {"client": ("127.0.0.1", 5), "headers": [(b"x-forwarded-for", b"203.0.113.9")]}
    assert owner_of(scope).key == "address:127.0.0.1"


def test_the_refusals_say_when_to_come_back() -> None:
    limits = SessionLimits(rate_per_s=0.5, burst=2, full_retry_after_s=45)
    slow = rate_refusal(7, 1.2, limits)
    assert slow.status == 429 and slow.headers == ((b"retry-after", b"2"),)
    assert slow.message is not None and slow.message["id"] == 7
    assert "faster than 0.5 a second (bursts of 2)" in slow.message["error"]["message"]
    full = store_full_refusal(7, limits)
    assert full.status == 503 and full.headers == ((b"retry-after", b"45"),)
    for refusal in (slow, full):
        assert refusal.message is not None
        check_server_message(LEGACY, refusal.message, None)


@pytest.mark.parametrize("bad", [{"per_client": 0}, {"burst": 1.5}, {"rate_per_s": 0},
                                 {"max_sessions": -1}, {"rate_per_s": "fast"}])
def test_limits_that_cannot_work_are_refused_at_once(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="SessionLimits"):
        SessionLimits(**bad)
