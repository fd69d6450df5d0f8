"""JSON-RPC 2.0 decoding and encoding.

`decode` turns one wire message (a line of stdio, an HTTP body) into a `Request`,
`Notification` or `Response`, or raises `ParseError` / `InvalidRequestError`. The invalid-request
error keeps the id when one could be read, so the error response can echo it (ERR-9).

A message nested deeper than `MAX_NESTING` levels is refused too (a request's with -32602
naming its method): the JSON decoder takes 1024 levels, but orjson encodes no more than 254
and Python's recursion stops near 1000, so a deeper value could be neither stored (a task's
arguments, a legacy session's capabilities), nor sent back, nor walked by a recursive check.
One bound where every message arrives keeps each of those from failing inside the server.

Encoding is compact orjson, which never emits a newline inside a message: the framing of stdio
and SSE relies on that.
"""

from __future__ import annotations

from typing import Any, Final

import orjson

from mcpkit.errors import InvalidParamsError, InvalidRequestError, ParseError

__all__ = [
    "MAX_NESTING",
    "EncodeError",
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

MAX_NESTING: Final = 250
"""The deepest a message may nest objects and arrays (the message itself is level 1): below
orjson's encoding limit of 254, with room for what wraps a value when it is kept or sent back."""


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
    message = classify(obj)
    # Nesting past the bound takes two bytes a level and an opening bracket each: most
    # messages are ruled out by their length or a count, before any walk.
    if len(data) > 2 * MAX_NESTING and _brackets(data) > MAX_NESTING and _too_deep(obj):
        raise _too_deep_error(message)
    return message


def _brackets(data: bytes | bytearray | memoryview | str) -> int:
    if isinstance(data, str):
        return data.count("{") + data.count("[")
    raw = data if isinstance(data, bytes | bytearray) else bytes(data)
    return raw.count(b"{") + raw.count(b"[")


def _too_deep(value: Any) -> bool:
    """Whether `value` nests containers deeper than `MAX_NESTING` (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if level > MAX_NESTING:
            return True
        children = item.values() if type(item) is dict else item
        stack.extend((child, level + 1) for child in children
                     if type(child) is dict or type(child) is list)
    return False


def _too_deep_error(message: Message) -> InvalidRequestError | InvalidParamsError:
    fix = (f"nest objects and arrays at most {MAX_NESTING} levels deep (the most this side "
           "can keep and send back)")
    if isinstance(message, Request):
        exc = InvalidParamsError(f"{message.method}: params nested too deeply; {fix}")
        exc.request_id = message.id  # type: ignore[attr-defined]
        return exc
    return _invalid(f"the message is nested too deeply; {fix}")


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

EncodeError = orjson.JSONEncodeError
"""What `encode` raises for a value JSON cannot carry (a TypeError)."""


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
