"""The kinds of value a setting of `mcpkit run` takes (`mcpkit.cli.settings`): how each is read
from text and written back as text, the same for a flag's value, an environment variable and a
line of an env file, so each is checked and refused in the same words.

A reader raises `ValueError` saying what was expected; a `Kind` marked secret is shown hidden
by `--show-config`. Imports the standard library; the store URL forms
(`mcpkit.store.urls`), the HTTP address parser, `CacheHint` and the OpenAPI header lines only
when a value of that kind is read.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "ADDRESS",
    "API_HEADERS",
    "CACHE",
    "COUNT",
    "FALSE_WORDS",
    "GRACE",
    "KEYS",
    "NAMES",
    "SECONDS",
    "SECRET",
    "STORE",
    "SWITCH",
    "TASK_STORE",
    "TEXT",
    "TRUE_WORDS",
    "Kind",
]

TRUE_WORDS: Final = frozenset({"1", "true", "yes", "on"})
FALSE_WORDS: Final = frozenset({"0", "false", "no", "off"})


@dataclass(frozen=True)
class Kind:
    """How a setting's value is read from text and written as text."""

    read: Callable[[str], Any]
    """Text to value; raises `ValueError` saying what was expected."""
    text: Callable[[Any], str] = str
    metavar: str = "VALUE"
    secret: bool = False
    """Shown as hidden by `--show-config`."""


def _switch(text: str) -> bool:
    value = text.strip().lower()
    if value in TRUE_WORDS:
        return True
    if value in FALSE_WORDS:
        return False
    raise ValueError(f"expected 1, true, yes or on (or 0, false, no, off), not {text!r}")


def _count(text: str) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"expected a whole number above zero, not {text!r}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not value > 0 or math.isinf(value):
        raise ValueError(f"expected seconds above zero, e.g. 600, not {text!r}")
    return value


def _grace(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not value >= 0 or math.isinf(value):
        raise ValueError(f"expected seconds, 0 or more, e.g. 30, not {text!r}")
    return value


def _names(text: str) -> tuple[str, ...]:
    return tuple(part for part in text.replace(",", " ").split() if part)


def _cache(text: str) -> Any:
    from mcpkit.server.resources import CacheHint

    ttl, _, scope = text.replace(" ", "").partition(",")
    try:
        return CacheHint(int(ttl), scope or "public")
    except ValueError:
        raise ValueError(f"expected TTL_MS[,public|private], e.g. 60000,public, not {text!r}"
                         ) from None


def _store(text: str, *, paths: bool = False) -> str:
    from mcpkit.store.urls import StoreURLError, parse_store_url

    try:
        parse_store_url(text, paths=paths)
    except StoreURLError as exc:
        raise ValueError(exc.reason) from None
    return text.strip()


def _task_store(text: str) -> str:
    return _store(text, paths=True)


def _address(text: str) -> str:
    from mcpkit.transports.http_server.running import parse_address

    parse_address(text)  # raises ValueError naming the form
    return text.strip()


def _hidden_url(value: Any) -> str:
    """A store URL with its password left out."""
    from urllib.parse import urlsplit

    text = str(value)
    parts = urlsplit(text)
    if parts.password:
        return text.replace(f":{parts.password}@", ":***@", 1)
    return text


SWITCH: Final = Kind(_switch, lambda v: "true" if v else "false", "BOOL")
COUNT: Final = Kind(_count, str, "N")
SECONDS: Final = Kind(_seconds, lambda v: f"{v:g}", "SECONDS")
GRACE: Final = Kind(_grace, lambda v: f"{v:g}", "SECONDS")
TEXT: Final = Kind(str.strip, str, "TEXT")
NAMES: Final = Kind(_names, lambda v: ",".join(v), "NAME[,NAME...]")
CACHE: Final = Kind(_cache, lambda v: f"{v.ttl_ms},{v.scope}", "TTL_MS[,SCOPE]")
STORE: Final = Kind(_store, _hidden_url, "URL")
TASK_STORE: Final = Kind(_task_store, _hidden_url, "PATH/URL")
ADDRESS: Final = Kind(_address, str, "[HOST:]PORT[/PATH]")
SECRET: Final = Kind(str.strip, lambda v: "set", "TEXT", secret=True)
def _api_headers(text: str) -> tuple[str, ...]:
    from mcpkit.cli.run_openapi import header_lines

    return header_lines(text)


API_HEADERS: Final = Kind(_api_headers, lambda v: f"{len(v)} header{'s' * (len(v) != 1)}",
                          "'NAME: VALUE'", secret=True)
KEYS: Final = Kind(_names, lambda v: f"{len(v)} key{'s' * (len(v) != 1)}", "KEY[,KEY...]",
                   secret=True)
