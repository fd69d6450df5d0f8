"""Legacy (2025-11-25) URL elicitation outside a request: the -32042 error and
`notifications/elicitation/complete`.

A legacy server may refuse a request with -32042 (URLElicitationRequired), listing URL-mode
elicitations the user must complete first, and may later report each one done with
`notifications/elicitation/complete {elicitationId}`. Everything in both comes from the
server, so `required_error` checks the list before anything is shown: a bounded number of
entries, bounded lengths, an `elicitationId` each, and only absolute http(s) URLs without user
info (`https://bank.example@evil.example/` disguises its real host). `check_url` is the same
rule for the `url` of any URL-mode elicitation.

The user must see the host the browser will really reach (`real_host`), so a URL is refused
when a browser would read its host otherwise than it looks: a backslash or a percent sign in
it (`https://evil.example\\.bank.example/` goes to evil.example), a number that is an IPv4
address in disguise (`http://0x7f.1/`), an IPv6 zone, or letters that browsers and the
standard library spell differently in ASCII (ß, ς, characters newer than IDNA 2003). An
international name is shown in the ASCII form the browser resolves: a Cyrillic look-alike of
paypal.com is `xn--l-7sba6dbr.com`, and a full-width google.com is google.com.

`Completions` tracks the ids the client is waiting for. A notification for an id it does not
know, or one already completed, is ignored (the spec's rule); one that arrives a moment before
its id is registered (the -32042 response and the notification may travel on different HTTP
streams) is remembered briefly so nobody waits for something that already happened.

May import `mcpkit.types` and `mcpkit.errors`.
"""

from __future__ import annotations

import asyncio
import inspect
import ipaddress
import logging
import re
import unicodedata
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, Final
from urllib.parse import urlsplit

from mcpkit.errors import ProtocolViolation, RPCError, URLElicitationRequiredError

__all__ = [
    "Completions",
    "ElicitationCompleteHandler",
    "check_url",
    "describe",
    "hosts_of",
    "raise_if_required",
    "real_host",
    "required_error",
    "reword",
    "wait_all",
]

MAX_ELICITATIONS: Final = 16
"""Most URL elicitations one -32042 error may list."""
MAX_URL_LENGTH: Final = 8192
MAX_MESSAGE_LENGTH: Final = 4096
MAX_ID_LENGTH: Final = 256
_MAX_TRACKED: Final = 256
_MAX_EARLY: Final = 64
_CODE: Final = URLElicitationRequiredError.code
_HOST_NAME: Final = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?")
_NUMBER_LABEL: Final = re.compile(r"[0-9]+|0x[0-9a-f]*")
"""A last label a browser reads as (part of) an IPv4 address."""
_SPELLED_TWO_WAYS: Final = frozenset("ßς")
"""IDNA 2003 (the standard library) maps them to "ss" and a plain sigma; browsers keep them."""

log = logging.getLogger("mcpkit.client")

ElicitationCompleteHandler = Callable[[str], Awaitable[None] | None]
"""`on_elicitation_complete(elicitation_id)`: a legacy server reported a URL elicitation done."""


def check_url(url: Any) -> str | None:
    """Why `url` must not be offered to the user (None when it may be)."""
    if type(url) is not str or not url:
        return "the url is missing or not a string"
    if len(url) > MAX_URL_LENGTH:
        return f"the url is longer than {MAX_URL_LENGTH} characters"
    if any(c.isspace() or not c.isprintable() for c in url):  # also bidi and C1 controls
        return "the url contains spaces or control characters"
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        return f"the url {url[:200]!r} is malformed"
    if parts.scheme.lower() not in ("http", "https"):
        return (
            f"the url scheme {parts.scheme + ':' if parts.scheme else '(none)'} is refused; only "
            "http and https pages are offered to the user"
        )
    if not host:
        return "the url has no host"
    if "@" in parts.netloc:
        return f"the url carries user info before its host {host!r}, which disguises where it leads"
    try:
        _ascii_host(host, parts.netloc.startswith("["))
    except ValueError as exc:
        return f"the url's host {host!r} {exc}"
    return None


def real_host(url: str) -> str:
    """The host a browser opening `url` reaches, as the user must see it: lower-case ASCII
    (the punycode of an international name), an IPv6 address in brackets. For URLs that
    `check_url` accepts."""
    parts = urlsplit(url)
    return _ascii_host(parts.hostname or "", parts.netloc.startswith("["))


def _ascii_host(host: str, bracketed: bool) -> str:
    """`host` as a browser resolves it; ValueError says why it must not be offered."""
    if bracketed:
        if "%" in host:
            raise ValueError("names an IPv6 zone, which browsers do not open")
        try:
            return f"[{ipaddress.IPv6Address(host).compressed}]"
        except ValueError:
            raise ValueError("is not an IPv6 address") from None
    if any(c in _SPELLED_TWO_WAYS for c in host):
        raise ValueError("contains ß or ς, which browsers and this client spell differently")
    if any(ord(c) > 127 and unicodedata.ucd_3_2_0.category(c) == "Cn" for c in host):
        raise ValueError("is not a valid host name (a character newer than IDNA knows)")
    try:
        name = host.encode("idna").decode("ascii").lower()
    except UnicodeError:
        raise ValueError("is not a valid host name (an empty or too long label)") from None
    if not _HOST_NAME.fullmatch(name):
        raise ValueError(
            "has characters that cannot be in a host name (letters, digits, '-', '_' and dots)"
        )
    dotted = name.rstrip(".")
    if _NUMBER_LABEL.fullmatch(dotted.rpartition(".")[2]):
        try:
            canonical = str(ipaddress.IPv4Address(dotted)) == dotted
        except ValueError:
            canonical = False
        if not canonical:
            raise ValueError(
                "reads as an IPv4 address written in another form; a page's address must "
                "write it as four decimal numbers (a.b.c.d)"
            )
    return name


def _text(entry: Mapping[str, Any], key: str, limit: int, where: str) -> str:
    value = entry.get(key)
    if type(value) is not str:
        raise ProtocolViolation(f"{where}: {key} must be a string")
    if len(value) > limit:
        raise ProtocolViolation(f"{where}: {key} is longer than {limit} characters")
    return value


def _entry(entry: Any, where: str) -> dict[str, str]:
    if type(entry) is not dict:
        raise ProtocolViolation(f"{where} is not an object")
    if entry.get("mode") != "url":
        raise ProtocolViolation(f"{where}: mode must be \"url\" (got {entry.get('mode')!r})")
    elicitation_id = _text(entry, "elicitationId", MAX_ID_LENGTH, where)
    if not elicitation_id or not elicitation_id.isprintable():
        raise ProtocolViolation(f"{where}: elicitationId must be a non-empty printable string")
    message = _text(entry, "message", MAX_MESSAGE_LENGTH, where)
    problem = check_url(entry.get("url"))
    if problem is not None:
        raise ProtocolViolation(f"{where}: {problem}")
    return {"mode": "url", "elicitationId": elicitation_id, "url": entry["url"],
            "message": message}


def hosts_of(elicitations: Iterable[Mapping[str, str]]) -> list[str]:
    """The distinct real hosts of checked elicitations, in order."""
    hosts: list[str] = []
    for entry in elicitations:
        try:
            host = real_host(entry["url"])
        except ValueError:  # not checked after all: name no host rather than a wrong one
            host = "?"
        if host not in hosts:
            hosts.append(host)
    return hosts


_FIX: Final = (
    "give the Client an elicit_url handler so the user is asked to open it and the request is "
    "retried, or show error.elicitations to the user and call again once they are done"
)


def describe(what: str, elicitations: Iterable[Mapping[str, str]], why: str = _FIX) -> str:
    """The message of a -32042 error for `what`: the hosts, then `why` (default: the fix)."""
    hosts = ", ".join(hosts_of(elicitations))
    return f"{what}: the server needs the user to complete a page on {hosts} first (-32042); {why}"


def reword(
    error: URLElicitationRequiredError, what: str, why: str = _FIX
) -> URLElicitationRequiredError:
    """The same error, its message naming `what` and `why`."""
    return URLElicitationRequiredError(
        error.elicitations, describe(what, error.elicitations, why), error.server_message
    )


def required_error(exc: RPCError, what: str) -> URLElicitationRequiredError:
    """A legacy -32042 as a checked `URLElicitationRequiredError`; ProtocolViolation when the
    server's list is malformed or offers a page that must not be opened."""
    data = exc.data
    listed = data.get("elicitations") if type(data) is dict else None
    if type(listed) is not list or not listed:
        raise ProtocolViolation(
            f"{what}: the server answered -32042 (URL elicitation required) without a list of "
            "elicitations in data.elicitations"
        ) from exc
    if len(listed) > MAX_ELICITATIONS:
        raise ProtocolViolation(
            f"{what}: the server's -32042 error lists {len(listed)} URL elicitations; this "
            f"client accepts at most {MAX_ELICITATIONS}"
        ) from exc
    entries = [_entry(e, f"{what}: -32042 data.elicitations[{i}]") for i, e in enumerate(listed)]
    ids = [e["elicitationId"] for e in entries]
    if len(set(ids)) != len(ids):
        raise ProtocolViolation(f"{what}: the server's -32042 error repeats an elicitationId")
    message = exc.message[:MAX_MESSAGE_LENGTH] if exc.message else None
    return URLElicitationRequiredError(entries, describe(what, entries), message)


def raise_if_required(response: Mapping[str, Any], what: str) -> None:
    """Raise the checked `URLElicitationRequiredError` when a legacy response is -32042."""
    error = response.get("error")
    if type(error) is dict and error.get("code") == _CODE:
        exc = RPCError.from_wire(error)
        if type(error.get("message")) is not str:
            exc.message = ""  # not the generic text a message-less error gets
        raise required_error(exc, what)


class Completions:
    """The legacy URL elicitations this client waits on, and the server's reports of them."""

    def __init__(self, on_complete: ElicitationCompleteHandler | None = None) -> None:
        self.on_complete = on_complete
        """Called once for each known elicitation the server reports complete."""
        self._known: OrderedDict[str, asyncio.Event] = OrderedDict()
        self._early: OrderedDict[str, None] = OrderedDict()
        self._tasks: set[asyncio.Task[None]] = set()

    def expect(self, elicitation_id: str) -> asyncio.Event:
        """Wait for `elicitation_id`; its event is set when the server reports it complete."""
        event = self._known.get(elicitation_id)
        if event is not None:
            return event
        event = self._known[elicitation_id] = asyncio.Event()
        while len(self._known) > _MAX_TRACKED:
            self._known.popitem(last=False)
        if self._early.pop(elicitation_id, False) is None:
            # Reported a moment before the client learnt of it.
            event.set()
            if self.on_complete is not None:
                task = asyncio.ensure_future(self._report(elicitation_id))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
        return event

    def forget(self, elicitation_id: str) -> None:
        """Stop waiting (the user declined); a later report of it is ignored as unknown."""
        event = self._known.get(elicitation_id)
        if event is not None and not event.is_set():
            del self._known[elicitation_id]

    @property
    def pending(self) -> list[str]:
        """The ids still waited for, oldest first."""
        return [key for key, event in self._known.items() if not event.is_set()]

    async def receive(self, message: Mapping[str, Any]) -> None:
        """One `notifications/elicitation/complete`; unknown and completed ids are ignored."""
        params = message.get("params")
        elicitation_id = params.get("elicitationId") if type(params) is dict else None
        if type(elicitation_id) is not str or len(elicitation_id) > MAX_ID_LENGTH:
            return
        event = self._known.get(elicitation_id)
        if event is None:
            self._early[elicitation_id] = None
            while len(self._early) > _MAX_EARLY:
                self._early.popitem(last=False)
            return
        if event.is_set():
            return
        event.set()
        await self._report(elicitation_id)

    async def _report(self, elicitation_id: str) -> None:
        if self.on_complete is None:
            return
        try:
            reply = self.on_complete(elicitation_id)
            if inspect.isawaitable(reply):
                await reply
        except Exception:
            log.exception("on_elicitation_complete failed for %r", elicitation_id)


async def wait_all(events: Iterable[asyncio.Event], timeout: float) -> bool:
    """Whether every event was set within `timeout` seconds."""
    waiting = [e for e in events if not e.is_set()]
    if not waiting:
        return True
    if timeout <= 0:
        return False
    try:
        async with asyncio.timeout(timeout):
            for event in waiting:
                await event.wait()
    except TimeoutError:
        return False
    return True
