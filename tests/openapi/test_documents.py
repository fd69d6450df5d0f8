"""Reading an OpenAPI document: every form it comes in, and every hostile shape refused in one
line (or served within bounds) before any validator could recurse without end, fetch a URL a
`$ref` names, or spend minutes on it."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml
from helpers.transports.listening import listening
from openapi_docs import document, json_response, one_get, operation
from petstore_app import KEY, create_app
from petstore_calls import PETSTORE, PETSTORE_30

from mcpkit import MissingExtraError, Server
from mcpkit.openapi import OpenAPIError, OpenAPIOptions, load_document
from mcpkit.testing import connect


def refused(spec: Any, *expected: str, options: OpenAPIOptions | None = None) -> str:
    with pytest.raises(OpenAPIError) as caught:
        load_document(spec, options)
    message = str(caught.value)
    assert "\n" not in message, message
    for part in expected:
        assert part in message, message
    return message


# -- the forms a document comes in ------------------------------------------------------------


def test_a_document_is_read_from_a_path_from_bytes_in_json_or_yaml_and_from_a_mapping() -> None:
    from_path = load_document(PETSTORE)
    assert (from_path.version, from_path.title, from_path.info_version) == (
        "3.1", "Pet Store", "1.2.0")
    assert from_path.source == str(PETSTORE)
    as_json = orjson.dumps(from_path.data)
    assert load_document(as_json).data == from_path.data
    assert load_document(PETSTORE.read_bytes()).data == from_path.data
    assert load_document(from_path.data).data == from_path.data
    assert load_document(str(PETSTORE_30)).version == "3.0"


def test_yaml_status_codes_without_quotes_and_dates_are_read_as_json_would_have_them() -> None:
    text = """
openapi: 3.1.0
info: {title: Dates, version: 2024-01-31}
paths:
  /a:
    get:
      operationId: getA
      responses:
        200: {description: ok}
"""
    loaded = load_document(text.encode())
    assert loaded.info_version == "2024-01-31"
    assert list(loaded.data["paths"]["/a"]["get"]["responses"]) == ["200"]


class Site:
    def __init__(self) -> None:
        self.hits: list[str] = []
        self.api = create_app()
        served = dict(load_document(PETSTORE).data, servers=[{"url": "/"}])
        self.document = yaml.safe_dump(served).encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.hits.append(scope["path"])
        if scope["type"] == "http" and scope["path"] == "/spec/petstore.yaml":
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"application/yaml")]})
            await send({"type": "http.response.body", "body": self.document})
            return
        await self.api(scope, receive, send)


@pytest.fixture
async def site() -> AsyncIterator[tuple[Site, str]]:
    app = Site()
    async with listening(app) as served:
        yield app, f"http://127.0.0.1:{served.port}"


async def test_a_document_fetched_from_a_url_resolves_its_relative_server_against_it(
        site: tuple[Site, str]) -> None:
    app, url = site
    # Reading a URL blocks until it is read: inside a running event loop (this test's serves
    # the site), it is done in a thread.
    server = await asyncio.to_thread(Server.from_openapi, f"{url}/spec/petstore.yaml",
                                     options=OpenAPIOptions(headers={"X-Api-Key": KEY}))
    async with connect(server) as client:
        result = (await client.call_tool("getPet", {"petId": 1})).raw
    assert result["structuredContent"]["name"] == "Rex"
    assert app.hits == ["/spec/petstore.yaml", "/pets/1"]


async def test_a_url_that_answers_no_document_is_one_line(site: tuple[Site, str]) -> None:
    _, url = site
    await asyncio.to_thread(refused, f"{url}/nothing-here.yaml",
                            "/nothing-here.yaml: answered 404 Not Found, not the document")
    refused("http://127.0.0.1:1/x.yaml", "could not be fetched (ConnectError")


def test_without_the_openapi_extra_reading_a_document_is_one_line(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(__import__("sys").modules, "openapi_spec_validator", None)
    with pytest.raises(MissingExtraError) as caught:
        Server.from_openapi(PETSTORE)
    assert str(caught.value) == (
        "an OpenAPI document needs the 'openapi' extra: pip install 'mcpkit[openapi]'")


# -- documents refused ---------------------------------------------------------------------


def test_documents_of_other_versions_and_invalid_ones_are_refused_naming_the_place() -> None:
    refused({"swagger": "2.0", "info": {}, "paths": {}}, "a Swagger 2.0 document; convert it")
    refused(document(version="3.2.0"), "OpenAPI 3.2.0 is not read here")
    refused({"info": {}}, "no 'openapi' version field")
    refused(b"[1, 2]", "an OpenAPI document is an object, not list")
    bad = document({"/a": {"get": {"operationId": "a", "responses": 5}}})
    refused(bad, "not a valid OpenAPI 3.1 document at /paths/~1a/get/responses:",
            "is not of type")
    refused(b"{not json", "not JSON")
    refused(b"a: [b\n", "neither JSON nor YAML (line 2)")
    with pytest.raises(TypeError, match="not int"):
        load_document(5)


def test_duplicate_operation_ids_are_refused_naming_the_id() -> None:
    doc = document({"/a": {"get": operation("same")}, "/b": {"get": operation("same")}})
    refused(doc, "Operation ID 'same' for 'get' in '/b' is not unique")


def test_a_ref_loop_that_never_descends_is_refused_before_the_validator_recurses() -> None:
    alias = one_get({"$ref": "#/components/schemas/A"}, schemas={
        "A": {"$ref": "#/components/schemas/B"}, "B": {"$ref": "#/components/schemas/A"}})
    refused(alias, "leads back to where it started", "/components/schemas/")
    through_all_of = one_get({"$ref": "#/components/schemas/A"}, schemas={
        "A": {"allOf": [{"$ref": "#/components/schemas/A"}]}})
    refused(through_all_of, "leads back to where it started")
    parameters = one_get(parameters=[{"$ref": "#/components/parameters/P"}])
    parameters["components"] = {"parameters": {
        "P": {"$ref": "#/components/parameters/Q"}, "Q": {"$ref": "#/components/parameters/P"}}}
    refused(parameters, "#/components/parameters/")


def test_a_recursive_schema_that_descends_is_served_and_checks_nested_values() -> None:
    tree = {"type": "object", "properties": {
        "name": {"type": "string"},
        "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}},
        "required": ["name"]}
    doc = document({"/trees": {"post": operation("plant", requestBody={"required": True,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Node"}}}},
        responses=json_response({"$ref": "#/components/schemas/Node"}))}},
        schemas={"Node": tree})
    server = Server.from_openapi(doc, base_url="http://127.0.0.1:1")
    schema = server.tools["plant"].definition["inputSchema"]
    assert schema["$defs"]["Node"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    with pytest.raises(Exception, match=r"children\]\[0\]\[name\]|name"):
        server.tools["plant"].signature.validate(
            {"body": {"name": "root", "children": [{"children": []}]}})
    server.tools["plant"].signature.validate(
        {"body": {"name": "root", "children": [{"name": "leaf", "children": []}]}})


async def test_refs_that_leave_the_document_are_refused_and_nothing_they_name_is_fetched(
        site: tuple[Site, str], tmp_path: Path) -> None:
    app, url = site
    secret = tmp_path / "secret.json"
    secret.write_text('{"type": "string"}')
    for ref in (f"{url}/spec/petstore.yaml#/components/schemas/Pet", f"file://{secret}",
                "other.yaml#/Pet", str(secret)):
        refused(one_get({"$ref": ref}), "leaves the document", "bundle the document")
    assert app.hits == []
    refused(one_get({"$ref": "#/components/schemas/Nothing"}), "points to nothing")


def test_ten_thousand_operations_are_refused_by_count_before_anything_is_checked() -> None:
    paths = {f"/p{i}": {"get": operation(f"op{i}")} for i in range(10_000)}
    refused(document(paths), "10000 operations, more than 1000",
            "OpenAPIOptions.max_operations")
    some = {f"/p{i}": {"get": operation(f"op{i}")} for i in range(40)}
    assert load_document(document(some), OpenAPIOptions(max_operations=40)).version == "3.1"
    refused(document(some), "40 operations, more than 39",
            options=OpenAPIOptions(max_operations=39))


def test_deep_wide_and_repeated_documents_are_refused_within_their_bounds() -> None:
    deep: Any = {"type": "string"}
    for _ in range(3000):
        deep = {"type": "array", "items": deep}
    refused(one_get(deep), "nested more than 64 levels deep")
    refused(b"[" * 5000 + b"]" * 5000, "not JSON")
    refused(b"a: " + b"[" * 5000 + b"]" * 5000, "nesting depth")
    refused(b"a: " + b"[" * 100 + b"]" * 100, "nested more than 64 levels deep")
    laughs = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"a{i}: &a{i} [*a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, "
        f"*a{i-1}, *a{i-1}]\n" for i in range(1, 9))
    refused(("openapi: 3.1.0\n" + laughs).encode(), "too large", "YAML aliases count")
    fan: dict[str, Any] = {f"d{i}": {"anyOf": [{"$ref": f"#/components/schemas/d{i + 1}"}] * 2}
                           for i in range(30)}
    fan["d30"] = {"type": "string"}
    refused(one_get({"$ref": "#/components/schemas/d0"}, schemas=fan), "too costly to check")
    big = OpenAPIOptions(max_document_bytes=1000)
    refused(PETSTORE, "larger than 1000 bytes", options=big)
    refused(PETSTORE.read_bytes(), "larger than 1000 bytes", options=big)


def test_data_json_cannot_carry_is_refused_naming_its_place() -> None:
    refused(b"openapi: 3.1.0\ninfo: {title: t, version: '1'}\nx-n: .nan\npaths: {}\n",
            "the number at /x-n (nan) is not one JSON can carry")
    refused(b"openapi: 3.1.0\ninfo: {title: t, version: '1'}\nx-big: 99999999999999999999999\n",
            "the integer at /x-big is too large for JSON")
    refused(b"openapi: 3.1.0\n1.5: x\n", "the key 1.5 at / is not a string")


def test_every_hostile_document_leaves_a_working_one_readable_after_it() -> None:
    # Nothing of a refusal stays behind (caches, recursion limits): the pet store still reads.
    for _ in range(2):
        refused(one_get({"$ref": "#/components/schemas/A"}, schemas={
            "A": {"$ref": "#/components/schemas/A"}}), "leads back")
    assert copy.deepcopy(load_document(PETSTORE).data)["info"]["title"] == "Pet Store"
