"""The method registry (`mcpkit.types.methods.METHODS`) against the official schemas, the server's
routes and the facts other layers derive from it; and the protocol package's import graph."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from helpers.wire import LEGACY, MODERN, SPEC_DIR, spec_available

from mcpkit import Server
from mcpkit.ext.tasks.wire import TaskMethod
from mcpkit.server.dispatch import SERVED_BY
from mcpkit.types.era import LEGACY as LEGACY_ERA
from mcpkit.types.era import MODERN as MODERN_ERA
from mcpkit.types.methods import METHODS, Method, MethodInfo

REVISION_OF = {MODERN_ERA: MODERN, LEGACY_ERA: LEGACY}
PROTOCOL = Path(__file__).resolve().parents[2] / "src" / "mcpkit" / "protocol"


def definitions(revision: str) -> dict[str, object]:
    schema = json.loads((SPEC_DIR / f"schema-{revision}.json").read_text(encoding="utf-8"))
    return schema.get("$defs") or schema["definitions"]


@pytest.mark.skipif(not spec_available(), reason="the official schemas are not available")
@pytest.mark.parametrize("info", METHODS.values(), ids=lambda m: m.name)
def test_each_method_names_its_schema_definitions_in_every_era_it_lists(info: MethodInfo) -> None:
    if info.extension is not None:
        return  # its types are its extension's schema's (tests/ext checks those shapes)
    for era in info.eras:
        defs = definitions(REVISION_OF[era])
        message = defs.get(info.message_type)
        assert message is not None, f"{info.name}: no {info.message_type} in {era}"
        assert message["properties"]["method"]["const"] == info.name  # type: ignore[index]
        if info.result_type is not None:
            assert info.result_type in defs, f"{info.name}: no {info.result_type} in {era}"


def test_every_method_constant_is_a_row_and_every_row_a_constant() -> None:
    names = {v for k, v in vars(Method).items() if not k.startswith("_")}
    added = {v for k, v in vars(TaskMethod).items() if not k.startswith("_")}
    assert not names & added  # the core table names no task method
    assert names | added == set(METHODS)
    assert all(type(name) is str for name in names)  # plain strings: JSON keys, fast compares


def test_a_server_routes_exactly_the_modern_requests_a_client_sends() -> None:
    wanted = {n for n, m in METHODS.items()
              if m.is_request and m.by_client and m.modern and m.extension is None}
    assert set(Server("registry").routes) == wanted == set(SERVED_BY)


def test_only_requests_with_a_named_target_may_ask_or_mirror_a_name() -> None:
    asking = {n: m.asks for n, m in METHODS.items() if m.asks is not None}
    assert asking == {Method.TOOLS_CALL: "tool", Method.PROMPTS_GET: "prompt",
                      Method.RESOURCES_READ: "resource"}
    named = {n: m.mcp_name for n, m in METHODS.items() if m.mcp_name is not None}
    assert set(named) == set(asking) | {TaskMethod.GET, TaskMethod.UPDATE, TaskMethod.CANCEL}
    assert {named[m] for m in (TaskMethod.GET, TaskMethod.UPDATE, TaskMethod.CANCEL)} == {
        "taskId"}


def test_the_tasks_methods_belong_to_the_tasks_extension() -> None:
    from mcpkit.protocol.extensions import TASKS

    owned = {n for n, m in METHODS.items() if m.extension == TASKS}
    assert owned == {TaskMethod.GET, TaskMethod.UPDATE, TaskMethod.CANCEL,
                     TaskMethod.NOTIFICATION}
    assert "tasks/result" not in METHODS and "tasks/list" not in METHODS


def test_the_skills_methods_belong_to_the_skills_extension_and_nothing_else_is_owned() -> None:
    from mcpkit.protocol.extensions import SKILLS, TASKS

    skills = {n for n, m in METHODS.items() if m.extension == SKILLS}
    assert skills == {Method.SKILLS_LIST, Method.SKILLS_GET, Method.RESOURCES_DIRECTORY_READ}
    assert all(METHODS[n].is_request and METHODS[n].by_client for n in skills)
    owners = {m.extension for m in METHODS.values() if m.extension is not None}
    assert owners == {TASKS, SKILLS}


def test_the_requests_only_the_initialize_era_has() -> None:
    legacy_only = {n for n, m in METHODS.items() if m.is_request and m.by_client and not m.modern}
    assert legacy_only == {Method.INITIALIZE, Method.PING, Method.SET_LEVEL, Method.SUBSCRIBE,
                           Method.UNSUBSCRIBE}
    assert {n for n, m in METHODS.items() if m.stateful} == {
        Method.SET_LEVEL, Method.SUBSCRIBE, Method.UNSUBSCRIBE}


def _protocol_imports(path: Path) -> set[str]:
    """The protocol modules `path` imports, those imported only for type checking included."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            parts = node.module.split(".")
            if parts[:2] == ["mcpkit", "protocol"] and len(parts) > 2:
                found.add(parts[2])
    return found


def test_the_protocol_modules_import_each_other_without_a_circle() -> None:
    graph = {p.stem: _protocol_imports(p) for p in PROTOCOL.glob("*.py")}
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        assert module not in path, f"import circle: {' -> '.join((*path, module))}"
        if module in done:
            return
        for target in graph.get(module, ()):
            visit(target, (*path, module))
        done.add(module)

    for module in graph:
        visit(module, ())


def test_an_extensions_rows_join_the_table_once_and_a_taken_name_is_refused() -> None:
    from mcpkit.types.methods import MODERN_ONLY, add_rows

    row = METHODS[TaskMethod.GET]
    add_rows(row)  # the same row again: the module that adds it imported twice
    assert METHODS[TaskMethod.GET] is row
    with pytest.raises(ValueError, match="'tools/call' has a row already, of the core protocol"):
        add_rows(MethodInfo(Method.TOOLS_CALL, "X", "Y", MODERN_ONLY, "client", extension="a/b"))
    with pytest.raises(ValueError, match="names the extension that defines it"):
        add_rows(MethodInfo("x/new", "X", "Y", MODERN_ONLY, "client"))
    assert "x/new" not in METHODS
