"""The inspector's rules that need no browser and no server: who may use the app (the guard),
a message as a command line, what an error code means, a view's policy, the event stream's
replay, the page's answers to a server's questions, the structured-content check, and the wire
log built from a transport's tap and httpx's hooks."""

from __future__ import annotations

import asyncio
import base64
import json
import shlex
from typing import Any

import httpx
import pytest

from mcpkit.cli.usage import UsageError
from mcpkit.client import InputRequest
from mcpkit.dev.actions import output_check
from mcpkit.dev.asking import USER_REJECTED, Questions
from mcpkit.dev.copies import curl_line, mcpkit_line
from mcpkit.dev.events import QUEUE, EventHub
from mcpkit.dev.guard import Allowed, Guard, Refused, verdict
from mcpkit.dev.meanings import meaning
from mcpkit.dev.targets import read_target
from mcpkit.dev.views import Views, policy
from mcpkit.dev.wire import WireLog
from mcpkit.errors import ElicitationAnswerError, QuestionClosedError, RPCError, ViewError
from mcpkit.ext.apps import MIME_TYPE
from mcpkit.protocol.codec import encode

TOKEN = "s3cret-token"
PAGE = Guard(8123, TOKEN)
SANDBOX = Guard(8124, "other-token", methods=frozenset({"GET", "HEAD"}), framed=True)
OWN = {"host": ["127.0.0.1:8123"]}
ACTING = {**OWN, "origin": ["http://127.0.0.1:8123"], "content-type": ["application/json"]}


# -- the guard ------------------------------------------------------------------------------------

def test_the_page_and_its_files_pass_with_the_token_and_the_apps_own_host() -> None:
    assert PAGE.check("GET", f"/{TOKEN}/", OWN) == Allowed("")
    assert PAGE.check("GET", f"/{TOKEN}/js/main.js", OWN) == Allowed("js/main.js")
    assert PAGE.check("POST", f"/{TOKEN}/api/call", ACTING) == Allowed("api/call")


@pytest.mark.parametrize("path", ["/", "/index.html", f"/{TOKEN}", f"/{TOKEN[:-1]}/",
                                  f"/{TOKEN}x/", f"/x/{TOKEN}/", f"/{TOKEN.upper()}/"])
def test_an_address_without_the_runs_token_is_refused(path: str) -> None:
    judged = PAGE.check("GET", path, OWN)
    assert isinstance(judged, Refused) and judged.status == 403
    assert "the URL `mcpkit dev` printed" in judged.reason


@pytest.mark.parametrize("hosts", [["evil.example:8123"], ["localhost:8123"], ["127.0.0.1:9999"],
                                   ["127.0.0.1"], [], ["127.0.0.1:8123", "evil.example"]])
def test_a_request_under_another_host_name_is_refused(hosts: list[str]) -> None:
    judged = PAGE.check("GET", f"/{TOKEN}/", {"host": hosts})
    assert isinstance(judged, Refused) and judged.status == 403
    assert "DNS rebinding" in judged.reason


@pytest.mark.parametrize("origins", [["http://evil.example"], ["http://127.0.0.1:9999"],
                                     ["null"], ["http://127.0.0.1:8123", "http://evil.example"]])
def test_a_request_from_another_origin_is_refused_even_with_the_token(origins: list[str]) -> None:
    for method, headers in (("GET", OWN), ("POST", ACTING)):
        judged = PAGE.check(method, f"/{TOKEN}/api/call", {**headers, "origin": origins})
        assert isinstance(judged, Refused) and judged.status == 403, (method, origins)


def test_a_request_another_site_made_is_refused_by_its_fetch_metadata() -> None:
    for site in ("cross-site", "same-site"):
        judged = PAGE.check("GET", f"/{TOKEN}/", {**OWN, "sec-fetch-site": [site]})
        assert isinstance(judged, Refused) and judged.status == 403
    assert PAGE.check("GET", f"/{TOKEN}/", {**OWN, "sec-fetch-site": ["none"]}) == Allowed("")
    framed = SANDBOX.check("GET", "/other-token/view/x",
                           {"host": ["127.0.0.1:8124"], "sec-fetch-site": ["same-site"]})
    assert framed == Allowed("view/x")


def test_an_action_needs_its_origin_and_a_json_body() -> None:
    no_origin = PAGE.check("POST", f"/{TOKEN}/api/connect",
                           {**OWN, "content-type": ["application/json"]})
    assert isinstance(no_origin, Refused) and no_origin.status == 403
    form = PAGE.check("POST", f"/{TOKEN}/api/connect", {**ACTING, "content-type": ["text/plain"]})
    assert isinstance(form, Refused) and form.status == 400
    assert isinstance(PAGE.check("PUT", f"/{TOKEN}/", OWN), Refused)


def test_the_sandbox_origin_only_serves_and_never_acts() -> None:
    judged = SANDBOX.check("POST", "/other-token/view/x", {"host": ["127.0.0.1:8124"],
                                                           "origin": ["http://127.0.0.1:8124"]})
    assert isinstance(judged, Refused) and judged.status == 405
    stolen = SANDBOX.check("GET", f"/{TOKEN}/", {"host": ["127.0.0.1:8124"]})
    assert isinstance(stolen, Refused) and stolen.status == 403


def test_the_guard_reads_asgi_headers_as_sent() -> None:
    raw = [(b"host", b"127.0.0.1:8123"), (b"origin", b"http://127.0.0.1:8123"),
           (b"origin", b"http://127.0.0.1:8123")]
    judged = verdict(PAGE, "GET", f"/{TOKEN}/", raw)
    assert isinstance(judged, Refused) and "another origin" in judged.reason
    assert verdict(PAGE, "GET", f"/{TOKEN}/", raw[:2]) == Allowed("")


# -- command lines --------------------------------------------------------------------------------

def request(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}


@pytest.mark.parametrize(("message", "line"), [
    (request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}}),
     "mcpkit call 'my server.py' add '{\"a\":2,\"b\":3}'"),
    (request("tools/call", {"name": "ping"}), "mcpkit call 'my server.py' ping"),
    (request("resources/read", {"uri": "calendar://week"}),
     "mcpkit read 'my server.py' calendar://week"),
    (request("prompts/get", {"name": "brief", "arguments": {"topic": "it's"}}),
     "mcpkit prompt 'my server.py' brief '{\"topic\":\"it'\"'\"'s\"}'"),
    (request("server/discover", {}), "mcpkit discover 'my server.py'"),
    (request("tools/list", {}), "mcpkit tools 'my server.py'"),
    (request("subscriptions/listen", {"notifications": {"resourceSubscriptions": ["a://b"]}}),
     "mcpkit listen 'my server.py' --uri a://b"),
    (request("tasks/get", {"taskId": "-t1"}), "mcpkit task get 'my server.py' -- -t1"),
    (request("tasks/cancel", {"taskId": "t1"}), "mcpkit task cancel 'my server.py' -- t1"),
    (request("tasks/update", {"taskId": "t1", "inputResponses": {"k": {"action": "cancel"}}}),
     "mcpkit task answer 'my server.py' -- t1 '{\"k\":{\"action\":\"cancel\"}}'"),
    (request("completion/complete", {}), None),
])
def test_a_request_is_the_mcpkit_command_that_sends_it(message: dict[str, Any],
                                                      line: str | None) -> None:
    assert mcpkit_line("my server.py", message) == line


def test_a_curl_command_carries_the_body_and_headers_but_never_the_credentials() -> None:
    body = encode(request("tools/call", {"name": "say", "arguments": {"text": "it's $HOME"}}))
    line = curl_line("http://127.0.0.1:8000/mcp", {
        "host": "127.0.0.1:8000", "content-length": "90", "content-type": "application/json",
        "mcp-method": "tools/call", "authorization": "Bearer abc.def", "dpop": "eyJ.x.y"}, body)
    assert "abc.def" not in line and "eyJ.x.y" not in line
    words = shlex.split(line)
    assert words[:5] == ["curl", "-sN", "-X", "POST", "http://127.0.0.1:8000/mcp"]
    headers = [words[i + 1] for i, w in enumerate(words) if w == "-H"]
    assert headers == ["content-type: application/json", "mcp-method: tools/call",
                       "authorization: $MCP_AUTHORIZATION", "dpop: $MCP_DPOP"]
    assert words[words.index("--data-raw") + 1].encode() == body
    assert '"authorization: $MCP_AUTHORIZATION"' in line  # for the shell to fill in


# -- error meanings ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("code", "start"), [
    (-32601, "-32601 Method not found: "), (-32602, "-32602 Invalid params: "),
    (-32020, "-32020 Header mismatch: "), (-32002, "-32002 Resource not found (2025-11-25): "),
    (-32050, "-32050: a code of the server-error range"),
    (-32700, "-32700 Parse error: "), (-32200, "-32200: reserved by JSON-RPC"),
    (4, "4: an application error code"), ("-32601", "an error without an integer code"),
])
def test_an_error_code_is_explained(code: object, start: str) -> None:
    assert meaning(code).startswith(start)


# -- views ------------------------------------------------------------------------------------------

def read_of(uri: str, **content: Any) -> dict[str, Any]:
    return {"contents": [{"uri": uri, "mimeType": MIME_TYPE, **content}]}


def test_a_view_without_a_policy_gets_the_restrictive_default() -> None:
    view = Views().add("ui://a/b", read_of("ui://a/b", text="<!DOCTYPE html><p>hi"))
    assert view.html == "<!DOCTYPE html><p>hi" and view.ui == {} and view.allow == ""
    assert view.policy == (
        "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' "
        "'unsafe-inline'; img-src 'self' data:; font-src 'self'; media-src 'self' data:; "
        "connect-src 'none'; frame-src 'none'; object-src 'none'; base-uri 'self'; "
        "form-action 'none'")


def test_a_view_gets_exactly_the_origins_it_declares() -> None:
    meta = {"ui": {"csp": {"connectDomains": ["https://api.example.com"],
                           "resourceDomains": ["https://cdn.example.com"],
                           "frameDomains": ["https://player.example.com"],
                           "baseUriDomains": ["https://base.example.com"]},
                   "permissions": {"camera": {}, "clipboardWrite": {}}, "prefersBorder": True}}
    blob = base64.b64encode(b"<!DOCTYPE html>").decode()
    view = Views().add("ui://a/b", read_of("ui://a/b", blob=blob, _meta=meta))
    assert view.html == "<!DOCTYPE html>"
    assert "connect-src https://api.example.com;" in view.policy
    assert "script-src 'self' 'unsafe-inline' https://cdn.example.com;" in view.policy
    assert "frame-src https://player.example.com;" in view.policy
    assert "base-uri https://base.example.com;" in view.policy
    assert view.allow == "camera; clipboard-write"
    assert view.ui["prefersBorder"] is True
    assert policy({}) == Views().add("ui://x", read_of("ui://x", text="")).policy


@pytest.mark.parametrize("csp", [{"connectDomains": ["*"]}, {"resourceDomains": ["'unsafe-eval'"]},
                                 {"connectDomains": ["https://a.example.com; script-src *"]},
                                 {"frameDomains": ["https://a.example.com/path"]},
                                 {"connectDomains": "https://a.example.com"}])
def test_a_view_that_asks_for_more_than_origins_is_not_shown(csp: dict[str, Any]) -> None:
    with pytest.raises(ViewError, match="not shown rather than shown under a looser policy"):
        Views().add("ui://a/b", read_of("ui://a/b", text="x", _meta={"ui": {"csp": csp}}))


@pytest.mark.parametrize(("read", "problem"), [
    ({"contents": []}, "returned no contents"),
    ({"contents": [{"uri": "ui://a/b", "mimeType": "text/html", "text": "x"}]}, "mime type"),
    (read_of("ui://a/b", blob="%%%"), "neither text nor a base64 blob"),
])
def test_a_view_that_is_no_view_is_refused_with_the_reason(read: dict[str, Any],
                                                           problem: str) -> None:
    with pytest.raises(ViewError, match=problem):
        Views().add("ui://a/b", read)


def test_only_the_latest_views_are_kept() -> None:
    views = Views()
    first = views.add("ui://a/0", read_of("ui://a/0", text="x"))
    for n in range(1, 80):
        views.add(f"ui://a/{n}", read_of(f"ui://a/{n}", text="x"))
    assert views.get(first.ident) is None


# -- the event stream ------------------------------------------------------------------------------

async def test_a_late_page_replays_the_state_and_history_it_missed_in_order() -> None:
    hub = EventHub(history=3)
    hub.publish("connection", {"state": "connecting"}, key="connection")
    for n in range(5):
        hub.publish("wire", {"n": n})
    hub.publish("connection", {"state": "connected"}, key="connection")
    hub.publish("question", {"id": "q1"}, key="question:q1")
    hub.forget("question:q1")
    kept = hub.kept()
    assert [(e["type"], e["data"]) for e in kept] == [
        ("wire", {"n": 2}), ("wire", {"n": 3}), ("wire", {"n": 4}),
        ("connection", {"state": "connected"})]
    assert [e["seq"] for e in hub.kept(after=kept[1]["seq"])] == [e["seq"] for e in kept[2:]]
    async with hub.subscribed(after=kept[2]["seq"]) as queue:
        hub.publish("wire", {"n": 5})
        seen = [await queue.get(), await queue.get()]
    assert [e["data"] for e in seen] == [{"state": "connected"}, {"n": 5}]


async def test_a_page_that_stops_reading_is_dropped_instead_of_holding_memory() -> None:
    hub = EventHub()
    async with hub.subscribed() as queue:
        for n in range(QUEUE + 1):
            hub.publish("wire", {"n": n})
        assert queue.qsize() == QUEUE + 1
        drained = [queue.get_nowait() for _ in range(QUEUE + 1)]
        assert drained[-1] is None
        hub.publish("wire", {"n": "after"})
        assert queue.empty()


# -- questions ------------------------------------------------------------------------------------

FORM = {"type": "object", "properties": {"when": {"type": "string", "format": "date-time"},
                                         "size": {"type": "integer", "default": 2}},
        "required": ["when"]}


async def asked(questions: Questions, kind: str, request: InputRequest) -> tuple[Any, str]:
    """The handler of `kind` waiting on `request`, and the id of the question it shows."""
    handler = {"form": questions.elicit, "url": questions.elicit_url,
               "sampling": questions.sample}[kind]
    waiting = asyncio.ensure_future(handler(request))
    await asyncio.sleep(0)  # the handler runs up to its wait for the page
    shown = [e["data"] for e in questions.hub.kept() if e["type"] == "question"]
    return waiting, shown[-1]["id"]


async def test_a_form_answer_that_does_not_fit_is_refused_and_the_question_stays() -> None:
    questions = Questions(EventHub())
    request = InputRequest("elicitation/create", {"message": "When?", "requestedSchema": FORM},
                           origin="tools/call 'book'", key="when")
    waiting, ident = await asked(questions, "form", request)
    shown = questions.hub.state(f"question:{ident}")
    assert shown["schema"] == FORM and shown["origin"] == "tools/call 'book'"
    with pytest.raises(ElicitationAnswerError) as refused:
        questions.answer(ident, {"action": "accept", "content": {"when": "soon"}})
    assert "when" in refused.value.problems
    with pytest.raises(ElicitationAnswerError, match="action"):
        questions.answer(ident, {"action": "maybe"})
    questions.answer(ident, {"action": "accept", "content": {"when": "2031-03-04T09:30:00Z"}})
    assert await waiting == {"action": "accept",
                             "content": {"when": "2031-03-04T09:30:00Z", "size": 2}}
    assert questions.hub.state(f"question:{ident}") is None
    with pytest.raises(QuestionClosedError):
        questions.answer(ident, {"action": "cancel"})


async def test_a_declined_sample_is_an_error_for_the_server() -> None:
    questions = Questions(EventHub())
    request = InputRequest("sampling/createMessage", {"messages": [], "maxTokens": 5})
    waiting, ident = await asked(questions, "sampling", request)
    with pytest.raises(ElicitationAnswerError, match="incomplete"):
        questions.answer(ident, {"role": "assistant", "content": {"type": "text", "text": "x"}})
    questions.answer(ident, {"action": "decline"})
    with pytest.raises(RPCError) as declined:
        await waiting
    assert declined.value.code == USER_REJECTED


async def test_open_questions_are_cancelled_when_the_connection_goes() -> None:
    questions = Questions(EventHub())
    request = InputRequest("elicitation/create", {"mode": "url", "message": "Open",
                                                  "url": "https://example.com", "elicitationId": "e"})
    waiting, _ = await asked(questions, "url", request)
    questions.withdraw()
    assert await waiting == {"action": "cancel"}


def test_roots_are_file_uris_and_answered_without_asking() -> None:
    questions = Questions(EventHub())
    assert questions.set_roots([{"uri": "file:///w", "name": "w"}, {"uri": "file:///x"}]) == [
        {"uri": "file:///w", "name": "w"}, {"uri": "file:///x"}]
    assert questions.list_roots(InputRequest("roots/list", {}))["roots"][1] == {"uri": "file:///x"}
    with pytest.raises(ValueError, match="file://"):
        questions.set_roots([{"uri": "https://example.com"}])


# -- structured content -----------------------------------------------------------------------------

TOOL = {"name": "add", "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object", "properties": {"sum": {"type": "integer"}},
                         "required": ["sum"]}}


@pytest.mark.parametrize(("tool", "result", "status"), [
    (TOOL, {"content": [], "structuredContent": {"sum": 5}}, "valid"),
    (TOOL, {"content": [], "structuredContent": {"sum": "5"}}, "invalid"),
    (TOOL, {"content": []}, "invalid"),
    (TOOL, {"content": [], "isError": True}, "skipped"),
    ({"name": "echo", "inputSchema": {}}, {"content": []}, "none"),
    (None, {"content": []}, "unknown"),
])
def test_structured_content_is_checked_against_the_output_schema(
        tool: dict[str, Any] | None, result: dict[str, Any], status: str) -> None:
    checked = output_check(tool, result)
    assert checked["status"] == status
    if status == "invalid":
        assert "structuredContent" in checked["text"]


# -- targets ------------------------------------------------------------------------------------------

def test_a_target_is_what_the_client_commands_take(tmp_path: Any) -> None:
    server = tmp_path / "server.py"
    server.write_text("from mcpkit import Server\nserver = Server('x')\n")
    assert read_target(str(server)).kind == "stdio"
    assert read_target(str(server), http=True, reload=True).kind == "http"
    assert read_target("http://127.0.0.1:1/mcp").url == "http://127.0.0.1:1/mcp"
    assert read_target("npx -y some-server").file is None
    for spec, options, problem in [(str(tmp_path / "missing.py"), {}, "file not found"),
                                   ("http://127.0.0.1:1/mcp", {"reload": True}, "already served"),
                                   ("npx -y x", {"http": True}, "apply to a server file"),
                                   ("  ", {}, "TARGET is empty")]:
        with pytest.raises(UsageError, match=problem):
            read_target(spec, **options)


# -- the wire log ---------------------------------------------------------------------------------------

def test_the_wire_log_times_answers_explains_errors_and_adds_what_http_said() -> None:
    hub = EventHub()
    now = iter([1.0, 1.25, 2.0, 2.5, 3.0, 3.1])
    wire = WireLog(hub, "http://127.0.0.1:9/mcp", clock=lambda: next(now))
    discover = {"jsonrpc": "2.0", "id": 1, "method": "server/discover",
                "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}
    wire.tap("send", discover)
    sent = httpx.Request("POST", "http://127.0.0.1:9/mcp", content=encode(discover), headers={
        "mcp-method": "server/discover", "authorization": "Bearer secret"})
    asyncio.run(wire.hooks()["request"][0](sent))
    asyncio.run(wire.hooks()["response"][0](httpx.Response(
        200, headers={"content-type": "application/json"}, request=sent)))
    wire.tap("receive", {"jsonrpc": "2.0", "id": 1, "result": {"supportedVersions": []}})
    wire.tap("send", {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "add", "arguments": {"a": 1}}})
    wire.tap("receive", {"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "no"}})
    wire.tap("receive", {"jsonrpc": "2.0", "id": 5, "method": "roots/list"})
    wire.tap("send", {"jsonrpc": "2.0", "id": 5, "result": {"roots": []}})
    entries = [e["data"] for e in hub.kept() if e["type"] == "wire"]
    updates = [e["data"] for e in hub.kept() if e["type"] == "wire.http"]
    assert [(e["dir"], e["kind"], e["method"]) for e in entries] == [
        ("out", "request", "server/discover"), ("in", "response", "server/discover"),
        ("out", "request", "tools/call"), ("in", "error", "tools/call"),
        ("in", "request", "roots/list"), ("out", "response", "roots/list")]
    assert entries[1]["took"] == 250.0 and entries[3]["took"] == 500.0
    assert entries[1]["http"]["status"] == 200
    assert entries[3]["meaning"].startswith("-32602 Invalid params")
    assert entries[2]["copy"] == "mcpkit call http://127.0.0.1:9/mcp add '{\"a\":1}'"
    assert updates[-1]["http"]["headers"]["authorization"] == "(hidden)"
    assert "secret" not in str(hub.kept())
    assert "$MCP_AUTHORIZATION" in updates[0]["http"]["curl"]
    assert wire.openings == [{"sent": discover, "status": 200, "response": {
        "jsonrpc": "2.0", "id": 1, "result": {"supportedVersions": []}}}]


def test_a_request_that_is_no_message_shows_its_address_and_status_only() -> None:
    hub = EventHub()
    wire = WireLog(hub, "x")
    token = httpx.Request("POST", "https://as.example.com/token?x=1",
                          content=b"grant_type=refresh_token&refresh_token=SECRET")
    asyncio.run(wire.hooks()["request"][0](token))
    asyncio.run(wire.hooks()["response"][0](httpx.Response(400, request=token)))
    shown = [e["data"] for e in hub.kept()]
    assert shown[0]["kind"] == "http" and shown[0]["message"] is None
    assert shown[0]["http"]["url"] == "https://as.example.com/token"
    assert shown[-1]["http"]["status"] == 400
    assert "SECRET" not in str(shown)


def test_a_message_too_big_to_show_is_cut_with_its_size() -> None:
    hub = EventHub()
    wire = WireLog(hub, "x")
    wire.tap("receive", {"jsonrpc": "2.0", "method": "notifications/message",
                         "params": {"data": "x" * 300_000}})
    shown = hub.kept()[0]["data"]["message"]
    assert shown["truncated"] is True and shown["bytes"] > 300_000
    assert len(shown["text"]) == 256 * 1024


def test_an_event_orjson_cannot_write_still_reaches_the_page() -> None:
    from mcpkit.dev.web import _encoded

    big = 2**70  # a server may send an integer past 64 bits; the stream must carry it
    assert json.loads(_encoded({"seq": 1, "data": {"n": big}})) == {"seq": 1, "data": {"n": big}}


async def test_an_actions_own_fault_is_answered_with_its_reason_not_a_bare_500(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    from mcpkit.dev.actions import ACTIONS, Actions
    from mcpkit.dev.session import Session

    async def faulty(actions: Actions, params: Any) -> dict[str, Any]:
        raise KeyError("lost")

    monkeypatch.setitem(ACTIONS, "faulty", faulty)
    actions = Actions(Session(EventHub(), read_target("http://127.0.0.1:1/mcp")))
    status, answer = await actions.run("faulty", {})
    assert status == 500 and answer["ok"] is False
    assert answer["error"].startswith("the inspector failed (KeyError: 'lost')")
    assert "the faulty action failed" in caplog.text
    assert await actions.run("nothing", {}) == (404, {
        "ok": False, "error": "no action 'nothing'; the page and this mcpkit disagree (reload "
                              "the page)"})
    status, answer = await actions.run("call", {"name": "add"})
    assert status == 409 and answer["error"].startswith("not connected")
