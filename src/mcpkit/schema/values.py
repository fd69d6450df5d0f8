"""Python values as plain JSON data: what a tool returns, and what may stand as a default.

`output_to_json` is on the hot path of every tool call, so plain JSON (the common case) comes
back as the very same object, with no copy; only containers holding something to convert are
rebuilt. `is_finite_json` decides, at registration, whether a parameter default can be shown in
a schema.

Imports: the standard library only. A pydantic model is converted through its own
`model_dump`, without importing pydantic.
"""

from __future__ import annotations

import dataclasses
import enum
import itertools
import math
import uuid
from collections.abc import Mapping
from datetime import date, datetime, time
from decimal import Decimal
from pathlib import PurePath
from typing import Any, Final

__all__ = [
    "is_finite_json",
    "output_to_json",
]

_SCALARS: Final = frozenset({str, int, float, bool, type(None)})


def _json_key(key: Any) -> str:
    if isinstance(key, str):
        return str(key)
    converted = output_to_json(key)
    return converted if isinstance(converted, str) else str(converted)


def output_to_json(value: Any) -> Any:
    """Make a tool's return value JSON data; plain JSON comes back as the very same object."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is dict:
        changed: dict[str, Any] | None = None
        for i, (key, item) in enumerate(value.items()):
            if type(item) in _SCALARS and type(key) is str:
                if changed is not None:
                    changed[key] = item
                continue
            new = output_to_json(item)
            new_key = key if type(key) is str else _json_key(key)
            if changed is None:
                if new is item and new_key is key:
                    continue
                changed = dict(itertools.islice(value.items(), i))
            changed[new_key] = new
        return value if changed is None else changed
    if kind is list:
        copied: list[Any] | None = None
        for i, item in enumerate(value):
            if type(item) in _SCALARS:
                if copied is not None:
                    copied.append(item)
                continue
            new = output_to_json(item)
            if copied is None:
                if new is item:
                    continue
                copied = value[:i]
            copied.append(new)
        return value if copied is None else copied
    if isinstance(value, enum.Enum):
        return output_to_json(value.value)
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, (uuid.UUID, Decimal, PurePath)):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: output_to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        return dump(mode="json", by_alias=True)
    if isinstance(value, Mapping):
        return {_json_key(key): output_to_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [output_to_json(item) for item in value]
    for scalar in (bool, str, int, float):
        if isinstance(value, scalar):
            return scalar(value)
    raise TypeError(
        f"cannot convert {kind.__name__} to JSON; return JSON data, a dataclass or a model"
    )


def is_finite_json(value: Any) -> bool:
    """True for plain JSON data only; used to decide if a default can go into a schema."""
    if value is None or isinstance(value, (str, bool, int)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(is_finite_json(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and is_finite_json(v) for k, v in value.items())
    return False
