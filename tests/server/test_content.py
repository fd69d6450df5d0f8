"""How a handler's return value becomes content (`mcpkit.server.content`): MIME sniffing, `bytes`,
the content helpers, lists of blocks, and the same conversion in prompts and resources. Every
reply travels a `wire_factory` connection and is checked against the official schema."""

from __future__ import annotations

import base64
import logging
from typing import Any

import orjson
import pytest

from mcpkit import Audio, Blob, Image, Message, ResourceLink, Server, Text
from mcpkit.server.content import ContentBlock, sniff_mime_type

PNG = b"\x89PNG\r\n\x1a\n" + bytes(8)
JPEG = b"\xff\xd8\xff\xe0" + bytes(8)
GIF87 = b"GIF87a" + bytes(6)
GIF89 = b"GIF89a" + bytes(6)
OGG = b"OggS" + bytes(8)
MP3 = b"ID3\x04" + bytes(8)
FLAC = b"fLaC" + bytes(8)
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt "
WEBP = b"RIFF\x24\x00\x00\x00WEBPVP8 "
OTHER = b"\x00\x01\x02 not a known format"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


@pytest.mark.parametrize(
    ("data", "mime"),
    [
        (PNG, "image/png"),
        (JPEG, "image/jpeg"),
        (GIF87, "image/gif"),
        (GIF89, "image/gif"),
        (OGG, "audio/ogg"),
        (MP3, "audio/mpeg"),
        (FLAC, "audio/flac"),
        (WAV, "audio/wav"),
        (WEBP, "image/webp"),
        (b"RIFF\x24\x00\x00\x00AVI LIST", "application/octet-stream"),
        (OTHER, "application/octet-stream"),
        (b"", "application/octet-stream"),
        (b"\x89PN", "application/octet-stream"),
    ],
)
def test_mime_types_are_sniffed_from_the_first_bytes(data: bytes, mime: str) -> None:
    assert sniff_mime_type(data) == mime


async def call(wire: Any, name: str, **arguments: Any) -> dict[str, Any]:
    reply = await wire.request("tools/call", {"name": name, "arguments": arguments})
    assert "result" in reply, reply
    result: dict[str, Any] = reply["result"]
    return result


def bytes_server() -> Server:
    server = Server("content")
    samples = {"png": PNG, "wav": WAV, "webp": WEBP, "other": OTHER}

    @server.tool()
    def raw(kind: str) -> bytes:
        """Bytes as they are."""
        return samples[kind]

    @server.tool()
    def raw_array(kind: str) -> bytearray:
        """A bytearray."""
        return bytearray(samples[kind])

    return server


@pytest.mark.parametrize(
    ("kind", "block"),
    [
        ("png", {"type": "image", "data": b64(PNG), "mimeType": "image/png"}),
        ("webp", {"type": "image", "data": b64(WEBP), "mimeType": "image/webp"}),
        ("wav", {"type": "audio", "data": b64(WAV), "mimeType": "audio/wav"}),
        (
            "other",
            {
                "type": "resource",
                "resource": {
                    "uri": "mcpkit:bytes",
                    "blob": b64(OTHER),
                    "mimeType": "application/octet-stream",
                },
            },
        ),
    ],
)
async def test_returned_bytes_become_the_block_their_first_bytes_say(
    wire_factory: Any, kind: str, block: dict[str, Any]
) -> None:
    wire = wire_factory(bytes_server())
    for tool in ("raw", "raw_array"):
        result = await call(wire, tool, kind=kind)
        assert result["content"] == [block], tool
        assert "structuredContent" not in result


def helpers_server() -> Server:
    server = Server("content")
    note = {"audience": ["assistant"], "priority": 1}

    @server.tool()
    def image(explicit: bool = False) -> Image:
        """An image, its type sniffed or given."""
        return Image(PNG, "image/x-custom" if explicit else None, annotations=note)

    @server.tool()
    def audio(explicit: bool = False) -> Audio:
        """Audio, its type sniffed or given."""
        return Audio(FLAC, "audio/x-custom" if explicit else None, annotations=note)

    @server.tool()
    def embedded() -> list[Blob]:
        """Every kind of embedded resource."""
        return [
            Blob("test://t/plain", "words"),
            Blob("test://t/typed", "# words", "text/markdown", annotations=note),
            Blob("test://b/sniffed", GIF89),
            Blob("test://b/typed", OTHER, "application/x-thing"),
        ]

    @server.tool()
    def links() -> list[ResourceLink]:
        """A bare link and a described one."""
        return [
            ResourceLink("test://doc/1", "one"),
            ResourceLink("test://doc/2", "two", title="Two", description="The second",
                         mime_type="text/plain"),
        ]

    @server.tool()
    def text() -> Text:
        """Text without and with annotations is tested by the tool-output tests; here, bare."""
        return Text("bare")

    return server


@pytest.mark.parametrize(
    ("explicit", "image_mime", "audio_mime"),
    [(False, "image/png", "audio/flac"), (True, "image/x-custom", "audio/x-custom")],
)
async def test_image_and_audio_helpers_sniff_their_type_unless_told(
    wire_factory: Any, explicit: bool, image_mime: str, audio_mime: str
) -> None:
    wire = wire_factory(helpers_server())
    note = {"audience": ["assistant"], "priority": 1}
    image = await call(wire, "image", explicit=explicit)
    assert image["content"] == [
        {"type": "image", "data": b64(PNG), "mimeType": image_mime, "annotations": note}
    ]
    audio = await call(wire, "audio", explicit=explicit)
    assert audio["content"] == [
        {"type": "audio", "data": b64(FLAC), "mimeType": audio_mime, "annotations": note}
    ]


async def test_blob_embeds_text_or_bytes_under_its_uri(wire_factory: Any) -> None:
    wire = wire_factory(helpers_server())
    result = await call(wire, "embedded")
    assert result["content"] == [
        {"type": "resource", "resource": {"uri": "test://t/plain", "text": "words"}},
        {
            "type": "resource",
            "resource": {"uri": "test://t/typed", "text": "# words", "mimeType": "text/markdown"},
            "annotations": {"audience": ["assistant"], "priority": 1},
        },
        {
            "type": "resource",
            "resource": {"uri": "test://b/sniffed", "blob": b64(GIF89), "mimeType": "image/gif"},
        },
        {
            "type": "resource",
            "resource": {"uri": "test://b/typed", "blob": b64(OTHER),
                         "mimeType": "application/x-thing"},
        },
    ]


async def test_resource_links_carry_only_the_fields_given(wire_factory: Any) -> None:
    wire = wire_factory(helpers_server())
    result = await call(wire, "links")
    assert result["content"] == [
        {"type": "resource_link", "uri": "test://doc/1", "name": "one"},
        {
            "type": "resource_link",
            "uri": "test://doc/2",
            "name": "two",
            "title": "Two",
            "description": "The second",
            "mimeType": "text/plain",
        },
    ]
    bare = await call(wire, "text")
    assert bare["content"] == [{"type": "text", "text": "bare"}]


def lists_server() -> Server:
    server = Server("content")

    @server.tool()
    def mixed() -> Any:
        """Text, bytes, helpers and block dicts in one list."""
        return [
            "first",
            PNG,
            Text("third"),
            {"type": "text", "text": "fourth"},
            {"type": "resource", "resource": {"uri": "test://x", "text": "fifth"}},
        ]

    @server.tool()
    def pair() -> Any:
        """A tuple of blocks."""
        return (Text("a"), "b")

    @server.tool()
    def nothing() -> None:
        """Returns None."""

    @server.tool()
    def empty() -> Any:
        """An empty list is data, not content."""
        return []

    @server.tool()
    def beside_text(item: dict[str, Any]) -> Any:
        """A text helper and the dict it is given."""
        return [Text("ok"), item]

    return server


async def test_a_list_of_text_bytes_helpers_and_block_dicts_is_content_in_order(
    wire_factory: Any,
) -> None:
    wire = wire_factory(lists_server())
    result = await call(wire, "mixed")
    assert result["content"] == [
        {"type": "text", "text": "first"},
        {"type": "image", "data": b64(PNG), "mimeType": "image/png"},
        {"type": "text", "text": "third"},
        {"type": "text", "text": "fourth"},
        {"type": "resource", "resource": {"uri": "test://x", "text": "fifth"}},
    ]
    assert "structuredContent" not in result
    pair = await call(wire, "pair")
    assert pair["content"] == [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]


async def test_none_is_no_content_and_an_empty_list_is_data(wire_factory: Any) -> None:
    wire = wire_factory(lists_server())
    assert (await call(wire, "nothing"))["content"] == []
    assert (await call(wire, "empty"))["content"] == [{"type": "text", "text": "[]"}]


@pytest.mark.parametrize(
    "item",
    [
        {"type": "text", "value": 3},
        {"type": "text", "text": 3},
        {"type": "image", "data": "aGk="},
        {"type": "audio", "data": 5, "mimeType": "audio/wav"},
        {"type": "resource_link", "uri": "test://x"},
        {"type": "resource"},
        {"type": "resource", "resource": "test://x"},
        {"type": "resource", "resource": {"uri": "test://x"}},
        {"type": "resource", "resource": {"text": "no uri"}},
        {"type": "video", "url": "test://v"},
        {"type": 7},
    ],
)
async def test_dicts_that_only_look_like_blocks_are_sent_as_data_not_as_invalid_blocks(
    wire_factory: Any, item: dict[str, Any]
) -> None:
    """Passed on as a block such a dict would make the whole result invalid on the wire."""
    wire = wire_factory(lists_server())
    result = await call(wire, "beside_text", item=item)
    assert [block["type"] for block in result["content"]] == ["text"]
    assert orjson.loads(result["content"][0]["text"])[1] == item


@pytest.mark.parametrize(
    "item",
    [
        {"type": "image", "data": "aGk=", "mimeType": "image/png"},
        {"type": "audio", "data": "aGk=", "mimeType": "audio/wav"},
        {"type": "resource_link", "uri": "test://x", "name": "x"},
        {"type": "resource", "resource": {"uri": "test://x", "blob": "aGk="}},
    ],
)
async def test_complete_block_dicts_are_passed_on_as_blocks(
    wire_factory: Any, item: dict[str, Any]
) -> None:
    wire = wire_factory(lists_server())
    result = await call(wire, "beside_text", item=item)
    assert result["content"] == [{"type": "text", "text": "ok"}, item]


async def test_a_helper_without_a_wire_form_is_a_tool_failure_and_the_server_goes_on(
    wire_factory: Any, caplog: pytest.LogCaptureFixture
) -> None:
    class Sticker(ContentBlock):
        __slots__ = ()

    server = lists_server()

    @server.tool()
    def sticker() -> ContentBlock:
        """A helper that never says what it looks like on the wire."""
        return Sticker()

    wire = wire_factory(server)
    with caplog.at_level(logging.ERROR, logger="mcpkit.server"):
        reply = await wire.request("tools/call", {"name": "sticker"})
    result = reply["result"]
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert text.startswith("tool 'sticker' failed (error id ")
    error_id = text.split("(error id ")[1].split(")")[0]
    assert f"tool 'sticker' failed (error id {error_id})" in caplog.text
    assert "NotImplementedError" in caplog.text and "NotImplementedError" not in text
    assert (await call(wire, "pair"))["content"][0] == {"type": "text", "text": "a"}


def prompt_server() -> Server:
    server = Server("content")

    @server.prompt()
    def show() -> list[Any]:
        """Messages of every shape a prompt may return."""
        return [
            Message("user", Image(PNG)),
            {"role": "assistant", "content": "dict message"},
            {"role": "user", "content": {"type": "text", "text": "block dict"}},
            Blob("test://p", "embedded"),
            "plain",
        ]

    @server.prompt()
    def one_block() -> dict[str, Any]:
        """One block dict."""
        return {"type": "resource_link", "uri": "test://doc", "name": "doc"}

    @server.prompt()
    def one_message() -> Message:
        """One message."""
        return Message("assistant", Audio(OGG))

    @server.prompt()
    def bad_content() -> Message:
        """A message whose content is no content."""
        return Message("user", 42)

    @server.prompt()
    def bad_value() -> int:
        """Not messages at all."""
        return 42

    return server


async def test_prompts_turn_text_helpers_and_dicts_into_messages(wire_factory: Any) -> None:
    wire = wire_factory(prompt_server())
    show = (await wire.request("prompts/get", {"name": "show"}))["result"]
    assert show["messages"] == [
        {"role": "user", "content": {"type": "image", "data": b64(PNG), "mimeType": "image/png"}},
        {"role": "assistant", "content": {"type": "text", "text": "dict message"}},
        {"role": "user", "content": {"type": "text", "text": "block dict"}},
        {"role": "user", "content": {"type": "resource",
                                     "resource": {"uri": "test://p", "text": "embedded"}}},
        {"role": "user", "content": {"type": "text", "text": "plain"}},
    ]
    assert show["description"] == "Messages of every shape a prompt may return."
    block = (await wire.request("prompts/get", {"name": "one_block"}))["result"]
    assert block["messages"] == [
        {"role": "user", "content": {"type": "resource_link", "uri": "test://doc", "name": "doc"}}
    ]
    one = (await wire.request("prompts/get", {"name": "one_message"}))["result"]
    assert one["messages"] == [
        {"role": "assistant", "content": {"type": "audio", "data": b64(OGG), "mimeType": "audio/ogg"}}
    ]


@pytest.mark.parametrize(
    ("name", "logged"),
    [
        ("bad_content", "prompt message content cannot be int"),
        ("bad_value", "a prompt must return text, messages or content, not int"),
    ],
)
async def test_a_prompt_returning_no_content_is_an_internal_error_that_is_logged(
    wire_factory: Any, caplog: pytest.LogCaptureFixture, name: str, logged: str
) -> None:
    wire = wire_factory(prompt_server())
    with caplog.at_level(logging.ERROR, logger="mcpkit.server"):
        reply = await wire.request("prompts/get", {"name": name})
    assert reply["error"]["code"] == -32603
    assert "42" not in reply["error"]["message"]
    assert logged in caplog.text
    assert "result" in await wire.request("prompts/get", {"name": "one_block"})


def resource_server() -> Server:
    server = Server("content")

    @server.resource("test://text")
    def text() -> str:
        """Text with no declared type."""
        return "hello"

    @server.resource("test://bytes")
    def raw() -> bytes:
        """Bytes with no declared type."""
        return PNG

    @server.resource("test://typed-bytes", mime_type="image/png")
    def typed() -> bytes:
        """Bytes with a declared type."""
        return PNG

    @server.resource("test://blobs")
    def blobs() -> list[Blob]:
        """Several contents under one read."""
        return [Blob("test://blobs/a", "A", "text/plain"), Blob("test://blobs/b", OTHER)]

    @server.resource("test://blob")
    def blob() -> Blob:
        """One Blob."""
        return Blob("test://blob", "only")

    @server.resource("test://data", mime_type="application/vnd.example+json")
    def data() -> dict[str, Any]:
        """Data with a declared JSON type."""
        return {"n": 1}

    return server


@pytest.mark.parametrize(
    ("uri", "contents"),
    [
        ("test://text", [{"uri": "test://text", "text": "hello"}]),
        (
            "test://bytes",
            [{"uri": "test://bytes", "blob": b64(PNG), "mimeType": "application/octet-stream"}],
        ),
        ("test://typed-bytes", [{"uri": "test://typed-bytes", "blob": b64(PNG), "mimeType": "image/png"}]),
        (
            "test://blobs",
            [
                {"uri": "test://blobs/a", "text": "A", "mimeType": "text/plain"},
                {"uri": "test://blobs/b", "blob": b64(OTHER), "mimeType": "application/octet-stream"},
            ],
        ),
        ("test://blob", [{"uri": "test://blob", "text": "only"}]),
        (
            "test://data",
            [{"uri": "test://data", "mimeType": "application/vnd.example+json", "text": '{"n":1}'}],
        ),
    ],
)
async def test_resource_reads_turn_text_bytes_blobs_and_data_into_contents(
    wire_factory: Any, uri: str, contents: list[dict[str, Any]]
) -> None:
    wire = wire_factory(resource_server())
    result = (await wire.request("resources/read", {"uri": uri}))["result"]
    assert result["contents"] == contents
