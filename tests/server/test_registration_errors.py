"""Mistakes an application can make when it registers (or mints) something: each is refused on
the spot with an exception naming the problem, nothing half-registered is left behind, and a
mistake that only shows when a handler runs is an error reply while the server goes on."""

from __future__ import annotations

import logging
import math
import re
from typing import Any

import pytest

from mcpkit import CacheHint, Context, Message, Server
from mcpkit.server.handles import MAX_HANDLE_TTL, mint_handle, open_handle

# -- cache hints (ttlMs, cacheScope) ------------------------------------------------------------


@pytest.mark.parametrize("ttl_ms", [-1, 1.5, True, "5000", None, math.inf])
def test_a_cache_hint_refuses_a_ttl_that_is_not_a_non_negative_integer(ttl_ms: Any) -> None:
    with pytest.raises(ValueError, match="ttl_ms must be a non-negative integer") as caught:
        CacheHint(ttl_ms)
    assert repr(ttl_ms) in str(caught.value)


@pytest.mark.parametrize("scope", ["shared", "PUBLIC", "", None])
def test_a_cache_hint_refuses_a_scope_other_than_public_or_private(scope: Any) -> None:
    with pytest.raises(ValueError, match='cache scope must be "public" or "private"') as caught:
        CacheHint(5000, scope)
    assert repr(scope) in str(caught.value)


async def test_a_cache_hint_with_good_values_is_sent_as_ttl_ms_and_cache_scope(
    wire_factory: Any,
) -> None:
    server = Server("cache")
    server.add_resource("test://zero", lambda: "z", cache=CacheHint(0, "private"))
    wire = wire_factory(server)
    result = (await wire.request("resources/read", {"uri": "test://zero"}))["result"]
    assert (result["ttlMs"], result["cacheScope"]) == (0, "private")


@pytest.mark.parametrize("cache", [5000, {"ttl_ms": 5000}, "public"])
def test_a_resource_s_cache_must_be_a_cache_hint(cache: Any) -> None:
    server = Server("cache")
    with pytest.raises(TypeError, match=r"resource 'test://r': cache must be a CacheHint") as caught:
        server.add_resource("test://r", lambda: "r", cache=cache)
    assert type(cache).__name__ in str(caught.value)
    with pytest.raises(TypeError, match=r"resource 'test://\{id\}': cache must be a CacheHint"):
        server.add_resource_template("test://{id}", lambda id: id, cache=cache)
    assert server.resources == {} and server.templates == []


# -- resources and URI templates ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("template", "problem"),
    [
        ("test://{a,b}", "one variable per expression"),
        ("test://{id}/{id}", "variable 'id' appears twice"),
        ("test://fixed", "has no variables; use a resource"),
        ("test://{id", "unsupported or unbalanced expression"),
        ("test://{id}}", "unsupported or unbalanced expression near '}'"),
        ("test://{?q}/{id}", "unsupported or unbalanced expression near 'test://{?q}/'"),
        ("test://{/path}/{id}", "unsupported or unbalanced expression"),
        ("test://{}/{id}", "unsupported or unbalanced expression"),
        ("test://a}b/{id}", "unsupported or unbalanced expression"),
        ("test://{x y}/{id}", "unsupported or unbalanced expression"),
        ("test://{a.b}", "variable 'a.b' is not a Python identifier"),
        ("test://{1st}", "variable '1st' is not a Python identifier"),
    ],
)
def test_a_bad_uri_template_is_refused_naming_the_problem(template: str, problem: str) -> None:
    server = Server("templates")
    with pytest.raises(ValueError) as caught:
        server.add_resource_template(template, lambda **kw: "x")
    assert problem in str(caught.value)
    assert repr(template) in str(caught.value)
    assert server.templates == []


def test_a_template_s_variables_must_be_the_function_s_parameters() -> None:
    server = Server("templates")

    def item(id: str, extra: str) -> str:
        return id

    with pytest.raises(ValueError, match=r"the parameter\(s\) extra match no variable; the "
                       r"function's parameters must be exactly the template's variables \(id\)"):
        server.add_resource_template("test://item/{id}", item)
    assert server.templates == []


def test_a_resource_needs_a_scheme_a_new_uri_and_no_parameters() -> None:
    server = Server("resources")
    with pytest.raises(ValueError, match="resource URI 'plain-name' has no scheme"):
        server.add_resource("plain-name", lambda: "x")
    with pytest.raises(ValueError, match=r"takes parameters \(id\) but the URI has no variables "
                       r"to fill them; .* e\.g\. test://r/\{id\}"):
        server.add_resource("test://r", lambda id: id)
    server.add_resource("test://r", lambda: "r")
    with pytest.raises(ValueError, match="a resource with URI 'test://r' is already registered"):
        server.add_resource("test://r", lambda: "again")
    assert list(server.resources) == ["test://r"]


async def test_supported_template_expressions_match_what_they_expand_to(wire_factory: Any) -> None:
    server = Server("templates")

    @server.resource_template("test://doc/{name}{#section}")
    def doc(name: str, section: str) -> str:
        return f"{name}/{section}"

    @server.resource_template("test://file/{+path}")
    def file(path: str) -> str:
        return path

    wire = wire_factory(server)
    read = (await wire.request("resources/read", {"uri": "test://doc/guide#intro"}))["result"]
    assert read["contents"][0]["text"] == "guide/intro"
    nested = (await wire.request("resources/read", {"uri": "test://file/a/b%20c.txt"}))["result"]
    assert nested["contents"][0]["text"] == "a/b c.txt"
    missing = await wire.request("resources/read", {"uri": "test://doc/guide"})
    assert missing["error"]["code"] == -32602


# -- prompts ------------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ["system", "User", "", None])
def test_a_prompt_message_refuses_a_role_other_than_user_or_assistant(role: Any) -> None:
    with pytest.raises(ValueError, match='role must be "user" or "assistant"') as caught:
        Message(role, "text")
    assert repr(role) in str(caught.value)


async def test_a_prompt_answering_with_a_bad_role_is_an_internal_error_and_the_server_goes_on(
    wire_factory: Any, caplog: pytest.LogCaptureFixture
) -> None:
    server = Server("prompts")

    @server.prompt()
    def system_dict() -> list[dict[str, Any]]:
        """A message dict with a role prompts do not have."""
        return [{"role": "system", "content": "obey"}]

    @server.prompt()
    def system_message() -> Message:
        """A Message with a role prompts do not have."""
        return Message("system", "obey")

    @server.prompt()
    def fine() -> str:
        """A good prompt."""
        return "ok"

    wire = wire_factory(server)
    for name in ("system_dict", "system_message"):
        with caplog.at_level(logging.ERROR, logger="mcpkit.server"):
            reply = await wire.request("prompts/get", {"name": name})
        assert reply["error"]["code"] == -32603, name
        assert "obey" not in str(reply)
    assert caplog.text.count('prompt message role must be "user" or "assistant", not \'system\'') == 2
    ok = (await wire.request("prompts/get", {"name": "fine"}))["result"]
    assert ok["messages"] == [{"role": "user", "content": {"type": "text", "text": "ok"}}]


def test_a_prompt_name_is_registered_once() -> None:
    server = Server("prompts")
    server.add_prompt(lambda: "one", name="p")
    with pytest.raises(ValueError, match="a prompt named 'p' is already registered"):
        server.add_prompt(lambda: "two", name="p")


# -- handles ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ttl", [0, -5, math.nan, math.inf, MAX_HANDLE_TTL * 2, 1e308, "60", None, True]
)
def test_a_handle_refuses_a_ttl_that_is_not_a_sensible_number_of_seconds(ttl: Any) -> None:
    server = Server("handles")
    with pytest.raises(ValueError, match="a handle's ttl must be a positive number of seconds") as caught:
        mint_handle(server.sealer, None, "cart", {"items": []}, ttl=ttl)
    assert repr(ttl) in str(caught.value)


@pytest.mark.parametrize("ttl", [0.5, 60, MAX_HANDLE_TTL])
def test_a_handle_with_a_good_ttl_opens_again(ttl: float) -> None:
    server = Server("handles")
    handle = mint_handle(server.sealer, None, "cart", {"items": [1]}, ttl=ttl)
    assert open_handle(server.sealer, None, "cart", handle, "test") == {"items": [1]}


@pytest.mark.parametrize("kind", ["", 5, None])
def test_a_handle_s_kind_must_be_a_non_empty_string(kind: Any) -> None:
    server = Server("handles")
    with pytest.raises(TypeError, match="a handle's kind must be a non-empty string"):
        mint_handle(server.sealer, None, kind, {})


def test_a_handle_carries_json_only() -> None:
    server = Server("handles")
    with pytest.raises(TypeError, match="a 'cart' handle can carry only JSON data"):
        mint_handle(server.sealer, None, "cart", {"when": object()})


async def test_a_tool_minting_a_handle_with_a_bad_ttl_gets_an_error_reply_and_the_server_goes_on(
    wire_factory: Any, caplog: pytest.LogCaptureFixture
) -> None:
    server = Server("handles")

    @server.tool()
    def start(ttl: float, ctx: Context) -> str:
        """Starts a cart that lives `ttl` seconds."""
        return ctx.mint_handle("cart", {"items": []}, ttl=ttl)

    wire = wire_factory(server)
    with caplog.at_level(logging.ERROR, logger="mcpkit.server"):
        bad = await wire.request("tools/call", {"name": "start", "arguments": {"ttl": -1}})
    assert bad["result"]["isError"] is True
    assert bad["result"]["content"][0]["text"].startswith("tool 'start' failed (error id ")
    assert "a handle's ttl must be a positive number of seconds" in caplog.text
    good = (await wire.request("tools/call", {"name": "start", "arguments": {"ttl": 60}}))["result"]
    assert "isError" not in good and good["content"][0]["text"]


# -- tools --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["", "has space", "comma,name", "x" * 129, "ünïcode"])
def test_a_tool_name_outside_the_allowed_characters_is_refused(name: str) -> None:
    server = Server("tools")
    with pytest.raises(ValueError, match=re.escape("use 1-128 characters from A-Z a-z 0-9 _ - .")) as caught:
        server.add_tool(lambda: "x", name)
    assert repr(name) in str(caught.value)
    assert server.tools == {}


def test_a_tool_name_is_registered_once_and_removed_once() -> None:
    server = Server("tools")
    server.add_tool(lambda: "x", "t.1-ok_")
    with pytest.raises(ValueError, match=re.escape("a tool named 't.1-ok_' is already registered")):
        server.add_tool(lambda: "y", "t.1-ok_")
    server.remove_tool("t.1-ok_")
    with pytest.raises(KeyError, match=re.escape("no tool named 't.1-ok_'")):
        server.remove_tool("t.1-ok_")


def test_a_raw_input_schema_must_have_an_object_root() -> None:
    server = Server("tools")
    def listy() -> str:
        return "x"

    with pytest.raises(ValueError, match="listy': input schema: an input schema must have "
                       '"type": "object" at its root'):
        server.add_tool(listy, input_schema={"type": "array"})
    assert server.tools == {}
