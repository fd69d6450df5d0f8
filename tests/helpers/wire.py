"""Validation of every message our code sends against the official JSON Schema of its revision.

The schemas are read from MCPKIT_SPEC_DIR (default: ../shared/spec beside the repository).
Results are checked against the typed result of the method they answer, as the conformance
harness does, and the whole message against JSONRPCMessage.

This module is also the pytest plugin that keeps a run without the schemas from passing
quietly (tests/conftest.py loads its hooks): under CI (where every real part is required,
tests/helpers/real_parts.py) a missing spec folder stops the run before any test, elsewhere the run goes on and its summary says how
many schema checks were made, so a run whose checks were all off cannot pass for a checked one.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

import pytest

from mcpkit.types.methods import METHODS

ROOT = Path(__file__).resolve().parents[2]
SPEC_DIR = Path(os.environ.get("MCPKIT_SPEC_DIR", ROOT.parent / "shared" / "spec"))
MODERN = "2026-07-28"
LEGACY = "2025-11-25"

RESULT_TYPES = {
    name: m.result_type for name, m in METHODS.items()
    if m.result_type is not None and m.by_client
}
"""The result type of each request a client sends (both eras), from mcpkit's method registry."""
ERROR_TYPES = {
    -32020: "HeaderMismatchError",
    -32021: "MissingRequiredClientCapabilityError",
    -32022: "UnsupportedProtocolVersionError",
}
NOTIFICATION_TYPES = {
    "notifications/progress": "ProgressNotification",
    "notifications/message": "LoggingMessageNotification",
    "notifications/cancelled": "CancelledNotification",
    "notifications/tools/list_changed": "ToolListChangedNotification",
    "notifications/prompts/list_changed": "PromptListChangedNotification",
    "notifications/resources/list_changed": "ResourceListChangedNotification",
    "notifications/resources/updated": "ResourceUpdatedNotification",
    "notifications/subscriptions/acknowledged": "SubscriptionsAcknowledgedNotification",
}
REQUEST_TYPES = {
    name: m.message_type for name, m in METHODS.items()
    if m.is_request and m.sender != "client"
}
"""The requests a server sends (as real requests in 2025-11-25, input requests in 2026-07-28)."""
CORE_METHODS = frozenset(name for name, m in METHODS.items() if m.extension is None)
"""The methods the core schema defines; an extension's are checked for their envelope only."""


def _shape(checker: Any, value: Any, what: str) -> None:
    """An extension's own shape check, failing as the schema checks do (AssertionError)."""
    try:
        checker(value)
    except ValueError as exc:
        raise AssertionError(f"not a valid {what}: {exc}\n{json.dumps(value)[:2000]}") from None


def _create_task_result(result: dict[str, Any]) -> None:
    from mcpkit.ext.tasks.wire import check_create_task_result

    _shape(check_create_task_result, result, "CreateTaskResult")


def _get_task_result(result: dict[str, Any]) -> None:
    from mcpkit.ext.tasks.wire import check_get_task_result

    _shape(check_get_task_result, result, "GetTaskResult")


def _acknowledgement(result: dict[str, Any]) -> None:
    rest = {k: v for k, v in result.items() if k != "_meta"}
    assert rest == {"resultType": "complete"}, f"not an empty acknowledgement: {result}"


def _cacheable(result: dict[str, Any], method: str) -> None:
    assert result.get("resultType") == "complete", f"{method}: resultType is not complete"
    assert type(result.get("ttlMs")) is int and result["ttlMs"] >= 0, f"{method}: no ttlMs"
    assert result.get("cacheScope") in ("public", "private"), f"{method}: no cacheScope"


def _skills_list_result(result: dict[str, Any]) -> None:
    from mcpkit.ext.skills.entries import check_entry

    _cacheable(result, "skills/list")
    assert isinstance(result.get("skills"), list), "skills/list: no skills list"
    for entry in result["skills"]:
        _shape(check_entry, entry, "skill entry")


def _skills_get_result(result: dict[str, Any]) -> None:
    from mcpkit.ext.skills.entries import check_entry

    _cacheable(result, "skills/get")
    assert "nextCursor" not in result, "skills/get: a single entry carries no cursor"
    _shape(check_entry, result.get("skill"), "skill entry")


def _directory_result(result: dict[str, Any]) -> None:
    assert result.get("resultType") == "complete", "resources/directory/read: not complete"
    assert isinstance(result.get("resources"), list), "resources/directory/read: no resources"
    for resource in result["resources"]:
        check(MODERN, "Resource", resource)


EXTENSION_RESULTS = {
    "tasks/get": _get_task_result,
    "tasks/update": _acknowledgement,
    "tasks/cancel": _acknowledgement,
    # The Skills extension's (ext-skills' stable text; entries by mcpkit.ext.skills' checks).
    "skills/list": _skills_list_result,
    "skills/get": _skills_get_result,
    "resources/directory/read": _directory_result,
}
"""The results of extension methods, by method, checked by their extension's own shapes."""


def meta(**extra: Any) -> dict[str, Any]:
    """The `_meta` of a modern test request: version, no capabilities, a client name."""
    out: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "1.0"},
    }
    out.update(extra)
    return out


def spec_available() -> bool:
    """Both revisions' schemas are there: a folder holding only one would check half the wire."""
    return all((SPEC_DIR / f"schema-{r}.json").is_file() for r in (MODERN, LEGACY))


SPEC_MISSING = (
    f"the official MCP schemas were not found in {SPEC_DIR}; "
    f"set MCPKIT_SPEC_DIR to a folder holding schema-{MODERN}.json and schema-{LEGACY}.json"
)


def under_ci() -> bool:
    """Where every real part is required (CI, tests/helpers/real_parts.py), a run must check, not skip,
    the wire: the official schemas are one of the parts."""
    from helpers.real_parts import required  # imported late: pytest loads it as a plugin first

    return required()


class _Tally:
    """How many values `check` validated in this process (the run's summary reports it)."""

    checked = 0


def checked_count() -> int:
    return _Tally.checked


@functools.cache
def _schema(revision: str) -> dict[str, Any]:
    with open(SPEC_DIR / f"schema-{revision}.json", encoding="utf-8") as f:
        return json.load(f)  # type: ignore[no-any-return]


@functools.cache
def validator(revision: str, definition: str) -> Any:
    from jsonschema import Draft202012Validator

    schema = _schema(revision)
    if definition not in schema["$defs"]:
        raise KeyError(f"{definition} is not defined in the {revision} schema")
    return Draft202012Validator(
        {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{definition}"}
    )


def _unchecked() -> bool:
    """True when the schemas are missing and a check may pass without them (not under CI).

    Under CI the run is stopped at start (`pytest_configure`); this also fails each check, for
    code that imports this module outside such a run (a peer process, another plugin order)."""
    if spec_available():
        return False
    if under_ci():
        raise AssertionError(f"{SPEC_MISSING} (CI is set: schema checks cannot be switched off)")
    return True


def check(revision: str, definition: str, value: Any) -> None:
    """Validate `value` as `definition`; without the schemas (see SPEC_MISSING) it checks nothing,
    which the run's summary shows as a count of 0, and under CI it fails instead."""
    if _unchecked():
        return
    errors = sorted(validator(revision, definition).iter_errors(value), key=lambda e: e.path)
    _Tally.checked += 1
    if errors:
        detail = "; ".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:5])
        raise AssertionError(f"not a valid {revision} {definition}: {detail}\n{json.dumps(value)[:2000]}")


def check_server_message(revision: str, message: dict[str, Any], method: str | None) -> None:
    """Validate one message a server sent; `method` is that of the request it answers."""
    if _unchecked():
        return
    check(revision, "JSONRPCMessage", message)
    if "result" in message:
        result = message["result"]
        if result.get("resultType") == "input_required":
            check(revision, "InputRequiredResult", result)
        elif method in EXTENSION_RESULTS or result.get("resultType") == "task":
            # The Tasks extension's results: the core schema knows their envelope only, so
            # their shapes are held to mcpkit.ext.tasks.wire' checks of the ext-tasks schema.
            check(revision, "Result", result)
            EXTENSION_RESULTS.get(method if result.get("resultType") != "task" else "",
                                  _create_task_result)(result)
        elif method in RESULT_TYPES:
            check(revision, RESULT_TYPES[method], result)
    elif "error" in message:
        name = ERROR_TYPES.get(message["error"]["code"])
        if name and revision == MODERN:
            check(revision, name, message)
    elif "id" in message:
        check(revision, REQUEST_TYPES[message["method"]], message)
    elif message["method"] == "notifications/tasks":
        from mcpkit.ext.tasks.wire import check_detailed_task

        check(revision, "JSONRPCNotification", message)
        _shape(check_detailed_task, message["params"], "TaskStatusNotification params")
    else:
        name = NOTIFICATION_TYPES.get(message["method"])
        if name is None:
            raise AssertionError(f"unexpected notification {message['method']}")
        check(revision, name, message)


def check_client_message(revision: str, message: dict[str, Any]) -> None:
    """Validate one message a client sent (requests, notifications, responses)."""
    if _unchecked():
        return
    check(revision, "JSONRPCMessage", message)
    if "method" in message and "id" in message:
        if message["method"] in CORE_METHODS:
            check(revision, "ClientRequest", message)
        else:
            # An extension's method: the core schema knows only its envelope (its own schema,
            # if it has one, is the extension's), so the request and its `_meta` are checked.
            check(revision, "Request", message)
            if revision == MODERN:
                check(revision, "RequestParams", message.get("params"))
    elif "method" in message:
        check(revision, "ClientNotification", message)


# -- the pytest plugin ---------------------------------------------------------------------------

_WORKER_KEY = "mcpkit_schema_checks"
_worker_counts = pytest.StashKey[list[int]]()


def pytest_configure(config: pytest.Config) -> None:
    """Under CI, a run without the schemas is refused before it starts (exit status 4)."""
    config.stash[_worker_counts] = []
    if under_ci() and not spec_available():
        raise pytest.UsageError(
            f"{SPEC_MISSING}. CI is set, and a CI run must not pass with its schema checks off."
        )


def pytest_report_header(config: pytest.Config) -> str:
    """Where the schemas come from, or a warning that they were not found."""
    if spec_available():
        return f"official MCP schemas: {SPEC_DIR}"
    return f"WARNING: {SPEC_MISSING}; wire messages are not schema-checked"


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A pytest-xdist worker hands its count to the controller, which prints the summary."""
    output = getattr(session.config, "workeroutput", None)
    if output is not None:
        output[_WORKER_KEY] = checked_count()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """pytest-xdist, on the controller: add up a finished worker's schema checks."""
    counts = node.config.stash.get(_worker_counts, None)
    if counts is not None:
        counts.append(int(getattr(node, "workeroutput", {}).get(_WORKER_KEY, 0)))


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Say how many schema checks were made, so a run with its checks off is visible."""
    total = checked_count() + sum(config.stash.get(_worker_counts, []))
    if spec_available():
        checks = "1 schema check" if total == 1 else f"{total} schema checks"
        terminalreporter.write_line(
            f"{checks} of wire messages against the official schemas in {SPEC_DIR}"
        )
    else:
        terminalreporter.write_line(f"0 schema checks of wire messages: {SPEC_MISSING}", yellow=True)
