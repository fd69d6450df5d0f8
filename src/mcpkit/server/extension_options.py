"""Options that belong to an extension rather than to the core: the server's and a tool's.

The core carries them without reading them. An extension names its server options type once
(`register_options`, at its import): `ServerOptions.extensions` then holds an instance under
that name, the command line's dotted settings reach its fields (`tasks.lease_s`), and the
extension reads its own with `ServerOptions.extension`, its defaults when none was given.

A tool's options that the core does not know (`add_tool(fn, task="optional")`) are kept on
the `Tool` (`Tool.extension_options`). A server serves such a tool only when an extension
installed on it takes every one of them (`Server.take_tool_options`): that extension checks
their values at registration and says whether the tool's calls go to the server's tool
interceptor. A tool carrying an option nobody on the server takes is refused at registration,
with the hint its owner declared (`describe_tool_options`) when its owner was imported.

Imports nothing of mcpkit.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

__all__ = [
    "ToolOptionsOwner",
    "check_extension_options",
    "describe_tool_options",
    "options_kind",
    "register_options",
    "tool_option_owner",
]

_KINDS: dict[str, type[Any]] = {}
_OWNERS: dict[str, ToolOptionsOwner] = {}


@dataclass(frozen=True, slots=True)
class ToolOptionsOwner:
    """Who takes a tool option, for the refusal of a tool whose server lacks it."""

    owner: str
    """What takes it, as a reader knows it: "the Tasks extension"."""
    install: str
    """How to install it, as an instruction: "call ... before registering it"."""


def register_options(name: str, kind: type[Any]) -> None:
    """Name `kind` the options of an extension in `ServerOptions.extensions` (once a
    process; registering the same pair again does nothing)."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"an extension's options are named by an identifier, not {name!r}")
    known = _KINDS.get(name)
    if known is not None and known is not kind:
        raise ValueError(f"the extension options {name!r} are {known.__name__} already")
    _KINDS[name] = kind


def options_kind(name: str) -> type[Any] | None:
    """The options type registered under `name`, or None."""
    return _KINDS.get(name)


def check_extension_options(extensions: Mapping[str, Any]) -> Mapping[str, Any]:
    """`ServerOptions.extensions` checked, as a read-only mapping: each name registered, each
    value of its registered type."""
    if not isinstance(extensions, Mapping):
        raise TypeError(f"ServerOptions.extensions maps an extension's name to its options, "
                        f"not {type(extensions).__name__}")
    for name, value in extensions.items():
        kind = _KINDS.get(name)
        if kind is None:
            known = ", ".join(repr(k) for k in sorted(_KINDS)) or "none (import the extension)"
            raise ValueError(f"ServerOptions.extensions[{name!r}]: no extension takes options "
                             f"of that name; known: {known}")
        if not isinstance(value, kind):
            raise TypeError(f"ServerOptions.extensions[{name!r}] is a {kind.__name__}, not "
                            f"{type(value).__name__}")
    return MappingProxyType(dict(extensions))


def describe_tool_options(names: Iterable[str], owner: str, install: str) -> None:
    """Say who takes the tool options `names` (at the owner's import), so that a server
    without it refuses such a tool with how to install it."""
    for name in names:
        _OWNERS[name] = ToolOptionsOwner(owner, install)


def tool_option_owner(name: str) -> ToolOptionsOwner | None:
    return _OWNERS.get(name)
