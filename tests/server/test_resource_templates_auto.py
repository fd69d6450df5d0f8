"""`@server.resource("user://{name}/profile")` registers a template by itself.

A URI never holds a brace (RFC 3986), so one with `{variables}` is a template: it is listed by
`resources/templates/list`, read through any URI it matches, each variable passed as the
function's parameter of that name. A mismatch between the variables and the parameters is a
registration error naming both; `resource_template()` works as before.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit import Context, Server
from mcpkit.server.resources import ResourceTemplate


def profile_server() -> Server:
    server = Server("profiles", "1.0.0")

    @server.resource("user://{name}/profile", mime_type="text/plain", title="Profile")
    def profile(name: str) -> str:
        """A user's profile."""
        return f"{name} writes mcpkit"

    @server.resource("repo://{owner}/{+path}")
    async def file(owner: str, path: str, ctx: Context) -> str:
        """A file of a repository; takes the context too."""
        return f"{owner}:{path} for {ctx.method}"

    @server.resource("about://server")
    def about() -> str:
        return "a fixed resource"

    @server.resource_template("doc://{slug}")
    def doc(slug: str) -> str:
        return f"doc {slug}"

    return server


async def test_a_uri_with_variables_is_listed_as_a_template_not_a_resource(
    wire_factory: Any,
) -> None:
    wire = wire_factory(profile_server())
    resources = (await wire.request("resources/list"))["result"]["resources"]
    assert [r["uri"] for r in resources] == ["about://server"]
    templates = (await wire.request("resources/templates/list"))["result"]["resourceTemplates"]
    assert templates == [
        {"uriTemplate": "user://{name}/profile", "name": "profile", "title": "Profile",
         "description": "A user's profile.", "mimeType": "text/plain"},
        {"uriTemplate": "repo://{owner}/{+path}", "name": "file",
         "description": "A file of a repository; takes the context too."},
        {"uriTemplate": "doc://{slug}", "name": "doc"},
    ]


async def test_a_template_from_resource_reads_with_its_variables_as_parameters(
    wire_factory: Any,
) -> None:
    wire = wire_factory(profile_server())
    read = (await wire.request("resources/read", {"uri": "user://ada/profile"}))["result"]
    assert read["contents"] == [
        {"uri": "user://ada/profile", "text": "ada writes mcpkit", "mimeType": "text/plain"}
    ]
    nested = (await wire.request("resources/read", {"uri": "repo://ada/src/a%20b.py"}))["result"]
    assert nested["contents"][0]["text"] == "ada:src/a b.py for resources/read"
    old_way = (await wire.request("resources/read", {"uri": "doc://intro"}))["result"]
    assert old_way["contents"][0]["text"] == "doc intro"
    missing = await wire.request("resources/read", {"uri": "user://ada/settings"})
    assert missing["error"]["code"] == -32602


def test_add_resource_returns_the_template_it_registered() -> None:
    server = Server("profiles")
    entry = server.add_resource("user://{name}", lambda name: name)
    assert isinstance(entry, ResourceTemplate)
    assert server.templates == [entry] and server.resources == {}
    assert server.capabilities()["resources"] == {"subscribe": True, "listChanged": True}


@pytest.mark.parametrize(
    ("uri", "fn", "problem"),
    [
        ("user://{name}/profile", lambda: "x",
         "no parameter takes the variable(s) name; the function's parameters must be exactly "
         "the template's variables (name)"),
        ("user://{name}/profile", lambda name, extra: "x",
         "the parameter(s) extra match no variable"),
        ("user://{name}/{tab}", lambda user, tab: "x",
         "no parameter takes the variable(s) name; the parameter(s) user match no variable"),
    ],
)
def test_variables_and_parameters_that_differ_are_refused_naming_both(
    uri: str, fn: Any, problem: str
) -> None:
    server = Server("profiles")
    with pytest.raises(ValueError) as caught:
        server.resource(uri)(fn)
    assert str(caught.value).startswith(f"resource template {uri!r}: ")
    assert problem in str(caught.value)
    assert server.templates == [] and server.resources == {}


@pytest.mark.parametrize(
    ("uri", "problem"),
    [
        ("user://{?q}", "unsupported or unbalanced expression"),
        ("user://{name", "unsupported or unbalanced expression"),
        ("user://{a,b}", "one variable per expression"),
    ],
)
def test_a_bad_template_given_to_resource_is_refused_naming_the_problem(
    uri: str, problem: str
) -> None:
    server = Server("profiles")
    with pytest.raises(ValueError, match="URI template") as caught:
        server.resource(uri)(lambda **kw: "x")
    assert problem in str(caught.value)
    assert server.templates == []


def test_a_size_is_refused_for_a_template() -> None:
    server = Server("profiles")
    with pytest.raises(ValueError, match="size belongs to one resource"):
        server.add_resource("user://{name}", lambda name: name, size=10)
    assert server.templates == []


def test_a_fixed_uri_with_a_function_taking_parameters_says_how_to_make_it_a_template() -> None:
    server = Server("profiles")
    with pytest.raises(ValueError) as caught:
        server.resource("user://profile")(lambda name: name)
    assert str(caught.value) == (
        "resource 'user://profile': the function takes parameters (name) but the URI has no "
        "variables to fill them; name each in the URI as a template variable, e.g. "
        "user://profile/{name}"
    )
