"""The seam an extension's client half admits its result kind through
(`mcpkit.client.result_kinds`): a kind nobody registered is refused as an unknown one, a
registered kind is admitted by its own check, and the core `Client`, which follows none,
refuses to pass an admitted one off as a result."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import mcpkit.ext.tasks  # noqa: F401  (registers the `task` kind, as mcpkit.Client does)
from mcpkit.client import Client, ClientOptions
from mcpkit.client.result_kinds import (
    RESULT_KINDS,
    is_extension_kind,
    refuse_unfollowed,
    register_result_kind,
)
from mcpkit.errors import ProtocolViolation

MakeRaw = Callable[..., Client]
TASKS_DECLARED = ClientOptions(probe_timeout=5,
                               extensions={"io.modelcontextprotocol/tasks": {}})


def test_the_tasks_extension_registers_its_kind_and_core_kinds_stay_the_cores() -> None:
    assert "task" in RESULT_KINDS
    for kind in ("complete", "input_required"):
        with pytest.raises(ValueError, match="the core's own"):
            register_result_kind(kind, lambda method, params, what: None)


async def test_a_kind_nobody_registered_is_refused_as_unknown(
        raw_client: MakeRaw, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(RESULT_KINDS, "task")
    client = raw_client("modern", core=True, options=TASKS_DECLARED)
    with pytest.raises(ProtocolViolation, match=r"resultType 'task', which this client does "
                                                r"not know"):
        await client.call_tool("weird_type")


async def test_a_registered_kind_is_admitted_by_its_own_check(
        raw_client: MakeRaw, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, str]] = []

    def admission(method: str, params: Any, what: str) -> None:
        seen.append((method, what))
        raise ProtocolViolation(f"{what}: refused by the extension's check")

    monkeypatch.setitem(RESULT_KINDS, "task", RESULT_KINDS["task"])  # restored after the test
    register_result_kind("task", admission)  # a kind registered again takes the new check
    assert RESULT_KINDS["task"] is admission
    client = raw_client("modern", core=True)
    with pytest.raises(ProtocolViolation, match="refused by the extension's check"):
        await client.call_tool("weird_type")
    assert seen == [("tools/call", "tools/call 'weird_type'")]


async def test_the_core_client_refuses_an_admitted_kind_it_does_not_follow(
        raw_client: MakeRaw) -> None:
    client = raw_client("modern", core=True, options=TASKS_DECLARED)
    assert not hasattr(client, "start_tool")
    with pytest.raises(ProtocolViolation, match=r"which the core client admits but does not "
                                                r"follow; use mcpkit\.Client, which follows it$"):
        await client.call_tool("weird_type")


@pytest.mark.parametrize("kind", [[], {}, ["task"], {"task": 1}, 3, None])
def test_a_result_type_that_is_no_string_is_of_no_registered_kind(kind: Any) -> None:
    # A peer's `"resultType": []` is looked up in no table (a list cannot be): it is an
    # unknown kind, refused as such by the caller, never a TypeError.
    assert "task" in RESULT_KINDS
    assert is_extension_kind({"resultType": kind}) is False
    refuse_unfollowed({"resultType": kind}, "tools/call 'x'")  # not admitted: nothing raised

