"""A stdio server that attacks its client, for tests/client/test_hostile_server_stdio.py.

`python hostile_stdio.py CATALOGUE` speaks the 2026-07-28 era well enough to be reached
(`server/discover`), then misbehaves on purpose. `CATALOGUE` says what `tools/list` answers:
`plain` (two tools), `many:N` (N tools in one page), `pages:N:PER` (N tools, PER a page),
`endless-pages` (a new cursor on every page, for ever), `deep:N` (an input schema nested N
levels), `cyclic` (definitions that refer to each other), `remote:URL` (a `$ref`, a `$schema`
and a relative `$ref` under a remote `$id`, all at URL). Each tool of `tools/call` is one attack:

- `huge`: a response of `arguments.size` bytes, its id first, written in 1 MiB pieces;
- `endless`: `arguments.budget` bytes with no newline, then silence;
- `strays`: responses to ids never sent (with odd types too), then the real answer twice;
- `ask`: four requests to the client (which the 2026-07-28 era forbids a server to send),
  then the answer; `replies` answers with what the client sent back to them;
- `flood`: `arguments.count` requests to the client while not reading its stdin, then the
  answer;
- `silent`: never answered.

Nothing here is checked against the schema: being off it is the point. What the client sends
is checked by the test's tap.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

MODERN = "2026-07-28"
CATALOGUE = sys.argv[1] if len(sys.argv) > 1 else "plain"
OUT = sys.stdout.buffer
MIB = 1024 * 1024
ASKED = ("elicitation/create", "sampling/createMessage", "roots/list", "ping")
replies: dict[str, Any] = {}
waiting: list[Any] = []  # ids of `replies` calls held until every answer came


def send(message: Any) -> None:
    OUT.write(json.dumps(message).encode() + b"\n")
    OUT.flush()


def answer(id: Any, text: str) -> None:
    send({"jsonrpc": "2.0", "id": id, "result": {
        "resultType": "complete", "content": [{"type": "text", "text": text}]}})


def tool(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "description": f"Tool {name}.", "inputSchema": schema}


def catalogue(cursor: str | None) -> dict[str, Any]:
    """The `tools/list` result for `cursor` under this run's CATALOGUE."""
    kind, _, rest = CATALOGUE.partition(":")
    page: dict[str, Any] = {"resultType": "complete", "ttlMs": 0, "cacheScope": "public"}
    flat = {"type": "object", "properties": {"x": {"type": "string"}}}
    if kind == "many":
        page["tools"] = [tool(f"t{i}", flat) for i in range(int(rest))]
    elif kind == "pages":
        total, per = (int(n) for n in rest.split(":"))
        start = int(cursor or 0)
        page["tools"] = [tool(f"t{i}", flat) for i in range(start, min(start + per, total))]
        if start + per < total:
            page["nextCursor"] = str(start + per)
    elif kind == "endless-pages":
        start = int(cursor or 0)
        page["tools"] = [tool(f"t{i}", flat) for i in range(start, start + 100)]
        page["nextCursor"] = str(start + 100)
    elif kind == "deep":
        schema: dict[str, Any] = {"type": "string"}
        for _ in range(int(rest)):
            schema = {"type": "object", "properties": {"x": schema}}
        page["tools"] = [tool("deep", schema), tool("fine", flat)]
    elif kind == "cyclic":
        page["tools"] = [tool("cyclic", {
            "type": "object", "properties": {"a": {"$ref": "#/$defs/a"}},
            "$defs": {"a": {"anyOf": [{"$ref": "#/$defs/b"}, {"$ref": "#/$defs/b"}]},
                      "b": {"anyOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/a"}]}}}),
            tool("loop", {"type": "object", "$ref": "#"}), tool("fine", flat)]
    elif kind == "remote":
        page["tools"] = [
            tool("ref", {"type": "object", "properties": {"x": {"$ref": f"{rest}/x.json"}}}),
            tool("dialect", {"$schema": f"{rest}/schema", "type": "object"}),
            tool("based", {"$id": f"{rest}/root.json", "type": "object",
                           "properties": {"x": {"$ref": "x.json"}}}),
            {**tool("output", flat), "outputSchema": {"$ref": f"{rest}/out.json"}},
            tool("fine", flat)]
    else:
        page["tools"] = [tool("huge", flat), tool("silent", flat)]
    return page


def call(id: Any, name: str, arguments: dict[str, Any]) -> None:
    if name == "huge":
        size = int(arguments.get("size", 100 * MIB))
        send_huge(id, size)
    elif name == "endless":
        budget = int(arguments.get("budget", 64 * MIB))
        piece = b"a" * MIB
        for _ in range(budget // MIB):
            OUT.write(piece)
        OUT.flush()
        while True:  # silence, holding the line open: the client's timeout ends it
            time.sleep(3600)
    elif name == "strays":
        for stray in (10**9, "never-sent", -1, 0.5, True, [id], {"id": id}):
            send({"jsonrpc": "2.0", "id": stray, "result": {"resultType": "complete",
                                                             "content": []}})
        answer(id, "first")
        answer(id, "second")
    elif name == "ask":
        for n, method in enumerate(ASKED):
            params: dict[str, Any] = {}
            if method == "elicitation/create":
                params = {"message": "Name?", "requestedSchema": {"type": "object",
                                                                  "properties": {}}}
            elif method == "sampling/createMessage":
                params = {"messages": [], "maxTokens": 1}
            send({"jsonrpc": "2.0", "id": f"srv-{n}", "method": method, "params": params})
        answer(id, "asked")
    elif name == "replies":
        waiting.append(id)
        settle()
    elif name == "flood":
        count = int(arguments.get("count", 1000))
        request = {"jsonrpc": "2.0", "method": "roots/list", "params": {}}
        for n in range(count):
            OUT.write(json.dumps({**request, "id": f"f{n}"}).encode() + b"\n")
        OUT.flush()
        answer(id, f"flooded {count}")
    elif name == "silent":
        pass
    else:
        answer(id, f"tool {name}")


def send_huge(id: Any, size: int) -> None:
    """One response of `size` bytes of text, its id first as most encoders write it."""
    head = json.dumps({"jsonrpc": "2.0", "id": id})[:-1].encode()
    OUT.write(head + b', "result": {"resultType": "complete", "content": '
              b'[{"type": "text", "text": "')
    piece = b"a" * MIB
    for _ in range(size // MIB):
        OUT.write(piece)
    OUT.write(b'"}]}}\n')
    OUT.flush()


def settle() -> None:
    """Answer held `replies` calls once every request of `ask` has its answer."""
    if len(replies) < len(ASKED):
        return
    text = json.dumps(replies, sort_keys=True)
    while waiting:
        answer(waiting.pop(), text)


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        id, method = message.get("id"), message.get("method")
        params = message.get("params") or {}
        if method is None:
            if isinstance(id, str) and id.startswith("srv-"):
                replies[id] = {k: v for k, v in message.items() if k != "jsonrpc"}
                settle()
            continue
        if id is None:
            continue
        if method == "server/discover":
            send({"jsonrpc": "2.0", "id": id, "result": {
                "resultType": "complete", "supportedVersions": [MODERN],
                "capabilities": {"tools": {}}, "ttlMs": 0, "cacheScope": "public",
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "hostile",
                                                                 "version": "1"}}}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": id, "result": catalogue(params.get("cursor"))})
        elif method == "tools/call":
            call(id, params.get("name"), params.get("arguments") or {})
        else:
            send({"jsonrpc": "2.0", "id": id, "error": {"code": -32601,
                                                        "message": "Method not found"}})


if __name__ == "__main__":
    main()
