"""The per-request `_meta` checks, one test per rejection rule, in the spec's order."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.errors import InvalidParamsError, UnsupportedProtocolVersionError
from mcpkit.protocol.envelope import missing_capabilities, read_meta

V = "io.modelcontextprotocol/protocolVersion"
C = "io.modelcontextprotocol/clientCapabilities"


def meta(**kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {V: "2026-07-28", C: {}}
    base.update(kw)
    return {"_meta": base}


def test_complete_meta_is_accepted() -> None:
    m = read_meta("tools/list", meta(**{"io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"}}))
    assert m.protocol_version == "2026-07-28"
    assert m.client_capabilities == {}
    assert m.client_info == {"name": "c", "version": "1"}


def test_client_info_is_optional() -> None:
    assert read_meta("tools/list", meta()).client_info is None


@pytest.mark.parametrize(
    "params",
    [None, {}, {"_meta": None}, {"_meta": []}, {"_meta": {C: {}}}, {"_meta": {V: "2026-07-28"}},
     {"_meta": {V: 20260728, C: {}}}, {"_meta": {V: "2026-07-28", C: []}}],
)
def test_missing_or_malformed_required_keys_are_invalid_params(params: Any) -> None:
    with pytest.raises(InvalidParamsError) as info:
        read_meta("tools/list", params)
    assert info.value.code == -32602
    assert "tools/list" in info.value.message


def test_missing_keys_are_reported_before_an_unknown_version() -> None:
    with pytest.raises(InvalidParamsError):
        read_meta("x", {"_meta": {V: "2099-01-01"}})


@pytest.mark.parametrize("version", ["2099-01-01", "1900-01-01", "2025-11-25", ""])
def test_unsupported_version_lists_supported_and_requested(version: str) -> None:
    with pytest.raises(UnsupportedProtocolVersionError) as info:
        read_meta("server/discover", meta(**{V: version}))
    assert info.value.code == -32022
    assert info.value.data == {"supported": ["2026-07-28", "2025-11-25"], "requested": version}


def test_unknown_log_level_is_invalid_params() -> None:
    with pytest.raises(InvalidParamsError, match="logLevel"):
        read_meta("tools/call", meta(**{"io.modelcontextprotocol/logLevel": "loud"}))


def test_progress_token_must_be_string_or_integer() -> None:
    assert read_meta("x", meta(progressToken="t")).progress_token == "t"
    with pytest.raises(InvalidParamsError, match="progressToken"):
        read_meta("x", meta(progressToken=1.5))


def test_trace_context_is_read_from_meta() -> None:
    m = read_meta("x", meta(traceparent="00-abc-def-01", baggage="k=v"))
    assert m.trace == {"traceparent": "00-abc-def-01", "baggage": "k=v"}


@pytest.mark.parametrize(
    ("declared", "required", "missing"),
    [
        ({}, {"sampling": {}}, {"sampling": {}}),
        ({"sampling": {}}, {"sampling": {}}, {}),
        ({"elicitation": {}}, {"elicitation": {"form": {}}}, {}),
        ({"elicitation": {}}, {"elicitation": {"url": {}}}, {"elicitation": {"url": {}}}),
        ({"elicitation": {"url": {}}}, {"elicitation": {"form": {}}}, {"elicitation": {"form": {}}}),
        ({"sampling": {}}, {"sampling": {"tools": {}}}, {"sampling": {"tools": {}}}),
    ],
)
def test_missing_capabilities_names_exactly_what_is_lacking(
    declared: dict[str, Any], required: dict[str, Any], missing: dict[str, Any]
) -> None:
    assert missing_capabilities(declared, required) == missing


def test_every_missing_capability_is_named_not_only_the_first() -> None:
    # A client told only part of what it lacks would fix one capability per round trip.
    required = {"roots": {}, "elicitation": {"url": {}}, "sampling": {"tools": {}}}
    assert missing_capabilities({"sampling": {}}, required) == required
    assert missing_capabilities({"elicitation": {}}, {"roots": {}, "sampling": {}}) == {
        "roots": {}, "sampling": {}}
