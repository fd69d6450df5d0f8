"""Sending one operation's request and reading its answer, within the bounds.

The whole exchange, from sending the request to the last byte of the body, is held to
`OpenAPIOptions.timeout_s`, so an API that answers a byte a minute cannot hold a call
forever; the body is read as it streams and refused past `max_response_bytes` (a
`Content-Length` already past it is refused before reading). Every failure becomes a
`ToolError` naming the tool, the method and the path: a refused connection, a timeout, an
answer too large. Redirects are followed only if the `httpx.AsyncClient` given says so (the
one made here does not).

The headers configured (`OpenAPIOptions.headers`) are sent with every request and win over
any of the same name; nothing the MCP client sent over its own transport ever reaches the API.

Imports: the standard library, httpx, `mcpkit.errors` and `mcpkit.openapi` (options, outputs,
requests).
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from mcpkit.errors import ToolError
from mcpkit.openapi.options import OpenAPIOptions
from mcpkit.openapi.outputs import Answer
from mcpkit.openapi.requests import Outgoing

__all__ = ["exchange"]


async def exchange(http: httpx.AsyncClient, base: str | None, outgoing: Outgoing,
                   options: OpenAPIOptions, name: str) -> Answer:
    """Send `outgoing` to `base` (the client's own base URL when None) and read the answer."""
    url = (base.rstrip("/") + outgoing.target) if base else outgoing.target
    headers = httpx.Headers(outgoing.headers)
    for key, value in options.headers.items():
        headers[key] = value
    try:
        request = http.build_request(outgoing.method, url, headers=headers,
                                     content=outgoing.content)
    except (httpx.InvalidURL, ValueError) as exc:
        raise ToolError(f"{name}: {outgoing.method} {url.split('?', 1)[0]}: {exc}") from None
    asked = request.url.copy_with(username=None, password=None, query=None)
    said = f"{name}: {outgoing.method} {asked}"
    try:
        async with asyncio.timeout(options.timeout_s):
            response = await http.send(request, stream=True)
            try:
                body = await _read(response, options, said)
            finally:
                await response.aclose()
    except TimeoutError:
        raise ToolError(f"{said}: no answer within {options.timeout_s:g} s "
                        "(OpenAPIOptions.timeout_s)") from None
    except httpx.HTTPError as exc:
        detail = str(exc).strip()
        raise ToolError(f"{said} failed: {type(exc).__name__}"
                        + (f" ({detail[:200]})" if detail else "")) from None
    return Answer(response.status_code, response.reason_phrase,
                  response.headers.get("content-type", ""), body, str(asked))


async def _read(response: Any, options: OpenAPIOptions, said: str) -> bytes:
    limit = options.max_response_bytes
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise ToolError(_too_large(said, response.status_code, limit))
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise ToolError(_too_large(said, response.status_code, limit))
        chunks.append(chunk)
    return b"".join(chunks)


def _too_large(said: str, status: int, limit: int) -> str:
    return (f"{said} answered {status} with more than {limit} bytes "
            "(OpenAPIOptions.max_response_bytes)")
