"""The one walk of a JSON Schema's structure (mcpkit.schema.walk), and the server's and
the client's use of it with their own limits and words."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.child_memory import traced

from mcpkit.client.tools import vet_tool
from mcpkit.schema import pointers as schema_pointers
from mcpkit.schema import walk as schema_walk
from mcpkit.schema import walked as schema_walked
from mcpkit.schema.bounds import check_structure
from mcpkit.schema.pointers import MISSING, resolve_pointer
from mcpkit.schema.walk import check_schema_structure
from mcpkit.schema.walked import Limits, Wording

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


# -- adversarial schemas: the walk's own cost ---------------------------------------------------


def peak_memory(schema: str, limits: Limits = COSTED) -> int:
    """Bytes allocated at the peak of one check of the schema the expression `schema` builds
    (the schema itself excluded), in an interpreter of its own (tests/helpers/child_memory.py)."""
    return traced(f"""
        from mcpkit.schema.walk import check_schema_structure
        from mcpkit.schema.walked import Limits, Wording
        schema = {schema}

        def work():
            try:
                check_schema_structure(schema, "S", {limits!r}, {WORDS!r})
            except ValueError:
                pass
        """)["peak"]


def test_dynamic_references_to_many_anchors_cost_a_line_not_a_square() -> None:
    # 1500 $dynamicRefs may each evaluate any of 1500 $dynamicAnchors: one edge each, through
    # one shared vertex, not 1500 x 1500 edges (once 18 s and 600 MB for 5000 of each).
    n = 1500
    schema = (f'{{"$defs": {{"a": {{"allOf": [{{"$dynamicAnchor": "x"}}] * {n}}}, '
              f'"r": {{"allOf": [{{"$dynamicRef": "#x"}} for _ in range({n})]}}}}}}')
    limits = Limits(max_nodes=10_000, max_depth=64, max_fan_out=2_000, max_expanded=200_000)
    assert peak_memory(schema, limits) < 8_000_000
    recursive = (f'{{"$defs": {{"a": {{"allOf": [{{"$recursiveAnchor": True}}] * {n}}}, '
                 f'"r": {{"allOf": [{{"$recursiveRef": "#"}} for _ in range({n})]}}}}}}')
    assert peak_memory(recursive, limits) < 8_000_000


def test_a_reference_to_many_candidates_still_multiplies_and_still_loops() -> None:
    fan = {"$defs": {"n": {"$dynamicAnchor": "x", "anyOf": [{}] * 5},
                     "m": {"$dynamicAnchor": "x"}},
           "allOf": [{"$dynamicRef": "#x"}] * 30}
    assert "more than 100 subschemas apply" in refusal(fan, COSTED)
    loop = {"$defs": {"n": {"$dynamicAnchor": "x", "anyOf": [{"$dynamicRef": "#x"}]},
                      "m": {"$dynamicAnchor": "x"}}, "$dynamicRef": "#x"}
    assert "leads back to where it started" in refusal(loop, COSTED)


@pytest.mark.parametrize("schema", [
    '{"x-pad": [0] * 1_000_000}',  # a wide list: refused before a million entries are queued
    '{"properties": {f"p{i}": {} for i in range(200_000)}}',
    '{"properties": {"k" * 200_000: {"allOf": [{}] * 900}}}',  # a long name under many subschemas
], ids=["wide-list", "wide-map", "long-name"])
def test_the_walk_holds_little_memory_whatever_the_shape(schema: str) -> None:
    assert peak_memory(schema) < 8_000_000


@pytest.mark.parametrize(("schema", "at"), [
    ({"$id": "https://e.example/" + "a" * 5000, "$ref": "#"}, "/$id"),
    ({"$defs": {"a": {}}, "$ref": "#/$defs/a" + "/x" * 3000}, "/$ref"),
    ({"allOf": [{"$id": "a" * 3000 + "/", "$defs": {"x": {"$id": "b" * 3000}}}]}, None),
], ids=["long-id", "long-ref", "long-joined-id"])
def test_a_uri_longer_than_the_limit_is_refused(schema: dict[str, Any], at: str | None) -> None:
    reason = refusal(schema)
    assert "is longer than 4096 characters" in reason and len(reason) < 400
    assert at is None or f" at {at} " in reason


@pytest.mark.parametrize(("schema", "reason"), [
    ({"$ref": "http://[::1/x"}, "S: $ref 'http://[::1/x' at /$ref is not a valid URI reference"),
    ({"not": {"$id": "http://[zz]/"}}, "S: $id 'http://[zz]/' at /not/$id is not a valid URI"),
], ids=["ref", "id"])
def test_a_malformed_uri_is_refused_with_its_place(schema: dict[str, Any], reason: str) -> None:
    assert refusal(schema).startswith(reason)


# -- adversarial schemas: resolving as the validator does --------------------------------------


def test_a_pointer_is_percent_decoded_before_it_is_split() -> None:
    # RFC 6901 section 6: "%2F" in a URI fragment is a "/" between two tokens.
    document = {"a": {"b": 1}, "a/b": 2}
    assert resolve_pointer(document, "/a%2Fb") == 1
    assert resolve_pointer(document, "/a~1b") == 2
    schema = {"$defs": {"a/b": {}, "a": {"b": {"anyOf": [{"$ref": "#/$defs/a%2Fb"}]}}},
              "$ref": "#/$defs/a%2Fb"}
    assert "leads back to where it started" in refusal(schema, COSTED)


def test_a_list_index_is_ascii_digits() -> None:
    assert resolve_pointer([10, 20], "/\u00b9") is MISSING  # a superscript one
    assert refusal({"allOf": [{}, {}], "$ref": "#/allOf/\u00b9"}).startswith("S: no target")


def test_an_anchor_is_not_percent_decoded() -> None:
    assert refusal({"$defs": {"x": {"$anchor": "ab"}}, "$ref": "#a%62"}).startswith(
        "S: no anchor for $ref #a%62"
    )


def test_a_fragment_resolves_in_the_embedded_resource_whatever_its_scheme() -> None:
    inner = {"$id": "urn:example:e", "$defs": {"loop": {"anyOf": [{"$ref": "#/$defs/loop"}]}},
             "$ref": "#/$defs/loop"}
    schema = {"$defs": {"e": inner, "loop": {}}, "$ref": "urn:example:e"}
    assert "leads back to where it started" in refusal(schema, COSTED)
    dangling = {"$defs": {"e": {"$id": "urn:example:e", "$ref": "#/$defs/nope"},
                          "nope": {}}}
    assert refusal(dangling).startswith("S: no target for $ref #/$defs/nope at /$defs/e/$ref")


def test_a_reference_into_a_data_keyword_is_refused() -> None:
    schema = {"$ref": "#/default", "default": {"anyOf": [{"$ref": "#/default"}]}}
    assert refusal(schema) == (
        "S: $ref '#/default' at /$ref points into the value of a const, enum, default or "
        "examples keyword, which is data, not a subschema"
    )
    assert accepted({"default": {"$ref": "#/default"}})  # data that is never evaluated


def test_the_dialect_decides_which_keyword_is_an_id_and_where_it_counts() -> None:
    draft4 = "http://json-schema.org/draft-04/schema#"
    # draft-04 names a base with "id": the references in e mean e's own loop, not the root's.
    e = {"id": "http://e.example/e", "allOf": [{"$ref": "#/definitions/loop"}],
         "definitions": {"loop": {"anyOf": [{"$ref": "#/definitions/loop"}]}}}
    schema = {"$schema": draft4, "definitions": {"loop": {}, "e": e},
              "not": {"$ref": "#/definitions/e"}}
    assert "leads back to where it started" in refusal(schema, COSTED)
    # draft-07 ignores an $id beside $ref; 2020-12 does not.
    draft7 = "http://json-schema.org/draft-07/schema#"
    beside = {"$defs": {"e": {"$id": "http://e.example/e", "$ref": "#/$defs/loop"},
                        "loop": {}}, "$ref": "http://e.example/e"}
    assert refusal(beside).startswith("S: no target for $ref #/$defs/loop at /$defs/e/$ref")
    assert refusal({**beside, "$schema": draft7}).startswith(
        "S: remote $ref http://e.example/e at /$ref"
    )
    # draft-07 anchors come from "$id": "#name", not from $anchor.
    assert refusal({"$schema": draft7, "definitions": {"a": {"$anchor": "x"}},
                    "$ref": "#x"}).startswith("S: no anchor")
    assert accepted({"$schema": draft7, "definitions": {"a": {"$id": "#x"}}, "$ref": "#x"})


def test_an_id_where_no_subschema_goes_is_ignored_and_a_reference_under_it_refused() -> None:
    # A validator never registers it, and applies it only when it happens to evaluate there.
    hidden = {"x-extra": {"$id": "urn:example:x", "$anchor": "a"}, "$ref": "urn:example:x"}
    assert refusal(hidden).startswith("S: external $ref urn:example:x at /$ref")
    assert refusal({"x-extra": {"$id": "urn:example:x", "properties": {"p": {"$ref": "#"}}}}) == (
        "S: $ref '#' at /x-extra/properties/p/$ref sits under an $id where no subschema goes "
        "(at /x-extra), which validators apply or not depending on the path; move that $id "
        "under $defs"
    )
    assert accepted({"x-examples": [{"$id": "order-1", "total": 3}]})


def test_a_place_is_spelled_out_only_for_a_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    # 9000 references under a 400 000-character name: spelling each one's place would copy
    # almost four billion characters. An accepted schema has no place spelt out at all; the
    # first attempt fails at once instead of running on.
    spelt: list[str] = []
    accepting = True
    spell = schema_pointers.pointer

    def counted(path: Any) -> str:
        spelt.append(text := spell(path))
        assert not accepting, f"a place spelt out for an accepted schema: {text[:80]}"
        return text

    for module in (schema_walk, schema_walked):  # each module that spells a place
        monkeypatch.setattr(module, "pointer", counted)
    schema = {"properties": {"k" * 400_000: {"allOf": [{"$ref": "#/$defs/a"}] * 9_000}},
              "$defs": {"a": {}}}
    limits = Limits(max_nodes=20_000, max_depth=64, max_fan_out=10**5, max_expanded=10**6)
    check_schema_structure(schema, "S", limits, WORDS)
    assert spelt == []
    # A refusal does spell its one place, through the same function.
    accepting = False
    schema["properties"]["k" * 400_000]["allOf"][-1] = {"$ref": "#/$defs/nope"}
    assert refusal(schema, limits).startswith("S: no target for $ref #/$defs/nope at /properties")
    assert len(spelt) == 1


@pytest.mark.parametrize("output", [
    {"$defs": {"a/b": {}, "a": {"b": {"anyOf": [{"$ref": "#/$defs/a%2Fb"}]}}},
     "$ref": "#/$defs/a%2Fb"},
    {"$defs": {"e": {"$id": "urn:example:e", "$ref": "#/$defs/loop",
                     "$defs": {"loop": {"anyOf": [{"$ref": "#/$defs/loop"}]}}}, "loop": {}},
     "$ref": "urn:example:e"},
    {"$ref": "#/default", "default": {"anyOf": [{"$ref": "#/default"}]}},
], ids=["percent-encoded", "urn-fragment", "into-data"])
def test_a_tool_whose_output_schema_hides_a_loop_from_the_walk_is_rejected(
    output: dict[str, Any],
) -> None:
    # Each of these once passed the vetting, then sent the validator into endless recursion.
    reason = vet_tool(tool({}, outputSchema=output))
    assert reason is not None and reason.startswith("outputSchema")


def test_a_limit_of_no_nodes_refuses_the_root_itself_in_the_callers_words() -> None:
    # Every later node is counted before it is queued; the root alone is counted as it is taken.
    assert refusal({}, Limits(max_nodes=0, max_depth=9)) == "S: more than 0"
    assert accepted({}, Limits(max_nodes=1, max_depth=9))
