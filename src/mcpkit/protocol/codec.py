"""JSON-RPC 2.0 decoding and encoding.

`decode` turns one wire message (a line of stdio, an HTTP body) into a `Request`,
`Notification` or `Response`, or raises `ParseError` / `InvalidRequestError`. The invalid-request
error keeps the id when one could be read, so the error response can echo it (ERR-9).

Encoding is compact orjson, which never emits a newline inside a message: the framing of stdio
and SSE relies on that.
"""

from __future__ import annotations

from typing import Any

import orjson

from mcpkit.errors import InvalidRequestError, ParseError

__all__ = [
    "Notification",
    "Request",
    "RequestId",
    "Response",
    "decode",
    "encode",
    "error_message",
    "notification_message",
    "request_message",
    "result_message",
]

RequestId = str | int


class Request:
    """A JSON-RPC request: it has an id and expects exactly one response."""

    __slots__ = ("id", "method", "params")

    def __init__(self, id: RequestId, method: str, params: dict[str, Any] | None) -> None:
        self.id = id
        self.method = method
        self.params = params

    def __repr__(self) -> str:
        return f"Request(id={self.id!r}, method={self.method!r})"


class Notification:
    """A JSON-RPC notification: no id, never answered."""

    __slots__ = ("method", "params")

    def __init__(self, method: str, params: dict[str, Any] | None) -> None:
        self.method = method
        self.params = params

    def __repr__(self) -> str:
        return f"Notification(method={self.method!r})"


class Response:
    """A JSON-RPC response: `result` or `error` (exactly one is set)."""

    __slots__ = ("error", "id", "result")

    def __init__(
        self,
        id: RequestId | None,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
    ) -> None:
        self.id = id
        self.result = result
        self.error = error

    def __repr__(self) -> str:
        kind = "error" if self.error is not None else "result"
        return f"Response(id={self.id!r}, {kind})"


Message = Request | Notification | Response


def _invalid(reason: str, id: Any = None) -> InvalidRequestError:
    exc = InvalidRequestError(f"Invalid request: {reason}")
    exc.request_id = id if _is_id(id) else None  # type: ignore[attr-defined]
    return exc


def _is_id(value: Any) -> bool:
    # bool is an int subclass but never a valid id; floats are not ids in MCP.
    t = type(value)
    return t is str or t is int


def decode(data: bytes | bytearray | memoryview | str) -> Message:
    """Decode one JSON-RPC message, or raise ParseError / InvalidRequestError."""
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise ParseError(f"Parse error: {exc}") from None
    return classify(obj)


def classify(obj: Any) -> Message:
    """Classify an already-decoded JSON value as a JSON-RPC message."""
    if type(obj) is not dict:
        if type(obj) is list:
            raise _invalid("batches are not supported; send one message at a time")
        raise _invalid("a message must be a JSON object")
    id = obj.get("id")
    if obj.get("jsonrpc") != "2.0":
        raise _invalid('"jsonrpc" must be "2.0"', id)
    method = obj.get("method")
    if method is not None:
        if type(method) is not str or not method:
            raise _invalid('"method" must be a non-empty string', id)
        params = obj.get("params")
        if params is not None and type(params) is not dict:
            raise _invalid(f'"params" of {method} must be an object', id)
        if "id" not in obj:
            return Notification(method, params)
        if type(id) is not str and type(id) is not int:
            raise _invalid('"id" must be a string or an integer (never null)', None)
        return Request(id, method, params)
    if "result" in obj or "error" in obj:
        if "id" in obj and id is not None and not _is_id(id):
            raise _invalid('"id" must be a string or an integer', None)
        result = obj.get("result")
        error = obj.get("error")
        if ("result" in obj) == ("error" in obj):
            raise _invalid("a response has exactly one of result and error", id)
        # Checked by presence, not by value: `"error": null` is no error object, and taken for
        # an absent one it would make a response with neither member, read as a success.
        if "error" in obj and (type(error) is not dict or type(error.get("code")) is not int):
            raise _invalid('"error" must be an object with an integer "code"', id)
        if "result" in obj and type(result) is not dict:
            raise _invalid('"result" must be an object', id)
        return Response(id, result, error)
    raise _invalid('a message needs "method" (request, notification) or "result"/"error"', id)


encode = orjson.dumps
"""Compact JSON bytes, no newlines: the one encoder used on every wire path."""


def result_message(id: RequestId, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "result": result}


def error_message(id: RequestId | None, error: dict[str, Any]) -> dict[str, Any]:
    if id is None:
        return {"jsonrpc": "2.0", "error": error}
    return {"jsonrpc": "2.0", "id": id, "error": error}


def request_message(id: RequestId, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def notification_message(method: str, params: dict[str, Any] | None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return msg
