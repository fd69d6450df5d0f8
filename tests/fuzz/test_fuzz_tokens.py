"""Sealed tokens as a client may present them: `requestState` through `Sealer.open_state`,
handles through `open_handle`, and the token format below both (`KeyRing.open`).

A token travels through the client, so anything may come back. Any string, and any change to
a real token (a bit flipped in what it encodes, a character changed, cut or added, another
base64 spelling of the same bytes, padding, the standard alphabet, whitespace), is refused
with `StateRejected` (`HandleError` for a handle) naming the check; it never opens and never
raises anything else. The untouched token opens, to what was sealed.
"""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st
from peer_values import json_values
from token_mutations import MUTATIONS, mutate

from mcpkit.errors import HandleError, StateRejected
from mcpkit.protocol.request_state import (
    HANDLE,
    MAX_TOKEN_CHARS,
    REQUEST_STATE,
    KeyRing,
    arguments_digest,
    open_token,
    seal_token,
    target_digest,
)
from mcpkit.server.handles import mint_handle, open_handle
from mcpkit.server.sealing import Sealer
from mcpkit.server.server import ServerOptions

KEY = bytes(range(32))
NOW = 1_800_000_000.0
REASONS = {"malformed", "version", "key", "integrity", "expired", "principal", "target",
           "arguments"}
ARGUMENTS = {"title": "standup", "when": 9}


def _counter() -> Any:
    """Deterministic nonces: the same tokens on every run, as the ci profile requires."""
    count = itertools.count()
    return lambda n: next(count).to_bytes(n, "big")


def _sealer() -> Sealer:
    return Sealer(ServerOptions(state_keys=(KEY,), clock=lambda: NOW))


SEALER = _sealer()
_RING = KeyRing((KEY,), _counter())
"""The sealer's key with deterministic nonces, so the tokens are the same on every run."""
STATE = seal_token(
    _RING, REQUEST_STATE, now=NOW, ttl=SEALER.ttl, principal="alice",
    target=target_digest("tools/call", "create_event"), arguments=arguments_digest(ARGUMENTS),
    body=b'{"s":{"step":1}}',
)
HANDLE_TOKEN = seal_token(
    _RING, HANDLE, now=NOW, ttl=3600, principal="alice", target=target_digest("handle", "cart"),
    arguments=bytes(16), body=b'{"items":[1,2]}',
)


def _open_state(token: Any) -> Any:
    return SEALER.open_state(token, "alice", "tools/call", "create_event", ARGUMENTS,
                             "tools/call 'create_event'")


def _refused(token: Any) -> StateRejected:
    try:
        opened = _open_state(token)
    except StateRejected as exc:
        assert exc.reason in REASONS, exc.reason
        assert exc.message.startswith("tools/call 'create_event'"), exc.message
        assert exc.to_error()["data"] == {"reason": exc.reason}
        return exc
    raise AssertionError(f"{token!r} opened as {opened!r}")


def _handle_refused(token: Any) -> None:
    try:
        data = open_handle(SEALER, "alice", "cart", token, "tools/call 'checkout'")
    except HandleError as exc:
        assert exc.reason in REASONS
        assert exc.message.startswith("tools/call 'checkout'")
        return
    raise AssertionError(f"{token!r} opened as a handle carrying {data!r}")


def test_the_untouched_tokens_open() -> None:
    assert _open_state(STATE).body == b'{"s":{"step":1}}'
    assert open_handle(SEALER, "alice", "cart", HANDLE_TOKEN, "here") == {"items": [1, 2]}


@given(st.text(max_size=120) | st.text(alphabet="ABCDEFabcdef0123456789-_", max_size=120))
@example("")
@example("=")
@example("A" * 51)
@example("\udcff")
@example("ä" * 40)
@example("A" * (MAX_TOKEN_CHARS + 1))
def test_any_string_is_refused_with_the_check_it_failed(text: str) -> None:
    if text:
        _refused(text)
    _handle_refused(text)


@given(json_values(4))
def test_a_request_state_of_any_json_type_is_refused(value: Any) -> None:
    if type(value) is not str:
        _handle_refused(value)


@given(MUTATIONS)
@example(("spelling", "last", 0))
@example(("spelling", "pad", 0))
@example(("flip", 0, 0))
@example(("cut", 16, 0))
def test_a_changed_request_state_never_opens(mutation: tuple[str, Any, Any]) -> None:
    changed = mutate(STATE, mutation)
    if changed == STATE:
        return
    if changed:
        _refused(changed)


@given(MUTATIONS)
def test_a_changed_handle_never_opens(mutation: tuple[str, Any, Any]) -> None:
    changed = mutate(HANDLE_TOKEN, mutation)
    if changed != HANDLE_TOKEN:
        _handle_refused(changed)


@given(st.sampled_from(["bob", None, "alice\0"]), st.sampled_from(["tools/call", "prompts/get"]),
       st.sampled_from(["create_event", "other"]), st.sampled_from([ARGUMENTS, {}, None]),
       st.floats(min_value=0, max_value=10_000))
def test_a_real_token_presented_elsewhere_names_the_check(
    principal: Any, method: str, target: str, arguments: Any, later: float
) -> None:
    """Each of the bindings (who, which method and target, which arguments, until when) holds
    on its own; the reason says which one failed first."""
    same = (principal, method, target, arguments) == ("alice", "tools/call", "create_event",
                                                      ARGUMENTS)
    sealer = Sealer(ServerOptions(state_keys=(KEY,), clock=lambda: NOW + later))
    try:
        sealer.open_state(STATE, principal, method, target, arguments, "here")
    except StateRejected as exc:
        expected = ("expired" if later >= SEALER.ttl else "principal" if principal != "alice"
                    else "target" if (method, target) != ("tools/call", "create_event")
                    else "arguments")
        assert exc.reason == expected
        return
    assert same and later < SEALER.ttl


def test_a_request_state_never_opens_as_a_handle_nor_a_handle_as_a_state() -> None:
    _handle_refused(STATE)
    ring = KeyRing((KEY,), _counter())
    sealed = seal_token(ring, HANDLE, now=NOW, ttl=60, principal=None,
                        target=target_digest("tools/call", "t"), arguments=bytes(16), body=b"")
    try:
        open_token(ring, REQUEST_STATE, sealed, now=NOW, principal=None,
                   target=target_digest("tools/call", "t"), arguments=bytes(16), where="here")
    except StateRejected as exc:
        assert exc.reason == "integrity"
    else:
        raise AssertionError("a handle opened as a requestState")


def test_a_minted_handle_opens_and_its_other_spellings_do_not() -> None:
    """The same through `mint_handle`, with the sealer's own random nonce."""
    token = mint_handle(SEALER, "alice", "cart", {"items": [3]})
    assert open_handle(SEALER, "alice", "cart", token, "here") == {"items": [3]}
    for spelling in ("pad", "standard", "last", "upper"):
        changed = mutate(token, ("spelling", spelling, 0))
        if changed != token:
            _handle_refused(changed)
