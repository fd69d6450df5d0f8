"""The per-request envelope of the modern era: the `_meta` every client request carries.

`read_meta` applies the checks in the order the spec gives them: the required keys present and
well formed (-32602), then the version supported (-32022). What passes is a `RequestMeta`, the
only form in which the rest of mcpkit sees a request's version, client capabilities, client
info, log level, progress token and trace context. Nothing is inferred from earlier requests.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpkit.errors import InvalidParamsError, UnsupportedProtocolVersionError
from mcpkit.types.constants import (
    CLIENT_CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    LOG_LEVEL_KEY,
    LOG_LEVELS,
    MODERN_VERSION,
    PROGRESS_TOKEN_KEY,
    PROTOCOL_VERSION_KEY,
    SUPPORTED_VERSIONS,
    TRACE_KEYS,
)

__all__ = [
    "MODERN_VERSIONS",
    "RequestMeta",
    "missing_capabilities",
    "read_meta",
]

MODERN_VERSIONS: frozenset[str] = frozenset({MODERN_VERSION})
"""Versions a request may declare in `_meta`; legacy versions are reached through initialize."""

_EMPTY: dict[str, Any] = {}


class RequestMeta:
    """What a request says about itself in `_meta`, checked."""

    __slots__ = (
        "client_capabilities",
        "client_info",
        "log_level",
        "progress_token",
        "protocol_version",
        "raw",
    )

    def __init__(
        self,
        protocol_version: str,
        client_capabilities: dict[str, Any],
        client_info: dict[str, Any] | None = None,
        log_level: str | None = None,
        progress_token: str | int | None = None,
        raw: dict[str, Any] | None = None,
    ) -> None:
        self.protocol_version = protocol_version
        self.client_capabilities = client_capabilities
        self.client_info = client_info
        self.log_level = log_level
        self.progress_token = progress_token
        self.raw = raw if raw is not None else _EMPTY

    @property
    def trace(self) -> dict[str, str]:
        """OpenTelemetry context (`traceparent`, `tracestate`, `baggage`) as sent."""
        raw = self.raw
        return {k: raw[k] for k in TRACE_KEYS if type(raw.get(k)) is str}

    def to_meta(self) -> dict[str, Any]:
        """The `_meta` object that declares exactly this (used by the legacy adapter)."""
        meta: dict[str, Any] = {
            PROTOCOL_VERSION_KEY: self.protocol_version,
            CLIENT_CAPABILITIES_KEY: self.client_capabilities,
        }
        if self.client_info is not None:
            meta[CLIENT_INFO_KEY] = self.client_info
        if self.log_level is not None:
            meta[LOG_LEVEL_KEY] = self.log_level
        if self.progress_token is not None:
            meta[PROGRESS_TOKEN_KEY] = self.progress_token
        return meta


def read_meta(method: str, params: Mapping[str, Any] | None) -> RequestMeta:
    """Check a modern request's `_meta` and return what it declares.

    Raises InvalidParamsError for missing or malformed keys, and
    UnsupportedProtocolVersionError for a version this implementation does not serve.
    """
    if params is None:
        raise InvalidParamsError(
            f"{method}: params._meta is required (with {PROTOCOL_VERSION_KEY} and "
            f"{CLIENT_CAPABILITIES_KEY})"
        )
    meta = params.get("_meta")
    if type(meta) is not dict:
        raise InvalidParamsError(
            f"{method}: params._meta must be an object carrying {PROTOCOL_VERSION_KEY} and "
            f"{CLIENT_CAPABILITIES_KEY}"
        )
    version = meta.get(PROTOCOL_VERSION_KEY)
    if type(version) is not str:
        raise InvalidParamsError(
            f"{method}: _meta[{PROTOCOL_VERSION_KEY!r}] is required and must be a string"
        )
    caps = meta.get(CLIENT_CAPABILITIES_KEY)
    if type(caps) is not dict:
        raise InvalidParamsError(
            f"{method}: _meta[{CLIENT_CAPABILITIES_KEY!r}] is required and must be an object "
            "({} declares no optional capabilities)"
        )
    if version not in MODERN_VERSIONS:
        raise UnsupportedProtocolVersionError(version, SUPPORTED_VERSIONS)
    info = meta.get(CLIENT_INFO_KEY)
    if info is not None and type(info) is not dict:
        raise InvalidParamsError(f"{method}: _meta[{CLIENT_INFO_KEY!r}] must be an object")
    level = meta.get(LOG_LEVEL_KEY)
    if level is not None and level not in LOG_LEVELS:
        raise InvalidParamsError(
            f"{method}: _meta[{LOG_LEVEL_KEY!r}] must be one of {', '.join(LOG_LEVELS)}; "
            f"got {level!r}"
        )
    token = meta.get(PROGRESS_TOKEN_KEY)
    if token is not None and type(token) is not str and type(token) is not int:
        raise InvalidParamsError(f"{method}: _meta.progressToken must be a string or an integer")
    return RequestMeta(version, caps, info, level, token, meta)


def missing_capabilities(
    declared: Mapping[str, Any], required: Mapping[str, Any]
) -> dict[str, Any]:
    """The part of `required` that `declared` lacks, as a ClientCapabilities object.

    Nested objects are compared one level down, so `{"elicitation": {"url": {}}}` is missing
    from a client that declared only `{"elicitation": {"form": {}}}`. An empty `elicitation`
    object means form mode (ELIC-1).
    """
    missing: dict[str, Any] = {}
    for name, sub in required.items():
        have = declared.get(name)
        if type(have) is not dict:
            missing[name] = sub
            continue
        if name == "elicitation" and not have:
            have = {"form": {}}
        if isinstance(sub, Mapping):
            lacking = {k: v for k, v in sub.items() if k not in have}
            if lacking:
                missing[name] = lacking
    return missing
