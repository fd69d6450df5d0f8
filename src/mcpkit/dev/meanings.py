"""What a JSON-RPC error code means, said for the developer reading the wire pane.

The code's name is the one `mcpkit.errors` gives it (`default_message` of its class), so the
two cannot drift; the sentence after it says what usually causes it and where to look. Codes
outside the table are read by their range: the JSON-RPC reserved block, a server's own block,
or an application code.

Pure: no I/O.
"""

from __future__ import annotations

from typing import Final

from mcpkit.errors import ResourceNotFoundError, error_class_for_code

__all__ = [
    "MEANINGS",
    "meaning",
]

MEANINGS: Final[dict[int, str]] = {
    -32700: "the peer sent bytes that are not JSON; a stdio server that prints to stdout "
            "breaks the stream this way",
    -32600: "the message is JSON but not a valid JSON-RPC request (a missing or reused id, a "
            "wrong member type)",
    -32601: "the peer does not have this method; a 2025-11-25 server answers server/discover "
            "so, which is how the client learns to fall back to initialize",
    -32602: "the method exists but its params do not fit: a missing or mistyped argument, an "
            "unknown tool, prompt or resource, a stale or forged requestState",
    -32603: "the handler failed unexpectedly; the details are in the server's log (its "
            "stderr), under the error id the message names when it has one",
    ResourceNotFoundError.LEGACY_CODE:
            "Resource not found (2025-11-25): no resource has this URI; the modern era says "
            "-32602 with data.uri",
    -32020: "a mirrored HTTP header (Mcp-Method, Mcp-Name, Mcp-Param-*) does not match the "
            "body; a client holding an old tool list lists again and retries once",
    -32021: "the request did not declare a capability or extension the server needs for it "
            "(data.requiredCapabilities names it)",
    -32022: "the server does not speak the protocol version the request named; data.supported "
            "lists the versions it does",
    -32042: "a 2025-11-25 server needs the user to open a page first (URL elicitation); "
            "the request can be retried once they have",
}
"""Code -> what it means and what usually causes it."""


def meaning(code: object) -> str:
    """`"-32601 Method not found: ..."`, or what the code's range says."""
    if type(code) is not int:
        return "an error without an integer code, which JSON-RPC requires"
    cls = error_class_for_code(code)
    name = cls.default_message if cls is not None else None
    if code == ResourceNotFoundError.LEGACY_CODE:
        name = None  # its sentence says it
    explained = MEANINGS.get(code)
    if explained is not None:
        return f"{code} {name}: {explained}" if name else f"{code} {explained}"
    if -32099 <= code <= -32000:
        return f"{code}: a code of the server-error range; the server's own meaning"
    if -32768 <= code <= -32100:
        return f"{code}: reserved by JSON-RPC, not defined by it or by MCP"
    return f"{code}: an application error code, the server's own meaning"
