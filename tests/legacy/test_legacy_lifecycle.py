"""The lifecycle of a 2025-11-25 HTTP session (`mcpkit.legacy.lifecycle`), with no event loop:
its phases, and what each notification changes."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.legacy.lifecycle import NotificationEffect, Phase, on_notification, phase_of
from mcpkit.legacy.session import LegacyState
from mcpkit.protocol.codec import Notification
from mcpkit.types.methods import Method


def _state(initialized: bool = False) -> LegacyState:
    return LegacyState("2025-11-25", {}, None, initialized=initialized)


def _note(method: str, params: dict[str, Any] | None = None) -> Notification:
    return Notification(method, params)


def test_a_session_the_store_does_not_have_is_gone() -> None:
    assert phase_of(None) is Phase.GONE


def test_a_session_is_opened_until_the_client_says_initialized() -> None:
    state = _state()
    assert phase_of(state) is Phase.OPENED
    effect = on_notification(state, _note(Method.INITIALIZED))
    assert effect == NotificationEffect(save=True)
    assert phase_of(state) is Phase.READY


def test_a_repeated_initialized_is_saved_again_and_stays_ready() -> None:
    state = _state(initialized=True)
    assert on_notification(state, _note(Method.INITIALIZED)).save
    assert phase_of(state) is Phase.READY


@pytest.mark.parametrize("request_id", ["a-1", 7, 0])
def test_cancelled_names_the_request_to_cancel(request_id: str | int) -> None:
    state = _state(initialized=True)
    effect = on_notification(state, _note(Method.CANCELLED, {"requestId": request_id}))
    assert effect == NotificationEffect(cancel=request_id)


@pytest.mark.parametrize("raw", [1.0, True, [1], {"id": 1}])
def test_cancelled_with_an_id_that_names_no_request_cancels_nothing(raw: Any) -> None:
    effect = on_notification(_state(), _note(Method.CANCELLED, {"requestId": raw}))
    assert effect.cancel is None
    assert not effect.save
    assert effect.unnamed is not None
    assert type(raw).__name__ in effect.unnamed


@pytest.mark.parametrize("params", [None, {}, {"reason": "bored"}])
def test_cancelled_without_a_request_id_does_nothing(params: dict[str, Any] | None) -> None:
    assert on_notification(_state(), _note(Method.CANCELLED, params)) == NotificationEffect()


@pytest.mark.parametrize("method", [Method.ROOTS_LIST_CHANGED, "notifications/unknown"])
def test_other_notifications_change_nothing(method: str) -> None:
    state = _state()
    assert on_notification(state, _note(method)) == NotificationEffect()
    assert phase_of(state) is Phase.OPENED
