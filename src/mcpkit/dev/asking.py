"""The server's questions, answered from the page: the `Client`'s input handlers for the
inspector.

One set of handlers serves both eras and every way a question comes: a modern
`input_required` round, a task's `inputRequests` (answered with `tasks/update`), a legacy
server's `elicitation/create`, `sampling/createMessage` or `roots/list`. A form, a page to
open, or a sampling request becomes a question on the event stream (state, keyed by its id,
so a page opened later still shows it); the handler waits for the page's answer. An answer is
checked against the form before it is taken (a wrong one is refused to the page with each
field's problem, and the question stays open), so the server never receives an answer its
form does not accept. Roots are answered at once from the list the page keeps: a server asks
for them on its own schedule (a legacy one right after `initialize`), and nobody should have
to click for each.

A page that declines sampling answers the server's request with an error (sampling has no
"decline" result); everything else declines or cancels in the result itself.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Mapping, Sequence
from typing import Any, Final

from mcpkit.client import InputRequest, check_answer, read_form
from mcpkit.client.inputs import fill_defaults
from mcpkit.dev.events import EventHub
from mcpkit.errors import ElicitationAnswerError, QuestionClosedError, RPCError

__all__ = [
    "ACTIONS",
    "USER_REJECTED",
    "Questions",
]

ACTIONS: Final = ("accept", "decline", "cancel")
_FORM, _URL, _SAMPLING = "form", "url", "sampling"


USER_REJECTED: Final = -1
"""The code a declined sampling request is answered with, as other clients answer it."""


def _declined() -> RPCError:
    return RPCError.from_wire({"code": USER_REJECTED,
                               "message": "The user declined the sampling request"})


class Questions:
    """The open questions and the roots the page set."""

    def __init__(self, hub: EventHub) -> None:
        self.hub = hub
        self.roots: list[dict[str, Any]] = []
        """What `roots/list` answers (file:// URIs), as the page last set it."""
        self._open: dict[str, tuple[asyncio.Future[dict[str, Any]], str, InputRequest]] = {}
        self._ids = itertools.count(1)

    # -- the Client's handlers ----------------------------------------------------------------

    async def elicit(self, request: InputRequest) -> dict[str, Any]:
        return await self._ask(_FORM, request)

    async def elicit_url(self, request: InputRequest) -> dict[str, Any]:
        return await self._ask(_URL, request)

    async def sample(self, request: InputRequest) -> dict[str, Any]:
        return await self._ask(_SAMPLING, request)

    def list_roots(self, request: InputRequest) -> dict[str, Any]:
        self.hub.publish("asked", {"method": request.method, "origin": request.origin,
                                   "answered": {"roots": self.roots}})
        return {"roots": [dict(r) for r in self.roots]}

    # -- the page's side ------------------------------------------------------------------------

    async def _ask(self, kind: str, request: InputRequest) -> dict[str, Any]:
        ident = f"q{next(self._ids)}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._open[ident] = (future, kind, request)
        params = request.params
        shown: dict[str, Any] = {
            "id": ident, "kind": kind, "method": request.method, "origin": request.origin,
            "key": request.key, "message": request.message,
            "server": (request.server or {}).get("name") if request.server else None,
        }
        if kind == _FORM:
            shown["schema"] = request.schema
        elif kind == _URL:
            shown["url"] = request.url
            shown["elicitationId"] = params.get("elicitationId")
        else:
            shown["params"] = params
        self.hub.publish("question", shown, key=f"question:{ident}")
        try:
            return await future
        finally:
            self._open.pop(ident, None)
            self.hub.forget(f"question:{ident}")
            self.hub.publish("question.closed", {"id": ident})

    def answer(self, ident: str, reply: Mapping[str, Any]) -> None:
        """Take the page's answer to question `ident`; `ElicitationAnswerError` (with each
        field's problem) when it does not fit, `QuestionClosedError` when nothing is asked."""
        found = self._open.get(ident)
        if found is None or found[0].done():
            raise QuestionClosedError(f"question {ident!r} is not open (answered already, or the "
                                 "call that asked it ended)")
        future, kind, request = found
        if not isinstance(reply, Mapping):
            raise ElicitationAnswerError("an answer is a JSON object")
        answer = dict(reply)
        if kind == _SAMPLING:
            if answer.get("action") == "decline":
                future.set_exception(_declined())
                return
            _check_sampling(answer)
        else:
            action = answer.get("action")
            if action not in ACTIONS:
                raise ElicitationAnswerError(f"the answer's action is one of {', '.join(ACTIONS)}",
                                             {"": "action"})
            if kind == _FORM and action == "accept":
                where = request.origin or request.method
                form = read_form(request.schema, where)
                answer = fill_defaults(request.schema, answer)
                check_answer(form, answer, where)
        future.set_result(answer)

    def withdraw(self) -> None:
        """Cancel every open question (the connection is going away)."""
        for future, _, _ in list(self._open.values()):
            if not future.done():
                future.set_result({"action": "cancel"})

    def set_roots(self, roots: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Keep `roots` for the next `roots/list`; ValueError for one that is no file:// root."""
        kept = []
        for root in roots:
            uri = root.get("uri") if isinstance(root, Mapping) else None
            if not isinstance(uri, str) or not uri.startswith("file://"):
                raise ValueError(f"a root is a file:// URI, not {uri!r}")
            entry: dict[str, Any] = {"uri": uri}
            name = root.get("name")
            if isinstance(name, str) and name:
                entry["name"] = name
            kept.append(entry)
        self.roots = kept
        return kept


def _check_sampling(answer: dict[str, Any]) -> None:
    """A CreateMessageResult the page wrote: an assistant message with text, and a model."""
    content = answer.get("content")
    problems = {}
    if not isinstance(content, Mapping) or content.get("type") != "text" or not isinstance(
            content.get("text"), str):
        problems["content"] = "the reply is a text content block"
    if not isinstance(answer.get("model"), str) or not answer.get("model"):
        problems["model"] = "name the model that answered"
    if answer.get("role") != "assistant":
        problems["role"] = "the reply's role is assistant"
    if problems:
        raise ElicitationAnswerError("the sampling reply is incomplete", problems)

