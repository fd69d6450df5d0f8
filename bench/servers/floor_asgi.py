"""Floor (b): a bare ASGI app that answers every POST with a canned JSON-RPC result.

It reads the body, parses it with orjson to take the id and method, and answers with a fixed
result for that method. No routing, no header checks, no sessions. Served by uvicorn:

    uvicorn --factory floor_asgi:create_app --no-access-log ...

The environment variable BENCH_TOOLS (default 1) sets how many tools the canned `tools/list`
answer lists.
"""

from __future__ import annotations

import os
from typing import Any

import orjson
from floor_stdio import _canned

Scope = dict[str, Any]
Message = dict[str, Any]


def create_app() -> Any:
    canned = {
        method: answer.rstrip(b"\n")
        for method, answer in _canned(int(os.environ.get("BENCH_TOOLS", "1"))).items()
    }
    not_found = b',"error":{"code":-32601,"message":"Method not found"}}'
    json_headers = [(b"content-type", b"application/json")]
    # A legacy client gets a (fixed) session id with its initialize answer, and sends it back.
    init_headers = [*json_headers, (b"mcp-session-id", b"floor-session")]
    loads = orjson.loads
    dumps = orjson.dumps

    async def app(scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        msg = loads(body) if body else {}
        rid = msg.get("id")
        if rid is None:
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        method = str(msg.get("method"))
        payload = b'{"jsonrpc":"2.0","id":' + dumps(rid) + canned.get(method, not_found)
        headers = init_headers if method == "initialize" else json_headers
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": payload})

    return app
