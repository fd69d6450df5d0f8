"""What bounds the cost of a user's raw JSON Schema: refusals at registration, and the per-call
budget (mcpkit.schema.bounds, mcpkit.schema.raw)."""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Any

import orjson
import pytest
from helpers.wire import meta

from mcpkit import Server
from mcpkit.schema.bounds import MAX_EXPANDED, MAX_FAN_OUT
from mcpkit.schema.functions import ArgumentsError, derive_signature
from mcpkit.schema.raw import compile_raw


def tool(x: Any = None, **rest: Any) -> None: ...


def register(schema: dict[str, Any]) -> Any:
    return derive_signature(tool, input_schema=schema, clock=time.monotonic)


def problems_of(validate: Any, arguments: Any) -> list[str]:
    with pytest.raises(ArgumentsError) as caught:
        validate(arguments)
    return caught.value.problems


def diamond(levels: int, keyword: str = "anyOf") -> dict[str, Any]:
    """Each definition refers twice to the next: 2**levels paths to the last one."""
    defs: dict[str, Any] = {
        f"d{i}": {keyword: [{"$ref": f"#/$defs/d{i + 1}"}, {"$ref": f"#/$defs/d{i + 1}"}]}
        for i in range(levels)
    }
    defs[f"d{levels}"] = {"type": "string"}
    return {"type": "object", "$defs": defs, "properties": {"x": {"$ref": "#/$defs/d0"}}}


def nested_list(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


TREE = {
    "type": "object",
    "$defs": {"tree": {"type": "array", "items": {"$ref": "#/$defs/tree"}}},
    "properties": {"x": {"$ref": "#/$defs/tree"}},
}


# -- registration: loops that never descend -----------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "pointer"),
    [
        (
            {
                "type": "object",
                "$defs": {"a": {"$ref": "#/$defs/a"}},
                "properties": {"x": {"$ref": "#/$defs/a"}},
            },
            "/$defs/a/$ref",
        ),
        (
            {
                "type": "object",
                "$defs": {
                    "a": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/b"}]},
                    "b": {"allOf": [{"$ref": "#/$defs/a"}]},
                },
                "properties": {"x": {"$ref": "#/$defs/a"}},
            },
            "/$defs/b/allOf/0/$ref",
        ),
        ({"type": "object", "not": {"$ref": "#"}}, "/not/$ref"),
        ({"type": "object", "if": {"type": "object"}, "then": {"$ref": "#"}}, "/then/$ref"),
        ({"type": "object", "dependentSchemas": {"a": {"$ref": "#"}}}, "/dependentSchemas/a/$ref"),
        (
            {
                "$schema": "https://json-schema.org/draft/2019-09/schema",
                "$recursiveAnchor": True,
                "type": "object",
                "allOf": [{"$recursiveRef": "#"}],
            },
            "/allOf/0/$recursiveRef",
        ),
        (
            {
                "$id": "https://example.com/root.json",
                "type": "object",
                "properties": {"b": {"$ref": "item.json"}},
                "$defs": {"item": {"$id": "item.json", "allOf": [{"$ref": "#"}]}},
            },
            "/$defs/item/allOf/0/$ref",
        ),
    ],
    ids=[
        "self",
        "through-two-definitions",
        "not",
        "then",
        "dependentSchemas",
        "recursiveRef",
        "embedded-resource",
    ],
)
def test_a_ref_loop_that_never_descends_into_the_value_is_refused_at_registration(
    schema: dict[str, Any], pointer: str
) -> None:
    with pytest.raises(ValueError, match="would never end") as caught:
        register(schema)
    message = str(caught.value)
    assert message.startswith("function 'tool': input schema: $")
    assert f"at {pointer} " in message


def test_a_ref_loop_through_items_is_accepted_and_checks_nested_values() -> None:
    sig = register(TREE)
    assert sig.validate({"x": [[], [[]]]}) == {"x": [[], [[]]]}
    assert problems_of(sig.validate, {"x": [[], [[1]]]}) == [
        "arguments.x[1][0][0]: expected array, got integer 1"
    ]


def test_a_dynamic_ref_loop_through_properties_is_accepted() -> None:
    schema = {
        "type": "object",
        "$dynamicAnchor": "node",
        "properties": {"x": {"type": "integer"}, "next": {"$dynamicRef": "#node"}},
    }
    sig = register(schema)
    value = {"x": 1, "next": {"x": 2, "next": {}}}
    assert sig.validate(value) == value
    assert problems_of(sig.validate, {"next": {"next": {"x": "no"}}}) == [
        "arguments.next.next.x: expected integer, got string 'no'"
    ]


def test_a_recursive_ref_loop_through_items_is_accepted() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2019-09/schema",
        "$recursiveAnchor": True,
        "type": "object",
        "properties": {"x": {"type": "integer"}, "kids": {"items": {"$recursiveRef": "#"}}},
    }
    sig = register(schema)
    assert problems_of(sig.validate, {"kids": [{"x": 1}, {"kids": [{"x": "a"}]}]}) == [
        "arguments.kids[1].kids[0].x: expected integer, got string 'a'"
    ]


def test_a_loop_nothing_refers_to_is_left_alone() -> None:
    schema = {"type": "object", "$defs": {"unused": {"$ref": "#/$defs/unused"}}}
    assert register(schema).validate({"x": 1}) == {"x": 1}


# -- registration: fan-out ----------------------------------------------------------------------


@pytest.mark.parametrize("keyword", ["anyOf", "oneOf", "allOf"])
def test_branches_that_share_definitions_past_the_fan_out_limit_are_refused(keyword: str) -> None:
    with pytest.raises(ValueError, match=f"more than {MAX_FAN_OUT} subschemas apply to one value"):
        register(diamond(14, keyword))


def test_branches_that_share_definitions_within_the_limit_are_accepted() -> None:
    sig = register(diamond(8))  # 2**8 paths to the last definition: fine
    assert sig.validate({"x": "s"}) == {"x": "s"}
    assert problems_of(sig.validate, {"x": 1})[0].startswith("arguments.x: ")


def test_one_definition_used_by_many_properties_is_not_fan_out() -> None:
    big = {"type": "object", "properties": {f"p{i}": {"type": "integer"} for i in range(200)}}
    schema = {
        "type": "object",
        "$defs": {"big": big},
        "properties": {f"q{i}": {"$ref": "#/$defs/big"} for i in range(300)},
    }
    assert register(schema).validate({"q1": {"p2": 3}}) == {"q1": {"p2": 3}}


def test_definitions_that_multiply_across_nested_values_past_the_total_limit_are_refused() -> None:
    levels = 20  # each level refers twice to the next, through two different properties
    defs: dict[str, Any] = {
        f"d{i}": {
            "type": "object",
            "properties": {"a": {"$ref": f"#/$defs/d{i + 1}"}, "b": {"$ref": f"#/$defs/d{i + 1}"}},
        }
        for i in range(levels)
    }
    defs[f"d{levels}"] = {"type": "string"}
    schema = {"type": "object", "$defs": defs, "properties": {"x": {"$ref": "#/$defs/d0"}}}
    with pytest.raises(ValueError, match=f"spans more than {MAX_EXPANDED} subschemas"):
        register(schema)


def test_the_limits_also_guard_a_raw_output_schema() -> None:
    def returns() -> dict[str, Any]:
        return {}

    schema = {"$defs": {"a": {"not": {"$ref": "#/$defs/a"}}}, "$ref": "#/$defs/a"}
    with pytest.raises(ValueError, match=r"output schema: \$ref '#/\$defs/a'.*would never end"):
        derive_signature(returns, output_schema=schema)


# -- registration: anchors ----------------------------------------------------------------------


def test_a_ref_may_name_a_dynamic_anchor() -> None:
    schema = {
        "type": "object",
        "$defs": {"n": {"$dynamicAnchor": "num", "type": "integer"}},
        "properties": {"x": {"$ref": "#num"}},
    }
    assert problems_of(register(schema).validate, {"x": "1"}) == [
        "arguments.x: expected integer, got string '1'"
    ]


def test_a_draft_07_plain_name_id_is_an_anchor() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "definitions": {"n": {"$id": "#num", "type": "integer"}},
        "properties": {"x": {"$ref": "#num"}},
    }
    assert problems_of(register(schema).validate, {"x": "1"}) == [
        "arguments.x: expected integer, got string '1'"
    ]


# -- per call -----------------------------------------------------------------------------------


def compiled(schema: dict[str, Any], **budget: Any) -> Any:
    return compile_raw(
        copy.deepcopy(schema),
        "tool 'x': input schema",
        parameter_names=frozenset({"x"}),
        pass_extra=False,
        clock=time.monotonic,
        **budget,
    )


def wide_tree(levels: int) -> Any:
    """Nested lists, two in each: 2**levels empty lists at the bottom."""
    value: Any = []
    for _ in range(levels):
        value = [value, copy.deepcopy(value)]
    return value


def test_a_call_past_the_step_budget_is_refused_as_too_costly() -> None:
    validate = compiled(TREE, max_steps=2000)
    assert problems_of(validate, {"x": wide_tree(12)}) == [
        "arguments: too costly to check against the input schema "
        "(stopped after more than 2000 subschema evaluations)"
    ]
    assert validate({"x": wide_tree(5)}) == {"x": wide_tree(5)}  # the next call starts afresh
    assert compiled(TREE)({"x": wide_tree(10)}) == {"x": wide_tree(10)}  # the default budget


def test_a_call_past_the_time_budget_is_refused_as_too_costly() -> None:
    validate = compiled(TREE, max_seconds=0.0)
    assert problems_of(validate, {"x": wide_tree(12)}) == [
        "arguments: too costly to check against the input schema (stopped after more than 0 s)"
    ]
    assert validate({"x": wide_tree(3)}) == {"x": wide_tree(3)}  # checked every 1024 steps


def test_the_budget_still_counts_after_a_ref_back_to_a_root_that_declares_its_dialect() -> None:
    # jsonschema switches to its stock validator at a subschema that declares $schema (even the
    # same dialect), so the root's $schema must not let a recursion through "#" escape the count.
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "definitions": {"t": {"type": "array", "items": {"$ref": "#"}}},
        "properties": {"x": {"$ref": "#/definitions/t"}},
    }
    value: Any = {"x": []}
    for _ in range(12):
        value = {"x": [value, copy.deepcopy(value)]}
    with pytest.raises(ArgumentsError, match="more than 2000 subschema evaluations"):
        compiled(schema, max_steps=2000)(value)
    sig = register(schema)
    assert sig.input_schema == schema  # listed as given, $schema included
    assert sig.validate(value) == {"x": value["x"]}
    assert problems_of(sig.validate, {"x": [{"x": [{"x": 1}]}]}) == [
        "arguments.x[0].x[0].x: expected array, got integer 1"
    ]


def test_a_value_nested_deeper_than_the_stack_is_refused_not_crashed() -> None:
    sig = register(TREE)
    assert problems_of(sig.validate, {"x": nested_list(1000)}) == [
        "arguments: nested too deeply to check; send a value with fewer nesting levels"
    ]
    assert sig.validate({"x": nested_list(50)}) == {"x": nested_list(50)}


@dataclass
class Chain:
    next: Chain | None = None
    tags: list[str] = field(default_factory=list)


def test_a_recursive_type_meeting_a_value_deeper_than_the_stack_is_refused_not_crashed() -> None:
    def chained(chain: Chain) -> None: ...

    sig = derive_signature(chained)
    value: dict[str, Any] = {}
    for _ in range(1000):
        value = {"next": value}
    assert problems_of(sig.validate, {"chain": value}) == [
        "arguments: nested too deeply to check; send a value with fewer nesting levels"
    ]
    assert sig.validate({"chain": {"next": {"tags": ["a"]}}}) == {
        "chain": Chain(Chain(None, ["a"]))
    }


async def test_a_call_too_deep_to_check_is_a_tool_execution_error_on_the_wire(
    wire_factory: Any,
) -> None:
    server = Server("raw")

    @server.tool(input_schema=copy.deepcopy(TREE))
    def nest(x: Any = None) -> str:
        return "ok"

    wire = wire_factory(server)
    wire.methods[100] = "tools/call"  # sent by hand, 240 levels: within the wire's bound
    arguments = b'{"x":' + b"[" * 240 + b"]" * 240 + b"}"  # but past the recursive check's
    wire.send_raw(
        b'{"jsonrpc":"2.0","id":100,"method":"tools/call","params":{"name":"nest","arguments":'
        + arguments + b',"_meta":' + orjson.dumps(meta()) + b"}}"
    )
    reply = await wire.next()
    assert reply["id"] == 100
    result = reply["result"]
    assert result["isError"] is True
    assert result["content"][0]["text"] == (
        "Invalid arguments for tool 'nest': arguments: nested too deeply to check; "
        "send a value with fewer nesting levels"
    )
    ok = await wire.request("tools/call", {"name": "nest", "arguments": {"x": nested_list(5)}})
    assert ok["result"]["content"][0]["text"] == "ok"
