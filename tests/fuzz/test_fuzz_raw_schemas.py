"""Raw JSON Schemas as a tool's author may write them, hostile or careless: `$ref` cycles through
`$defs`, references to nothing or out of the document, nesting deep enough to exhaust a stack,
huge `enum`s, formats and patterns nobody knows, keywords of the wrong type, every dialect.

What must hold, from docs/security.md and mcpkit.schema.raw's promise (not from its code):

- registering the tool either fails with one `ValueError` or `TypeError` naming the tool, or
  gives a tool that can be called;
- a call is answered, never crashed: a result, or an `isError` result naming the tool's
  invalid arguments; never -32603, never a traceback in the log;
- the answer agrees with the stock validator of the schema's dialect (`jsonschema`, which
  mcpkit did not write): what it accepts, the tool runs on; what it refuses, the tool does not
  run on, unless mcpkit says the value was too costly or too deeply nested to check.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import jsonschema
import orjson
import pytest
from checked_connection import Tracebacks
from helpers.wire import MODERN, check_server_message, meta
from hypothesis import example, given
from hypothesis import strategies as st
from peer_values import json_values

from mcpkit import Server
from mcpkit.protocol.codec import Request

DIALECTS = [
    None, "https://json-schema.org/draft/2020-12/schema",
    "https://json-schema.org/draft/2019-09/schema", "http://json-schema.org/draft-07/schema#",
    "http://json-schema.org/draft-04/schema#", "https://example.com/my-dialect", 7,
]
DEF_NAMES = ["a", "b", "c", "a~1b", "with space", "%25"]
REFS = st.one_of(
    st.sampled_from(DEF_NAMES).map(lambda n: f"#/$defs/{n}"),
    st.sampled_from([
        "#", "#/$defs", "#/$defs/missing", "#/properties/x", "#/properties/x/items", "#anchor",
        "#/$defs/a~1b", "#/$defs/with%20space", "#/$defs/%2525", "http://elsewhere.example/s",
        "other.json#/x", "#/definitions/a", "#/$defs/a/", "#//", "#~", "", "urn:x",
    ]),
    st.text(max_size=6),
)
FORMATS = st.sampled_from(["email", "date-time", "uri", "regex", "ipv4", "uuid", "no-such-format",
                           ""]) | st.text(max_size=4)
PATTERNS = st.sampled_from(["^a+$", "(", "[", "\\", "(?P<x>a)(?P=x)", "a{2,1}", "^(a+)+$",
                            "\\p{L}", "(?=a)", ""]) | st.text(max_size=5)
TYPES = st.sampled_from(["string", "integer", "number", "boolean", "null", "array", "object",
                         "no-such-type"])
WRONG = st.sampled_from([5, "x", [], {}, None, True, -1, 1.5])
"""Values of the wrong type for any keyword, to reach each keyword's own checks."""


def deep_value(depth: int, kind: str) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value] if kind == "list" else {"x": value}
    return value


def leaves() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.booleans(),
        st.builds(lambda t: {"type": t}, TYPES | st.lists(TYPES, max_size=3)),
        st.builds(lambda r: {"$ref": r}, REFS),
        st.builds(lambda r: {"$dynamicRef": r}, st.sampled_from(["#meta", "#", "#/$defs/a"])),
        st.builds(lambda n: {"$anchor": n}, st.sampled_from(["anchor", "meta", "", "1x"])),
        st.builds(lambda n: {"$dynamicAnchor": n}, st.sampled_from(["meta", "anchor"])),
        st.builds(lambda f: {"type": "string", "format": f}, FORMATS),
        st.builds(lambda p: {"type": "string", "pattern": p}, PATTERNS),
        st.builds(lambda n: {"enum": list(range(n))}, st.sampled_from([0, 1, 3, 5000])),
        st.builds(lambda v: {"const": v}, json_values(4)),
        st.builds(lambda k, d: {k: deep_value(d, "dict")}, st.sampled_from(
            ["const", "default", "examples", "x-vendor"]), st.sampled_from([200, 300, 1100])),
        st.builds(lambda n: {"minimum": n}, st.integers() | st.floats(allow_nan=False)),
        st.builds(lambda n: {"multipleOf": n}, st.sampled_from([0, -1, 1e-308, 0.1, 2**70, 3])),
        st.builds(lambda n: {"maxLength": n}, st.sampled_from([-1, 0, 2**64, 1.5])),
        st.builds(lambda i: {"$id": i}, st.sampled_from(["#x", "http://a.example/s", "s.json",
                                                         "urn:uuid:x", ""])),
        st.builds(lambda k, v: {k: v}, st.sampled_from(
            ["properties", "items", "required", "enum", "anyOf", "allOf", "not", "$ref",
             "additionalProperties", "patternProperties", "$defs", "type", "dependentSchemas",
             "prefixItems", "if", "contains", "unevaluatedProperties"]), WRONG),
    )


def composites(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.builds(lambda k, xs: {k: xs}, st.sampled_from(["anyOf", "allOf", "oneOf"]),
                  st.lists(inner, max_size=3)),
        st.builds(lambda x: {"not": x}, inner),
        st.builds(lambda i, t, e: {"if": i, "then": t, "else": e}, inner, inner, inner),
        st.builds(lambda ps: {"type": "object", "properties": ps},
                  st.dictionaries(st.sampled_from(["x", "y", "$ref", "$schema", ""]), inner,
                                  max_size=3)),
        st.builds(lambda x: {"type": "array", "items": x}, inner),
        st.builds(lambda xs: {"prefixItems": xs}, st.lists(inner, max_size=2)),
        st.builds(lambda x: {"additionalProperties": x}, inner),
        st.builds(lambda p, x: {"patternProperties": {p: x}}, PATTERNS, inner),
        st.builds(lambda x: {"dependentSchemas": {"x": x}}, inner),
        st.builds(lambda x, d: {"$defs": {"a": x}, **d}, inner, inner.filter(
            lambda v: isinstance(v, dict))),
        st.builds(lambda x, r: {**x, "$ref": r} if isinstance(x, dict) else x, inner, REFS),
    )


SUBSCHEMAS = st.recursive(leaves(), composites, max_leaves=12)


def chain(depth: int, keyword: str) -> Any:
    """A schema nested `depth` levels through one keyword."""
    node: Any = {"type": "string"}
    for _ in range(depth):
        if keyword == "properties":
            node = {"type": "object", "properties": {"x": node}}
        elif keyword == "items":
            node = {"type": "array", "items": node}
        else:
            node = {keyword: [node]} if keyword in ("anyOf", "allOf") else {keyword: node}
    return node


@st.composite
def raw_schemas(draw: st.DrawFn) -> Any:
    """A tool's input schema: an object at its root (most of the time), properties and
    definitions drawn from the parts above, or one long chain."""
    shape = draw(st.sampled_from(["parts", "parts", "parts", "chain", "ref-chain", "not-object"]))
    if shape == "not-object":
        return draw(json_values(4).filter(lambda v: v is not None))  # None: no raw schema
    root: dict[str, Any] = {"type": draw(st.sampled_from(["object", "object", "object", "array"]))}
    dialect = draw(st.sampled_from(DIALECTS))
    if dialect is not None:
        root["$schema"] = dialect
    if shape == "chain":
        depth = draw(st.sampled_from([1, 10, 127, 128, 129, 300, 1200]))
        keyword = draw(st.sampled_from(["properties", "items", "anyOf", "not", "allOf"]))
        root["properties"] = {"x": chain(depth, keyword)}
    elif shape == "ref-chain":
        # Definitions that refer to one another in a line or a loop, with or without
        # descending into the value on the way.
        n = draw(st.integers(1, 300))
        loop = draw(st.booleans())
        descend = draw(st.sampled_from(["", "items", "properties"]))
        defs: dict[str, Any] = {}
        for i in range(n):
            target = f"#/$defs/d{(i + 1) % n if loop else i + 1}"
            ref: Any = {"$ref": target}
            if descend == "items":
                ref = {"type": "array", "items": ref}
            elif descend == "properties":
                ref = {"type": "object", "properties": {"x": ref}}
            defs[f"d{i}"] = ref
        defs[f"d{n}"] = {"type": "integer"}
        root["$defs"] = defs
        root["properties"] = {"x": {"$ref": "#/$defs/d0"}}
    else:
        root["properties"] = draw(st.dictionaries(st.sampled_from(["x", "y", "z"]), SUBSCHEMAS,
                                                  max_size=3))
        if draw(st.booleans()):
            root["$defs"] = draw(st.dictionaries(st.sampled_from(DEF_NAMES), SUBSCHEMAS,
                                                 max_size=4))
        extra = draw(st.dictionaries(
            st.sampled_from(["required", "additionalProperties", "anyOf", "$id", "$anchor",
                             "x-vendor", "$comment", "default"]),
            st.one_of(SUBSCHEMAS, st.lists(st.sampled_from(["x", "y"]), max_size=2), WRONG),
            max_size=2))
        root.update(extra)
    return root


ARGUMENTS = st.one_of(
    st.dictionaries(st.sampled_from(["x", "y", "z", "w"]), json_values(6), max_size=4),
    st.builds(lambda d, k: {"x": deep_value(d, k)}, st.sampled_from([5, 200, 1000]),
              st.sampled_from(["list", "dict"])),
    st.builds(lambda n: {"x": n}, st.integers(-(2**63), 2**64 - 1)),
)

TOOL = "hostile_schema_tool"


def stock_verdict(schema: dict[str, Any], arguments: dict[str, Any]) -> bool | None:
    """Whether the dialect's stock validator accepts the arguments; None when it cannot tell
    (it exhausts its own stack on the value or the schema)."""
    try:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        return bool(cls(schema).is_valid(arguments))
    except RecursionError:
        return None


def register(schema: Any) -> Server | None:
    server = Server("fuzz-schemas")

    async def the_function(**arguments: Any) -> str:
        return "ran"

    try:
        server.add_tool(the_function, TOOL, input_schema=schema)
    except (ValueError, TypeError) as exc:
        assert TOOL in str(exc), f"the refusal does not name the tool: {exc}"
        return None
    return server


async def call(server: Server, method: str, params: dict[str, Any]) -> dict[str, Any]:
    reply = await server.handle(Request(1, method, {**params, "_meta": meta()}))
    orjson.dumps(reply)  # what every transport does with it
    check_server_message(MODERN, reply, method)
    return reply


def check_schema(schema: Any, values: list[dict[str, Any]]) -> None:
    tracebacks = Tracebacks()
    logging.getLogger("mcpkit").addHandler(tracebacks)
    try:
        server = register(schema)
        if server is None:
            return
        listed = asyncio.run(call(server, "tools/list", {}))
        assert [t["name"] for t in listed["result"]["tools"]] == [TOOL], listed
        for arguments in values:
            reply = asyncio.run(call(server, "tools/call", {"name": TOOL, "arguments": arguments}))
            assert "result" in reply, f"a call was answered with an error: {reply}"
            result = reply["result"]
            text = result["content"][0]["text"]
            verdict = stock_verdict(schema, arguments)
            if not result.get("isError"):
                assert text == "ran", result
                assert verdict is not False, (
                    f"the tool ran on arguments its schema refuses: {arguments!r:.300}")
                continue
            assert text.startswith(f"Invalid arguments for tool {TOOL!r}"), result
            if "too costly" in text or "nested too deeply" in text or "64-bit" in text:
                continue
            assert verdict is not True, (
                f"arguments its schema accepts were refused: {text:.300}")
    finally:
        logging.getLogger("mcpkit").removeHandler(tracebacks)
    assert not tracebacks.seen, tracebacks.seen


@given(schema=raw_schemas(), values=st.lists(ARGUMENTS, min_size=1, max_size=3))
@example(schema={"type": "object", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
                 "properties": {"x": {"$ref": "#/$defs/a"}}}, values=[{"x": 1}])
@example(schema={"type": "object", "properties": {"x": {"enum": list(range(5000))}}},
         values=[{"x": 4999}, {"x": 5000}])
def test_a_raw_schema_is_refused_at_registration_or_checks_every_call_as_its_dialect_says(
    schema: Any, values: list[dict[str, Any]],
) -> None:
    check_schema(schema, values)


@pytest.mark.parametrize("keyword", ["properties", "items", "anyOf", "not"])
@pytest.mark.parametrize("depth", [127, 128, 1200])
def test_a_schema_nested_at_and_past_the_depth_limit_is_refused_or_served(
    keyword: str, depth: int,
) -> None:
    schema = {"type": "object", "properties": {"x": chain(depth, keyword)}}
    check_schema(schema, [{"x": deep_value(depth, "list")}, {"x": "leaf"}])


# -- what the properties found, each replayed by a plain test -----------------------------------

@pytest.mark.parametrize("schema", ["0", False, ["type", "object"], 5])
def test_an_input_schema_that_is_no_object_is_refused_naming_the_tool(schema: Any) -> None:
    server = Server("fuzz-schemas")
    with pytest.raises(TypeError, match=f"tool {TOOL!r}: .*input schema: a JSON Schema object"):
        server.add_tool(lambda: "ran", TOOL, input_schema=schema)


def test_a_schema_nested_past_the_stack_is_refused_at_registration_with_the_depth_limit() -> None:
    schema = {"type": "object", "properties": {"x": chain(1200, "properties")}}
    with pytest.raises(ValueError, match=f"tool {TOOL!r}: .*too deeply nested .*depth 128"):
        Server("fuzz-schemas").add_tool(lambda **kw: "ran", TOOL, input_schema=schema)


@pytest.mark.parametrize("keyword", ["const", "default", "examples"])
def test_data_nested_past_what_json_carries_is_refused_at_registration_not_at_listing(
    keyword: str,
) -> None:
    schema = {"type": "object", "properties": {"x": {keyword: deep_value(300, "dict")}}}
    with pytest.raises(ValueError, match=f"tool {TOOL!r}: .*cannot be sent as JSON"):
        Server("fuzz-schemas").add_tool(lambda **kw: "ran", TOOL, input_schema=schema)


def test_a_schema_is_kept_as_the_json_it_is_listed_as_whatever_the_caller_changes_later() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {"x": {"enum": [1, 2]}}}
    server = Server("fuzz-schemas")
    server.add_tool(lambda **kw: "ran", TOOL, input_schema=schema)
    schema["properties"]["x"]["enum"].append(3)
    reply = asyncio.run(call(server, "tools/call", {"name": TOOL, "arguments": {"x": 3}}))
    assert reply["result"].get("isError") is True, reply
