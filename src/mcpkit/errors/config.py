"""Configuration and local checks: a setting, file, command line, tool declaration, skill
source or OpenAPI document that cannot be used, and a feature whose extra is not installed.

Each is raised where the thing is configured or read, with a message that names the thing and
the fix; none is sent to a peer as it is. Those about a bad value are also a `ValueError`, so
code that already catches one keeps working.
"""

from __future__ import annotations

from mcpkit.errors.base import MCPError

__all__ = [
    "FrontMatterError",
    "InvalidHeaderDeclaration",
    "KeyFileError",
    "MissingExtraError",
    "OpenAPIError",
    "ServerConfigError",
    "SignInFileError",
    "SkillSourceError",
    "StoreURLError",
    "TargetError",
    "TokenFileError",
    "UnsupportedOperationError",
    "UsageError",
]


class InvalidHeaderDeclaration(MCPError, ValueError):
    """A tool's input schema breaks an `x-mcp-header` rule, so the whole tool is invalid."""


class MissingExtraError(MCPError, ImportError):
    """A feature needs an optional dependency that is not installed.

    The message is the whole of what a user needs, on one line: `<feature> needs the '<extra>'
    extra: pip install 'mcpkit[<extra>]'`. It is raised where the feature is configured or
    registered (`mcpkit.protocol.extras.require`), so a server refuses to start rather than
    fail a call; an ImportError too, so code that already catches one keeps working.
    """

    def __init__(self, feature: str, extra: str, *, module: str | None = None,
                 cause: str | None = None) -> None:
        self.feature = feature
        self.extra = extra
        line = f"{feature} needs the {extra!r} extra: pip install 'mcpkit[{extra}]'"
        if cause:
            line = f"{line} ({cause})"
        super().__init__(line, name=module)


class UsageError(MCPError):
    """A mistake on the command line; its message is what to change, shown on one line (or a
    few, when it lists what the user may choose from), and the exit status is 2."""


class TargetError(MCPError):
    """The target could not be loaded; the message is one line for the user."""


class ServerConfigError(MCPError, ValueError):
    """An `mcpServers` file cannot be read, or its entry cannot be used; names the file."""

    def __init__(self, message: str, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path


class SignInFileError(MCPError, ValueError):
    """The sign-in file cannot be used; the message names the file and the fix."""


class TokenFileError(MCPError, ValueError):
    """The token file exists but cannot be used (others may read it, or it does not parse).
    It is never overwritten: it may hold the only refresh token of a grant."""


class KeyFileError(MCPError, ValueError):
    """The key file exists but cannot be used (readable by others, malformed). It is never
    overwritten: the keys in it may be the only ones that open the retries in flight."""


class StoreURLError(MCPError, ValueError):
    """A store URL of no form this release knows; the message lists the forms."""

    def __init__(self, value: str, reason: str) -> None:
        super().__init__(f"store {value!r}: {reason}")
        self.reason = reason


class SkillSourceError(MCPError, ValueError):
    """A skill that cannot be served as written: the message names the file and the fix."""


class FrontMatterError(MCPError, ValueError):
    """The front matter is missing or is not YAML this reader reads exactly; `.line` is the
    1-based line of `SKILL.md` at fault (0 when the block itself is missing)."""

    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(f"line {line}: {message}" if line else message)
        self.line = line


class OpenAPIError(MCPError, ValueError):
    """An OpenAPI document mcpkit cannot serve, said in one line naming the document and the
    place in it."""


class UnsupportedOperationError(MCPError):
    """What the bridge cannot express for one operation; it is left out, saying why."""
