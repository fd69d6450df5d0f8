"""What the page may ask the inspector to do: one table from action name to its coroutine.

Each action takes the JSON object the page posted and returns a JSON object. What the page
sends is checked here (`InspectorRequestError`, HTTP 400, naming the field); what the server answers is
returned as it came, an error included (`{"ok": false, "error": ..., "code": ...,
"meaning": ...}`, HTTP 200: the server said no, the inspector worked). Long actions (a call
that asks questions on the way) take as long as they take: their progress and questions
travel on the event stream meanwhile, and `cancel` stops one by the id the page gave it.

A tool call from an MCP App view (`"from": "app"`) is refused here when the tool's visibility
lacks `"app"`, as SEP-1865 requires of a host, before anything is sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

from mcpkit.client.tools import OutputChecker
from mcpkit.dev.catalogue import view_of
from mcpkit.dev.meanings import meaning
from mcpkit.dev.session import ERAS, Session
from mcpkit.dev.tasks import TaskBoard, raw
from mcpkit.errors import (
    CallCancelledError,
    ElicitationAnswerError,
    InspectorRequestError,
    MCPError,
    MissingExtraError,
    NotConnectedError,
    ProtocolViolation,
    QuestionClosedError,
    RPCError,
    ViewError,
)
from mcpkit.protocol.extensions import TASKS
from mcpkit.protocol.extras import available

__all__ = [
    "ACTIONS",
    "MAX_CALLS",
    "Actions",
    "failed",
    "output_check",
]

log = logging.getLogger("mcpkit.dev")

MAX_CALLS: Final = 64
"""Calls in flight at once (each may wait on a question)."""




def _text(params: Mapping[str, Any], name: str, *, optional: bool = False) -> Any:
    value = params.get(name)
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value:
        raise InspectorRequestError(f"{name!r} must be a non-empty string")
    return value


def _object(params: Mapping[str, Any], name: str) -> dict[str, Any] | None:
    value = params.get(name)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InspectorRequestError(f"{name!r} must be a JSON object")
    return value


def failed(exc: BaseException) -> dict[str, Any]:
    """An error the server (or the connection) gave, as the page shows it."""
    out: dict[str, Any] = {"ok": False, "error": str(exc) or type(exc).__name__}
    if isinstance(exc, RPCError):
        out.update(code=exc.code, meaning=meaning(exc.code), data=exc.data)
    if isinstance(exc, ElicitationAnswerError):
        out["problems"] = exc.problems
    return out


def output_check(tool: Mapping[str, Any] | None, result: Mapping[str, Any]) -> dict[str, str]:
    """Whether `structuredContent` fits the tool's `outputSchema`, in words."""
    if tool is None:
        return {"status": "unknown", "text": "the tool is not in the last tool list"}
    if "outputSchema" not in tool:
        return {"status": "none", "text": "the tool declares no outputSchema"}
    if result.get("isError"):
        return {"status": "skipped", "text": "an error result is not checked"}
    if not available("jsonschema"):
        return {"status": "unchecked", "text": str(MissingExtraError(
            "checking structuredContent against outputSchema", "dev"))}
    try:
        OutputChecker().check(tool, result)
    except ProtocolViolation as exc:
        return {"status": "invalid", "text": str(exc)}
    return {"status": "valid", "text": "structuredContent matches the outputSchema"}


class Actions:
    """The actions of one inspector run."""

    def __init__(self, session: Session, frames: str = "") -> None:
        self.session = session
        self.frames = frames
        """Where the sandbox origin serves a view's frame: `frames + view id`."""
        self.tasks = TaskBoard(session.hub)
        session.on_close(self.tasks.stop)
        self._calls: dict[str, asyncio.Task[Any]] = {}
        self._signing_in: asyncio.Task[None] | None = None

    async def run(self, name: str, params: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
        """(HTTP status, JSON answer) of action `name`."""
        action = ACTIONS.get(name)
        if action is None:
            return 404, {"ok": False, "error": f"no action {name!r}; the page and this "
                                                "mcpkit disagree (reload the page)"}
        try:
            return 200, {"ok": True, **await action(self, params)}
        except (InspectorRequestError, ElicitationAnswerError, QuestionClosedError,
                ViewError) as exc:
            return 400, failed(exc)
        except NotConnectedError as exc:
            return 409, failed(exc)
        except CallCancelledError:
            return 200, {"ok": False, "cancelled": True, "error": "cancelled from the page"}
        except MCPError as exc:
            return 200, failed(exc)
        except Exception as exc:  # a fault of the inspector's own: said, and logged in full
            log.exception("mcpkit dev: the %s action failed", name)
            return 500, {"ok": False, "error": f"the inspector failed ({type(exc).__name__}: "
                                               f"{exc}); the traceback is in its terminal"}

    async def _tracked(self, params: Mapping[str, Any], work: Awaitable[Any]) -> Any:
        """Run `work` under the call id the page gave (`callId`), so `cancel` can stop it."""
        ident = _text(params, "callId", optional=True)
        if ident is None:
            return await work
        if len(self._calls) >= MAX_CALLS:
            raise InspectorRequestError(f"{MAX_CALLS} calls are in flight already; wait for one to end")
        running = asyncio.ensure_future(work)
        self._calls[ident] = running
        try:
            return await running
        except asyncio.CancelledError:
            this = asyncio.current_task()
            if running.cancelled() and this is not None and not this.cancelling():
                raise CallCancelledError("cancelled from the page") from None  # `cancel` stopped the call, not the app
            raise
        finally:
            self._calls.pop(ident, None)

    # -- the actions ------------------------------------------------------------------------

    async def connect(self, params: Mapping[str, Any]) -> dict[str, Any]:
        era = params.get("era")
        if era is not None and era not in ERAS:
            raise InspectorRequestError(f"'era' is one of {', '.join(ERAS)}")
        return {"connection": await self.session.open(era)}

    async def refresh(self, params: Mapping[str, Any]) -> dict[str, Any]:
        return {"catalogue": await self.session.refresh()}

    async def call(self, params: Mapping[str, Any]) -> dict[str, Any]:
        client = self.session.require()
        name = _text(params, "name")
        arguments = _object(params, "arguments")
        listed = client.tools.get(name)
        tool = listed.raw if listed is not None else None
        if params.get("from") == "app":
            view = view_of(tool) if tool is not None else None
            if view is None or "app" not in view["visibility"]:
                raise InspectorRequestError(f"the view may not call {name!r}: its visibility lacks "
                                 "'app' (a host refuses such calls, SEP-1865)")
        call = params.get("callId")
        hub = self.session.hub

        def progress(done: float, total: float | None, message: str | None) -> None:
            hub.publish("progress", {"call": call, "progress": done, "total": total,
                                     "message": message})

        if params.get("task") and TASKS in client.server_extensions:
            handle = await self._tracked(params, client.start_tool(
                name, arguments, progress=progress))
            if handle.task_id is not None:
                self.tasks.follow(handle, name, arguments, call)
                return {"task": handle.task_id, "latest": handle.latest}
            result = await handle.wait()
        else:
            result = await self._tracked(params, client.call_tool(
                name, arguments, progress=progress))
        wire = raw(result)
        return {"result": wire, "check": output_check(tool, wire)}

    async def cancel(self, params: Mapping[str, Any]) -> dict[str, Any]:
        running = self._calls.get(_text(params, "callId"))
        if running is None:
            return {"cancelled": False}
        running.cancel()
        with contextlib.suppress(BaseException):
            await running
        return {"cancelled": True}

    async def read(self, params: Mapping[str, Any]) -> dict[str, Any]:
        client = self.session.require()
        uri = _text(params, "uri")
        result = await self._tracked(params, client.read_resource(uri, fresh=True))
        return {"result": raw(result)}

    async def complete(self, params: Mapping[str, Any]) -> dict[str, Any]:
        client = self.session.require()
        ref = _object(params, "ref")
        if ref is None:
            raise InspectorRequestError("'ref' is the completion's reference object")
        context = _object(params, "context")
        value = params.get("value")
        return {"completion": await client.complete(
            ref, _text(params, "argument"), value if isinstance(value, str) else "",
            context=context)}

    async def prompt(self, params: Mapping[str, Any]) -> dict[str, Any]:
        client = self.session.require()
        arguments = _object(params, "arguments")
        if arguments is not None and not all(isinstance(v, str) for v in arguments.values()):
            raise InspectorRequestError("a prompt's arguments are strings")
        result = await self._tracked(params, client.get_prompt(_text(params, "name"), arguments))
        return {"result": raw(result)}

    async def subscribe(self, params: Mapping[str, Any]) -> dict[str, Any]:
        self.session.require()
        uri = _text(params, "uri")
        if params.get("on", True):
            self.session.subscribed.add(uri)
        else:
            self.session.subscribed.discard(uri)
        self.session.listen()
        return {"subscribed": sorted(self.session.subscribed)}

    async def answer(self, params: Mapping[str, Any]) -> dict[str, Any]:
        answer = _object(params, "answer")
        if answer is None:
            raise InspectorRequestError("'answer' is the result object to send")
        self.session.questions.answer(_text(params, "id"), answer)
        return {}

    async def roots(self, params: Mapping[str, Any]) -> dict[str, Any]:
        given = params.get("roots")
        if not isinstance(given, list):
            raise InspectorRequestError("'roots' is a list of {uri, name}")
        try:
            return {"roots": self.session.questions.set_roots(given)}
        except ValueError as exc:
            raise InspectorRequestError(str(exc)) from None

    async def view(self, params: Mapping[str, Any]) -> dict[str, Any]:
        client = self.session.require()
        uri = _text(params, "uri")
        read = raw(await client.read_resource(uri, fresh=True))
        view = self.session.views.add(uri, read)
        return {"view": view.to_page(self.frames + view.ident)}

    async def task(self, params: Mapping[str, Any]) -> dict[str, Any]:
        client = self.session.require()
        ident = _text(params, "id")
        op = params.get("op")
        handle = self.tasks.handle(ident)
        if op == "attach" or handle is None:
            if op not in ("attach", "get", "cancel", "update"):
                raise InspectorRequestError("'op' is one of attach, get, cancel, update")
            handle = client.task(ident)
            if op == "attach":
                self.tasks.follow(handle)
                return {"following": ident}
        if op == "get":
            latest = await handle.status()
            self.tasks.publish(ident, latest)
            return {"latest": latest}
        if op == "cancel":
            await handle.cancel()
            return {}
        if op == "update":
            responses = _object(params, "responses")
            if responses is None:
                raise InspectorRequestError("'responses' maps each input request key to its answer")
            try:
                await handle.update(responses)
            except TypeError as exc:
                raise InspectorRequestError(str(exc)) from None
            return {}
        raise InspectorRequestError("'op' is one of attach, get, cancel, update")

    async def stderr(self, params: Mapping[str, Any]) -> dict[str, Any]:
        return {"stderr": self.session.stderr()}

    async def signin(self, params: Mapping[str, Any]) -> dict[str, Any]:
        session = self.session
        url = session.target.url
        if url is None:
            raise InspectorRequestError("signing in is for a server reached over HTTP")
        if self._signing_in is not None and not self._signing_in.done():
            return {"started": False}
        self._signing_in = asyncio.ensure_future(_sign_in(session, url))
        return {"started": True}


async def _sign_in(session: Session, url: str) -> None:
    """`mcpkit login URL` as the CLI runs it, its authorization URL handed to the page; then
    a new connection, which sends the tokens it kept."""
    from mcpkit.cli.auth import BROWSER_MODE, login_args, sign_in

    hub = session.hub
    args = login_args(url)

    def show(address: str) -> None:
        hub.publish("signin", {"state": "open", "url": address}, key="signin")

    hub.publish("signin", {"state": "starting"}, key="signin")
    try:
        await sign_in(url, args, None, BROWSER_MODE, show)
    except (MCPError, OSError, ValueError) as exc:
        hub.publish("signin", {"state": "failed", "error": str(exc)}, key="signin")
        return
    hub.publish("signin", {"state": "done"}, key="signin")
    await session.open()


ActionFunction = Callable[[Actions, Mapping[str, Any]], Awaitable[dict[str, Any]]]

ACTIONS: Final[dict[str, ActionFunction]] = {
    "connect": Actions.connect, "refresh": Actions.refresh, "call": Actions.call,
    "cancel": Actions.cancel, "read": Actions.read, "complete": Actions.complete,
    "prompt": Actions.prompt, "subscribe": Actions.subscribe, "answer": Actions.answer,
    "roots": Actions.roots, "view": Actions.view, "task": Actions.task,
    "signin": Actions.signin, "stderr": Actions.stderr,
}
"""Action name -> what it does."""
