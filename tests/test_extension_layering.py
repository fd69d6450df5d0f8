"""The Tasks extension owns its code and builds on public seams only, checked by walking the
source: `mcpkit.ext.tasks` reads no private name of the core and reaches the server only through
`mcpkit.server.extending` (and the `Server` class), and the core's modules do not name tasks.

Where the core still names tasks, the module is listed in `CORE_NAMING_TASKS` with what is
left: the list may only shrink (a module that stops naming tasks must leave it, one that starts
fails the test)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "mcpkit"
TASKS = PACKAGE / "ext" / "tasks"

CORE = ("types", "errors", "protocol", "schema", "store", "tracing", "server", "client",
        "legacy", "auth", "transports")
"""The floors below the extensions (the command line, `app`, the proxy and the tools above
them may name what they offer)."""

SERVER_SEAMS = {"mcpkit.server.extending", "mcpkit.server.options", "mcpkit.server.server"}
"""What of the server layer the extension imports: the extension API, the `Server` class and
`ServerOptions` (where its options are kept)."""

CORE_NAMING_TASKS = {
    # The official extensions' identifiers, Tasks' among Skills' and Apps'.
    "protocol/extensions.py",
}

_TASK_MODULE = re.compile(r"(^|\.)(tasks|task_runner|task_watch)(\.|$)")
_TASK_NAMES = frozenset({"task_runner", "TaskOptions", "TaskRunner", "TaskHandle", "TaskWatch",
                         "TaskStore", "TaskRecord", "TaskRuntime", "enable_tasks", "admit_task"})
_TASK_STRINGS = re.compile(r"^(tasks/|notifications/tasks$|io\.modelcontextprotocol/tasks$)")


def _sources(root: Path) -> list[Path]:
    return sorted(root.rglob("*.py"))


def _tasks_named(path: Path) -> list[str]:
    """Where `path` names the Tasks extension: a tasks module, a Tasks class or function, a
    task method's name or the extension's id."""
    found: list[str] = []
    if _TASK_MODULE.search(path.stem):
        found.append(f"is a module of tasks ({path.name})")
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.ImportFrom) and node.module and _TASK_MODULE.search(node.module):
            found.append(f"{line}: imports {node.module}")
        elif isinstance(node, ast.Import):
            found += [f"{line}: imports {a.name}" for a in node.names if _TASK_MODULE.search(a.name)]
        elif isinstance(node, ast.Name) and node.id in _TASK_NAMES:
            found.append(f"{line}: {node.id}")
        elif isinstance(node, ast.Attribute) and (
                node.attr in _TASK_NAMES or node.attr.startswith("TASKS_")):
            found.append(f"{line}: .{node.attr}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                _TASK_STRINGS.match(node.value):
            found.append(f"{line}: {node.value!r}")
    return found


def test_no_core_module_names_tasks_beyond_the_list_and_the_list_is_exact() -> None:
    naming = {str(p.relative_to(PACKAGE)): _tasks_named(p)
              for floor in CORE for p in _sources(PACKAGE / floor)
              if (PACKAGE / floor).is_dir()} | {
        f"{floor}.py": _tasks_named(PACKAGE / f"{floor}.py")
        for floor in CORE if (PACKAGE / f"{floor}.py").is_file()}
    naming = {module: where for module, where in naming.items() if where}
    new = {module: where for module, where in naming.items() if module not in CORE_NAMING_TASKS}
    assert not new, f"core modules that name the Tasks extension: {new}"
    gone = CORE_NAMING_TASKS - naming.keys()
    assert not gone, f"these no longer name tasks: take them off CORE_NAMING_TASKS: {gone}"


NOT_THE_CORES = frozenset({"_option_string_actions"})
"""Private names the extension reads of the standard library's objects (argparse's table of a
parser's options, for the command line's `--` handling), not of mcpkit's."""


def _defined_privates(paths: list[Path]) -> set[str]:
    """The `_names` the extension defines itself: functions, classes, attributes it assigns,
    slots it declares, module-level names."""
    names: set[str] = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                names.add(node.value)  # __slots__ entries
    return {n for n in names if n.startswith("_")}


def test_the_tasks_extension_reads_no_private_name_of_the_core() -> None:
    paths = _sources(TASKS)
    own = _defined_privates(paths)
    found: list[str] = []
    for path in paths:
        where = path.relative_to(PACKAGE)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and \
                    node.module.startswith("mcpkit") and \
                    not node.module.startswith("mcpkit.ext.tasks"):
                found += [f"{where}:{node.lineno} imports {node.module}.{a.name}"
                          for a in node.names if a.name.startswith("_")]
            elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and \
                    not node.attr.startswith("__") and node.attr not in own | NOT_THE_CORES:
                found.append(f"{where}:{node.lineno} reads .{node.attr}")
    assert not found, f"private names of the core used by mcpkit.ext.tasks: {found}"


def test_the_tasks_extension_reaches_the_server_only_through_its_seams() -> None:
    found = []
    for path in _sources(TASKS):
        if path.name == "cli.py":
            continue  # the extension's commands sit on the command line's floor
        found.extend(
            f"{path.relative_to(PACKAGE)}:{node.lineno} imports {node.module}"
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.ImportFrom) and node.module
            and node.module.startswith("mcpkit.server") and node.module not in SERVER_SEAMS)
    assert not found, f"import what an extension needs from mcpkit.server.extending: {found}"


def test_the_private_check_would_catch_a_write_of_a_context_private() -> None:
    # The walk above is what guards the seam: a line like the ones the runtime had before
    # (`ctx._notify = ...`) is seen as a private of the core.
    tree = ast.parse("ctx._notify = relay\nctx._round = rnd\n")
    read = [n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)]
    assert set(read) == {"_notify", "_round"}
    assert not {"_notify", "_round"} & _defined_privates(_sources(TASKS))


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_the_tasks_extensions_modules_import_one_way() -> None:
    # Every import counts (module level, inside a function, under TYPE_CHECKING), as in
    # test_layering: the runtime sits on the keeper, the upkeep, the controls and the drain,
    # and none of them reaches back up.
    modules = {_module_name(p): p for p in _sources(TASKS)}
    edges: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module in modules and \
                    node.module != name:
                targets.add(node.module)
        edges[name] = targets
    package = _module_name(TASKS / "__init__.py")
    done: set[str] = set()
    cycles: list[list[str]] = []

    def visit(name: str, path: list[str]) -> None:
        if name in path:
            cycles.append([*path[path.index(name):], name])
            return
        if name in done:
            return
        for target in sorted(edges[name] - {package}):
            visit(target, [*path, name])
        done.add(name)

    for name in sorted(modules):
        visit(name, [])
    assert not cycles, f"import circles in mcpkit.ext.tasks: {cycles}"
