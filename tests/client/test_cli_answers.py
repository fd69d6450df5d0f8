"""`mcpkit call` answering a server's questions at the terminal, as a person runs it: a real
`mcpkit` process at a real (pseudo-)terminal, answers typed on it, the server a real process
too; and the same questions answered from lines piped on stdin (`--answers-from-stdin`)."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import HELPERS
from helpers.at_terminal import at_terminal
from helpers.client.schema_tap import ROOT
from helpers.wire import LEGACY, MODERN, check, check_client_message

from mcpkit.cli.answers import elicit_form, elicit_url, parse_answer, shown
from mcpkit.cli.terminal import json_text
from mcpkit.client import InputRequest, read_form

HERE = Path(__file__).resolve().parent
FORM_SERVER = str(HELPERS / "client" / "form_server.py")
# The form server behind a relay that checks every message both ways (checked_relay.py).
CHECKED_FORM_SERVER = shlex.join([sys.executable, str(HELPERS / "client" / "checked_relay.py"),
                                  sys.executable, "-m", "mcpkit", "run", FORM_SERVER])
URL_SERVER = str(HELPERS / "client" / "url_elicit_server.py")
BROWSER = f"{sys.executable} {HELPERS / 'client' / 'visit_page.py'} %s"


def mcpkit(tmp_path: Path, *args: str, stdin: str = "",
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`mcpkit ARGS`; with `stdin`, its lines typed at a terminal (tests/helpers/at_terminal.py)."""
    environ = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    environ.pop("BROWSER", None)  # a page is only ever "opened" by the tests' own visitor
    environ.update(env or {})
    argv = [sys.executable, "-m", "mcpkit", *args]
    if stdin:
        return at_terminal(argv, stdin.splitlines(), cwd=ROOT, env=environ)
    return subprocess.run(argv, input="", capture_output=True, text=True, cwd=ROOT, timeout=60,
                          env=environ)


def lines(*answers: str) -> str:
    return "".join(f"{a}\n" for a in answers)


# name, email, age, plan, newsletter, topics, starts; each bad answer is asked again.
SESSION = lines("a", "A", "Ada", "ada at example", "ada@example.com", "twelve", "12", "36",
                "gold", "2", "", "mcp, go", "mcp,python", "2031-02-30", "", "s")
EXPECTED = {"name": "Ada", "email": "ada@example.com", "age": 36, "plan": "pro",
            "newsletter": False, "topics": ["mcp", "python"]}


def assert_asked_again(returncode: int, stdout: str, stderr: str) -> None:
    """What `mcpkit call ... register --json` shows and sends when fed SESSION."""
    assert returncode == 0, stderr
    content = json.loads(json.loads(stdout)["content"][0]["text"])
    assert content == EXPECTED
    for reason in ("must be at least 2 characters long",
                   "expected an email address like ada@example.com",
                   "expected an integer, like 42", "must be at least 18",
                   "the value given is not a choice (choose one of free, pro)",
                   "a value given is not a choice (choose from mcp, python, rust)",
                   "expected a date like 2031-03-04"):
        assert f"    {reason}" in stderr
    assert "  Name (string): " in stderr and "  age (integer 18..130): " in stderr
    assert "  plan (1=Free/2=Pro): " in stderr
    assert "  newsletter (boolean, optional) [false]: " in stderr
    assert "form-tests asks: Your profile, please." in stderr


@pytest.mark.parametrize("era", ["auto", "legacy"])
def test_bad_answers_are_asked_again_with_the_reason_and_only_a_valid_form_is_sent(
    tmp_path: Path, era: str
) -> None:
    done = mcpkit(tmp_path, "call", CHECKED_FORM_SERVER, "register", "--json", "--era", era,
                  stdin=SESSION)
    assert_asked_again(done.returncode, done.stdout, done.stderr)


class ClientChecks:
    """ASGI middleware: every message a client POSTs is checked against the schema of its era
    (legacy with a session id, or for initialize); problems are kept for the test to fail on."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.problems: list[str] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        legacy = any(name == b"mcp-session-id" for name, _ in scope["headers"])
        body = b""
        while True:  # read whole, then handed on as one piece
            event = await receive()
            body += event.get("body", b"")
            if event["type"] != "http.request" or not event.get("more_body"):
                break
        try:
            message = json.loads(body)
            legacy = legacy or message.get("method") == "initialize"
            check_client_message(LEGACY if legacy else MODERN, message)
        except (ValueError, AssertionError, AttributeError) as exc:
            self.problems.append(f"{exc}: {body[:200]!r}")
        from helpers.transports.resume_peer import replaying

        await self.app(scope, replaying(body, receive), send)


@pytest.mark.parametrize("era", ["auto", "legacy"])
async def test_the_form_is_asked_the_same_over_http(tmp_path: Path, era: str) -> None:
    # The form server over Streamable HTTP (in its modern or legacy session mode), every
    # message it sends checked by the recorder and every one the CLI sends by ClientChecks.
    from helpers.client.form_server import server
    from helpers.transports.resume_peer import serving

    clients = ClientChecks(server.asgi())
    async with serving(clients) as (url, recorder):
        done = await asyncio.to_thread(
            at_terminal, [sys.executable, "-m", "mcpkit", "call", url, "register", "--json",
                          "--era", era], SESSION.splitlines(),
            cwd=ROOT, env={**os.environ, "XDG_CACHE_HOME": str(tmp_path)})
    assert_asked_again(done.returncode, done.stdout, done.stderr)
    assert not clients.problems, clients.problems
    posts = [r for r in recorder.exchanges if r.method == "POST"]
    if era == "legacy":  # the question came on the call's stream
        assert any(r.media == "text/event-stream" for r in posts)
    else:  # the question came as an input_required result, the answer with the retry
        assert any(b'"resultType":"input_required"' in r.body for r in posts)
    assert (b"mcp-session-id" in posts[-1].headers) == (era == "legacy")


def test_a_field_answered_badly_too_often_cancels_the_form(tmp_path: Path) -> None:
    done = mcpkit(tmp_path, "call", CHECKED_FORM_SERVER, "register",
                  stdin=lines("a", "Ada", "ada@example.com", *["x"] * 5, "40"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "no profile (cancel)"
    assert "no valid answer for age after 5 tries; cancelled" in done.stderr
    assert done.stderr.count("expected an integer, like 42") == 5


def test_end_of_input_cancels_rather_than_sending_a_partial_form(tmp_path: Path) -> None:
    done = mcpkit(tmp_path, "call", CHECKED_FORM_SERVER, "register", stdin=lines("a", "Ada"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "no profile (cancel)"


def test_a_legacy_32042_page_declined_at_the_terminal_exits_1_naming_the_host(
    tmp_path: Path,
) -> None:
    done = mcpkit(tmp_path, "call", f"{sys.executable} {URL_SERVER} notify", "connect",
                  stdin=lines("n"))
    assert done.returncode == 1
    assert "url-elicit asks you to open a page: Connect your Example account." in done.stderr
    assert "  host: 127.0.0.1" in done.stderr
    assert "error -32042: tools/call 'connect': the server needs the user to complete a page " \
           "on 127.0.0.1 first (-32042); the user declined opening http://127.0.0.1:" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_legacy_32042_page_opened_at_the_terminal_is_completed_and_the_call_retried(
    tmp_path: Path,
) -> None:
    done = mcpkit(tmp_path, "call", f"{sys.executable} {URL_SERVER} notify", "connect",
                  stdin=lines("y"), env={"BROWSER": BROWSER})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "connected"
    assert "open it in your browser? [y/N]" in done.stderr


@pytest.mark.parametrize(("schema", "line", "value"), [
    ({"type": "boolean"}, "Yes", True),
    ({"type": "boolean"}, "0", False),
    ({"type": "integer"}, "-7", -7),
    ({"type": "integer"}, "3.0", 3),
    ({"type": "integer"}, "3.5", 3.5),  # parsed, then refused by the field's check
    ({"type": "number"}, "2", 2),
    ({"type": "number"}, "2.5e1", 25.0),
    ({"type": "string", "oneOf": [{"const": "p", "title": "Pro"}]}, "pro", "p"),
    ({"type": "string", "enum": ["x", "y"]}, "2", "y"),
    ({"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}, "b, 1,", ["b", "a"]),
    ({"type": "string"}, "  spaced  ", "  spaced  "),
])
def test_a_typed_line_becomes_the_fields_value(schema: dict[str, Any], line: str,
                                               value: Any) -> None:
    field = read_form({"type": "object", "properties": {"f": schema}}, "t").fields[0]
    assert parse_answer(line, field) == value


@pytest.mark.parametrize(("schema", "line", "reason"), [
    ({"type": "boolean"}, "maybe", "answer yes or no"),
    ({"type": "integer"}, "ten", "expected an integer, like 42"),
    ({"type": "number"}, "hunter2", "expected a number, like 42 or 2.5"),
    ({"type": "number"}, "nan", "expected a finite number"),
    ({"type": "number"}, "inf", "expected a finite number"),
])
def test_a_line_that_is_no_value_says_what_to_type(schema: dict[str, Any], line: str,
                                                   reason: str) -> None:
    field = read_form({"type": "object", "properties": {"f": schema}}, "t").fields[0]
    with pytest.raises(ValueError, match=reason):
        parse_answer(line, field)


def test_server_text_cannot_drive_the_terminal() -> None:
    assert shown("Name\x1b[2J\x07\u202e") == "Name\\x1b[2J\\x07\\u202e"
    assert shown("two\nlines") == "two\\nlines"


def test_json_for_a_terminal_escapes_what_json_dumps_leaves_raw_and_decodes_the_same() -> None:
    value = {"k\u202e": ["\x9b2J", "\U000e0001 tag", "ünï \u2028 sep", "\x1b"]}
    text = json_text(value, indent=2)
    assert all(c.isprintable() or c == "\n" for c in text)
    assert "\\u202e" in text and "\\u009b" in text and "\\udb40\\udc01" in text
    assert "ünï" in text
    assert json.loads(text) == value


def test_json_too_deep_to_print_is_a_protocol_violation_not_a_recursion_error() -> None:
    # The client decodes 1,024 levels of a server's JSON; json.dumps writes fewer.
    import orjson

    from mcpkit.errors import ProtocolViolation

    value = orjson.loads(b"[" * 1000 + b"]" * 1000)
    with pytest.raises(ProtocolViolation, match="nested too deeply to print"):
        json_text(value, indent=2)


# -- a server that asks whatever it likes (asking_server.py) ---------------------------------

ASKING_SERVER = HELPERS / "client" / "asking_server.py"
FORBIDDEN_ON_A_TERMINAL = ("\x1b", "\x07", "\x9b", "\u202e", "\u2066", "\r")


def ask(tmp_path: Path, questions: list[dict[str, Any]], *answers: str,
        env: dict[str, str] | None = None, piped: bool = False
        ) -> tuple[subprocess.CompletedProcess[str], Any]:
    """`mcpkit call` on a legacy server asking `questions`, `answers` typed at a terminal (or
    `piped` on stdin with --answers-from-stdin); every message the CLI sent is checked against
    the official schema, and each reply to an elicitation as an ElicitResult. Returns the
    process and the replies the server got (None when the call did not end)."""
    (tmp_path / "questions.json").write_text(json.dumps(questions))
    log = tmp_path / "received.log"
    server = f"{sys.executable} {ASKING_SERVER} {tmp_path / 'questions.json'} {log}"
    if piped:
        done = piped_lines(tmp_path, "call", server, "ask", "--json", stdin=lines(*answers))
    else:
        done = mcpkit(tmp_path, "call", server, "ask", "--json", stdin=lines(*answers), env=env)
    revision = MODERN  # the probe, then the legacy handshake
    for message in elicit_replies(log, len(questions), every=True):
        revision = LEGACY if message.get("method") == "initialize" else revision
        check_client_message(revision, message)
    replies = None
    if done.returncode == 0:
        replies = json.loads(json.loads(done.stdout)["content"][0]["text"])
    return done, replies


def elicit_replies(log: Path, count: int, *, every: bool = False) -> list[dict[str, Any]]:
    """The replies to the asking server's questions in its log, each checked as an
    ElicitResult (`every`: all the messages it received)."""
    asked = {f"q{i}" for i in range(count)}
    messages = list(map(json.loads, log.read_text().splitlines()))
    for message in messages:
        if message.get("id") in asked and "result" in message:
            check(LEGACY, "ElicitResult", message["result"])
    return messages if every else [m for m in messages if m.get("id") in asked]


# -- answers piped on stdin, one line per field (--answers-from-stdin) -----------------------


def piped_lines(tmp_path: Path, *args: str, stdin: str) -> subprocess.CompletedProcess[str]:
    """`mcpkit ARGS --answers-from-stdin` with `stdin` on a pipe."""
    return subprocess.run([sys.executable, "-m", "mcpkit", *args, "--answers-from-stdin"],
                          input=stdin, capture_output=True, text=True, cwd=ROOT, timeout=60,
                          env={**os.environ, "XDG_CACHE_HOME": str(tmp_path)})


@pytest.mark.parametrize("era", ["auto", "legacy"])
def test_piped_lines_answer_a_form_one_field_each_with_no_menu_or_send_step(
    tmp_path: Path, era: str
) -> None:
    # name, email, age, plan (by its number), newsletter (its default), topics, starts (left
    # out): the documented form, exactly one line per field.
    done = piped_lines(tmp_path, "call", CHECKED_FORM_SERVER, "register", "--json", "--era",
                       era, stdin=lines("Ada", "ada@example.com", "36", "2", "", "mcp,python", ""))
    assert done.returncode == 0, done.stderr
    assert json.loads(json.loads(done.stdout)["content"][0]["text"]) == EXPECTED
    assert "form-tests asks: Your profile, please." in done.stderr
    assert "  Name (string): Ada" in done.stderr  # each line shown beside its field
    assert "(a)nswer" not in done.stderr and "(s)end" not in done.stderr


@pytest.mark.parametrize("era", ["auto", "legacy"])
def test_a_pipe_that_ends_before_the_last_field_ends_with_status_2_and_sends_nothing(
    tmp_path: Path, era: str
) -> None:
    done = piped_lines(tmp_path, "call", CHECKED_FORM_SERVER, "register", "--era", era,
                       stdin=lines("Ada", "ada@example.com"))
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""  # no result: the tool never got an answer to act on
    assert "form-tests asked: Your profile, please." in done.stderr
    assert "and stdin ended before an answer" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_piped_line_that_does_not_fit_is_not_asked_again_and_nothing_is_accepted(
    tmp_path: Path,
) -> None:
    question = form({"name": {"type": "string"}, "email": {"type": "string", "format": "email"},
                     "age": {"type": "integer"}}, "name", "email", "age")
    # The second line is no email; taking the third as a second try would shift every answer.
    done, replies = ask(tmp_path, [question], "Ada", "ada at example", "ada@example.com",
                        piped=True)
    assert done.returncode == 2 and replies is None
    assert "the line for email (ada at example) does not fit" in done.stderr
    sent = elicit_replies(tmp_path / "received.log", 1)
    assert all(m["result"]["action"] == "cancel" for m in sent), sent  # never an accept


def test_an_empty_pipe_sends_no_decline_to_a_legacy_server(tmp_path: Path) -> None:
    question = form({"go": {"type": "boolean"}}, "go")
    done, replies = ask(tmp_path, [question], piped=True)
    assert done.returncode == 2 and replies is None
    assert "stdin ended before an answer" in done.stderr
    sent = elicit_replies(tmp_path / "received.log", 1)
    assert all(m["result"]["action"] == "cancel" for m in sent), sent


def form(properties: dict[str, Any], *required: str, message: str = "Tell us.") -> dict[str, Any]:
    return {"mode": "form", "message": message, "requestedSchema": {
        "type": "object", "properties": properties, "required": list(required)}}


def page(url: str, message: str = "Sign in, please.") -> dict[str, Any]:
    return {"mode": "url", "message": message, "url": url, "elicitationId": "e-1"}


def test_a_required_field_with_a_default_is_answered_by_pressing_enter(tmp_path: Path) -> None:
    question = form({"color": {"type": "string", "enum": ["red", "blue"], "default": "blue"},
                     "size": {"type": "integer", "default": 3}}, "color")
    done, replies = ask(tmp_path, [question], "a", "", "", "s")
    assert done.returncode == 0, done.stderr
    assert replies == [{"action": "accept", "content": {"color": "blue", "size": 3}}]
    assert '  answers: {"color": "blue", "size": 3}' in done.stderr  # shown before it is sent


def test_server_text_never_reaches_the_terminal_raw(tmp_path: Path) -> None:
    hostile = "\x1b]0;owned\x07\x9b2J\u202etxt.exe\u2066\r"
    question = form({
        f"name{hostile}": {"type": "string", "title": f"Title{hostile}",
                           "description": f"first line{hostile}\n  URL:  https://bank.example/"},
        "pick": {"type": "string", "enum": [f"a{hostile}", "b"], "default": f"a{hostile}"},
        "titled": {"type": "string", "oneOf": [{"const": "x", "title": f"X{hostile}"}]},
        "many": {"type": "array", "items": {"type": "string", "enum": [f"m{hostile}", "n"]}},
    }, message=f"Hello{hostile}\n  host: bank.example")
    done, replies = ask(tmp_path, [question], "a", "Ada", "1", "1", "1", "s")
    assert done.returncode == 0, done.stderr
    assert replies == [{"action": "accept", "content": {
        f"name{hostile}": "Ada", "pick": f"a{hostile}", "titled": "x", "many": [f"m{hostile}"]}}]
    assert not [c for c in FORBIDDEN_ON_A_TERMINAL if c in done.stderr]
    assert "Title\\x1b]0;owned\\x07\\x9b2J\\u202etxt.exe\\u2066\\r" in done.stderr
    # A line of server text cannot pass for one of ours: each continues behind a bar.
    assert "\n  |   host: bank.example" in done.stderr and "\n  host:" not in done.stderr
    assert "\n  |   URL:  https://bank.example/" in done.stderr


def test_an_international_host_is_shown_as_the_browser_will_reach_it(tmp_path: Path) -> None:
    lookalike = "\u0440\u0430\u0443\u0440\u0430l.com"  # Cyrillic letters imitating paypal.com
    done, replies = ask(tmp_path, [page(f"https://{lookalike}/login")], "n",
                        env={"BROWSER": BROWSER})
    assert done.returncode == 0, done.stderr
    assert replies == [{"action": "decline"}]
    assert f"  URL:  https://{lookalike}/login\n  host: xn--l-7sba6dbr.com\n" in done.stderr
    assert f"warning: the URL writes this host in international letters ({lookalike})" \
        in done.stderr


@pytest.mark.parametrize("url", [
    "https://evil.example\\.bank.example/",  # a browser goes to evil.example
    "http://0x7f.1/",  # a browser goes to 127.0.0.1
    "https://bank.example%2eevil.example/",
])
def test_a_page_whose_host_a_browser_reads_otherwise_is_never_offered(
    tmp_path: Path, url: str
) -> None:
    done, replies = ask(tmp_path, [page(url)], "y",
                        env={"BROWSER": BROWSER})  # it opens loopback pages only
    assert done.returncode == 0, done.stderr
    assert replies is not None and replies[0]["code"] == -32602
    assert "open it in your browser" not in done.stderr and url not in done.stderr


async def test_one_question_at_a_time_so_no_answer_is_taken_for_another(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A legacy server may ask twice at once; the second waits until the first is answered.
    reader, writer = os.pipe()
    monkeypatch.setattr(sys, "stdin", os.fdopen(reader, encoding="utf-8"))
    server = {"name": "twice"}
    url = InputRequest("elicitation/create", page("http://127.0.0.1:9/x"), server, "t")
    question = InputRequest("elicitation/create", form({"go": {"type": "boolean"}}, "go",
                                                       message="Go on?"), server, "t")
    both = asyncio.gather(elicit_url(url), elicit_form(question))
    try:
        for _ in range(5):
            await asyncio.sleep(0)  # each dialogue runs up to its first wait
        shown_so_far = capsys.readouterr().err
        assert "twice asks you to open a page" in shown_so_far
        assert "Go on?" not in shown_so_far
    finally:
        os.write(writer, lines("n", "a", "yes", "s").encode())
        os.close(writer)
        answers = await asyncio.wait_for(both, 10)
    assert answers == [{"action": "decline"}, {"action": "accept", "content": {"go": True}}]


# -- a server whose every word is hostile (raw_server.py hostile) ----------------------------


def test_no_server_text_reaches_the_terminal_raw_in_any_command(tmp_path: Path) -> None:
    from helpers.client.raw_server import HOSTILE_TEXT

    log = tmp_path / "raw.log"
    server = f"{sys.executable} {HELPERS / 'client' / 'raw_server.py'} hostile"
    env = {"RAW_SERVER_LOG": str(log)}
    runs = {
        "discover": mcpkit(tmp_path, "discover", server, env=env),
        "tools": mcpkit(tmp_path, "tools", server, env=env),
        "call": mcpkit(tmp_path, "call", server, "say", env=env),
        "fail": mcpkit(tmp_path, "call", server, "fail", env=env),
        "json": mcpkit(tmp_path, "call", server, "say", "--json", env=env),
    }
    assert [runs[k].returncode for k in runs] == [0, 0, 0, 1, 0], [r.stderr for r in runs.values()]
    for name, done in runs.items():
        leaked = [c for c in FORBIDDEN_ON_A_TERMINAL if c in done.stdout + done.stderr]
        assert not leaked, f"{name}: {leaked!r} reached the terminal"
    escaped = "\\x1b]0;owned\\x07\\x1b[2J\\x9b31m\\u202etxt.exe\\u2066\\r"
    assert f"raw{escaped} 1{escaped} · modern" in runs["discover"].stdout
    assert f"instructions: Be nice{escaped}\n  | fake: line" in runs["discover"].stdout
    assert f"  say{escaped}(x{escaped}?: string)\n      Says\\x1b]0;" in runs["tools"].stdout
    crlf_is_a_line_end = escaped.removesuffix("\\r")
    assert (f"line one{crlf_is_a_line_end}\nline two\n-> file:///x{escaped} (n{escaped})"
            in runs["call"].stdout)
    assert f"error -32603: it broke{escaped}" in runs["fail"].stderr
    # JSON stays exact: the same text once decoded.
    assert json.loads(runs["json"].stdout)["content"][0]["text"] == (
        f"line one{HOSTILE_TEXT}\nline two")
    received = [json.loads(line.split(" ", 1)[1]) for line in log.read_text().splitlines()]
    assert received
    for message in received:
        check_client_message(MODERN, message)


def test_a_page_asked_on_an_empty_pipe_ends_with_status_2_not_a_decline(tmp_path: Path) -> None:
    done, replies = ask(tmp_path, [page("http://127.0.0.1:9/x")], piped=True)
    assert done.returncode == 2 and replies is None, done.stderr
    assert "asked to open a page: Sign in, please." in done.stderr
    assert "stdin ended before an answer" in done.stderr
    sent = elicit_replies(tmp_path / "received.log", 1)
    assert all(m["result"]["action"] == "cancel" for m in sent), sent
