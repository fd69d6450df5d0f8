"""mcpkit.ext.tasks.wire: the builders make what the ext-tasks schema says, and the checks the
client relies on refuse each way a peer's task can be wrong, naming the field."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.ext.tasks.wire import (
    TERMINAL,
    Task,
    check_create_task_result,
    check_detailed_task,
    check_get_task_result,
    create_task_result,
    detailed_task,
    get_task_result,
    input_responses_param,
    is_create_task_result,
    iso_timestamp,
    listen_task_ids,
    parse_detailed_task,
    task_id_param,
)

TASK = Task("t" * 22, "working", iso_timestamp(0), iso_timestamp(1.5), 60_000)


def test_a_create_task_result_is_flat_and_round_trips() -> None:
    wire = create_task_result(TASK)
    assert wire == {"resultType": "task", "taskId": "t" * 22, "status": "working",
                    "createdAt": "1970-01-01T00:00:00.000Z",
                    "lastUpdatedAt": "1970-01-01T00:00:01.500Z", "ttlMs": 60_000,
                    "pollIntervalMs": 1000}
    assert is_create_task_result(check_create_task_result(wire))
    assert {"completed", "failed", "cancelled"} == TERMINAL


@pytest.mark.parametrize(("change", "named"), [
    ({"requestState": "x"}, "requestState"), ({"ttl": 5}, "ttl"), ({"task": {}}, "task"),
    ({"ttlMs": 1.5}, "ttlMs"), ({"ttlMs": True}, "ttlMs"), ({"pollIntervalMs": -1}, "pollIntervalMs"),
    ({"status": "done"}, "status"), ({"createdAt": "yesterday"}, "createdAt"),
    ({"resultType": "complete"}, "resultType"), ({"taskId": ""}, "taskId"),
])
def test_a_bad_create_task_result_is_refused_by_name(change: dict[str, Any], named: str) -> None:
    with pytest.raises(ValueError, match=named):
        check_create_task_result({**create_task_result(TASK), **change})


def test_a_detailed_task_carries_exactly_its_status_field() -> None:
    done = TASK.with_status("completed", iso_timestamp(2))
    wire = get_task_result(detailed_task(done, result={"content": []}))
    assert check_get_task_result(wire)["result"] == {"content": []}
    assert parse_detailed_task(wire)[1] == {"content": []}
    with pytest.raises(ValueError, match="needs its error"):
        detailed_task(TASK.with_status("failed", iso_timestamp(2)))
    with pytest.raises(ValueError, match="must not carry result"):
        check_detailed_task({**TASK.wire(), "result": {}})
    with pytest.raises(ValueError, match="integer code"):
        check_detailed_task({**TASK.with_status("failed", "1970-01-01T00:00:00Z").wire(),
                             "error": {"code": "x", "message": "m"}})
    with pytest.raises(ValueError, match="requestState"):
        check_get_task_result({**wire, "requestState": "s"})


def test_the_task_methods_params_are_checked() -> None:
    assert task_id_param({"taskId": "abc"}) == "abc"
    with pytest.raises(ValueError, match="taskId"):
        task_id_param({"taskId": 5})
    with pytest.raises(ValueError, match="inputResponses"):
        input_responses_param({"inputResponses": ["a"]})
    with pytest.raises(ValueError, match=r"inputResponses\['k'\]"):
        input_responses_param({"inputResponses": {"k": 1}})
    assert listen_task_ids({"taskIds": ["a", "b", "a"]}) == ["a", "b"]
    assert listen_task_ids({"toolsListChanged": True}) is None
    with pytest.raises(ValueError, match="taskIds"):
        listen_task_ids({"taskIds": "a"})
