"""Dependencies: parameters a handler declares and the server fills on every call.

    async def get_pool(ctx: Context) -> Pool:
        return ctx.lifespan_context["pool"]

    @server.tool()
    async def lookup(name: str, db: Annotated[Pool, Depends(get_pool)]) -> str: ...

A parameter marked `Depends(fn)` (in its `Annotated` metadata, or as its default, the way
FastAPI and FastMCP users write it) is left out of the published input schema and of the
argument check (`mcpkit.schema` sets it aside in `Signature.provided`), and is resolved per
call, after the arguments were checked and before the handler runs: `fn` may be a plain
function (run in a worker thread, as a plain handler is), an async one, or a generator of
either kind that yields the value once; what follows its `yield` runs after the handler
ended, with the handler's exception thrown in when it failed, so a connection is given back
whatever happened. `fn`'s own parameters are filled the same way: one annotated `Context` gets
the request's context, one marked `Depends(other)` is resolved first. Within one call each
function is resolved once (`use_cache=False` asks for a fresh value each time it is named), and
a chain that comes back to itself is refused at registration.

A dependency that raises fails the call as the handler would have: a tool answers `isError`
with an error id, a resource or a prompt -32603.

Imports `mcpkit.schema` and the server's `context` and `threads`.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any, TypeVar

from mcpkit.schema import derive_signature
from mcpkit.server.context import Context, inject
from mcpkit.server.threads import invoke, run_in_worker

__all__ = [
    "Depends",
    "call_handler",
    "check_dependencies",
    "provide",
]

T = TypeVar("T")


@dataclass(frozen=True, slots=True, eq=False)
class Depends:
    """Marks a parameter the server fills with what `dependency` returns (or yields)."""

    dependency: Callable[..., Any]
    use_cache: bool = True
    """Resolve it once per call, however many parameters name it."""
    _plan: list[Any] = field(default_factory=list, repr=False, compare=False)
    """(kind, parameters to inject, dependencies of its own), read once on first use."""

    def __post_init__(self) -> None:
        if not callable(self.dependency):
            raise TypeError(f"Depends() takes the function that provides the value, not "
                            f"{self.dependency!r}")

    def plan(self) -> tuple[str, dict[str, type], dict[str, Depends]]:
        if not self._plan:
            self._plan.append(_read(self.dependency))
        return self._plan[0]  # type: ignore[no-any-return]


def _kind(fn: Callable[..., Any]) -> str:
    target = inspect.unwrap(fn)
    call = getattr(target, "__call__", None)  # noqa: B004 -- an instance may be the dependency
    if inspect.isasyncgenfunction(target) or inspect.isasyncgenfunction(call):
        return "async_gen"
    if inspect.isgeneratorfunction(target) or inspect.isgeneratorfunction(call):
        return "gen"
    if inspect.iscoroutinefunction(target) or inspect.iscoroutinefunction(call):
        return "async"
    return "plain"


def _read(fn: Callable[..., Any]) -> tuple[str, dict[str, type], dict[str, Depends]]:
    """What calling `fn` takes: its kind, its `Context` parameters, its own dependencies. A
    parameter that is neither has no value to be given, which is a mistake to say now."""
    sig = derive_signature(fn, injectables=(Context,), markers=(Depends,),
                           structured_output=False)
    required = [p.name for p in sig.parameters if p.required]
    if required:
        raise TypeError(
            f"dependency {getattr(fn, '__qualname__', fn)!r}: parameter(s) {', '.join(required)} "
            "have nothing to be filled with; a dependency takes only a Context and other "
            "Depends(...) parameters (or parameters with defaults)")
    return _kind(fn), sig.injected, sig.provided


def check_dependencies(provided: Mapping[str, Any], where: str) -> None:
    """Read every dependency of a handler now, at registration: a dependency that cannot be
    filled, or a chain of them that comes back to itself, is a `TypeError` naming `where`."""

    def walk(marker: Depends, seen: tuple[Callable[..., Any], ...]) -> None:
        if marker.dependency in seen:
            names = " -> ".join(getattr(f, "__qualname__", repr(f)) for f in
                                (*seen, marker.dependency))
            raise TypeError(f"{where}: its dependencies come back to themselves ({names})")
        try:
            _, _, inner = marker.plan()
        except TypeError as exc:
            raise TypeError(f"{where}: {exc}") from None
        for nested in inner.values():
            walk(nested, (*seen, marker.dependency))

    for marker in provided.values():
        walk(marker, ())


async def provide(provided: Mapping[str, Depends], kwargs: dict[str, Any], ctx: Context,
                  stack: AsyncExitStack) -> None:
    """Fill `kwargs` with each dependency's value for this call; generator dependencies are
    entered on `stack`, which the caller closes once the handler ended."""
    cache: dict[Callable[..., Any], Any] = {}
    for name, marker in provided.items():
        kwargs[name] = await _resolve(marker, ctx, stack, cache)


async def call_handler(entry: Any, kwargs: dict[str, Any], ctx: Context,
                       finish: Callable[[Any], T]) -> T:
    """Call a tool's, resource's or prompt's function (`entry.fn`) on `kwargs` with its
    dependencies (`entry.signature.provided`), and `finish` what it returned while they are
    still open; generator dependencies are closed after, the exception thrown in if either
    raised. Without dependencies, the call and `finish` alone."""
    provided = entry.signature.provided
    if not provided:
        return finish(await invoke(entry.fn, entry.is_async, kwargs))
    async with AsyncExitStack() as stack:
        await provide(provided, kwargs, ctx, stack)
        return finish(await invoke(entry.fn, entry.is_async, kwargs))


async def _resolve(marker: Depends, ctx: Context, stack: AsyncExitStack,
                   cache: dict[Callable[..., Any], Any]) -> Any:
    fn = marker.dependency
    if marker.use_cache and fn in cache:
        return cache[fn]
    kind, injected, inner = marker.plan()
    args: dict[str, Any] = {}
    if injected:
        inject(injected, args, ctx)
    for name, nested in inner.items():
        args[name] = await _resolve(nested, ctx, stack, cache)
    if kind == "async_gen":
        opened = contextlib.asynccontextmanager(fn)(**args)
        value = await opened.__aenter__()
        stack.push_async_exit(_left(opened))
    elif kind == "gen":
        manager = contextlib.contextmanager(fn)(**args)
        # Entered and left in a worker thread, as a plain dependency runs: either side may block.
        value = await run_in_worker(manager.__enter__, {})
        stack.push_async_exit(_left_in_worker(manager))
    else:
        value = await invoke(fn, kind == "async", args)
    if marker.use_cache:
        cache[fn] = value
    return value


def _left(manager: Any) -> Callable[..., Any]:
    """The exit of an async generator dependency, which never swallows the exception: the
    call failed whatever its cleanup thinks of that."""
    async def leave(kind: Any, exc: Any, tb: Any) -> bool:
        await manager.__aexit__(kind, exc, tb)
        return False
    return leave


def _left_in_worker(manager: Any) -> Callable[..., Any]:
    async def leave(kind: Any, exc: Any, tb: Any) -> bool:
        await run_in_worker(lambda: manager.__exit__(kind, exc, tb), {})
        return False
    return leave
