"""Limits besides a parameter's type, as FastMCP and pydantic users write them: pydantic's
`Field(ge=..., pattern=...)` (in `Annotated` or as the default), annotated_types' `Ge`, `Len`,
`Interval`..., and the `conint`/`constr` types. Each is published in the tool's input schema
and held to on every call, the refusal naming its keyword; what JSON Schema cannot say is
refused at registration in one line. Every message the server sends is checked against the
official schema (the `wire_factory` connection)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any

import annotated_types as at
import jsonschema
import pytest
from pydantic import AfterValidator, Field, StringConstraints, conint, conlist, constr
from typing_extensions import Doc

from mcpkit import Server
from mcpkit.schema.functions import ArgumentsError, derive_signature


def limited_server() -> Server:
    server = Server("limits", "1.0.0")

    @server.tool()
    def pick(n: Annotated[int, Field(ge=1, le=10, description="which one")]) -> int:
        """Picks one of ten."""
        return n

    @server.tool()
    def named(
        code: Annotated[str, StringConstraints(min_length=2, max_length=4, pattern=r"^[A-Z]+$")],
        tags: Annotated[list[str], at.Len(1, 3)] = ["x"],  # noqa: B006
        ratio: Annotated[float, at.Interval(gt=0, lt=1)] = 0.5,
        step: conint(multiple_of=5) = 5,  # type: ignore[valid-type]
        count: int = Field(default=3, gt=0, examples=[4], title="Count"),
    ) -> str:
        return f"{code} {tags} {ratio} {step} {count}"

    return server


async def tools_of(wire: Any) -> dict[str, dict[str, Any]]:
    listed = await wire.request("tools/list")
    return {t["name"]: t for t in listed["result"]["tools"]}


async def call(wire: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    reply = await wire.request("tools/call", {"name": name, "arguments": arguments})
    assert "error" not in reply, reply
    return reply["result"]  # type: ignore[no-any-return]


async def test_a_field_range_is_published_and_refuses_0_and_11_naming_the_limit(
    wire_factory: Any,
) -> None:
    wire = wire_factory(limited_server())
    schema = (await tools_of(wire))["pick"]["inputSchema"]
    assert schema["properties"]["n"] == {"type": "integer", "minimum": 1, "maximum": 10,
                                         "description": "which one"}
    for sent, keyword, words in ((0, "minimum", "at least 1"), (11, "maximum", "at most 10")):
        result = await call(wire, "pick", {"n": sent})
        assert result["isError"] is True
        text = result["content"][0]["text"]
        assert text == (f"Invalid arguments for tool 'pick': arguments.n: must be {words} "
                        f"({keyword}), got integer {sent}")
    for fine in (1, 10):
        result = await call(wire, "pick", {"n": fine})
        assert "isError" not in result and result["structuredContent"] == {"result": fine}


async def test_every_kind_of_limit_is_published_and_checked(wire_factory: Any) -> None:
    wire = wire_factory(limited_server())
    schema = (await tools_of(wire))["named"]["inputSchema"]
    props = schema["properties"]
    assert props["code"] == {"type": "string", "minLength": 2, "maxLength": 4,
                             "pattern": "^[A-Z]+$"}
    assert props["tags"]["minItems"] == 1 and props["tags"]["maxItems"] == 3
    assert props["ratio"]["exclusiveMinimum"] == 0 and props["ratio"]["exclusiveMaximum"] == 1
    assert props["step"]["multipleOf"] == 5
    assert props["count"] == {"type": "integer", "exclusiveMinimum": 0, "title": "Count",
                              "examples": [4], "default": 3}
    assert schema["required"] == ["code"]
    bad = {"code": "abcde", "tags": [], "ratio": 1.0, "step": 7, "count": 0}
    result = await call(wire, "named", bad)
    assert result["isError"] is True
    text = result["content"][0]["text"]
    for expected in ("arguments.code: must have at most 4 characters (maxLength), got 5",
                     "arguments.code: must match the pattern '^[A-Z]+$' (pattern)",
                     "arguments.tags: must have at least 1 items (minItems), got 0",
                     "arguments.ratio: must be less than 1 (exclusiveMaximum)",
                     "arguments.step: must be a multiple of 5 (multipleOf), got integer 7",
                     "arguments.count: must be greater than 0 (exclusiveMinimum)"):
        assert expected in text
    # The published schema says the same: jsonschema refuses the same arguments.
    assert not jsonschema.Draft202012Validator(schema).is_valid(bad)
    fine = await call(wire, "named", {"code": "AB"})
    assert fine["content"][0]["text"] == "AB ['x'] 0.5 5 3"  # count's Field default, filled in


def test_the_published_schema_and_the_check_agree_value_by_value() -> None:
    def f(n: Annotated[int, at.Ge(-3), at.Lt(4), at.MultipleOf(2)],
          s: constr(min_length=1, max_length=2),  # type: ignore[valid-type]
          xs: conlist(int, max_length=2),  # type: ignore[valid-type]
          d: Annotated[dict[str, int], at.MinLen(1)]) -> None:
        """Limits of every kind."""

    signature = derive_signature(f)
    validator = jsonschema.Draft202012Validator(signature.input_schema)
    base = {"n": 0, "s": "a", "xs": [], "d": {"k": 1}}
    for key, values in {"n": [-5, -4, -3, -2, 0, 1, 2, 3, 4, 6], "s": ["", "a", "ab", "abc"],
                        "xs": [[], [1], [1, 2], [1, 2, 3]], "d": [{}, {"a": 1}]}.items():
        for value in values:
            arguments = {**base, key: value}
            try:
                signature.validate(arguments)
                checked = True
            except ArgumentsError:
                checked = False
            assert checked == validator.is_valid(arguments), (key, value)


def test_field_as_the_default_with_a_factory_gives_each_call_its_own_value() -> None:
    def f(items: list[int] = Field(default_factory=list, max_length=2)) -> None:  # noqa: B008
        """A list that starts empty."""

    signature = derive_signature(f)
    assert "required" not in signature.input_schema
    first, second = signature.validate({}), signature.validate({})
    assert first == {"items": []} and first["items"] is not second["items"]
    assert signature.parameters[0].required is False


def test_a_doc_and_deprecated_and_json_schema_extra_are_published() -> None:
    def f(n: Annotated[int, Doc("how many"), Field(deprecated=True,
                                                   json_schema_extra={"x-unit": "cm"})]) -> None:
        """Annotations only."""

    prop = derive_signature(f).input_schema["properties"]["n"]
    assert prop == {"type": "integer", "description": "how many", "deprecated": True,
                    "x-unit": "cm"}


def test_a_limit_on_an_optional_value_lets_null_through() -> None:
    def f(n: Annotated[int, Field(ge=1)] | None = None) -> None:
        """May be left out."""

    signature = derive_signature(f)
    assert signature.validate({"n": None}) == {"n": None}
    with pytest.raises(ArgumentsError, match="minimum"):
        signature.validate({"n": 0})


@pytest.mark.parametrize(("annotation", "says"), [
    (Annotated[int, at.Predicate(lambda n: n % 2 == 0)], "annotated_types.Predicate cannot be "
     "published"),
    (Annotated[int, AfterValidator(lambda n: n)], "pydantic's AfterValidator cannot be published"),
    (Annotated[str, Field(alias="other")], "Field(alias=...) has no meaning"),
    (Annotated[str, StringConstraints(strip_whitespace=True)], "strip_whitespace=True cannot be"),
    (Annotated[str, Field(ge=1)], "ge=1 limits a number, and this value is string"),
    (Annotated[int, Field(pattern="^a")], "pattern= limits a string, and this value is integer"),
    (Annotated[int, Field(min_length=1)], "min_length=1 limits a length"),
    (Annotated[str, Field(pattern="(")], "is not a regular expression"),
    (Annotated[str, Field(json_schema_extra=lambda s: None)], "json_schema_extra=) as a function"),
    (list[Annotated[int, Field(default=1)]], "a Field default means something only for a"),
])
def test_what_json_schema_cannot_say_is_refused_at_registration(annotation: Any,
                                                                says: str) -> None:
    def f(value: Any) -> None:
        """Refused."""

    f.__annotations__ = {"value": annotation, "return": None}
    with pytest.raises(TypeError) as caught:
        derive_signature(f)
    message = str(caught.value)
    assert "\n" not in message and message.startswith("function ")
    assert "parameter 'value'" in message and says in message, message


def test_a_registered_tool_with_an_unpublishable_limit_is_refused_by_the_server() -> None:
    server = Server("limits")
    with pytest.raises(TypeError, match=re.escape("parameter 'n'")):
        @server.tool()
        def odd(n: Annotated[int, at.Predicate(lambda n: n % 2 == 1)]) -> int:
            return n


@dataclass
class Box:
    side: Annotated[float, Field(gt=0)]


def test_limits_on_a_dataclass_field_and_a_return_value_are_held_too() -> None:
    def make(box: Box) -> Annotated[int, at.Le(100)]:
        """A box."""
        return 1

    signature = derive_signature(make)
    defs = signature.input_schema["$defs"]
    assert defs["Box"]["properties"]["side"]["exclusiveMinimum"] == 0
    with pytest.raises(ArgumentsError, match=r"arguments\.box\.side: must be greater than 0"):
        signature.validate({"box": {"side": 0}})
    assert signature.output_schema is not None
    assert signature.output_schema["properties"]["result"]["maximum"] == 100
