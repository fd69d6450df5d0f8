"""The client's side of extensions: declaring them per request, reading the server's offer,
and sending an extension's methods."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from mcpkit import Context, Server
from mcpkit.client import Client, ClientOptions
from mcpkit.errors import MissingRequiredClientCapabilityError

EXT = "com.example/search"


def server() -> Server:
    srv = Server("ext")
    srv.extension(EXT, {"maxResults": 5})

    async def search(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return {"resultType": "complete", "hits": [params.get("q")],
                "settings": ctx.client_extension(EXT)}

    srv.add_method(EXT, search, extension=EXT)

    @srv.tool()
    def supports(ctx: Context) -> str:
        return str(ctx.client_supports(EXT))

    return srv


async def test_the_client_reads_the_offered_extensions(
        memory_client: Callable[..., Client]) -> None:
    client = memory_client(server())
    assert client.server_extensions == {}
    await client.connect()
    assert client.server_extensions == {EXT: {"maxResults": 5}}


async def test_declared_extensions_go_on_every_request(
        memory_client: Callable[..., Client]) -> None:
    client = memory_client(server(), options=ClientOptions(extensions={EXT: {"deep": True}}))
    result = await client.request(EXT, {"q": "mcp"})
    assert result["hits"] == ["mcp"] and result["settings"] == {"deep": True}
    called = await client.call_tool("supports")
    assert called["content"][0]["text"] == "True"
    caps = client.tap.sent[-1]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
    assert caps["extensions"] == {EXT: {"deep": True}}


async def test_without_declaring_the_server_refuses_the_method(
        memory_client: Callable[..., Client]) -> None:
    client = memory_client(server())
    with pytest.raises(MissingRequiredClientCapabilityError) as caught:
        await client.request(EXT, {"q": "mcp"})
    assert caught.value.data["requiredCapabilities"] == {"extensions": {EXT: {}}}
    assert (await client.call_tool("supports"))["content"][0]["text"] == "False"


def test_extensions_merge_with_other_declared_capabilities() -> None:
    opts = ClientOptions(capabilities={"extensions": {"org.other/x": {}}},
                         extensions={EXT: {}})
    client = Client(object(), options=opts)  # type: ignore[arg-type]
    assert client.capabilities["extensions"] == {"org.other/x": {}, EXT: {}}


@pytest.mark.parametrize(("extensions", "says"), [
    ({"search": {}}, "prefix/name"),
    ({"io.modelcontextprotocol/mine": {}}, "reserved"),
    ({EXT: True}, "settings are a mapping"),
])
def test_bad_extension_options_are_refused(extensions: Any, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        ClientOptions(extensions=extensions)
