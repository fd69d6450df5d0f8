"""The one walk of a JSON Schema's structure (mcpkit.protocol.schema_walk), and the server's and
the client's use of it with their own limits and words."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.client.tools import vet_tool
from mcpkit.protocol.schema_walk import (
    MISSING,
    Limits,
    Wording,
    check_schema_structure,
    resolve_pointer,
)
from mcpkit.server.raw_refs import check_structure

WORDS = Wording(
    too_many="{where}: more than {max_nodes}",
    too_deep="{where}: deeper than {max_depth}",
    outside="{where}: {kind} {keyword} {ref} at {at}",
    no_target="{where}: no target for {keyword} {ref} at {at}",
    no_anchor="{where}: no anchor for {keyword} {ref} at {at}",
)
ROOMY = Limits(max_nodes=1000, max_depth=50)
COSTED = Limits(max_nodes=1000, max_depth=50, max_fan_out=100, max_expanded=10_000)


def refusal(schema: dict[str, Any], limits: Limits = ROOMY) -> str:
    with pytest.raises(ValueError) as caught:
        check_schema_structure(schema, "S", limits, WORDS)
    return str(caught.value)


def accepted(schema: dict[str, Any], limits: Limits = ROOMY) -> bool:
    check_schema_structure(schema, "S", limits, WORDS)
    return True


def tool(schema: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"name": "t", "inputSchema": {"type": "object", **schema}, **extra}


# -- pointers -----------------------------------------------------------------------------------


def test_a_pointer_follows_escapes_percent_encoding_and_array_indexes() -> None:
    document = {"a/b": {"c~d": [10, {"e f": 20}]}}
    assert resolve_pointer(document, "") is document
    assert resolve_pointer(document, "/a~1b/c~0d/0") == 10
    assert resolve_pointer(document, "/a~1b/c~0d/1/e%20f") == 20


@pytest.mark.parametrize("pointer", ["/nope", "/a~1b/c~0d/2", "/a~1b/c~0d/x", "/a~1b/c~0d/0/y"])
def test_a_pointer_that_names_nothing_is_missing(pointer: str) -> None:
    assert resolve_pointer({"a/b": {"c~d": [10]}}, pointer) is MISSING


# -- what the walk visits -----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["default", "enum", "const", "examples"])
def test_a_property_named_like_a_data_keyword_is_still_a_subschema(name: str) -> None:
    schema = {"properties": {name: {"$ref": "https://evil.example/s.json"}}}
    assert refusal(schema) == (
        f"S: remote $ref https://evil.example/s.json at /properties/{name}/$ref"
    )
    assert accepted({"properties": {name: {"$anchor": "here"}}, "$ref": "#here"})


def test_the_value_of_a_data_keyword_is_data() -> None:
    assert accepted({"default": {"$ref": "https://example.com/not-a-ref"}, "enum": [{"$ref": 1}]})


def test_a_ref_under_an_unknown_keyword_is_checked_since_a_pointer_may_lead_there() -> None:
    schema = {"$ref": "#/x-extra", "x-extra": {"$ref": "http://127.0.0.1:9/s.json"}}
    assert refusal(schema) == "S: remote $ref http://127.0.0.1:9/s.json at /x-extra/$ref"


def test_a_property_named_defs_is_evaluated_so_a_loop_through_it_is_found() -> None:
    schema = {"dependentSchemas": {"$defs": {"$ref": "#"}}}
    assert accepted(schema)
    assert "leads back to where it started" in refusal(schema, COSTED)


def test_boolean_subschemas_are_walked_like_any_value() -> None:
    assert accepted({"anyOf": [True, {"items": [False]}], "not": False})


# -- references ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"$ref": "other.json#/x"}, "S: external $ref other.json#/x at /$ref"),
        ({"items": {"$dynamicRef": "//example.com/x"}}, "S: remote $dynamicRef //example.com/x"),
        ({"not": {"$ref": "#/$defs/nope"}}, "S: no target for $ref #/$defs/nope at /not/$ref"),
        ({"anyOf": [{"$dynamicRef": "#node"}]}, "S: no anchor for $dynamicRef #node at /anyOf/0"),
        (
            {"$defs": {"i": {"$id": "https://e.example/i.json", "$ref": "#/nope"}}},
            "S: no target for $ref #/nope at /$defs/i/$ref",
        ),
    ],
    ids=["external", "remote-dynamic", "dangling-pointer", "dangling-dynamic", "in-embedded"],
)
def test_a_reference_leaving_the_document_or_naming_nothing_is_refused(
    schema: dict[str, Any], expected: str
) -> None:
    assert refusal(schema).startswith(expected)


@pytest.mark.parametrize(
    "schema",
    [
        {"$defs": {"a b": {}}, "$ref": "#/$defs/a%20b"},
        {"definitions": {"n": {"$id": "#num"}}, "$ref": "#num"},
        {"$defs": {"n": {"$dynamicAnchor": "node"}}, "$dynamicRef": "#node"},
        {"$id": "https://e.example/r.json", "$defs": {"i": {"$id": "i.json"}}, "$ref": "i.json"},
        {"$id": "https://e.example/r.json", "$defs": {"a": {}}, "$ref": "r.json#/$defs/a"},
    ],
    ids=["percent-encoded", "draft-07-anchor", "dynamic-anchor", "embedded", "absolute-self"],
)
def test_same_document_references_are_accepted(schema: dict[str, Any]) -> None:
    assert accepted(schema)


# -- limits and words ---------------------------------------------------------------------------


def test_each_limit_is_reported_in_the_callers_words() -> None:
    assert refusal({"allOf": [{}, {}, {}]}, Limits(max_nodes=4, max_depth=9)) == "S: more than 4"
    assert refusal({"not": {"not": {"not": {}}}}, Limits(max_nodes=99, max_depth=2)) == (
        "S: deeper than 2"
    )


def test_the_cost_of_following_references_is_checked_only_when_limits_ask() -> None:
    defs = {f"d{i}": {"anyOf": [{"$ref": f"#/$defs/d{i + 1}"}] * 2} for i in range(10)}
    schema = {"$defs": {**defs, "d10": {}}, "$ref": "#/$defs/d0"}
    assert accepted(schema)
    assert "more than 100 subschemas apply to one value" in refusal(schema, COSTED)


def test_the_server_and_the_client_refuse_the_same_ref_each_in_its_own_words() -> None:
    schema = {"type": "object", "properties": {"a": {"$ref": "https://evil.example/s"}}}
    with pytest.raises(ValueError) as caught:
        check_structure(schema, "function 'f': input schema")
    assert str(caught.value).startswith(
        "function 'f': input schema: $ref 'https://evil.example/s' at /properties/a/$ref: remote "
        "$ref not allowed"
    )
    assert vet_tool(tool(schema)) == (
        "inputSchema: $ref 'https://evil.example/s' at /properties/a/$ref points outside the "
        "schema; remote references are never fetched, so the schema cannot be used"
    )


def test_a_tool_whose_output_schema_leads_through_an_unknown_keyword_to_a_url_is_rejected() -> None:
    output = {"$ref": "#/x-extra", "x-extra": {"$ref": "http://127.0.0.1:9/s.json"}}
    reason = vet_tool(tool({}, outputSchema=output))
    assert reason is not None and "outputSchema" in reason and "points outside" in reason


def test_a_tool_with_boolean_subschemas_is_kept() -> None:
    assert vet_tool(tool({"properties": {"a": True, "b": {"anyOf": [False, {}]}}})) is None
