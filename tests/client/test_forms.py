"""Elicitation forms on the client: a server's requestedSchema is read and bounded, and every
answer is checked against it before it is sent (ELIC-5, ELIC-14)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from helpers.client.form_server import PROFILE, server
from helpers.wire import LEGACY, MODERN, SPEC_DIR, SPEC_MISSING, check, spec_available

from mcpkit.client import (
    Client,
    ClientOptions,
    ElicitationAnswerError,
    FormSchemaError,
    InputHandlers,
    InputRequest,
    check_answer,
    read_form,
)
from mcpkit.client.forms import check_url_answer
from mcpkit.errors import InvalidParamsError, ProtocolViolation, RPCError

MakeClient = Callable[..., Client]
GOOD = {"name": "Ada", "email": "ada@example.com", "age": 36, "plan": "pro"}


def field(schema: dict[str, Any], name: str = "f") -> Any:
    found = read_form({"type": "object", "properties": {name: schema}}, "test").field(name)
    assert found is not None
    return found


# -- reading the schema ----------------------------------------------------------------------


def test_every_kind_of_field_the_schema_allows_is_read() -> None:
    form = read_form({**PROFILE, "$schema": "https://json-schema.org/draft/2020-12/schema",
                      "properties": {**PROFILE["properties"],
                                     "legacy": {"type": "string", "enum": ["a", "b"],
                                                "enumNames": ["A", "B"]},
                                     "titled": {"type": "array", "items": {"anyOf": [
                                         {"const": "x", "title": "Ex"}]}},
                                     "ratio": {"type": "number", "minimum": 0.5}}}, "t")
    by = {f.name: f for f in form.fields}
    assert [f.name for f in form.fields][:4] == ["name", "email", "age", "plan"]
    assert by["name"].required and (by["name"].min_length, by["name"].max_length) == (2, 20)
    assert by["email"].format == "email" and by["age"].kind == "integer"
    assert by["plan"].choices == ("free", "pro") and by["plan"].labels == ("Free", "Pro")
    assert by["newsletter"].has_default and by["newsletter"].default is False
    assert not by["newsletter"].required
    assert by["topics"].multiple and by["topics"].max_items == 2
    assert by["legacy"].labels == ("A", "B") and by["titled"].choices == ("x",)
    assert by["ratio"].minimum == 0.5 and by["ratio"].hint() == "number 0.5.."


@pytest.mark.parametrize(("schema", "reason"), [
    ([], 'must be {"type": "object"'),
    ({"type": "array"}, 'must be {"type": "object"'),
    ({"type": "object", "properties": []}, "properties must be an object"),
    ({"type": "object", "properties": {}, "required": "a"}, "required must be a list"),
    ({"type": "object", "properties": {}, "required": ["ghost"]}, "['ghost'] are not in"),
    ({"type": "object", "properties": {"a": "string"}}, "'a' must be a schema object"),
    ({"type": "object", "properties": {"a": {"type": "object"}}}, "no nested objects"),
    ({"type": "object", "properties": {"a": {}}}, "has type None"),
    ({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "object"}}}},
     "must be a multi-select"),
    ({"type": "object", "properties": {"a": {"type": "string", "minLength": "3"}}},
     "minLength must be a non-negative integer"),
    ({"type": "object", "properties": {"a": {"type": "string", "maxLength": -1}}},
     "maxLength must be a non-negative integer"),
    ({"type": "object", "properties": {"a": {"type": "string", "minLength": 5, "maxLength": 2}}},
     "minLength 5 is greater than maxLength 2"),
    ({"type": "object", "properties": {"a": {"type": "number", "maximum": float("inf")}}},
     "maximum must be a finite number"),
    ({"type": "object", "properties": {"a": {"type": "integer", "minimum": True}}},
     "minimum must be a finite number"),
    ({"type": "object", "properties": {"a": {"type": "string", "format": "ipv4"}}},
     "format 'ipv4' is not one"),
    ({"type": "object", "properties": {"a": {"type": "string", "enum": []}}},
     "enum must be a non-empty list"),
    ({"type": "object", "properties": {"a": {"type": "string", "enum": ["x", 1]}}},
     "enum must be a non-empty list of strings"),
    ({"type": "object", "properties": {"a": {"type": "string", "enum": ["x"],
                                             "enumNames": ["X", "Y"]}}},
     "one name per enum value"),
    ({"type": "object", "properties": {"a": {"type": "string", "oneOf": [{"const": "x"}]}}},
     'oneOf must be a list of {"const": str, "title": str}'),
    ({"type": "object", "properties": {"a": {"type": "string", "title": 5}}},
     "title must be a string"),
    ({"type": "object", "properties": {"a": {"type": "integer", "maximum": 3, "default": 5}}},
     "its default does not fit the field: must be at most 3"),
    ({"type": "object", "properties": {f"f{i}": {"type": "string"} for i in range(101)}},
     "101 fields"),
    ({"type": "object", "properties": {"a": {"type": "string",
                                             "enum": [str(i) for i in range(1001)]}}},
     "more than 1000 choices"),
])
def test_schemas_outside_the_restricted_form_are_refused_with_the_reason(
    schema: Any, reason: str
) -> None:
    with pytest.raises(FormSchemaError) as caught:
        read_form(schema, "tools/call 'x'")
    assert reason in str(caught.value) and str(caught.value).startswith("tools/call 'x'")


def test_unknown_keywords_are_ignored_and_a_missing_properties_is_an_empty_form() -> None:
    assert read_form({"type": "object"}, "t").fields == ()
    form = read_form({"type": "object", "title": "T", "properties": {
        "a": {"type": "string", "x-widget": "textarea"}}}, "t")
    assert form.problems({"a": "fine"}) == {}


# -- one value -------------------------------------------------------------------------------


@pytest.mark.parametrize(("schema", "value", "problem"), [
    ({"type": "string"}, "anything", None),
    ({"type": "string"}, 5, "expected text, got an integer"),
    ({"type": "string", "minLength": 2}, "a", "at least 2 characters"),
    ({"type": "string", "maxLength": 1}, "ab", "at most 1 character long"),
    ({"type": "string", "maxLength": 3}, "ééé", None),
    ({"type": "string", "enum": ["a", "b"]}, "c", "not a choice (choose one of a, b)"),
    ({"type": "string", "oneOf": [{"const": "a", "title": "A"}]}, "A", "not a choice"),
    ({"type": "string", "format": "email"}, "ada@example.com", None),
    ({"type": "string", "format": "email"}, "ada example.com", "an email address"),
    ({"type": "string", "format": "email"}, "a@b@c", "an email address"),
    ({"type": "string", "format": "uri"}, "https://example.com/x?y=1", None),
    ({"type": "string", "format": "uri"}, "urn:isbn:0451450523", None),
    ({"type": "string", "format": "uri"}, "example.com/x", "an absolute URI"),
    ({"type": "string", "format": "date"}, "2031-03-04", None),
    ({"type": "string", "format": "date"}, "2031-02-30", "a date like"),
    ({"type": "string", "format": "date"}, "20310304", "a date like"),
    ({"type": "string", "format": "date-time"}, "2031-03-04T09:30:00Z", None),
    ({"type": "string", "format": "date-time"}, "2031-03-04t09:30:00.123456789+05:30", None),
    ({"type": "string", "format": "date-time"}, "2031-03-04T09:30:00", "with a time zone"),
    ({"type": "string", "format": "date-time"}, "2031-13-04T09:30:00Z", "with a time zone"),
    ({"type": "integer"}, 3, None),
    ({"type": "integer"}, 3.0, None),
    ({"type": "integer"}, 3.5, "expected an integer, got a fractional number"),
    ({"type": "integer"}, True, "expected an integer, got true"),
    ({"type": "integer"}, "3", "expected an integer, got text"),
    ({"type": "number"}, float("nan"), "expected a number"),
    ({"type": "number", "minimum": 1.5}, 1, "at least 1.5"),
    ({"type": "number", "maximum": 10}, 10, None),
    ({"type": "boolean"}, False, None),
    ({"type": "boolean"}, "yes", "expected true or false"),
    ({"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}, ["a", "b"], None),
    ({"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}, "a", "list of choices"),
    ({"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}, ["a", "z"],
     "a value given is not a choice (choose from a, b)"),
    ({"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}, ["a", "a"],
     "more than once"),
    ({"type": "array", "minItems": 1, "items": {"type": "string", "enum": ["a"]}}, [],
     "choose at least 1"),
    ({"type": "array", "maxItems": 1, "items": {"anyOf": [{"const": "a", "title": "A"},
                                                          {"const": "b", "title": "B"}]}},
     ["a", "b"], "choose at most 1"),
])
def test_each_value_is_checked_against_its_field(
    schema: dict[str, Any], value: Any, problem: str | None
) -> None:
    found = field(schema).problem(value)
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found


# -- a whole answer --------------------------------------------------------------------------


def test_a_whole_answer_lists_every_problem_by_field() -> None:
    form = read_form(PROFILE, "t")
    answer = {"action": "accept", "content": {"name": "A", "age": "36", "plan": "pro",
                                              "password": "hunter2"}}
    with pytest.raises(ElicitationAnswerError) as caught:
        check_answer(form, answer, "tools/call 'register': elicitation input 'profile'")
    problems = caught.value.problems
    assert problems == {"password": "is not a field of the form",
                        "name": "must be at least 2 characters long",
                        "email": "is required", "age": "expected an integer, got text"}
    message = str(caught.value)
    assert message.startswith("tools/call 'register': elicitation input 'profile'")
    assert "it was not sent" in message and "hunter2" not in message


@pytest.mark.parametrize(("answer", "reason"), [
    ({"action": "ok"}, "action must be accept, decline or cancel"),
    ({"content": {}}, "action must be"),
    ({"action": "decline", "content": GOOD}, "carries no content"),
    ({"action": "accept", "content": "Ada"}, "content must be an object"),
    ({"action": "accept"}, "name: is required"),
    ("accept", "must be an object with an action"),
])
def test_answers_that_are_not_an_elicit_result_for_the_form_are_refused(
    answer: Any, reason: str
) -> None:
    with pytest.raises(ElicitationAnswerError, match=reason):
        check_answer(read_form(PROFILE, "t"), answer, "t")


def test_decline_and_cancel_need_no_content_and_a_good_answer_passes() -> None:
    form = read_form(PROFILE, "t")
    for answer in ({"action": "decline"}, {"action": "cancel"},
                   {"action": "accept", "content": {**GOOD, "topics": ["mcp"]}}):
        check_answer(form, answer, "t")
        check(MODERN, "ElicitResult", answer)


def test_a_url_answer_carries_no_content() -> None:
    check_url_answer({"action": "accept"}, "t")
    with pytest.raises(ElicitationAnswerError, match="carries no content"):
        check_url_answer({"action": "accept", "content": {"a": 1}}, "t")


# -- through the client, against a real server ---------------------------------------------


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_a_valid_answer_is_sent_with_defaults_filled_in(
    memory_client: MakeClient, era: str
) -> None:
    sent: list[dict[str, Any]] = []

    def elicit(request: InputRequest) -> dict[str, Any]:
        answer = {"action": "accept", "content": dict(GOOD)}
        sent.append(answer)
        return answer

    options = ClientOptions(era=era)  # type: ignore[arg-type]
    client = memory_client(server, elicit=elicit, options=options)
    result = await client.call_tool("register")
    assert json.loads(result["content"][0]["text"]) == {**GOOD, "newsletter": False}
    check(MODERN if era == "modern" else LEGACY, "ElicitResult", {**sent[0]})


async def test_a_handler_answer_that_does_not_fit_is_an_error_and_is_never_sent(
    memory_client: MakeClient,
) -> None:
    def elicit(request: InputRequest) -> dict[str, Any]:
        return {"action": "accept", "content": {**GOOD, "age": 12, "plan": "gold"}}

    client = memory_client(server, elicit=elicit)
    with pytest.raises(ElicitationAnswerError) as caught:
        await client.call_tool("register")
    assert caught.value.problems == {"age": "must be at least 18",
                                     "plan": "the value given is not a choice (choose one of free, "
                                             "pro)"}
    assert "tools/call 'register': elicitation input 'profile'" in str(caught.value)
    calls = client.tap.requests("tools/call")  # type: ignore[attr-defined]
    assert len(calls) == 1 and "inputResponses" not in calls[0]["params"]


async def test_a_legacy_servers_question_answered_wrongly_gets_an_error_not_the_answer(
    memory_client: MakeClient, caplog: pytest.LogCaptureFixture
) -> None:
    def elicit(request: InputRequest) -> dict[str, Any]:
        return {"action": "accept", "content": {**GOOD, "email": "not-an-address"}}

    client = memory_client(server, elicit=elicit, options=ClientOptions(era="legacy"))
    with pytest.raises(RPCError, match="answered elicitation/create with error -32603"):
        await client.call_tool("register")
    answers = [m for m in client.tap.sent if "method" not in m]  # type: ignore[attr-defined]
    assert answers and all("result" not in m and m["error"]["code"] == -32603 for m in answers)
    assert "not-an-address" not in json.dumps(client.tap.sent)  # type: ignore[attr-defined]
    assert "email: expected an email address" in caplog.text


async def test_a_broken_form_or_page_is_refused_before_the_handler_is_asked() -> None:
    asked: list[InputRequest] = []

    def handler(request: InputRequest) -> dict[str, Any]:
        asked.append(request)
        return {"action": "accept"}

    handlers = InputHandlers(elicit=handler, elicit_url=handler)
    form = {"mode": "form", "message": "m",
            "requestedSchema": {"type": "object", "properties": {"a": {"type": "object"}}}}
    page = {"mode": "url", "message": "m", "url": "file:///etc/passwd", "elicitationId": "e"}
    # An input request of a modern call: the call fails here, with the reason.
    with pytest.raises(FormSchemaError, match=r"input 'k'.*no nested objects"):
        await handlers.answer(InputRequest("elicitation/create", form, None, "tools/call", "k"))
    with pytest.raises(ProtocolViolation, match="scheme file: is refused"):
        await handlers.answer(InputRequest("elicitation/create", page, None, "tools/call", "k"))
    # A legacy server's own request: it is answered -32602 with the reason.
    with pytest.raises(InvalidParamsError, match="no nested objects"):
        await handlers.answer(InputRequest("elicitation/create", form, None, "legacy"))
    with pytest.raises(InvalidParamsError, match="scheme file: is refused"):
        await handlers.answer(InputRequest("elicitation/create", page, None, "legacy"))
    assert asked == [] and handlers.completions.pending == []


# -- hostile or unusual values ----------------------------------------------------------------


@pytest.mark.parametrize(("schema", "value"), [
    ({"type": "number"}, 10**400),
    ({"type": "number"}, -(10**30)),
    ({"type": "integer"}, 2**64),
    ({"type": "integer", "minimum": 0}, -(2**70)),
], ids=["number-1e400", "number--1e30", "integer-2**64", "integer--2**70"])
def test_a_number_too_large_to_send_is_a_problem_not_a_crash(schema: dict[str, Any],
                                                              value: int) -> None:
    found = field(schema).problem(value)
    assert found is not None and "too large" in found


def test_numbers_the_wire_carries_are_still_accepted() -> None:
    assert field({"type": "integer"}).problem(2**63 - 1) is None
    assert field({"type": "integer"}).problem(-(2**63)) is None
    assert field({"type": "number"}).problem(1e300) is None


@pytest.mark.parametrize(("schema", "value"), [
    ({"type": "integer"}, "hunter2"),
    ({"type": "number"}, ["hunter2"]),
    ({"type": "boolean"}, "hunter2"),
    ({"type": "string"}, {"pw": "hunter2"}),
    ({"type": "string", "enum": ["a", "b"]}, "hunter2"),
    ({"type": "array", "items": {"type": "string", "enum": ["a"]}}, ["a", "hunter2"]),
    ({"type": "array", "items": {"type": "string", "enum": ["a"]}}, "hunter2"),
])
def test_a_refused_value_is_described_never_repeated(schema: dict[str, Any], value: Any) -> None:
    found = field(schema).problem(value)
    assert found is not None and "hunter2" not in found
    with pytest.raises(ElicitationAnswerError) as caught:
        check_answer(read_form({"type": "object", "properties": {"f": schema}}, "t"),
                     {"action": "accept", "content": {"f": value}}, "t")
    assert "hunter2" not in str(caught.value) and "hunter2" not in str(caught.value.problems)


def test_server_text_in_an_answer_error_is_escaped() -> None:
    form = read_form({"type": "object", "required": ["\x1b]0;owned\x07"], "properties": {
        "\x1b]0;owned\x07": {"type": "string"},
        "c": {"type": "string", "enum": ["\x9b31m", "b"]}}}, "t")
    with pytest.raises(ElicitationAnswerError) as caught:
        check_answer(form, {"action": "accept", "content": {"c": "z"}}, "t")
    message = str(caught.value)
    assert "\x1b" not in message and "\x07" not in message and "\x9b" not in message
    assert "\\x1b]0;owned\\x07" in message and "\\x9b31m" in message


@pytest.mark.parametrize(("fmt", "value"), [
    ("date-time", "2016-12-31T23:59:60Z"),  # a leap second (RFC 3339 5.6)
    ("date-time", "2031-03-04T09:30:00.1234567890123+01:00"),  # any number of digits
    ("email", '"ada lovelace"@example.com'),  # a quoted local part (RFC 5321)
    ("email", "ada+mcp@example.co.uk"),
    ("uri", "mailto:ada@example.com"),
])
def test_formats_accept_what_their_rfcs_allow(fmt: str, value: str) -> None:
    assert field({"type": "string", "format": fmt}).problem(value) is None


@pytest.mark.parametrize(("fmt", "value"), [
    ("date", "٢٠٣١-٠٣-٠٤"),  # digits, but not the ASCII ones RFC 3339 means
    ("date-time", "2031-03-04T09:30:61Z"),
    ("date-time", "2031-03-04T24:00:00Z"),
    ("email", '"unclosed@example.com'),
])
def test_formats_refuse_what_their_rfcs_do_not_allow(fmt: str, value: str) -> None:
    assert field({"type": "string", "format": fmt}).problem(value) is not None


@pytest.mark.skipif(not spec_available(), reason=SPEC_MISSING)
def test_the_official_form_examples_are_read_and_their_answers_pass() -> None:
    examples = SPEC_DIR / f"examples-{MODERN}"
    forms = {p.stem: json.loads(p.read_text()) for p in
             (examples / "ElicitRequestFormParams").glob("*.json")}
    answers = {p.stem: json.loads(p.read_text()) for p in
               (examples / "ElicitResult").glob("input-*.json")}
    assert forms and answers
    for name, params in forms.items():
        form = read_form(params["requestedSchema"], name)
        answer = answers[name.replace("elicit-", "input-")]
        check_answer(form, answer, name)
        check(MODERN, "ElicitResult", answer)
