"""Type hints to JSON Schema, argument validation and result conversion (mcpkit.schema.functions)."""

from __future__ import annotations

import copy
import dataclasses
import enum
import inspect
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from pathlib import PurePosixPath
from typing import Annotated, Any, Literal, NotRequired, Optional, Required, TypedDict

import jsonschema
import pydantic  # in the test extra: a missing pydantic must fail the module, not skip 236 tests
import pytest

from mcpkit.schema.functions import (
    ArgumentsError,
    Param,
    ParameterInfo,
    Signature,
    derive_signature,
    describe_parameters,
    output_to_json,
)

# -- fixtures: module-level types, so string annotations resolve ---------------------------------


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclass
class Point:
    """A point on the plane."""

    x: int
    y: int = 0


@dataclass
class Segment:
    start: Point
    end: Point


@dataclass
class Tree:
    value: int
    children: list[Tree] = field(default_factory=list)


@dataclass
class Positive:
    n: int

    def __post_init__(self) -> None:
        if self.n <= 0:
            raise ValueError("n must be positive")


@dataclass
class Described:
    size: Annotated[int, "size in bytes"]
    label: str = field(default="x", metadata={"description": "a label"})


class Movie(TypedDict):
    title: str
    year: NotRequired[int]


class Options(TypedDict, total=False):
    name: Required[str]
    verbose: bool


class Address(pydantic.BaseModel):
    street: str
    city: str


class User(pydantic.BaseModel):
    """A user."""

    name: str = pydantic.Field(description="full name")
    age: int
    address: Address | None = None
    user_id: str = pydantic.Field(default="u", alias="userId")


class Node(pydantic.BaseModel):
    label: str
    children: list[Node] = []


class Context:
    """Stands in for the server's handler context."""


class Unsupported:
    pass


class TextBlock:
    """Stands in for a content-block class the caller passes through."""


def fn_with(annotation: Any, default: Any = inspect.Parameter.empty) -> Callable[..., Any]:
    """A one-parameter function `tool(value: annotation = default)`, built at run time."""

    def tool(value: Any = None) -> None:
        return None

    tool.__annotations__ = {"value": annotation}
    tool.__defaults__ = None if default is inspect.Parameter.empty else (default,)
    return tool


def returning(annotation: Any) -> Callable[..., Any]:
    def tool() -> None:
        return None

    tool.__annotations__ = {"return": annotation}
    return tool


def derive(fn: Callable[..., Any], **options: Any) -> Signature:
    """derive_signature, plus the check that every schema it made is valid 2020-12."""
    sig = derive_signature(fn, **options)
    jsonschema.Draft202012Validator.check_schema(sig.input_schema)
    if sig.output_schema is not None:
        jsonschema.Draft202012Validator.check_schema(sig.output_schema)
    return sig


def value_schema(annotation: Any, default: Any = inspect.Parameter.empty) -> dict[str, Any]:
    return derive(fn_with(annotation, default)).input_schema["properties"]["value"]


def problems_of(sig: Signature, arguments: Any) -> list[str]:
    with pytest.raises(ArgumentsError) as caught:
        sig.validate(arguments)
    assert str(caught.value) == "; ".join(caught.value.problems)
    return caught.value.problems


# -- input schemas ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        (str, {"type": "string"}),
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (bool, {"type": "boolean"}),
        (None, {"type": "null"}),
        (Any, {}),
        (Optional[int], {"type": ["integer", "null"]}),  # noqa: UP045
        (int | None, {"type": ["integer", "null"]}),
        (Literal["a", "b"], {"type": "string", "enum": ["a", "b"]}),
        (Literal["only"], {"type": "string", "const": "only"}),
        (Literal[1, "a"], {"enum": [1, "a"]}),
        (Literal[Color.RED], {"type": "string", "const": "red"}),
        (Literal["x", None], {"enum": ["x", None]}),
        (Color, {"type": "string", "enum": ["red", "green"]}),
        (Level, {"type": "integer", "enum": [1, 2]}),
        (datetime, {"type": "string", "format": "date-time"}),
        (date, {"type": "string", "format": "date"}),
        (time, {"type": "string", "format": "time"}),
        (uuid.UUID, {"type": "string", "format": "uuid"}),
        (list[int], {"type": "array", "items": {"type": "integer"}}),
        (list, {"type": "array", "items": {}}),
        (Sequence[str], {"type": "array", "items": {"type": "string"}}),
        (tuple[int, ...], {"type": "array", "items": {"type": "integer"}}),
        (
            tuple[int, str],
            {
                "type": "array",
                "minItems": 2,
                "maxItems": 2,
                "prefixItems": [{"type": "integer"}, {"type": "string"}],
                "items": False,
            },
        ),
        (set[str], {"type": "array", "items": {"type": "string"}, "uniqueItems": True}),
        (frozenset[int], {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}),
        (dict[str, int], {"type": "object", "additionalProperties": {"type": "integer"}}),
        (Mapping[str, float], {"type": "object", "additionalProperties": {"type": "number"}}),
        (dict, {"type": "object", "additionalProperties": {}}),
        (int | str, {"anyOf": [{"type": "integer"}, {"type": "string"}]}),
        (
            list[int] | None,
            {"anyOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "null"}]},
        ),
        (Annotated[int, "how many"], {"type": "integer", "description": "how many"}),
        (
            Annotated[int, Param(description="how many", title="Count")],
            {"type": "integer", "title": "Count", "description": "how many"},
        ),
        (
            Annotated[int, pydantic.Field(description="from a Field")],
            {"type": "integer", "description": "from a Field"},
        ),
        (
            list[Annotated[str, "a tag"]],
            {"type": "array", "items": {"type": "string", "description": "a tag"}},
        ),
    ],
    ids=repr,
)
def test_each_supported_annotation_becomes_its_json_schema(
    annotation: Any, expected: dict[str, Any]
) -> None:
    assert value_schema(annotation) == expected


def test_input_schema_root_is_an_object_listing_properties_in_declaration_order() -> None:
    def tool(b: int, a: str, c: bool = False) -> None: ...

    schema = derive(tool).input_schema
    assert schema == {
        "type": "object",
        "properties": {
            "b": {"type": "integer"},
            "a": {"type": "string"},
            "c": {"type": "boolean", "default": False},
        },
        "required": ["b", "a"],
    }
    assert list(schema["properties"]) == ["b", "a", "c"]


def test_optional_parameter_is_not_required() -> None:
    def tool(needed: int, maybe: int | None = None, later: str = "x") -> None: ...

    assert derive(tool).input_schema["required"] == ["needed"]


def test_function_without_parameters_gets_a_closed_empty_object_schema() -> None:
    def tool() -> None: ...

    assert derive(tool).input_schema == {"type": "object", "additionalProperties": False}


def test_schema_without_required_parameters_has_no_required_list() -> None:
    def tool(a: int = 1) -> None: ...

    assert "required" not in derive(tool).input_schema


@pytest.mark.parametrize(
    ("annotation", "default", "expected"),
    [
        (int, 3, 3),
        (str, "x", "x"),
        (Color, Color.GREEN, "green"),
        (datetime, datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC), "2024-01-02T03:04:05+00:00"),
        (list[int], (1, 2), [1, 2]),
        (Optional[int], None, None),  # noqa: UP045
    ],
)
def test_json_serialisable_default_is_recorded_in_the_schema(
    annotation: Any, default: Any, expected: Any
) -> None:
    assert value_schema(annotation, default)["default"] == expected


@pytest.mark.parametrize("default", [float("nan"), Unsupported(), timedelta(seconds=1)])
def test_default_that_is_not_json_is_left_out_of_the_schema(default: Any) -> None:
    schema = value_schema(Any, default)
    assert "default" not in schema
    assert derive(fn_with(Any, default)).input_schema.get("required") is None


def test_default_none_makes_a_plain_annotation_nullable() -> None:
    sig = derive(fn_with(int, None))
    assert sig.input_schema["properties"]["value"] == {"type": ["integer", "null"], "default": None}
    assert sig.validate({"value": None}) == {"value": None}


def test_docstring_is_the_description_and_is_cleaned() -> None:
    def tool() -> None:
        """Find things.

        Detail:
            indented.
        """

    assert derive(tool).description == "Find things.\n\nDetail:\n    indented."


def test_function_without_docstring_has_no_description() -> None:
    def tool() -> None: ...

    assert derive(tool).description is None


def test_google_style_args_section_describes_parameters() -> None:
    def tool(city: str, days: int = 1, units: str = "metric") -> None:
        """Weather forecast.

        Args:
            city: Name of the city,
                in English.
            days (int): How many days.

        Returns:
            The forecast.
        """

    sig = derive(tool)
    props = sig.input_schema["properties"]
    assert props["city"]["description"] == "Name of the city, in English."
    assert props["days"]["description"] == "How many days."
    assert "description" not in props["units"]
    assert [p.description for p in sig.parameters] == [
        "Name of the city, in English.",
        "How many days.",
        None,
    ]


def test_numpy_style_parameters_section_describes_parameters() -> None:
    def tool(city: str, days: int = 1) -> None:
        """Weather forecast.

        Parameters
        ----------
        city : str
            Name of the city.
        days : int
            How many days.

        Returns
        -------
        str
        """

    props = derive(tool).input_schema["properties"]
    assert props["city"]["description"] == "Name of the city."
    assert props["days"]["description"] == "How many days."


def test_annotated_description_wins_over_the_docstring() -> None:
    def tool(city: Annotated[str, "from Annotated"]) -> None:
        """Doc.

        Args:
            city: from the docstring
        """

    assert derive(tool).input_schema["properties"]["city"]["description"] == "from Annotated"


def test_injected_parameters_are_left_out_of_schema_and_parameters() -> None:
    def tool(ctx: Context, query: str, other: Optional[Context] = None) -> None: ...  # noqa: UP045

    sig = derive(tool, injectables=(Context,))
    assert sig.injected == {"ctx": Context, "other": Context}
    assert list(sig.input_schema["properties"]) == ["query"]
    assert [p.name for p in sig.parameters] == ["query"]
    assert sig.validate({"query": "q", "ctx": "forged"}) == {"query": "q"}


def test_only_injected_parameters_means_no_arguments() -> None:
    def tool(ctx: Context) -> None: ...

    sig = derive(tool, injectables=(Context,))
    assert sig.input_schema == {"type": "object", "additionalProperties": False}


def test_parameters_report_name_description_required_default_and_title() -> None:
    def tool(
        a: Annotated[str, Param(description="first", title="A")],
        b: int = 2,
        ctx: Context | None = None,
    ) -> None: ...

    assert derive(tool, injectables=(Context,)).parameters == (
        ParameterInfo("a", "first", True, None, "A"),
        ParameterInfo("b", None, False, 2, None),
    )


def test_describe_parameters_does_not_need_supported_types() -> None:
    def prompt(topic: Unsupported, tone: str = "dry") -> None:
        """Write.

        Args:
            topic: what about
        """

    assert describe_parameters(prompt) == (
        ParameterInfo("topic", "what about", True, None, None),
        ParameterInfo("tone", None, False, "dry", None),
    )


def test_nested_dataclass_is_defined_once_in_defs() -> None:
    def tool(segment: Segment, extra: Point | None = None) -> None: ...

    schema = derive(tool).input_schema
    assert schema["properties"]["segment"] == {"$ref": "#/$defs/Segment"}
    assert schema["$defs"] == {
        "Segment": {
            "type": "object",
            "properties": {"start": {"$ref": "#/$defs/Point"}, "end": {"$ref": "#/$defs/Point"}},
            "required": ["start", "end"],
        },
        "Point": {
            "type": "object",
            "description": "A point on the plane.",
            "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "default": 0}},
            "required": ["x"],
        },
    }


def test_defs_hold_only_referenced_types() -> None:
    def tool(p: Point) -> None: ...

    assert set(derive(tool).input_schema["$defs"]) == {"Point"}
    assert "$defs" not in derive(fn_with(int)).input_schema


def test_dataclass_field_descriptions_come_from_annotated_or_metadata() -> None:
    defs = derive(fn_with(Described)).input_schema["$defs"]
    assert defs["Described"]["properties"] == {
        "size": {"type": "integer", "description": "size in bytes"},
        "label": {"type": "string", "description": "a label", "default": "x"},
    }


def test_recursive_dataclass_refers_to_itself_and_validates_at_depth() -> None:
    sig = derive(fn_with(Tree))
    tree_def = sig.input_schema["$defs"]["Tree"]
    assert tree_def["properties"]["children"] == {
        "type": "array",
        "items": {"$ref": "#/$defs/Tree"},
    }
    value = sig.validate(
        {"value": {"value": 1, "children": [{"value": 2, "children": [{"value": 3}]}]}}
    )["value"]
    assert value == Tree(1, [Tree(2, [Tree(3)])])
    assert problems_of(
        sig, {"value": {"value": 1, "children": [{"value": 2, "children": [{"value": "x"}]}]}}
    ) == ["arguments.value.children[0].children[0].value: expected integer, got string 'x'"]


def test_typeddict_required_and_notrequired_keys() -> None:
    defs = derive(fn_with(Movie)).input_schema["$defs"]
    assert defs["Movie"] == {
        "type": "object",
        "properties": {"title": {"type": "string"}, "year": {"type": "integer"}},
        "required": ["title"],
    }


def test_typeddict_total_false_with_required_key() -> None:
    defs = derive(fn_with(Options)).input_schema["$defs"]
    assert defs["Options"]["required"] == ["name"]
    assert set(defs["Options"]["properties"]) == {"name", "verbose"}


def test_pydantic_model_schema_comes_from_the_model() -> None:
    schema = derive(fn_with(User)).input_schema
    assert schema["properties"]["value"] == {"$ref": "#/$defs/User"}
    user = schema["$defs"]["User"]
    assert user["properties"]["name"]["description"] == "full name"
    assert "userId" in user["properties"]
    assert user["required"] == ["name", "age"]
    assert user["properties"]["address"]["anyOf"][0] == {"$ref": "#/$defs/Address"}
    assert schema["$defs"]["Address"]["required"] == ["street", "city"]


def test_pydantic_model_defs_merge_with_a_dataclass_of_the_same_name() -> None:
    @dataclass
    class Address:  # a different class that pydantic's Address def must not overwrite
        zip: str

    def tool(user: User, home: Address) -> None: ...

    tool.__annotations__ = {"user": User, "home": Address, "return": None}
    schema = derive(tool).input_schema
    names = set(schema["$defs"])
    assert names == {"User", "Address", "Address2"}
    home_ref = schema["properties"]["home"]["$ref"]
    assert schema["$defs"][home_ref.split("/")[-1]]["properties"] == {"zip": {"type": "string"}}


def test_recursive_pydantic_model_refers_to_its_own_def() -> None:
    schema = derive(fn_with(Node)).input_schema
    assert schema["properties"]["value"] == {"$ref": "#/$defs/Node"}
    assert schema["$defs"]["Node"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}


def test_pydantic_model_is_validated_by_pydantic() -> None:
    sig = derive(fn_with(User))
    user = sig.validate(
        {"value": {"name": "Ada", "age": 36, "address": {"street": "s", "city": "c"}}}
    )["value"]
    assert isinstance(user, User)
    assert user.address == Address(street="s", city="c")
    problems = problems_of(sig, {"value": {"name": "Ada", "age": "old"}})
    assert len(problems) == 1
    assert problems[0].startswith("arguments.value.age: ")
    assert "integer" in problems[0]


@pytest.mark.parametrize(
    ("annotation", "shown"),
    [
        (bytes, "bytes"),
        (complex, "complex"),
        (Unsupported, "Unsupported"),
        (dict[int, str], "int"),
        (list[Unsupported], "Unsupported"),
        (timedelta, "timedelta"),
    ],
)
def test_unsupported_annotation_is_a_type_error_naming_function_parameter_and_type(
    annotation: Any, shown: str
) -> None:
    with pytest.raises(TypeError) as caught:
        derive_signature(fn_with(annotation))
    message = str(caught.value)
    assert "tool" in message
    assert "'value'" in message
    assert shown in message


def test_unsupported_field_type_inside_a_dataclass_names_the_field() -> None:
    @dataclass
    class Holder:
        blob: bytes

    with pytest.raises(TypeError, match=r"field 'blob'.*bytes"):
        derive_signature(fn_with(Holder))


def test_positional_only_parameter_is_refused() -> None:
    def tool(a: int, /) -> None: ...

    with pytest.raises(TypeError, match="positional-only"):
        derive_signature(tool)


def test_unresolvable_annotation_is_a_type_error() -> None:
    def tool(a: NoSuchType) -> None: ...  # type: ignore[name-defined]  # noqa: F821

    with pytest.raises(TypeError, match=r"tool.*NoSuchType"):
        derive_signature(tool)


def test_unannotated_parameter_accepts_anything() -> None:
    def tool(thing):  # type: ignore[no-untyped-def]
        return thing

    sig = derive(tool)
    assert sig.input_schema["properties"] == {"thing": {}}
    assert sig.validate({"thing": [1, {"a": None}]}) == {"thing": [1, {"a": None}]}


# -- x-mcp-header through Param ------------------------------------------------------------------


def test_param_header_marks_the_property_with_x_mcp_header() -> None:
    def tool(
        region: Annotated[str, Param(description="where", header="Region")], n: int = 1
    ) -> None: ...

    assert derive(tool).input_schema["properties"]["region"] == {
        "type": "string",
        "description": "where",
        "x-mcp-header": "Region",
    }


@pytest.mark.parametrize("annotation", [int, bool, Literal["a", "b"], Color])
def test_param_header_works_on_strings_integers_and_booleans(annotation: Any) -> None:
    schema = value_schema(Annotated[annotation, Param(header="H")])
    assert schema["x-mcp-header"] == "H"
    assert schema["type"] in ("string", "integer", "boolean")


def test_param_inside_optional_is_read_like_param_outside() -> None:
    inside = value_schema(Optional[Annotated[str, Param(description="d", header="H")]], None)  # noqa: UP045
    outside = value_schema(Annotated[Optional[str], Param(description="d", header="H")], None)  # noqa: UP045
    assert (
        inside
        == outside
        == {"type": "string", "description": "d", "default": None, "x-mcp-header": "H"}
    )


def test_optional_header_parameter_keeps_a_single_type_but_accepts_null() -> None:
    sig = derive(fn_with(Annotated[Optional[str], Param(header="Tenant")], None))  # noqa: UP045
    assert sig.input_schema["properties"]["value"] == {
        "type": "string",
        "default": None,
        "x-mcp-header": "Tenant",
    }
    assert sig.validate({"value": None}) == {"value": None}
    assert sig.validate({"value": "t"}) == {"value": "t"}


@pytest.mark.parametrize("annotation", [float, list[str], dict[str, str], Point, int | str])
def test_param_header_on_a_non_primitive_parameter_is_a_type_error(annotation: Any) -> None:
    with pytest.raises(TypeError, match=r"'value'.*header"):
        derive_signature(fn_with(Annotated[annotation, Param(header="H")]))


def test_param_header_inside_a_nested_type_is_a_type_error() -> None:
    @dataclass
    class Inner:
        region: Annotated[str, Param(header="Region")]

    with pytest.raises(TypeError, match="top-level"):
        derive_signature(fn_with(Inner))
    with pytest.raises(TypeError, match="top-level"):
        derive_signature(fn_with(list[Annotated[str, Param(header="Region")]]))


# -- validation: coercion -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("annotation", "sent", "received"),
    [
        (str, "x", "x"),
        (int, 5, 5),
        (int, 3.0, 3),
        (float, 2, 2.0),
        (float, 2.5, 2.5),
        (bool, False, False),
        (Any, {"a": [1]}, {"a": [1]}),
        (datetime, "2024-05-06T07:08:09Z", datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)),
        (date, "2024-05-06", date(2024, 5, 6)),
        (time, "07:08:09", time(7, 8, 9)),
        (
            uuid.UUID,
            "12345678-1234-5678-1234-567812345678",
            uuid.UUID("12345678-1234-5678-1234-567812345678"),
        ),
        (Color, "green", Color.GREEN),
        (Level, 2, Level.HIGH),
        (Literal["a", "b"], "b", "b"),
        (Literal[1, 2], 2.0, 2),
        (Literal[Color.RED], "red", Color.RED),
        (Literal["x", None], None, None),
        (list[int], [1, 2], [1, 2]),
        (tuple[int, ...], [1, 2], (1, 2)),
        (tuple[int, str], [1, "a"], (1, "a")),
        (set[str], ["a", "b"], {"a", "b"}),
        (list[datetime], ["2024-01-01T00:00:00"], [datetime(2024, 1, 1)]),
        (dict[str, Color], {"a": "red"}, {"a": Color.RED}),
        (Point, {"x": 1}, Point(1, 0)),
        (Movie, {"title": "T", "extra": 1}, {"title": "T"}),
        (Optional[Point], None, None),  # noqa: UP045
        (int | str, "7", "7"),
        (int | str, 7, 7),
    ],
    ids=repr,
)
def test_valid_arguments_are_coerced_to_the_annotated_types(
    annotation: Any, sent: Any, received: Any
) -> None:
    result = derive(fn_with(annotation)).validate({"value": sent})["value"]
    assert result == received
    assert type(result) is type(received)


def test_typeddict_argument_stays_a_dict_with_coerced_values() -> None:
    result = derive(fn_with(Movie)).validate({"value": {"title": "T", "year": 1999.0}})["value"]
    assert result == {"title": "T", "year": 1999}
    assert type(result["year"]) is int


def test_instances_of_the_annotated_class_pass_unchanged() -> None:
    point = Point(1, 2)
    user = User(name="a", age=1)
    assert derive(fn_with(Point)).validate({"value": point})["value"] is point
    assert derive(fn_with(User)).validate({"value": user})["value"] is user


# -- validation: problems -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("annotation", "sent", "problem"),
    [
        (str, 5, "arguments.value: expected string, got integer 5"),
        (int, "x", "arguments.value: expected integer, got string 'x'"),
        (int, True, "arguments.value: expected integer, got boolean true"),
        (int, 1.5, "arguments.value: expected integer, got number 1.5"),
        (float, False, "arguments.value: expected number, got boolean false"),
        (bool, 1, "arguments.value: expected boolean, got integer 1"),
        (bool, "true", "arguments.value: expected boolean, got string 'true'"),
        (str, None, "arguments.value: expected string, got null"),
        (str, [], "arguments.value: expected string, got array"),
        (int, {}, "arguments.value: expected integer, got object"),
        (
            datetime,
            "soon",
            "arguments.value: expected date-time string (ISO 8601), got string 'soon'",
        ),
        (
            date,
            "2024-13-01",
            "arguments.value: expected date string (YYYY-MM-DD), got string '2024-13-01'",
        ),
        (uuid.UUID, "nope", "arguments.value: expected UUID string, got string 'nope'"),
        (Color, "blue", "arguments.value: expected one of 'red', 'green', got string 'blue'"),
        (Literal[1, 2], True, "arguments.value: expected one of 1, 2, got boolean true"),
        (Literal["on"], "off", "arguments.value: expected 'on', got string 'off'"),
        (tuple[int, str], [1], "arguments.value: expected exactly 2 items, got 1"),
        (set[int], [1, 1], "arguments.value: items must be unique"),
        (
            dict[str, int],
            {"a": 1, "b c": "x"},
            "arguments.value[\"b c\"]: expected integer, got string 'x'",
        ),
        (Point, [1, 2], "arguments.value: expected object, got array"),
        (Positive, {"n": -1}, "arguments.value: n must be positive"),
        (int | str, 1.5, "arguments.value: expected integer or string, got number 1.5"),
    ],
    ids=repr,
)
def test_invalid_arguments_are_reported_with_path_and_reason(
    annotation: Any, sent: Any, problem: str
) -> None:
    assert problems_of(derive(fn_with(annotation)), {"value": sent}) == [problem]


def test_each_bad_item_of_a_list_is_reported() -> None:
    problems = problems_of(derive(fn_with(list[int])), {"value": [1, "2", 3, None]})
    assert problems == [
        "arguments.value[1]: expected integer, got string '2'",
        "arguments.value[3]: expected integer, got null",
    ]


def test_each_bad_field_of_a_dataclass_is_reported() -> None:
    problems = problems_of(derive(fn_with(Point)), {"value": {"y": "2"}})
    assert problems == [
        "arguments.value.x: missing required property",
        "arguments.value.y: expected integer, got string '2'",
    ]


def test_every_problem_is_listed_in_one_error() -> None:
    def tool(name: str, count: int, when: datetime) -> None: ...

    with pytest.raises(ArgumentsError) as caught:
        derive(tool).validate({"name": "ok", "count": "x"})
    assert (
        str(caught.value)
        == "arguments.count: expected integer, got string 'x'; arguments.when: missing required property"
    )
    assert caught.value.problems == [
        "arguments.count: expected integer, got string 'x'",
        "arguments.when: missing required property",
    ]
    assert isinstance(caught.value, ValueError)


def test_long_strings_are_shortened_in_problems() -> None:
    problems = problems_of(derive(fn_with(int)), {"value": "y" * 100})
    assert problems == [f"arguments.value: expected integer, got string '{'y' * 37}...'"]


def test_extra_arguments_are_dropped_for_derived_schemas() -> None:
    def tool(a: int) -> None: ...

    assert derive(tool).validate({"a": 1, "b": 2}) == {"a": 1}


def test_kwargs_function_receives_extra_arguments() -> None:
    def tool(a: int, **rest: Any) -> None: ...

    sig = derive(tool)
    assert sig.input_schema == {
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "required": ["a"],
    }
    assert sig.validate({"a": 1, "b": 2}) == {"a": 1, "b": 2}


def test_missing_optional_arguments_are_left_to_python_defaults() -> None:
    def tool(a: int = 5, b: str | None = None) -> None: ...

    assert derive(tool).validate({}) == {}


@pytest.mark.parametrize("arguments", [None, {}])
def test_function_without_parameters_accepts_no_arguments(arguments: Any) -> None:
    def tool() -> None: ...

    assert derive(tool).validate(arguments) == {}


def test_function_without_parameters_rejects_unexpected_arguments() -> None:
    def tool() -> None: ...

    assert problems_of(derive(tool), {"x": 1, "y": 2}) == [
        "arguments.x: unexpected property (this takes no arguments)",
        "arguments.y: unexpected property (this takes no arguments)",
    ]


@pytest.mark.parametrize("arguments", [[1], "x", 3])
def test_arguments_that_are_not_an_object_are_rejected(arguments: Any) -> None:
    def none() -> None: ...

    def one(a: int = 1) -> None: ...

    for fn in (none, one):
        assert problems_of(derive(fn), arguments)[0].startswith("arguments: expected object, got ")


def test_null_arguments_count_as_no_arguments() -> None:
    def tool(a: int = 1) -> None: ...

    def needs(a: int) -> None: ...

    assert derive(tool).validate(None) == {}
    assert problems_of(derive(needs), None) == ["arguments.a: missing required property"]


def test_any_mapping_is_accepted_as_arguments() -> None:
    from types import MappingProxyType

    def tool(a: int) -> None: ...

    assert derive(tool).validate(MappingProxyType({"a": 1})) == {"a": 1}


# -- raw user schemas ---------------------------------------------------------------------------

CONFORMANCE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
            "required": ["street", "city"],
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string", "format": "email"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


def contact(name: str, address: dict[str, str] | None = None, **rest: Any) -> None: ...


def test_raw_input_schema_is_kept_verbatim() -> None:
    original = copy.deepcopy(CONFORMANCE_SCHEMA)
    sig = derive(contact, input_schema=CONFORMANCE_SCHEMA)
    assert json.dumps(sig.input_schema) == json.dumps(original)
    assert original == CONFORMANCE_SCHEMA


def test_raw_input_schema_is_validated_with_its_own_rules() -> None:
    sig = derive_signature(contact, input_schema=CONFORMANCE_SCHEMA)
    ok = {
        "name": "Ada",
        "contactMethod": "phone",
        "phone": "123",
        "address": {"street": "s", "city": "c"},
    }
    assert sig.validate(ok) == ok
    problems = problems_of(sig, {"name": 5, "contactMethod": "phone", "email": "a@b", "zzz": 1})
    assert "arguments.name: expected string, got integer 5" in problems
    assert "arguments.phone: missing required property" in problems
    assert any(p.startswith("arguments: Additional properties are not allowed") for p in problems)


def test_raw_schema_arguments_are_limited_to_the_function_parameters() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}

    def tool(a: int) -> None: ...

    assert derive_signature(tool, input_schema=schema).validate({"a": 1, "b": 2}) == {"a": 1}


def test_raw_schema_validation_reports_nested_paths() -> None:
    sig = derive_signature(contact, input_schema=CONFORMANCE_SCHEMA)
    problems = problems_of(sig, {"name": "Ada", "email": "e", "address": {"street": 1}})
    assert "arguments.address.street: expected string, got integer 1" in problems
    assert "arguments.address.city: missing required property" in problems


@pytest.mark.parametrize(
    "ref",
    [
        "https://example.com/user.json",
        "http://127.0.0.1:9/canary#/x",
        "//example.com/x.json",
        "user.json",
        "file:///etc/passwd",
    ],
)
def test_raw_schema_with_a_non_local_ref_is_refused_at_registration(ref: str) -> None:
    schema = {"type": "object", "properties": {"user": {"$ref": ref}}}
    with pytest.raises(ValueError, match=r"\$ref not allowed") as caught:
        derive_signature(contact, input_schema=schema)
    assert "/properties/user/$ref" in str(caught.value)


def test_raw_schema_network_ref_is_called_remote() -> None:
    schema = {"type": "object", "$defs": {"x": {"items": [{"$ref": "https://evil.example/x"}]}}}
    with pytest.raises(ValueError, match=r"remote \$ref not allowed"):
        derive_signature(contact, input_schema=schema)


@pytest.mark.parametrize(
    "schema",
    [
        {
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/a"}},
            "$defs": {"a": {"type": "string"}},
        },
        {
            "type": "object",
            "properties": {"a": {"$ref": "#addressDef"}},
            "$defs": {"a": {"$anchor": "addressDef"}},
        },
        {
            "$id": "https://example.com/root.json",
            "type": "object",
            "properties": {
                "a": {"$ref": "https://example.com/root.json#/$defs/a"},
                "b": {"$ref": "item.json"},
            },
            "$defs": {"a": {"type": "string"}, "item": {"$id": "item.json", "type": "integer"}},
        },
        {
            "type": "object",
            "properties": {"a": {"const": {"$ref": "https://example.com/data-not-a-ref"}}},
        },
    ],
)
def test_raw_schema_with_same_document_refs_is_accepted(schema: dict[str, Any]) -> None:
    sig = derive_signature(contact, input_schema=schema)
    assert sig.input_schema == schema


@pytest.mark.parametrize(
    ("ref", "defs"),
    [
        ("#/$defs/missing", {"a": {"type": "string"}}),
        ("#/properties/nope", {}),
        ("#noSuchAnchor", {"a": {"$anchor": "other"}}),
    ],
)
def test_raw_schema_with_a_dangling_local_ref_is_refused(ref: str, defs: dict[str, Any]) -> None:
    schema = {"type": "object", "properties": {"a": {"$ref": ref}}, "$defs": defs}
    with pytest.raises(ValueError, match="points to nothing"):
        derive_signature(contact, input_schema=schema)


def test_raw_schema_local_pointer_may_use_escapes_and_array_indexes() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a/b": {"type": "integer"},
            "c": {"$ref": "#/properties/a~1b"},
            "d": {"$ref": "#/allOf/0"},
            "e": {"$ref": "#"},
        },
        "allOf": [{"type": "object"}],
    }
    sig = derive_signature(contact, input_schema=schema)
    assert problems_of(sig, {"c": "x"}) == ["arguments.c: expected integer, got string 'x'"]


@pytest.mark.parametrize(
    "dialect",
    [
        "https://json-schema.org/draft/2019-09/schema",
        "http://json-schema.org/draft-07/schema#",
        "https://json-schema.org/draft/2020-12/schema",
    ],
)
def test_raw_schema_in_a_supported_dialect_is_accepted(dialect: str) -> None:
    schema = {"$schema": dialect, "type": "object", "properties": {"name": {"type": "string"}}}
    assert derive_signature(contact, input_schema=schema).validate({"name": "x"}) == {"name": "x"}


def test_raw_schema_is_validated_by_its_declared_dialect() -> None:
    # In draft-07 an array under "items" checks items by position; 2020-12 would reject the schema.
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "pair": {"type": "array", "items": [{"type": "integer"}, {"type": "string"}]}
        },
    }

    def tool(pair: Any) -> None: ...

    sig = derive_signature(tool, input_schema=schema)
    assert sig.validate({"pair": [1, "a"]}) == {"pair": [1, "a"]}
    assert problems_of(sig, {"pair": ["a", "a"]}) == [
        "arguments.pair[0]: expected integer, got string 'a'"
    ]


@pytest.mark.parametrize(
    "dialect", ["https://example.com/my-dialect", "http://json-schema.org/draft-03/schema#", 7]
)
def test_raw_schema_in_an_unsupported_dialect_is_refused(dialect: Any) -> None:
    schema = {"$schema": dialect, "type": "object"}
    with pytest.raises(ValueError, match="unsupported JSON Schema dialect"):
        derive_signature(contact, input_schema=schema)


def test_raw_schema_invalid_for_its_dialect_is_refused() -> None:
    with pytest.raises(ValueError, match="not a valid JSON Schema"):
        derive_signature(
            contact, input_schema={"type": "object", "properties": {"a": {"type": "strnig"}}}
        )


def test_raw_input_schema_must_be_an_object_schema() -> None:
    with pytest.raises(ValueError, match='"type": "object"'):
        derive_signature(contact, input_schema={"type": "array"})


def test_raw_schema_nested_too_deeply_is_refused() -> None:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(200):
        schema = {"type": "object", "properties": {"a": schema}}
    with pytest.raises(ValueError, match="too deeply nested"):
        derive_signature(contact, input_schema=schema)


# -- output schemas -----------------------------------------------------------------------------


def wrapped(schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {"result": schema}, "required": ["result"]}


@pytest.mark.parametrize(
    ("annotation", "output_schema", "wrap"),
    [
        (str, None, False),
        (None, None, False),
        (Any, None, False),
        (TextBlock, None, False),
        (list[TextBlock], None, False),
        (TextBlock | None, None, False),
        (Unsupported, None, False),
        (int, wrapped({"type": "integer"}), True),
        (float, wrapped({"type": "number"}), True),
        (bool, wrapped({"type": "boolean"}), True),
        (list[str], wrapped({"type": "array", "items": {"type": "string"}}), True),
        (Literal["a", "b"], wrapped({"type": "string", "enum": ["a", "b"]}), True),
        (Color, wrapped({"type": "string", "enum": ["red", "green"]}), True),
        (datetime, wrapped({"type": "string", "format": "date-time"}), True),
        (dict[str, int], {"type": "object", "additionalProperties": {"type": "integer"}}, False),
        (
            Point,
            {
                "type": "object",
                "description": "A point on the plane.",
                "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "default": 0}},
                "required": ["x"],
            },
            False,
        ),
        (
            Movie,
            {
                "type": "object",
                "properties": {"title": {"type": "string"}, "year": {"type": "integer"}},
                "required": ["title"],
            },
            False,
        ),
    ],
    ids=repr,
)
def test_return_annotation_decides_the_output_schema(
    annotation: Any, output_schema: Any, wrap: bool
) -> None:
    sig = derive(returning(annotation), passthrough_types=(TextBlock,))
    assert sig.output_schema == output_schema
    assert sig.wrap_output is wrap


def test_unannotated_return_is_unstructured() -> None:
    def tool():  # type: ignore[no-untyped-def]
        return 1

    sig = derive(tool)
    assert (sig.output_schema, sig.wrap_output) == (None, False)


def test_wrapped_output_keeps_defs_for_nested_types() -> None:
    sig = derive(returning(list[Point]))
    assert sig.output_schema is not None
    assert sig.output_schema["properties"]["result"] == {
        "type": "array",
        "items": {"$ref": "#/$defs/Point"},
    }
    assert set(sig.output_schema["$defs"]) == {"Point"}


def test_object_output_inlines_its_class_and_keeps_only_other_defs() -> None:
    sig = derive(returning(Segment))
    assert sig.output_schema is not None
    assert sig.output_schema["properties"]["start"] == {"$ref": "#/$defs/Point"}
    assert set(sig.output_schema["$defs"]) == {"Point"}


def test_recursive_object_output_keeps_its_own_def() -> None:
    sig = derive(returning(Tree))
    assert sig.output_schema is not None
    assert sig.output_schema["type"] == "object"
    assert sig.output_schema["properties"]["children"]["items"] == {"$ref": "#/$defs/Tree"}
    assert "Tree" in sig.output_schema["$defs"]


def test_pydantic_output_uses_the_serialization_schema() -> None:
    sig = derive(returning(User))
    assert sig.wrap_output is False
    assert sig.output_schema is not None
    assert "userId" in sig.output_schema["properties"]
    assert sig.output_schema["$defs"]["Address"]["type"] == "object"


def test_structured_output_false_forces_unstructured() -> None:
    sig = derive(returning(Point), structured_output=False)
    assert (sig.output_schema, sig.wrap_output) == (None, False)


def test_structured_output_true_wraps_a_string() -> None:
    sig = derive(returning(str), structured_output=True)
    assert (sig.output_schema, sig.wrap_output) == (wrapped({"type": "string"}), True)


@pytest.mark.parametrize("annotation", [inspect.Signature.empty, None])
def test_structured_output_true_without_a_return_annotation_is_a_type_error(
    annotation: Any,
) -> None:
    def tool():  # type: ignore[no-untyped-def]
        return None

    if annotation is not inspect.Signature.empty:
        tool.__annotations__ = {"return": annotation}
    with pytest.raises(TypeError, match="return annotation"):
        derive_signature(tool, structured_output=True)


def test_structured_output_true_with_an_unsupported_return_type_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="Unsupported"):
        derive_signature(returning(Unsupported), structured_output=True)


def test_raw_output_schema_is_kept_verbatim_and_not_wrapped() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "array",
        "items": {"type": "integer"},
    }
    sig = derive(returning(list[int]), output_schema=schema)
    assert sig.output_schema == schema
    assert sig.wrap_output is False


def test_raw_output_schema_with_a_remote_ref_is_refused() -> None:
    with pytest.raises(ValueError, match=r"output schema.*remote \$ref not allowed"):
        derive_signature(returning(int), output_schema={"$ref": "https://example.com/out.json"})


# -- results to JSON ----------------------------------------------------------------------------


class Shade(enum.Enum):
    DARK = "dark"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (Point(1, 2), {"x": 1, "y": 2}),
        (Segment(Point(1), Point(2)), {"start": {"x": 1, "y": 0}, "end": {"x": 2, "y": 0}}),
        (datetime(2024, 1, 2, 3, 4, 5), "2024-01-02T03:04:05"),
        (date(2024, 1, 2), "2024-01-02"),
        (time(3, 4), "03:04:00"),
        (Shade.DARK, "dark"),
        (Level.HIGH, 2),
        (uuid.UUID(int=1), "00000000-0000-0000-0000-000000000001"),
        (Decimal("1.10"), "1.10"),
        (PurePosixPath("/tmp/x"), "/tmp/x"),
        ((1, (2, 3)), [1, [2, 3]]),
        ({3}, [3]),
        ({"a": [Shade.DARK, {"b": (1,)}]}, {"a": ["dark", {"b": [1]}]}),
        ({Shade.DARK: 1, 2: "x"}, {"dark": 1, "2": "x"}),
        (User(name="n", age=1), {"name": "n", "age": 1, "address": None, "userId": "u"}),
        ([1, Point(0)], [1, {"x": 0, "y": 0}]),
    ],
    ids=repr,
)
def test_output_values_become_json(value: Any, expected: Any) -> None:
    assert output_to_json(value) == expected
    json.dumps(output_to_json(value))


def test_plain_json_comes_back_as_the_same_object() -> None:
    value = {"a": [1, 2.5, {"b": None, "c": [True, "x"]}], "d": "e"}
    snapshot = copy.deepcopy(value)
    assert output_to_json(value) is value
    assert value == snapshot


def test_converting_nested_values_does_not_change_the_original() -> None:
    value = {"a": 1, "b": [1, Shade.DARK], "c": 3}
    result = output_to_json(value)
    assert result == {"a": 1, "b": [1, "dark"], "c": 3}
    assert list(result) == ["a", "b", "c"]
    assert value["b"] == [1, Shade.DARK]


def test_unconvertible_output_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="Unsupported"):
        output_to_json({"a": Unsupported()})


# -- imports ------------------------------------------------------------------------------------


def test_importing_the_schema_module_loads_neither_pydantic_nor_jsonschema() -> None:
    code = (
        "import sys\n"
        "from mcpkit.schema.functions import derive_signature\n"
        "def tool(a: int, b: list[str] | None = None) -> dict[str, int]: ...\n"
        "derive_signature(tool).validate({'a': 1})\n"
        "def loaded():\n"
        "    return ','.join(sorted({m.split('.')[0] for m in sys.modules} & {'pydantic', 'jsonschema'}))\n"
        "print(loaded())\n"
        "derive_signature(tool, input_schema={'type': 'object'})\n"
        "print(loaded())\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env=_subprocess_env(),
    )
    before_raw, after_raw = result.stdout.split("\n")[:2]
    assert before_raw == ""
    assert after_raw == "jsonschema"  # loaded lazily, and only for a raw schema


def _subprocess_env() -> dict[str, str]:
    src = os.path.join(os.path.dirname(__file__), "..", "..", "src")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [os.path.abspath(src), env.get("PYTHONPATH", "")])
    )
    return env


def test_signature_is_immutable() -> None:
    sig = derive(fn_with(int))
    with pytest.raises(dataclasses.FrozenInstanceError):
        sig.wrap_output = True  # type: ignore[misc]
