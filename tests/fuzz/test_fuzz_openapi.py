"""OpenAPI documents as an API's authors write them, careless or hostile: operations with and
without ids (repeated ones too), parameters in every location and style, request bodies of
any media type, responses of any status, schemas of both dialects with `$ref`s among them
(loops, references to nothing or out of the document), and values of the wrong type anywhere.

What must hold, from docs/openapi.md and docs/security.md (not from the code):

- reading the document and registering its operations either fails with one `OpenAPIError`,
  a single line, or gives a server; never another exception (a `RecursionError`, a `KeyError`);
- every tool published is valid against the official MCP schema, and its schemas against
  JSON Schema 2020-12's own metaschema (`jsonschema`, which mcpkit did not write);
- a call is answered with a result, never a JSON-RPC error and never a logged traceback; and
  it agrees with the stock 2020-12 validator of the tool's input schema: arguments it refuses
  never reach the API, and arguments it accepts do, unless mcpkit says why it did not send
  them (a header cannot carry a line break, bytes must be base64) or they were too costly to
  check.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from typing import Any

import jsonschema
import pytest
from checked_connection import Tracebacks
from helpers.wire import MODERN, check, check_server_message, meta
from hypothesis import event, given
from hypothesis import strategies as st
from peer_values import json_values

from mcpkit import Server
from mcpkit.openapi import OpenAPIError, OpenAPIOptions, Rule, add_openapi, asgi_client
from mcpkit.protocol.codec import Request

NAMES = ["a", "b", "Pet", "x-y", "id"]
"""Component names (the specification allows letters, digits, `.`, `_` and `-`)."""
PROPERTIES = [*NAMES, "with space", "~1"]
GOOD_REFS = st.sampled_from(NAMES).map(lambda n: f"#/components/schemas/{n}")
BAD_REFS = st.sampled_from(["#/components/schemas/missing", "#/paths", "other.yaml#/X",
                            "http://127.0.0.1:1/s.json", "#", "#/components/parameters/p",
                            "#x"])
STYLES = {"path": ["simple", "label", "matrix"], "header": ["simple"], "cookie": ["form"],
          "query": ["form", "spaceDelimited", "pipeDelimited", "deepObject"]}
MEDIA = ["application/json", "application/problem+json", "text/plain",
         "application/x-www-form-urlencoded", "multipart/form-data", "application/octet-stream",
         "image/png", "*/*"]


@functools.cache
def schemas(version: str) -> st.SearchStrategy[Any]:
    """Schemas of the document's dialect, referring to the components it defines. Built once
    per dialect: Hypothesis validates a strategy the first time it draws from it, and a
    recursive one rebuilt at each draw cost most of the test's time."""
    kinds = ["string", "integer", "number", "boolean", "array", "object"]
    if version == "3.1":
        kinds.append("null")
    leaf = st.one_of(
        st.builds(lambda t: {"type": t}, st.sampled_from(kinds)),
        st.builds(lambda r: {"$ref": r}, GOOD_REFS),
        st.builds(lambda e: {"enum": e}, st.lists(st.sampled_from(["a", "b", 1, True]),
                                                  min_size=1, max_size=3, unique=True)),
        st.fixed_dictionaries({"type": st.just("integer")}, optional={
            "minimum": st.integers(-5, 5), "maximum": st.integers(5, 9),
            "exclusiveMinimum": st.booleans() if version == "3.0" else st.integers(-5, 5),
            "readOnly": st.booleans(), "example": st.integers(0, 3),
            **({"nullable": st.booleans()} if version == "3.0" else {})}),
        st.fixed_dictionaries({"type": st.just("string")}, optional={
            "format": st.sampled_from(["binary", "date-time", "byte", "odd"]),
            "maxLength": st.integers(0, 3), "writeOnly": st.booleans(),
            "pattern": st.sampled_from(["^a", "b$"])}),
    )
    return st.recursive(leaf, lambda inner: st.one_of(
        st.builds(lambda p, r: {"type": "object", "properties": p, **(
                  {"required": r} if r else {})},
                  st.dictionaries(st.sampled_from(PROPERTIES), inner, max_size=3),
                  st.lists(st.sampled_from(PROPERTIES), max_size=2, unique=True)),
        st.builds(lambda i: {"type": "array", "items": i}, inner),
        st.builds(lambda k, xs: {k: xs}, st.sampled_from(["allOf", "anyOf", "oneOf"]),
                  st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda i: {"not": i}, inner),
    ), max_leaves=6)


@st.composite
def parameter(draw: st.DrawFn, version: str, location: str, name: str) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "in": location}
    if location == "path" or draw(st.booleans()):
        out["required"] = True
    if draw(st.integers(0, 5)) == 0:
        out["content"] = {"application/json": {"schema": draw(schemas(version))}}
        return out
    out["schema"] = draw(schemas(version))
    if draw(st.booleans()):
        out["style"] = draw(st.sampled_from(STYLES[location]))
        out["explode"] = draw(st.booleans())
    return out


@functools.cache
def contents(version: str) -> st.SearchStrategy[dict[str, Any]]:
    """A request body's or a response's `content`: media types, each with a schema or none."""
    return st.dictionaries(st.sampled_from(MEDIA), st.fixed_dictionaries(
        {}, optional={"schema": schemas(version)}), max_size=2)


@st.composite
def operations(draw: st.DrawFn, version: str, path_names: list[str], index: int) -> Any:
    content = contents(version)
    op: dict[str, Any] = {"responses": draw(st.dictionaries(
        st.sampled_from(["200", "201", "204", "2XX", "404", "default"]),
        st.fixed_dictionaries({"description": st.just("r")}, optional={"content": content}),
        min_size=1, max_size=3))}
    if draw(st.integers(0, 3)):
        op["operationId"] = draw(st.sampled_from([f"op{index}", f"get pet {index}!"]))
    params = [draw(parameter(version, "path", name)) for name in path_names]
    for location, name in draw(st.lists(st.tuples(
            st.sampled_from(["query", "header", "cookie"]),
            st.sampled_from(["id", "q", "X-Trace", "Authorization", "body", "k"])),
            max_size=3, unique=True)):
        params.append(draw(parameter(version, location, name)))
    if params:
        op["parameters"] = params
    if draw(st.booleans()):
        op["requestBody"] = {"content": draw(content), "required": draw(st.booleans())}
    op["tags"] = draw(st.lists(st.sampled_from(["a", "b"]), max_size=2, unique=True))
    return op


PATHS = {"/a": [], "/a/{id}": ["id"], "/b/{id}/c/{k}": ["id", "k"], "/{k}": ["k"]}


def _spots(node: Any) -> list[tuple[Any, Any]]:
    """Every (container, key) of the document, for a mutation to land on."""
    found: list[tuple[Any, Any]] = []
    todo = [node]
    while todo:
        item = todo.pop()
        pairs = item.items() if isinstance(item, dict) else enumerate(item) if isinstance(
            item, list) else ()
        for key, value in pairs:
            found.append((item, key))
            todo.append(value)
    return found


@st.composite
def documents(draw: st.DrawFn) -> Any:
    """Documents valid most of the time, and one hostile change away from it the rest."""
    version = draw(st.sampled_from(["3.0", "3.1"]))
    paths: dict[str, Any] = {}
    index = 0
    for path in draw(st.lists(st.sampled_from(sorted(PATHS)), min_size=1, max_size=3,
                              unique=True)):
        methods = draw(st.lists(st.sampled_from(["get", "post", "put", "delete"]),
                                min_size=1, max_size=2, unique=True))
        item = {}
        for method in methods:
            index += 1
            item[method] = draw(operations(version, PATHS[path], index))
        paths[path] = item
    doc: dict[str, Any] = {
        "openapi": f"{version}.{draw(st.sampled_from(['0', '3']))}",
        "info": {"title": "Fuzzed", "version": "1"}, "paths": paths,
        "components": {"schemas": {name: draw(schemas(version)) for name in NAMES}}}
    if draw(st.integers(0, 3)) == 0:
        spots = _spots(doc)[len(doc):]  # anywhere below the top level
        container, key = draw(st.sampled_from(spots))
        container[key] = draw(st.one_of(json_values(3), BAD_REFS.map(lambda r: {"$ref": r}),
                                        st.just({"$ref": "#/components/schemas/a"})))
    return doc


class API:
    """The API the fuzzed documents describe: it answers whatever it was told to, and counts."""

    def __init__(self, status: int, body: bytes, content_type: bytes) -> None:
        self.hits = 0
        self.answer = (status, body, content_type)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        self.hits += 1
        status, body, content_type = self.answer
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", content_type)]})
        await send({"type": "http.response.body", "body": body})


ANSWERS = st.tuples(st.sampled_from([200, 201, 204, 404, 500]),
                    st.sampled_from([b"", b"{}", b"[1]", b'{"id": 1}', b"\xff\x00", b"null"]),
                    st.sampled_from([b"application/json", b"text/plain", b"image/png", b""]))
REASONS = ("Invalid arguments for tool", "too costly to check")


async def _call(server: Server, name: str, arguments: Any) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments, "_meta": meta()}
    reply = await server.handle(Request(1, "tools/call", params))
    check_server_message(MODERN, reply, "tools/call")
    return reply


@given(documents(), st.lists(st.dictionaries(st.sampled_from(["id", "q", "X-Trace", "body", "k",
                                                               "other"]), json_values(4),
                                             max_size=4), max_size=3), ANSWERS, st.booleans())
def test_any_document_is_refused_in_one_line_or_served_as_its_schemas_say(
        doc: Any, argument_sets: list[dict[str, Any]], answer: tuple[int, bytes, bytes],
        as_resources: bool) -> None:
    api = API(*answer)
    server = Server("fuzzed")
    options = OpenAPIOptions(rules=[Rule("resource", methods=["GET"])] if as_resources else [])
    try:
        add_openapi(server, doc, client=asgi_client(api), options=options)
    except OpenAPIError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("the OpenAPI document: "), exc
        event(f"refused: {str(exc).split(': ')[1][:40]}")
        return
    event(f"served: {len(server.tools)} tools, {len(server.templates)} templates")
    tracebacks = Tracebacks()
    logging.getLogger("mcpkit").addHandler(tracebacks)
    try:
        for tool in server.tools.values():
            definition = tool.definition
            check(MODERN, "Tool", definition)
            validator = jsonschema.Draft202012Validator(definition["inputSchema"])
            validator.check_schema(definition["inputSchema"])
            if "outputSchema" in definition:
                validator.check_schema(definition["outputSchema"])
            for arguments in [{}, *argument_sets]:
                before = api.hits
                reply = asyncio.run(_call(server, tool.name, arguments))
                assert "result" in reply, f"a call was answered with an error: {reply}"
                text = reply["result"]["content"][0].get("text", "")
                if not validator.is_valid(arguments):
                    assert api.hits == before, (tool.name, arguments, text)
                    assert reply["result"].get("isError") is True
                    assert text.startswith("Invalid arguments for tool"), text
                elif api.hits == before:
                    assert any(reason in text for reason in REASONS), (arguments, text)
        for template in server.templates:
            check(MODERN, "ResourceTemplate", template.definition)
        for resource in server.resources.values():
            check(MODERN, "Resource", resource.definition)
    finally:
        logging.getLogger("mcpkit").removeHandler(tracebacks)
    assert not tracebacks.seen, tracebacks.seen


def test_a_malformed_keyword_behind_a_reference_is_refused_in_one_line() -> None:
    """Found by the fuzz test above: `"allOf": null` reached through a `$ref` broke the
    document checker's own walk (a KeyError) instead of being reported."""
    doc = {"openapi": "3.1.0", "info": {"title": "t", "version": "1"},
           "paths": {"/a": {"get": {"responses": {"200": {"description": "r"}}}}},
           "components": {"schemas": {
               "x": {"allOf": [{"allOf": [{"$ref": "#/components/schemas/id"}]}]},
               "id": {"allOf": None}}}}
    with pytest.raises(OpenAPIError) as refused:
        add_openapi(Server("t"), doc, client=asgi_client(API(200, b"", b"")))
    assert "\n" not in str(refused.value)
    assert str(refused.value) == ("the OpenAPI document: not a valid OpenAPI 3.1 document: a "
                                  "schema it refers to is malformed (KeyError: 'allOf')")
