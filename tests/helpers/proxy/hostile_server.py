"""A hostile MCP server on stdio, for the proxy's tests: it answers what it is told to.

`python hostile_server.py legacy|modern` speaks raw JSON-RPC, one line a message (2025-11-25
after `initialize`, or 2026-07-28 answering `server/discover`), and answers everything else a
proxy asks with whatever it was armed with, unchecked:

- the tool `arm(plan)` takes a JSON text `{"METHOD": ANSWER, ..., "notes": [...],
  "asks": [...]}`: each ANSWER (a JSON-RPC `result` object, or `{"error": ...}`) is what the
  next request of METHOD gets (a list method, `resources/read`, `prompts/get`,
  `completion/complete`, or `tools/call` of `go`);
- the tool `go()` first writes every message of `notes` (any notifications at all, its
  `progressToken` filled in where a note says `"$token"`), then, in the legacy mode, sends each
  request of `asks` to its client and waits for the answer, and then answers with the armed
  `tools/call`;
- `announce(method)` writes that notification (a list change, say) after answering.

Its own tools (`arm`, `go`, `announce`, `echo`) are listed first, so the proxy can always reach
it; whatever `tools/list` was armed with follows them.
"""

from __future__ import annotations

import json
import sys
from typing import Any

MODE = sys.argv[1] if len(sys.argv) > 1 else "legacy"
MODERN = MODE == "modern"
OWN_TOOLS = [
    {"name": "arm", "inputSchema": {"type": "object", "properties": {"plan": {"type": "string"}},
                                    "required": ["plan"]}},
    {"name": "go", "inputSchema": {"type": "object"}},
    {"name": "announce", "inputSchema": {"type": "object",
                                         "properties": {"method": {"type": "string"}}}},
    {"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}},
]
CAPABILITIES = {"tools": {"listChanged": True}, "prompts": {"listChanged": True},
                "resources": {"listChanged": True, "subscribe": True}, "completions": {},
                "logging": {}}
armed: dict[str, Any] = {}
waiting: list[Any] = []  # the `go` call waiting for its asks to be answered: [id, token, asks]
listens: list[Any] = []  # the ids of the open subscriptions/listen requests (modern)


def write(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(request_id: Any, body: Any) -> None:
    if isinstance(body, dict) and "error" in body and len(body) == 1:
        write({"jsonrpc": "2.0", "id": request_id, "error": body["error"]})
        return
    if MODERN and isinstance(body, dict) and "resultType" not in body:
        body = {"resultType": "complete", **body}
    write({"jsonrpc": "2.0", "id": request_id, "result": body})


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


def armed_or(method: str, default: Any) -> Any:
    return armed.pop(method) if method in armed else default


def finish_go(request_id: Any) -> None:
    answer(request_id, armed_or("tools/call", text("gone")))


def ask_next() -> None:
    request_id, _token, asks = waiting
    if not asks:
        waiting.clear()
        finish_go(request_id)
        return
    ask = asks.pop(0)
    write({"jsonrpc": "2.0", "id": f"ask-{len(asks)}", **ask})


def call_tool(request_id: Any, params: dict[str, Any]) -> None:
    name = params.get("name")
    arguments = params.get("arguments") or {}
    if name == "arm":
        plan = json.loads(arguments.get("plan", "{}"))
        armed.clear()
        armed.update(plan)
        answer(request_id, text("armed"))
    elif name == "echo":
        answer(request_id, text(str(arguments.get("text"))))
    elif name == "announce":
        answer(request_id, text("announced"))
        for listen in listens or [None]:
            note: dict[str, Any] = {"jsonrpc": "2.0", "method": arguments.get("method")}
            if listen is not None:
                note["params"] = {"_meta": {"io.modelcontextprotocol/subscriptionId": listen}}
            write(note)
    elif name == "go":
        token = (params.get("_meta") or {}).get("progressToken")
        for note in armed.pop("notes", []):
            if isinstance(note, dict) and isinstance(note.get("params"), dict):
                note["params"] = {k: token if v == "$token" else v
                                  for k, v in note["params"].items()}
            write(note)
        asks = armed.pop("asks", []) if not MODERN else []
        if asks:
            waiting[:] = [request_id, token, list(asks)]
            ask_next()
        else:
            finish_go(request_id)
    else:
        answer(request_id, {"error": {"code": -32602, "message": f"Unknown tool: {name}"}})


def handle(message: dict[str, Any]) -> None:
    method = message.get("method")
    request_id = message.get("id")
    params = message.get("params") or {}
    if method is None:  # the answer to one of our asks
        if waiting:
            ask_next()
        return
    if request_id is None:
        if method == "notifications/cancelled" and params.get("requestId") in listens:
            listens.remove(params["requestId"])
        return  # a notification (initialized, cancelled): nothing more to say
    if method == "initialize" and not MODERN:
        answer(request_id, {"protocolVersion": "2025-11-25", "capabilities": CAPABILITIES,
                            "serverInfo": armed_or("serverInfo", {"name": "hostile",
                                                                  "version": "6.6.6"})})
    elif method == "server/discover" and MODERN:
        answer(request_id, {"supportedVersions": ["2026-07-28"], "capabilities": CAPABILITIES,
                            "_meta": {"io.modelcontextprotocol/serverInfo": {
                                "name": "hostile", "version": "6.6.6"}}})
    elif method == "server/discover" or method == "initialize":
        answer(request_id, {"error": {"code": -32601, "message": f"Method not found: {method}"}})
    elif method == "tools/list":
        extra = armed_or("tools/list", {"tools": []})
        tools = extra.get("tools") if isinstance(extra, dict) else None
        answer(request_id, {**(extra if isinstance(extra, dict) else {}),
                            "tools": OWN_TOOLS + (tools if isinstance(tools, list) else [tools])})
    elif method == "tools/call":
        call_tool(request_id, params)
    elif method == "subscriptions/listen":
        listens.append(request_id)
        write({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
               "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": request_id},
                          "notifications": params.get("notifications", {})}})
    elif method in ("resources/list", "resources/templates/list", "prompts/list"):
        key = {"resources/list": "resources", "resources/templates/list": "resourceTemplates",
               "prompts/list": "prompts"}[method]
        answer(request_id, armed_or(method, {key: []}))
    elif method in ("resources/read", "prompts/get", "completion/complete"):
        answer(request_id, armed_or(method, {"error": {"code": -32602,
                                                       "message": f"nothing armed for {method}"}}))
    elif method in ("ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"):
        answer(request_id, {})
    else:
        answer(request_id, {"error": {"code": -32601, "message": f"Method not found: {method}"}})


for line in sys.stdin:
    try:
        decoded = json.loads(line)
    except ValueError:
        continue
    if isinstance(decoded, dict):
        handle(decoded)
