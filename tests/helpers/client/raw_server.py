"""A deliberately small MCP peer that speaks raw JSON-RPC on stdio, for the client's tests.

It does by hand what a real server may do and what mcpkit's own server never would: answer
`input_required` with fixed states, answer the probe in each of the ways legacy servers do
(-32601, -32602, an empty result, silence, dying), send requests to a legacy client, reject the
first request with -32022, or, as a modern server too busy for the first probe, answer the
`initialize` that follows with its own modern version (`modern-initialize`). `python raw_server.py MODE`; every message it receives is appended to
the file named by RAW_SERVER_LOG as `<pid> <json>` so a test can see what arrived where.
Every message it sends is checked against the schema of its mode's era first (fake_wire.py);
the one it sends off the schema on purpose (the modern tool list with definitions a client must
drop) is marked so.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from helpers.client.fake_wire import FakeWire

MODE = sys.argv[1] if len(sys.argv) > 1 else "modern"
LOG = os.environ.get("RAW_SERVER_LOG")
MODERN = "2026-07-28"
WIRE = FakeWire("raw_server", "2025-11-25" if MODE.startswith("legacy") else MODERN)
"""Every message sent is checked against the schema of the mode's era (fake_wire.py)."""
LEGACY_WIRE = FakeWire("raw_server", "2025-11-25")
"""For the one legacy shape a modern mode sends (`modern-initialize`'s InitializeResult)."""
TRICKY_STATE = ' s2: "ünïcode" \\ slash/ \t tab  +/= '
ECHO_STATE = "eyJzdGVwIjoxfQ==  \u2603 \\n"
pending: dict[str, Any] = {}  # legacy: our request id -> (call id, key)
answers: dict[Any, dict[str, Any]] = {}
first_request_seen = False


def send(message: dict[str, Any], off_schema: str | None = None) -> None:
    WIRE.send(message, off_schema=off_schema)


def record(message: Any) -> None:
    if LOG:
        with open(LOG, "a", encoding="utf-8") as f:
            f.write(f"{os.getpid()} {json.dumps(message)}\n")


def result(id: Any, body: dict[str, Any], modern: bool = True) -> None:
    if modern:
        body = {"resultType": "complete", **body} if "resultType" not in body else body
    send({"jsonrpc": "2.0", "id": id, "result": body})


def error(id: Any, code: int, message: str, data: Any = None) -> None:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    send({"jsonrpc": "2.0", "id": id, "error": err})


def text(value: Any) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": json.dumps(value)}], "structuredContent": value}


def elicit(message: str, **props: Any) -> dict[str, Any]:
    return {"method": "elicitation/create", "params": {
        "mode": "form", "message": message,
        "requestedSchema": {"type": "object", "properties": props or {"name": {"type": "string"}}},
    }}


SAMPLE = {"method": "sampling/createMessage", "params": {
    "messages": [{"role": "user", "content": {"type": "text", "text": "Capital of France?"}}],
    "maxTokens": 50,
}}

TOOLS = [
    {"name": "plain", "description": "Reports what it received.",
     "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}},
    {"name": "with_refs", "description": "Local references are fine.",
     "inputSchema": {"type": "object", "$defs": {"id": {"$anchor": "ident", "type": "string"}},
                     "properties": {"a": {"$ref": "#/$defs/id"}, "b": {"$ref": "#ident"}},
                     "if": {"required": ["a"]}, "then": {"required": ["b"]},
                     "additionalProperties": False}},
    {"name": "typed_out", "description": "Declares an output schema it keeps.",
     "inputSchema": {"type": "object"},
     "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}},
                      "required": ["n"]}},
    {"name": "bad_output", "description": "Declares an output schema it breaks.",
     "inputSchema": {"type": "object"},
     "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}},
                      "required": ["n"]}},
    {"name": "remote_ref", "description": "Points at a network schema.",
     "inputSchema": {"type": "object",
                     "properties": {"u": {"$ref": "http://127.0.0.1:9/canary.json"}}}},
    {"name": "not_object", "description": "Root is an array.", "inputSchema": {"type": "array"}},
    {"description": "No name at all.", "inputSchema": {"type": "object"}},
    {"name": "bad_header", "description": "x-mcp-header on an object property.",
     "inputSchema": {"type": "object", "properties": {
         "o": {"type": "object", "x-mcp-header": "Obj"}}}},
    {"name": "bad_dialect", "description": "Unknown $schema.",
     "inputSchema": {"$schema": "https://example.com/my-dialect", "type": "object"}},
    {"name": "invalid_schema", "description": "minLength must be a number.",
     "inputSchema": {"type": "object", "properties": {"s": {"type": "string",
                                                            "minLength": "long"}}}},
]

HOSTILE = "a" * 40 + "!"
"""A value that makes `^(a+)+$` or `^(a|aa)+$` backtrack for days in Python's `re`."""


def _string_out(pattern: str) -> dict[str, Any]:
    return {"type": "object", "properties": {"s": {"type": "string", "pattern": pattern}},
            "required": ["s"]}


REGEX_TOOLS = [
    {"name": "nested", "description": "A pattern with a repeat over a repeat.",
     "inputSchema": {"type": "object"}, "outputSchema": _string_out("^(a+)+$")},
    {"name": "keys", "description": "A patternProperties key with a repeated alternation.",
     "inputSchema": {"type": "object"},
     "outputSchema": {"type": "object", "patternProperties": {"^(a|aa)+$": {"type": "integer"}},
                      "additionalProperties": False}},
    {"name": "word", "description": "Returns its argument s.",
     "inputSchema": {"type": "object"}, "outputSchema": _string_out("^[a-z]+$")},
    {"name": "month", "description": "Returns its argument s.",
     "inputSchema": {"type": "object"}, "outputSchema": _string_out("\\d{4}-\\d{2}")},
    {"name": "broken_key", "description": "draft-04 does not check patternProperties keys.",
     "inputSchema": {"type": "object"},
     "outputSchema": {"$schema": "http://json-schema.org/draft-04/schema#",
                      "patternProperties": {"(unclosed": {}}}},
]

HOSTILE_TEXT = "\x1b]0;owned\x07\x1b[2J\x9b31m\u202etxt.exe\u2066\r"
"""Terminal escapes, C0 and C1 controls and bidi overrides, for `mcpkit` to show harmlessly."""
HOSTILE_TOOLS = [
    {"name": f"say{HOSTILE_TEXT}", "description": f"Says{HOSTILE_TEXT}\nmore",
     "inputSchema": {"type": "object", "properties": {f"x{HOSTILE_TEXT}": {"type": "string"}}}},
    {"name": "say", "description": "Answers with hostile text.",
     "inputSchema": {"type": "object"}},
    {"name": "fail", "description": "Fails with a hostile message.",
     "inputSchema": {"type": "object"}},
]


def tools_call(id: Any, params: dict[str, Any]) -> None:
    name = params.get("name")
    responses = params.get("inputResponses")
    state = params.get("requestState")
    seen = {"id": id, "hasInputResponses": "inputResponses" in params,
            "hasRequestState": "requestState" in params, "requestState": state,
            "inputResponses": responses, "meta": params.get("_meta"),
            "arguments": params.get("arguments")}
    if MODE == "hostile" and name == "say":
        result(id, {"content": [{"type": "text", "text": f"line one{HOSTILE_TEXT}\nline two"},
                                {"type": "resource_link", "uri": f"file:///x{HOSTILE_TEXT}",
                                 "name": f"n{HOSTILE_TEXT}"}]})
    elif MODE == "hostile" and name == "fail":
        error(id, -32603, f"it broke{HOSTILE_TEXT}")
    elif name == "plain":
        result(id, text(seen))
    elif name == "ask_twice":
        if state is None:
            result(id, {"resultType": "input_required",
                        "inputRequests": {"first": elicit("First name?")}, "requestState": "s1"})
        elif state == "s1" and responses and "first" in responses:
            first = responses["first"]["content"]["name"]
            result(id, {"resultType": "input_required",
                        "inputRequests": {"second": elicit("Last name?")},
                        "requestState": TRICKY_STATE + first})
        elif state.startswith(TRICKY_STATE) and responses and "second" in responses:
            full = state[len(TRICKY_STATE):] + " " + responses["second"]["content"]["name"]
            result(id, text({"name": full, **seen}))
        else:
            error(id, -32602, f"unexpected round: state={state!r} responses={responses!r}")
    elif name == "elicit_and_sample":
        if responses and {"who", "capital"} <= set(responses):
            who = responses["who"]["content"]["name"]
            capital = responses["capital"]["content"]["text"]
            result(id, text({"who": who, "capital": capital, **seen}))
        else:
            result(id, {"resultType": "input_required", "inputRequests": {
                "who": elicit("Who are you?"), "capital": SAMPLE}})
    elif name == "state_only":
        if state == "opaque+/==":
            result(id, text(seen))
        else:
            result(id, {"resultType": "input_required", "requestState": "opaque+/=="})
    elif name == "echo_state":
        if state is None:
            result(id, {"resultType": "input_required", "requestState": ECHO_STATE,
                        "inputRequests": {"ok": elicit("Confirm?", confirmed={"type": "boolean"})}})
        else:
            result(id, text(seen))
    elif name == "no_state":
        if responses is None:
            result(id, {"resultType": "input_required",
                        "inputRequests": {"ok": elicit("Confirm?")}})
        else:
            result(id, text(seen))
    elif name == "defaults":
        if responses is None:
            result(id, {"resultType": "input_required", "inputRequests": {"form": {
                "method": "elicitation/create", "params": {
                    "message": "Profile", "requestedSchema": {"type": "object", "properties": {
                        "name": {"type": "string"}, "age": {"type": "integer", "default": 30},
                        "verified": {"type": "boolean", "default": True}}}}}}})
        else:
            result(id, text(seen))
    elif name == "bad_defaults":
        if responses is None:
            result(id, {"resultType": "input_required", "inputRequests": {"form": {
                "method": "elicitation/create", "params": {
                    "message": "Contact", "requestedSchema": {"type": "object", "properties": {
                        "email": {"type": "string", "format": "email", "default": ""},
                        "age": {"type": "integer", "minimum": 18, "maximum": 130,
                                "default": 200},
                        "city": {"type": "string", "maxLength": 20, "default": "Oslo"}},
                        "required": ["email"]}}}}})
        else:
            result(id, text(seen))
    elif name == "many_inputs":
        count = int((params.get("arguments") or {}).get("count", 33))
        if responses is None:
            result(id, {"resultType": "input_required", "inputRequests": {
                f"q{i}": elicit(f"Question {i}?") for i in range(count)}})
        else:
            result(id, text({"answered": len(responses)}))
    elif name == "url":
        if responses is None:
            result(id, {"resultType": "input_required", "inputRequests": {"login": {
                "method": "elicitation/create", "params": {
                    "mode": "url", "message": "Sign in", "url": "https://example.com/login"}}}})
        else:
            result(id, text(seen))
    elif name == "roots":
        if responses is None:
            result(id, {"resultType": "input_required",
                        "inputRequests": {"r": {"method": "roots/list"}}})
        else:
            result(id, text(seen))
    elif name == "weird_type":
        # A well-formed task, for a request that never declared the Tasks extension (TASK-3).
        stamp = "2026-07-28T12:00:00.000Z"
        send({"jsonrpc": "2.0", "id": id, "result": {
            "resultType": "task", "taskId": "t" * 24, "status": "working", "createdAt": stamp,
            "lastUpdatedAt": stamp, "ttlMs": 60000, "pollIntervalMs": 1000}})
    elif name == "endless":
        result(id, {"resultType": "input_required", "requestState": f"again-{id}"})
    elif name == "typed_out":
        result(id, text({"n": 1}))
    elif name == "bad_output":
        result(id, text({"n": "one"}))
    elif name == "nested":
        result(id, text({"s": HOSTILE}))
    elif name == "keys":
        result(id, text({HOSTILE: 1}))
    elif name in ("word", "month"):
        result(id, text({"s": (params.get("arguments") or {}).get("s")}))
    elif name == "progress":
        token = (params.get("_meta") or {}).get("progressToken")
        for i in (1, 2, 3):
            send({"jsonrpc": "2.0", "method": "notifications/progress",
                  "params": {"progressToken": token, "progress": i, "total": 3,
                             "message": f"step {i}"}})
        send({"jsonrpc": "2.0", "method": "notifications/message",
              "params": {"level": "info", "data": "half way", "logger": "raw"}})
        result(id, text(seen))
    elif name == "slow":
        pass  # never answered; the client cancels it
    else:
        error(id, -32602, f"Unknown tool: {name!r}")


def modern(message: dict[str, Any]) -> None:
    global first_request_seen
    id, method = message.get("id"), message.get("method")
    params = message.get("params") or {}
    if id is None:
        return
    if MODE == "reject-first" and not first_request_seen:
        first_request_seen = True
        requested = (params.get("_meta") or {}).get("io.modelcontextprotocol/protocolVersion")
        error(id, -32022, "Unsupported protocol version",
              {"supported": [MODERN], "requested": requested})
        return
    if MODE == "modern-initialize" and method == "server/discover" and not first_request_seen:
        first_request_seen = True
        return  # too busy to answer the first probe in time
    if MODE == "modern-initialize" and method == "initialize":
        # As the official suite's 2026-07-28 server does: initialize answered with its own
        # (modern) version. An InitializeResult is a 2025-11-25 shape, checked as one.
        LEGACY_WIRE.send({"jsonrpc": "2.0", "id": id, "result": {
            "protocolVersion": MODERN, "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw-initialize", "version": "1"}}})
        return
    if MODE == "future" and method == "server/discover":
        requested = (params.get("_meta") or {}).get("io.modelcontextprotocol/protocolVersion")
        error(id, -32022, "Unsupported protocol version",
              {"supported": ["2099-01-01"], "requested": requested})
        return
    if method == "server/discover":
        hostile = MODE == "hostile"
        info = {"name": "raw", "version": "1"}
        if hostile:
            info = {"name": f"raw{HOSTILE_TEXT}", "version": f"1{HOSTILE_TEXT}"}
        result(id, {"supportedVersions": [MODERN], "capabilities": {"tools": {}, "resources": {},
                                                                    "prompts": {}},
                    "ttlMs": 0, "cacheScope": "public",
                    **({"instructions": f"Be nice{HOSTILE_TEXT}\nfake: line"} if hostile else {}),
                    "_meta": {"io.modelcontextprotocol/serverInfo": info}})
    elif method == "tools/list":
        if MODE == "chatty" and "io.modelcontextprotocol/logLevel" in params.get("_meta", {}):
            # A server may log while it answers any request that asked for a level.
            send({"jsonrpc": "2.0", "method": "notifications/message",
                  "params": {"level": "info", "logger": "lists", "data": "listing tools"}})
        tools = {"regex": REGEX_TOOLS, "hostile": HOSTILE_TOOLS}.get(MODE, TOOLS)
        send({"jsonrpc": "2.0", "id": id, "result": {
            "resultType": "complete", "tools": tools, "ttlMs": 60000, "cacheScope": "public"}},
             off_schema="TOOLS holds definitions the client must drop (no name, an array root)"
             if tools is TOOLS else None)
    elif method == "tools/call":
        tools_call(id, params)
    elif method == "resources/read":
        if params.get("inputResponses"):
            result(id, {"contents": [{"uri": params["uri"], "text": "after input"}],
                        "ttlMs": 60000, "cacheScope": "private"})
        else:
            result(id, {"resultType": "input_required",
                        "inputRequests": {"ok": elicit("Read it?")}})
    elif method == "prompts/get":
        if params.get("inputResponses"):
            answer = params["inputResponses"]["topic"]["content"]["name"]
            result(id, {"messages": [{"role": "user",
                                      "content": {"type": "text", "text": f"About {answer}"}}]})
        else:
            result(id, {"resultType": "input_required",
                        "inputRequests": {"topic": elicit("Topic?")}})
    else:
        error(id, -32601, f"Method not found: {method}")


LEGACY_TOOLS = [{"name": "ask", "description": "Asks the client for everything.",
                 "inputSchema": {"type": "object"}},
                {"name": "log", "description": "Logs three messages.",
                 "inputSchema": {"type": "object"}}]


def legacy(message: dict[str, Any]) -> None:
    id, method = message.get("id"), message.get("method")
    params = message.get("params") or {}
    if method is None:  # the client's answer to one of our requests
        entry = pending.pop(id, None)
        if entry is not None:
            call_id, key = entry
            answers.setdefault(call_id, {})[key] = message.get("result", message.get("error"))
            if not any(c == call_id for c, _ in pending.values()):
                result(call_id, text(answers.pop(call_id)), modern=False)
        return
    if id is None:
        return
    if method == "server/discover":
        if MODE == "legacy-32601":
            error(id, -32601, "Method not found")
        elif MODE == "legacy-32602":
            error(id, -32602, "Server not initialized")
        elif MODE == "legacy-empty":
            result(id, {}, modern=False)
        elif MODE == "legacy-die":
            sys.stderr.write("fatal: unknown method server/discover\n")
            sys.stderr.flush()
            sys.exit(3)
        elif MODE == "legacy-only":
            error(id, -32022, "Unsupported protocol version",
                  {"supported": ["2025-11-25"], "requested": MODERN})
        return  # legacy-silent
    if method == "initialize":
        result(id, {"protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {"listChanged": True}, "logging": {},
                                     "resources": {"subscribe": True, "listChanged": True}},
                    "serverInfo": {"name": "raw-legacy", "version": "1"}}, modern=False)
    elif method == "tools/list":
        result(id, {"tools": LEGACY_TOOLS}, modern=False)
    elif method == "tools/call" and params.get("name") == "ask":
        for key, request in (("elicit", elicit("Name?")), ("sample", SAMPLE),
                             ("roots", {"method": "roots/list"}), ("ping", {"method": "ping"})):
            rid = f"srv-{id}-{key}"
            pending[rid] = (id, key)
            send({"jsonrpc": "2.0", "id": rid, **request})
    elif method == "tools/call" and params.get("name") == "log":
        for i in range(3):
            send({"jsonrpc": "2.0", "method": "notifications/message",
                  "params": {"level": "warning", "data": f"message {i}"}})
        result(id, text({"logged": 3}), modern=False)
    elif method == "resources/subscribe":
        result(id, {}, modern=False)
        send({"jsonrpc": "2.0", "method": "notifications/resources/updated",
              "params": {"uri": params["uri"]}})
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    elif method in ("resources/unsubscribe", "logging/setLevel", "ping"):
        result(id, {}, modern=False)
    else:
        error(id, -32601, f"Method not found: {method}")


def main() -> None:
    handle = legacy if MODE.startswith("legacy") else modern
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        record(message)
        WIRE.received(message)
        handle(message)


if __name__ == "__main__":
    main()
