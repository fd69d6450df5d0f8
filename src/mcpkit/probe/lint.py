"""Lint of a catalogue: what in a tool, prompt or resource definition costs a model its way or
a user their trust.

`RULES` is the one table: each rule's name, what it finds, and the one-line explanation every
finding of it carries. docs/probe.md prints the same table, so a rule can be argued with by
name. The checks are plain functions of the listed entries; nothing is called on the server.

The steering patterns are deliberately few and literal (ignoring earlier instructions, naming
another tool to call first, hiding something from the user, addressing "the assistant" or "the
AI"): a finding is a reason to read the text, not a verdict.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

from mcpkit.client.tools import vet_tool

__all__ = [
    "MAX_DESCRIPTION",
    "RULES",
    "Finding",
    "Rule",
    "lint",
]

MAX_DESCRIPTION: Final = 1024
"""Characters past which a description is "overlong"."""


@dataclass(frozen=True, slots=True)
class Rule:
    finds: str
    why: str


RULES: Final[Mapping[str, Rule]] = MappingProxyType({
    "missing-description": Rule(
        "a tool without a description, or with an empty one",
        "the model picks tools by their descriptions; without one it guesses from the name"),
    "overlong-description": Rule(
        f"a description over {MAX_DESCRIPTION} characters",
        "every listing pays for it in context; long text belongs in a resource or the docs"),
    "parameter-without-description": Rule(
        "an inputSchema property without a description",
        "the model fills arguments from their descriptions; an undescribed one is guessed"),
    "accepts-anything": Rule(
        "an inputSchema, or a property of it, that any value satisfies",
        "nothing tells the model what to send, and nothing checks what it sent"),
    "strict-client-refuses": Rule(
        "a definition a strict client refuses (mcpkit's own vetting of tools/list)",
        "such a client drops the tool: its users never see it"),
    "steering-text": Rule(
        "text that addresses the model: ignore earlier instructions, hide from the user, ...",
        "a description describes the tool; instructions to the model are a prompt injection"),
    "calls-other-tool": Rule(
        "a description telling the model to call another tool of the catalogue",
        "one tool's text should not steer the use of another (tool shadowing)"),
    "hidden-unicode": Rule(
        "invisible characters: zero-width, tag or other format characters",
        "text the user cannot see can still be read by the model"),
    "bidi-unicode": Rule(
        "bidirectional control characters (U+202A-U+202E, U+2066-U+2069)",
        "they reorder what is displayed, so the user reads other text than the model"),
    "url-in-description": Rule(
        "a URL in a description",
        "a link invites the model to fetch or repeat it; say what it is for, or leave it out"),
})
"""Rule name -> what it finds, and why it matters."""

_STEERING: Final = re.compile(
    r"ignore (all |any )?(the )?(previous|prior|earlier|above|other) (instructions|prompts?|rules)"
    r"|disregard (all |any )?(the )?(previous|prior|earlier|above) "
    r"|(do not|don't|never) (tell|inform|mention (this )?to|show) the user"
    r"|without (telling|informing) the user"
    r"|(you are|you're) (now )?(an?|the) (assistant|ai|model)\b"
    r"|system prompt|<\s*(important|system|instructions?)\s*>",
    re.IGNORECASE)
_CALL_VERBS: Final = r"(call|use|invoke|run|execute|trigger)"
_URL: Final = re.compile(r"\b(?:https?|ftp)://[^\s<>\"')\]]+", re.IGNORECASE)
_BIDI: Final = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_VISIBLE_FORMAT: Final = frozenset("\u00ad")  # a soft hyphen is harmless


@dataclass(frozen=True, slots=True)
class Finding:
    rule: str
    subject: str
    """What it is about: `tool echo`, `prompt greet`, `resource file:///a`, `instructions`."""
    detail: str

    @property
    def why(self) -> str:
        return RULES[self.rule].why


def _text_findings(subject: str, text: str, others: list[str]) -> Iterator[Finding]:
    hidden = sorted({c for c in text if unicodedata.category(c) == "Cf"
                     and c not in _BIDI and c not in _VISIBLE_FORMAT})
    if hidden:
        yield Finding("hidden-unicode", subject, ", ".join(f"U+{ord(c):04X}" for c in hidden))
    bidi = sorted({c for c in text if c in _BIDI})
    if bidi:
        yield Finding("bidi-unicode", subject, ", ".join(f"U+{ord(c):04X}" for c in bidi))
    steering = _STEERING.search(text)
    if steering:
        yield Finding("steering-text", subject, repr(steering.group(0)))
    for other in others:
        pattern = rf"\b{_CALL_VERBS}\s+(the\s+)?[`'\"]?{re.escape(other)}\b"
        found = re.search(pattern, text, re.IGNORECASE)
        if found:
            yield Finding("calls-other-tool", subject, repr(found.group(0)))
            break
    url = _URL.search(text)
    if url:
        yield Finding("url-in-description", subject, url.group(0)[:80])


def _loose(schema: Any) -> bool:
    """Whether any value satisfies `schema` (true, {}, or only annotations)."""
    if schema is True:
        return True
    if type(schema) is not dict:
        return False
    return not (set(schema) - {"description", "title", "$comment", "default", "examples"})


def _schema_findings(subject: str, schema: Any) -> Iterator[Finding]:
    if type(schema) is not dict:
        return
    props = schema.get("properties")
    props = props if type(props) is dict else {}
    extra = schema.get("additionalProperties", True)
    # `"properties": {}` declares a tool without parameters; only a schema that declares
    # nothing at all takes any object.
    if _loose(schema) or (schema.get("type") == "object" and "properties" not in schema
                          and extra is not False
                          and not ({"patternProperties", "oneOf", "anyOf", "allOf", "$ref"}
                                   & set(schema))):
        yield Finding("accepts-anything", subject, "the inputSchema takes any object")
    for name, prop in props.items():
        if _loose(prop):
            yield Finding("accepts-anything", subject, f"the parameter {name!r} takes any value")
        if type(prop) is dict and not str(prop.get("description") or "").strip() \
                and "$ref" not in prop:
            yield Finding("parameter-without-description", subject, f"the parameter {name!r}")


def _description_of(item: Mapping[str, Any]) -> str:
    description = item.get("description")
    return description if type(description) is str else ""


def lint(catalogue: Any, instructions: str | None = None) -> list[Finding]:
    """The findings about everything `catalogue` lists (a `Catalogue`), in listing order."""
    findings: list[Finding] = []
    names = [str(t.get("name")) for t in catalogue.tools]
    for tool in catalogue.tools:
        name = str(tool.get("name"))
        subject = f"tool {name}"
        description = _description_of(tool)
        if not description.strip():
            findings.append(Finding("missing-description", subject, "no description"))
        elif len(description) > MAX_DESCRIPTION:
            findings.append(Finding("overlong-description", subject,
                                    f"{len(description)} characters"))
        refused = vet_tool(tool)
        if refused is not None:
            findings.append(Finding("strict-client-refuses", subject, refused))
        findings += _schema_findings(subject, tool.get("inputSchema"))
        findings += _text_findings(subject, description + " " + str(tool.get("title") or ""),
                                   [n for n in names if n != name])
    for kind, key in (("prompts", "name"), ("resources", "uri"),
                      ("resourceTemplates", "uriTemplate")):
        for item in getattr(catalogue, kind):
            subject = f"{kind.rstrip('s').replace('resourceTemplate', 'template')} {item.get(key)}"
            findings += _text_findings(subject, _description_of(item), names)
    if instructions:
        findings += (f for f in _text_findings("instructions", instructions, [])
                     if f.rule in ("hidden-unicode", "bidi-unicode", "steering-text"))
    return findings
