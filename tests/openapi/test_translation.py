"""OpenAPI Schema Objects as JSON Schema 2020-12: each 3.0 keyword translated as the table of
`mcpkit.openapi.dialect` says, 3.1 kept, `$ref`s gathered in `$defs`, `readOnly` and
`writeOnly` by direction; and the schemas published are checked by an independent validator
(jsonschema's 2020-12 metaschema) and by the official MCP schema."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from helpers.wire import MODERN, check
from openapi_docs import document, json_response, one_get, operation

from mcpkit import Server
from mcpkit.openapi import OpenAPIOptions, Rule

BASE = "http://127.0.0.1:1"


def output_schema(schema: Any, version: str = "3.0.3", **components: Any) -> dict[str, Any]:
    server = Server.from_openapi(one_get(schema, version=version, **components), base_url=BASE)
    tool = server.tools["getA"].definition
    check(MODERN, "Tool", tool)
    jsonschema.Draft202012Validator.check_schema(tool["outputSchema"])
    return tool["outputSchema"]  # type: ignore[no-any-return]


def result_of(schema: Any, version: str = "3.0.3") -> Any:
    """The translation of a non-object schema: what the output wraps as `result`."""
    return output_schema(schema, version)["properties"]["result"]


@pytest.mark.parametrize(("written", "translated"), [
    ({"type": "string", "nullable": True}, {"type": ["string", "null"]}),
    ({"type": "string", "enum": ["a", "b"], "nullable": True},
     {"type": ["string", "null"], "enum": ["a", "b", None]}),
    ({"type": "integer", "minimum": 1, "exclusiveMinimum": True},
     {"type": "integer", "exclusiveMinimum": 1}),
    ({"type": "integer", "maximum": 9, "exclusiveMaximum": True},
     {"type": "integer", "exclusiveMaximum": 9}),
    ({"type": "integer", "minimum": 1, "exclusiveMinimum": False},
     {"type": "integer", "minimum": 1}),
    ({"type": "string", "example": "x"}, {"type": "string", "examples": ["x"]}),
    ({"type": "string", "x-internal": {"a": 1}, "xml": {"name": "s"},
      "externalDocs": {"url": "https://example.com"}}, {"type": "string"}),
    ({"allOf": [{"type": "integer"}], "nullable": True, "description": "d"},
     {"anyOf": [{"allOf": [{"type": "integer"}]}, {"type": "null"}], "description": "d"}),
    ({"type": "array", "items": {"type": "number", "nullable": True}},
     {"type": "array", "items": {"type": ["number", "null"]}}),
])
def test_openapi_30_keywords_become_their_2020_12_forms(written: Any, translated: Any) -> None:
    assert result_of(written) == translated


def test_keywords_beside_a_30_ref_are_dropped_but_its_description_and_31_keeps_them() -> None:
    pet = {"type": "integer"}
    schema = {"type": "array", "items": {"$ref": "#/components/schemas/Pet",
                                         "description": "one", "maximum": 3}}
    in_30 = output_schema(schema, schemas={"Pet": pet})
    assert in_30["properties"]["result"]["items"] == {"$ref": "#/$defs/Pet", "description": "one"}
    in_31 = output_schema(schema, version="3.1.0", schemas={"Pet": pet})
    assert in_31["properties"]["result"]["items"] == {
        "$ref": "#/$defs/Pet", "description": "one", "maximum": 3}
    assert in_31["$defs"] == {"Pet": {"type": "integer"}}


def test_31_schemas_are_kept_as_2020_12_with_only_openapis_own_keywords_dropped() -> None:
    schema = {"type": ["string", "null"], "examples": ["a"], "const": "a",
              "discriminator": {"propertyName": "kind"}, "$comment": "c",
              "contentMediaType": "text/plain"}
    assert result_of(schema, "3.1.0") == {"type": ["string", "null"], "examples": ["a"],
                                          "const": "a", "contentMediaType": "text/plain"}


def test_every_schema_a_ref_names_becomes_one_def_and_clashing_names_are_numbered() -> None:
    doc = document({"/a": {"get": operation("getA", responses=json_response({
        "type": "object", "properties": {
            "one": {"$ref": "#/components/schemas/Item"},
            "two": {"$ref": "#/components/schemas/Item"},
            "deep": {"$ref": "#/components/schemas/Holder/properties/item"}}}))}},
        schemas={"Item": {"type": "string"},
                 "Holder": {"type": "object", "properties": {"item": {"type": "integer"}}}})
    schema = Server.from_openapi(doc, base_url=BASE).tools["getA"].definition["outputSchema"]
    assert schema["properties"]["one"] == schema["properties"]["two"] == {"$ref": "#/$defs/Item"}
    assert schema["properties"]["deep"] == {"$ref": "#/$defs/item"}
    assert schema["$defs"] == {"Item": {"type": "string"}, "item": {"type": "integer"}}


def test_read_only_leaves_the_request_and_write_only_the_responses_required() -> None:
    thing = {"type": "object", "properties": {
        "id": {"type": "integer", "readOnly": True},
        "secret": {"type": "string", "writeOnly": True},
        "name": {"type": "string"}}, "required": ["id", "secret", "name"]}
    doc = document({"/t": {"post": operation("make", requestBody={"required": True, "content": {
        "application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}},
        responses=json_response({"$ref": "#/components/schemas/Thing"}))}},
        schemas={"Thing": thing})
    definition = Server.from_openapi(doc, base_url=BASE).tools["make"].definition
    sent = definition["inputSchema"]["$defs"]["Thing"]
    assert list(sent["properties"]) == ["secret", "name"] and sent["required"] == ["secret",
                                                                                   "name"]
    answered = definition["outputSchema"]
    assert list(answered["properties"]) == ["id", "secret", "name"]
    assert answered["required"] == ["id", "name"]


def test_a_non_object_or_several_2xx_schemas_are_wrapped_and_a_2xx_without_json_has_none(
        ) -> None:
    several = one_get({"type": "object"})
    several["paths"]["/a"]["get"]["responses"].update(
        json_response({"type": "array"}, "201"))
    schema = Server.from_openapi(several, base_url=BASE).tools["getA"].definition["outputSchema"]
    assert schema == {"type": "object", "required": ["result"], "properties": {
        "result": {"anyOf": [{"type": "object"}, {"type": "array"}]}}}
    no_content = one_get({"type": "object"})
    no_content["paths"]["/a"]["get"]["responses"]["204"] = {"description": "nothing"}
    tool = Server.from_openapi(no_content, base_url=BASE).tools["getA"].definition
    assert "outputSchema" not in tool


def test_what_cannot_be_expressed_leaves_its_operation_out_saying_why() -> None:
    doc = document({
        "/up": {"post": operation("upload", requestBody={"required": True, "content": {
            "multipart/form-data": {"schema": {"type": "object"}}}})},
        "/csv": {"get": operation("csv", parameters=[{"name": "rows", "in": "query", "content": {
            "text/csv": {"schema": {"type": "string"}}}}])},
        "/ok": {"get": operation("fine")},
    })
    from mcpkit.openapi import add_openapi

    server = Server("t")
    bridged = add_openapi(server, doc, base_url=BASE)
    assert bridged.tools == ["fine"] and list(server.tools) == ["fine"]
    assert bridged.skipped == [
        ("POST /up (upload)", "its request body is sent only as multipart/form-data, which is "
         "not sent here (JSON, forms, text and bytes are)"),
        ("GET /csv (csv)", "its parameter 'rows' is described as text/csv, which is not sent "
         "here (JSON is)"),
    ]
    assert bridged.summary() == "the OpenAPI document: 1 tools, 2 left out"


def test_every_published_schema_of_a_wide_document_is_valid_and_compiles() -> None:
    kinds: list[Any] = [
        {"type": "string", "format": "date-time"}, {"type": "integer", "nullable": True},
        {"type": "array", "items": {"$ref": "#/components/schemas/Obj"}},
        {"oneOf": [{"type": "string"}, {"type": "number"}]},
        {"type": "object", "additionalProperties": {"type": "boolean"}},
        {"$ref": "#/components/schemas/Obj"}, {"not": {"type": "string"}},
    ]
    paths = {f"/k{i}/{{id}}": {"put": operation(
        f"k{i}", parameters=[{"name": "id", "in": "path", "required": True, "schema": kind},
                             {"name": "q", "in": "query", "schema": kind}],
        requestBody={"content": {"application/json": {"schema": kind}}},
        responses=json_response(kind))} for i, kind in enumerate(kinds)}
    obj = {"type": "object", "properties": {"child": {"$ref": "#/components/schemas/Obj"},
                                            "n": {"type": "number", "minimum": 0,
                                                  "exclusiveMinimum": True}}}
    server = Server.from_openapi(document(paths, version="3.0.3", schemas={"Obj": obj}),
                                 base_url=BASE, options=OpenAPIOptions(rules=[Rule("tool")]))
    assert len(server.tools) == len(kinds)
    for tool in server.tools.values():
        check(MODERN, "Tool", tool.definition)
        jsonschema.Draft202012Validator.check_schema(tool.definition["inputSchema"])
        if "outputSchema" in tool.definition:
            jsonschema.Draft202012Validator.check_schema(tool.definition["outputSchema"])
