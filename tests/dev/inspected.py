"""The inspector as the browser tests drive it: `mcpkit dev`'s own `inspector()` run in the
test's process (its target a real subprocess), a Chromium tab on its page, and the user's hands.

Every message the inspector's client sends passes through a `SchemaTap` (what a server of ours
sends is checked too), and every request the page makes is recorded from DevTools' Network
events, so a test can say none went to a host other than the inspector's own two origins.

Waits are on the page's DOM: `until` resolves when a condition holds, re-checked on every DOM
change (a MutationObserver), bounded by `WAIT`; a wait that runs out fails with what the page
showed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

from helpers.client.schema_tap import SchemaTap
from helpers.devtools import Browser, Frame, Page

from mcpkit.dev.command import Inspector, inspector
from mcpkit.dev.targets import read_target

WAIT = 60.0
"""The longest one condition may take to come true (a loaded 2-core machine starts servers
slowly)."""
STEP = 20.0
"""One look's longest wait in the page (a DevTools command may take 30 s)."""

UNTIL = """
new Promise((resolve) => {
  const check = () => {
    try {
      const value = (%s)();
      return value instanceof Node ? true : value;  // a node does not cross as JSON
    } catch (error) { return null; }
  };
  const now = check();
  if (now) { resolve(now); return; }
  const observer = new MutationObserver(() => {
    const value = check();
    if (value) { observer.disconnect(); clearTimeout(timer); resolve(value); }
  });
  observer.observe(document, { subtree: true, childList: true, attributes: true,
                               characterData: true });
  const timer = setTimeout(() => { observer.disconnect(); resolve(null); }, %d);
})
"""

FILL = """
((selector, value) => {
  const element = document.querySelector(selector);
  if (!element) return false;
  if (element.type === "checkbox") element.checked = value;
  else element.value = value;
  element.dispatchEvent(new Event("input", { bubbles: true }));
  element.dispatchEvent(new Event("change", { bubbles: true }));
  return true;
})(%s, %s)
"""


class Tab:
    """A tab on one inspector's page."""

    def __init__(self, page: Page, running: Inspector, tap: SchemaTap) -> None:
        self.page = page
        self.browser: Browser = page.browser
        self.running = running
        self.tap = tap

    async def js(self, expression: str) -> Any:
        return await self.page.evaluate(expression)

    async def until(self, condition: str, what: str, frame: Frame | None = None) -> Any:
        """The truthy value of the JS function `condition` once it has one."""
        where = frame or self.page
        loop = asyncio.get_running_loop()
        deadline = loop.time() + WAIT
        value = None
        while not value and loop.time() < deadline:  # in steps shorter than a DevTools command
            value = await where.evaluate(UNTIL % (condition, int(STEP * 1000)))
        if not value:
            shown = await where.evaluate("document.body ? document.body.innerText.slice(0, 3000) : ''")
            raise AssertionError(f"waited {WAIT:.0f} s for {what}; the page shows:\n{shown}")
        return value

    async def click(self, selector: str) -> None:
        found = await self.js(f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
                              " if (!e) return false; e.click(); return true; })()")
        assert found, f"nothing to click at {selector}"

    async def fill(self, selector: str, value: Any) -> None:
        assert await self.js(FILL % (json.dumps(selector), json.dumps(value))), (
            f"no field at {selector}")

    async def tab(self, name: str) -> None:
        await self.click(f"button.tab[data-tab={name}]")

    async def connected(self, era: str | None = None) -> dict[str, Any]:
        """Wait for the connection (in `era`) and the catalogue; the connection's state."""
        condition = "document.querySelector('#bar[data-state=connected]')"
        await self.until(f"() => {condition}", "the connection")
        state = self.running.session.state("connected")
        if era is not None:
            assert state["era"] == era, state
        await self.until("() => document.querySelector('#panel-tools li.tool')",
                         "the tool list")
        return state

    async def choose_tool(self, name: str) -> None:
        await self.tab("tools")
        await self.click(f"li.tool[data-name={name}]")
        await self.until(f"() => document.querySelector('.tool-view[data-tool={name}]')",
                         f"the {name} tool's form")

    async def call(self, tool: str, arguments: dict[str, Any]) -> None:
        """Fill the tool's form field by field and press Call."""
        await self.choose_tool(tool)
        for name, value in arguments.items():
            await self.fill(f"form.call-form [data-path='/{name}'] > input, "
                            f"form.call-form [data-path='/{name}'] > select",
                            value)
        await self.click("form.call-form button.call")

    async def wire_methods(self, direction: str = "out") -> list[str]:
        return list(await self.js(
            f"[...document.querySelectorAll('.wire-entry[data-dir={direction}]')]"
            ".map(e => e.dataset.method)"))

    async def nested_frame(self, parent_origin: str) -> Frame:
        """The view's frame: the child of the frame served from `parent_origin` (the sandbox
        proxy), reached in an isolated world of its own."""
        tree = (await self.browser.send("Page.getFrameTree", session=self.page.session))["frameTree"]

        def find(node: dict[str, Any]) -> str | None:
            frame = node["frame"]
            if frame.get("url", "").startswith(parent_origin):
                children = node.get("childFrames") or []
                return children[0]["frame"]["id"] if children else None
            for child in node.get("childFrames") or []:
                found = find(child)
                if found:
                    return found
            return None

        frame_id = find(tree)
        assert frame_id is not None, f"no view frame under {parent_origin} in {tree}"
        world = await self.browser.send("Page.createIsolatedWorld",
                                        {"frameId": frame_id, "worldName": "test"},
                                        self.page.session)
        return Frame(self.browser, self.page.session, world["executionContextId"])


def requested(browser: Browser) -> list[str]:
    """Every URL a page of `browser` asked for (DevTools Network events)."""
    return [event["params"]["request"]["url"] for event in browser.events
            if event.get("method") == "Network.requestWillBeSent"]


def foreign(urls: list[str], origins: set[str]) -> list[str]:
    """The URLs that went anywhere but `origins` (data:, blob: and about: are no requests)."""
    out = []
    for url in urls:
        parts = urlsplit(url)
        if parts.scheme in ("data", "blob", "about"):
            continue
        if f"{parts.scheme}://{parts.netloc}" not in origins:
            out.append(url)
    return out


@contextlib.asynccontextmanager
async def inspecting(browser: Browser, target: str, *, http: bool = False, era: str = "auto",
                     check_server: bool = True, origins: set[str] | None = None
                     ) -> AsyncIterator[Tab]:
    """`mcpkit dev TARGET [--http] [--era ERA]` and a tab open on its page; the page's
    origins are added to `origins` (for the test of where the browser went)."""
    tap = SchemaTap(check_server=check_server)
    async with inspector(read_target(target, http=http), era=era, tap=tap) as running:
        if origins is not None:
            page_url = urlsplit(running.url)
            origins.update({f"{page_url.scheme}://{page_url.netloc}", running.sandbox})
        page = await browser.new_page()
        await browser.send("Network.enable", session=page.session)
        # A tab in front renders (a view's ResizeObserver reports its size as it draws).
        await browser.send("Page.bringToFront", session=page.session)
        await page.open(running.url)
        tab = Tab(page, running, tap)
        try:
            yield tab
        finally:
            await browser.send("Target.closeTarget", {"targetId": await _target_of(page)})
    tap.assert_clean()


async def _target_of(page: Page) -> str:
    info = await page.browser.send("Target.getTargetInfo", session=page.session)
    return str(info["targetInfo"]["targetId"])
