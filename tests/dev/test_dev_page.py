"""The inspector's page, part by part, on a server with one of everything (showcase_server.py):
a call form generated from a schema (nested objects, a list, an enum, a date, defaults,
required marks, problems shown as they are typed, raw JSON), every kind of content block, an
MCP App view under the policy it declared and refused a call it may not make, the questions a
server asks (a page to open, a sample, roots), templates and prompts completed as they are
typed; and the wire pane filtered, each request copied as a command that works when run.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import sys
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from helpers.client.schema_tap import ROOT
from helpers.devtools import Browser, launched
from inspected import Tab, foreign, inspecting, requested

from mcpkit.probe.budget import Counter, compact

pytestmark = pytest.mark.asyncio(loop_scope="module")

SHOWCASE = str(Path(__file__).with_name("showcase_server.py"))
QUICKSTART = str(ROOT / "examples" / "quickstart" / "server.py")
CALENDAR = str(ROOT / "examples" / "calendar" / "server.py")
LONG_JOB = str(ROOT / "examples" / "long_job" / "server.py")
ORIGINS: set[str] = set()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Browser]:
    async with launched(tmp_path_factory.mktemp("chromium")) as opened:
        yield opened


def field(path: str, control: str = "input") -> str:
    return f"form.call-form [data-path='{path}'] > {control}"


async def problem_at(tab: Tab, path: str) -> str:
    return str(await tab.until(
        f"() => document.querySelector(\"form.call-form [data-path='{path}'] > .problem\")"
        ".textContent", f"the problem at {path}"))


async def result_of(tab: Tab, tool: str, count: int = 1) -> dict[str, Any]:
    """The structuredContent of the `count`-th finished call of `tool`."""
    return dict(await tab.until(f"""() => {{
      const cards = [...document.querySelectorAll('.call-card[data-tool={tool}][data-done]')];
      if (cards.length < {count}) return null;
      const pre = cards[0].querySelector('pre.structured');
      return pre ? JSON.parse(pre.textContent) : null;
    }}""", f"call {count} of {tool}"))


async def test_a_tool_form_follows_its_schema_and_its_raw_json(browser: Browser) -> None:
    async with inspecting(browser, SHOWCASE, origins=ORIGINS) as tab:
        await tab.connected("modern")
        await tab.until("() => document.querySelector('.budget-tools')", "the token counts")
        listed = await tab.js("""(() => {
          const item = document.querySelector('li.tool[data-name=plan]');
          return { badges: [...item.querySelectorAll('.badge')].map(b => b.textContent),
                   icon: item.querySelector('img.icon') && item.querySelector('img.icon').src };
        })()""")
        assert {"read-only", "idempotent"} <= set(listed["badges"])
        # The probe's counter, over the tool as it was listed: the page says the same number.
        plan = next(t for t in tab.running.hub.state("catalogue")["tools"] if t["name"] == "plan")
        assert f"{Counter().one(compact(plan))} tokens" in listed["badges"]
        assert listed["icon"].startswith("data:image/png;base64,")
        far = await tab.js("document.querySelector('li.tool[data-name=media] .icon-far').title")
        assert "not loaded" in far and "https://icons.example.com/media.png" in far

        await tab.choose_tool("plan")
        form = await tab.js("""(() => {
          const f = document.querySelector('form.call-form');
          const at = (p) => f.querySelector(`[data-path='${p}']`);
          return { required: ['/traveller', '/start', '/stops', '/mode', '/budget'].map(
                     p => Boolean(at(p).querySelector('.required'))),
                   start: at('/start').querySelector('input').type,
                   mode: [...at('/mode').querySelectorAll('option')].map(o => o.textContent),
                   chosen: at('/mode').querySelector('select').selectedOptions[0].textContent,
                   stops: at('/stops').tagName };
        })()""")
        assert form["required"] == [True, True, True, False, False]
        assert form["start"] == "date"
        assert form["mode"] == ["(leave out)", "train", "plane"] and form["chosen"] == "train"
        assert form["stops"] == "FIELDSET"

        await tab.fill(field("/traveller"), "Ada")
        await tab.fill(field("/traveller"), "")
        assert await problem_at(tab, "/traveller") == "is required"
        await tab.fill(field("/traveller"), "Ada")
        await tab.fill(field("/start"), "2031-03-04")
        for n, (city, nights) in enumerate([("Lyon", "2"), ("Turin", "1.5")]):
            await tab.click("form.call-form [data-path='/stops'] > button.add")
            await tab.fill(field(f"/stops/{n}/city"), city)
            await tab.fill(field(f"/stops/{n}/nights"), nights)
        assert await problem_at(tab, "/stops/1/nights") == "must be integer, not number"
        assert await tab.js("document.querySelector('.schema-form').dataset.valid") == "false"
        await tab.fill(field("/stops/1/nights"), "1")
        await tab.click("form.call-form button.call")
        assert await result_of(tab, "plan") == {
            "traveller": "Ada", "start": "2031-03-04", "mode": "train", "budget": None,
            "stops": [{"city": "Lyon", "nights": 2}, {"city": "Turin", "nights": 1}]}

        await tab.click("form.call-form button.mode")
        raw = json.loads(await tab.js("document.querySelector('textarea.raw').value"))
        assert raw == {"traveller": "Ada", "start": "2031-03-04", "mode": "train",
                       "stops": [{"city": "Lyon", "nights": 2}, {"city": "Turin", "nights": 1}]}
        await tab.fill("textarea.raw", json.dumps({**raw, "mode": "boat"}))
        listed_problems = await tab.until("() => document.querySelector('.schema-form .problems')"
                                          ".textContent", "the raw JSON's problem")
        assert '/mode: must be one of "train", "plane"' in listed_problems
        await tab.fill("textarea.raw", json.dumps({**raw, "mode": "plane", "stops": []}))
        await tab.click("form.call-form button.call")
        assert (await result_of(tab, "plan", 2))["mode"] == "plane"
        await tab.click("form.call-form button.mode")  # back to the form, filled from the JSON
        assert await tab.js(f"document.querySelector(\"{field('/mode', 'select')}\")"
                            ".selectedOptions[0].textContent") == "plane"


async def test_every_kind_of_content_and_a_view_under_its_own_policy(browser: Browser) -> None:
    async with inspecting(browser, SHOWCASE, origins=ORIGINS) as tab:
        await tab.connected("modern")
        await tab.choose_tool("media")
        await tab.click("form.call-form button.call")
        shown = await tab.until("""() => {
          const card = document.querySelector('.call-card[data-tool=media][data-done]');
          if (!card) return null;
          const one = (s) => card.querySelector(s);
          return { kinds: [...card.querySelectorAll('.blocks > .block')].map(b => b.className),
                   image: one('.block-image img').src, audio: one('.block-audio audio').src,
                   embedded: one('.block-resource pre').textContent,
                   link: one('.block-resource_link code').textContent };
        }""", "the media result")
        assert shown["kinds"] == ["block block-text", "block block-image", "block block-audio",
                                  "block block-resource", "block block-resource_link"]
        assert shown["image"].startswith("data:image/png;base64,")
        assert shown["audio"].startswith("data:audio/wav;base64,")
        assert shown["embedded"] == "hello, embedded" and shown["link"] == "notes://tides"

        await tab.until("() => document.querySelector('.app[data-state=shown]')", "the view")
        view = await tab.nested_frame(tab.running.sandbox)
        said = await tab.until("() => document.getElementById('refused').textContent", "the "
                               "view's refused call", frame=view)
        assert "visibility lacks 'app'" in said
        got = await view.evaluate("document.getElementById('got').textContent")
        assert got == "text,image,audio,resource,resource_link"
        frames = [e["params"]["response"] for e in browser.events
                  if e.get("method") == "Network.responseReceived"
                  and e["params"]["response"]["url"].startswith(tab.running.sandbox + "/")
                  and "/view/" in e["params"]["response"]["url"]]
        policy = {k.lower(): v for k, v in frames[-1]["headers"].items()}["content-security-policy"]
        assert "connect-src https://api.example.com" in policy
        assert "default-src 'none'" in policy and "frame-src 'none'" in policy
        assert await tab.js("document.querySelector('.app-policy pre').textContent") in policy

        await tab.click(".call-card[data-tool=media] .block-resource_link button")
        text = await tab.until("() => { const r = document.querySelector("
                               "'.read[data-uri=\"notes://tides\"][data-done] pre');"
                               " return r && r.textContent; }", "the linked resource read")
        assert text == "notes on tides"


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_a_page_to_open_a_sample_and_the_roots_are_answered_from_the_page(
        browser: Browser, era: str) -> None:
    async with inspecting(browser, SHOWCASE, era=era, origins=ORIGINS) as tab:
        await tab.connected(era)
        await tab.fill("textarea.roots", "file:///work/notes")
        await tab.click("#panel-connection .roots + button")
        await tab.until("() => document.querySelector('#panel-connection .roots ~ .note')"
                        ".textContent.includes('1 root')", "the roots set")
        await tab.choose_tool("consult")
        await tab.click("form.call-form button.call")
        page = await tab.until("""() => {
          const q = document.querySelector('.question.kind-url');
          return q && { host: q.querySelector('.url-host').textContent,
                        url: q.querySelector('a.url').href, target: q.querySelector('a.url').target };
        }""", "the page to open")
        assert page == {"host": "partner.example.com", "target": "_blank",
                        "url": "https://partner.example.com/confirm?order=7"}
        await tab.click(".question.kind-url button.accept")
        await tab.until("() => document.querySelector('.question.kind-sampling')", "the sample")
        asked = await tab.js("document.querySelector('.sampling-messages').textContent")
        assert "Say hello" in asked
        await tab.fill("textarea.sampling-reply", "hello there")
        await tab.click(".question.kind-sampling button.accept")
        text = await tab.until("() => { const pre = document.querySelector("
                               "'.call-card[data-tool=consult][data-done] .block-text pre');"
                               " return pre && pre.textContent; }", "the consult result")
        assert text == ("page accept; the model said 'hello there'; roots "
                        "['file:///work/notes']")
        got = await tab.wire_methods("in")
        if era == "legacy":
            assert {"elicitation/create", "sampling/createMessage", "roots/list"} <= set(got)


async def test_a_call_waiting_on_a_question_is_cancelled_from_the_page(browser: Browser) -> None:
    async with inspecting(browser, SHOWCASE, origins=ORIGINS) as tab:
        await tab.connected("modern")
        await tab.choose_tool("consult")
        await tab.click("form.call-form button.call")
        await tab.until("() => document.querySelector('.question.kind-url')", "the question")
        await tab.click("form.call-form button.cancel-call")
        said = await tab.until("() => { const p = document.querySelector("
                               "'.call-card[data-tool=consult][data-done] .call-error .problem');"
                               " return p && p.textContent; }", "the cancelled call")
        assert said.startswith("cancelled from the page")
        await tab.until("() => document.querySelectorAll('.question').length === 0",
                        "the question withdrawn")
        # The question was the call's only business in flight (2026-07-28 keeps no request
        # open while the user answers): no retry goes out.
        assert (await tab.wire_methods("out")).count("tools/call") == 1


async def test_a_legacy_call_in_flight_is_cancelled_on_the_wire(browser: Browser) -> None:
    async with inspecting(browser, LONG_JOB, era="legacy", origins=ORIGINS) as tab:
        await tab.connected("legacy")
        await tab.choose_tool("build_report")
        await tab.fill(field("/topic"), "waves")
        await tab.fill(field("/sections"), "40")
        await tab.click("form.call-form button.call")
        await tab.until("() => document.querySelector('.call-card .progress').textContent"
                        ".includes('wrote section')", "the call under way")
        await tab.click("form.call-form button.cancel-call")
        await tab.until("() => document.querySelector('.call-card[data-done] .call-error')",
                        "the cancelled call")
        await tab.until("() => [...document.querySelectorAll('.wire-entry[data-dir=out]')]"
                        ".some(e => e.dataset.method === 'notifications/cancelled')",
                        "the cancellation on the wire")


async def test_a_failing_tools_traceback_is_shown_from_the_servers_stderr(
        browser: Browser) -> None:
    async with inspecting(browser, SHOWCASE, origins=ORIGINS) as tab:
        await tab.connected("modern")
        await tab.choose_tool("broken")
        await tab.click("form.call-form button.call")
        text = await tab.until("() => { const pre = document.querySelector("
                               "'.call-card[data-tool=broken][data-done] .block-text pre');"
                               " return pre && pre.textContent; }", "the failure")
        error_id = text.split("error id ", 1)[1].split(")", 1)[0]
        await tab.tab("connection")
        await tab.click("button.show-stderr")
        stderr = await tab.until("() => document.querySelector('pre.stderr').textContent",
                                 "the server's stderr")
        assert error_id in stderr and "RuntimeError: boom" in stderr


async def test_templates_and_prompts_complete_as_they_are_typed(browser: Browser) -> None:
    async with inspecting(browser, SHOWCASE, origins=ORIGINS) as tab:
        await tab.connected("modern")
        await tab.tab("resources")
        topic = "li.template[data-template='notes://{topic}'] input[data-variable=topic]"
        await tab.until(f"() => document.querySelector(\"{topic}\")", "the template")
        await tab.fill(topic, "ti")
        offered = await tab.until(f"() => document.querySelector(\"{topic}\").dataset.completions",
                                  "the topic's completions")
        assert json.loads(offered) == ["tides", "tidal pools"]
        await tab.fill(topic, "tidal pools")
        await tab.click("li.template button")
        text = await tab.until("() => { const r = document.querySelector('.read[data-done] pre');"
                               " return r && r.textContent; }", "the template read")
        assert text == "notes on tidal pools"

        await tab.tab("prompts")
        await tab.click("li.prompt[data-name=brief]")
        await tab.fill(".prompt-form input[name=topic]", "wa")
        offered = await tab.until("() => document.querySelector('.prompt-form input[name=topic]')"
                                  ".dataset.completions", "the prompt argument's completions")
        assert json.loads(offered) == ["waves"]
        await tab.fill(".prompt-form input[name=topic]", "waves")
        await tab.click(".prompt-form button.primary")
        message = await tab.until("""() => {
          const m = document.querySelector('.messages[data-done] .message');
          return m && { role: m.querySelector('.role').textContent,
                        text: m.querySelector('.block-text pre').textContent };
        }""", "the prompt's messages")
        assert message == {"role": "user", "text": "Brief me on waves, in a plain tone."}


async def test_the_wire_filters_and_copies_commands_that_work(browser: Browser) -> None:
    async with inspecting(browser, QUICKSTART, http=True, origins=ORIGINS) as tab:
        await tab.connected("modern")
        await tab.call("add", {"a": 2, "b": 3})
        await result_of(tab, "add")
        await tab.fill("input.wire-filter", "tools/call")
        visible = await tab.js("[...document.querySelectorAll('.wire-entry')].filter(e => !e.hidden)"
                               ".map(e => e.dataset.dir + ' ' + e.dataset.method)")
        assert visible == ["out tools/call", "in tools/call"]
        await tab.click(".wire-entry[data-dir=out][data-method='tools/call'] .wire-summary")
        detail = await tab.until("""() => {
          const d = document.querySelector('.wire-detail');
          if (!d || !d.querySelector('.copy-curl')) return null;
          return { mcpkit: d.querySelector('.copy-mcpkit').textContent,
                   curl: d.querySelector('.copy-curl').textContent,
                   mirrored: Object.fromEntries([...d.querySelectorAll('tr.mirrored')].map(
                     r => [r.querySelector('th').textContent, r.querySelector('td').textContent])) };
        }""", "the request's details")
        url = tab.running.session.target.server
        assert detail["mcpkit"] == f"mcpkit call {url} add '{{\"a\":2,\"b\":3}}'"
        assert detail["mirrored"]["mcp-method"] == "tools/call"
        assert detail["mirrored"]["mcp-name"] == "add"
        assert detail["mirrored"]["mcp-protocol-version"] == "2026-07-28"

        line = shlex.split(detail["mcpkit"])
        called = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "mcpkit", *line[1:], "--json", stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(called.communicate(), 60)
        assert called.returncode == 0, err
        assert json.loads(out)["structuredContent"] == {"sum": 5}
        curled = await asyncio.create_subprocess_exec(
            "bash", "-c", detail["curl"], stdout=asyncio.subprocess.PIPE,
            env={**os.environ, "NO_PROXY": "127.0.0.1"})
        out, _ = await asyncio.wait_for(curled.communicate(), 60)
        body = out.decode()
        reply = json.loads(body.split("data: ", 1)[1] if body.startswith(("event", "data")) else body)
        assert reply["result"]["structuredContent"] == {"sum": 5}

        # An error the server answers is shown with its code's meaning.
        await tab.fill("input.wire-filter", "")
        await tab.tab("resources")
        await tab.fill("input.read-uri", "notes://nowhere")
        await tab.click("form.read-any button")
        meaning = await tab.until("() => { const m = document.querySelector("
                                  "'.read[data-done] .meaning'); return m && m.textContent; }",
                                  "the refused read")
        assert meaning.startswith("-32601 Method not found:")  # the quickstart has no resources
        await tab.click(".wire-entry.error .wire-summary")
        explained = await tab.until("() => { const m = document.querySelector("
                                    "'.wire-entry.error .wire-detail .meaning');"
                                    " return m && m.textContent; }", "the error's meaning")
        assert explained == meaning


async def test_switching_era_and_subscribing_to_a_resource(
        browser: Browser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CALENDAR_DB", str(tmp_path / "calendar.sqlite3"))
    async with inspecting(browser, CALENDAR, origins=ORIGINS) as tab:
        state = await tab.connected("modern")
        assert [s["sent"] for s in state["evidence"]] == ["server/discover (2026-07-28)"]
        await tab.click("#panel-connection .era-choice button[data-era=legacy]")
        await tab.until("() => document.querySelector('#panel-connection dd.era') && "
                        "document.querySelector('#panel-connection dd.era').textContent === 'legacy'",
                        "the legacy era")
        evidence = await tab.js("[...document.querySelectorAll('.evidence li code')]"
                                ".map(c => c.textContent)")
        assert evidence == ["initialize (2025-11-25)"]  # pinned: no probe

        await tab.tab("resources")
        await tab.click("li.resource[data-uri='calendar://week']")
        await tab.until("() => document.querySelector('.read[data-uri=\"calendar://week\"][data-done]')",
                        "the week read")
        await tab.click("button.subscribe")
        await tab.until("() => document.querySelector('button.subscribe[data-on=true]')",
                        "the subscription")
        await tab.until("() => (document.querySelector('#panel-connection') || {}).textContent"
                        " !== undefined", "the page")
        when = (datetime.now(UTC) + timedelta(days=2)).replace(microsecond=0)
        await tab.choose_tool("create_event")
        await tab.fill(field("/title"), "Gym")
        await tab.fill(field("/startsAt"), when.isoformat())
        await tab.click("form.call-form button.call")
        await tab.until("() => document.querySelector('.call-card[data-tool=create_event][data-done]')",
                        "the event created")
        await tab.tab("resources")
        badge = await tab.until("() => { const b = document.querySelector("
                                "\"li.resource[data-uri='calendar://week'] .badge.good\");"
                                " return b && b.textContent; }", "the update heard")
        assert badge.startswith("updated \u00d7")
        listed = await tab.until("""() => {
          const shown = document.querySelector('.read[data-uri="calendar://week"][data-done] pre.viewer-json');
          const events = shown && JSON.parse(shown.textContent);
          return events && events.length ? events : null;
        }""", "the week read again")
        assert [e["title"] for e in listed] == ["Gym"]
        assert "resources/subscribe" in await tab.wire_methods("out")


async def test_no_page_asked_anything_of_another_host(browser: Browser) -> None:
    urls = requested(browser)
    assert urls, "the module's pages made no request at all: the Network log is not on"
    # The views' frames ran in the pages' own processes, so their requests are in the pages'
    # Network log too (a frame in a process of its own would report to a session of its own).
    if any("/view/" in url for url in urls):  # a view was shown (not under every -k)
        assert any("/relay.js" in url for url in urls), "no view frame's request was logged"
    apart = [e for e in browser.events if e.get("method") == "Target.attachedToTarget"
             and e["params"]["targetInfo"]["type"] == "iframe"]
    assert apart == [], "a frame ran in a process of its own: its requests were not logged"
    assert foreign(urls, ORIGINS) == []
