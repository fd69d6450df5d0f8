"""Changes a client may make to a sealed token before presenting it back.

`MUTATIONS` draws one change (a bit flipped in the bytes the token encodes, a character
changed, cut or added, bytes inserted, another spelling of the same bytes: padding, the
standard alphabet, whitespace, case, the last character's unused bits set), and `mutate`
applies it. Shared by the token properties and the retries sent to a real server.
"""

from __future__ import annotations

import base64
from typing import Any

from hypothesis import strategies as st

__all__ = ["MUTATIONS", "mutate"]


def _raw(token: str) -> bytes:
    return base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))


def _text(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


MUTATIONS = st.one_of(
    st.tuples(st.just("flip"), st.integers(0, 10_000), st.integers(0, 7)),
    st.tuples(st.just("cut"), st.integers(1, 10_000), st.just(0)),
    st.tuples(st.just("extend"), st.text("ABCxyz019-_", min_size=1, max_size=6), st.just(0)),
    st.tuples(st.just("char"), st.integers(0, 10_000), st.sampled_from("Aa0-_+/=. \n")),
    st.tuples(st.just("spelling"), st.sampled_from(["pad", "standard", "strip", "space",
                                                    "upper", "lower", "last"]), st.just(0)),
    st.tuples(st.just("bytes"), st.binary(min_size=1, max_size=4), st.integers(0, 10_000)),
)


def mutate(token: str, mutation: tuple[str, Any, Any]) -> str:
    kind, a, b = mutation
    if kind == "flip":
        data = bytearray(_raw(token))
        data[a % len(data)] ^= 1 << b
        return _text(bytes(data))
    if kind == "cut":
        return token[: len(token) - 1 - a % len(token)]
    if kind == "extend":
        return token + a
    if kind == "char":
        i = a % len(token)
        return token[:i] + b + token[i + 1:]
    if kind == "bytes":
        data = _raw(token)
        i = b % (len(data) + 1)
        return _text(data[:i] + a + data[i:])
    return {
        "pad": token + "=" * (-len(token) % 4 or 4),
        "standard": token.replace("-", "+").replace("_", "/"),
        "strip": " " + token,
        "space": token[:5] + " " + token[5:],
        "upper": token.upper(),
        "lower": token.lower(),
        # Another spelling of the same bytes: the last character's unused bits set.
        "last": token[:-1] + _ALPHABET[(_ALPHABET.index(token[-1]) | _UNUSED[len(token) % 4])
                                       % 64],
    }[a]


_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
_UNUSED = {2: 0b1111, 3: 0b11, 0: 0, 1: 0}
"""Bits of the last base64 character that carry nothing, by the text's length mod 4."""


