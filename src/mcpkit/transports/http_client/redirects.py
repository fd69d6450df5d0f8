"""Sending one request of `HTTPClientTransport`, following the redirects it may follow.

Which redirects are followed, and where to, is the rule of `mcpkit.protocol.http_redirects`:
307 and 308 within the origin, at most `MAX_REDIRECTS` hops, the method, body and headers kept.
This is the I/O around it, on httpx. httpx's own redirect handling is off for every request
(even on a client the caller shares with `follow_redirects=True`): it would follow a 302 or a
303 by turning the POST into a GET without its body. A redirect refused is an
`HTTPStatusError` naming the status, the Location and the fix; a request that was redirected
reports its final URL to `moved`, so the transport sends what comes after straight there.
httpx is imported with this module.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import httpx

from mcpkit.errors import HTTPStatusError
from mcpkit.protocol.http_redirects import is_redirect, next_hop

__all__ = [
    "opened",
    "send",
]


async def send(client: httpx.AsyncClient, request: httpx.Request, what: str,
               moved: Callable[[str], None], auth: httpx.Auth | None = None) -> httpx.Response:
    """The response to `request` (its body not read yet) once the redirects are followed;
    `what` names the request in an error (`tools/call`, `the session's GET stream`). `auth`
    (the transport's `OAuth`) runs on every hop, so a 401 is answered where it happens."""
    hops = 0
    while True:
        if auth is None:
            response = await client.send(request, stream=True, follow_redirects=False)
        else:
            response = await client.send(request, stream=True, follow_redirects=False,
                                         auth=auth)
        if not is_redirect(response.status_code):
            if hops:
                moved(str(request.url))
            return response
        status = response.status_code
        hop = next_hop(str(request.url), status, response.headers.get("location"), hops)
        await response.aclose()
        if hop.url is None:
            raise HTTPStatusError(status, b"", f"{what} was redirected {hop.refusal}")
        headers = httpx.Headers(request.headers)
        del headers["host"]
        if auth is not None:
            headers.pop("authorization", None)  # the flow puts its own on the next hop  # the new URL's, set by httpx (the same within one origin)
        request = client.build_request(request.method, hop.url, content=request.content,
                                       headers=headers)
        hops += 1


@asynccontextmanager
async def opened(client: httpx.AsyncClient, request: httpx.Request, what: str,
                 moved: Callable[[str], None], auth: httpx.Auth | None = None
                 ) -> AsyncIterator[httpx.Response]:
    """`send` as `async with`: the response is closed on leaving, as `client.stream` does."""
    response = await send(client, request, what, moved, auth)
    try:
        yield response
    finally:
        await response.aclose()
