"""The conformance server: every fixture the official suite's server scenarios call.

Built with mcpkit's public API only, one `Server` serving both eras: the names, texts and
behaviours are the ones the suite looks for (see section CONF of the requirements digest).
Run it as `mcpkit run tests/conformance/everything_server.py --http`; `scripts/conformance`
does that and points the suite at it.

Imports: `mcpkit`'s public names and the standard library only.
"""

from __future__ import annotations

import asyncio
import json
import struct
import zlib
from typing import Annotated, Any

from mcpkit import (
    Audio,
    Blob,
    Context,
    Elicit,
    Elicited,
    Image,
    ListRoots,
    Message,
    Param,
    Sample,
    Server,
    Text,
    ToolError,
)
from mcpkit.errors import MissingRequiredClientCapabilityError
from mcpkit.transports.legacy.resume import close_sse_stream

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
async def test_reconnection() -> str:
    """Tests SSE polling: closes its stream's connection mid-call; the client resumes it."""
    # 2025-11-25 clients get an event id and `retry`, then the connection ends; the answer
    # arrives on their GET with Last-Event-ID. Elsewhere (2026-07-28) this does nothing.
    await close_sse_stream(retry_ms=500)
    return "Reconnection test completed"


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


# -- tools: asking the client for input ------------------------------------------------------
# One handler serves both eras: a legacy session sends each question to the client as a request
# on the call's own stream; a modern request answers `input_required` and runs again on the retry.


def _form(**fields: dict[str, Any]) -> dict[str, Any]:
    """A form schema whose fields are all required."""
    return {"type": "object", "properties": fields, "required": list(fields)}


def _outcome(answer: Elicited) -> str:
    return f"action={answer.action}, content={json.dumps(answer.raw.get('content') or {})}"


@server.tool()
async def test_sampling(
    prompt: Annotated[str, Param("The prompt to send to the model")], ctx: Context
) -> str:
    """Asks the client's model for a completion."""
    sampled = await ctx.sample("completion", prompt, max_tokens=100)
    return f"LLM response: {sampled.text or 'No response'}"


@server.tool()
async def test_elicitation(
    message: Annotated[str, Param("The message to show the user")], ctx: Context
) -> str:
    """Asks the user for input."""
    form = {"type": "object", "properties": {
        "username": {"type": "string", "description": "Your user name"},
        "email": {"type": "string", "format": "email", "description": "Your email address"},
    }}
    answer = await ctx.elicit("response", message, form)
    return f"User response: {_outcome(answer)}"


SEP1034_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {"type": "string", "description": "User status",
                   "enum": ["active", "inactive", "pending"], "default": "active"},
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    },
    "required": [],
}

SEP1330_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "description": "Select one option",
                           "enum": ["option1", "option2", "option3"]},
        "titledSingle": {"type": "string", "description": "Select one option with titles",
                         "oneOf": [{"const": "value1", "title": "First Option"},
                                   {"const": "value2", "title": "Second Option"},
                                   {"const": "value3", "title": "Third Option"}]},
        "legacyEnum": {"type": "string", "description": "Select one option (legacy)",
                       "enum": ["opt1", "opt2", "opt3"],
                       "enumNames": ["Option One", "Option Two", "Option Three"]},
        "untitledMulti": {"type": "array", "description": "Select multiple options",
                          "minItems": 1, "maxItems": 3,
                          "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
        "titledMulti": {"type": "array", "description": "Select multiple options with titles",
                        "minItems": 1, "maxItems": 3,
                        "items": {"anyOf": [{"const": "value1", "title": "First Choice"},
                                            {"const": "value2", "title": "Second Choice"},
                                            {"const": "value3", "title": "Third Choice"}]}},
    },
    "required": [],
}


@server.tool()
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """Asks for a form whose fields of every primitive type carry defaults."""
    answer = await ctx.elicit(
        "form", "Please review and update the form fields with defaults", SEP1034_FORM
    )
    return f"Elicitation completed: {_outcome(answer)}"


@server.tool()
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """Asks for a form with every kind of single- and multi-select field."""
    answer = await ctx.elicit("form", "Please select options from the enum fields", SEP1330_FORM)
    return f"Elicitation completed: {_outcome(answer)}"


NAME_FORM = _form(name={"type": "string"})


@server.tool()
async def test_input_required_result_elicitation(ctx: Context) -> str:
    """Asks for the user's name, then greets them."""
    answer = await ctx.elicit("user_name", "What is your name?", NAME_FORM)
    return f"Hello, {answer.get('name', 'stranger')}!"


@server.tool()
async def test_input_required_result_sampling(ctx: Context) -> str:
    """Asks the client's model a question."""
    sampled = await ctx.sample("capital_question", "What is the capital of France?", max_tokens=100)
    return f"Sampling result: {sampled.text or 'no response'}"


@server.tool()
async def test_input_required_result_list_roots(ctx: Context) -> str:
    """Asks which roots the client exposes."""
    roots = await ctx.roots("client_roots")
    return f"Found {len(roots)} root(s)"


@server.tool()
async def test_input_required_result_request_state(ctx: Context) -> str:
    """Keeps state across rounds: what round one wrote must come back with the retry."""
    ctx.state.setdefault("asked", "confirm")
    answer = await ctx.elicit("confirm", "Please confirm", _form(ok={"type": "boolean"}))
    if ctx.state.get("asked") != "confirm":
        return "state-missing: the retry's requestState did not carry round one's state"
    return f"state-ok: requestState came back intact (ok={answer.get('ok')})"


@server.tool()
async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
    """Asks for three kinds of input at once."""
    answers = await ctx.ask({
        "user_name": Elicit("What is your name?", NAME_FORM),
        "greeting": Sample("Generate a greeting", max_tokens=50),
        "client_roots": ListRoots(),
    })
    return (f"Name: {answers['user_name'].get('name')}; Greeting: {answers['greeting'].text}; "
            f"Roots: {len(answers['client_roots'])}")


@server.tool()
async def test_input_required_result_multi_round(ctx: Context) -> str:
    """Asks one question per round, two rounds in a row."""
    name = await ctx.elicit("step1", "Step 1: What is your name?", NAME_FORM)
    color = await ctx.elicit(
        "step2", "Step 2: What is your favorite color?", _form(color={"type": "string"})
    )
    return f"Multi-round complete for {name.get('name')} who likes {color.get('color')}"


@server.tool()
async def test_input_required_result_tampered_state(ctx: Context) -> str:
    """Its requestState is sealed: a retry with an altered one is refused."""
    answer = await ctx.elicit("confirm", "Please confirm", _form(ok={"type": "boolean"}))
    return f"integrity-ok: state verified (ok={answer.get('ok')})"


@server.tool()
async def test_input_required_result_capabilities(ctx: Context) -> str:
    """Asks only what the request's declared capabilities allow."""
    answers = await ctx.ask(
        {
            "elicit_input": Elicit("Elicitation input", _form(value={"type": "string"})),
            "sample_input": Sample("Sample request", max_tokens=50),
        },
        skip_unsupported=True,
    )
    received = [key for key, value in answers.items() if value is not None]
    if not received:
        return "No supported capabilities declared"
    return f"capabilities-ok: received {','.join(received)}"


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


@server.prompt(title="Prompt Needing Input")
async def test_input_required_result_prompt(ctx: Context) -> str:
    """A prompt that asks the user for context before it renders."""
    answer = await ctx.elicit(
        "user_context", "What context should the prompt use?", _form(context={"type": "string"})
    )
    return f"Prompt with context: {answer.get('context', 'none')}"


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


# -- the Tasks extension ------------------------------------------------------------------------

from task_fixtures import add_task_fixtures  # noqa: E402 -- beside this file

add_task_fixtures(server)


# -- the Skills extension -----------------------------------------------------------------------

from pathlib import Path  # noqa: E402

from mcpkit.ext.skills import serve_skills  # noqa: E402

serve_skills(server, Path(__file__).with_name("skills"))  # pdf-processing, with a subfolder
