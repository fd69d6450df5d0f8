"""JSON Schema dialects mcpkit accepts (JSS-1..3), for schemas a user or a peer hands us.

One table for the server (raw schemas given at registration) and the client (tool definitions
from a server): a dialect is named by its `$schema` URI, with or without `http(s)://` and a
trailing `#`; a schema without `$schema` is 2020-12. Pure data: no I/O, no jsonschema import.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = [
    "DEFAULT_DIALECT",
    "SUPPORTED_DIALECTS",
    "dialect_key",
    "dialect_of",
    "validator_name",
]

_VALIDATORS: Final = {
    "json-schema.org/draft/2020-12/schema": "Draft202012Validator",
    "json-schema.org/draft/2019-09/schema": "Draft201909Validator",
    "json-schema.org/draft-07/schema": "Draft7Validator",
    "json-schema.org/draft-06/schema": "Draft6Validator",
    "json-schema.org/draft-04/schema": "Draft4Validator",
}
DEFAULT_DIALECT: Final = "json-schema.org/draft/2020-12/schema"
SUPPORTED_DIALECTS: Final = tuple(
    f"https://{uri}" if "/draft/" in uri else f"http://{uri}#" for uri in _VALIDATORS
)
"""The `$schema` URIs accepted, as their specifications spell them."""


def dialect_key(uri: str) -> str:
    """A `$schema` URI without scheme and trailing `#`, the form the table is keyed by."""
    key = uri.strip()
    for scheme in ("https://", "http://"):
        if key.startswith(scheme):
            key = key[len(scheme) :]
            break
    return key.rstrip("#")


def dialect_of(schema: Mapping[str, Any]) -> str | None:
    """The dialect key of a schema, or None when its `$schema` names no supported dialect."""
    declared = schema.get("$schema")
    if declared is None:
        return DEFAULT_DIALECT
    if not isinstance(declared, str):
        return None
    key = dialect_key(declared)
    return key if key in _VALIDATORS else None


def validator_name(dialect: str) -> str:
    """The name of jsonschema's validator class for a supported dialect key."""
    return _VALIDATORS[dialect]
