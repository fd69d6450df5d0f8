"""No module uses another's private names: a seam between modules is public and typed.

A read of `x._name`, where `x` is not `self` or `cls` and the module defines no member `_name`
of its own (a method, a class attribute, a slot, an attribute it sets on `self`), reaches into
an object some other module owns; so does `getattr(x, "_name")` and its kin. The few such reads
left are listed in `ALLOWED`, each with its reason; every other one fails here, and an entry
that no longer matches anything fails too, so the list only shrinks.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import NamedTuple

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "mcpkit"

_CONTEXT_SEAM = (
    "Context's channel to its client (`_notify`: progress, log messages) and its input round "
    "(`_round`: the asks of `ctx.elicit`/`ctx.sample`), which a request served for another "
    "request (`server/calls.py`), the MRTR loop (`server/mrtr.py`) and a listen stream "
    "(`server/subscriptions.py`) drive within the server; an extension uses the public "
    "`Context.route_notifications` and `Context.ask_through` instead (a running task does)"
)

ALLOWED: dict[tuple[str, str], str] = {
    ("server/calls.py", "_notify"): _CONTEXT_SEAM,
    ("server/calls.py", "_round"): _CONTEXT_SEAM,
    ("server/mrtr.py", "_round"): _CONTEXT_SEAM,
    ("server/subscriptions.py", "_notify"): _CONTEXT_SEAM,
    ("transports/stdio/client.py", "_transport"):
        "asyncio's `Process` has no public way to close its pipes' transport, and a closed "
        "one left to the garbage collector warns about an unclosed transport; read with "
        "`getattr`, so a Python without it only skips the close",
    ("tracing/spans.py", "_TRACER_PROVIDER"):
        "OpenTelemetry's global provider, read while it is unset: `get_tracer_provider()` also "
        "reads the environment each time, ten times the cost of this check on every request; "
        "read with `getattr` and a default, so an API without it takes the public path",
}
"""(module under src/mcpkit, private name) -> why that module reads it on another object."""

PUBLIC_DESPITE_UNDERSCORE = frozenset({"_replace", "_asdict", "_fields", "_field_defaults", "_make"})
"""`namedtuple`'s documented API (`urllib.parse.SplitResult._replace`): public, underscore and
all, so that it cannot clash with a field's name."""

_BY_NAME = frozenset({"getattr", "setattr", "hasattr", "delattr"})


class Read(NamedTuple):
    line: int
    name: str
    text: str


def _own_names(tree: ast.AST) -> set[str]:
    """The private names a module gives members of its own classes and objects."""
    own: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    own.add(item.name)
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    own.add(item.target.id)
                elif isinstance(item, ast.Assign):
                    for target in item.targets:
                        own |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
                        if isinstance(target, ast.Name) and target.id == "__slots__":
                            own |= {c.value for c in ast.walk(item.value)
                                    if isinstance(c, ast.Constant) and isinstance(c.value, str)}
        elif (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
              and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
            own.add(node.attr)
    return own


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") \
        and name not in PUBLIC_DESPITE_UNDERSCORE


def _on_itself(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id in ("self", "cls")


def private_reads(source: str) -> list[Read]:
    """Every use in `source` of a private name on an object the module does not own."""
    tree = ast.parse(source)
    own = _own_names(tree)
    found: list[Read] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            target, name = node.value, node.attr
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in _BY_NAME and len(node.args) >= 2
              and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)):
            target, name = node.args[0], node.args[1].value
        else:
            continue
        if _private(name) and not _on_itself(target) and name not in own:
            found.append(Read(node.lineno, name, ast.unparse(node)))
    return found


def _every_read() -> dict[str, list[Read]]:
    reads = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        found = private_reads(path.read_text(encoding="utf-8"))
        if found:
            reads[path.relative_to(PACKAGE).as_posix()] = found
    return reads


def test_no_module_reads_another_objects_private_names_outside_the_list() -> None:
    unlisted = [f"src/mcpkit/{module}:{read.line}: {read.text}"
                for module, found in _every_read().items()
                for read in found if (module, read.name) not in ALLOWED]
    assert not unlisted, (
        "these read a private name of an object another module owns; give that object a "
        "public, typed member for it (or hand the value over explicitly):\n  "
        + "\n  ".join(unlisted))


def test_every_listed_private_read_still_happens() -> None:
    reads = _every_read()
    stale = [f"{module}: {name}" for module, name in ALLOWED
             if not any(read.name == name for read in reads.get(module, []))]
    assert not stale, f"ALLOWED names reads that are gone; remove them: {stale}"


@pytest.mark.parametrize(("source", "expected"), [
    ("def f(core):\n    return core._request()\n", ["_request"]),
    ("def f(server):\n    server._cache['x'] = 1\n", ["_cache"]),
    ("def f(ctx):\n    return getattr(ctx, '_caller', None)\n", ["_caller"]),
    ("def f(ctx, c):\n    setattr(ctx, '_caller', c)\n", ["_caller"]),
    ("def f(self):\n    return self.core._inputs\n", ["_inputs"]),
    # the module's own members, on any object of its classes
    ("class A:\n    def __init__(self):\n        self._x = 1\n"
     "def f(a):\n    return a._x\n", []),
    ("class A:\n    def _go(self):\n        pass\n    def run(self, other):\n"
     "        other._go()\n", []),
    ("class A:\n    __slots__ = ('_flag',)\ndef f(a):\n    return getattr(a, '_flag', 0)\n", []),
    ("class A:\n    _n: int\ndef f(a):\n    return a._n\n", []),
    # itself, dunders, and namedtuple's public API
    ("class A(B):\n    def f(self):\n        return self._inherited\n", []),
    ("def f(cls):\n    return cls._registry\n", []),
    ("def f(x):\n    return x.__class__\n", []),
    ("def f(parts):\n    return parts._replace(path='/')\n", []),
])
def test_what_counts_as_a_private_read(source: str, expected: list[str]) -> None:
    assert [read.name for read in private_reads(source)] == expected
