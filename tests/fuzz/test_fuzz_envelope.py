"""The `_meta` envelope of a modern request, whatever params a client sends.

`read_meta` returns a `RequestMeta` whose every member has the type the rest of mcpkit reads
it as, or refuses the request with the spec's error for the first check it fails:
InvalidParamsError (-32602) for a missing or malformed key, UnsupportedProtocolVersionError
(-32022, carrying the versions served) for a version it does not serve. Nothing else escapes,
and what passes, written back with `to_meta`, reads the same. The capability check behind
MissingRequiredClientCapabilityError takes any declared capabilities.
"""

from __future__ import annotations

from typing import Any

from helpers.wire import MODERN, check_server_message
from hypothesis import given
from hypothesis import strategies as st
from peer_values import json_values, meta_objects, near_miss_params

from mcpkit.errors import (
    InvalidParamsError,
    MissingRequiredClientCapabilityError,
    UnsupportedProtocolVersionError,
)
from mcpkit.protocol.codec import error_message
from mcpkit.protocol.envelope import MODERN_VERSIONS, RequestMeta, missing_capabilities, read_meta
from mcpkit.types.constants import LOG_LEVELS, SUPPORTED_VERSIONS


def _as_sent(exc: Any) -> None:
    """The error response the server would send for `exc`, checked against the schema."""
    check_server_message(MODERN, error_message(1, exc.to_error()), "tools/call")


def _read(params: Any) -> RequestMeta | InvalidParamsError | UnsupportedProtocolVersionError:
    try:
        return read_meta("tools/call", params)
    except UnsupportedProtocolVersionError as exc:
        assert exc.to_error()["code"] == -32022
        assert list(exc.to_error()["data"]["supported"]) == list(SUPPORTED_VERSIONS)
        _as_sent(exc)
        return exc
    except InvalidParamsError as exc:
        assert exc.to_error()["code"] == -32602
        assert exc.message.startswith("tools/call: "), exc.message
        _as_sent(exc)
        return exc


def _well_typed(meta: RequestMeta) -> None:
    assert meta.protocol_version in MODERN_VERSIONS
    assert type(meta.client_capabilities) is dict
    assert meta.client_info is None or type(meta.client_info) is dict
    assert meta.log_level is None or meta.log_level in LOG_LEVELS
    assert meta.progress_token is None or type(meta.progress_token) in (str, int)
    assert all(type(v) is str for v in meta.trace.values())


@given(near_miss_params())
def test_any_params_give_a_checked_meta_or_the_specs_error(params: Any) -> None:
    read = _read(params if type(params) is dict else None)
    if isinstance(read, RequestMeta):
        _well_typed(read)


@given(meta_objects())
def test_a_meta_that_passes_reads_the_same_written_back(meta: Any) -> None:
    read = _read({"_meta": meta})
    if isinstance(read, RequestMeta):
        _well_typed(read)
        again = read_meta("tools/call", {"_meta": read.to_meta()})
        assert again.to_meta() == read.to_meta()


@given(st.dictionaries(st.sampled_from(["elicitation", "sampling", "roots", "x"]),
                       json_values(4), max_size=4),
       st.sampled_from([{"elicitation": {"form": {}}}, {"elicitation": {"url": {}}},
                        {"sampling": {}}, {"roots": {}}, {"sampling": {"tools": {}}}]))
def test_any_declared_capabilities_are_compared_without_error(
    declared: dict[str, Any], required: dict[str, Any]
) -> None:
    missing = missing_capabilities(declared, required)
    assert type(missing) is dict and set(missing) <= set(required)
    if missing:
        exc = MissingRequiredClientCapabilityError(missing, "tools/call 'x' needs more")
        assert exc.to_error()["code"] == -32021
        _as_sent(exc)
    if declared == required:
        assert missing == {}
