"""A stdio server whose every word is hostile text, for each `mcpkit` command that prints what
a server says (tests/cli/test_cli_hostile_text.py).

`python hostile_text.py` speaks the 2026-07-28 era correctly: every message it sends passes
the official schema (fake_wire.py checks each before it is written), so a client has no reason
to refuse any of it. But every string a server may choose carries `HOSTILE`: a window title
and a screen clear (OSC, CSI), a C1 CSI, BEL, a bidi override and isolate, a backspace and a
carriage return that would overwrite a line with a fake "ok". It serves tools (one a task
tool), prompts, resources, a listen stream, tasks and skills (`notes`, whose second file has a
300-byte name, and an entry a host must set aside), and answers any other method with an error
whose message is hostile too. Every message it receives is appended to the file named by
HOSTILE_LOG, one JSON line each, for the test to check.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sys
from typing import Any

from helpers.client.fake_wire import FakeWire

MODERN = "2026-07-28"
HOSTILE = "\x1b]0;owned\x07\x1b[2J\x9b31m\u202etxt.exe\u2066\b\b\rok"
"""What no terminal should be handed raw."""
TASKS = "io.modelcontextprotocol/tasks"
SKILLS = "io.modelcontextprotocol/skills"
STAMP = "2026-07-28T12:00:00.000Z"
TASK_ID = f"task{HOSTILE}"
SKILL = (f"---\nname: notes\ndescription: {json.dumps(f'Notes{HOSTILE}')}\n---\n"
         f"Write{HOSTILE} down.\n")  # the description in YAML's escapes, as JSON writes them
LONG_NAME = "a" * 297 + ".md"
"""A file name of 300 bytes: past the 255 a file system allows for one name."""
FILES = {"skill://notes/SKILL.md": SKILL.encode(), f"skill://notes/{LONG_NAME}": b"long\n"}
LOG = os.environ.get("HOSTILE_LOG")
WIRE = FakeWire("hostile_text", MODERN)


def send(message: dict[str, Any], off_schema: str | None = None) -> None:
    WIRE.send(message, off_schema=off_schema)


def result(id: Any, body: dict[str, Any]) -> None:
    send({"jsonrpc": "2.0", "id": id, "result": {"resultType": "complete", **body}})


def error(id: Any, code: int, message: str) -> None:
    send({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})


def cacheable(**body: Any) -> dict[str, Any]:
    return {**body, "ttlMs": 0, "cacheScope": "private"}


def task(status: str, task_id: str = TASK_ID, **extra: Any) -> dict[str, Any]:
    return {"taskId": task_id, "status": status, "statusMessage": f"busy{HOSTILE}",
            "createdAt": STAMP, "lastUpdatedAt": STAMP, "ttlMs": 60000, "pollIntervalMs": 0,
            **extra}


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def entry() -> dict[str, Any]:
    return {"uri": "skill://notes/SKILL.md",
            "frontmatter": {"name": "notes", "description": f"Notes{HOSTILE}"},
            "resources": [{"uri": uri, "digest": digest(data), "size": len(data)}
                          for uri, data in FILES.items()]}


def declared(params: dict[str, Any], extension: str) -> bool:
    caps = (params.get("_meta") or {}).get("io.modelcontextprotocol/clientCapabilities") or {}
    return extension in (caps.get("extensions") or {})


TEXT = [{"type": "text", "text": f"line one{HOSTILE}\nline two"}]
TOOLS = [
    {"name": f"say{HOSTILE}", "description": f"Says{HOSTILE}\nfake: line",
     "inputSchema": {"type": "object", "properties": {f"x{HOSTILE}": {"type": "string"}}}},
    {"name": "say", "description": "Answers with hostile text.", "inputSchema": {"type": "object"}},
    {"name": "job", "description": f"A task{HOSTILE}", "inputSchema": {"type": "object"}},
    {"name": f"remote{HOSTILE}", "description": "Its schema points away: the client sets it aside.",
     "inputSchema": {"type": "object", "properties": {
         "p": {"$ref": f"https://schemas.example/{HOSTILE}.json"}}}},
]


def serve(message: dict[str, Any]) -> None:
    id, method = message.get("id"), message.get("method")
    params = message.get("params") or {}
    if id is None:
        return
    if method == "server/discover":
        result(id, cacheable(
            supportedVersions=[MODERN],
            capabilities={"tools": {"listChanged": True}, "prompts": {},
                          "resources": {"subscribe": True, "listChanged": True},
                          "extensions": {TASKS: {}, SKILLS: {}, f"com.example/x{HOSTILE}": {}}},
            instructions=f"Be nice{HOSTILE}\nfake: line",
            _meta={"io.modelcontextprotocol/serverInfo": {
                "name": f"host{HOSTILE}", "version": f"1{HOSTILE}", "title": f"Title{HOSTILE}"}}))
    elif method == "tools/list":
        result(id, cacheable(tools=TOOLS))
    elif method == "tools/call" and params.get("name") == "job" and declared(params, TASKS):
        send({"jsonrpc": "2.0", "id": id, "result": {"resultType": "task", **task("working")}})
    elif method == "tools/call":
        result(id, {"content": TEXT, "structuredContent": {f"k{HOSTILE}": f"v{HOSTILE}"}})
    elif method == "tasks/get":
        asked_id = params.get("taskId")
        asked = {f"q{HOSTILE}": {"method": "elicitation/create", "params": {
            "mode": "form", "message": f"Sure{HOSTILE}?\nfake: line", "requestedSchema": {
                "type": "object", "properties": {"ok": {"type": "boolean"}}}}}}
        if os.environ.get("HOSTILE_TASK") == "asks":
            result(id, task("input_required", asked_id, inputRequests=asked))
        elif os.environ.get("HOSTILE_TASK") == "fails":
            result(id, task("failed", asked_id,
                            error={"code": -32603, "message": f"broke{HOSTILE}"}))
        else:
            result(id, task("completed", asked_id, result={"content": TEXT}))
    elif method in ("tasks/update", "tasks/cancel"):
        result(id, {})
    elif method == "prompts/list":
        result(id, cacheable(prompts=[{"name": f"greet{HOSTILE}", "description": f"Hi{HOSTILE}",
                                       "arguments": [{"name": f"who{HOSTILE}"}]}]))
    elif method == "prompts/get":
        result(id, {"description": f"A greeting{HOSTILE}\nfake: line", "messages": [
            {"role": "user", "content": {"type": "text", "text": f"Hello{HOSTILE}"}}]})
    elif method == "resources/list":
        result(id, cacheable(resources=[{"uri": f"file:///r{HOSTILE}", "name": f"r{HOSTILE}"},
                                        *({"uri": uri, "name": uri.rpartition("/")[2]}
                                          for uri in FILES)]))
    elif method == "resources/templates/list":
        result(id, cacheable(resourceTemplates=[]))
    elif method == "resources/read":
        uri = params.get("uri")
        data = FILES.get(uri)
        content = ({"uri": uri, "blob": base64.b64encode(data).decode()} if data is not None
                   else {"uri": uri, "text": f"read{HOSTILE}"})
        result(id, cacheable(contents=[content]))
    elif method == "skills/list":
        rejected = {"uri": f"skill://x{HOSTILE}/SKILL.md", "resources": [],
                    "frontmatter": {"name": "other", "description": "set aside"}}
        send({"jsonrpc": "2.0", "id": id, "result": {
            "resultType": "complete", **cacheable(skills=[entry(), rejected])}},
            off_schema="the second entry names another skill than its URI: a host sets it aside")
    elif method == "skills/get":
        result(id, cacheable(skill=entry()))
    elif method == "subscriptions/listen":
        sub = {"io.modelcontextprotocol/subscriptionId": id}
        asked = params.get("notifications") or {}
        send({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
              "params": {"_meta": sub, "notifications": asked}})
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
              "params": {"_meta": sub}})
        for uri in asked.get("resourceSubscriptions") or []:
            send({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                  "params": {"_meta": sub, "uri": uri}})
    else:
        error(id, -32601, f"Method not found{HOSTILE}")


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if LOG:
            with open(LOG, "a", encoding="utf-8") as f:
                f.write(json.dumps(message) + "\n")
        if isinstance(message, dict):
            WIRE.received(message)
            serve(message)


if __name__ == "__main__":
    main()
