"""`mcpkit dev` in a real browser: headless Chromium on the inspector's page, the examples as
real servers (stdio subprocesses, or served over HTTP by `mcpkit run --http`), in both eras.

One browser for the module; each test opens an inspector of its own and a tab on it. What the
tests do is what a user does: fill a tool's form and press Call, answer the server's question,
follow a task, read a resource, look at an MCP App view. Every message the inspector's client
sends is checked against the official schema, and the last test checks that no page asked
anything of a host but the inspector's own two origins.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from helpers.client.schema_tap import ROOT
from helpers.devtools import Browser, launched
from helpers.everything_catalogue import COMMAND, npm_env
from helpers.everything_catalogue import installed as installed  # the fixture, shared
from inspected import foreign, inspecting, requested

pytestmark = pytest.mark.asyncio(loop_scope="module")

QUICKSTART = str(ROOT / "examples" / "quickstart" / "server.py")
CALENDAR = str(ROOT / "examples" / "calendar" / "server.py")
LONG_JOB = str(ROOT / "examples" / "long_job" / "server.py")
ORIGINS: set[str] = set()
"""Every origin an inspector of this module served its page and views from."""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Browser]:
    async with launched(tmp_path_factory.mktemp("chromium")) as opened:
        yield opened


@pytest.fixture
def calendar_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    db = tmp_path / "calendar.sqlite3"
    monkeypatch.setenv("CALENDAR_DB", str(db))
    return db


STRUCTURED = """() => {
  const card = document.querySelector('.call-card[data-tool=add][data-done]');
  if (!card) return null;
  const structured = card.querySelector('pre.structured');
  const check = card.querySelector('.check');
  return { structured: structured && JSON.parse(structured.textContent),
           check: check && check.dataset.status,
           text: [...card.querySelectorAll('.block-text pre')].map(p => p.textContent) };
}"""


@pytest.mark.parametrize("http", [False, True], ids=["stdio", "http"])
@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_the_quickstart_adds_from_its_form_and_the_wire_shows_the_call(
        browser: Browser, http: bool, era: str) -> None:
    async with inspecting(browser, QUICKSTART, http=http, era=era, origins=ORIGINS) as tab:
        await tab.connected(era)
        await tab.call("add", {"a": 2, "b": 3})
        shown = await tab.until(STRUCTURED, "the result of add")
        assert shown["structured"] == {"sum": 5}
        assert shown["check"] == "valid"
        await tab.until("() => document.querySelectorAll('.wire-entry[data-method=\"tools/call\"]').length >= 2",
                        "the call on the wire")
        assert "tools/call" in await tab.wire_methods("out")
        assert "tools/call" in await tab.wire_methods("in")
        answered = await tab.js("""(() => {
          const row = document.querySelector('.wire-entry[data-dir=in][data-method="tools/call"]');
          return { took: row.querySelector('.took').textContent,
                   badges: [...row.querySelectorAll('.badge')].map(b => b.textContent) };
        })()""")
        assert answered["took"].endswith(" ms")
        assert ("HTTP 200" in answered["badges"]) is http  # the status, over HTTP only


WEEK_SHOWN = """() => {
  if (document.body.dataset.filled !== "true") return null;
  return [...document.querySelectorAll("section.day")].map((day) => ({
    date: day.dataset.date,
    events: [...day.querySelectorAll("article.event")].map((card) => ({
      title: card.querySelector(".title").textContent, created: card.classList.contains("created"),
    })),
  }));
}"""


@pytest.mark.parametrize(("http", "era"), [(False, "modern"), (True, "legacy")],
                         ids=["stdio-modern", "http-legacy"])
async def test_the_calendar_asks_when_the_event_starts_and_its_week_view_shows_it(
        browser: Browser, calendar_db: Path, http: bool, era: str) -> None:
    when = (datetime.now(UTC) + timedelta(days=1)).replace(hour=9, minute=30, second=0,
                                                           microsecond=0)
    async with inspecting(browser, CALENDAR, http=http, era=era, origins=ORIGINS) as tab:
        await tab.connected(era)
        await tab.call("create_event", {"title": "Dentist"})
        await tab.until("() => document.querySelector('.question.kind-form [data-path=\"/startsAt\"]')",
                        "the question when the event starts")
        asked = await tab.js("document.querySelector('.question .message').textContent")
        assert asked == 'When should "Dentist" start?'
        await tab.fill(".question [data-path='/startsAt'] > input", "not a date")
        problem = await tab.until(
            "() => document.querySelector('.question [data-path=\"/startsAt\"] > .problem').textContent",
            "the field's problem as it is typed")
        assert "date-time" in problem
        await tab.fill(".question [data-path='/startsAt'] > input", when.isoformat())
        await tab.click(".question button.accept")
        created = await tab.until("""() => {
          const card = document.querySelector('.call-card[data-tool=create_event][data-done]');
          const structured = card && card.querySelector('pre.structured');
          return structured && JSON.parse(structured.textContent);
        }""", "the created event")
        assert created["title"] == "Dentist"
        assert datetime.fromisoformat(created["startsAt"]) == when
        assert await tab.js("document.querySelectorAll('.question').length") == 0

        # The tool's MCP App view, in the sandbox proxy on the second origin.
        await tab.until("() => document.querySelector('.call-card[data-tool=create_event] "
                        ".app[data-state=shown]')", "the week view shown")
        view = await tab.nested_frame(tab.running.sandbox)
        days = await tab.until(WEEK_SHOWN, "the week view filled in", frame=view)
        day = [d for d in days if d["date"] == when.date().isoformat()]
        assert day and day[0]["events"] == [{"title": "Dentist", "created": True}], days
        log = await tab.js("[...document.querySelectorAll('.app-log li')].map("
                           "li => li.dataset.dir + ' ' + li.dataset.method)")
        assert "in ui/initialize" in log and "in ui/notifications/initialized" in log
        assert log.index("out ui/notifications/tool-input") < log.index(
            "out ui/notifications/tool-result")
        assert "in tools/call" in log  # the view's own week_events, through the host
        # Chromium draws a cross-origin frame only once it is in view (so does a user).
        await tab.js("document.querySelector('.call-card[data-tool=create_event] .app')"
                     ".scrollIntoView()")
        sized = await tab.until("""() => {
          const app = document.querySelector('.call-card[data-tool=create_event] .app');
          return app.dataset.height && { said: Number(app.dataset.height),
                                         frame: app.querySelector('iframe').style.height };
        }""", "the view's size")
        assert sized["said"] > 100 and sized["frame"] == f"{sized['said']}px"

        # The resource, read as JSON.
        await tab.tab("resources")
        await tab.click("li.resource[data-uri='calendar://week']")
        listed = await tab.until("""() => {
          const read = document.querySelector('.read[data-uri="calendar://week"][data-done]');
          const shown = read && read.querySelector('pre.viewer-json');
          return shown && JSON.parse(shown.textContent);
        }""", "calendar://week read")
        assert [e["title"] for e in listed] == ["Dentist"]

        sent = await tab.wire_methods("out")
        got = await tab.wire_methods("in")
        assert "resources/read" in sent
        if era == "legacy":
            assert "elicitation/create" in got  # the question, as a 2025-11-25 request
        else:
            assert sent.count("tools/call") >= 3  # the call, its retry with the answer, the view's


def task_card(status: str | None = None, topic: str | None = None) -> str:
    """A JS condition: the id of the task card (of `topic`'s call) once it shows `status`."""
    return f"""() => {{
      const cards = [...document.querySelectorAll('.task-card{f'[data-status={status}]' if status else ''}')];
      const card = cards.find(c => {json.dumps(topic)} === null ||
                                   c.textContent.includes({json.dumps(topic or '')}));
      return card ? card.dataset.id : null;
    }}"""


async def start_report(tab: Any, topic: str, sections: int, seconds: float) -> str:
    """Call build_report as a task from its form; the task's id."""
    await tab.choose_tool("build_report")
    await tab.fill("form.call-form [data-path='/topic'] > input", topic)
    await tab.fill("form.call-form [data-path='/sections'] > input", str(sections))
    await tab.fill("form.call-form [data-path='/seconds_per_section'] > input", str(seconds))
    assert await tab.js("document.querySelector('form.call-form input.as-task').checked")
    await tab.click("form.call-form button.call")
    return str(await tab.until(f"""() => {{
      const card = [...document.querySelectorAll('.call-card[data-tool=build_report]')]
        .find(c => c.textContent.includes({json.dumps(topic)}));
      const id = card && card.querySelector('.became-task .task-id');
      return id && id.textContent;
    }}""", f"the {topic} call becoming a task"))


async def answer_publish(tab: Any, publish: bool) -> None:
    await tab.until("() => document.querySelector('.question.kind-form [data-path=\"/publish\"]')",
                    "the question whether to publish")
    if publish:
        await tab.fill(".question [data-path='/publish'] > input", True)
        await tab.click(".question button.accept")
    else:
        await tab.click(".question button.decline")


async def test_long_job_tasks_run_to_completion_are_cancelled_and_reattached_over_http(
        browser: Browser) -> None:
    async with inspecting(browser, LONG_JOB, http=True, era="modern", origins=ORIGINS) as tab:
        await tab.connected("modern")
        done = await start_report(tab, "tides", 2, 0.2)
        await answer_publish(tab, True)
        await tab.tab("tasks")
        assert await tab.until(task_card("completed", "tides"), "the tides task completed") == done
        text = await tab.js(f"document.querySelector('.task-card[data-id=\"{done}\"] .block-text pre')"
                            ".textContent")
        assert text.startswith("Report on tides (published):")
        result = await tab.js("document.querySelector('.call-card[data-tool=build_report][data-done] "
                              ".block-text pre').textContent")
        assert result == text  # the call's own card has the task's result too

        cancelled = await start_report(tab, "waves", 40, 0.5)
        await tab.tab("tasks")
        await tab.until(task_card("working", "waves"), "the waves task working")
        await tab.click(f".task-card[data-id='{cancelled}'] button.cancel-task")
        assert await tab.until(task_card("cancelled", "waves"), "the waves task cancelled") == cancelled

        followed = await start_report(tab, "reefs", 3, 0.5)
        await tab.tab("tasks")
        await tab.until(task_card("working", "reefs"), "the reefs task working")
        await tab.click("#bar button.reconnect")
        await tab.until(f"() => document.querySelector('.task-card[data-id=\"{followed}\"]')"
                        ".textContent.includes('no longer followed')", "the reefs task let go")
        await tab.connected("modern")
        await tab.tab("tasks")
        await tab.fill("input.task-id-input", followed)
        await tab.click("button.attach")
        await answer_publish(tab, False)
        await tab.until(task_card("completed", "reefs"), "the reattached reefs task completed")
        text = await tab.js(f"document.querySelector('.task-card[data-id=\"{followed}\"] "
                            ".block-text pre').textContent")
        assert text.startswith("Report on reefs (kept as a draft):")
        sent = await tab.wire_methods("out")
        assert {"tasks/get", "tasks/update", "tasks/cancel"} <= set(sent)


async def test_a_legacy_long_job_reports_progress_and_asks_in_its_call(browser: Browser) -> None:
    async with inspecting(browser, LONG_JOB, era="legacy", origins=ORIGINS) as tab:
        await tab.connected("legacy")
        await tab.choose_tool("build_report")
        assert await tab.js("document.querySelector('form.call-form input.as-task')") is None
        await tab.fill("form.call-form [data-path='/topic'] > input", "tides")
        await tab.fill("form.call-form [data-path='/sections'] > input", "2")
        await tab.fill("form.call-form [data-path='/seconds_per_section'] > input", "0.2")
        await tab.click("form.call-form button.call")
        said = await tab.until("() => { const p = document.querySelector('.call-card .progress');"
                               " return p && p.textContent.includes('wrote section') && p.textContent; }",
                               "the call's progress")
        assert said.startswith("progress ")
        await answer_publish(tab, True)
        text = await tab.until("() => { const pre = document.querySelector('.call-card[data-done] "
                               ".block-text pre'); return pre && pre.textContent; }", "the report")
        assert text.startswith("Report on tides (published):")
        assert "elicitation/create" in await tab.wire_methods("in")
        assert "notifications/progress" in await tab.wire_methods("in")


@pytest.mark.node
async def test_the_reference_everything_server_is_inspected_over_legacy_stdio(
        browser: Browser, installed: None, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in npm_env().items():
        monkeypatch.setenv(name, value)
    async with inspecting(browser, COMMAND, check_server=False, origins=ORIGINS) as tab:
        state = await tab.connected("legacy")
        assert state["serverInfo"]["name"] == "mcp-servers/everything"
        assert [s["sent"] for s in state["evidence"]] == ["server/discover (2026-07-28)",
                                                          "initialize (2025-11-25)"]
        await tab.call("echo", {"message": "hello"})
        text = await tab.until("() => { const pre = document.querySelector("
                               "'.call-card[data-tool=echo][data-done] .block-text pre');"
                               " return pre && pre.textContent; }", "the echo")
        assert text == "Echo: hello"
        assert "tools/call" in await tab.wire_methods("out")


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
