"""A tool's structured content read into the type the caller names: `call_tool("add", {...},
result=Sum)` with a TypedDict, a dataclass, a pydantic model, or any annotation a tool's
parameter may have (`int`, `list[Point]`, `datetime`, ...).

The type is compiled once, before the request is sent, by the same compiler that turns a tool's
parameter annotations into checkers (`mcpkit.schema.Compiler`, validation mode): a type it
cannot describe is a `TypeError` at the call, not after the tool ran. The checker both checks
and builds (a dataclass from its fields, a `datetime` from its ISO string, a pydantic model by
its own validation), and reports every problem at once with its JSON path: a value that does
not fit raises `ResultTypeError` naming the call, the type and the places.

A tool whose return type is not an object sends `{"result": value}` (TOOL-12 wants an object);
a caller that names such a type (`result=int`) gets the value inside.

May import `mcpkit.schema` and `mcpkit.errors`.
"""

from __future__ import annotations

from typing import Any, Final, Generic, TypeVar, cast

from mcpkit.errors import ResultTypeError
from mcpkit.schema import Compiler
from mcpkit.schema.checkers import Checker
from mcpkit.schema.hints import is_object_annotation

__all__ = [
    "ResultReader",
    "reader_for",
]

T = TypeVar("T")

_MAX_CACHED: Final = 256
_READERS: dict[Any, ResultReader[Any]] = {}


def _name(annotation: Any) -> str:
    name = getattr(annotation, "__name__", None)
    return name if isinstance(name, str) and not getattr(annotation, "__args__", None) \
        else repr(annotation).replace("typing.", "")


class ResultReader(Generic[T]):
    """Checks a structured value against one type and builds the value of that type."""

    __slots__ = ("annotation", "checker", "name", "unwrap")

    def __init__(self, annotation: Any) -> None:
        self.annotation = annotation
        self.name = _name(annotation)
        try:
            node = Compiler(mode="validation").node(annotation, f"result={self.name}")
        except TypeError as exc:
            raise TypeError(f"call_tool: {exc}") from None
        self.checker: Checker = node.checker
        self.unwrap = not is_object_annotation(annotation)
        """A non-object type arrives wrapped as `{"result": value}`."""

    def read(self, structured: Any, where: str) -> T:
        if structured is None:
            raise ResultTypeError(
                f"{where}: the result has no structuredContent to read as {self.name} (the "
                "tool declares no outputSchema); call it without result= and read .content")
        value, path = structured, "structuredContent"
        if self.unwrap and isinstance(value, dict) and value.keys() == {"result"}:
            value, path = value["result"], "structuredContent.result"
        problems: list[str] = []
        try:
            built = self.checker(value, path, problems)
        except RecursionError:
            problems.append(f"{path}: nested too deeply to read")
        if problems:
            raise ResultTypeError(
                f"{where}: the structured result does not fit {self.name}: {'; '.join(problems)}")
        return cast(T, built)


def reader_for(annotation: Any) -> ResultReader[Any]:
    """The reader of `annotation`, compiled once per type (a program names few)."""
    try:
        cached = _READERS.get(annotation)
    except TypeError:  # an unhashable annotation: compile it each time
        return ResultReader(annotation)
    if cached is None:
        cached = ResultReader(annotation)
        if len(_READERS) < _MAX_CACHED:
            _READERS[annotation] = cached
    return cached
