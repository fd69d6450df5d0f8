"""What the application answers for the server: elicitation, sampling and roots.

The same handlers serve both eras: in the modern era they fulfil the `inputRequests` of an
`input_required` result (`run_rounds`, the MRTR loop), in the legacy era they answer the
requests a 2025-11-25 server sends over the connection. Capabilities are derived from which handlers exist (a missing handler
means the capability is not declared, so a correct server never asks for it).

A handler is a function (plain or async) taking an `InputRequest` and returning the wire result:
an `ElicitResult` (`{"action": "accept", "content": {...}}`), a `CreateMessageResult` or a
`ListRootsResult`. Roots may also be given as a plain list.

Elicitation is checked on both sides of the handler: a form's `requestedSchema` and a URL are
read (`mcpkit.client.forms`, `mcpkit.client.url_elicitation`) before the handler sees them, and
the handler's answer must fit the form before it is sent (ELIC-14). A URL is only ever handed to
the URL handler, which asks the user; nothing here opens one. A legacy server's -32042 goes the
same way (`mcpkit.client.legacy.url_required.retry_after_url_elicitation`): each page through
the URL handler, a bounded wait for `notifications/elicitation/complete`, then the request once
more.

A form default that breaks its own field's limits (`""` for an email, an age of 200 where the
maximum is 130) is left out before anyone sees the form (`usable_defaults`): the field is asked
as if it had none, rather than the whole form refused for one careless default. One round
carries at most `MAX_INPUT_REQUESTS` input requests.

May import `mcpkit.types` and `mcpkit.errors`.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from mcpkit.client.forms import FormSchemaError, check_answer, check_url_answer, read_form
from mcpkit.client.legacy.completions import MAX_ID_LENGTH, Completions
from mcpkit.client.options import InputRoundsExceededError
from mcpkit.client.result_kinds import is_extension_kind
from mcpkit.client.url_elicitation import check_url
from mcpkit.errors import InvalidParamsError, MethodNotFoundError, ProtocolViolation
from mcpkit.types.methods import Method

__all__ = [
    "MAX_INPUT_REQUESTS",
    "ElicitationHandler",
    "InputHandlers",
    "InputRequest",
    "RootsHandler",
    "SamplingHandler",
    "call_handler",
    "fill_defaults",
    "run_rounds",
    "usable_defaults",
]

MAX_INPUT_REQUESTS: Final = 32
"""Most input requests answered in one `input_required` round: each may ask the user something,
so a server asking for more is refused rather than queuing questions without end."""


@dataclass(frozen=True, slots=True)
class InputRequest:
    """One thing the server asks of the client, with what the UI needs to show who asks."""

    method: str
    """`elicitation/create`, `sampling/createMessage` or `roots/list`."""
    params: dict[str, Any]
    server: Mapping[str, Any] | None = None
    """The server's self-reported identity (display only, never trusted: META-8)."""
    origin: str = ""
    """The request that needed the input, e.g. `tools/call 'book_flight'`."""
    key: str | None = None
    """The `inputRequests` key (modern era); None for a legacy server's request."""

    @property
    def mode(self) -> str:
        """Elicitation mode: `form` (also when the server omits it, ELIC-4) or `url`."""
        mode = self.params.get("mode")
        return mode if type(mode) is str else "form"

    @property
    def message(self) -> str:
        message = self.params.get("message")
        return message if type(message) is str else ""

    @property
    def schema(self) -> dict[str, Any]:
        """The form's `requestedSchema` (empty for URL mode)."""
        schema = self.params.get("requestedSchema")
        return schema if type(schema) is dict else {}

    @property
    def url(self) -> str | None:
        url = self.params.get("url")
        return url if type(url) is str else None


Reply = dict[str, Any] | Awaitable[dict[str, Any]]
"""A handler's answer: the wire result, or an awaitable of it (an `async def` handler)."""


class ElicitationHandler(Protocol):
    """Asks the user what the server wants to know: `Client(elicit=handler)` for forms,
    `Client(elicit_url=handler)` for pages to open. Each one given declares its mode
    (`elicitation.form`, `elicitation.url`); a server never asks in a mode with no handler.

    A protocol, so a plain function and an `async def` both fit; a type checker matches the
    parameter by position, so its name is the application's own.
    """

    def __call__(
        self, request: InputRequest, /
    ) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        """The user's answer to `request` (`request.message`; a form's `request.schema`, read
        and checked before the handler sees it; a page's `request.url`, never opened by the
        client; `request.server`, who asks, for display only).

        Returns an `ElicitResult`: `{"action": "accept", "content": {...}}` with the form's
        values (a URL answer carries no content), or `{"action": "decline"}` /
        `{"action": "cancel"}` when the user says no. An accepted form is checked against its
        schema before it is sent (`ElicitationAnswerError` when it does not fit).

        To refuse, return `decline` or `cancel` rather than raise: raising in the 2026-07-28
        era fails the call with that exception; a 2025-11-25 server receives it as its
        request's error (an `RPCError` keeps its code, anything else becomes -32603).
        """


class SamplingHandler(Protocol):
    """Runs the application's model for the server: `Client(sample=handler)` declares
    `sampling` (`ClientOptions.sampling_capability` adds e.g. `{"tools": {}}`). Sampling is
    deprecated in 2026-07-28 and kept for servers that still ask."""

    def __call__(
        self, request: InputRequest, /
    ) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        """A `CreateMessageResult` for `request.params` (`messages`, `maxTokens`,
        `systemPrompt`...): `{"role": "assistant", "content": {"type": "text", "text": ...},
        "model": ...}`. Show the user what is asked before running it.

        Raising behaves as for `ElicitationHandler`: the call fails (2026-07-28) or the
        server's request gets the error (2025-11-25).
        """


class RootsHandler(Protocol):
    """Lists the `file://` roots the server may work in: `Client(roots=handler)`, or a fixed
    list `Client(roots=[{"uri": "file:///work", "name": "work"}])`. Either declares `roots`."""

    def __call__(
        self, request: InputRequest, /
    ) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        """A `ListRootsResult`: `{"roots": [{"uri": "file:///...", "name": ...}, ...]}`, read
        each time the server asks, so it may change while the client runs.

        Raising behaves as for `ElicitationHandler`.
        """


async def call_handler(
    handler: Callable[[InputRequest], Reply], request: InputRequest
) -> dict[str, Any]:
    """The handler's reply to `request` (awaited when it is async), which must be a dict."""
    reply = handler(request)
    if inspect.isawaitable(reply):
        reply = await reply
    if type(reply) is not dict:
        raise TypeError(
            f"the {request.method} handler returned {type(reply).__name__}; it must return the "
            "result object (a dict)"
        )
    return reply


@dataclass(slots=True)
class InputHandlers:
    """The application's handlers, and the capabilities they imply."""

    elicit: ElicitationHandler | None = None
    """Form-mode elicitation: declares `elicitation.form`."""
    elicit_url: ElicitationHandler | None = None
    """URL-mode elicitation: declares `elicitation.url`."""
    sample: SamplingHandler | None = None
    """Sampling (deprecated in 2026-07-28): declares `sampling`."""
    roots: RootsHandler | Sequence[Mapping[str, Any]] | None = None
    """Roots (deprecated in 2026-07-28), as a handler or a fixed list: declares `roots`."""
    sampling_capability: dict[str, Any] = field(default_factory=dict)
    """What to declare inside `sampling`, e.g. `{"tools": {}}` for tool-enabled sampling."""
    completions: Completions = field(default_factory=Completions)
    """Legacy URL elicitations waited on, and the server's reports that they are complete."""

    def __post_init__(self) -> None:
        for name in ("elicit", "elicit_url", "sample"):
            given = getattr(self, name)
            if given is not None and not callable(given):
                raise TypeError(
                    f"{name} must be a function taking an InputRequest, "
                    f"not {type(given).__name__}"
                )
        if self.roots is not None and not callable(self.roots):
            if isinstance(self.roots, str | bytes | Mapping):
                raise TypeError(
                    "roots must be a function or a list of roots "
                    f"([{{'uri': 'file:///...'}}]), not {type(self.roots).__name__}"
                )
            for root in self.roots:
                uri = root.get("uri") if isinstance(root, Mapping) else None
                if type(uri) is not str or not uri.startswith("file://"):
                    raise ValueError(f"roots: each root needs a file:// uri (ROOT-3), got {root!r}")

    def capabilities(self) -> dict[str, Any]:
        caps: dict[str, Any] = {}
        if self.elicit is not None or self.elicit_url is not None:
            modes: dict[str, Any] = {}
            if self.elicit is not None:
                modes["form"] = {}
            if self.elicit_url is not None:
                modes["url"] = {}
            caps["elicitation"] = modes
        if self.sample is not None:
            caps["sampling"] = dict(self.sampling_capability)
        if self.roots is not None:
            caps["roots"] = {}
        return caps

    async def answer(self, request: InputRequest) -> dict[str, Any]:
        """The result for one input request; raises when the client did not offer it."""
        method = request.method
        if method == Method.ELICIT:
            return await self._elicit(request)
        if method == Method.SAMPLE:
            if self.sample is None:
                raise _undeclared(request, "sampling")
            if ("tools" in request.params or "toolChoice" in request.params) and (
                "tools" not in self.sampling_capability
            ):
                raise InvalidParamsError(
                    "sampling/createMessage: the server sent tools, but this client did not "
                    "declare sampling.tools"
                )
            return await call_handler(self.sample, request)
        if method == Method.ROOTS_LIST:
            roots = self.roots
            if roots is None:
                raise _undeclared(request, "roots")
            if callable(roots):
                return await call_handler(roots, request)
            return {"roots": [dict(r) for r in roots]}
        raise MethodNotFoundError(f"Method not found: {method}", {"method": method})

    async def _elicit(self, request: InputRequest) -> dict[str, Any]:
        mode = request.mode
        if mode not in ("form", "url"):
            raise InvalidParamsError(
                f"elicitation/create: unknown mode {mode!r} (expected form or url)"
            )
        handler = self.elicit_url if mode == "url" else self.elicit
        if handler is None:
            raise _undeclared(request, f"elicitation in {mode} mode")
        where = _where(request)
        if mode == "url":
            return await self._elicit_url(handler, request, where)
        try:
            schema = usable_defaults(request.params.get("requestedSchema"), where)
            if schema is not request.params.get("requestedSchema"):
                params = {**request.params, "requestedSchema": schema}
                request = dataclasses.replace(request, params=params)
            form = read_form(schema, where)
        except FormSchemaError as exc:
            if request.key is None:
                raise InvalidParamsError(str(exc)) from None  # the legacy server hears why
            raise
        result = await call_handler(handler, request)
        if result.get("action") == "accept" and type(result.get("content", {})) is dict:
            result = fill_defaults(request.schema, result)
        check_answer(form, result, where)
        return result

    async def _elicit_url(
        self, handler: ElicitationHandler, request: InputRequest, where: str
    ) -> dict[str, Any]:
        problem = check_url(request.params.get("url"))
        if problem is not None:
            if request.key is None:
                raise InvalidParamsError(f"{where}: {problem}")
            raise ProtocolViolation(f"{where}: {problem}")
        tracked = request.params.get("elicitationId") if request.key is None else None
        if type(tracked) is not str or not 0 < len(tracked) <= MAX_ID_LENGTH:
            tracked = None
        else:
            self.completions.expect(tracked)  # the server may report it done (LEG-8)
        try:
            result = await call_handler(handler, request)
            check_url_answer(result, where)
        except BaseException:
            if tracked is not None:
                self.completions.forget(tracked)
            raise
        if tracked is not None and result["action"] != "accept":
            self.completions.forget(tracked)
        return result


def _where(request: InputRequest) -> str:
    if request.key is None:
        return f"{Method.ELICIT} ({request.origin})"
    return f"{request.origin}: elicitation input {request.key!r}"


def _undeclared(request: InputRequest, what: str) -> Exception:
    if request.key is None:
        # A legacy server's request: answered with an error on the wire.
        return MethodNotFoundError(
            f"{request.method}: this client does not support {what}", {"method": request.method}
        )
    return ProtocolViolation(
        f"{request.origin}: the server asked for {what} ({request.method}, input {request.key!r}), "
        "which this client did not declare (MRTR-10); give the Client a handler for it"
    )


def usable_defaults(schema: Any, where: str) -> Any:
    """`schema` without the defaults that break their own field's limits (the same object when
    every default fits). The fields are read without their defaults first, so a default is
    judged by the very checker that judges an answer; any other problem of the form is raised
    as `FormSchemaError`."""
    properties = schema.get("properties") if type(schema) is dict else None
    if type(properties) is not dict or not any(
        type(prop) is dict and "default" in prop for prop in properties.values()
    ):
        return schema
    bare = {name: {k: v for k, v in prop.items() if k != "default"} if type(prop) is dict
            else prop for name, prop in properties.items()}
    form = read_form({**schema, "properties": bare}, where)
    kept = {}
    for name, prop in properties.items():
        made = form.field(name)
        fits = type(prop) is not dict or "default" not in prop or (
            made is not None and made.problem(prop["default"]) is None
        )
        kept[name] = prop if fits else bare[name]
    if all(kept[name] is prop for name, prop in properties.items()):
        return schema
    return {**schema, "properties": kept}


def fill_defaults(schema: Mapping[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    """An accepted form's content, with each omitted field that has a `default` filled in."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return result
    content = result.get("content")
    content = dict(content) if isinstance(content, Mapping) else {}
    missing = {
        name: prop["default"]
        for name, prop in properties.items()
        if name not in content and isinstance(prop, Mapping) and "default" in prop
    }
    if not missing and "content" in result:
        return result
    return {**result, "content": {**content, **missing}}


async def run_rounds(
    send: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]],
    params: dict[str, Any],
    result: dict[str, Any],
    what: str,
    handlers: InputHandlers,
    server: Mapping[str, Any] | None,
    limit: int,
) -> dict[str, Any]:
    """The MRTR loop (MRTR-12..15), from the first `input_required` result to a complete one.

    Each round answers the round's `inputRequests` and retries the original params through
    `send` (which gives every retry a new id) with those `inputResponses` and the round's
    `requestState`, byte for byte; a round without a state sends none, and nothing of a round
    travels on any other request.
    """
    rounds = 0
    while True:
        kind = result.get("resultType", "complete")
        if kind == "complete" or is_extension_kind(result):
            return result  # an extension's kind (a task) ends the rounds; the caller admits it
        if kind != "input_required":
            raise ProtocolViolation(
                f"{what}: the server answered with resultType {kind!r}, which this client does "
                "not know (expected complete or input_required)"
            )
        rounds += 1
        if rounds > limit:
            raise InputRoundsExceededError(
                f"{what}: the server still asks for input after {limit} rounds; giving up "
                "(raise ClientOptions.max_rounds if it legitimately needs more)"
            )
        requests = result.get("inputRequests")
        state = result.get("requestState")
        if requests is None and state is None:
            raise ProtocolViolation(
                f"{what}: an input_required result needs inputRequests or requestState (MRTR-5)"
            )
        if state is not None and type(state) is not str:
            raise ProtocolViolation(f"{what}: requestState must be a string")
        retry = dict(params)
        if requests is not None:
            retry["inputResponses"] = await _fulfil(requests, what, handlers, server)
        if state is not None:
            retry["requestState"] = state
        result = await send(retry)


async def _fulfil(
    requests: Any, what: str, handlers: InputHandlers, server: Mapping[str, Any] | None
) -> dict[str, Any]:
    if type(requests) is not dict:
        raise ProtocolViolation(f"{what}: inputRequests must be an object of input requests")
    if len(requests) > MAX_INPUT_REQUESTS:
        raise ProtocolViolation(
            f"{what}: the server asks for {len(requests)} inputs in one round; at most "
            f"{MAX_INPUT_REQUESTS} are answered"
        )
    responses: dict[str, Any] = {}
    for key, entry in requests.items():
        method = entry.get("method") if type(entry) is dict else None
        if type(method) is not str:
            raise ProtocolViolation(f"{what}: input request {key!r} has no method")
        params = entry.get("params")
        request = InputRequest(method, params if type(params) is dict else {}, server, what, key)
        responses[key] = await handlers.answer(request)
    return responses
