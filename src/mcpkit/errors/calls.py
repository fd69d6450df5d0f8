"""What a call meets on this side that is not a JSON-RPC error: a tool's failure reported to the
model, a peer that broke the protocol, a result, argument or answer that does not fit, and a wait
that ended without a result. Raised locally, never sent as they are."""

from __future__ import annotations

from collections.abc import Mapping

from mcpkit.errors.base import MCPError

__all__ = [
    "ArgumentsError",
    "ElicitationAnswerError",
    "EntryError",
    "FormSchemaError",
    "InputRoundsExceededError",
    "NoCommonVersionError",
    "NotJSONError",
    "ProtocolViolation",
    "ResultTypeError",
    "SkillVerificationError",
    "TaskCancelledError",
    "ToolError",
    "ViewError",
]


class ToolError(MCPError):
    """Raised by a tool to report a failure to the model as an `isError: true` result."""


class ProtocolViolation(MCPError):
    """The peer sent something the protocol forbids; raised on this side only."""


class FormSchemaError(ProtocolViolation):
    """A server's `requestedSchema` is not a form a client can render (ELIC-5)."""


class SkillVerificationError(ProtocolViolation):
    """A skill's file fails its entry (digest, size, front matter, unlisted): not used."""

    def __init__(self, message: str, *, skill: str, uri: str) -> None:
        super().__init__(message)
        self.skill, self.uri = skill, uri


class EntryError(MCPError, ValueError):
    """A skill entry a server sent breaks the extension's rules, so it is never loaded."""


class ViewError(MCPError, ValueError):
    """An MCP App view a host cannot show as it is (not a view, no HTML, or a policy that asks
    for more than origins); the message names the view and why."""


class NoCommonVersionError(MCPError):
    """The server speaks no protocol version this client speaks (raised locally)."""


class ResultTypeError(MCPError, TypeError):
    """A tool's structured content does not fit the type `call_tool(..., result=T)` named."""


class NotJSONError(MCPError, TypeError):
    """A request the client was asked to send holds a value JSON cannot carry (an integer
    beyond the 64-bit range, a set, an object); refused before any byte is written."""


class ArgumentsError(MCPError, ValueError):
    """The arguments do not fit the schema; `problems` lists each one with its JSON path."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


class ElicitationAnswerError(MCPError, ValueError):
    """An elicitation answer that does not match the request; nothing was sent."""

    def __init__(self, message: str, problems: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.problems: dict[str, str] = dict(problems or {})
        """Field name -> what is wrong with its value ("" for the answer as a whole)."""


class InputRoundsExceededError(MCPError):
    """A call kept answering `input_required` past `ClientOptions.max_rounds`."""


class TaskCancelledError(MCPError):
    """A task the client waited on ended `cancelled`, so there is no result (TASK-11)."""

    def __init__(self, message: str, task_id: str) -> None:
        super().__init__(message)
        self.task_id = task_id
