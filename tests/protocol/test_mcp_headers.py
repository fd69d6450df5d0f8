"""x-mcp-header declarations, header value encoding and decoding (mcpkit.protocol.mcp_headers)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from mcpkit.protocol import mcp_headers
from mcpkit.protocol.mcp_headers import (
    InvalidHeaderDeclaration,
    decode_header_value,
    encode_header_value,
    header_matches_body,
    header_params,
    mirrored_headers,
)


def obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def prop(kind: Any = "string", header: Any = "H", **extra: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {} if kind is None else {"type": kind}
    schema["x-mcp-header"] = header
    schema.update(extra)
    return schema


# -- header_params: valid declarations ----------------------------------------------------------


def test_top_level_and_nested_properties_map_to_their_paths() -> None:
    schema = obj(
        region=prop("string", "Region"),
        org=obj(tenant=prop("string", "Tenant"), size=prop("integer", "Size")),
        verbose=prop("boolean", "Verbose"),
        query={"type": "string"},
    )
    assert header_params(schema) == {
        "Region": ("region",),
        "Tenant": ("org", "tenant"),
        "Size": ("org", "size"),
        "Verbose": ("verbose",),
    }


def test_schema_without_declarations_has_no_header_params() -> None:
    assert header_params({"type": "object"}) == {}
    assert (
        header_params(obj(a={"type": "string"}, b={"type": "array", "items": {"type": "string"}}))
        == {}
    )


def test_method_is_a_valid_header_name_because_it_gets_the_param_prefix() -> None:
    assert header_params(obj(m=prop("string", "Method"))) == {"Method": ("m",)}


def test_all_token_characters_are_allowed_in_a_header_name() -> None:
    name = "!#$%&'*+-.^_`|~09azAZ"
    assert header_params(obj(a=prop("string", name))) == {name: ("a",)}


def test_a_property_named_x_mcp_header_is_not_a_declaration() -> None:
    assert header_params(obj(**{"x-mcp-header": {"type": "object"}})) == {}


def test_single_type_in_a_list_counts_as_that_type() -> None:
    assert header_params(obj(a=prop(["integer"], "A"))) == {"A": ("a",)}


def test_declarations_on_other_keywords_beside_properties_are_still_valid() -> None:
    schema = obj(a=prop("string", "A", minLength=1, enum=["x", "y"], description="d"))
    schema["required"] = ["a"]
    assert header_params(schema) == {"A": ("a",)}


# -- header_params: invalid declarations --------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "fragments"),
    [
        (obj(a=prop("string", "")), ["/properties/a", "must not be empty"]),
        (obj(a=prop("string", 5)), ["/properties/a", "must be a string"]),
        (obj(a=prop("string", "My Header")), ["/properties/a", "HTTP token", "' '"]),
        (obj(a=prop("string", "Region:1")), ["/properties/a", "HTTP token", "':'"]),
        (obj(a=prop("string", "Régión")), ["/properties/a", "non-ASCII"]),
        (obj(a=prop("string", "Bad\r\nX")), ["/properties/a", "control character"]),
        (obj(a=prop("string", "Tab\tX")), ["/properties/a", "control character"]),
        (obj(a=prop("string", "Del\x7f")), ["/properties/a", "control character"]),
        (obj(a=prop("string", 'Quo"te')), ["/properties/a", "HTTP token"]),
        (obj(a=prop("number", "A")), ["/properties/a", "type 'number'"]),
        (obj(a=prop("object", "A")), ["/properties/a", "type 'object'"]),
        (obj(a=prop("array", "A")), ["/properties/a", "type 'array'"]),
        (obj(a=prop("null", "A")), ["/properties/a", "type 'null'"]),
        (obj(a=prop(None, "A")), ["/properties/a", "no type"]),
        (obj(a=prop(["string", "null"], "A")), ["/properties/a", "single"]),
        (
            obj(a=prop("string", "Region"), b=prop("string", "Region")),
            ["/properties/b", "duplicates", "'Region'"],
        ),
        (
            obj(a=prop("string", "Region"), b=prop("integer", "REGION")),
            ["/properties/b", "case-insensitively"],
        ),
        (
            obj(a=obj(x=prop("string", "Dup")), b=prop("string", "dup")),
            ["/properties/b", "duplicates"],
        ),
    ],
    ids=repr,
)
def test_broken_declaration_is_rejected_naming_the_path_and_the_rule(
    schema: dict[str, Any], fragments: list[str]
) -> None:
    with pytest.raises(InvalidHeaderDeclaration) as caught:
        header_params(schema)
    for fragment in fragments:
        assert fragment in str(caught.value)
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize(
    ("schema", "where"),
    [
        ({"type": "object", "x-mcp-header": "Root"}, "/"),
        (obj(tags={"type": "array", "items": prop()}), "/properties/tags/items"),
        (
            obj(pair={"type": "array", "prefixItems": [{"type": "string"}, prop()]}),
            "/properties/pair/prefixItems/1",
        ),
        (obj(a={"anyOf": [prop(), {"type": "integer"}]}), "/properties/a/anyOf/0"),
        (obj(a={"oneOf": [{"type": "integer"}, prop()]}), "/properties/a/oneOf/1"),
        ({"type": "object", "allOf": [obj(a=prop())]}, "/allOf/0/properties/a"),
        ({"type": "object", "not": obj(a=prop())}, "/not/properties/a"),
        ({"type": "object", "if": obj(a=prop())}, "/if/properties/a"),
        ({"type": "object", "then": obj(a=prop())}, "/then/properties/a"),
        ({"type": "object", "else": obj(a=prop())}, "/else/properties/a"),
        (
            {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}, "$defs": {"A": prop()}},
            "/$defs/A",
        ),
        ({"type": "object", "definitions": {"A": obj(b=prop())}}, "/definitions/A/properties/b"),
        ({"type": "object", "additionalProperties": prop()}, "/additionalProperties"),
        ({"type": "object", "patternProperties": {"^x": prop()}}, "/patternProperties/^x"),
        (
            {"type": "object", "dependentSchemas": {"a": obj(b=prop())}},
            "/dependentSchemas/a/properties/b",
        ),
        ({"type": "object", "unevaluatedProperties": prop()}, "/unevaluatedProperties"),
        (
            obj(m={"type": "object", "additionalProperties": obj(x=prop())}),
            "/properties/m/additionalProperties/properties/x",
        ),
        (obj(a={"type": "array", "contains": prop()}), "/properties/a/contains"),
    ],
    ids=repr,
)
def test_declaration_off_the_properties_chain_is_rejected(
    schema: dict[str, Any], where: str
) -> None:
    with pytest.raises(InvalidHeaderDeclaration, match="not reachable") as caught:
        header_params(schema)
    assert f"at {where} " in str(caught.value)


def test_declaration_under_a_data_keyword_is_not_a_declaration() -> None:
    schema = obj(
        a={"type": "object", "default": {"x-mcp-header": "X"}, "examples": [{"x-mcp-header": "Y"}]}
    )
    assert header_params(schema) == {}


def test_json_pointer_in_messages_escapes_slash_and_tilde() -> None:
    with pytest.raises(InvalidHeaderDeclaration, match=r"/properties/a~1b~0c"):
        header_params(obj(**{"a/b~c": prop("number", "A")}))


def test_deep_properties_chain_is_walked_without_recursion_limits() -> None:
    schema: dict[str, Any] = prop("string", "Deep")
    for _ in range(3000):
        schema = obj(n=schema)
    assert header_params(schema) == {"Deep": ("n",) * 3000}


def test_refs_are_not_followed_so_shared_defs_cost_linear_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 40 definitions that each refer twice to the next: following the references would visit
    # 2**40 subschemas. The walk looks into each subschema written in the schema once (the root,
    # one property, 41 definitions and their 80 branches), and a visit past that fails at once
    # instead of running on.
    defs = {
        f"d{i}": {"anyOf": [{"$ref": f"#/$defs/d{i + 1}"}, {"$ref": f"#/$defs/d{i + 1}"}]}
        for i in range(40)
    }
    defs["d40"] = {"type": "string"}
    schema = {"type": "object", "properties": {"a": {"$ref": "#/$defs/d0"}}, "$defs": defs}
    budget = 1 + 1 + 41 + 80
    visits: list[tuple[str, ...]] = []
    listed = mcp_headers._subschemas

    def counted(
        node: Mapping[str, Any], at: tuple[str, ...]
    ) -> Iterator[tuple[Any, tuple[str, ...]]]:
        visits.append(at)
        assert len(visits) <= budget, f"more visits than the {budget} subschemas written"
        return listed(node, at)

    monkeypatch.setattr(mcp_headers, "_subschemas", counted)
    assert header_params(schema) == {}
    assert len(visits) == budget
    assert len(set(visits)) == budget  # each place once


# -- encode_header_value ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        # HTTP-16 examples
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        ("\tindented", "=?base64?CWluZGVudGVk?="),
        ("us west 1", "us west 1"),
        ("", ""),
        # HTTP-15 conversions
        ("us-west1", "us-west1"),
        (42, "42"),
        (-7, "-7"),
        (0, "0"),
        (True, "true"),
        (False, "false"),
        (2**53 - 1, "9007199254740991"),
        (-(2**53 - 1), "-9007199254740991"),
        # more values that cannot be plain
        ("trailing ", "=?base64?dHJhaWxpbmcg?="),
        ("a\r\nb", "=?base64?YQ0KYg==?="),
        ("del\x7f", "=?base64?ZGVsfw==?="),
        ("nul\x00", "=?base64?bnVsAA==?="),
        ("café", "=?base64?Y2Fmw6k=?="),
        # values that only look like the sentinel in part stay plain
        ("=?base64?abc", "=?base64?abc"),
        ("abc?=", "abc?="),
        ("=?BASE64?abc?=", "=?BASE64?abc?="),
        ("file:///path/to/file%20name.txt", "file:///path/to/file%20name.txt"),
        ("https://example.com/resource?id=123", "https://example.com/resource?id=123"),
    ],
    ids=repr,
)
def test_values_are_encoded_plain_when_safe_and_as_base64_otherwise(
    value: Any, encoded: str
) -> None:
    assert encode_header_value(value) == encoded


@pytest.mark.parametrize("value", [2**53, -(2**53), 10**20])
def test_integers_beyond_the_safe_range_are_refused(value: int) -> None:
    with pytest.raises(ValueError, match="2\\*\\*53"):
        encode_header_value(value)


@pytest.mark.parametrize("value", [1.5, None, [1], {"a": 1}])
def test_other_types_cannot_be_encoded(value: Any) -> None:
    with pytest.raises(TypeError):
        encode_header_value(value)


@pytest.mark.parametrize(
    "value",
    [
        "plain",
        "",
        " ",
        "  x  ",
        "Hello, 世界",
        "=?base64?literal?=",
        "a\tb",
        "\x00\x1f\x7f",
        "emoji 🙂",
        "=?base64??=",
    ],
)
def test_every_string_survives_encoding_then_decoding(value: str) -> None:
    assert decode_header_value(encode_header_value(value)) == value


# -- decode_header_value ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "decoded"),
    [
        ("=?base64?SGVsbG8=?=", "Hello"),
        ("=?base64?SGVsbG8sIOS4lueVjA==?=", "Hello, 世界"),
        ("=?base64??=", ""),
        # literals: no exact lowercase prefix and suffix
        ("SGVsbG8=", "SGVsbG8="),
        ("=?base64?SGVsbG8=", "=?base64?SGVsbG8="),
        ("SGVsbG8=?=", "SGVsbG8=?="),
        ("=?BASE64?SGVsbG8=?=", "=?BASE64?SGVsbG8=?="),
        ("=?Base64?SGVsbG8=?=", "=?Base64?SGVsbG8=?="),
        ("=?base64?=", "=?base64?="),
        ("us west 1", "us west 1"),
        ("tab\tinside", "tab\tinside"),
        ("", ""),
        # optional whitespace around a field value is not part of it
        ("  foo  ", "foo"),
        ("\t=?base64?SGVsbG8=?= ", "Hello"),
    ],
    ids=repr,
)
def test_received_values_decode_only_the_exact_sentinel(raw: str, decoded: str) -> None:
    assert decode_header_value(raw) == decoded


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("=?base64?SGVsbG8?=", "multiple of 4"),
        ("=?base64?SGVs!!!bG8=?=", "outside the Base64 alphabet"),
        ("=?base64?SGVs bG8=?=", "outside the Base64 alphabet"),
        ("=?base64?SGV=sbG8=?=", "misplaced"),
        ("=?base64?SGVsbG8===?=", "misplaced"),
        ("=?base64?SGVsbG8-?=", "outside the Base64 alphabet"),
        ("=?base64?SGVsbG9=?=", "canonical"),
        ("=?base64?/w==?=", "UTF-8"),
    ],
    ids=repr,
)
def test_malformed_base64_is_an_error_with_the_reason(raw: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        decode_header_value(raw)


@pytest.mark.parametrize(
    "raw", ["caf\u00e9", "a\x00b", "line\nbreak", "bell\x07", "del\x7f", "\u4e16"]
)
def test_plain_values_with_invalid_characters_are_errors(raw: str) -> None:
    with pytest.raises(ValueError, match="invalid characters"):
        decode_header_value(raw)


# -- header_matches_body ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("decoded", "body", "matches"),
    [
        ("abc", "abc", True),
        ("ABC", "abc", False),
        ("abc ", "abc", False),
        ("", "", True),
        ("42", "42", True),
        ("42", 42, True),
        ("42.0", 42, True),
        ("4.2e1", 42, True),
        ("042", 42, True),
        ("-7", -7, True),
        ("+7", 7, True),
        ("42", 42.0, True),
        ("43", 42, False),
        ("042x", 42, False),
        ("42.", 42, False),
        ("0x2a", 42, False),
        ("4_2", 42, False),
        ("NaN", 42, False),
        ("Infinity", 42, False),
        ("", 0, False),
        ("9007199254740993", 9007199254740993, True),
        ("9007199254740992", 9007199254740993, False),
        ("true", True, True),
        ("false", False, True),
        ("True", True, False),
        ("TRUE", True, False),
        ("1", True, False),
        ("false", True, False),
        ("true", "true", True),
        ("42", None, False),
        ("42", [42], False),
        ("a", {"a": 1}, False),
    ],
    ids=repr,
)
def test_header_is_compared_with_the_body_by_the_body_type(
    decoded: str, body: Any, matches: bool
) -> None:
    assert header_matches_body(decoded, body) is matches


# -- mirrored_headers ---------------------------------------------------------------------------

CUSTOM_HEADERS_SCHEMA = obj(
    region=prop("string", "Region"),
    priority=prop("integer", "Priority"),
    verbose=prop("boolean", "Verbose"),
    debug=prop("boolean", "Debug"),
    empty=prop("string", "EmptyVal"),
    method=prop("string", "Method"),
    non_ascii=prop("string", "NonAscii"),
    whitespace=prop("string", "Whitespace"),
    leading=prop("string", "LeadingSpace"),
    trailing=prop("string", "TrailingSpace"),
    control=prop("string", "ControlChar"),
    crlf=prop("string", "CrLf"),
    tab=prop("string", "Tab"),
    internal=prop("string", "InternalSpace"),
    float_val={"type": "number"},
    query={"type": "string"},
)


def test_client_mirrors_each_annotated_argument_with_its_encoding() -> None:
    params = header_params(CUSTOM_HEADERS_SCHEMA)
    arguments = {
        "region": "us-west1",
        "priority": 42,
        "verbose": False,
        "debug": True,
        "empty": "",
        "method": "test-method",
        "non_ascii": "日本語",
        "whitespace": "  both  ",
        "leading": " lead",
        "trailing": "trail ",
        "control": "a\x01b",
        "crlf": "a\r\nb",
        "tab": "a\tb",
        "internal": "us west 1",
        "float_val": 1.5,
        "query": "q",
    }
    headers = mirrored_headers(params, arguments)
    assert headers == {
        "Region": "us-west1",
        "Priority": "42",
        "Verbose": "false",
        "Debug": "true",
        "EmptyVal": "",
        "Method": "test-method",
        "NonAscii": "=?base64?5pel5pys6Kqe?=",
        "Whitespace": "=?base64?ICBib3RoICA=?=",
        "LeadingSpace": "=?base64?IGxlYWQ=?=",
        "TrailingSpace": "=?base64?dHJhaWwg?=",
        "ControlChar": "=?base64?YQFi?=",
        "CrLf": "=?base64?YQ0KYg==?=",
        "Tab": "=?base64?YQli?=",
        "InternalSpace": "us west 1",
    }
    for name, path in params.items():
        assert header_matches_body(decode_header_value(headers[name]), arguments[path[0]])


def test_null_or_absent_arguments_get_no_header() -> None:
    params = header_params(
        obj(verbose=prop("boolean", "Verbose"), org=obj(tenant=prop("string", "Tenant")))
    )
    assert mirrored_headers(params, {"verbose": None}) == {}
    assert mirrored_headers(params, {"org": None}) == {}
    assert mirrored_headers(params, {"org": {"tenant": "t"}}) == {"Tenant": "t"}
    assert mirrored_headers(params, None) == {}


def test_integral_float_argument_is_sent_as_an_integer() -> None:
    params = header_params(obj(n=prop("integer", "N")))
    assert mirrored_headers(params, {"n": 42.0}) == {"N": "42"}


@pytest.mark.parametrize("value", [1.5, [1], {"a": 1}])
def test_argument_of_the_wrong_type_cannot_be_mirrored(value: Any) -> None:
    params = header_params(obj(n=prop("integer", "N")))
    with pytest.raises(ValueError, match="'N'"):
        mirrored_headers(params, {"n": value})


def test_headers_module_imports_only_the_standard_library_and_the_errors() -> None:
    import ast
    import sys
    from pathlib import Path

    import mcpkit.protocol.mcp_headers as module

    tree = ast.parse(Path(module.__file__).read_text())
    imported = {
        (node.module if isinstance(node, ast.ImportFrom) else alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
        if not (isinstance(node, ast.ImportFrom) and node.module is None)
        if not (isinstance(node, ast.ImportFrom) and node.module == "mcpkit.errors")
    }
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}
