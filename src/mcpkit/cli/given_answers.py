"""Answering a server's questions without a terminal: `--answer NAME=VALUE`, and what a run
that has no input does when a question comes anyway.

A script cannot type into a form, and a question it cannot answer must not be taken as a
"decline" (the server would then act on an answer nobody gave). So the command decides up
front where answers come from (`input_source`): a terminal, a pipe or file that holds them
one line per field (only with `--answers-from-stdin`; `mcpkit.cli.answers.answer_lines`), or
nothing (`--no-input`, or any stdin that
is no terminal). Values given with `--answer` fill the fields they name in every mode, typed and checked like typed answers. A
question they do not cover, with nothing to ask on, ends the command (status 2) with the
question, its fields and the `--answer` that would answer it; nothing is sent for it.

Uses `mcpkit.cli.answers` for asking and typing, and the public client API.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
from typing import Any, Literal

from mcpkit.cli.answers import answer_lines, ask_form, elicit_url, parse_answer
from mcpkit.cli.terminal import shown, shown_block
from mcpkit.cli.usage import UsageError
from mcpkit.client import ElicitationAnswerError, FormField, InputRequest, check_answer, read_form

__all__ = [
    "Answering",
    "InputSource",
    "input_source",
    "parse_given",
]

InputSource = Literal["terminal", "lines", "none"]
"""Where a question's answers come from: typed at a terminal, read line by line from a pipe or
file, or nowhere."""


def input_source(no_input: bool, from_stdin: bool = False) -> InputSource:
    """Where this run's answers come from.

    A terminal is asked. Anything else on stdin (a pipe, a file, /dev/null, nothing) gives no
    answers, as `--no-input` does, unless `--answers-from-stdin` says the lines there are
    answers: a command run by a script or a host must end with a clear message, never wait on
    a pipe nobody writes to.
    """
    if no_input or sys.stdin is None or sys.stdin.closed:
        return "none"
    try:
        if sys.stdin.isatty():
            return "terminal"
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError):
        return "none"
    if not from_stdin:
        return "none"
    return "lines" if stat.S_ISFIFO(mode) or stat.S_ISREG(mode) or stat.S_ISSOCK(mode) else "none"


def parse_given(raw: list[str], *, what: str = "--answer",
                hint: str = "e.g. --answer startsAt=2031-03-04T09:30:00Z") -> dict[str, str]:
    """`--answer FIELD=VALUE` options (or other `what`s) as `{FIELD: VALUE}`; the text is typed
    per field later. A malformed one is a UsageError ending with `hint`."""
    out: dict[str, str] = {}
    for item in raw:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise UsageError(f"{what} {item!r} must be FIELD=VALUE, {hint}")
        if name in out:
            raise UsageError(f"{what} {name} is given twice ({name}={out[name]} and "
                             f"{name}={value}): give it once")
        out[name] = value
    return out


def _typed(field: FormField, text: str) -> Any:
    try:
        value = parse_answer(text, field)
    except ValueError as exc:
        raise UsageError(f"--answer {field.name}={text!r}: {exc}") from None
    problem = field.problem(value)
    if problem is not None:
        raise UsageError(f"--answer {field.name}={text!r}: {problem}")
    return value


def _what(field: FormField) -> str:
    return "VALUE" if not field.choices else "|".join(field.choices)


class Answering:
    """The form handler of one command: `--answer` values first, then the terminal or the
    piped lines, and when neither can answer, the command stops with what to pass."""

    def __init__(self, given: dict[str, str], source: InputSource, no_input: bool) -> None:
        self.given = given
        self.source = source
        self.no_input = no_input
        self.problem: str | None = None
        """Why the command stopped at a question (set before it is cancelled)."""
        self._task: asyncio.Task[Any] | None = None

    def watch(self) -> None:
        """Remember the command's task: a question that cannot be answered cancels it."""
        self._task = asyncio.current_task()

    async def __call__(self, request: InputRequest) -> dict[str, Any]:
        form = read_form(request.schema, "the form")
        try:
            filled = {f.name: _typed(f, self.given[f.name]) for f in form.fields
                      if f.name in self.given}
        except UsageError as exc:
            return self._stop(str(exc))
        missing = [f for f in form.fields if f.name not in filled and f.required
                   and not f.has_default]
        if not missing and filled:
            content = {f.name: f.default for f in form.fields if f.has_default}
            content.update(filled)
            answer = {"action": "accept", "content": content}
            try:
                check_answer(form, answer, "the form")
            except ElicitationAnswerError as exc:
                return self._stop(f"the --answer values do not fit the form: {exc}")
            print(f"  answers (from --answer): {shown(json.dumps(content, ensure_ascii=False))}",
                  file=sys.stderr, flush=True)
            return answer
        where = ("stdin ended before an answer" if self.source == "lines" else
                 "input ended before an answer" if self.source == "terminal" else
                 "--no-input is set" if self.no_input else
                 "there is no terminal to ask at (stdin is not one)")
        if self.source == "lines":
            got = await answer_lines(request, filled)
            if isinstance(got, dict):
                return got
            if got is not None:
                where = got  # a line that does not fit: nothing is asked again, nor sent
        elif self.source == "terminal":
            asked = await ask_form(request, given=filled)
            if asked is not None:
                return asked
        asker = (request.server or {}).get("title") or (request.server or {}).get("name")
        fields = missing or [f for f in form.fields if f.name not in filled]
        hint = " ".join(f"--answer {f.name}={_what(f)}" for f in fields)
        return self._stop(
            f"{shown(asker or 'the server')} asked: {shown_block(request.message)}\n"
            f"  and {where}; answer it with {shown(hint)}"
            f" ({', '.join(shown(f.name + ': ' + f.hint()) for f in fields)}),"
            " or run the command at a terminal"
        )

    async def open_page(self, request: InputRequest) -> dict[str, Any]:
        """A page the server asks the user to open: asked as at the terminal; from piped
        lines, a pipe that ends first stops the command as a form's question does."""
        if self.source != "lines":
            return await elicit_url(request)
        asker = (request.server or {}).get("title") or (request.server or {}).get("name")
        return await elicit_url(request, on_end=lambda: self._stop(
            f"{shown(asker or 'the server')} asked to open a page: "
            f"{shown_block(request.message)}\n  and stdin ended before an answer (y or n)"))

    def _stop(self, problem: str) -> dict[str, Any]:
        """End the command: record why, cancel its task, and tell the server nothing was
        answered (a legacy server's request still gets a reply while the run closes)."""
        self.problem = problem
        if self._task is not None:
            self._task.cancel()
        return {"action": "cancel"}
