"""The limits an annotation puts on a value besides its type, and the check of them.

A FastMCP or pydantic user writes `n: Annotated[int, Field(ge=1, le=10)]`, `Annotated[str,
MinLen(2)]`, `conint(gt=0)` or `constr(pattern=...)`. `read_metadata` reads each such object
of `Annotated` metadata (annotated_types' `Gt`, `Ge`, `Lt`, `Le`, `MultipleOf`, `MinLen`,
`MaxLen` and the `Interval`/`Len` groups; pydantic's `Field` and the `StringConstraints`,
`Strict` and `AllowInfNan` its helpers make; a `Doc`) into a `Reading`: the limits, the
schema annotations (examples, deprecated, `json_schema_extra`) and a default. `apply_limits`
turns the limits into the JSON Schema keywords of the value's kind (`minimum`, `minLength`,
`minItems`, `minProperties`, `pattern`, ...) and wraps the checker so a call is held to the
same limits the schema publishes, each refusal naming its keyword.

What JSON Schema cannot say (a predicate, a validator function, a time zone, an alias, a
transformation such as `strip_whitespace`) is never dropped: the reading carries one line
saying so, and the compiler raises it at registration naming the parameter.

Neither pydantic nor annotated_types is imported: their objects are recognised by the module
that defines their class, so a server that uses neither loads neither.

Imports: the standard library and `mcpkit.schema.problems`, `mcpkit.schema.values`.
"""

from __future__ import annotations

import copy
import math
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from mcpkit.schema.problems import describe_value
from mcpkit.schema.values import is_finite_json, output_to_json

__all__ = [
    "NO_DEFAULT",
    "Reading",
    "apply_limits",
    "kinds_of",
    "read_metadata",
]

Checker = Callable[[Any, str, list[str]], Any]


class _NoDefault:
    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Final = _NoDefault()
"""A `Reading` names no default."""

_BOUNDS: Final = {"gt": "exclusiveMinimum", "ge": "minimum", "lt": "exclusiveMaximum",
                  "le": "maximum"}
_LOWER: Final = frozenset({"gt", "ge"})
_LENGTHS: Final = {"string": ("minLength", "maxLength"), "array": ("minItems", "maxItems"),
                   "object": ("minProperties", "maxProperties")}
_SINGLE: Final = {"Gt": "gt", "Ge": "ge", "Lt": "lt", "Le": "le", "MultipleOf": "multiple_of",
                  "MinLen": "min_length", "MaxLen": "max_length"}
_ACCEPTED_FLAGS: Final = frozenset({"strict", "allow_inf_nan"})
"""pydantic flags honoured as they are: mcpkit's checks never take a string for a number, and
JSON carries no infinity or NaN."""
_FIELD_REFUSED: Final = ("alias", "validation_alias", "serialization_alias", "discriminator",
                         "exclude", "exclude_if", "frozen", "validate_default", "init",
                         "init_var", "kw_only", "field_title_generator")
_FIELD_HONOURED: Final = ("default, default_factory, title, description, examples, deprecated, "
                          "json_schema_extra, ge, gt, le, lt, multiple_of, min_length, "
                          "max_length, pattern, strict")


@dataclass(slots=True)
class Reading:
    """What the `Annotated` metadata of one annotation says besides its type."""

    description: str | None = None
    title: str | None = None
    limits: list[tuple[str, Any]] = field(default_factory=list)
    """(name, value) in annotated_types' words: gt, ge, lt, le, multiple_of, min_length,
    max_length, pattern."""
    keywords: dict[str, Any] = field(default_factory=dict)
    """Schema annotations to publish as they are: examples, deprecated, json_schema_extra."""
    default: Any = NO_DEFAULT
    factory: Callable[[], Any] | None = None
    problem: str | None = None
    """Why the annotation cannot be published as it is (raised at registration)."""

    def refuse(self, problem: str) -> None:
        self.problem = self.problem or problem


def _family(item: Any) -> str:
    module = type(item).__module__ or ""
    return module.split(".", 1)[0]


def read_metadata(item: Any, reading: Reading) -> bool:
    """Add what `item` says to `reading`; False when it is no object of pydantic,
    annotated_types or a `Doc` (other libraries' metadata is theirs to read)."""
    fields = sys.modules.get("pydantic.fields")
    if fields is not None and isinstance(item, fields.FieldInfo):  # FastAPI's Query too
        _field(item, reading)
        return True
    family = _family(item)
    name = type(item).__name__
    if name == "Doc" and family in ("typing", "typing_extensions"):
        text = getattr(item, "documentation", None)
        if isinstance(text, str):
            reading.description = text
        return True
    if family == "annotated_types":
        _annotated_types(item, name, reading)
        return True
    if family != "pydantic":
        return False
    if getattr(item, "__is_annotated_types_grouped_metadata__", False):
        for part in item:  # StringConstraints: MinLen, MaxLen, Strict, general flags
            read_metadata(part, reading)
    elif name in ("Strict", "AllowInfNan"):
        pass  # see _ACCEPTED_FLAGS
    elif name == "_PydanticGeneralMetadata":
        _general(vars(item), reading)
    else:
        reading.refuse(f"pydantic's {name} cannot be published in the JSON Schema a client "
                       "reads; check the value in the function instead (raise ToolError)")
    return True


def _annotated_types(item: Any, name: str, reading: Reading) -> None:
    if name in _SINGLE:
        key = _SINGLE[name]
        reading.limits.append((key, getattr(item, key)))
    elif getattr(item, "__is_annotated_types_grouped_metadata__", False):
        for part in item:  # Interval, Len: their parts, the ones set
            read_metadata(part, reading)
    else:
        reading.refuse(f"annotated_types.{name} cannot be published in the JSON Schema a "
                       "client reads; check the value in the function instead (raise ToolError)")


def _general(flags: Mapping[str, Any], reading: Reading) -> None:
    for key, value in flags.items():
        if value is None:
            continue  # a flag left unset
        if key == "pattern":
            reading.limits.append(("pattern", value))
        elif key not in _ACCEPTED_FLAGS:
            reading.refuse(f"pydantic's {key}={value!r} cannot be published in the JSON Schema "
                           "a client reads; do it in the function instead")


def _field(info: Any, reading: Reading) -> None:
    """A pydantic `FieldInfo`: its limits (in `.metadata`) and what it says of the value."""
    for name in _FIELD_REFUSED:
        if getattr(info, name, None) is not None:
            reading.refuse(f"Field({name}=...) has no meaning for a tool's argument; mcpkit "
                           f"honours {_FIELD_HONOURED}")
            return
    for part in info.metadata:
        read_metadata(part, reading)
    if isinstance(info.description, str):
        reading.description = info.description
    if isinstance(info.title, str):
        reading.title = info.title
    if info.examples is not None:
        reading.keywords["examples"] = _json(info.examples, "examples", reading)
    if info.deprecated is not None and info.deprecated is not False:
        reading.keywords["deprecated"] = True
    extra = info.json_schema_extra
    if callable(extra):
        reading.refuse("Field(json_schema_extra=) as a function cannot be applied to a derived "
                       "schema; give a dict")
    elif extra is not None:
        reading.keywords.update(_json(dict(extra), "json_schema_extra", reading))
    if info.default_factory is not None:
        reading.factory = info.default_factory
    elif type(info.default).__name__ != "PydanticUndefinedType":
        reading.default = info.default


def _json(value: Any, what: str, reading: Reading) -> Any:
    try:
        wire = output_to_json(value)
    except TypeError:
        wire = None
    if wire is None or not is_finite_json(wire):
        reading.refuse(f"Field({what}=...) must be JSON data")
        return None
    return copy.deepcopy(wire)


# -- limits -> keywords and a check ------------------------------------------------------------


def kinds_of(schema: Mapping[str, Any]) -> frozenset[str]:
    """The JSON kinds a value of `schema` may have; empty when it says nothing (any)."""
    kind = schema.get("type")
    if isinstance(kind, str):
        return frozenset({kind})
    if isinstance(kind, list):
        return frozenset(k for k in kind if isinstance(k, str))
    if "$ref" in schema:
        return frozenset({"object"})
    branches = schema.get("anyOf")
    if isinstance(branches, list):
        found = [kinds_of(b) for b in branches if isinstance(b, Mapping)]
        return frozenset() if any(not k for k in found) else frozenset().union(*found)
    return frozenset()


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


@dataclass(frozen=True, slots=True)
class _Test:
    keyword: str
    limit: Any
    applies: Callable[[Any], bool]
    holds: Callable[[Any, Any], bool]
    words: str
    """How the refusal reads: `must be at least {limit}`, with the value after it."""
    measure: Callable[[Any], str] = describe_value


def _length(value: Any) -> str:
    return str(len(value))


def _multiple(value: Any, step: Any) -> bool:
    if isinstance(value, int) and isinstance(step, int):
        return value % step == 0
    quotient = value / step
    return math.isfinite(quotient) and abs(quotient - round(quotient)) <= 1e-9 * max(
        1.0, abs(quotient))


_NUMBER_TESTS: Final = {
    "ge": ("minimum", lambda v, n: v >= n, "must be at least {limit}"),
    "gt": ("exclusiveMinimum", lambda v, n: v > n, "must be greater than {limit}"),
    "le": ("maximum", lambda v, n: v <= n, "must be at most {limit}"),
    "lt": ("exclusiveMaximum", lambda v, n: v < n, "must be less than {limit}"),
}
_LENGTH_KINDS: Final[dict[str, tuple[Callable[[Any], bool], str]]] = {
    "string": (lambda v: isinstance(v, str), "characters"),
    "array": (lambda v: isinstance(v, list | tuple), "items"),
    "object": (lambda v: isinstance(v, Mapping), "properties"),
}


def _strictest(limits: Iterable[tuple[str, Any]], where: str) -> dict[str, Any]:
    """One value per limit: the strictest of repeated bounds; a repeated step or pattern
    that differs cannot be one keyword."""
    out: dict[str, Any] = {}
    for key, value in limits:
        if key in _BOUNDS or key == "multiple_of":
            if not _is_number(value) or not math.isfinite(value):
                raise TypeError(
                    f"{where}: {key}={value!r} cannot be published in JSON Schema, which "
                    "bounds numbers only; check it in the function instead (raise ToolError)")
            if key == "multiple_of" and value <= 0:
                raise TypeError(f"{where}: multiple_of must be above 0, not {value!r}")
        elif key in ("min_length", "max_length"):
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise TypeError(f"{where}: {key} must be a whole number, not {value!r}")
        elif key == "pattern":
            if not isinstance(value, str):
                raise TypeError(f"{where}: pattern must be a string, not {value!r}")
            try:
                re.compile(value)
            except re.error as exc:
                raise TypeError(f"{where}: pattern {value!r} is not a regular expression: "
                                f"{exc}") from None
        if key not in out:
            out[key] = value
        elif key in _LOWER or key == "min_length":
            out[key] = max(out[key], value)
        elif key in _BOUNDS or key == "max_length":
            out[key] = min(out[key], value)
        elif out[key] != value:
            raise TypeError(f"{where}: two different {key} limits cannot be published as one; "
                            "keep one")
    return out


def _tests(limits: Mapping[str, Any], kinds: frozenset[str], where: str
           ) -> tuple[dict[str, Any], list[_Test]]:
    keywords: dict[str, Any] = {}
    tests: list[_Test] = []
    numbers = not kinds or bool(kinds & {"integer", "number"})
    lengths = [k for k in _LENGTHS if not kinds or k in kinds]
    for key, value in limits.items():
        if key in _BOUNDS or key == "multiple_of":
            if not numbers:
                raise TypeError(f"{where}: {key}={value!r} limits a number, and this value is "
                                f"{' or '.join(sorted(kinds))}")
            if key == "multiple_of":
                keywords["multipleOf"] = value
                tests.append(_Test("multipleOf", value, _is_number, _multiple,
                                   "must be a multiple of {limit}"))
            else:
                keyword, holds, words = _NUMBER_TESTS[key]
                keywords[keyword] = value
                tests.append(_Test(keyword, value, _is_number, holds, words))
        elif key == "pattern":
            if kinds and "string" not in kinds:
                raise TypeError(f"{where}: pattern= limits a string, and this value is "
                                f"{' or '.join(sorted(kinds))}")
            keywords["pattern"] = value
            tests.append(_Test("pattern", re.compile(value), lambda v: isinstance(v, str),
                               lambda v, p: p.search(v) is not None,
                               "must match the pattern {limit.pattern!r}"))
        else:  # min_length, max_length
            if not lengths:
                raise TypeError(f"{where}: {key}={value!r} limits a length, and this value is "
                                f"{' or '.join(sorted(kinds))}")
            least = key == "min_length"
            for kind in lengths:
                keyword = _LENGTHS[kind][0 if least else 1]
                applies, unit = _LENGTH_KINDS[kind]
                keywords[keyword] = value
                tests.append(_Test(
                    keyword, value, applies,
                    (lambda v, n: len(v) >= n) if least else (lambda v, n: len(v) <= n),
                    f"must have at {'least' if least else 'most'} {{limit}} {unit}",
                    _length))
    return keywords, tests


def apply_limits(schema: dict[str, Any], checker: Checker, limits: list[tuple[str, Any]],
                 where: str) -> tuple[dict[str, Any], Checker]:
    """`schema` with the limits' keywords, and `checker` followed by their check (of the
    value as sent, once the type check passed); a TypeError naming `where` when a limit
    does not fit the value's kind or cannot be published."""
    keywords, tests = _tests(_strictest(limits, where), kinds_of(schema), where)
    inner = checker

    def check(value: Any, path: str, problems: list[str]) -> Any:
        before = len(problems)
        result = inner(value, path, problems)
        if len(problems) != before:
            return result
        problems.extend(f"{path}: {test.words.format(limit=test.limit)} ({test.keyword}), "
                        f"got {test.measure(value)}"
                        for test in tests
                        if test.applies(value) and not test.holds(value, test.limit))
        return result

    return {**schema, **keywords}, check
