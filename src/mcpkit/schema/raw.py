"""A user's raw JSON Schema: refused at registration when it is unsafe, then applied to each
call by a validator built once, within a budget.

A raw schema is kept verbatim for listing and checked with `jsonschema`, in the dialect its
`$schema` names (2020-12 when absent). What bounds the cost of checking one call:

At registration (`mcpkit.schema.bounds`, with this module):
- the dialect must be one of `SUPPORTED_DIALECTS`, and the schema valid for it;
- no `$ref` ever leaves the document, and none points to nothing;
- at most `MAX_NODES` subschemas, nested at most `MAX_DEPTH` levels;
- `anyOf`/`oneOf`/`allOf`/`if`/`then`/`else` fan-out: at most `MAX_FAN_OUT` subschemas apply to
  one value with every `$ref` followed, and at most `MAX_EXPANDED` in all;
- `$defs` recursion: a `$ref` loop that never descends into the value (which would recurse
  forever) is refused; a loop that does descend is allowed, and bounded per call.

Per call (here):
- at most `MAX_STEPS` evaluations of applicator keywords (`$ref`, `anyOf`, `oneOf`, `allOf`,
  `not`, `if`, `properties`, `items`, ...) and at most `MAX_SECONDS` of wall-clock time, checked
  every 1024 evaluations; beyond either, the call is refused as too costly to check. The time is
  read from the clock the caller passes in (the server's tools pass `time.monotonic`), since
  this package reads no clock itself; without one, only the steps are counted;
- a recursive schema meeting a value nested deeper than the stack allows is refused as nested
  too deeply (the JSON decoder already refuses more than 1024 levels).

Not bounded: the work of one keyword between two checks, which grows with the size of the value
(and so is capped by the transport's message size limit) -- a `pattern` that backtracks
catastrophically on a long string, `uniqueItems` on a long array of objects (quadratic),
`enum`/`const` comparisons of large values. Nor are subschemas embedded with their own
`$schema` naming a different dialect: `jsonschema` checks them with its stock validator, outside
the budget (the registration-time bounds still apply to them).

The meter of the call being checked sits in a context variable, so calls checked at once on
other threads (or in other tasks) each count their own.

`jsonschema` comes with the `schema` extra. It is imported when a raw schema is registered, so
without it registration fails with `MissingExtraError` (one line naming the extra), never a
call: a raw schema's checks are the contract its author wrote, and a server that silently
stopped enforcing them would run its tools on arguments they were promised never to see.

Imports: the standard library, `mcpkit.protocol.extras` and `mcpkit.schema` (dialects, bounds,
problems, validators); `jsonschema` lazily, when a raw schema is registered.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Mapping
from contextvars import ContextVar
from typing import Any, Final

import orjson

from mcpkit.protocol.extras import require
from mcpkit.schema.bounds import MAX_DEPTH, MAX_EXPANDED, MAX_FAN_OUT, MAX_NODES, check_structure
from mcpkit.schema.dialects import (
    SUPPORTED_DIALECTS,
    dialect_key,
    dialect_of,
    validator_name,
)
from mcpkit.schema.problems import TOO_DEEP, ArgumentsError, describe_value, property_path
from mcpkit.schema.validators import ArgumentsValidator

__all__ = [
    "MAX_DEPTH",
    "MAX_EXPANDED",
    "MAX_FAN_OUT",
    "MAX_NODES",
    "MAX_SECONDS",
    "MAX_STEPS",
    "SUPPORTED_DIALECTS",
    "Clock",
    "compile_raw",
    "copied_schema",
    "prepare_raw_schema",
    "require_jsonschema",
]

Clock = Callable[[], float]
"""Seconds from any fixed point, never going back (`time.monotonic`)."""

MAX_STEPS: Final = 100_000
MAX_SECONDS: Final = 1.0
_CHECK_EVERY: Final = 1024  # a power of two: the check is a bit test
_APPLICATORS: Final = frozenset(
    {
        "$ref", "$dynamicRef", "$recursiveRef", "allOf", "anyOf", "oneOf", "not", "if",
        "dependentSchemas", "dependencies", "properties", "patternProperties",
        "additionalProperties", "propertyNames", "unevaluatedProperties", "items", "prefixItems",
        "additionalItems", "contains", "unevaluatedItems",
    }
)  # fmt: skip
_DATA_KEYWORDS: Final = frozenset({"const", "enum", "default", "examples"})


def _dialect_of(schema: Mapping[str, Any], where: str) -> str:
    """The dialect key of the schema, or ValueError naming the ones supported."""
    dialect = dialect_of(schema)
    if dialect is None:
        raise ValueError(
            f"{where}: unsupported JSON Schema dialect {schema.get('$schema')!r}; supported: "
            f"{', '.join(SUPPORTED_DIALECTS)} (2020-12 when $schema is absent)"
        )
    return dialect


# -- the per-call budget ------------------------------------------------------------------------


class _OverBudget(Exception):
    pass


class _Meter:
    """The budget of the call being checked on this thread."""

    __slots__ = ("clock", "deadline", "max_seconds", "max_steps", "used")

    def __init__(self, max_steps: int, max_seconds: float, clock: Clock | None) -> None:
        self.used = 0
        self.max_steps = max_steps
        self.max_seconds = max_seconds
        self.clock = clock
        self.deadline = math.inf if clock is None else clock() + max_seconds

    def check(self) -> None:
        if self.used > self.max_steps:
            raise _OverBudget(f"more than {self.max_steps} subschema evaluations")
        if self.clock is not None and self.clock() >= self.deadline:
            raise _OverBudget(f"more than {self.max_seconds:g} s")


_running: ContextVar[_Meter | None] = ContextVar("mcpkit_raw_schema_meter", default=None)


def _metered(keyword: Callable[[Any, Any, Any, Any], Any]) -> Callable[[Any, Any, Any, Any], Any]:
    def run(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        meter = _running.get()
        if meter is not None:
            meter.used += 1
            if not meter.used & (_CHECK_EVERY - 1):
                meter.check()
        return keyword(validator, value, instance, schema)

    return run


@functools.cache
def _metered_class(dialect: str) -> Any:
    """The stock validator class of a dialect, its applicator keywords counting into the meter
    (jsonschema is loaded: `prepare_raw_schema` required it first)."""
    import jsonschema
    from jsonschema.validators import extend

    stock = getattr(jsonschema, validator_name(dialect))
    counted = {k: _metered(fn) for k, fn in stock.VALIDATORS.items() if k in _APPLICATORS}
    return extend(stock, counted)


def require_jsonschema(where: str) -> Any:
    """The `jsonschema` module, or MissingExtraError naming `where` and the `schema` extra."""
    return require("jsonschema", f"{where}: a raw JSON Schema")


def _without_dialect(node: Any, dialect: str) -> Any:
    """A copy without the `$schema` keys naming `dialect`: `jsonschema` switches to its stock
    class (outside the budget) at every subschema that declares a dialect, even the same one."""
    if isinstance(node, Mapping):
        return {
            key: value if key in _DATA_KEYWORDS else _without_dialect(value, dialect)
            for key, value in node.items()
            if not (key == "$schema" and isinstance(value, str) and dialect_key(value) == dialect)
        }
    if isinstance(node, list):
        return [_without_dialect(item, dialect) for item in node]
    return node


# -- registration and calls ---------------------------------------------------------------------


def copied_schema(schema: Any, where: str) -> dict[str, Any]:
    """The server's own copy of a user's schema, made of the JSON it will be listed as.

    A definition is sent in every `tools/list`, so what JSON cannot carry (a key that is not a
    string, an integer past 64 bits, a set, a `const` nested past the encoder's 255 levels) is
    refused here, naming the schema, rather than failing each listing. Encoding also copies
    without recursion, so no nesting exhausts the stack before the bounds are checked."""
    if not isinstance(schema, Mapping):
        raise TypeError(
            f"{where}: a JSON Schema object (a dict with \"type\": \"object\") is needed, got "
            f"{type(schema).__name__}"
        )
    try:
        data = orjson.dumps(schema)
    except TypeError as exc:  # orjson.JSONEncodeError is one
        check_structure(schema, where)  # the bounds' own words when subschemas nest too deep
        raise ValueError(f"{where}: cannot be sent as JSON ({exc}); a schema holds JSON data "
                         "only, nested at most 255 levels") from None
    copy: dict[str, Any] = orjson.loads(data)
    return copy



def prepare_raw_schema(schema: Mapping[str, Any], where: str) -> Any:
    """Check a user's schema at registration; return a validator instance to reuse per call.

    Raises MissingExtraError first when `jsonschema` is not installed: whatever else is wrong
    with the schema, the fix starts with the extra."""
    jsonschema = require_jsonschema(where)
    if not isinstance(schema, Mapping):
        raise ValueError(f"{where}: a JSON Schema must be an object, got {type(schema).__name__}")
    dialect = _dialect_of(schema, where)
    check_structure(schema, where)
    from jsonschema.exceptions import SchemaError

    try:
        getattr(jsonschema, validator_name(dialect)).check_schema(schema)
    except SchemaError as exc:
        raise ValueError(f"{where}: not a valid JSON Schema: {exc.message}") from None
    return _metered_class(dialect)(_without_dialect(schema, dialect))


def _error_path(parts: Iterable[Any]) -> str:
    path = "arguments"
    for part in parts:
        path = f"{path}[{part}]" if isinstance(part, int) else property_path(path, str(part))
    return path


def _raw_problems(errors: Iterable[Any]) -> list[str]:
    problems: list[str] = []
    for error in errors:
        path = _error_path(error.absolute_path)
        if error.validator == "required" and isinstance(error.instance, Mapping):
            missing = [
                name
                for name in error.validator_value
                if isinstance(name, str)
                and name not in error.instance
                and error.message.startswith(repr(name))
            ]
            if missing:
                problems.extend(
                    f"{property_path(path, name)}: missing required property" for name in missing
                )
                continue
        if error.validator == "type":
            wanted = error.validator_value
            names = [wanted] if isinstance(wanted, str) else list(wanted)
            expected = " or ".join(str(n) for n in names)
            problems.append(f"{path}: expected {expected}, got {describe_value(error.instance)}")
            continue
        message = error.message if len(error.message) <= 300 else error.message[:297] + "..."
        problems.append(f"{path}: {message}")
    return problems


def compile_raw(
    schema: Mapping[str, Any],
    where: str,
    *,
    parameter_names: frozenset[str],
    pass_extra: bool,
    max_steps: int = MAX_STEPS,
    max_seconds: float = MAX_SECONDS,
    clock: Clock | None = None,
) -> ArgumentsValidator:
    """Per-call validation against a user's schema; the validator is built once, here.

    `max_seconds` is measured by `clock`; with no clock, a call is bounded by `max_steps` only.
    """
    validator = prepare_raw_schema(schema, where)
    if schema.get("type") != "object":
        raise ValueError(f'{where}: an input schema must have "type": "object" at its root')

    def validate(arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        if arguments is None:
            arguments = {}
        elif type(arguments) is not dict:
            if not isinstance(arguments, Mapping):
                raise ArgumentsError(
                    [f"arguments: expected object, got {describe_value(arguments)}"]
                )
            arguments = dict(arguments)
        token = _running.set(_Meter(max_steps, max_seconds, clock))
        try:
            errors = sorted(
                validator.iter_errors(arguments), key=lambda e: [str(p) for p in e.absolute_path]
            )
        except _OverBudget as exc:
            raise ArgumentsError(
                [f"arguments: too costly to check against the input schema (stopped after {exc})"]
            ) from None
        except RecursionError:
            raise ArgumentsError([TOO_DEEP]) from None
        finally:
            _running.reset(token)
        if errors:
            raise ArgumentsError(_raw_problems(errors))
        if pass_extra:
            return dict(arguments)
        return {k: v for k, v in arguments.items() if k in parameter_names}

    return validate
