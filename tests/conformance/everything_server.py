"""The conformance server: every fixture the official suite's server scenarios call.

Built with mcpkit's public API only, one `Server` serving both eras: the names, texts and
behaviours are the ones the suite looks for (see section CONF of the requirements digest).
Run it as `mcpkit run tests/conformance/everything_server.py --http`; `scripts/conformance`
does that and points the suite at it.

Imports: `mcpkit`'s public names and the standard library only.
"""

from __future__ import annotations

import asyncio
import struct
import zlib
from typing import Annotated, Any

from mcpkit import (
    Audio,
    Blob,
    Context,
    Image,
    Message,
    Param,
    Server,
    Text,
    ToolError,
)
from mcpkit.errors import MissingRequiredClientCapabilityError

server = Server(
    "mcpkit-conformance-server",
    "1.0.0",
    title="mcpkit conformance server",
    instructions="Fixtures for the official MCP conformance suite.",
)


def _png_pixel() -> bytes:
    """A 1x1 red PNG, built here so the fixture carries no opaque blob."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def _wav_silence() -> bytes:
    """A mono 8 kHz 16-bit WAV holding one silent sample."""
    samples = b"\x00\x00"
    fmt = struct.pack("<HHIIHH", 1, 1, 8000, 16000, 2, 16)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt
    body += b"data" + struct.pack("<I", len(samples)) + samples
    return b"RIFF" + struct.pack("<I", len(body)) + body


PNG = _png_pixel()
WAV = _wav_silence()

JSON_SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


# -- tools: content of every kind -----------------------------------------------------------
# The first tool listed must succeed when called with no arguments (header scenarios call it).


@server.tool()
def test_simple_text() -> str:
    """Tests simple text content response."""
    return "This is a simple text response for testing."


@server.tool()
def test_image_content() -> Image:
    """Tests image content response."""
    return Image(PNG, "image/png")


@server.tool()
def test_audio_content() -> Audio:
    """Tests audio content response."""
    return Audio(WAV, "audio/wav")


@server.tool()
def test_embedded_resource() -> Blob:
    """Tests embedded resource content response."""
    return Blob("test://embedded-resource", "This is an embedded resource content.", "text/plain")


@server.tool()
def test_multiple_content_types() -> list[Text | Image | Blob]:
    """Tests a response with several content types (text, image, resource)."""
    return [
        Text("Multiple content types test:"),
        Image(PNG, "image/png"),
        Blob("test://mixed-content-resource", '{"test":"data","value":123}', "application/json"),
    ]


@server.tool()
def test_error_handling() -> str:
    """Tests error response handling: the call fails as a tool result, not a protocol error."""
    raise ToolError("This tool intentionally returns an error for testing")


@server.tool()
async def test_tool_with_progress(ctx: Context) -> str:
    """Tests a tool that reports progress notifications."""
    for step in (0, 50, 100):
        await ctx.report_progress(step, 100, f"Completed step {step} of 100")
        if step < 100:
            await asyncio.sleep(0.05)
    return f"progress reported to {ctx.meta.progress_token!r}"


@server.tool()
async def test_tool_with_logging(ctx: Context) -> str:
    """Tests a tool that emits log messages during execution."""
    for i, text in enumerate(
        ("Tool execution started", "Tool processing data", "Tool execution completed")
    ):
        await ctx.info(text, logger="conformance")
        if i < 2:
            await asyncio.sleep(0.05)
    return "Tool with logging executed successfully"


@server.tool(input_schema=JSON_SCHEMA_2020_12)
def json_schema_2020_12_tool(**arguments: Any) -> str:
    """Tool whose input schema uses JSON Schema 2020-12 features (kept verbatim)."""
    return f"JSON Schema 2020-12 tool called with: {sorted(arguments)}"


# -- tools: the modern era's diagnostics --------------------------------------------------------


@server.tool()
def test_missing_capability(ctx: Context) -> str:
    """Needs the client's sampling capability; without it the request fails with -32021."""
    if "sampling" not in ctx.client_capabilities:
        raise MissingRequiredClientCapabilityError(
            {"sampling": {}},
            "tools/call test_missing_capability needs the client capability sampling; "
            "declare it in _meta clientCapabilities",
        )
    return "Success"


@server.tool()
def test_streaming_elicitation() -> str:
    """Answers on its own stream with no request to the client in it."""
    return "Streaming complete"


@server.tool()
async def test_logging_tool(ctx: Context) -> str:
    """Logs only when the request asked for a log level."""
    await ctx.info("Diagnostic trace logging activated")
    return "Logging evaluated"


@server.tool()
def test_trigger_tool_change() -> str:
    """Announces a tool list change to every listen stream that asked for it."""
    server.notify_tools_changed()
    return "Tool list change announced"


@server.tool()
def test_trigger_prompt_change() -> str:
    """Announces a prompt list change to every listen stream that asked for it."""
    server.notify_prompts_changed()
    return "Prompt list change announced"


@server.tool()
def test_custom_header(
    region: Annotated[str, Param("Where to run", header="Region")] = "us-west1",
) -> str:
    """Mirrors its region argument into the Mcp-Param-Region header."""
    return f"region={region}"


# -- resources ----------------------------------------------------------------------------------


@server.resource(
    "test://static-text", name="static-text", title="Static Text Resource", mime_type="text/plain"
)
def static_text() -> str:
    """A static text resource for testing."""
    return "This is the content of the static text resource."


@server.resource(
    "test://static-binary", name="static-binary", title="Static Binary Resource",
    mime_type="image/png",
)
def static_binary() -> bytes:
    """A static binary resource (an image) for testing."""
    return PNG


@server.resource(
    "test://watched-resource", name="watched-resource", title="Watched Resource",
    mime_type="text/plain",
)
def watched_resource() -> str:
    """A resource clients may subscribe to."""
    return "Watched resource content"


@server.resource_template(
    "test://template/{id}/data", name="template", title="Resource Template",
    mime_type="application/json",
)
def template_data(id: str) -> dict[str, Any]:
    """A resource template with parameter substitution."""
    return {"id": id, "templateTest": True, "data": f"Data for ID: {id}"}


# -- prompts ------------------------------------------------------------------------------------


@server.prompt(title="Simple Test Prompt")
def test_simple_prompt() -> str:
    """A simple prompt without arguments."""
    return "This is a simple prompt for testing."


@server.prompt(title="Prompt With Arguments")
def test_prompt_with_arguments(
    arg1: Annotated[str, Param("First test argument")],
    arg2: Annotated[str, Param("Second test argument")],
) -> str:
    """A prompt with required arguments."""
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.prompt(title="Prompt With Embedded Resource")
def test_prompt_with_embedded_resource(
    resourceUri: Annotated[str, Param("URI of the resource to embed")],
) -> list[Message]:
    """A prompt that includes an embedded resource."""
    return [
        Message("user", Blob(resourceUri, "Embedded resource content for testing.", "text/plain")),
        Message("user", "Please process the embedded resource above."),
    ]


@server.prompt(title="Prompt With Image")
def test_prompt_with_image() -> list[Message]:
    """A prompt that includes image content."""
    return [Message("user", Image(PNG, "image/png")), Message("user", "Please analyze the image above.")]


# -- completion ---------------------------------------------------------------------------------

_COMPLETIONS = {"arg1": ["test", "testValue1", "text"], "arg2": ["testValue2", "value"]}


@server.completer()
def complete(ref: dict[str, Any], argument: dict[str, Any], context: dict[str, Any]) -> list[str]:
    """Values of the prompt arguments that start with what was typed."""
    typed = argument["value"]
    return [v for v in _COMPLETIONS.get(argument["name"], []) if v.startswith(typed)]
