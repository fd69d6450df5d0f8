"""Sealed tokens: the `requestState` of multi round-trip requests, and explicit handles.

A token travels through the client, so it is attacker-controlled (MRTR-8). Each one is
authenticated encryption (AES-GCM) of a small binary header and a body:

```
token     = base64url( version:1 | key id:4 | nonce:12 | AES-GCM(plaintext, aad) )
aad       = purpose | version | key id        (a request state never opens as a handle)
plaintext = expires at, ms:8 | flags:1 | principal:16 | target:8 | arguments:16 | body
            (flags: bit 0 = bound to a principal; the other bits are reserved)
```

The principal, target (method and tool/prompt name or URI, or a handle's kind) and arguments
are digests, so a state is bound to who asked and what they asked (MRTR-9) without carrying
them. Opening checks, in order: encoding, format version, key id, integrity, expiry, principal,
target, arguments; the first failure raises `StateRejected` whose `reason` names the check.
The AEAD nonce is random per seal and doubles as the token's identity for single-use checks.

Keys come as a `KeyRing`: the first key seals, every key opens, so a new key can be added
before an old one is retired. Time and randomness are passed in; `cryptography` is imported
the first time a key is used, never at import.

Imports: the standard library (no I/O), orjson, `mcpkit.errors`.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import hmac
import json
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final

import orjson

from mcpkit.errors import StateRejected
from mcpkit.protocol.principals import digest_text

__all__ = [
    "FORMAT_VERSION",
    "HANDLE",
    "MAX_CACHED_KEY",
    "MAX_TOKEN_CHARS",
    "REQUEST_STATE",
    "KeyRing",
    "Opened",
    "StateRejected",
    "arguments_digest",
    "decode_key",
    "open_token",
    "principal_digest",
    "seal_token",
    "target_digest",
]

FORMAT_VERSION: Final = 1
REQUEST_STATE: Final = b"mcpkit/request-state"
HANDLE: Final = b"mcpkit/handle"
MAX_TOKEN_CHARS: Final = 262_144
"""Largest token accepted or produced; bigger data belongs in a store, with its handle here."""

_KEY_ID: Final = 4
_NONCE: Final = 12
_TAG: Final = 16
_HEAD: Final = 1 + _KEY_ID + _NONCE
_CLAIMS = struct.Struct(">QB16s8s16s")
_NO_PRINCIPAL: Final = bytes(16)
_HAS_PRINCIPAL: Final = 1
_KEY_SIZES: Final = (16, 24, 32)
_InvalidTag: type[Exception] = Exception
"""cryptography's InvalidTag, bound when the first cipher is built (never at import)."""


@dataclass(frozen=True, slots=True)
class Opened:
    """What a token that passed every check carries."""

    body: bytes
    nonce: bytes
    """Unique per seal: the token's identity for single-use bookkeeping."""
    expires_at: float


def decode_key(key: bytes | str, position: int = 0) -> bytes:
    """A raw AES key from bytes or base64 (url-safe or standard, padding optional)."""
    if isinstance(key, str):
        text = key.strip().rstrip("=")
        try:
            raw = _b64decode(text.replace("+", "-").replace("/", "_"))
        except ValueError:
            raise ValueError(
                f"state key #{position + 1} is not base64; generate one with "
                "mcpkit.server.sealing.new_state_key()"
            ) from None
    else:
        raw = bytes(key)
    if len(raw) not in _KEY_SIZES:
        raise ValueError(
            f"state key #{position + 1} is {len(raw)} bytes; AES-GCM needs 16, 24 or 32 "
            "(32 recommended)"
        )
    return raw


class KeyRing:
    """The keys that seal and open tokens: the first seals, all of them open."""

    __slots__ = ("_ciphers", "_first", "_ids", "_random", "ephemeral")

    def __init__(
        self,
        keys: Iterable[bytes | str],
        random_bytes: Callable[[int], bytes],
        *,
        ephemeral: bool = False,
    ) -> None:
        raw = [decode_key(k, i) for i, k in enumerate(keys)]
        if not raw:
            raise ValueError("a key ring needs at least one key")
        self._ids: dict[bytes, bytes] = {}
        for key in raw:
            kid = hashlib.sha256(b"mcpkit key id\0" + key).digest()[:_KEY_ID]
            if kid in self._ids:
                raise ValueError("the same state key is configured twice")
            self._ids[kid] = key
        self._first = next(iter(self._ids))
        self._ciphers: dict[bytes, Any] = {}
        self._random = random_bytes
        self.ephemeral = ephemeral
        """True when the key was generated for this process: tokens die with it."""

    @staticmethod
    def key_text(key: bytes) -> str:
        """A raw key as the url-safe base64 text that configuration takes."""
        return base64.urlsafe_b64encode(decode_key(key)).decode("ascii").rstrip("=")

    def derived(self, purpose: bytes) -> tuple[bytes, ...]:
        """A 32-byte secret per key for `purpose` (HMAC-SHA256 of it under the key), the
        sealing key's first: what another use of the same keys (the authorization proxy's
        token signing keys) is made from, so it follows the ring's rotation and is shared by
        every process sharing the ring, and never reveals a key."""
        return tuple(hmac.new(key, b"mcpkit derived\0" + purpose, hashlib.sha256).digest()
                     for key in self._ids.values())

    def _cipher(self, kid: bytes) -> Any:
        cipher = self._ciphers.get(kid)
        if cipher is None:
            global _InvalidTag
            from cryptography.exceptions import InvalidTag
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM

            _InvalidTag = InvalidTag
            cipher = self._ciphers[kid] = AESGCM(self._ids[kid])
        return cipher

    def seal(self, purpose: bytes, plaintext: bytes) -> str:
        kid = self._first
        nonce = self._random(_NONCE)
        head = bytes((FORMAT_VERSION,)) + kid
        sealed = self._cipher(kid).encrypt(nonce, plaintext, purpose + head)
        token = base64.urlsafe_b64encode(head + nonce + sealed).rstrip(b"=").decode("ascii")
        if len(token) > MAX_TOKEN_CHARS:
            raise ValueError(
                f"a sealed token of {len(token)} characters exceeds {MAX_TOKEN_CHARS}; keep "
                "large data in a store and carry its handle instead"
            )
        return token

    def open(self, purpose: bytes, token: str, where: str, what: str) -> tuple[bytes, bytes]:
        """(plaintext, nonce) of a token, or StateRejected for encoding, version, key, integrity."""
        if len(token) > MAX_TOKEN_CHARS:
            raise StateRejected("malformed", f"{where}: {what} is too long to be one of ours")
        try:
            data = _b64decode(token, canonical=True)
        except ValueError:
            raise StateRejected(
                "malformed", f"{where}: {what} is not valid base64url (it must be echoed unchanged)"
            ) from None
        if len(data) < _HEAD + _TAG:
            raise StateRejected("malformed", f"{where}: {what} is truncated")
        if data[0] != FORMAT_VERSION:
            raise StateRejected(
                "version", f"{where}: {what} has format version {data[0]}; this server reads "
                f"version {FORMAT_VERSION}"
            )
        kid = data[1 : 1 + _KEY_ID]
        if kid not in self._ids:
            raise StateRejected(
                "key", f"{where}: {what} was sealed with a key this server does not have "
                "(retired, or from another deployment)"
            )
        nonce = data[1 + _KEY_ID : _HEAD]
        cipher = self._cipher(kid)
        try:
            plaintext = cipher.decrypt(nonce, data[_HEAD:], purpose + data[: 1 + _KEY_ID])
        except _InvalidTag:
            raise StateRejected(
                "integrity", f"{where}: {what} failed its integrity check (it was altered)"
            ) from None
        return plaintext, nonce


def _b64decode(text: str, *, canonical: bool = False) -> bytes:
    """Strict url-safe base64 without padding: any stray character is an error.

    `canonical`: the text must also be the one spelling `seal` writes. Base64 of a length that
    is not a multiple of three ends in a character some of whose bits carry nothing, and a
    decoder ignores them: without this check a token's last character has 3 or 15 other
    spellings that open the same token, so a token would not be its own identity (a log, a
    replay check or a cache keyed by the text would see several). Tokens are read with it;
    configured keys are not (a key written by hand is the same key however it ends).
    """
    if "=" in text or "+" in text or "/" in text:
        raise ValueError("not url-safe base64")
    padded = text.replace("-", "+").replace("_", "/") + "=" * (-len(text) % 4)
    try:
        data = binascii.a2b_base64(padded.encode("ascii"), strict_mode=True)
    except (binascii.Error, UnicodeEncodeError):
        raise ValueError("not base64") from None
    if canonical and binascii.b2a_base64(data, newline=False) != padded.encode("ascii"):
        raise ValueError("not the canonical base64 spelling")
    return data


MAX_CACHED_KEY: Final = 256
"""Longest principal or target whose digest is remembered: a URI or principal comes from the
request, so longer ones are hashed each time rather than kept (4096 of them could be
megabytes each)."""


@functools.lru_cache(maxsize=4096)
def _principal_digest(principal: str) -> bytes:
    # Of the spelling from before principal texts were arrays: what was sealed still opens.
    spelled = digest_text(principal).encode("utf-8", "surrogatepass")
    return hashlib.sha256(b"principal\0" + spelled).digest()[:16]


def principal_digest(principal: str | None) -> bytes:
    if principal is None:
        return _NO_PRINCIPAL
    if len(principal) > MAX_CACHED_KEY:
        return _principal_digest.__wrapped__(principal)
    return _principal_digest(principal)


@functools.lru_cache(maxsize=4096)
def _target_digest(method: str, target: str) -> bytes:
    return hashlib.sha256(f"{method}\0{target}".encode()).digest()[:8]


def target_digest(method: str, target: str) -> bytes:
    """Which method and which tool, prompt, URI (or handle kind) a token belongs to."""
    if len(target) > MAX_CACHED_KEY:
        return _target_digest.__wrapped__(method, target)
    return _target_digest(method, target)


def arguments_digest(arguments: Any) -> bytes:
    """The same for equal JSON values whatever their key order."""
    try:
        data = orjson.dumps(arguments, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # integers beyond 64 bits, which orjson does not write
        data = json.dumps(arguments, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(data).digest()[:16]


def seal_token(
    ring: KeyRing,
    purpose: bytes,
    *,
    now: float,
    ttl: float,
    principal: str | None,
    target: bytes,
    arguments: bytes,
    body: bytes,
) -> str:
    """Seal `body` for `principal` and one target (and arguments) until `now + ttl`."""
    flags = _HAS_PRINCIPAL if principal is not None else 0
    claims = _CLAIMS.pack(
        int((now + ttl) * 1000), flags, principal_digest(principal), target, arguments
    )
    return ring.seal(purpose, claims + body)


def open_token(
    ring: KeyRing,
    purpose: bytes,
    token: str,
    *,
    now: float,
    principal: str | None,
    target: bytes,
    arguments: bytes | None,
    where: str,
    what: str = "requestState",
    target_noun: str = "request",
) -> Opened:
    """Every check, in order; `arguments=None` skips the arguments check (handles).

    `where` (e.g. "tools/call 'create_event'") starts every message; `target_noun` names what
    a target mismatch is ("tool", "prompt", "resource", "kind of handle").
    """
    plaintext, nonce = ring.open(purpose, token, where, what)
    if len(plaintext) < _CLAIMS.size:
        raise StateRejected("malformed", f"{where}: {what} is truncated")
    expires_ms, flags, who, sealed_target, sealed_args = _CLAIMS.unpack_from(plaintext)
    late = now * 1000 - expires_ms
    if late >= 0:
        raise StateRejected(
            "expired", f"{where}: {what} expired {late / 1000:.0f} s ago; start again without it"
        )
    if who != principal_digest(principal) or bool(flags & _HAS_PRINCIPAL) != (principal is not None):
        raise StateRejected(
            "principal", f"{where}: {what} was issued to another principal (a {what} is not a "
            "permission)"
        )
    if sealed_target != target:
        raise StateRejected("target", f"{where}: {what} was issued for a different {target_noun}")
    if arguments is not None and sealed_args != arguments:
        raise StateRejected(
            "arguments", f"{where}: {what} was issued for different arguments; a retry must "
            "repeat the original request's arguments exactly"
        )
    return Opened(plaintext[_CLAIMS.size :], nonce, expires_ms / 1000)

