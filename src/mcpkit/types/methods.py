"""Every method of both eras, as data: one frozen `MethodInfo` per request or notification.

What the rest of mcpkit needs to know about a method is written here once: the official
schema's definitions of its message and of its result, the eras that have it, who sends it,
whether it may answer `input_required` (and what its target is called then), which params field
its `Mcp-Name` header mirrors, and whether it changes the state of a legacy HTTP session. The
server's routing, the HTTP rules, the legacy adapter and the tests' schema checks all read
`METHODS` (or a set derived from it where they are), so adding a method is one line here and
its handler.

Imports `mcpkit.types` only; no I/O.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal

from mcpkit.types.constants import Method
from mcpkit.types.era import LEGACY, MODERN, Era

__all__ = ["BOTH", "LEGACY_ONLY", "METHODS", "MODERN_ONLY", "MethodInfo", "Sender"]

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


_TASKS: Final = "io.modelcontextprotocol/tasks"
"""The Tasks extension's identifier (`mcpkit.protocol.extensions.TASKS`; types sits below
protocol, so the string is spelled here too, and a test checks the two agree)."""
_SKILLS: Final = "io.modelcontextprotocol/skills"
"""The Skills extension's identifier (`mcpkit.protocol.extensions.SKILLS`), spelled here too."""

_ALL: Final = (
    # Requests a client sends.
    MethodInfo(Method.DISCOVER, "DiscoverRequest", "DiscoverResult", MODERN_ONLY, "client"),
    MethodInfo(Method.TOOLS_LIST, "ListToolsRequest", "ListToolsResult", BOTH, "client"),
    MethodInfo(Method.TOOLS_CALL, "CallToolRequest", "CallToolResult", BOTH, "client",
               asks="tool", mcp_name="name"),
    MethodInfo(Method.RESOURCES_LIST, "ListResourcesRequest", "ListResourcesResult", BOTH,
               "client"),
    MethodInfo(Method.RESOURCES_TEMPLATES_LIST, "ListResourceTemplatesRequest",
               "ListResourceTemplatesResult", BOTH, "client"),
    MethodInfo(Method.RESOURCES_READ, "ReadResourceRequest", "ReadResourceResult", BOTH,
               "client", asks="resource", mcp_name="uri"),
    MethodInfo(Method.PROMPTS_LIST, "ListPromptsRequest", "ListPromptsResult", BOTH, "client"),
    MethodInfo(Method.PROMPTS_GET, "GetPromptRequest", "GetPromptResult", BOTH, "client",
               asks="prompt", mcp_name="name"),
    MethodInfo(Method.COMPLETE, "CompleteRequest", "CompleteResult", BOTH, "client"),
    MethodInfo(Method.SUBSCRIPTIONS_LISTEN, "SubscriptionsListenRequest",
               "SubscriptionsListenResult", MODERN_ONLY, "client"),
    MethodInfo(Method.INITIALIZE, "InitializeRequest", "InitializeResult", LEGACY_ONLY, "client"),
    MethodInfo(Method.PING, "PingRequest", "EmptyResult", LEGACY_ONLY, "either"),
    MethodInfo(Method.SET_LEVEL, "SetLevelRequest", "EmptyResult", LEGACY_ONLY, "client",
               stateful=True),
    MethodInfo(Method.SUBSCRIBE, "SubscribeRequest", "EmptyResult", LEGACY_ONLY, "client",
               stateful=True),
    MethodInfo(Method.UNSUBSCRIBE, "UnsubscribeRequest", "EmptyResult", LEGACY_ONLY, "client",
               stateful=True),
    # Requests a server sends: real requests in the legacy era, input requests inside an
    # `InputRequiredResult` in the modern one.
    MethodInfo(Method.ELICIT, "ElicitRequest", "ElicitResult", BOTH, "server"),
    MethodInfo(Method.SAMPLE, "CreateMessageRequest", "CreateMessageResult", BOTH, "server"),
    MethodInfo(Method.ROOTS_LIST, "ListRootsRequest", "ListRootsResult", BOTH, "server"),
    # Notifications.
    MethodInfo(Method.CANCELLED, "CancelledNotification", None, BOTH, "either"),
    MethodInfo(Method.PROGRESS, "ProgressNotification", None, BOTH, "either"),
    MethodInfo(Method.MESSAGE, "LoggingMessageNotification", None, BOTH, "server"),
    MethodInfo(Method.RESOURCE_UPDATED, "ResourceUpdatedNotification", None, BOTH, "server"),
    MethodInfo(Method.RESOURCES_LIST_CHANGED, "ResourceListChangedNotification", None, BOTH,
               "server"),
    MethodInfo(Method.TOOLS_LIST_CHANGED, "ToolListChangedNotification", None, BOTH, "server"),
    MethodInfo(Method.PROMPTS_LIST_CHANGED, "PromptListChangedNotification", None, BOTH,
               "server"),
    MethodInfo(Method.SUBSCRIPTIONS_ACKNOWLEDGED, "SubscriptionsAcknowledgedNotification", None,
               MODERN_ONLY, "server"),
    MethodInfo(Method.INITIALIZED, "InitializedNotification", None, LEGACY_ONLY, "client"),
    MethodInfo(Method.ROOTS_LIST_CHANGED, "RootsListChangedNotification", None, LEGACY_ONLY,
               "client"),
    MethodInfo(Method.ELICITATION_COMPLETE, "ElicitationCompleteNotification", None, LEGACY_ONLY,
               "server"),
    # The Tasks extension: served only once `mcpkit.ext.tasks` adds them; their types are the
    # ext-tasks schema's. Mcp-Name mirrors the task id so a balancer can route by it (TASK-15).
    MethodInfo(Method.TASKS_GET, "GetTaskRequest", "GetTaskResult", MODERN_ONLY, "client",
               mcp_name="taskId", extension=_TASKS),
    MethodInfo(Method.TASKS_UPDATE, "UpdateTaskRequest", "UpdateTaskResult", MODERN_ONLY,
               "client", mcp_name="taskId", extension=_TASKS),
    MethodInfo(Method.TASKS_CANCEL, "CancelTaskRequest", "CancelTaskResult", MODERN_ONLY,
               "client", mcp_name="taskId", extension=_TASKS),
    MethodInfo(Method.TASKS_NOTIFICATION, "TaskStatusNotification", None, MODERN_ONLY, "server",
               extension=_TASKS),
    # The Skills extension: served once `mcpkit.ext.skills` adds them; their types are the
    # extension's (ListSkillsResult and GetSkillResult are cacheable, the directory read paged).
    MethodInfo(Method.SKILLS_LIST, "ListSkillsRequest", "ListSkillsResult", MODERN_ONLY,
               "client", extension=_SKILLS),
    MethodInfo(Method.SKILLS_GET, "GetSkillRequest", "GetSkillResult", MODERN_ONLY, "client",
               extension=_SKILLS),
    MethodInfo(Method.RESOURCES_DIRECTORY_READ, "ReadResourceDirectoryRequest",
               "ReadResourceDirectoryResult", MODERN_ONLY, "client", extension=_SKILLS),
)

METHODS: Final[Mapping[str, MethodInfo]] = MappingProxyType({m.name: m for m in _ALL})
"""Method name -> its facts, for every method of both eras."""
