"""Tool definitions are untrusted input: vetting them, and checking results against them.

A server's `tools/list` is data from a peer, not code we wrote. `vet_tool` rejects a definition
that the client could not use safely: no name, an `inputSchema` that is not an object schema,
a schema deeper or larger than the bounds (JSS-6), one in a dialect we do not support (JSS-3),
one that is not valid for its dialect (JSS-4), one whose `$ref` points outside the document
(JSS-5: never dereferenced, so the schema cannot be used) or to nothing in it, or a broken
`x-mcp-header` declaration (TOOL-16/17). A rejected tool is dropped and reported; the others
stay usable. The structural checks are the server's walk (`mcpkit.schema.walk`) with
the client's smaller bounds and its own words.

`OutputChecker` validates `structuredContent` against a tool's `outputSchema` when the
application asks for it (TOOL-12), with one compiled validator per schema.

A server's `pattern` and `patternProperties` regexes run on the server's own data during that
check, and Python's `re` has no timeout: `^(a+)+$` against thirty `a`s and a `!` backtracks for
minutes. Such a regex (a repeat holding an unbounded repeat or an alternation) is found by
parsing it before the first check; the tool's output is then not validated, with one warning
naming the tool and the pattern. Refusing the tool instead would cost the user a working tool
for a sloppy regex, and would buy nothing: the check compares a server's data with the same
server's schema, so a hostile server could as well declare no schema at all. Ordinary patterns
are enforced as before. A pattern that does not compile makes the tool unusable (vetting).

`jsonschema` (the `schema` extra) is imported lazily, and only if it is installed. Without it
the client still works, and says what it does not do: vetting keeps every structural check
(bounds, dialect, references, regexes: what protects the client from a hostile schema) and
skips only the meta-schema check (JSS-4); output checking, when the application asked for it,
is skipped with one warning per process naming the extra. Failing instead would cost a bare
install every tool of every server for a check of the server's data against the same server's
schema; and a call must never fail for a dependency the application could have been told
about at once.

May import `mcpkit.schema`, `mcpkit.protocol`, `mcpkit.types`, `mcpkit.errors`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from mcpkit.errors import MissingExtraError, ProtocolViolation
from mcpkit.protocol.extras import available
from mcpkit.protocol.mcp_headers import InvalidHeaderDeclaration, header_params
from mcpkit.schema import (
    DEFAULT_DIALECT,
    SUPPORTED_DIALECTS,
    Limits,
    Wording,
    check_schema_structure,
    dialect_of,
    places_of,
    validator_name,
)

__all__ = [
    "MAX_SCHEMA_DEPTH",
    "MAX_SCHEMA_NODES",
    "OutputChecker",
    "RejectedTool",
    "risky_pattern",
    "vet_tool",
]

log = logging.getLogger("mcpkit.client")

MAX_SCHEMA_DEPTH = 64
"""Deepest nesting accepted in a tool's schema (each object and list is one level)."""
MAX_SCHEMA_NODES = 10_000
"""Most subschemas accepted in one tool's schema (objects, lists and list items)."""

MAX_SCHEMA_FAN_OUT = 2_000
"""Most subschemas that may apply to one value once `$ref`s are followed."""
MAX_SCHEMA_EXPANDED = 200_000
"""Most subschemas a schema may span with its `$ref`s followed: a server's schema is untrusted
input, and a few shared definitions referring to each other can multiply past any budget (or
loop without descending, which no validator can finish)."""

_LIMITS: Final = Limits(MAX_SCHEMA_NODES, MAX_SCHEMA_DEPTH, MAX_SCHEMA_FAN_OUT, MAX_SCHEMA_EXPANDED)
_WORDING: Final = Wording(
    too_many="{where} has more than {max_nodes} subschemas",
    too_deep="{where} nests subschemas deeper than {max_depth} levels",
    outside=(
        "{where}: {keyword} {ref!r} at {at} points outside the schema; remote references are "
        "never fetched, so the schema cannot be used"
    ),
    no_target="{where}: {keyword} {ref!r} at {at} does not resolve in the schema",
    no_anchor="{where}: {keyword} {ref!r} at {at} names no $anchor in the schema",
)


@dataclass(frozen=True, slots=True)
class RejectedTool:
    """A tool definition the client dropped, and why."""

    name: str
    reason: str


def check_schema_shape(schema: Any, what: str) -> None:
    """Bounds, dialect and references of one schema; raises ValueError naming the problem."""
    if not isinstance(schema, Mapping):
        raise ValueError(f"{what} must be a JSON object, not {type(schema).__name__}")
    if dialect_of(schema) is None:
        raise ValueError(
            f"{what} declares the unsupported dialect {schema.get('$schema')!r} "
            f"(supported: {', '.join(SUPPORTED_DIALECTS)})"
        )
    check_schema_structure(schema, what, _LIMITS, _WORDING)


def _validator_class(schema: Mapping[str, Any]) -> Any:
    """The dialect's validator class, or None without the `schema` extra."""
    if not available("jsonschema"):
        return None
    import jsonschema

    return getattr(jsonschema, validator_name(dialect_of(schema) or DEFAULT_DIALECT), None)


_unchecked_said = False
"""Whether this process has said that structuredContent goes unchecked without jsonschema."""


def _say_unchecked(name: str) -> None:
    global _unchecked_said
    if not _unchecked_said:
        _unchecked_said = True
        log.warning(
            "tools/call %r: structuredContent is not checked against outputSchema (nor any "
            "later result): %s", name,
            MissingExtraError("ClientOptions(validate_output=True)", "schema"),
        )


def check_schema_valid(schema: Mapping[str, Any], what: str) -> None:
    """The schema is valid for its dialect (JSS-4), when jsonschema is available."""
    cls = _validator_class(schema)
    if cls is None:  # without the schema extra: the structural checks have run
        return
    from jsonschema.exceptions import SchemaError

    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        location = "/".join(str(p) for p in exc.absolute_path) or "the root"
        raise ValueError(f"{what} is not a valid JSON Schema at {location}: {exc.message}") from None


_DATA_KEYWORDS: Final = frozenset({"const", "enum", "default", "examples"})


def schema_patterns(schema: Mapping[str, Any]) -> Iterator[str]:
    """Every regex a validator may run for `schema`: `pattern` values, `patternProperties` keys.

    Like the structural walk, it looks everywhere but inside data keywords (a same-document
    `$ref` may lead anywhere); under the keywords that map names to subschemas the keys are
    names, not keywords. The schema has been through `check_schema_shape`, so it is bounded.
    """
    named = places_of(schema).named
    stack: list[tuple[Any, bool]] = [(schema, False)]
    while stack:
        node, names = stack.pop()
        if isinstance(node, list):
            stack.extend((item, False) for item in node)
        elif isinstance(node, Mapping):
            for key, value in node.items():
                if names:
                    stack.append((value, False))
                    continue
                if key in _DATA_KEYWORDS:
                    continue
                if key == "pattern" and isinstance(value, str):
                    yield value
                elif key == "patternProperties" and isinstance(value, Mapping):
                    yield from (k for k in value if isinstance(k, str))
                stack.append((value, key in named))


def _parse_regex(pattern: str) -> Any:
    """The stdlib's parse tree of `pattern` (its private parser, the one `re.compile` uses)."""
    try:
        from re import _parser as parser  # type: ignore[attr-defined]
    except ImportError:  # pragma: no cover - Python 3.10 spells it sre_parse
        import sre_parse as parser
    return parser.parse(pattern)


def _backtracks(items: Any, repeated: bool) -> bool:
    """Whether a parsed regex has a repeat over an unbounded repeat or over an alternation.

    Those are the shapes whose backtracking grows exponentially with the input: the repeated
    part can match the same text in many ways, and a failing match tries them all.
    """
    from re import _constants as c  # type: ignore[attr-defined]

    for op, av in items:
        if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
            _low, high, body = av
            if (repeated and high == c.MAXREPEAT) or _backtracks(body, repeated or high > 1):
                return True
            continue
        if op == c.BRANCH and repeated:
            return True
        if op == c.BRANCH:
            parts = av[1]
        elif op == c.SUBPATTERN:
            parts = [av[3]]
        elif op == c.ATOMIC_GROUP:
            parts = [av]
        elif op in (c.ASSERT, c.ASSERT_NOT):
            parts = [av[1]]
        elif op == c.GROUPREF_EXISTS:
            parts = [part for part in av[1:] if part is not None]
        else:
            continue
        if any(_backtracks(part, repeated) for part in parts):
            return True
    return False


def risky_pattern(schema: Mapping[str, Any]) -> str | None:
    """The first regex of `schema` prone to catastrophic backtracking, or None.

    A regex the parser refuses (or nests too deeply to analyse) counts as risky: it cannot be
    shown safe, and vetting has already refused one that does not compile.
    """
    seen: set[str] = set()
    for pattern in schema_patterns(schema):
        if pattern in seen:
            continue
        seen.add(pattern)
        try:
            if _backtracks(_parse_regex(pattern), False):
                return pattern
        except (re.error, RecursionError, OverflowError, ValueError):
            return pattern
    return None


def check_patterns_compile(schema: Mapping[str, Any], what: str) -> None:
    """Every regex of the schema compiles (draft-04's meta-schema does not check the keys of
    `patternProperties`, and a validator would fail on such a key mid-check)."""
    for pattern in schema_patterns(schema):
        try:
            re.compile(pattern)
        except (re.error, RecursionError, OverflowError, ValueError) as exc:
            raise ValueError(
                f"{what}: the regular expression {pattern!r} does not compile ({exc})"
            ) from None


def vet_tool(tool: Any) -> str | None:
    """None when the definition is usable, else the reason it is not (one sentence)."""
    if type(tool) is not dict:
        return f"a tool definition must be an object, not {type(tool).__name__}"
    name = tool.get("name")
    if type(name) is not str or not name:
        return "the tool has no name"
    schema = tool.get("inputSchema")
    if type(schema) is not dict:
        return "inputSchema is missing or not an object"
    if schema.get("type") != "object":
        return 'inputSchema must have "type": "object" at its root'
    try:
        check_schema_shape(schema, "inputSchema")
        output = tool.get("outputSchema")
        if output is not None:
            check_schema_shape(output, "outputSchema")
        check_schema_valid(schema, "inputSchema")
        if output is not None:
            check_schema_valid(output, "outputSchema")
            check_patterns_compile(output, "outputSchema")
        header_params(schema)
    except InvalidHeaderDeclaration as exc:
        return f"inputSchema: {exc}"
    except ValueError as exc:
        return str(exc)
    return None


def vet_tools(tools: Any) -> tuple[list[dict[str, Any]], list[RejectedTool]]:
    """Split a page's tools into the usable ones and the rejected ones (logged as warnings)."""
    if type(tools) is not list:
        raise ProtocolViolation("tools/list: the result's tools member is not a list")
    kept: list[dict[str, Any]] = []
    rejected: list[RejectedTool] = []
    for tool in tools:
        reason = vet_tool(tool)
        if reason is None:
            kept.append(tool)
            continue
        name = tool.get("name") if type(tool) is dict else None
        shown = name if type(name) is str and name else "(unnamed)"
        rejected.append(RejectedTool(shown, reason))
        log.warning("tools/list: ignored the tool %r: %s", shown, reason)
    return kept, rejected


class OutputChecker:
    """Validates `structuredContent` against the `outputSchema` of the tool that returned it."""

    def __init__(self) -> None:
        self._validators: dict[str, tuple[Any, Any]] = {}
        """Tool name -> (its outputSchema, the validator, or None when it is not checked)."""

    def check(self, tool: Mapping[str, Any], result: Mapping[str, Any]) -> None:
        schema = tool.get("outputSchema")
        if schema is None or result.get("isError"):
            return
        name = str(tool.get("name"))
        if "structuredContent" not in result:
            raise ProtocolViolation(
                f"tools/call {name!r}: the tool declares an outputSchema but its result has no "
                "structuredContent"
            )
        cached = self._validators.get(name)
        if cached is None or cached[0] is not schema:
            cls = _validator_class(schema)
            if cls is None:
                _say_unchecked(name)
                return
            risky = risky_pattern(schema)
            if risky is not None:
                log.warning(
                    "tools/call %r: structuredContent is not checked against the outputSchema: "
                    "its regular expression %r can take exponential time on a hostile value "
                    "(a repeat over a repeat or an alternation)", name, risky,
                )
            cached = (schema, None if risky is not None else cls(schema))
            self._validators[name] = cached
        if cached[1] is None:
            return
        error = next(iter(cached[1].iter_errors(result["structuredContent"])), None)
        if error is not None:
            location = "/".join(str(p) for p in error.absolute_path) or "the root"
            raise ProtocolViolation(
                f"tools/call {name!r}: structuredContent does not match the tool's outputSchema "
                f"at {location}: {error.message}"
            )
