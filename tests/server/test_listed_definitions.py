"""What `resources/list`, `resources/templates/list` and `prompts/list` say of each registered
definition: the optional fields given at registration (title, _meta) travel as given. Over a
real stream connection, every result schema-checked."""

from __future__ import annotations

from typing import Any

from mcpkit import Server

META = {"example.com/owner": "docs-team"}


def make_server() -> Server:
    server = Server("definitions-test", "1.0.0")

    @server.resource("test://readme", title="Read me first", meta=META, mime_type="text/plain")
    def readme() -> str:
        """The project's introduction."""
        return "hello"

    @server.resource_template("test://notes/{name}", title="A note", meta=META)
    def note(name: str) -> str:
        """One note by name."""
        return name

    @server.prompt(title="Review a change", meta=META)
    def review(change: str) -> str:
        """Asks for a review."""
        return f"Review {change}"

    @server.resource("test://plain")
    def plain() -> str:
        return "plain"

    return server


async def test_a_resources_title_and_meta_are_listed_as_given(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    listed = (await wire.request("resources/list"))["result"]["resources"]
    assert listed == [
        {"uri": "test://readme", "name": "readme", "title": "Read me first",
         "description": "The project's introduction.", "mimeType": "text/plain",
         "_meta": META},
        {"uri": "test://plain", "name": "plain"},
    ]


async def test_a_templates_title_and_meta_are_listed_as_given(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    listed = (await wire.request("resources/templates/list"))["result"]["resourceTemplates"]
    assert listed == [{"uriTemplate": "test://notes/{name}", "name": "note", "title": "A note",
                       "description": "One note by name.", "_meta": META}]


async def test_a_prompts_title_is_listed_as_given(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    listed = (await wire.request("prompts/list"))["result"]["prompts"]
    assert listed == [{"name": "review", "title": "Review a change",
                       "description": "Asks for a review.",
                       "arguments": [{"name": "change", "required": True}],
                       "_meta": META}]
