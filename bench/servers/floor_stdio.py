"""Floor (a): the cheapest correct JSON-RPC answer loop over stdio.

Reads one line, parses it with orjson, writes a canned result carrying the request's id,
flushes. No validation, no dispatch beyond a dict lookup on the method name. Usage:

    python floor_stdio.py [--tools N]

`--tools N` only changes the canned `tools/list` answer (N echo-like tools).
"""

from __future__ import annotations

import sys

import orjson

_META = {"io.modelcontextprotocol/serverInfo": {"name": "bench-floor", "version": "1.0.0"}}
_SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
}


def _canned(n_tools: int) -> dict[str, bytes]:
    tools = [
        {
            "name": "echo" if i == 0 else f"echo_{i}",
            "description": "Echo the text back.",
            "inputSchema": _SCHEMA,
        }
        for i in range(n_tools)
    ]
    results: dict[str, object] = {
        "tools/call": {
            "resultType": "complete",
            "content": [{"type": "text", "text": "hello world"}],
            "isError": False,
        },
        "tools/list": {
            "resultType": "complete",
            "tools": tools,
            "ttlMs": 0,
            "cacheScope": "public",
        },
        "server/discover": {
            "resultType": "complete",
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}},
            "ttlMs": 0,
            "cacheScope": "public",
            "_meta": _META,
        },
        "initialize": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "bench-floor", "version": "1.0.0"},
        },
        "ping": {},
    }
    return {
        method: b',"result":' + orjson.dumps(result) + b"}\n" for method, result in results.items()
    }


def main() -> None:
    n_tools = int(sys.argv[sys.argv.index("--tools") + 1]) if "--tools" in sys.argv else 1
    canned = _canned(n_tools)
    not_found = b',"error":{"code":-32601,"message":"Method not found"}}\n'
    readline = sys.stdin.buffer.readline
    out = sys.stdout.buffer
    loads = orjson.loads
    dumps = orjson.dumps
    while line := readline():
        msg = loads(line)
        rid = msg.get("id")
        if rid is None:
            continue  # a notification: no answer
        out.write(b'{"jsonrpc":"2.0","id":' + dumps(rid) + canned.get(msg.get("method"), not_found))
        out.flush()


if __name__ == "__main__":
    main()
