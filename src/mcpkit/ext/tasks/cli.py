"""Tasks at the command line: `mcpkit call` on a tool the server runs as a task, and
`mcpkit task get | wait | cancel | answer SERVER TASK_ID`.

`mcpkit call` starts every call with `Client.start_tool`, so a server that makes it a task is
followed here: its status on stderr as one live line on a terminal (with a bar when its
statusMessage ends in a count such as `(3/10)`), or a plain line per change otherwise, and the
result on stdout as for any call. `--detach` prints the task id and exits. Ctrl-C while waiting
prints the id, then asks at a terminal whether to cancel the task or leave it running; with
nobody to ask (`--no-input`, a stdin that is no terminal) it is left running and the command
that resumes the wait is printed. Exit status 130 after an interruption.

`mcpkit task` covers the rest by id: `get` shows the state once, `wait` follows it to its end
(answering its questions as `call` does), `cancel` asks the server to stop it, `answer` sends
answers to the questions it is parked on: one JSON object of `inputResponses`, or `FIELD=VALUE`
pairs that fill the fields of its forms, or, with neither, the questions asked at the terminal.

Uses the public client API and the CLI's own modules: it is the extension's room on the
command line's floor, registered through the CLI's hook (`register`,
`mcpkit.cli.commands.EXTENSION_COMMANDS`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shlex
import sys
from typing import Any, Final

from mcpkit.cli.showing import note, out, show_result
from mcpkit.cli.terminal import shown, shown_block
from mcpkit.cli.usage import UsageError

__all__ = [
    "ASKING_VERBS",
    "TASK_COMMANDS",
    "TaskLine",
    "follow",
    "register",
    "register_task",
    "run_task",
]

TASK_COMMANDS: Final = {
    "get": "show a task's state once",
    "wait": "wait for a task to end and print its result (answering its questions)",
    "cancel": "ask the server to cancel a task",
    "answer": "answer the questions a task waits on: JSON | FIELD=VALUE ...",
}
ASKING_VERBS: Final = frozenset({"wait", "answer"})
"""The verbs that may meet the task's questions (and so take the answering options)."""
_COUNT: Final = re.compile(r"\((\d+(?:\.\d+)?)/(\d+(?:\.\d+)?)\)\s*$")


class TaskLine:
    """A task's status on stderr: one line redrawn on a terminal, a line per change else."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.drawn = False
        self.last: str | None = None

    def __call__(self, task: dict[str, Any]) -> None:
        message = task.get("statusMessage")
        text = f"task {shown(task.get('taskId'))} {shown(task.get('status'))}"
        if isinstance(message, str) and message:
            text += f": {shown(message)}"
            count = _COUNT.search(message)
            if count and self.tty and float(count.group(2)) > 0:
                frac = max(0.0, min(1.0, float(count.group(1)) / float(count.group(2))))
                text = f"[{'#' * int(frac * 30):<30}] {text}"
        if text == self.last:
            return
        self.last = text
        if self.tty:
            print(f"\r\x1b[2K{text}", end="", file=sys.stderr, flush=True)
            self.drawn = True
        else:
            print(text, file=sys.stderr, flush=True)

    def done(self) -> None:
        if self.drawn:
            print(file=sys.stderr, flush=True)
            self.drawn = False


def _resume(args: argparse.Namespace, task_id: str) -> str:
    return (f"mcpkit task wait {shown(shlex.quote(args.server))} "
            f"{'-- ' * task_id.startswith('-')}{shown(shlex.quote(task_id))}")


class _IdParser(argparse.ArgumentParser):
    """The parser of one `mcpkit task VERB`: a word starting with `-` that names none of its
    options is an argument, so a task id such as `-SZ6...` (a server chooses its ids) needs no
    `--` before it. An option's value goes after a space or `=` here (`-H 'Name: value'`,
    `--timeout=5`), never glued to a short option (`-Hvalue` would be read as an id)."""

    def _parse_optional(self, arg_string: str) -> Any:
        if arg_string.startswith("-") and arg_string != "--" and not self._names_option(
                arg_string):
            return None  # positional
        return super()._parse_optional(arg_string)

    def _names_option(self, word: str) -> bool:
        options = self._option_string_actions
        if word in options:
            return True
        if not word.startswith("--"):
            return False
        name = word.split("=", 1)[0]
        return name in options or (self.allow_abbrev and any(
            o.startswith(name) for o in options if o.startswith("--")))


async def follow(client: Any, handle: Any, args: argparse.Namespace, answering: Any) -> Any:
    """The result of the task `handle` names (the wire dict), followed on stderr; None when
    interrupted (after asking what to do with the task), or when only its id was asked for."""
    task_id = handle.task_id
    if getattr(args, "detach", False):
        if args.json:
            out({"taskId": task_id})  # exactly, for a script
        else:
            print(shown(task_id), flush=True)
        print(f"# task {shown(task_id)} runs on; resume with: {_resume(args, task_id)}",
              file=sys.stderr)
        return None
    line = TaskLine()
    try:
        return (await handle.wait(on_status=line)).raw
    except asyncio.CancelledError:
        if answering is not None and answering.problem is not None:
            raise  # a question nobody could answer: the command says so
        current = asyncio.current_task()
        if current is not None:
            current.uncancel()  # Ctrl-C: handled here, the command goes on to its end
        line.done()
        await _interrupted(handle, args, answering)
        return None
    finally:
        line.done()


async def _interrupted(handle: Any, args: argparse.Namespace, answering: Any) -> None:
    task_id = handle.task_id
    print(f"\nmcpkit: interrupted; task {shown(task_id)} is still running on the server",
          file=sys.stderr, flush=True)
    if answering is not None and answering.source == "terminal":
        from mcpkit.cli.answers import ask_line

        choice = await ask_line("  (c)ancel it, or (l)eave it running? [l] ")
        if choice is not None and choice.strip().lower().startswith("c"):
            await handle.cancel()
            print(f"  asked the server to cancel task {shown(task_id)}", file=sys.stderr)
            return
    print(f"  left running; resume with: {_resume(args, task_id)}", file=sys.stderr, flush=True)


# -- mcpkit task ... ---------------------------------------------------------------------------

def register_task(sub: Any, common: Any) -> None:
    """Add `mcpkit task get|wait|cancel|answer` to `mcpkit`'s subparsers; `common` adds the
    client commands' own options (--json, --timeout, -H, ...) to each, the answering ones
    (`asks=`) to the verbs that may meet a question."""
    task = sub.add_parser("task", help="follow, answer or cancel a task by its id",
                          description="Work with a task a server runs (the Tasks extension).")
    verbs = task.add_subparsers(dest="task_command", metavar="VERB", required=True,
                                parser_class=_IdParser)
    for name, help_text in TASK_COMMANDS.items():
        p = verbs.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(client_command="task")
        p.add_argument("server", metavar="SERVER",
                       help="http(s) URL, path/to/server.py[:name], or a quoted command line")
        p.add_argument("task_id", metavar="TASK_ID",
                       help="the task's id (one starting with '-' may follow '--')")
        if name == "answer":
            p.add_argument("responses", nargs="*", metavar="ANSWER",
                           help="one JSON object of inputResponses by key, or FIELD=VALUE pairs")
        common(p, asks=name in ASKING_VERBS)


def register(sub: Any, common: Any) -> dict[str, Any]:
    """The command-line hook (`mcpkit.cli.commands.EXTENSION_COMMANDS`): `mcpkit task`'s
    verbs added to `sub`, and the command that runs them."""
    register_task(sub, common)
    return {"task": _task}


async def _task(client: Any, args: argparse.Namespace) -> int:
    return await run_task(client, args, args.answering)


async def run_task(client: Any, args: argparse.Namespace, answering: Any) -> int:
    """One `mcpkit task VERB` against a connected client."""
    handle = client.task(args.task_id)
    verb = args.task_command
    if verb == "get":
        _show_state(await handle.status(), args.json)
        note(client, args.json)
        return 0
    if verb == "cancel":
        await handle.cancel()
        if args.json:
            out({"taskId": args.task_id, "cancelRequested": True})
        else:
            print(f"asked the server to cancel task {shown(args.task_id)}")
        return 0
    if verb == "answer":
        return await _answer(handle, args, answering)
    result = await follow(client, handle, args, answering)
    if result is None:
        return 130
    note(client, args.json)
    show_result(result, args.json)
    return 1 if result.get("isError") else 0


def _show_state(task: dict[str, Any], as_json: bool) -> None:
    if as_json:
        out(task)
        return
    print(f"task {shown(task.get('taskId'))}: {shown(task.get('status'))}"
          + (f" ({shown(task['statusMessage'])})" if task.get("statusMessage") else ""))
    for key, request in (task.get("inputRequests") or {}).items():
        params = request.get("params") or {}
        print(f"  asks {shown(key)} ({shown(request.get('method'))}): "
              f"{shown_block(params.get('message', ''))}")
    if task.get("status") == "completed":
        show_result(task.get("result") or {}, False)
    elif task.get("status") == "failed":
        error = task.get("error") or {}
        print(f"  error {shown(error.get('code'))}: {shown_block(error.get('message'))}")


async def _answer(handle: Any, args: argparse.Namespace, answering: Any) -> int:
    """Send answers to the questions the task is parked on (each key at most once)."""
    from mcpkit.cli.given_answers import parse_given
    from mcpkit.client import InputRequest

    raw = args.responses
    if len(raw) == 1 and raw[0].lstrip().startswith("{"):
        try:
            responses = json.loads(raw[0])
        except ValueError as exc:
            raise UsageError(f"the answers are not JSON: {exc}") from None
        if not isinstance(responses, dict) or not all(
                isinstance(v, dict) for v in responses.values()):
            raise UsageError("the answers are one JSON object mapping each question's key to "
                             'its answer, e.g. {"confirm": {"action": "accept", "content": '
                             '{"ok": true}}}')
    else:
        state = await handle.status()
        asked = state.get("inputRequests") or {}
        if state.get("status") != "input_required" or not asked:
            raise UsageError(f"task {args.task_id} asks nothing now (it is "
                             f"{state.get('status')})")
        answering.given.update(parse_given(raw, what="answer", hint="or give one JSON object"))
        responses = {}
        for key, request in asked.items():
            if request.get("method") != "elicitation/create":
                raise UsageError(f"question {key!r} is a {request.get('method')}, which "
                                 "mcpkit task answer takes only as JSON")
            responses[key] = await answering(InputRequest(
                "elicitation/create", request.get("params") or {}, None,
                f"task {args.task_id}", key))
            if answering.problem is not None:
                raise UsageError(answering.problem)
    await handle.update(responses)
    if args.json:
        out({"taskId": args.task_id, "answered": sorted(responses)})
    else:
        print(f"answered {', '.join(map(shown, sorted(responses)))} of task "
              f"{shown(args.task_id)}")
    return 0
