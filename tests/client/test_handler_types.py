"""The types of the functions an application hands the client: what `help()` and an IDE show of
them, that plain and async functions fit them at run time and for a type checker, and that
something which is no function is refused when the client is made, not when the server asks."""

from __future__ import annotations

import inspect
import os
import pydoc
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import mcpkit
from mcpkit import Context, Server
from mcpkit.client import Client, ClientOptions, InputRequest
from mcpkit.transports.memory import InMemory

MakeClient = Callable[..., Client]
HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

SIGNATURES = {
    "ElicitationHandler": ["request"],
    "SamplingHandler": ["request"],
    "RootsHandler": ["request"],
    "LogHandler": ["level", "data", "logger"],
    "ProgressHandler": ["progress", "total", "message"],
    "ElicitationCompleteHandler": ["elicitation_id"],
    "TraceContext": [],
}
"""Each handler type mcpkit exports, and the parameters its call takes, in order."""


@pytest.mark.parametrize(("name", "parameters"), SIGNATURES.items())
def test_help_shows_each_handler_types_call_with_named_parameters(
    name: str, parameters: list[str]
) -> None:
    handler_type = getattr(mcpkit, name)
    call = inspect.signature(handler_type.__call__, eval_str=True)
    named = [p for p in call.parameters.values() if p.name != "self"]
    assert [p.name for p in named] == parameters
    assert all(p.kind is inspect.Parameter.POSITIONAL_ONLY for p in named), (
        "positional-only, so an application's own parameter names still fit"
    )
    assert all(p.annotation is not inspect.Parameter.empty for p in named)
    assert call.return_annotation is not inspect.Signature.empty
    shown = pydoc.render_doc(handler_type, renderer=pydoc.plaintext)
    shown_call = r"__call__\(self" + "".join(rf", {p}: [^,]+" for p in parameters)
    assert re.search(shown_call + r"(, /)?\) -> ", shown), shown
    assert "Raising" in shown or "raising" in shown, "the docstring says what raising does"


def test_the_docs_of_the_input_handlers_name_what_they_return() -> None:
    for name, result in (("ElicitationHandler", '"action": "accept"'),
                         ("SamplingHandler", "CreateMessageResult"),
                         ("RootsHandler", "ListRootsResult")):
        assert result in pydoc.render_doc(getattr(mcpkit, name), renderer=pydoc.plaintext)


def asking_server() -> Server:
    """A tool that asks for each kind of input and logs, so every handler is called once."""
    server = Server("asking", "1.0.0")

    @server.tool()
    async def ask(ctx: Context) -> dict[str, Any]:
        """Asks the client for a form, a completion and its roots."""
        await ctx.info("asking")
        await ctx.report_progress(1, 1, "asked")
        form = await ctx.elicit("name", "Your name?", {"name": str})
        sampled = await ctx.sample("capital", "Capital of France?", max_tokens=5)
        roots = await ctx.roots()
        return {"name": form["name"], "capital": sampled.text, "roots": [r.uri for r in roots]}

    return server


def sync_handlers(seen: list[str]) -> dict[str, Any]:
    def elicit(request: InputRequest) -> dict[str, Any]:
        seen.append(request.method)
        return {"action": "accept", "content": {"name": "Ada"}}

    def sample(request: InputRequest) -> dict[str, Any]:
        seen.append(request.method)
        return {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"}

    def roots(request: InputRequest) -> dict[str, Any]:
        seen.append(request.method)
        return {"roots": [{"uri": "file:///work", "name": "work"}]}

    def on_log(level: str, data: Any, logger: str | None) -> None:
        seen.append(f"log {level} {data}")

    return {"elicit": elicit, "sample": sample, "roots": roots, "on_log": on_log}


def async_handlers(seen: list[str]) -> dict[str, Any]:
    plain = sync_handlers(seen)

    async def elicit(request: InputRequest) -> dict[str, Any]:
        return plain["elicit"](request)  # type: ignore[no-any-return]

    async def sample(request: InputRequest) -> dict[str, Any]:
        return plain["sample"](request)  # type: ignore[no-any-return]

    async def roots(request: InputRequest) -> dict[str, Any]:
        return plain["roots"](request)  # type: ignore[no-any-return]

    async def on_log(level: str, data: Any, logger: str | None) -> None:
        plain["on_log"](level, data, logger)

    return {"elicit": elicit, "sample": sample, "roots": roots, "on_log": on_log}


@pytest.mark.parametrize("era", ["modern", "legacy"])
@pytest.mark.parametrize("make_handlers", [sync_handlers, async_handlers], ids=["def", "async"])
async def test_plain_and_async_handlers_both_answer_the_server(
    memory_client: MakeClient, era: str, make_handlers: Callable[[list[str]], dict[str, Any]],
) -> None:
    seen: list[str] = []
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    client = memory_client(asking_server(), json=True, options=ClientOptions(era=era),  # type: ignore[arg-type]
                           **make_handlers(seen))
    result = await client.call_tool("ask", progress=on_progress)
    assert result["structuredContent"] == {
        "name": "Ada", "capital": "Paris", "roots": ["file:///work"]}
    assert "log info asking" in seen
    assert [s for s in seen if not s.startswith("log")][-3:] == [
        "elicitation/create", "sampling/createMessage", "roots/list"]
    assert progress[:1] == [(1, 1, "asked")]


@pytest.mark.parametrize(("keyword", "value", "named"), [
    ("elicit", {"action": "accept"}, "elicit must be a function"),
    ("elicit_url", "https://example.com", "elicit_url must be a function"),
    ("sample", 42, "sample must be a function"),
    ("on_log", print.__name__, "on_log must be a function"),
    ("on_elicitation_complete", [], "on_elicitation_complete must be a function"),
    ("roots", "file:///work", "roots must be a function or a list of roots"),
    ("roots", {"uri": "file:///work"}, "roots must be a function or a list of roots"),
])
def test_something_that_is_no_handler_is_refused_when_the_client_is_made(
    keyword: str, value: Any, named: str
) -> None:
    with pytest.raises(TypeError, match=named):
        Client(InMemory(asking_server()), **{keyword: value})


TYPED_USE = '''
"""Handlers written as an application would, checked against mcpkit's handler types."""
from collections.abc import Mapping
from typing import Any

from mcpkit import (Client, ClientOptions, ElicitationCompleteHandler, ElicitationHandler,
                    InMemory, InputRequest, LogHandler, ProgressHandler, RootsHandler,
                    SamplingHandler, Server, TraceContext)


def form(req: InputRequest) -> dict[str, Any]:
    return {"action": "decline"}


async def page(req: InputRequest) -> dict[str, Any]:
    return {"action": "accept"}


async def model(req: InputRequest) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}


def folders(req: InputRequest) -> dict[str, Any]:
    return {"roots": []}


def show(lvl: str, payload: Any, name: str | None) -> None:
    print(lvl, payload, name)


async def bar(done: float, of: float | None, text: str | None) -> None:
    print(done, of, text)


def finished(eid: str) -> None:
    print(eid)


def trace() -> Mapping[str, str]:
    return {}


e: ElicitationHandler = form
u: ElicitationHandler = page
s: SamplingHandler = model
r: RootsHandler = folders
lg: LogHandler = show
p: ProgressHandler = bar
c: ElicitationCompleteHandler = finished
t: TraceContext = trace

client = Client(InMemory(Server("s", "1")), elicit=form, elicit_url=page, sample=model,
                roots=folders, on_log=show, on_elicitation_complete=finished,
                options=ClientOptions(trace_context=trace))


async def call() -> None:
    await client.call_tool("x", progress=bar, log=lambda level, data, logger: None)
'''


def test_an_applications_plain_and_async_functions_type_check_as_the_handler_types(
    tmp_path: Path,
) -> None:
    source = tmp_path / "app_handlers.py"
    source.write_text(TYPED_USE)
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental",
         "--follow-imports=silent", "--config-file", os.devnull, str(source)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "MYPYPATH": str(ROOT / "src")},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success" in done.stdout
