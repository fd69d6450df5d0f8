"""An extension's options on the core: its server options in `ServerOptions.extensions`, and
the tool options it takes (`Server.take_tool_options`), checked at registration and marking
the tools whose calls its interceptor serves. The extension here is the test's own, so the
seams are shown to need nothing of Tasks (every message the server sends is checked against
the schema by the wire fixture)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from mcpkit.server.extension_options import register_options
from mcpkit.server.options import ServerOptions
from mcpkit.server.server import Server
from mcpkit.server.tools import Tool


@dataclasses.dataclass(frozen=True)
class AuditOptions:
    """The test extension's server options."""

    prefix: str = "audited"


register_options("audit", AuditOptions)


def check_audited(tool: Tool) -> bool:
    level = tool.extension_options.get("audited")
    if level not in (None, "loud", "quiet"):
        raise ValueError(f"tool {tool.name!r}: audited must be \"loud\" or \"quiet\", "
                         f"not {level!r}")
    return level == "loud"


def audit_server(options: ServerOptions | None = None) -> tuple[Server, list[str]]:
    """A core server with the test extension installed: it takes the tool option `audited`
    and answers the calls of the loud ones itself, with its options' prefix."""
    server = Server("audit", options=options)
    seen: list[str] = []

    async def intercept(tool: Tool, params: dict[str, Any], ctx: Any) -> dict[str, Any]:
        seen.append(tool.name)
        prefix = ctx.server.options.extension("audit", AuditOptions).prefix
        return {"resultType": "complete", "isError": False,
                "content": [{"type": "text", "text": f"{prefix}: {tool.name}"}]}

    server.take_tool_options(["audited"], check_audited)
    server.intercept_tool_calls(intercept)
    return server, seen


def test_server_options_hold_an_extensions_options_and_give_its_defaults_otherwise() -> None:
    given = ServerOptions(extensions={"audit": AuditOptions(prefix="kept")})
    assert given.extension("audit", AuditOptions) == AuditOptions(prefix="kept")
    assert ServerOptions().extension("audit", AuditOptions) == AuditOptions()
    with pytest.raises(TypeError):
        given.extensions["audit"] = AuditOptions()  # type: ignore[index]


def test_server_options_refuse_an_unknown_extension_name_and_a_value_of_another_type() -> None:
    with pytest.raises(ValueError, match=r"extensions\['audti'\]: no extension takes options "
                                         r"of that name; known: .*'audit'"):
        ServerOptions(extensions={"audti": AuditOptions()})
    with pytest.raises(TypeError, match=r"extensions\['audit'\] is a AuditOptions, not dict"):
        ServerOptions(extensions={"audit": {"prefix": "x"}})
    with pytest.raises(TypeError, match=r"ServerOptions.extensions maps an extension's name to "
                                        r"its options, not list"):
        ServerOptions(extensions=[("audit", AuditOptions())])  # type: ignore[arg-type]


def test_an_extensions_options_are_named_once_by_an_identifier() -> None:
    register_options("audit", AuditOptions)  # the same pair again: nothing changes
    with pytest.raises(ValueError, match="the extension options 'audit' are AuditOptions "
                                         "already"):
        register_options("audit", dict)
    for name in ("", "two words", "a-b", 7):
        with pytest.raises(ValueError, match="an extension's options are named by an "
                                             f"identifier, not {name!r}"):
            register_options(name, AuditOptions)  # type: ignore[arg-type]
    assert ServerOptions(extensions={"audit": AuditOptions()}).extension(
        "audit", AuditOptions) == AuditOptions()


async def test_a_tool_option_an_extension_takes_is_checked_and_routes_its_calls(
        wire_factory: Any) -> None:
    server, seen = audit_server(ServerOptions(extensions={"audit": AuditOptions("logged")}))

    @server.tool(audited="loud")  # type: ignore[call-arg]
    def loud() -> str:
        return "the function's own answer"

    @server.tool(audited="quiet")  # type: ignore[call-arg]
    def quiet() -> str:
        return "the function's own answer"

    assert server.tools["loud"].intercepted and not server.tools["quiet"].intercepted
    wire = wire_factory(server)
    loud_reply = await wire.request("tools/call", {"name": "loud", "arguments": {}})
    quiet_reply = await wire.request("tools/call", {"name": "quiet", "arguments": {}})
    assert loud_reply["result"]["content"][0]["text"] == "logged: loud"
    assert quiet_reply["result"]["content"][0]["text"] == "the function's own answer"
    assert seen == ["loud"]


def test_a_value_the_extension_refuses_leaves_nothing_registered() -> None:
    server, _ = audit_server()
    with pytest.raises(ValueError, match="tool 'noisy': audited must be \"loud\" or \"quiet\", "
                                         "not 'very'"):
        server.add_tool(lambda: "x", "noisy", audited="very")  # type: ignore[call-arg]
    assert "noisy" not in server.tools


def test_a_tool_option_no_extension_on_the_server_takes_is_refused_in_one_line() -> None:
    server = Server("plain")
    with pytest.raises(ValueError) as refused:
        server.add_tool(lambda: "x", "echo", audited="loud")  # type: ignore[call-arg]
    assert str(refused.value) == (
        "tool 'echo': audited='loud' is no option of the core Server and no extension on this "
        "server takes it; install the one that does before registering the tool, or use "
        "mcpkit.Server, which installs the official ones")
    assert "echo" not in server.tools
    # Left at None or False, an extension's option asks nothing, as leaving it out.
    server.add_tool(lambda: "x", "plain", audited=None)  # type: ignore[call-arg]
    assert server.tools["plain"].extension_options == {}


def test_an_option_of_the_core_or_of_another_extension_cannot_be_taken() -> None:
    server, _ = audit_server()
    with pytest.raises(ValueError, match="tool option 'title' is the core's own"):
        server.take_tool_options(["title"], check_audited)
    with pytest.raises(ValueError, match="the tool option 'audited' is taken already"):
        server.take_tool_options(["audited"], lambda tool: False)
    server.take_tool_options(["audited"], check_audited)  # the same check again: a no-op
