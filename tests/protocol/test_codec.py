"""JSON-RPC decoding: every rejection rule, and ids echoed where they can be read."""

from __future__ import annotations

import pytest

from mcpkit.errors import InvalidParamsError, InvalidRequestError, ParseError
from mcpkit.protocol.codec import MAX_NESTING, Notification, Request, Response, decode, encode


def test_request_is_decoded_with_id_method_and_params() -> None:
    msg = decode(b'{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"a":1}}')
    assert isinstance(msg, Request)
    assert (msg.id, msg.method, msg.params) == (7, "tools/list", {"a": 1})


def test_string_ids_are_kept_as_strings() -> None:
    msg = decode('{"jsonrpc":"2.0","id":"abc","method":"x"}')
    assert isinstance(msg, Request) and msg.id == "abc"


def test_message_without_id_is_a_notification() -> None:
    msg = decode(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}')
    assert isinstance(msg, Notification) and msg.params == {"requestId": 1}


def test_response_with_result_and_response_with_error() -> None:
    ok = decode(b'{"jsonrpc":"2.0","id":1,"result":{}}')
    bad = decode(b'{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"x"}}')
    assert isinstance(ok, Response) and ok.result == {}
    assert isinstance(bad, Response) and bad.error == {"code": -32601, "message": "x"}


@pytest.mark.parametrize("data", [b"{", b"not json", b'{"a":1', b"\xff\xfe"])
def test_malformed_json_is_a_parse_error(data: bytes) -> None:
    with pytest.raises(ParseError) as info:
        decode(data)
    assert info.value.code == -32700


@pytest.mark.parametrize(
    ("data", "request_id", "words"),
    [
        (b'{"id":1,"method":"x"}', 1, "jsonrpc"),
        (b'{"jsonrpc":"1.0","id":"a","method":"x"}', "a", "jsonrpc"),
        (b'{"jsonrpc":"2.0","id":null,"method":"x"}', None, "never null"),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"x"}', None, "string or an integer"),
        (b'{"jsonrpc":"2.0","id":true,"method":"x"}', None, "string or an integer"),
        (b'{"jsonrpc":"2.0","id":3,"method":5}', 3, "method"),
        (b'{"jsonrpc":"2.0","id":4,"method":""}', 4, "method"),
        (b'{"jsonrpc":"2.0","id":5,"method":"x","params":[1]}', 5, "params"),
        (b'[{"jsonrpc":"2.0","id":1,"method":"x"}]', None, "batches"),
        (b'"hello"', None, "object"),
        (b'{"jsonrpc":"2.0","id":6}', 6, "method"),
        (b'{"jsonrpc":"2.0","id":7,"result":{},"error":{"code":1,"message":""}}', 7, "exactly one"),
        (b'{"jsonrpc":"2.0","id":8,"error":{"message":"no code"}}', 8, "integer"),
    ],
)
def test_invalid_requests_keep_the_id_when_it_can_be_read(
    data: bytes, request_id: object, words: str
) -> None:
    with pytest.raises(InvalidRequestError) as info:
        decode(data)
    assert info.value.code == -32600
    assert info.value.request_id == request_id  # type: ignore[attr-defined]
    assert words in info.value.message


def test_encoding_is_compact_and_has_no_newline() -> None:
    data = encode({"jsonrpc": "2.0", "id": 1, "result": {"text": "a\nb"}})
    assert b"\n" not in data
    assert data == b'{"jsonrpc":"2.0","id":1,"result":{"text":"a\\nb"}}'


def _nested(levels: int, method: str | None = "tools/call") -> bytes:
    """A message whose deepest object is `levels` levels down (the message is level 1)."""
    value = b'{"a":' * (levels - 3) + b"{}" + b"}" * (levels - 3)
    head = b'"id":9,"method":"%s"' % method.encode() if method else b'"method":"notifications/x"'
    return b'{"jsonrpc":"2.0",%s,"params":{"arguments":%s}}' % (head, value)


def test_a_request_nested_at_the_bound_is_decoded() -> None:
    msg = decode(_nested(MAX_NESTING))
    assert isinstance(msg, Request)
    assert encode(msg.params)  # what is taken can be encoded again


@pytest.mark.parametrize("levels", [MAX_NESTING + 1, 300, 1000])
def test_a_request_nested_past_the_bound_is_invalid_params_naming_the_method_and_the_bound(
    levels: int,
) -> None:
    # The decoder takes 1024 levels; orjson encodes at most 254 and a recursive walk stops
    # near 1000, so a deeper value could be neither stored, sent back nor checked.
    with pytest.raises(InvalidParamsError) as info:
        decode(_nested(levels))
    assert info.value.code == -32602
    assert info.value.request_id == 9  # type: ignore[attr-defined]
    assert info.value.message == (
        "tools/call: params nested too deeply; nest objects and arrays at most 250 levels "
        "deep (the most this side can keep and send back)")


def test_a_notification_nested_past_the_bound_is_an_invalid_request() -> None:
    with pytest.raises(InvalidRequestError, match="the message is nested too deeply"):
        decode(_nested(MAX_NESTING + 1, method=None))


@pytest.mark.parametrize("data", [
    b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":[' + b",".join([b"{}"] * 5000) + b"]}}",
    ('{"jsonrpc":"2.0","id":1,"method":"x","params":{"t":"' + "{[" * 5000 + '"}}'),
    memoryview(b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":[' + b"[]," * 600 + b"0]}}"),
])
def test_many_brackets_side_by_side_or_in_strings_are_not_nesting(
    data: bytes | str | memoryview,
) -> None:
    assert isinstance(decode(data), Request)
