"""Two registration seams a server serving what it learns at run time needs (the proxy does):
`Server.set_resource_fallback`, which reads the URIs no resource or template serves, and
`PromptOptions.arguments`, a prompt's arguments as the wire lists them (names that are no
Python names included), passed to a `**arguments` function; over a real stream."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit import Blob, Context, Message, Server


def fallback_server() -> Server:
    server = Server("files", "1.0.0")

    @server.resource("files://readme", mime_type="text/plain")
    def readme() -> str:
        return "listed"

    async def any_file(uri: str, ctx: Context) -> Any:
        if uri.endswith("/missing"):
            return None
        return [Blob(uri, f"read by {ctx.method}", "text/plain"),
                Blob(uri + "#raw", b"\x00\x01")]

    server.set_resource_fallback(any_file)
    return server


async def test_a_uri_nothing_lists_is_read_by_the_fallback(wire_factory: Any) -> None:
    wire = wire_factory(fallback_server())
    listed = (await wire.request("resources/read", {"uri": "files://readme"}))["result"]
    assert listed["contents"][0]["text"] == "listed"
    read = (await wire.request("resources/read", {"uri": "files://a/b"}))["result"]
    assert read["contents"][0] == {"uri": "files://a/b", "text": "read by resources/read",
                                   "mimeType": "text/plain"}
    assert read["contents"][1]["uri"] == "files://a/b#raw" and read["contents"][1]["blob"]
    missing = await wire.request("resources/read", {"uri": "files://a/missing"})
    assert missing["error"]["code"] == -32602
    assert missing["error"]["data"] == {"uri": "files://a/missing"}
    listing = (await wire.request("resources/list"))["result"]["resources"]
    assert [r["uri"] for r in listing] == ["files://readme"]  # the fallback lists nothing


async def test_a_server_with_only_a_fallback_offers_resources() -> None:
    server = Server("bare", "1.0.0")
    assert "resources" not in server.capabilities()
    server.set_resource_fallback(lambda uri: f"echo {uri}")
    assert server.capabilities()["resources"] == {"subscribe": True, "listChanged": True}
    server.set_resource_fallback(None)
    assert "resources" not in server.capabilities()


def test_a_fallback_takes_the_uri_as_its_one_parameter() -> None:
    server = Server("x", "1.0.0")
    with pytest.raises(ValueError, match="one parameter `uri`"):
        server.set_resource_fallback(lambda path: path)


def letter_server() -> Server:
    server = Server("letters", "1.0.0")

    async def letter(**arguments: str) -> list[Message]:
        return [Message("user", f"Dear {arguments['first-name']} ({sorted(arguments)})")]

    server.add_prompt(letter, description="A letter.", arguments=[
        {"name": "first-name", "title": "First name", "description": "Who", "required": True},
        {"name": "tone", "required": False}])
    return server


async def test_declared_prompt_arguments_are_listed_and_passed_by_name(
        wire_factory: Any) -> None:
    wire = wire_factory(letter_server())
    (listed,) = (await wire.request("prompts/list"))["result"]["prompts"]
    assert listed == {"name": "letter", "description": "A letter.", "arguments": [
        {"name": "first-name", "title": "First name", "description": "Who", "required": True},
        {"name": "tone", "required": False}]}
    got = (await wire.request("prompts/get", {"name": "letter", "arguments": {
        "first-name": "Ada", "other": "dropped"}}))["result"]
    assert got["messages"][0]["content"]["text"] == "Dear Ada (['first-name'])"
    missing = await wire.request("prompts/get", {"name": "letter", "arguments": {"tone": "x"}})
    assert "missing required argument(s): first-name" in missing["error"]["message"]


@pytest.mark.parametrize("declared, problem", [
    ([{"name": ""}], "arguments[0] must be an object with a name"),
    ([{"name": "a"}, {"name": "a"}], "arguments[1] must be an object with a name"),
    (["a"], "arguments[0] must be an object"),
    ([{"name": "a", "required": "yes"}], "arguments[0].required must be a boolean"),
    ([{"name": "a", "description": 5}], "arguments[0].description must be a string"),
])
def test_declared_prompt_arguments_are_checked_at_registration(declared: list[Any],
                                                               problem: str) -> None:
    server = Server("x", "1.0.0")
    with pytest.raises(ValueError, match=problem.replace("[", r"\[").replace("]", r"\]")):
        server.add_prompt(lambda **a: "x", name="p", arguments=declared)


def test_declared_arguments_need_a_function_taking_them_as_keywords() -> None:
    server = Server("x", "1.0.0")
    with pytest.raises(TypeError, match=r"\*\*arguments"):
        server.add_prompt(lambda name: name, name="p", arguments=[{"name": "name"}])
