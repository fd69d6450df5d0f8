"""The sans-IO stdio `Connection` walked by a Hypothesis state machine against a model of it.

The model is what the spec and docs/architecture.md ("Connection state") promise, written
without looking at how `Connection` keeps it:

- a client's request id stays in flight until the transport says its request finished, or the
  client cancels it; a request naming an id in flight is refused with -32600 and its id
  (MSG-3), and the refusal changes nothing;
- each accepted request is a distinct use of its id: finishing an old use (a cancelled request
  still unwinding) never frees the id from the request that reused it;
- `initialize` on a fresh connection is handed to the transport and holds no id; the first
  request that declares the modern version pins 2026-07-28, an open session pins 2025-11-25,
  and an `initialize` after either is refused with -32600, naming the supported versions when
  the connection is modern (VER-7);
- `notifications/cancelled` frees an id in flight and says so once; naming an id not in
  flight does nothing; a requestId that is not a string or a (non-bool) integer names nothing
  and is logged (CANC-4);
- our own requests get fresh ids that collide with nothing; a response reaches its waiter
  once, and a response to anything else (a second one, an unknown id, an id of the wrong type)
  is only logged;
- `subscriptions/listen` requests in flight are listed until they end (they end with input).

Every rule that produces a message to send (a refusal) has it checked against the official
schema of the connection's revision.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from helpers.wire import LEGACY, MODERN, check_server_message
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from stateful_runs import Tally, machine_settings

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
from mcpkit.types.era import LEGACY as LEGACY_ERA
from mcpkit.types.era import MODERN as MODERN_ERA

IDS_LIST = [1, 2, 3, "1", "a", 0, -1, 2**53 + 1, "", "s-1"]
IDS = st.sampled_from(IDS_LIST)
"""Few enough that ids are reused and collide; `1` and `"1"` are different ids, and `"s-1"`
looks like one of the connection's own (which never share a namespace with the client's)."""
HOSTILE_IDS = st.sampled_from([1.0, True, False, [1], {"id": 1}, 1.5])
"""Values that name no request, though Python takes some of them for 1."""
METHODS = st.sampled_from(["tools/list", "tools/call", "subscriptions/listen",
                           "server/discover", "prompts/get"])
MODERN_META = {"io.modelcontextprotocol/protocolVersion": MODERN}
TALLY = Tally("sans-IO Connection")


@dataclass
class Model:
    era: str | None = None
    in_flight: dict[Any, object] = field(default_factory=dict)
    """Id -> the use (the `RequestReceived.use` the connection gave) now holding it."""
    listens: set[Any] = field(default_factory=set)
    initialize_pending: bool = False
    ours: dict[Any, str] = field(default_factory=dict)
    """Our requests awaiting an answer: id -> the waiter handed in."""
    our_ids: set[Any] = field(default_factory=set)
    uses_seen: list[object] = field(default_factory=list)


def key(request_id: Any) -> tuple[type, Any]:
    """Ids as the model tells them apart: by type and value (1 and "1" differ)."""
    return (type(request_id), request_id)


class ConnectionMachine(RuleBasedStateMachine):
    uses = Bundle("uses")

    def __init__(self) -> None:
        super().__init__()
        self.conn: Connection[str] = Connection("s-")
        self.model = Model()
        self.waiters = 0
        TALLY.example()

    def _revision(self) -> str:
        return LEGACY if self.model.era == "legacy" else MODERN

    def _refused(self, events: list[Any], request_id: Any) -> dict[str, Any]:
        assert len(events) == 1 and isinstance(events[0], Rejected), events
        message = events[0].message
        check_server_message(self._revision(), message, None)
        assert message["id"] == request_id and type(message["id"]) is type(request_id)
        assert message["error"]["code"] == -32600, message
        return message

    # -- what the client sends ----------------------------------------------------------------

    @rule(target=uses, request_id=IDS, method=METHODS, modern=st.booleans())
    def request(self, request_id: Any, method: str, modern: bool) -> Any:
        TALLY.step()
        params: dict[str, Any] = {"_meta": dict(MODERN_META)} if modern else {}
        events = self.conn.receive(Request(request_id, method, params))
        model = self.model
        if key(request_id) in model.in_flight:
            message = self._refused(events, request_id)
            assert "already in use" in message["error"]["message"]
            return None
        assert len(events) == 1 and isinstance(events[0], RequestReceived), events
        received = events[0]
        assert received.request.id == request_id and received.request.method == method
        assert all(received.use != use for use in model.uses_seen), "a use was handed out twice"
        model.uses_seen.append(received.use)
        model.in_flight[key(request_id)] = received.use
        if method == "subscriptions/listen":
            model.listens.add(key(request_id))
        if model.era is None and modern:
            model.era = "modern"
        return (request_id, received.use)

    @rule(request_id=IDS, modern_meta=st.booleans())
    def initialize(self, request_id: Any, modern_meta: bool) -> None:
        TALLY.step()
        params: dict[str, Any] = {"protocolVersion": LEGACY, "capabilities": {},
                                  "clientInfo": {"name": "machine", "version": "1"}}
        if modern_meta:
            params["_meta"] = dict(MODERN_META)
        events = self.conn.receive(Request(request_id, "initialize", params))
        model = self.model
        if key(request_id) in model.in_flight:
            self._refused(events, request_id)
        elif model.era == "modern":
            message = self._refused(events, request_id)
            assert set(message["error"]["data"]["supported"]) == {MODERN, LEGACY}, message
        elif model.era == "legacy":
            self._refused(events, request_id)
        else:
            assert len(events) == 1 and isinstance(events[0], InitializeReceived), events
            assert events[0].request.id == request_id
            model.initialize_pending = True

    @rule(request_id=IDS, reason=st.none() | st.text(max_size=5))
    def cancel(self, request_id: Any, reason: str | None) -> None:
        TALLY.step()
        params: dict[str, Any] = {"requestId": request_id}
        if reason is not None:
            params["reason"] = reason
        events = self.conn.receive(Notification("notifications/cancelled", params))
        model = self.model
        if key(request_id) in model.in_flight:
            assert len(events) == 1 and isinstance(events[0], CancelRequested), events
            assert events[0].request_id == request_id
            assert type(events[0].request_id) is type(request_id)
            del model.in_flight[key(request_id)]
            model.listens.discard(key(request_id))
        else:
            assert events == [], events

    @rule(value=HOSTILE_IDS | st.none())
    def cancel_naming_nothing(self, value: Any) -> None:
        TALLY.step()
        params = {} if value is None else {"requestId": value}
        events = self.conn.receive(Notification("notifications/cancelled", params))
        if value is None:
            assert events == [], events
        else:
            assert len(events) == 1 and isinstance(events[0], Ignored), events

    @rule(method=st.sampled_from(["notifications/initialized", "notifications/roots/list_changed",
                                  "notifications/progress"]))
    def other_notification(self, method: str) -> None:
        TALLY.step()
        events = self.conn.receive(Notification(method, {}))
        assert len(events) == 1 and isinstance(events[0], NotificationReceived), events
        assert events[0].notification.method == method

    # -- what the transport does --------------------------------------------------------------

    @rule(used=consumes(uses))
    def finish(self, used: Any) -> None:
        """The request of that use ended (answered, or a cancelled one done unwinding)."""
        TALLY.step()
        if used is None:
            return
        request_id, use = used
        self.conn.finished(request_id, use)
        model = self.model
        if model.in_flight.get(key(request_id)) == use:
            del model.in_flight[key(request_id)]
            model.listens.discard(key(request_id))

    @rule(request_id=IDS)
    def finish_without_use(self, request_id: Any) -> None:
        TALLY.step()
        self.conn.finished(request_id)
        self.model.in_flight.pop(key(request_id), None)
        self.model.listens.discard(key(request_id))

    @precondition(lambda self: self.model.initialize_pending and self.model.era is None)
    @rule()
    def session_opened(self) -> None:
        TALLY.step()
        self.conn.pin(LEGACY_ERA)
        self.model.era = "legacy"
        self.model.initialize_pending = False

    @rule(method=st.sampled_from(["elicitation/create", "roots/list", "ping"]))
    def ask_client(self, method: str) -> None:
        TALLY.step()
        self.waiters += 1
        waiter = f"w{self.waiters}"
        request_id, message = self.conn.send_request(method, {}, waiter)
        assert message["id"] == request_id and message["method"] == method
        assert type(request_id) in (str, int)
        assert key(request_id) not in self.model.our_ids, "an id of ours was handed out twice"
        self.model.our_ids.add(key(request_id))
        self.model.ours[key(request_id)] = waiter

    @rule(data=st.data(), error=st.booleans())
    def client_answers(self, data: st.DataObject, error: bool) -> None:
        TALLY.step()
        model = self.model
        choices = [k[1] for k in model.ours] + [k[1] for k in model.our_ids]
        request_id = data.draw(st.sampled_from(choices) if choices else IDS, label="id")
        body = {"error": {"code": -1, "message": "no"}} if error else {"result": {}}
        events = self.conn.receive(Response(request_id, **body))
        waiter = model.ours.pop(key(request_id), None)
        if waiter is None:
            assert events and all(isinstance(e, Ignored) for e in events), events
        else:
            assert len(events) == 1 and isinstance(events[0], ResponseReceived), events
            assert events[0].waiter == waiter

    @rule(value=HOSTILE_IDS)
    def client_answers_with_a_hostile_id(self, value: Any) -> None:
        TALLY.step()
        events = self.conn.receive(Response(value, result={}))
        assert events and all(isinstance(e, Ignored) for e in events), events

    # -- what must hold after every step -----------------------------------------------------

    @invariant()
    def ids_in_flight_agree(self) -> None:
        for request_id in IDS_LIST:
            assert self.conn.in_flight(request_id) == (key(request_id) in self.model.in_flight), \
                request_id

    @invariant()
    def listens_agree(self) -> None:
        assert sorted(map(key, self.conn.listens()), key=repr) == sorted(self.model.listens,
                                                                          key=repr)

    @invariant()
    def era_agrees(self) -> None:
        expected = {None: None, "modern": MODERN_ERA, "legacy": LEGACY_ERA}[self.model.era]
        assert self.conn.era == expected

    @invariant()
    def our_requests_agree(self) -> None:
        assert len(self.conn.outstanding) == len(self.model.ours)
        for k in self.model.ours:
            assert k[1] in self.conn.outstanding



def test_the_connection_keeps_ids_eras_and_our_requests_as_the_model_says() -> None:
    run_state_machine_as_test(ConnectionMachine, settings=machine_settings(40))
    TALLY.report()
