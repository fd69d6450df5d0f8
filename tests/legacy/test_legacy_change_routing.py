"""Which changes reach which 2025-11-25 session (`mcpkit.legacy.shapes.change_notification`,
asked by `LegacySession.forward` for each session's GET stream), with no event loop."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.legacy.session import LegacySession, LegacyState
from mcpkit.legacy.shapes import change_notification
from mcpkit.server.subscriptions import Change
from mcpkit.types.methods import Method

_ALL: dict[str, Any] = {
    "tools": {"listChanged": True},
    "prompts": {"listChanged": True},
    "resources": {"listChanged": True, "subscribe": True},
}


@pytest.mark.parametrize("kind, method", [
    ("tools", Method.TOOLS_LIST_CHANGED),
    ("prompts", Method.PROMPTS_LIST_CHANGED),
    ("resources", Method.RESOURCES_LIST_CHANGED),
])
def test_a_list_change_goes_to_every_session(kind: str, method: str) -> None:
    assert change_notification([], Change(kind), _ALL) == {"jsonrpc": "2.0", "method": method}


@pytest.mark.parametrize("kind", ["tools", "prompts", "resources"])
def test_a_list_change_needs_list_changed_declared(kind: str) -> None:
    caps = {k: {**v, "listChanged": False} for k, v in _ALL.items()}
    assert change_notification([], Change(kind), caps) is None
    assert change_notification([], Change(kind), {}) is None


def test_an_unknown_kind_of_change_goes_nowhere() -> None:
    assert change_notification(["x://"], Change("skills"), _ALL) is None


@pytest.mark.parametrize("subscribed, uri", [
    ("file:///a.txt", "file:///a.txt"),
    ("file:///dir", "file:///dir/a.txt"),
    ("file:///dir/", "file:///dir/sub/a.txt"),
])
def test_a_resource_update_goes_to_sessions_subscribed_to_it_or_a_parent(
        subscribed: str, uri: str) -> None:
    assert change_notification([subscribed], Change("resource", uri), _ALL) == {
        "jsonrpc": "2.0", "method": Method.RESOURCE_UPDATED, "params": {"uri": uri}}


@pytest.mark.parametrize("subscribed, uri", [
    ("file:///dir", "file:///directory/a.txt"),
    ("file:///a.txt", "file:///b.txt"),
])
def test_a_resource_update_skips_sessions_not_subscribed(subscribed: str, uri: str) -> None:
    assert change_notification([subscribed], Change("resource", uri), _ALL) is None
    assert change_notification([], Change("resource", uri), _ALL) is None


def test_a_resource_update_needs_subscribe_declared_and_a_uri() -> None:
    caps = {**_ALL, "resources": {"listChanged": True}}
    assert change_notification(["a://x"], Change("resource", "a://x"), caps) is None
    assert change_notification(["a://x"], Change("resource", None), _ALL) is None


def test_a_session_forwards_by_its_own_subscriptions() -> None:
    state = LegacyState("2025-11-25", {}, None, subscriptions=["a://x"])
    session = LegacySession(object(), state)
    assert session.forward(Change("resource", "a://x"), _ALL) is not None
    assert session.forward(Change("resource", "a://y"), _ALL) is None
