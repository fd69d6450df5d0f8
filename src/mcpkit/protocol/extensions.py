"""Extension identifiers and what a request declares of them (CAP-5..8, META-1/META-2).

An extension is named like a `_meta` key with a mandatory prefix (`com.example/search`), and
negotiated per request: the server lists the ones it offers in `capabilities.extensions` of
`server/discover`, a client declares the ones it speaks in the `clientCapabilities.extensions`
of each request's `_meta`. Nothing is remembered between requests, so whether a caller speaks
an extension is a question about one request's capabilities, answered here.

A prefix whose second label is `modelcontextprotocol` or `mcp` is reserved for the project
that writes the specification (META-2). Only the identifiers that project has published
(`OFFICIAL`) may be declared under it; a third-party extension uses a prefix of its own.

Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

__all__ = [
    "APPS",
    "CLIENT_CREDENTIALS",
    "ENTERPRISE_MANAGED_AUTHORIZATION",
    "OFFICIAL",
    "SKILLS",
    "TASKS",
    "check_extension_id",
    "declared",
    "is_reserved",
    "requirement",
]

TASKS: Final = "io.modelcontextprotocol/tasks"
SKILLS: Final = "io.modelcontextprotocol/skills"
APPS: Final = "io.modelcontextprotocol/ui"
CLIENT_CREDENTIALS: Final = "io.modelcontextprotocol/oauth-client-credentials"
ENTERPRISE_MANAGED_AUTHORIZATION: Final = "io.modelcontextprotocol/enterprise-managed-authorization"

OFFICIAL: Final = frozenset({TASKS, SKILLS, APPS, CLIENT_CREDENTIALS,
                             ENTERPRISE_MANAGED_AUTHORIZATION})
"""The published extensions under the reserved prefix; no other reserved identifier is valid."""

_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_IDENT = re.compile(rf"(?P<prefix>{_LABEL}(?:\.{_LABEL})*)/(?P<name>{_NAME})")
_RESERVED_LABELS: Final = frozenset({"modelcontextprotocol", "mcp"})


def is_reserved(ident: str) -> bool:
    """Whether the identifier's prefix is the specification's own (its second label is
    `modelcontextprotocol` or `mcp`: `io.modelcontextprotocol/`, `dev.mcp/`, not
    `com.example.mcp/`)."""
    prefix = ident.partition("/")[0]
    labels = prefix.split(".")
    return len(labels) >= 2 and labels[1].lower() in _RESERVED_LABELS


def check_extension_id(ident: object) -> str:
    """`ident` if it is a valid extension identifier; ValueError saying what is wrong."""
    if not isinstance(ident, str):
        raise ValueError(f"an extension identifier is a string, not {type(ident).__name__}")
    if _IDENT.fullmatch(ident) is None:
        raise ValueError(
            f"extension identifier {ident!r} is not of the form prefix/name with a dotted "
            "reverse-DNS prefix (for example 'com.example/search'): each prefix label starts "
            "with a letter and ends with a letter or digit, and the name starts and ends with a "
            "letter or digit"
        )
    if is_reserved(ident) and ident not in OFFICIAL:
        raise ValueError(
            f"extension identifier {ident!r} uses a prefix reserved for the specification's "
            f"own extensions ({', '.join(sorted(OFFICIAL))}); name a third-party extension "
            "under a domain of your own, such as 'com.example/"
            f"{ident.partition('/')[2]}'"
        )
    return ident


def declared(capabilities: Mapping[str, Any], ident: str) -> dict[str, Any] | None:
    """The settings a request's client capabilities declare for `ident`, or None when they do
    not declare it (a settings value that is not an object counts as not declared)."""
    extensions = capabilities.get("extensions")
    if not isinstance(extensions, Mapping):
        return None
    settings = extensions.get(ident)
    return settings if isinstance(settings, dict) else None


def requirement(ident: str, settings: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The `requiredCapabilities` of a -32021 naming one extension (TASK-4)."""
    return {"extensions": {ident: dict(settings or {})}}
