"""Every method of both eras, as data: one frozen `MethodInfo` per request or notification.

What the rest of mcpkit needs to know about a method is written here once: its name, the
official schema's definitions of its message and of its result, the eras that have it, who
sends it, whether it may answer `input_required` (and what its target is called then), which
params field its `Mcp-Name` header mirrors, whether it changes the state of a legacy HTTP
session, the shape of its params (a `TypedDict` of `mcpkit.types.params`, which the schema
floor compiles into the one params check every request passes), the server capability it is
offered under, and the client capabilities a request must declare to reach it. The `Method` constants are the rows' names, made by the rows
themselves, so a name is never written beside its facts. The server's routing, the HTTP rules,
the legacy adapter and the tests' schema checks all read `METHODS` (or a set derived from it
where they are), so adding a core method is one row here, its handler and its client call.

An extension builds its own rows the same way (`MethodInfo(name, message_type, ...)`, with
`extension=` its identifier) and adds them with `add_rows` from the module that defines its
method names (the Tasks extension's are in `mcpkit.ext.tasks.wire`); the table's core rows
name no extension but Skills.

Imports `mcpkit.types` only; no I/O.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Literal

from mcpkit.types import params as p
from mcpkit.types.era import LEGACY, MODERN, Era

__all__ = [
    "BOTH",
    "LEGACY_ONLY",
    "METHODS",
    "MODERN_ONLY",
    "Method",
    "MethodInfo",
    "Sender",
    "add_rows",
]

Sender = Literal["client", "server", "either"]
"""Who sends a method's message: the client, the server, or either peer (legacy `ping`)."""

BOTH: Final[tuple[Era, ...]] = (MODERN, LEGACY)
MODERN_ONLY: Final[tuple[Era, ...]] = (MODERN,)
LEGACY_ONLY: Final[tuple[Era, ...]] = (LEGACY,)


@dataclass(frozen=True, slots=True)
class MethodInfo:
    """The facts about one method. A notification is a method without a result type."""

    name: str
    message_type: str
    """The schema's definition of the request or notification ("CallToolRequest")."""
    result_type: str | None
    """The schema's definition of its result ("CallToolResult"); None for a notification."""
    eras: tuple[Era, ...]
    sender: Sender
    asks: str | None = None
    """The noun of its target when it may answer `input_required` (MRTR-4), else None: a state
    sealed for it names a "tool", a "prompt" or a "resource"."""
    mcp_name: str | None = None
    """The params field its `Mcp-Name` header mirrors on Streamable HTTP, if any."""
    stateful: bool = False
    """It changes what a legacy HTTP session remembers (so the session is stored after it)."""
    extension: str | None = None
    """The extension that defines it (`io.modelcontextprotocol/tasks`), or None for the core:
    a server serves such a method only once that extension adds it (`Server.add_method`), and
    its `message_type`/`result_type` name the extension's schema, not the core's."""
    params: type | None = None
    """The shape of its params, a `TypedDict` (`mcpkit.types.params`): compiled once into the
    check a request's params pass before its handler runs (`mcpkit.schema.params`). None: the
    params are not checked beyond being an object."""
    offered_as: str | None = None
    """The server capability under which a server offers it ("tools"): a server that does not
    offer it answers -32601, and says so before any complaint about the params."""
    capability: Mapping[str, Any] | None = field(default=None, hash=False)
    """The client capabilities a request must declare in its `_meta` to reach the method, as
    a `requiredCapabilities` object (`{"extensions": {ident: {}}}`); None: no requirement. A
    request without them gets -32021 naming them."""

    @property
    def is_request(self) -> bool:
        return self.result_type is not None

    @property
    def modern(self) -> bool:
        return MODERN in self.eras

    @property
    def legacy(self) -> bool:
        return LEGACY in self.eras

    @property
    def by_client(self) -> bool:
        return self.sender != "server"


class _Rows:
    """The table as it is written: each `add` keeps a row and hands back its name, which the
    `Method` class body binds as the constant."""

    def __init__(self) -> None:
        self.rows: dict[str, MethodInfo] = {}

    def add(self, name: str, message_type: str, result_type: str | None, eras: tuple[Era, ...],
            sender: Sender, **facts: Any) -> str:
        if name in self.rows:
            raise ValueError(f"method {name!r} has two rows")
        self.rows[name] = MethodInfo(name, message_type, result_type, eras, sender, **facts)
        return name


_rows = _Rows()

_SKILLS: Final = "io.modelcontextprotocol/skills"
"""The Skills extension's identifier (`mcpkit.protocol.extensions.SKILLS`), spelled here too."""

class Method:
    """JSON-RPC method names of both eras, each bound to the row that describes it."""

    # Requests a client sends.
    DISCOVER: Final = _rows.add("server/discover", "DiscoverRequest", "DiscoverResult",
                                MODERN_ONLY, "client", params=p.RequestParams)
    TOOLS_LIST: Final = _rows.add("tools/list", "ListToolsRequest", "ListToolsResult", BOTH,
                                  "client", params=p.PaginatedParams, offered_as="tools")
    TOOLS_CALL: Final = _rows.add("tools/call", "CallToolRequest", "CallToolResult", BOTH,
                                  "client", asks="tool", mcp_name="name",
                                  params=p.CallToolParams, offered_as="tools")
    RESOURCES_LIST: Final = _rows.add("resources/list", "ListResourcesRequest",
                                      "ListResourcesResult", BOTH, "client",
                                      params=p.PaginatedParams, offered_as="resources")
    RESOURCES_TEMPLATES_LIST: Final = _rows.add(
        "resources/templates/list", "ListResourceTemplatesRequest",
        "ListResourceTemplatesResult", BOTH, "client", params=p.PaginatedParams,
        offered_as="resources")
    RESOURCES_READ: Final = _rows.add("resources/read", "ReadResourceRequest",
                                      "ReadResourceResult", BOTH, "client", asks="resource",
                                      mcp_name="uri", params=p.ReadResourceParams,
                                      offered_as="resources")
    PROMPTS_LIST: Final = _rows.add("prompts/list", "ListPromptsRequest", "ListPromptsResult",
                                    BOTH, "client", params=p.PaginatedParams,
                                    offered_as="prompts")
    PROMPTS_GET: Final = _rows.add("prompts/get", "GetPromptRequest", "GetPromptResult", BOTH,
                                   "client", asks="prompt", mcp_name="name",
                                   params=p.GetPromptParams, offered_as="prompts")
    COMPLETE: Final = _rows.add("completion/complete", "CompleteRequest", "CompleteResult",
                                BOTH, "client", params=p.CompleteParams,
                                offered_as="completions")
    SUBSCRIPTIONS_LISTEN: Final = _rows.add("subscriptions/listen", "SubscriptionsListenRequest",
                                            "SubscriptionsListenResult", MODERN_ONLY, "client",
                                            params=p.ListenParams)
    # ... and in the legacy (2025-11-25) era only.
    INITIALIZE: Final = _rows.add("initialize", "InitializeRequest", "InitializeResult",
                                  LEGACY_ONLY, "client")
    PING: Final = _rows.add("ping", "PingRequest", "EmptyResult", LEGACY_ONLY, "either")
    SET_LEVEL: Final = _rows.add("logging/setLevel", "SetLevelRequest", "EmptyResult",
                                 LEGACY_ONLY, "client", stateful=True)
    SUBSCRIBE: Final = _rows.add("resources/subscribe", "SubscribeRequest", "EmptyResult",
                                 LEGACY_ONLY, "client", stateful=True)
    UNSUBSCRIBE: Final = _rows.add("resources/unsubscribe", "UnsubscribeRequest", "EmptyResult",
                                   LEGACY_ONLY, "client", stateful=True)

    # Requests a server sends: real requests in the legacy era, input requests inside an
    # `InputRequiredResult` in the modern one.
    ELICIT: Final = _rows.add("elicitation/create", "ElicitRequest", "ElicitResult", BOTH,
                              "server")
    SAMPLE: Final = _rows.add("sampling/createMessage", "CreateMessageRequest",
                              "CreateMessageResult", BOTH, "server")
    ROOTS_LIST: Final = _rows.add("roots/list", "ListRootsRequest", "ListRootsResult", BOTH,
                                  "server")

    # Notifications.
    CANCELLED: Final = _rows.add("notifications/cancelled", "CancelledNotification", None,
                                 BOTH, "either")
    PROGRESS: Final = _rows.add("notifications/progress", "ProgressNotification", None, BOTH,
                                "either")
    MESSAGE: Final = _rows.add("notifications/message", "LoggingMessageNotification", None,
                               BOTH, "server")
    RESOURCE_UPDATED: Final = _rows.add("notifications/resources/updated",
                                        "ResourceUpdatedNotification", None, BOTH, "server")
    RESOURCES_LIST_CHANGED: Final = _rows.add("notifications/resources/list_changed",
                                              "ResourceListChangedNotification", None, BOTH,
                                              "server")
    TOOLS_LIST_CHANGED: Final = _rows.add("notifications/tools/list_changed",
                                          "ToolListChangedNotification", None, BOTH, "server")
    PROMPTS_LIST_CHANGED: Final = _rows.add("notifications/prompts/list_changed",
                                            "PromptListChangedNotification", None, BOTH,
                                            "server")
    SUBSCRIPTIONS_ACKNOWLEDGED: Final = _rows.add(
        "notifications/subscriptions/acknowledged", "SubscriptionsAcknowledgedNotification",
        None, MODERN_ONLY, "server")
    # ... in the legacy era only.
    INITIALIZED: Final = _rows.add("notifications/initialized", "InitializedNotification", None,
                                   LEGACY_ONLY, "client")
    ROOTS_LIST_CHANGED: Final = _rows.add("notifications/roots/list_changed",
                                          "RootsListChangedNotification", None, LEGACY_ONLY,
                                          "client")
    ELICITATION_COMPLETE: Final = _rows.add("notifications/elicitation/complete",
                                            "ElicitationCompleteNotification", None,
                                            LEGACY_ONLY, "server")

    # The Skills extension: served once `mcpkit.ext.skills` adds them; their types are the
    # extension's (ListSkillsResult and GetSkillResult are cacheable, the directory read paged;
    # the directory read is served only when the server's settings say `directoryRead: true`).
    # Offering it is the commitment, so a request need not declare it.
    SKILLS_LIST: Final = _rows.add("skills/list", "ListSkillsRequest", "ListSkillsResult",
                                   MODERN_ONLY, "client", extension=_SKILLS)
    SKILLS_GET: Final = _rows.add("skills/get", "GetSkillRequest", "GetSkillResult",
                                  MODERN_ONLY, "client", extension=_SKILLS)
    RESOURCES_DIRECTORY_READ: Final = _rows.add(
        "resources/directory/read", "ReadResourceDirectoryRequest",
        "ReadResourceDirectoryResult", MODERN_ONLY, "client", extension=_SKILLS)


_TABLE: Final = _rows.rows
METHODS: Final[Mapping[str, MethodInfo]] = MappingProxyType(_TABLE)
"""Method name -> its facts, for every method of both eras, and those extensions add
(`add_rows`)."""
del _rows


def add_rows(*rows: MethodInfo) -> None:
    """Add the rows of an extension's methods to `METHODS`, from the module that defines them
    (at its import, before any server or client uses them: `mcpkit.ext.tasks.wire` adds the
    Tasks extension's). Each row names its extension; a name the table holds already is
    refused, unless it is that very row again (a module imported twice). ValueError, and
    nothing added, for a row refused."""
    for row in rows:
        if row.extension is None:
            raise ValueError(f"method {row.name!r}: a row added to the table names the extension "
                             "that defines it (extension=...)")
        held = _TABLE.get(row.name)
        if held is not None and held != row:
            owner = f"the extension {held.extension}" if held.extension else "the core protocol"
            raise ValueError(f"method {row.name!r} has a row already, of {owner}")
    for row in rows:
        _TABLE[row.name] = row
