"""`TaskOptions` refuses a value it cannot run with when it is made, naming the option, the
rule and the value, and takes every value at the edge of each rule; a tool's `resumable`
option reads as given."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.ext.tasks import TaskOptions, enable_tasks
from mcpkit.ext.tasks.options import is_resumable
from mcpkit.server.server import Server

SECONDS = ("sync_budget_s", "heartbeat_s", "lease_s")
COUNTS = ("poll_interval_ms", "max_running", "max_result_bytes", "max_attempts",
          "max_active_per_principal", "max_stored_per_principal",
          "max_stored_bytes_per_principal")


@pytest.mark.parametrize("name", SECONDS)
@pytest.mark.parametrize("value", [-0.5, -1, True, "5", None])
def test_a_duration_is_a_non_negative_number(name: str, value: Any) -> None:
    fields: dict[str, Any] = {name: value}
    if name != "lease_s":
        fields["lease_s"] = 100.0
    with pytest.raises(ValueError) as refused:
        TaskOptions(**fields)
    assert str(refused.value) == (f"TaskOptions.{name} must be a non-negative number of "
                                  f"seconds, not {value!r}")


def test_durations_of_zero_and_of_whole_seconds_are_taken() -> None:
    made = TaskOptions(sync_budget_s=0, heartbeat_s=0, lease_s=1)
    assert (made.sync_budget_s, made.heartbeat_s, made.lease_s) == (0, 0, 1)


@pytest.mark.parametrize("name", COUNTS)
@pytest.mark.parametrize("value", [0, -3, 1.5, True, "10", None])
def test_a_count_is_a_positive_integer(name: str, value: Any) -> None:
    with pytest.raises(ValueError) as refused:
        TaskOptions(**{name: value})
    assert str(refused.value) == f"TaskOptions.{name} must be a positive integer, not {value!r}"


@pytest.mark.parametrize("name", COUNTS)
def test_a_count_of_one_is_taken(name: str) -> None:
    assert getattr(TaskOptions(**{name: 1}), name) == 1


@pytest.mark.parametrize("value", [0, -1.0, True, "900"])
def test_the_input_wait_is_seconds_above_zero_or_none(value: Any) -> None:
    with pytest.raises(ValueError) as refused:
        TaskOptions(input_wait_s=value)
    assert str(refused.value) == ("TaskOptions.input_wait_s must be seconds above zero or "
                                  f"None, not {value!r}")
    assert TaskOptions(input_wait_s=None).input_wait_s is None
    assert TaskOptions(input_wait_s=0.001).input_wait_s == 0.001


@pytest.mark.parametrize("value", [0, -5, 2.5, False, "60000"])
def test_the_ttl_is_whole_milliseconds_above_zero_or_none(value: Any) -> None:
    with pytest.raises(ValueError) as refused:
        TaskOptions(ttl_ms=value)
    assert str(refused.value) == ("TaskOptions.ttl_ms must be a positive integer of "
                                  f"milliseconds or None, not {value!r}")
    assert TaskOptions(ttl_ms=None).ttl_ms is None
    assert TaskOptions(ttl_ms=1).ttl_ms == 1


@pytest.mark.parametrize(("lease", "heartbeat"), [(5.0, 5.0), (4.0, 5.0)])
def test_a_lease_no_longer_than_the_heartbeat_is_refused(lease: float,
                                                         heartbeat: float) -> None:
    with pytest.raises(ValueError) as refused:
        TaskOptions(lease_s=lease, heartbeat_s=heartbeat)
    assert str(refused.value) == (
        f"TaskOptions.lease_s ({lease}) must be longer than heartbeat_s ({heartbeat}), or "
        "every lease lapses between two heartbeats")
    assert TaskOptions(lease_s=5.001, heartbeat_s=5.0).lease_s == 5.001


def test_a_tool_is_resumable_only_when_it_says_so() -> None:
    server = Server("resumable")
    enable_tasks(server, TaskOptions(store="memory:"))
    server.add_tool(lambda: "x", "plain", task="optional")  # type: ignore[call-arg]
    server.add_tool(lambda: "x", "again", task="optional", resumable=True)  # type: ignore[call-arg]
    assert is_resumable(server.tools["again"]) is True
    assert is_resumable(server.tools["plain"]) is False
