"""The requests the benchmark sends, pre-encoded, for both protocol eras.

Modern (2026-07-28): every request carries `params._meta` with the protocol version and the
client capabilities; over HTTP the mirrored headers go with it. Legacy (2025-11-25): an
`initialize` handshake first, then plain requests (and on HTTP the `Mcp-Session-Id`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ECHO_TEXT = "hello world"
CLIENT_INFO = {"name": "mcpkit-bench", "version": "1.0.0"}
MODERN_META: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
}
_ID_MARK = 987654321987


class BadAnswer(ValueError):
    """A server answered, but not with what the request asked for."""


def params_for(method: str, tool: str = "echo") -> dict[str, Any]:
    if method == "tools/call":
        return {"name": tool, "arguments": {"text": ECHO_TEXT}}
    if method == "initialize":
        return {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": CLIENT_INFO}
    return {}


def encode(
    method: str, era: str, request_id: int | str, params: dict[str, Any] | None = None
) -> bytes:
    """One request as compact JSON (no trailing newline)."""
    body = dict(params_for(method) if params is None else params)
    if era == "modern":
        body["_meta"] = MODERN_META
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if body or era == "modern":
        msg["params"] = body
    return orjson.dumps(msg)


def notification(method: str) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "method": method})


@dataclass(frozen=True)
class Template:
    """A request with a hole for the integer id: `template.fill(17)` gives the bytes."""

    prefix: bytes
    suffix: bytes

    @classmethod
    def of(cls, method: str, era: str, params: dict[str, Any] | None = None) -> Template:
        raw = encode(method, era, _ID_MARK, params)
        prefix, suffix = raw.split(str(_ID_MARK).encode(), 1)
        return cls(prefix, suffix)

    def fill(self, request_id: int) -> bytes:
        return self.prefix + str(request_id).encode() + self.suffix

    def line_format(self) -> bytes:
        """A %-format for `fmt % id` that yields one newline-terminated line."""
        return self.prefix.replace(b"%", b"%%") + b"%d" + self.suffix.replace(b"%", b"%%") + b"\n"


def modern_headers(method: str, name: str | None = None) -> dict[str, str]:
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": method,
    }
    if name is not None:
        headers["Mcp-Name"] = name
    return headers


def legacy_headers(session_id: str | None) -> dict[str, str]:
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    if session_id is not None:
        headers["Mcp-Session-Id"] = session_id
        headers["MCP-Protocol-Version"] = LEGACY
    return headers


def result_of(msg: Any, expected_id: Any = None) -> dict[str, Any]:
    if not isinstance(msg, dict):
        raise BadAnswer(f"not a JSON object: {msg!r:.200}")
    if expected_id is not None and msg.get("id") != expected_id:
        raise BadAnswer(f"answer for id {msg.get('id')!r}, expected {expected_id!r}")
    if "error" in msg:
        raise BadAnswer(f"JSON-RPC error: {orjson.dumps(msg['error']).decode()[:300]}")
    result = msg.get("result")
    if not isinstance(result, dict):
        raise BadAnswer(f"no result object: {orjson.dumps(msg).decode()[:300]}")
    return result


def check_call(msg: Any, expected_id: Any = None) -> None:
    result = result_of(msg, expected_id)
    content = result.get("content")
    if result.get("isError") or not content or content[0].get("text") != ECHO_TEXT:
        raise BadAnswer(f"tools/call did not echo: {orjson.dumps(result).decode()[:300]}")


def check_list(msg: Any, n_tools: int, expected_id: Any = None) -> None:
    tools = result_of(msg, expected_id).get("tools")
    if not isinstance(tools, list) or len(tools) != n_tools:
        got = len(tools) if isinstance(tools, list) else tools
        raise BadAnswer(f"tools/list listed {got} tools, expected {n_tools}")


def era_of_discover_answer(msg: Any) -> str | None:
    """'modern' if this is a DiscoverResult offering 2026-07-28, else None."""
    if isinstance(msg, dict) and isinstance(msg.get("result"), dict):
        versions = msg["result"].get("supportedVersions")
        if isinstance(versions, list) and MODERN in versions:
            return "modern"
    return None


def sse_messages(body: bytes) -> list[Any]:
    """JSON-RPC messages carried by an SSE body (one `data:` line each)."""
    out = []
    for line in body.splitlines():
        if line.startswith(b"data:"):
            data = line[5:].strip()
            if data:
                out.append(orjson.loads(data))
    return out


def messages_in_http_body(content_type: str, body: bytes) -> list[Any]:
    if "text/event-stream" in content_type:
        return sse_messages(body)
    if not body:
        return []
    return [orjson.loads(body)]


def answer_in_http_body(content_type: str, body: bytes) -> Any:
    """The JSON-RPC response (the message with an id and no method) in a POST answer."""
    for msg in messages_in_http_body(content_type, body):
        if isinstance(msg, dict) and "id" in msg and "method" not in msg:
            return msg
    raise BadAnswer(f"no JSON-RPC response in body ({content_type}): {body[:300]!r}")
