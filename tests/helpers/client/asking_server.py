"""A 2025-11-25 server on stdio that asks the client whatever a test wants, for the tests of
answering at the terminal.

`python asking_server.py QUESTIONS LOG`: the tool `ask` sends every `elicitation/create` whose
params are listed in the JSON file QUESTIONS, all at once, and answers the call once every reply
has arrived, with the replies as a JSON list in the order asked. Every message the server
receives is appended to LOG (one JSON object a line), so a test can check each message the
client sent against the official schema. It sends what it is told, as long as that is a valid
2025-11-25 message (fake_wire.py checks each one before it goes out): a question off the schema
would test the client against a server that cannot exist.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from helpers.client.fake_wire import FakeWire

with open(sys.argv[1], encoding="utf-8") as given:
    QUESTIONS: list[dict[str, Any]] = json.load(given)
LOG = sys.argv[2]
INFO = {"name": "asking", "version": "1"}
TOOLS = [{"name": "ask", "description": "Asks the listed questions.",
          "inputSchema": {"type": "object"}}]
waiting: dict[str, Any] = {}  # the tools/call id and the replies so far


WIRE = FakeWire("asking_server", "2025-11-25")


def send(message: dict[str, Any], off_schema: str | None = None) -> None:
    WIRE.send(message, off_schema=off_schema)


def handle(message: dict[str, Any]) -> None:
    id, method = message.get("id"), message.get("method")
    if method is None:  # a reply to one of our questions
        if waiting and id in waiting["replies"]:
            waiting["replies"][id] = message.get("result", message.get("error"))
            if all(r is not None for r in waiting["replies"].values()):
                text = json.dumps(list(waiting["replies"].values()))
                send({"jsonrpc": "2.0", "id": waiting["call"],
                      "result": {"content": [{"type": "text", "text": text}]}})
        return
    if id is None:
        return
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": id, "result": {
            "protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": INFO}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": id, "result": {"tools": TOOLS}})
    elif method == "tools/call" and (message.get("params") or {}).get("name") == "ask":
        waiting.update(call=id, replies={f"q{i}": None for i in range(len(QUESTIONS))})
        for i, params in enumerate(QUESTIONS):
            send({"jsonrpc": "2.0", "id": f"q{i}", "method": "elicitation/create",
                  "params": params})
    else:
        send({"jsonrpc": "2.0", "id": id,
              "error": {"code": -32601, "message": f"Method not found: {method}"}})


def main() -> None:
    for line in sys.stdin:
        if line.strip():
            message = json.loads(line)
            WIRE.received(message)
            with open(LOG, "a", encoding="utf-8") as log:
                log.write(json.dumps(message) + "\n")
            handle(message)


if __name__ == "__main__":
    main()
