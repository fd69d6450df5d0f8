"""What an upstream server sends, checked and rebuilt before the proxy passes it on.

An upstream is a peer like any other: a buggy or hostile one may send a member of the wrong
type, a content block of no known kind, base64 that is not, a progress report of a string.
Nothing it sent reaches the proxy's clients as it arrived: each object is rebuilt here from the
members the 2026-07-28 schema gives it, each checked for its type, so what the proxy sends is
valid for both revisions it serves. A required member that is wrong makes the whole object
unusable (`ProtocolViolation`, naming the place); an optional one that is wrong is left out.
A content block that cannot be passed on is replaced by a text block saying so, so the
caller learns that something was left out rather than reading a shorter answer as the whole.

Pure functions over decoded JSON; no I/O.
"""

from __future__ import annotations

import base64
import binascii
import logging
import math
from collections.abc import Callable
from typing import Any, Final

from mcpkit.errors import ProtocolViolation
from mcpkit.schema.problems import describe_value
from mcpkit.types.constants import LOG_LEVELS

__all__ = [
    "completion",
    "content",
    "contents",
    "error_text",
    "implementation",
    "log_params",
    "messages",
    "number",
    "prompt",
    "resource",
    "sampling_params",
    "template",
    "tool",
]

log = logging.getLogger("mcpkit.proxy")

ROLES: Final = ("user", "assistant")
MAX_ERROR_CHARS: Final = 2000
"""An upstream's error message is passed on cut to this length: it is text for a person."""


def _bad(where: str, what: str, value: Any) -> ProtocolViolation:
    return ProtocolViolation(f"{where} must be {what}, not {describe_value(value)}")


def _string(raw: dict[str, Any], key: str, where: str) -> str:
    value = raw.get(key)
    if type(value) is not str:
        raise _bad(f"{where}.{key}", "a string", value)
    return value


def _object(value: Any, where: str) -> dict[str, Any]:
    if type(value) is not dict:
        raise _bad(where, "an object", value)
    return value


def number(value: Any) -> bool:
    """Whether `value` is a JSON number (not a boolean, not infinite)."""
    return type(value) in (int, float) and math.isfinite(value)


def _optional(out: dict[str, Any], raw: dict[str, Any], key: str, fits: Callable[[Any], bool],
              where: str) -> None:
    if key in raw:
        if fits(raw[key]):
            out[key] = raw[key]
        else:
            log.debug("%s.%s left out: %s", where, key, describe_value(raw[key]))


def _is_str(value: Any) -> bool:
    return type(value) is str


def _is_bool(value: Any) -> bool:
    return type(value) is bool


def _is_object(value: Any) -> bool:
    return type(value) is dict


def _is_count(value: Any) -> bool:
    return type(value) is int and value >= 0


def _strings(value: Any) -> bool:
    return type(value) is list and all(type(v) is str for v in value)


def _icons(value: Any, where: str) -> list[dict[str, Any]] | None:
    if type(value) is not list:
        return None
    icons = []
    for i, icon in enumerate(value):
        if type(icon) is not dict or type(icon.get("src")) is not str:
            log.debug("%s.icons[%d] left out", where, i)
            continue
        kept: dict[str, Any] = {"src": icon["src"]}
        _optional(kept, icon, "mimeType", _is_str, where)
        _optional(kept, icon, "sizes", _strings, where)
        _optional(kept, icon, "theme", lambda v: v in ("light", "dark"), where)
        icons.append(kept)
    return icons


def _annotations(value: Any, where: str) -> dict[str, Any] | None:
    """Annotations of content or a resource: audience, priority, lastModified."""
    if type(value) is not dict:
        return None
    out: dict[str, Any] = {}
    _optional(out, value, "audience",
              lambda v: type(v) is list and all(r in ROLES for r in v), where)
    _optional(out, value, "priority", lambda v: number(v) and 0 <= v <= 1, where)
    _optional(out, value, "lastModified", _is_str, where)
    return out


def _common(out: dict[str, Any], raw: dict[str, Any], where: str, *keys: str) -> dict[str, Any]:
    """The optional members most definitions share, those of `keys` among them."""
    for key in keys:
        if key in ("title", "description", "mimeType"):
            _optional(out, raw, key, _is_str, where)
        elif key == "size":
            _optional(out, raw, key, _is_count, where)
        elif key == "annotations":
            annotations = _annotations(raw.get(key), where)
            if annotations is not None:
                out[key] = annotations
        elif key == "icons":
            icons = _icons(raw.get(key), where)
            if icons:
                out[key] = icons
        elif key == "_meta":
            _optional(out, raw, key, _is_object, where)
    return out


# -- what a list names --------------------------------------------------------------------


_TOOL_HINTS: Final = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


def tool(raw: Any, where: str) -> dict[str, Any]:
    """A tool definition: name, title, description, schemas, annotations, icons, _meta (the
    schemas as objects; `Server.add_tool` then vets them as any raw schema)."""
    raw = _object(raw, where)
    out: dict[str, Any] = {"name": _string(raw, "name", where)}
    schema = raw.get("inputSchema")
    if type(schema) is not dict or schema.get("type") != "object":
        raise _bad(f"{where}.inputSchema", 'a JSON Schema object with "type": "object"', schema)
    out["inputSchema"] = schema
    output = raw.get("outputSchema")
    if output is not None:
        if type(output) is not dict or output.get("type") != "object":
            raise _bad(f"{where}.outputSchema", 'a JSON Schema object with "type": "object"',
                       output)
        out["outputSchema"] = output
    hints = raw.get("annotations")
    if type(hints) is dict:
        kept: dict[str, Any] = {}
        _optional(kept, hints, "title", _is_str, where)
        for key in _TOOL_HINTS:
            _optional(kept, hints, key, _is_bool, where)
        out["annotations"] = kept
    return _common(out, raw, where, "title", "description", "icons", "_meta")


def resource(raw: Any, where: str) -> dict[str, Any]:
    """A listed resource (also what a resource link describes)."""
    raw = _object(raw, where)
    out = {"uri": _string(raw, "uri", where), "name": _string(raw, "name", where)}
    return _common(out, raw, where, "title", "description", "mimeType", "size", "annotations",
                   "icons", "_meta")


def template(raw: Any, where: str) -> dict[str, Any]:
    raw = _object(raw, where)
    out = {"uriTemplate": _string(raw, "uriTemplate", where), "name": _string(raw, "name", where)}
    return _common(out, raw, where, "title", "description", "mimeType", "annotations", "icons",
                   "_meta")


def prompt(raw: Any, where: str) -> dict[str, Any]:
    """A prompt and its arguments (each a name, once, with a title, description, required)."""
    raw = _object(raw, where)
    out: dict[str, Any] = {"name": _string(raw, "name", where)}
    arguments = raw.get("arguments")
    if arguments is not None:
        if type(arguments) is not list:
            raise _bad(f"{where}.arguments", "a list", arguments)
        kept, seen = [], set()
        for i, arg in enumerate(arguments):
            place = f"{where}.arguments[{i}]"
            arg = _object(arg, place)
            name = _string(arg, "name", place)
            if not name or name in seen:
                raise ProtocolViolation(f"{place}.name must be a non-empty name of its own")
            seen.add(name)
            item: dict[str, Any] = {"name": name}
            _common(item, arg, place, "title", "description")
            _optional(item, arg, "required", _is_bool, place)
            kept.append(item)
        out["arguments"] = kept
    return _common(out, raw, where, "title", "description", "icons", "_meta")


def implementation(raw: Any, where: str) -> dict[str, Any]:
    """A server's `serverInfo`: name and version, with title, description, website and icons."""
    raw = _object(raw, where)
    out = {"name": _string(raw, "name", where), "version": _string(raw, "version", where)}
    _optional(out, raw, "websiteUrl", _is_str, where)
    return _common(out, raw, where, "title", "description", "icons")


# -- content ---------------------------------------------------------------------------------


def _base64(raw: dict[str, Any], key: str, where: str) -> str:
    value = _string(raw, key, where)
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ProtocolViolation(f"{where}.{key} is not base64") from None
    return value


def contents(raw: Any, where: str) -> dict[str, Any]:
    """One resource contents item: a URI with its text, or with a base64 blob."""
    raw = _object(raw, where)
    out: dict[str, Any] = {"uri": _string(raw, "uri", where)}
    if "text" in raw:
        out["text"] = _string(raw, "text", where)
    elif "blob" in raw:
        out["blob"] = _base64(raw, "blob", where)
    else:
        raise ProtocolViolation(f"{where} holds neither text nor blob")
    return _common(out, raw, where, "mimeType", "_meta")


def _block(raw: Any, where: str, extra: tuple[str, ...] = ()) -> dict[str, Any]:
    raw = _object(raw, where)
    kind = raw.get("type")
    out: dict[str, Any] = {"type": kind}
    if kind == "text":
        out["text"] = _string(raw, "text", where)
    elif kind in ("image", "audio"):
        out["data"] = _base64(raw, "data", where)
        out["mimeType"] = _string(raw, "mimeType", where)
    elif kind == "resource_link":
        out.update(resource(raw, where))
        out["type"] = kind
        return out
    elif kind == "resource":
        out["resource"] = contents(raw.get("resource"), f"{where}.resource")
    elif kind == "tool_use" and kind in extra:
        out["id"] = _string(raw, "id", where)
        out["name"] = _string(raw, "name", where)
        out["input"] = _object(raw.get("input"), f"{where}.input")
        return _common(out, raw, where, "_meta")
    elif kind == "tool_result" and kind in extra:
        out["toolUseId"] = _string(raw, "toolUseId", where)
        out["content"] = content(raw.get("content"), f"{where}.content")
        _optional(out, raw, "isError", _is_bool, where)
        _optional(out, raw, "structuredContent", _is_object, where)
        return _common(out, raw, where, "_meta")
    else:
        raise ProtocolViolation(f"{where}: content of type {describe_value(kind)} is not one "
                                "the protocol defines")
    return _common(out, raw, where, "annotations", "_meta")


def content(raw: Any, where: str) -> list[dict[str, Any]]:
    """A list of content blocks; a block that cannot be passed on becomes a text block that
    says so (and the log says why)."""
    if type(raw) is not list:
        raise _bad(where, "a list of content blocks", raw)
    out = []
    for i, block in enumerate(raw):
        try:
            out.append(_block(block, f"{where}[{i}]"))
        except ProtocolViolation as exc:
            log.warning("left out a content block the upstream sent: %s", exc)
            out.append({"type": "text", "text": f"[a content block the upstream server sent was "
                                                 f"left out: {exc}]"})
    return out


def messages(raw: Any, where: str) -> list[dict[str, Any]]:
    """A prompt's messages: each a role and one content block."""
    if type(raw) is not list:
        raise _bad(where, "a list of messages", raw)
    out = []
    for i, message in enumerate(raw):
        place = f"{where}[{i}]"
        message = _object(message, place)
        role = message.get("role")
        if role not in ROLES:
            raise _bad(f"{place}.role", "user or assistant", role)
        out.append({"role": role, "content": content([message.get("content")],
                                                     f"{place}.content")[0]})
    return out


# -- the rest of what an upstream says --------------------------------------------------------


def completion(raw: Any, where: str) -> dict[str, Any]:
    """A `completion` object: at most 100 string values, an integer total, hasMore."""
    raw = _object(raw, where)
    values = raw.get("values")
    if not _strings(values):
        raise _bad(f"{where}.values", "a list of strings", values)
    out: dict[str, Any] = {"values": values[:100]}
    _optional(out, raw, "total", lambda v: type(v) is int, where)
    _optional(out, raw, "hasMore", _is_bool, where)
    if len(values) > 100:
        out["hasMore"] = True
    return out


def log_params(raw: Any) -> tuple[str, Any, str | None] | None:
    """(level, data, logger) of a `notifications/message`, or None when it is not one."""
    if type(raw) is not dict or raw.get("level") not in LOG_LEVELS or "data" not in raw:
        return None
    logger = raw.get("logger")
    return raw["level"], raw["data"], logger if type(logger) is str else None


def error_text(message: Any) -> str:
    """An upstream error's message as text to pass on, cut to `MAX_ERROR_CHARS`."""
    text = message if type(message) is str else "(no message)"
    return text if len(text) <= MAX_ERROR_CHARS else text[:MAX_ERROR_CHARS] + "..."


_CONTEXTS: Final = ("none", "thisServer", "allServers")
_SAMPLING_BLOCKS: Final = ("tool_use", "tool_result")


def _sampling_message(raw: Any, where: str) -> dict[str, Any]:
    raw = _object(raw, where)
    role = raw.get("role")
    if role not in ROLES:
        raise _bad(f"{where}.role", "user or assistant", role)
    body = raw.get("content")
    if type(body) is list:
        blocks: Any = [_block(b, f"{where}.content[{i}]", _SAMPLING_BLOCKS)
                       for i, b in enumerate(body)]
    else:
        blocks = _block(body, f"{where}.content", _SAMPLING_BLOCKS)
    return _common({"role": role, "content": blocks}, raw, where, "_meta")


def _preferences(raw: Any, where: str) -> dict[str, Any] | None:
    if type(raw) is not dict:
        return None
    out: dict[str, Any] = {}
    hints = raw.get("hints")
    if type(hints) is list:
        out["hints"] = [{"name": h["name"]} for h in hints
                        if type(h) is dict and type(h.get("name")) is str]
    for key in ("costPriority", "speedPriority", "intelligencePriority"):
        _optional(out, raw, key, lambda v: number(v) and 0 <= v <= 1, where)
    return out


def sampling_params(raw: Any, where: str) -> dict[str, Any]:
    """The params of a `sampling/createMessage`, as `mcpkit.server.asking.Sample` takes them:
    (messages, max_tokens, and its keyword options)."""
    raw = _object(raw, where)
    listed = raw.get("messages")
    if type(listed) is not list or not listed:
        raise _bad(f"{where}.messages", "a non-empty list of messages", listed)
    limit = raw.get("maxTokens")
    if type(limit) is not int or limit < 1:
        raise _bad(f"{where}.maxTokens", "a positive integer", limit)
    out: dict[str, Any] = {
        "prompt": [_sampling_message(m, f"{where}.messages[{i}]") for i, m in enumerate(listed)],
        "max_tokens": limit,
    }
    for key, name, fits in (("systemPrompt", "system_prompt", _is_str),
                            ("temperature", "temperature", number),
                            ("stopSequences", "stop_sequences", _strings),
                            ("includeContext", "include_context", lambda v: v in _CONTEXTS),
                            ("metadata", "metadata", _is_object)):
        if key in raw and fits(raw[key]):
            out[name] = raw[key]
    preferences = _preferences(raw.get("modelPreferences"), where)
    if preferences:
        out["model_preferences"] = preferences
    tools = raw.get("tools")
    if type(tools) is list and tools:
        out["tools"] = [tool(t, f"{where}.tools[{i}]") for i, t in enumerate(tools)]
    choice = raw.get("toolChoice")
    if type(choice) is dict and choice.get("mode") in ("auto", "required", "none"):
        out["tool_choice"] = {"mode": choice["mode"]}
    return out
