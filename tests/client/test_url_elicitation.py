"""Legacy -32042 (URL elicitation required) and `notifications/elicitation/complete`, against a
real 2025-11-25 server process that serves the page it asks the user to visit."""

from __future__ import annotations

import asyncio
import sys
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from helpers import HELPERS
from helpers.client.schema_tap import SchemaTap
from helpers.wire import LEGACY, check

from mcpkit.client import Client, ClientOptions, InputRequest
from mcpkit.client.legacy.completions import Completions
from mcpkit.client.legacy.url_required import required_error
from mcpkit.client.url_elicitation import check_url, real_host
from mcpkit.errors import ProtocolViolation, RPCError, URLElicitationRequiredError
from mcpkit.transports.stdio.client import StdioServer

SERVER = str(HELPERS / "client" / "url_elicit_server.py")
MakeClient = Callable[..., Client]
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))
LOOKALIKE = "\u0440\u0430\u0443\u0440\u0430l.com"  # Cyrillic letters that imitate paypal.com
FULL_WIDTH = "\uff47\uff4f\uff4f\uff47\uff4c\uff45.com"  # google.com in full-width letters


class LegacyTap(SchemaTap):
    """Also checks the legacy messages wire.py has no table for: the -32042 error, the
    completion notification and a URL-mode elicitation/create (when the server is honest)."""

    def __init__(self, honest: bool) -> None:
        super().__init__(check_server=False)
        self.honest = honest

    def __call__(self, direction: str, message: dict[str, Any]) -> None:
        super().__call__(direction, message)
        if direction != "receive" or not self.honest:
            return
        try:
            if (message.get("error") or {}).get("code") == -32042:
                check(LEGACY, "URLElicitationRequiredError", message)
            elif message.get("method") == "notifications/elicitation/complete":
                check(LEGACY, "ElicitationCompleteNotification", message)
            elif message.get("method") == "elicitation/create":
                check(LEGACY, "ElicitRequest", message)
        except AssertionError as exc:
            self.problems.append(f"server: {exc}")


@pytest.fixture
def url_client(taps: list[SchemaTap], clients: list[Client]) -> Iterator[MakeClient]:
    def make(mode: str, *, wait: float = 5.0, **kwargs: Any) -> Client:
        tap = LegacyTap(honest=mode in ("notify", "silent", "never"))
        taps.append(tap)
        connector = StdioServer([sys.executable, SERVER, mode], stderr="capture", tap=tap)
        options = ClientOptions(probe_timeout=5, url_elicitation_wait=wait, timeout=10)
        client = Client(connector, options=options, **kwargs)
        client.tap = tap  # type: ignore[attr-defined]
        clients.append(client)
        return client

    yield make


def calls(client: Client) -> list[dict[str, Any]]:
    return client.tap.requests("tools/call")  # type: ignore[attr-defined, no-any-return]


def visiting(seen: list[InputRequest]) -> Callable[[InputRequest], Any]:
    """A URL handler that, with the user's consent, "opens" the page: the request a browser
    would make."""

    async def elicit_url(request: InputRequest) -> dict[str, Any]:
        seen.append(request)
        url = request.url
        assert url is not None
        await asyncio.to_thread(lambda: _DIRECT.open(url, timeout=5).read())
        return {"action": "accept"}

    return elicit_url


async def test_the_user_visits_the_page_and_the_call_is_retried_once_after_completion(
    url_client: MakeClient,
) -> None:
    seen: list[InputRequest] = []
    completed: list[str] = []
    reported = asyncio.Event()

    def on_complete(elicitation_id: str) -> None:
        completed.append(elicitation_id)
        reported.set()

    # A long wait: the retry goes as soon as the server reports completion, not after it.
    client = url_client("notify", wait=30, elicit_url=visiting(seen),
                        on_elicitation_complete=on_complete)
    result = await asyncio.wait_for(client.call_tool("connect"), 20)
    assert result["content"] == [{"type": "text", "text": "connected"}]
    assert client.era == "legacy"
    [request] = seen
    assert request.mode == "url" and request.params["elicitationId"] == "el-1"
    assert request.url is not None and request.url.startswith("http://127.0.0.1:")
    assert request.message == "Connect your Example account."
    assert request.origin == "tools/call 'connect'" and request.key is None
    assert request.server == {"name": "url-elicit", "version": "1"}
    await asyncio.wait_for(reported.wait(), 5)
    assert completed == ["el-1"], "unknown and repeated completions are ignored"
    sent = calls(client)
    assert len(sent) == 2 and sent[0]["params"] == sent[1]["params"]
    assert sent[0]["id"] != sent[1]["id"]
    init = client.tap.requests("initialize")[0]  # type: ignore[attr-defined]
    assert init["params"]["capabilities"] == {"elicitation": {"url": {}}}


async def test_without_a_url_handler_the_error_names_the_host_and_the_fix(
    url_client: MakeClient,
) -> None:
    client = url_client("notify")
    with pytest.raises(URLElicitationRequiredError) as caught:
        await client.call_tool("connect")
    error = caught.value
    assert error.code == -32042
    assert "tools/call 'connect'" in str(error) and "127.0.0.1" in str(error)
    assert "elicit_url handler" in str(error)
    [entry] = error.elicitations
    assert entry["elicitationId"] == "el-1" and entry["mode"] == "url"
    assert error.urls == [entry["url"]]
    assert error.server_message == "This request requires more information."
    assert len(calls(client)) == 1, "nothing is retried without the user"


async def test_any_legacy_request_raises_it_not_only_tool_calls(url_client: MakeClient) -> None:
    client = url_client("notify")
    with pytest.raises(URLElicitationRequiredError, match="tools/call"):
        await client.request("tools/call", {"name": "connect"})  # the one request path


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_a_declined_page_is_not_opened_and_the_call_is_not_retried(
    url_client: MakeClient, action: str
) -> None:
    asked: list[InputRequest] = []

    def refuse(request: InputRequest) -> dict[str, Any]:
        asked.append(request)
        return {"action": action}

    client = url_client("notify", elicit_url=refuse)
    with pytest.raises(URLElicitationRequiredError) as caught:
        await client.call_tool("connect")
    done = {"decline": "declined", "cancel": "cancelled"}[action]
    assert f"the user {done} opening http://127.0.0.1:" in str(caught.value)
    assert len(asked) == 1 and len(calls(client)) == 1


async def test_a_server_that_never_reports_is_retried_after_the_bounded_wait(
    url_client: MakeClient,
) -> None:
    completed: list[str] = []
    client = url_client("silent", wait=0.3, elicit_url=visiting([]),
                        on_elicitation_complete=completed.append)
    result = await asyncio.wait_for(client.call_tool("connect"), 20)
    assert result["content"][0]["text"] == "connected"
    assert completed == [] and len(calls(client)) == 2


async def test_still_required_after_the_retry_raises_and_stops(url_client: MakeClient) -> None:
    client = url_client("never", wait=0.2, elicit_url=visiting([]))
    with pytest.raises(URLElicitationRequiredError, match="retried once") as caught:
        await asyncio.wait_for(client.call_tool("connect"), 20)
    assert caught.value.elicitations[0]["elicitationId"] == "el-2"
    assert len(calls(client)) == 2


@pytest.mark.parametrize(("mode", "reason"), [
    ("bad-scheme", "scheme javascript: is refused"),
    ("userinfo", "user info before its host '127.0.0.1'"),
    ("malformed", "without a list of elicitations"),
    ("too-many", "lists 17 URL elicitations"),
])
async def test_pages_a_client_must_not_offer_are_refused_before_the_handler(
    url_client: MakeClient, mode: str, reason: str
) -> None:
    asked: list[InputRequest] = []
    client = url_client(mode, elicit_url=visiting(asked))
    with pytest.raises(ProtocolViolation, match=reason):
        await client.call_tool("connect")
    assert asked == [] and len(calls(client)) == 1


async def test_in_the_modern_era_32042_is_an_ordinary_error(url_client: MakeClient) -> None:
    asked: list[InputRequest] = []
    client = url_client("modern", elicit_url=visiting(asked))
    with pytest.raises(RPCError) as caught:
        await client.call_tool("connect")
    assert client.era == "modern"
    assert caught.value.code == -32042
    assert not isinstance(caught.value, URLElicitationRequiredError)
    assert asked == [] and len(calls(client)) == 1


async def test_a_legacy_url_request_is_tracked_until_the_server_reports_it(
    url_client: MakeClient,
) -> None:
    completed: list[str] = []
    reported = asyncio.Event()

    async def on_complete(elicitation_id: str) -> None:
        completed.append(elicitation_id)
        reported.set()

    client = url_client("notify", elicit_url=visiting([]), on_elicitation_complete=on_complete)
    result = await client.call_tool("ask_url")
    assert result["content"][0]["text"] == '{"action": "accept"}'
    await asyncio.wait_for(reported.wait(), 5)
    assert completed == ["el-1"]


async def test_completion_reports_for_unknown_or_completed_ids_are_ignored() -> None:
    completed: list[str] = []
    completions = Completions(completed.append)
    await completions.receive({"params": {"elicitationId": "unknown"}})
    await completions.receive({"params": {"elicitationId": 7}})
    await completions.receive({"params": None})
    assert completed == []
    event = completions.expect("a")
    assert completions.pending == ["a"]
    await completions.receive({"params": {"elicitationId": "a"}})
    await completions.receive({"params": {"elicitationId": "a"}})
    assert event.is_set() and completed == ["a"] and completions.pending == []
    completions.expect("b")
    completions.forget("b")
    await completions.receive({"params": {"elicitationId": "b"}})
    assert completed == ["a"], "a declined elicitation is unknown again"


async def test_a_report_that_beats_its_error_still_counts() -> None:
    completed: list[str] = []
    reported = asyncio.Event()

    def on_complete(elicitation_id: str) -> None:
        completed.append(elicitation_id)
        reported.set()

    completions = Completions(on_complete)
    await completions.receive({"params": {"elicitationId": "early"}})
    event = completions.expect("early")
    assert event.is_set() and completions.pending == []
    await asyncio.wait_for(reported.wait(), 5)
    assert completed == ["early"]


@pytest.mark.parametrize(("url", "problem"), [
    ("https://example.com/connect?x=1", None),
    ("http://127.0.0.1:8080/", None),
    ("file:///etc/passwd", "scheme file: is refused"),
    ("data:text/html,<script>", "scheme data: is refused"),
    ("//example.com/x", "scheme (none) is refused"),
    ("https://", "has no host"),
    ("https://exa mple.com/", "spaces or control characters"),
    ("https://example.com/\x1b[2J", "spaces or control characters"),
    ("https://example.com/\u202egnp.exe", "spaces or control characters"),
    ("https://bücher.example/", None),
    ("https://example.com:99999/", "malformed"),
    ("https://" + "a" * 9000 + ".com", "longer than 8192"),
    (42, "not a string"),
    ("http://[::1]:8080/x", None),
    ("https://example.com./", None),
    ("https://xn--bcher-kva.example/", None),
    ("https://evil.example\\.bank.example/", "cannot be in a host name"),
    ("https://bank.example%2eevil.example/", "cannot be in a host name"),
    ("https://ex%41mple.com/", "cannot be in a host name"),
    ("http://0x7f000001/", "reads as an IPv4 address"),
    ("http://2130706433/", "reads as an IPv4 address"),
    ("http://127.1/", "reads as an IPv4 address"),
    ("http://127.0.0.010/", "reads as an IPv4 address"),
    ("http://[fe80::1%25eth0]/", "zone"),
    ("https://faß.example/", "spell differently"),
    ("https://a..b.example/", "not a valid host name"),
    ("https://" + "a" * 64 + ".example/", "not a valid host name"),
    ("https://x\U0001f984.example/", "not a valid host name"),  # newer than IDNA's Unicode
], ids=lambda v: repr(v)[:40])
def test_check_url_offers_only_plain_http_pages(url: Any, problem: str | None) -> None:
    found = check_url(url)
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found


@pytest.mark.parametrize(("entry", "reason"), [
    ({"mode": "form", "elicitationId": "a", "url": "https://x.example/", "message": "m"},
     'mode must be "url"'),
    ({"mode": "url", "url": "https://x.example/", "message": "m"}, "elicitationId must be"),
    ({"mode": "url", "elicitationId": "", "url": "https://x.example/", "message": "m"},
     "non-empty printable"),
    ({"mode": "url", "elicitationId": "a\nb", "url": "https://x.example/", "message": "m"},
     "non-empty printable"),
    ({"mode": "url", "elicitationId": "a", "url": "https://x.example/"}, "message must be"),
    ({"mode": "url", "elicitationId": "a", "url": "https://x.example/", "message": "m" * 5000},
     "longer than 4096"),
    ("not an object", "is not an object"),
])
def test_each_listed_elicitation_is_checked(entry: Any, reason: str) -> None:
    error = RPCError("needs a page", {"elicitations": [entry]})
    with pytest.raises(ProtocolViolation, match=reason):
        required_error(error, "tools/call 'x'")


def test_repeated_ids_are_refused() -> None:
    entry = {"mode": "url", "elicitationId": "a", "url": "https://x.example/", "message": "m"}
    with pytest.raises(ProtocolViolation, match="repeats an elicitationId"):
        required_error(RPCError("m", {"elicitations": [entry, entry]}), "tools/call 'x'")


def test_the_error_round_trips_as_a_legacy_wire_error() -> None:
    entry = {"mode": "url", "elicitationId": "a", "url": "https://x.example/p", "message": "m"}
    error = required_error(RPCError("m", {"elicitations": [entry], "extra": 1}), "tools/call")
    message = {"jsonrpc": "2.0", "id": 1, "error": error.to_error()}
    check(LEGACY, "URLElicitationRequiredError", message)
    assert error.to_error()["data"] == {"elicitations": [entry]}


def test_the_wait_option_is_bounded() -> None:
    for bad in (-1, float("nan"), float("inf"), True, "5"):
        with pytest.raises(ValueError, match="url_elicitation_wait"):
            ClientOptions(url_elicitation_wait=bad)  # type: ignore[arg-type]
    assert ClientOptions(url_elicitation_wait=0).url_elicitation_wait == 0


@pytest.mark.parametrize(("url", "host"), [
    ("https://Example.COM:8443/x", "example.com"),
    ("https://bücher.example/", "xn--bcher-kva.example"),
    ("https://" + LOOKALIKE + "/login", "xn--l-7sba6dbr.com"),  # imitates paypal.com
    ("https://" + FULL_WIDTH + "/", "google.com"),  # full-width letters a browser folds
    ("https://bank.example\u3002evil.example/", "bank.example.evil.example"),  # an ideographic dot
    ("http://[::FFFF:127.0.0.1]/", "[::ffff:7f00:1]"),
    ("http://127.0.0.1:9/", "127.0.0.1"),
])
def test_the_real_host_is_the_one_a_browser_reaches(url: str, host: str) -> None:
    assert check_url(url) is None
    assert real_host(url) == host


def test_the_error_names_each_real_host_once() -> None:
    entries = [{"mode": "url", "elicitationId": str(i), "url": url, "message": "m"}
               for i, url in enumerate([f"https://{LOOKALIKE}/a", "https://xn--l-7sba6dbr.com/b",
                                        "https://ok.example/"])]
    error = required_error(RPCError("m", {"elicitations": entries}), "tools/call 'x'")
    assert "a page on xn--l-7sba6dbr.com, ok.example first" in str(error)
