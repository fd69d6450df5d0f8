"""`Connection`: the state of one long-lived connection to a client, without I/O (h11's shape).

It takes decoded messages and returns events; the transport around it runs tasks, waits on
futures and writes bytes, and tells it what it did (`finished`, `pin`). It owns:

- the ids of the client's requests in flight: a request reusing one is `Rejected`; each use
  of an id is numbered, so the end of a request frees its own use of the id only;
- cancellation: a `notifications/cancelled` naming a request in flight is `CancelRequested`
  (that id is free again at once), one naming nothing is ignored;
- the era: an accepted `initialize` (`InitializeReceived`, then `pin(LEGACY)` once a session
  is open) pins the initialize era; a request declaring the modern protocol version first pins
  the modern one, and an `initialize` after either is `Rejected`;
- our own requests to the client (`send_request`, `Outstanding`): a response is
  `ResponseReceived` with the waiter given for it, or ignored when it answers nothing of ours.

`Ignored(reason)` events say what was dropped, for the transport to log (nothing here logs).
Sans-IO: imports `mcpkit.types`, `mcpkit.errors` and `mcpkit.protocol` only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from mcpkit.errors import InvalidRequestError
from mcpkit.protocol.codec import Notification, Request, RequestId, Response
from mcpkit.protocol.outstanding import Outstanding, peer_id, unnamed_id
from mcpkit.protocol.rejections import error_response, id_in_use, initialize_error
from mcpkit.types.constants import MODERN_VERSION, PROTOCOL_VERSION_KEY
from mcpkit.types.era import LEGACY, MODERN, Era
from mcpkit.types.methods import Method

__all__ = [
    "CancelRequested",
    "Connection",
    "Event",
    "Ignored",
    "InitializeReceived",
    "NotificationReceived",
    "Rejected",
    "RequestReceived",
    "ResponseReceived",
]

W = TypeVar("W")


@dataclass(frozen=True, slots=True)
class RequestReceived:
    """A request to serve; its id stays in flight until `Connection.finished`."""

    request: Request
    use: int = 0
    """Which use of its id this request is; handed back to `finished`, so that a request that
    ends late (a cancelled one still unwinding when the client sends its id again) frees its
    own entry only, never the entry of the request that reuses the id."""


@dataclass(frozen=True, slots=True)
class InitializeReceived:
    """An `initialize` the connection's era allows: open a session, then `pin(LEGACY)`."""

    request: Request


@dataclass(frozen=True, slots=True)
class CancelRequested:
    """The client cancelled its request `request_id`, which was in flight."""

    request_id: RequestId


@dataclass(frozen=True, slots=True)
class NotificationReceived:
    """A notification for the session (anything but a cancellation)."""

    notification: Notification


@dataclass(frozen=True, slots=True)
class ResponseReceived(Generic[W]):
    """The client answered one of our requests; `waiter` is what `send_request` was given."""

    waiter: W
    response: Response


@dataclass(frozen=True, slots=True)
class Rejected:
    """Refused before dispatch: send `message`, the error response."""

    message: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Ignored:
    """Dropped, and why (for the log)."""

    reason: str


Event = (RequestReceived | InitializeReceived | CancelRequested | NotificationReceived
         | ResponseReceived[Any] | Rejected | Ignored)


def declares_modern(request: Request) -> bool:
    """The request's `_meta` names a protocol version: only modern clients send one."""
    params = request.params
    meta = params.get("_meta") if params else None
    return type(meta) is dict and PROTOCOL_VERSION_KEY in meta


class Connection(Generic[W]):
    """One client's connection: requests in flight, the era, our requests awaiting answers."""

    __slots__ = ("_in_flight", "_listens", "_uses", "era", "outstanding")

    def __init__(self, prefix: str = "s-") -> None:
        self.era: Era | None = None
        self._in_flight: dict[RequestId, int] = {}
        """Ids in flight -> the use of each (`RequestReceived.use`)."""
        self._uses = 0
        self._listens: set[RequestId] = set()
        self.outstanding: Outstanding[W] = Outstanding(prefix)

    # -- what the client sends ----------------------------------------------------------------

    def receive(self, message: Request | Notification | Response) -> list[Event]:
        if isinstance(message, Request):
            return [self._request(message)]
        if isinstance(message, Notification):
            return self._notification(message)
        return self._response(message)

    def _request(self, request: Request) -> Event:
        request_id = request.id
        if request_id in self._in_flight:
            return Rejected(error_response(request_id, id_in_use(request_id)))
        if request.method == Method.INITIALIZE:
            if self.era == MODERN:
                return Rejected(error_response(request_id, initialize_error(
                    f"initialize: this connection already speaks {MODERN_VERSION}")))
            if self.era == LEGACY:
                return Rejected(error_response(request_id, InvalidRequestError(
                    "initialize: this connection is already initialized")))
            return InitializeReceived(request)
        if self.era is None and declares_modern(request):
            self.era = MODERN
        self._uses += 1
        self._in_flight[request_id] = self._uses
        if request.method == Method.SUBSCRIPTIONS_LISTEN:
            self._listens.add(request_id)
        return RequestReceived(request, self._uses)

    def _notification(self, note: Notification) -> list[Event]:
        if note.method != Method.CANCELLED:
            return [NotificationReceived(note)]
        raw = (note.params or {}).get("requestId")
        reason = unnamed_id(raw)
        if reason is not None:
            return [Ignored(reason)]
        request_id = peer_id(raw)
        if request_id is None or request_id not in self._in_flight:
            return []
        self.finished(request_id)
        return [CancelRequested(request_id)]

    def _response(self, response: Response) -> list[Event]:
        events: list[Event] = []
        reason = unnamed_id(response.id)
        if reason is not None:
            events.append(Ignored(reason))
        request_id = peer_id(response.id)
        waiter = self.outstanding.pop(request_id) if request_id is not None else None
        if waiter is None:
            events.append(Ignored(f"response to an unknown request id {response.id!r} ignored"))
        else:
            events.append(ResponseReceived(waiter, response))
        return events

    # -- what the transport did ---------------------------------------------------------------

    def pin(self, era: Era) -> None:
        """A session of `era` is open on this connection (after `InitializeReceived`)."""
        self.era = era

    def finished(self, request_id: RequestId, use: int | None = None) -> None:
        """The request is answered or cancelled: its id may be used again. With `use` (its
        `RequestReceived.use`), only if the id is still in flight for that request: after a
        cancellation the id may already belong to a new request."""
        if use is not None and self._in_flight.get(request_id) != use:
            return
        self._in_flight.pop(request_id, None)
        self._listens.discard(request_id)

    def in_flight(self, request_id: RequestId) -> bool:
        return request_id in self._in_flight

    def listens(self) -> list[RequestId]:
        """The `subscriptions/listen` requests in flight (they end when input ends)."""
        return list(self._listens)

    # -- what we send -------------------------------------------------------------------------

    def send_request(self, method: str, params: dict[str, Any] | None, waiter: W
                     ) -> tuple[RequestId, dict[str, Any]]:
        """A request to the client: its fresh id and message; its answer comes back as
        `ResponseReceived(waiter, ...)`."""
        return self.outstanding.send_request(method, params, waiter)
