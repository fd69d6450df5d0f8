"""Form-mode elicitation schemas: what a form may ask, refused where it is asked, and how the
answers are read back; plus the capability each kind of question needs."""

from __future__ import annotations

import enum
from datetime import UTC, date, datetime
from typing import Annotated, Any, Literal

import pytest
from helpers.wire import MODERN, check

from mcpkit.errors import InvalidParamsError
from mcpkit.schema.forms import check_form_schema, form_of, looks_secret
from mcpkit.server.asking import Elicit, ElicitURL, ListRoots, Sample
from mcpkit.server.sealing import principal_key

WHERE = "tools/call 'demo'"


class Size(enum.Enum):
    SMALL = "small"
    LARGE = "large"


def test_a_form_from_python_types_is_a_flat_restricted_schema() -> None:
    form = form_of({
        "startsAt": datetime,
        "day": Annotated[date, "Which day"],
        "guests": int,
        "budget": float | None,
        "vegetarian": bool,
        "size": Size,
        "tags": list[Literal["work", "home"]],
        "note": str | None,
    }, WHERE)
    schema = form.schema
    assert schema["required"] == ["startsAt", "day", "guests", "vegetarian", "size", "tags"]
    props = schema["properties"]
    assert props["startsAt"] == {"type": "string", "format": "date-time"}
    assert props["day"] == {"type": "string", "format": "date", "description": "Which day"}
    assert props["budget"] == {"type": "number"} and props["note"] == {"type": "string"}
    assert props["size"]["enum"] == ["small", "large"]
    assert props["tags"] == {"type": "array", "items": {"type": "string", "enum": ["work", "home"]}}
    check(MODERN, "ElicitRequestFormParams", {"message": "m", "requestedSchema": schema})


def test_answers_to_a_typed_form_come_back_as_those_types() -> None:
    form = form_of({"startsAt": datetime, "size": Size, "note": str | None}, WHERE)
    values = form.read({"startsAt": "2026-12-01T09:30:00Z", "size": "large", "extra": 1})
    assert values == {"startsAt": datetime(2026, 12, 1, 9, 30, tzinfo=UTC),
                      "size": Size.LARGE, "note": None}
    with pytest.raises(ValueError, match="startsAt"):
        form.read({"startsAt": "soon", "size": "large"})


def test_the_same_form_is_built_once() -> None:
    assert form_of({"when": datetime}, WHERE) is form_of({"when": datetime}, WHERE)
    raw = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    assert form_of(raw, WHERE) is form_of(dict(raw), WHERE)


def test_a_json_schema_form_is_kept_verbatim_and_checks_answers() -> None:
    raw = {"type": "object", "properties": {
        "email": {"type": "string", "format": "email", "title": "Email"},
        "age": {"type": "integer", "minimum": 18, "maximum": 130},
        "plan": {"type": "string", "oneOf": [{"const": "a", "title": "A"},
                                             {"const": "b", "title": "B"}]},
        "colour": {"type": "string", "enum": ["red", "blue"], "enumNames": ["Red", "Blue"]},
        "extras": {"type": "array", "items": {"anyOf": [{"const": "x", "title": "X"}]},
                   "maxItems": 1},
    }, "required": ["email", "age"]}
    form = form_of(raw, WHERE)
    assert form.schema == raw
    assert form.read({"email": "a@b.c", "age": 30, "plan": "b"}) == {
        "email": "a@b.c", "age": 30, "plan": "b"}
    for bad, fragment in (({"email": "nope", "age": 30}, "email address"),
                          ({"email": "a@b.c", "age": 12}, "out of range"),
                          ({"email": "a@b.c", "age": True}, "integer"),
                          ({"email": "a@b.c", "age": 30, "plan": "c"}, "choices"),
                          ({"email": "a@b.c", "age": 30, "colour": "green"}, "one of"),
                          ({"email": "a@b.c", "age": 30, "extras": ["x", "x"]}, "out of range"),
                          ({"age": 30}, "email: missing")):
        with pytest.raises(ValueError, match=fragment):
            form.read(bad)


@pytest.mark.parametrize("schema, fragment", [
    ({"type": "object", "properties": {"a": {"type": "object"}}}, "no nested objects"),
    ({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "object"}}}},
     "multi-selects"),
    ({"type": "object", "properties": {"a": {"type": "string", "pattern": "x"}}}, "pattern"),
    ({"type": "object", "properties": {"a": {"type": "string", "format": "ipv4"}}}, "format"),
    ({"type": "object", "properties": {}, "additionalProperties": False}, "additionalProperties"),
    ({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]}, "['b']"),
    ({"type": "object"}, "properties"),
    ({"type": "array"}, '"type": "object"'),
])
def test_a_form_a_client_cannot_render_is_refused_naming_the_problem(
    schema: dict[str, Any], fragment: str
) -> None:
    with pytest.raises(TypeError, match=None) as info:
        check_form_schema(schema, WHERE)
    assert str(info.value).startswith(WHERE) and fragment in str(info.value)


@pytest.mark.parametrize("fields", [
    {"password": str}, {"apiKey": str}, {"api_key": str}, {"accessToken": str},
    {"card_number": str}, {"secret": str | None}, {"pin": str},
])
def test_a_form_asking_for_a_secret_is_refused_pointing_to_url_mode(
    fields: dict[str, Any]
) -> None:
    with pytest.raises(TypeError, match="elicit_url"):
        Elicit("Sign in", fields).request(WHERE)


def test_ordinary_fields_and_non_text_fields_are_not_mistaken_for_secrets() -> None:
    assert not looks_secret("username") and not looks_secret("email")
    assert not looks_secret("spinach") and not looks_secret("shipping")
    form_of({"max_tokens": int, "username": str, "compass": bool}, WHERE)
    raw = {"type": "object", "properties": {"x": {"type": "string", "title": "Your password"}}}
    with pytest.raises(TypeError, match="secrets"):
        check_form_schema(raw, WHERE)


def test_field_names_that_are_not_identifiers_need_a_json_schema() -> None:
    with pytest.raises(TypeError, match="JSON Schema"):
        form_of({"start-date": date}, WHERE)
    assert form_of({"type": "object", "properties": {"start-date": {"type": "string"}}}, WHERE)


def test_unsupported_python_types_are_refused_at_the_call_site() -> None:
    with pytest.raises(TypeError, match=WHERE):
        form_of({"nested": dict[str, int]}, WHERE)


def test_each_question_needs_its_own_capability() -> None:
    assert Elicit("m").capability == {"elicitation": {"form": {}}}
    assert ElicitURL("m", "https://example.com/pay").capability == {"elicitation": {"url": {}}}
    assert Sample("p", max_tokens=5).capability == {"sampling": {}}
    tools = [{"name": "t", "inputSchema": {"type": "object"}}]
    assert Sample("p", max_tokens=5, tools=tools).capability == {"sampling": {"tools": {}}}
    assert Sample("p", max_tokens=5, include_context="thisServer").capability == {
        "sampling": {"context": {}}}
    assert ListRoots().capability == {"roots": {}}


def test_question_shapes_are_valid_input_requests() -> None:
    hi = [{"role": "user", "content": {"type": "text", "text": "hi"}}]
    requests = {
        "a": Elicit("Confirm?").request(WHERE),
        "b": ElicitURL("Pay", "https://pay.example/1").request(WHERE),
        "c": Sample(hi, max_tokens=9, system_prompt="Be brief", temperature=0.2,
                    stop_sequences=["."], model_preferences={"hints": [{"name": "claude"}]},
                    ).request(WHERE),
        "d": ListRoots().request(WHERE),
    }
    # The shapes themselves, so the test asserts something without the schemas too.
    assert requests == {
        "a": {"method": "elicitation/create", "params": {
            "message": "Confirm?", "requestedSchema": {"type": "object", "properties": {}}}},
        "b": {"method": "elicitation/create", "params": {
            "mode": "url", "message": "Pay", "url": "https://pay.example/1"}},
        "c": {"method": "sampling/createMessage", "params": {
            "messages": hi, "maxTokens": 9, "systemPrompt": "Be brief", "temperature": 0.2,
            "stopSequences": ["."], "modelPreferences": {"hints": [{"name": "claude"}]}}},
        "d": {"method": "roots/list"},
    }
    check(MODERN, "InputRequests", requests)


@pytest.mark.parametrize("build, fragment", [
    (lambda: Elicit(""), "message"),
    (lambda: ElicitURL("m", "javascript:alert(1)"), "absolute"),
    (lambda: Sample("p", max_tokens=0), "max_tokens"),
    (lambda: Sample([], max_tokens=5), "messages"),
    (lambda: Sample("p", max_tokens=5, include_context="everything"), "include_context"),
])
def test_malformed_questions_are_refused_when_built(build: Any, fragment: str) -> None:
    with pytest.raises(TypeError, match=fragment):
        build()


def test_answers_of_the_wrong_shape_are_invalid_params_naming_the_key() -> None:
    with pytest.raises(InvalidParamsError, match=r"inputResponses\['s'\].*model"):
        Sample("p", max_tokens=5).read({"role": "assistant", "content": {}}, WHERE, "s")
    with pytest.raises(InvalidParamsError, match="roots must be a list"):
        ListRoots().read({"roots": "file:///"}, WHERE, "r")
    assert Sample("p", max_tokens=5).read(
        {"role": "assistant", "content": [{"type": "text", "text": "a"},
                                          {"type": "text", "text": "b"}], "model": "m"},
        WHERE, "s").text == "ab"


def test_the_principal_a_state_is_bound_to_is_stable_across_processes() -> None:
    class Token:
        issuer = "https://issuer.example"
        subject = "user-1"

    assert principal_key(None) is None
    assert principal_key("alice") == "alice"
    assert principal_key(Token()) == '["https://issuer.example","user-1"]'  # no NUL: storable
    assert principal_key({"iss": "https://issuer.example", "sub": "user-1"}) == principal_key(
        Token())
    assert principal_key({"client_id": 7}) == "7"
    with pytest.raises(TypeError, match="subject"):
        principal_key(object())


def test_a_form_without_fields_is_a_plain_confirmation() -> None:
    form = form_of(None, WHERE)
    assert form.schema == {"type": "object", "properties": {}}
    assert form.read({}) == {} and form.read({"stray": 1}) == {}
