"""JSON-RPC decoding: every rejection rule, and ids echoed where they can be read."""

from __future__ import annotations

import pytest

from mcpkit.errors import InvalidRequestError, ParseError
from mcpkit.protocol.codec import Notification, Request, Response, decode, encode


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
