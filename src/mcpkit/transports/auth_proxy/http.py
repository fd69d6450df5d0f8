"""The HTTP pieces the authorization proxy's endpoints share: reading a bounded body, the
methods a path takes, the caller's address and a per-address rate, and answering with JSON (an
OAuth error included), a page, or a redirect.

OAuth answers that carry credentials say `Cache-Control: no-store` (RFC 6749 §5.1); the
endpoints a browser-based client calls directly (metadata, keys, registration, token,
revocation) allow any origin (CORS), since they act on what the request itself carries and
never on a browser's cookies.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from typing import Any, Final

import orjson

from mcpkit.auth.proxy.consent import PAGE_HEADERS
from mcpkit.errors import OAuthRequestError
from mcpkit.transports.http_server.endpoint import Receive, Send

__all__ = [
    "CORS",
    "NO_STORE",
    "RateWindow",
    "client_address",
    "header",
    "only",
    "read_body",
    "send_error",
    "send_json",
    "send_page",
    "send_redirect",
]

Headers = Iterable[tuple[bytes, bytes]]
NO_STORE: Final = ((b"cache-control", b"no-store"), (b"pragma", b"no-cache"))
CORS: Final = ((b"access-control-allow-origin", b"*"),)
_TRACKED: Final = 10_000
"""Most client addresses whose request rate is counted at once."""


class RateWindow:
    """At most `limit` events per address per minute, in this process."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._seen: OrderedDict[str, tuple[int, int]] = OrderedDict()

    def allow(self, address: str, now: float) -> bool:
        minute = int(now // 60)
        start, count = self._seen.pop(address, (minute, 0))
        if start != minute:
            start, count = minute, 0
        self._seen[address] = (start, count + 1)
        while len(self._seen) > _TRACKED:
            self._seen.popitem(last=False)
        return count < self.limit


def header(scope: dict[str, Any], name: bytes) -> str | None:
    """The one value of a request header (None when absent or sent more than once)."""
    values = [v for k, v in scope["headers"] if k == name]
    return values[0].decode("latin-1") if len(values) == 1 else None


def only(scope: dict[str, Any], *methods: str) -> None:
    """Refuse (`invalid_request`, 405) a request whose method the path does not take."""
    if scope["method"] not in methods:
        raise OAuthRequestError(f"{scope['path']} takes {' or '.join(methods)}",
                                error="invalid_request", status=405)


def client_address(scope: dict[str, Any]) -> str:
    """The caller's address, as the server saw it ("?" when the server names none)."""
    client = scope.get("client")
    return str(client[0]) if isinstance(client, tuple | list) and client else "?"


async def read_body(receive: Receive, limit: int) -> bytes:
    """The request body, refused (`invalid_request`, 413) past `limit` bytes."""
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] != "http.request":
            raise OAuthRequestError("the request ended before its body", error="invalid_request")
        body += message.get("body", b"")
        if len(body) > limit:
            raise OAuthRequestError(f"the request body is over {limit} bytes",
                                    error="invalid_request", status=413)
        if not message.get("more_body"):
            return bytes(body)


async def _send(send: Send, status: int, body: bytes, headers: Headers, *,
                head: bool = False) -> None:
    await send({"type": "http.response.start", "status": status, "headers": [
        *headers, (b"content-length", b"%d" % len(body))]})
    await send({"type": "http.response.body", "body": b"" if head else body})


async def send_json(send: Send, status: int, doc: Any, headers: Headers = (), *,
                    head: bool = False) -> None:
    """A JSON answer (its headers only, for a HEAD)."""
    await _send(send, status, orjson.dumps(doc),
                [(b"content-type", b"application/json"), *headers], head=head)


async def send_error(send: Send, error: OAuthRequestError, headers: Headers = ()) -> None:
    """An OAuth error response (RFC 6749 §5.2): `error` and `error_description`."""
    await send_json(send, error.status, {"error": error.error,
                                         "error_description": str(error)},
                    [*NO_STORE, *CORS, *headers])


async def send_page(send: Send, status: int, page: bytes, headers: Headers = ()) -> None:
    await _send(send, status, page, [*PAGE_HEADERS, *headers])


async def send_redirect(send: Send, location: str, headers: Headers = ()) -> None:
    """303 See Other to `location`, with nothing the next page could read back."""
    await _send(send, 303, b"", [(b"location", location.encode("ascii")), *NO_STORE,
                                 (b"referrer-policy", b"no-referrer"), *headers])
