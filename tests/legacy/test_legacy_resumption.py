"""The resumability rules of 2025-11-25 streams (`mcpkit.legacy.resumption`), with no event
loop: stream ids, `Last-Event-ID`, which events are written, replays, polling and `retry`."""

from __future__ import annotations

import pytest

from mcpkit.legacy.http_session import resume_refusal
from mcpkit.legacy.resumption import (
    DEFAULT_RETRY_MS,
    is_session_stream,
    polls,
    replay_blocks,
    request_stream_id,
    resume_from,
    retry_block,
    retry_or_default,
    session_stream_id,
    sse_block,
    worth_writing,
)
from mcpkit.protocol.http import Status
from mcpkit.store.legacy.events import EventReplayError, Replay, parse_event_id


def test_a_session_stream_id_names_the_session_stream() -> None:
    assert is_session_stream(session_stream_id("00ff"))
    assert session_stream_id("00ff") == "g00ff"


def test_a_request_stream_id_names_no_session_stream() -> None:
    assert not is_session_stream(request_stream_id("00ff"))
    assert request_stream_id("00ff") == "p00ff"


@pytest.mark.parametrize("token", ["ab12", "0123456789abcdef"])
def test_the_stream_of_an_event_id_is_read_back_from_it(token: str) -> None:
    # The store's ids are `<stream id>.<n>`; the kind of stream survives the round trip.
    stream_id = session_stream_id(token)
    parsed = parse_event_id(f"{stream_id}.7")
    assert parsed == (stream_id, 7)
    assert is_session_stream(parsed[0])


def test_a_get_without_last_event_id_opens_the_session_stream() -> None:
    assert resume_from([]) is None


def test_last_event_id_is_read_as_latin_1_and_stripped() -> None:
    assert resume_from([b"  g1.3 "]) == "g1.3"
    assert resume_from([b"p\xe9.1"]) == "p\xe9.1"


def test_an_empty_last_event_id_still_resumes() -> None:
    # An empty value is a resume of nothing the store knows: the store refuses it as invalid.
    assert resume_from([b"   "]) == ""


@pytest.mark.parametrize("kind, status", [("invalid", Status.BAD_REQUEST),
                                          ("gone", Status.GONE)])
def test_an_id_that_cannot_be_resumed_is_400_or_410_never_404(kind: str, status: int) -> None:
    refusal = resume_refusal(EventReplayError(kind, "no such event"))  # type: ignore[arg-type]
    assert refusal.status == status
    assert refusal.message is not None
    assert "no such event" in refusal.message["error"]["message"]


def test_the_default_retry_applies_only_when_none_is_configured() -> None:
    assert retry_or_default(None) == DEFAULT_RETRY_MS == 1000
    assert retry_or_default(0) == 0
    assert retry_or_default(250) == 250


@pytest.mark.parametrize("primes, retry_ms, expected", [
    (True, 500, True), (True, 0, True), (True, None, False), (False, 500, False),
])
def test_polling_needs_priming_and_a_configured_retry(primes: bool, retry_ms: int | None,
                                                      expected: bool) -> None:
    assert polls(primes, retry_ms) is expected


@pytest.mark.parametrize("data, primes, expected", [
    (b"{}", False, True), (b"{}", True, True), (b"", True, True), (b"", False, False),
])
def test_an_empty_event_is_written_only_to_a_priming_client(data: bytes, primes: bool,
                                                             expected: bool) -> None:
    assert worth_writing(data, primes) is expected


def test_an_sse_block_carries_id_retry_and_one_data_line() -> None:
    assert sse_block("p1.2", b'{"a":1}') == b'id: p1.2\ndata: {"a":1}\n\n'
    assert sse_block("p1.2", b"") == b"id: p1.2\ndata:\n\n"
    assert sse_block("p1.3", b"", 750) == b"id: p1.3\nretry: 750\ndata:\n\n"
    assert sse_block(None, b"x") == b"data: x\n\n"


def test_the_retry_block_of_a_replay_that_has_not_ended() -> None:
    assert retry_block(None) == b"retry: 1000\n\n"
    assert retry_block(20) == b"retry: 20\n\n"


_REPLAY = Replay("p9", [("p9.2", b""), ("p9.3", b'{"m":1}'), ("p9.4", b"")], ended=False)


def test_a_replay_to_a_priming_client_keeps_every_event() -> None:
    assert replay_blocks(_REPLAY, primes=True) == [
        b"id: p9.2\ndata:\n\n", b'id: p9.3\ndata: {"m":1}\n\n', b"id: p9.4\ndata:\n\n"]


def test_a_replay_to_an_older_client_leaves_out_empty_events() -> None:
    assert replay_blocks(_REPLAY, primes=False) == [b'id: p9.3\ndata: {"m":1}\n\n']


def test_a_replay_of_nothing_writes_nothing() -> None:
    assert replay_blocks(Replay("g1", [], ended=True), primes=True) == []
