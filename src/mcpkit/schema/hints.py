"""What a type annotation says before it becomes a schema: `Annotated` metadata (`Param`, a
description, a pydantic-like `Field`), `Optional`, unions, and the fields of a dataclass or
TypedDict.

`Param` lives here because this is where `Annotated` metadata is read; the public spelling is
`mcpkit.Param`. The schema and checker of an annotation are made in `mcpkit.schema.compiler`.

Imports: the standard library and `mcpkit.schema.limits`. Pydantic is never imported: a model
is recognised only when pydantic is already loaded.
"""

from __future__ import annotations

import collections.abc as cabc
import dataclasses
import inspect
import sys
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, NotRequired, Required, Union, get_args, get_origin

from mcpkit.schema.limits import NO_DEFAULT, Reading, read_metadata

__all__ = [
    "MAPPINGS",
    "Meta",
    "Param",
    "dataclass_doc",
    "default_of",
    "field_default",
    "fields_of",
    "is_object_annotation",
    "is_pydantic_model",
    "is_union",
    "split_annotated",
    "strip_optional",
]

_NONE: Final = type(None)
_EMPTY = inspect.Parameter.empty
MAPPINGS: Final = frozenset({dict, cabc.Mapping, cabc.MutableMapping})


@dataclass(frozen=True, slots=True)
class Param:
    """Metadata for `Annotated[X, Param(...)]`; `header` mirrors the argument into the HTTP
    header `Mcp-Param-{header}` (the `x-mcp-header` annotation), for top-level string, integer
    or boolean parameters only."""

    description: str | None = None
    title: str | None = None
    header: str | None = None


@dataclass(frozen=True, slots=True)
class Meta:
    """What the `Annotated` metadata of one annotation says about it."""

    description: str | None = None
    title: str | None = None
    header: str | None = None
    limits: tuple[tuple[str, Any], ...] = ()
    """Limits besides the type (`mcpkit.schema.limits`): ("ge", 1), ("pattern", "^a"), ..."""
    keywords: Mapping[str, Any] = field(default_factory=dict)
    """Schema annotations published as they are (examples, deprecated, json_schema_extra)."""
    default: Any = NO_DEFAULT
    """A default the metadata gives (pydantic's `Field(default=...)`)."""
    factory: Callable[[], Any] | None = None
    problem: str | None = None
    """Why the metadata cannot be published as it is: raised at registration."""

    def merged(self, inner: Meta) -> Meta:
        """This metadata around `inner`'s (`Optional[Annotated[X, ...]]`): the outer wins."""
        return Meta(
            self.description or inner.description, self.title or inner.title,
            self.header or inner.header, inner.limits + self.limits,
            {**inner.keywords, **self.keywords},
            self.default if self.default is not NO_DEFAULT else inner.default,
            self.factory or inner.factory, self.problem or inner.problem,
        )


def split_annotated(annotation: Any) -> tuple[Any, Meta]:
    """Strip `Annotated`; read a description from a str or a `Param`, and what pydantic's
    `Field`, annotated_types' limits or a `Doc` say (`mcpkit.schema.limits`)."""
    if get_origin(annotation) is not typing.Annotated:
        return annotation, Meta()
    header = None
    reading = Reading()
    for item in annotation.__metadata__:
        if isinstance(item, str):
            reading.description = reading.description or item
        elif isinstance(item, Param):
            reading.description = item.description or reading.description
            reading.title = item.title or reading.title
            header = item.header or header
        elif not read_metadata(item, reading):
            found = getattr(item, "description", None)  # a Field-like object of another kind
            if isinstance(found, str):
                reading.description = found
            found = getattr(item, "title", None)
            if isinstance(found, str):
                reading.title = found
    return annotation.__origin__, Meta(
        reading.description, reading.title, header, tuple(reading.limits), reading.keywords,
        reading.default, reading.factory, reading.problem,
    )


def field_default(annotation: Any, default: Any) -> tuple[Any, Any]:
    """`n: int = Field(ge=1)`, pydantic's `Field` given as the default (as FastMCP users
    write), read as `n: Annotated[int, Field(ge=1)]` with no default of its own: the Field's
    default, if it names one, is the metadata's (`Meta.default`)."""
    fields = sys.modules.get("pydantic.fields")
    if fields is not None and isinstance(default, fields.FieldInfo):
        return typing.Annotated[annotation, default], _EMPTY
    return annotation, default


def default_of(default: Any, meta: Meta) -> Any:
    """The default a parameter or field has: its own, else the one its metadata names, else
    `inspect.Parameter.empty` (a factory's value is made per call: no default to show)."""
    if default is not _EMPTY:
        return default
    return _EMPTY if meta.default is NO_DEFAULT else meta.default


def is_union(annotation: Any) -> bool:
    return get_origin(annotation) in (Union, types.UnionType)


def strip_optional(annotation: Any) -> tuple[Any, bool]:
    if not is_union(annotation):
        return annotation, annotation is None or annotation is _NONE
    rest = [arg for arg in get_args(annotation) if arg is not _NONE]
    if len(rest) == len(get_args(annotation)):
        return annotation, False
    return (rest[0] if len(rest) == 1 else Union[tuple(rest)]), True  # noqa: UP007


def is_pydantic_model(annotation: Any) -> bool:
    return (
        "pydantic" in sys.modules
        and isinstance(annotation, type)
        and hasattr(annotation, "model_json_schema")
        and hasattr(annotation, "model_validate")
    )


def is_object_annotation(annotation: Any) -> bool:
    base = split_annotated(annotation)[0]
    if isinstance(base, type) and (
        dataclasses.is_dataclass(base) or typing.is_typeddict(base) or is_pydantic_model(base)
    ):
        return True
    return (get_origin(base) or base) in MAPPINGS


def dataclass_doc(cls: type) -> str | None:
    doc = cls.__doc__
    if not doc or doc.startswith(f"{cls.__name__}("):  # the text dataclasses makes up
        return None
    return inspect.cleandoc(doc)


_Field = tuple[str, Any, Any, bool, str | None]


def fields_of(cls: type, hints: Mapping[str, Any]) -> list[_Field]:
    """(name, annotation, default, required, description) of a dataclass or TypedDict."""
    if not dataclasses.is_dataclass(cls):
        fields: list[_Field] = []
        for key, hint in hints.items():
            origin = get_origin(hint)
            if origin is NotRequired or origin is Required:  # unreliable in __required_keys__
                fields.append((key, get_args(hint)[0], _EMPTY, origin is Required, None))
            else:
                fields.append(
                    (key, hint, _EMPTY, key in getattr(cls, "__required_keys__", ()), None)
                )
        return fields
    out: list[_Field] = []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        missing = dataclasses.MISSING
        described = f.metadata.get("description") if f.metadata else None
        out.append(
            (
                f.name,
                hints.get(f.name, Any),
                _EMPTY if f.default is missing else f.default,
                f.default is missing and f.default_factory is missing,
                described if isinstance(described, str) else None,
            )
        )
    return out
