"""The sans-IO connection state: one test per rule, no event loop."""

from __future__ import annotations

from typing import Any

from mcpkit.protocol.codec import Notification, Request, Response
from mcpkit.protocol.connection import (
    CancelRequested,
    Connection,
    Ignored,
    InitializeReceived,
    NotificationReceived,
    Rejected,
    RequestReceived,
    ResponseReceived,
)
from mcpkit.protocol.outstanding import Outstanding, peer_id
from mcpkit.types.era import LEGACY, MODERN

MODERN_META = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}


def request(id: Any, method: str = "tools/list", params: Any = None) -> Request:
    return Request(id, method, params)


def test_a_request_is_received_and_its_id_is_in_flight_until_finished() -> None:
    conn: Connection[str] = Connection()
    [event] = conn.receive(request(1))
    assert isinstance(event, RequestReceived) and event.request.id == 1
    assert conn.in_flight(1)
    conn.finished(1)
    assert not conn.in_flight(1)
    assert isinstance(conn.receive(request(1))[0], RequestReceived)


def test_an_id_in_flight_is_rejected_with_invalid_request() -> None:
    conn: Connection[str] = Connection()
    conn.receive(request(7))
    [event] = conn.receive(request(7, "tools/call"))
    assert isinstance(event, Rejected)
    assert event.message["id"] == 7
    assert event.message["error"]["code"] == -32600
    assert "already in use" in event.message["error"]["message"]


def test_initialize_first_is_received_and_pins_nothing_until_a_session_opens() -> None:
    conn: Connection[str] = Connection()
    [event] = conn.receive(request(1, "initialize", {}))
    assert isinstance(event, InitializeReceived)
    assert conn.era is None and not conn.in_flight(1)


def test_initialize_after_a_modern_request_is_rejected_naming_the_versions() -> None:
    conn: Connection[str] = Connection()
    conn.receive(request(1, "tools/list", MODERN_META))
    assert conn.era == MODERN
    [event] = conn.receive(request(2, "initialize", {}))
    assert isinstance(event, Rejected)
    assert event.message["error"]["code"] == -32600
    assert "supported" in event.message["error"]["data"]


def test_a_request_without_a_declared_version_pins_no_era() -> None:
    conn: Connection[str] = Connection()
    conn.receive(request(1, "tools/list", {"_meta": {}}))
    assert conn.era is None


def test_a_second_initialize_on_a_pinned_legacy_connection_is_rejected() -> None:
    conn: Connection[str] = Connection()
    conn.receive(request(1, "initialize", {}))
    conn.pin(LEGACY)
    [event] = conn.receive(request(2, "initialize", {}))
    assert isinstance(event, Rejected)
    assert event.message["error"]["message"] == (
        "initialize: this connection is already initialized")


def test_cancelling_a_request_in_flight_frees_its_id() -> None:
    conn: Connection[str] = Connection()
    conn.receive(request(3))
    events = conn.receive(Notification("notifications/cancelled", {"requestId": 3}))
    assert events == [CancelRequested(3)]
    assert not conn.in_flight(3)


def test_a_cancelled_request_finishing_late_leaves_the_request_reusing_its_id() -> None:
    conn: Connection[str] = Connection()
    [first] = conn.receive(request(3))
    conn.receive(Notification("notifications/cancelled", {"requestId": 3}))
    [second] = conn.receive(request(3, "subscriptions/listen"))
    assert isinstance(first, RequestReceived) and isinstance(second, RequestReceived)
    assert first.use != second.use
    conn.finished(3, first.use)  # the cancelled one's task is done unwinding
    assert conn.in_flight(3) and conn.listens() == [3]
    assert isinstance(conn.receive(request(3))[0], Rejected)
    assert conn.receive(Notification("notifications/cancelled", {"requestId": 3})) == [
        CancelRequested(3)]
    conn.finished(3, second.use)  # its task ends after the cancellation: nothing left to free
    assert not conn.in_flight(3) and conn.listens() == []


def test_cancelling_an_unknown_request_does_nothing() -> None:
    conn: Connection[str] = Connection()
    assert conn.receive(Notification("notifications/cancelled", {"requestId": 3})) == []


def test_a_malformed_request_id_names_no_request() -> None:
    conn: Connection[str] = Connection()
    conn.receive(request(1))
    for bad in ([1], {"a": 1}, 1.0, True):
        [event] = conn.receive(Notification("notifications/cancelled", {"requestId": bad}))
        assert isinstance(event, Ignored)
        assert "names no request" in event.reason
    assert conn.in_flight(1)
    assert peer_id(True) is None and peer_id("a") == "a" and peer_id(2) == 2


def test_other_notifications_go_to_the_session() -> None:
    conn: Connection[str] = Connection()
    note = Notification("notifications/initialized", None)
    assert conn.receive(note) == [NotificationReceived(note)]


def test_a_response_reaches_the_waiter_of_our_request_once() -> None:
    conn: Connection[str] = Connection("s-")
    request_id, message = conn.send_request("ping", None, "waiter")
    assert request_id == "s-1" and message["method"] == "ping" and message["id"] == "s-1"
    answer = Response("s-1", {})
    assert conn.receive(answer) == [ResponseReceived("waiter", answer)]
    [again] = conn.receive(answer)
    assert isinstance(again, Ignored) and "unknown request id" in again.reason


def test_a_response_with_a_malformed_id_is_ignored_twice_over() -> None:
    conn: Connection[str] = Connection()
    events = conn.receive(Response(1.0, {}))  # type: ignore[arg-type]
    assert [type(e) for e in events] == [Ignored, Ignored]


def test_listen_requests_in_flight_are_listed_until_finished() -> None:
    conn: Connection[str] = Connection()
    conn.receive(request(5, "subscriptions/listen"))
    assert conn.listens() == [5]
    conn.finished(5)
    assert conn.listens() == []


def test_outstanding_ids_can_share_one_counter() -> None:
    import itertools

    ids = itertools.count(1)
    a: Outstanding[int] = Outstanding("m-", ids)
    b: Outstanding[int] = Outstanding("m-", ids)
    assert a.send_request("ping", None, 1)[0] == "m-1"
    assert b.send_request("ping", None, 2)[0] == "m-2"
    assert a.pop("m-1") == 1 and a.pop("m-1") is None and len(b) == 1
