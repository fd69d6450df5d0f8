"""Parameters on the wire as the OpenAPI specification's own style examples write them, and the
request an operation's checked arguments make.

The expected values are the rows of the specification's Style Examples table (OpenAPI 3.1.1,
section 4.8.12.4, and 3.0.4 alike), for a parameter named `color` holding "blue",
["blue", "black", "brown"] or {"R": 100, "G": 200, "B": 150}: literal text from outside this
code, not what the code computes."""

from __future__ import annotations

import pytest
from openapi_docs import document, operation

from mcpkit.openapi.documents import load_document
from mcpkit.openapi.inputs import inputs_of
from mcpkit.openapi.operations import operations_of
from mcpkit.openapi.options import OpenAPIOptions
from mcpkit.openapi.requests import build_request
from mcpkit.openapi.styles import cookie_pairs, header_value, path_value, query_pairs

STRING = "blue"
ARRAY = ["blue", "black", "brown"]
OBJECT = {"R": 100, "G": 200, "B": 150}

# (style, explode, string, array, object), as the table writes them.
PATH_ROWS = [
    ("matrix", False, ";color=blue", ";color=blue,black,brown", ";color=R,100,G,200,B,150"),
    ("matrix", True, ";color=blue", ";color=blue;color=black;color=brown", ";R=100;G=200;B=150"),
    ("label", False, ".blue", ".blue,black,brown", ".R,100,G,200,B,150"),
    ("label", True, ".blue", ".blue.black.brown", ".R=100.G=200.B=150"),
    ("simple", False, "blue", "blue,black,brown", "R,100,G,200,B,150"),
    ("simple", True, "blue", "blue,black,brown", "R=100,G=200,B=150"),
]
QUERY_ROWS = [
    ("form", False, "color=blue", "color=blue,black,brown", "color=R,100,G,200,B,150"),
    ("form", True, "color=blue", "color=blue&color=black&color=brown", "R=100&G=200&B=150"),
    ("spaceDelimited", False, None, "color=blue%20black%20brown",
     "color=R%20100%20G%20200%20B%20150"),
    ("pipeDelimited", False, None, "color=blue%7Cblack%7Cbrown",
     "color=R%7C100%7CG%7C200%7CB%7C150"),
    ("deepObject", True, None, None, "color%5BR%5D=100&color%5BG%5D=200&color%5BB%5D=150"),
]


@pytest.mark.parametrize(("style", "explode", "string", "array", "obj"), PATH_ROWS)
def test_path_parameters_are_written_as_the_style_examples_show(
        style: str, explode: bool, string: str, array: str, obj: str) -> None:
    assert path_value("color", STRING, style, explode) == string
    assert path_value("color", ARRAY, style, explode) == array
    assert path_value("color", OBJECT, style, explode) == obj


@pytest.mark.parametrize(("style", "explode", "string", "array", "obj"), QUERY_ROWS)
def test_query_parameters_are_written_as_the_style_examples_show(
        style: str, explode: bool, string: str | None, array: str | None, obj: str) -> None:
    if string is not None:
        assert "&".join(query_pairs("color", STRING, style, explode)) == string
    if array is not None:
        assert "&".join(query_pairs("color", ARRAY, style, explode)) == array
    assert "&".join(query_pairs("color", OBJECT, style, explode)) == obj


def test_a_delimiter_inside_a_value_is_encoded_so_it_is_never_read_as_one() -> None:
    assert query_pairs("q", ["a,b", "c&d=e"], "form", False) == ["q=a%2Cb,c%26d%3De"]
    assert path_value("id", "a/b c", "simple", False) == "a%2Fb%20c"
    assert query_pairs("q", "a/b", "form", True, allow_reserved=True) == ["q=a/b"]
    assert query_pairs("q", True, "form", True) == ["q=true"]
    assert query_pairs("q", 2.5, "form", True) == ["q=2.5"]


def test_header_and_cookie_values_are_written_and_a_line_break_is_refused() -> None:
    assert header_value("X-Color", ARRAY, False) == "blue,black,brown"
    assert header_value("X-Color", OBJECT, True) == "R=100,G=200,B=150"
    assert cookie_pairs("color", ARRAY, False) == ["color=blue,black,brown"]
    assert cookie_pairs("color", "a;b", True) == ["color=a%3Bb"]
    with pytest.raises(ValueError, match="header 'X-Color' holds a line break"):
        header_value("X-Color", "blue\r\nSet-Cookie: x", False)


def _request(op: dict[str, object], arguments: dict[str, object], path: str = "/things/{id}"):
    doc = load_document(document({path: {"post": op}}))
    (found,) = operations_of(doc, OpenAPIOptions())
    inputs = inputs_of(doc, found, OpenAPIOptions())
    inputs_schema = inputs.schema
    return inputs_schema, build_request("POST", path, inputs, arguments, "application/json")


def test_an_operations_arguments_go_to_the_path_query_headers_cookies_and_body() -> None:
    op = operation("make", parameters=[
        {"name": "id", "in": "path", "required": True, "schema": {"type": "array",
                                                                  "items": {"type": "integer"}},
         "style": "label", "explode": True},
        {"name": "id", "in": "query", "schema": {"type": "string"}},
        {"name": "filter", "in": "query", "style": "deepObject", "explode": True,
         "schema": {"type": "object"}},
        {"name": "X-Trace", "in": "header", "schema": {"type": "string"}},
        {"name": "session", "in": "cookie", "schema": {"type": "string"}},
        {"name": "where", "in": "query", "content": {"application/json": {
            "schema": {"type": "object"}}}},
    ], requestBody={"content": {"application/json": {"schema": {"type": "object"}}}})
    schema, sent = _request(op, {"id": [3, 4], "id__query": "x y", "filter": {"a": 1},
                                 "X-Trace": "t-1", "session": "s 1", "where": {"k": [1]},
                                 "body": {"name": "n"}})
    assert list(schema["properties"]) == ["id", "id__query", "filter", "where", "X-Trace",
                                          "session", "body"]
    assert schema["required"] == ["id"]
    assert sent.target == ("/things/.3.4?id=x%20y&filter%5Ba%5D=1&where=%7B%22k%22%3A%5B1%5D%7D")
    assert ("X-Trace", "t-1") in sent.headers and ("cookie", "session=s%201") in sent.headers
    assert ("content-type", "application/json") in sent.headers
    assert sent.content == b'{"name":"n"}'


def test_form_text_and_byte_bodies_are_sent_as_their_media_types_say() -> None:
    form = {"content": {"application/x-www-form-urlencoded": {"schema": {
        "type": "object", "properties": {"a": {"type": "string"},
                                         "b": {"type": "array", "items": {"type": "integer"}}}}}}}
    _, sent = _request(operation("f", requestBody=form), {"body": {"a": "x y", "b": [1, 2]}},
                       "/f")
    assert sent.content == b"a=x+y&b=1&b=2"
    text = {"content": {"text/plain": {"schema": {"type": "string"}}}}
    _, sent = _request(operation("t", requestBody=text), {"body": "héllo"}, "/t")
    assert sent.content == "héllo".encode() and (
        "content-type", "text/plain; charset=utf-8") in sent.headers
    octets = {"required": True, "content": {"application/octet-stream": {}}}
    schema, sent = _request(operation("o", requestBody=octets), {"body": "AAEC/w=="}, "/o")
    assert schema["properties"]["body"]["contentEncoding"] == "base64"
    assert sent.content == b"\x00\x01\x02\xff"
    with pytest.raises(ValueError, match="'body' is not base64 text"):
        _request(operation("o", requestBody=octets), {"body": "not base64!"}, "/o")


def test_credential_and_managed_headers_are_never_arguments_unless_configured() -> None:
    doc = load_document(document(
        {"/a": {"get": operation("a", parameters=[
            {"name": "Authorization", "in": "header", "schema": {"type": "string"}},
            {"name": "Content-Type", "in": "header", "schema": {"type": "string"}},
            {"name": "Host", "in": "header", "schema": {"type": "string"}},
            {"name": "api_key", "in": "query", "schema": {"type": "string"}},
            {"name": "sid", "in": "cookie", "schema": {"type": "string"}},
            {"name": "X-Kept", "in": "header", "schema": {"type": "string"}},
        ])}},
        securitySchemes={"q": {"type": "apiKey", "in": "query", "name": "api_key"},
                         "c": {"type": "apiKey", "in": "cookie", "name": "sid"}}))
    (found,) = operations_of(doc, OpenAPIOptions())
    plain = inputs_of(doc, found, OpenAPIOptions())
    assert list(plain.schema["properties"]) == ["X-Kept"]
    allowed = inputs_of(doc, found, OpenAPIOptions(client_credentials=["api_key",
                                                                       "authorization"]))
    assert list(allowed.schema["properties"]) == ["api_key", "Authorization", "X-Kept"]
