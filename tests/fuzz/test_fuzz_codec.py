"""The JSON codec and the JSON-RPC shapes, fed anything a peer could send.

`decode` either returns a message or raises mcpkit's own `RPCError` (ParseError for bytes that
are not JSON, InvalidRequestError for JSON that is not a message): never TypeError, KeyError,
RecursionError or UnicodeError, which would escape the transport's guard as a bug. What it
accepts, written back with the codec's own builders, decodes to the same message.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
from hypothesis import example, given
from hypothesis import strategies as st
from peer_values import json_values, near_miss_messages

from mcpkit.errors import InvalidRequestError, ParseError, RPCError
from mcpkit.protocol.codec import (
    Notification,
    Request,
    Response,
    classify,
    decode,
    encode,
    error_message,
    notification_message,
    request_message,
    result_message,
)

Message = Request | Notification | Response


def _decoded(data: bytes | str) -> Message | RPCError:
    """The message `data` decodes to, or the library's error; anything else fails the test."""
    try:
        return decode(data)
    except RPCError as exc:
        assert isinstance(exc, ParseError | InvalidRequestError), exc
        assert exc.message, "an error a peer reads must say what was wrong"
        request_id = getattr(exc, "request_id", None)
        assert request_id is None or type(request_id) in (str, int)
        return exc


def _written(message: Message) -> dict[str, Any]:
    """`message` as the codec's builders write it."""
    if isinstance(message, Request):
        return request_message(message.id, message.method, message.params)
    if isinstance(message, Notification):
        return notification_message(message.method, message.params)
    if message.error is not None:
        return error_message(message.id, message.error)
    assert message.result is not None
    return result_message(message.id, message.result)  # type: ignore[arg-type]


def _same(a: Message, b: Message) -> bool:
    return type(a) is type(b) and all(
        getattr(a, name) == getattr(b, name) and type(getattr(a, name)) is type(getattr(b, name))
        for name in type(a).__slots__
    )


def _round_trips(message: Message) -> None:
    again = decode(encode(_written(message)))
    assert _same(message, again), (message, again)


@given(st.binary(max_size=300))
@example(b"")
@example(b"\xff\xfe{}")
@example(b"[" * 5000 + b"]" * 5000)
@example(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":' + b"[" * 3000 + b"]" * 3000 + b"}")
@example(b'{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}')
@example(b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}')
@example(b'{"jsonrpc":"2.0","id":1,"result":{}}\x00')
def test_any_bytes_decode_to_a_message_or_our_error(data: bytes) -> None:
    decoded = _decoded(data)
    if not isinstance(decoded, RPCError):
        _round_trips(decoded)


@given(st.text(max_size=200))
@example("\ud800")
@example('{"jsonrpc":"2.0","method":"\udfff"}')
def test_any_text_decodes_to_a_message_or_our_error(text: str) -> None:
    decoded = _decoded(text)
    if not isinstance(decoded, RPCError):
        _round_trips(decoded)


@given(json_values())
def test_any_json_value_is_a_message_or_invalid_request(value: Any) -> None:
    decoded = _decoded(encode(value))
    if isinstance(decoded, RPCError):
        assert isinstance(decoded, InvalidRequestError), decoded
    else:
        _round_trips(decoded)


@given(near_miss_messages())
def test_near_miss_messages_are_classified_or_refused_with_their_reason(value: Any) -> None:
    try:
        message = classify(value)
    except InvalidRequestError as exc:
        assert exc.message.startswith("Invalid request: ")
        request_id = getattr(exc, "request_id", None)
        if request_id is not None:
            assert type(value) is dict and request_id == value.get("id")
        return
    assert type(value) is dict and value.get("jsonrpc") == "2.0"
    if isinstance(message, Request | Response) and message.id is not None:
        assert type(message.id) in (str, int)
    if isinstance(message, Request | Notification):
        assert type(message.method) is str and message.method
        assert message.params is None or type(message.params) is dict
    _round_trips(message)


@given(near_miss_messages())
def test_a_message_as_text_decodes_as_the_value_does(value: Any) -> None:
    """The wire form (orjson's bytes, or the standard library's text) changes nothing."""
    by_bytes, by_text = _decoded(encode(value)), _decoded(json.dumps(value))
    if isinstance(by_bytes, RPCError):
        assert type(by_text) is type(by_bytes)
    else:
        assert not isinstance(by_text, RPCError) and _same(by_bytes, by_text)


def test_encode_writes_no_line_break_whatever_the_strings_hold() -> None:
    """stdio and SSE framing rely on it: a message is one line."""
    data = encode({"jsonrpc": "2.0", "method": "x\ny\r\u2028", "params": {"a\n": "\n\r"}})
    assert b"\n" not in data and b"\r" not in data
    assert orjson.loads(data)["method"] == "x\ny\r\u2028"


def test_an_error_member_of_null_is_refused_not_read_as_a_success() -> None:
    """Found by the property above: `"error": null` passed as a response with neither member,
    which the connection took for an empty result, so a peer's null error answered a request
    of ours as if it had succeeded."""
    message = {"jsonrpc": "2.0", "id": "s-1", "error": None}
    try:
        classify(message)
    except InvalidRequestError as exc:
        assert '"error" must be an object' in exc.message
        assert getattr(exc, "request_id", None) == "s-1"
    else:
        raise AssertionError("a null error was taken for a response")
