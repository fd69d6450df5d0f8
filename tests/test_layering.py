"""The package's dependency direction, and the I/O-free core, checked by walking the source."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "mcpkit"

# What each layer may import from mcpkit (besides itself). Anything not listed is refused, and
# every import counts: at module level, inside a function, or by name through `import_module`
# (no upward import, not even a lazy one). `app` holds the public `Server`, which adds HTTP
# serving to the core class and so sits above the transports, like `testing` and `cli`.
ALLOWED: dict[str, set[str]] = {
    "_version": set(),
    "types": set(),
    "errors": {"types"},
    "protocol": {"types", "errors"},
    "schema": {"types", "errors", "protocol"},
    "store": {"types", "errors", "protocol"},
    # OpenTelemetry spans beside schema and store: the server, the client and the legacy
    # adapter make theirs through it; not in the I/O-free core (global state, the clock).
    "tracing": {"types", "errors", "protocol", "_version"},
    "server": {"types", "errors", "protocol", "schema", "store", "tracing", "_version"},
    "client": {"types", "errors", "protocol", "schema", "store", "tracing", "_version"},
    "legacy": {"types", "errors", "protocol", "schema", "server", "client", "store", "tracing"},
    "auth": {"types", "errors", "protocol", "store"},
    "ext": {"types", "errors", "protocol", "server", "client", "store"},
    # REST APIs as MCP servers: registers through the public core Server, with the schema
    # floor's compiler; nothing below it knows it exists.
    "openapi": {"types", "errors", "protocol", "schema", "server", "_version"},
    "transports": {"types", "errors", "protocol", "schema", "server", "client", "legacy", "store",
                   "auth", "ext", "tracing", "_version"},
    "app": {"*"},
    # `mcpkit.Client` and `mcpkit.Clients`: the core client plus starting one from an
    # mcpServers entry, which needs the transports' connectors (as `app` adds serving).
    "clients": {"*"},
    "testing": {"*"},
    "cli": {"*"},
    # `mcpkit probe|snapshot|diff`: inspects a server from outside, so it sits with the CLI
    # and may use every layer below (the client's era table, the transports' connectors).
    "probe": {"*"},
    # `mcpkit dev`: the inspector in the browser, a command beside the CLI, built on the public
    # Client, the probe's evidence and token counter, and the CLI's target and sign-in.
    "dev": {"*"},
    # `mcpkit proxy` and `Server.proxy`: serves another server through the public client, the
    # server and the transports' connectors, so it sits at the top with `app`.
    "proxy": {"*"},
    "__init__": {"*"},
    "__main__": {"cli"},
}

# The layers that do no I/O: the protocol core, and the JSON Schema floor above it.
CORE = ("protocol", "schema", "types", "errors")

FORBIDDEN_IN_CORE = {"asyncio", "socket", "subprocess", "threading", "logging", "time", "select",
                     "selectors", "random", "secrets", "os"}


def layer_of(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    if rel.parts[0] == "ext" and rel.parts[-1] == "cli.py":
        return "cli"  # an extension's commands sit on the command line's floor (its hook)
    return rel.parts[0].removesuffix(".py")


def mcpkit_imports(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and str(node.args[0].value).startswith("mcpkit")
        ):
            found.append((node.lineno, str(node.args[0].value)))
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith("mcpkit")]
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.level == 0
            and node.module.startswith("mcpkit")
        ):
            found.append((node.lineno, node.module))
    return found


SOURCES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_down_the_layers(path: Path) -> None:
    layer = layer_of(path)
    allowed = ALLOWED.get(layer)
    assert allowed is not None, f"{layer!r} is not a known layer; add it to ALLOWED"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for lineno, module in mcpkit_imports(tree):
        parts = module.split(".")
        target = "__init__" if len(parts) == 1 else parts[1]
        if target == layer or "*" in allowed:
            continue
        assert target in allowed, (
            f"{path.relative_to(PACKAGE)}:{lineno} imports {module}: "
            f"layer {layer!r} may import only {sorted(allowed)}"
        )


# -- rooms inside a layer ------------------------------------------------------------------------
# Some layers are packages of rooms with rules of their own. A room is the first path part
# under its layer: a package (`transports/stdio`) or a module beside them (`transports/loop`).
# Its row names what it may import: layers (each also allowed to its layer by ALLOWED) and the
# same layer's other rooms ("layer/room"). A layer with a row of its own ("store", "client")
# gives it to every room of that layer without one; in `transports` every room has its row.
_CLIENT = ALLOWED["client"]
ROOMS: dict[str, set[str]] = {
    "transports/__init__": {"*"},  # the public names, each loaded on first use
    "transports/loop": {"protocol"},
    "transports/stream": {"types", "errors", "protocol", "server", "legacy"},
    "transports/memory": {"protocol", "client", "transports/stream"},
    "transports/stdio": {"errors", "protocol", "client", "transports/stream", "transports/loop"},
    "transports/entries": {"client", "transports/stdio", "transports/http_client"},
    "transports/http_client": {"types", "errors", "protocol", "auth", "client/legacy"},
    "transports/oauth": {"types", "errors", "protocol", "auth", "store"},
    # The app: its endpoints, the legacy ones in its table when legacy clients are served, and
    # an authorization proxy's routes when one is configured.
    "transports/http_server": {"types", "errors", "protocol", "server", "store", "store/legacy",
                               "auth", "legacy", "tracing", "transports/loop",
                               "transports/legacy", "transports/auth_proxy"},
    "transports/auth_proxy": {"types", "errors", "protocol", "store", "auth",
                              "transports/http_server", "transports/oauth"},
    "transports/legacy": {"types", "errors", "protocol", "server", "store", "store/legacy",
                          "legacy", "tracing", "transports/http_server"},
    # The store's seams and engines; the era's room makes its stores on a backend's engine.
    "store": {"types", "errors", "protocol"},
    "store/legacy": {"types", "errors", "protocol", "store"},
    "client": _CLIENT | {"client/legacy"},
    "client/legacy": _CLIENT | {"client"},
}


def room_key(layer: str, room: str) -> str | None:
    """The row of `room` in `layer`: its own, else its layer's, else None (no rooms)."""
    return next((k for k in (f"{layer}/{room}", layer) if k in ROOMS), None)


def room_of(path: Path) -> str | None:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return room_key(parts[0], parts[1]) if len(parts) > 1 else None


def _target_room(module: str) -> str:
    parts = module.split(".")[1:]
    if not parts:
        return "__init__"
    return (room_key(parts[0], parts[1]) if len(parts) > 1 else None) or parts[0]


@pytest.mark.parametrize("path", [p for p in SOURCES if layer_of(p) in {k.split("/")[0] for k in ROOMS}],
                         ids=lambda p: str(p.relative_to(PACKAGE)))
def test_each_room_imports_only_what_its_row_names(path: Path) -> None:
    room = room_of(path)
    assert room is not None, (
        f"{path.relative_to(PACKAGE)} is in no room: give it a row in ROOMS")
    allowed = ROOMS[room]
    for lineno, module in mcpkit_imports(ast.parse(path.read_text(encoding="utf-8"))):
        target = _target_room(module)
        if target == room or "*" in allowed:
            continue
        assert target in allowed, (
            f"{path.relative_to(PACKAGE)}:{lineno} imports {module}: room {room!r} may "
            f"import only {sorted(allowed)}")


def test_every_room_row_is_within_its_layer_and_names_known_rooms() -> None:
    rooms = {k for k in ROOMS}
    for room, allowed in ROOMS.items():
        layer = room.split("/")[0]
        for target in allowed - {"*"}:
            if "/" in target:
                assert target in rooms, f"ROOMS[{room!r}] names {target!r}, which has no row"
                target = target.split("/")[0]
            assert target == layer or target in ALLOWED[layer] or "*" in ALLOWED[layer], (
                f"ROOMS[{room!r}] allows {target!r}, which ALLOWED refuses to layer {layer!r}")
    present = {room_of(p) for p in SOURCES}
    stale = sorted(rooms - present)
    assert not stale, f"ROOMS names rooms that hold no module: {stale}"


@pytest.mark.parametrize(
    "path", [p for p in SOURCES if layer_of(p) in CORE],
    ids=lambda p: str(p.relative_to(PACKAGE)),
)
def test_the_core_does_no_io(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        assert not isinstance(node, ast.AsyncFunctionDef | ast.Await), (
            f"{path.name}:{node.lineno}: the I/O-free core is synchronous"
        )
        if isinstance(node, ast.Import):
            names = [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module.split(".")[0]]
        else:
            continue
        bad = set(names) & FORBIDDEN_IN_CORE
        assert not bad, f"{path.name}:{node.lineno} imports {bad}: the core does no I/O"


PURE_LEGACY = (
    "http_session.py", "lifecycle.py", "resumption.py", "session_quota.py", "shapes.py",
    "subscriptions.py")
"""The 2025-11-25 rules held to the core's floor; `legacy/session.py` awaits the server's
dispatch (and logs), so it is not among them."""


@pytest.mark.parametrize("name", PURE_LEGACY)
def test_the_legacy_rules_do_no_io(name: str) -> None:
    test_the_core_does_no_io(PACKAGE / "legacy" / name)


ERRORS = PACKAGE / "errors"


def _base_names(node: ast.ClassDef) -> set[str]:
    return {b.id if isinstance(b, ast.Name) else b.attr
            for b in node.bases if isinstance(b, ast.Name | ast.Attribute)}


def test_every_mcp_error_is_defined_in_the_errors_package() -> None:
    # The tree drawn in mcpkit.errors is the whole tree: a class deriving from MCPError (directly,
    # or through any class that does) is defined in that package and imported where it is raised.
    classes = [(path, node) for path in SOURCES
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.ClassDef)]
    errors = {"MCPError"}
    grown = True
    while grown:
        found = {node.name for _, node in classes if _base_names(node) & errors}
        grown = not found <= errors
        errors |= found
    outside = sorted(
        f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}"
        for path, node in classes
        if node.name in errors and path.parent != ERRORS
    )
    assert not outside, f"define these in mcpkit/errors/ (and draw them in its tree): {outside}"


def test_importing_mcpkit_stays_light() -> None:
    import subprocess
    import sys

    code = (
        "import sys, mcpkit; heavy = [m for m in ('httpx', 'uvicorn', 'cryptography', 'pydantic', "
        "'jsonschema', 'asyncio') if m in sys.modules]; print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"import mcpkit pulled in {out.stdout.strip()}"


def test_a_server_with_plain_types_does_not_import_heavy_dependencies() -> None:
    import subprocess
    import sys

    code = (
        "import sys\nfrom mcpkit import Server\ns = Server('x')\n"
        "@s.tool()\ndef echo(text: str) -> str:\n    return text\n"
        "heavy = [m for m in ('httpx', 'uvicorn', 'cryptography', 'pydantic', 'jsonschema') "
        "if m in sys.modules]\nprint(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"a plain server pulled in {out.stdout.strip()}"


# -- era branches ---------------------------------------------------------------------------------
# The 2025-11-25 era lives in two rooms; everywhere else the package asks an era seam (a
# `ServerSession`, an `EraAdapter`, an `Endpoint`, the HTTP client's session) instead of
# comparing eras. The few places that decide the era are the seams themselves, named here.

ERA_ROOMS = ("legacy", "client/legacy", "transports/legacy", "store/legacy")
"""The 2025-11-25 era, one room per floor that has any of it: the server's adapter
(`mcpkit.legacy`), the client's (`mcpkit.client.legacy`), the era over HTTP
(`mcpkit.transports.legacy`) and what its sessions keep (`mcpkit.store.legacy`)."""

LEGACY_ROOMS = (*ERA_ROOMS, "probe")
"""Where era branches may be: the era's rooms, and `mcpkit.probe`, which judges a server of
either era from outside, so its rules are per era."""

SEAMS: dict[tuple[str, str], str] = {
    ("client/era.py", "_choose"):
        "the probe's decision: no common modern version, but a legacy one listed",
    ("client/era.py", "read_probe"):
        "the probe's decision: what the answer to server/discover says the era is",
    ("client/opening.py", "Opener.open"):
        "ClientOptions.era pins an era: the handshake of that era, no probe",
    ("client/opening.py", "Opener._probe"):
        "the dual-era probe: a remembered era or version, then the probe's outcome",
    ("client/opening.py", "Opener.adapter_for"):
        "picks the connection's EraAdapter, keeping the client's one of the same era",
    ("client/opening.py", "Opener._after_probe"):
        "an initialize after the probe answered with a modern version: the modern era goes on",
    ("client/probing.py", "late_answer"):
        "a silent probe answered late proves a modern server: read only for that",
    ("protocol/connection.py", "Connection._request"):
        "the initialize pin: the opening exchange pins the era, initialize after it is refused",
    ("protocol/envelope.py", "read_meta"):
        "the modern envelope serves the versions it speaks; any other (a legacy one) is -32022",
    ("protocol/http_refusals.py", "request_refusal"):
        "a modern request naming a method the modern era removed (initialize, ping, ...) is "
        "-32601 saying how a 2025-11-25 client reaches it, whether legacy clients are served "
        "or not",
    ("protocol/http.py", "classify_era"):
        "the pure decision of which era a POST belongs to, behind protocol/http.route",
    ("proxy/upstream.py", "Upstream.exclusive"):
        "a 2025-11-25 upstream's requests to its client name no call: each call holds a "
        "connection alone, so a request arriving there is that call's",
    ("transports/http_server/app.py", "HTTPApp.__init__"):
        "configuration: whether the legacy endpoints are in the HTTP table at all",
}
"""Every era branch outside the legacy rooms: (module, function) -> why it is a seam."""

_ERA_VALUES = {"modern", "legacy"}
_ERA_MARKS = {"MODERN", "LEGACY", "legacy_version", "LEGACY_VERSION", "LEGACY_VERSIONS",
              "MODERN_VERSION", "MODERN_VERSIONS", "MODERN_CLIENT_VERSIONS", "LEGACY_ONLY",
              "MODERN_ONLY"}
"""Names that stand for one era: its values, a legacy session's version, the versions of each
era, the methods of one era only. An object's `.era` does too (a plain `era` variable compared
with another is not a branch: the era cache asks whether what it holds changed)."""
_ERA_FLAGS = {"legacy", "modern", "legacy_version"}
"""Attributes whose truth is an era (`options.legacy`, set only when legacy clients are served),
and, with a leading underscore too (`self._legacy`), what a module keeps of one era."""


def _flag(name: str | None) -> bool:
    return name is not None and name.lstrip("_") in _ERA_FLAGS


def _era_locals(tree: ast.AST) -> set[str]:
    """Names bound to something of one era (`legacy = self._legacy()`, `modern = s.modern`):
    testing such a name is asking the era as surely as testing the attribute it came from."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.NamedExpr) and node.value is not None:
            value = node.value
            while isinstance(value, ast.Await | ast.Call):
                value = value.value if isinstance(value, ast.Await) else value.func
            if _flag(_names(value)) or (_marks_an_era(value) and _names(value) != "era"):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                found |= {t.id for t in targets if isinstance(t, ast.Name)}
    return found


def _names(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _marks_an_era(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return node.value in _ERA_VALUES
    if isinstance(node, ast.Attribute) and node.attr == "era":
        return True
    name = _names(node)
    return name is not None and (name in _ERA_MARKS or name.startswith("Era"))


def _every_era(node: ast.AST) -> bool:
    """`ERAS`, or a literal naming both eras: a check that a value is an era, not which."""
    if _names(node) == "ERAS":
        return True
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return {e.value for e in node.elts if isinstance(e, ast.Constant)} >= _ERA_VALUES
    return False


def _compares_eras(node: ast.Compare) -> bool:
    sides = [node.left, *node.comparators]
    if any(_names(side) == "eras" for side in sides):
        return False  # a method's eras (MethodInfo.eras): a fact about the method
    for op, right in zip(node.ops, node.comparators, strict=True):
        if isinstance(op, ast.In | ast.NotIn) and _every_era(right):
            return False
    return any(_marks_an_era(side) for side in sides)


def _is_era_isinstance(node: ast.Call) -> bool:
    if not (isinstance(node.func, ast.Name) and node.func.id == "isinstance" and len(node.args) == 2):
        return False
    kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
    return any((_names(k) or "").startswith(("Legacy", "Modern")) for k in kinds)


def _tested(tree: ast.AST) -> list[ast.AST]:
    """The expressions the package branches on (if, while, ternary, assert, boolean operands,
    match), leaving out comprehensions over `METHODS`: a view of the method table by its era
    column (`m.modern`) selects methods, it does not ask a peer's era."""
    views = {id(n) for node in ast.walk(tree)
             if isinstance(node, ast.comprehension) and "METHODS" in ast.unparse(node.iter)
             for test in node.ifs for n in ast.walk(test)}
    tests: list[ast.AST] = []
    for node in ast.walk(tree):
        if id(node) in views:
            continue
        if isinstance(node, ast.If | ast.While | ast.IfExp | ast.Assert):
            tests.append(node.test)
        elif isinstance(node, ast.BoolOp):
            tests += node.values
        elif isinstance(node, ast.Match):
            tests.append(node.subject)
        elif isinstance(node, ast.comprehension):
            tests += node.ifs
    return [t.operand if isinstance(t, ast.UnaryOp) else t for t in tests]


def era_branches(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, enclosing function) of every era branch in a module's tree."""
    where: dict[int, str] = {}

    def visit(node: ast.AST, scope: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = scope
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                inner = f"{scope}.{child.name}" if scope else child.name
            where[id(child)] = inner
            visit(child, inner)

    visit(tree, "")
    found: list[ast.AST] = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Compare) and _compares_eras(node)) or (
                isinstance(node, ast.Call) and _is_era_isinstance(node)):
            found.append(node)
        elif isinstance(node, ast.match_case):
            found += [p for p in ast.walk(node.pattern)
                      if isinstance(p, ast.MatchValue) and _marks_an_era(p.value)]
    era_locals = _era_locals(tree)
    for test in _tested(tree):
        sides = [test.left, *test.comparators] if isinstance(test, ast.Compare) else [test]
        if any((isinstance(side, ast.Attribute) and _flag(side.attr))
               or (isinstance(side, ast.Name) and side.id in era_locals) for side in sides):
            found.append(test)
    return sorted({(n.lineno, where.get(id(n)) or "<module>") for n in found})


def _outside_the_rooms() -> dict[str, ast.AST]:
    trees = {}
    for path in SOURCES:
        rel = path.relative_to(PACKAGE).as_posix()
        if not rel.startswith(tuple(f"{room}/" for room in LEGACY_ROOMS)):
            trees[rel] = ast.parse(path.read_text(encoding="utf-8"))
    return trees


def test_era_branches_live_in_the_legacy_rooms_or_are_named_seams() -> None:
    found: dict[tuple[str, str], list[int]] = {}
    for rel, tree in _outside_the_rooms().items():
        for line, scope in era_branches(tree):
            found.setdefault((rel, scope), []).append(line)
    unnamed = sorted(f"{rel}:{line} in {scope}" for (rel, scope), lines in found.items()
                     if (rel, scope) not in SEAMS for line in lines)
    assert not unnamed, (
        f"era branches outside the legacy rooms: {unnamed}; ask the era seam (ServerSession, "
        "EraAdapter, the HTTP endpoint table, the HTTP client's session) or name the seam in SEAMS"
    )
    stale = sorted(f"{rel}:{scope}" for rel, scope in SEAMS if (rel, scope) not in found)
    assert not stale, f"SEAMS names places that no longer branch on the era: {stale}"


@pytest.mark.parametrize("source, expected", [
    ("if x.era == MODERN: pass", True),
    ("y = 'legacy' if a else b\nz = 1 if mode != 'legacy' else 2", True),
    ("if self.legacy_version is None: pass", True),
    ("if options.legacy: pass", True),
    ("while v not in LEGACY_VERSIONS: pass", True),
    ("ok = isinstance(s, LegacySession)", True),
    ("match era:\n    case 'modern': pass", True),
    ("if self.era not in ('auto', 'modern', 'legacy'): pass", False),
    ("if entry.get('era') in ERAS: pass", False),
    ("r = {n for n, m in METHODS.items() if m.by_client and not m.modern}", False),
    ("r = [s for s in sessions if s.legacy]", True),
    ("changed = old.get('era') != era", False),
    ("if self.era: pass", False),
    ("if legacy.startswith('#'): pass", False),
    ("if method in LEGACY_ONLY: pass", True),
    ("legacy = self._legacy()\nif legacy is not None: pass", True),
    ("modern = await s.modern()\nx = a if modern else b", True),
    ("legacy = self._legacy\nrun(legacy)", False),
    ("if self._legacy is not None: pass", True),
    ("version = 'legacy'\nif version: pass", True),
    ("name = node.get('id')\nif name: pass", False),
])
def test_what_counts_as_an_era_branch(source: str, expected: bool) -> None:
    assert bool(era_branches(ast.parse(source))) is expected


# -- the era's rooms -----------------------------------------------------------------------------
# Removing the 2025-11-25 era is deleting its rooms (ERA_ROOMS), then the few imports named here,
# each where the era plugs into the rest.

ERA_IMPORTS: dict[tuple[str, str], str] = {
    ("app.py", "mcpkit.legacy.session_quota"):
        "Server.asgi and serve_http take the limits of legacy sessions (HTTPOptions.sessions)",
    ("client/__init__.py", "mcpkit.client.legacy.completions"):
        "the public handler type of notifications/elicitation/complete",
    ("client/client.py", "mcpkit.client.legacy.completions"):
        "the client keeps the completions a legacy URL elicitation waits for",
    ("client/inputs.py", "mcpkit.client.legacy.completions"):
        "the input handlers hand URL elicitations to those completions",
    ("client/client.py", "mcpkit.client.legacy.opening"):
        "the Client's opener falls back to the initialize handshake",
    ("transports/__init__.py", "mcpkit.store.legacy.events"):
        "public names: the event store HTTPOptions takes",
    ("transports/__init__.py", "mcpkit.store.legacy.sessions"):
        "public names: the session store HTTPOptions takes",
    ("transports/__init__.py", "mcpkit.transports.legacy.resume"):
        "public names: close_sse_stream, for a handler serving a legacy request",
    ("transports/http_client/transport.py", "mcpkit.client.legacy.http_session"):
        "an answered initialize makes the transport's era a LegacyHTTPSession",
    ("transports/http_server/options.py", "mcpkit.legacy.session_quota"):
        "HTTPOptions.sessions, the limits of legacy sessions",
    ("transports/http_server/options.py", "mcpkit.store.legacy.events"):
        "HTTPOptions.event_store",
    ("transports/http_server/options.py", "mcpkit.store.legacy.sessions"):
        "HTTPOptions.session_store",
    ("transports/http_server/running.py", "mcpkit.legacy.session_quota"):
        "run_http and serve_http take the limits of legacy sessions (HTTPOptions.sessions)",
    ("transports/http_server/app.py", "mcpkit.transports.legacy.routes"):
        "the legacy routes in the app's table when legacy clients are served",
    ("transports/http_server/app.py", "mcpkit.transports.legacy.stores"):
        "a shared store URL keeps legacy sessions and events in that store",
    ("transports/stream.py", "mcpkit.legacy"):
        "a byte stream whose first request is initialize is served by a LegacySession",
}
"""(module outside the era's rooms, era module it imports) -> why the era plugs in there."""


def _in_era_rooms(name: str) -> bool:
    return any(name == room or name.startswith(f"{room}/") for room in ERA_ROOMS)


def test_only_named_places_import_the_eras_rooms() -> None:
    era_modules = tuple(f"mcpkit.{room.replace('/', '.')}" for room in ERA_ROOMS)
    found: set[tuple[str, str]] = set()
    for path in SOURCES:
        rel = path.relative_to(PACKAGE).as_posix()
        if _in_era_rooms(rel) or rel.startswith(tuple(f"{r}/" for r in LEGACY_ROOMS)):
            continue
        for _, module in mcpkit_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if module in era_modules or module.startswith(tuple(f"{m}." for m in era_modules)):
                found.add((rel, module))
    unnamed = sorted(f"{rel} imports {module}" for rel, module in found - ERA_IMPORTS.keys())
    assert not unnamed, (
        f"{unnamed}: reach the 2025-11-25 era through its seams, or name the import in "
        "ERA_IMPORTS")
    stale = sorted(f"{rel} -> {module}" for rel, module in ERA_IMPORTS.keys() - found)
    assert not stale, f"ERA_IMPORTS names imports that are gone: {stale}"


# -- the core Server and its parts ----------------------------------------------------------------
# `Server` (server/server.py) is made of the server's modules; none of them may name it back,
# not even under TYPE_CHECKING or inside a function: each takes the narrow view it reads
# (`mcpkit.server.view`, `mcpkit.server.composition.Composed`), so the class and its parts form
# no loop, hidden from the runtime or not.

SERVER_CLASS = "mcpkit.server.server"


def _module_path(module: str) -> Path | None:
    """The source of a module of the package, or None for a name that is no module (an
    attribute imported with `from a import b`)."""
    base = PACKAGE.parent.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def server_parts() -> dict[str, set[str]]:
    """Every module of `mcpkit.server` that server/server.py imports, directly or through
    others (every import counts), -> the modules of `mcpkit.server` it imports itself."""
    parts: dict[str, set[str]] = {}
    todo = [SERVER_CLASS]
    while todo:
        module = todo.pop()
        path = _module_path(module)
        if path is None or module in parts:
            continue
        imported = {name for _, name in mcpkit_imports(ast.parse(path.read_text(encoding="utf-8")))
                    if name == "mcpkit.server" or name.startswith("mcpkit.server.")}
        parts[module] = imported
        todo += sorted(imported)
    del parts[SERVER_CLASS]
    return parts


def test_no_part_of_the_core_server_imports_the_class() -> None:
    parts = server_parts()
    assert {"mcpkit.server.dispatch", "mcpkit.server.mounting", "mcpkit.server.lifespan",
            "mcpkit.server.view"} <= parts.keys()
    loops = sorted(module for module, imported in parts.items() if SERVER_CLASS in imported)
    assert not loops, (
        f"{loops} import {SERVER_CLASS}, which imports them: take the narrow view of the "
        "server the module reads (mcpkit.server.view) instead of the class")


def test_a_part_naming_the_class_under_type_checking_is_found() -> None:
    source = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
              "    from mcpkit.server.server import Server\n")
    assert mcpkit_imports(ast.parse(source)) == [(3, SERVER_CLASS)]
