"""`mcpkit.Client`, `mcpkit.SyncClient` and `mcpkit.Clients`: the clients applications import,
the core ones plus what needs a transport by name.

The core `Client` (`mcpkit.client.client`) takes a connector and knows no transport: the client
layer sits below `transports/` and never imports one. Starting a client from an `mcpServers`
file (`from_config(path, name)`) means building a `StdioServer` or an `HTTPConnector` from an
entry, so it is added here, a layer above the transports, as `mcpkit.Server` adds serving to the
core server in `mcpkit.app`. Each subclass is its core class in every other way
(`isinstance(mcpkit.Client(...), mcpkit.client.Client)` holds), plus the client halves of the
extensions: the core client knows no tasks, and `mcpkit.Client` mixes in the Tasks extension's
(`mcpkit.ext.tasks.TaskClient`: `start_tool`, `task`, `call_tool` waiting on a task), as
`mcpkit.Server` installs its runtime.

`Clients` is several servers as one, for agent builders: one `list_tools()` over every server,
each tool's name prefixed with its server's (`calendar__create_event`), and `call_tool` sending
a prefixed name to the server it came from. A server whose name holds the separator is refused
when the `Clients` is made, so every prefixed name splits one way.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar, Unpack, overload

from mcpkit.client.client import Client as CoreClient
from mcpkit.client.client import Structured
from mcpkit.client.results import CallToolResult, Tool
from mcpkit.client.server_entries import ServerEntry, read_entries, read_entry
from mcpkit.client.sync import SyncClient as CoreSyncClient
from mcpkit.client.transport import ClientTransport, Connector
from mcpkit.errors import InvalidParamsError
from mcpkit.ext.tasks.client import TaskCallOptions, TaskClient
from mcpkit.ext.tasks.sync import SyncTaskClient
from mcpkit.transports.entries import connector_for

__all__ = [
    "Client",
    "Clients",
    "ServerTool",
    "SyncClient",
]

T = TypeVar("T")
C = TypeVar("C", bound="Client")
S = TypeVar("S", bound="SyncClient")

ConfigPath = str | os.PathLike[str]
ConnectorOptions = Mapping[str, Any] | Callable[[ServerEntry], Mapping[str, Any]] | None
"""What the connector of an entry is given: options for every entry, or a function of the
entry (a `StdioServer` and an `HTTPConnector` take different ones)."""


def _connector(entry: ServerEntry, options: ConnectorOptions) -> Connector:
    given = options(entry) if callable(options) else options
    return connector_for(entry, **dict(given or {}))


class Client(TaskClient, CoreClient):
    """An MCP client (`mcpkit.client.Client`), which can also be started from the `mcpServers`
    file an MCP host reads: `Client.from_config("~/.cursor/mcp.json", "calendar")`."""

    @classmethod
    def from_config(cls: type[C], path: ConfigPath, name: str, *,
                    connector_options: ConnectorOptions = None,
                    environ: Mapping[str, str] | None = None, **client_options: Any) -> C:
        """A client of the server `name` in the file at `path` (a stdio command with its
        args, env and cwd; or an HTTP URL with its headers; `${VAR}` filled from `environ`,
        default this process's environment). `connector_options` go to the `StdioServer` or
        `HTTPConnector` (`{"stderr": "capture"}`, or a function of the `ServerEntry` giving
        them), the rest to `Client`. Raises
        `ServerConfigError` naming the file and the entry when it cannot be used."""
        entry = read_entry(os.path.expanduser(path), name, environ)
        return cls(_connector(entry, connector_options), **client_options)


class SyncClient(SyncTaskClient, CoreSyncClient):
    """A client without `await` (`mcpkit.client.sync.SyncClient`) of an `mcpkit.Client`,
    which can also be started from an `mcpServers` file."""

    client_class = Client

    @classmethod
    def from_config(cls: type[S], path: ConfigPath, name: str, *,
                    connector_options: ConnectorOptions = None,
                    environ: Mapping[str, str] | None = None, **client_options: Any) -> S:
        """As `Client.from_config`, without `await`."""
        entry = read_entry(os.path.expanduser(path), name, environ)
        return cls(_connector(entry, connector_options), **client_options)


class ServerTool(Tool):
    """A tool of one of a `Clients`' servers: `name` is prefixed with the server's
    (`raw` too, so it can be handed to a model as it is), `server` names the server and
    `tool` is the server's own definition."""

    __slots__ = ("server", "tool")

    def __init__(self, server: str, tool: Tool, name: str) -> None:
        super().__init__({**tool.raw, "name": name}, f"{server}: {tool.where}")
        self.server = server
        self.tool = tool


class Clients:
    """Several MCP servers as one: `async with Clients.from_config(path) as clients:`.

    `servers` maps a name to a connector, an open transport or a `Client`; `client_options`
    go to each `Client` made here. Tool names are `SERVER` + `separator` + `TOOL`.
    """

    def __init__(self, servers: Mapping[str, Connector | ClientTransport | CoreClient], *,
                 separator: str = "__", **client_options: Any) -> None:
        if not separator:
            raise ValueError("Clients: the separator must not be empty")
        clash = [name for name in servers if separator in name or not name]
        if clash:
            raise ValueError(
                f"Clients: server names must be non-empty and not hold the separator "
                f"{separator!r} (they prefix tool names): {', '.join(map(repr, clash))}")
        self.separator = separator
        self.clients: dict[str, CoreClient] = {
            name: target if isinstance(target, CoreClient) else Client(target, **client_options)
            for name, target in servers.items()
        }

    @classmethod
    def from_config(cls, path: ConfigPath, names: Iterable[str] | None = None, *,
                    separator: str = "__", connector_options: ConnectorOptions = None,
                    environ: Mapping[str, str] | None = None, **client_options: Any
                    ) -> Clients:
        """Every server the file names (but those with `"disabled": true`), or only `names`."""
        where = os.path.expanduser(path)
        if names is None:
            entries = [e for e in read_entries(where, environ).values() if not e.disabled]
        else:
            entries = [read_entry(where, name, environ) for name in names]
        return cls({e.name: _connector(e, connector_options) for e in entries},
                   separator=separator, **client_options)

    # -- connection ------------------------------------------------------------------------

    async def __aenter__(self) -> Clients:
        return await self.connect()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def connect(self) -> Clients:
        """Connect to every server at once; one that fails is named in its error's notes,
        and the others are closed again."""
        results = await asyncio.gather(*(c.connect() for c in self.clients.values()),
                                       return_exceptions=True)
        for name, outcome in zip(self.clients, results, strict=True):
            if isinstance(outcome, BaseException):
                await self.close()
                outcome.add_note(f"connecting to server {name!r} of this Clients")
                raise outcome
        return self

    async def close(self) -> None:
        """Close every client (stdio servers end)."""
        await asyncio.gather(*(c.close() for c in self.clients.values()),
                             return_exceptions=True)

    def __getitem__(self, name: str) -> CoreClient:
        return self.clients[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.clients)

    def __len__(self) -> int:
        return len(self.clients)

    # -- tools across servers --------------------------------------------------------------

    async def list_tools(self, *, fresh: bool = False) -> list[ServerTool]:
        """Every server's tools, listed at once, each named `SERVER{separator}TOOL`."""

        async def listed(name: str, client: CoreClient) -> list[ServerTool]:
            try:
                tools = await client.list_tools(fresh=fresh)
            except BaseException as exc:
                exc.add_note(f"listing the tools of server {name!r} of this Clients")
                raise
            return [ServerTool(name, t, f"{name}{self.separator}{t.name}") for t in tools]

        lists = await asyncio.gather(*(listed(n, c) for n, c in self.clients.items()))
        return [tool for tools in lists for tool in tools]

    def split(self, name: str) -> tuple[str, str]:
        """`(server, tool)` of a prefixed tool name; `InvalidParamsError` when it names none
        of the servers."""
        server, sep, tool = name.partition(self.separator)
        if not sep or server not in self.clients or not tool:
            raise InvalidParamsError(
                f"tools/call {name!r}: a tool name here is SERVER{self.separator}TOOL, with "
                f"SERVER one of {', '.join(sorted(self.clients)) or 'none'}")
        return server, tool

    @overload
    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                        result: None = None, **options: Unpack[TaskCallOptions]
                        ) -> CallToolResult[Structured]: ...

    @overload
    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                        result: type[T], **options: Unpack[TaskCallOptions]
                        ) -> CallToolResult[T]: ...

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                        result: Any = None, **options: Unpack[TaskCallOptions]
                        ) -> CallToolResult[Any]:
        """Call `SERVER{separator}TOOL` on its server (`Client.call_tool`, every argument
        the same)."""
        server, tool = self.split(name)
        client = self.clients[server]
        if isinstance(client, TaskClient):
            followed: CallToolResult[Any] = await client.call_tool(
                tool, arguments, result=result, **options)
            return followed
        if options.pop("on_status", None) is not None:
            raise TypeError(f"Clients: server {server!r} is a core client, which follows no "
                            "tasks: on_status needs an mcpkit.Client")
        answer: CallToolResult[Any] = await client.call_tool(
            tool, arguments, result=result, **options)  # type: ignore[call-overload]
        return answer

    def __repr__(self) -> str:
        return f"Clients({', '.join(self.clients)})"
