"""The HTTP client transport's era seam without I/O: what each era puts on a request, whether a
broken stream is resumed, and whether a 404 ends a session."""

from __future__ import annotations

import pytest

from mcpkit.client.legacy.http_session import LegacyHTTPSession
from mcpkit.errors import TransportError
from mcpkit.transports.http_client.era import ModernHTTP

CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "hi"},
                   "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}


def test_a_modern_request_carries_its_mirrored_headers() -> None:
    headers = ModernHTTP({}).headers({"accept": "*/*"}, CALL)
    assert headers["mcp-method"] == "tools/call" and headers["mcp-name"] == "echo"
    assert headers["mcp-protocol-version"] == "2026-07-28" and headers["accept"] == "*/*"


def test_a_modern_request_mirrors_the_parameters_its_tool_names() -> None:
    headers = ModernHTTP({"echo": {"Text": ("text",)}}).headers({}, CALL)
    assert headers["mcp-param-Text"] == "hi"


def test_initialize_and_messageless_requests_get_no_modern_headers() -> None:
    era = ModernHTTP({})
    assert era.headers({"a": "b"}, None) == {"a": "b"}
    assert era.headers({}, {"jsonrpc": "2.0", "id": 1, "method": "initialize"}) == {}


def test_a_modern_message_that_cannot_be_mirrored_is_a_transport_error() -> None:
    big = {**CALL, "params": {**CALL["params"], "arguments": {"n": 2**60}}}
    with pytest.raises(TransportError, match="tools/call echo: integer"):
        ModernHTTP({"echo": {"N": ("n",)}}).headers({}, big)


def test_the_modern_era_has_no_session_and_resumes_nothing() -> None:
    era = ModernHTTP({})
    assert (era.era, era.session_id, era.legacy_version) == ("modern", None, None)
    assert not era.resumes("s1-7") and not era.ends_on(404)


def test_initialize_opens_a_legacy_session_only_when_it_names_a_version() -> None:
    session = LegacyHTTPSession.negotiated("abc", {"protocolVersion": "2025-11-25"})
    assert session is not None and session.era == "legacy"
    assert (session.session_id, session.legacy_version) == ("abc", "2025-11-25")
    assert LegacyHTTPSession.negotiated("abc", {"protocolVersion": 7}) is None
    assert LegacyHTTPSession.negotiated("abc", {}) is None


def test_every_legacy_request_carries_the_session_and_its_version() -> None:
    session = LegacyHTTPSession("abc", "2025-06-18")
    for message in (CALL, None):
        assert session.headers({}, message) == {
            "mcp-session-id": "abc", "mcp-protocol-version": "2025-06-18"}
    assert LegacyHTTPSession(None, "2025-11-25").headers({}, CALL) == {
        "mcp-protocol-version": "2025-11-25"}


def test_a_legacy_stream_is_resumed_from_its_last_event_id_only() -> None:
    session = LegacyHTTPSession("abc", "2025-11-25")
    assert session.resumes("s1-7") and not session.resumes(None)


def test_a_404_ends_the_legacy_session_while_its_id_is_held() -> None:
    session = LegacyHTTPSession("abc", "2025-11-25")
    assert session.ends_on(404) and not session.ends_on(400) and not session.ends_on(200)
    session.forget()
    assert session.session_id is None and not session.ends_on(404)
    assert session.headers({}, None) == {"mcp-protocol-version": "2025-11-25"}
    assert not LegacyHTTPSession(None, "2025-11-25").ends_on(404)
