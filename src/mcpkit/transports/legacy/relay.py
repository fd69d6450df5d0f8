"""The cross-replica route of a legacy (2025-11-25) session's answers, behind a load balancer
with no affinity.

A legacy `tools/call` that asks the client something mid-call (`elicitation/create`) sends the
request on that call's own SSE stream, from the replica serving the call; the client posts its
answer as a new request, which the load balancer may give to any replica. The replica that
gets an answer it is not waiting for hands it to the `SharedBroker`
(`mcpkit.server.broker`), and the one whose handler waits resolves it, as if posted there.
The id of each request we send names the replica (`prefix`), so two replicas asking one
session at once can never take each other's answers.

With a broker of one process (`LocalBroker`) the relay is not `shared`: requests keep their
plain prefix, nothing waits for a broker, and an answer nobody waits for is answered 202 and
logged by the endpoint, as it always was.
Imports the layers below and `mcpkit.transports.http_server.exchange`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcpkit.errors import StoreUnavailableError
from mcpkit.protocol.codec import Response, error_message, result_message
from mcpkit.protocol.http import Status
from mcpkit.protocol.outstanding import peer_id
from mcpkit.transports.http_server.exchange import plain_response

__all__ = ["SessionRelay"]

Send = Callable[[dict[str, Any]], Awaitable[None]]
Settle = Callable[[str, Response], bool]
"""(session id, the client's answer) -> whether a handler of this replica was waiting for it."""


class SessionRelay:
    """Answers of legacy sessions, between the replicas sharing a broker."""

    __slots__ = ("_settle", "broker", "prefix", "shared")

    def __init__(self, server: Any, settle: Settle) -> None:
        broker = server.broker
        self.shared = callable(getattr(broker, "publish_answer", None))
        """Whether answers cross replicas (a `SharedBroker`)."""
        self.broker = broker
        self.prefix = f"mcpkit-{broker.origin}-" if self.shared else "mcpkit-"
        """How this replica's requests to clients are named (`Outstanding`'s prefix)."""
        self._settle = settle
        if self.shared:
            broker.on_answer(self._arrived)

    async def ready(self) -> None:
        """Before a request goes to a client: this replica must hear the answer wherever it
        lands, so the request fails now (`StoreUnavailableError`) when it could not."""
        if self.shared:
            await self.broker.ready()

    async def forward(self, session_id: str, response: Response, send: Send) -> None:
        """An answer no handler here waits for: on to the replica that does, then 202. With
        the broker down it is 503, so the client knows its answer went nowhere."""
        request_id = peer_id(response.id)
        if not self.shared or request_id is None:  # nothing anywhere can wait for it
            await plain_response(send, Status.ACCEPTED)
            return
        wire = (result_message(request_id, response.result or {}) if response.error is None
                else error_message(request_id, response.error))
        try:
            await self.broker.publish_answer(session_id, wire)
        except StoreUnavailableError as exc:
            await plain_response(send, Status.SERVICE_UNAVAILABLE,
                                 error_message(response.id, exc.to_error()))
            return
        await plain_response(send, Status.ACCEPTED)

    def _arrived(self, session_id: str, message: dict[str, Any]) -> None:
        request_id = peer_id(message.get("id"))
        if request_id is None or not str(request_id).startswith(self.prefix):
            return  # another replica's, or no request of ours
        error = message.get("error")
        result = message.get("result")
        self._settle(session_id, Response(
            request_id, result if type(result) is dict else None,
            error if type(error) is dict else None))
