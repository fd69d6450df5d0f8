"""MCP App views on a real server connection: the `ui://` resource and its `_meta.ui` in
`resources/list` and `resources/read`, the extension offered in `server/discover` exactly when
there is a view, tools linked to a view, and app-only tools left out of `tools/list` for a
request that cannot show views (modern and legacy alike). Every server message is checked
against the official schema by the wire."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers.client.schema_tap import SchemaTap

from mcpkit import Server
from mcpkit.client import Client, ClientOptions
from mcpkit.ext import apps
from mcpkit.ext.apps import APPS, FLAT_RESOURCE_URI, MIME_TYPE, Csp
from mcpkit.transports.memory import InMemory

CAPS = "io.modelcontextprotocol/clientCapabilities"
VIEW = "ui://board/main"
HTML = "<!DOCTYPE html>\n<html><head><title>Board</title></head><body>board</body></html>\n"
SHOWS_VIEWS = {APPS: {"mimeTypes": [MIME_TYPE]}}


def declaring(extensions: dict[str, Any]) -> dict[str, Any]:
    return {CAPS: {"extensions": extensions}}


def board() -> Server:
    """A view, a tool for both, one for the view alone and one for the model alone."""
    server = Server("board")
    apps.add_view(server, VIEW, HTML, title="Board", csp=Csp(
        connect_domains=["https://api.example.com"]), permissions=["clipboardWrite"],
        prefers_border=True)

    @server.tool(meta={"com.example/owner": "team"})
    def show() -> str:
        """Show the board."""
        return "the board, as text"

    @server.tool()
    def refresh() -> dict[str, int]:
        """Fresh numbers for the view."""
        return {"cards": 3}

    @server.tool()
    def summarize() -> str:
        """A summary for the model."""
        return "3 cards"

    apps.link(server, "show", VIEW)
    apps.link(server, "refresh", VIEW, visibility=["app"])
    apps.link(server, "summarize", VIEW, visibility=["model"])
    return server


def names(reply: dict[str, Any]) -> list[str]:
    return [tool["name"] for tool in reply["result"]["tools"]]


UI = {"csp": {"connectDomains": ["https://api.example.com"]},
      "permissions": {"clipboardWrite": {}}, "prefersBorder": True}


async def test_the_view_is_listed_with_its_mime_type_and_ui(wire_factory: Any) -> None:
    wire = wire_factory(board())
    listed = (await wire.request("resources/list"))["result"]["resources"]
    assert listed == [{"uri": VIEW, "name": "main", "title": "Board", "mimeType": MIME_TYPE,
                       "_meta": {"ui": UI}}]


async def test_reading_the_view_gives_the_html_with_its_ui(wire_factory: Any) -> None:
    wire = wire_factory(board())
    contents = (await wire.request("resources/read", {"uri": VIEW}))["result"]["contents"]
    assert contents == [{"uri": VIEW, "mimeType": MIME_TYPE, "text": HTML, "_meta": {"ui": UI}}]


async def test_a_view_asking_for_nothing_carries_no_meta(wire_factory: Any) -> None:
    server = Server("plain")
    apps.add_view(server, VIEW, HTML)
    wire = wire_factory(server)
    contents = (await wire.request("resources/read", {"uri": VIEW}))["result"]["contents"]
    assert "_meta" not in contents[0]
    assert "_meta" not in (await wire.request("resources/list"))["result"]["resources"][0]


async def test_discover_offers_apps_once_there_is_a_view(wire_factory: Any) -> None:
    server = Server("later")

    @server.tool()
    def plain() -> str:
        return "x"

    wire = wire_factory(server)
    before = (await wire.request("server/discover"))["result"]["capabilities"]
    assert "extensions" not in before
    apps.add_view(server, VIEW, HTML)
    after = (await wire.request("server/discover"))["result"]["capabilities"]
    assert after["extensions"] == {APPS: {}}


async def test_a_linked_tool_names_its_view_both_ways_and_keeps_its_own_meta(
        wire_factory: Any) -> None:
    wire = wire_factory(board())
    tools = {t["name"]: t for t in (await wire.request("tools/list", **declaring(SHOWS_VIEWS))
                                    )["result"]["tools"]}
    assert tools["show"]["_meta"] == {
        "com.example/owner": "team",
        "ui": {"resourceUri": VIEW, "visibility": ["model", "app"]},
        FLAT_RESOURCE_URI: VIEW,
    }
    assert tools["refresh"]["_meta"]["ui"] == {"resourceUri": VIEW, "visibility": ["app"]}
    assert tools["summarize"]["_meta"]["ui"]["visibility"] == ["model"]


async def test_the_flat_key_can_be_left_out(wire_factory: Any) -> None:
    server = board()
    apps.link(server, "show", VIEW, flat_key=False)  # linking again replaces the link
    wire = wire_factory(server)
    tools = {t["name"]: t for t in (await wire.request("tools/list"))["result"]["tools"]}
    assert FLAT_RESOURCE_URI not in tools["show"]["_meta"]
    assert tools["show"]["_meta"]["ui"]["resourceUri"] == VIEW


@pytest.mark.parametrize(("extensions", "listed"), [
    (None, ["show", "summarize"]),
    ({APPS: {"mimeTypes": [MIME_TYPE]}}, ["show", "refresh", "summarize"]),
    ({APPS: {"mimeTypes": ["text/uri-list"]}}, ["show", "summarize"]),
    ({APPS: {}}, ["show", "summarize"]),
    ({"com.example/other": {"mimeTypes": [MIME_TYPE]}}, ["show", "summarize"]),
], ids=["nothing", "apps", "other-mime", "no-mime", "other-extension"])
async def test_an_app_only_tool_is_listed_only_to_a_caller_that_shows_views(
        wire_factory: Any, extensions: dict[str, Any] | None, listed: list[str]) -> None:
    wire = wire_factory(board())
    extra = declaring(extensions) if extensions is not None else {}
    assert names(await wire.request("tools/list", **extra)) == listed


async def test_the_two_kinds_of_caller_never_share_a_cached_list(wire_factory: Any) -> None:
    wire = wire_factory(board())
    for _ in range(2):
        assert "refresh" in names(await wire.request("tools/list", **declaring(SHOWS_VIEWS)))
        assert "refresh" not in names(await wire.request("tools/list"))


async def test_an_app_only_tool_still_answers_a_call(wire_factory: Any) -> None:
    # The server cannot tell a view's call from a model's: refusing is the host's part.
    wire = wire_factory(board())
    reply = await wire.request("tools/call", {"name": "refresh", "arguments": {}})
    assert reply["result"]["structuredContent"] == {"cards": 3}


async def test_a_linked_tool_keeps_its_text_for_hosts_without_apps(wire_factory: Any) -> None:
    wire = wire_factory(board())
    reply = await wire.request("tools/call", {"name": "show", "arguments": {}})
    assert reply["result"]["content"] == [{"type": "text", "text": "the board, as text"}]


async def legacy_list(wire: Any, capabilities: dict[str, Any]) -> list[str]:
    await wire.request("initialize", {
        "protocolVersion": "2025-11-25", "capabilities": capabilities,
        "clientInfo": {"name": "legacy-host", "version": "1.0"}}, with_meta=False)
    wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return names(await wire.request("tools/list", with_meta=False))


async def test_a_legacy_host_declaring_apps_in_initialize_sees_app_only_tools(
        wire_factory: Any) -> None:
    shown = await legacy_list(wire_factory(board()), {"extensions": SHOWS_VIEWS})
    assert shown == ["show", "refresh", "summarize"]
    hidden = await legacy_list(wire_factory(board()), {})
    assert hidden == ["show", "summarize"]


async def test_a_client_declaring_apps_lists_what_one_without_does_not() -> None:
    listed = {}
    for kind, options in (("apps", ClientOptions(extensions=SHOWS_VIEWS)), ("plain", None)):
        tap = SchemaTap()
        client = Client(InMemory(board(), tap=tap), options=options)
        try:
            listed[kind] = [t["name"] for t in await client.list_tools()]
        finally:
            await client.close()
        tap.assert_clean()
    assert listed == {"apps": ["show", "refresh", "summarize"], "plain": ["show", "summarize"]}


# -- registration errors --------------------------------------------------------------------


def test_a_view_uri_must_be_ui() -> None:
    with pytest.raises(ValueError, match="'https://board/main' does not use the ui:// scheme"):
        apps.add_view(Server("s"), "https://board/main", HTML)


@pytest.mark.parametrize("html", ["<div>a fragment</div>", "", "just text"])
def test_a_view_must_be_an_html_document(html: str) -> None:
    with pytest.raises(ValueError, match=r"'ui://board/main'.*<!DOCTYPE html>"):
        apps.add_view(Server("s"), VIEW, html)


@pytest.mark.parametrize("html", [
    "<!doctype html><p>x", "\ufeff<!DOCTYPE html>\n<html></html>",
    "<!-- made by hand -->\n<!DOCTYPE html><html></html>", "<html lang='en'></html>",
])
def test_a_whole_document_in_any_usual_spelling_is_a_view(html: str) -> None:
    apps.add_view(Server("s"), VIEW, html)


def test_a_view_from_a_file_is_read_at_registration(tmp_path: Path) -> None:
    page = tmp_path / "view.html"
    page.write_text(HTML, encoding="utf-8")
    server = Server("s")
    apps.add_view(server, VIEW, page)
    page.unlink()  # served from what was read
    assert server.resources[VIEW].fn().data == HTML


def test_a_missing_or_binary_view_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no file at"):
        apps.add_view(Server("s"), VIEW, tmp_path / "absent.html")
    binary = tmp_path / "view.html"
    binary.write_bytes(b"\xff\xfe<html>")
    with pytest.raises(ValueError, match="not UTF-8"):
        apps.add_view(Server("s"), VIEW, binary)


def test_a_view_is_text_or_a_path() -> None:
    with pytest.raises(TypeError, match=r"pathlib\.Path"):
        apps.add_view(Server("s"), VIEW, b"<!DOCTYPE html>")  # type: ignore[arg-type]


def test_a_bad_csp_names_the_view() -> None:
    with pytest.raises(ValueError, match=r"MCP App view 'ui://board/main': csp connectDomains"):
        apps.add_view(Server("s"), VIEW, HTML, csp=Csp(connect_domains=["*"]))


def test_linking_needs_a_registered_tool_and_view() -> None:
    server = Server("s")

    @server.tool()
    def show() -> str:
        return "x"

    with pytest.raises(ValueError, match="no tool named 'missing'"):
        apps.link(server, "missing", VIEW)
    with pytest.raises(ValueError, match=r"'ui://board/main' is not a registered MCP App view"):
        apps.link(server, "show", VIEW)
    server.add_resource("ui://board/data", lambda: "{}", mime_type="application/json")
    with pytest.raises(ValueError, match="a resource of mime type 'application/json'"):
        apps.link(server, "show", "ui://board/data")
    apps.add_view(server, VIEW, HTML)
    with pytest.raises(ValueError, match="unknown visibility 'user'"):
        apps.link(server, "show", VIEW, visibility=["user"])
    assert "_meta" not in server.tools["show"].definition  # nothing half-written
