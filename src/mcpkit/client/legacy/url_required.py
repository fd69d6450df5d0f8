"""Legacy (2025-11-25) URL elicitation outside a request: the -32042 error and its one retry.

A legacy server may refuse a request with -32042 (URLElicitationRequired), listing URL-mode
elicitations the user must complete first. Everything in it comes from the server, so
`required_error` checks the list before anything is shown: a bounded number of entries, bounded
lengths, an `elicitationId` each, and only URLs that `mcpkit.client.url_elicitation.check_url`
accepts (absolute http(s), no user info, a host shown as the browser will reach it).

`retry_after_url_elicitation` is the flow around it (LEG-8): each page through the application's
URL handler, a bounded wait for `notifications/elicitation/complete` (`Completions`), then the
request once more. The modern era has no such code (DEP-8): its URL elicitations arrive as
input requests of an `input_required` result.

May import `mcpkit.types`, `mcpkit.errors` and the client's era-neutral modules.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, Final

from mcpkit.client.forms import check_url_answer
from mcpkit.client.inputs import InputHandlers, InputRequest, call_handler
from mcpkit.client.legacy.completions import MAX_ID_LENGTH, wait_all
from mcpkit.client.url_elicitation import check_url, real_host
from mcpkit.errors import ProtocolViolation, RPCError, URLElicitationRequiredError
from mcpkit.types.methods import Method

__all__ = [
    "MAX_ELICITATIONS",
    "MAX_MESSAGE_LENGTH",
    "describe",
    "hosts_of",
    "raise_if_required",
    "required_error",
    "retry_after_url_elicitation",
    "reword",
]

MAX_ELICITATIONS: Final = 16
"""Most URL elicitations one -32042 error may list."""
MAX_MESSAGE_LENGTH: Final = 4096
_CODE: Final = URLElicitationRequiredError.code


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


async def retry_after_url_elicitation(
    send: Callable[[], Awaitable[dict[str, Any]]],
    error: URLElicitationRequiredError,
    what: str,
    handlers: InputHandlers,
    server: Mapping[str, Any] | None,
    wait: float,
) -> dict[str, Any]:
    """A legacy -32042 (LEG-8): each page goes to the URL handler (which asks the user for
    consent and opens it, or not), the client waits at most `wait` seconds for the server to
    report every accepted one complete, then `send`s the request once more.

    Raises the error, re-worded for `what`, when there is no URL handler, when the user declines
    or cancels one, or when the retry is answered with -32042 again.
    """
    handler = handlers.elicit_url
    if handler is None:
        raise reword(error, what) from None
    completions = handlers.completions
    events = []
    try:
        for entry in error.elicitations:
            request = InputRequest(Method.ELICIT, dict(entry), server, what)
            events.append(completions.expect(entry["elicitationId"]))
            result = await call_handler(handler, request)
            check_url_answer(result, f"{what}: URL elicitation {entry['elicitationId']!r}")
            if result["action"] != "accept":
                why = "declined" if result["action"] == "decline" else "cancelled"
                raise reword(error, what, f"the user {why} opening {entry['url']}; the request "
                             "was not retried")
    except BaseException:
        for entry in error.elicitations:
            completions.forget(entry["elicitationId"])
        raise
    await wait_all(events, wait)  # a server that never reports: the retry tells
    try:
        return await send()
    except URLElicitationRequiredError as again:
        raise reword(again, what, "the server still requires it after the user was sent to the "
                     "page and the request was retried once; call again when the user is done"
                     ) from None
