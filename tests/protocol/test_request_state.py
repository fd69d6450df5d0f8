"""Sealed tokens with no event loop: every check that opening makes, and the ones sealing keeps."""

from __future__ import annotations

import base64
import itertools
from typing import Any

import pytest

from mcpkit.protocol.request_state import (
    HANDLE,
    MAX_TOKEN_CHARS,
    REQUEST_STATE,
    KeyRing,
    StateRejected,
    arguments_digest,
    decode_key,
    open_token,
    seal_token,
    target_digest,
)

OLD = bytes(range(32))
NEW = bytes(range(1, 33))
WHERE = "tools/call 'book'"
_counter = itertools.count()


def fresh_random(n: int) -> bytes:
    """Deterministic and never repeating, so tests replay exactly."""
    return next(_counter).to_bytes(n, "big")


def ring(*keys: bytes | str) -> KeyRing:
    return KeyRing(keys or (OLD,), fresh_random)


def seal(r: KeyRing | None = None, **overrides: Any) -> str:
    kwargs: dict[str, Any] = {
        "now": 1000.0, "ttl": 300.0, "principal": "alice",
        "target": target_digest("tools/call", "book"), "arguments": arguments_digest({"n": 1}),
        "body": b'{"s":{"step":2}}',
    }
    kwargs.update(overrides)
    return seal_token(r or ring(), REQUEST_STATE, **kwargs)


def open_(token: str, r: KeyRing | None = None, **overrides: Any) -> Any:
    kwargs: dict[str, Any] = {
        "now": 1001.0, "principal": "alice", "target": target_digest("tools/call", "book"),
        "arguments": arguments_digest({"n": 1}), "where": WHERE, "target_noun": "tool",
    }
    kwargs.update(overrides)
    return open_token(r or ring(), REQUEST_STATE, token, **kwargs)


def rejected(token: str, reason: str, **overrides: Any) -> str:
    with pytest.raises(StateRejected) as info:
        open_(token, **overrides)
    assert info.value.reason == reason
    assert info.value.code == -32602
    assert info.value.message.startswith(WHERE)
    return info.value.message


def test_a_sealed_state_opens_with_its_body_and_expiry() -> None:
    opened = open_(seal())
    assert opened.body == b'{"s":{"step":2}}'
    assert opened.expires_at == 1300.0
    assert len(opened.nonce) == 12


def test_the_token_is_urlsafe_text_that_reveals_nothing_of_the_body() -> None:
    token = seal(body=b'{"secret":"hunter2"}')
    assert set(token) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    assert b"hunter2" not in raw and b"alice" not in raw


def test_two_seals_of_the_same_state_differ() -> None:
    assert seal() != seal()


def test_a_tampered_state_fails_its_integrity_check() -> None:
    token = seal()
    flipped = token[:30] + ("A" if token[30] != "A" else "B") + token[31:]
    assert "altered" in rejected(flipped, "integrity")


def test_a_state_with_text_appended_is_rejected() -> None:
    with pytest.raises(StateRejected) as info:
        open_(seal() + "-TAMPERED")
    assert info.value.reason in ("malformed", "integrity")


def test_a_truncated_state_is_rejected() -> None:
    assert "truncated" in rejected(seal()[:20], "malformed")


def test_a_state_that_is_not_base64url_is_rejected() -> None:
    assert "base64url" in rejected("not base64!", "malformed")
    assert "base64url" in rejected(seal().replace("-", "+", 1) + "+/", "malformed")


def test_an_oversized_state_is_rejected_before_any_work() -> None:
    rejected("A" * (MAX_TOKEN_CHARS + 1), "malformed")


def test_an_unknown_format_version_is_rejected() -> None:
    raw = bytearray(base64.urlsafe_b64decode(seal() + "=="))
    raw[0] = 9
    token = base64.urlsafe_b64encode(bytes(raw)).decode().rstrip("=")
    assert "format version 9" in rejected(token, "version")


def test_an_expired_state_is_rejected_saying_how_long_ago() -> None:
    message = rejected(seal(), "expired", now=1400.0)
    assert "expired 100 s ago" in message


def test_a_state_sealed_for_another_principal_is_rejected() -> None:
    rejected(seal(), "principal", principal="mallory")
    rejected(seal(), "principal", principal=None)
    rejected(seal(principal=None), "principal", principal="alice")
    assert open_(seal(principal=None), principal=None)


def test_a_state_for_another_tool_is_rejected() -> None:
    message = rejected(seal(), "target", target=target_digest("tools/call", "cancel"))
    assert "different tool" in message


def test_a_state_for_the_same_name_under_another_method_is_rejected() -> None:
    rejected(seal(), "target", target=target_digest("prompts/get", "book"))


def test_a_state_for_other_arguments_is_rejected() -> None:
    message = rejected(seal(), "arguments", arguments=arguments_digest({"n": 2}))
    assert "arguments" in message


# The first 16 bytes of SHA-256 over the compact, key-sorted JSON of the arguments, computed
# apart from mcpkit (`printf '%s' '{"a":1,"b":[1,2]}' | sha256sum`).
ARGUMENT_DIGESTS = [
    ({"a": 1, "b": [1, 2]}, "8baa73198470c7bb4c3ce142a8fd651a"),
    ({"b": [1, 2], "a": 1}, "8baa73198470c7bb4c3ce142a8fd651a"),
    (None, "74234e98afe7498fb5daf1f36ac2d78a"),
    ({}, "44136fa355b3678a1146ad16f7e8649e"),
    ({"big": 2**80}, "40c4a587556697350bd7cd1527e0476c"),  # past 64 bits: the slower writer
]


@pytest.mark.parametrize(("arguments", "digest"), ARGUMENT_DIGESTS,
                         ids=["sorted", "unsorted", "null", "empty", "big"])
def test_an_arguments_digest_is_sha256_of_the_canonical_json(arguments: Any, digest: str) -> None:
    assert arguments_digest(arguments).hex() == digest


def test_argument_digests_ignore_key_order_but_not_values() -> None:
    assert arguments_digest({"a": 1, "b": [1, 2]}) == arguments_digest({"b": [1, 2], "a": 1})
    assert arguments_digest({"a": 1}) != arguments_digest({"a": 1.5})
    assert arguments_digest(None) != arguments_digest({})
    assert arguments_digest({"big": 2**80}) != arguments_digest({"big": 2**80 + 1})


def test_a_key_added_to_the_ring_still_opens_states_sealed_with_the_old_key() -> None:
    token = seal(ring(OLD))
    rotated = ring(NEW, OLD)
    assert open_(token, rotated).body == b'{"s":{"step":2}}'
    fresh = seal(rotated)
    assert open_(fresh, ring(NEW)).body  # the new key seals now
    with pytest.raises(StateRejected) as info:
        open_(fresh, ring(OLD))
    assert info.value.reason == "key"


def test_a_state_from_a_retired_key_is_rejected_as_an_unknown_key() -> None:
    token = seal(ring(OLD))
    message = rejected(token, "key", r=ring(NEW))
    assert "does not have" in message


def test_a_handle_does_not_open_as_a_request_state_nor_the_reverse() -> None:
    r = ring()
    target = target_digest("tools/call", "book")
    handle = seal_token(r, HANDLE, now=1000.0, ttl=60.0, principal="alice", target=target,
                        arguments=arguments_digest({"n": 1}), body=b"{}")
    with pytest.raises(StateRejected) as info:
        open_(handle, r)
    assert info.value.reason == "integrity"
    state = seal(r)
    with pytest.raises(StateRejected):
        open_token(r, HANDLE, state, now=1001.0, principal="alice", target=target,
                    arguments=None, where=WHERE)


def test_keys_are_read_from_base64_text_in_either_alphabet() -> None:
    text = base64.b64encode(bytes(range(200, 232))).decode()
    assert decode_key(text) == bytes(range(200, 232))
    assert decode_key(text.rstrip("=").replace("+", "-").replace("/", "_")) == bytes(range(200, 232))
    assert KeyRing.key_text(OLD) and decode_key(KeyRing.key_text(OLD)) == OLD


@pytest.mark.parametrize("bad", [b"short", "not base64 at all!", bytes(31)])
def test_a_bad_key_is_refused_at_configuration_naming_its_position(bad: bytes | str) -> None:
    with pytest.raises(ValueError, match="state key #2"):
        KeyRing([OLD, bad], fresh_random)


def test_an_empty_ring_and_a_duplicate_key_are_refused() -> None:
    with pytest.raises(ValueError, match="at least one key"):
        KeyRing([], fresh_random)
    with pytest.raises(ValueError, match="twice"):
        KeyRing([OLD, OLD], fresh_random)


def test_sealing_refuses_a_body_too_large_to_travel() -> None:
    with pytest.raises(ValueError, match="store"):
        seal(body=b"x" * MAX_TOKEN_CHARS)


def test_sealing_adds_a_fixed_82_bytes_before_base64() -> None:
    # version 1 + key id 4 + nonce 12 + tag 16 + expiry 8 + flags 1 + digests 16 + 8 + 16
    for size in (0, 1, 115, 1000):
        token = seal(body=b"x" * size)
        assert len(token) == -(-(size + 82) * 4 // 3)


def test_digests_of_integers_beyond_64_bits_ignore_key_order_too() -> None:
    # Such integers take the slower path of the standard json module; a retry that sends the
    # same arguments in another key order must still match the state sealed for them.
    first = {"a": 1, "big": 2**80, "nested": {"y": 2**70, "x": 1}}
    second = {"nested": {"x": 1, "y": 2**70}, "big": 2**80, "a": 1}
    assert arguments_digest(first) == arguments_digest(second)
    assert arguments_digest(first) != arguments_digest({**first, "big": 2**80 + 1})
