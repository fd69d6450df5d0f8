"""A minimal 2025-11-25 server on stdio that needs the user to visit a page first (-32042).

`python url_elicit_server.py MODE`. The tool `connect` answers -32042 (URLElicitationRequired)
until the user has visited the page it names, then "connected". The page is real: this process
serves it over HTTP on 127.0.0.1 (a free port), and a visit marks that elicitation complete, as
a browser completing a sign-in would. The tool `ask_url` sends a URL-mode `elicitation/create`
instead and answers once the client replied.

Modes: `notify` reports each completed visit with `notifications/elicitation/complete` (after
one for an unknown id, and once more for the same id: both must be ignored); `silent` never
reports; `never` never counts a visit; `modern` speaks 2026-07-28 and still answers -32042 (a
code that era does not have); `bad-scheme`, `userinfo`, `malformed`, `too-many` send -32042
errors a client must refuse. Every message is checked against the schema of its era before it
is sent (fake_wire.py); only `malformed` errors are off it, on purpose and marked so (the other
refused pages are valid messages a client must still refuse).
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from helpers.client.fake_wire import FakeWire

MODE = sys.argv[1] if len(sys.argv) > 1 else "notify"
LEGACY = "2025-11-25"
MODERN = "2026-07-28"
INFO = {"name": "url-elicit", "version": "1"}
TOOLS = [{"name": "connect", "description": "Needs a connected account.",
          "inputSchema": {"type": "object"}},
         {"name": "ask_url", "description": "Asks for a page with elicitation/create.",
          "inputSchema": {"type": "object"}}]

lock = threading.Lock()
completed: set[str] = set()
known: set[str] = set()
asked: dict[str, Any] = {}  # our request id -> the tools/call id waiting for its answer
counter = 0
port = 0


WIRE = FakeWire("url_elicit_server", MODERN if MODE == "modern" else LEGACY)
"""Every message sent is checked against the schema of the mode's era (fake_wire.py)."""


def send(message: dict[str, Any], off_schema: str | None = None) -> None:
    WIRE.send(message, off_schema=off_schema)


def result(id: Any, body: dict[str, Any]) -> None:
    if MODE == "modern":
        body = {"resultType": "complete", **body}
    send({"jsonrpc": "2.0", "id": id, "result": body})


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


def new_elicitation() -> dict[str, str]:
    global counter
    with lock:
        counter += 1
        elicitation_id = f"el-{counter}"
        known.add(elicitation_id)
    url = f"http://127.0.0.1:{port}/connect?elicitationId={elicitation_id}"
    if MODE == "bad-scheme":
        url = "javascript:alert(document.cookie)"
    elif MODE == "userinfo":
        url = f"https://accounts.example.com@127.0.0.1:{port}/connect"
    return {"mode": "url", "elicitationId": elicitation_id, "url": url,
            "message": "Connect your Example account."}


def url_required(id: Any) -> None:
    data: dict[str, Any] = {"elicitations": [new_elicitation()]}
    if MODE == "malformed":
        data = {"pages": data["elicitations"]}
    elif MODE == "too-many":
        data["elicitations"] = [new_elicitation() for _ in range(17)]
    send({"jsonrpc": "2.0", "id": id, "error": {
        "code": -32042, "message": "This request requires more information.", "data": data}},
         off_schema="-32042 data without its list of elicitations" if MODE == "malformed"
         else None)


def complete(params: dict[str, Any]) -> None:
    elicitation_id = params.get("elicitationId", [""])[0]
    if elicitation_id not in known or MODE == "never":
        return
    with lock:
        completed.add(elicitation_id)
    if MODE == "notify":
        for reported in ("not-ours", elicitation_id, elicitation_id):
            send({"jsonrpc": "2.0", "method": "notifications/elicitation/complete",
                  "params": {"elicitationId": reported}})


class Page(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        if parts.path == "/connect":
            complete(parse_qs(parts.query))
        body = b"done"
        self.send_response(200)
        self.send_header("content-type", "text/plain")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def handle(message: dict[str, Any]) -> None:
    id, method = message.get("id"), message.get("method")
    params = message.get("params") or {}
    if method is None:  # the client's answer to our elicitation/create
        call_id = asked.pop(id, None)
        if call_id is not None:
            result(call_id, text(json.dumps(message.get("result", message.get("error")))))
        return
    if id is None:
        return
    if method == "server/discover":
        if MODE == "modern":
            result(id, {"supportedVersions": [MODERN], "capabilities": {"tools": {}},
                        "ttlMs": 0, "cacheScope": "public",
                        "_meta": {"io.modelcontextprotocol/serverInfo": INFO}})
        else:
            send({"jsonrpc": "2.0", "id": id,
                  "error": {"code": -32601, "message": "Method not found"}})
    elif method == "initialize":
        result(id, {"protocolVersion": LEGACY, "capabilities": {"tools": {}}, "serverInfo": INFO})
    elif method == "tools/list":
        result(id, {"tools": TOOLS})
    elif method == "tools/call" and params.get("name") == "connect":
        with lock:
            done = bool(completed)
        if done:
            result(id, text("connected"))
        else:
            url_required(id)
    elif method == "tools/call" and params.get("name") == "ask_url":
        request_id = f"srv-{id}"
        asked[request_id] = id
        send({"jsonrpc": "2.0", "id": request_id, "method": "elicitation/create",
              "params": new_elicitation()})
    else:
        send({"jsonrpc": "2.0", "id": id,
              "error": {"code": -32601, "message": f"Method not found: {method}"}})


def main() -> None:
    global port
    pages = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    port = pages.server_address[1]
    threading.Thread(target=pages.serve_forever, daemon=True).start()  # ends with the process
    for line in sys.stdin:
        if line.strip():
            message = json.loads(line)
            WIRE.received(message)
            handle(message)


if __name__ == "__main__":
    main()
