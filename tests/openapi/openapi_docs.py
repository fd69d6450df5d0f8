"""Small OpenAPI documents built in code, for the tests that need one shape at a time."""

from __future__ import annotations

from typing import Any


def operation(operation_id: str | None = "op", *, responses: dict[str, Any] | None = None,
              **fields: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"responses": responses or {"200": {"description": "ok"}}, **fields}
    if operation_id is not None:
        out["operationId"] = operation_id
    return out


def json_response(schema: Any, status: str = "200") -> dict[str, Any]:
    return {status: {"description": "ok", "content": {"application/json": {"schema": schema}}}}


def document(paths: dict[str, Any] | None = None, *, version: str = "3.1.0",
             schemas: dict[str, Any] | None = None, **components: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {"openapi": version, "info": {"title": "Test API", "version": "1.0"},
                           "paths": paths if paths is not None else {"/a": {"get": operation()}}}
    if schemas is not None:
        components["schemas"] = schemas
    if components:
        doc["components"] = components
    return doc


def one_get(schema: Any = None, *, parameters: list[Any] | None = None, version: str = "3.1.0",
            schemas: dict[str, Any] | None = None, **components: Any) -> dict[str, Any]:
    """A document with one GET /a whose 200 answers JSON of `schema`."""
    fields: dict[str, Any] = {}
    if parameters is not None:
        fields["parameters"] = parameters
    responses = json_response(schema) if schema is not None else None
    return document({"/a": {"get": operation("getA", responses=responses, **fields)}},
                    version=version, schemas=schemas, **components)
