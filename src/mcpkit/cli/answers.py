"""Answering a server's questions at the terminal, or from lines piped on stdin: elicitation
forms and URL pages.

Each form field is asked on its own line, typed from the field (`mcpkit.client.forms`): yes/no
for booleans, comma-separated choices for multi-selects, numbers checked against their bounds,
strings against their length, format and choices. A bad answer is refused with what is wrong
and the field is asked again, at most `MAX_ATTEMPTS` times; after that the form is cancelled,
so an answer that does not fit the form is never sent. An empty line takes the field's default,
and the answers, defaults included, are shown before they are sent (ELIC-6, ELIC-10). A page is
opened only after the user says yes, with its full URL and the host the browser will really
reach shown first, and a warning when the URL writes that host otherwise (ELIC-11).

Everything the server wrote (its name, the message, titles, choices, field names) is shown with
control, format and bidi characters made visible, so a server cannot drive the terminal with
escape sequences; its multi-line text continues behind a bar (`  | `), so none of its lines can
pass for one of ours (a fake `URL:` line). One question is asked at a time: a legacy server may
send several at once, and an answer typed for one must never be taken as consent for another.

Uses the public client API and the escaping of `mcpkit.cli.terminal` only; reads stdin and
writes stderr (stdout is the result's).
"""

from __future__ import annotations

import asyncio
import json
import math
import sys
import weakref
from collections.abc import Callable
from typing import Any, Final
from urllib.parse import urlsplit

from mcpkit.cli.terminal import shown
from mcpkit.cli.terminal import shown_block as _block
from mcpkit.client import ElicitationAnswerError, FormField, InputRequest, check_answer, read_form
from mcpkit.client.url_elicitation import check_url, real_host

__all__ = [
    "MAX_ATTEMPTS",
    "answer_lines",
    "ask_form",
    "ask_line",
    "elicit_form",
    "elicit_url",
    "parse_answer",
]

MAX_ATTEMPTS: Final = 5
"""Answers one field may be given before the form is cancelled."""
_YES: Final = ("y", "yes", "true", "1")
_NO: Final = ("n", "no", "false", "0")
_turns: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
    weakref.WeakKeyDictionary()
)


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _turn() -> asyncio.Lock:
    """The terminal's one conversation at a time (per event loop)."""
    loop = asyncio.get_running_loop()
    lock = _turns.get(loop)
    if lock is None:
        lock = _turns[loop] = asyncio.Lock()
    return lock


async def ask_line(prompt: str) -> str | None:
    """One line from the terminal (None at end of input), without blocking the event loop."""
    def read() -> str | None:
        print(prompt, end="", file=sys.stderr, flush=True)
        line = sys.stdin.readline()
        return None if not line else line.rstrip("\r\n")
    return await asyncio.get_running_loop().run_in_executor(None, read)


def _who(request: InputRequest) -> str:
    info = request.server or {}
    return shown(info.get("title") or info.get("name") or "the server")


def parse_answer(line: str, field: FormField) -> Any:
    """The value a typed line means for `field`; ValueError says what to type instead."""
    kind = field.kind
    if kind == "boolean":
        if line.lower() in _YES:
            return True
        if line.lower() in _NO:
            return False
        raise ValueError("answer yes or no")
    if kind == "array":
        return [_choice(part.strip(), field) for part in line.split(",") if part.strip()]
    if kind in ("integer", "number"):
        try:
            return int(line)
        except ValueError:
            pass
        try:
            number = float(line)
        except ValueError:
            raise ValueError("expected an integer, like 42" if kind == "integer" else
                             "expected a number, like 42 or 2.5") from None
        if not math.isfinite(number):
            raise ValueError("expected a finite number")
        return int(number) if kind == "integer" and number.is_integer() else number
    return _choice(line, field) if field.choices else line


def _choice(text: str, field: FormField) -> str:
    """A choice by its value, its title (any case) or its number in the list."""
    if text in field.choices:
        return text
    for value, label in zip(field.choices, field.labels, strict=False):
        if text.lower() == label.lower():
            return value
    if text.isascii() and text.isdigit() and 1 <= int(text) <= len(field.choices):
        return field.choices[int(text) - 1]
    return text


def _prompt(field: FormField) -> str:
    if field.choices and field.labels:
        hint = "/".join(f"{i}={shown(label)}" for i, label in enumerate(field.labels, 1))
    else:
        hint = shown(field.hint())
    optional = "" if field.required else ", optional"
    default = f" [{shown(json.dumps(field.default, ensure_ascii=False))}]" \
        if field.has_default else ""
    return f"  {shown(field.label)} ({hint}{optional}){default}: "


async def _fill(fields: tuple[FormField, ...], given: dict[str, Any]) -> dict[str, Any] | str | None:
    """The content, each value checked against its field (those in `given` already are, and
    are not asked); None at end of input, or a reason to cancel after too many bad answers."""
    content: dict[str, Any] = {}
    for field in fields:
        if field.name in given:
            content[field.name] = given[field.name]
            continue
        if field.description:
            _say(f"  {_block(field.description)}")
        for _ in range(MAX_ATTEMPTS):
            line = await ask_line(_prompt(field))
            if line is None:
                return None
            if not line:
                if field.has_default:
                    content[field.name] = field.default
                    break
                if not field.required:
                    break  # left out
                _say("    required: please give a value")
                continue
            try:
                value = parse_answer(line, field)
            except ValueError as exc:
                _say(f"    {exc}")
                continue
            problem = field.problem(value)
            if problem is not None:
                _say(f"    {shown(problem)}")
                continue
            content[field.name] = value
            break
        else:
            return f"no valid answer for {shown(field.label)} after {MAX_ATTEMPTS} tries"
    return content


async def elicit_form(request: InputRequest) -> dict[str, Any]:
    """Ask each field of the form, show the answers, then send them on consent."""
    return await ask_form(request) or {"action": "cancel"}


async def ask_form(request: InputRequest, given: dict[str, Any] | None = None
                   ) -> dict[str, Any] | None:
    """`elicit_form` with some fields already answered (`given`, checked values, not asked);
    None when input ends before the first answer, so the caller can say that nobody was
    there to answer instead of sending a "cancel" nobody chose."""
    async with _turn():
        return await _form_dialogue(request, given or {})


async def _form_dialogue(request: InputRequest, given: dict[str, Any]) -> dict[str, Any] | None:
    form = read_form(request.schema, "the form")  # checked by the client before we are called
    _say(f"\n{_who(request)} asks: {_block(request.message)}")
    choice = await ask_line("  (a)nswer, (d)ecline or (c)ancel? [a] ")
    if choice is None:
        return None
    while choice is not None and not choice.strip().lower().startswith(("c", "d")):
        content = await _fill(form.fields, given)
        if content is None:
            break
        if isinstance(content, str):
            _say(f"  {content}; cancelled")
            return {"action": "cancel"}
        answer = {"action": "accept", "content": content}
        try:
            check_answer(form, answer, "the form")
        except ElicitationAnswerError as exc:
            _say(f"  {shown(exc)}")
            choice = "e"
            continue
        _say(f"  answers: {shown(json.dumps(content, ensure_ascii=False))}")
        choice = await ask_line("  (s)end, (e)dit, (d)ecline or (c)ancel? [s] ")
        if choice is not None and choice.strip().lower() in ("", "s", "send"):
            return answer
    if choice is not None and choice.strip().lower().startswith("d"):
        return {"action": "decline"}
    return {"action": "cancel"}


async def answer_lines(request: InputRequest, given: dict[str, Any]
                       ) -> dict[str, Any] | str | None:
    """A form answered from piped lines (`--answers-from-stdin`): one line per field not in
    `given`, in the form's order, then sent, with no menu and no confirmation to read; an
    empty line takes the field's default or leaves an optional field out. The accepted
    answer; None when the lines end first; the reason when a line does not fit its field
    (nothing is asked again: the next line is the next field's)."""
    async with _turn():
        form = read_form(request.schema, "the form")
        _say(f"\n{_who(request)} asks: {_block(request.message)}")
        content: dict[str, Any] = {}
        for field in form.fields:
            if field.name in given:
                content[field.name] = given[field.name]
                continue
            line = await ask_line("")
            if line is None:
                return None
            _say(f"{_prompt(field)}{shown(line)}")
            if not line:
                if field.has_default:
                    content[field.name] = field.default
                elif field.required:
                    return f"the line for {shown(field.label)} is empty, and it is required"
                continue
            try:
                value = parse_answer(line, field)
            except ValueError as exc:
                return f"the line for {shown(field.label)} ({shown(line)}) does not fit: {exc}"
            problem = field.problem(value)
            if problem is not None:
                return f"the line for {shown(field.label)} ({shown(line)}) does not fit: " \
                       f"{shown(problem)}"
            content[field.name] = value
        answer = {"action": "accept", "content": content}
        try:
            check_answer(form, answer, "the form")
        except ElicitationAnswerError as exc:
            return f"the answers do not fit the form: {shown(exc)}"
        _say(f"  answers: {shown(json.dumps(content, ensure_ascii=False))}")
        return answer


async def elicit_url(request: InputRequest, *,
                     on_end: Callable[[], dict[str, Any]] | None = None) -> dict[str, Any]:
    """Show the page's full URL and real host, and open it only if the user says yes; the end
    of input is a no, or what `on_end` makes of it (piped answers that ran out)."""
    url = request.url or ""
    problem = check_url(url)  # the client checked it; a page is never opened unchecked
    if problem is not None:
        _say(f"\n{_who(request)} asked to open a page that is refused: {shown(problem)}")
        return {"action": "decline"}
    async with _turn():
        host = real_host(url)
        _say(f"\n{_who(request)} asks you to open a page: {_block(request.message)}\n"
             f"  URL:  {url}\n  host: {host}")
        written = urlsplit(url).hostname or ""
        if not written.isascii():
            _say(f"  warning: the URL writes this host in international letters ({written}), "
                 "which can imitate others; check that the host above is the site you expect")
        elif "xn--" in host:
            _say("  warning: the host is in punycode (xn--), which can stand for letters that "
                 "imitate others; check it is the site you expect")
        line = await ask_line("  open it in your browser? [y/N] ")
    if line is None and on_end is not None:
        return on_end()
    answer = (line or "").strip().lower()
    if answer not in ("y", "yes"):
        return {"action": "decline"}
    import webbrowser

    webbrowser.open(url)
    return {"action": "accept"}
