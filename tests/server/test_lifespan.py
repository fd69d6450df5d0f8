"""`Server(lifespan=...)` held by the in-memory transport, and dependencies declared as
parameters (`Depends`): resolved per call, kept out of the published schema, cleaned up."""

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import pytest
from helpers.client.schema_tap import SchemaTap

from mcpkit import Context, Server
from mcpkit.errors import InternalError
from mcpkit.server.dependencies import Depends
from mcpkit.testing import connect

pytestmark = pytest.mark.asyncio


def lived(events: list[str], *, fail_start: bool = False) -> Any:
    @asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[dict[str, Any]]:
        events.append(f"enter {server.name}")
        if fail_start:
            raise ConnectionError("the database is down")
        try:
            yield {"pool": f"pool of {server.name}"}
        except BaseException as exc:
            events.append(f"exit {server.name} with {type(exc).__name__}")
            raise
        else:
            events.append(f"exit {server.name}")
    return lifespan


async def test_the_lifespan_is_entered_once_while_clients_are_connected_and_exited_after() -> None:
    events: list[str] = []
    server = Server("app", lifespan=lived(events))

    @server.tool()
    def pool(ctx: Context) -> str:
        return str(ctx.lifespan_context["pool"])

    async with connect(server) as one, connect(server) as two:
        assert (await one.call_tool("pool", {})).text == "pool of app"
        assert (await two.call_tool("pool", {})).text == "pool of app"
        assert events == ["enter app"]
    assert events == ["enter app", "exit app"]
    with pytest.raises(RuntimeError, match="its lifespan is not entered"):
        server.lifespan_context  # noqa: B018


async def test_a_lifespan_that_fails_to_start_stops_the_connection_before_anything_is_served(
) -> None:
    events: list[str] = []
    server = Server("app", lifespan=lived(events, fail_start=True))
    with pytest.raises(ConnectionError, match="the database is down"):
        async with connect(server):
            pass
    assert events == ["enter app"]
    assert not server.lifespan_state.entered


async def test_an_error_that_ends_serving_is_thrown_into_the_lifespan() -> None:
    events: list[str] = []
    server = Server("app", lifespan=lived(events))
    with pytest.raises(KeyError):
        async with server.running():
            raise KeyError("boom")
    assert events == ["enter app", "exit app with KeyError"]
    seen: list[BaseException] = []

    @asynccontextmanager
    async def keeps(server: Server) -> AsyncIterator[None]:
        try:
            yield
        except BaseException as exc:
            seen.append(exc)
            raise

    watched = Server("watched", lifespan=keeps)
    ended = KeyError("the very error")
    with pytest.raises(KeyError):
        async with watched.running():
            raise ended
    assert seen == [ended] and seen[0] is ended  # the error itself, not a fresh one


async def test_two_holders_starting_at_once_enter_the_lifespan_once() -> None:
    events: list[str] = []
    entering, gate, asked = asyncio.Event(), asyncio.Event(), asyncio.Event()

    @asynccontextmanager
    async def slow(server: Server) -> AsyncIterator[str]:
        events.append("enter")
        entering.set()
        await gate.wait()  # still entering when the second holder arrives
        yield "pool"
        events.append("exit")

    server = Server("app", lifespan=slow)
    values: list[str] = []

    async def hold(asking: asyncio.Event | None = None) -> None:
        if asking is not None:
            asking.set()  # then straight on into running(), with no await between
        async with server.running() as value:
            values.append(value)

    first = asyncio.create_task(hold())
    await entering.wait()  # the first holder is inside the lifespan's entry
    second = asyncio.create_task(hold(asked))
    await asked.wait()  # the second holder has asked for the lifespan too, and waits
    gate.set()
    await asyncio.wait_for(asyncio.gather(first, second), 10)
    assert values == ["pool", "pool"]
    assert events == ["enter", "exit"]


async def test_a_server_without_a_lifespan_says_so_when_its_context_is_read() -> None:
    server = Server("plain")

    @server.tool()
    def read(ctx: Context) -> str:
        return str(ctx.lifespan_context)

    async with connect(server) as client:
        result = await client.call_tool("read", {})
    assert result.is_error  # the handler's RuntimeError, answered with an error id
    with pytest.raises(RuntimeError, match=r"has no lifespan, so there is no lifespan context: "
                                           r"give Server\(lifespan=\.\.\.\) an async context "
                                           r"manager factory"):
        server.lifespan_context  # noqa: B018


async def test_lifespan_must_be_a_factory_of_an_async_context_manager() -> None:
    with pytest.raises(TypeError, match="takes a function of the server"):
        Server("x", lifespan=3)  # type: ignore[arg-type]

    def not_async(server: Server) -> Iterator[None]:
        yield

    server = Server("x", lifespan=not_async)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not an async context manager"):
        async with server.running():
            pass


# -- dependencies -----------------------------------------------------------------------------


async def test_dependencies_are_resolved_per_call_and_left_out_of_the_input_schema() -> None:
    events: list[str] = []
    server = Server("deps", lifespan=lived(events))
    counter = {"n": 0}

    def pool_of(ctx: Context) -> str:
        return str(ctx.lifespan_context["pool"])

    async def request_number() -> int:
        counter["n"] += 1
        return counter["n"]

    @server.tool()
    async def lookup(name: str, pool: Annotated[str, Depends(pool_of)],
                     n: int = Depends(request_number)) -> str:
        return f"{name} via {pool} #{n}"

    definition = server.tools["lookup"].definition
    assert definition["inputSchema"] == {"type": "object", "properties": {
        "name": {"type": "string"}}, "required": ["name"]}
    tap = SchemaTap()
    async with connect(server, recorder=tap) as client:
        assert (await client.call_tool("lookup", {"name": "a"})).text == "a via pool of deps #1"
        assert (await client.call_tool("lookup", {"name": "b"})).text == "b via pool of deps #2"
        # A client cannot fill a dependency: an argument of its name is not one the tool takes.
        sneaky = await client.call_tool("lookup", {"name": "c", "pool": "mine"})
    assert sneaky.text == "c via pool of deps #3"
    assert not tap.problems


async def test_generator_dependencies_clean_up_after_the_handler_even_when_it_fails() -> None:
    server, events = Server("gen"), []

    async def connection() -> AsyncIterator[str]:
        events.append("open async")
        try:
            yield "conn"
        except Exception as exc:
            events.append(f"rollback after {type(exc).__name__}")
            raise
        finally:
            events.append("close async")

    def cursor(conn: Annotated[str, Depends(connection)]) -> Iterator[str]:
        events.append(f"cursor on {conn}")
        yield f"cursor({conn})"
        events.append("cursor closed")

    @server.tool()
    def query(cur: Annotated[str, Depends(cursor)], fail: bool = False) -> str:
        if fail:
            raise ValueError("bad query")
        return cur

    async with connect(server) as client:
        assert (await client.call_tool("query", {})).text == "cursor(conn)"
        assert events == ["open async", "cursor on conn", "cursor closed", "close async"]
        events.clear()
        failed = await client.call_tool("query", {"fail": True})
    assert failed.is_error and "tool 'query' failed" in failed.text
    assert events == ["open async", "cursor on conn", "rollback after ValueError",
                      "close async"]


async def test_a_dependency_named_twice_is_resolved_once_per_call_unless_asked_not_to() -> None:
    server, made = Server("cache"), []

    def token() -> str:
        made.append(1)
        return f"t{len(made)}"

    def header(t: Annotated[str, Depends(token)]) -> str:
        return f"Bearer {t}"

    @server.tool()
    def both(t: Annotated[str, Depends(token)], h: Annotated[str, Depends(header)],
             fresh: Annotated[str, Depends(token, use_cache=False)]) -> str:
        return f"{t} {h} {fresh}"

    async with connect(server) as client:
        assert (await client.call_tool("both", {})).text == "t1 Bearer t1 t2"


async def test_resources_templates_and_prompts_take_dependencies_too() -> None:
    server = Server("all")

    def greeting(ctx: Context) -> str:
        return "Hello" if ctx.server is server else "wrong server"

    @server.resource("note://{name}")
    def note(name: str, word: Annotated[str, Depends(greeting)]) -> str:
        return f"{word}, {name}"

    @server.resource("note://fixed")
    async def fixed(word: Annotated[str, Depends(greeting)]) -> str:
        return word

    @server.prompt()
    def ask(topic: str, word: Annotated[str, Depends(greeting)]) -> str:
        return f"{word}: {topic}"

    assert server.prompts["ask"].definition["arguments"] == [{"name": "topic", "required": True}]
    async with connect(server) as client:
        assert (await client.read_resource("note://ada")).text == "Hello, ada"
        assert (await client.read_resource("note://fixed")).text == "Hello"
        prompt = await client.get_prompt("ask", {"topic": "mcp"})
    assert prompt.messages[0].content.text == "Hello: mcp"


async def test_a_dependency_that_fails_fails_the_call_as_its_handler_would() -> None:
    server = Server("fail")

    def broken() -> str:
        raise OSError("no socket")

    @server.tool()
    def tool(x: Annotated[str, Depends(broken)]) -> str:
        return x

    @server.resource("data://x")
    def res(x: Annotated[str, Depends(broken)]) -> str:
        return x

    async with connect(server) as client:
        result = await client.call_tool("tool", {})
        with pytest.raises(InternalError, match="resource 'data://x' failed"):
            await client.read_resource("data://x")
    assert result.is_error and "tool 'tool' failed (error id" in result.text


async def test_dependencies_that_cannot_be_filled_are_refused_at_registration() -> None:
    server = Server("bad")

    def needs_input(user_id: int) -> str:
        return str(user_id)

    with pytest.raises(TypeError, match=r"tool 'a': dependency .*needs_input.*user_id have "
                                        r"nothing to be filled with"):
        @server.tool()
        def a(x: Annotated[str, Depends(needs_input)]) -> str:
            return x

    def one(x: Any = None) -> str:
        return "1"

    def loop_a(b: Annotated[str, Depends(one)]) -> str:
        return b

    marker = Depends(loop_a)
    loop_a.__annotations__["b"] = Annotated[str, marker]  # a -> a: a chain back to itself
    with pytest.raises(TypeError, match="come back to themselves"):
        @server.tool()
        def b(x: Annotated[str, marker]) -> str:
            return x

    with pytest.raises(TypeError, match="takes the function that provides the value"):
        Depends("not callable")  # type: ignore[arg-type]

    class Lookup:
        """A callable object as the dependency: it has no __qualname__ of its own."""

        def __call__(self, key: str) -> str:
            return key

        def __repr__(self) -> str:
            return "<Lookup of the settings table>"

    with pytest.raises(TypeError, match=r"tool 'c': dependency <Lookup of the settings table>: "
                                        r"parameter\(s\) key have nothing to be filled with"):
        @server.tool()
        def c(x: Annotated[str, Depends(Lookup())]) -> str:
            return x


async def test_a_generator_dependency_that_swallows_the_handlers_error_does_not_hide_it() -> None:
    server = Server("swallow")

    async def quiet() -> AsyncIterator[str]:
        try:
            yield "x"
        except Exception:
            pass  # a cleanup that swallows: the call still failed

    def quiet_sync() -> Iterator[str]:
        try:
            yield "y"
        except Exception:
            pass

    @server.tool()
    def fails(a: Annotated[str, Depends(quiet)], b: Annotated[str, Depends(quiet_sync)]) -> str:
        raise ValueError("broken")

    async with connect(server) as client:
        result = await client.call_tool("fails", {})
    assert result.is_error and "tool 'fails' failed" in result.text
