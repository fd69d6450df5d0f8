"""A sealed token has one spelling. Base64 text whose length is not a multiple of four ends in a
character some of whose bits are unused; a lenient decoder ignores them, so 3 or 15 other last
characters would open the same token. Only the spelling `seal` wrote opens; every other one is
refused as malformed, over the wire with -32602, like any other tampering."""

from __future__ import annotations

import base64
import string
from typing import Any

import pytest
from test_request_state import open_, rejected, seal

from mcpkit import Context, Server, ServerOptions
from mcpkit.protocol.request_state import (
    MAX_CACHED_KEY,
    _principal_digest,
    _target_digest,
    decode_key,
    principal_digest,
    target_digest,
)
from mcpkit.server.sealing import new_state_key

ALPHABET = string.ascii_uppercase + string.ascii_lowercase + string.digits + "-_"
CAPS = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}


def same_bytes_spellings(token: str) -> list[str]:
    """Every other last character that a lenient decoder reads as the same bytes."""
    def lenient(text: str) -> bytes:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))

    original = lenient(token)
    return [token[:-1] + c for c in ALPHABET
            if c != token[-1] and lenient(token[:-1] + c) == original]


def test_every_other_spelling_of_the_last_character_is_malformed() -> None:
    tokens = [seal(body=b"x" * n) for n in range(3)]  # three lengths: both kinds of remainder
    assert {len(t) % 4 for t in tokens} >= {2, 3}
    for token in tokens:
        assert open_(token).body.startswith(b"x") or open_(token).body == b""
        others = same_bytes_spellings(token)
        assert len(others) == {0: 0, 2: 15, 3: 3}[len(token) % 4]
        for other in others:
            assert "not valid base64url" in rejected(other, "malformed")


def canonical(text: str) -> bool:
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    return base64.urlsafe_b64encode(data).decode().rstrip("=") == text


def test_no_other_last_character_opens_and_each_is_refused_for_what_it_is() -> None:
    for token in (seal(body=b"x" * n) for n in range(3)):
        for c in ALPHABET:
            other = token[:-1] + c
            if other != token:  # other bytes fail integrity; another spelling, the encoding
                rejected(other, "integrity" if canonical(other) else "malformed")


def test_a_configured_key_may_end_in_any_spelling() -> None:
    key = bytes(range(32))
    text = base64.urlsafe_b64encode(key).decode().rstrip("=")
    for other in same_bytes_spellings(text):
        assert decode_key(other) == key


def test_long_targets_and_principals_are_hashed_but_not_kept() -> None:
    _target_digest.cache_clear()
    _principal_digest.cache_clear()
    for n in range(50):
        long = f"file:///{n}/" + "x" * (MAX_CACHED_KEY + 1)
        assert target_digest("resources/read", long) == _target_digest.__wrapped__(
            "resources/read", long)
        assert principal_digest(long) == _principal_digest.__wrapped__(long)
    assert _target_digest.cache_info().currsize == 0
    assert _principal_digest.cache_info().currsize == 0
    target_digest("tools/call", "book")
    principal_digest("alice")
    assert (_target_digest.cache_info().currsize, _principal_digest.cache_info().currsize) == (1, 1)


# -- over the wire ---------------------------------------------------------------------------


def book_server() -> Server:
    server = Server("spelling", "1.0.0", options=ServerOptions(state_keys=(new_state_key(),)))

    @server.tool()
    async def book(title: str, ctx: Context, pad: int = 0) -> str:
        """Asks when; `pad` bytes more in its state each time."""
        ctx.state["pad"] = "x" * pad
        when = await ctx.elicit("when", f"When is {title}?", {"startsAt": str})
        return f"{title} at {when['startsAt']}"

    @server.tool()
    def new_cart(item: str, ctx: Context) -> str:
        """A handle of its own."""
        return ctx.mint_handle("cart", {"items": [item]}, ttl=60)

    @server.tool()
    def cart_items(cart: str, ctx: Context) -> str:
        """Opens the handle."""
        return ",".join(ctx.open_handle("cart", cart)["items"])

    return server


async def test_the_server_refuses_every_other_spelling_of_a_request_state(
        wire_factory: Any) -> None:
    wire = wire_factory(book_server())
    seen: set[int] = set()
    for pad in range(3):  # a state one byte longer each time: every remainder of its length
        first = await wire.request("tools/call", {"name": "book", "arguments": {
            "title": "Dentist", "pad": pad}}, **CAPS)
        state = first["result"]["requestState"]
        seen.add(len(state) % 4)
        others = same_bytes_spellings(state)
        assert len(others) == {0: 0, 2: 15, 3: 3}[len(state) % 4]
        for other in others:
            reply = await retry(wire, pad, other)
            assert reply["error"]["code"] == -32602, reply
            assert reply["error"]["data"] == {"reason": "malformed"}
            assert "requestState" in reply["error"]["message"]
        done = await retry(wire, pad, state)
        assert done["result"]["content"][0]["text"] == "Dentist at 9:30"
    assert {2, 3} <= seen


async def retry(wire: Any, pad: int, state: str) -> dict[str, Any]:
    reply: dict[str, Any] = await wire.request("tools/call", {
        "name": "book", "arguments": {"title": "Dentist", "pad": pad}, "requestState": state,
        "inputResponses": {"when": {"action": "accept", "content": {"startsAt": "9:30"}}}},
        **CAPS)
    return reply


async def test_a_handle_has_one_spelling_too(wire_factory: Any) -> None:
    wire = wire_factory(book_server())
    handle = ""
    for item in ("p", "pe", "pea", "pear"):
        made = await wire.request("tools/call", {"name": "new_cart", "arguments": {"item": item}})
        handle = made["result"]["content"][0]["text"]
        if len(handle) % 4:
            break
    others = same_bytes_spellings(handle)
    assert others
    for other in others:
        reply = await wire.request("tools/call", {"name": "cart_items",
                                                  "arguments": {"cart": other}})
        assert reply["result"]["isError"] is True
        assert "not valid base64url" in reply["result"]["content"][0]["text"]
    ok = await wire.request("tools/call", {"name": "cart_items", "arguments": {"cart": handle}})
    assert ok["result"]["content"][0]["text"] == item


@pytest.mark.parametrize("suffix", ["=", "==", " ", "\n"])
def test_padding_or_whitespace_after_a_state_is_malformed(suffix: str) -> None:
    rejected(seal() + suffix, "malformed")
