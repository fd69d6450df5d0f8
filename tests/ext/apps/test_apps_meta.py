"""The `_meta.ui` shapes of MCP Apps, built and checked without a server: every mistake is
refused with a message naming the view or tool and what to write instead."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.ext.apps import Csp, declares_views, tool_ui, view_ui
from mcpkit.ext.apps.ui_meta import MIME_TYPE, check_ui_uri


def test_a_view_asking_for_nothing_has_an_empty_ui() -> None:
    assert view_ui() == {}


def test_every_part_of_a_view_ui_in_its_wire_spelling() -> None:
    ui = view_ui(
        csp=Csp(connect_domains=["https://api.example.com", "wss://live.example.com:8443"],
                resource_domains=["https://*.cdn.example.com"],
                frame_domains=["https://www.youtube.com"],
                base_uri_domains=["https://base.example.com"]),
        permissions=["camera", "clipboardWrite"], domain="abc123.host.example",
        prefers_border=False)
    assert ui == {
        "csp": {"connectDomains": ["https://api.example.com", "wss://live.example.com:8443"],
                "resourceDomains": ["https://*.cdn.example.com"],
                "frameDomains": ["https://www.youtube.com"],
                "baseUriDomains": ["https://base.example.com"]},
        "permissions": {"camera": {}, "clipboardWrite": {}},
        "domain": "abc123.host.example",
        "prefersBorder": False,
    }


def test_empty_csp_lists_are_left_out_and_repeats_kept_once() -> None:
    csp = Csp(connect_domains=["https://a.example", "https://a.example"])
    assert view_ui(csp=csp) == {"csp": {"connectDomains": ["https://a.example"]}}
    assert view_ui(csp=Csp()) == {}


@pytest.mark.parametrize(("entry", "says"), [
    ("*", "CSP keyword or scheme"),
    ("'self'", "CSP keyword or scheme"),
    ("'unsafe-eval'", "CSP keyword or scheme"),
    ("data:", "CSP keyword or scheme"),
    ("https:", "CSP keyword or scheme"),
    ("https://api.example.com/v1", "drop the path"),
    ("https://api.example.com/", "drop the path"),
    ("api.example.com", "scheme://host[:port]"),
    ("https://*", "not an origin"),
    ("https://a.*.example.com", "not an origin"),
    ("ftp://files.example.com", "uses the scheme 'ftp'"),
    ("https://api.example.com:70000", "outside 1-65535"),
])
def test_a_csp_entry_that_is_not_an_origin_is_refused(entry: str, says: str) -> None:
    with pytest.raises(ValueError, match="connectDomains") as caught:
        view_ui(csp=Csp(connect_domains=[entry]), where="MCP App view 'ui://a/b'")
    assert says in str(caught.value) and "ui://a/b" in str(caught.value)


def test_websocket_origins_are_for_connect_domains_only() -> None:
    assert view_ui(csp=Csp(connect_domains=["ws://127.0.0.1:9000"]))
    with pytest.raises(ValueError, match="resourceDomains takes http or https"):
        view_ui(csp=Csp(resource_domains=["wss://cdn.example.com"]))


@pytest.mark.parametrize("bad", ["https://api.example.com", 7])
def test_a_csp_list_must_be_a_list_of_strings(bad: Any) -> None:
    with pytest.raises(TypeError, match="frameDomains"):
        view_ui(csp=Csp(frame_domains=bad if isinstance(bad, str) else [bad]))


def test_csp_must_be_a_csp() -> None:
    with pytest.raises(TypeError, match=r"Csp\(connect_domains"):
        view_ui(csp={"connectDomains": []})  # type: ignore[arg-type]


@pytest.mark.parametrize(("name", "hint"), [
    ("clipboard-write", "did you mean 'clipboardWrite'"),
    ("usb", "knows camera, microphone, geolocation, clipboardWrite"),
])
def test_an_unknown_permission_is_refused(name: str, hint: str) -> None:
    with pytest.raises(ValueError, match=f"unknown permission '{name}'") as caught:
        view_ui(permissions=[name])
    assert hint in str(caught.value)


def test_permissions_are_a_list_not_one_name() -> None:
    with pytest.raises(TypeError, match="list of names"):
        view_ui(permissions="camera")


@pytest.mark.parametrize("domain", ["", "has space.example"])
def test_a_domain_is_a_host_name(domain: str) -> None:
    with pytest.raises(ValueError, match="domain"):
        view_ui(domain=domain)


def test_prefers_border_is_a_boolean() -> None:
    with pytest.raises(TypeError, match="prefers_border"):
        view_ui(prefers_border="yes")  # type: ignore[arg-type]


def test_a_tool_ui_defaults_to_both_and_orders_visibility() -> None:
    assert tool_ui("ui://cal/week") == {"resourceUri": "ui://cal/week",
                                        "visibility": ["model", "app"]}
    assert tool_ui("ui://cal/week", ["app", "model"])["visibility"] == ["model", "app"]
    assert tool_ui("ui://cal/week", ["app"])["visibility"] == ["app"]


@pytest.mark.parametrize(("visibility", "error", "says"), [
    ([], ValueError, "visibility is empty"),
    (["agent"], ValueError, "unknown visibility 'agent'"),
    ("app", TypeError, "a list such as"),
])
def test_a_bad_visibility_is_refused(visibility: Any, error: type[Exception], says: str) -> None:
    with pytest.raises(error, match=says):
        tool_ui("ui://cal/week", visibility, where="tool 'x'")


@pytest.mark.parametrize(("uri", "says"), [
    ("https://cal/week", "does not use the ui:// scheme"),
    ("ui://", "empty after ui://"),
    ("ui://cal/my week", "whitespace"),
    ("ui://cal/{day}", "template variables"),
])
def test_a_view_uri_must_be_one_ui_uri(uri: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        check_ui_uri(uri)


def test_a_view_uri_must_be_a_string() -> None:
    with pytest.raises(TypeError, match="string"):
        check_ui_uri(None)


@pytest.mark.parametrize(("settings", "shows"), [
    ({"mimeTypes": [MIME_TYPE]}, True),
    ({"mimeTypes": ["text/html", MIME_TYPE]}, True),
    ({"mimeTypes": ["text/uri-list"]}, False),
    ({"mimeTypes": MIME_TYPE}, False),
    ({}, False),
    (None, False),
])
def test_a_host_shows_views_only_when_it_names_their_mime_type(
        settings: dict[str, Any] | None, shows: bool) -> None:
    assert declares_views(settings) is shows
